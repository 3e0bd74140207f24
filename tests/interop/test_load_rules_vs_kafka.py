"""The loading model's exceptions and structural rules against Kafka 4.3.0's own load (LoadLogDir).

Every case is a log directory written as Kafka leaves it (tests/logdirs.py), then damaged as its rule
needs; all of them are loaded by one LoadLogDir JVM.  For each partition the model's outcome, offsets,
deleted segments, truncated bytes, lost offsets, error (exception, message, cause), broker effect and the
names of the files the load leaves must equal Kafka's, and for the log directory the effect (offline /
the broker does not start).  Each case also pins
Kafka's own answer for the point it is about, so a driver that stopped doing the damage's work would
fail here rather than agree with a model that does not do it either.

LoadLogDir runs with ``--no-close``: a broker start does not close its logs, and ``UnifiedLog.close``
goes through ``LocalLog.maybeHandleIOException``, which throws for every partition of a log directory
already reported offline -- a failure of the driver's stop, not of the start (R9.4).  Without the close
the active segment's indexes stay preallocated (R4.7); the model does not count that resize as a
change (it is trimmed back at the next clean close), so a partition whose only changes are those two
files is compared as ``clean``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from kafka_storage import SHARED, KafkaStorage
from oracle import find_java

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.snapshot import ProducerEntry, encode_snapshot, read_snapshot
from kseg.recovery.indexes import build_indexes
from kseg.recovery.loading import (
    BROKER_STOPS,
    DIR_OFFLINE,
    LogDirPrediction,
    PartitionPrediction,
    predict_broker,
    predict_log_dir,
)
from kseg.recovery.loading.epochs import EpochCache
from kseg.recovery.loading.partition import Loader, LoadInputs
from kseg.recovery.loading.snapshots import ProducerStates
from kseg.recovery.loading.state import PartitionDir
from kseg.recovery.producer_map import ProducerMap
from tests.logdirs import LogDir, Partition, batch
from tests.support import REPO

RP, LSO = "recovery-point-offset-checkpoint", "log-start-offset-checkpoint"
RESIZED = {".index": 10 * 1024 * 1024, ".timeindex": 10 * 1024 * 1024 - 10 * 1024 * 1024 % 12}
TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
FUTURE = "u-0.7b3c45e1f0d24a0f9c1e2d3f4a5b6c7d-future"


@dataclass
class Case:
    """A damaged log directory and what Kafka is known to do with it (checked before the comparison)."""

    build: Callable[[Path], None]
    kafka: dict[str, dict[str, object]] = field(default_factory=dict)  # dir -> expected LoadLogDir fields
    effect: str | None = None  # the log dir's broker_effect


def _three_segments(root: Path, clean: bool = True, **finish: object) -> tuple[LogDir, Partition]:
    logdir = LogDir(root)
    part = logdir.partition("t", 0, {0: [batch(0, 3), batch(3, 2)], 5: [batch(5, 4)], 9: [batch(9, 2)]})
    logdir.finish(clean=clean, **finish)  # type: ignore[arg-type]
    return logdir, part


def _swap(part: Partition, data: bytes, base: int = 0, indexes: bool = True) -> None:
    """A ``.log.swap`` (and its index swaps) as ``LocalLog.replaceSegments`` leaves it before the old files go."""
    part.file(".log.swap", base).write_bytes(data)
    if indexes:
        build = build_indexes(data, base)
        part.file(".index.swap", base).write_bytes(build.offset_index_bytes())
        part.file(".timeindex.swap", base).write_bytes(build.time_index_bytes())


# ---------------------------------------------------------------- 1. a .swap covering several segments


def swap_two(root: Path) -> None:
    _, part = _three_segments(root)
    _swap(part, part.segments[0] + part.segments[5])


def swap_two_without_indexes(root: Path) -> None:
    _, part = _three_segments(root)
    _swap(part, part.segments[0] + part.segments[5], indexes=False)


def swap_compacted(root: Path) -> None:
    """The cleaner dropped offsets 0-2: the swap holds 3-8 under the name of segment 0."""
    _, part = _three_segments(root)
    _swap(part, batch(3, 2) + part.segments[5])


def swap_all_unclean(root: Path) -> None:
    _, part = _three_segments(root, clean=False)
    _swap(part, part.segments[0] + part.segments[5] + part.segments[9])


# ---------------------------------------------------------------- 4. an overflow split that goes ahead

BIG = 3_000_000_000  # more than Integer.MAX_VALUE above base 0: this batch cannot be indexed in segment 0


def _overflowing(root: Path, segments: dict[int, list[bytes]], clean: bool = False,
                 drop_index: bool = False) -> None:
    """One segment whose last batch lies past base + 2^31 - 1 (real batches, as old brokers could write)."""
    logdir = LogDir(root)
    part = logdir.partition("t", 0, segments)
    logdir.finish(clean=clean, recovery_points={("t", 0): 0})
    if drop_index:
        part.file(".index").unlink()


def _split(segments: dict[int, list[bytes]], **kw: bool) -> Callable[[Path], None]:
    return lambda root: _overflowing(root, segments, **kw)


# ---------------------------------------------------------------- 5. producer expiry at reload

NOW_MS = time.time_ns() // 1_000_000  # the data is dated from the run's clock, never from a fixed date
HOUR, DAY = 3_600_000, 86_400_000


def _producers_snapshot() -> bytes:
    """A snapshot at offset 5: producer 7 idle 2 days (expires), 8 and 100 idle 1 hour, 9 idle 3 days with an
    open transaction (kept: expiry spares open transactions).  100 sorts before 8 in a HashMap of 16 buckets."""
    return encode_snapshot([
        ProducerEntry(7, 0, 4, 2, 2, NOW_MS - 2 * DAY, -1, -1),
        ProducerEntry(8, 1, 9, 4, 1, NOW_MS - HOUR, -1, -1),
        ProducerEntry(9, 2, 0, 3, 0, NOW_MS - 3 * DAY, 5, 3),
        ProducerEntry(100, 0, 2, 1, 2, NOW_MS - HOUR, 3, -1),
    ])


def expiry(root: Path, clean: bool) -> None:
    """Segments 0 and 5; the only snapshot is at 5 (none at the log end 9), so the load reloads it and replays
    5..9, where producer 11 (dated 2023: replay never expires) writes one batch."""
    logdir = LogDir(root)
    part = logdir.partition("t", 0, {0: [batch(0, 3), batch(3, 2)],
                                     5: [batch(5, 2, producer_id=11, producer_epoch=0, base_sequence=0),
                                         batch(7, 2)]}, snapshot=False)
    part.file(".snapshot", 5).write_bytes(_producers_snapshot())
    logdir.finish(clean=clean, recovery_points={("t", 0): 5})


def _fixture_copy(source: Path, marker: bool, rp_zero: bool = False) -> Callable[[Path], None]:
    """A copy of a fixture log dir (each partition given a topic id, so that none is renamed -stray), started
    clean or unclean, optionally with every recovery point 0: real producer, transaction and marker batches."""
    def build(root: Path) -> None:
        shutil.copytree(source, root)
        for sub in root.iterdir():
            if sub.is_dir() and not sub.name.startswith("__cluster_metadata"):
                if not (sub / "partition.metadata").exists():
                    (sub / "partition.metadata").write_text(f"version: 0\ntopic_id: {TOPIC_ID}")
        (root / ".kafka_cleanshutdown").unlink(missing_ok=True)
        if marker:
            (root / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":5}')
        if rp_zero:
            (root / RP).write_text("0\n0\n")
    return build


TXN_LOGS = REPO / "fixtures" / "txn" / "logs"
REAL_LOGS = REPO / "fixtures" / "real" / "kafka-logs"
SNAPSHOT_CASES = ("expiry_clean", "expiry_unclean", "rp_wrong_count_unclean", "unclean_same_snapshot",
                  "txn_clean", "txn_unclean", "txn_unclean_rp0", "real_clean", "real_unclean_rp0")


def unclean_same_snapshot(root: Path) -> None:
    """An unclean start recovers the active segment; its temporary producer state writes snapshots at 5 and 9,
    and deletes the one at the log end and writes it again with the same bytes (no producer batches)."""
    _three_segments(root, clean=False)


# ---------------------------------------------------------------- 2. the offset checkpoints


def _two_partitions(root: Path, file: str, text: bytes, clean: bool = True, stray: bool = False) -> None:
    logdir = LogDir(root)
    logdir.partition("t", 0, {0: [batch(0, 3), batch(3, 2)], 5: [batch(5, 4)]})
    other = logdir.partition("u", 0, {0: [batch(0, 3)]})
    if stray:
        (other.path / "partition.metadata").unlink()
    logdir.finish(clean=clean, log_starts={("t", 0): 3})
    (root / file).write_bytes(text)


def _checkpoint_case(file: str, text: bytes, **kw: bool) -> Callable[[Path], None]:
    return lambda root: _two_partitions(root, file, text, **kw)


def _already_offline() -> dict[str, object]:
    return {"outcome": "fails", "error": ("org.apache.kafka.common.errors.KafkaStorageException",
                                          "The log dir {logdir} is already offline due to a previous IO exception.")}


def future_without_metadata(root: Path) -> None:
    """A ``-future`` directory (alter-log-dirs copy) without ``partition.metadata``: ``isStray`` applies to it too."""
    logdir = LogDir(root)
    logdir.partition("t", 0, {0: [batch(0, 3)]})
    part = logdir.partition("u", 0, {0: [batch(0, 2)]})
    (part.path / "partition.metadata").unlink()
    part.path.rename(root / FUTURE)
    logdir.finish()


# ---------------------------------------------------------------- 3. partition.metadata


def _metadata(data: bytes, clean: bool = True) -> Callable[[Path], None]:
    def build(root: Path) -> None:
        _, part = _three_segments(root, clean=clean)
        (part.path / "partition.metadata").write_bytes(data)
    return build


CASES: dict[str, Case] = {
    # 1. LogLoader.load's second pass deletes every file in [min swap base, max swap next offset)
    "swap_two": Case(swap_two, {"t-0": {"deleted_segments": [5], "outcome": "truncated", "lost_offsets": []}}),
    "swap_two_without_indexes": Case(swap_two_without_indexes, {"t-0": {"deleted_segments": [5]}}),
    "swap_compacted": Case(swap_compacted, {"t-0": {"deleted_segments": [5], "lost_offsets": [[0, 2]]}}),
    "swap_all_unclean": Case(swap_all_unclean, {"t-0": {"deleted_segments": [5, 9], "log_end_offset": 11}}),
    # 4. LogLoader.retryOnOffsetOverflow: recoverLog (unclean) or loadSegmentFiles (missing .index) splits
    "split_unclean": Case(_split({0: [batch(0, 3), batch(3, 2), batch(BIG, 2)]}),
                          {"t-0": {"outcome": "truncated", "log_end_offset": BIG + 2, "deleted_segments": [],
                                   "lost_offsets": [], "truncated_bytes": 97}}),
    "split_missing_index": Case(_split({0: [batch(0, 3), batch(3, 2), batch(BIG, 2)]}, clean=True, drop_index=True),
                                {"t-0": {"log_end_offset": BIG + 2, "lost_offsets": []}}),
    "split_three": Case(_split({0: [batch(0, 3), batch(BIG, 2), batch(2 * BIG, 1)]}),
                        {"t-0": {"log_end_offset": 2 * BIG + 1, "truncated_bytes": 176}}),
    "split_then_segment": Case(_split({0: [batch(0, 3), batch(BIG, 2)], BIG + 2: [batch(BIG + 2, 2)]}),
                               {"t-0": {"log_end_offset": BIG + 4, "deleted_segments": []}}),
    "split_first_batch_above_base": Case(_split({0: [batch(10, 3), batch(BIG, 2)]}),
                                         {"t-0": {"deleted_segments": [0], "lost_offsets": [], "error": None}}),
    # 5. ProducerStateManager.loadFromSnapshot drops expired producers; takeSnapshot writes the HashMap
    "expiry_clean": Case(lambda root: expiry(root, True), {"t-0": {"outcome": "rebuilt", "log_end_offset": 9}}),
    "expiry_unclean": Case(lambda root: expiry(root, False), {"t-0": {"outcome": "rebuilt", "log_end_offset": 9}}),
    "unclean_same_snapshot": Case(unclean_same_snapshot, {"t-0": {"outcome": "rebuilt", "log_end_offset": 11}}),
    "rp_wrong_count_unclean": Case(_checkpoint_case(RP, b"0\n1\nt 0 9\nu 0 3\n", clean=False),
                                   # rebuilt: the dir is offline, the broker halts, R4.7's resize stays (R4.8)
                                   {"u-0": {"outcome": "rebuilt"}}, effect="log_dir_offline"),
    "txn_clean": Case(_fixture_copy(TXN_LOGS, True), {"events-0": {"error": None}}),
    "txn_unclean": Case(_fixture_copy(TXN_LOGS, False), {"events-0": {"error": None}}),
    "txn_unclean_rp0": Case(_fixture_copy(TXN_LOGS, False, rp_zero=True), {"events-0": {"error": None}}),
    "real_clean": Case(_fixture_copy(REAL_LOGS, True), {"foo-0": {"log_end_offset": 204}}),
    "real_unclean_rp0": Case(_fixture_copy(REAL_LOGS, False, rp_zero=True), {"foo-0": {"log_end_offset": 204}}),
    # 2. recovery-point / log-start-offset checkpoints: an IOException reaches the failure channel
    "lso_wrong_count": Case(_checkpoint_case(LSO, b"0\n1\nt 0 3\nu 0 0\n"), effect="log_dir_offline"),
    "lso_too_few": Case(_checkpoint_case(LSO, b"0\n3\nt 0 3\nu 0 0\n"), effect="log_dir_offline"),
    "lso_version": Case(_checkpoint_case(LSO, b"1\n1\nt 0 3\n"), effect="log_dir_offline"),
    "lso_version_not_a_number": Case(_checkpoint_case(LSO, b"x\n"), effect="log_dir_offline"),
    "lso_count_not_a_number": Case(_checkpoint_case(LSO, b"0\nx\n"), effect="log_dir_offline"),
    "lso_two_fields": Case(_checkpoint_case(LSO, b"0\n1\nt 0\n"), effect="log_dir_offline"),
    "lso_offset_not_a_number": Case(_checkpoint_case(LSO, b"0\n2\nt 0 3\nu 0 x\n")),  # NFE: swallowed, not reported
    "lso_empty": Case(_checkpoint_case(LSO, b"")),
    "lso_not_utf8": Case(_checkpoint_case(LSO, b"0\n1\nt 0 \xff\n"), effect="log_dir_offline"),
    "rp_blank_entry": Case(_checkpoint_case(RP, b"0\n1\n\n"), effect="log_dir_offline"),
    "rp_leading_space": Case(_checkpoint_case(RP, b"0\n1\n t 0 9\n"), effect="log_dir_offline"),
    "rp_wrong_count": Case(_checkpoint_case(RP, b"0\n1\nt 0 9\nu 0 3\n"), effect="log_dir_offline"),
    "rp_version": Case(_checkpoint_case(RP, b"1\n1\nt 0 9\n"), effect="log_dir_offline"),
    "rp_partition_not_a_number": Case(_checkpoint_case(RP, b"0\n2\nt 0 9\nu x 3\n")),
    # ... and makes the stray rename of a partition without partition.metadata throw: the broker stops
    "lso_wrong_count_stray": Case(_checkpoint_case(LSO, b"0\n1\nt 0 3\nu 0 0\n", stray=True),
                                  {"u-0": _already_offline()}, effect="broker_does_not_start"),
    "rp_wrong_count_stray_unclean": Case(_checkpoint_case(RP, b"0\n1\nt 0 9\nu 0 3\n", clean=False, stray=True),
                                         {"u-0": _already_offline()}, effect="broker_does_not_start"),
    "future_without_metadata": Case(future_without_metadata, {FUTURE: {"disposition": "renamed_stray"}}),
    "lso_offset_not_a_number_stray": Case(_checkpoint_case(LSO, b"0\n2\nt 0 3\nu 0 x\n", stray=True),
                                          {"u-0": {"disposition": "renamed_stray", "error": None}}),
}

TID = TOPIC_ID.encode()
STOPS, OFFLINE = "broker_does_not_start", "log_dir_offline"
PMF_PATH = "{logdir}/t-0/partition.metadata"
PMF_ERROR = ("org.apache.kafka.common.errors.KafkaStorageException",
             f"Error while reading partition metadata file {PMF_PATH}")
MALFORMED = f"java.io.IOException: Malformed line in partition metadata file [{PMF_PATH}]: "
NPE = ("java.lang.NullPointerException", 'Cannot invoke "java.lang.CharSequence.length()" because "this.text" is null')
IAE = "java.lang.IllegalArgumentException"
#: 3. partition.metadata, read by the UnifiedLog constructor after the load: name -> (bytes, Kafka's error, effect)
METADATA: dict[str, tuple[bytes, tuple[str, ...] | None, str | None]] = {
    "empty": (b"", NPE, STOPS),
    "version_only": (b"version: 0\n", NPE, STOPS),
    "no_space": (b"version:0\ntopic_id: " + TID, (*PMF_ERROR, MALFORMED + "version:0"), OFFLINE),
    "version_not_a_number": (b"version: x\ntopic_id: " + TID, (*PMF_ERROR, MALFORMED + "version: x"), OFFLINE),
    "negative_version": (b"version: -1\ntopic_id: " + TID, (*PMF_ERROR, "java.io.IOException: Unrecognized version "
                                                                      f"of partition metadata file ({PMF_PATH}): -1"),
                         OFFLINE),
    "version_1": (b"version: 1\ntopic_id: " + TID, None, None),
    "blank_second_line": (b"version: 0\n\n", (*PMF_ERROR, MALFORMED), OFFLINE),
    "no_topic_id": (b"version: 0\ntopic_id:", (*PMF_ERROR, MALFORMED + "topic_id:"), OFFLINE),
    "zero_uuid": (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",
                  (*PMF_ERROR, f"java.io.IOException: Invalid topic ID in partition metadata file ({PMF_PATH})"),
                  OFFLINE),
    "not_utf8": (b"version: 0\ntopic_id: \xff", (*PMF_ERROR, "java.nio.charset.MalformedInputException: Input length = 1"),
                 OFFLINE),
    "bad_char": (b"version: 0\ntopic_id: AAAA.AAAAAAAAAAAAAAAAAQ", (IAE, "Illegal base64 character 2e"), STOPS),
    "non_latin1": ("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAA\u00e9".encode(), (IAE, "Illegal base64 character -17"),
                   STOPS),
    "short": (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAA", (IAE, "Last unit does not have enough valid bits"), STOPS),
    "one_char": (b"version: 0\ntopic_id: A", (IAE, "Input byte[] should at least have 2 bytes for base64 bytes"), STOPS),
    "12_bytes": (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAA",
                 (IAE, "Input string `AAAAAAAAAAAAAAAA` decoded as 12 bytes, which is not equal to the expected 16 "
                       "bytes of a base64-encoded UUID"), STOPS),
    "bad_padding": (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ=A",
                    (IAE, "Input byte array has wrong 4-byte ending unit"), STOPS),
    "after_padding": (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAQ==AA",
                      (IAE, "Input byte array has incorrect ending byte at 20"), STOPS),
    "too_long": (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ==A",
                 (IAE, "Input string with prefix `AAAAAAAAAAAAAAAAAAAAAQ==` is too long to be decoded as a base64 UUID"),
                 STOPS),
    "padded": (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ==", None, None),
    "extra_lines": (b"version: 0\ntopic_id: " + TID + b"\nanything\n", None, None),
}
for _key, (_data, _error, _effect) in METADATA.items():
    _facts = {"outcome": "fails" if _error else "clean", "error": _error}
    CASES[f"metadata_{_key}"] = Case(_metadata(_data), {"t-0": _facts}, effect=_effect)
CASES["metadata_empty_unclean"] = Case(_metadata(b"", clean=False), {"t-0": {"outcome": "fails", "error": NPE}},
                                       effect=STOPS)


@pytest.fixture(scope="module")
def loaded(kafka_storage: KafkaStorage, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[dict]]]:
    """Every case built and loaded by one LoadLogDir run (``--no-close``, see the module docstring)."""
    root = tmp_path_factory.mktemp("load-rules")
    builders = {n: c.build for n, c in CASES.items()} | ORDER_CASES
    for case_name, build in builders.items():
        build(root / case_name)
    groups = kafka_storage.load([root / n for n in builders], "--no-kafka-log", "--no-close")
    yield {n: (root / n, g) for n, g in zip(builders, groups, strict=True)}
    shutil.rmtree(root, ignore_errors=True)


def _order(stray_first: bool) -> Callable[[Path], None]:
    """Two partitions: one whose leader-epoch-checkpoint has a wrong count (its load reports the log dir offline
    through CheckpointFileWithFailureHandler), one without partition.metadata (to be renamed -stray).  LoadLogDir
    loads them in name order, a broker in any order: ``stray_first`` names the stray one ``a-0``."""
    def build(root: Path) -> None:
        logdir = LogDir(root)
        first = logdir.partition("a", 0, {0: [batch(0, 2)]})
        second = logdir.partition("b", 0, {0: [batch(0, 2)]})
        stray, broken = (first, second) if stray_first else (second, first)
        (stray.path / "partition.metadata").unlink()
        (broken.path / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n")
        logdir.finish()
    return build


#: not compared field for field: the model cannot know the recovery threads' order (R9.4)
ORDER_CASES = {"order_stray_first": _order(True), "order_stray_last": _order(False)}


@pytest.mark.parametrize(("case_name", "stray", "renamed"), [("order_stray_first", "a-0", True),
                                                              ("order_stray_last", "b-0", False)])
def test_stray_rename_after_another_partition_reports_the_dir(loaded: dict[str, tuple[Path, list[dict]]],
                                                              case_name: str, stray: str, renamed: bool) -> None:
    """The model predicts the rename with a note naming the partition whose load may fail it first; Kafka, in
    LoadLogDir's name order, does one of the two: renames it when it runs first, else throws 'already offline'."""
    path, objs = loaded[case_name]
    kafka = {o["dir"]: o for o in objs if o["type"] == "partition"}[stray]
    other = "b-0" if stray == "a-0" else "a-0"
    [pred] = [p for p in predict_log_dir(path).partitions if Path(p.path).name == stray]
    assert (pred.outcome, pred.error, pred.disposition) == ("clean", None, "renamed_stray")  # no file changes
    assert pred.notes == [f"the load of {other} reports this log dir offline (R9.4); if it runs first, this rename "
                          "throws KafkaStorageException and the broker stops"]
    if renamed:
        assert (kafka["disposition"], kafka["error"]) == ("renamed_stray", None)
    else:
        assert kafka["broker_effect"] == "broker_does_not_start"
        assert _error(kafka) == ("org.apache.kafka.common.errors.KafkaStorageException",
                                 f"The log dir {case_name} is already offline due to a previous IO exception.")


