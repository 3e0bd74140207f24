"""An uncompressed V0/V1 message whose key or value length runs past its end, as Kafka's dump tool reads it.

kseg's V0/V1 reader (:mod:`kseg.format.v0v1`) reads a message whole and fails it when a length runs past
the message: one strict reader for every command.  Kafka's ``LegacyRecord`` is lazy: ``keySize()`` and
``valueSize()`` read the stored ints (``valueSize`` at ``keyOffset + max(0, keySize)``), and only
``key()``/``value()`` slice the bytes.  So ``printRecordMetadata`` prints the record line with the stored
sizes whenever those two ints lie inside the message, and the tool dies only when it reads one that does
not (a bare ``IndexOutOfBoundsException``, before the line is printed) or when ``--print-data-log`` (or a
decoder) asks for the key and value (``newLimit > capacity``, after the metadata).  This module gives the
dump that record line; kseg still reports the message (docs/dump.md, "Deliberate differences", row 18).
A compressed wrapper's inner messages are not read this way: kseg reads them whole before printing any.
"""

from __future__ import annotations

from dataclasses import dataclass

from kseg.errors import KsegError
from kseg.format import LegacyBatch
from kseg.format.compression import CODEC_NONE, DEFAULT_MAX_DECOMPRESSED
from kseg.format.model import NO_SEQUENCE, Record

#: the fields kseg's strict reader names when a key or value length runs past the message
_LENGTH_FIELDS = ("message.key", "message.value")


@dataclass(frozen=True)
class LazyMessage:
    """What Kafka's lazy ``LegacyRecord`` shows of a message kseg's reader refuses.

    ``record`` carries the stored key and value sizes (no key or value: Kafka cannot slice them);
    ``sizes_readable`` says whether both size ints lie inside the message (else ``printRecordMetadata``
    throws before printing); ``error`` is kseg's own reading of what is wrong, with its byte position.
    """

    record: Record
    sizes_readable: bool
    error: KsegError


def lazy_message(batch: LegacyBatch, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> LazyMessage | None:
    """The message as Kafka's dump tool reads it, when kseg's reader fails it on a key or value length;
    None when the message reads (or fails on something else, which the dump reports as it is)."""
    if batch.codec_id != CODEC_NONE or batch.magic not in (0, 1):
        return None
    try:
        batch.records(max_batch_bytes)
    except KsegError as err:
        if err.field not in _LENGTH_FIELDS:
            return None
        error = err
    else:
        return None
    key_size, value_size = batch.lazy_sizes()
    record = Record(
        batch.last_offset,
        batch.max_timestamp,
        None,
        None,
        (),
        NO_SEQUENCE,
        batch.attributes,
        -1 if key_size is None else key_size,
        -1 if value_size is None else value_size,
        batch.magic,
        batch.crc,
        batch.is_valid(),
        False,
        batch.timestamp_type,
    )
    return LazyMessage(record, value_size is not None, error)

