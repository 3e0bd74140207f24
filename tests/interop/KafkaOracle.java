/*
 * KafkaOracle: Apache Kafka's own record code (kafka-clients 4.3.0) driven by a JSON job list.
 *
 * Part of kseg's interop test harness (tests/interop). oracle.py compiles this file with
 *     javac -cp <the five jars from jars.py> -d <jar cache>/classes KafkaOracle.java
 * and runs many jobs in one JVM:
 *     java -cp <classes>:<jars> KafkaOracle jobs.json results.json
 * jobs.json is a JSON array of job objects; results.json receives one result object per job, same order.
 * Binary values (keys, values, header values) travel as standard base64; null stays null.
 * Every timestamp comes from the jobs, so the output is deterministic.
 *
 * Jobs (see oracle.py for the full key list and defaults):
 *   {"op": "write", "out": PATH, "batches": [BATCH, ...]}
 *       Builds each batch with MemoryRecordsBuilder and writes the concatenated batches to PATH.
 *       -> {"ok": true, "size": N, "batch_sizes": [...]}
 *        | {"ok": false, "error": "ExceptionClass: message", "batch_index": i}   (Kafka refused)
 *   {"op": "read", "in": PATH}
 *       Walks FileRecords.open(PATH, false).batches() the way Kafka does and reports every batch and record.
 *   {"op": "validate", "in": PATH}
 *       ensureValid() on every batch, plus a full record iteration with Record.ensureValid().
 * A job that cannot run at all (unknown op, missing file, malformed job) gives {"ok": false, "error": ...}.
 *
 * Only public kafka-clients classes are used; the JSON reader/writer below is a minimal one written for
 * this harness (objects, arrays, strings, integers, booleans, null).
 */

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.AbstractLegacyRecordBatch;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.ByteBufferOutputStream;

public final class KafkaOracle {

