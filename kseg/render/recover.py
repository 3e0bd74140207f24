"""Text for ``kseg recover`` reports: a header, Kafka's startup view, one block per segment.

Here ``--salvage`` on the fixture partition, shortened::

    .../00000000000000000018.log: base offset 18, 5108 bytes, 5 intact batches
      map  18 █████████████████░░░░░░░░░░░░░░░░░▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓ 33
      kept      [0, 1006)        1 batch, 3 records, offsets 18-20
      lost      [1006, 2012)     1006 damaged bytes: the checksum does not match (size field 994)
                lost offsets 21-23
                the damaged entry's header claims offsets 21-23, 3 records
      salvaged  [2012, 5108)     4 batches, 10 records, offsets 24-33
      Kafka: recovers it at startup (unclean shutdown, ...) and truncates it to 1006 bytes
      wrote out/00000000000000000018.log (4102 bytes); .index 0 entries, .timeindex 1 entry, ...

then the segments Kafka would delete, the files copied, the map legend
(:mod:`kseg.render.recover_map`) and a summary line.  JSON is
:mod:`kseg.render.recover_json`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, TYPE_CHECKING

from kseg.ops.recover import kafka as loader
from kseg.ops.recover import report as report_kinds
from kseg.ops.recover.kafka import Deletion, KafkaView, Startup
from kseg.ops.recover.report import Report, SegmentOutcome, Written
from kseg.recovery.loading import BROKER_STOPS, LoadError
from kseg.recovery.plan import KAFKA, Loss, Plan, Run
from kseg.recovery.segment_plan import is_torn_tail
from kseg.render.recover_map import LEGEND, map_text
from kseg.render.terminal import FALLBACK_COLUMNS, shown, without_rule_ids

if TYPE_CHECKING:
    from rich.text import Text

LABEL_WIDTH = 10  # "salvaged" + padding


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
    """What Kafka's loader does with this segment at the next start (the model's prediction)."""
    view, plan = outcome.kafka, outcome.plan
    match view.why:
        case loader.DELETED:
            if view.deleted_after is None:
                return "  Kafka: deletes it at startup (the log start offset is beyond the log end)"
            return f"  Kafka: deletes it at startup (after truncating {view.deleted_after.name})"
        case loader.RECOVERS_UNCLEAN | loader.RECOVERS_NO_INDEX:
            return _recovers_line(plan, view)
        case loader.SKIPPED_CLEAN:
            text = "  Kafka: does not recover it at startup (clean shutdown marker present)"
        case _:
            text = "  Kafka: does not recover it at startup (below the recovery point: flushed before)"
    if plan.changed:
        text += "; it would serve the damaged bytes as they are until a read fails on them"
    return text


def consequence_text(error: LoadError) -> str:
    """What the broker does when the load throws (R9.1, R9.2)."""
    if error.consequence == BROKER_STOPS:
        return "the partition does not load and the broker stops"
    return "the partition does not load and its log directory goes offline"


def _recovers_line(plan: Plan, view: KafkaView) -> str:
    """A segment Kafka recovers at startup: whether the load throws on it, truncates or keeps it all."""
    if view.why == loader.RECOVERS_UNCLEAN:
        text = "  Kafka: recovers it at startup (unclean shutdown, at or after the recovery point)"
    else:
        text = "  Kafka: recovers it at startup (no .index file)"
    if view.error is not None:
        error = view.error
        return text + f" and throws {error.exception}: {error.message}; {consequence_text(error)}"
    if view.truncated_to == 0 and plan.refused is not None:
        return text + f" and empties it ({plan.refused.exception} at byte {plan.refused.position})"
    if view.truncated_to is not None:
        text += f" and truncates it to {view.truncated_to} bytes"
    return text


def _index_summary(files: Sequence[Written]) -> str:
    parts = []
    for f in files:
        if f.kind == "log" or f.action == report_kinds.NOT_WRITTEN:
            continue
        text = f".{f.kind} {plural(f.entries or 0, 'entry', 'entries')}"
        match f.action:
            case report_kinds.REPLACED:
                text += f" (old kept as {f.backup})"
            case report_kinds.UNCHANGED:
                text += " (unchanged)"
        parts.append(text)
    return ", ".join(parts)


def action_line(outcome: SegmentOutcome) -> str:
    """What recover did with the segment's files."""
    plan = outcome.plan
    match outcome.action:
        case report_kinds.SEG_DRY_RUN if plan.refused is None:
            return f"  dry run: would write {plural(outcome.output_bytes or 0, 'byte')}"
        case report_kinds.SEG_DRY_RUN:
            return "  dry run: would write nothing"
        case report_kinds.SEG_REFUSED:
            return "  not written: Kafka's recovery throws on this segment (--salvage keeps what it can)"
        case report_kinds.SEG_UNTOUCHED:
            return "  in place: nothing to cut, left untouched"
        case report_kinds.SEG_KAFKA_DELETES if outcome.kafka.why == loader.DELETED:
            return "  not written: Kafka deletes it at startup (--salvage keeps it)"
        case report_kinds.SEG_KAFKA_DELETES:
            return "  not written: a .swap replaces it at startup (R2.3), written in its place"
    if outcome.action == report_kinds.SEG_KEPT_AS_KAFKA and not outcome.files:
        return (f"  dry run: would write {plural(plan.size, 'byte')}, damage and all, as Kafka keeps it: it does "
                "not recover this segment; --salvage cuts it")
    log = outcome.files[0]
    if outcome.action == report_kinds.SEG_KEPT_AS_KAFKA:
        return (f"  wrote {log.path} ({plural(log.size, 'byte')}, damage and all, as Kafka keeps it: it does not "
                "recover this segment; --salvage cuts it); " + _index_summary(outcome.files[1:]))
    if log.action == report_kinds.REPLACED:
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
    if s.recovery_point_source == loader.RP_NOT_PARTITION:
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
    match s.recovery_point_source:
        case loader.RP_CHECKPOINT:
            source = f"recovery point {s.recovery_point} from recovery-point-offset-checkpoint"
        case loader.RP_ABSENT:
            source = "no recovery-point-offset-checkpoint, so recovery point 0"
        case loader.RP_NO_ENTRY:
            source = f"recovery-point-offset-checkpoint has no entry for {s.partition}, so recovery point 0"
        case _:
            source = f"recovery-point-offset-checkpoint unreadable ({s.recovery_point_error}), so 0"
    if s.clean_shutdown or s.recovers_from is None:
        return source
    return f"{source}: it recovers the segments from base offset {s.recovers_from} on"