def _error(obj: dict) -> tuple[str, ...] | None:
    error = obj["error"]
    if error is None:
        return None
    causes = error["causes"]
    if not causes:
        return error["exception"], error["message"]
    return error["exception"], error["message"], f"{causes[0]['exception']}: {causes[0]['message']}"


def _closes(logdir_obj: dict) -> bool:
    """A broker closes this dir's logs: no offset checkpoint put it in the failure channel (R9.4, R4.8)."""
    return not any((logdir_obj[key] or {}).get("causes")
                   for key in ("recovery_point_checkpoint_error", "log_start_offset_checkpoint_error"))


def _kafka_outcome(obj: dict, closes: bool = True) -> str:
    """LoadLogDir's outcome (``--no-close``) in the model's terms, which are those of a load and its close (R4.8).

    The R4.7 resize of the active indexes, undone at the close, is not a change -- unless the broker
    never closes the dir (``closes`` False: it halts, R9.4).  A directory renamed ``-stray`` changes
    no file (§13): LoadLogDir and the model both compare the files.
    """
    changed = set(obj["files_changed"])
    resized = {n for n in changed if any(n.endswith(s) and obj["files_after"][n][0] == size
                                         for s, size in RESIZED.items())}
    outcome = obj["outcome"]
    if closes and outcome == "rebuilt" and changed == resized and not obj["files_created"] and not obj["files_deleted"]:
        outcome = "clean"
    return str(outcome)


