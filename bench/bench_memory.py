"""Peak memory of ``kseg dump``, ``verify --deep`` and ``convert`` on hostile input (docs/fuzzing.md's memory cap).

Generates, in a temporary directory, each hostile input of the memory cap
(scaled by ``--scale``; 1.0 is the issue's size):

* ``tiny-records``: one gzip V2 batch of 10 M tiny records (~14 MB on disk);
* ``many-headers``: one record with 20 M empty headers, gzip (~39 KB on disk);
* ``zero-batches``: 30 gzip batches, each 100 MiB of zeros once decompressed;
* ``sparse-txnindex``: an all-zero 2 GiB ``.txnindex`` (sparse) beside an empty ``.log``;
* ``sparse-index``: an all-zero 2 GiB ``.index`` (sparse) beside an empty ``.log``;
* ``legacy-wrapper``: one gzip V1 wrapper of 3.6 M one-byte messages (9.8 MB on disk, 126 MB
  decompressed: just under the 128 MiB read cap);

then runs each command on each as a subprocess and reports the child's peak
RSS (``ru_maxrss`` from ``wait4``), its exit code, wall time and CPU time, against the
200 MB target.  Exit codes are reported, not judged: hostile input is meant to
be refused (exit 1 or 2), never to take the machine's memory.

Usage: python bench/bench_memory.py [--scale 1.0] [--only NAME] [--timeout 300]
"""

from __future__ import annotations

import argparse
import json
import struct
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path

from kseg.format.compression import CODEC_GZIP, compress
from kseg.format.v2_write import assemble_batch

TARGET_MB = 200
SEGMENT = "00000000000000000000"
TS = 1_700_000_000_000


def _zigzag(value: int) -> bytes:
    """A zigzag varint, as a V2 record writes its fields."""
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def _gzip_batch(region: bytes, count: int, base_offset: int = 0) -> bytes:
    """A CRC-valid gzip V2 batch around an uncompressed records region (not checked: hostile on purpose)."""
    return assemble_batch(
        compress(CODEC_GZIP, region, magic=2), base_offset=base_offset, partition_leader_epoch=0,
        attributes=CODEC_GZIP, last_offset_delta=max(0, count - 1), base_timestamp=TS, max_timestamp=TS,
        producer_id=-1, producer_epoch=-1, base_sequence=-1, records_count=count,
    )


def tiny_records(directory: Path, scale: float) -> Path:
    """One gzip batch of ``10 M * scale`` records with a null key and an empty value."""
    count = max(1, int(10_000_000 * scale))
    parts = []
    for delta in range(count):
        body = b"\x00\x00" + _zigzag(delta) + b"\x01\x00\x00"  # attributes, ts delta, offset delta, key null, value "", no headers
        parts.append(_zigzag(len(body)) + body)
    path = directory / "tiny-records" / f"{SEGMENT}.log"
    path.parent.mkdir()
    path.write_bytes(_gzip_batch(b"".join(parts), count))
    return path


def legacy_wrapper(directory: Path, scale: float) -> Path:
    """One gzip V1 wrapper of ``3.6 M * scale`` messages (null key, value ``x``, one timestamp), as
    ``MemoryRecordsBuilder`` writes it, encoded a piece at a time."""
    from kseg.format.model import RecordSpec
    from kseg.format.v0v1_encode import MessageSetEncoder

    count = max(1, int(3_600_000 * scale))
    encoder = MessageSetEncoder(magic=1, codec=CODEC_GZIP)
    for start in range(0, count, 100_000):
        encoder.add([RecordSpec(i, TS, None, b"x") for i in range(start, min(count, start + 100_000))])
    wrapper, _ = encoder.finish()
    assert wrapper is not None
    path = directory / "legacy-wrapper" / f"{SEGMENT}.log"
    path.parent.mkdir()
    path.write_bytes(wrapper)
    return path


def legacy_commands(path: Path, out: Path) -> dict[str, list[str]]:
    """The commands that read every inner message of a wrapper (each on its own partition)."""
    kseg = [sys.executable, "-m", "kseg"]
    return {
        "dump --format json": [*kseg, "dump", "--format", "json", "--print-data-log", str(path)],
        "dump": [*kseg, "dump", "--print-data-log", str(path)],
        "verify --deep": [*kseg, "verify", "--deep", "-j", "1", str(path)],
        "recover --salvage": [*kseg, "recover", "--salvage", str(path), "-o", str(out)],
    }


def many_headers(directory: Path, scale: float) -> Path:
    """One gzip batch holding one record with ``20 M * scale`` headers (empty key, null value)."""
    headers = max(1, int(20_000_000 * scale))
    body = b"\x00\x00\x00\x01\x00" + _zigzag(headers) + b"\x00\x01" * headers
    path = directory / "many-headers" / f"{SEGMENT}.log"
    path.parent.mkdir()
    path.write_bytes(_gzip_batch(_zigzag(len(body)) + body, 1))
    return path


