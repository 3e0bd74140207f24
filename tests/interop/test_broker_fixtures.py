"""fixtures/broker/ (log directories a real Kafka 4.3.0 broker wrote) against Kafka's LoadLogDir and kseg triage.

``unclean-kill/`` is a broker's log directory right after SIGKILL; ``restarted-clean/`` is the same directory
after that broker was really started again on it and stopped with SIGTERM (fixtures/broker/PROVENANCE.md).

Three things are pinned:

1. What Kafka 4.3.0's own loading code (LoadLogDir, ``kafka_storage``) says about each partition of each
   fixture: ``EXPECTED_LOAD``, written down from its output and checked against the files (offsets,
   recovery points, which files the load creates or changes).
2. That LoadLogDir's prediction for ``unclean-kill/`` is what the real broker did: the files it says the
   next start leaves are byte for byte the files of ``restarted-clean/`` -- except each
   ``leader-epoch-checkpoint``, where the real broker went on to become leader at a new epoch.
3. ``kseg dump`` prints what Kafka's DumpLogSegments prints for every segment, index, snapshot and KRaft
   checkpoint of both fixtures (deep iteration, data, the internal topics' decoders), byte for byte.
4. kseg triage's main fields against LoadLogDir's for every partition. ``KNOWN_DISAGREEMENTS`` lists
   every field where kseg's model says something else than Kafka, as (fixture, partition, field) ->
   (Kafka, kseg); it is empty: on these fixtures the model agrees. A change on either side fails the
   test until the table is updated (docs/interop.md, "Real brokers").
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BROKER_FIXTURES = REPO / "fixtures" / "broker"
FIXTURES = ("unclean-kill", "restarted-clean")

_SEG = "0000000000000000"
EXPECTED_LOAD: dict[tuple[str, str], dict] = {}


def _expect(fixture: str, part: str, *, clean: bool, lso: int, leo: int, rp_ckpt: int, segments: int,
            created: list[str], changed: list[str], deleted: int = 0) -> None:
    EXPECTED_LOAD[(fixture, part)] = {
        "outcome": "rebuilt", "had_clean_shutdown": clean, "recovery_point_checkpoint": rp_ckpt,
        "log_start_offset": lso, "log_end_offset": leo,
        # an unclean start recovers from the checkpointed recovery point, a clean one trusts the log end
        "recovery_point": leo if clean else rp_ckpt,
        "number_of_segments": segments, "leader_epochs": [[0, 0]], "truncated_bytes": 0,
        "deleted_segments": [], "lost_offsets": [], "files_created": created, "files_changed": changed,
        "files_deleted": deleted, "error": None,
    }


# unclean-kill: every partition is recovered from its recovery point; nothing is lost; the preallocated
# active indexes are trimmed ("changed"), a producer snapshot is taken at the log end ("created"), and the
# compacted topic's 24 *.deleted files (8 swapped-out segments x .log/.index/.timeindex) are deleted.
for _part, _leo, _rp, _segs, _active, _dels in (
        ("__consumer_offsets-0", 2, 0, 1, 0, 0), ("__transaction_state-0", 10, 0, 1, 0, 0),
        ("compacted-0", 89, 85, 5, 85, 24), ("orders-0", 30, 24, 3, 24, 0), ("orders-1", 30, 24, 3, 24, 0),
        ("payments-0", 17, 0, 1, 0, 0)):
    _expect("unclean-kill", _part, clean=False, lso=0, leo=_leo, rp_ckpt=_rp, segments=_segs,
            created=[f"{_SEG}{_leo:04d}.snapshot"],
            changed=[f"{_SEG}{_active:04d}.index", f"{_SEG}{_active:04d}.timeindex"], deleted=_dels)
    # restarted-clean: the same log ends after the real restart; a clean shutdown, so nothing is
    # recovered, but the load still rewrites leader-epoch-checkpoint: the broker's new epoch starts at
    # the log end with no batch of it, and Kafka's load drops such an entry (outcome "rebuilt").
    _expect("restarted-clean", _part, clean=True, lso=0, leo=_leo, rp_ckpt=_leo, segments=_segs,
            created=[], changed=["leader-epoch-checkpoint"])

# The fields kseg triage shares with LoadLogDir, and every known disagreement (none on these fixtures).
COMPARED = ("outcome", "log_start_offset", "log_end_offset", "truncated_bytes", "deleted_segments",
            "lost_offsets", "leader_epochs", "recovery_point_checkpoint", "error")
KNOWN_DISAGREEMENTS: dict[tuple[str, str, str], tuple[object, object]] = {}


@pytest.fixture(scope="module")
def kafka_loads(kafka_storage) -> dict[str, list[dict]]:
    """LoadLogDir's objects for each fixture, one JVM for both."""
    groups = kafka_storage.load([BROKER_FIXTURES / f for f in FIXTURES], "--no-kafka-log")
    return dict(zip(FIXTURES, groups))


