/*
 * Prints the names of every key of the Kafka Connect config classes given,
 * one "<class> <key>" a line, from the classes' own ConfigDefs (some are
 * private: reached by reflection). It made tests/data/connect-3.9-keys.txt:
 *
 *   . build/bed/bed.env
 *   javac -d /tmp -cp "$BED_KAFKA_LIBS/*" tests/data/ConnectKeys.java
 *   java -cp "$BED_KAFKA_LIBS/*:/tmp" ConnectKeys \
 *     org.apache.kafka.connect.runtime.standalone.StandaloneConfig \
 *     org.apache.kafka.connect.runtime.distributed.DistributedConfig \
 *     org.apache.kafka.connect.runtime.ConnectorConfig \
 *     org.apache.kafka.connect.runtime.SinkConnectorConfig \
 *     org.apache.kafka.connect.runtime.SourceConnectorConfig
 */
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import org.apache.kafka.common.config.ConfigDef;

public class ConnectKeys {
    static ConfigDef find(String cls) throws Exception {
        Class<?> c = Class.forName(cls);
        for (Method m : c.getDeclaredMethods()) {
            if (m.getName().equals("configDef") && m.getParameterCount() == 0) {
                m.setAccessible(true);
                return (ConfigDef) m.invoke(null);
            }
        }
        for (Method m : c.getDeclaredMethods()) {
            if (m.getName().equals("config") && m.getParameterCount() == 1) {
                Class<?> crypto = m.getParameterTypes()[0];
                m.setAccessible(true);
                return (ConfigDef) m.invoke(null, crypto.getField("SYSTEM").get(null));
            }
        }
        Field f = c.getDeclaredField("CONFIG");
        f.setAccessible(true);
        return (ConfigDef) f.get(null);
    }
    public static void main(String[] args) throws Exception {
        for (String cls : args) {
            String simple = cls.substring(cls.lastIndexOf('.') + 1);
            for (String name : find(cls).names()) {
                System.out.println(simple + " " + name);
            }
        }
    }
}
