"""Coverage-guided fuzzing of kseg's parsing entry points with atheris, for long local runs.

atheris is not a dependency of kseg (it needs clang-built wheels on some platforms); install it
for a local run only::

    .venv/bin/pip install atheris
    .venv/bin/python tools/fuzz/atheris_harness.py --make-corpus /tmp/kseg-corpus
    .venv/bin/python tools/fuzz/atheris_harness.py /tmp/kseg-corpus \\
        -max_len=65536 -rss_limit_mb=512 -timeout=10 -max_total_time=3600

The first input byte picks the parser (a .log walk with record decoding, the resynchronising
scanner, the three index formats with Kafka's sanity checks, the producer snapshot, checkpoint
files); the rest is the file.  The contract checked is the one under the CLI: a parser may raise
only :class:`kseg.errors.KsegError`, located inside the input; anything else (IndexError,
struct.error, OverflowError, MemoryError, a hang) is a crash that libFuzzer saves as
``crash-<sha1>``.  Keep each crash as a fixture in fixtures/fuzz with its provenance.
``one_input`` runs without atheris, so tests/fuzz checks the harness itself on every seed.
"""

from __future__ import annotations

import contextlib
import hashlib
import sys
from collections.abc import Callable
from pathlib import Path

from kseg.errors import KsegError
from kseg.format import BatchWalk
from kseg.format.checkpoints import read_leader_epochs, read_offset_checkpoint, read_partition_metadata
from kseg.format.scan import scan
from kseg.format.snapshot import check_snapshot, read_snapshot
from kseg.index import (
    offset_index_sanity,
    read_offset_index,
    read_time_index,
    read_txn_index,
    time_index_sanity,
    txn_entry_sanity,
)

MAX_DECOMPRESSED = 1 << 20
BASE_OFFSET = 100


def walk_log(data: bytes) -> None:
    """What dump and verify do to a .log: walk, check CRCs, decode every record."""
    for batch in BatchWalk(data, strict=False):
        batch.is_valid()
        for record in batch.iter_records(max_decompressed=MAX_DECOMPRESSED):
            _ = (record.offset, record.key, record.value, record.headers)


def scan_log(data: bytes) -> None:
    """What verify and recover --salvage do past damage: resynchronise on the next valid batch."""
    for _ in scan(data):
        pass


def indexes(data: bytes) -> None:
    """The three index readers and Kafka's sanity checks over the same bytes."""
    read_offset_index(data, BASE_OFFSET)
    offset_index_sanity(data, BASE_OFFSET, "fuzz.index")
    read_time_index(data, BASE_OFFSET)
    time_index_sanity(data, BASE_OFFSET, "fuzz.timeindex")
    for position, entry in enumerate(read_txn_index(data)):
        txn_entry_sanity(entry, position, BASE_OFFSET, "fuzz.txnindex")


def snapshot(data: bytes) -> None:
    check_snapshot(read_snapshot(data))


def checkpoints(data: bytes) -> None:
    for reader in (read_leader_epochs, read_offset_checkpoint, read_partition_metadata):
        with contextlib.suppress(KsegError):
            reader(data)


TARGETS: tuple[Callable[[bytes], None], ...] = (walk_log, walk_log, scan_log, indexes, snapshot, checkpoints)


def one_input(data: bytes) -> None:
    """libFuzzer's entry: the first byte picks a target, the rest is the file; only KsegError may escape."""
    if not data:
        return
    target = TARGETS[data[0] % len(TARGETS)]
    body = data[1:]
    try:
        target(body)
    except KsegError as err:
        if err.offset is not None and not 0 <= err.offset <= len(body):
            raise AssertionError(f"{target.__name__}: error located outside the input: {err}") from err


def write_corpus(directory: Path) -> int:
    """Every fixture seed once per target (its first byte picking the target): libFuzzer's start."""
    from tools.fuzz.seeds import discover

    directory.mkdir(parents=True, exist_ok=True)
    written = 0
    for seed in discover():
        for number in range(len(TARGETS)):
            data = bytes([number]) + seed.data
            (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)
            written += 1
    return written


def main() -> None:
    if sys.argv[1:2] == ["--make-corpus"]:
        print(f"{write_corpus(Path(sys.argv[2]))} inputs written to {sys.argv[2]}")
        return
    import atheris  # type: ignore[import-untyped,import-not-found,unused-ignore]  # optional, local-only (see above)

    atheris.instrument_all()  # kseg is already imported: instrument its loaded code for coverage
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
