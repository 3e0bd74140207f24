"""docs/cli.md under real faults, each command as a real process: signals, FIFOs, a full or closed stdout.

What an in-process runner cannot show is here: ``SIGINT`` or ``SIGTERM`` in the
middle of a long run (exit 130 or 143, the output directory gone, no temporary left, the input
unchanged), a FIFO that would block a reader forever, ``/dev/full`` and a pipe
whose reader has gone.  Every subprocess has a timeout, so a regression fails
instead of hanging the suite.
"""

from __future__ import annotations

import hashlib
import os
import select
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import FIXTURES

from kseg.format import RecordSpec, encode_batch
from kseg.format.crc import crc32c

LOG = "00000000000000000000.log"
CLEAN_PARTITION = FIXTURES / "verify" / "clean" / "partition" / "orders-0"
TIMEOUT = 60
BASE_TIMESTAMP_AT, CRC_AT, CRC_FROM = 27, 17, 21

#: every command with arguments that read ``{log}`` (a .log) or ``{dir}`` (its partition directory)
READERS = {
    "dump": ["dump", "{log}"],
    "verify": ["verify", "{log}"],
    "reindex": ["reindex", "--dry-run", "{log}"],
    "recover": ["recover", "--dry-run", "{log}"],
    "convert": ["convert", "{log}", "-o", "{out}", "--to-magic", "2"],
}


