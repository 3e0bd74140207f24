"""``kseg dump`` with kafka-dump-log's internal-topic decoders, and the side files of partition and log directories.

* Kafka's own decoder examples (DumpLogSegmentsTest, TransactionLogTest; VERBATIM strings as in
  tests/format/test_internal.py) reproduced inside a dump: the record line ends ``key: ... payload: ...``;
* decoder precedence, the options a decoder implies, what Kafka does where its decoder dies;
* ``--format json``: the decoded key and value agree with the text, and the raw key/value still round-trip;
* the decoders run only when asked;
* side files (checkpoints, partition.metadata, meta.properties, quorum-state, .kafka_cleanshutdown) line by
  line, and a whole log directory;
* every __consumer_offsets segment, KRaft metadata log and snapshot, and producer snapshot of the real corpus.

The goldens of the decoder and side-file cases are in tests/test_cli_dump.py (CASES, JSON_CASES).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from kafka_wire import NO_TAGS, a32, b32, ca, cb, cs, i8, i16, i32, i64, s16, uuid, uv
from support import CORPUS_REAL, FIXTURES, require_dir

from kseg.cli import cli
from kseg.format import BatchWalk, RecordSpec, encode_batch
from kseg.format.messages import kafka_json
from kseg.render.dump import decode_payload

DUMP = FIXTURES / "dump"
INTERNAL = FIXTURES / "internal" / "segments"
LOG = "00000000000000000000.log"
ENV = {"COLUMNS": "100", "NO_COLOR": "1"}
SHARE_TOPIC = "Uj5wn_FqTXirEASvVZRY1w"
TOPIC_ID = "JiPG0GbKRRqpJrShexbMfw"


#: The decoder examples here are Kafka 4.0's (its DumpLogSegmentsTest/TransactionLogTest); 4.3's texts
#: (the default) are pinned in tests/test_cli_dump_dialects.py and fixtures/dump/golden-4.3.
VERSION = ["--kafka-version", "4.0"]


def run(args: list[str], cwd: Path = DUMP, columns: int = 100):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, ["dump", *VERSION, *args], env={**ENV, "COLUMNS": str(columns)},
                                  catch_exceptions=False)
    finally:
        os.chdir(old)


def record_line(tmp_path: Path, option: str, key: bytes | None, value: bytes | None) -> str:
    """The one record line of a dump of a segment holding one record (offset 0) with this key and value."""
    folder = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    (folder / LOG).write_bytes(encode_batch([RecordSpec(0, 1_700_000_000_000, key, value)]))
    result = run([option, str(folder / LOG)], cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and len(lines) == 4, result.stdout + result.stderr
    return lines[3]


METADATA = "| offset: 0 CreateTime: 1700000000000 keySize: {} valueSize: {} sequence: -1 headerKeys: []"


def metadata_of(key: bytes | None, value: bytes | None) -> str:
    return METADATA.format(-1 if key is None else len(key), -1 if value is None else len(value))


# --------------------------------------------------------------------------- Kafka's examples, verbatim

GROUP_KEY = i16(3) + s16("group")  # ConsumerGroupMetadataKey (record type 3): GroupId
SUBSCRIPTION = i16(3) + a32(s16("foo")) + b32(None) + a32(s16("foo") + a32(i32(0))) + i32(0) + s16("rack")
ASSIGNMENT = i16(3) + a32(s16("foo") + a32(i32(0))) + b32(None)


def group_metadata(subscription: bytes, assignment: bytes) -> bytes:
    """GroupMetadataValue v4, one member (testOffsetsMessageParser)."""
    member = cs("member") + cs("instance") + cs("client") + cs("host") + i32(1000) + i32(100) + \
        cb(subscription) + cb(assignment) + NO_TAGS
    return i16(4) + cs("consumer") + i32(10) + cs("range") + cs("member") + i64(-1) + ca(member) + NO_TAGS


MEMBER_PREFIX = ('{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
                 '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
                 '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
                 '"rebalanceTimeout":1000,"sessionTimeout":100,')
MEMBER_DEFAULTS = i16(0) + cs("") + cs("") + cs("") + cs("") + ca() + cs("") + i32(-1) + cs("") + NO_TAGS
STATE_BATCH = i64(0) + i64(4) + i8(2) + i16(1) + NO_TAGS
SHARE_KEY = s16("gs1") + uuid(SHARE_TOPIC) + i32(0)

VERBATIM = {
    "offsets: testOffsetsMessageParser": (
        "--offsets-decoder", GROUP_KEY, i16(0) + i32(10) + NO_TAGS,
        ' key: {"type":"3","data":{"groupId":"group"}} payload: {"version":"0","data":{"epoch":10}}'),
    "offsets: consumer embedded protocol is parsed": (
        "--offsets-decoder", i16(2) + s16("group"), group_metadata(SUBSCRIPTION, ASSIGNMENT),
        ' key: {"type":"2","data":{"group":"group"}} payload: ' + MEMBER_PREFIX
        + '"subscription":{"topics":["foo"],"userData":null,"ownedPartitions":[{"topic":"foo","partitions":[0]}],'
          '"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":[{"topic":"foo","partitions":[0]}],'
          '"userData":null}}]}}'),
    "offsets: malformed embedded protocol kept as base64": (
        "--offsets-decoder", i16(2) + s16("group"), group_metadata(b"Subscription", b"Assignment"),
        ' key: {"type":"2","data":{"group":"group"}} payload: ' + MEMBER_PREFIX
        + '"subscription":"U3Vic2NyaXB0aW9u","assignment":"QXNzaWdubWVudA=="}]}}'),
    "offsets: unknown record type": (
        "--offsets-decoder", i16(32767) + s16("group"), i16(0) + i32(10) + NO_TAGS,
        " key: Unknown record type 32767 at offset 0, skipping."),
    "offsets: parse error swallowed and reported": (
        "--offsets-decoder", GROUP_KEY, MEMBER_DEFAULTS,
        " key: Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: "
        "Error reading byte array of 536870911 byte(s): only 1 byte(s) available."),
    "share: testShareGroupStateMessageParser": (
        "--share-group-state-decoder", i16(0) + SHARE_KEY, i16(0) + i32(0) + i32(0) + i32(0) + i64(0)
        + i64(1700000000000) + i64(1700000000000) + ca(STATE_BATCH) + NO_TAGS,  # 4.3.0 ShareSnapshotValue v0
        ' key: {"type":"0","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}} payload: '
        '{"type":"0","data":{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,"startOffset":0,'
        '"createTimestamp":1700000000000,"writeTimestamp":1700000000000,"stateBatches":'
        '[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}'),
    "share: non-nullable field": (
        "--share-group-state-decoder", i16(1) + s16("group") + uuid(SHARE_TOPIC) + i32(0),
        i16(0) + i32(0) + i32(0) + i32(0) + i64(0) + i64(0) + i64(0) + ca() + NO_TAGS,
        " key: Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: "
        "non-nullable field stateBatches was serialized as null."),
    "transactions: TransactionLogTest.testTransactionMetadataParsing": (
        "--transaction-log-decoder", i16(0) + s16("id"),
        i16(1) + i64(1334) + i16(0) + i32(1000) + i8(1) + ca(cs("topic") + ca(i32(0)) + NO_TAGS) + i64(0) + i64(0)
        + NO_TAGS,
        " key: transaction_metadata::transactionalId=id payload: producerId:1334,producerEpoch:0,state=Ongoing,"
        "partitions=[topic-0],txnLastUpdateTimestamp=0,txnTimeoutMs=1000"),
    "metadata: testDumpMetadataRecords' bogus record": (
        "--cluster-metadata-decoder", None, uv(10000) + uv(10000),
        " payload: Error at 0, skipping. Could not deserialize metadata record due to unknown frame version 10000"
        "(only frame version 1 is supported)"),
    "remote: testDumpRemoteLogMetadataOneRecordOneBatch (format)": (
        "--remote-log-metadata-decoder", None,
        uv(1) + uv(2) + uv(0) + cs("foo") + uuid(TOPIC_ID) + i32(0) + NO_TAGS + i32(0) + i64(0) + i8(0) + NO_TAGS,
        f" payload: RemotePartitionDeleteMetadata{{topicPartition={TOPIC_ID}:foo-0, state=DELETE_PARTITION_MARKED, "
        "eventTimestampMs=0, brokerId=0}"),
    "remote: testDumpRemoteLogMetadataWithCorruption": (
        "--remote-log-metadata-decoder", None, b"corrupted",
        " payload: Error at offset 0, skipping. Could not deserialize metadata record due to unknown frame "
        "version 99(only frame version 1 is supported)"),
}


@pytest.mark.parametrize("case", sorted(VERBATIM))
def test_kafkas_decoder_examples_inside_a_dump(tmp_path, case):
    option, key, value, tail = VERBATIM[case]
    assert record_line(tmp_path, option, key, value) == metadata_of(key, value) + tail


def test_tombstones_print_delete(tmp_path):
    assert record_line(tmp_path, "--offsets-decoder", GROUP_KEY, None).endswith(
        ' key: {"type":"3","data":{"groupId":"group"}} payload: <DELETE>')
    assert record_line(tmp_path, "--transaction-log-decoder", i16(0) + s16("id"), None).endswith(
        " key: transaction_metadata::transactionalId=id payload: <DELETE>")


# --------------------------------------------------------------------------- options


def test_two_decoders_are_a_usage_error():
    """docs/cli.md: conflicting options are usage errors (Kafka's tool silently takes the first in its order)."""
    both = run(["--share-group-state-decoder", "--offsets-decoder", f"{INTERNAL}/__share_group_state-0"])
    assert (both.exit_code, both.stdout) == (2, "")
    assert both.stderr == ("kseg: error: --offsets-decoder and --share-group-state-decoder exclude each other; "
                           "give one (see 'kseg dump --help')\n")
    tx = run(["--cluster-metadata-decoder", "--transaction-log-decoder", f"{INTERNAL}/__transaction_state-0"])
    assert tx.exit_code == 2 and "exclude each other" in tx.stderr


def test_a_decoder_implies_print_data_log_and_deep_iteration():
    plain = run(["--offsets-decoder", "decoders/__consumer_offsets-1"])
    explicit = run(["--offsets-decoder", "--print-data-log", "--deep-iteration", "decoders/__consumer_offsets-1"])
    assert plain.stdout == explicit.stdout and plain.exit_code == explicit.exit_code == 1
    assert plain.stdout.count("\n| offset: ") == 4


def test_with_a_decoder_the_key_and_value_decoder_classes_are_never_built():
    """Kafka's messageParser returns the internal-topic parser before it looks at --*-decoder-class."""
    reference = run(["--offsets-decoder", f"{INTERNAL}/__consumer_offsets-0"])
    for extra in (["--value-decoder-class", "org.apache.kafka.tools.api.LongDecoder"],
                  ["--key-decoder-class", "kafka.serializer.StringDecoder"]):
        result = run(["--offsets-decoder", *extra, f"{INTERNAL}/__consumer_offsets-0"])
        assert result.exit_code == 0 and result.stdout == reference.stdout  # no deprecation line either


def test_where_kafkas_decoder_dies_kseg_prints_what_kafka_printed_then_goes_on():
    result = run(["--offsets-decoder", "decoders/__consumer_offsets-1", "worked-v2/" + LOG])
    lines = result.stdout.splitlines()
    assert lines[4] == "| offset: 1 CreateTime: 1700000000001 keySize: -1 valueSize: 24 sequence: -1 headerKeys: []"
    assert lines[5].startswith("| offset: 2 ") and lines[6].endswith(' payload: <DELETE>')
    assert lines[7] == "Dumping worked-v2/" + LOG  # and the next file too
    assert result.stderr == (
        "kseg: decoders/__consumer_offsets-1/00000000000000000000.log: byte 0: record at offset 1: the record has no "
        "key; kafka-dump-log stops here: Failed to decode message at offset 1 using offset topic decoder (message "
        "had a missing key)\n"
    )
    assert result.exit_code == 1


def test_control_records_are_never_given_to_the_decoder():
    result = run(["--transaction-log-decoder", "txn/" + LOG])
    assert ("| offset: 10 CreateTime: 1700000000001 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] "
            "endTxnMarker: COMMIT coordinatorEpoch: 5") in result.stdout.splitlines()


# --------------------------------------------------------------------------- only when asked


class Exploding(dict):
    def __getitem__(self, name):
        raise AssertionError(f"decoder {name} used without being asked for")


def test_decoders_run_only_when_asked(monkeypatch):
    from kseg.format import internal

    def exploding(name: str, **flags: object) -> None:
        raise AssertionError(f"decoder {name} used")

    monkeypatch.setattr(internal, "DECODERS", Exploding(internal.DECODERS))
    monkeypatch.setattr(internal, "dialect_decoder", exploding)
    for args in (["--print-data-log"], ["--format", "json", "--deep-iteration"], ["--format", "table", "--deep-iteration"]):
        assert run([*args, f"{INTERNAL}/__consumer_offsets-0"]).exit_code == 0
    with pytest.raises(AssertionError, match="decoder offsets used"):
        run(["--offsets-decoder", f"{INTERNAL}/__consumer_offsets-0"])


# --------------------------------------------------------------------------- JSON agrees with the text

TEXT_OF = {
    "offsets": (lambda k: kafka_json({"type": str(k["type"]), "data": k["data"]}),
                lambda v: kafka_json({"version": str(v["version"]), "data": v["data"]})),
    "share-group-state": (lambda k: kafka_json({"type": str(k["type"]), "data": k["data"]}),
                          lambda v: kafka_json({"type": str(v["version"]), "data": v["data"]})),
    "cluster-metadata": (None, lambda v: kafka_json({"type": v["type"], "version": v["version"], "data": v["data"]})),
    "transaction-log": (lambda k: f"transaction_metadata::transactionalId={k['data']['transactionalId']}", None),
}


def raw_records(path: Path) -> list:
    data = path.read_bytes()
    return [r for batch in BatchWalk(data, 0, len(data)) if not batch.is_control for r in batch.iter_records()]


@pytest.mark.parametrize("decoder, folder", [
    ("offsets", "__consumer_offsets-0"), ("share-group-state", "__share_group_state-0"),
    ("cluster-metadata", "__cluster_metadata-0"), ("transaction-log", "__transaction_state-0"),
])
def test_json_decoded_key_and_value_are_the_texts_structure_and_raw_bytes_round_trip(decoder, folder):
    path = INTERNAL / folder / LOG
    text = run([f"--{decoder}-decoder", str(path)]).stdout.splitlines()
    lines = [json.loads(line) for line in run(["--format", "json", f"--{decoder}-decoder", str(path)]).stdout.splitlines()]
    records = [r for obj in lines if obj["type"] == "batch" and not obj["is_control"] for r in obj["records"]]
    raw = raw_records(path)
    assert [r["offset"] for r in records] == [r.offset for r in raw] and records
    key_text, value_text = TEXT_OF[decoder]
    by_offset = {int(m[1]): line for line in text if (m := re.match(r"\| offset: (\d+) ", line))}
    checked = 0
    for record, want in zip(records, raw):
        assert decode_payload(record["key"], "utf8") == want.key  # raw bytes still round-trip
        assert decode_payload(record["value"], "utf8") == want.value
        decoded = record["decoded"]
        if "problem" in decoded:
            continue
        line = by_offset[record["offset"]]
        if key_text is not None:
            assert f" key: {key_text(decoded['key'])}" in line
        if value_text is not None and decoded["value"] is not None:
            assert line.endswith(f" payload: {value_text(decoded['value'])}")
        checked += 1
    assert checked >= 3


def test_json_of_a_record_kafka_dies_on():
    lines = [json.loads(line) for line in
             run(["--format", "json", "--offsets-decoder", "decoders/__consumer_offsets-1"]).stdout.splitlines()]
    (batch,) = [obj for obj in lines if obj["type"] == "batch"]
    assert batch["records"][1]["decoded"] == {
        "key": None, "value": None,
        "problem": {"kind": "error", "part": "key", "message": "the record has no key", "offset": None, "field": None,
                    "rawKey": None, "rawValue": "AAMAAAAAAAAABwAAAAAAAAAAAYvP5WgA"},
    }
    assert batch["records"][0]["decoded"]["key"] == {
        "type": 1, "name": "OffsetCommitKey", "data": {"group": "g", "topic": "orders", "partition": 0}}
    assert lines[-1]["type"] == "problem" and lines[-1]["position"] == 0


# --------------------------------------------------------------------------- side files, line by line

SIDE_TEXT = {
    "logdir/orders-0/leader-epoch-checkpoint": [
        "Leader epoch checkpoint version: 0, entries: 2", "epoch: 0 startOffset: 0", "epoch: 2 startOffset: 1"],
    "logdir/recovery-point-offset-checkpoint": [
        "Recovery point checkpoint version: 0, entries: 3", "topic: __consumer_offsets partition: 7 offset: 2",
        "topic: orders partition: 0 offset: 3", "topic: __cluster_metadata partition: 0 offset: 4"],
    "logdir/replication-offset-checkpoint": [
        "High watermark checkpoint version: 0, entries: 2", "topic: __consumer_offsets partition: 7 offset: 2",
        "topic: orders partition: 0 offset: 3"],
    "logdir/log-start-offset-checkpoint": [
        "Log start offset checkpoint version: 0, entries: 2", "topic: __consumer_offsets partition: 7 offset: 0",
        "topic: orders partition: 0 offset: 0"],
    "logdir/cleaner-offset-checkpoint": [
        "Cleaner offset checkpoint version: 0, entries: 1", "topic: __consumer_offsets partition: 7 offset: 2"],
    "logdir/orders-0/partition.metadata": ["Partition metadata version: 0, topicId: JiPG0GbKRRqpJrShexbMfw"],
    "logdir/meta.properties": ["#", "#Tue Nov 14 22:13:20 UTC 2023", "node.id: 1",
                               "directory.id: J8aAPcfLQt2bqs1JT_rMgQ", "version: 1",
                               "cluster.id: MkU3OEVBNTcwNTJENDM2Qg"],
    "logdir/__cluster_metadata-0/quorum-state": [
        'leaderId: 1 leaderEpoch: 1 votedId: 1 votedDirectoryId: "J8aAPcfLQt2bqs1JT_rMgQ" data_version: 1'],
    "sidefiles/v0/quorum-state": [
        'clusterId: "" leaderId: 1 leaderEpoch: 4 votedId: -1 appliedOffset: 0 currentVoters: [{"voterId":1}] '
        "data_version: 0"],
    "logdir/.kafka_cleanshutdown": ["Clean shutdown marker version: 0, brokerEpoch: 42"],
    "sidefiles/v0/.kafka_cleanshutdown": ["Clean shutdown marker (empty)"],
    "sidefiles/empty/cleaner-offset-checkpoint": ["Cleaner offset checkpoint is empty."],
}


@pytest.mark.parametrize("name", sorted(SIDE_TEXT))
def test_side_file_text(name):
    result = run([name])
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout == "".join(f"{line}\n" for line in [f"Dumping {name}", *SIDE_TEXT[name]])


SIDE_PROBLEMS = {
    "sidefiles/count/leader-epoch-checkpoint": (
        2, "byte 14: Expected [3] entries in checkpoint file, but found only [2]"),
    "sidefiles/version/recovery-point-offset-checkpoint": (0, "byte 0: Unrecognised version:1, expected version: 0"),
    "sidefiles/malformed/replication-offset-checkpoint": (1, "byte 15: Malformed line in checkpoint file: orders one 7"),
    "sidefiles/utf8/log-start-offset-checkpoint": (
        1, "byte 16: not UTF-8 text: invalid start byte (Java: MalformedInputException)"),
    "sidefiles/zero-id/partition.metadata": (0, "byte 11: Invalid topic ID in partition metadata file"),
    "sidefiles/json/quorum-state": (0, "byte 28: not JSON: Expecting value"),
    "sidefiles/escape/meta.properties": (0, "byte 10: Malformed \\uxxxx encoding."),
}


@pytest.mark.parametrize("name", sorted(SIDE_PROBLEMS))
def test_damaged_side_file_shows_what_the_broker_reads_then_the_problem(name):
    entries, message = SIDE_PROBLEMS[name]
    result = run([name])
    assert result.exit_code == 1
    assert result.stderr == f"kseg: {name}: {message}\n"
    shown = result.stdout.splitlines()[1:]
    assert len([line for line in shown if line.startswith(("epoch: ", "topic: "))]) == entries


def test_side_files_as_json():
    names = ["logdir/orders-0/leader-epoch-checkpoint", "logdir/cleaner-offset-checkpoint",
             "logdir/orders-0/partition.metadata", "logdir/meta.properties", "logdir/__cluster_metadata-0/quorum-state",
             "logdir/.kafka_cleanshutdown"]
    objects = [json.loads(line) for line in run(["--format", "json", *names]).stdout.splitlines()]
    body = [{k: v for k, v in obj.items() if k != "path"} for obj in objects if obj["type"] != "file"]
    assert body == [
        {"type": "checkpoint", "kind": "leader-epoch-checkpoint", "version": 0, "count": 2},
        {"type": "leader_epoch_entry", "epoch": 0, "start_offset": 0},
        {"type": "leader_epoch_entry", "epoch": 2, "start_offset": 1},
        {"type": "checkpoint", "kind": "cleaner-offset-checkpoint", "version": 0, "count": 1},
        {"type": "offset_checkpoint_entry", "topic": "__consumer_offsets", "partition": 7, "offset": 2},
        {"type": "partition_metadata", "version": 0, "topic_id": TOPIC_ID},
        {"type": "meta_properties", "comments": ["#", "#Tue Nov 14 22:13:20 UTC 2023"],
         "properties": {"node.id": "1", "directory.id": "J8aAPcfLQt2bqs1JT_rMgQ", "version": "1",
                        "cluster.id": "MkU3OEVBNTcwNTJENDM2Qg"}},
        {"type": "quorum_state", "data": {"leaderId": 1, "leaderEpoch": 1, "votedId": 1,
                                          "votedDirectoryId": "J8aAPcfLQt2bqs1JT_rMgQ", "data_version": 1}},
        {"type": "clean_shutdown", "empty": False, "version": 0, "broker_epoch": 42},
    ]
    assert [obj["kind"] for obj in objects if obj["type"] == "file"] == [Path(n).name for n in names]


def test_a_whole_log_directory_partitions_first_then_its_own_files():
    result = run(["logdir"])
    assert result.exit_code == 0 and result.stderr == "Ignoring unknown file logdir/.lock\n"
    dumped = [line[len("Dumping logdir/"):] for line in result.stdout.splitlines() if line.startswith("Dumping ")]
    assert dumped == [
        f"__cluster_metadata-0/{LOG}", "__cluster_metadata-0/00000000000000000000.index",
        "__cluster_metadata-0/00000000000000000000.timeindex", "__cluster_metadata-0/leader-epoch-checkpoint",
        "__cluster_metadata-0/partition.metadata", "__cluster_metadata-0/quorum-state",
        f"__consumer_offsets-7/{LOG}", "__consumer_offsets-7/00000000000000000000.index",
        "__consumer_offsets-7/00000000000000000000.timeindex", "__consumer_offsets-7/leader-epoch-checkpoint",
        "__consumer_offsets-7/partition.metadata",
        f"orders-0/{LOG}", "orders-0/00000000000000000000.index", "orders-0/00000000000000000000.timeindex",
        "orders-0/00000000000000000003.snapshot", "orders-0/leader-epoch-checkpoint", "orders-0/partition.metadata",
        ".kafka_cleanshutdown", ".lock", "bootstrap.checkpoint", "cleaner-offset-checkpoint",
        "log-start-offset-checkpoint", "meta.properties", "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint",
    ]


def test_oversized_side_file_is_refused_not_read(tmp_path, monkeypatch):
    import kseg.ops.dump.sidefiles as sidefiles

    monkeypatch.setattr(sidefiles, "MAX_SIDE_FILE_BYTES", 8)
    (tmp_path / "leader-epoch-checkpoint").write_bytes(b"0\n1\n0 0\n\n")
    result = run(["leader-epoch-checkpoint"], cwd=tmp_path)
    assert result.exit_code == 1
    assert result.stderr == ("kseg: leader-epoch-checkpoint: 9 bytes: far larger than any leader-epoch-checkpoint "
                             "Kafka writes (kseg reads at most 8); not read\n")


# --------------------------------------------------------------------------- the real corpus


def corpus(pattern: re.Pattern[str]) -> list[str]:
    root = require_dir(CORPUS_REAL, "the real-data corpus")
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and p.stat().st_size > 0 and pattern.search(p.relative_to(root).as_posix()))


