"""``kseg stats``: the result as JSON Lines, text lines, or rich tables with bar charts.

JSON Lines (docs/stats.md has every field): one ``{"type": "partition"}`` object per partition
(sorted by size, worst skew first), then ``{"type": "topic"}`` and ``{"type": "log_dir"}``
rollups.  Text: one line per log directory, topic and partition.  Table: the same as rich
tables, sizes as bars, and the records of each topic over time as a sparkline.  rich is
imported only by :func:`table_lines`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

from kseg.ops.stats import Forecast, PartitionStats, Rollup, StatsResult, Tally
from kseg.render.terminal import shown

BARS = " ▁▂▃▄▅▆▇█"
#: Producers listed per object in ``producer_activity`` (the most active; ``producers`` counts them all).
TOP_PRODUCERS = 10


def producer_activity(tally: Tally, top: int = TOP_PRODUCERS) -> list[dict[str, int]]:
    """The most active producers (by batches): their batches, records, first and last batch maxTimestamp."""
    ranked = sorted(tally.activity.items(), key=lambda item: (-item[1][0], item[0]))[:top]
    return [{"producer_id": pid, "batches": b, "records": r, "first_timestamp": first, "last_timestamp": last}
            for pid, (b, r, first, last) in ranked]


def tally_fields(tally: Tally, result: StatsResult) -> dict[str, Any]:
    """The counters every object (partition, topic, log directory) carries."""
    out: dict[str, Any] = {
        "bytes": tally.bytes,
        "log_bytes": tally.log_bytes,
        "tail_bytes": tally.tail_bytes,
        "segments": tally.segments,
        "batches": tally.batches,
        "records": tally.records,
        "records_per_batch": round(tally.records / tally.batches, 3) if tally.batches else None,
        "codecs": dict(sorted(tally.codecs.items())),
        "codec_bytes": dict(sorted(tally.codec_bytes.items())),
        "magics": dict(sorted(tally.magics.items())),
        "timestamp_types": dict(sorted(tally.timestamp_types.items())),
        "producers": len(tally.producers),
        "producer_activity": producer_activity(tally),
        "transactional_producers": len(tally.transactional_producers),
        "idempotent_batches": tally.idempotent_batches,
        "transactional_batches": tally.transactional_batches,
        "control_batches": tally.control_batches,
        "transactions": {"committed": tally.commits, "aborted": tally.aborts, "open": tally.open_transactions},
        "largest_batch": tally.largest_batch,
        "max_message_bytes": result.max_message_bytes,
        "over_max_message_bytes": tally.over_max_message_bytes,
        "oldest_timestamp": tally.oldest_timestamp,
        "newest_timestamp": tally.newest_timestamp,
        "future_batches": tally.future_batches,
    }
    if result.records_level:
        out.update({
            "sample": result.sample,
            "scanned_batches": tally.scanned_batches,
            "scanned_records": tally.scanned_records,
            "tombstones": tally.tombstones,
            "null_keys": tally.null_keys,
            "distinct_keys": tally.keys.estimate() if tally.keys is not None else 0,
            "header_keys": dict(sorted(tally.header_keys.items())),
            "largest_record": tally.largest_record,
            "compression_ratio": round(tally.uncompressed_bytes / tally.compressed_bytes, 3)
            if tally.compressed_bytes else None,
        })
    return out


def forecast_fields(fc: Forecast) -> dict[str, Any]:
    """The retention forecast of one partition."""
    return {
        "cleanup_policy": ",".join(fc.config.cleanup_policy),
        "retention_ms": fc.config.retention_ms,
        "retention_bytes": fc.config.retention_bytes,
        "now": fc.now_ms,
        "high_watermark": fc.high_watermark,
        "deletes": [{"base_offset": s.base_offset, "bytes": s.bytes, "by": s.deleted_by} for s in fc.deleted],
        "bytes_freed": fc.bytes_freed,
        "new_log_start_offset": fc.new_log_start_offset,
        "rolls": fc.rolled,
        "held": [{"base_offset": s.base_offset, "bytes": s.bytes, "largest_timestamp": s.largest_timestamp,
                  "largest_timestamp_from": s.largest_timestamp_from, "why": s.held}
                 for s in fc.segments if s.held is not None],
    }


def partition_object(part: PartitionStats, result: StatsResult) -> dict[str, Any]:
    fc = result.forecasts.get(part.path)
    obj: dict[str, Any] = {"type": "partition", "path": part.path, "log_dir": part.log_dir, "topic": part.topic,
                           "partition": part.partition}
    obj.update(tally_fields(part.tally, result))
    obj["future_segments"] = [s.base_offset for s in part.segments if s.largest_timestamp > result.now_ms]
    obj["skew"] = result.skews.get(part.path, 1.0)
    obj["whole"] = part.whole
    obj["log_start_offset"] = part.log_start_offset
    obj["log_end_offset"] = part.log_end_offset
    obj["retention"] = forecast_fields(fc) if isinstance(fc, Forecast) else None
    return obj


def rollup_object(rollup: Rollup, result: StatsResult) -> dict[str, Any]:
    key = "topic" if rollup.kind == "topic" else "path"
    obj: dict[str, Any] = {"type": rollup.kind, key: rollup.name, "partitions": rollup.partitions}
    obj.update(tally_fields(rollup.tally, result))
    obj["skew"] = rollup.skew
    members = [p for p in result.partitions if (p.topic if rollup.kind == "topic" else p.log_dir) == rollup.name]
    obj["retention_bytes_freed"] = sum(f.bytes_freed for p in members
                                       if isinstance(f := result.forecasts.get(p.path), Forecast))
    return obj


def json_lines(result: StatsResult) -> Iterator[str]:
    """Partitions, then topics, then log directories: one compact JSON object per line."""
    for part in result.partitions:
        yield json.dumps(partition_object(part, result), separators=(",", ":"))
    for rollup in [*result.topics, *result.log_dirs]:
        yield json.dumps(rollup_object(rollup, result), separators=(",", ":"))
    for lag in result.lags:
        yield json.dumps({"type": "consumer_group", "group": lag.group, "topic": lag.topic,
                          "partition": lag.partition, "committed_offset": lag.committed_offset,
                          "log_end_offset": lag.log_end_offset, "lag": lag.lag}, separators=(",", ":"))


def human_bytes(n: int) -> str:
    """1536 -> '1.5 KiB'."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def when(ms: int | None) -> str:
    """A timestamp (ms) as UTC ISO-8601 to the second; '-' for none."""
    if ms is None:
        return "-"
    try:
        return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return str(ms)


