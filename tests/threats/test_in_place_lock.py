"""``--in-place`` and a live broker: Kafka's lock is found through real paths, taken, and held for the whole run.

The attacks as found: ``cd kafka-logs/orders-0 && kseg recover --in-place
00000000000000000004.log`` (the lexical parent of the name is ``.``, so the
old check looked for ``orders-0/.lock``), the same through a symlink to the
partition directory, and a broker taking ``.lock`` while kseg was writing.
The broker is played by a JVM calling ``FileChannel.tryLock`` on
``LOGDIR/.lock``, exactly as Kafka's ``FileLock`` does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support import REPO
from threatkit import files_of, jvm_try, kseg

SEGMENT = "00000000000000000004.log"
COMMANDS = {
    "recover": ["recover", "--in-place"],
    "salvage": ["recover", "--salvage", "--in-place"],
    "reindex": ["reindex", "--in-place"],
}


def _named(how: str, logs: Path, tmp_path: Path) -> tuple[str, Path]:
    """(the argument, the working directory) for one way of naming the damaged segment's partition."""
    part = logs / "orders-0"
    if how == "relative segment":
        return SEGMENT, part
    if how == "symlinked partition":
        (tmp_path / "link").symlink_to(part, target_is_directory=True)
        return "link", tmp_path
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["relative segment", "symlinked partition"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_in_place_is_refused_while_a_broker_holds_the_real_log_dir(kafka_logs, tmp_path, jvm_holding, command, how):
    jvm_holding(kafka_logs / ".lock")
    before = files_of(kafka_logs / "orders-0")
    name, cwd = _named(how, kafka_logs, tmp_path)
    result = kseg(*COMMANDS[command], name, cwd=cwd)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"kseg: error: {kafka_logs}/.lock is locked by another process (a running broker?); "
        "refusing to change files in place (stop the broker, or use -o OUTDIR)\n"
    )
    assert files_of(kafka_logs / "orders-0") == before


PAUSE = """
import os, time
import {module} as target
_original = target.{function}
def _paused(*args, **kwargs):
    open({ready!r}, "w").close()
    deadline = time.monotonic() + 60
    while not os.path.exists({go!r}) and time.monotonic() < deadline:
        time.sleep(0.02)
    return _original(*args, **kwargs)
target.{function} = _paused
"""
#: Where each command is stopped: just before it writes its first file.
WRITERS = {"recover": ("kseg.ops.recover.run", "write_segment"), "salvage": ("kseg.ops.recover.run", "write_segment"),
           "reindex": ("kseg.ops.reindex.run", "_write_set")}


@pytest.fixture
def immutable_lock(kafka_logs: Path) -> Iterator[Path]:
    """LOGDIR/.lock that kseg may not open for writing (``chattr +i``: even root gets EPERM)."""
    lock = kafka_logs / ".lock"
    lock.touch()
    if subprocess.run(["chattr", "+i", str(lock)], capture_output=True, check=False).returncode != 0:
        pytest.skip("chattr +i is not available here (needs root and a filesystem that supports it)")
    yield lock
    subprocess.run(["chattr", "-i", str(lock)], check=True)


def _asked(lock: Path) -> str:
    """Another process asks (F_GETLK, whole-file write lock) whether it could take the lock: "held" or "locked".

    The JVM cannot open an immutable file for writing at all, so here the question is asked as kseg asks it.
    """
    code = "import sys\nfrom kseg.locks import log_dir_locked\nprint('held' if log_dir_locked(sys.argv[1]) else 'locked')"
    return subprocess.run([sys.executable, "-c", code, str(lock.parent)], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, check=True, timeout=60).stdout.strip()


