"""``verify``'s summary line agrees with its verdict line: a run the verdict fails counts at least one error.

Found as: a log directory whose only problem is a partition directory without
``partition.metadata`` (a KRaft broker renames it ``-stray``, R1.5) printed
``0 errors, 0 warnings, 0 info ... problems found`` above ``verdict: error``.
Every verdict fact test (tests/verdict, :func:`agreement.verdicts`) now also
checks that verify exits 1 only with an error counted; here the exact lines.
"""

from __future__ import annotations

import json

from click.testing import CliRunner
from logdirs import LogDir, batch, checkpoint

from kseg.cli import cli

ENV = {"COLUMNS": "100", "NO_COLOR": "1"}
STRAY = "verdict: error: the broker starts; not served (renamed -stray)"


def verify(*args: str):
    return CliRunner().invoke(cli, ["verify", *args], env=ENV)


def test_a_partition_without_partition_metadata_is_an_error_in_every_format(tmp_path, monkeypatch):
    logs = LogDir(tmp_path / "kafka-logs")
    part = logs.partition("orders", 0, {0: [batch(0, 2)]})
    (part.path / "partition.metadata").unlink()
    logs.finish(clean=True)
    monkeypatch.chdir(tmp_path)

    text = verify("kafka-logs")
    assert text.exit_code == 1
    assert text.stdout.splitlines()[-5:] == [
        "error     not-served  orders-0/partition.metadata",
        "          missing: the next start renames the directory orders-0.<uuid>-stray and serves none of its",
        "          offsets [R1.5 LogManager.loadLog (isStray -> UnifiedLog.renameDir)]",
        "1 error, 0 warnings, 0 info in 9 files, 161 bytes, 1 batch: problems found",
        STRAY,
    ]
    table = verify("--format", "table", "kafka-logs")
    assert table.exit_code == 1
    assert table.stdout.splitlines()[-3:] == [
        "ERROR                 1    161           9 files: 1 error, 0 warnings, 0 info; 1 batch: problems",
        "                                         found",
        STRAY,
    ]
    summary = json.loads(verify("--format", "json", "kafka-logs").stdout.splitlines()[-1])
    assert (summary["errors"], summary["kinds"], summary["exit_code"]) == (1, {"not-served": 1}, 1)


def test_a_checkpoint_entry_without_a_directory_is_counted_as_the_verdicts_error(tmp_path, monkeypatch):
    """``partition-missing`` has no finding of its own (only a ``checkpoint-orphan`` warning): ``next-start``."""
    logs = LogDir(tmp_path / "d")
    logs.partition("t", 0, {0: [batch(0, 2)]})
    root = logs.finish(clean=True)
    (root / "replication-offset-checkpoint").write_text(checkpoint([("gone", 0, 42), ("t", 0, 2)]))
    monkeypatch.chdir(tmp_path)
    result = verify("d")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[-1] == "verdict: error: the broker starts; a checkpointed partition has no directory"
    assert lines[-2].startswith("1 error, 1 warning, 0 info in ") and lines[-2].endswith(": problems found")
    assert "error     next-start  d" in lines
    assert ("          partition-missing: replication-offset-checkpoint has gone-0 at offset 42, but no directory"
            in lines)
