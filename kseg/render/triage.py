"""Text, rich table and JSON Lines for ``kseg triage`` results (:mod:`kseg.ops.triage.run`).

Text (in a pipe) is one screen, problems first, worst first::

    kseg triage: 2 log directories, 4 partitions: 1 fails, 1 truncated, 1 rebuilt, 1 clean
    next start: the broker stops
    ...
    fails      d1/orders-1  the broker stops: java.lang.IllegalArgumentException: Split operation ...
      next: kseg verify --deep d1/orders-1  # locate every damaged batch and record ...

The table (on a terminal, or ``--format table``) shows the same rows in a
rich table.  JSON Lines: one ``{"type": "partition"}`` object per partition
(every partition, worst first), then one ``{"type": "summary"}``.  Every
function returns lines; the command prints them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from kseg.ops.triage.run import (
    LogDirTriage,
    PartitionTriage,
    TriageResult,
    missing_directories,
    summary,
    totals,
)
from kseg.recovery.loading import BROKER_STOPS, DIR_OFFLINE
from kseg.recovery.verdict.partition import zero_filled_tail
from kseg.render.terminal import escape_controls, shown, without_rule_ids

CONSEQUENCE = {BROKER_STOPS: "the broker stops", DIR_OFFLINE: "its log directory goes offline"}
OUTCOME_STYLE = {"fails": "bold red", "truncated": "red", "rebuilt": "cyan", "clean": "green"}


# -- JSON Lines -------------------------------------------------------------------------------------------


def render_json(result: TriageResult) -> Iterator[str]:
    """One line per partition, worst first, then the summary line."""
    for part in result.partitions:
        yield json.dumps(part.as_json())
    yield json.dumps(summary(result))


# -- sentences, shared by text and table --------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _one_line(text: str) -> str:
    """Kafka's messages may hold newlines (LocalLog.parseTopicPartitionName): one line on the screen."""
    return " ".join(text.splitlines())


def _ranges(ranges: list[list[int]]) -> str:
    return ", ".join(str(first) if first == last else f"{first}-{last}" for first, last in ranges)


def headline(result: TriageResult) -> str:
    """``kseg triage: N log directories, M partitions: 1 fails, ...``."""
    counts = ", ".join(f"{n} {outcome}" for outcome, n in reversed(result.outcomes().items()) if n)
    head = f"kseg triage: {_plural(len(result.log_dirs), 'log directory').replace('directorys', 'directories')}"
    return f"{head}, {_plural(len(result.partitions), 'partition')}" + (f": {counts}" if counts else "")


def assumed_line(result: TriageResult) -> str | None:
    """What the prediction takes as given and cannot read from the disk (R1.5's metadata image), once."""
    assuming = sum(1 for p in result.partitions if p.prediction.assumed)
    if not assuming:
        return None
    return (f"assumed, not on disk: the controller's metadata image has this broker as a replica of "
            f"{_plural(assuming, 'partition')} (else renamed -stray, R1.5)")


def next_start(result: TriageResult) -> str:
    """What the broker as a whole does."""
    if result.broker_stops:
        return f"next start: the broker stops ({result.stop_reason()})"
    if result.offline:
        return f"next start: the broker starts; offline: {', '.join(result.offline)}"
    return "next start: the broker starts"


def _loss_pieces(part: PartitionTriage) -> list[str]:
    pred, loss = part.prediction, part.loss
    pieces = []
    if loss.offsets:
        hw = ("no high watermark" if loss.below_high_watermark is None
              else f"{loss.below_high_watermark:,} below the high watermark {pred.high_watermark}")
        rp = f"{loss.below_recovery_point:,} below the recovery point {pred.recovery_point_checkpoint}"
        pieces.append(f"offsets {_ranges(pred.gone_offsets)} lost ({loss.offsets:,}: {hw}, {rp})")
    if loss.truncated_bytes and not loss.offsets:
        zeros = "zero-filled " if zero_filled_tail(pred) else ""
        pieces.append(f"{_plural(loss.truncated_bytes, 'byte')} of {zeros}tail cut (no offset lost)")
    elif loss.truncated_bytes:
        pieces.append(f"{_plural(loss.truncated_bytes, 'byte')} cut")
    if pred.deleted_segments:
        word = "segment" if len(pred.deleted_segments) == 1 else "segments"
        bases = ", ".join(map(str, pred.deleted_segments))
        pieces.append(f"{word} {bases} deleted ({_plural(loss.deleted_bytes, 'byte')})")
    return pieces


