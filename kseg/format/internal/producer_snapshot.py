"""A producer-state ``.snapshot`` read through Kafka's ``ProducerSnapshot`` message schema.

:mod:`kseg.format.snapshot` reads the fixed layout for recovery; this reader
goes through the generated-message decoder, as ``ProducerStateManager.readSnapshot``
does, so dump can show the file in the schema's JSON shape.
"""

from __future__ import annotations

from typing import Any

from kseg.format import schemas
from kseg.format.crc import crc32c
from kseg.format.internal.common import VERSION_PREFIX
from kseg.format.messages import MessageDecodeError, decode_message
from kseg.format.snapshot import CRC_COVERS_FROM


def decode_producer_snapshot(data: bytes) -> dict[str, Any]:
    """A producer-state ``.snapshot`` read through the ``ProducerSnapshot`` schema (``readSnapshot``).

    Returns ``{"version", "data", "computedCrc", "crcValid"}``; raises
    :class:`~kseg.errors.KsegError` (Kafka: ``CorruptSnapshotException``) when
    the bytes do not parse, as in ``Snapshot failed schema validation: ...``.
    """
    if len(data) < VERSION_PREFIX.size:
        raise MessageDecodeError("snapshot shorter than its version", kafka_message="null", offset=0,
                                 field=None)
    version = VERSION_PREFIX.unpack_from(data)[0]
    schema = schemas.get("storage", "ProducerSnapshot")
    decoded, _ = decode_message(schema, version, data, VERSION_PREFIX.size)
    computed = crc32c(data[CRC_COVERS_FROM:])
    return {"version": version, "data": decoded, "computedCrc": computed,
            "crcValid": computed == decoded["crc"]}
