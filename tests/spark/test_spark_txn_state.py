"""``txn_state`` in ``kseg spark export``: records of aborted transactions told from committed and open ones.

On fixtures/txn/logs (kafka-clients 4.3.0's MemoryRecordsBuilder; fixtures/txn/PROVENANCE.md lists every
batch), the expected state of each offset is read off the cases by hand: a transaction ends at its
producer's next COMMIT/ABORT marker (ProducerStateManager), whichever segment holds it.
"""

from __future__ import annotations

import pytest
from support import FIXTURES, IN_CI

try:
    import pyarrow  # noqa: F401
    import pyspark  # noqa: F401
except ImportError:  # pragma: no cover - the test extra installs both
    if IN_CI:
        raise
    pytest.skip("pyspark/pyarrow are not installed (pip install 'kseg[spark]')", allow_module_level=True)

from click.testing import CliRunner

from kseg.cli import cli
from kseg.spark import get_session, rows

LOGS = FIXTURES / "txn" / "logs"
TEST_CONF = [("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"),
             ("spark.sql.shuffle.partitions", "2")]

#: offset -> txn_state, per partition (PROVENANCE.md's table).
EXPECTED = {
    # pid 2000 txn 0-1, pid 2001 txn 2-3, ABORT 2001 at 4, COMMIT 2000 at 5, pid 2002 idempotent 6-7
    "payments-0": ["committed", "committed", "aborted", "aborted", "aborted", "committed", "none", "none"],
    # pid 3000 txn 0-1 without a marker, plain 2-3
    "orders-0": ["open", "open", "none", "none"],
    # pid 5000 e0 0-1, ABORT at 2 (e1); pid 5000 e1 3-4, COMMIT at 5; pid 5001 6-7 open; plain 8
    "fenced-0": ["aborted", "aborted", "aborted", "committed", "committed", "committed", "open", "open", "none"],
    # three segments: pid 4000 0-1 and 4-5, COMMIT at 6 (segment 4); pid 4001 2-3, ABORT at 7 (segment 7); plain 8
    "events-0": ["committed", "committed", "aborted", "aborted", "committed", "committed", "committed", "aborted",
                 "none"],
}


@pytest.fixture(scope="module")
def spark():
    session, created = get_session("local[2]", TEST_CONF)
    yield session
    if created:
        session.stop()


def test_export_tells_aborted_from_committed_and_open_records(spark, tmp_path):
    out = tmp_path / "records.parquet"
    inputs = [str(LOGS / name) for name in EXPECTED]
    result = CliRunner().invoke(cli, ["spark", "export", *inputs, "-o", str(out)], env={"COLUMNS": "100"})
    assert (result.exit_code, result.stdout) == (0, f"exported 30 records from 6 files to {out} (parquet)\n")
    back = spark.read.parquet(str(out))
    assert back.columns == [name for name, _, _ in rows.RECORD_COLUMNS] + ["txn_state"]
    got: dict[str, dict[int, str]] = {}
    for row in back.select("topic", "partition", "offset", "txn_state").collect():
        got.setdefault(f"{row['topic']}-{row['partition']}", {})[row["offset"]] = row["txn_state"]
    assert {name: [states[o] for o in sorted(states)] for name, states in got.items()} == EXPECTED
    assert all(sorted(states) == list(range(len(states))) for states in got.values())


def test_batch_level_has_no_txn_state(spark, tmp_path):
    out = tmp_path / "batches.parquet"
    result = CliRunner().invoke(cli, ["spark", "export", str(LOGS / "payments-0"), "-o", str(out), "--level", "batch"])
    assert result.exit_code == 0
    assert spark.read.parquet(str(out)).columns == [name for name, _, _ in rows.BATCH_COLUMNS]
