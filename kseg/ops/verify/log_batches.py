"""Checks of one valid batch's header: offsets, attributes, producer fields, control records, V0/V1 messages.

The fast loop (:mod:`~kseg.ops.verify.log_walk`) sends here only the CRC-valid
V2 batches whose header says something unusual, and the slow path every valid
V0/V1 message; a clean segment never runs this code.  Control batches are
decoded at every level: they are tiny, and Kafka's own recovery reads them.
"""

from __future__ import annotations

from kseg.errors import KsegError
from kseg.format.compression import CODEC_ZSTD
from kseg.format.layout import (
    CODEC_MASK,
    CONTROL_MASK,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    UNUSED_ATTRIBUTE_BITS,
)
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import V2Batch
from kseg.format.walk import V2Header
from kseg.ops.verify.log_deep import DeepChecks, describe
from kseg.ops.verify.model import ERROR, WARNING


class BatchChecks(DeepChecks):
    """What is unusual about a valid batch, said as findings; each returns or updates the offset floor."""

    def _check_v2_header(self, pos: int, header: V2Header, floor: int) -> int:
        """Say everything unusual about a CRC-valid V2 header (as the walk decoded it); returns the new floor."""
        (base, _length, _epoch, _magic, _crc, attrs, lod, _bts, _mts, pid, p_epoch, seq, count) = header
        add = self.findings.add
        last = base + lod
        self.max_last = max(self.max_last, last)
        self._check_offsets(pos, base, last, floor, "batch.base_offset")
        low = attrs & 0xFF
        codec = low & CODEC_MASK
        if codec > CODEC_ZSTD:
            add("bad-attributes", ERROR, pos, base,
                f"unknown compression codec id {codec} in attributes 0x{attrs & 0xFFFF:04x} "
                f"(Kafka: IllegalArgumentException: Unknown compression type id: {codec})", field="batch.attributes")
        if attrs & UNUSED_ATTRIBUTE_BITS:
            add("bad-attributes", WARNING, pos, base,
                f"unused attribute bits set: 0x{attrs & UNUSED_ATTRIBUTE_BITS:04x} of 0x{attrs & 0xFFFF:04x} "
                "(Kafka never writes them and ignores them when reading)", field="batch.attributes")
        if lod < 0:
            add("record-count", ERROR, pos, base, f"lastOffsetDelta {lod} is negative", field="batch.last_offset_delta")
        if count < 0:
            add("record-count", ERROR, pos, base,
                f"Found invalid record count {count} in magic v2 batch", field="batch.records_count")
        elif lod >= 0 and count > lod + 1:
            add("record-count", ERROR, pos, base,
                f"{count} records cannot have distinct offsets within lastOffsetDelta {lod} "
                f"(offsets {base}..{last})", field="batch.records_count")
        self._check_producer_fields(pos, base, attrs, pid, p_epoch, seq)
        if low & CONTROL_MASK and codec <= CODEC_ZSTD:
            self._check_control(pos)
        return last if last > floor else max(floor, self.name_floor)

    def _check_offsets(self, pos: int, base: int, last: int, floor: int, field_name: str) -> None:
        add = self.findings.add
        if self.name_base is not None and base < self.name_base:
            add("offset-below-base", ERROR, pos, base,
                f"batch offset {base} is below the segment's base offset {self.name_base} (from the file name)",
                field=field_name)
        elif base <= floor:
            where = f" at byte {self.prev_position}" if self.prev_position is not None else ""
            add("offset-order", ERROR, pos, base,
                f"batch offsets {base}..{last} do not follow the previous batch{where}, whose last offset is {floor}",
                field=field_name)
        if last >= self.overflow_at:
            add("offset-overflow", WARNING, pos, base,
                f"last offset {last} is more than 2^31-1 above the segment's base offset {self.name_base}: "
                "an index cannot address it", field=field_name)

    def _check_producer_fields(self, pos: int, base: int, attrs: int, pid: int, p_epoch: int, seq: int) -> None:
        add = self.findings.add
        if attrs & TRANSACTIONAL_MASK and pid < 0:
            add("producer-fields", ERROR, pos, base,
                f"transactional batch without a producer id (producerId {pid})", field="batch.producer_id")
        elif pid >= 0 and p_epoch < 0:
            add("producer-fields", WARNING, pos, base,
                f"producer id {pid} with producer epoch {p_epoch}", field="batch.producer_epoch")
        elif pid < -1:
            add("producer-fields", WARNING, pos, base, f"producer id {pid} is neither -1 nor a valid id",
                field="batch.producer_id")
        # (no producer id with an epoch or a sequence set is common in real data: brokers wrote
        # __consumer_offsets batches with base sequence 0; it means nothing to Kafka)
        if seq < -1:
            add("producer-fields", WARNING, pos, base, f"base sequence {seq} is neither -1 nor a valid sequence",
                field="batch.base_sequence")

    def _check_control(self, pos: int) -> None:
        """Control records: keys, end-transaction markers, and the batch fields they need."""
        from kseg.format.control import (  # only for control batches: a plain segment never loads it
            ABORT,
            COMMIT,
            UNKNOWN_CONTROL_TYPE,
            decode_control_key,
            decode_end_txn_marker,
        )

        batch = V2Batch(self.buf, pos)
        add = self.findings.add
        try:
            records = list(batch.iter_records(self.max_batch_bytes))
        except KsegError as err:
            add("control-record", ERROR, pos, batch.base_offset,
                f"control batch records cannot be decoded: {describe(err)}", field=err.field)
            return
        markers = 0
        for i, record in enumerate(records):
            try:
                key = decode_control_key(record.key)
                if key.type_id in (ABORT, COMMIT):
                    decode_end_txn_marker(record.value)
            except KsegError as err:
                add("control-record", ERROR, pos, record.offset,
                    f"record {i}: {err.message}",
                    field=f"record[{i}].{err.field}" if err.field else f"record[{i}]")
                continue
            if key.type_id == UNKNOWN_CONTROL_TYPE:
                add("control-record", WARNING, pos, record.offset,
                    f"record {i}: unknown control record type {key.raw_type}", field=f"record[{i}].key")
            elif key.type_id in (ABORT, COMMIT):
                markers += 1
                if not batch.is_transactional or batch.producer_id < 0:
                    add("control-record", ERROR, pos, record.offset,
                        f"record {i}: a {key.name} marker needs a transactional batch with a producer id "
                        f"(transactional={batch.is_transactional}, producerId {batch.producer_id})",
                        field="batch.attributes")
                elif key.type_id == ABORT:
                    self.aborts.append((record.offset, batch.producer_id))
        if markers and len(records) != 1:
            add("control-record", WARNING, pos, batch.base_offset,
                f"control batch holds {len(records)} records; Kafka writes one end-transaction marker per batch")

    def _check_legacy(self, batch: LegacyBatch) -> None:
        """A CRC-valid V0/V1 message: attributes, codec, offsets, and with --deep its inner messages."""
        pos, magic, attrs, codec = batch.position, batch.magic, batch.attributes, batch.codec_id
        add = self.findings.add
        last = batch.last_offset
        if codec > CODEC_ZSTD:
            add("bad-attributes", ERROR, pos, last,
                f"unknown compression codec id {codec} in attributes 0x{attrs:02x} "
                f"(Kafka: IllegalArgumentException: Unknown compression type id: {codec})", field="message.attributes")
        elif codec == CODEC_ZSTD:
            add("codec-for-magic", ERROR, pos, last,
                f"zstd compression is not allowed in magic {magic} (Kafka: Invalid wrapper compressionType "
                f"found in legacy deep record iterator {magic})", field="message.attributes")
        if magic == 0 and attrs & TIMESTAMP_TYPE_MASK:
            add("bad-attributes", WARNING, pos, last,
                "timestamp-type bit set in a magic 0 message, which has no timestamp (Kafka ignores it)",
                field="message.attributes")
        if attrs & 0xF0:
            add("bad-attributes", WARNING, pos, last,
                f"unused attribute bits set: 0x{attrs & 0xF0:02x} (Kafka ignores them)", field="message.attributes")
        base = last
        if self.deep and codec < CODEC_ZSTD:
            base = self._deep_legacy(batch)
        self._check_offsets(pos, base, last, self.floor, "message.offset")
        self.floor = last if last > self.floor else max(self.floor, self.name_floor)
        if self.first_offset is None:
            self.first_offset = base
        self.max_last = max(self.max_last, last)
        self.batches += 1
        if self.observe is not None:
            self.observe(pos, base, last, batch.max_timestamp)
