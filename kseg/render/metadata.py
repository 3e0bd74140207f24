"""Text, table and JSON Lines for ``kseg metadata`` (:mod:`kseg.ops.metadata`).

JSON Lines: one object per entity (``topic``, ``partition``, ``config``,
``broker``, ...; docs/metadata.md lists the fields), the findings, then one
``summary`` object last.  Text: one line per entity, grouped as the JSON is,
then the findings and the summary sentence.  Every function returns lines; the
command prints them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from kseg.metadata.at import iso
from kseg.ops.metadata.check import Check
from kseg.ops.metadata.diff import Diff
from kseg.ops.metadata.history import History
from kseg.ops.metadata.show import Shown
from kseg.render.terminal import shown


def _ids(values: list[Any]) -> str:
    return "[" + ",".join(str(v) for v in values) + "]"


def entity_text(e: dict[str, Any]) -> str:
    """One entity as a line of text."""
    kind = e["type"]
    if kind == "topic":
        return f"topic {e['name']}  id {e['topic_id']}  partitions {e['partitions']}"
    if kind == "partition":
        extra = "".join(f"  {label} {_ids(e[key])}" for key, label in
                        (("elr", "elr"), ("last_known_elr", "last-known-elr"), ("adding_replicas", "adding"),
                         ("removing_replicas", "removing")) if e[key])
        return (f"  {e['topic']}-{e['partition']}  leader {e['leader']}  leader_epoch {e['leader_epoch']}  "
                f"replicas {_ids(e['replicas'])}  isr {_ids(e['isr'])}{extra}  "
                f"partition_epoch {e['partition_epoch']}")
    if kind == "config":
        return f"config {e['resource_type']} {e['resource'] or '(default)'}  {e['key']}={e['value']}"
    if kind == "broker":
        state = "fenced" if e["fenced"] else "unfenced"
        if e["in_controlled_shutdown"]:
            state += ", in controlled shutdown"
        return f"broker {e['id']}  epoch {e['epoch']}  {state}  log_dirs {_ids(e['log_dirs'])}"
    if kind == "controller":
        return f"controller {e['id']}  incarnation {e['incarnation_id']}"
    if kind == "feature":
        return f"feature {e['name']}={e['level']}"
    if kind == "acl":
        return (f"acl {e['principal']}  host {e['host']}  resource {e['resource_type']}:{e['resource']}  "
                f"pattern {e['pattern_type']}  operation {e['operation']}  permission {e['permission_type']}")
    if kind == "producer_ids":
        return f"producer ids: next block starts at {e['next_producer_id']}"
    return " ".join(f"{k}={v}" for k, v in e.items())


def _finding_lines(findings: list[Any]) -> Iterator[str]:
    for f in findings:
        where = f"{f.file} byte {f.position}" + ("" if f.offset is None else f" (offset {f.offset})")
        yield shown(f"finding: {where}: {f.reason}")


def summary_text(summary: dict[str, Any]) -> str:
    """The last line: where the image is, where it came from."""
    source = f"snapshot {summary['snapshot']}" if summary["snapshot"] else "the log from its start"
    open_txn = ("" if summary["open_transaction"] is None else
                f"; a metadata transaction open since offset {summary['open_transaction']} is not applied")
    return (f"image at offset {summary['offset']} ({summary['time']}): {summary['topics']} topics, "
            f"{summary['partitions']} partitions, {summary['brokers']} brokers; from {source} + "
            f"{summary['log_records']} log records; {summary['findings']} findings{open_txn}")


def show_json(result: Shown) -> Iterator[str]:
    for e in result.entities:
        yield json.dumps(e)
    for f in result.replay.findings:
        yield json.dumps(f.as_json())
    yield json.dumps(result.summary())


def show_text(result: Shown) -> Iterator[str]:
    for e in result.entities:
        yield shown(entity_text(e))
    yield from _finding_lines(result.replay.findings)
    yield summary_text(result.summary())


def show_table(result: Shown, width: int) -> Iterator[str]:
    """The partitions as a rich table, then the summary."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title="partitions")
    for column in ("partition", "topic id", "leader", "leader epoch", "replicas", "isr", "elr", "partition epoch"):
        table.add_column(column)
    ids = {e["name"]: e["topic_id"] for e in result.entities if e["type"] == "topic"}
    for e in result.entities:
        if e["type"] == "partition":
            table.add_row(f"{e['topic']}-{e['partition']}", ids.get(e["topic"], ""), str(e["leader"]),
                          str(e["leader_epoch"]), _ids(e["replicas"]), _ids(e["isr"]), _ids(e["elr"]),
                          str(e["partition_epoch"]))
    console = Console(width=width, record=True, force_terminal=False, color_system=None)
    with console.capture() as capture:
        console.print(table)
    yield capture.get().rstrip("\n")
    yield from _finding_lines(result.replay.findings)
    yield summary_text(result.summary())


