"""KRaft-framed records: ``__cluster_metadata`` and ``__remote_log_metadata`` (``AbstractApiMessageSerde``).

A value is ``uvarint frame version (1) | uvarint api key | uvarint version |
message``, and every byte must belong to the message.  Where a message's
layout changed without a version bump, the historical variants in
:mod:`kseg.format.schemas` are tried in turn.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from kseg.format import schemas
from kseg.format._core import CORE, call
from kseg.format.internal.common import Decoded, Failed, as_problem, b64
from kseg.format.internal.remote_log import JavaException, remote_log_metadata_text
from kseg.format.messages import (
    Message,
    MessageDecodeError,
    UnknownVersion,
    decode_message,
    kafka_json,
    read_unsigned_varint,
)
from kseg.format.messages.compiled import Reader, compiled_reader
from kseg.format.messages.core_program import message_program

METADATA_FRAME_VERSION = 1  # AbstractApiMessageSerde.DEFAULT_FRAME_VERSION


@cache
def metadata_type_name(message_name: str) -> str:
    """``MetadataRecordType`` constant name: Kafka's ``toSnakeCase`` upper-cased (``TOPIC_RECORD``)."""
    out: list[str] = []
    previous_upper = True
    for ch in message_name:
        if ch.isupper():
            if not previous_upper:
                out.append("_")
            out.append(ch.lower())
            previous_upper = True
        else:
            out.append(ch)
            previous_upper = False
    return "".join(out).upper()


def _frame_short(value: bytes, pos: int, entity: str) -> tuple[int, int]:
    """``AbstractApiMessageSerde.unsignedIntToShort``."""
    try:
        number, pos = read_unsigned_varint(value, pos)
    except MessageDecodeError as err:
        text = f"Error while reading {entity}"
        raise Failed("error", "value", text, f"{entity}: {err.message}", pos) from err
    if number > 0x7FFF:
        text = f"Value for {entity} was too large."
        raise Failed("error", "value", text, f"{entity} {number} > 32767", pos)
    return (number + 0x8000) % 0x10000 - 0x8000, pos  # Java's (short) cast


def _read_frame(value: bytes | None, family: str) -> tuple[Message, int, dict[str, Any]]:
    """``AbstractApiMessageSerde.read``: frame version 1, api key, version, message, nothing left over."""
    if value is None:
        raise Failed("error", "value", "Error while reading frame version", "the record has no value")
    frame_version, pos = _frame_short(value, 0, "frame version")
    if frame_version == 0:
        text = ("Could not deserialize metadata record with frame version 0. Note that upgrades from the "
                "preview release of KRaft in 2.8 to newer versions are not supported.")
        raise Failed("error", "value", text, "frame version 0 (KRaft preview)", 0)
    if frame_version != METADATA_FRAME_VERSION:
        text = (f"Could not deserialize metadata record due to unknown frame version {frame_version}"
                "(only frame version 1 is supported)")
        raise Failed("error", "value", text, f"frame version {frame_version}", 0)
    type_pos = pos
    api_key, pos = _frame_short(value, pos, "type")
    version, pos = _frame_short(value, pos, "version")
    schema = schemas.by_api_key(family).get(api_key)
    if schema is None:
        text = f"org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}"
        raise Failed("unknown-type", "value", text, f"unknown api key {api_key}", type_pos)
    try:
        return schema, version, _decode_framed(schema, api_key, version, value, pos)
    except Failed as failed:
        if failed.kind == "unknown-version":
            raise
        for variant in schemas.variants(family, schema.name):
            data = _decode_variant(variant, api_key, version, value, pos)
            if data is not None:
                return variant, version, data
        raise


def _decode_variant(schema: Message, api_key: int, version: int, value: bytes, pos: int) -> dict[str, Any] | None:
    """A historical variant of the message, or None when it does not fit the bytes either."""
    try:
        return _decode_framed(schema, api_key, version, value, pos)
    except Failed:
        return None


