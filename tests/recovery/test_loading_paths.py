"""The model of Kafka 4.3.0's log loading on small whole log directories, one loading path per test.

Each docstring names the rules of docs/kafka-log-loading.md and the Kafka
method the expected result comes from.  Every test also proves the model
only reads: tree, contents, mtimes and atimes are the same afterwards.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kseg.recovery.loading import predict_broker, predict_log_dir

SEGMENTS = {0: [(0, 3, 0), (3, 2, 1)], 5: [(5, 2, 1)], 7: [(7, 3, 2)]}
EPOCHS = [(0, 0), (1, 3), (2, 7)]


@pytest.fixture
def three(logdir, kit):
    """t-0 with segments at 0, 5, 7 (offsets 0..9, epochs 0, 1, 2), as a clean shutdown leaves it."""
    segs = {base: [kit.batch(o, n, epoch=e) for o, n, e in specs] for base, specs in SEGMENTS.items()}
    return logdir.partition("t", 0, segs, epochs=EPOCHS)


def predict(logdir, readonly, **finish):
    root = logdir.finish(**finish)
    readonly.start(root)
    pred = predict_log_dir(root)
    readonly.check()
    return pred


def damage(path: Path, at: int = -3) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


def changes(part):
    """(kind, file, rule) of the actions that change content, file names only."""
    return [(a.kind, a.path.split("/", 1)[1], a.rule) for a in part.actions if a.changes_content]


def test_clean_shutdown_healthy_is_clean(logdir, three, readonly):
    """R1.1, R4.1 (no recoverLog), R5.5 (readNextOffset), R6.3b (snapshot at LEO: nothing read), R7.5 (same
    content rewritten), R4.7 (resize only): LogLoader.load on a clean shutdown."""
    pred = predict(logdir, readonly)
    assert pred.clean_shutdown and not pred.offline and not pred.stops_broker
    assert [a.path for a in pred.actions] == [".kafka_cleanshutdown"]
    [part] = pred.partitions
    assert part.as_json() | {"path": None} == {
        "type": "partition", "path": None, "topic": "t", "partition": 0, "outcome": "clean",
        "log_start_offset": 0, "log_end_offset": 10, "truncated_bytes": 0, "deleted_segments": [],
        "lost_offsets": [], "error": None, "leader_epochs": [[0, 0], [1, 3], [2, 7]],
        "recovery_point": 10, "number_of_segments": 3, "disposition": "current", "renamed_to": None,
        "files_created": [], "files_changed": [], "files_deleted": [], "pending_async_deletes": [],
        "lost_offsets_behind_damage": [], "unserved_offsets": []}
    assert part.recovery_point == 10 and part.high_watermark == 10
    assert changes(part) == []
    assert {(a.kind, a.rule) for a in part.actions} == {("resize", "R4.7"), ("rewrite", "R7.5")}


def test_unclean_recovers_active_segment_only(logdir, three, readonly):
    """R4.2 (LogSegments.values from the segment containing rp: the active one), R3.5/R6.3b (the temporary
    ProducerStateManager deletes the snapshot above the base, writes them again): LogLoader.recoverLog."""
    [part] = predict(logdir, readonly, clean=False).partitions
    assert (part.outcome, part.log_end_offset, part.truncated_bytes, part.lost_offsets) == ("rebuilt", 10, 0, [])
    assert changes(part) == [  # 10.snapshot is deleted and written again with the same bytes: no change
        ("create", "00000000000000000005.snapshot", "R4.3"),
        ("create", "00000000000000000007.snapshot", "R4.3"),
    ]
    assert [(a.kind, a.path.split("/", 1)[1]) for a in part.actions if a.path.endswith("10.snapshot")] == [
        ("delete", "00000000000000000010.snapshot"), ("create", "00000000000000000010.snapshot")]
    recovered = {a.path.split("/")[1] for a in part.actions if a.method == "LogSegment.recover"}
    assert recovered == {"00000000000000000007.index", "00000000000000000007.timeindex"}


def test_unclean_damage_index_present_deletes_later_segments(logdir, three, readonly):
    """R4.2, R4.3 (truncatedBytes > 0 -> removeAndDeleteSegmentsAsync of every later segment), R7.4 (epoch 2
    starts at the new LEO: dropped): LogLoader.recoverLog with rp inside segment 0, damage in segment 5."""
    damage(three.file(".log", 5))
    [part] = predict(logdir, readonly, clean=False, recovery_points={("t", 0): 3}).partitions
    assert part.outcome == "truncated"
    assert (part.log_end_offset, part.recovery_point, part.truncated_bytes) == (5, 3, 97)
    assert part.deleted_segments == [7] and part.lost_offsets == [[5, 9]]
    assert part.leader_epochs == [[0, 0], [1, 3]]
    renamed = [a.target.split("/")[1] for a in part.actions if a.kind == "rename"]
    assert renamed == ["00000000000000000007.log.deleted", "00000000000000000007.index.deleted",
                       "00000000000000000007.timeindex.deleted"]


@pytest.mark.parametrize("clean", [True, False])
def test_missing_index_recovered_early_no_deletion(logdir, three, readonly, clean):
    """R3.3 (NoSuchFileException from sanityCheck), R3.4 (recoverSegment in loadSegmentFiles whatever the
    shutdown or rp; the byte count is discarded: no later segment deleted, an offset gap remains)."""
    damage(three.file(".log", 5))
    three.file(".index", 5).unlink()
    [part] = predict(logdir, readonly, clean=clean, recovery_points={("t", 0): 3}).partitions
    assert (part.outcome, part.log_end_offset, part.truncated_bytes) == ("truncated", 10, 97)
    assert part.deleted_segments == [] and part.lost_offsets == [[5, 6]]
    assert part.leader_epochs == [[0, 0], [1, 3], [2, 7]]
    early = [a for a in part.actions if a.rule == "R3.5"]
    assert [(a.kind, a.path.split("/")[1]) for a in early if a.method == "LogSegment.recover"] == [
        ("create", "00000000000000000005.index"), ("rewrite", "00000000000000000005.timeindex"),
        ("truncate", "00000000000000000005.log")]
    assert part.recovery_point == (10 if clean else 3)


def test_clean_shutdown_damage_below_rp_is_served(logdir, three, readonly):
    """R4.1 (no recoverLog on a clean start), R3.3 (sanityCheck does not read the .log): the damaged batch
    stays and is served; nothing changes."""
    damage(three.file(".log", 5))
    [part] = predict(logdir, readonly).partitions
    assert (part.outcome, part.log_end_offset, part.lost_offsets) == ("clean", 10, [])


def test_clean_shutdown_zeros_at_end_fail(logdir, three, readonly):
    """R5.4, R5.5: readNextOffset frames a size of 0 -> CorruptRecordException, not an IOException: R9.1,
    the broker stops (LogLoader.recoverLog -> deleteSegmentsIfLogStartGreaterThanLogEnd)."""
    log = three.file(".log", 7)
    log.write_bytes(log.read_bytes() + bytes(40))
    pred = predict(logdir, readonly)
    [part] = pred.partitions
    assert part.outcome == "fails" and part.log_end_offset is None and part.leader_epochs is None
    assert part.error.exception == "org.apache.kafka.common.errors.CorruptRecordException"
    assert part.error.message == (f"Found record size 0 smaller than minimum record overhead (14) in file "
                                  f"{log.absolute()}.")
    assert part.error.consequence == "broker stops" and pred.stops_broker


def test_unclean_zeros_at_end_truncated(logdir, three, readonly):
    """R5.1, R5.4 (recover stops quietly at the size-0 frame and truncates), R4.3 (bytes cut, nothing after)."""
    log = three.file(".log", 7)
    log.write_bytes(log.read_bytes() + bytes(40))
    [part] = predict(logdir, readonly, clean=False).partitions
    assert (part.outcome, part.log_end_offset, part.truncated_bytes, part.lost_offsets) == ("truncated", 10, 40, [])
    assert part.deleted_segments == []


def test_stale_active_index_clean_log_end_falls_back(logdir, three, readonly):
    """R5.5: the last .index slot points past the data -> read returns null -> LEO = base of the active
    segment; every byte stays, the batches beyond are never served; R7.4 cuts epoch 2; R6.3b deletes the
    snapshot above the new LEO, replays from the log start and snapshots at the bases it passes and at LEO."""
    three.file(".index", 7).write_bytes(bytes.fromhex("00000002 00001000".replace(" ", "")))
    [part] = predict(logdir, readonly).partitions
    assert (part.outcome, part.log_end_offset, part.truncated_bytes) == ("rebuilt", 7, 0)
    assert part.lost_offsets == [] and part.unserved_offsets == [[7, 9]]  # Kafka's iterator still yields them
    assert part.leader_epochs == [[0, 0], [1, 3]]
    assert changes(part) == [
        ("rewrite", "leader-epoch-checkpoint", "R7.4"),
        ("delete", "00000000000000000010.snapshot", "R6.3b"),
        ("create", "00000000000000000005.snapshot", "R6.3b"),  # replay passes base 5 (offsetsToSnapshot)
        ("create", "00000000000000000007.snapshot", "R6.3b"),
    ]


def test_log_start_above_first_segment(logdir, three, readonly):
    """R8.1, R8.3 (no segment deleted at load), R7.5 (first epoch moved up to the raw checkpoint)."""
    [part] = predict(logdir, readonly, log_starts={("t", 0): 4}).partitions
    assert (part.outcome, part.log_start_offset, part.log_end_offset) == ("rebuilt", 4, 10)
    assert part.deleted_segments == [] and part.leader_epochs == [[1, 4], [2, 7]]
    assert changes(part) == [("rewrite", "leader-epoch-checkpoint", "R7.5")]


def test_log_start_beyond_log_end_deletes_everything(logdir, three, readonly):
    """R8.2 (deleteSegmentsIfLogStartGreaterThanLogEnd: every segment .deleted, clearAndFlush,
    truncateFullyAndStartAt), R4.6 (new empty segment at the checkpoint), R4.7, R6.3a (clean, no snapshot)."""
    [part] = predict(logdir, readonly, log_starts={("t", 0): 50}).partitions
    assert (part.outcome, part.log_start_offset, part.log_end_offset, part.recovery_point) == ("truncated", 50, 50, 50)
    assert part.deleted_segments == [0, 5, 7] and part.lost_offsets == [[0, 9]] and part.leader_epochs == []
    created = [a.path.split("/")[1] for a in part.actions if a.kind == "create"]
    assert created == ["00000000000000000050.log", "00000000000000000050.index", "00000000000000000050.timeindex",
                       "00000000000000000050.snapshot"]
    assert ("rewrite", "leader-epoch-checkpoint", "R7.6") in changes(part)


def test_control_key_short_unclean_fails(logdir, kit, readonly):
    """R5.2 (recover catches InvalidRecordException and cuts after the bad batch), R6.4/R6.5 (the final
    rebuildProducerState replays it and throws; nothing catches it: the broker stops)."""
    txn = kit.batch(3, 2, producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True)
    part = logdir.partition("t", 0, {0: [kit.batch(0, 3)], 3: [txn, kit.control_batch(5, b"\x00"), kit.batch(6, 1)]})
    for suffix in (".index", ".timeindex"):
        part.file(suffix, 3).unlink()
    [pred] = predict(logdir, readonly, clean=False, recovery_points={("t", 0): 0}).partitions
    assert pred.outcome == "fails" and pred.error.exception == "org.apache.kafka.common.InvalidRecordException"
    assert pred.error.message == ("Invalid value size found for control record key. "
                                  "Must have at least 4 bytes, but found only 1")
    assert pred.error.consequence == "broker stops" and pred.lost_offsets == [[6, 6]]


def test_control_key_short_clean_with_snapshot_is_clean(logdir, kit, readonly):
    """R6.5: clean start, snapshot at LEO -> rebuildProducerState reads nothing; R3.3 does not read the .log."""
    txn = kit.batch(3, 2, producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True)
    logdir.partition("t", 0, {0: [kit.batch(0, 3)], 3: [txn, kit.control_batch(5, b"\x00"), kit.batch(6, 1)]})
    [pred] = predict(logdir, readonly).partitions
    assert (pred.outcome, pred.log_end_offset, pred.error) == ("clean", 7, None)


def test_offset_below_base_split_refused(logdir, kit, readonly):
    """R4.4, R4.5: recover -> LogSegmentOffsetOverflowException -> LocalLog.splitOverflowedSegment requires
    hasOverflow (last batch above base + MAX_INT); an offset below base -> IllegalArgumentException."""
    part = logdir.partition("t", 0, {0: [kit.batch(0, 3)], 10: [kit.batch(10, 2), kit.batch(4, 1)]})
    part.file(".index", 10).unlink()
    [pred] = predict(logdir, readonly).partitions
    assert pred.outcome == "fails" and pred.error.exception == "java.lang.IllegalArgumentException"
    assert pred.error.message == ("Split operation is only permitted for segments with overflow, and the problem "
                                  f"path is {part.file('.log', 10).absolute()}")
    assert pred.error.consequence == "broker stops"


def test_offset_below_base_clean_with_index_not_noticed(logdir, kit, readonly):
    """R5.5 (src): on a clean start with the .index present nothing recovers the segment; readNextOffset
    takes the last batch's next offset (5), below the segment's own offsets."""
    logdir.partition("t", 0, {0: [kit.batch(0, 3)], 10: [kit.batch(10, 2), kit.batch(4, 1)]})
    [pred] = predict(logdir, readonly).partitions
    assert (pred.outcome, pred.log_end_offset, pred.error) == ("rebuilt", 5, None)


@pytest.mark.parametrize(("text", "exception", "cause", "consequence"), [
    ("0\n1\n0 x\n", "java.lang.NumberFormatException", None, "broker stops"),
    ("0\n2\n0 0\n", "org.apache.kafka.common.errors.KafkaStorageException",
     "java.io.IOException: Expected [2] entries in checkpoint file [{p}], but found only [1]", "log directory goes offline"),
    ("1\n0\n", "org.apache.kafka.common.errors.KafkaStorageException",
     "java.io.IOException: Unrecognised version:1, expected version: 0 in checkpoint file at: {p}",
     "log directory goes offline"),
    ("0\n1\n 0 5\n", "org.apache.kafka.common.errors.KafkaStorageException",
     "java.io.IOException: Malformed line in checkpoint file [{p}]:  0 5", "log directory goes offline"),
])
def test_malformed_leader_epoch_checkpoint(logdir, kit, readonly, text, exception, cause, consequence):
    """R7.8 (CheckpointReadBuffer.read, LeaderEpochCheckpointFile.Formatter.fromString,
    CheckpointFileWithFailureHandler.read), R9.1 (IOException-caused -> offline; anything else -> halt)."""
    part = logdir.partition("t", 0, {0: [kit.batch(0, 3)]})
    path = part.path / "leader-epoch-checkpoint"
    path.write_text(text)
    pred = predict(logdir, readonly)
    [p] = pred.partitions
    assert p.outcome == "fails" and p.error.exception == exception and p.error.consequence == consequence
    if cause is None:
        assert p.error.message == 'For input string: "x"'
    else:
        assert p.error.message == f"Error while reading checkpoint file {path.absolute()}"
        assert p.error.cause == cause.format(p=path.absolute())
    assert pred.offline == (consequence == "log directory goes offline")


def test_missing_leader_epoch_checkpoint_created(logdir, three, readonly):
    """R7.2: the LeaderEpochCheckpointFile constructor creates the file (0 bytes) before anything else."""
    (three.path / "leader-epoch-checkpoint").unlink()
    [part] = predict(logdir, readonly).partitions
    assert part.outcome == "rebuilt" and part.leader_epochs == []
    assert changes(part)[0] == ("create", "leader-epoch-checkpoint", "R7.2")


def test_leftovers_deleted_cleaned_swap(logdir, three, readonly, kit):
    """R2.1 (*.deleted and *.cleaned deleted; a swap at or above the lowest .cleaned offset deleted),
    R2.2-R2.4 (a .log.swap replaces the files in [its base, its next offset) and is renamed)."""
    (three.path / "00000000000000000003.log.deleted").write_bytes(b"x")
    (three.path / "00000000000000000007.log.cleaned").write_bytes(b"x")
    (three.path / "00000000000000000008.log.swap").write_bytes(b"x")
    (three.path / "00000000000000000005.log.swap").write_bytes(kit.batch(5, 2, epoch=1))
    [part] = predict(logdir, readonly).partitions
    # the swap holds the very bytes of the .log it replaces: no .log byte changes (LoadLogDir says rebuilt,
    # tests/interop/test_load_outcome_vs_kafka.py::clean_swap_same_bytes)
    assert part.outcome == "rebuilt"
    assert changes(part) == [
        ("delete", "00000000000000000003.log.deleted", "R2.1"),
        ("delete", "00000000000000000008.log.swap", "R2.1"),
        ("delete", "00000000000000000007.log.cleaned", "R2.1"),
        ("create", "00000000000000000005.index.swap", "R2.2"),
        ("delete", "00000000000000000005.index", "R2.3"),
        ("delete", "00000000000000000005.log", "R2.3"),
        ("delete", "00000000000000000005.timeindex", "R2.3"),
        ("rename", "00000000000000000005.index.swap", "R2.4"),
        ("rename", "00000000000000000005.log.swap", "R2.4"),
        ("create", "00000000000000000005.timeindex", "R3.3"),
    ]
    assert part.log_end_offset == 10


def test_malformed_recovery_point_checkpoint(logdir, three, readonly):
    """R1.1 (2), R8.5, R9.4: a read failure means no entries (recover everything from 0), and the IOException
    went through CheckpointFileWithFailureHandler, which reports the log directory offline."""
    root = logdir.finish(clean=False)
    (root / "recovery-point-offset-checkpoint").write_text("0\n2\nt 0 10\n")
    readonly.start(root)
    pred = predict_log_dir(root)
    readonly.check()
    read = pred.checkpoints["recovery-point-offset-checkpoint"]
    assert read.entries == {} and read.reports_offline and pred.offline
    [part] = pred.partitions
    assert part.recovery_point_checkpoint == 0 and part.recovery_point == 0
    assert pred.directories_without_entries == ["t-0"]


def test_several_log_dirs_and_bad_names(tmp_path, kit, readonly):
    """R1.1 (marker per log dir; a name that is not topic-partition -> KafkaException, broker stops), R2.7
    (-delete: no recoverLog, LEO 0), checkpoint entries without a directory."""
    one, two = kit.LogDir(tmp_path / "d1"), kit.LogDir(tmp_path / "d2")
    one.partition("a", 0, {0: [kit.batch(0, 2)]})
    two.partition("b", 1, {0: [kit.batch(0, 4)]})
    gone = two.partition("c", 2, {0: [kit.batch(0, 1)]})
    gone.path.rename(two.path / "c-2.0123456789abcdef0123456789abcdef-delete")
    one.finish(clean=True)
    two.finish(clean=False)
    readonly.start(tmp_path)
    broker = predict_broker([one.path, two.path])
    readonly.check()
    d1, d2 = broker.log_dirs
    assert d1.clean_shutdown and not d2.clean_shutdown and not broker.broker_stops
    assert [p.outcome for p in d1.partitions] == ["clean"]
    b1, c2 = d2.partitions
    assert (b1.topic, b1.log_end_offset, c2.kind, c2.log_end_offset) == ("b", 4, "delete", 0)
    assert d2.leftovers == ["c-2.0123456789abcdef0123456789abcdef-delete"]
    assert d2.entries_without_directory == [("recovery-point-offset-checkpoint", "c", 2, 1),
                                            ("replication-offset-checkpoint", "c", 2, 1)]
    (tmp_path / "d1" / "lost+found").mkdir()
    bad = predict_log_dir(tmp_path / "d1")
    assert bad.error.exception == "org.apache.kafka.common.KafkaException" and bad.stops_broker
    assert bad.error.message.startswith(f"Found directory {(tmp_path / 'd1' / 'lost+found').resolve()}, 'lost+found'")
