"""The campaign's summary, and each bucket's first mutant saved to reproduce it.

The summary is what CI prints: runs, mutants, runs per minute, then one line per bucket (known
buckets with the document that describes them, new ones marked NEW with the command line and seed to replay them).
``--save DIR`` writes, per bucket, the mutant's whole partition (the mutated file beside its
untouched siblings) and a ``finding.json`` with the bucket, the replay numbers, the seed and the
mutation steps: the raw material for a regression fixture in fixtures/fuzz.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tools.fuzz.campaign import Config, Finding, Result
from tools.fuzz.known import known_for


def _bucket_line(findings: list[Finding], config: Config) -> tuple[str, bool]:
    first = findings[0]
    failure = first.failure
    known = known_for(failure)
    label = f"known, {known.doc}" if known else "NEW"
    where = " ".join(part for part in (failure.exception, failure.frame) if part)
    line = f"  [{label}] {failure.command}: {failure.kind} {where} x{len(findings)}"
    if not known:
        line += (
            f"\n      {failure.detail}\n      replay: python -m tools.fuzz --seed {config.seed}"
            f" --only {first.mutant_no}  (seed file {first.seed.origin}; {' '.join(first.mutant.steps)})"
        )
    return line, known is None


def summary(result: Result, config: Config) -> tuple[str, int]:
    """The printed summary and the number of new (unexplained) buckets."""
    per_minute = result.runs / result.seconds * 60 if result.seconds else 0.0
    head = (
        f"kseg fuzz: seed {config.seed}, {result.mutants} mutants, {result.runs} runs in "
        f"{result.seconds:.0f} s ({per_minute:.0f} runs/min, {config.jobs} jobs, "
        f"{config.limits.memory_mb} MB, {config.limits.timeout_s:g} s per run)"
    )
    lines = [head]
    buckets = result.buckets()
    new = 0
    for findings in buckets.values():
        line, is_new = _bucket_line(findings, config)
        lines.append(line)
        new += is_new
    lines.append(f"unique failures: {len(buckets)} ({new} new, {len(buckets) - new} known)")
    return "\n".join(lines), new


def _slug(finding: Finding) -> str:
    text = "-".join(part for part in finding.failure.key if part)
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:80]


def save(result: Result, config: Config, directory: Path) -> list[Path]:
    """Each bucket's first finding as a reproducible partition under ``directory``."""
    saved = []
    for findings in result.buckets().values():
        first = findings[0]
        target = directory / f"m{first.mutant_no:05d}-{_slug(first)}"
        part = target / first.seed.partition
        part.mkdir(parents=True, exist_ok=True)
        for name, data in first.seed.siblings:
            (part / name).write_bytes(data)
        (part / first.seed.name).write_bytes(first.mutant.data)
        known = known_for(first.failure)
        info = {
            "bucket": list(first.failure.key),
            "detail": first.failure.detail,
            "known": known.doc if known else None,
            "campaign_seed": config.seed,
            "mutant": first.mutant_no,
            "seed_file": first.seed.origin,
            "mutated_file": f"{first.seed.partition}/{first.seed.name}",
            "steps": list(first.mutant.steps),
            "args": list(first.command.args),
            "count": len(findings),
        }
        (target / "finding.json").write_text(json.dumps(info, indent=2) + "\n")
        saved.append(target)
    return saved
