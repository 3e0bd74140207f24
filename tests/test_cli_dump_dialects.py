"""``kseg dump --kafka-version``: each release's kafka-dump-log text, one difference at a time.

The version -> flag mapping (kseg/ops/dump/dialect.py, each change with its Kafka source) is checked for
every accepted release; then each difference is pinned on both sides of the release that changed it.
Whole-file goldens: fixtures/dump/golden (4.0) and fixtures/dump/golden-4.3 (the default), tests/test_cli_dump.py.
"""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner
from support import FIXTURES

from kseg.cli import cli
from kseg.ops.dump import RELEASES, dialect_for
from kseg.ops.dump.dialect import normalize_release

DUMP = FIXTURES / "dump"
INTERNAL = "../internal/segments"
LOG = "00000000000000000000.log"


def run(args: list[str]):
    old = os.getcwd()
    os.chdir(DUMP)
    try:
        return CliRunner().invoke(cli, ["dump", *args], env={"COLUMNS": "100"}, catch_exceptions=False)
    finally:
        os.chdir(old)


def test_every_release_maps_to_its_flags():
    expected = {  # release: (notice, txnIdxEmpty, 4.0 offsets types, 4.1 coordinator JSON, LeaderChange, Java)
        "2.8": (False,) * 6, "3.0": (False,) * 6, "3.7": (False,) * 6,
        "3.8": (True, False, False, False, False, False), "3.9": (True, False, False, False, False, False),
        "4.0": (False, True, True, False, False, False), "4.1": (False, True, False, True, True, False),
        "4.2": (False, True, False, True, True, False), "4.3": (False, True, False, True, True, True),
    }
    for release, flags in expected.items():
        d = dialect_for(release)
        assert (d.deprecated_decoder_notice, d.remote_txn_idx_empty, d.offsets_types_4_0, d.coordinator_json_4_1,
                d.leader_change_json, d.java_port) == flags, release
    assert [normalize_release(v) for v in ("4.2.1", "v3.9.0", "4.3", "4.4", "2.7", "x", "4")] == [
        "4.2", "3.9", "4.3", None, None, None, None]
    assert dialect_for("4.1").offsets_known_types == frozenset({*range(9), *range(10, 18), *range(19, 24)})
    assert dialect_for("4.0").offsets_known_types == frozenset(range(17))
    assert dialect_for("3.9").offsets_known_types == frozenset(range(9))
    assert not dialect_for("2.8").modelled and dialect_for("3.0").modelled
    assert [dialect_for(r).record_internal_package for r in ("3.9", "4.2", "4.3")] == [False, False, True]
    older = {  # release: (lastTimestamp, OptionalLong, deleteHorizonMs, "Log starting", snapshot JSON, KRaft JSON)
        "3.0": (False, False, False, False, False, False), "3.1": (True, False, False, False, False, False),
        "3.2": (True, False, True, False, False, False), "3.3": (True, False, True, True, True, False),
        "3.5": (True, True, True, True, True, False), "3.8": (True, True, True, True, True, True),
        "4.3": (True,) * 6,
    }
    for release, flags in older.items():
        d = dialect_for(release)
        assert (d.producer_last_timestamp, d.producer_optional_long, d.delete_horizon, d.log_starting_offset,
                d.snapshot_control_json, d.kraft_control_json) == flags, release
    assert RELEASES[0] == "2.8" and RELEASES[-1] == "4.3"


def _line(args: list[str], offset: int) -> str:
    result = run(args)
    return next(line for line in result.stdout.splitlines() if line.startswith(f"| offset: {offset} "))


def test_leader_change_is_json_from_4_1():
    """Scala 4.1 printControlRecord added LEADER_CHANGE (LeaderChangeMessageJsonConverter); 4.0 named it only."""
    tail = " headerKeys: [] "
    assert _line(["--deep-iteration", "kraft"], 3).split(tail)[1] == (
        'LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}')
    assert _line(["--kafka-version", "4.1", "--deep-iteration", "kraft"], 3) == _line(["--deep-iteration", "kraft"], 3)
    assert _line(["--kafka-version", "4.0", "--deep-iteration", "kraft"], 3).endswith("controlType: LEADER_CHANGE(2)")