def zero_batches(directory: Path, scale: float, batches: int = 30) -> Path:
    """``batches`` gzip batches of ``100 MiB * scale`` zeros each (they decompress, then fail to parse)."""
    size = max(1, int((100 << 20) * scale))
    deflater = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    chunk = bytes(1 << 20)
    body = b"".join(deflater.compress(chunk) for _ in range(size >> 20)) + deflater.compress(bytes(size & 0xFFFFF))
    body += deflater.flush()
    member = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + body + struct.pack("<II", zlib.crc32(bytes(size)), size & 0xFFFFFFFF)
    path = directory / "zero-batches" / f"{SEGMENT}.log"
    path.parent.mkdir()
    with path.open("wb") as out:
        for i in range(batches):
            out.write(assemble_batch(
                member, base_offset=i * 1000, partition_leader_epoch=0, attributes=CODEC_GZIP,
                last_offset_delta=999, base_timestamp=TS, max_timestamp=TS, producer_id=-1,
                producer_epoch=-1, base_sequence=-1, records_count=1000,
            ))
    return path


def _sparse_beside_log(directory: Path, name: str, suffix: str, size: int) -> Path:
    folder = directory / name
    folder.mkdir()
    (folder / f"{SEGMENT}.log").write_bytes(b"")
    path = folder / f"{SEGMENT}{suffix}"
    with path.open("wb") as out:
        out.truncate(size)
    return path


def sparse_txnindex(directory: Path, scale: float) -> Path:
    return _sparse_beside_log(directory, "sparse-txnindex", ".txnindex", max(34, int((2 << 30) * scale)))


def sparse_index(directory: Path, scale: float) -> Path:
    return _sparse_beside_log(directory, "sparse-index", ".index", max(8, int((2 << 30) * scale) // 8 * 8))


INPUTS: dict[str, Callable[[Path, float], Path]] = {
    "tiny-records": tiny_records,
    "many-headers": many_headers,
    "zero-batches": zero_batches,
    "sparse-txnindex": sparse_txnindex,
    "sparse-index": sparse_index,
    "legacy-wrapper": legacy_wrapper,
}


def commands(path: Path, out: Path) -> dict[str, list[str]]:
    """What is run on each input: the path is the file itself for dump, its directory for verify and convert."""
    kseg = [sys.executable, "-m", "kseg"]
    return {
        "dump": [*kseg, "dump", "--deep-iteration", str(path)],
        "dump-json": [*kseg, "dump", "--format", "json", "--deep-iteration", str(path)],
        "verify --deep": [*kseg, "verify", "--deep", str(path.parent)],
        "convert": [*kseg, "convert", str(path.parent), "-o", str(out), "--to-magic", "2"],
    }


#: Runs the command from a small interpreter, so the peak measured is the command's own: a child forked
#: from this (large) process would start with this process's peak RSS already counted.
_WRAPPER = """
import json, resource, subprocess, sys, time
argv, timeout = json.loads(sys.argv[1]), float(sys.argv[2])
start = time.perf_counter()
try:
    code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout).returncode
except subprocess.TimeoutExpired:
    code = None
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps([code, usage.ru_maxrss / 1024, time.perf_counter() - start, usage.ru_utime + usage.ru_stime]))
"""


def measure(argv: list[str], timeout: float) -> tuple[int | None, float, float]:
    """(exit code or None on timeout, peak RSS of the command in MB, seconds), its output discarded."""
    code, rss, seconds, _ = measure_cpu(argv, timeout)
    return code, rss, seconds


def measure_cpu(argv: list[str], timeout: float) -> tuple[int | None, float, float, float]:
    """:func:`measure` and the CPU seconds the command used (wall time alone misleads on a busy machine)."""
    done = subprocess.run([sys.executable, "-c", _WRAPPER, json.dumps(argv), str(timeout)],
                          capture_output=True, text=True, check=True)
    code, rss, seconds, cpu = json.loads(done.stdout)
    return code, rss, seconds, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="input size relative to the reference inputs (default 1.0)")
    parser.add_argument("--only", choices=sorted(INPUTS), action="append", help="run only these inputs")
    parser.add_argument("--command", action="append", help="run only these commands (dump, dump-json, verify --deep, convert)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run before it is killed")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="kseg-bench-memory-") as tmp:
        for name in args.only or list(INPUTS):
            path = INPUTS[name](Path(tmp), args.scale)
            run = legacy_commands if name == "legacy-wrapper" else commands
            for label, argv in run(path, Path(tmp) / f"{name}.out").items():
                if args.command and label not in args.command:
                    continue
                code, rss, seconds, cpu = measure_cpu(argv, args.timeout)
                rows.append((name, label, code, rss, seconds))
                verdict = "ok" if rss < TARGET_MB and code is not None else "OVER"
                print(f"{name:16} {label:14} exit {'timeout' if code is None else code:>7}  "
                      f"{rss:8.1f} MB  {seconds:7.1f} s  ({cpu:6.1f} s CPU)  {verdict}", flush=True)
    worst = max((rss for *_, rss, _ in rows), default=0.0)
    print(f"worst peak RSS {worst:.1f} MB (target < {TARGET_MB} MB)")
    return 0 if all(rss < TARGET_MB and code is not None for _, _, code, rss, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
