"""Helpers of the threat tests: kseg in a fresh interpreter, the torn tail, a directory's bytes, a JVM's tryLock."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support import REPO

#: Bytes appended to the last segment: a torn write recovery cuts (a batch header that runs past the end).
TORN = b"\x00" * 8 + b"\x00\x00\x10\x00" + b"\x00" * 20


def jvm_try(try_lock: list[str], lock: Path) -> str:
    """Whether a JVM can take Kafka's lock on ``lock`` right now: "locked" or "held"."""
    return subprocess.run([*try_lock, str(lock)], capture_output=True, text=True, timeout=60, check=True).stdout.strip()


def kseg(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
         prelude: str = "", timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``kseg ARGS`` in a fresh interpreter (``prelude``: Python run first, in the same process)."""
    code = f"{prelude}\nimport sys\nfrom kseg.cli import main\nsys.argv = ['kseg', *sys.argv[1:]]\nmain()\n"
    environ = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **(env or {})}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd,
                          env=environ, timeout=timeout, stdin=subprocess.DEVNULL, check=False)


def files_of(directory: Path) -> dict[str, bytes]:
    """Every regular file directly in ``directory``, by name: to prove a refused run changed nothing."""
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}
