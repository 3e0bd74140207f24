"""Run every reading command on one log directory and collect each one's verdict and exit code.

The commands run as a user runs them (the CLI, ``--format json``); ``spark verify`` is checked at the
unit level -- :func:`kseg.ops.verify.verify_paths` with the files checked by a ``run_units`` callback,
the contract :mod:`kseg.spark.verify_units` fills on a cluster -- because a Spark session costs more
than the whole test.  What each command says about the next start is the ``verdict`` object of its
JSON (docs/cli.md, "One verdict"): the headline and the exit code it implies.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kseg.cli import cli
from kseg.ops.verify import check_unit, verify_paths


def _json_lines(args: list[str]) -> tuple[int, list[dict]]:
    result = CliRunner().invoke(cli, args, env={"COLUMNS": "100", "NO_COLOR": "1"})
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return result.exit_code, lines


def _inline_units(units, deep, cap):  # type: ignore[no-untyped-def]
    """``run_units`` as Spark's executors run it: ``check_unit`` per unit, in order."""
    return [check_unit(unit, deep, None, cap) for unit in units]


def verdicts(logdir: Path) -> dict[str, tuple[int, str | None]]:
    """command -> (exit code, verdict headline) on one log directory."""
    out: dict[str, tuple[int, str | None]] = {}
    code, lines = _json_lines(["triage", "--format", "json", str(logdir)])
    out["triage"] = (code, lines[-1]["verdict"]["headline"] if lines else None)
    code, lines = _json_lines(["verify", "--format", "json", str(logdir)])
    out["verify"] = (code, lines[-1].get("verdict", {}).get("headline") if lines else None)
    # the summary line agrees with the verdict: a run that fails names at least one error (docs/cli.md, "One verdict")
    assert code != 1 or lines[-1]["errors"] >= 1, ("verify exits 1 with no error counted", lines[-1])
    code, lines = _json_lines(["recover", "--dry-run", "--format", "json", str(logdir)])
    out["recover --dry-run"] = (code, lines[-1]["verdict"]["headline"] if lines else None)
    code, lines = _json_lines(["txn", "--format", "json", str(logdir)])
    hanging = bool(lines) and lines[-1]["transactions"]["hanging"] > 0
    # txn also exits 1 for a hanging transaction: its own finding on top of the verdict
    out["txn"] = (0 if hanging and code == 1 and lines[-1]["verdict"]["exit_code"] == 0 else code,
                  lines[-1]["verdict"]["headline"] if lines else None)
    spark = verify_paths([logdir], run_units=_inline_units, jobs=1)
    out["spark verify"] = (spark.exit_code(), spark.verdict.headline() if spark.verdict is not None else None)
    return out