def _kafka_facts(obj: dict, closes: bool = True) -> dict[str, object]:
    return {"outcome": _kafka_outcome(obj, closes), "error": _error(obj), "broker_effect": obj["broker_effect"],
            "log_start_offset": obj["log_start_offset"], "log_end_offset": obj["log_end_offset"],
            "deleted_segments": obj["deleted_segments"], "lost_offsets": obj["lost_offsets"],
            "truncated_bytes": obj["truncated_bytes"]}


def _model_error(pred: PartitionPrediction, parent: str) -> tuple[str, ...] | None:
    error = pred.error
    if error is None:
        return None
    found: tuple[str, ...] = (error.exception, error.message.replace(parent, ""))
    return found if error.cause is None else (*found, error.cause.replace(parent, ""))


def _model_facts(pred: PartitionPrediction, parent: str) -> dict[str, object]:
    effect = None
    if pred.error is not None:
        effect = {DIR_OFFLINE: "log_dir_offline", BROKER_STOPS: "broker_does_not_start"}[pred.error.consequence]
    return {"outcome": pred.outcome, "error": _model_error(pred, parent), "broker_effect": effect,
            "log_start_offset": pred.log_start_offset, "log_end_offset": pred.log_end_offset,
            "deleted_segments": pred.deleted_segments, "lost_offsets": pred.lost_offsets,
            "truncated_bytes": pred.truncated_bytes}