def _names(names: list[str], most: int = 3) -> str:
    """File names, a long list cut short: ``a, b, c and 4 more``."""
    shown_names = ", ".join(names[:most])
    return shown_names + (f" and {len(names) - most} more" if len(names) > most else "")


def rebuilt_text(created: list[str], changed: list[str], deleted: list[str]) -> str:
    """What a ``rebuilt`` start rewrites (every .log byte is kept): the files, by what happens to them."""
    parts = [f"{verb} {_names(names)}" for verb, names in (("rebuilds", changed), ("creates", created),
                                                             ("deletes", deleted)) if names]
    return "every .log byte kept; " + ("; ".join(parts) if parts else "nothing else changes")


def describe(part: PartitionTriage) -> str:
    """What the next start does to one partition, in one line."""
    pred, loss = part.prediction, part.loss
    if pred.error is not None:
        cause = f" (cause: {pred.error.cause})" if pred.error.cause else ""
        text = f"{CONSEQUENCE.get(pred.error.consequence, pred.error.consequence)}: {pred.error.exception}: "
        return _one_line(text + pred.error.message + cause)
    pieces = ["marked for deletion"] if pred.kind == "delete" else []
    pieces += _loss_pieces(part)
    if pred.log_end_offset is not None:
        behind = (f", {loss.behind_high_watermark:,} below the high watermark {pred.high_watermark}"
                  if loss.behind_high_watermark else "")
        pieces.append(f"log end {pred.log_end_offset}{behind}")
    if pred.outcome == "rebuilt":
        pieces.append(rebuilt_text(pred.files_created, pred.files_changed, pred.files_deleted))
    if part.unreadable:
        pieces.insert(0, part.unreadable)
    if part.uncommitted:
        pieces.insert(0, part.uncommitted)
    if part.stray_rename:
        pieces.insert(0, f"not served: renamed {part.stray_rename} (no partition.metadata); no client reads it")
    elif not loss.lost and pred.kind != "delete" and not part.unreadable and not part.uncommitted:
        pieces.append("nothing lost")
    return "; ".join(pieces + [f"note: {note}" for note in pred.notes])


def _log_dir_findings(d: LogDirTriage) -> Iterator[str]:
    pred = d.prediction
    if pred.error is not None:
        yield _one_line(f"{CONSEQUENCE.get(pred.error.consequence)}: {pred.error.exception}: {pred.error.message}")
    for name, read in sorted(pred.checkpoints.items()):
        if read.problem is not None:
            offline = "; the log directory goes offline" if read.reports_offline else ""
            yield f"{name} cannot be read, taken as empty: {read.problem}{offline}"
    missing = missing_directories(pred)
    for file, topic, number, offset in pred.entries_without_directory:
        deleting = "" if (file, topic, number, offset) in missing else " (marked for deletion)"
        yield f"checkpoint entry without a directory: {file} {topic}-{number} offset {offset}{deleting}"
    effect = ("nothing is recovered on this clean start" if pred.clean_shutdown
              else "every segment is recovered")
    for name in pred.directories_without_entries:
        yield f"directory without a recovery-point entry: {name} (recovery point taken as 0: {effect})"
    for name in pred.leftovers:
        yield f"leftover directory: {name}"


