/*
 * bench/cluster.py's Connect 4.4 peer runs the FileStream connectors of connect-file 4.3.1
 * (the last on Maven Central), whose version() calls AppInfoParser.getVersion() under the
 * package Kafka 4.4 moved it from (to org.apache.kafka.common.utils.internals). This class,
 * compiled by cluster.py and put on Connect 4.4's classpath (never in a plugin directory),
 * gives that one call back, answered by 4.4's own class: nothing else of Connect changes.
 * Not used when the Kafka jars still have the class (Kafka 3.9).
 */
package org.apache.kafka.common.utils;

public final class AppInfoParser {
    private AppInfoParser() {
    }

    public static String getVersion() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getVersion();
    }
}