def decoded_records(args: list[str]) -> tuple[int, int, list[str]]:
    """(records, data records decoded completely, problems) of a JSON dump of the corpus."""
    result = run(["--format", "json", "--deep-iteration", *args], cwd=CORPUS_REAL)
    assert result.exit_code == 0, result.stderr[:2000]
    total = complete = 0
    problems: list[str] = []
    for line in result.stdout.splitlines():
        obj = json.loads(line)
        if obj["type"] != "batch":
            continue
        for record in obj["records"]:
            total += 1
            if "control" in record:
                complete += record["control"]["problem"] is None
            elif "problem" in record["decoded"]:
                problems.append(f"{obj['path']} offset {record['offset']}: {record['decoded']['problem']['message']}")
            else:
                complete += 1
    return total, complete, problems


@pytest.mark.corpus
def test_every_consumer_offsets_segment_of_the_corpus_decodes_completely():
    files = corpus(re.compile(r"(^|/)__consumer_offsets-\d+/[^/]+\.log$"))
    assert len(files) > 100
    total, complete, problems = decoded_records(["--offsets-decoder", *files])
    assert problems == [] and complete == total > 20000


@pytest.mark.corpus
def test_every_metadata_log_and_snapshot_of_the_corpus_decodes_completely():
    files = corpus(re.compile(r"((^|/)__cluster_metadata-\d+/[^/]+\.(log|checkpoint)|(^|/)bootstrap\.checkpoint)$"))
    assert sum(f.endswith(".checkpoint") for f in files) > 90
    total, complete, problems = decoded_records(["--cluster-metadata-decoder", *files])
    assert problems == [] and complete == total > 100000


