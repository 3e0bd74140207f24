"""``kseg spark verify --max-batch-bytes N``: the read cap reaches the executors (docs/cli.md §9).

The same input as tests/test_cli_max_batch_bytes.py: one gzip batch whose records
decompress past 4096 bytes.  Spark's findings and exit code are those of ``kseg verify``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import IN_CI

try:
    import pyspark  # noqa: F401
except ImportError:  # pragma: no cover - the test extra installs it
    if IN_CI:
        raise
    pytest.skip("pyspark is not installed (pip install 'kseg[spark]')", allow_module_level=True)

from click.testing import CliRunner

from kseg.cli import cli
from kseg.errors import EXIT_OK, EXIT_PROBLEMS
from kseg.format import RecordSpec, encode_batch

ENV = {"COLUMNS": "100", "NO_COLOR": "1"}
CAP_MESSAGE = (
    "gzip: decompressed data exceeds the limit of 4096 bytes (at least 4097 bytes); --max-batch-bytes raises the limit"
)


def test_spark_verify_deep_reports_the_batch_past_the_cap_as_verify_does(tmp_path: Path) -> None:
    log = tmp_path / "orders-0" / "00000000000000000000.log"
    log.parent.mkdir()
    specs = [RecordSpec(i, 1_700_000_000_000 + i, b"k%d" % i, b"v" * 100) for i in range(100)]
    log.write_bytes(encode_batch(specs, codec=1))
    runs = {}
    for label, command in (("spark", ["spark", "verify", "--master", "local[1]"]), ("local", ["verify"])):
        for cap in ("4096", "1000000"):
            result = CliRunner().invoke(
                cli, [*command, "--deep", "--format", "json", "--max-batch-bytes", cap, str(log)], env=ENV
            )
            assert result.exit_code == EXIT_OK, result.output
            runs[label, cap] = [json.loads(line) for line in result.stdout.splitlines()]
    found = [f for f in runs["spark", "4096"] if f["type"] == "finding"]
    assert [(f["kind"], f["severity"], f["message"]) for f in found] == [
        ("decompress", "warning", f"{CAP_MESSAGE} (at byte 61)")
    ]
    assert not [f for f in runs["spark", "1000000"] if f["type"] == "finding"]
    assert runs["spark", "4096"] == runs["local", "4096"] and runs["spark", "1000000"] == runs["local", "1000000"]


def test_spark_export_leaves_out_the_batch_past_the_cap_and_names_it(tmp_path: Path) -> None:
    log = tmp_path / "orders-0" / "00000000000000000000.log"
    log.parent.mkdir()
    specs = [RecordSpec(i, 1_700_000_000_000 + i, b"k%d" % i, b"v" * 100) for i in range(100)]
    log.write_bytes(encode_batch(specs, codec=1) + encode_batch([RecordSpec(100, 1_700_000_000_100, None, b"x")]))
    base = ["spark", "export", "--master", "local[1]", "--file-format", "json", str(log.parent)]
    capped = CliRunner().invoke(cli, [*base, "-o", str(tmp_path / "capped"), "--max-batch-bytes", "4096"], env=ENV)
    assert capped.exit_code == EXIT_PROBLEMS, capped.output
    assert capped.stderr.splitlines()[-1] == f"kseg: {log}: byte 61 (batch.records): {CAP_MESSAGE}"
    whole = CliRunner().invoke(cli, [*base, "-o", str(tmp_path / "whole"), "--max-batch-bytes", "1000000"], env=ENV)
    assert whole.exit_code == EXIT_OK, whole.output
    exported = [json.loads(line) for part in sorted((tmp_path / "whole").glob("part-*")) for line in part.open()]
    assert sorted(row["offset"] for row in exported) == list(range(101))
    kept = [json.loads(line) for part in sorted((tmp_path / "capped").glob("part-*")) for line in part.open()]
    assert [row["offset"] for row in kept] == [100]