def _model_effect(pred: LogDirPrediction) -> str | None:
    if pred.stops_broker:
        return "broker_does_not_start"
    return "log_dir_offline" if pred.offline else None


def _expected(value: object, logdir: str) -> object:
    if isinstance(value, tuple):
        return tuple(v.replace("{logdir}", logdir) for v in value)
    return value


@pytest.mark.parametrize("case_name", list(CASES))
def test_model_equals_kafka(loaded: dict[str, tuple[Path, list[dict]]], case_name: str) -> None:
    path, objs = loaded[case_name]
    case = CASES[case_name]
    kafka = {o["dir"]: o for o in objs if o["type"] == "partition"}
    [logdir_obj] = [o for o in objs if o["type"] == "logdir"]
    for dir_name, expected in case.kafka.items():  # Kafka's own answer for the point of the case
        facts = _kafka_facts(kafka[dir_name], _closes(logdir_obj)) | {"disposition": kafka[dir_name]["disposition"]}
        for key, value in expected.items():
            assert facts[key] == _expected(value, case_name), (dir_name, key)
    assert logdir_obj["broker_effect"] == case.effect
    model = predict_log_dir(path)
    parent = str(path.parent) + "/"
    predicted = {Path(p.path).name: p for p in model.partitions}
    assert sorted(predicted) == sorted(kafka)
    for dir_name, obj in kafka.items():
        assert _model_facts(predicted[dir_name], parent) == _kafka_facts(obj, _closes(logdir_obj)), dir_name
        if obj["error"] is None and obj["disposition"] != "renamed_stray":  # the files the load leaves, by name
            names = {n for n in _model_dir(path / dir_name, obj, predicted[dir_name]).names()
                     if not n.endswith(".deleted")}  # LoadLogDir removes these, as the scheduler would
            assert sorted(names) == sorted(obj["files_after"]), dir_name
    assert _model_effect(model) == logdir_obj["broker_effect"]
    for file, key in ((RP, "recovery_point_checkpoint_error"), (LSO, "log_start_offset_checkpoint_error")):
        kafka_error = logdir_obj[key]
        read = model.checkpoints[file]
        if kafka_error is None:
            assert read.problem is None
        elif kafka_error["causes"]:  # an IOException, wrapped by CheckpointFileWithFailureHandler
            cause = kafka_error["causes"][0]
            assert read.problem is not None and read.reports_offline
            assert read.problem.replace(parent, "") == f"{cause['exception']}: {cause['message']}"
        else:  # a bare NumberFormatException: swallowed by LogManager, not reported
            assert read.problem == f"{kafka_error['exception']}: {kafka_error['message']}"
            assert not read.reports_offline


