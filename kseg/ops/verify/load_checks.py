"""The checks that need more than one unit's results: across a partition's files, and against the next start.

Runs on the driver after the units come back: the cross-segment checks of
:mod:`.partition`, then the log-loading model (:mod:`.next_start`, once per
log or partition directory) and its findings (:mod:`.load_findings`,
:mod:`.logdir_findings`).  Where files were given one by one, only findings
about those files are kept (and a load failure of their partition).
"""

from __future__ import annotations

import os

from kseg.errors import KsegError
from kseg.ops.verify.load_findings import PartitionLoad, epochs_after_load, index_sentences
from kseg.ops.verify.logdir_findings import log_dir_findings
from kseg.ops.verify.model import ERROR, INFO, Finding, Plan, SegmentFacts, UnitResult
from kseg.ops.verify.next_start import Predictions, key, predict_scopes
from kseg.ops.verify.partition import PartitionFinding, check_partition
from kseg.recovery.verdict.table import Verdict


def load_checks(plan: Plan, results: list[UnitResult], jobs: int = 1,
                ) -> tuple[list[PartitionFinding], Verdict | None]:
    """Partition checks and the next start's findings, for every directory of the plan, and the verdict
    of the next start of the directories the model predicted (None when it predicted none).

    ``jobs``: worker processes for the model's partitions (``predict_log_dir``)."""
    prefixes = {os.path.abspath(r.facts.path): r.facts.prefix for r in results
                if r.facts is not None and r.facts.prefix is not None}
    predictions = predict_scopes(plan.loads, prefixes, jobs) if plan.loads else Predictions()
    out: list[PartitionFinding] = []
    for partition in plan.partitions:
        facts = [fact for i in partition.units if (fact := results[i].facts) is not None]
        pred = predictions.partitions.get(key(partition.directory))
        indexes = index_sentences(pred) if pred is not None else None
        epochs = epochs_after_load(pred) if pred is not None else None
        out.extend(check_partition(partition, facts, indexes, epochs))
    if not plan.loads:
        return out, None
    files = {os.path.abspath(p): p for unit in plan.units for p in unit.paths}
    for partition in plan.partitions:
        files.update((os.path.abspath(p), p) for p in partition.files)
    out.extend(_next_start(predictions, results, files))
    try:
        verdict = _verdict(predictions)
    except (KsegError, OSError):  # a file the verdict reads could not be: verify's findings name it
        verdict = None
    if verdict is not None:
        out.extend(_facts_unfound(verdict, out, files))
    return out, verdict


def _facts_unfound(verdict: Verdict, found: list[PartitionFinding], files: dict[str, str]) -> list[PartitionFinding]:
    """A ``next-start`` error finding for each error of the verdict no error finding in its directory shows.

    The summary line counts findings and the verdict line under it counts facts; without this a
    checkpoint naming a partition no directory holds, or committed offsets lost with only warnings
    found, printed ``0 errors ... problems found`` beside ``verdict: error`` (docs/cli.md, "One verdict").
    """
    errors = [os.path.abspath(path) for path, finding, _ in found if finding.severity == ERROR]
    out: list[PartitionFinding] = []
    for fact in verdict.errors():
        where = os.path.abspath(fact.where)
        if any(path == where or path.startswith(where + os.sep) for path in errors):
            continue
        path = files.get(where, fact.where)
        out.append((path, Finding(path, "next-start", ERROR, None, None, f"{fact.kind}: {fact.text}"), None))
    return out


def _verdict(predictions: Predictions) -> Verdict | None:
    """The one verdict (kseg.recovery.verdict) of what the model predicted."""
    if not predictions.log_dirs and not predictions.partitions:
        return None
    return predictions.paths.verdict()


def _next_start(predictions: Predictions, results: list[UnitResult], files: dict[str, str]) -> list[PartitionFinding]:
    by_dir: dict[str, list[SegmentFacts]] = {}
    for result in results:
        if result.facts is not None:
            by_dir.setdefault(os.path.dirname(os.path.abspath(result.facts.path)), []).append(result.facts)
    out: list[PartitionFinding] = []
    for where, pred in predictions.partitions.items():
        if where not in predictions.scopes:
            continue
        only = predictions.scopes[where]
        wanted = None if only is None else {os.path.abspath(p) for p in only}
        load = PartitionLoad(pred, predictions.clean_shutdown.get(where, False), by_dir.get(where, []), files)
        out.extend(found for found in load.findings()
                   if wanted is None or found[1].kind == "load-fails" or os.path.abspath(found[0]) in wanted)
    for log_dir in predictions.log_dirs.values():
        out.extend(log_dir_findings(log_dir, files))
    for where, why in predictions.failures.items():
        path = files.get(where, where)
        out.append((path, Finding(path, "load-model", INFO, None, None,
                                  f"the model of Kafka's log loading could not run here ({why}): nothing is said "
                                  "about the next start"), None))
    return out