@pytest.mark.corpus
def test_every_producer_snapshot_of_the_corpus_dumps_completely():
    from kseg.format.snapshot import read_snapshot

    files = corpus(re.compile(r"\.snapshot$"))
    assert len(files) > 10
    result = run(files, cwd=CORPUS_REAL)
    assert result.exit_code == 0 and result.stderr == ""
    entries = sum(len(read_snapshot((CORPUS_REAL / f).read_bytes()).entries) for f in files)
    assert result.stdout.count("\nproducerId: ") == entries > 10


def test_table_summarises_decoded_records():
    from rich.cells import cell_len

    def rows(result) -> list[list[str]]:
        return [line.split() for line in result.stdout.splitlines() if re.match(r"\s+\d+\s+2023-", line)]

    narrow = run(["--format", "table", "--offsets-decoder", "decoders/__consumer_offsets-1"], columns=80)
    assert narrow.exit_code == 1 and max(cell_len(line) for line in narrow.stdout.splitlines()) <= 80
    assert [row[0] for row in rows(narrow)] == ["0", "1", "2", "3"]  # the offset column survives long values
    wide = run(["--format", "table", "--offsets-decoder", "decoders/__consumer_offsets-1"], columns=160)
    offsets = rows(wide)
    assert offsets[0][3:6] == ["OffsetCommit", "g/orders/0", "v3"] and offsets[0][6] == "offset=42"
    assert offsets[1][3:6] == ["∅", "!", "error:"]  # a null key: Kafka's decoder dies here
    assert offsets[3][3:6] == ["GroupMetadata", "g", "<DELETE>"]
    transactions = rows(run(["--format", "table", "--transaction-log-decoder", "decoders/__transaction_state-1"],
                            columns=160))
    assert transactions[0][3:8] == ["TransactionLog", "tx-a", "v0", "Ongoing", "producerId=4000"]
    assert transactions[1][3:6] == ["?", "!", "unknown-version:"]  # Kafka dies before it prints the key
