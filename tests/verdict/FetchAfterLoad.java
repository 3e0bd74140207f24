import java.io.File;
import java.util.Iterator;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogOffsetsListener;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * kseg's test driver (tests/verdict/test_leftovers.py): load one partition directory after a clean shutdown
 * (UnifiedLog.create, hadCleanShutdown = true, recovery point = args[1]) and fetch every offset from the log
 * start to the log end as a consumer's fetch reads the log (UnifiedLog.read, FetchIsolation.LOG_END,
 * minOneMessage).  Prints one line per offset: "OFFSET BASE" -- the base offset of the first batch returned,
 * "none" when nothing comes back, or the exception's class.
 */
public class FetchAfterLoad {
    public static void main(String[] args) throws Exception {
        KafkaScheduler scheduler = new KafkaScheduler(1);
        scheduler.startup();
        UnifiedLog log = UnifiedLog.create(new File(args[0]), new LogConfig(new Properties()), 0L,
            Long.parseLong(args[1]), scheduler, new BrokerTopicStats(false), Time.SYSTEM, 900000,
            new ProducerStateManagerConfig(86400000, true), 600000, new LogDirFailureChannel(1), true,
            Optional.empty(), new ConcurrentHashMap<>(), false, LogOffsetsListener.NO_OP_OFFSETS_LISTENER);
        for (long offset = log.logStartOffset(); offset < log.logEndOffset(); offset++) {
            String first;
            try {
                FetchDataInfo fetched = log.read(offset, 1 << 20, FetchIsolation.LOG_END, true);
                Iterator<? extends RecordBatch> batches = fetched.records.batches().iterator();
                first = batches.hasNext() ? Long.toString(batches.next().baseOffset()) : "none";
            } catch (Exception e) {
                first = e.getClass().getName();
            }
            System.out.println(offset + " " + first);
        }
        log.close();
        scheduler.shutdown();
    }
}
