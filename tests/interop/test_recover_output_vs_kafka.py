"""``kseg recover LOGDIR -o OUT`` against Kafka 4.3.0's own load (LoadLogDir, the storage oracle).

Two loads per input, in one JVM: LoadLogDir on a copy of the input gives the files Kafka keeps;
LoadLogDir on OUT must change no file (``files_created``/``changed``/``deleted`` and pending deletes
empty, outcome ``clean``).  By default OUT must keep exactly Kafka's ``.log`` files, byte for byte, with
Kafka's log start, log end, leader epochs and the ``leader-epoch-checkpoint`` bytes Kafka leaves.
``--salvage`` keeps more (every intact batch, the segments Kafka deletes) and must still load unchanged.

Inputs: log directories built by ``tests/logdirs.py`` as a clean shutdown leaves them and then damaged
in each way the comparison once failed (:data:`CASES`), copies of ``fixtures/real/kafka-logs`` damaged
the same ways, the damaged log directories of ``tests/test_next_start_agreement.py``, and every log
directory among the fixtures (:data:`FIXTURE_LOGDIRS`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from kafka_storage import KafkaStorage
from logdirs import LogDir, batch, checkpoint
from support import CORPUS_REAL, FIXTURES, require_dir

from kseg.format.snapshot import encode_snapshot
from kseg.ops.discover import is_partition_dir
from kseg.ops.recover.inputs import log_dir_partitions
from kseg.ops.recover.report import SEG_KAFKA_DELETES, SEG_KEPT_AS_KAFKA, SEG_WRITTEN, LogDirReport
from kseg.ops.recover.run import recover_path
from kseg.render.recover_json import log_dir_json
from kseg.render.recover_logdir import log_dir_lines

REAL = FIXTURES / "real" / "kafka-logs"
#: every log directory among the fixtures (a directory holding <topic>-<partition> directories)
FIXTURE_LOGDIRS = (
    "real/kafka-logs", "txn/logs", "recover/logdir", "dump/logdir", "internal/segments", "dump/decoders",
    "verify/corrupt/stale-index", "verify/corrupt/partition-problems", "verify/corrupt/bad-indexes",
    "verify/clean/preallocated", "verify/clean/partition", "reindex/partition", "reindex/legacy",
    "reindex/damaged",
)
SEGMENTS = {0: [(0, 3, 0), (3, 2, 1)], 5: [(5, 2, 1)], 7: [(7, 3, 2)]}  # base -> (offset, count, epoch)
EPOCHS = [(0, 0), (1, 3), (2, 7)]


def _three(logdir: LogDir):
    """t-0: segments at 0, 5, 7 (offsets 0-9, epochs 0, 1, 2), as a clean shutdown leaves it."""
    segments = {base: [batch(o, n, epoch=e) for o, n, e in spec] for base, spec in SEGMENTS.items()}
    return logdir.partition("t", 0, segments, epochs=EPOCHS)


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


# -- the cases: each builds a damaged log directory under ``root`` and returns it ------------------------


def log_start_beyond_end(root: Path) -> Path:
    """R8.2: the log start checkpoint (50) is past the log end (10): Kafka deletes every segment."""
    logdir = LogDir(root)
    _three(logdir)
    return logdir.finish(log_starts={("t", 0): 50})


def log_start_beyond_end_unclean(root: Path) -> Path:
    logdir = LogDir(root)
    _three(logdir)
    return logdir.finish(clean=False, log_starts={("t", 0): 50})


def log_start_at_end(root: Path) -> Path:
    """The log start (10) is the log end: nothing deleted, every epoch dropped (R7.5)."""
    logdir = LogDir(root)
    _three(logdir)
    return logdir.finish(log_starts={("t", 0): 10})


def broken_partition_metadata(root: Path) -> Path:
    """A partition.metadata Kafka's reader throws on; a healthy second partition beside it."""
    logdir = LogDir(root)
    part = _three(logdir)
    (part.path / "partition.metadata").write_text("version: 0\ntopic_id: not-a-uuid\n")
    logdir.partition("u", 0, {0: [batch(0, 2)]})
    return logdir.finish()


