"""Text, rich table and JSON Lines for ``kseg txn`` results (:mod:`kseg.ops.txn.run`).

Text (in a pipe) lists problem partitions first -- hanging transactions with
the command that aborts each and what that unblocks, stuck groups, snapshots
that disagree with the log -- then one line per healthy partition.  The table
(``--format table``) holds the same partitions in a rich table, with
the transactions counted as committed/aborted/open/hanging.  JSON Lines: per partition a ``{"type": "partition"}`` line, then its
``producer``, ``transaction`` and ``group`` lines; last a ``{"type": "summary"}``.
Every function returns lines; the command prints them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timezone

from kseg.ops.txn.replay import Producer
from kseg.ops.txn.run import PartitionTxn, TxnResult
from kseg.ops.txn.verdict import STATES, TxnView
from kseg.render.terminal import shown, without_rule_ids

STATE_STYLE = {"hanging": "bold red", "open": "yellow", "aborted": "", "committed": "green"}

# -- JSON Lines -------------------------------------------------------------------------------------------


def producer_json(part: PartitionTxn, p: Producer) -> dict[str, object]:
    """A producer as the broker would hold it after the load (``ProducerStateEntry``)."""
    return {"type": "producer", "path": part.path, "topic": part.topic, "partition": part.partition,
            "producer_id": p.producer_id, "producer_epoch": p.producer_epoch, "last_sequence": p.last_sequence,
            "last_offset": p.last_offset, "last_timestamp": p.last_timestamp,
            "coordinator_epoch": p.coordinator_epoch,
            "current_txn_first_offset": None if p.current_txn_first_offset < 0 else p.current_txn_first_offset}


def render_json(result: TxnResult) -> Iterator[str]:
    for part in result.partitions:
        yield json.dumps(part.as_json())
        for producer in part.state.producers:
            yield json.dumps(producer_json(part, producer))
        for txn in part.transactions:
            yield json.dumps(txn.as_json())
        for group in part.groups:
            yield json.dumps(group.as_json())
    yield json.dumps(result.summary())


# -- sentences ---------------------------------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def headline(result: TxnResult) -> str:
    counts = result.summary()["transactions"]
    assert isinstance(counts, dict)
    txns = ", ".join(f"{counts[s]:,} {s}" for s in STATES if counts[s])
    problems = sum(p.problem for p in result.partitions)
    stuck = sum(g.stuck for p in result.partitions for g in p.groups)
    return (f"kseg txn: {_plural(len(result.partitions), 'partition')}, {problems} with problems; "
            f"{_plural(sum(counts.values()), 'transaction')}" + (f" ({txns})" if txns else "")
            + f"; {_plural(stuck, 'stuck group')}")


def clock_text(now_ms: int | None) -> str:
    """The clock hanging is judged against: ``--now`` as given, or each partition's newest timestamp."""
    if now_ms is None:
        return "each partition's newest timestamp"
    when = datetime.fromtimestamp(now_ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds")
    return f"now {now_ms} ({when.replace('+00:00', 'Z')})"


def context_line(result: TxnResult) -> str:
    view = result.coordinator
    return (f"transaction max timeout {result.timeout_ms} ms, measured against {clock_text(result.now_ms)}; "
            f"__transaction_state: {_plural(view.transaction_partitions, 'partition')}, "
            f"__consumer_offsets: {_plural(view.offsets_partitions, 'partition')}")


def offsets_text(part: PartitionTxn) -> str:
    s = part.state
    if s.last_stable_offset is None:
        return f"log start {s.log_start_offset}, does not load"
    pinned = f", first unstable {s.first_unstable_offset}" if s.first_unstable_offset is not None else ""
    source = s.high_watermark_from if s.high_watermark_moved is None else \
        f"{s.high_watermark_from} says {s.high_watermark_checkpoint}; {s.high_watermark_moved}"
    return (f"LSO {s.last_stable_offset}{pinned}, high watermark {s.high_watermark} ({source}), "
            f"log end {s.log_end_offset}, newest timestamp {s.newest_timestamp}")


def txn_text(t: TxnView) -> str:
    txn = t.txn
    span = f"{txn.first_offset}-{txn.last_offset}" if txn.last_offset >= 0 else f"{txn.first_offset}-?"
    end = f", {txn.end} at {txn.end_offset}" if txn.end else ""
    idle = f", idle {t.idle_ms} ms" if t.idle_ms is not None else ""
    snap = " (from the snapshot)" if txn.from_snapshot else ""
    return f"{t.state} producer {txn.producer_id} epoch {txn.producer_epoch} offsets {span}{snap}{end}{idle}"


def counts_text(part: PartitionTxn) -> str:
    counts = {s: sum(t.state == s for t in part.transactions) for s in STATES}
    shown = ", ".join(f"{n:,} {s}" for s, n in counts.items() if n) or "no transactions"
    return f"{_plural(len(part.state.producers), 'producer')}, {shown}"


def aborted_text(part: PartitionTxn) -> str | None:
    if not part.state.aborted:
        return None
    ranges = "; ".join(f"producer {a.producer_id} {a.first_offset}-{a.last_offset} LSO {a.last_stable_offset}"
                       for a in part.state.aborted)
    return f"aborted ranges (.txnindex): {ranges}"


def details(part: PartitionTxn) -> Iterator[str]:
    """The lines under a problem partition, without indentation."""
    s = part.state
    if s.error:
        yield f"error: {s.error}"
    yield from part.findings
    for t in part.transactions:
        if t.state in ("open", "hanging"):
            yield txn_text(t) + (f": {t.why}" if t.why else "")
            if t.abort_command:
                yield f"$ {t.abort_command}"
                yield f"aborting it unblocks: {t.unblocks}"
    for g in part.groups:
        if g.stuck:
            yield f"stuck group {g.group!r}: committed offset {g.committed_offset} at the LSO, {g.behind} behind the log end"
    if s.snapshot_name:
        yield f"producer state loads from {s.snapshot_name}"
    for d in s.disagreements:
        yield f"snapshot disagrees: {d}"
    for note in s.notes:
        yield f"note: {note}"
    aborted = aborted_text(part)
    if aborted:
        yield aborted


# -- text ----------------------------------------------------------------------------------------------------


def render_text(result: TxnResult, quiet: bool = False) -> Iterator[str]:
    """The plain screen; on a terminal, control characters from the evidence are shown escaped.

    ``quiet`` (``-q``): the problem partitions only; the healthy ones are counted in one line.
    """
    return (shown(without_rule_ids(line)) for line in _text_lines(result, quiet))  # rule ids: JSON only


def damaged_lines(result: TxnResult) -> Iterator[str]:
    """Coordinator batches that could not be decoded: skipped, their records not replayed."""
    for where in result.coordinator.damaged:
        yield f"damaged coordinator batch skipped (its records are not replayed): {where}"


def _text_lines(result: TxnResult, quiet: bool = False) -> Iterator[str]:
    yield headline(result)
    yield context_line(result)
    yield from damaged_lines(result)
    healthy = [p for p in result.partitions if not p.problem]
    for part in result.partitions:
        if part.problem:
            yield ""
            yield f"PROBLEM {part.path}: {offsets_text(part)}; {counts_text(part)}"
            for line in details(part):
                yield "  " + line
    if healthy:
        yield ""
    if quiet and healthy:
        yield f"ok: {_plural(len(healthy), 'partition')} without a problem (not listed: -q)"
        return
    for part in healthy:
        yield f"ok {part.path}: {offsets_text(part)}; {counts_text(part)}"
        for note in part.state.notes:
            yield f"  note: {note}"


# -- table ---------------------------------------------------------------------------------------------------


def render_table(result: TxnResult, color: bool = False, width: int = 100) -> Iterator[str]:
    """The same partitions in a rich table (rich is imported only for it)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold", padding=(0, 1, 0, 0))
    table.add_column("partition", overflow="fold")
    for name in ("LSO", "log end", "c/a/o/h"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("hanging transactions, stuck groups, snapshot; what to run", ratio=1, overflow="fold")
    for part in result.partitions:
        cell = Text()
        for line in details(part) if part.problem else []:
            if cell:
                cell.append("\n")
            cell.append(shown(without_rule_ids(line)), style="bold" if line.startswith("$ ") else "")
        lso = part.state.last_stable_offset
        style = "bold red" if part.hanging else ("yellow" if part.problem else "")
        counts = "/".join(str(sum(t.state == s for t in part.transactions)) for s in STATES)
        table.add_row(Text(shown(part.path), style=style), "-" if lso is None else str(lso),
                      str(part.state.log_end_offset), counts, cell)
    console = Console(no_color=not color, force_terminal=color, highlight=False, width=width)
    with console.capture() as captured:
        console.print(headline(result))
        console.print(context_line(result))
        for line in damaged_lines(result):
            console.print(shown(line))
        console.print(table)
    for line in captured.get().splitlines():
        yield line.rstrip()