def log_dir_line(d: LogDirTriage, partitions: int) -> str:
    pred = d.prediction
    state = "clean shutdown" if pred.clean_shutdown else "unclean shutdown (no .kafka_cleanshutdown)"
    verdict = "; the broker stops" if pred.stops_broker else "; goes offline" if pred.offline else ""
    return f"log dir {d.path}: {state}, {_plural(partitions, 'partition')}{verdict}"


def healthy_line(result: TriageResult, show_all: bool) -> str:
    """The partitions nothing happens to; while the broker stops they load fine but none is served."""
    healthy = result.healthy
    counts = ", ".join(f"{n} {o}" for o, n in _count_outcomes(healthy).items())
    more = "" if show_all or not healthy else "; --all lists them"
    stops = "; none served while the broker stops" if result.broker_stops and healthy else ""
    lead = "otherwise healthy" if result.broker_stops else "healthy"
    return (f"{lead}: {_plural(len(healthy), 'partition')}" + (f" ({counts})" if counts else "")
            + _rebuilt_kinds(healthy) + stops + more)


def _rebuilt_kinds(parts: list[PartitionTriage]) -> str:
    """What ``rebuilt`` means here: every .log byte kept, and the kinds of file the start rewrites."""
    kinds = sorted({"." + name.rsplit(".", 1)[-1] if "." in name else name
                    for p in parts if p.prediction.outcome == "rebuilt"
                    for name in p.prediction.files_created + p.prediction.files_changed + p.prediction.files_deleted})
    if not kinds:
        return ""
    return f"; rebuilt: every .log byte kept, only {', '.join(kinds)} files change"


def _count_outcomes(parts: list[PartitionTriage]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for part in parts:
        counts[part.prediction.outcome] = counts.get(part.prediction.outcome, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: ["fails", "truncated", "rebuilt", "clean"].index(kv[0])))


def verdict_line(result: TriageResult) -> str:
    """The closing line: what is lost in total, what fails; it matches the exit code."""
    t = totals(result)
    pieces = []
    if t.lost_offsets:
        pieces.append(f"lost {_plural(t.lost_offsets, 'offset')} ({_committed_words(result)})")
    if t.bytes_lost:
        pieces.append(f"{_plural(t.bytes_lost, 'byte')} cut or deleted")
    unreadable = sum(1 for p in result.partitions if p.unreadable)
    if unreadable:
        pieces.append(f"{_plural(unreadable, 'partition')} served with unreadable offsets")
    uncommitted = sum(1 for p in result.partitions if p.uncommitted)
    if uncommitted:
        pieces.append(f"{_plural(uncommitted, 'partition')} serving uncommitted records as committed")
    stray = sum(1 for p in result.partitions if p.stray_rename)
    if stray:
        pieces.insert(0, f"{_plural(stray, 'partition')} not served (renamed -stray)")
    if t.deleted_segments:
        pieces.append(f"{_plural(t.deleted_segments, 'segment')} deleted")
    if any(p.loss.behind_high_watermark and not p.loss.offsets for p in result.partitions):
        pieces.append("a log ends below its high watermark")
    if any(missing_directories(d.prediction) for d in result.log_dirs):
        pieces.append("a checkpointed partition has no directory")
    if t.failing_partitions:
        verb = "fails" if t.failing_partitions == 1 else "fail"
        pieces.append(f"{_plural(t.failing_partitions, 'partition')} {verb} to load")
    if result.offline:
        pieces.append(f"{_plural(len(result.offline), 'log directory')} offline".replace("directorys", "directories"))
    if result.broker_stops:
        pieces.append("the broker stops")
    return "result: " + ("; ".join(pieces) if pieces else "nothing lost")


def _committed_words(result: TriageResult) -> str:
    """How many lost offsets were committed: below a high watermark, or without one to tell."""
    below = sum(p.loss.below_high_watermark or 0 for p in result.partitions)
    unknown = sum(p.loss.offsets for p in result.partitions if p.loss.below_high_watermark is None)
    words = []
    if below or not unknown:
        words.append(f"{below:,} below the high watermark")
    if unknown:
        words.append(f"{unknown:,} without a high watermark")
    return ", ".join(words)