def broken_partition_metadata_known_id(root: Path) -> Path:
    """fixtures/dump/logdir with orders-0's partition.metadata garbled; its metadata log has the TopicRecord."""
    shutil.copytree(FIXTURES / "dump" / "logdir", root)
    (root / "orders-0" / "partition.metadata").write_bytes(b"version: 0\ntopic_id: JiPG0GbKRRqpJrShexbM\n")
    return root


def leftover_directories(root: Path) -> Path:
    """A partition queued for deletion (-delete) and a stray log (-stray) beside t-0 (R2.7)."""
    logdir = LogDir(root)
    _three(logdir)
    for name in ("t-1.0123456789abcdef0123456789abcdef-delete", "t-2.0123456789abcdef0123456789abcdef-stray"):
        (root / name).mkdir()
        (root / name / "00000000000000000000.log").write_bytes(batch(0, 2))
    return logdir.finish()


def offsets_backwards(root: Path) -> Path:
    """A flipped base offset (the CRC does not cover it): offsets 64-65, then 2-3, in the active segment.
    Kafka's recovery keeps both batches and its log end follows the last one (4), not the highest (66)."""
    logdir = LogDir(root)
    part = logdir.partition("t", 0, {0: [batch(0, 2), batch(2, 2)]})
    data = bytearray(part.file(".log", 0).read_bytes())
    data[7] ^= 0x40
    part.file(".log", 0).write_bytes(bytes(data))
    return logdir.finish(clean=False)


def swap_leftover(root: Path) -> Path:
    """R2.2-R2.4: a .log.swap replacing segment 5 (a compaction that did not finish its renames)."""
    logdir = LogDir(root)
    part = _three(logdir)
    (part.path / "00000000000000000005.log.swap").write_bytes(batch(5, 2, epoch=1, size=3))
    return logdir.finish()


def no_epochs(root: Path) -> Path:
    """Batches without a leader epoch (-1): Kafka's cache stays empty, its file 0 bytes (unclean start)."""
    logdir = LogDir(root)
    part = logdir.partition("t", 0, {0: [batch(0, 3, epoch=-1)]}, epochs=[])
    (part.path / "leader-epoch-checkpoint").unlink()
    return logdir.finish(clean=False)


def clean_damage(root: Path) -> Path:
    """R4.1: a clean shutdown: Kafka recovers nothing and serves the damaged bytes of segment 0."""
    logdir = LogDir(root)
    _flip(_three(logdir).file(".log", 0), 70)
    return logdir.finish()


def below_recovery_point(root: Path) -> Path:
    """R4.2: unclean, the damage below the recovery point: Kafka does not recover that segment."""
    logdir = LogDir(root)
    _flip(_three(logdir).file(".log", 0), 70)
    return logdir.finish(clean=False, recovery_points={("t", 0): 7})


def unclean_cut_deletes(root: Path) -> Path:
    """R4.3: recoverLog cuts segment 5 and deletes segment 7; the high watermark (10) is past the new end."""
    logdir = LogDir(root)
    _flip(_three(logdir).file(".log", 5), -3)
    return logdir.finish(clean=False, recovery_points={("t", 0): 3})


def _real(root: Path) -> Path:
    shutil.copytree(REAL, root)
    return root


