"""What the HTML report shows, as one JSON-able dict: built from a stats result (and verify/triage when run).

The page's script draws every panel from this dict alone, so the page needs nothing but itself.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from kseg.ops.stats import Forecast, StatsResult, Tally
from kseg.render.stats import forecast_fields, producer_activity, tally_fields

if TYPE_CHECKING:
    from kseg.ops.triage.run import TriageResult
    from kseg.ops.verify import VerifyResult

#: Topics drawn as their own line in the records-over-time panel (the largest ones).
TIMELINE_TOPICS = 6
#: Partitions whose segments the treemap draws (the largest); the others are drawn as one box each.
TREE_PARTITIONS = 1000
#: Producers listed in the producers panel (the most active).
TOP_PRODUCERS = 20
#: Findings listed per run in the verdicts panel (the rest are counted).
MAX_FINDINGS = 200


def _tree(result: StatsResult) -> list[dict[str, Any]]:
    """log dir -> topic -> partition -> segment, sizes in bytes (the treemap); segments only for the
    :data:`TREE_PARTITIONS` largest partitions, so a broker of many thousands stays a page of a few MB."""
    dirs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for rank, part in enumerate(result.partitions):  # largest first
        segments: list[dict[str, Any]] = []
        if rank < TREE_PARTITIONS:
            segments = [{"name": f"{s.base_offset:020d}.log", "size": s.log_bytes} for s in part.segments]
            other = part.tally.bytes - part.tally.log_bytes
            if other > 0:
                segments.append({"name": "indexes, snapshots, checkpoints", "size": other})
        dirs.setdefault(part.log_dir, {}).setdefault(part.topic, []).append(
            {"name": f"{part.topic}-{part.partition}", "size": part.tally.bytes, "children": segments})
    return [{"name": d, "children": [{"name": t, "children": ps} for t, ps in topics.items()]}
            for d, topics in dirs.items()]


def _series(tally: Tally) -> list[list[int]]:
    return [[t, tally.timeline[t], tally.timeline_bytes[t]] for t in sorted(tally.timeline)]


def _timeline(result: StatsResult) -> dict[str, Any]:
    total = Tally()
    for rollup in result.log_dirs:
        total.timeline.update(rollup.tally.timeline)
        total.timeline_bytes.update(rollup.tally.timeline_bytes)
    return {"all": _series(total),
            "topics": {r.name: _series(r.tally) for r in result.topics[:TIMELINE_TOPICS] if r.tally.timeline}}


def _formats(result: StatsResult) -> dict[str, Any]:
    codecs: Counter[str] = Counter()
    codec_bytes: Counter[str] = Counter()
    magics: Counter[str] = Counter()
    types: Counter[str] = Counter()
    for rollup in result.log_dirs:
        codecs.update(rollup.tally.codecs)
        codec_bytes.update(rollup.tally.codec_bytes)
        magics.update(rollup.tally.magics)
        types.update(rollup.tally.timestamp_types)
    return {"codecs": dict(codecs), "codec_bytes": dict(codec_bytes), "magics": dict(magics),
            "timestamp_types": dict(types)}


def _producers(result: StatsResult) -> list[dict[str, int]]:
    """The most active producers over every input (log directories merged)."""
    total = Tally()
    for rollup in result.log_dirs:
        total.add(rollup.tally)
    return producer_activity(total, TOP_PRODUCERS)


def _verify(verify: VerifyResult) -> dict[str, Any]:
    findings = list(verify.findings())
    return {
        "summary": verify.summary().as_dict(),
        "exit_code": verify.exit_code(),
        "findings": [{"path": f.path, "severity": f.severity, "kind": f.kind, "position": f.position,
                      "message": f.message} for f in findings[:MAX_FINDINGS]],
        "more": max(0, len(findings) - MAX_FINDINGS),
    }


def _triage(triage: TriageResult) -> dict[str, Any]:
    rows = []
    for part in triage.partitions:
        obj = part.as_json()
        rows.append({"path": obj["path"], "outcome": obj["outcome"], "problem": part.problem,
                     "truncated_bytes": obj["truncated_bytes"], "deleted_bytes": obj["deleted_bytes"],
                     "consequence": obj["consequence"], "next": [step.command for step in part.next]})
    return {"broker_stops": triage.broker_stops, "partitions": rows}


def report_data(result: StatsResult, paths: list[str], verify: VerifyResult | None = None,
                triage: TriageResult | None = None, triage_skipped: str | None = None) -> dict[str, Any]:
    """Everything the page draws."""
    topics = [{"topic": r.name, "partitions": r.partitions, "skew": r.skew} | tally_fields(r.tally, result)
              for r in result.topics]
    retention = []
    for part in result.partitions:
        fc = result.forecasts.get(part.path)
        if isinstance(fc, Forecast):
            retention.append({"partition": f"{part.topic}-{part.partition}", "log_dir": part.log_dir}
                             | forecast_fields(fc))
    return {
        "paths": paths,
        "now": result.now_ms,
        "records_level": result.records_level,
        "log_dirs": [{"path": r.name, "partitions": r.partitions, "skew": r.skew} | tally_fields(r.tally, result)
                     for r in result.log_dirs],
        "tree": _tree(result),
        "timeline": _timeline(result),
        "formats": _formats(result),
        "topics": topics,
        "producer_activity": _producers(result),
        "retention": retention,
        "verify": None if verify is None else _verify(verify),
        "triage": None if triage is None else _triage(triage),
        "triage_skipped": triage_skipped,
    }
