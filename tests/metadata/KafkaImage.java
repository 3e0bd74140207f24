// Kafka 4.3.0's own metadata replay (MetadataBatchLoader + MetadataDelta -> MetadataImage) on a metadata
// directory, printing the image as kseg's entities (JSON Lines) at the requested offsets. kseg's code,
// compiled at test time against ../shared/kafka's broker jar (tests/metadata/kafka_image.py).
//
// usage: KafkaImage [LOG START N OFFSET*N]...   one job per triple, one JVM for all. LOG = one .log file, or a
// directory: all its segments in offset order. START = "log" (replay from the log's first record) or a .checkpoint file (its image, then the log after it). Per job a
// {"type":"job"} line; per offset that ends a batch, {"type":"image","at":N}, the entities, {"type":"end"};
// {"type":"fault",...} for every fault the loader reports.
import java.io.File;
import java.util.*;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.internal.*;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.image.*;
import org.apache.kafka.image.loader.MetadataBatchLoader;
import org.apache.kafka.metadata.BrokerRegistration;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.raft.Batch;
import org.apache.kafka.raft.LeaderAndEpoch;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.config.DefaultSupportedConfigChecker;

public class KafkaImage {
    static MetadataImage current = MetadataImage.EMPTY;
    static final StringBuilder out = new StringBuilder();

    public static void main(String[] args) throws Exception {
        int i = 0;
        while (i < args.length) {
            File log = new File(args[i]);
            String start = args[i + 1];
            int n = Integer.parseInt(args[i + 2]);
            TreeSet<Long> wanted = new TreeSet<>();
            for (int k = 0; k < n; k++) wanted.add(Long.parseLong(args[i + 3 + k]));
            i += 3 + n;
            line("{\"type\":\"job\",\"log\":" + q(log.getPath()) + ",\"start\":" + q(start) + "}");
            job(log, start, wanted);
        }
        System.out.print(out);
    }

    static void job(File log, String start, TreeSet<Long> wanted) throws Exception {
        current = MetadataImage.EMPTY;
        DefaultSupportedConfigChecker checker = new DefaultSupportedConfigChecker();
        MetadataBatchLoader loader = new MetadataBatchLoader(new LogContext(), Time.SYSTEM,
            (msg, cause) -> { fault(msg + ": " + cause); return new RuntimeException(msg, cause); },
            (delta, image, manifest) -> current = image, checker);
        long from = 0;
        if (!start.equals("log")) {
            String name = new File(start).getName();
            long end = Long.parseLong(name.substring(0, 20));
            MetadataDelta delta = new MetadataDelta.Builder().setImage(MetadataImage.EMPTY)
                .setSupportedConfigChecker(checker).build();
            for (RecordBatch batch : FileRecords.open(new File(start)).batches()) {
                if (batch.isControlBatch()) continue;
                for (ApiMessageAndVersion m : records(batch)) delta.replay(m.message());
            }
            current = delta.apply(new MetadataProvenance(end - 1, 0, -1, true));
            loader.resetToImage(current);
            from = end;
        }
        segments:
        for (File segment : segments(log)) {
            for (RecordBatch batch : FileRecords.open(segment).batches()) {
                if (!batch.isValid()) break segments;  // recovery truncates the log at its first invalid batch
                if (batch.lastOffset() < from || batch.isControlBatch()) {
                    emitThrough(batch.lastOffset(), wanted);
                    continue;
                }
                List<ApiMessageAndVersion> recs = records(batch);
                if (recs.isEmpty()) {
                    emitThrough(batch.lastOffset(), wanted);
                    continue;
                }
                loader.loadBatch(Batch.data(batch.baseOffset(), batch.partitionLeaderEpoch(), batch.maxTimestamp(),
                    batch.sizeInBytes(), recs), LeaderAndEpoch.UNKNOWN);
                loader.maybeFlushBatches(LeaderAndEpoch.UNKNOWN, true);
                emitThrough(batch.lastOffset(), wanted);
            }
        }
    }

    // A .log file is that one segment; a directory is every NNNNNNNNNNNNNNNNNNNN.log in it, by base offset.
    static List<File> segments(File log) {
        if (!log.isDirectory()) return List.of(log);
        List<File> found = new ArrayList<>();
        File[] files = log.listFiles((dir, name) -> name.matches("[0-9]{20}\\.log"));
        if (files != null) found.addAll(Arrays.asList(files));
        found.sort(Comparator.comparing(File::getName));
        return found;
    }

    static List<ApiMessageAndVersion> records(RecordBatch batch) {
        List<ApiMessageAndVersion> list = new ArrayList<>();
        for (org.apache.kafka.common.record.internal.Record r : batch) {
            try {
                list.add(MetadataRecordSerde.INSTANCE.read(new ByteBufferAccessor(r.value()), r.valueSize()));
            } catch (RuntimeException e) {  // kseg reports and skips an undecodable record; so does this driver
                fault("undecodable record at offset " + r.offset() + ": " + e);
            }
        }
        return list;
    }