def _codec_mix(tally: Tally) -> str:
    total = sum(tally.codecs.values())
    return " ".join(f"{c} {100 * n // total}%" for c, n in tally.codecs.most_common()) if total else "-"


def _line(tally: Tally) -> str:
    return (f"{human_bytes(tally.bytes)}, {tally.segments:,} segments, {tally.batches:,} batches, "
            f"{tally.records:,} records; codecs {_codec_mix(tally)}; magic "
            f"{'/'.join(sorted(tally.magics)) or '-'}; {len(tally.producers):,} producers; "
            f"{when(tally.oldest_timestamp)} .. {when(tally.newest_timestamp)}")


def text_lines(result: StatsResult) -> Iterator[str]:
    """The plain report: log directories, topics, partitions (each with its retention forecast)."""
    for rollup in result.log_dirs:
        yield f"log dir {shown(rollup.name)}: {rollup.partitions} partitions, {_line(rollup.tally)}"
    for rollup in result.topics:
        yield f"topic {shown(rollup.name)}: {rollup.partitions} partitions (skew {rollup.skew:.2f}), {_line(rollup.tally)}"
    for part in result.partitions:
        t = part.tally
        yield f"{shown(part.topic)}-{part.partition}: {_line(t)}; skew {result.skews.get(part.path, 1.0):.2f}"
        extra = []
        if t.over_max_message_bytes:
            extra.append(f"{t.over_max_message_bytes:,} batches over max.message.bytes {result.max_message_bytes:,}")
        if t.transactional_batches or t.control_batches:
            extra.append(f"transactions: {t.commits:,} committed, {t.aborts:,} aborted, {t.open_transactions:,} open")
        if t.future_batches:
            extra.append(f"{t.future_batches:,} batches with future timestamps")
        if result.records_level:
            extra.append(f"{t.tombstones:,} tombstones, ~{t.keys.estimate() if t.keys else 0:,} distinct keys"
                         f" (of {t.scanned_records:,} records read)")
        for line in extra:
            yield f"  {line}"
        fc = result.forecasts.get(part.path)
        if isinstance(fc, Forecast):
            yield from (f"  {line}" for line in forecast_lines(fc))
    for lag in result.lags:
        where = f"{shown(lag.topic)}-{lag.partition}"
        behind = "log end not on these disks" if lag.lag is None else f"lag {lag.lag:,} (log end {lag.log_end_offset:,})"
        yield f"group {shown(lag.group)} {where}: committed {lag.committed_offset:,}, {behind}"


