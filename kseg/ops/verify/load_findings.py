"""What the next start does to a partition, as findings: every sentence taken from the model's prediction.

:mod:`.next_start` asks :mod:`kseg.recovery.loading` once per partition
directory; this module turns its :class:`~kseg.recovery.loading.PartitionPrediction`
into findings -- the load fails (``load-fails``), a segment is cut
(``load-truncates``) or deleted (``load-deletes``), damage stays because the
segment is not recovered, or batches lie beyond the log end Kafka computes
(``load-ignores``), a producer snapshot beyond the log end is deleted
(``snapshot-beyond-end``) -- and into the checks against the log directory's
checkpoints (``high-watermark``, ``recovery-point``, ``log-start-offset``).
Each message ends with the rule of ``docs/kafka-log-loading.md`` and Kafka's
method in brackets.  Nothing here reads a file's content.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from kseg.listing import names
from kseg.ops.verify.model import ERROR, WARNING, Finding, SegmentFacts
from kseg.ops.verify.partition import PartitionFinding
from kseg.recovery.loading import BROKER_STOPS, DIR_OFFLINE, Action, LoadError, PartitionPrediction
from kseg.recovery.loading.logdir import HIGH_WATERMARK, LOG_START, RECOVERY_POINT
from kseg.recovery.loading.model import RENAME

CONSEQUENCE = {DIR_OFFLINE: "the log directory goes offline", BROKER_STOPS: "the broker stops"}
WHY_RECOVERED = {
    "R3.5": ("its .index is missing or its .txnindex fails Kafka's sanity check, so LogLoader.loadSegmentFiles "
             "recovers it whatever the shutdown, and deletes no later segment for it (R3.4)"),
    "R4.3": "the last shutdown was not clean and it is at or above the recovery point (R4.2)",
}


def tag(rule: str, method: str) -> str:
    return f"[{rule} {method}]"


def failure_text(error: LoadError) -> str:
    """Kafka's exception, its message and what the broker then does."""
    cause = f" (caused by {error.cause})" if error.cause else ""
    return (f"the next start fails: {error.exception}: {error.message}{cause} -- {CONSEQUENCE[error.consequence]} "
            f"{tag(error.rule, error.method)}")


