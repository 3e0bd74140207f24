"""The storage oracle runs Kafka 4.3.0's code: a real load and a real dump of the bundled fixtures."""

from __future__ import annotations

from pathlib import Path

from kafka_storage import KafkaStorage

from tests.support import REPO

LOGDIR = REPO / "fixtures" / "real" / "kafka-logs"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_load_runs_kafka_on_a_copy_and_reports_every_partition(kafka_storage: KafkaStorage) -> None:
    before = _files(LOGDIR)
    [lines] = kafka_storage.load([LOGDIR], "--no-kafka-log")
    assert _files(LOGDIR) == before
    partitions = {o["dir"]: o for o in lines if o["type"] == "partition"}
    assert lines[-1]["type"] == "logdir"
    assert partitions["foo-0"]["log_end_offset"] == 204
    assert partitions["__consumer_offsets-12"]["leader_epochs"] == [[0, 862]]
    assert partitions["foo-0"]["disposition"] == "renamed_stray"  # no partition.metadata: KRaft renames it


def test_dump_runs_dumplogsegments(kafka_storage: KafkaStorage) -> None:
    log = LOGDIR / "foo-0" / "00000000000000000000.log"
    first, bad = kafka_storage.dump_many([["--files", str(log)], ["--no-such-option"]])
    assert first.exit == 0
    assert first.stdout.splitlines()[:2] == [f"Dumping {log}", "Log starting offset: 0"]
    assert bad.exit == 1 and "Exception in thread \"main\"" in bad.stderr
