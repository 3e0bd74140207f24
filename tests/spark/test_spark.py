"""The Spark data source, distributed verify and the ``kseg spark`` commands, on local[2].

One SparkSession serves the whole module (a JVM start costs seconds); the CLI
commands find it active and reuse it, so they run in-process under CliRunner.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

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
from pyspark.sql.pandas.types import to_arrow_schema

from kseg.cli import cli
from kseg.spark import findings, get_session, read, rows
from kseg.spark.verify_units import deal

REAL = FIXTURES / "real" / "kafka-logs"
VERIFY = FIXTURES / "verify"
OFFSETS = REAL / "__consumer_offsets-12"
ENV = {"COLUMNS": "100", "NO_COLOR": "1"}


#: A test session is short: the client JIT and the serial GC start it faster (about a third less here).
TEST_CONF = [
    ("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"),
    ("spark.sql.shuffle.partitions", "2"),
]


@pytest.fixture(scope="module")
def spark():
    session, created = get_session("local[2]", TEST_CONF)
    yield session
    if created:
        session.stop()


def kseg(*args: str):
    """Run the CLI in-process; an exception escaping a command is a test failure, shown as such."""
    result = CliRunner().invoke(cli, list(args), env=ENV)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def _b64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


# -- the data source ----------------------------------------------------------------------------------


def test_the_session_is_local_quiet_and_bound_to_loopback(spark):
    conf = spark.sparkContext.getConf()
    assert spark.sparkContext.master == "local[2]"
    assert (conf.get("spark.driver.host"), conf.get("spark.ui.enabled")) == ("127.0.0.1", "false")
    assert "-Dlog4j2.configurationFile=file:" in conf.get("spark.driver.extraJavaOptions")


def test_records_are_those_kseg_dump_shows(spark):
    frame = spark.read.format("kseg").load(str(REAL))
    assert frame.columns == [name for name, _, _ in rows.RECORD_COLUMNS]
    assert to_arrow_schema(frame.schema, timezone="UTC").equals(rows.arrow_schema(rows.RECORD))
    got = sorted(
        (r.path, r.offset, r.key, r.value, [(h.key, h.value) for h in r.headers], r.timestamp)
        for r in frame.collect()
    )
    files = [str(p) for p in rows.segment_files([REAL])]
    result = kseg("dump", "--format", "json", "--deep-iteration", "--payload", "base64", *files)
    assert result.exit_code == 0
    expected = sorted(
        (b["path"], r["offset"], _b64(r["key"]), _b64(r["value"]), [(k, _b64(v)) for k, v in r["headers"]],
         r["timestamp"])
        for b in map(json.loads, result.stdout.splitlines()) if b["type"] == "batch"
        for r in b["records"]
    )
    assert len(got) == 1094
    assert got == expected


def test_record_counts_per_file_and_batch_level(spark):
    frame = read(spark, [REAL])
    counts = {Path(r["path"]).parent.name + "/" + Path(r["path"]).name: r["count"]
              for r in frame.groupBy("path").count().collect()}
    assert counts == {
        "__cluster_metadata-0/00000000000000007207-0000000001.checkpoint": 9,
        "__consumer_offsets-12/00000000000000000000.log": 862,
        "__consumer_offsets-12/00000000000000000862.log": 7,
        "foo-0/00000000000000000000.log": 204,
        "nikhilDemo-0/00000000000000000000.log": 3,
        "some-topic-0/00000000000000000000.log": 9,
    }
    batches = spark.read.format("kseg").option("level", "batch").load([str(OFFSETS), str(REAL / "foo-0")])
    assert batches.count() == 148 + 204
    assert batches.where("magic = 1").count() == 204


def test_a_segment_split_into_several_partitions_gives_the_same_rows(spark):
    def load(split_bytes: int):
        return spark.read.format("kseg").option("split_bytes", split_bytes).load(str(OFFSETS))

    whole, cut = load(1 << 30), load(8192)
    assert whole.rdd.getNumPartitions() == 2  # one per segment
    assert cut.rdd.getNumPartitions() == 9  # the 64 KiB segment in 8, the small one whole
    assert sorted(cut.collect()) == sorted(whole.collect())
    assert cut.count() == 869


def test_permissive_and_failfast_modes(spark):
    path = str(VERIFY / "corrupt" / "crc-flip.log")
    frame = spark.read.format("kseg").option("mode", "permissive").load(path)
    damaged = [(r.batch_position, r.problem) for r in frame.where("problem is not null").collect()]
    assert damaged == [
        (434, "byte 451 (batch.crc): Record is corrupt (stored crc = 1560510572, computed crc = 309840341)")
    ]
    assert frame.where("problem is null").count() == 12
    with pytest.raises(Exception) as caught:
        spark.read.format("kseg").option("mode", "FAILFAST").load(path).collect()
    assert f"{path}: byte 451 (batch.crc): Record is corrupt (stored crc = 1560510572" in str(caught.value)


def test_a_bad_option_is_refused_with_its_name(spark):
    with pytest.raises(Exception, match="kseg option level='nope': expected one of record, batch"):
        spark.read.format("kseg").option("level", "nope").load(str(OFFSETS)).schema  # noqa: B018


# -- distributed verify -----------------------------------------------------------------------------------


def test_findings_are_those_of_kseg_verify_json(spark):
    target = str(VERIFY / "corrupt")
    local = kseg("verify", "--format", "json", target)
    expected = [json.loads(line) for line in local.stdout.splitlines()]
    expected = [line for line in expected if line["type"] == "finding"]
    got = [row.asDict() for row in findings(spark, [target]).collect()]
    assert len(got) == 66
    assert got == expected


def test_work_is_dealt_by_size():
    from kseg.ops.verify import plan_paths

    units = plan_paths([VERIFY / "clean" / "partition" / "orders-0", REAL / "foo-0"]).units
    groups = deal(units, 2)
    assert sorted(i for group in groups for i, _ in group) == list(range(len(units)))
    assert len(groups) == 2


@pytest.mark.parametrize("fmt", ["text", "json", "table"])
def test_spark_verify_prints_what_verify_prints(spark, fmt, monkeypatch):
    monkeypatch.chdir(VERIFY)
    before = (_snapshot(VERIFY), sorted(p.name for p in VERIFY.rglob("*")))
    args = ["--format", fmt, "corrupt", "clean"]
    local, distributed = kseg("verify", *args), kseg("spark", "verify", *args)
    assert (distributed.exit_code, distributed.stderr) == (1, "")
    assert distributed.stdout == local.stdout
    assert local.exit_code == 1
    assert (_snapshot(VERIFY), sorted(p.name for p in VERIFY.rglob("*"))) == before  # nothing changed or created


@pytest.mark.parametrize(("fmt", "quiet"), [("text", "-q"), ("json", "--quiet"), ("table", "-q")])
def test_spark_verify_quiet_lists_only_problem_files_as_verify_quiet_does(spark, fmt, quiet):
    """A log directory: -q/--quiet leaves out the clean files and partitions (JSON: their file lines), as verify's."""
    args = ["--format", fmt, str(REAL)]
    local, distributed = kseg("verify", quiet, *args), kseg("spark", "verify", quiet, *args)
    # four partitions without partition.metadata: the next start renames them -stray (the verdict: exit 1)
    assert (distributed.exit_code, distributed.stderr, distributed.stdout) == (1, "", local.stdout)
    assert distributed.stdout != kseg("spark", "verify", *args).stdout  # quiet leaves something out here
    assert "__cluster_metadata-0/" not in distributed.stdout and "__consumer_offsets-12/" in distributed.stdout
    if fmt == "json":
        lines = [json.loads(line) for line in distributed.stdout.splitlines()]
        assert [d["path"].rsplit("/", 2)[-2] for d in lines if d["type"] == "file"] == [
            "__consumer_offsets-12", "foo-0", "foo-0", "nikhilDemo-0", "some-topic-0", "some-topic-0",
            # each partition's missing partition.metadata: the not-served error the verdict names
            "__consumer_offsets-12", "foo-0", "nikhilDemo-0", "some-topic-0"]
        assert len([d for d in lines if d["type"] == "finding"]) == 10


