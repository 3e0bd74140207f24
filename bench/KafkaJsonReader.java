/*
 * KafkaJsonReader: the reference of bench/bench_dump_core.py (issue 16) -- Kafka's own record reader
 * decoding a .log file to JSON Lines, one object per record, on a buffered stdout.
 *
 * Written against kafka-clients 4.3.0 (clients/src/main/java/org/apache/kafka/common/record/internal/
 * FileRecords.java, DefaultRecordBatch.java, DefaultRecord.java): FileRecords.open, batches(), each
 * batch's record iterator (decompressing where needed), key/value/headers as Kafka's Record API
 * hands them out. Keys, values and header values are written as JSON strings decoded with
 * new String(bytes, UTF_8) (null as null), so the work is the same kind as kseg's
 * `dump --format json --deep-iteration`: read every record, write its text.
 *
 *   javac -cp <jars> -d <classes> bench/KafkaJsonReader.java
 *   java -cp <classes>:<jars> KafkaJsonReader FILE > out.jsonl
 */

import java.io.BufferedWriter;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;

public final class KafkaJsonReader {

    private KafkaJsonReader() {
    }

    public static void main(String[] args) throws IOException {
        Writer out = new BufferedWriter(
            new OutputStreamWriter(new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8), 1 << 20);
        StringBuilder line = new StringBuilder(1024);
        long records = 0;
        try (FileRecords fileRecords = FileRecords.open(new File(args[0]), false)) {
            for (FileChannelRecordBatch batch : fileRecords.batches()) {
                for (Record record : batch) {
                    line.setLength(0);
                    line.append("{\"offset\":").append(record.offset())
                        .append(",\"timestamp\":").append(record.timestamp())
                        .append(",\"key\":");
                    text(line, record.hasKey() ? record.key() : null);
                    line.append(",\"value\":");
                    text(line, record.hasValue() ? record.value() : null);
                    line.append(",\"headers\":[");
                    Header[] headers = record.headers();
                    for (int i = 0; i < headers.length; i++) {
                        if (i > 0) {
                            line.append(',');
                        }
                        line.append('[');
                        string(line, headers[i].key());
                        line.append(',');
                        byte[] value = headers[i].value();
                        if (value == null) {
                            line.append("null");
                        } else {
                            string(line, new String(value, StandardCharsets.UTF_8));
                        }
                        line.append(']');
                    }
                    line.append("]}\n");
                    out.append(line);
                    records++;
                }
            }
        }
        out.flush();
        System.err.println(records + " records");
    }

    private static void text(StringBuilder line, ByteBuffer buffer) {
        if (buffer == null) {
            line.append("null");
            return;
        }
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        string(line, new String(bytes, StandardCharsets.UTF_8));
    }

    private static void string(StringBuilder line, String text) {
        line.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                line.append('\\').append(c);
            } else if (c < 0x20) {
                line.append(String.format("\\u%04x", (int) c));
            } else {
                line.append(c);
            }
        }
        line.append('"');
    }
}
