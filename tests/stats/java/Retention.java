import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.checkpoint.CleanShutdownFileHandler;
import org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogOffsetsListener;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Kafka 4.3.0's own retention pass (UnifiedLog.deleteOldSegments) on copies of log directories. kseg's test driver.
 *
 * Each partition is loaded as LogManager.loadLog does (UnifiedLog.create with the log directory's checkpoints and
 * clean-shutdown marker; see ../../../shared/oracle/drivers/LoadLogDir.java), its high watermark set to the log end
 * (an in-sync leader), and deleteOldSegments() runs once with the clock fixed at --now. One JSON line per partition:
 * the segments before ([base, size, largestTimestamp]), the base offsets left after, the log start offset after.
 *
 * Usage: Retention --now MS [--config KEY=VALUE]... [--topic-config TOPIC:KEY=VALUE]... LOGDIR...
 */
public class Retention {
    static final class FixedTime implements Time {
        final long ms;
        FixedTime(long ms) { this.ms = ms; }
        public long milliseconds() { return ms; }
        public long nanoseconds() { return System.nanoTime(); }
        public void sleep(long sleepMs) {
            try { Thread.sleep(sleepMs); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
        }
        public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) throws InterruptedException {
            synchronized (obj) {
                while (!condition.get()) obj.wait(10);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        long now = -1;
        Map<String, Object> config = new HashMap<>();
        Map<String, Map<String, Object>> perTopic = new HashMap<>();
        List<String> dirs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--now": now = Long.parseLong(args[++i]); break;
                case "--config": { String[] kv = args[++i].split("=", 2); config.put(kv[0], kv[1]); break; }
                case "--topic-config": {
                    String spec = args[++i];
                    int colon = spec.lastIndexOf(':', spec.indexOf('='));
                    String[] kv = spec.substring(colon + 1).split("=", 2);
                    perTopic.computeIfAbsent(spec.substring(0, colon), t -> new HashMap<>()).put(kv[0], kv[1]);
                    break;
                }
                default: dirs.add(args[i]);
            }
        }
        if (now < 0 || dirs.isEmpty()) {
            System.err.println("usage: Retention --now MS [--config K=V]... [--topic-config T:K=V]... LOGDIR...");
            System.exit(2);
        }
        org.slf4j.LoggerFactory.getILoggerFactory();
        Time time = new FixedTime(now);
        for (String d : dirs) {
            Path tmp = Files.createTempDirectory("retention");
            try {
                File src = new File(d).getAbsoluteFile();
                File dir = tmp.resolve(src.getName()).toFile();
                copyTree(src.toPath(), dir.toPath());
                runLogDir(dir, src.getName(), time, config, perTopic);
            } finally {
                deleteTree(tmp);
            }
        }
        System.out.flush();
        System.exit(0);
    }

    static void runLogDir(File dir, String name, Time time, Map<String, Object> config,
                          Map<String, Map<String, Object>> perTopic) throws Exception {
        LogDirFailureChannel channel = new LogDirFailureChannel(8);
        Map<TopicPartition, Long> rps = read(new OffsetCheckpointFile(new File(dir, "recovery-point-offset-checkpoint"), channel));
        Map<TopicPartition, Long> lsos = read(new OffsetCheckpointFile(new File(dir, "log-start-offset-checkpoint"), channel));
        CleanShutdownFileHandler marker = new CleanShutdownFileHandler(dir.getPath());
        boolean clean = marker.exists();
        if (clean) marker.delete();
        File[] subs = Optional.ofNullable(dir.listFiles()).orElse(new File[0]);
        Arrays.sort(subs);
        for (File pdir : subs) {
            if (!pdir.isDirectory()) continue;
            TopicPartition tp = UnifiedLog.parseTopicPartitionName(pdir);
            if (tp.topic().equals("__cluster_metadata")) continue;
            Map<String, Object> cfg = new HashMap<>(config);
            cfg.putAll(perTopic.getOrDefault(tp.topic(), Collections.emptyMap()));
            KafkaScheduler scheduler = new KafkaScheduler(1);
            scheduler.startup();
            UnifiedLog log = UnifiedLog.create(pdir, new LogConfig(cfg), lsos.getOrDefault(tp, 0L), rps.getOrDefault(tp, 0L),
                scheduler, new BrokerTopicStats(false), time, 900000, new ProducerStateManagerConfig(86400000, true), 600000,
                channel, clean, Optional.empty(), new ConcurrentHashMap<>(), false, LogOffsetsListener.NO_OP_OFFSETS_LISTENER);
            log.updateHighWatermark(log.logEndOffset());
            StringBuilder before = new StringBuilder("[");
            for (LogSegment s : log.logSegments()) {
                if (before.length() > 1) before.append(',');
                before.append('[').append(s.baseOffset()).append(',').append(s.size()).append(',').append(s.largestTimestamp()).append(']');
            }
            long startBefore = log.logStartOffset();
            int deleted = log.deleteOldSegments();
            StringBuilder after = new StringBuilder("[");
            for (LogSegment s : log.logSegments()) {
                if (after.length() > 1) after.append(',');
                after.append(s.baseOffset());
            }
            System.out.println("{\"logdir\":\"" + name + "\",\"dir\":\"" + pdir.getName() + "\",\"deleted\":" + deleted
                + ",\"log_start_offset_before\":" + startBefore + ",\"log_start_offset\":" + log.logStartOffset()
                + ",\"log_end_offset\":" + log.logEndOffset() + ",\"before\":" + before + "],\"after\":" + after + "]}");
            log.close();
            scheduler.shutdown();
        }
    }

    static Map<TopicPartition, Long> read(OffsetCheckpointFile file) {
        try { return file.read(); } catch (Exception e) { return Collections.emptyMap(); }
    }

    static void copyTree(Path src, Path dst) throws IOException {
        try (Stream<Path> s = Files.walk(src)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                Path t = dst.resolve(src.relativize(p).toString());
                if (Files.isDirectory(p)) Files.createDirectories(t);
                else Files.copy(p, t, StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) return;
        try (Stream<Path> s = Files.walk(root)) {
            List<Path> ps = new ArrayList<>();
            s.forEach(ps::add);
            Collections.reverse(ps);
            for (Path p : ps) Files.deleteIfExists(p);
        }
    }
}
