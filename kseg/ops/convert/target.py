"""The target of ``kseg convert`` and what it can hold: Kafka's refusals, and what is dropped instead.

Two kinds of refusal, both :class:`ConvertRefused` (nothing is written):

* whatever the data -- :func:`check_target`: a magic Kafka does not have,
  zstd below magic 2, a level the codec's builder rejects;
* because of the data, below magic 2 -- :func:`representable` and
  :func:`codec_for`: control batches, transactional batches and headers have
  no place in magic 0/1 and are refused unless a ``drop_*`` flag allows
  dropping them (as ``RecordsUtil.downConvert`` does), and every drop is
  counted in :class:`~kseg.ops.convert.tally.Dropped`; a zstd batch cannot go
  below magic 2 at all (Kafka's message is kept).
"""

from __future__ import annotations

from dataclasses import dataclass

from kseg.errors import EncodeError, Refused
from kseg.format import Batch, encode_batch
from kseg.format.compression import CODEC_ZSTD, DEFAULT_MAX_DECOMPRESSED
from kseg.format.layout import LOG_OVERHEAD
from kseg.format.model import RecordSpec
from kseg.ops.convert.source import BatchSummary
from kseg.ops.convert.tally import Dropped

#: The largest output batch: Kafka's topic config ``max.message.bytes`` ("The largest record batch size
#: allowed by Kafka (after compression if compression is enabled).", ``TopicConfig.MAX_MESSAGE_BYTES_DOC`` in
#: clients/src/main/java/org/apache/kafka/common/config/TopicConfig.java), default
#: ``ServerLogConfigs.MAX_MESSAGE_BYTES_DEFAULT`` (server-common/src/main/java/org/apache/kafka/server/config/
#: ServerLogConfigs.java): 1 MiB + the 12-byte log overhead.
DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024 + LOG_OVERHEAD

ZSTD_DOWN_CONVERSION = "Down-conversion of zstandard-compressed batches is not supported"


class ConvertRefused(Refused):
    """Input the target format cannot hold, or options Kafka refuses: nothing is written."""


@dataclass(frozen=True, slots=True)
class Target:
    """What to convert to, what may be dropped on the way, and the cap on reading the input."""

    magic: int
    codec: int | None = None  # None: each batch keeps its own codec
    level: int | None = None
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES  # the largest output batch (``--max-message-bytes``)
    drop_control: bool = False
    drop_headers: bool = False
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED  # the read cap: decompressed bytes of one input batch


def check_target(target: Target) -> None:
    """Refuse what Kafka's builder refuses whatever the data: zstd below magic 2, a bad level."""
    if target.magic not in (0, 1, 2):
        raise ConvertRefused(f"Invalid magic value {target.magic}: Kafka's formats are 0, 1 and 2")
    if target.codec == CODEC_ZSTD and target.magic < 2:
        raise ConvertRefused(f"ZStandard compression is not supported for magic {target.magic}")
    if target.max_message_bytes < 1:
        raise ConvertRefused(f"--max-message-bytes must be positive (got {target.max_message_bytes})")
    if target.max_batch_bytes < 1:
        raise ConvertRefused(f"--max-batch-bytes must be positive (got {target.max_batch_bytes})")
    if target.level is not None:
        if target.codec is None:
            raise ConvertRefused("--level needs --compression (each codec has its own levels)")
        try:
            probe = [RecordSpec(0, -1, None, b"")]
            encode_batch(probe, magic=target.magic, codec=target.codec, level=target.level)
        except EncodeError as err:
            raise ConvertRefused(err.message) from None


def codec_for(target: Target, batch: Batch) -> int:
    """The output codec of ``batch``: the target's, or its own; control batches always keep theirs."""
    if batch.is_control:
        return batch.codec_id  # Kafka never (re)compresses control batches
    codec = target.codec if target.codec is not None else batch.codec_id
    if codec == CODEC_ZSTD and target.magic < 2:
        raise ConvertRefused(
            f"{ZSTD_DOWN_CONVERSION} (magic {target.magic}); choose another codec with --compression",
            offset=batch.position,
            field="batch.attributes",
        )
    return codec


def representable(target: Target, dropped: Dropped, batch: Batch, records: BatchSummary) -> bool:
    """Below magic 2: refuse, or count in ``dropped`` what is lost (``RecordsUtil.downConvert``).

    ``records`` sums up the batch's records (they are never all held at once).
    Returns False when the whole batch is dropped.
    """
    if batch.is_control:
        if not target.drop_control:
            raise ConvertRefused(
                f"control batch ({records.count} records) cannot be represented in magic {target.magic}; "
                "--drop-control drops control batches as Kafka's down-conversion does",
                offset=batch.position,
                field="batch.attributes",
            )
        dropped.control_batches += 1
        dropped.control_records += records.count
        return False
    if batch.is_transactional:
        if not target.drop_control:
            raise ConvertRefused(
                f"transactional batch (producer {batch.producer_id}) cannot be represented "
                f"in magic {target.magic}: "
                "its records would reach consumers as ordinary records even if the transaction aborted; "
                "--drop-control converts it anyway, as Kafka's down-conversion does",
                offset=batch.position,
                field="batch.attributes",
            )
        dropped.transactional_batches += 1
        dropped.transactional_records += records.count
    if batch.magic == 2 and batch.count == 0:
        dropped.empty_batches += 1
        return False
    _drop_headers(target, dropped, batch, records)
    dropped.producer_batches += batch.producer_id >= 0
    dropped.partition_leader_epochs += batch.magic == 2 and batch.partition_leader_epoch != -1
    dropped.delete_horizons += batch.delete_horizon_ms is not None
    if target.magic == 0:
        dropped.timestamps += records.timestamps_set
    return True


def _drop_headers(target: Target, dropped: Dropped, batch: Batch, records: BatchSummary) -> None:
    """Headers have no place below magic 2: refused unless ``drop_headers``, then counted."""
    if records.first_with_headers is None:
        return
    if not target.drop_headers:
        offset, headers = records.first_with_headers
        raise ConvertRefused(
            f"record at offset {offset} has {headers} header(s) and magic "
            f"{target.magic} cannot hold headers "
            f"({records.header_records} such record(s) in this batch); "
            "--drop-headers drops them",
            offset=batch.position,
            field="record.headers",
        )
    dropped.header_records += records.header_records
    dropped.headers += records.headers


__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "ZSTD_DOWN_CONVERSION",
    "ConvertRefused",
    "Target",
    "check_target",
    "codec_for",
    "representable",
]