# -- text ---------------------------------------------------------------------------------------------------


def _per_dir(result: TriageResult) -> dict[str, int]:
    counts = {d.path: 0 for d in result.log_dirs}
    for part in result.partitions:
        counts[part.log_dir] = counts.get(part.log_dir, 0) + 1
    return counts


def _steps(part_or_dir: PartitionTriage | LogDirTriage, indent: str = "  ") -> Iterator[str]:
    for i, step in enumerate(part_or_dir.next):
        lead = "next: " if i == 0 else "      "
        yield f"{indent}{lead}{shown(step.command)}  # {escape_controls(step.why)}"  # a newline would end the comment


def _screen(result: TriageResult, show_all: bool, rows: Callable[[list[PartitionTriage]], Iterator[str]],
            quiet: bool = False) -> Iterator[str]:
    """Headline, log directories, the partitions (``rows``), the healthy count and the verdict.

    ``quiet`` (``-q``): no assumption line, and only the log directories with something to say.
    """
    yield headline(result)
    yield shown(next_start(result))
    assumed = assumed_line(result)
    if assumed is not None and not quiet:
        yield shown(without_rule_ids(assumed))  # rule ids: --format json only
    counts = _per_dir(result)
    dirs: list[str] = []
    for d in result.log_dirs:
        findings = list(_log_dir_findings(d))
        if quiet and not (findings or d.next or d.prediction.stops_broker or d.prediction.offline):
            continue
        dirs.append(shown(log_dir_line(d, counts[d.path])))
        dirs.extend(f"  {shown(without_rule_ids(line))}" for line in findings)
        dirs.extend(_steps(d))
    if dirs or not quiet:
        yield ""
        yield from dirs
    listed = result.partitions if show_all else result.problems
    if listed:
        yield ""
        yield from rows(listed)
    yield ""
    yield healthy_line(result, show_all)
    yield verdict_line(result)
    yield shown(result.verdict.headline())


def _text_rows(listed: list[PartitionTriage]) -> Iterator[str]:
    for part in listed:
        yield shown(f"{part.prediction.outcome:<9}  {part.prediction.path}  {without_rule_ids(describe(part))}")
        yield from _steps(part)


def render_text(result: TriageResult, show_all: bool = False, quiet: bool = False) -> Iterator[str]:
    """The plain screen: problem partitions worst first (every partition with ``show_all``)."""
    return _screen(result, show_all, _text_rows, quiet)


# -- rich table ---------------------------------------------------------------------------------------------


def render_table(result: TriageResult, show_all: bool = False, color: bool = False, width: int = 100,
                 quiet: bool = False) -> Iterator[str]:
    """The same screen with the partitions in a rich table (rich is imported only for it)."""
    return _screen(result, show_all, lambda listed: _table_lines(listed, color, width), quiet)


def _table_lines(listed: list[PartitionTriage], color: bool, width: int) -> Iterator[str]:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold", padding=(0, 1, 0, 0))
    table.add_column("outcome", no_wrap=True)
    table.add_column("partition", overflow="fold")
    table.add_column("what the next start does; what to run next", ratio=1, overflow="fold")
    for part in listed:
        outcome = part.prediction.outcome
        cell = Text(shown(without_rule_ids(describe(part))))  # data from the evidence: escaped on a terminal, never markup
        for step in part.next:
            cell.append("\n$ ")
            cell.append(shown(step.command), style="bold")
            cell.append(f"  # {escape_controls(step.why)}", style="dim")
        table.add_row(Text(outcome, style=OUTCOME_STYLE.get(outcome, "")), Text(shown(part.prediction.path)), cell)
    console = Console(no_color=not color, force_terminal=color, highlight=False, width=width)
    with console.capture() as captured:
        console.print(table)
    for line in captured.get().splitlines():
        yield line.rstrip()
