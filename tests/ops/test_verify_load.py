"""verify's statements about the next start: from the log-loading model, on small whole log directories.

The log directories are built with tests/logdirs.py's builders (as a
clean shutdown of Kafka 4.3.0 leaves them), then damaged.  Each test pins the
finding kinds, severities and messages; the rule in brackets names the source
(docs/kafka-log-loading.md).  The last tests check that verify, the model and
``kseg recover --dry-run`` agree on deletions, truncation points and failures.
"""

from __future__ import annotations

from pathlib import Path

import logdirs as kit
import pytest

from kseg.ops.verify import verify_paths
from kseg.recovery.loading import predict_log_dir

LOAD_KINDS = {"load-truncates", "load-deletes", "load-ignores", "load-fails", "high-watermark", "recovery-point",
              "log-start-offset", "checkpoint-orphan", "checkpoint-missing-entry", "snapshot-beyond-end", "leader-epoch",
              "missing-index"}


@pytest.fixture
def logdir(tmp_path: Path):
    return kit.LogDir(tmp_path / "kafka-logs")


@pytest.fixture
def three(logdir):
    """t-0: segments at 0, 5, 7 (offsets 0..9, epochs 0, 1, 2)."""
    specs = {0: [(0, 3, 0), (3, 2, 1)], 5: [(5, 2, 1)], 7: [(7, 3, 2)]}
    segs = {base: [kit.batch(o, n, epoch=e) for o, n, e in batches] for base, batches in specs.items()}
    return logdir.partition("t", 0, segs, epochs=[(0, 0), (1, 3), (2, 7)])


def flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


def load(root: Path) -> list[tuple[str, str, str, int | None, int | None, str]]:
    """(file name, kind, severity, position, offset, message) of the findings about the next start."""
    result = verify_paths([root], jobs=1)
    return [(Path(f.path).name, f.kind, f.severity, f.position, f.offset, f.message)
            for f in result.findings() if f.kind in LOAD_KINDS]


def log0(part) -> Path:
    return part.file(".log", 0)


# -- the statements that used to be wrong ---------------------------------------------------------


def test_clean_shutdown_damage_is_not_recovered_and_is_served(logdir, three):
    """R1.1, R4.1: with .kafka_cleanshutdown no segment is recovered; the damaged bytes stay."""
    flip(log0(three), 70)  # inside batch 0's records: CRC fails
    root = logdir.finish(clean=True)
    assert load(root) == [(
        kit.name(0, ".log"), "load-ignores", "error", 0, None,
        "the next start does not recover this segment: the damaged bytes stay and Kafka serves them; the log "
        "directory has .kafka_cleanshutdown, so no segment is recovered [R4.1 LogLoader.recoverLog]")]


def test_damage_below_the_recovery_point_is_not_recovered(logdir, three):
    """R4.2: recovery starts at the segment holding the recovery point (7); segment 0 is below it."""
    flip(log0(three), 70)
    root = logdir.finish(clean=False, recovery_points={("t", 0): 7})
    assert load(root) == [(
        kit.name(0, ".log"), "load-ignores", "error", 0, None,
        "the next start does not recover this segment: the damaged bytes stay and Kafka serves them; it lies "
        "below the recovery point 7, where recovery starts [R4.2 LogLoader.recoverLog]")]


def test_unclean_damage_truncates_and_deletes_every_later_segment(logdir, three):
    """R4.2, R4.3: recoverLog cuts segment 5 at its damaged batch and deletes segment 7; epoch 2 dropped (R7.4)."""
    flip(three.file(".log", 5), -3)
    root = logdir.finish(clean=False, recovery_points={("t", 0): 0})
    found = load(root)
    assert [f[:5] for f in found] == [
        (kit.name(5, ".log"), "load-truncates", "error", 0, 5),
        (kit.name(7, ".log"), "load-deletes", "error", None, 7),
        (kit.name(10, ".snapshot"), "snapshot-beyond-end", "warning", None, 10),
        ("leader-epoch-checkpoint", "leader-epoch", "warning", 12, 7),
        ("replication-offset-checkpoint", "high-watermark", "error", None, 10),
    ]
    messages = {f[1]: f[5] for f in found}
    size5 = three.file(".log", 5).stat().st_size
    assert messages["load-truncates"].startswith(
        f"the next start recovers this segment and truncates it at byte 0, dropping {size5} bytes (offsets 5..6 lost): ")
    assert messages["load-truncates"].endswith(
        "recovered because the last shutdown was not clean and it is at or above the recovery point (R4.2) "
        "[R4.3 LogSegment.recover]")
    assert messages["load-deletes"] == (
        f"the next start deletes this segment (offsets 7..9 lost): LogLoader.recoverLog cut bytes from "
        f"{kit.name(5, '.log')} and deletes every later segment (R4.3) "
        "[R4.3 LogLoader.recoverLog -> LocalLog.deleteSegmentFiles]")
    assert messages["leader-epoch"] == (
        "entry (2 7) starts at or beyond the log end 5: the next start drops it and rewrites the file "
        "[R7.4 LeaderEpochFileCache.truncateFromEndAsyncFlush]")
    assert messages["high-watermark"] == (
        "t-0: high watermark 10 is beyond the log end 5 after the next start: committed offsets 5..9 are lost on "
        "this replica")