def real_damaged_clean(root: Path) -> Path:
    """fixtures/real/kafka-logs with a byte of foo-0 flipped and a clean-shutdown marker."""
    _flip(_real(root) / "foo-0" / "00000000000000000000.log", 4000)
    (root / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":3}')
    return root


def real_damaged_unclean(root: Path) -> Path:
    """The same flip, no marker: Kafka recovers every segment from 0 and cuts foo-0 there."""
    _flip(_real(root) / "foo-0" / "00000000000000000000.log", 4000)
    _flip(root / "__consumer_offsets-12" / "00000000000000000000.log", 30000)
    return root


def real_below_recovery_point(root: Path) -> Path:
    """The flip below the recovery point of an unclean start: Kafka leaves it alone."""
    _flip(_real(root) / "foo-0" / "00000000000000000000.log", 4000)
    (root / "recovery-point-offset-checkpoint").write_text(checkpoint([("foo", 0, 204), ("some-topic", 0, 9)]))
    (root / "replication-offset-checkpoint").write_text(checkpoint([("foo", 0, 204)]))
    return root


CASES: dict[str, Callable[[Path], Path]] = {
    case.__name__: case
    for case in (
        log_start_beyond_end, log_start_beyond_end_unclean, log_start_at_end, broken_partition_metadata,
        broken_partition_metadata_known_id, leftover_directories, offsets_backwards,
        swap_leftover, no_epochs, clean_damage, below_recovery_point, unclean_cut_deletes,
        real_damaged_clean, real_damaged_unclean, real_below_recovery_point,
    )
}


def all_inputs(root: Path) -> dict[str, Path]:
    """Every input log directory, by name: the cases, next-start agreement's, the fixtures (read-only)."""
    import test_next_start_agreement as agreement

    found = {name: case(root / "cases" / name / "kafka-logs") for name, case in CASES.items()}
    for name, case in agreement.CASES.items():
        found[f"agreement-{name}"] = case(LogDir(root / "agreement" / name / "kafka-logs"))
    for name in FIXTURE_LOGDIRS:
        found[name] = FIXTURES / name
    return found


# -- the comparison ----------------------------------------------------------------------------------------


CHANGES = ("files_created", "files_changed", "files_deleted", "pending_async_deletes")
#: dispositions of the directories recover carries over as they are: -delete and -stray (and -future)
CARRIED = ("pending_delete", "stray", "future")


def _partitions(lines: list[dict]) -> dict[str, dict]:
    return {o["dir"]: o for o in lines if o["type"] == "partition"}


def _logs(loaded: dict) -> dict[str, list]:
    return {name: value for name, value in loaded["files_after"].items() if name.endswith(".log")}


def differences(kafka: list[dict], out: list[dict], salvage: bool) -> list[str]:
    """What is wrong with OUT's load (``out``) given Kafka's load of the input (``kafka``); [] when nothing."""
    found = []
    before, after = _partitions(kafka), _partitions(out)
    for name in sorted(set(before) | set(after)):
        k, o = before.get(name), after.get(name)
        if o is None:
            if k is not None and k["outcome"] != "fails":
                found.append(f"{name}: not in OUT")
            continue
        changes = {key: o[key] for key in CHANGES if o[key]}
        if k is not None and k["disposition"] in CARRIED:  # Kafka's leftovers: as they are, loaded the same
            if changes != {key: k[key] for key in CHANGES if k[key]}:
                found.append(f"{name}: carried over, but its load differs: Kafka {k}, OUT {o}")
            continue
        if o["outcome"] != "clean" or changes:
            found.append(f"{name}: OUT's load is {o['outcome']} {changes} {o['error']}")
        if k is None:
            found.append(f"{name}: in OUT but not in the input")
        elif not salvage and k["outcome"] != "fails":
            if _logs(k) != _logs(o):
                found.append(f"{name}: .log files differ: Kafka keeps {_logs(k)}, OUT has {_logs(o)}")
            for key in ("log_start_offset", "log_end_offset", "leader_epochs", "leader_epoch_checkpoint_after"):
                if k[key] != o[key]:
                    found.append(f"{name}: {key}: Kafka {k[key]!r}, OUT {o[key]!r}")
    return found


#: Kafka's own result is not at rest when the log start reaches the log end: a clean restart of what Kafka
#: left changes it again (test_kafka_itself_changes_these_on_a_clean_restart), and OUT, which is that result,
#: changes the same way.  Nothing else may differ.
NOT_AT_REST = {
    "log_start_beyond_end": [
        "t-0: OUT's load is rebuilt {'files_deleted': ['00000000000000000050.snapshot']} None"],
    "log_start_beyond_end_unclean": [
        "t-0: OUT's load is rebuilt {'files_created': ['00000000000000000050.snapshot']} None"],
    "log_start_at_end": [
        "t-0: OUT's load is rebuilt {'files_created': ['00000000000000000005.snapshot', "
        "'00000000000000000007.snapshot', '00000000000000000010.snapshot'], "
        "'files_changed': ['leader-epoch-checkpoint']} None",
        "t-0: leader_epochs: Kafka [[2, 10]], OUT []",
        "t-0: leader_epoch_checkpoint_after: Kafka '0\\n1\\n2 10\\n', OUT '0\\n0\\n'",
    ],
}


@dataclass
class Run:
    """Every input recovered into OUT, and Kafka's loads of both."""

    inputs: dict[str, Path]
    outs: dict[str, Path]
    reports: dict[str, LogDirReport]
    kafka: dict[str, dict[str, dict]]  # input -> partition dir -> LoadLogDir's object
    out: dict[str, dict[str, dict]]
    found: dict[str, list[str]]


def run(storage: KafkaStorage, inputs: dict[str, Path], out_root: Path, salvage: bool) -> Run:
    """Recover every input into ``out_root/<name>``; load inputs and outputs in one JVM; the differences."""
    outs, reports = {}, {}
    for name, path in inputs.items():
        outs[name] = out_root / name.replace("/", "_")
        report = recover_path(path, out_dir=outs[name], salvage=salvage)
        assert isinstance(report, LogDirReport)
        reports[name] = report
    loads = storage.load([*inputs.values(), *outs.values()], "--no-kafka-log")
    kafka, out = loads[: len(inputs)], loads[len(inputs) :]
    found = {name: differences(k, o, salvage) for name, k, o in zip(inputs, kafka, out)}
    return Run(inputs, outs, reports, {n: _partitions(k) for n, k in zip(inputs, kafka)},
               {n: _partitions(o) for n, o in zip(inputs, out)}, found)


@pytest.fixture(scope="module")
def runs(kafka_storage: KafkaStorage, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    root = tmp_path_factory.mktemp("recover-vs-kafka")
    inputs = all_inputs(root / "in")
    return {mode: run(kafka_storage, inputs, root / mode, mode == "salvage") for mode in ("kafka", "salvage")}


def test_out_keeps_what_kafka_keeps_and_loads_unchanged(runs):
    """Default: OUT's load changes nothing and OUT has Kafka's .log files, log start and end, epochs."""
    found = {name: problems for name, problems in runs["kafka"].found.items() if problems}
    assert found == NOT_AT_REST
    assert len(runs["kafka"].inputs) == len(CASES) + 6 + len(FIXTURE_LOGDIRS)
    assert sum(len(parts) for parts in runs["kafka"].kafka.values()) == 70


def test_salvage_out_loads_unchanged(runs):
    """--salvage keeps more than Kafka (its cut segments whole, the segments it deletes): OUT still loads as is."""
    assert {name: problems for name, problems in runs["salvage"].found.items() if problems} == {}
    out = runs["salvage"].outs["unclean_cut_deletes"] / "t-0"
    assert (out / "00000000000000000007.log").stat().st_size == 115


def test_salvage_log_end_is_the_last_batchs_next_offset(runs):
    """readNextOffset: the log end follows the file's last batch (4), even below an earlier batch's 64-65."""
    report = runs["salvage"].reports["offsets_backwards"].partitions[0]
    assert report.output_log_end == 4 == runs["salvage"].out["offsets_backwards"]["t-0"]["log_end_offset"]
    assert "00000000000000000004.snapshot" in _files(runs["salvage"], "offsets_backwards")


def _files(run: Run, name: str, part: str = "t-0") -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run.outs[name] / part).iterdir())}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_no_epochs_leave_a_zero_byte_checkpoint(runs):
    """Known difference 1: Kafka creates the file (R7.2) and never writes it; OUT's is 0 bytes too."""
    kafka = runs["kafka"]
    assert _files(kafka, "no_epochs")["leader-epoch-checkpoint"] == b""
    assert kafka.kafka["no_epochs"]["t-0"]["leader_epoch_checkpoint_after"] == ""
    for name in ("real/kafka-logs", "txn/logs"):
        for part, loaded in kafka.kafka[name].items():
            after = loaded["files_after"]["leader-epoch-checkpoint"]
            assert [len(_files(kafka, name, part)["leader-epoch-checkpoint"]), _sha(
                _files(kafka, name, part)["leader-epoch-checkpoint"])] == after, (name, part)


