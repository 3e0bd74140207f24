/*
 * DumpLines: the .log part of kafka-dump-log.sh (DumpLogSegments.dumpLog / printBatchLevel), written
 * against kafka-clients 4.3.0 so that every value printed comes from Kafka's own record classes
 * (FileRecords, RecordBatch, Record, EndTransactionMarker, OptionalLong/TimestampType/CompressionType
 * toString, and Java's UTF-8 String decoding for keys, payloads and header keys).
 *
 * Part of kseg's interop tests (tests/interop/test_dump_vs_kafka.py), which compile it with the jars of
 * jars.py. DumpLogSegments itself lives in Kafka's core (Scala) jar, which the harness does not have; this
 * file follows its templates (reference §6.3) line for line for data, COMMIT and ABORT batches.
 *
 *   java DumpLines dump OUT ERR [--java] [--deep-iteration] [--print-data-log] [--skip-record-metadata] FILE...
 *       --java: the text of Kafka 4.3.0's Java port (tools/src/main/java/org/apache/kafka/tools/DumpLogSegments.java:
 *       printRecordMetadata, printRecordContents, dumpBatchRecords' TreeMap of non-consecutive pairs starting
 *       from -1); without it the Scala tool's of 4.2 (core/src/main/scala/kafka/tools/DumpLogSegments.scala).
 *       stdout lines go to OUT, the "Non-consecutive offsets" summary to ERR (UTF-8 files). Where the real
 *       tool would die with an exception, this one writes "!! <exception class>: <message>" to ERR and goes
 *       on with the next file (as kseg does), so that what was printed before the exception can be compared.
 *   java DumpLines kraft OUT
 *       writes to OUT (a .log) KRaft control batches built by Kafka's own classes (MemoryRecords.withLeaderChangeMessage,
 *       withSnapshotHeaderRecord, withSnapshotFooterRecord, withKRaftVersionRecord, withVotersRecord,
 *       withEndTransactionMarker), at offsets 0.., timestamp 1700000000000, leader epoch 3: the control records
 *       that DumpLogSegments.printControlRecord prints with kafka-clients' generated JSON converters.
 *   java DumpLines hashmap IN OUT
 *       IN holds groups of keys (one per line, groups separated by an empty line); per group, the keys are put
 *       into a java.util.HashMap with computeIfAbsent (as 4.3's DumpLogSegments.main fills its summary maps)
 *       and OUT gets the map's iteration order, one key per line, groups separated by an empty line.
 *   java DumpLines utf8 IN OUT
 *       IN holds one hex byte string per line; OUT gets, per line, the hex of the UTF-8 encoding of
 *       new String(bytes, StandardCharsets.UTF_8).
 */

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.AbstractLegacyRecordBatch;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

public final class DumpLines {

    private DumpLines() {
    }