def test_transaction_log_is_coordinator_json_from_4_1():
    args = ["--transaction-log-decoder", f"{INTERNAL}/__transaction_state-0"]
    new = _line(args, 0)
    assert new.endswith(' key: {"type":"0","data":{"transactionalId":"tx-a"}} payload: {"version":"0","data":'
                        '{"producerId":4000,"producerEpoch":3,"transactionTimeoutMs":60000,"transactionStatus":0,'
                        '"transactionPartitions":null,"transactionLastUpdateTimestampMs":1700000000005,'
                        '"transactionStartTimestampMs":1700000000000}}')
    assert _line(["--kafka-version", "4.2", *args], 0) == new
    assert _line(["--kafka-version", "4.0", *args], 0).endswith(
        " key: transaction_metadata::transactionalId=tx-a payload: producerId:4000,producerEpoch:3,state=Empty,"
        "partitions=[],txnLastUpdateTimestamp=1700000000005,txnTimeoutMs=60000")
    assert _line(args, 5).endswith(" key: Unknown record type 1 at offset 5, skipping.")
    assert _line(["--kafka-version", "4.0", *args], 5).endswith(" key: unknown::version=1")
    # an unknown value version: 4.0 dies (TransactionLog), 4.1+ skips it (CoordinatorRecordSerde)
    bad = ["--transaction-log-decoder", "decoders/__transaction_state-1"]
    assert run(bad).exit_code == 0 and run(["--kafka-version", "4.0", *bad]).exit_code == 1
    assert _line(bad, 1).endswith(" key: Error at offset 1, skipping. Found an unknown record version 5 for 0 type")


def test_share_state_value_label_and_offsets_types():
    share = ["--share-group-state-decoder", f"{INTERNAL}/__share_group_state-0"]
    assert ' payload: {"version":"0","data":' in _line(share, 0)
    assert ' payload: {"type":"0","data":' in _line(["--kafka-version", "4.0", *share], 0)
    offsets = ["--offsets-decoder", f"{INTERNAL}/__consumer_offsets-0"]
    assert _line(offsets, 9).endswith(" key: Unknown record type 9 at offset 9, skipping.")  # gone in 4.1
    # Kafka 4.0 decoded type 9 (ShareGroupPartitionMetadata, early-access share groups); kseg's schemas are
    # 4.3.0's, which dropped it, so every dialect shows it as unknown (docs/dump.md, deliberate differences)
    assert _line(["--kafka-version", "4.0", *offsets], 9).endswith(" key: Unknown record type 9 at offset 9, skipping.")
    assert _line(["--kafka-version", "3.9", *offsets], 10).endswith(" key: Unknown record type 10 at offset 10, skipping.")
    missing = ["--offsets-decoder", "decoders/__consumer_offsets-1"]
    assert "using the specified decoder (message had a missing key)" in run(missing).stderr
    assert "using offset topic decoder (message had a missing key)" in run(["--kafka-version", "4.0", *missing]).stderr


def test_remote_log_txn_idx_empty_from_4_0():
    args = ["--remote-log-metadata-decoder", f"{INTERNAL}/__remote_log_metadata-0"]
    assert _line(args, 0).endswith(", state=COPY_SEGMENT_STARTED, txnIdxEmpty=false}")
    assert _line(["--kafka-version", "4.0", *args], 0) == _line(args, 0)
    assert _line(["--kafka-version", "3.9", *args], 0).endswith(", state=COPY_SEGMENT_STARTED}")


@pytest.mark.parametrize("version, payload", [("4.3", "| payload: no key"), ("4.2", " payload: no key")])
def test_skip_record_metadata_payload_prefix(version, payload):
    out = run(["--kafka-version", version, "--print-data-log", "--skip-record-metadata", f"records/{LOG}"]).stdout
    assert payload in out.splitlines()
    assert "| key: plain payload: hello" in out.splitlines()


def test_summaries_java_maps_from_4_3():
    """4.3: TreeMaps (ascending, from -1) and the time index path; 4.2: Scala lists, newest first."""
    new = run(["--deep-iteration", "corrupt/00000000000000000010.log", f"records/{LOG}",
               "indexes/00000000000000000100.timeindex"])
    old = run(["--kafka-version", "4.2", "--deep-iteration", "corrupt/00000000000000000010.log", f"records/{LOG}",
               "indexes/00000000000000000100.timeindex"])
    records = f"Non-consecutive offsets in {DUMP}/records/{LOG}"
    new_err, old_err = new.stderr.splitlines(), old.stderr.splitlines()
    i = new_err.index(records)
    assert new_err[i + 1:i + 3] == ["  7 is followed by 20", "  20 is followed by 22"]
    j = old_err.index(records)
    assert old_err[j + 1:j + 3] == ["  20 is followed by 22", "  7 is followed by 20"]
    k = new_err.index(f"Non-consecutive offsets in {DUMP}/corrupt/00000000000000000010.log")
    assert new_err[k + 1] == "  -1 is followed by 10"
    assert not any("corrupt/00000000000000000010.log" in line and "Non-consecutive" in line for line in old_err)
    assert f"The following indexed offsets are not found in :{DUMP}/indexes/00000000000000000100.timeindex" in new_err
    assert "The following indexed offsets are not found in the log." in old_err


KRAFT = "../dump-kafka/__cluster_metadata-0"


def _control_texts(version: str) -> list[str]:
    out = run(["--kafka-version", version, "--deep-iteration", KRAFT]).stdout
    return [line.split(" headerKeys: [] ")[1] for line in out.splitlines() if line.startswith("| offset:")]