def test_missing_index_is_recovered_early_and_deletes_nothing(logdir, three):
    """R3.3, R3.4, R3.5: a missing .index makes loadSegmentFiles recover the segment at any start; the cut leaves
    a gap, no later segment is deleted."""
    flip(three.file(".log", 5), -3)
    three.file(".index", 5).unlink()
    three.file(".timeindex", 5).unlink()
    root = logdir.finish(clean=True)
    found = load(root)
    kinds = [(f[0], f[1], f[2]) for f in found]
    assert (kit.name(5, ".log"), "load-truncates", "error") in kinds
    assert not any(kind == "load-deletes" for _, kind, _ in kinds)
    index = {f[0]: f[5] for f in found if f[1] == "missing-index"}
    why = ("the next start rebuilds it, recovering the segment because its .index is missing or its .txnindex fails "
           "Kafka's sanity check, so LogLoader.loadSegmentFiles recovers it whatever the shutdown, and deletes no "
           "later segment for it (R3.4) [R3.5 LogSegment.recover]")
    assert index == {kit.name(5, ".index"): f"missing: the offset index; {why}",
                     kit.name(5, ".timeindex"): f"missing: the time index; {why}"}


def test_missing_timeindex_alone_is_created_empty(logdir, three):
    """R3.3: sanityCheck creates a missing .timeindex with 0 bytes; on a clean start nothing rebuilds it."""
    three.file(".timeindex", 0).unlink()
    root = logdir.finish(clean=True)
    assert load(root) == [(
        kit.name(0, ".timeindex"), "missing-index", "warning", None, 0,
        "missing: the time index; the next start creates it empty and does not rebuild it, so time lookups in this "
        "segment find nothing [R3.3 LogSegment.sanityCheck (timeIndex().resize(0))]")]


def test_offset_below_base_fails_the_load_and_stops_the_broker(logdir):
    """R4.4, R4.5: recovering a segment with an offset below its base throws IllegalArgumentException (split
    refused); the partition does not load and the broker stops."""
    part = logdir.partition("t", 0, {0: [kit.batch(0, 3)], 3: [kit.batch(3, 2)]})
    data = kit.batch(1, 2) + kit.batch(5, 2)  # offsets 1..2 below the base 5
    (part.path / kit.name(5, ".log")).write_bytes(data)
    root = logdir.finish(clean=False, recovery_points={("t", 0): 0})
    result = verify_paths([root], jobs=1)
    fails = [f for f in result.findings() if f.kind == "load-fails"]
    assert [(Path(f.path).name, f.severity) for f in fails] == [(kit.name(5, ".log"), "error")]
    path = (part.path / kit.name(5, ".log")).absolute()
    assert fails[0].message == (
        "the next start fails: java.lang.IllegalArgumentException: Split operation is only permitted for segments "
        f"with overflow, and the problem path is {path} -- the broker stops [R4.5 LocalLog.splitOverflowedSegment]")
    below = [f for f in result.findings() if f.kind == "offset-below-base"]
    assert below and "split" not in below[0].message
    assert result.exit_code() == 1


# -- cross-checks against the log directory's checkpoints -------------------------------------------


def test_recovery_point_and_log_start_beyond_the_log_end(logdir, three):
    """R4.6 (rp lowered to the log end), R8.2 (log start beyond the end: every segment deleted)."""
    root = logdir.finish(clean=True, recovery_points={("t", 0): 50}, log_starts={("t", 0): 40},
                         high_watermarks={("t", 0): 10})
    found = load(root)
    by_kind: dict[str, list] = {}
    for f in found:
        by_kind.setdefault(f[1], []).append(f)
    assert [f[:5] for f in by_kind["recovery-point"]] == [
        ("recovery-point-offset-checkpoint", "recovery-point", "warning", None, 50)]
    assert by_kind["recovery-point"][0][5] == (
        "t-0: recovery point 50 is beyond the log end 40: data Kafka had flushed is missing; the next start lowers "
        "it to 40 [R4.6 LogLoader.recoverLog]")
    assert [f[:5] for f in by_kind["log-start-offset"]] == [
        ("log-start-offset-checkpoint", "log-start-offset", "error", None, 40)]
    assert by_kind["log-start-offset"][0][5] == (
        "t-0: log start offset 40 is beyond the log end: the next start deletes every segment and starts an empty "
        "one at 40 [R8.2 LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd]")
    assert sorted(f[0] for f in by_kind["load-deletes"]) == [kit.name(b, ".log") for b in (0, 5, 7)]
    assert all(f[5].endswith("[R8.2 LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd -> "
                             "LocalLog.deleteSegmentFiles]") for f in by_kind["load-deletes"])