def _decode_framed(schema: Message, api_key: int, version: int, value: bytes, pos: int) -> dict[str, Any]:
    """The message after the frame: every byte must belong to it."""
    try:
        data, stop = decode_message(schema, version, value, pos)
    except UnknownVersion as err:
        raise Failed("unknown-version", "value", f"{err.message}, raw value {b64(value)}", err.message,
                      pos) from err
    except MessageDecodeError as err:
        raise Failed("error", "value", f"Failed to deserialize record with type {api_key}", err.message,
                      (err.offset or 0) + pos, err.field) from err
    if stop != len(value):
        left = len(value) - stop
        raise Failed("error", "value", f"Found {left} byte(s) of garbage after {api_key}",
                      f"{left} byte(s) left after {schema.name}", stop)
    return data


def decode_metadata_record(key: bytes | None, value: bytes | None, offset: int) -> Decoded:
    """A KRaft ``__cluster_metadata`` data record, as ``--cluster-metadata-decoder`` shows it.

    No key text; payload ``{"type":"<TYPE>","version":<n>,"data":{...}}`` or
    ``Error at <offset>, skipping. <message>`` (Kafka's wording has no "offset" here).
    """
    try:
        schema, version, data = _read_frame(value, "metadata")
    except Failed as failed:
        return Decoded(None, f"Error at {offset}, skipping. {failed.kafka_message}",
                       problem=as_problem(failed, key, value))
    type_name = metadata_type_name(schema.name)
    value_json = {"type": type_name, "apiKey": schema.api_key, "version": version, "data": data}
    if schema.revision is not None:
        value_json["schemaVariant"] = {"revision": schema.revision, "note": schema.note}
    return Decoded(None, kafka_json({"type": type_name, "version": version, "data": data}), None, value_json)


def read_metadata_record(value: bytes | None) -> tuple[str, int, dict[str, Any]]:
    """A metadata record's ``MetadataRecordType`` name, version and fields, as Kafka 4.3.0's
    ``MetadataRecordSerde`` reads it, without the dump text (the replay of ``kseg metadata`` reads every
    record this way); raises :class:`Failed`.  A record that fits only a historical layout of its message
    (which the dump shows as a ``schemaVariant``) is one Kafka 4.3.0 cannot read: it fails here."""
    fast = _read_fast(value)
    if fast is not None:
        return fast
    schema, version, data = _read_frame(value, "metadata")
    if schema.revision is not None:
        raise Failed("error", "value", f"Failed to deserialize record with type {schema.api_key}",
                     f"only a historical layout of {schema.name} fits ({schema.note})", None)
    return metadata_type_name(schema.name), version, data


@cache
def _fast_reader(api_key: int, version: int) -> tuple[str, Reader] | None:
    """The type name and compiled reader of a metadata record type at a version (None: not one Kafka knows)."""
    schema = schemas.by_api_key("metadata").get(api_key)
    reader = None if schema is None else compiled_reader(schema, version)
    return None if reader is None or schema is None else (metadata_type_name(schema.name), reader)


def _read_fast(value: bytes | None) -> tuple[str, int, dict[str, Any]] | None:
    """:func:`read_metadata_record` through the compiled reader of its type and version; None when the
    frame is not the common one-byte-per-field kind or the reader does not take the bytes (the generic
    reader then decides, with Kafka's words)."""
    if value is None or len(value) < 3 or value[0] != METADATA_FRAME_VERSION or value[1] >= 0x80 or value[2] >= 0x80:
        return None
    found = _fast_reader(value[1], value[2])
    if found is None:
        return None
    try:
        data, stop = found[1](value, 3)
    except Exception:
        return None
    return (found[0], value[2], data) if stop == len(value) else None