def load_failure_lines(report: Report) -> list[str]:
    """The load of this partition throws (Kafka's exception and message, and what the broker does)."""
    pred = report.prediction
    if pred is None or pred.error is None:
        return []
    error = pred.error
    return [f"Kafka's load of {pred.path} throws {error.exception}: {error.message}; {consequence_text(error)}"]


def deletion_lines(report: Report) -> list[str]:
    """The segments Kafka's loader deletes, and that kseg did not."""
    deletion = report.deletion
    if deletion is None:
        return []
    if report.kafka_kept:
        return [deletion_head(deletion), f"  not in {report.out_dir}: Kafka keeps none of them (--salvage keeps them)"]
    if report.target == report_kinds.OUTPUT and report.whole_partition:
        kept = f"each is in {report.out_dir}, recovered on its own"
    else:
        kept = "they are untouched"
    return [deletion_head(deletion), f"  kseg deleted nothing: {kept}"]


def deletion_head(deletion: Deletion) -> str:
    """Which segments Kafka's loader deletes, and why."""
    names = ", ".join(p.name for p in deletion.segments)
    count = f"{plural(len(deletion.segments), 'segment')} ({plural(deletion.bytes, 'byte')})"
    if deletion.after is None:
        return f"Kafka would delete {count}: {deletion.message}: {names}"
    return f'Kafka would delete {count} after truncating {deletion.after.name} ("{deletion.message}"): {names}'


def files_lines(report: Report) -> list[str]:
    lines = []
    if report.copied:
        lines.append("copied " + ", ".join(f.path.name for f in report.copied))
    for f in report.written:
        if f.kind == "snapshot":
            at = int(f.path.name[:20])
            where = f"the log end {at}" if at == report.output_log_end else f"offset {at}"
            lines.append(f"wrote {f.path.name} (producer state at {where})")
        elif f.kind == "partition.metadata":
            lines.append(f"wrote {f.path.name} (the input's cannot be read: see below)")
        elif f.kind == "log":
            lines.append(f"wrote {f.path.name} ({plural(f.size, 'byte')}: a segment Kafka's load makes, R2.4/R4.6)")
        else:
            epochs = plural(f.entries or 0, "epoch")
            lines.append(f"wrote {f.path.name} ({epochs}, as Kafka leaves it after the load)")
    for path, why in report.not_copied:
        lines.append(f"not copied: {path.name} ({why})")
    return lines


