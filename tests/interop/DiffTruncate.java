import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.EpochEntry;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogOffsetsListener;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * kseg's driver (tests/interop/diff_truncate.py): a follower's truncation against a new leader, with Kafka 4.3.0's
 * own UnifiedLog on copies of both partition directories.
 *
 * Each line of the jobs file: LEADER_DIR LSO RP CLEAN FOLLOWER_DIR LSO RP CLEAN FOLLOWER_HW NEW_EPOCH (tab-separated).
 * Both logs are opened with UnifiedLog.create as LogManager.loadLog opens them (broker defaults). Then, as
 * Partition.makeLeader does, the leader gets assignEpochStartOffset(NEW_EPOCH, logEndOffset); the follower's high
 * watermark is restored with updateHighWatermark (Partition.createLog). The fetch loop of AbstractFetcherThread and
 * Partition.readFromLocalLog (Scala, not in the oracle jar) is replayed here; every answer it acts on comes from
 * Kafka's methods: UnifiedLog.endOffsetForEpoch (LeaderEpochFileCache.endOffsetFor) on both logs, latestEpoch,
 * truncateTo and truncateFullyAndStartAt. One JSON line per job: the lowest log end offset the follower reached,
 * the offset it restarted at (or null), its epochs after, and the [base,last] of the batches it threw away.
 */
public final class DiffTruncate {
    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder();
        for (String line : lines) {
            if (line.isBlank()) continue;
            out.append(job(line.split("\t"))).append('\n');
        }
        System.out.print(out);
        System.out.flush();
        System.exit(0);
    }

    private static UnifiedLog open(File dir, long lso, long rp, boolean clean, KafkaScheduler scheduler) throws Exception {
        return UnifiedLog.create(dir, new LogConfig(Map.of()), lso, rp, scheduler, new BrokerTopicStats(false),
            Time.SYSTEM, 900000, new ProducerStateManagerConfig(86400000, true), 600000, new LogDirFailureChannel(8),
            clean, Optional.empty(), new ConcurrentHashMap<>(), false, LogOffsetsListener.NO_OP_OFFSETS_LISTENER);
    }

    private static File copy(String source, Path into) throws Exception {
        Path src = Path.of(source);
        Path dst = into.resolve(src.getParent().getFileName().toString()).resolve(src.getFileName().toString());
        Files.createDirectories(dst);
        try (Stream<Path> files = Files.list(src)) {
            for (Path f : (Iterable<Path>) files::iterator) Files.copy(f, dst.resolve(f.getFileName()));
        }
        return dst.toFile();
    }

    private static List<long[]> batches(UnifiedLog log) {
        List<long[]> found = new ArrayList<>();
        for (LogSegment s : log.logSegments())
            for (RecordBatch b : s.log().batches()) found.add(new long[] {b.baseOffset(), b.lastOffset()});
        return found;
    }

    private static String job(String[] a) throws Exception {
        Path tmp = Files.createTempDirectory("kseg-difftrunc-");
        KafkaScheduler scheduler = new KafkaScheduler(1);
        scheduler.startup();
        try {
            UnifiedLog leader = open(copy(a[0], tmp.resolve("leader")), Long.parseLong(a[1]), Long.parseLong(a[2]),
                Boolean.parseBoolean(a[3]), scheduler);
            UnifiedLog f = open(copy(a[4], tmp.resolve("follower")), Long.parseLong(a[5]), Long.parseLong(a[6]),
                Boolean.parseBoolean(a[7]), scheduler);
            f.updateHighWatermark(Long.parseLong(a[8]));
            leader.assignEpochStartOffset(Integer.parseInt(a[9]), leader.logEndOffset());
            List<long[]> before = batches(f);
            long low = f.logEndOffset();
            Long restarted = null;
            if (f.latestEpoch().isEmpty()) f.truncateTo(f.highWatermark());   // truncateToHighWatermark
            low = Math.min(low, f.logEndOffset());
            for (int round = 0; round < 10000; round++) {
                long fetch = f.logEndOffset();
                Optional<Integer> last = f.latestEpoch();
                boolean outOfRange;
                if (last.isEmpty()) {
                    outOfRange = fetch < leader.logStartOffset() || fetch > leader.logEndOffset();
                    if (!outOfRange) break;
                } else {
                    Optional<OffsetAndEpoch> answer = leader.endOffsetForEpoch(last.get());
                    outOfRange = answer.isEmpty() || fetch < leader.logStartOffset();
                    if (!outOfRange) {
                        OffsetAndEpoch lead = answer.get();
                        if (lead.epoch() >= last.get() && lead.offset() >= fetch) break;   // no diverging epoch
                        Optional<OffsetAndEpoch> mine = f.endOffsetForEpoch(lead.epoch());
                        long target;
                        if (mine.isEmpty()) target = Math.min(lead.offset(), f.logEndOffset());
                        else if (mine.get().epoch() != lead.epoch()) target = Math.min(mine.get().offset(), f.logEndOffset());
                        else target = Math.min(Math.min(mine.get().offset(), lead.offset()), f.logEndOffset());
                        long endBefore = f.logEndOffset();
                        int epochsBefore = f.leaderEpochCache().epochEntries().size();
                        f.truncateTo(target);
                        low = Math.min(low, f.logEndOffset());
                        if (f.logEndOffset() == endBefore && f.leaderEpochCache().epochEntries().size() == epochsBefore) break;
                        continue;
                    }
                }
                // fetchOffsetAndTruncate
                if (leader.logEndOffset() < f.logEndOffset()) {
                    f.truncateTo(leader.logEndOffset());
                } else if (leader.logStartOffset() > f.logEndOffset()) {
                    f.truncateFullyAndStartAt(leader.logStartOffset(), Optional.empty());
                    restarted = leader.logStartOffset();
                    low = Math.min(low, f.logEndOffset());
                    break;
                } else {
                    break;
                }
                low = Math.min(low, f.logEndOffset());
            }
            scheduler.scheduleOnce("barrier", () -> { }).get();
            List<long[]> after = batches(f);
            StringBuilder lost = new StringBuilder();
            for (long[] b : before) {
                boolean kept = after.stream().anyMatch(x -> x[0] == b[0] && x[1] == b[1]);
                if (!kept) lost.append(lost.length() == 0 ? "" : ",").append("[").append(b[0]).append(",").append(b[1]).append("]");
            }
            StringBuilder epochs = new StringBuilder();
            for (EpochEntry e : f.leaderEpochCache().epochEntries())
                epochs.append(epochs.length() == 0 ? "" : ",").append("[").append(e.epoch()).append(",").append(e.startOffset()).append("]");
            String result = "{\"truncate_to\":" + low + ",\"restarted_at\":" + restarted + ",\"log_end_offset\":"
                + f.logEndOffset() + ",\"epochs\":[" + epochs + "],\"lost_batches\":[" + lost + "]}";
            leader.close();
            f.close();
            return result;
        } finally {
            scheduler.shutdown();
        }
    }
}
