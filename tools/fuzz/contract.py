"""The contract every kseg run must keep on hostile input, checked from outside the process.

Each command runs as ``python -m kseg ...`` in its own process group with an address-space cap
(RLIMIT_AS) and a wall-clock limit; its exit status and peak RSS come from ``wait4``.  A run breaks
the contract when it prints a Python traceback, exits with a code outside {0, 1, 2} (or dies by a
signal), runs past the time limit, peaks above the memory cap, or changes anything in the log
directory that holds the mutant (a file's bytes or mtime, a file or directory created or removed):
kseg reads evidence and never touches it, and its outputs go to ``-o`` elsewhere.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ALLOWED_EXIT_CODES = (0, 1, 2)
TRACEBACK = "Traceback (most recent call last)"
FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)', re.MULTILINE)
EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s?(?P<message>.*))?$")


@dataclass(frozen=True)
class Limits:
    """Per-run limits: the memory cap (address space and peak RSS) and the wall-clock limit."""

    memory_mb: int = 512
    timeout_s: float = 10.0


@dataclass(frozen=True)
class Run:
    """What one kseg process did."""

    exit_code: int | None  # None when killed by a signal
    signal: int | None
    timed_out: bool
    max_rss_mb: float
    seconds: float
    stderr: str


@dataclass(frozen=True)
class Failure:
    """One broken clause of the contract, bucketed by (command, kind, exception type, top kseg frame)."""

    command: str
    kind: str  # traceback, exit-code, signal, timeout, memory, input-changed, input-created, input-removed
    exception: str = ""
    frame: str = ""  # innermost frame inside kseg/: "kseg/ops/dump.py:track"
    detail: str = ""  # the line number and message: shown, not part of the bucket

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.command, self.kind, self.exception, self.frame)


#: Run in the child instead of a preexec_fn (unsafe with threads): cap its address space, no core
#: file, record its own peak RSS at exit, then run kseg as ``python -m kseg`` would.  The peak is
#: read from /proc/self/status (VmHWM, this process's memory only): ``wait4``'s ru_maxrss also counts
#: the parent's peak at the fork, which inside a long pytest run is hundreds of MB that are not kseg's.
BOOT = (
    "import atexit, resource, runpy, sys; cap = int(sys.argv.pop(1)) << 20; hwm = sys.argv.pop(1); "
    "resource.setrlimit(resource.RLIMIT_AS, (cap, cap)); resource.setrlimit(resource.RLIMIT_CORE, (0, 0)); "
    "status = open('/proc/self/status', 'rb'); "
    "atexit.register(lambda: open(hwm, 'wb').write(status.read())); "
    "sys.argv[0] = 'kseg'; runpy.run_module('kseg', run_name='__main__', alter_sys=True)"
)


def _own_peak_mb(status_path: Path, fallback_kb: int) -> float:
    """VmHWM from the child's /proc status as it left it, else ``wait4``'s figure (a killed run)."""
    with contextlib.suppress(OSError, ValueError):
        for line in status_path.read_bytes().decode().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return fallback_kb / 1024


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def run_kseg(args: list[str], cwd: Path, limits: Limits) -> Run:
    """Run ``python -m kseg *args`` under ``limits``; stdout is discarded, stderr kept."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "COLUMNS": "120", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("FORCE_COLOR", None)
    err_path = cwd / "stderr.txt"
    hwm_path = cwd / "status.txt"
    hwm_path.unlink(missing_ok=True)
    started = time.monotonic()
    with open(err_path, "wb") as err, open(os.devnull, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", BOOT, str(limits.memory_mb), str(hwm_path), *args], cwd=cwd, env=env,
            stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True,
        )
        timer = threading.Timer(limits.timeout_s, _kill_group, (proc.pid,))
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    _kill_group(proc.pid)  # anything the run left behind in its group (verify's workers)
    seconds = time.monotonic() - started
    killed = os.WIFSIGNALED(status)
    return Run(
        exit_code=None if killed else os.WEXITSTATUS(status),
        signal=os.WTERMSIG(status) if killed else None,
        timed_out=killed and seconds >= limits.timeout_s,
        max_rss_mb=_own_peak_mb(hwm_path, usage.ru_maxrss),
        seconds=seconds,
        stderr=err_path.read_bytes().decode("utf-8", "replace"),
    )


def parse_traceback(stderr: str) -> tuple[str, str, str]:
    """(exception type, innermost kseg frame, "file:line message") of the last traceback in ``stderr``."""
    text = stderr[stderr.rindex(TRACEBACK):]
    frames = [m for m in FRAME.finditer(text) if "/kseg/" in m["path"] and "site-packages" not in m["path"]]
    frame = line = ""
    if frames:
        last = frames[-1]
        path = "kseg/" + last["path"].rsplit("/kseg/", 1)[1]
        frame, line = f"{path}:{last['func']}", f"{path}:{last['line']}"
    exception, message = "", ""
    for raw in reversed(text.strip().splitlines()):
        match = EXCEPTION.match(raw)
        if match and not raw.startswith(" "):
            exception, message = match["type"].rsplit(".", 1)[-1], (match["message"] or "")[:200]
            break
    return exception, frame, f"{line} {message}".strip()


def snapshot(directory: Path) -> dict[str, tuple[object, ...]]:
    """Every file (size, mtime, sha256) and directory under ``directory``, by relative path."""
    state: dict[str, tuple[object, ...]] = {}
    for root, dirs, files in os.walk(directory):
        for name in dirs:
            state[os.path.relpath(os.path.join(root, name), directory)] = ("dir",)
        for name in files:
            path = os.path.join(root, name)
            info = os.lstat(path)
            with open(path, "rb") as handle:
                digest = hashlib.sha256(handle.read()).hexdigest()
            state[os.path.relpath(path, directory)] = (info.st_size, info.st_mtime_ns, digest)
    return state


def _input_failures(command: str, before: dict, after: dict) -> list[Failure]:
    found = []
    for kind, names in (
        ("input-created", sorted(set(after) - set(before))),
        ("input-removed", sorted(set(before) - set(after))),
        ("input-changed", sorted(n for n in set(before) & set(after) if before[n] != after[n])),
    ):
        if names:
            found.append(Failure(command, kind, detail=", ".join(names[:5])))
    return found


def check(command: str, run: Run, before: dict, after: dict, limits: Limits) -> list[Failure]:
    """Every clause of the contract that ``run`` broke."""
    found = []
    if TRACEBACK in run.stderr:
        exception, frame, detail = parse_traceback(run.stderr)
        found.append(Failure(command, "traceback", exception, frame, detail))
    if run.timed_out:
        found.append(Failure(command, "timeout", detail=f"killed after {run.seconds:.1f} s"))
    elif run.signal is not None:
        found.append(Failure(command, "signal", signal.Signals(run.signal).name))
    elif run.exit_code not in ALLOWED_EXIT_CODES:
        found.append(Failure(command, "exit-code", str(run.exit_code), detail=run.stderr[-200:]))
    if run.max_rss_mb > limits.memory_mb:
        found.append(Failure(command, "memory", detail=f"peak RSS {run.max_rss_mb:.0f} MB"))
    return found + _input_failures(command, before, after)
