"""``kseg recover --format json``: JSON Lines, one object per partition (or segment), then a summary.

Every field of the report is here, in Kafka's and kseg's words for it: the
startup view (``startup``, ``kafka_startup`` per segment), Kafka's own
recovery of each segment (``kafka_recovery``), what was kept and lost, the
files written and the segments Kafka would delete (``kafka_deletes``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kseg.ops.recover.report import LogDirReport, Report, SegmentOutcome, Written
from kseg.recovery.plan import Loss, Run


def _path(path: Path | None) -> str | None:
    return None if path is None else str(path)


def run_json(run: Run) -> dict[str, Any]:
    return {
        "start": run.start,
        "end": run.end,
        "first_offset": run.first_offset,
        "last_offset": run.last_offset,
        "batches": run.batches,
        "records": run.records,
        "salvaged": run.salvaged,
    }


def loss_json(loss: Loss) -> dict[str, Any]:
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


def written_json(f: Written) -> dict[str, Any]:
    return {
        "kind": f.kind,
        "path": str(f.path),
        "action": f.action,
        "bytes": f.size,
        "entries": f.entries,
        "backup": _path(f.backup),
    }


def segment_json(outcome: SegmentOutcome) -> dict[str, Any]:
    plan = outcome.plan
    kafka = plan.kafka
    return {
        "log": str(outcome.log),
        "base_offset": plan.base_offset,
        "bytes": plan.size,
        "mode": plan.mode,
        "changed": plan.changed,
        "cut": outcome.cut,
        "action": outcome.action,
        "output_bytes": outcome.output_bytes,
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
            "truncated_to": outcome.kafka.truncated_to,
            "error": None if outcome.kafka.error is None else outcome.kafka.error.as_json(),
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


def report_json(report: Report) -> dict[str, Any]:
    """The whole run as one JSON-ready dict."""
    s = report.startup
    deletion = report.deletion
    return {
        "path": str(report.path),
        "mode": "salvage" if report.salvage else "kafka",
        "kafka_kept": report.kafka_kept,
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
            "after": _path(deletion.after),
            "message": deletion.message,
            "segments": [str(p) for p in deletion.segments],
            "bytes": deletion.bytes,
        },
        "kafka_load": _prediction_json(report),
        "later_segments": [str(p) for p in report.later_segments],
        "copied": [written_json(f) for f in report.copied],
        "written": [written_json(f) for f in report.written],
        "not_copied": [{"path": str(p), "why": why} for p, why in report.not_copied],
    }


def _prediction_json(report: Report) -> dict[str, Any] | None:
    """The model's prediction for the input (triage's fields, plus the recovery point and notes)."""
    pred = report.prediction
    if pred is None:
        return None
    found = pred.as_json()
    found.pop("type")
    found["recovery_point"] = pred.recovery_point
    found["notes"] = list(pred.notes)
    if pred.error is not None:
        found["error"]["consequence"] = pred.error.consequence  # type: ignore[index]
    return found


def log_dir_json(report: LogDirReport) -> dict[str, Any]:
    """A log directory: every partition's report object and the totals."""
    t = report.totals
    error = report.prediction.error
    return {
        "path": str(report.path),
        "log_directory": True,
        "mode": "salvage" if report.salvage else "kafka",
        "target": report.target,
        "output_dir": _path(report.out_dir),
        "changed": report.changed,
        "clean_shutdown": report.prediction.clean_shutdown,
        "error": None if error is None else {**error.as_json(), "consequence": error.consequence},
        "partitions": [report_json(p) for p in report.partitions],
        "written": [written_json(f) for f in report.written],
        "carried_over": [written_json(f) for f in report.carried],
        "checkpoint_changes": [
            {"checkpoint": c.checkpoint, "topic": c.topic, "partition": c.partition, "before": c.before,
             "after": c.after}
            for c in report.checkpoint_changes
        ],
        "totals": {
            "partitions": t.partitions,
            "changed_partitions": t.changed_partitions,
            "segments": t.segments,
            "changed_segments": t.changed_segments,
            "lost_bytes": t.lost_bytes,
            "kafka_deleted_segments": t.kafka_deleted_segments,
            "kafka_deleted_bytes": t.kafka_deleted_bytes,
            "kafka_fails": t.kafka_fails,
        },
    }


def json_lines(report: Report | LogDirReport, exit_code: int) -> Iterator[dict[str, Any]]:
    """``--format json`` as JSON Lines, like every other command: the parts, then one ``summary``.

    A log directory: one ``{"type": "partition"}`` object per partition (:func:`report_json`), then
    ``{"type": "summary"}`` with the log directory's own fields (:func:`log_dir_json` less its
    ``partitions``).  A partition directory or a segment: one ``partition`` (or ``segment``) object, then
    the summary.  Every summary ends with ``exit_code``.
    """
    if isinstance(report, LogDirReport):
        whole = log_dir_json(report)
        for part in whole.pop("partitions"):
            yield {"type": "partition", **part}
        yield {"type": "summary", **whole, "exit_code": exit_code}
        return
    yield {"type": "partition" if report.whole_partition else "segment", **report_json(report)}
    yield {"type": "summary", "path": str(report.path), "log_directory": False,
           "mode": "salvage" if report.salvage else "kafka", "target": report.target,
           "output_dir": _path(report.out_dir), "changed": report.changed, "exit_code": exit_code}