def test_log_start_beyond_the_end_is_kafkas_empty_segment(runs):
    """Known differences 2 and 3: R8.2 deletes every segment and its epochs; Kafka opens an empty segment at
    the log start (R4.6); after a clean shutdown it writes an empty producer snapshot there (R6.3a), after an
    unclean one none (truncateFullyAndStartAt deletes them all, and the map end is already the log end)."""
    kafka = runs["kafka"]
    for name in ("log_start_beyond_end", "log_start_beyond_end_unclean"):
        files = _files(kafka, name)
        after = kafka.kafka[name]["t-0"]["files_after"]
        assert {n: [len(d), _sha(d)] for n, d in files.items()} == after
        snapshot = [] if name.endswith("unclean") else ["00000000000000000050.snapshot"]
        assert sorted(files) == ["00000000000000000050.index", "00000000000000000050.log", *snapshot,
                                 "00000000000000000050.timeindex", "leader-epoch-checkpoint", "partition.metadata"]
        assert files.get("00000000000000000050.snapshot", b"") == (b"" if snapshot == [] else encode_snapshot([]))
        assert files["leader-epoch-checkpoint"] == b"0\n0\n"
        report = kafka.reports[name].partitions[0]
        assert [s.action for s in report.segments] == [SEG_KAFKA_DELETES] * 3
        assert (report.output_log_end, report.output_log_start) == (50, 0)


