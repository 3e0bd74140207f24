"""Text (with a one-line map per segment, drawn by rich) and JSON for ``kseg recover`` reports.

Text: a header line, Kafka's startup view of the partition, then one block
per segment (here ``--salvage`` on the fixture partition, shortened)::

    .../00000000000000000018.log: base offset 18, 5108 bytes, 5 intact batches
      map  18 █████████████████░░░░░░░░░░░░░░░░░▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓ 33
      kept      [0, 1006)        1 batch, 3 records, offsets 18-20
      lost      [1006, 2012)     1006 damaged bytes: the checksum does not match (size field 994)
                lost offsets 21-23
                the damaged entry's header claims offsets 21-23, 3 records
      salvaged  [2012, 5108)     4 batches, 10 records, offsets 24-33
      Kafka: recovers it at startup (unclean shutdown, ...) and truncates it to 1006 bytes
      wrote out/00000000000000000018.log (4102 bytes); .index 0 entries, .timeindex 1 entry, ...

then the segments Kafka would delete, the files copied, the map legend and a
summary line.  The map is the segment's bytes to scale, one cell per ``size / width``
bytes: each cell shows what most of its bytes are, except that every lost
range gets at least one cell, so a single lost batch in a large segment is
still visible.  The numbers at its ends are the first and last offsets of the
intact batches of the input.  JSON: one object for the whole run.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

from kseg.ops.recover import HOLE, KAFKA, KEPT, LOST, SALVAGED, Loss, Plan, Region, Run, is_torn_tail
from kseg.ops.recover_files import (
    DELETED,
    DRY_RUN,
    IN_PLACE,
    NOT_WRITTEN,
    RECOVERS_UNCLEAN,
    REPLACED,
    RP_ABSENT,
    RP_CHECKPOINT,
    RP_NO_ENTRY,
    RP_NOT_PARTITION,
    SEG_DRY_RUN,
    SEG_REFUSED,
    SEG_UNTOUCHED,
    SKIPPED_CLEAN,
    UNCHANGED,
    Report,
    SegmentOutcome,
    Startup,
    Written,
    kafka_truncates,
)

GLYPHS = {KEPT: "█", SALVAGED: "▓", LOST: "░", HOLE: "·"}
STYLES = {KEPT: "green", SALVAGED: "cyan", LOST: "red", HOLE: "red"}
LEGEND = "map: █ kept  ▓ salvaged  ░ lost  · lost, all zero bytes"
MAP_PREFIX = "  map  "
MAX_CELLS = 100
LABEL_WIDTH = 10  # "salvaged" + padding


# -- words --------------------------------------------------------------------------------


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def offsets_text(first: int | None, last: int | None, open_ended: bool = False) -> str:
    if first is None:
        return "no offsets"
    if open_ended or last is None:
        return f"offsets from {first} on (where they end is unknown)"
    return f"offset {first}" if first == last else f"offsets {first}-{last}"


def records_text(records: int | None) -> str:
    return "records unknown" if records is None else plural(records, "record")


def span(start: int, end: int) -> str:
    return f"[{start}, {end})"


def run_line(run: Run) -> str:
    label = "salvaged" if run.salvaged else "kept"
    return (
        f"  {label:<{LABEL_WIDTH}}{span(run.start, run.end):<16} {plural(run.batches, 'batch', 'batches')}, "
        f"{records_text(run.records)}, {offsets_text(run.first_offset, run.last_offset)}"
    )


def claimed_text(loss: Loss) -> str | None:
    """What the damaged entry's header says (unverified), and that a compressed batch is lost whole."""
    claim = loss.claimed
    if claim is None:
        return None
    if claim.first_offset is not None:
        text = f"the damaged entry's header claims {offsets_text(claim.first_offset, claim.last_offset)}"
        if claim.records is not None:
            text += f", {plural(claim.records, 'record')}"
    else:
        text = f"the damaged entry's header claims last offset {claim.last_offset}"
    if claim.codec != "none":
        text += f"; a {claim.codec} batch: its records are one compressed stream, so it is lost whole"
    return text


