"""A throwaway Spark standalone cluster for tests: one master and N workers on 127.0.0.1.

Started from pyspark's own launcher (``bin/spark-class``, the script behind
sbin/start-master.sh in a full Spark; the pip package does not ship the sbin
scripts), each daemon in its own process group so that stopping it also stops
the executors and Python workers it launched.  Everything binds to loopback
(``SPARK_LOCAL_IP``); the daemons' web UIs take an ephemeral loopback port.
Used as a context manager: the cluster is stopped on the way out, failure or not.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).parent
LOOPBACK = "127.0.0.1"
#: The daemons' JVMs: small, quick to start (the client JIT, the serial GC).
DAEMON_JAVA_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


class Standalone:
    """``with Standalone(tmp, workers=2) as cluster:`` -> ``cluster.url`` is ``spark://127.0.0.1:<port>``."""

    def __init__(self, root: Path, *, workers: int = 2, worker_memory: str = "768m", timeout: float = 90.0) -> None:
        self.root = root
        self.workers = workers
        self.worker_memory = worker_memory
        self.timeout = timeout
        self.port = free_port()
        self.url = f"spark://{LOOPBACK}:{self.port}"
        self.processes: list[subprocess.Popen[bytes]] = []
        self._stack = ExitStack()

    def env(self) -> dict[str, str]:
        conf_dir = self.root / "conf"  # empty: no spark-defaults or spark-env from anywhere else
        conf_dir.mkdir(parents=True, exist_ok=True)
        return {
            **os.environ,
            "SPARK_HOME": str(SPARK_HOME),
            "SPARK_CONF_DIR": str(conf_dir),
            "SPARK_LOCAL_IP": LOOPBACK,
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_DAEMON_JAVA_OPTS": DAEMON_JAVA_OPTS,
            "SPARK_NO_DAEMONIZE": "1",
        }

    def _start(self, name: str, *args: str) -> Path:
        log = self.root / f"{name}.log"
        out = self._stack.enter_context(log.open("wb"))
        command = [str(SPARK_HOME / "bin" / "spark-class"), *args]
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=self.env(), start_new_session=True)
        self.processes.append(process)
        return log

    def start(self) -> Standalone:
        master = self._start("master", "org.apache.spark.deploy.master.Master",
                             "--host", LOOPBACK, "--port", str(self.port), "--webui-port", "0")
        self._wait_for([master], "I have been elected leader")
        logs = [
            self._start(f"worker-{i}", "org.apache.spark.deploy.worker.Worker", "--host", LOOPBACK,
                        "--webui-port", "0", "--cores", "1", "--memory", self.worker_memory,
                        "--work-dir", str(self.root / f"work-{i}"), self.url)
            for i in range(self.workers)
        ]
        self._wait_for(logs, "Successfully registered with master")
        return self

    def _wait_for(self, logs: list[Path], text: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not all(text in log.read_text(errors="replace") for log in logs):
            dead = [p.args for p in self.processes if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                tails = "\n".join(f"--- {log}\n{log.read_text(errors='replace')[-2000:]}" for log in logs)
                raise RuntimeError(f"standalone cluster did not start ({text!r}; exited: {dead})\n{tails}")
            time.sleep(0.2)

    def stop(self) -> None:
        """Workers first (each takes its executors with it), then the master; SIGKILL whatever lingers."""
        for process in reversed(self.processes):
            _stop_group(process)
        self._stack.close()

    def __enter__(self) -> Standalone:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _stop_group(process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM the daemon's own process group (it leads it), then SIGKILL the group if it is still there."""
    group = process.pid  # start_new_session: the daemon leads its own group
    try:
        os.killpg(group, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(group, signal.SIGKILL)  # executors and Python workers the daemon left behind
    except ProcessLookupError:
        pass
    process.wait()


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True