class PartitionLoad:
    """One partition's prediction, with the facts of its segments, as findings."""

    def __init__(self, pred: PartitionPrediction, clean_shutdown: bool, facts: list[SegmentFacts],
                 files: dict[str, str]) -> None:
        self.pred = pred
        self.clean_shutdown = clean_shutdown
        self.facts = sorted((f for f in facts if f.name_base is not None), key=lambda f: f.name_base or 0)
        self.files = files  # absolute path -> the path verify reports under

    def path(self, rel: str) -> str:
        """An action's path (relative to the log directory) as verify names the file."""
        full = os.path.join(self.pred.path, rel.split("/", 1)[-1])
        return self.files.get(os.path.abspath(full), full)

    def _finding(self, path: str, kind: str, severity: str, position: int | None, offset: int | None,
                 message: str) -> PartitionFinding:
        path = self.files.get(os.path.abspath(path), path)
        return (path, Finding(path, kind, severity, position, offset, message), None)

    def findings(self) -> Iterator[PartitionFinding]:
        pred = self.pred
        if pred.error is not None:
            yield self._failure(pred.error)
        yield from self._not_served()
        yield from self._segments()
        yield from self._ignored()
        yield from self._snapshots()
        yield from self._checkpoints()

    def _not_served(self) -> Iterator[PartitionFinding]:
        """A directory without ``partition.metadata``: the broker renames it ``-stray`` and serves none of it.

        The verdict counts it an error (``not-served``); as a finding too, so the summary line's count of
        errors and its last words agree with the verdict line under it.
        """
        for action in self.pred.actions:
            if action.kind == RENAME and action.rule == "R1.5":
                yield self._finding(os.path.join(self.pred.path, "partition.metadata"), "not-served", ERROR, None, None,
                                    f"missing: the next start renames the directory "
                                    f"{os.path.basename(action.target or '')} and serves none of its offsets "
                                    f"{tag(action.rule, action.method)}")

    def _failure(self, error: LoadError) -> PartitionFinding:
        inside = os.path.abspath(self.pred.path) + os.sep
        named = [path for full, path in self.files.items() if full.startswith(inside) and full in error.message]
        where = max(named, key=len) if named else self.pred.path
        return self._finding(where, "load-fails", ERROR, None, None, failure_text(error))

    def lost_in(self, base: int) -> list[list[int]]:
        """The offset ranges the load loses within the segment at ``base`` (up to the next segment's base)."""
        bases = [f.name_base for f in self.facts if f.name_base is not None]
        later = [b for b in bases if b > base]
        top = min(later) - 1 if later else 1 << 63
        return [[max(a, base), min(b, top)] for a, b in self.pred.gone_offsets if a <= top and b >= base]

    def lost_text(self, base: int) -> tuple[int | None, str]:
        ranges = self.lost_in(base)
        if not ranges:
            return None, ""
        text = ", ".join(f"{a}..{b}" for a, b in ranges)
        return ranges[0][0], f" (offsets {text} lost)"

    def log_actions(self) -> list[Action]:
        return [a for a in self.pred.actions if a.path.endswith(".log") and a.kind in ("truncate", "rename")]

    def _segments(self) -> Iterator[PartitionFinding]:
        truncated: list[str] = []
        for action in self.log_actions():
            name = action.path.rsplit("/", 1)[-1]
            base = int(name.split(".", 1)[0]) if name.split(".", 1)[0].isdigit() else 0
            first, lost = self.lost_text(base)
            path = self.path(action.path)
            if action.kind == "truncate":
                truncated.append(name)
                yield self._truncated(path, action, first, lost)
            elif action.target is not None and action.target.endswith(".deleted"):
                why = (f"the log start offset {self.pred.log_start_offset_checkpoint} is beyond the log end"
                       if action.rule == "R8.2" else
                       f"LogLoader.recoverLog cut bytes from {truncated[-1] if truncated else 'an earlier segment'} "
                       "and deletes every later segment (R4.3)")
                yield self._finding(path, "load-deletes", ERROR, None, first,
                                    f"the next start deletes this segment{lost}: {why} {tag(action.rule, action.method)}")

    def _truncated(self, path: str, action: Action, first: int | None, lost: str) -> PartitionFinding:
        size = action.size or 0
        before = next((f.size for f in self.facts if os.path.abspath(f.path) == os.path.abspath(path)), None)
        dropped = f", dropping {before - size} bytes" if before is not None else ""
        why = WHY_RECOVERED.get(action.rule, "")
        detail = action.detail.split(": ", 1)[-1] if action.detail else ""
        message = (f"the next start recovers this segment and truncates it at byte {size}{dropped}{lost}"
                   f"{': ' + detail if detail else ''}; recovered because {why} {tag(action.rule, action.method)}")
        return self._finding(path, "load-truncates", ERROR, size, first, message)

    def _ignored(self) -> Iterator[PartitionFinding]:
        """Damage Kafka leaves in place, and batches beyond the log end it computes."""
        pred = self.pred
        if pred.error is not None:
            return
        touched = {os.path.abspath(self.path(a.path)) for a in self.log_actions()}
        recovered = {a.path.rsplit("/", 1)[-1].split(".", 1)[0] for a in pred.actions
                     if a.method == "LogSegment.recover"}
        for fact in self.facts:
            if fact.damage_at is None or os.path.abspath(fact.path) in touched:
                continue
            yield self._finding(fact.path, "load-ignores", ERROR, fact.damage_at, None,
                                self._unrecovered(os.path.basename(fact.path).split(".", 1)[0] in recovered))
        yield from self._beyond_end(touched)

    def _unrecovered(self, recovered: bool) -> str:
        pred = self.pred
        if recovered:
            reason = f"Kafka's recovery reads these bytes as valid and keeps them {tag('R5.1', 'LogSegment.recover')}"
        elif self.clean_shutdown:
            reason = ("the log directory has .kafka_cleanshutdown, so no segment is recovered "
                      f"{tag('R4.1', 'LogLoader.recoverLog')}")
        else:
            reason = (f"it lies below the recovery point {pred.recovery_point_checkpoint}, where recovery starts "
                      f"{tag('R4.2', 'LogLoader.recoverLog')}")
        return f"the next start does not recover this segment: the damaged bytes stay and Kafka serves them; {reason}"

    def _beyond_end(self, touched: set[str]) -> Iterator[PartitionFinding]:
        pred = self.pred
        end = pred.log_end_offset
        if end is None or not self.facts or os.path.abspath(self.facts[-1].path) in touched:
            return
        for first, last in pred.unserved_offsets:
            if first >= end:
                yield self._finding(
                    self.facts[-1].path, "load-ignores", ERROR, None, first,
                    f"offsets {first}..{last} lie beyond the log end {end} the next start computes: they stay on "
                    f"disk but are never served {tag('R5.5', 'LogSegment.readNextOffset')}")

    def _snapshots(self) -> Iterator[PartitionFinding]:
        pred = self.pred
        end = pred.log_end_offset
        if end is None or not self._has_segments():
            return  # no .log at all (copied evidence, say): no log end to hold the snapshots against
        for action in pred.actions:
            name = action.path.rsplit("/", 1)[-1]
            stem = name.split(".", 1)[0]
            if name.endswith(".snapshot") and action.kind in ("delete", "rename") and stem.isdigit() \
                    and int(stem) > end and os.path.abspath(self.path(action.path)) in self.files:
                yield self._finding(self.path(action.path), "snapshot-beyond-end", WARNING, None, int(stem),
                                    f"producer snapshot at offset {int(stem)} is beyond the log end {end}: the next "
                                    f"start deletes it {tag(action.rule, action.method)}")

    def _has_segments(self) -> bool:
        return bool(self.facts) or any(name.endswith(".log") for name in names(self.pred.path))

    def _checkpoints(self) -> Iterator[PartitionFinding]:
        """The log directory's checkpoint entries for this partition against its log end after the load."""
        pred = self.pred
        end, tp = pred.log_end_offset, f"{pred.topic}-{pred.partition}"
        logdir = os.path.dirname(os.path.abspath(pred.path))
        if end is None or pred.kind:
            return
        hw = pred.high_watermark
        if hw is not None and hw > end:
            yield self._finding(os.path.join(logdir, HIGH_WATERMARK), "high-watermark", ERROR, None, hw,
                                f"{tp}: high watermark {hw} is beyond the log end {end} after the next start: "
                                f"committed offsets {end}..{hw - 1} are lost on this replica")
        rp = pred.recovery_point_checkpoint
        if rp > end:
            yield self._finding(os.path.join(logdir, RECOVERY_POINT), "recovery-point", WARNING, None, rp,
                                f"{tp}: recovery point {rp} is beyond the log end {end}: data Kafka had flushed is "
                                f"missing; the next start lowers it to {pred.recovery_point} "
                                f"{tag('R4.6', 'LogLoader.recoverLog')}")
        if any(a.rule == "R8.2" for a in pred.actions):
            start = pred.log_start_offset_checkpoint
            yield self._finding(os.path.join(logdir, LOG_START), "log-start-offset", ERROR, None, start,
                                f"{tp}: log start offset {start} is beyond the log end: the next start deletes every "
                                f"segment and starts an empty one at {start} "
                                f"{tag('R8.2', 'LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd')}")