def _partitions(objs: list[dict]) -> dict[str, dict]:
    return {o["dir"]: o for o in objs if o.get("type") == "partition"}


def test_kafka_loads_each_fixture_as_pinned(kafka_loads: dict[str, list[dict]]) -> None:
    got = {}
    for fixture, objs in kafka_loads.items():
        for part, o in _partitions(objs).items():
            row = {k: o[k] for k in EXPECTED_LOAD[(fixture, part)] if k != "files_deleted"}
            row["files_deleted"] = len(o["files_deleted"])
            got[(fixture, part)] = row
        logdir = objs[-1]
        assert logdir["type"] == "logdir" and logdir["broker_effect"] is None
        assert logdir["partitions_loaded"] == 6
        # __cluster_metadata-0 is the KRaft log: LogManager does not load it
        assert "__cluster_metadata-0" not in _partitions(objs)
    assert got == EXPECTED_LOAD
    assert kafka_loads["restarted-clean"][-1]["entries_deleted"] == [".kafka_cleanshutdown"]


def test_kafka_prediction_is_what_the_real_broker_did(kafka_loads: dict[str, list[dict]]) -> None:
    """LoadLogDir's files after loading unclean-kill/ == the real broker's files in restarted-clean/."""
    real_root = BROKER_FIXTURES / "restarted-clean"
    for part, o in _partitions(kafka_loads["unclean-kill"]).items():
        predicted = {name: tuple(v) for name, v in o["files_after"].items()}
        real = {}
        for path in (real_root / part).iterdir():
            data = path.read_bytes()
            real[path.name] = (len(data), hashlib.sha256(data).hexdigest())
        differ = {n for n in predicted.keys() | real.keys() if predicted.get(n) != real.get(n)}
        assert differ == {"leader-epoch-checkpoint"}, part
        epochs = (real_root / part / "leader-epoch-checkpoint").read_text().split("\n")
        assert epochs[:3] == ["0", "2", "0 0"], part  # then the new epoch at the log end
        assert int(epochs[3].split()[1]) == o["log_end_offset"], part


def _triage(fixture: str) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "kseg", "triage", "--format", "json", "--all",
                           str(BROKER_FIXTURES / fixture)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_kseg_triage_agrees_with_kafka(kafka_loads: dict[str, list[dict]]) -> None:
    disagreements = {}
    for fixture in FIXTURES:
        objs = _triage(fixture)
        summary = objs[-1]
        assert summary["type"] == "summary" and summary["exit_code"] == 0
        assert summary["partitions"] == 6 and summary["outcomes"]["rebuilt"] == 6
        kseg = {f"{o['topic']}-{o['partition']}": o for o in objs if o["type"] == "partition"}
        kafka = _partitions(kafka_loads[fixture])
        assert kseg.keys() == kafka.keys(), fixture
        for part, k in kafka.items():
            for field in COMPARED:
                if k[field] != kseg[part][field]:
                    disagreements[(fixture, part, field)] = (k[field], kseg[part][field])
    assert disagreements == KNOWN_DISAGREEMENTS


DUMPED = (".log", ".index", ".timeindex", ".txnindex", ".snapshot", ".checkpoint")
DECODER = {"__consumer_offsets": "--offsets-decoder", "__transaction_state": "--transaction-log-decoder",
           "__cluster_metadata": "--cluster-metadata-decoder"}


def _dump_jobs() -> list[list[str]]:
    """One kafka-dump-log run per partition directory: all its dumpable files, its topic's decoder."""
    jobs = []
    for fixture in FIXTURES:
        for part in sorted(p for p in (BROKER_FIXTURES / fixture).iterdir() if p.is_dir()):
            files = sorted(str(f) for f in part.iterdir() if f.name.endswith(DUMPED))
            decoder = [DECODER[part.name.rsplit("-", 1)[0]]] if part.name.startswith("__") else []
            jobs.append(["--deep-iteration", "--print-data-log", *decoder, "--files", ",".join(files)])
    return jobs


def test_kseg_dump_prints_what_dumplogsegments_prints(kafka_storage) -> None:
    from click.testing import CliRunner

    from kseg.cli import cli

    jobs = _dump_jobs()
    assert len(jobs) == 14  # 7 partition directories (with __cluster_metadata-0) x 2 fixtures
    kafka = kafka_storage.dump_many(jobs)
    for job, k in zip(jobs, kafka):
        result = CliRunner().invoke(cli, ["dump", *job], catch_exceptions=False)
        assert k.exit == 0, job
        assert (result.exit_code, result.stdout, result.stderr) == (0, k.stdout, k.stderr), job