def test_a_broken_partition_metadata_is_left_out_and_said_so(runs):
    """Known difference 4: Kafka's load throws on it (Uuid.fromString); OUT has none -- the topic id is not
    known -- so a KRaft broker renames the directory -stray, and the report says how to avoid that."""
    kafka = runs["kafka"]
    error = kafka.kafka["broken_partition_metadata"]["t-0"]["error"]
    assert error["exception"] == "java.lang.IllegalArgumentException"
    assert "partition.metadata" not in _files(kafka, "broken_partition_metadata")
    loaded = kafka.out["broken_partition_metadata"]["t-0"]
    assert (loaded["outcome"], loaded["disposition"]) == ("clean", "renamed_stray")
    assert kafka.out["broken_partition_metadata"]["u-0"]["disposition"] == "current"
    [report, _] = kafka.reports["broken_partition_metadata"].partitions
    [(path, why)] = [(p, w) for p, w in report.not_copied if p.name == "partition.metadata"]
    assert why.startswith("Kafka's reader throws on it (byte 11 (topic_id): Input string `not-a-uuid` decoded as 7")
    assert "renames the directory <topic>-<partition>.<uuid>-stray" in why
    assert "not copied: partition.metadata (Kafka's reader throws on it" in "\n".join(
        str(line) for line in log_dir_lines(kafka.reports["broken_partition_metadata"], 100))


def test_a_broken_partition_metadata_is_written_anew_when_the_metadata_log_knows_the_topic(runs):
    """Known difference 4, the topic id known: __cluster_metadata-0 has TopicRecord(orders, JiPG...); OUT gets
    PartitionMetadata.encode's text and Kafka loads the partition with that id, not renamed -stray."""
    kafka = runs["kafka"]
    assert kafka.kafka["broken_partition_metadata_known_id"]["orders-0"]["outcome"] == "fails"
    text = b"version: 0\ntopic_id: JiPG0GbKRRqpJrShexbMfw"
    assert _files(kafka, "broken_partition_metadata_known_id", "orders-0")["partition.metadata"] == text
    assert text == (FIXTURES / "dump" / "logdir" / "orders-0" / "partition.metadata").read_bytes()
    loaded = kafka.out["broken_partition_metadata_known_id"]["orders-0"]
    assert (loaded["disposition"], loaded["topic_id"]) == ("current", "JiPG0GbKRRqpJrShexbMfw")
    report = kafka.reports["broken_partition_metadata_known_id"].partitions[1]
    [(_, why)] = [(p, w) for p, w in report.not_copied if p.name == "partition.metadata"]
    assert why.endswith("OUTDIR has a new one with the topic id JiPG0GbKRRqpJrShexbMfw of the TopicRecord in "
                        f"{kafka.inputs['broken_partition_metadata_known_id'] / '__cluster_metadata-0'}")


