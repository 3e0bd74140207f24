"""Text and JSON for ``kseg convert`` reports (:mod:`kseg.ops.convert.run`).

Text, one block per segment, then totals::

    in/00000000000000000000.log -> out/00000000000000000000.log
      read:      9 batches (magic 0: 3, magic 1: 3, magic 2: 3; none 5, ...), 15 records, 758 bytes
      wrote:     8 batches (magic 1; lz4 8), 15 records, 934 bytes; 4 messages packed into batches
      indexes:   .index 0 entries, .timeindex 1 entry
      dropped:   headers of 1 record (1 header); partition leader epoch of 3 batches
    converted 1 segment to magic 1 (lz4): 15 records, 758 -> 934 bytes

then, below magic 2, what old consumers will see of transactions.

JSON: one object with ``target``, ``segments``, ``totals`` and ``transactions``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence

from kseg.format.model import CODEC_NAMES
from kseg.ops.convert.run import ConvertReport, SegmentResult
from kseg.ops.convert.tally import Dropped, Tally
from kseg.ops.convert.target import Target

LABEL_WIDTH = len("oversized:") + 1


def plural(n: int, noun: str, plural_form: str | None = None) -> str:
    return f"{n} {noun if n == 1 else (plural_form or noun + 's')}"


def entries(n: int) -> str:
    return plural(n, "entry", "entries")


def codec_label(target: Target) -> str:
    return "each batch's own codec" if target.codec is None else CODEC_NAMES[target.codec]


def _counts(counter: Counter[str], order: Sequence[str]) -> str:
    return ", ".join(f"{name} {counter[name]}" for name in order if counter.get(name)) or "none"


def _magics(counter: Counter[int]) -> str:
    return ", ".join(f"magic {m}: {counter[m]}" for m in sorted(counter))


def dropped_phrases(dropped: Dropped) -> list[str]:
    """What the target could not hold, in words; empty when nothing was lost."""
    d = dropped
    phrases: list[str] = []
    if d.control_batches:
        batches = plural(d.control_batches, "control batch", "control batches")
        phrases.append(f"{batches} ({plural(d.control_records, 'record')})")
    if d.transactional_batches:
        phrases.append(
            f"transactional flag of {plural(d.transactional_batches, 'batch', 'batches')} "
            f"({plural(d.transactional_records, 'record')})"
        )
    if d.header_records:
        phrases.append(f"headers of {plural(d.header_records, 'record')} ({plural(d.headers, 'header')})")
    if d.producer_batches:
        phrases.append(f"producer id/epoch/sequence of {plural(d.producer_batches, 'batch', 'batches')}")
    if d.partition_leader_epochs:
        phrases.append(f"partition leader epoch of {plural(d.partition_leader_epochs, 'batch', 'batches')}")
    if d.delete_horizons:
        phrases.append(f"delete horizon of {plural(d.delete_horizons, 'batch', 'batches')}")
    if d.timestamps:
        phrases.append(f"timestamps of {plural(d.timestamps, 'record')}")
    if d.empty_batches:
        phrases.append(f"{plural(d.empty_batches, 'empty batch', 'empty batches')} (producer state only)")
    return phrases


def _line(label: str, text: str) -> str:
    return f"  {label + ':':<{LABEL_WIDTH}}{text}"


def _wrote(tally: Tally, target: Target) -> str:
    text = (
        f"{plural(tally.batches_out, 'batch', 'batches')} (magic {target.magic}; "
        f"{_counts(tally.codecs_out, CODEC_NAMES)}), {plural(tally.records_out, 'record')}, "
        f"{plural(tally.bytes_out, 'byte')}"
    )
    notes: list[str] = []
    if tally.copied:
        notes.append(f"{tally.copied} copied unchanged")
    if tally.packed:
        notes.append(f"{plural(tally.packed, 'message')} packed into batches")
    if tally.split:
        notes.append(f"{plural(tally.split, 'batch', 'batches')} split to fit {target.max_message_bytes} bytes")
    return text + ("; " + ", ".join(notes) if notes else "")


def _indexes(segment: SegmentResult) -> str:
    if segment.index_note:
        return f"not written: Kafka's recovery fails on the output ({segment.index_note})"
    text = f".index {entries(segment.index_entries)}, .timeindex {entries(segment.timeindex_entries)}"
    if segment.txnindex_entries:
        text += f", .txnindex {entries(segment.txnindex_entries)}"
    return text


def segment_lines(segment: SegmentResult, target: Target) -> list[str]:
    tally = segment.tally
    lines = [
        f"{segment.source} -> {segment.output}",
        _line(
            "read",
            f"{plural(tally.batches_in, 'batch', 'batches')} ({_magics(tally.magics_in) or 'none'}; "
            f"{_counts(tally.codecs_in, CODEC_NAMES)}), {plural(tally.records_in, 'record')}, "
            f"{plural(segment.size_in, 'byte')}",
        ),
        _line("wrote", _wrote(tally, target)),
        _line("indexes", _indexes(segment)),
    ]
    phrases = dropped_phrases(tally.dropped)
    if phrases:
        lines.append(_line("dropped", "; ".join(phrases)))
    if tally.oversized:
        offsets = ", ".join(map(str, tally.oversized_offsets))
        if tally.oversized > len(tally.oversized_offsets):
            offsets += ", ..."
        lines.append(
            _line(
                "oversized",
                f"{plural(tally.oversized, 'record')} alone in a batch above {target.max_message_bytes} bytes "
                f"(offsets {offsets})",
            )
        )
    for skipped in segment.skipped:
        where = f"bytes {skipped.start}-{skipped.end} ({plural(skipped.size, 'byte')})"
        lines.append(_line("skipped", f"{where}: {skipped.reason}"))
    return lines


def transaction_line(report: ConvertReport) -> str | None:
    """Below magic 2: what old consumers will see of transactions whose markers were dropped."""
    txn, target = report.txn, report.target
    if target.magic == 2 or not (txn.aborted or txn.committed or txn.undecided):
        return None
    return (
        f"transactions: {plural(txn.aborted, 'record')} of aborted transactions are delivered as "
        f"ordinary records (as Kafka's down-conversion does), {txn.committed} committed, "
        f"{txn.undecided} with no marker in the input"
    )


def summary_line(report: ConvertReport) -> str:
    total = report.totals()
    skipped = sum(s.size for seg in report.segments for s in seg.skipped)
    text = (
        f"converted {plural(len(report.segments), 'segment')} to magic {report.target.magic} "
        f"({codec_label(report.target)}): {plural(total.records_out, 'record')}, "
        f"{sum(s.size_in for s in report.segments)} -> {plural(total.bytes_out, 'byte')}"
    )
    if skipped:
        text += f"; {plural(skipped, 'damaged byte')} skipped"
    return text


def render_text(report: ConvertReport, quiet: bool = False) -> Iterator[str]:
    """Each segment's lines, the transactions line, the summary; ``quiet``: only segments that lost something."""
    for segment in report.segments:
        lines = segment_lines(segment, report.target)
        if not quiet or len(lines) > 4:  # read, wrote and indexes are always there: more is a drop, a skip
            yield from lines
    line = transaction_line(report)
    if line:
        yield line
    yield summary_line(report)