def _files(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every path under ``root`` with (mtime, bytes); access times are test_atime.py's business."""
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.read_bytes() if p.is_file() else b"")
            for p in sorted(root.rglob("*"))}


def test_model_reads_only(tmp_path: Path) -> None:
    """The damaged directories are predicted without a file being created, changed or removed."""
    swap_compacted(tmp_path / "a")
    _metadata(b"")(tmp_path / "b")
    _two_partitions(tmp_path / "c", LSO, b"0\n1\nt 0 3\nu 0 0\n", stray=True)
    before = _files(tmp_path)
    predictions = [predict_log_dir(tmp_path / sub) for sub in ("a", "b", "c")]
    # c: the log-start checkpoint has the log dir offline; the broker halts without closing (R9.4, R4.8)
    assert [p.partitions[0].outcome for p in predictions] == ["truncated", "fails", "rebuilt"]
    assert _files(tmp_path) == before


def _model_dir(path: Path, obj: dict, pred: PartitionPrediction) -> PartitionDir:
    """The model's picture of the partition directory after its load, with the inputs LoadLogDir used."""
    pdir = PartitionDir(path, path.name)
    pdir.now_ms = time.time_ns() // 1_000_000
    inputs = LoadInputs(obj["had_clean_shutdown"], pred.recovery_point_checkpoint, pred.log_start_offset_checkpoint)
    Loader(pdir, inputs, EpochCache.load(pdir), ProducerStates(pdir, "R6.3b", DEFAULT_MAX_DECOMPRESSED)).load()
    return pdir


