"""``verify --deep``: decode every record of a batch and check it against the batch header.

Decompression, the record count, offset deltas, maxTimestamp, and the inner
CRCs of V0/V1 wrappers: what only reading the records can show.  Errors from
the decoders become findings through :func:`decode_kind` and :func:`describe`.
"""

from __future__ import annotations

from kseg.errors import CodecError, KsegError, LimitExceeded, Unsupported
from kseg.format.compression import CODEC_ZSTD
from kseg.format.legacy_inner import BAD_CRC, OTHER_MAGIC
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import V2Batch
from kseg.ops.verify.log_state import WalkState
from kseg.ops.verify.model import ERROR, WARNING


def decode_kind(err: KsegError) -> tuple[str, str]:
    """Finding kind and severity for an error raised while decoding records."""
    if isinstance(err, LimitExceeded):
        return "decompress", WARNING
    if isinstance(err, (CodecError, Unsupported)):
        return "decompress", ERROR
    if err.message.startswith(("Incorrect declared batch size", "Found invalid record count")):
        return "record-count", ERROR
    return "record-structure", ERROR


def describe(err: KsegError) -> str:
    """An error's message and, when it is more precise than the batch position, its byte."""
    where = f" (at byte {err.offset})" if err.offset is not None else ""
    return f"{err.message}{where}"


def _order_text(decoded: int, offset: int, base: int, last: int, previous: int) -> str:
    """Why a record's offset is out of place in its batch."""
    if offset < base:
        return f"record {decoded} has a negative offset delta ({offset - base})"
    if offset > last:
        return f"record {decoded} has offset {offset}, beyond lastOffsetDelta (last offset {last})"
    return f"record {decoded} has offset {offset}, not above the previous record's {previous}"


class DeepChecks(WalkState):
    """The record-level checks of ``--deep``."""

    def _deep_v2(self, pos: int) -> None:
        """Decode every record of a V2 batch: decompression, count, offset deltas, maxTimestamp."""
        batch = V2Batch(self.buf, pos, self.view)
        if batch.codec_id > CODEC_ZSTD or batch.records_count < 0:
            return  # already reported from the header
        add = self.findings.add
        base, last = batch.base_offset, batch.last_offset
        previous = base - 1
        largest = -1
        decoded = 0
        order_reported = False
        try:
            for record in batch.iter_records(self.max_batch_bytes):
                offset = record.offset
                if not order_reported and (offset <= previous or offset > last):
                    order_reported = True
                    add("record-structure", ERROR, pos, offset, _order_text(decoded, offset, base, last, previous),
                        field=f"record[{decoded}].offset_delta")
                previous = offset
                largest = max(largest, record.timestamp)
                decoded += 1
        except KsegError as err:
            kind, severity = decode_kind(err)
            add(kind, severity, pos, base, describe(err), field=err.field)
            self.records += decoded
            return
        self.records += decoded
        if decoded and batch.timestamp_type == "CreateTime" and largest != batch.max_timestamp:
            add("max-timestamp", ERROR, pos, base,
                f"maxTimestamp {batch.max_timestamp} is not the largest record timestamp {largest}",
                field="batch.max_timestamp")

    def _deep_legacy(self, batch: LegacyBatch) -> int:
        """Decode a V0/V1 message's records, checking every inner CRC; returns the first offset.

        A wrapper's inner messages are checked as they are decompressed (``check_inner``): nothing
        per message is held, whatever their number."""
        pos, last = batch.position, batch.last_offset
        add = self.findings.add
        try:
            if batch.codec_id == 0:
                self.records += len(batch.records(self.max_batch_bytes))
                return last
            checked = batch.check_inner(self.max_batch_bytes)
        except KsegError as err:
            kind, severity = decode_kind(err)
            add(kind, severity, pos, last, describe(err), field=err.field)
            return last
        self.records += checked.count
        for i, event, offset, value in checked.events:
            if event == BAD_CRC:
                add("crc", ERROR, pos, offset,
                    f"inner message {i} (offset {offset}) fails its CRC-32 (stored crc = {value})",
                    field=f"inner[{i}].crc")
            elif event == OTHER_MAGIC:
                add("record-structure", WARNING, pos, offset,
                    f"inner message {i} has magic {value} inside a magic {batch.magic} wrapper "
                    "(Kafka reads it; produce validation would reject it)", field=f"inner[{i}].magic")
            else:
                add("record-structure", ERROR, pos, offset,
                    f"inner message {i} has offset {offset}, not above the previous {value}",
                    field=f"inner[{i}].offset")
        if checked.last != last:
            add("record-structure", ERROR, pos, last,
                f"wrapper offset {last} is not the last inner offset {checked.last}", field="message.offset")
        if batch.magic == 1 and batch.timestamp_type == "CreateTime" and checked.largest != batch.max_timestamp:
            add("max-timestamp", ERROR, pos, last,
                f"wrapper timestamp {batch.max_timestamp} is not the largest inner timestamp {checked.largest}",
                field="message.timestamp")
        return checked.first