def test_spark_verify_exit_codes(spark, monkeypatch):
    monkeypatch.chdir(VERIFY)
    clean = kseg("spark", "verify", "clean/v2-codecs.log")
    assert (clean.exit_code, clean.stdout) == (
        0,
        "ok     clean/v2-codecs.log  log, 5 batches, 932 bytes\n"
        "0 errors, 0 warnings, 0 info in 1 file, 932 bytes, 5 batches: clean\n",
    )
    strict = kseg("spark", "verify", "--strict", "--format", "json", "corrupt/partition-problems")
    assert strict.exit_code == kseg("verify", "--strict", "--format", "json", "corrupt/partition-problems").exit_code
    missing = kseg("spark", "verify", "nope")
    assert missing.exit_code == 2 and "'nope' does not exist" in missing.stderr


# -- export --------------------------------------------------------------------------------------------------


def test_export_writes_parquet_and_reports_damaged_batches(spark, tmp_path, monkeypatch):
    monkeypatch.chdir(VERIFY)
    before = _snapshot(VERIFY)
    out = tmp_path / "records.parquet"
    inputs = ["corrupt/crc-flip.log", "corrupt/several.log", "clean/v2-codecs.log"]
    result = kseg("spark", "export", *inputs, "--to", str(out))
    assert result.exit_code == 1
    assert result.stderr == (
        "kseg: corrupt/crc-flip.log: byte 451 (batch.crc): Record is corrupt (stored crc = 1560510572, "
        "computed crc = 309840341)\n"
        "kseg: corrupt/several.log: byte 17 (batch.crc): Record is corrupt (stored crc = 1384625300, "
        "computed crc = 2938831253)\n"
        "kseg: corrupt/several.log: byte 668 (batch.crc): Record is corrupt (stored crc = 2606055682, "
        "computed crc = 1268216967); then 215 bytes up to the next valid batch\n"
    )
    # the pure reader, DROPMALFORMED, is what should be in the file; its paths are absolute there
    expected = rows.read_paths([VERIFY / p for p in inputs])
    assert result.stdout == (
        f"exported {expected.num_rows} records from 3 files to {out} (parquet); "
        "3 damaged regions not exported (listed on stderr)\n"
    )
    back = spark.read.parquet(str(out))
    assert back.columns == [name for name, _, _ in rows.RECORD_COLUMNS] + ["txn_state"]
    def key(row):
        return (row["path"], row["offset"])

    got = sorted((r.asDict(recursive=True) for r in back.collect()), key=key)
    want = sorted(expected.to_pylist(), key=key)
    for row in want:
        row["key"], row["value"] = (bytearray(row["key"]) if row["key"] is not None else None,
                                    bytearray(row["value"]) if row["value"] is not None else None)
        row["headers"] = [{"key": h["key"], "value": bytearray(h["value"]) if h["value"] is not None else None}
                          for h in row["headers"]]
        row["txn_state"] = "none"  # these fixtures hold no transactional batch
    assert got == want
    assert _snapshot(VERIFY) == before  # the inputs are only read