def test_a_lock_file_kseg_cannot_write_is_held_with_a_read_lock(kafka_logs, tmp_path, immutable_lock):
    """A .lock kseg may only read (the broker's account owns it): a shared lock, which a write lock cannot pass."""
    _paused_run(kafka_logs, tmp_path, _asked, "recover")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_broker_starting_mid_run_cannot_take_the_lock(kafka_logs, tmp_path, try_lock, command):
    """kseg holds LOGDIR/.lock from before its first write to after its last: the JVM's tryLock fails meanwhile."""
    assert not (kafka_logs / ".lock").exists()  # a stopped broker's directory without one: kseg creates it
    _paused_run(kafka_logs, tmp_path, lambda lock: jvm_try(try_lock, lock), command)


def _paused_run(kafka_logs: Path, tmp_path: Path, probe: Callable[[Path], str], command: str) -> None:
    """Run ``command --in-place`` stopped before its first write; the JVM must find the lock held then, free after."""
    ready, go = tmp_path / "ready", tmp_path / "go"
    module, function = WRITERS[command]
    prelude = PAUSE.format(module=module, function=function, ready=str(ready), go=str(go))
    code = f"{prelude}\nimport sys\nfrom kseg.cli import main\nsys.argv = ['kseg', *sys.argv[1:]]\nmain()\n"
    run = subprocess.Popen([sys.executable, "-c", code, *COMMANDS[command], SEGMENT], cwd=kafka_logs / "orders-0",
                           env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert probe(kafka_logs / ".lock") == "held"
    go.touch()
    out, err = run.communicate(timeout=60)
    assert run.returncode == 1, err
    assert probe(kafka_logs / ".lock") == "locked"  # released when kseg ends
    backups = {"reindex": "00000000000000000004.index.bak"}.get(command, "00000000000000000004.log.bak")
    assert (kafka_logs / "orders-0" / backups).is_file()


@pytest.fixture
def missing_indexes(kafka_logs: Path) -> Path:
    """``orders-0`` whose first segment lost its .index and .timeindex: plain ``kseg reindex`` creates them."""
    part = kafka_logs / "orders-0"
    for suffix in (".index", ".timeindex"):
        (part / f"00000000000000000000{suffix}").unlink()
    return part


def test_reindex_creating_missing_indexes_is_refused_while_a_broker_holds_the_lock(
        kafka_logs, missing_indexes, jvm_holding):
    """Plain ``reindex`` writes beside the .log, in the broker's directory: a held .lock refuses it."""
    jvm_holding(kafka_logs / ".lock")
    before = files_of(missing_indexes)
    result = kseg("reindex", "00000000000000000000.log", cwd=missing_indexes)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"kseg: error: {kafka_logs}/.lock is locked by another process (a running broker?); "
        "refusing to change files in place (stop the broker, or use -o OUTDIR)\n"
    )
    assert files_of(missing_indexes) == before


def test_a_broker_starting_while_reindex_creates_indexes_cannot_take_the_lock(
        kafka_logs, missing_indexes, tmp_path, try_lock):
    """Plain ``reindex`` holds LOGDIR/.lock from before it writes the new indexes to after: the JVM's tryLock fails."""
    ready, go = tmp_path / "ready", tmp_path / "go"
    prelude = PAUSE.format(module="kseg.ops.reindex.run", function="_write_set", ready=str(ready), go=str(go))
    code = f"{prelude}\nimport sys\nfrom kseg.cli import main\nsys.argv = ['kseg', *sys.argv[1:]]\nmain()\n"
    run = subprocess.Popen([sys.executable, "-c", code, "reindex", "00000000000000000000.log"], cwd=missing_indexes,
                           env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert jvm_try(try_lock, kafka_logs / ".lock") == "held"
    assert not (missing_indexes / "00000000000000000000.index").exists()
    go.touch()
    out, err = run.communicate(timeout=60)
    assert (run.returncode, err) == (0, "")
    assert jvm_try(try_lock, kafka_logs / ".lock") == "locked"  # released when kseg ends
    assert (missing_indexes / "00000000000000000000.index").is_file()
    assert (missing_indexes / "00000000000000000000.timeindex").is_file()