def _loss_head(loss: Loss, mode: str) -> str:
    if mode == KAFKA:
        return f"{plural(loss.size, 'byte')}, {loss.reason}: {loss.detail}"
    if loss.batches:
        batches = plural(loss.batches, "intact batch", "intact batches")
        return f"{batches} ({records_text(loss.records)}), {loss.reason}: {loss.detail}"
    zero = ", all zero" if loss.zero_filled else ""
    return f"{plural(loss.damaged_bytes, 'damaged byte')}{zero}: {loss.detail}"


def _loss_offsets(loss: Loss, mode: str) -> str:
    offsets = offsets_text(loss.first_offset, loss.last_offset, loss.open_ended)
    lost = f"lost {offsets}" if loss.offsets_missing else "no offsets lost"
    if mode != KAFKA:
        return f"its {offsets}" if loss.batches else lost
    held = []
    if loss.batches:
        held.append(
            f"{plural(loss.batches, 'intact batch', 'intact batches')} ({records_text(loss.records)})"
        )
    if loss.damaged_bytes:
        held.append(
            f"{plural(loss.damaged_bytes, 'damaged byte')}" + (", all zero" if loss.zero_filled else "")
        )
    return f"{lost}: " + " and ".join(held)


def loss_lines(loss: Loss, mode: str) -> list[str]:
    """The lines for one lost range: where, why, and what it held."""
    indent = " " * (2 + LABEL_WIDTH)
    head = f"  {'cut' if mode == KAFKA else 'lost':<{LABEL_WIDTH}}{span(loss.start, loss.end):<16} "
    lines = [head + _loss_head(loss, mode), indent + _loss_offsets(loss, mode)]
    claim = claimed_text(loss)
    if claim:
        lines.append(indent + claim)
    if mode == KAFKA and loss.salvageable:
        lines.append(indent + f"--salvage keeps {loss.salvageable} of these batches")
    return lines


def body_lines(plan: Plan) -> list[str]:
    """Kept, salvaged and lost ranges in file order."""
    items: list[tuple[int, list[str]]] = [(run.start, [run_line(run)]) for run in plan.runs]
    items += [(loss.start, loss_lines(loss, plan.mode)) for loss in plan.losses]
    return [line for _, lines in sorted(items, key=lambda item: item[0]) for line in lines]


def kafka_line(outcome: SegmentOutcome) -> str:
    """What Kafka's loader would do with this segment at startup."""
    view, plan = outcome.kafka, outcome.plan
    if view.why == DELETED:
        assert view.deleted_after is not None
        return f"  Kafka: deletes it at startup (after truncating {view.deleted_after.name})"
    if view.recovers:
        why = (
            "unclean shutdown, at or after the recovery point"
            if view.why == RECOVERS_UNCLEAN
            else "no .index file"
        )
        text = f"  Kafka: recovers it at startup ({why})"
        if plan.refused is not None:
            failure = plan.refused
            return text + f" and throws {failure.exception} at byte {failure.position}; {failure.consequence}"
        if kafka_truncates(plan):
            text += f" and truncates it to {plan.kafka.valid_bytes} bytes"
        return text
    why = (
        "clean shutdown marker present"
        if view.why == SKIPPED_CLEAN
        else "below the recovery point: flushed before"
    )
    text = f"  Kafka: does not recover it at startup ({why})"
    if plan.changed:
        text += "; it would serve the damaged bytes as they are until a read fails on them"
    return text


def _index_summary(files: Sequence[Written]) -> str:
    parts = []
    for f in files:
        if f.kind == "log":
            continue
        if f.action == NOT_WRITTEN:
            continue
        text = f".{f.kind} {plural(f.entries or 0, 'entry', 'entries')}"
        if f.action == REPLACED:
            text += f" (old kept as {f.backup})"
        elif f.action == UNCHANGED:
            text += " (unchanged)"
        parts.append(text)
    return ", ".join(parts)


def action_line(outcome: SegmentOutcome) -> str:
    plan = outcome.plan
    if outcome.action == SEG_DRY_RUN:
        return (
            f"  dry run: would write {plural(plan.output_size, 'byte')}"
            if plan.refused is None
            else "  dry run: would write nothing"
        )
    if outcome.action == SEG_REFUSED:
        return "  not written: Kafka's recovery throws on this segment (--salvage keeps what it can)"
    if outcome.action == SEG_UNTOUCHED:
        return "  in place: nothing to cut, left untouched"
    log = outcome.files[0]
    if log.action == REPLACED:
        head = f"  rewrote {log.path} ({plural(log.size, 'byte')}, old kept as {log.backup})"
    else:
        head = f"  wrote {log.path} ({plural(log.size, 'byte')})"
    return head + "; " + _index_summary(outcome.files[1:])


