// Reads lines "<class> <version> <hex>" on stdin; for each, builds the generated Kafka message class from the
// bytes (new C(ByteBufferAccessor, version)) and prints "OK <bytes left> <JSON converter output>" or
// "ERR <exception class> <message>".  Used by test_messages_vs_kafka.py (developer check).
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import org.apache.kafka.common.protocol.ByteBufferAccessor;

public class MessageOracle {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split(" ");
            String name = "org.apache.kafka.common.message." + parts[0];
            short version = Short.parseShort(parts[1]);
            ByteBuffer buffer = ByteBuffer.wrap(parts.length > 2 ? HexFormat.of().parseHex(parts[2]) : new byte[0]);
            try {
                Class<?> type = Class.forName(name);
                Object message = type.getConstructor(org.apache.kafka.common.protocol.Readable.class, short.class)
                    .newInstance(new ByteBufferAccessor(buffer), version);
                Object json = Class.forName(name + "JsonConverter").getMethod("write", type, short.class)
                    .invoke(null, message, version);
                out.print("OK " + buffer.remaining() + " " + json + "\n");
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                out.print("ERR " + cause.getClass().getSimpleName() + " " + cause.getMessage() + "\n");
            } catch (ReflectiveOperationException e) {
                out.print("MISSING " + e + "\n");
            }
        }
    }
}
