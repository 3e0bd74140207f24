// A KRaft metadata log of cluster churn, written with Kafka 4.3.0's own record classes and
// MetadataRecordSerde (kseg's code; tests/metadata/kafka_image.py compiles it with KafkaImage.java).
//
// usage: GenMetadataLog OUT.log SEED STEPS
// Deterministic for a seed: brokers registering, fencing and unfencing (by either record), topics created,
// deleted and re-created under the same name, reassignments (adding/removing replicas, then done), ISR
// shrinking and growing, leader changes and epoch-only bumps, ELR and last known ELR, ClearElr, topic and
// broker configs set and deleted (and one the broker does not support), ACLs added and removed, quotas,
// producer-id blocks, feature levels, NoOps, metadata transactions that end or abort (some across
// batches), and now and then a record Kafka's replay rejects (a stale broker epoch, an unknown partition).
import java.io.FileOutputStream;
import java.nio.ByteBuffer;
import java.util.*;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.metadata.*;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.ByteBufferOutputStream;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;

public class GenMetadataLog {
    static Random rng;
    static long offset = 0, time = 1_800_000_000_000L;
    static FileOutputStream out;
    static final Map<Integer, Long> brokers = new TreeMap<>();
    static final Map<String, Uuid> topics = new TreeMap<>();
    static final Map<Uuid, Integer> partitionCount = new HashMap<>();
    static final Map<String, int[]> replicas = new HashMap<>();  // "id:p" -> replicas
    static final List<Uuid> acls = new ArrayList<>();
    static final Uuid[] DIRS = {Uuid.fromString("f4MmpvGorB2MzPx_LyZfLA"), Uuid.fromString("yj-myzL_QyO5SS7-vSM-kA")};
    static long nextPid = 0;

    public static void main(String[] args) throws Exception {
        rng = new Random(Long.parseLong(args[1]));
        int steps = Integer.parseInt(args[2]);
        out = new FileOutputStream(args[0]);
        List<ApiMessage> boot = new ArrayList<>();
        boot.add(new FeatureLevelRecord().setName("metadata.version").setFeatureLevel((short) 30));
        for (int b = 0; b < 4; b++) boot.add(register(b));
        batch(boot);
        for (int i = 0; i < 3; i++) batch(create("t" + i));
        for (int s = 0; s < steps; s++) step();
        out.close();
    }