    static void emitThrough(long last, TreeSet<Long> wanted) {
        while (!wanted.isEmpty() && wanted.first() <= last) {
            long at = wanted.pollFirst();
            if (at == last) image(at);
        }
    }

    static void fault(String message) { line("{\"type\":\"fault\",\"message\":" + q(message) + "}"); }

    static void line(String s) { out.append(s).append('\n'); }

    static String q(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static String ints(int[] a) {
        StringJoiner j = new StringJoiner(",", "[", "]");
        for (int x : a) j.add(Integer.toString(x));
        return j.toString();
    }

    static String uuids(Collection<Uuid> a) {
        List<String> s = new ArrayList<>();
        for (Uuid u : a) s.add(q(u.toString()));
        Collections.sort(s);
        return "[" + String.join(",", s) + "]";
    }

    static void image(long at) {
        MetadataImage img = current;
        line("{\"type\":\"image\",\"at\":" + at + ",\"offset\":" + img.provenance().lastContainedOffset() + "}");
        img.features().metadataVersion().ifPresent(v ->
            line("{\"type\":\"feature\",\"name\":\"metadata.version\",\"level\":" + v.featureLevel() + "}"));
        for (Map.Entry<String, Short> f : new TreeMap<>(img.features().finalizedVersions()).entrySet())
            if (!f.getKey().equals("metadata.version"))
                line("{\"type\":\"feature\",\"name\":" + q(f.getKey()) + ",\"level\":" + f.getValue() + "}");
        for (BrokerRegistration b : new TreeMap<>(img.cluster().brokers()).values())
            line("{\"type\":\"broker\",\"id\":" + b.id() + ",\"epoch\":" + b.epoch() + ",\"fenced\":" + b.fenced()
                + ",\"in_controlled_shutdown\":" + b.inControlledShutdown() + ",\"log_dirs\":" + uuids(b.directories())
                + ",\"incarnation_id\":" + q(b.incarnationId().toString()) + ",\"rack\":" + q(b.rack().orElse(null)) + "}");
        for (TopicImage t : new TreeMap<>(img.topics().topicsByName()).values()) {
            line("{\"type\":\"topic\",\"name\":" + q(t.name()) + ",\"topic_id\":" + q(t.id().toString())
                + ",\"partitions\":" + t.partitions().size() + "}");
            for (Map.Entry<Integer, PartitionRegistration> e : new TreeMap<>(t.partitions()).entrySet()) {
                PartitionRegistration p = e.getValue();
                List<String> dirs = new ArrayList<>();
                for (Uuid u : p.directories) dirs.add(q(u.toString()));
                line("{\"type\":\"partition\",\"topic\":" + q(t.name()) + ",\"partition\":" + e.getKey()
                    + ",\"replicas\":" + ints(p.replicas) + ",\"isr\":" + ints(p.isr) + ",\"elr\":" + ints(p.elr)
                    + ",\"last_known_elr\":" + ints(p.lastKnownElr) + ",\"leader\":" + p.leader
                    + ",\"leader_epoch\":" + p.leaderEpoch + ",\"partition_epoch\":" + p.partitionEpoch
                    + ",\"directories\":[" + String.join(",", dirs) + "],\"removing_replicas\":" + ints(p.removingReplicas)
                    + ",\"adding_replicas\":" + ints(p.addingReplicas) + ",\"leader_recovery_state\":"
                    + p.leaderRecoveryState.value() + "}");
            }
        }
        for (Map.Entry<ConfigResource, ConfigurationImage> e : img.configs().resourceData().entrySet())
            for (Map.Entry<String, String> kv : e.getValue().toMap().entrySet())
                line("{\"type\":\"config\",\"resource_type_id\":" + e.getKey().type().id() + ",\"resource\":"
                    + q(e.getKey().name()) + ",\"key\":" + q(kv.getKey()) + ",\"value\":" + q(kv.getValue()) + "}");
        for (Map.Entry<Uuid, StandardAcl> e : img.acls().acls().entrySet()) {
            StandardAcl a = e.getValue();
            line("{\"type\":\"acl\",\"id\":" + q(e.getKey().toString()) + ",\"resource_type\":" + a.resourceType().code()
                + ",\"resource\":" + q(a.resourceName()) + ",\"pattern_type\":" + a.patternType().code()
                + ",\"principal\":" + q(a.principal()) + ",\"host\":" + q(a.host()) + ",\"operation\":"
                + a.operation().code() + ",\"permission_type\":" + a.permissionType().code() + "}");
        }
        if (img.producerIds().nextProducerId() >= 0)
            line("{\"type\":\"producer_ids\",\"next_producer_id\":" + img.producerIds().nextProducerId() + "}");
        line("{\"type\":\"end\"}");
    }
}
