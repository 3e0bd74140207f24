"""Replica sets for ``kseg diff``'s tests, written with tests/logdirs.py as a clean broker stop leaves them.

A module of its own (not conftest.py): tests/interop is on the path too, and has a conftest."""

from __future__ import annotations

from pathlib import Path

from logdirs import LogDir, batch

from kseg.format import encode_batch
from kseg.format.model import RecordSpec


def b(offset: int, count: int, epoch: int, size: int = 10) -> bytes:
    return batch(offset, count, epoch=epoch, size=size)


def replica(root: Path, name: str, segments: dict[int, list[bytes]], epochs: list[tuple[int, int]],
            hw: int | None = None) -> Path:
    """Log directory ``root/name`` with partition ``t-0``; its high watermark defaults to its log end."""
    logdir = LogDir(root / name)
    part = logdir.partition("t", 0, segments, epochs=epochs)
    logdir.finish(high_watermarks=None if hw is None else {("t", 0): hw})
    return part.path


def offset_commit(group: str, topic: str, partition: int, offset: int, epoch: int | None) -> tuple[bytes, bytes]:
    """An OffsetCommit record as the group coordinator writes it: key version 1; value version 3 with the
    leader epoch of the last record consumed (KIP-320), or version 1 (no epoch) when ``epoch`` is None."""

    def s(text: str) -> bytes:
        raw = text.encode()
        return len(raw).to_bytes(2, "big") + raw

    key = (1).to_bytes(2, "big") + s(group) + s(topic) + partition.to_bytes(4, "big")
    stamp = (1_700_000_000_000).to_bytes(8, "big")
    if epoch is None:
        value = (1).to_bytes(2, "big") + offset.to_bytes(8, "big") + s("") + stamp + (-1).to_bytes(8, "big", signed=True)
    else:
        value = (3).to_bytes(2, "big") + offset.to_bytes(8, "big") + epoch.to_bytes(4, "big") + s("") + stamp
    return key, value


def consumer_offsets(logdir: Path, commits: list[tuple[str, int, int | None]]) -> None:
    """``__consumer_offsets-0`` in ``logdir`` with one commit per (group, offset, epoch) for partition t-0."""
    pdir = logdir / "__consumer_offsets-0"
    pdir.mkdir()
    records = [RecordSpec(i, 1_700_000_000_000, *offset_commit(g, "t", 0, o, e)) for i, (g, o, e) in enumerate(commits)]
    (pdir / f"{0:020d}.log").write_bytes(encode_batch(records, partition_leader_epoch=0))