def segment_header(outcome: SegmentOutcome) -> str:
    plan = outcome.plan
    total = plan.intact_batches
    return (
        f"{outcome.log}: base offset {plan.base_offset}, {plural(plan.size, 'byte')}, "
        f"{plural(total, 'intact batch', 'intact batches')}"
    )


def startup_line(report: Report) -> str:
    """How Kafka would start this partition: the clean-shutdown marker and the recovery point."""
    s = report.startup
    if s.recovery_point_source == RP_NOT_PARTITION:
        return (
            f"Kafka at startup: {s.directory} is not named <topic>-<partition>; "
            "as if after an unclean shutdown with recovery point 0"
        )
    shutdown = (
        f"{s.log_dir / '.kafka_cleanshutdown'} exists (clean shutdown): "
        "it recovers no segment that has its .index"
        if s.clean_shutdown
        else f"no .kafka_cleanshutdown in {s.log_dir} (unclean shutdown)"
    )
    return f"Kafka at startup: {shutdown}; {_recovery_point(s)}"


def _recovery_point(s: Startup) -> str:
    source = {
        RP_CHECKPOINT: f"recovery point {s.recovery_point} from recovery-point-offset-checkpoint",
        RP_ABSENT: "no recovery-point-offset-checkpoint, so recovery point 0",
        RP_NO_ENTRY: f"recovery-point-offset-checkpoint has no entry for {s.partition}, so recovery point 0",
    }.get(
        s.recovery_point_source,
        f"recovery-point-offset-checkpoint unreadable ({s.recovery_point_error}), so 0",
    )
    if s.clean_shutdown or s.recovers_from is None:
        return source
    return f"{source}: it recovers the segments from base offset {s.recovers_from} on"


def deletion_lines(report: Report) -> list[str]:
    """The segments Kafka's loader would delete, and that kseg did not."""
    deletion = report.deletion
    if deletion is None:
        return []
    names = ", ".join(p.name for p in deletion.segments)
    if report.target == "output" and report.whole_partition:
        kept = f"each is in {report.out_dir}, recovered on its own"
    else:
        kept = "they are untouched"
    return [
        (
            f"Kafka would delete {plural(len(deletion.segments), 'later segment')} after truncating "
            f'{deletion.after.name} ("{deletion.message}"): {names}'
        ),
        f"  kseg deleted nothing: {kept}",
    ]


def files_lines(report: Report) -> list[str]:
    lines = []
    if report.copied:
        lines.append("copied " + ", ".join(f.path.name for f in report.copied))
    for path, why in report.not_copied:
        lines.append(f"not copied: {path.name} ({why})")
    return lines


def summary_line(report: Report) -> str:
    segments = report.segments
    changed = [s for s in segments if s.plan.changed]
    refused = [s for s in changed if s.plan.refused is not None]
    cut = [s for s in changed if s.plan.refused is None]
    parts = []
    if cut:
        lost = [f"{plural(sum(s.plan.lost_bytes for s in cut), 'byte')} lost"]
        batches = sum(s.plan.lost_batches for s in cut)
        if batches:
            records = [s.plan.lost_records for s in cut]
            rec = "records unknown" if None in records else plural(sum(r or 0 for r in records), "record")
            lost.append(f"{plural(batches, 'intact batch', 'intact batches')} with {rec}")
        damaged = sum(s.plan.damaged_bytes for s in cut)
        if damaged:
            lost.append(plural(damaged, "damaged byte"))
        text = f"{len(cut)} {'damaged' if report.salvage else 'cut'} ({lost[0]}: {', '.join(lost[1:])}"
        if report.salvage:
            kept_after = sum(run.batches for s in cut for run in s.plan.runs if run.salvaged)
            text += f"; {plural(kept_after, 'batch', 'batches')} kept after the damage"
        parts.append(text + ")")
    if refused:
        parts.append(f"{len(refused)} on which Kafka's recovery throws")
    parts.append(f"{len(segments) - len(changed)} unchanged")
    return f"{plural(len(segments), 'segment')}: " + ", ".join(parts)