def _model_snapshots(path: Path, inputs: LoadInputs) -> dict[str, bytes | None]:
    """The ``*.snapshot`` files the model's load leaves, with the bytes it predicts (None: not predicted)."""
    pdir = PartitionDir(path, path.name)
    pdir.now_ms = time.time_ns() // 1_000_000
    loader = Loader(pdir, inputs, EpochCache.load(pdir), ProducerStates(pdir, "R6.3b", DEFAULT_MAX_DECOMPRESSED))
    loader.load()
    return {n: pdir.current(n) for n in pdir.names() if n.endswith(".snapshot")}


@pytest.mark.parametrize("case_name", SNAPSHOT_CASES)
def test_snapshot_bytes_equal_kafka(loaded: dict[str, tuple[Path, list[dict]]], case_name: str) -> None:
    """Every producer snapshot Kafka leaves, byte for byte (sha256), as the model predicts it."""
    path, objs = loaded[case_name]
    model = {Path(p.path).name: p for p in predict_log_dir(path).partitions}
    for obj in (o for o in objs if o["type"] == "partition"):
        pred = model[obj["dir"]]
        inputs = LoadInputs(obj["had_clean_shutdown"], pred.recovery_point_checkpoint, pred.log_start_offset_checkpoint)
        predicted = _model_snapshots(path / obj["dir"], inputs)
        kafka = {n: v[1] for n, v in obj["files_after"].items() if n.endswith(".snapshot")}
        assert sorted(predicted) == sorted(kafka), obj["dir"]
        for snapshot_name, data in predicted.items():
            assert data is not None, (obj["dir"], snapshot_name)
            assert hashlib.sha256(data).hexdigest() == kafka[snapshot_name], (obj["dir"], snapshot_name)


