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

The log directory's ``meta.properties`` (Java properties: ``version``,
``cluster.id``, ``node.id`` or ``broker.id``, ``directory.id``), KRaft's
``quorum-state`` (one line of JSON with a ``data_version``) and
``.kafka_cleanshutdown`` (empty, or ``{"version":0,"brokerEpoch":N}``) have
readers at the end, next to Kafka-exact readers of the files above
(:func:`scan_checkpoint`, :func:`parse_partition_metadata`) that ``kseg dump``
uses to show a damaged file up to its damage.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from typing import Any

from kseg.errors import Corrupt
from kseg.format.jvm_text import java_lines, java_number, java_split, quoted

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
        raise Corrupt(f"Malformed line in checkpoint file: {quoted(lines[0])!r}", offset=0, field=f"{name}.version") from None
    if version != expected_version:
        raise Corrupt(f"Unrecognised version:{version}, expected version: {expected_version}", offset=0, field=f"{name}.version")
    try:
        count = int(lines[1])
    except (ValueError, IndexError):
        raise Corrupt("Malformed line in checkpoint file: missing entry count", offset=starts[1] if len(starts) > 1 else len(data), field=f"{name}.count") from None
    entries: list[tuple[str, ...]] = []
    for i in range(count):
        index = 2 + i
        if index >= len(lines) or lines[index] == "":
            raise Corrupt(f"Expected [{count}] entries in checkpoint file, but found only [{i}]", offset=starts[min(index, len(starts) - 1)], field=f"{name}.entries")
        parts = tuple(p for p in _FIELDS.split(lines[index].strip()) if p)
        if len(parts) != fields or not all(_is_int(p) for p in parts[-2:]):
            raise Corrupt(f"Malformed line in checkpoint file: {quoted(lines[index])}", offset=starts[index], field=f"{name}.entries[{i}]")
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
                raise Corrupt(f"Malformed line in partition.metadata: {quoted(line)}", offset=pos, field="partition.metadata")
            out[key.strip()] = value.strip()
        pos += len(line.encode()) + 1
    return out


# --------------------------------------------------------------------------- Kafka's own read rules (for dump)
#
# The readers above are lenient helpers.  The ones below follow the Java
# readers rule for rule, keep every entry they could read, and return the
# first thing the Java reader would throw on instead of raising, so that a
# dump can show a damaged file up to the damage:
#
# * CheckpointFile (``CheckpointReadBuffer.read``): ``BufferedReader.readLine``
#   lines (``\n``, ``\r`` or ``\r\n``), strict UTF-8; version line, count line
#   (both ``Integer.parseInt``; an absent line means "no entries"), then every
#   remaining line is an entry (``String.split("\\s+")``); the number of
#   entries must equal the count.
# * partition.metadata (``PartitionMetadataReadBuffer.read``): two lines split
#   on ``:\s+``; the second part of each is taken, whatever the key says.
# * meta.properties: ``java.util.Properties.load`` (ISO-8859-1, comments,
#   ``=``/``:``/blank separators, backslash escapes and continuations).
# * quorum-state (``FileQuorumStateStore``): the first line is a JSON object.
# * .kafka_cleanshutdown (``CleanShutdownFileHandler``): empty (brokers before
#   KIP-966) or ``{"version":0,"brokerEpoch":N}``.
#
# The Java line, split and number rules themselves are in kseg.format.jvm_text.

_PROPERTY_BLANK = " \t\f"


@dataclass(frozen=True, slots=True)
class CheckpointScan:
    """A CheckpointFile as far as Kafka's reader gets: ``entries`` in file order, then ``problem``."""

    version: int | None  # None: empty file
    declared: int | None  # the entry-count line; None when there is none
    entries: tuple[tuple[int | str, ...], ...]  # (epoch, start_offset) or (topic, partition, offset)
    problem: Corrupt | None


def _checkpoint_entry(line: str, fields: int) -> tuple[int | str, ...] | None:
    """``LeaderEpochCheckpointFile.Formatter`` (2 fields) / ``OffsetCheckpointFile.Formatter`` (3)."""
    parts = java_split(line)
    if len(parts) != fields:
        return None
    if fields == 2:
        epoch, offset = java_number(parts[0], 32), java_number(parts[1], 64)
        return None if epoch is None or offset is None else (epoch, offset)
    partition, offset = java_number(parts[1], 32), java_number(parts[2], 64)
    return None if partition is None or offset is None else (parts[0], partition, offset)