# -- the map --------------------------------------------------------------------------------


def map_cells(regions: Sequence[Region], size: int, width: int) -> list[str]:
    """Region kind per cell, the segment's bytes to scale; every lost region shows in at least one cell."""
    if size <= 0 or not regions:
        return []
    width = max(1, min(width, size))
    starts = [r.start for r in regions]
    cells = []
    for i in range(width):
        a, b = size * i // width, size * (i + 1) // width
        cells.append(_majority(regions, starts, a, b))
    for region in regions:
        if region.kind in (LOST, HOLE):
            cell = min(width - 1, region.start * width // size)
            if cells[cell] not in (LOST, HOLE):
                cells[cell] = region.kind
    return cells


def _majority(regions: Sequence[Region], starts: list[int], a: int, b: int) -> str:
    covered: dict[str, int] = {}
    i = max(0, bisect.bisect_right(starts, a) - 1)
    while i < len(regions) and regions[i].start < b:
        r = regions[i]
        overlap = min(b, r.end) - max(a, r.start)
        if overlap > 0:
            covered[r.kind] = covered.get(r.kind, 0) + overlap
        i += 1
    if not covered:
        return LOST
    return max(covered, key=lambda kind: (covered[kind], kind in (LOST, HOLE)))


def map_text(plan: Plan, width: int):
    """The one-line map of a segment as rich Text (plain text when colour is off)."""
    from rich.text import Text

    left = str(plan.base_offset if plan.first_offset is None else plan.first_offset)
    right = "?" if plan.last_offset is None else str(plan.last_offset)
    text = Text(MAP_PREFIX)
    if plan.size == 0:
        text.append("(empty file)")
        return text
    if plan.refused is not None:
        text.append("(Kafka's recovery throws on this segment: kept nothing)")
        return text
    cells = max(10, min(MAX_CELLS, width - len(MAP_PREFIX) - len(left) - len(right) - 2))
    text.append(f"{left} ")
    for kind, group in itertools.groupby(map_cells(plan.regions, plan.size, cells)):
        text.append(GLYPHS[kind] * len(list(group)), style=STYLES[kind])
    text.append(f" {right}")
    return text


# -- the whole report --------------------------------------------------------------------------


def report_lines(report: Report, width: int) -> Iterator[object]:
    """Lines (str, or rich Text for the maps) of the text report."""
    mode = "--salvage" if report.salvage else "Kafka's rules"
    where = {IN_PLACE: "in place", DRY_RUN: "dry run, nothing written"}.get(
        report.target, f"into {report.out_dir}"
    )
    yield f"recover {report.path} ({mode}, {where})"
    yield startup_line(report)
    for i, outcome in enumerate(report.segments):
        yield segment_header(outcome)
        yield map_text(outcome.plan, width)
        yield from body_lines(outcome.plan)
        if outcome.plan.refused is not None:
            failure = outcome.plan.refused
            yield (
                f"  refused: Kafka's recovery throws {failure.exception} at byte {failure.position}: "
                f"{failure.message}"
            )
        if _is_active(report, i) and is_torn_tail(outcome.plan):
            yield "  a torn write at the end of the active segment, as a crash during an append leaves it"
        yield kafka_line(outcome)
        yield action_line(outcome)
    yield from deletion_lines(report)
    yield from files_lines(report)
    yield LEGEND
    yield summary_line(report)


def _is_active(report: Report, i: int) -> bool:
    """The i-th segment is the partition's last (the one a broker was appending to)."""
    if report.whole_partition:
        return i == len(report.segments) - 1
    return not report.later_segments


def print_report(report: Report, file: IO[str] | None = None) -> None:
    """Print the text report through rich (colour only on a terminal; NO_COLOR and COLUMNS honoured)."""
    from rich.console import Console
    from rich.text import Text

    console = Console(file=file, highlight=False, soft_wrap=True, emoji=False)
    for line in report_lines(report, console.width):
        console.print(line if isinstance(line, Text) else Text(str(line)))


# -- JSON ---------------------------------------------------------------------------------------


def _path(path: Path | None) -> str | None:
    return None if path is None else str(path)


def run_json(run: Run) -> dict:
    return {
        "start": run.start,
        "end": run.end,
        "first_offset": run.first_offset,
        "last_offset": run.last_offset,
        "batches": run.batches,
        "records": run.records,
        "salvaged": run.salvaged,
    }


def loss_json(loss: Loss) -> dict:
    claim = loss.claimed
    return {
        "start": loss.start,
        "end": loss.end,
        "bytes": loss.size,
        "reason": loss.reason,
        "detail": loss.detail,
        "batches": loss.batches,
        "records": loss.records,
        "damaged_bytes": loss.damaged_bytes,
        "zero_filled": loss.zero_filled,
        "first_offset": loss.first_offset,
        "last_offset": loss.last_offset,
        "open_ended": loss.open_ended,
        "salvageable_batches": loss.salvageable,
        "claimed": None
        if claim is None
        else {
            "magic": claim.magic,
            "first_offset": claim.first_offset,
            "last_offset": claim.last_offset,
            "records": claim.records,
            "codec": claim.codec,
        },
    }


def written_json(f: Written) -> dict:
    return {
        "kind": f.kind,
        "path": str(f.path),
        "action": f.action,
        "bytes": f.size,
        "entries": f.entries,
        "backup": _path(f.backup),
    }


def segment_json(outcome: SegmentOutcome) -> dict:
    plan = outcome.plan
    kafka = plan.kafka
    refused = plan.refused
    return {
        "log": str(outcome.log),
        "base_offset": plan.base_offset,
        "bytes": plan.size,
        "mode": plan.mode,
        "changed": plan.changed,
        "action": outcome.action,
        "output_bytes": plan.output_size if refused is None else None,
        "first_offset": plan.first_offset,
        "last_offset": plan.last_offset,
        "kafka_recovery": {
            "valid_bytes": kafka.valid_bytes if kafka.failure is None else None,
            "truncated_bytes": kafka.truncated_bytes if kafka.failure is None else None,
            "stop": kafka.stop,
            "stop_detail": kafka.stop_detail,
            "failure": None
            if kafka.failure is None
            else {
                "exception": kafka.failure.exception,
                "message": kafka.failure.message,
                "position": kafka.failure.position,
                "consequence": kafka.failure.consequence,
            },
        },
        "kafka_startup": {
            "recovers": outcome.kafka.recovers,
            "why": outcome.kafka.why,
            "deleted_after": _path(outcome.kafka.deleted_after),
        },
        "kept": [run_json(r) for r in plan.runs],
        "lost": [loss_json(loss) for loss in plan.losses],
        "regions": [{"start": r.start, "end": r.end, "kind": r.kind} for r in plan.regions],
        "files": [written_json(f) for f in outcome.files],
        "kept_batches": plan.kept_batches,
        "kept_records": plan.kept_records,
        "lost_bytes": plan.lost_bytes,
        "lost_batches": plan.lost_batches,
        "lost_records": plan.lost_records,
        "damaged_bytes": plan.damaged_bytes,
    }


def report_json(report: Report) -> dict:
    """The whole run as one JSON-ready dict."""
    s = report.startup
    deletion = report.deletion
    return {
        "path": str(report.path),
        "mode": "salvage" if report.salvage else "kafka",
        "target": report.target,
        "output_dir": _path(report.out_dir),
        "partition_directory": report.whole_partition,
        "changed": report.changed,
        "startup": {
            "directory": str(s.directory),
            "log_dir": str(s.log_dir),
            "partition": s.partition,
            "clean_shutdown": s.clean_shutdown,
            "recovery_point": s.recovery_point,
            "recovery_point_source": s.recovery_point_source,
            "recovery_point_error": s.recovery_point_error,
            "recovers_from": s.recovers_from,
        },
        "segments": [segment_json(o) for o in report.segments],
        "kafka_deletes": None
        if deletion is None
        else {
            "after": str(deletion.after),
            "message": deletion.message,
            "segments": [str(p) for p in deletion.segments],
        },
        "later_segments": [str(p) for p in report.later_segments],
        "copied": [written_json(f) for f in report.copied],
        "not_copied": [{"path": str(p), "why": why} for p, why in report.not_copied],
    }


__all__ = ["map_cells", "map_text", "print_report", "report_json", "report_lines", "summary_line"]
