"""Kafka's small text files: CheckpointFile-framed checkpoints and partition.metadata.

CheckpointFile framing (UTF-8, ``\\n`` line ends)::

    <version>
    <entry count>
    <entry>            one per line, fields split on whitespace

=================================  =======  ===========================
file                               version  entry
=================================  =======  ===========================
leader-epoch-checkpoint            0        ``<epoch> <startOffset>``
recovery-point-offset-checkpoint   0        ``<topic> <partition> <offset>``
replication-offset-checkpoint      0        ``<topic> <partition> <offset>``
log-start-offset-checkpoint        0        ``<topic> <partition> <offset>``
cleaner-offset-checkpoint          0        ``<topic> <partition> <offset>``
=================================  =======  ===========================

``partition.metadata`` is ``version: 0\\ntopic_id: <base64url uuid>`` with no
trailing newline.  Errors quote Kafka's messages and say on which line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kseg.errors import Corrupt

_FIELDS = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Checkpoint:
    version: int
    entries: tuple[tuple[str, ...], ...]


def _line_offsets(text: str) -> list[int]:
    offsets, pos = [], 0
    for line in text.split("\n"):
        offsets.append(pos)
        pos += len(line.encode("utf-8")) + 1
    return offsets


def read_checkpoint(data: bytes, *, fields: int, expected_version: int = 0, name: str = "checkpoint") -> Checkpoint:
    """Parse CheckpointFile framing; ``fields`` is 2 (leader epochs) or 3 (topic partition offset)."""
    if not data:
        return Checkpoint(expected_version, ())
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Corrupt(f"checkpoint is not UTF-8: {exc.reason}", offset=exc.start, field=name) from None
    lines = text.split("\n")
    starts = _line_offsets(text)
    try:
        version = int(lines[0])
    except ValueError:
        raise Corrupt(f"Malformed line in checkpoint file: {lines[0]!r}", offset=0, field=f"{name}.version") from None
    if version != expected_version:
        raise Corrupt(f"Unrecognised version:{version}, expected version: {expected_version}", offset=0, field=f"{name}.version")
    try:
        count = int(lines[1])
    except (ValueError, IndexError):
        raise Corrupt("Malformed line in checkpoint file: missing entry count", offset=starts[1] if len(starts) > 1 else len(data), field=f"{name}.count") from None
    entries = []
    for i in range(count):
        index = 2 + i
        if index >= len(lines) or lines[index] == "":
            raise Corrupt(f"Expected [{count}] entries in checkpoint file, but found only [{i}]", offset=starts[min(index, len(starts) - 1)], field=f"{name}.entries")
        parts = tuple(p for p in _FIELDS.split(lines[index].strip()) if p)
        if len(parts) != fields or not all(_is_int(p) for p in parts[-(2 if fields == 3 else 2):]):
            raise Corrupt(f"Malformed line in checkpoint file: {lines[index]}", offset=starts[index], field=f"{name}.entries[{i}]")
        entries.append(parts)
    return Checkpoint(version, tuple(entries))


def _is_int(text: str) -> bool:
    return re.fullmatch(r"-?\d+", text) is not None


def read_leader_epochs(data: bytes) -> list[tuple[int, int]]:
    """(epoch, start offset) pairs of a leader-epoch-checkpoint."""
    checkpoint = read_checkpoint(data, fields=2, name="leader-epoch-checkpoint")
    return [(int(epoch), int(offset)) for epoch, offset in checkpoint.entries]


def read_offset_checkpoint(data: bytes, name: str = "offset-checkpoint") -> list[tuple[str, int, int]]:
    """(topic, partition, offset) triples of a log-directory offset checkpoint."""
    checkpoint = read_checkpoint(data, fields=3, name=name)
    return [(topic, int(partition), int(offset)) for topic, partition, offset in checkpoint.entries]


def read_partition_metadata(data: bytes) -> dict[str, str]:
    """``version`` and ``topic_id`` of a partition.metadata file."""
    out = {}
    pos = 0
    for line in data.decode("utf-8", "replace").split("\n"):
        if line:
            key, sep, value = line.partition(":")
            if not sep:
                raise Corrupt(f"Malformed line in partition.metadata: {line}", offset=pos, field="partition.metadata")
            out[key.strip()] = value.strip()
        pos += len(line.encode()) + 1
    return out