    public static void main(String[] args) throws IOException {
        if (args[0].equals("utf8")) {
            utf8(args[1], args[2]);
            return;
        }
        if (args[0].equals("hashmap")) {
            hashMapOrder(args[1], args[2]);
            return;
        }
        if (args[0].equals("kraft")) {
            KraftControl.write(args[1]);
            return;
        }
        boolean deep = false;
        boolean print = false;
        boolean skip = false;
        boolean javaPort = false;
        List<String> files = new ArrayList<>();
        for (int i = 3; i < args.length; i++) {
            switch (args[i]) {
                case "--deep-iteration": deep = true; break;
                case "--print-data-log": print = true; break;
                case "--skip-record-metadata": skip = true; break;
                case "--java": javaPort = true; break;
                default: files.add(args[i]);
            }
        }
        StringBuilder out = new StringBuilder();
        Map<String, List<long[]>> nonConsecutive = new LinkedHashMap<>();
        StringBuilder err = new StringBuilder();
        for (String name : files) {
            File file = new File(name);
            out.append("Dumping ").append(file).append('\n');
            try {
                dumpLog(file, print, deep || print, skip, javaPort, out, nonConsecutive);
            } catch (RuntimeException e) {
                if (out.length() > 0 && out.charAt(out.length() - 1) != '\n') out.append('\n');
                err.append("!! ").append(e.getClass().getSimpleName()).append(": ").append(e.getMessage()).append('\n');
            }
        }
        for (Map.Entry<String, List<long[]>> entry : nonConsecutive.entrySet()) {
            err.append("Non-consecutive offsets in ").append(entry.getKey()).append('\n');
            for (long[] pair : entry.getValue()) {
                err.append("  ").append(pair[0]).append(" is followed by ").append(pair[1]).append('\n');
            }
        }
        Files.write(Paths.get(args[1]), out.toString().getBytes(StandardCharsets.UTF_8));
        Files.write(Paths.get(args[2]), err.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static void dumpLog(File file, boolean printContents, boolean deep, boolean skipMetadata, boolean javaPort,
                                StringBuilder out, Map<String, List<long[]>> nonConsecutive) throws IOException {
        long startOffset = Long.parseLong(file.getName().split("\\.")[0]);
        out.append("Log starting offset: ").append(startOffset).append('\n');
        FileRecords fileRecords = FileRecords.open(file, false);
        try {
            long validBytes = 0L;
            long lastOffset = -1L;
            for (FileChannelRecordBatch batch : fileRecords.batches()) {
                printBatchLevel(batch, validBytes, out);
                if (deep) {
                    for (Record record : batch) {
                        if (javaPort) {
                            // 4.3 dumpBatchRecords: a TreeMap keyed by the previous offset, from -1
                            if (record.offset() != lastOffset + 1) {
                                List<long[]> pairs = nonConsecutive.computeIfAbsent(file.getAbsolutePath(), k -> new ArrayList<>());
                                TreeMap<Long, Long> sorted = new TreeMap<>();
                                for (long[] pair : pairs) sorted.put(pair[0], pair[1]);
                                sorted.put(lastOffset, record.offset());
                                pairs.clear();
                                sorted.forEach((a, b) -> pairs.add(new long[]{a, b}));
                            }
                        } else if (lastOffset == -1) {
                            lastOffset = record.offset();
                        } else if (record.offset() != lastOffset + 1) {
                            nonConsecutive.computeIfAbsent(file.getAbsolutePath(), k -> new ArrayList<>())
                                .add(0, new long[]{lastOffset, record.offset()});
                        }
                        lastOffset = record.offset();
                        String prefix = "| ";
                        if (!skipMetadata) {
                            out.append(prefix).append("offset: ").append(record.offset()).append(' ')
                                .append(batch.timestampType()).append(": ").append(record.timestamp())
                                .append(" keySize: ").append(record.keySize())
                                .append(" valueSize: ").append(record.valueSize());
                            prefix = " ";
                            if (batch.magic() >= RecordBatch.MAGIC_VALUE_V2) {
                                StringBuilder keys = new StringBuilder("[");
                                Header[] headers = record.headers();
                                for (int i = 0; i < headers.length; i++) {
                                    if (i > 0) keys.append(',');
                                    keys.append(headers[i].key());
                                }
                                keys.append(']');
                                out.append(" sequence: ").append(record.sequence()).append(" headerKeys: ").append(keys);
                            }
                            if (record instanceof AbstractLegacyRecordBatch) {
                                AbstractLegacyRecordBatch r = (AbstractLegacyRecordBatch) record;
                                out.append(" isValid: ").append(r.isValid()).append(" crc: ").append(r.checksum());
                                if (!javaPort) out.append('}');  // Scala's typo, gone in the 4.3 port
                            }
                            if (batch.isControlBatch()) {
                                KraftControl.print(record, out);  // printControlRecord: the same in 4.1-4.3
                            }
                        }
                        if (printContents && !batch.isControlBatch()) {
                            if (record.hasKey()) {
                                out.append(prefix).append("key: ").append(string(record.key()));
                                prefix = " ";
                            }
                            if (record.hasValue()) {  // 4.3 printRecordContents hands the prefix on
                                out.append(javaPort ? prefix : " ").append("payload: ").append(string(record.value()));
                            }
                        }
                        out.append('\n');
                    }
                }
                validBytes += batch.sizeInBytes();
            }
            long trailingBytes = fileRecords.sizeInBytes() - validBytes;
            if (trailingBytes > 0) {
                out.append("Found ").append(trailingBytes).append(" invalid bytes at the end of ").append(file.getName()).append('\n');
            }
        } finally {
            fileRecords.closeHandlers();
        }
    }

    private static String string(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static void printBatchLevel(FileChannelRecordBatch batch, long position, StringBuilder out) {
        if (batch.magic() >= RecordBatch.MAGIC_VALUE_V2) {
            out.append("baseOffset: ").append(batch.baseOffset()).append(" lastOffset: ").append(batch.lastOffset())
                .append(" count: ").append(batch.countOrNull())
                .append(" baseSequence: ").append(batch.baseSequence()).append(" lastSequence: ").append(batch.lastSequence())
                .append(" producerId: ").append(batch.producerId()).append(" producerEpoch: ").append(batch.producerEpoch())
                .append(" partitionLeaderEpoch: ").append(batch.partitionLeaderEpoch())
                .append(" isTransactional: ").append(batch.isTransactional())
                .append(" isControl: ").append(batch.isControlBatch())
                .append(" deleteHorizonMs: ").append(batch.deleteHorizonMs());
        } else {
            out.append("offset: ").append(batch.lastOffset());
        }
        // Scala builds the whole second half before println: an exception in it prints none of it
        String rest = " position: " + position + " " + batch.timestampType() + ": " + batch.maxTimestamp()
            + " size: " + batch.sizeInBytes() + " magic: " + batch.magic()
            + " compresscodec: " + batch.compressionType().name + " crc: " + batch.checksum()
            + " isvalid: " + batch.isValid();
        out.append(rest).append('\n');
    }

    private static void hashMapOrder(String in, String outPath) throws IOException {
        StringBuilder out = new StringBuilder();
        Map<String, Integer> map = new java.util.HashMap<>();
        List<String> lines = new ArrayList<>(Files.readAllLines(Paths.get(in), StandardCharsets.UTF_8));
        lines.add("");
        for (String line : lines) {
            if (line.isEmpty()) {
                if (!map.isEmpty()) {
                    map.keySet().forEach(key -> out.append(key).append('\n'));
                    out.append('\n');
                }
                map = new java.util.HashMap<>();
            } else {
                map.computeIfAbsent(line, k -> 0);
            }
        }
        Files.write(Paths.get(outPath), out.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static void utf8(String in, String outPath) throws IOException {
        StringBuilder out = new StringBuilder();
        for (String line : Files.readAllLines(Paths.get(in), StandardCharsets.US_ASCII)) {
            byte[] bytes = new byte[line.length() / 2];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = (byte) Integer.parseInt(line.substring(2 * i, 2 * i + 2), 16);
            }
            byte[] decoded = new String(bytes, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
            for (byte b : decoded) {
                out.append(String.format("%02x", b & 0xff));
            }
            out.append('\n');
        }
        Files.write(Paths.get(outPath), out.toString().getBytes(StandardCharsets.US_ASCII));
    }
}