def kseg(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    return subprocess.run(
        [sys.executable, "-m", "kseg", *args], capture_output="stdout" not in kwargs, timeout=TIMEOUT,
        env=env, **kwargs,
    )


def filled(args: list[str], **where: Path) -> list[str]:
    return [a.format(**{k: str(v) for k, v in where.items()}) for a in args]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_partition(directory: Path, size: int) -> Path:
    records = [RecordSpec(i, 1_700_000_000_000 + i, b"key-%06d" % i, os.urandom(50).hex().encode()) for i in range(120)]
    batch = bytearray(encode_batch(records))
    directory.mkdir()
    with open(directory / LOG, "wb") as out:
        for n in range(size // len(batch)):
            ts = 1_700_000_000_000 + n * 1000
            struct.pack_into(">q", batch, 0, n * len(records))
            struct.pack_into(">qq", batch, BASE_TIMESTAMP_AT, ts, ts + len(records) - 1)
            struct.pack_into(">I", batch, CRC_AT, crc32c(memoryview(batch)[CRC_FROM:]))
            out.write(batch)
    return directory


@pytest.fixture(scope="module")
def big_partition(tmp_path_factory) -> Path:
    """A 64 MiB partition of 16 KiB batches: a deep dump of it blocks on a pipe nobody reads.

    recover and reindex read it in a fraction of a second: their interrupt is
    tested in-process (tests/test_cli_contract.py).
    """
    return _write_partition(tmp_path_factory.mktemp("big") / "orders-0", 64 << 20)


@pytest.fixture(scope="module")
def huge_partition(tmp_path_factory) -> Path:
    """512 MiB: convert and verify --deep work on it for several seconds, well after their first progress line (at 1 s)."""
    return _write_partition(tmp_path_factory.mktemp("huge") / "orders-0", 512 << 20)


# -- 1. exit 130 on Ctrl-C, output removed -------------------------------------------------------------


def _wait_until_blocked_writing(process: subprocess.Popen) -> None:
    """Until the child sleeps in write(2) on its full stdout pipe (Linux: /proc/PID/wchan, stat)."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        state = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        wchan = Path(f"/proc/{process.pid}/wchan").read_text()
        if state == "S" and "pipe" in wchan:
            return
        time.sleep(0.05)
    raise AssertionError("the dump never blocked on its output")


def _interrupt_mid_run(args: list[str], signum: int = signal.SIGINT) -> subprocess.CompletedProcess:
    """Start kseg; once work is under way send ``signum`` (SIGINT unless told).

    Commands with ``--progress`` are interrupted at their first progress line
    (it comes only after a second of work, on inputs that take several); dump,
    which has none in a pipe, once it is blocked writing to a pipe nobody reads
    (its output is far larger than a pipe holds), so the interrupt always finds
    it mid-run, however fast the machine.
    """
    progress = args[0] != "dump"
    process = subprocess.Popen(
        [sys.executable, "-m", "kseg", args[0], *(["--progress"] if progress else []), *args[1:]],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stderr is not None and process.stdout is not None
    first = ""
    if progress:
        ready, _, _ = select.select([process.stderr], [], [], TIMEOUT)
        first = process.stderr.readline().decode()
        assert ready and first, "no progress line"
    else:
        _wait_until_blocked_writing(process)
    assert process.poll() is None, "finished before the interrupt"
    process.send_signal(signum)
    out, err = process.communicate(timeout=TIMEOUT)
    return subprocess.CompletedProcess(args, process.returncode, out, (first + err.decode()).encode())


@pytest.mark.parametrize(
    "args",
    [
        ["convert", "{huge}", "-o", "{out}", "--to-magic", "1"],
        ["verify", "--deep", "-j", "1", "{huge}"],
        ["dump", "--deep-iteration", "--print-data-log", "{dir}"],
    ],
    ids=lambda args: args[0],
)
def test_sigint_mid_run_exits_130_and_leaves_no_output(args, big_partition, huge_partition, tmp_path):
    before = {path: digest(path / LOG) for path in (big_partition, huge_partition)}
    out = tmp_path / "new" / "orders-0"
    result = _interrupt_mid_run(filled(args, dir=big_partition, huge=huge_partition, out=out))
    assert result.returncode == 130, result.stderr
    stderr = result.stderr.decode()
    assert stderr.endswith("kseg: interrupted\n") and "Traceback" not in stderr
    assert not (tmp_path / "new").exists()  # the OUTDIR it created, parents included
    for partition, digest_before in before.items():
        assert sorted(p.name for p in partition.iterdir()) == [LOG] and digest(partition / LOG) == digest_before
    assert not list(tmp_path.rglob("*.kseg-tmp"))


@pytest.mark.parametrize(
    "args",
    [
        ["convert", "{huge}", "-o", "{out}", "--to-magic", "1"],
        ["dump", "--deep-iteration", "--print-data-log", "{dir}"],
    ],
    ids=lambda args: args[0],
)
def test_sigterm_mid_run_exits_143_and_leaves_no_output(args, big_partition, huge_partition, tmp_path):
    """``kill`` is Ctrl-C's twin: the same cleanup, exit 128 + 15 and ``kseg: terminated``."""
    before = {path: digest(path / LOG) for path in (big_partition, huge_partition)}
    out = tmp_path / "new" / "orders-0"
    result = _interrupt_mid_run(filled(args, dir=big_partition, huge=huge_partition, out=out), signal.SIGTERM)
    assert result.returncode == 143, result.stderr
    stderr = result.stderr.decode()
    assert stderr.endswith("kseg: terminated\n") and "Traceback" not in stderr and "interrupted" not in stderr
    assert not (tmp_path / "new").exists()  # the OUTDIR it created, parents included
    for partition, digest_before in before.items():
        assert sorted(p.name for p in partition.iterdir()) == [LOG] and digest(partition / LOG) == digest_before
    assert not list(tmp_path.rglob("*.kseg-tmp"))


# -- 3. non-regular files are refused before any read --------------------------------------------------


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_fifo_named_like_a_segment_is_refused_without_blocking(name, tmp_path):
    fifo = tmp_path / "orders-0" / LOG
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    result = kseg(filled(READERS[name], log=fifo, out=tmp_path / "out"))
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.decode() == f"kseg: error: {fifo}: not a regular file\n"
    assert not (tmp_path / "out").exists()


def test_a_fifo_inside_a_log_directory_does_not_block_triage(tmp_path):
    partition = tmp_path / "logs" / "orders-0"
    partition.mkdir(parents=True)
    os.mkfifo(partition / LOG)
    result = kseg(["triage", str(tmp_path / "logs")])
    assert result.returncode in (0, 1, 2) and b"Traceback" not in result.stderr


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_device_is_refused(name, tmp_path):
    result = kseg(filled(READERS[name], log=Path("/dev/zero"), out=tmp_path / "out"))
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr.decode().startswith("kseg: error: /dev/zero: ") and result.stderr.count(b"\n") == 1


# -- 4. a full or closed stdout ------------------------------------------------------------------------

FULL_CASES = {
    **{name: args for name, args in READERS.items()},
    "triage": ["triage", str(FIXTURES / "verify" / "clean" / "partition")],
    "txn": ["txn", str(FIXTURES / "txn" / "logs")],
    "help": ["--help"],
    "verify-help": ["verify", "--help"],
}


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("name", sorted(FULL_CASES))
def test_a_full_stdout_is_one_line_and_exit_2(name, tmp_path):
    log = CLEAN_PARTITION / LOG
    with open("/dev/full", "wb") as full:
        result = kseg(filled(FULL_CASES[name], log=log, out=tmp_path / "out"), stdout=full, stderr=subprocess.PIPE)
    assert result.returncode == 2
    assert result.stderr.decode() == "kseg: error: stdout: No space left on device\n"


@pytest.mark.parametrize("name", sorted(FULL_CASES))
def test_a_closed_pipe_ends_quietly(name, tmp_path):
    log = CLEAN_PARTITION / LOG
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first write
    try:
        result = kseg(filled(FULL_CASES[name], log=log, out=tmp_path / "out"), stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (0, b"")
