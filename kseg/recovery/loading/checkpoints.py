"""Kafka's ``CheckpointFile`` reader, failure for failure: which exception a damaged checkpoint throws.

``CheckpointFile.CheckpointReadBuffer.read`` (server-common) reads lines
with ``BufferedReader.readLine``: version (``Integer.parseInt``, a failure is
an ``IOException`` "Malformed line"), count (same), then every remaining line
goes to the entry formatter.  The formatters (``LeaderEpochCheckpointFile``,
``OffsetCheckpointFile``) return empty for a wrong field count (an
``IOException`` "Malformed line") but call ``Integer.parseInt``/``Long.parseLong``
unguarded on the right field count, so a non-number there escapes as a bare
``NumberFormatException`` (R7.8, R8.5); a negative count makes ``new ArrayList<>(count)`` throw
``IllegalArgumentException`` "Illegal Capacity: <count>" before any entry is read.  Neither is an
``IOException``.  ``CheckpointFileWithFailureHandler.read``
wraps an ``IOException`` in ``KafkaStorageException("Error while reading
checkpoint file <path>")`` after reporting the log directory offline (R9.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kseg.format.jvm_text import java_lines, java_number, java_split, quoted
from kseg.sidefile import read_side_file

IO_EXCEPTION = "java.io.IOException"
NUMBER_FORMAT = "java.lang.NumberFormatException"
ILLEGAL_ARGUMENT = "java.lang.IllegalArgumentException"
STORAGE_EXCEPTION = "org.apache.kafka.common.errors.KafkaStorageException"
MALFORMED_INPUT = "java.nio.charset.MalformedInputException"


@dataclass(frozen=True, slots=True)
class CheckpointFailure:
    """What ``CheckpointReadBuffer.read`` throws: class and message (the IOException before wrapping)."""

    exception: str
    message: str

    @property
    def is_io(self) -> bool:
        """An ``IOException`` (wrapped in ``KafkaStorageException``, log dir reported offline)."""
        return self.exception not in (NUMBER_FORMAT, ILLEGAL_ARGUMENT)

    def text(self) -> str:
        return f"{self.exception}: {self.message}"


def _number_format(text: str) -> CheckpointFailure:
    return CheckpointFailure(NUMBER_FORMAT, f'For input string: "{quoted(text)}"')


def _entry(parts: list[str], fields: int) -> tuple[int | str, ...] | CheckpointFailure:
    """The formatter's ``fromString`` for a line with the right field count."""
    if fields == 2:
        epoch, offset = java_number(parts[0], 32), java_number(parts[1], 64)
        if epoch is None:
            return _number_format(parts[0])
        if offset is None:
            return _number_format(parts[1])
        return epoch, offset
    partition, offset = java_number(parts[1], 32), java_number(parts[2], 64)
    if partition is None:
        return _number_format(parts[1])
    if offset is None:
        return _number_format(parts[2])
    return parts[0], partition, offset


def parse_checkpoint(
    data: bytes, location: str, fields: int
) -> tuple[list[tuple[int | str, ...]], CheckpointFailure | None]:
    """(entries, failure) exactly as Kafka's reader gets them; ``location`` is the absolute path."""
    lines, undecodable = java_lines(data)
    malformed = "Malformed line in checkpoint file [{}]: {}"
    if undecodable is not None:
        return [], CheckpointFailure(MALFORMED_INPUT, "Input length = 1")
    if not lines:
        return [], None
    version = java_number(lines[0][1], 32)
    if version is None:
        return [], CheckpointFailure(IO_EXCEPTION, malformed.format(location, quoted(lines[0][1])))
    if version != 0:
        message = f"Unrecognised version:{version}, expected version: 0 in checkpoint file at: {location}"
        return [], CheckpointFailure(IO_EXCEPTION, message)
    if len(lines) < 2:
        return [], None
    declared = java_number(lines[1][1], 32)
    if declared is None:
        return [], CheckpointFailure(IO_EXCEPTION, malformed.format(location, quoted(lines[1][1])))
    if declared < 0:  # new ArrayList<>(expectedSize), before the entries are read
        return [], CheckpointFailure(ILLEGAL_ARGUMENT, f"Illegal Capacity: {declared}")
    entries: list[tuple[int | str, ...]] = []
    for _, text in lines[2:]:
        parts = java_split(text)
        if len(parts) != fields:
            return [], CheckpointFailure(IO_EXCEPTION, malformed.format(location, quoted(text)))
        entry = _entry(parts, fields)
        if isinstance(entry, CheckpointFailure):
            return [], entry
        entries.append(entry)
    if len(entries) != declared:
        message = f"Expected [{declared}] entries in checkpoint file [{location}], but found only [{len(entries)}]"
        return [], CheckpointFailure(IO_EXCEPTION, message)
    return entries, None


def read_checkpoint_file(path: Path, fields: int) -> tuple[list[tuple[int | str, ...]], CheckpointFailure | None]:
    """Read ``path`` (which must exist) through the read-only reader and parse it as Kafka does."""
    return parse_checkpoint(read_side_file(path), str(path.absolute()), fields)


def storage_message(path: Path) -> str:
    """``CheckpointFileWithFailureHandler.read``'s message."""
    return f"Error while reading checkpoint file {path.absolute()}"


def format_checkpoint(entries: list[tuple[int, int]]) -> bytes:
    """``CheckpointFile.write``'s bytes for leader epochs: version, count, ``<epoch> <offset>`` lines (R7.7)."""
    body = "".join(f"{epoch} {offset}\n" for epoch, offset in entries)
    return f"0\n{len(entries)}\n{body}".encode()