def scan_checkpoint(data: bytes, *, fields: int, expected_version: int = 0) -> CheckpointScan:
    """Read a CheckpointFile as ``CheckpointReadBuffer.read`` does, keeping what it read before failing."""
    lines, problem = java_lines(data)
    if not lines:
        return CheckpointScan(None, None, (), problem)
    version = java_number(lines[0][1], 32)
    if version is None:
        return CheckpointScan(None, None, (), Corrupt(f"Malformed line in checkpoint file: {quoted(lines[0][1])}", offset=0,
                                                      field="version"))
    if version != expected_version:
        bad = Corrupt(f"Unrecognised version:{version}, expected version: {expected_version}", offset=0,
                      field="version")
        return CheckpointScan(version, None, (), bad)
    if len(lines) < 2:
        return CheckpointScan(version, None, (), problem)
    position, text = lines[1]
    declared = java_number(text, 32)
    if declared is None:
        bad = Corrupt(f"Malformed line in checkpoint file: {quoted(text)}", offset=position, field="count")
        return CheckpointScan(version, None, (), bad)
    entries: list[tuple[int | str, ...]] = []
    for index, (position, text) in enumerate(lines[2:]):
        entry = _checkpoint_entry(text, fields)
        if entry is None:
            bad = Corrupt(f"Malformed line in checkpoint file: {quoted(text)}", offset=position, field=f"entries[{index}]")
            return CheckpointScan(version, declared, tuple(entries), bad)
        entries.append(entry)
    if problem is None and len(entries) != declared:
        problem = Corrupt(f"Expected [{declared}] entries in checkpoint file, but found only [{len(entries)}]",
                          offset=len(data), field="count")
    return CheckpointScan(version, declared, tuple(entries), problem)


_COLON_SPACE = re.compile(r":\s+")


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    version: int
    topic_id: str


def parse_topic_id(text: str) -> str:
    """``Uuid.fromString``: base64url (padding optional) of exactly 16 bytes; raises ValueError like Java."""
    if len(text) > 24:
        raise ValueError(f"Input string with prefix `{text[:24]}` is too long to be decoded as a base64 UUID")
    if not re.fullmatch(r"[A-Za-z0-9_-]*={0,2}", text) or len(text.rstrip("=")) % 4 == 1:
        raise ValueError(f"Input string `{quoted(text)}` is not valid base64url")
    raw = base64.urlsafe_b64decode(text.rstrip("=") + "=" * (-len(text.rstrip("=")) % 4))
    if len(raw) != 16:
        raise ValueError(f"Input string `{quoted(text)}` decoded as {len(raw)} bytes, which is not equal to the expected "
                         "16 bytes of a base64-encoded UUID")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def parse_partition_metadata(data: bytes) -> PartitionMetadata:
    """``PartitionMetadataReadBuffer.read``; raises :class:`Corrupt` where Kafka's reader throws."""
    lines, problem = java_lines(data)
    if problem is not None:
        raise problem
    if not lines:
        raise Corrupt("empty file (Kafka: NullPointerException reading the version line)", offset=0, field="version")
    parts = java_split(lines[0][1], _COLON_SPACE)
    version = java_number(parts[1], 32) if len(parts) == 2 else None
    if version is None:
        raise Corrupt(f"Malformed line in checkpoint file: {quoted(lines[0][1])}", offset=0, field="version")
    if version < 0:
        raise Corrupt(f"Unrecognized version of partition metadata file: {version}", offset=0, field="version")
    if len(lines) < 2:
        raise Corrupt("no topic_id line (Kafka: NullPointerException)", offset=len(data), field="topic_id")
    position, text = lines[1]
    parts = java_split(text, _COLON_SPACE)
    if len(parts) != 2:
        raise Corrupt(f"Malformed line in checkpoint file: {quoted(text)}", offset=position, field="topic_id")
    try:
        topic_id = parse_topic_id(parts[1])
    except ValueError as exc:
        raise Corrupt(str(exc), offset=position, field="topic_id") from None
    if topic_id == "AAAAAAAAAAAAAAAAAAAAAA":
        raise Corrupt("Invalid topic ID in partition metadata file", offset=position, field="topic_id")
    return PartitionMetadata(version, topic_id)


@dataclass(frozen=True, slots=True)
class JavaProperties:
    """A ``.properties`` file: comment lines and ``(key, value)`` pairs, both in file order."""

    comments: tuple[str, ...]
    properties: tuple[tuple[str, str], ...]

    def as_dict(self) -> dict[str, str]:
        """What ``Properties.load`` ends with (a later duplicate wins)."""
        return dict(self.properties)