def test_damage_kafka_does_not_recover_is_kept_whole(runs):
    """Known difference 5: after a clean shutdown (R4.1) or below the recovery point (R4.2) Kafka serves the
    damaged segment as it is; OUT keeps it byte for byte, and --salvage cuts it."""
    for name in ("clean_damage", "below_recovery_point", "agreement-clean_damage"):
        source = runs["kafka"].inputs[name] / "t-0" / "00000000000000000000.log"
        assert _files(runs["kafka"], name)["00000000000000000000.log"] == source.read_bytes()
        report = runs["kafka"].reports[name].partitions[0]
        assert report.segments[0].action == SEG_KEPT_AS_KAFKA
        assert len(_files(runs["salvage"], name)["00000000000000000000.log"]) < source.stat().st_size
    text = [str(line) for line in log_dir_lines(runs["kafka"].reports["clean_damage"], 100)]
    out = runs["kafka"].outs["clean_damage"] / "t-0" / "00000000000000000000.log"
    assert (f"  wrote {out} (212 bytes, damage and all, as Kafka keeps it: it does not recover this segment; "
            "--salvage cuts it); .index 0 entries, .timeindex 1 entry") in text
    assert "3 segments: 1 damaged but kept whole, as Kafka keeps it, 2 unchanged" in text
    assert text[-1] == ("1 partition (0 changed), 3 segments (0 changed, 0 bytes lost); "
                        "Kafka deletes 0 segments (0 bytes)")
    assert not runs["kafka"].reports["clean_damage"].changed  # exit 0: nothing cut


def test_a_swap_leftover_is_what_kafka_loads(runs):
    """Known difference 6: Kafka renames 5.log.swap over segment 5 (R2.3, R2.4); OUT has the swap's bytes."""
    kafka = runs["kafka"]
    swap = kafka.inputs["swap_leftover"] / "t-0" / "00000000000000000005.log.swap"
    assert _files(kafka, "swap_leftover")["00000000000000000005.log"] == swap.read_bytes()
    report = kafka.reports["swap_leftover"].partitions[0]
    assert [s.action for s in report.segments] == [SEG_WRITTEN, SEG_KAFKA_DELETES, SEG_WRITTEN]
    assert [w.path.name for w in report.written if w.kind == "log"] == ["00000000000000000005.log"]


def test_rewritten_checkpoints_are_reported(runs):
    """recover -o cuts the high watermark to the new log end: said, entry by entry, in text and JSON."""
    report = runs["kafka"].reports["unclean_cut_deletes"]
    changes = [(c.checkpoint, c.topic, c.partition, c.before, c.after) for c in report.checkpoint_changes]
    assert changes == [("recovery-point-offset-checkpoint", "t", 0, 3, 5),
                       ("replication-offset-checkpoint", "t", 0, 10, 5)]
    text = [str(line) for line in log_dir_lines(report, 100)]
    assert f"  not in {runs['kafka'].outs['unclean_cut_deletes'] / 't-0'}: Kafka keeps none of them " \
        "(--salvage keeps them)" in text
    assert text[-1] == ("1 partition (1 changed), 3 segments (2 changed, 212 bytes lost); "
                        "Kafka deletes 1 segment (115 bytes)")
    assert "rewrote recovery-point-offset-checkpoint t-0: 3 -> 5" in text
    assert ("rewrote replication-offset-checkpoint t-0: 10 -> 5 (committed offsets up to the old high "
            "watermark are not all in OUTDIR)") in text
    assert log_dir_json(report)["checkpoint_changes"][1] == {
        "checkpoint": "replication-offset-checkpoint", "topic": "t", "partition": 0, "before": 10, "after": 5}