def test_checkpoint_entries_and_directories_that_do_not_match(logdir, three):
    """R1.1, R1.2: an entry with no directory loads nothing; a directory with no entry starts from rp 0."""
    other = logdir.partition("u", 0, {0: [kit.batch(0, 2)]})
    root = logdir.finish(clean=True, recovery_points={("t", 0): 10, ("gone", 3): 42},
                         high_watermarks={("t", 0): 10, ("u", 0): 2, ("gone", 3): 42})
    assert other.path.is_dir()
    found = sorted(f for f in load(root) if f[1].startswith("checkpoint-"))
    assert found == [
        ("recovery-point-offset-checkpoint", "checkpoint-missing-entry", "info", None, None,
         "no entry for u-0: its recovery point is 0, so no segment is recovered now (.kafka_cleanshutdown), the next "
         "unclean start recovers the whole log [R1.2 LogManager.loadLog]"),
        ("recovery-point-offset-checkpoint", "checkpoint-orphan", "warning", None, 42,
         "entry gone-3 (offset 42) has no partition directory in this log directory: the next start loads nothing "
         "for it [R1.1 LogManager.loadLogs]"),
        ("replication-offset-checkpoint", "checkpoint-orphan", "warning", None, 42,
         "entry gone-3 (offset 42) has no partition directory in this log directory: the next start loads nothing "
         "for it [R1.1 LogManager.loadLogs]"),
    ]


def test_epochs_no_batch_carries(logdir):
    """An epoch entry whose offsets hold no batch of that epoch (data missing unless compacted)."""
    logdir.partition("t", 0, {0: [kit.batch(0, 3, epoch=0), kit.batch(3, 3, epoch=2)]}, epochs=[(0, 0), (1, 2), (2, 3)])
    root = logdir.finish(clean=True)
    assert load(root) == [(
        "leader-epoch-checkpoint", "leader-epoch", "warning", 8, 2,
        "no batch carries leader epoch 1 (entry (1 2)): its batches are missing, which is normal only if compaction "
        "removed them")]


def test_producer_snapshot_beyond_the_log_end(logdir, three):
    """R6.3b: truncateAndReload deletes snapshots above the log end."""
    (three.path / kit.name(99, ".snapshot")).write_bytes((three.path / kit.name(10, ".snapshot")).read_bytes())
    root = logdir.finish(clean=True)
    assert load(root) == [(
        kit.name(99, ".snapshot"), "snapshot-beyond-end", "warning", None, 99,
        "producer snapshot at offset 99 is beyond the log end 10: the next start deletes it "
        "[R6.3b ProducerStateManager.truncateAndReload]")]


def test_a_healthy_log_directory_says_nothing_about_the_load(logdir, three):
    root = logdir.finish(clean=True)
    result = verify_paths([root], jobs=1)
    assert list(result.findings()) == [] and result.exit_code() == 0


def test_a_lone_file_speaks_only_of_itself(logdir, three):
    """A file given alone: the model runs for its partition directory, statements only about that file."""
    flip(three.file(".log", 5), -3)
    root = logdir.finish(clean=False, recovery_points={("t", 0): 0})
    result = verify_paths([three.file(".log", 7)], jobs=1)
    assert [(Path(f.path).name, f.kind) for f in result.findings()] == [(kit.name(7, ".log"), "load-deletes")]
    assert root.is_dir()


def test_a_file_outside_a_partition_directory_gets_no_load_claim(tmp_path):
    path = tmp_path / kit.name(0, ".log")
    data = bytearray(kit.batch(0, 3) + kit.batch(3, 2))
    data[70] ^= 0xFF
    path.write_bytes(bytes(data))
    [finding] = verify_paths([path], jobs=1).findings()
    assert finding.kind == "crc" and "Kafka's recovery" not in finding.message and "next start" not in finding.message


# -- verify, the model and recover --dry-run agree ----------------------------------------------------

CASES = {
    "clean-damage": dict(damage=(0, 70), finish=dict(clean=True)),
    "unclean-damage": dict(damage=(5, -3), finish=dict(clean=False, recovery_points={("t", 0): 0})),
    "index-missing": dict(damage=(5, -3), drop=(5, ".index"), finish=dict(clean=False, recovery_points={("t", 0): 0})),
    "below-rp": dict(damage=(0, 70), finish=dict(clean=False, recovery_points={("t", 0): 7})),
    "log-start": dict(finish=dict(clean=True, log_starts={("t", 0): 40})),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_verify_and_the_model_agree(logdir, three, case):
    spec = CASES[case]
    if "damage" in spec:
        base, at = spec["damage"]
        flip(three.file(".log", base), at)
    if "drop" in spec:
        three.file(spec["drop"][1], spec["drop"][0]).unlink()
    root = logdir.finish(**spec["finish"])
    [pred] = predict_log_dir(root).partitions
    result = verify_paths([root], jobs=1)
    deleted = sorted(int(Path(f.path).name[:20]) for f in result.findings() if f.kind == "load-deletes")
    assert deleted == pred.deleted_segments
    cuts = {int(Path(f.path).name[:20]): f.position for f in result.findings() if f.kind == "load-truncates"}
    model_cuts = {int(a.path.split("/")[-1][:20]): a.size for a in pred.actions
                  if a.kind == "truncate" and a.path.endswith(".log")}
    assert cuts == model_cuts
    fails = [f for f in result.findings() if f.kind == "load-fails"]
    assert bool(fails) == (pred.error is not None)