def test_export_of_clean_data_exits_0_and_refuses_to_overwrite(spark, tmp_path):
    out = tmp_path / "batches"
    first = kseg("spark", "export", str(REAL), "--to", str(out), "--level", "batch", "--format", "json")
    assert (first.exit_code, first.stderr) == (0, "")
    assert first.stdout == f"exported 367 batches from 6 files to {out} (json)\n"
    assert spark.read.json(str(out)).count() == 367
    again = kseg("spark", "export", str(REAL), "--to", str(out))
    assert again.exit_code == 2
    assert f"--to {out}: exists (give --overwrite to replace it)" in again.stderr
    replaced = kseg("spark", "export", str(REAL / "foo-0"), "--to", str(out), "--overwrite")
    assert (replaced.exit_code, replaced.stdout) == (0, f"exported 204 records from 1 file to {out} (parquet)\n")


def test_export_takes_output_and_file_format_as_every_command_spells_them(spark, tmp_path):
    """``-o/--output`` and ``--file-format`` (``--to`` and ``--format`` are the old, hidden spellings, tested above)."""
    out = tmp_path / "batches"
    first = kseg("spark", "export", str(REAL / "foo-0"), "-o", str(out), "--level", "batch", "--file-format", "orc")
    assert (first.exit_code, first.stderr) == (0, "")
    assert first.stdout.startswith("exported ") and first.stdout.endswith(f" to {out} (orc)\n")
    assert spark.read.orc(str(out)).count() > 0
    again = kseg("spark", "export", str(REAL / "foo-0"), "--output", str(out))
    assert again.exit_code == 2 and f"--output {out}: exists (give --overwrite to replace it)" in again.stderr


# -- failures and help ---------------------------------------------------------------------------------------


def test_a_spark_failure_is_one_line_and_exit_2(spark, monkeypatch):
    from pyspark.errors import PySparkRuntimeError

    from kseg.spark import verify_units
    from kseg.spark.session import log_path

    def fail(*args, **kwargs):
        raise PySparkRuntimeError(errorClass="JAVA_GATEWAY_EXITED", messageParameters={})

    monkeypatch.setattr(verify_units, "verify", fail)
    result = kseg("spark", "verify", str(VERIFY / "clean" / "v2-codecs.log"))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "kseg: error: spark: [JAVA_GATEWAY_EXITED] Java gateway process exited before sending its port number. "
        f"(Spark's log: {log_path()})\n"
    )


def test_usage_errors_exit_2_before_spark_starts(tmp_path):
    empty = kseg("spark", "export", str(tmp_path), "--to", str(tmp_path / "out"))
    assert empty.exit_code == 2
    assert f"nothing to export: no segment files in {tmp_path}" in empty.stderr
    bad_conf = kseg("spark", "verify", "--conf", "novalue", str(VERIFY / "clean" / "v2-codecs.log"))
    assert bad_conf.exit_code == 2 and "--conf 'novalue': expected KEY=VALUE" in bad_conf.stderr


def test_help_lists_the_subcommands():
    result = kseg("spark", "--help")
    assert result.exit_code == 0
    assert result.stdout.endswith(
        "Commands:\n"
        "  export  Write records (or batches) as Parquet, ORC or JSON.\n"
        "  verify  Verify on Spark: the findings and exit codes of kseg verify.\n"
    )


def test_a_directory_without_segments_is_an_empty_frame(spark, tmp_path):
    assert read(spark, [tmp_path]).count() == 0


def test_a_python_worker_failure_shows_its_last_traceback_line(spark, monkeypatch):
    from kseg.spark import verify_units

    def fail(session, paths, deep=False, max_batch_bytes=None):
        session.sparkContext.parallelize([0], 1).map(lambda _: 1 / 0).collect()

    monkeypatch.setattr(verify_units, "verify", fail)
    result = kseg("spark", "verify", str(VERIFY / "clean" / "v2-codecs.log"))
    assert result.exit_code == 2
    assert result.stderr.startswith("kseg: error: spark: ZeroDivisionError: division by zero (Spark's log: ")