def test_what_recover_does_not_model_is_carried_over(runs):
    """The metadata log, meta.properties, bootstrap and cleaner checkpoints, .lock: copied byte for byte."""
    source, out = FIXTURES / "dump" / "logdir", runs["kafka"].outs["dump/logdir"]
    carried = [w.path.name for w in runs["kafka"].reports["dump/logdir"].carried]
    assert carried == [".lock", "__cluster_metadata-0", "bootstrap.checkpoint", "cleaner-offset-checkpoint",
                       "meta.properties"]
    for name in carried:
        for path in [source / name, *sorted((source / name).rglob("*"))]:
            if path.is_file():
                assert (out / path.relative_to(source)).read_bytes() == path.read_bytes(), path
    # entries of partitions recover does not write (the metadata log's recovery point) stay; nothing changed
    assert runs["kafka"].reports["dump/logdir"].checkpoint_changes == ()
    assert "__cluster_metadata 0 4\n" in (out / "recovery-point-offset-checkpoint").read_text()
    # Kafka's own leftovers (R2.7) are not recovered: as they are, and Kafka loads them as it would the input's
    report = runs["kafka"].reports["leftover_directories"]
    assert [p.path.name for p in report.partitions] == ["t-0"]
    assert [w.path.name for w in report.carried] == ["t-1.0123456789abcdef0123456789abcdef-delete",
                                                    "t-2.0123456789abcdef0123456789abcdef-stray"]
    for name in ("t-1.0123456789abcdef0123456789abcdef-delete", "t-2.0123456789abcdef0123456789abcdef-stray"):
        assert _files(runs["kafka"], "leftover_directories", name) == {
            "00000000000000000000.log": batch(0, 2)}
        assert runs["kafka"].out["leftover_directories"][name]["disposition"] in ("pending_delete", "stray")