    private KafkaOracle() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: java KafkaOracle jobs.json results.json");
            System.exit(2);
        }
        String input = new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8);
        List<Object> results = new ArrayList<>();
        for (Object job : asList(Json.parse(input))) {
            results.add(runJob(asMap(job)));
        }
        Files.write(Paths.get(args[1]), Json.write(results).getBytes(StandardCharsets.UTF_8));
    }

    static Map<String, Object> runJob(Map<String, Object> job) {
        try {
            String op = string(job, "op", null);
            switch (String.valueOf(op)) {
                case "write":
                    return Writer.write(job);
                case "read":
                    return Reader.read(job);
                case "validate":
                    return Reader.validate(job);
                default:
                    throw new JobError("unknown op " + op);
            }
        } catch (Throwable t) {
            return failure(t);
        }
    }

    // ------------------------------------------------------------------ write

    /** Builds batches with MemoryRecordsBuilder, exactly as the producer/broker would. */
    static final class Writer {

        static Map<String, Object> write(Map<String, Object> job) throws IOException {
            String out = string(job, "out", null);
            if (out == null) throw new JobError("write job needs \"out\"");
            List<Object> batches = asList(job.getOrDefault("batches", new ArrayList<>()));
            ByteBufferOutputStream file = new ByteBufferOutputStream(1024);
            List<Object> sizes = new ArrayList<>();
            for (int i = 0; i < batches.size(); i++) {
                ByteBuffer built;
                try {
                    built = buildBatch(asMap(batches.get(i)));
                } catch (Throwable t) {
                    Map<String, Object> result = failure(t);
                    result.put("batch_index", i);
                    return result;
                }
                sizes.add(built.remaining());
                file.write(built);
            }
            ByteBuffer bytes = file.buffer();
            bytes.flip();
            byte[] content = new byte[bytes.remaining()];
            bytes.get(content);
            Files.write(Paths.get(out), content);
            Map<String, Object> result = ok();
            result.put("size", content.length);
            result.put("batch_sizes", sizes);
            return result;
        }

        static ByteBuffer buildBatch(Map<String, Object> b) {
            Map<String, Object> marker = optMap(b, "end_txn_marker");
            List<Object> records = asList(b.getOrDefault("records", new ArrayList<>()));
            long baseOffset = longValue(b, "base_offset", defaultBaseOffset(records, marker));
            MemoryRecordsBuilder builder = new MemoryRecordsBuilder(
                new ByteBufferOutputStream(1024),
                (byte) longValue(b, "magic", RecordBatch.CURRENT_MAGIC_VALUE),
                compression(string(b, "codec", "none"), b.get("level")),
                TimestampType.forName(string(b, "timestamp_type", "CreateTime")),
                baseOffset,
                longValue(b, "log_append_time", RecordBatch.NO_TIMESTAMP),
                longValue(b, "producer_id", RecordBatch.NO_PRODUCER_ID),
                (short) longValue(b, "producer_epoch", RecordBatch.NO_PRODUCER_EPOCH),
                (int) longValue(b, "base_sequence", RecordBatch.NO_SEQUENCE),
                bool(b, "is_transactional", false),
                bool(b, "is_control_batch", marker != null),
                (int) longValue(b, "partition_leader_epoch", RecordBatch.NO_PARTITION_LEADER_EPOCH),
                Integer.MAX_VALUE,
                longValue(b, "delete_horizon_ms", RecordBatch.NO_TIMESTAMP));
            long nextOffset = baseOffset;
            for (Object r : records) {
                nextOffset = appendRecord(builder, asMap(r), nextOffset) + 1;
            }
            if (marker != null) {
                appendMarker(builder, marker, nextOffset);
            }
            MemoryRecords built = builder.build();
            return built.buffer().duplicate();
        }

        static long defaultBaseOffset(List<Object> records, Map<String, Object> marker) {
            if (!records.isEmpty()) return longValue(asMap(records.get(0)), "offset", 0);
            if (marker != null) return longValue(marker, "offset", 0);
            return 0;
        }

        /** Appends one record and returns its offset. */
        static long appendRecord(MemoryRecordsBuilder builder, Map<String, Object> r, long defaultOffset) {
            long offset = longValue(r, "offset", defaultOffset);
            builder.appendWithOffset(offset,
                longValue(r, "timestamp", RecordBatch.NO_TIMESTAMP),
                bytes(r.get("key")),
                bytes(r.get("value")),
                headers(asList(r.getOrDefault("headers", new ArrayList<>()))));
            return offset;
        }

        /** appendEndTxnMarker writes at the builder's next offset; "offset", if given, must be that one. */
        static void appendMarker(MemoryRecordsBuilder builder, Map<String, Object> m, long nextOffset) {
            long offset = longValue(m, "offset", nextOffset);
            if (offset != nextOffset) {
                throw new JobError("end_txn_marker offset " + offset + " is not the batch's next offset "
                    + nextOffset + " (set base_offset to it)");
            }
            ControlRecordType type = ControlRecordType.valueOf(string(m, "type", "COMMIT"));
            EndTransactionMarker marker =
                new EndTransactionMarker(type, (int) longValue(m, "coordinator_epoch", 0));
            builder.appendEndTxnMarker(longValue(m, "timestamp", RecordBatch.NO_TIMESTAMP), marker);
        }

        static Compression compression(String codec, Object level) {
            CompressionType type = CompressionType.forName(codec);
            if (level == null) return Compression.of(type).build();
            int n = (int) asLong(level);
            switch (type) {
                case GZIP:
                    return Compression.gzip().level(n).build();
                case LZ4:
                    return Compression.lz4().level(n).build();
                case ZSTD:
                    return Compression.zstd().level(n).build();
                default:
                    throw new JobError("codec " + codec + " has no compression level");
            }
        }

        static Header[] headers(List<Object> pairs) {
            Header[] headers = new Header[pairs.size()];
            for (int i = 0; i < headers.length; i++) {
                List<Object> pair = asList(pairs.get(i));
                headers[i] = new RecordHeader((String) pair.get(0), bytes(pair.get(1)));
            }
            return headers;
        }
    }

    // ------------------------------------------------------------------ read / validate

    /** Walks a file with FileRecords.batches(), as the broker's log layer does. */
    static final class Reader {

        static Map<String, Object> read(Map<String, Object> job) throws IOException {
            FileRecords records = open(job);
            try {
                Map<String, Object> result = ok();
                result.put("file_size", records.sizeInBytes());
                List<Object> batches = new ArrayList<>();
                long validBytes = 0;
                String error = null;
                try {
                    for (FileChannelRecordBatch batch : records.batches()) {
                        batches.add(describeBatch(batch));
                        validBytes += batch.sizeInBytes();
                    }
                } catch (Throwable t) {
                    error = describe(t);
                }
                result.put("valid_bytes", validBytes);
                result.put("error", error);
                result.put("batches", batches);
                return result;
            } finally {
                records.closeHandlers();
            }
        }

        static Map<String, Object> validate(Map<String, Object> job) throws IOException {
            FileRecords records = open(job);
            try {
                Map<String, Object> result = ok();
                result.put("file_size", records.sizeInBytes());
                List<Object> batches = new ArrayList<>();
                long validBytes = 0;
                boolean allValid = true;
                String error = null;
                try {
                    for (FileChannelRecordBatch batch : records.batches()) {
                        Map<String, Object> m = validateBatch(batch);
                        allValid &= m.get("error") == null && m.get("records_error") == null;
                        batches.add(m);
                        validBytes += batch.sizeInBytes();
                    }
                } catch (Throwable t) {
                    error = describe(t);
                }
                result.put("valid_bytes", validBytes);
                result.put("error", error);
                result.put("all_valid", allValid && error == null && validBytes == records.sizeInBytes());
                result.put("batches", batches);
                return result;
            } finally {
                records.closeHandlers();
            }
        }

        static FileRecords open(Map<String, Object> job) throws IOException {
            String in = string(job, "in", null);
            if (in == null) throw new JobError("job needs \"in\"");
            File file = new File(in);
            if (!file.isFile()) throw new JobError("no such file: " + in);
            return FileRecords.open(file, false);
        }

        static Map<String, Object> describeBatch(FileChannelRecordBatch batch) {
            Map<String, Object> m = new LinkedHashMap<>();
            Map<String, Object> errors = new LinkedHashMap<>();
            m.put("position", batch.position());
            m.put("sizeInBytes", batch.sizeInBytes());
            m.put("magic", batch.magic());
            field(m, errors, "baseOffset", batch::baseOffset);
            field(m, errors, "lastOffset", batch::lastOffset);
            field(m, errors, "countOrNull", batch::countOrNull);
            field(m, errors, "compressionType", () -> batch.compressionType().name);
            field(m, errors, "timestampType", () -> batch.timestampType().toString());
            field(m, errors, "maxTimestamp", batch::maxTimestamp);
            field(m, errors, "checksum", batch::checksum);
            field(m, errors, "isValid", batch::isValid);
            field(m, errors, "producerId", batch::producerId);
            field(m, errors, "producerEpoch", batch::producerEpoch);
            field(m, errors, "baseSequence", batch::baseSequence);
            field(m, errors, "lastSequence", batch::lastSequence);
            field(m, errors, "partitionLeaderEpoch", batch::partitionLeaderEpoch);
            field(m, errors, "isTransactional", batch::isTransactional);
            field(m, errors, "isControlBatch", batch::isControlBatch);
            field(m, errors, "deleteHorizonMs", () -> orNull(batch.deleteHorizonMs()));
            if (!errors.isEmpty()) m.put("field_errors", errors);
            addRecords(m, batch);
            return m;
        }

        /** Iterates the batch's records; an exception ends the list and is kept as "records_error". */
        static void addRecords(Map<String, Object> m, FileChannelRecordBatch batch) {
            List<Object> records = new ArrayList<>();
            String error = null;
            try {
                boolean control = batch.isControlBatch();
                for (Record record : batch) {
                    records.add(describeRecord(record, control));
                }
            } catch (Throwable t) {
                error = describe(t);
            }
            m.put("records", records);
            m.put("records_error", error);
        }

        static Map<String, Object> describeRecord(Record r, boolean control) {
            Map<String, Object> m = new LinkedHashMap<>();
            Map<String, Object> errors = new LinkedHashMap<>();
            field(m, errors, "offset", r::offset);
            field(m, errors, "timestamp", r::timestamp);
            field(m, errors, "sequence", r::sequence);
            field(m, errors, "sizeInBytes", r::sizeInBytes);
            field(m, errors, "keySize", r::keySize);
            field(m, errors, "valueSize", r::valueSize);
            field(m, errors, "key", () -> base64(r.key()));
            field(m, errors, "value", () -> base64(r.value()));
            field(m, errors, "headers", () -> headers(r.headers()));
            if (r instanceof AbstractLegacyRecordBatch) {
                AbstractLegacyRecordBatch legacy = (AbstractLegacyRecordBatch) r;
                field(m, errors, "magic", legacy::magic);
                field(m, errors, "timestampType", () -> legacy.timestampType().toString());
                field(m, errors, "isValid", legacy::isValid);
                field(m, errors, "checksumOrNull", legacy::checksum);
            }
            if (control) m.put("control", describeControl(r));
            if (!errors.isEmpty()) m.put("field_errors", errors);
            return m;
        }

        static Map<String, Object> describeControl(Record r) {
            Map<String, Object> m = new LinkedHashMap<>();
            try {
                ControlRecordType type = ControlRecordType.parse(r.key());
                m.put("type", type.name());
                m.put("typeId", ControlRecordType.parseTypeId(r.key()));
                if (type == ControlRecordType.COMMIT || type == ControlRecordType.ABORT) {
                    m.put("coordinatorEpoch", EndTransactionMarker.deserialize(r).coordinatorEpoch());
                }
            } catch (Throwable t) {
                m.put("error", describe(t));
            }
            return m;
        }

        static Map<String, Object> validateBatch(FileChannelRecordBatch batch) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("position", batch.position());
            m.put("sizeInBytes", batch.sizeInBytes());
            m.put("magic", batch.magic());
            try {
                batch.ensureValid();
                m.put("error", null);
            } catch (Throwable t) {
                m.put("error", describe(t));
            }
            try {
                int count = 0;
                for (Record record : batch) {
                    record.ensureValid();
                    count++;
                }
                m.put("record_count", count);
                m.put("records_error", null);
            } catch (Throwable t) {
                m.put("record_count", null);
                m.put("records_error", describe(t));
            }
            return m;
        }

        static List<Object> headers(Header[] headers) {
            List<Object> out = new ArrayList<>();
            for (Header h : headers) {
                List<Object> pair = new ArrayList<>();
                pair.add(h.key());
                pair.add(h.value() == null ? null : Base64.getEncoder().encodeToString(h.value()));
                out.add(pair);
            }
            return out;
        }

        static String base64(ByteBuffer buffer) {
            if (buffer == null) return null;
            byte[] b = new byte[buffer.remaining()];
            buffer.duplicate().get(b);
            return Base64.getEncoder().encodeToString(b);
        }

        static Object orNull(OptionalLong value) {
            return value.isPresent() ? (Object) value.getAsLong() : null;
        }
    }

    // ------------------------------------------------------------------ small helpers

    /** Thrown for jobs the harness itself cannot run (as opposed to Kafka refusing them). */
    static final class JobError extends RuntimeException {
        private static final long serialVersionUID = 1L;

        JobError(String message) {
            super(message);
        }
    }

    interface Getter {
        Object get() throws Exception;
    }

    /** Puts name -> getter() into m, or name -> null and the exception text into errors. */
    static void field(Map<String, Object> m, Map<String, Object> errors, String name, Getter getter) {
        try {
            m.put(name, getter.get());
        } catch (Throwable t) {
            m.put(name, null);
            errors.put(name, describe(t));
        }
    }

    static Map<String, Object> ok() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", true);
        return m;
    }

    static Map<String, Object> failure(Throwable t) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", false);
        m.put("error", describe(t));
        return m;
    }

    /**
     * "SimpleClassName: message", then "; caused by SimpleClassName: message" for each cause whose text
     * is not already the message (KafkaException(cause) uses cause.toString() as its message).
     */
    static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder(t.getClass().getSimpleName() + ": " + t.getMessage());
        Throwable cause = t.getCause();
        for (int depth = 0; cause != null && cause != t && depth < 5; depth++) {
            if (!cause.toString().equals(t.getMessage())) {
                sb.append("; caused by ").append(cause.getClass().getSimpleName()).append(": ")
                    .append(cause.getMessage());
            }
            t = cause;
            cause = cause.getCause();
        }
        return sb.toString();
    }

    static byte[] bytes(Object base64) {
        return base64 == null ? null : Base64.getDecoder().decode((String) base64);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object o) {
        if (!(o instanceof Map)) throw new JobError("expected a JSON object, got " + o);
        return (Map<String, Object>) o;
    }

    static Map<String, Object> optMap(Map<String, Object> m, String key) {
        Object o = m.get(key);
        return o == null ? null : asMap(o);
    }

    @SuppressWarnings("unchecked")
    static List<Object> asList(Object o) {
        if (!(o instanceof List)) throw new JobError("expected a JSON array, got " + o);
        return (List<Object>) o;
    }

    static long asLong(Object o) {
        if (!(o instanceof Long)) throw new JobError("expected an integer, got " + o);
        return (Long) o;
    }

    static long longValue(Map<String, Object> m, String key, long dflt) {
        Object o = m.get(key);
        return o == null ? dflt : asLong(o);
    }

    static String string(Map<String, Object> m, String key, String dflt) {
        Object o = m.get(key);
        return o == null ? dflt : (String) o;
    }

    static boolean bool(Map<String, Object> m, String key, boolean dflt) {
        Object o = m.get(key);
        return o == null ? dflt : (Boolean) o;
    }

    // ------------------------------------------------------------------ minimal JSON

    /** JSON subset: objects, arrays, strings, integers (as Long), true/false/null. */
    static final class Json {
        private final String s;
        private int pos;

        private Json(String s) {
            this.s = s;
        }

        static Object parse(String text) {
            Json p = new Json(text);
            Object value = p.value();
            p.skipSpace();
            if (p.pos != text.length()) throw p.error("trailing characters");
            return value;
        }

        static String write(Object value) {
            StringBuilder sb = new StringBuilder();
            writeValue(sb, value);
            return sb.toString();
        }

        private Object value() {
            skipSpace();
            if (pos >= s.length()) throw error("unexpected end");
            char c = s.charAt(pos);
            if (c == '{') return object();
            if (c == '[') return array();
            if (c == '"') return string();
            if (c == '-' || (c >= '0' && c <= '9')) return number();
            if (s.startsWith("true", pos)) return literal(4, Boolean.TRUE);
            if (s.startsWith("false", pos)) return literal(5, Boolean.FALSE);
            if (s.startsWith("null", pos)) return literal(4, null);
            throw error("unexpected character '" + c + "'");
        }

        private Object literal(int length, Object value) {
            pos += length;
            return value;
        }

        private Map<String, Object> object() {
            Map<String, Object> m = new LinkedHashMap<>();
            pos++;
            if (peek() == '}') {
                pos++;
                return m;
            }
            while (true) {
                skipSpace();
                if (peek() != '"') throw error("expected a key");
                String key = string();
                expect(':');
                m.put(key, value());
                if (next() == '}') return m;
            }
        }

        private List<Object> array() {
            List<Object> list = new ArrayList<>();
            pos++;
            if (peek() == ']') {
                pos++;
                return list;
            }
            while (true) {
                list.add(value());
                if (next() == ']') return list;
            }
        }

        /** Consumes a ',' or the closing bracket and returns it. */
        private char next() {
            skipSpace();
            char c = s.charAt(pos++);
            if (c != ',' && c != '}' && c != ']') throw error("expected ',' or a closing bracket");
            return c;
        }

        private String string() {
            StringBuilder sb = new StringBuilder();
            pos++;
            while (true) {
                char c = s.charAt(pos++);
                if (c == '"') return sb.toString();
                if (c != '\\') {
                    sb.append(c);
                    continue;
                }
                char e = s.charAt(pos++);
                switch (e) {
                    case 'n': sb.append('\n'); break;
                    case 't': sb.append('\t'); break;
                    case 'r': sb.append('\r'); break;
                    case 'b': sb.append('\b'); break;
                    case 'f': sb.append('\f'); break;
                    case 'u':
                        sb.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                        pos += 4;
                        break;
                    default: sb.append(e);
                }
            }
        }

        private Object number() {
            int start = pos;
            if (s.charAt(pos) == '-') pos++;
            while (pos < s.length() && Character.isDigit(s.charAt(pos))) pos++;
            if (pos < s.length() && ".eE".indexOf(s.charAt(pos)) >= 0) throw error("only integers are supported");
            return Long.parseLong(s.substring(start, pos));
        }

        private void expect(char c) {
            skipSpace();
            if (pos >= s.length() || s.charAt(pos) != c) throw error("expected '" + c + "'");
            pos++;
        }

        private char peek() {
            skipSpace();
            return pos < s.length() ? s.charAt(pos) : '\0';
        }

        private void skipSpace() {
            while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) pos++;
        }

        private JobError error(String what) {
            return new JobError("bad JSON at character " + pos + ": " + what);
        }

        private static void writeValue(StringBuilder sb, Object v) {
            if (v == null) {
                sb.append("null");
            } else if (v instanceof String) {
                writeString(sb, (String) v);
            } else if (v instanceof Number || v instanceof Boolean) {
                sb.append(v);
            } else if (v instanceof Map) {
                writeObject(sb, asMap(v));
            } else if (v instanceof List) {
                writeArray(sb, asList(v));
            } else {
                writeString(sb, v.toString());
            }
        }

        private static void writeObject(StringBuilder sb, Map<String, Object> m) {
            sb.append('{');
            String sep = "";
            for (Map.Entry<String, Object> e : m.entrySet()) {
                sb.append(sep);
                writeString(sb, e.getKey());
                sb.append(':');
                writeValue(sb, e.getValue());
                sep = ",";
            }
            sb.append('}');
        }

        private static void writeArray(StringBuilder sb, List<Object> list) {
            sb.append('[');
            String sep = "";
            for (Object o : list) {
                sb.append(sep);
                writeValue(sb, o);
                sep = ",";
            }
            sb.append(']');
        }

        private static void writeString(StringBuilder sb, String str) {
            sb.append('"');
            for (int i = 0; i < str.length(); i++) {
                char c = str.charAt(i);
                if (c == '"' || c == '\\') {
                    sb.append('\\').append(c);
                } else if (c < 0x20) {
                    sb.append(String.format("\\u%04x", (int) c));
                } else {
                    sb.append(c);
                }
            }
            sb.append('"');
        }
    }
}