def summary_line(report: Report) -> str:
    segments = report.segments
    kept_damaged = [s for s in segments if s.action == report_kinds.SEG_KEPT_AS_KAFKA]
    changed = [s for s in segments if s.plan.changed and s.action != report_kinds.SEG_KEPT_AS_KAFKA]
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
    if kept_damaged:
        parts.append(f"{len(kept_damaged)} damaged but kept whole, as Kafka keeps {'it' if len(kept_damaged) == 1 else 'them'}")
    parts.append(f"{len(segments) - len(changed) - len(kept_damaged)} unchanged")
    text = f"{plural(len(segments), 'segment')}: " + ", ".join(parts)
    if report.deletion is not None:
        deleted = report.deletion
        text += f"; Kafka deletes {plural(len(deleted.segments), 'segment')} ({plural(deleted.bytes, 'byte')})"
    return text


# -- the whole report --------------------------------------------------------------------------


def mode_text(salvage: bool, kafka_kept: bool) -> str:
    """Which of recover's modes ran: what Kafka keeps, each segment's valid prefix, or salvage."""
    if salvage:
        return "--salvage"
    if kafka_kept:
        return "what Kafka 4.3.0's next start keeps"
    return "Kafka's rules"


def report_lines(report: Report, width: int, quiet: bool = False) -> Iterator[str | Text]:
    """Lines (str, or rich Text for the maps) of the text report; ``quiet``: healthy segments counted only."""
    mode = mode_text(report.salvage, report.kafka_kept)
    where = {report_kinds.IN_PLACE: "in place", report_kinds.DRY_RUN: "dry run, nothing written"}.get(
        report.target, f"into {report.out_dir}"
    )
    yield f"recover {report.path} ({mode}, {where})"
    yield from partition_lines(report, width, quiet)
    if not quiet or any(says_something(o) for o in report.segments):
        yield LEGEND
    yield summary_line(report)


def says_something(outcome: SegmentOutcome) -> bool:
    """A segment worth its lines when only what matters is shown: something cut, refused, deleted or kept damaged."""
    return outcome.plan.changed or outcome.action in (report_kinds.SEG_KEPT_AS_KAFKA, report_kinds.SEG_KAFKA_DELETES)


def partition_says_something(report: Report) -> bool:
    """A partition with a segment worth showing, a load that throws, segments Kafka deletes, or files written."""
    return (any(map(says_something, report.segments)) or bool(load_failure_lines(report))
            or report.deletion is not None or bool(files_lines(report)))


def partition_lines(report: Report, width: int, quiet: bool = False) -> Iterator[str | Text]:
    """One partition's (or segment's) part of the report: startup, segments, deletions, files.

    ``quiet`` (``--dry-run`` unless ``--all``, or ``-q``): segments with nothing to say are counted in one
    line instead of five each (2,000 healthy partitions were 16,003 lines).
    """
    yield startup_line(report)
    yield from load_failure_lines(report)
    hidden = 0
    for i, outcome in enumerate(report.segments):
        if quiet and not says_something(outcome):
            hidden += 1
            continue
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
    if hidden:
        yield f"  {plural(hidden, 'healthy segment')} not shown: nothing cut (--all lists them)"
    yield from deletion_lines(report)
    yield from files_lines(report)


def _is_active(report: Report, i: int) -> bool:
    """The i-th segment is the partition's last (the one a broker was appending to)."""
    if report.whole_partition:
        return i == len(report.segments) - 1
    return not report.later_segments


def print_lines(lines: Callable[[int], Iterable[str | Text]], file: IO[str] | None = None) -> None:
    """Print report lines through rich (colour only on a terminal; NO_COLOR and COLUMNS honoured)."""
    from rich.console import Console
    from rich.text import Text

    console = Console(file=file, highlight=False, soft_wrap=True, emoji=False)
    if console.width <= 0:  # COLUMNS=0: no width at all, not a table without columns
        console.width = FALLBACK_COLUMNS
    for line in lines(console.width):
        if isinstance(line, Text):  # a styled line (the map) keeps its style unless it carries a control character
            console.print(line if shown(line.plain) == line.plain else Text(shown(line.plain)))
        else:  # rule ids of the rule book: --format json only
            console.print(Text(shown(without_rule_ids(str(line)))))


def print_report(report: Report, file: IO[str] | None = None, quiet: bool = False) -> None:
    """Print the text report of one segment or partition."""
    print_lines(lambda width: report_lines(report, width, quiet), file)


__all__ = ["mode_text", "partition_lines", "partition_says_something", "print_lines", "print_report", "report_lines", "says_something", "summary_line"]