def _fields_changed(before: dict[str, Any], after: dict[str, Any]) -> str:
    return "  ".join(f"{k} {_value(before.get(k))} -> {_value(after.get(k))}"
                     for k in after if k != "type" and before.get(k) != after.get(k))


def _value(v: Any) -> str:
    return _ids(v) if isinstance(v, list) else str(v)


def _change_text(offset: int, ms: int, record: str, before: dict[str, Any] | None,
                 after: dict[str, Any] | None) -> str:
    head = f"{iso(ms)}  offset {offset}  {record}"
    if before is None:
        assert after is not None
        return f"{head}  created: {entity_text(after).strip()}"
    if after is None:
        return f"{head}  removed: {entity_text(before).strip()}"
    return f"{head}  {entity_text(after).strip().split('  ')[0]}: {_fields_changed(before, after)}"


def history_lines(result: History, fmt: str) -> Iterator[str]:
    start = result.replay.snapshot
    origin = f"snapshot {start.path.name}" if start is not None else "the log's first record"
    if fmt == "json":
        for e in result.initial.values():
            yield json.dumps({"type": "initial", "entity": e})
        for c in result.changes:
            yield json.dumps({"type": "change", "change": c.kind, "offset": c.offset, "timestamp": c.timestamp,
                              "time": iso(c.timestamp), "record": c.record, "before": c.before, "after": c.after})
        for f in result.replay.findings:
            yield json.dumps(f.as_json())
        yield json.dumps({"type": "summary", "subject": result.subject, "from": origin,
                          "offset": result.replay.image.offset, "timestamp": result.replay.image.timestamp,
                          "changes": len(result.changes), "findings": len(result.replay.findings)})
        return
    for e in result.initial.values():
        yield shown(f"at the start ({origin}): {entity_text(e).strip()}")
    for c in result.changes:
        yield shown(_change_text(c.offset, c.timestamp, c.record, c.before, c.after))
    yield from _finding_lines(result.replay.findings)
    yield (f"{result.subject}: {len(result.changes)} changes from {origin} to offset "
           f"{result.replay.image.offset} ({iso(result.replay.image.timestamp)}); "
           f"{len(result.replay.findings)} findings")


def diff_lines(result: Diff, fmt: str) -> Iterator[str]:
    a, b = result.before.image, result.after.image
    if fmt == "json":
        for kind, before, after in result.changes:
            yield json.dumps({"type": "difference", "change": kind, "before": before, "after": after})
        yield json.dumps({"type": "summary", "from_offset": a.offset, "from_timestamp": a.timestamp,
                          "to_offset": b.offset, "to_timestamp": b.timestamp, "differences": len(result.changes),
                          "findings": len(result.before.findings) + len(result.after.findings)})
        return
    marks = {"added": "+", "removed": "-", "changed": "~"}
    for kind, before, after in result.changes:
        if kind == "changed":
            assert before is not None and after is not None
            yield shown(f"~ {entity_text(after).strip().split('  ')[0]}: {_fields_changed(before, after)}")
        else:
            entity = after if after is not None else before
            assert entity is not None
            yield shown(f"{marks[kind]} {entity_text(entity).strip()}")
    yield (f"{len(result.changes)} differences between offset {a.offset} ({iso(a.timestamp)}) and offset "
           f"{b.offset} ({iso(b.timestamp)})")


def check_lines(result: Check, fmt: str) -> Iterator[str]:
    """Findings, then the summary (``check``)."""
    image = result.replay.image
    summary = {"type": "summary", "broker": result.broker, "offset": image.offset, "timestamp": image.timestamp,
               "time": iso(image.timestamp), "partition_dirs": result.partitions, "findings": len(result.findings)}
    if fmt == "json":
        for f in result.findings:
            yield json.dumps(f.as_json())
        yield json.dumps(summary)
        return
    for f in result.findings:
        yield shown(f"{f.kind}: {f.path}: {f.message}")
    yield (f"broker {result.broker}: {result.partitions} partition directories against the image at offset "
           f"{image.offset} ({iso(image.timestamp)}); {len(result.findings)} findings")
