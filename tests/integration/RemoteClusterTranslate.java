/*
 * What MirrorMaker 2's client library reads from a checkpoints topic: for
 * each ALIAS GROUP pair given, RemoteClusterUtils.translateOffsets on the
 * cluster at BOOTSTRAP, one "<alias> <group> <topic> <partition> <offset>"
 * a line. test_mirror_interop.py runs it on the bed's Connect classpath
 * (connect-mirror-client) as a single-file program:
 *
 *   java -cp "$BED_CONNECT_LIBS/*" tests/integration/RemoteClusterTranslate.java \
 *     BOOTSTRAP ALIAS GROUP [ALIAS GROUP ...]
 */
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

public class RemoteClusterTranslate {
    public static void main(String[] args) throws Exception {
        Map<String, Object> target = Map.of("bootstrap.servers", args[0]);
        for (int i = 1; i + 1 < args.length; i += 2) {
            Map<TopicPartition, OffsetAndMetadata> offsets = RemoteClusterUtils.translateOffsets(
                target, args[i], args[i + 1], Duration.ofSeconds(60));
            for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
                System.out.println(args[i] + " " + args[i + 1] + " " + e.getKey().topic() + " "
                                   + e.getKey().partition() + " " + e.getValue().offset());
            }
        }
    }
}