def test_kafka_itself_changes_these_on_a_clean_restart(kafka_storage, tmp_path):
    """NOT_AT_REST is Kafka's, not kseg's: Kafka's own result, restarted after a clean shutdown with its
    checkpoints, changes exactly what OUT's load changes (truncateAndReload deletes a snapshot at the log
    start; with none, rebuildProducerState writes three; truncateFromEnd drops the epoch at the log end)."""
    expected = {"log_start_beyond_end": ([], [], ["00000000000000000050.snapshot"], 50),
                "log_start_beyond_end_unclean": (["00000000000000000050.snapshot"], [], [], 50),
                "log_start_at_end": (["00000000000000000005.snapshot", "00000000000000000007.snapshot",
                                      "00000000000000000010.snapshot"], ["leader-epoch-checkpoint"], [], 10)}
    for name, (created, changed, deleted, start) in expected.items():
        work = tmp_path / name / "work"
        kafka_storage.load([CASES[name](tmp_path / name / "kafka-logs")], "--no-kafka-log", "--work", str(work))
        restart = work / "kafka-logs"
        (restart / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":5}')
        for checkpoint_file in ("log-start-offset-checkpoint", "recovery-point-offset-checkpoint"):
            (restart / checkpoint_file).write_text(checkpoint([("t", 0, start)]))
        [lines] = kafka_storage.load([restart], "--no-kafka-log")
        loaded = _partitions(lines)["t-0"]
        assert (loaded["files_created"], loaded["files_changed"], loaded["files_deleted"]) == (
            created, changed, deleted), name


def test_the_real_corpus(kafka_storage, tmp_path):
    """Every log directory of the shared corpus of real Kafka log files: OUT is what Kafka keeps and loads
    unchanged (73 log directories; the 8 holding only __cluster_metadata-0 are refused: nothing to recover)."""
    corpus = require_dir(CORPUS_REAL, "the corpus of real Kafka log files")
    logdirs = sorted({p.parent.parent for p in corpus.rglob("*.log") if is_partition_dir(p.parent)})
    inputs, refused = {}, []
    for path in logdirs:
        if log_dir_partitions(path) is None:
            refused.append(path)
        else:
            inputs[str(path.relative_to(corpus))] = path
    assert (len(inputs), len(refused)) == (65, 8)
    result = run(kafka_storage, inputs, tmp_path / "out", salvage=False)
    assert {name: problems for name, problems in result.found.items() if problems} == {}
    partitions = [p for parts in result.kafka.values() for p in parts.values()]
    logs = [name for p in partitions for name in _logs(p)]
    assert (len(partitions), len(logs)) == (193, 215)


#: every N-th log directory of the corpus is damaged in test_the_real_corpus_damaged (1: all of them, ~90 s here)
CORPUS_SHARE = int(os.environ.get("KSEG_RECOVER_CORPUS_SHARE", "4"))


def _damaged_corpus(corpus: Path, root: Path) -> dict[str, Path]:
    """Copies of corpus log directories with a byte flipped in the middle of each .log of 200 bytes or more,
    once after an unclean shutdown (no marker) and once after a clean one."""
    logdirs = sorted({p.parent.parent for p in corpus.rglob("*.log") if is_partition_dir(p.parent)})
    inputs = {}
    for i, path in enumerate(d for d in logdirs if log_dir_partitions(d) is not None):
        if i % CORPUS_SHARE != CORPUS_SHARE - 1:  # the default 4 takes 3, 7, 11, ...: loads that throw among them
            continue
        for variant in ("unclean", "clean"):
            copy = root / f"{i}-{variant}"
            shutil.copytree(path, copy, symlinks=True)
            for log in sorted(copy.rglob("*.log")):
                if not log.parent.name.startswith("__cluster_metadata") and log.stat().st_size >= 200:
                    _flip(log, log.stat().st_size // 2)
            marker = copy / ".kafka_cleanshutdown"
            marker.unlink(missing_ok=True)
            if variant == "clean":
                marker.write_text('{"version":0,"brokerEpoch":1}')
            inputs[f"{path.relative_to(corpus)} ({variant})"] = copy
    return inputs


@pytest.mark.parametrize("salvage", [False, True], ids=["kafka", "salvage"])
def test_the_real_corpus_damaged(kafka_storage, tmp_path, salvage):
    """The corpus damaged: OUT is what Kafka keeps and loads unchanged, except where Kafka's own load throws or
    splits a segment (R4.4/R4.5, offsets past the segment): what Kafka keeps is then not defined, kseg writes
    no guess for that segment, and OUT's load only creates the empty segment Kafka makes (R4.6).  --salvage
    keeps what it can of those too: every OUT loads unchanged."""
    inputs = _damaged_corpus(require_dir(CORPUS_REAL, "the corpus of real Kafka log files"), tmp_path / "in")
    result = run(kafka_storage, inputs, tmp_path / "out", salvage=salvage)
    if salvage:
        assert {name: problems for name, problems in result.found.items() if problems} == {}
        return
    undefined = set()
    for name, report in result.reports.items():
        for part in report.partitions:
            prediction = part.prediction
            assert prediction is not None
            kafka = result.kafka[name][part.path.name]
            assert (kafka["outcome"] == "fails") == (prediction.error is not None), (name, part.path.name)
            if prediction.error is not None or prediction.log_end_offset is None:
                undefined.add((name, part.path.name))
                loaded = result.out[name][part.path.name]
                assert loaded["error"] is None and not loaded["files_changed"] and not loaded["files_deleted"]
    found = [(name, line.split(":")[0]) for name, lines in result.found.items() for line in lines]
    assert {item for item in found if item not in undefined} == set()
    if CORPUS_SHARE == 4:  # the default share: 16 log directories, twice
        partitions = sum(len(parts) for parts in result.kafka.values())
        assert (len(inputs), partitions, len(undefined)) == EXPECTED_DAMAGED, (len(inputs), partitions, undefined)


EXPECTED_DAMAGED = (32, 116, 16)  # inputs, partitions, partitions whose load throws or splits