def test_expired_producers_are_dropped_from_the_written_snapshot(loaded: dict[str, tuple[Path, list[dict]]]) -> None:
    """What the model writes for the expiry cases: 7 dropped, 100 before 8 (HashMap order), 11 replayed."""
    path, _ = loaded["expiry_clean"]
    data = _model_snapshots(path / "t-0", LoadInputs(True, 5, 0))["00000000000000000009.snapshot"]
    assert data is not None
    assert [e.producer_id for e in read_snapshot(data).entries] == [100, 8, 9, 11]
    [detail] = [a.detail for a in predict_log_dir(path).partitions[0].actions
                if a.path.endswith("00000000000000000009.snapshot")]
    assert detail == "snapshot at 9 (expired at load, dropped: producer ids 7)"


# ---------------------------------------------------------------- a real broker (R9.2, R9.4): LoadLogDir stops short

KAFKA_SH = SHARED / "kafka" / "kafka.sh"


def _ksh(*args: object, check: bool = True, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHON": sys.executable}
    return subprocess.run([str(KAFKA_SH), *map(str, args)], env=env, check=check, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def stopped_broker(kafka_storage: KafkaStorage, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-node KRaft broker that created topic t, took 5 records and stopped cleanly; its node dir."""
    if not KAFKA_SH.is_file():
        pytest.fail(f"no Kafka broker at {KAFKA_SH} (set KSEG_SHARED)")
    node = tmp_path_factory.mktemp("broker") / "node"
    port = int(_ksh("free-port").stdout)
    _ksh("format", node, 1, port)
    try:
        _ksh("start", node)
        client = [os.environ.get("JAVA", "java"), "-cp",
                  f"{KAFKA_SH.parent / 'clients' / 'kseg-kafka-client.jar'}:{_ksh('classpath').stdout.strip()}",
                  "KsegKafkaClient"]
        subprocess.run([*client, "create", f"127.0.0.1:{port}", "t", "1", "1"], check=True, capture_output=True,
                       timeout=120)
        subprocess.run([*client, "produce", f"127.0.0.1:{port}", "t", "5"], check=True, capture_output=True,
                       timeout=120)
        _ksh("stop", node)
    finally:
        _ksh("kill", node, check=False)
    assert (node / "data" / ".kafka_cleanshutdown").is_file()
    return node


def _start_fails(node: Path) -> str:
    """Start the broker on its (damaged) data; it must exit before it is ready. Its server.log."""
    started = _ksh("start", node, check=False)
    _ksh("kill", node, check=False)
    assert started.returncode != 0, started.stderr
    return (node / "logs" / "server.log").read_text()


@pytest.mark.parametrize("stray", [False, True], ids=["loads_then_halts", "stray_rename_halts"])
def test_real_broker_with_a_malformed_log_start_checkpoint(stopped_broker: Path, tmp_path: Path,
                                                           stray: bool) -> None:
    """A wrong entry count in log-start-offset-checkpoint: every partition loads, then the only log dir is
    failed and the broker halts (R9.2); with a partition that has no partition.metadata, its stray rename
    throws first and LogManager's start fails (R9.4).  The model says the same, message for message."""
    node = tmp_path / "node"
    shutil.copytree(stopped_broker, node)
    config = node / "server.properties"  # log.dirs and the like are absolute: point them at the copy
    config.write_text(config.read_text().replace(str(stopped_broker), str(node)))
    data = node / "data"
    (data / LSO).write_text("0\n3\nt 0 0\n")
    if stray:
        (data / "t-0" / "partition.metadata").unlink()
    broker = predict_broker([data])
    log = _start_fails(node)
    [model] = broker.log_dirs
    assert broker.broker_stops and model.offline and model.stops_broker == stray
    [part] = model.partitions
    if not stray:
        assert f"Shutdown broker because all log dirs in {data} have failed" in log
        assert "Error starting LogManager" not in log
        # the broker halts without closing the log (R4.8): the active indexes stay at R4.7's preallocated size
        active = max((data / "t-0").glob("*.index")).name
        assert (part.outcome, part.error) == ("rebuilt", None)
        assert part.files_changed == [active, active.replace(".index", ".timeindex")]
        assert (data / "t-0" / active).stat().st_size == RESIZED[".index"]
        return
    assert part.error is not None and part.outcome == "fails"
    assert "ERROR Encountered fatal fault: Error starting LogManager" in log
    assert f"{part.error.exception}: {part.error.message}" in log
    assert part.error.message == f"The log dir {data} is already offline due to a previous IO exception."


HASHMAP_JAVA = """
import java.util.*;
public class HashMapOrder { public static void main(String[] a) {
  Random r = new Random(Long.parseLong(a[0])); int n = Integer.parseInt(a[1]);
  HashMap<Long, Integer> m = new HashMap<>(); List<Long> inserted = new ArrayList<>();
  for (int i = 0; i < n; i++) {
    long k = r.nextInt(3) == 0 ? r.nextLong() & Long.MAX_VALUE : r.nextInt(5000);
    if (!m.containsKey(k)) { m.put(k, i); inserted.add(k); } }
  System.out.println(inserted); System.out.println(m.keySet()); } }
"""


def test_producer_map_order_is_javas_hashmap(kafka_storage: KafkaStorage, tmp_path: Path) -> None:
    """writeSnapshot's entry order (R6.3c) is HashMap<Long, ...> iteration: the model's order against the JDK's,
    for maps that resize (5 to 1000 ids, small and 63-bit)."""
    java, javac = find_java()
    (tmp_path / "HashMapOrder.java").write_text(HASHMAP_JAVA)
    subprocess.run([javac, "-d", str(tmp_path), str(tmp_path / "HashMapOrder.java")], check=True, timeout=120)
    for seed, count in ((1, 5), (2, 13), (3, 40), (4, 200), (5, 1000)):
        out = subprocess.run([java, "-cp", str(tmp_path), "HashMapOrder", str(seed), str(count)], check=True,
                             capture_output=True, text=True, timeout=120).stdout.splitlines()
        inserted, iterated = ([int(x) for x in line.strip("[]").split(", ")] for line in out)
        producers = ProducerMap()
        for key in inserted:
            producers.touch(key)
        assert not producers.unknown and [e.producer_id for e in producers.ordered()] == iterated, (seed, count)


SPLIT_CASES = ("split_unclean", "split_missing_index", "split_three", "split_then_segment",
               "split_first_batch_above_base")


@pytest.mark.parametrize("case_name", SPLIT_CASES)
def test_split_leaves_kafkas_files(loaded: dict[str, tuple[Path, list[dict]]], case_name: str) -> None:
    """What files an overflow split leaves (R4.4): the same names as Kafka (``*.deleted`` aside: LoadLogDir
    removes them as the scheduler would), every ``.log`` byte for byte, and the indexes of the inactive segments."""
    path, objs = loaded[case_name]
    [obj] = [o for o in objs if o["type"] == "partition"]
    [pred] = predict_log_dir(path).partitions
    pdir = _model_dir(path / "t-0", obj, pred)
    names = sorted(n for n in pdir.names() if not n.endswith(".deleted"))
    assert names == sorted(obj["files_after"])
    active = max(int(n[:20]) for n in names if n.endswith(".log"))
    for name in names:
        if name.endswith(".log") or (name.endswith((".index", ".timeindex")) and int(name[:20]) != active):
            data = pdir.current(name)
            assert data is not None and hashlib.sha256(data).hexdigest() == obj["files_after"][name][1], name