# -- JSON ------------------------------------------------------------------------------


def target_json(target: Target) -> dict[str, object]:
    return {
        "magic": target.magic,
        "compression": None if target.codec is None else CODEC_NAMES[target.codec],
        "level": target.level,
        "max_message_bytes": target.max_message_bytes,
        "max_batch_bytes": target.max_batch_bytes,
        "drop_control": target.drop_control,
        "drop_headers": target.drop_headers,
    }


def tally_json(tally: Tally) -> dict[str, object]:
    return {
        "batches_in": tally.batches_in,
        "records_in": tally.records_in,
        "batch_bytes_in": tally.bytes_in,
        "batches_out": tally.batches_out,
        "records_out": tally.records_out,
        "bytes_out": tally.bytes_out,
        "magics_in": {str(m): n for m, n in sorted(tally.magics_in.items())},
        "codecs_in": {c: tally.codecs_in[c] for c in CODEC_NAMES if tally.codecs_in.get(c)},
        "codecs_out": {c: tally.codecs_out[c] for c in CODEC_NAMES if tally.codecs_out.get(c)},
        "copied": tally.copied,
        "packed": tally.packed,
        "split": tally.split,
        "oversized": tally.oversized,
        "oversized_offsets": list(tally.oversized_offsets),
        "dropped": tally.dropped.as_dict(),
    }


def segment_json(segment: SegmentResult) -> dict[str, object]:
    return {
        "type": "segment",
        "input": str(segment.source),
        "output": str(segment.output),
        "base_offset": segment.base_offset,
        "bytes_in": segment.size_in,
        **tally_json(segment.tally),
        "skipped": [
            {"start": s.start, "end": s.end, "bytes": s.size, "reason": s.reason} for s in segment.skipped
        ],
        "indexes": {
            "index": segment.index_entries,
            "timeindex": segment.timeindex_entries,
            "txnindex": segment.txnindex_entries,
            "not_written": segment.index_note,
        },
    }


def report_json(report: ConvertReport) -> Iterator[dict[str, object]]:
    """JSON Lines, as every command prints them: one object per segment written, then the summary."""
    for segment in report.segments:
        yield segment_json(segment)
    yield summary_json(report)


def summary_json(report: ConvertReport) -> dict[str, object]:
    total = report.totals()
    return {
        "type": "summary",
        "target": target_json(report.target),
        "output_dir": str(report.out_dir),
        "exit_code": 1 if report.skipped_any else 0,
        "totals": {
            "segments": len(report.segments),
            "bytes_in": sum(s.size_in for s in report.segments),
            **tally_json(total),
            "skipped_bytes": sum(s.size for seg in report.segments for s in seg.skipped),
        },
        "transactions": {
            "aborted_records_delivered": report.txn.aborted if report.target.magic < 2 else 0,
            "committed_records": report.txn.committed,
            "undecided_records": report.txn.undecided,
        },
    }