def test_kraft_control_records_by_release():
    """Scala 3.3 added SnapshotHeader/Footer JSON, 3.8 KRaftVersion/KRaftVoters (types 5, 6 were UNKNOWN in
    ControlRecordType before), 4.1 LeaderChange JSON; a type printed by name has its value not read."""
    new = _control_texts("4.3")
    assert [t.split(" ")[0] for t in new] == ["SnapshotHeader", "LeaderChange:", "LeaderChange:", "KRaftVersion",
                                               "KRaftVoters", "SnapshotFooter", "endTxnMarker:", "endTxnMarker:"]
    assert _control_texts("3.8")[1:3] == ["controlType: LEADER_CHANGE(2)"] * 2
    assert _control_texts("3.8")[3:5] == new[3:5]
    assert _control_texts("3.7")[3:5] == ["controlType: UNKNOWN(5)", "controlType: UNKNOWN(6)"]
    assert _control_texts("3.7")[0] == new[0]
    assert _control_texts("3.2")[0] == "controlType: SNAPSHOT_HEADER(3)"
    assert _control_texts("3.2")[5] == "controlType: SNAPSHOT_FOOTER(4)"
    assert _control_texts("3.0")[6] == new[6] == "endTxnMarker: COMMIT coordinatorEpoch: 9"
    assert _control_texts("3.0")[7] == new[7] == "endTxnMarker: ABORT coordinatorEpoch: 10"


def test_share_snapshot_of_kafka_4_0_layout():
    """A ShareSnapshotValue written by Kafka 4.0 (uint16 SnapshotEpoch, no timestamps), read by 4.3's generated
    reader: the StateBatches length lands on a 0 byte (generator/.../MessageDataGenerator.java: "non-nullable
    field %s was serialized as null"), wrapped by CoordinatorRecordSerde.readMessage
    (coordinator-common/.../CoordinatorRecordSerde.java) and printed by CoordinatorRecordMessageParser."""
    args = ["--share-group-state-decoder", f"{INTERNAL}/__share_group_state-1"]
    result = run(args)
    assert result.exit_code == 0 and result.stderr == ""
    assert _line(args, 0).endswith(
        " headerKeys: [] key: Error at offset 0, skipping. Could not read record with version 0 from value's "
        "buffer due to: non-nullable field stateBatches was serialized as null.")
    # kseg reads with 4.3.0's schemas in every dialect: Kafka 4.0's own tool decoded this record
    # (docs/dump.md, deliberate differences)
    assert _line(["--kafka-version", "4.0", *args], 0) == _line(args, 0)


def test_batch_header_and_producer_lines_of_3_x():
    v2 = run(["--kafka-version", "3.1", f"worked-v2/{LOG}"]).stdout.splitlines()
    assert v2[1] == "Starting offset: 0"  # "Log starting offset" from 3.3
    assert " isControl: false position: 0 " in v2[2]  # deleteHorizonMs from 3.2
    assert run(["--kafka-version", "3.3", f"worked-v2/{LOG}"]).stdout.splitlines()[1] == "Log starting offset: 0"
    assert " deleteHorizonMs: OptionalLong.empty position: 0 " in run(["--kafka-version", "3.2",
                                                                        f"worked-v2/{LOG}"]).stdout
    snapshot = "txn/00000000000000000014.snapshot"
    assert run(["--kafka-version", "3.0", snapshot]).stdout.splitlines()[2] == (
        "producerId: 2000 producerEpoch: 3 coordinatorEpoch: 7 currentTxnFirstOffset: Some(12) ")
    assert run(["--kafka-version", "3.4", snapshot]).stdout.splitlines()[1].startswith(
        "producerId: 1000 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: None lastTimestamp: ")
    assert run(["--kafka-version", "3.5", snapshot]).stdout.splitlines()[2] == (
        "producerId: 2000 producerEpoch: 3 coordinatorEpoch: 7 currentTxnFirstOffset: OptionalLong[12] "
        "lastTimestamp: 1700000000050 ")


@pytest.mark.parametrize("version, package", [("4.3", "org.apache.kafka.common.record.internal"),
                                              ("4.2", "org.apache.kafka.common.record")])
def test_remote_log_decoder_on_a_null_value_names_that_releases_record_class(version, package):
    """4.3 moved Record to ...record.internal (KAFKA-20128); the NPE text names the class (checked against
    Kafka 4.3.0's DumpLogSegments in tests/interop/test_dump_vs_dumplogsegments.py)."""
    result = run(["--kafka-version", version, "--remote-log-metadata-decoder",
                  f"{INTERNAL}/__consumer_offsets-0/{LOG}"])
    assert result.exit_code == 0
    line = [x for x in result.stdout.splitlines() if x.startswith("| offset: 16 ")]
    assert line == ["| offset: 16 CreateTime: 1700000000016 keySize: 13 valueSize: -1 sequence: -1 headerKeys: [] "
                    "payload: Error at offset 16, skipping. Cannot invoke \"java.nio.ByteBuffer.remaining()\" "
                    f"because the return value of \"{package}.Record.value()\" is null"]