def index_sentences(pred: PartitionPrediction) -> dict[str, str]:
    """What the next start does about each index file it creates or rewrites (absolute path -> sentence).

    For the ``missing-index`` findings: the last change the load makes to the file says it -- rebuilt by
    ``LogSegment.recover``, or created empty by ``sanityCheck`` and left so.  None when the load fails.
    """
    out: dict[str, str] = {}
    if pred.error is not None:
        return out
    for action in pred.actions:
        name = action.path.rsplit("/", 1)[-1]
        if not name.endswith((".index", ".timeindex", ".txnindex")) or not action.changes_content:
            continue
        full = os.path.abspath(os.path.join(pred.path, name))
        if action.method == "LogSegment.recover":
            why = WHY_RECOVERED.get(action.rule, "")
            out[full] = f"the next start rebuilds it, recovering the segment because {why} {tag(action.rule, action.method)}"
        elif action.kind == "create" and action.size == 0:
            out[full] = (f"the next start creates it empty and does not rebuild it, so time lookups in this segment "
                         f"find nothing {tag(action.rule, action.method)}")
        elif action.kind == "create":
            out[full] = f"the next start creates it {tag(action.rule, action.method)}"
    return out


def epochs_after_load(pred: PartitionPrediction) -> tuple[int, list[tuple[int, int]]] | None:
    """(log end, epoch entries) as the load leaves them; None when the load fails."""
    if pred.error is not None or pred.log_end_offset is None or pred.leader_epochs is None:
        return None
    return pred.log_end_offset, [(e, s) for e, s in pred.leader_epochs]