    static void step() throws Exception {
        int pick = rng.nextInt(20);
        List<ApiMessage> recs = new ArrayList<>();
        switch (pick) {
            case 0 -> recs.addAll(create("t" + rng.nextInt(8)));
            case 1 -> { String t = anyTopic(); if (t != null) { recs.add(new RemoveTopicRecord().setTopicId(topics.remove(t))); } }
            case 2 -> { String t = anyTopic(); if (t != null) { recs.add(new RemoveTopicRecord().setTopicId(topics.remove(t))); recs.addAll(create(t)); } }
            case 3, 4, 5 -> recs.add(isrChange());
            case 6 -> recs.add(reassign());
            case 7 -> { int b = rng.nextInt(4); recs.add(rng.nextBoolean()
                ? new FenceBrokerRecord().setId(b).setEpoch(brokers.get(b))
                : new BrokerRegistrationChangeRecord().setBrokerId(b).setBrokerEpoch(brokers.get(b)).setFenced((byte) 1)); }
            case 8 -> { int b = rng.nextInt(4); recs.add(rng.nextBoolean()
                ? new UnfenceBrokerRecord().setId(b).setEpoch(brokers.get(b))
                : new BrokerRegistrationChangeRecord().setBrokerId(b).setBrokerEpoch(brokers.get(b)).setFenced((byte) -1)
                    .setInControlledShutdown((byte) rng.nextInt(2)).setLogDirs(List.of(DIRS[rng.nextInt(2)]))); }
            case 9 -> recs.add(register(rng.nextInt(4)));
            case 10 -> { String t = anyTopic(); String[] keys = {"retention.ms", "cleanup.policy", "message.format.version", "segment.bytes"};
                recs.add(new ConfigRecord().setResourceType((byte) 2).setResourceName(t == null ? "t0" : t)
                    .setName(keys[rng.nextInt(keys.length)]).setValue(rng.nextInt(3) == 0 ? null : Integer.toString(rng.nextInt(1000)))); }
            case 11 -> recs.add(new ConfigRecord().setResourceType((byte) 4).setResourceName(rng.nextBoolean() ? "" : "1")
                .setName("log.retention.ms").setValue(rng.nextBoolean() ? null : "5"));
            case 12 -> { Uuid id = uuid(); acls.add(id);
                recs.add(new AccessControlEntryRecord().setId(id).setResourceType((byte) 2).setResourceName("t" + rng.nextInt(4))
                    .setPatternType((byte) 3).setPrincipal("User:u" + rng.nextInt(3)).setHost("*").setOperation((byte) (2 + rng.nextInt(5)))
                    .setPermissionType((byte) 3)); }
            case 13 -> { if (!acls.isEmpty()) recs.add(new RemoveAccessControlEntryRecord().setId(acls.remove(rng.nextInt(acls.size())))); }
            case 14 -> { nextPid += 1000; recs.add(new ProducerIdsRecord().setBrokerId(rng.nextInt(4)).setBrokerEpoch(1).setNextProducerId(nextPid)); }
            case 15 -> { recs.add(new BeginTransactionRecord().setName("txn")); recs.add(isrChange());
                String x = "x" + rng.nextInt(4);
                List<ApiMessage> made = create(x);
                recs.addAll(made);
                boolean abort = rng.nextInt(3) == 0;
                if (rng.nextBoolean()) { batch(recs); recs = new ArrayList<>(); recs.add(isrChange()); }
                recs.add(abort ? new AbortTransactionRecord().setReason("test") : new EndTransactionRecord());
                if (abort && !made.isEmpty()) topics.remove(x); }
            case 16 -> recs.add(new NoOpRecord());
            case 17 -> { String t = rng.nextBoolean() ? "" : anyTopic(); if (t != null) recs.add(new ClearElrRecord().setTopicName(t)); }
            case 18 -> recs.add(new ClientQuotaRecord().setEntity(List.of(new ClientQuotaRecord.EntityData().setEntityType("user").setEntityName("u" + rng.nextInt(2))))
                .setKey("producer_byte_rate").setValue(1024.0 * rng.nextInt(4)).setRemove(rng.nextInt(3) == 0));
            default -> { int b = rng.nextInt(4); // a record Kafka's replay rejects
                recs.add(rng.nextBoolean() ? new FenceBrokerRecord().setId(b).setEpoch(brokers.get(b) + 7)
                    : new PartitionChangeRecord().setTopicId(topics.isEmpty() ? uuid() : topics.values().iterator().next())
                        .setPartitionId(99).setIsr(List.of(1))); }
        }
        if (!recs.isEmpty()) batch(recs);
    }

    static Uuid uuid() {  // from the seed, so a log is the same bytes every run
        return new Uuid(rng.nextLong(), rng.nextLong() | 1L);
    }

    static String anyTopic() {
        if (topics.isEmpty()) return null;
        List<String> names = new ArrayList<>(topics.keySet());
        return names.get(rng.nextInt(names.size()));
    }

    static RegisterBrokerRecord register(int b) {
        long epoch = offset + 1;
        brokers.put(b, epoch);
        return new RegisterBrokerRecord().setBrokerId(b).setBrokerEpoch(epoch).setIncarnationId(uuid())
            .setFenced(rng.nextBoolean()).setRack(rng.nextBoolean() ? null : "r" + b).setLogDirs(List.of(DIRS[b % 2]));
    }

