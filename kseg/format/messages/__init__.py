"""Kafka's generated-message encoding, decoded generically from a message schema.

Kafka describes its internal records (consumer offsets, transaction state,
KRaft metadata, ...) in JSON message definitions and generates a Java class
per message.  Instead of a parser per record type, kseg keeps a transcription
of those definitions (:mod:`kseg.format.schemas`) and reads any of them with
the one decoder here, following the generated ``read`` methods
(``generator/.../MessageDataGenerator.java``) rule for rule::

    type                 non-flexible version          flexible version
    bool/int8            1 byte (bool: != 0)           same
    int16/uint16         2 bytes big-endian            same
    int32/uint32         4 bytes                       same
    int64                8 bytes                       same
    float64              8 bytes IEEE 754              same
    uuid                 16 bytes                      same
    string               int16 length, <0 = null       uvarint length+1, 0 = null
    bytes                int32 length, <0 = null       uvarint length+1, 0 = null
    array                int32 count, <0 = null        uvarint count+1, 0 = null
    nullable struct      int8 marker, <0 = null        same (a *tagged* one: uvarint, <=0 = null)
    tagged fields        (none)                        at the end of every struct: uvarint count,
                                                       then per field uvarint tag, uvarint size, data

The result is an ordered dict in the shape of Kafka's generated JSON
converters (``JsonConverterGenerator``): field names with the first letter
lower-cased, integers and bools as such, ``float64`` as a float (``"NaN"`` /
``"Infinity"`` as Jackson writes them), uuid as base64url without padding,
``bytes`` as standard base64 with padding, strings decoded as Java's
``new String(bytes, UTF_8)`` does (:func:`kseg.format.jvm_text.java_utf8`), tagged fields
only when they differ from their default.  Unknown tags are kept under ``"_unknownTaggedFields"``
(``[{"tag": n, "data": base64}]``); :func:`kafka_json` leaves them out, as
Kafka's converters do.

Errors raise :class:`MessageDecodeError` (an :class:`~kseg.errors.InvalidRecord`)
with ``offset`` relative to the start of the message and ``field`` the path of
the field being read; ``kafka_message`` is the text Kafka's exception would
carry (``"null"`` for a ``BufferUnderflowException``), so dump-tool messages
can be reproduced.  Every length is checked against the bytes left before
anything is allocated.  A version outside the schema's ``validVersions``
raises :class:`UnknownVersion` (Kafka's generated readers would read it with
the field rules anyway; kseg refuses to guess).

The package is split by responsibility: :mod:`.schema` (the model the
transcriptions build), :mod:`.reader` (the decoder), :mod:`.defaults` (tagged
fields' defaults) and :mod:`.jackson` (Kafka's JSON text).  Import from here.
"""

from __future__ import annotations

from kseg.format.messages.defaults import ZERO_UUID, default_struct, default_value
from kseg.format.messages.jackson import java_double, json_string, kafka_json
from kseg.format.messages.reader import (
    Buffer,
    MessageDecodeError,
    UnknownVersion,
    decode_exact,
    decode_message,
    read_unsigned_varint,
)
from kseg.format.messages.schema import (
    FIXED,
    INTEGER_TYPES,
    SHORT_MAX,
    UNKNOWN_TAGS,
    Field,
    Message,
    Versions,
    field,
    message,
)

__all__ = [
    "FIXED",
    "INTEGER_TYPES",
    "SHORT_MAX",
    "UNKNOWN_TAGS",
    "ZERO_UUID",
    "Buffer",
    "Field",
    "Message",
    "MessageDecodeError",
    "UnknownVersion",
    "Versions",
    "decode_exact",
    "decode_message",
    "default_struct",
    "default_value",
    "field",
    "java_double",
    "json_string",
    "kafka_json",
    "message",
    "read_unsigned_varint",
]
