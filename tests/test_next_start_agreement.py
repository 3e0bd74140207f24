"""verify, ``recover --dry-run`` and triage tell one story about the next broker start.

Each command is run as a user runs it (the CLI, ``--format json``) on the same
damaged log directory, and what each says Kafka 4.3.0 does -- the outcome, the
segments deleted, the bytes cut, the exception thrown -- must be the same.
All three take it from kseg.recovery.loading; this test fails if any of them
grows a statement of its own.  The log directories are written by
``tests/logdirs.py`` as a clean shutdown leaves them, then damaged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from logdirs import LogDir, batch, control_batch

from kseg.cli import cli

SEGMENTS = {0: [(0, 3, 0), (3, 2, 1)], 5: [(5, 2, 1)], 7: [(7, 3, 2)]}  # base -> (offset, count, epoch)


def _three_segments(logdir: LogDir, extra: dict[int, list[bytes]] | None = None):
    segments = {base: [batch(o, n, epoch=e) for o, n, e in spec] for base, spec in SEGMENTS.items()}
    for base, batches in (extra or {}).items():
        segments[base] = segments.get(base, []) + batches
    return logdir.partition("t", 0, segments)


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


def clean_damage(logdir: LogDir) -> Path:
    """Clean shutdown: nothing is recovered, the damaged bytes are served (R4.1)."""
    _flip(_three_segments(logdir).file(".log", 0), 70)
    return logdir.finish(clean=True)


def unclean_damage(logdir: LogDir) -> Path:
    """Unclean, recovery point 0: segment 5 cut, segment 7 deleted (R4.3)."""
    _flip(_three_segments(logdir).file(".log", 5), -3)
    return logdir.finish(clean=False, recovery_points={("t", 0): 0})


def index_missing(logdir: LogDir) -> Path:
    """The damaged segment's .index missing: recovered early, no later segment deleted (R3.4, R3.5)."""
    partition = _three_segments(logdir)
    _flip(partition.file(".log", 5), -3)
    partition.file(".index", 5).unlink()
    return logdir.finish(clean=True)


def below_recovery_point(logdir: LogDir) -> Path:
    """Unclean, damage below the recovery point: not recovered (R4.2)."""
    _flip(_three_segments(logdir).file(".log", 0), 70)
    return logdir.finish(clean=False, recovery_points={("t", 0): 7})


def offset_below_base(logdir: LogDir) -> Path:
    """A batch below its segment's base with the .index missing: the split is refused, the broker stops (R4.5)."""
    partition = _three_segments(logdir, extra={7: [batch(2, 1, epoch=2)]})
    partition.file(".index", 7).unlink()
    return logdir.finish(clean=False, recovery_points={("t", 0): 0})


def short_control_key(logdir: LogDir) -> Path:
    """A control key of one byte: recovery keeps it, the producer-state rebuild throws (R6.4)."""
    _three_segments(logdir, extra={7: [control_batch(10, key=b"\x00")]})
    return logdir.finish(clean=False, recovery_points={("t", 0): 0})


CASES: dict[str, Callable[[LogDir], Path]] = {
    case.__name__: case
    for case in (clean_damage, unclean_damage, index_missing, below_recovery_point, offset_below_base, short_control_key)
}


def _json(*args: str) -> list[dict]:
    result = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    text = result.stdout.strip()
    if text.startswith("{") and "\n" not in text:
        return [json.loads(text)]
    return [json.loads(line) for line in text.splitlines()]


def _from_triage(root: Path) -> dict:
    [partition] = [o for o in _json("triage", str(root)) if o["type"] == "partition"]
    error = partition["error"]
    return {"outcome": partition["outcome"], "deleted": partition["deleted_segments"],
            "truncated_bytes": partition["truncated_bytes"], "exception": error and error["exception"]}


def _from_recover(root: Path) -> dict:
    [partition, _summary] = _json("recover", "--dry-run", str(root))
    load = partition["kafka_load"]
    error = load["error"]
    return {"outcome": load["outcome"], "deleted": load["deleted_segments"],
            "truncated_bytes": load["truncated_bytes"], "exception": error and error["exception"]}


def _from_verify(root: Path) -> dict:
    findings = [o for o in _json("verify", "-j", "1", str(root)) if o["type"] == "finding"]
    deleted = sorted(int(Path(f["path"]).name[:20]) for f in findings if f["kind"] == "load-deletes")
    cut = sum(Path(f["path"]).stat().st_size - f["position"] for f in findings if f["kind"] == "load-truncates")
    failures = [re.search(r"the next start fails: ([\w.$]+):", f["message"]) for f in findings if f["kind"] == "load-fails"]
    return {"deleted": deleted, "truncated_bytes": cut,
            "exception": failures[0].group(1) if failures and failures[0] else None}


@pytest.mark.parametrize("case", sorted(CASES))
def test_verify_recover_and_triage_say_the_same_about_the_next_start(tmp_path, case):
    root = CASES[case](LogDir(tmp_path / "kafka-logs"))
    triage, recover, verify = _from_triage(root), _from_recover(root), _from_verify(root)
    assert triage == recover
    assert verify == {key: triage[key] for key in ("deleted", "truncated_bytes", "exception")}


def test_the_cases_cover_every_outcome_and_a_failure(tmp_path):
    outcomes = {name: _from_triage(case(LogDir(tmp_path / name / "kafka-logs"))) for name, case in CASES.items()}
    assert {o["outcome"] for o in outcomes.values()} >= {"clean", "truncated", "fails"}
    assert outcomes["offset_below_base"]["exception"] == "java.lang.IllegalArgumentException"
    assert outcomes["short_control_key"]["exception"] == "org.apache.kafka.common.InvalidRecordException"
    assert outcomes["index_missing"]["deleted"] == [] and outcomes["unclean_damage"]["deleted"] == [7]
