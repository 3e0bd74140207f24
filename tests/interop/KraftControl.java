/*
 * KraftControl: DumpLogSegments.printControlRecord of Kafka 4.3.0 (tools/src/main/java/org/apache/kafka/tools/
 * DumpLogSegments.java; the Scala tool of 4.1-4.2 prints the same), on kafka-clients' own ControlRecordUtils and
 * generated JSON converters; and a writer of KRaft control batches built by MemoryRecords' own factories.
 * Part of kseg's interop tests (DumpLines.java, tests/interop/test_dump_vs_kafka.py).
 */

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.List;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.KRaftVersionRecord;
import org.apache.kafka.common.message.KRaftVersionRecordJsonConverter;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.message.LeaderChangeMessageJsonConverter;
import org.apache.kafka.common.message.SnapshotFooterRecord;
import org.apache.kafka.common.message.SnapshotFooterRecordJsonConverter;
import org.apache.kafka.common.message.SnapshotHeaderRecord;
import org.apache.kafka.common.message.SnapshotHeaderRecordJsonConverter;
import org.apache.kafka.common.message.VotersRecord;
import org.apache.kafka.common.message.VotersRecordJsonConverter;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.ControlRecordUtils;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;

final class KraftControl {
    private static final long TS = 1_700_000_000_000L;
    private static final int EPOCH = 3;

    private KraftControl() {
    }

    static void print(Record record, StringBuilder out) {
        short controlTypeId = ControlRecordType.parseTypeId(record.key());
        ControlRecordType controlType = ControlRecordType.fromTypeId(controlTypeId);
        switch (controlType) {
            case ABORT:
            case COMMIT:
                EndTransactionMarker endTxnMarker = EndTransactionMarker.deserialize(record);
                out.append(" endTxnMarker: ").append(endTxnMarker.controlType())
                    .append(" coordinatorEpoch: ").append(endTxnMarker.coordinatorEpoch());
                break;
            case LEADER_CHANGE:
                LeaderChangeMessage leaderChange = ControlRecordUtils.deserializeLeaderChangeMessage(record);
                out.append(" LeaderChange: ")
                    .append(LeaderChangeMessageJsonConverter.write(leaderChange, leaderChange.version()));
                break;
            case SNAPSHOT_HEADER:
                SnapshotHeaderRecord header = ControlRecordUtils.deserializeSnapshotHeaderRecord(record);
                out.append(" SnapshotHeader ").append(SnapshotHeaderRecordJsonConverter.write(header, header.version()));
                break;
            case SNAPSHOT_FOOTER:
                SnapshotFooterRecord footer = ControlRecordUtils.deserializeSnapshotFooterRecord(record);
                out.append(" SnapshotFooter ").append(SnapshotFooterRecordJsonConverter.write(footer, footer.version()));
                break;
            case KRAFT_VERSION:
                KRaftVersionRecord kraftVersion = ControlRecordUtils.deserializeKRaftVersionRecord(record);
                out.append(" KRaftVersion ")
                    .append(KRaftVersionRecordJsonConverter.write(kraftVersion, kraftVersion.version()));
                break;
            case KRAFT_VOTERS:
                VotersRecord voters = ControlRecordUtils.deserializeVotersRecord(record);
                out.append(" KRaftVoters ").append(VotersRecordJsonConverter.write(voters, voters.version()));
                break;
            default:
                out.append(" controlType: ").append(controlType).append('(').append(controlTypeId).append(')');
                break;
        }
    }

    static void write(String path) throws IOException {
        Uuid dir = Uuid.fromString("X5HJ16TOTVq6t4OyiVmQOw");
        List<MemoryRecords> batches = List.of(
            MemoryRecords.withSnapshotHeaderRecord(0, TS, EPOCH, ByteBuffer.allocate(256),
                new SnapshotHeaderRecord().setVersion((short) 0).setLastContainedLogTimestamp(TS - 1)),
            MemoryRecords.withLeaderChangeMessage(1, TS, EPOCH, ByteBuffer.allocate(256),
                new LeaderChangeMessage().setVersion((short) 0).setLeaderId(1)
                    .setVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1),
                        new LeaderChangeMessage.Voter().setVoterId(2)))
                    .setGrantingVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1)))),
            MemoryRecords.withLeaderChangeMessage(2, TS, EPOCH, ByteBuffer.allocate(256),  // Version field 1
                new LeaderChangeMessage().setVersion((short) 1).setLeaderId(2)
                    .setVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(2)))
                    .setGrantingVoters(List.of())),
            MemoryRecords.withKRaftVersionRecord(3, TS, EPOCH, ByteBuffer.allocate(256),
                new KRaftVersionRecord().setVersion((short) 0).setKRaftVersion((short) 1)),
            MemoryRecords.withVotersRecord(4, TS, EPOCH, ByteBuffer.allocate(512),
                new VotersRecord().setVersion((short) 0).setVoters(List.of(new VotersRecord.Voter()
                    .setVoterId(1).setVoterDirectoryId(dir)
                    .setEndpoints(new VotersRecord.EndpointCollection(List.of(new VotersRecord.Endpoint()
                        .setName("CONTROLLER").setHost("kafka-1.example").setPort(9093)).iterator()))
                    .setKRaftVersionFeature(new VotersRecord.KRaftVersionFeature()
                        .setMinSupportedVersion((short) 0).setMaxSupportedVersion((short) 1))))),
            MemoryRecords.withSnapshotFooterRecord(5, TS, EPOCH, ByteBuffer.allocate(256),
                new SnapshotFooterRecord().setVersion((short) 0)),
            MemoryRecords.withEndTransactionMarker(6, TS, EPOCH, 7000L, (short) 2,
                new EndTransactionMarker(ControlRecordType.COMMIT, 9)),
            MemoryRecords.withEndTransactionMarker(7, TS, EPOCH, 7001L, (short) 0,
                new EndTransactionMarker(ControlRecordType.ABORT, 10)));
        try (FileChannel channel = FileChannel.open(Paths.get(path), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            for (MemoryRecords records : batches) {
                ByteBuffer buffer = records.buffer().duplicate();
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
            }
        }
    }
}