    static List<ApiMessage> create(String name) {
        List<ApiMessage> recs = new ArrayList<>();
        if (topics.containsKey(name)) return recs;
        Uuid id = uuid();
        topics.put(name, id);
        recs.add(new TopicRecord().setName(name).setTopicId(id));
        int n = 1 + rng.nextInt(3);
        partitionCount.put(id, n);
        for (int p = 0; p < n; p++) {
            int[] reps = pickReplicas();
            replicas.put(id + ":" + p, reps);
            List<Uuid> dirs = new ArrayList<>();
            for (int r : reps) dirs.add(rng.nextBoolean() ? DIRS[r % 2] : Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAQ"));
            recs.add(new PartitionRecord().setTopicId(id).setPartitionId(p).setReplicas(list(reps)).setIsr(list(reps))
                .setLeader(reps[0]).setLeaderEpoch(0).setPartitionEpoch(0).setDirectories(dirs));
        }
        if (rng.nextBoolean()) recs.add(new ConfigRecord().setResourceType((byte) 2).setResourceName(name).setName("retention.ms").setValue("100"));
        return recs;
    }

    static int[] pickReplicas() {
        List<Integer> all = new ArrayList<>(List.of(0, 1, 2, 3));
        Collections.shuffle(all, rng);
        int n = 1 + rng.nextInt(3);
        int[] r = new int[n];
        for (int i = 0; i < n; i++) r[i] = all.get(i);
        return r;
    }

    static List<Integer> list(int[] a) { List<Integer> l = new ArrayList<>(); for (int x : a) l.add(x); return l; }

    static PartitionChangeRecord isrChange() {
        if (topics.isEmpty()) return null;
        Uuid id = topics.get(anyTopic());
        int p = rng.nextInt(partitionCount.get(id));
        int[] reps = replicas.get(id + ":" + p);
        PartitionChangeRecord r = new PartitionChangeRecord().setTopicId(id).setPartitionId(p);
        switch (rng.nextInt(5)) {
            case 0 -> r.setIsr(list(Arrays.copyOf(reps, 1 + rng.nextInt(reps.length))));
            case 1 -> r.setLeader(rng.nextBoolean() ? -1 : reps[rng.nextInt(reps.length)]);
            case 2 -> r.setIsr(List.of()).setLeader(-1).setEligibleLeaderReplicas(list(reps)).setLastKnownElr(List.of(reps[0]));
            case 3 -> r.setLeader(reps[0]).setIsr(list(reps)).setEligibleLeaderReplicas(List.of()).setLeaderRecoveryState((byte) rng.nextInt(2));
            default -> r.setDirectories(dirsFor(reps));
        }
        return r;
    }

    static List<Uuid> dirsFor(int[] reps) { List<Uuid> d = new ArrayList<>(); for (int x : reps) d.add(DIRS[(x + 1) % 2]); return d; }

    static PartitionChangeRecord reassign() {
        if (topics.isEmpty()) return null;
        Uuid id = topics.get(anyTopic());
        int p = rng.nextInt(partitionCount.get(id));
        int[] reps = pickReplicas();
        replicas.put(id + ":" + p, reps);
        PartitionChangeRecord r = new PartitionChangeRecord().setTopicId(id).setPartitionId(p).setReplicas(list(reps))
            .setIsr(list(reps)).setLeader(reps[0]);
        if (rng.nextBoolean()) r.setAddingReplicas(List.of(reps[reps.length - 1])).setRemovingReplicas(List.of());
        else r.setAddingReplicas(List.of()).setRemovingReplicas(List.of());
        return r;
    }

    static void batch(List<ApiMessage> records) throws Exception {
        records.removeIf(Objects::isNull);
        if (records.isEmpty()) return;
        time += 1 + rng.nextInt(5000);
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(new ByteBufferOutputStream(1024), RecordBatch.CURRENT_MAGIC_VALUE,
            rng.nextInt(4) == 0 ? Compression.lz4().build() : Compression.NONE, TimestampType.CREATE_TIME, offset, time,
            RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE, false, false, 1,
            Integer.MAX_VALUE, RecordBatch.NO_TIMESTAMP);
        for (ApiMessage m : records) {
            ApiMessageAndVersion amv = new ApiMessageAndVersion(m, m.highestSupportedVersion());
            ObjectSerializationCache cache = new ObjectSerializationCache();
            int size = MetadataRecordSerde.INSTANCE.recordSize(amv, cache);
            ByteBuffer buf = ByteBuffer.allocate(size);
            MetadataRecordSerde.INSTANCE.write(amv, cache, new ByteBufferAccessor(buf));
            builder.appendWithOffset(offset++, time, null, buf.array());
        }
        ByteBuffer built = builder.build().buffer();
        byte[] bytes = new byte[built.remaining()];
        built.get(bytes);
        out.write(bytes);
    }
}