_PROPERTY_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape_property(text: str, position: int) -> str:
    """``Properties.loadConvert``: ``\\t \\n \\r \\f``, ``\\uXXXX``, and ``\\x`` -> ``x``."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch != "\\" or i + 1 == len(text):
            out.append(ch)
            i += 1
            continue
        ch = text[i + 1]
        if ch == "u":
            digits = text[i + 2 : i + 6]
            if not re.fullmatch(r"[0-9A-Fa-f]{4}", digits):
                raise Corrupt("Malformed \\uxxxx encoding.", offset=position, field="meta.properties")
            out.append(chr(int(digits, 16)))
            i += 6
        else:
            out.append(_PROPERTY_ESCAPES.get(ch, ch))
            i += 2
    return "".join(out)


def _logical_property_lines(data: bytes) -> tuple[list[str], list[tuple[int, str]]]:
    """Comment lines, and logical lines (continuations joined) with their byte positions."""
    lines, _ = java_lines(data, "latin-1")
    comments: list[str] = []
    logical: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for position, raw in lines:
        text = raw.lstrip(_PROPERTY_BLANK)
        if pending is None:
            if not text:
                continue
            if text[0] in "#!":
                comments.append(text)
                continue
            pending = (position, "")
        joined = pending[1] + text
        trailing = len(joined) - len(joined.rstrip("\\"))
        if trailing % 2:  # an odd number of backslashes continues the line
            pending = (pending[0], joined[:-1])
            continue
        logical.append((pending[0], joined))
        pending = None
    if pending is not None:
        logical.append(pending)
    return comments, logical


def _split_property(line: str) -> tuple[str, str]:
    """Key up to the first unescaped ``=``, ``:`` or blank; then blanks, one ``=``/``:``, blanks."""
    i, escaped = 0, False
    while i < len(line):
        ch = line[i]
        if not escaped and (ch in "=:" or ch in _PROPERTY_BLANK):
            break
        escaped = ch == "\\" and not escaped
        i += 1
    key, rest = line[:i], line[i:].lstrip(_PROPERTY_BLANK)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_PROPERTY_BLANK)
    return key, rest


def read_java_properties(data: bytes) -> JavaProperties:
    """``Properties.load(InputStream)`` (ISO-8859-1) as Kafka reads ``meta.properties``."""
    comments, logical = _logical_property_lines(data)
    pairs = []
    for position, line in logical:
        key, value = _split_property(line)
        pairs.append((_unescape_property(key, position), _unescape_property(value, position)))
    return JavaProperties(tuple(comments), tuple(pairs))


def read_quorum_state(data: bytes) -> dict[str, Any]:
    """The JSON object on the first line of ``quorum-state``, keys in file order; raises :class:`Corrupt`."""
    lines, problem = java_lines(data)
    if not lines:
        raise problem or Corrupt("File ended prematurely.", offset=0, field="quorum-state")
    try:
        value = json.loads(lines[0][1], parse_constant=_strict_json_constant)
    except json.JSONDecodeError as exc:
        where = len(lines[0][1][: exc.pos].encode("utf-8"))
        raise Corrupt(f"not JSON: {exc.msg}", offset=where, field="quorum-state") from None
    if not isinstance(value, dict):
        raise Corrupt(f"Deserialized node {quoted(lines[0][1])} is not an object node", offset=0, field="quorum-state")
    return value


def _strict_json_constant(name: str) -> Any:
    """Jackson rejects ``NaN``/``Infinity``; Python's json would accept them (and write invalid JSON back)."""
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


@dataclass(frozen=True, slots=True)
class CleanShutdown:
    """``.kafka_cleanshutdown``: its presence means a clean shutdown; newer brokers also store their epoch."""

    empty: bool
    version: int | None
    broker_epoch: int | None


def read_clean_shutdown(data: bytes) -> CleanShutdown:
    """Empty, or ``{"version":0,"brokerEpoch":N}``; raises :class:`Corrupt` for anything else."""
    if not data:
        return CleanShutdown(True, None, None)
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_strict_json_constant)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Corrupt(f"not the JSON Kafka writes: {exc}", offset=0, field=".kafka_cleanshutdown") from None
    if not isinstance(value, dict):
        raise Corrupt("not a JSON object", offset=0, field=".kafka_cleanshutdown")
    version, epoch = value.get("version"), value.get("brokerEpoch")
    if not _is_json_int(version) or not (epoch is None or _is_json_int(epoch)):
        raise Corrupt(f"unexpected content {value}", offset=0, field=".kafka_cleanshutdown")
    return CleanShutdown(False, version, epoch)


def _is_json_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
