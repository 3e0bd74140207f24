"""Which release's ``kafka-dump-log`` text ``kseg dump`` speaks (``--kafka-version``).

The tool's text changed between releases; runbooks written for an older broker
grep for the older text.  :func:`dialect_for` maps a release (``2.8`` ..
``4.3``) to a :class:`Dialect`: one flag per difference, each decided here
once from :data:`CHANGES` (the release that changed it and the Kafka source of
the change), so no other module compares version numbers.  The renderers and
the decoders read the flags.  docs/dump.md lists the same table.

Sources (mirror ``confluentinc/kafka``): the Scala tool
``core/src/main/scala/kafka/tools/DumpLogSegments.scala`` on the release
branches ``2.8`` .. ``4.2``; the Java port
``tools/src/main/java/org/apache/kafka/tools/DumpLogSegments.java`` of 4.3.0
(commit a9ce3221537b8653448750697915607dc7936cf3).
"""

from __future__ import annotations

from dataclasses import dataclass

SCALA = "core/src/main/scala/kafka/tools/DumpLogSegments.scala"
JAVA = "tools/src/main/java/org/apache/kafka/tools/DumpLogSegments.java"

#: The releases ``--kafka-version`` accepts (feature releases; a patch release such as 3.9.1 names its line).
RELEASES = ("2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "4.0", "4.1",
            "4.2", "4.3")
DEFAULT_RELEASE = "4.3"
#: The oldest release whose record and batch lines kseg reproduces; 2.8 gets 3.0's (docs/dump.md lists what
#: 2.8 printed differently, and the one dialect kseg keeps for the offsets decoder of 3.0-3.7).
OLDEST_MODELLED = "3.0"


@dataclass(frozen=True, slots=True)
class Change:
    """One difference in the tool's text: the first release with the new text, and where it is."""

    flag: str
    since: str
    until: str | None  # first release where the change is gone again (None: still there in 4.3)
    source: str
    text: str


#: Every modelled difference, oldest first.  ``since``/``until`` are feature releases.
CHANGES: tuple[Change, ...] = (
    Change("producer_last_timestamp", "3.1", None, f"{SCALA} 3.1 dumpProducerIdSnapshot",
           "producer-snapshot lines print 'lastTimestamp: <ms>' after currentTxnFirstOffset"),
    Change("producer_optional_long", "3.5", None,
           "storage/src/main/java/org/apache/kafka/storage/internals/log/ProducerStateEntry.java 3.5 (before: "
           "core/src/main/scala/kafka/log/ProducerStateManager.scala, currentTxnFirstOffset: Option[Long])",
           "producer-snapshot lines print 'currentTxnFirstOffset: OptionalLong[12]' / 'OptionalLong.empty' "
           "(before: 'Some(12)' / 'None')"),
    Change("delete_horizon", "3.2", None, f"{SCALA} 3.2 printBatchLevel",
           "V2 batch lines end their first half with ' deleteHorizonMs: OptionalLong...'"),
    Change("log_starting_offset", "3.3", None, f"{SCALA} 3.3 dumpLog",
           "a .log starts 'Log starting offset: N' (before: 'Starting offset: N')"),
    Change("snapshot_control_json", "3.3", None, f"{SCALA} 3.3 dumpLog (SnapshotHeaderRecordJsonConverter)",
           "SNAPSHOT_HEADER/SNAPSHOT_FOOTER control records print 'SnapshotHeader {json}' / 'SnapshotFooter {json}' "
           "(before: 'controlType: SNAPSHOT_HEADER(3)', value not read)"),
    Change("kraft_control_json", "3.8", None,
           f"{SCALA} 3.8 dumpLog; clients/src/main/java/org/apache/kafka/common/record/ControlRecordType.java 3.8",
           "KRAFT_VERSION/KRAFT_VOTERS control records print 'KRaftVersion {json}' / 'KRaftVoters {json}' (before: "
           "the enum had no such types: 'controlType: UNKNOWN(5)', value not read)"),
    Change("deprecated_decoder_notice", "3.8", "4.0",
           f"{SCALA} 3.8-3.9 convertDeprecatedDecoderClass; 4.0 dropped kafka.serializer.Decoder",
           "kafka.serializer.StringDecoder prints 'kafka.serializer.StringDecoder is deprecated. Please use "
           "org.apache.kafka.tools.api.StringDecoder instead' (before 3.8 it is the default class; from 4.0 "
           "the class is gone and the tool dies)"),
    Change("remote_txn_idx_empty", "4.0", None,
           "storage/api/src/main/java/org/apache/kafka/server/log/remote/storage/RemoteLogSegmentMetadata.java "
           "and storage/.../RemoteLogSegmentMetadataSnapshot.java toString (KAFKA-16780)",
           "--remote-log-metadata-decoder lines end ', txnIdxEmpty=<bool>}'"),
    Change("offsets_types_4_0", "4.0", "4.1",
           f"{SCALA} 4.0 OffsetsMessageParser.prepareKey (share-group and regex keys added)",
           "--offsets-decoder knows record types 0-16 (3.8-3.9: 0-8)"),
    Change("coordinator_json_4_1", "4.1", None,
           f"{SCALA} 4.1 CoordinatorRecordMessageParser; transaction-coordinator/src/main/resources/common/"
           "message/TransactionLogKey.json, TransactionLogValue.json",
           "--transaction-log-decoder prints key {\"type\":\"0\",\"data\":{...}} and payload "
           "{\"version\":\"<v>\",\"data\":{...}} (before: transaction_metadata::transactionalId=... and "
           "producerId:...,state=...); --share-group-state-decoder labels the payload \"version\" (4.0: "
           "\"type\"); a missing key says 'using the specified decoder'; --offsets-decoder knows record types "
           "0-8, 10-17, 19-23 (group-coordinator/src/main/resources/common/message/*Key.json)"),
    Change("leader_change_json", "4.1", None,
           f"{SCALA} 4.1 printControlRecord (LeaderChangeMessageJsonConverter)",
           "a LEADER_CHANGE control record prints 'LeaderChange: {json}' (before: 'controlType: "
           "LEADER_CHANGE(2)'), and a LeaderChange value the tool cannot read stops it"),
    Change("java_port", "4.3", None,
           f"{JAVA} (the 4.3 Java port): printRecordMetadata, printRecordContents, dumpProducerIdSnapshot, "
           "dumpBatchRecords, TimeIndexDumpErrors.printErrors, main",
           "V0/V1 record lines end 'crc: <n>' (no stray '}'); --skip-record-metadata prints '| payload:' when "
           "there is no key; producer-snapshot lines have no trailing space; the stderr summaries come from "
           "java.util.HashMap/TreeMap: non-consecutive offsets ascending and starting from -1 ('-1 is followed "
           "by 4' for a log that does not start at 0), index mismatches one per index offset, newest offset "
           "first; 'The following indexed offsets are not found in :<path>'"),
    Change("record_internal_package", "4.3", None,
           "clients/src/main/java/org/apache/kafka/common/record/internal/Record.java 4.3 (KAFKA-20128 moved "
           "the non-public record classes from org.apache.kafka.common.record)",
           "--remote-log-metadata-decoder on a record without value prints the NullPointerException text "
           "naming 'org.apache.kafka.common.record.internal.Record.value()' (before: "
           "'org.apache.kafka.common.record.Record.value()')"),
)