def decode_remote_log_record(key: bytes | None, value: bytes | None, offset: int, *,
                             txn_idx_empty: bool = False, record_internal: bool = True) -> Decoded:
    """A ``__remote_log_metadata`` record as ``--remote-log-metadata-decoder`` shows it: a ``toString()``
    (with ``txn_idx_empty``, as Kafka 4.0 and later print it: ``..., txnIdxEmpty=<bool>}``;
    ``record_internal``: the package of Kafka's ``Record`` class in a null value's message, 4.3's by default)."""
    try:
        schema, version, data = _read_frame(value, "storage")
        text = remote_log_metadata_text(schema.api_key or 0, data, txn_idx_empty=txn_idx_empty)
    except Failed as failed:
        return Decoded(None, f"Error at offset {offset}, skipping. {_remote_null(failed, value, record_internal)}",
                       problem=as_problem(failed, key, value))
    except JavaException as err:
        thrown = Failed("error", "value", err.kafka_message, err.message, None, err.field)
        return Decoded(None, f"Error at offset {offset}, skipping. {err.kafka_message}",
                       problem=as_problem(thrown, key, value))
    value_json = {"type": metadata_type_name(schema.name), "apiKey": schema.api_key, "version": version,
                  "data": data}
    return Decoded(None, text, None, value_json)


def _remote_null(failed: Failed, value: bytes | None, record_internal: bool) -> str:
    """A null value fails before framing there: ``record.value.remaining`` (JDK 15+ helpful NPE text), naming
    Kafka's ``Record`` class, which 4.3 moved to ``org.apache.kafka.common.record.internal``."""
    if value is None:
        package = "org.apache.kafka.common.record.internal" if record_internal else "org.apache.kafka.common.record"
        return ('Cannot invoke "java.nio.ByteBuffer.remaining()" because the return value of '
                f'"{package}.Record.value()" is null')
    return failed.kafka_message



@cache
def metadata_decoder() -> Any:
    """The compiled core's metadata decoder (every version of every metadata record type Kafka 4.3.0
    knows, programmed from the same schemas), or None on the pure-Python path."""
    if CORE is None or not hasattr(CORE, "MetadataDecoder"):
        return None
    programs = []
    for api_key, schema in schemas.by_api_key("metadata").items():
        if schema.revision is not None or not 0 <= api_key < 0x80:
            continue
        programs += _programs(api_key, schema)
    return CORE.MetadataDecoder(programs)


def _programs(api_key: int, schema: Any) -> list[tuple[int, int, str, Any]]:
    """The core programs of every version of one metadata message (all or none: a shape the core does not
    read leaves the message to the Python reader)."""
    try:
        return [(api_key, version, metadata_type_name(schema.name), message_program(schema, version))
                for version in range(schema.valid.low, min(schema.valid.high, 0x7F) + 1)]
    except ValueError:
        return []


def read_metadata_batch(buf: Any, start: int, end: int, count: int) -> list[tuple[int, str | None, int, Any]] | None:
    """The ``count`` records of an uncompressed batch region ``buf[start:end]`` through the core, each
    ``(offset delta, type name, version, fields)`` as :func:`read_metadata_record` returns them, or
    ``(offset delta, None, 0, value)`` for a record the Python reader must decide (its value bytes, or
    None); None when there is no core or the core's record scanner does not take the region (the batch is
    then read the Python way, which says what is wrong with it)."""
    decoder = metadata_decoder()
    if decoder is None:
        return None
    found = call(decoder.batch, start, buf, start, end, count)
    return None if found is NotImplemented else found


#: Frames the core walks per call of :func:`read_metadata_run`.
RUN_FRAMES = 4096


def read_metadata_run(buf: Any, start: int, from_offset: int, file: str, record_type: type, cap: int) -> Any:
    """The core's run of a metadata file from ``start`` (``MetadataDecoder.run``): ``(records as
    ``record_type`` tuples, the frame of the batch Python must read or None, where to go on, (end
    position, remaining bytes) when the walk ended)``; None without a core or for a buffer it cannot
    borrow.  LZ4 batches in Kafka's own frame are inflated in the run through the lz4 package's block
    decompressor (the one :mod:`kseg.format.compression.lz4` calls), at most ``cap`` bytes each."""
    decoder = metadata_decoder()
    if decoder is None:
        return None
    found = call(decoder.run, start, buf, start, from_offset, file, record_type, tuple.__new__, RUN_FRAMES,
                 _lz4_block(), cap)
    return None if found is NotImplemented else found


@cache
def _lz4_block() -> Any:
    """``lz4.block.decompress``, or None when the lz4 package is not installed (LZ4 batches are then
    Python's, which says so)."""
    try:
        from lz4 import block
    except ImportError:
        return None
    return block.decompress