def forecast_lines(fc: Forecast) -> Iterator[str]:
    """The retention forecast in words: what goes, what stays and why."""
    policy = ",".join(fc.config.cleanup_policy) or "(empty)"
    if fc.deleted:
        yield (f"retention ({policy}, retention.ms={fc.config.retention_ms}, retention.bytes="
               f"{fc.config.retention_bytes}): deletes {len(fc.deleted)} segment(s), frees "
               f"{human_bytes(fc.bytes_freed)}; log start {fc.log_start_offset} -> {fc.new_log_start_offset}")
    else:
        yield f"retention ({policy}, retention.ms={fc.config.retention_ms}): deletes nothing"
    held = [s for s in fc.segments if s.held is not None]
    if held:
        first = held[0]
        yield f"  held: segment {first.base_offset}: {first.held}"
        pinned = [s for s in held[1:] if s.held and s.held.startswith("pinned")]
        if pinned:
            yield f"  {len(pinned)} more segment(s) pinned behind it ({human_bytes(sum(s.bytes for s in pinned))})"


def sparkline(values: list[int]) -> str:
    """Values as one line of block characters, scaled to the largest."""
    top = max(values, default=0)
    if top <= 0:
        return ""
    return "".join(BARS[min(8, (v * 8 + top - 1) // top)] if v else BARS[0] for v in values)


def series(tally: Tally, buckets: int) -> list[int]:
    """The records over time, folded into ``buckets`` equal spans from the oldest to the newest hour."""
    if not tally.timeline:
        return []
    first, last = min(tally.timeline), max(tally.timeline)
    span = max(1, (last - first) // max(1, buckets - 1) + 1) if last > first else 1
    out = [0] * buckets
    for start, n in tally.timeline.items():
        out[min(buckets - 1, (start - first) // span)] += n
    return out


#: Below this width the tables keep only the name, the size and the picture; below WIDE, the main columns.
NARROW = 60
WIDE = 110


def _columns(spec: tuple[tuple[str, dict[str, Any]], ...], width: int, narrow: tuple[str, ...],
             medium: tuple[str, ...]) -> tuple[tuple[str, dict[str, Any]], ...]:
    keep = narrow if width < NARROW else medium if width < WIDE else tuple(name for name, _ in spec)
    return tuple(c for c in spec if c[0] in keep)


def _partition_table(result: StatsResult, width: int, limit: int) -> Any:
    from rich import box
    from rich.table import Table

    biggest = max((p.tally.bytes for p in result.partitions), default=0)
    bar_width = max(4, min(20, (width - 60) // 2))
    spec: tuple[tuple[str, dict[str, Any]], ...] = (
        ("partition", {"overflow": "fold", "ratio": 1, "min_width": min(24, width // 4)}), ("bytes", {"justify": "right", "no_wrap": True}),
        ("size", {"no_wrap": True}), ("skew", {"justify": "right"}), ("segs", {"justify": "right"}),
        ("records", {"justify": "right"}), ("codecs", {"overflow": "fold"}), ("retention frees", {"justify": "right"}))
    columns = _columns(spec, width, ("partition", "bytes", "size"),
                       ("partition", "bytes", "size", "segs", "records", "retention frees"))
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold", padding=(0, 1, 0, 0),
                  title="partitions (largest first)")
    for name, kw in columns:
        table.add_column(name, **kw)
    for part in result.partitions[:limit]:
        fc = result.forecasts.get(part.path)
        cells = round(bar_width * part.tally.bytes / biggest) if biggest else 0
        row = {
            "partition": shown(f"{part.topic}-{part.partition}"), "bytes": human_bytes(part.tally.bytes),
            "size": "█" * cells + "·" * (bar_width - cells), "skew": f"{result.skews.get(part.path, 1.0):.2f}",
            "segs": f"{part.tally.segments:,}", "records": f"{part.tally.records:,}", "codecs": _codec_mix(part.tally),
            "retention frees": human_bytes(fc.bytes_freed) if isinstance(fc, Forecast) else "-",
        }
        table.add_row(*(row[name] for name, _ in columns))
    return table


def _topic_table(result: StatsResult, width: int) -> Any:
    from rich import box
    from rich.table import Table

    spec: tuple[tuple[str, dict[str, Any]], ...] = (
        ("topic", {"overflow": "fold", "ratio": 1, "min_width": min(24, width // 4)}), ("parts", {"justify": "right"}),
        ("bytes", {"justify": "right", "no_wrap": True}), ("skew", {"justify": "right"}),
        ("records over time", {"no_wrap": True}), ("oldest", {}), ("newest", {}))
    columns = _columns(spec, width, ("topic", "bytes", "records over time"),
                       ("topic", "bytes", "skew", "records over time", "newest"))
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold", padding=(0, 1, 0, 0),
                  title="topics")
    for name, kw in columns:
        table.add_column(name, **kw)
    spark = max(4, min(24, (width - 50) // 2)) if width >= NARROW else max(4, width // 4)
    for rollup in result.topics:
        t = rollup.tally
        row = {"topic": shown(rollup.name), "parts": str(rollup.partitions), "bytes": human_bytes(t.bytes),
               "skew": f"{rollup.skew:.2f}", "records over time": sparkline(series(t, spark)),
               "oldest": when(t.oldest_timestamp)[:10], "newest": when(t.newest_timestamp)[:10]}
        table.add_row(*(row[name] for name, _ in columns))
    return table


def table_lines(result: StatsResult, *, width: int = 100, color: bool = False, limit: int = 50) -> Iterator[str]:
    """Rich tables: partitions (bars of their size), topics (a sparkline of records over time), log dirs.

    A width of 0 (a terminal that does not say) is taken as 80; below 20 columns the tables are 20 wide;
    below 60 they keep only names, sizes and pictures.
    """
    from rich.console import Console

    width = 80 if width <= 0 else max(width, 20)
    console = Console(no_color=not color, force_terminal=color, highlight=False, width=width)
    with console.capture() as captured:
        console.print(_partition_table(result, width, limit))
        console.print(_topic_table(result, width))
        for rollup in result.log_dirs:
            console.print(f"log dir {shown(rollup.name)}: {rollup.partitions} partitions, {_line(rollup.tally)}",
                          markup=False, overflow="fold")
    for line in captured.get().splitlines():
        yield line.rstrip()
    if len(result.partitions) > limit:
        yield f"... and {len(result.partitions) - limit:,} more partitions (--format json lists them all)"