_BY_FLAG = {change.flag: change for change in CHANGES}


def _key(release: str) -> tuple[int, int]:
    major, minor = release.split(".")
    return int(major), int(minor)


@dataclass(frozen=True, slots=True)
class Dialect:
    """The text of one release's kafka-dump-log, as flags (see :data:`CHANGES` for each one's source)."""

    release: str
    producer_last_timestamp: bool
    producer_optional_long: bool
    delete_horizon: bool
    log_starting_offset: bool
    snapshot_control_json: bool
    kraft_control_json: bool
    deprecated_decoder_notice: bool
    remote_txn_idx_empty: bool
    offsets_types_4_0: bool
    coordinator_json_4_1: bool
    leader_change_json: bool
    java_port: bool
    record_internal_package: bool

    @property
    def legacy_crc_brace(self) -> bool:
        """Scala's ``crc: ${r.checksum}}`` typo after a V0/V1 record's crc."""
        return not self.java_port

    @property
    def offsets_known_types(self) -> frozenset[int] | None:
        """The ``__consumer_offsets`` record types this release's decoder prints (None: 4.0's 0-16)."""
        if self.coordinator_json_4_1:
            return frozenset((*range(9), *range(10, 18), *range(19, 24)))
        if self.offsets_types_4_0:
            return frozenset(range(17))
        return frozenset(range(9))

    @property
    def modelled(self) -> bool:
        """False for 2.8, whose record lines kseg does not reproduce (docs/dump.md)."""
        return _key(self.release) >= _key(OLDEST_MODELLED)

    @property
    def json_offsets_decoder(self) -> bool:
        """3.8 replaced GroupMetadataManager.formatRecordKeyAndValue (not modelled: 3.0-3.7 get 3.8's JSON)
        and made org.apache.kafka.tools.api.StringDecoder the default decoder class (before:
        kafka.serializer.StringDecoder, accepted without a notice)."""
        return _key(self.release) >= _key("3.8")

    def reads_control_value(self, type_id: int) -> bool:
        """Does ``printControlRecord`` (or 3.x's dumpLog) read this control type's value (and die on it)?"""
        if type_id in (0, 1):
            return True
        if type_id == 2:
            return self.leader_change_json
        if type_id in (3, 4):
            return self.snapshot_control_json
        if type_id in (5, 6):
            return self.kraft_control_json
        return False

    def control_label(self, type_id: int, name: str) -> str | None:
        """``controlType: NAME(id)`` where this release's tool names a KRaft control record without its JSON
        (None: it prints the JSON).  Before 3.8 the enum has no types 5 and 6: ``UNKNOWN``."""
        if type_id in (0, 1) or self.reads_control_value(type_id):
            return None
        if type_id in (5, 6) and not self.kraft_control_json:
            return f"controlType: UNKNOWN({type_id})"
        return f"controlType: {name}({type_id})"


def _has(flag: str, release: str) -> bool:
    change = _BY_FLAG[flag]
    at = _key(release)
    return _key(change.since) <= at and (change.until is None or at < _key(change.until))


def normalize_release(text: str) -> str | None:
    """``4.2``, ``4.2.1``, ``v3.9.0`` -> the feature release in :data:`RELEASES`; None when unknown."""
    parts = text.strip().removeprefix("v").split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:3]) or len(parts) > 3:
        return None
    release = f"{int(parts[0])}.{int(parts[1])}"
    return release if release in RELEASES else None


def dialect_for(release: str) -> Dialect:
    """The dialect of a release in :data:`RELEASES` (``ValueError`` for any other)."""
    if release not in RELEASES:
        raise ValueError(f"unknown Kafka release {release!r}")
    return Dialect(release, **{flag: _has(flag, release) for flag in _BY_FLAG})


DEFAULT_DIALECT = dialect_for(DEFAULT_RELEASE)
