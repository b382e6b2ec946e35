/*
 * floor_mirror - the librdkafka floor of replication: reads every partition
 * of a topic on one cluster from its beginning and produces each record,
 * byte for byte, to the same partition of a topic on another cluster, until
 * N records were delivered. Nothing else: no offsets stored, no offset syncs,
 * no metrics, no framework. The least any MirrorSourceConnector does.
 *
 *   floor_mirror -s SOURCE_BOOTSTRAP -t TOPIC -d TARGET_BOOTSTRAP -r REMOTE_TOPIC
 *                -n N [-T TIMEOUT_S] [-C key=value]... [-P key=value]...
 *
 * The clients get the settings tributary's MirrorSourceConnector task gives
 * its own, so that the two differ by the runtime alone. The consumer
 * (connectors/mirror/mirror_source.c, task_start): a group.id that is never
 * joined, enable.auto.commit=false, auto.offset.reset=earliest,
 * isolation.level=read_committed, the partitions assigned from the beginning;
 * batches of up to 512 records (the source engine's POLL_BATCH). The producer
 * (the source engine's: connectors/runtime/source/source_engine.c and the
 * role defaults of connectors/kafka/client_props.c): enable.idempotence=true,
 * partitioner=murmur2_random, socket.nagle.disable=true, librdkafka's
 * defaults otherwise; each record handed over with rd_kafka_producev, copied,
 * with its partition, key, value, timestamp and headers. -C and -P add or
 * change consumer and producer settings. The remote topic must exist with at
 * least the source's partitions.
 *
 * Prints "first" when the first delivery report came (the first record is
 * in the remote topic: bench/mirror.py reads the brokers' CPU time then),
 * and at the end one JSON line: records (delivered), errors, bytes (of
 * values), seconds and cpu_seconds from the first delivery report to the
 * N-th (utime + stime of this process, from /proc/self/stat), so that the
 * clients' start (connections, the producer's id) does not count, as it
 * does not for the connectors the bench watches; total_seconds and
 * total_cpu_seconds from the program's start, hwm_kb (VmHWM). Exits 0 once N
 * records were delivered, 1 on a failed delivery or at the timeout.
 */
#include <librdkafka/rdkafka.h>
#include <stdbool.h>

#include "floor_common.h"

#define BATCH 512

static long long delivered, failed;
static double first_delivered, cpu_first_delivered; /* at the first delivery report */
static char first_error[256];

static void usage(void)
{
    fprintf(stderr,
            "usage: floor_mirror -s SOURCE_BOOTSTRAP -t TOPIC -d TARGET_BOOTSTRAP "
            "-r REMOTE_TOPIC -n N [-T TIMEOUT_S] [-C key=value]... "
            "[-P key=value]...\n");
    exit(2);
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value)
{
    char errstr[512];
    if (rd_kafka_conf_set(conf, key, value, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "floor_mirror: %s\n", errstr);
        exit(2);
    }
}

/* Sets "key=value" (an -X style argument) on conf. */
static void set_pair(rd_kafka_conf_t *conf, const char *pair)
{
    char key[256];
    const char *eq = strchr(pair, '=');
    if (eq == NULL || (size_t)(eq - pair) >= sizeof(key)) {
        usage();
    }
    memcpy(key, pair, (size_t)(eq - pair));
    key[eq - pair] = '\0';
    set(conf, key, eq + 1);
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (failed++ == 0) {
            snprintf(first_error, sizeof(first_error), "%s", rd_kafka_err2str(m->err));
        }
    } else if (delivered++ == 0) {
        first_delivered = floor_now();
        cpu_first_delivered = floor_cpu_seconds();
        printf("first\n");
        fflush(stdout);
    }
}

/* Assigns every partition of topic from its beginning; the partition count,
 * or -1 when the cluster does not know the topic before the deadline. */
static int assign_all(rd_kafka_t *consumer, const char *topic, double deadline)
{
    int count = -1;
    while (count < 0 && floor_now() < deadline) {
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(consumer, topic, NULL);
        if (rd_kafka_metadata(consumer, 0, rkt, &md, 5000) ==
            RD_KAFKA_RESP_ERR_NO_ERROR) {
            if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
                md->topics[0].partition_cnt > 0) {
                count = md->topics[0].partition_cnt;
            }
            rd_kafka_metadata_destroy(md);
        }
        rd_kafka_topic_destroy(rkt);
        if (count < 0) {
            usleep(100000);
        }
    }
    if (count < 0) {
        return -1;
    }
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(count);
    for (int p = 0; p < count; p++) {
        rd_kafka_topic_partition_list_add(list, topic, p)->offset =
            RD_KAFKA_OFFSET_BEGINNING;
    }
    rd_kafka_error_t *error = rd_kafka_incremental_assign(consumer, list);
    rd_kafka_topic_partition_list_destroy(list);
    if (error != NULL) {
        fprintf(stderr, "floor_mirror: assign: %s\n", rd_kafka_error_string(error));
        rd_kafka_error_destroy(error);
        return -1;
    }
    return count;
}

/* Hands m to the producer for the same partition of rkt, copied, with its
 * key, timestamp and headers. Bounded: while librdkafka's queue is full it
 * serves delivery reports for up to 100 ms a try, until the deadline. */
static bool forward(rd_kafka_t *producer, rd_kafka_topic_t *rkt,
                    const rd_kafka_message_t *m, double deadline)
{
    rd_kafka_headers_t *found = NULL;
    for (;;) {
        rd_kafka_headers_t *headers =
            rd_kafka_message_headers(m, &found) == RD_KAFKA_RESP_ERR_NO_ERROR
                ? rd_kafka_headers_copy(found)
                : NULL;
        rd_kafka_resp_err_t err = rd_kafka_producev(
            producer, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(m->partition),
            RD_KAFKA_V_KEY(m->key, m->key_len), RD_KAFKA_V_VALUE(m->payload, m->len),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_TIMESTAMP(rd_kafka_message_timestamp(m, NULL)),
            RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_END);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            return true;
        }
        if (headers != NULL) {
            rd_kafka_headers_destroy(headers); /* not taken on failure */
        }
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            fprintf(stderr, "floor_mirror: produce: %s\n", rd_kafka_err2str(err));
            return false;
        }
        if (floor_now() > deadline) {
            return false;
        }
        rd_kafka_poll(producer, 100);
    }
}

int main(int argc, char **argv)
{
    double start = floor_now();
    double cpu_start = floor_cpu_seconds();
    const char *source = NULL, *topic = NULL, *target = NULL, *remote = NULL;
    long long n = -1;
    double timeout = 300;
    char errstr[512], group[128];
    rd_kafka_conf_t *cconf = rd_kafka_conf_new();
    rd_kafka_conf_t *pconf = rd_kafka_conf_new();
    int opt;

    snprintf(group, sizeof(group), "floor-mirror-%ld-%ld", (long)getpid(),
             (long)time(NULL));
    set(cconf, "group.id", group);
    set(cconf, "enable.auto.commit", "false");
    set(cconf, "auto.offset.reset", "earliest");
    set(cconf, "isolation.level", "read_committed");
    set(pconf, "enable.idempotence", "true");
    set(pconf, "partitioner", "murmur2_random");
    set(pconf, "socket.nagle.disable", "true");
    while ((opt = getopt(argc, argv, "s:t:d:r:n:T:C:P:")) != -1) {
        switch (opt) {
        case 's':
            source = optarg;
            break;
        case 't':
            topic = optarg;
            break;
        case 'd':
            target = optarg;
            break;
        case 'r':
            remote = optarg;
            break;
        case 'n':
            n = atoll(optarg);
            break;
        case 'T':
            timeout = atof(optarg);
            break;
        case 'C':
            set_pair(cconf, optarg);
            break;
        case 'P':
            set_pair(pconf, optarg);
            break;
        default:
            usage();
        }
    }
    if (source == NULL || topic == NULL || target == NULL || remote == NULL || n <= 0) {
        usage();
    }
    set(cconf, "bootstrap.servers", source);
    set(pconf, "bootstrap.servers", target);
    rd_kafka_conf_set_dr_msg_cb(pconf, on_delivery);
    rd_kafka_t *consumer = rd_kafka_new(RD_KAFKA_CONSUMER, cconf, errstr, sizeof(errstr));
    if (consumer == NULL) {
        fprintf(stderr, "floor_mirror: %s\n", errstr);
        return 2;
    }
    rd_kafka_t *producer = rd_kafka_new(RD_KAFKA_PRODUCER, pconf, errstr, sizeof(errstr));
    if (producer == NULL) {
        fprintf(stderr, "floor_mirror: %s\n", errstr);
        return 2;
    }
    double deadline = start + timeout;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(producer, remote, NULL);
    rd_kafka_queue_t *queue = rd_kafka_queue_get_consumer(consumer);
    if (assign_all(consumer, topic, deadline) < 0) {
        fprintf(stderr, "floor_mirror: topic %s not found\n", topic);
        return 2;
    }
    static rd_kafka_message_t *batch[BATCH];
    long long read = 0, bytes = 0, errors = 0;
    double seconds = 0, cpu = 0;
    bool ok = true;

    /* Bounded by the deadline: each call returns within 10 ms. */
    while (ok && delivered < n && failed == 0 && floor_now() < deadline) {
        ssize_t got =
            read < n ? rd_kafka_consume_batch_queue(queue, 10, batch, BATCH) : 0;
        for (ssize_t i = 0; i < got; i++) {
            const rd_kafka_message_t *m = batch[i];
            if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
                ok = ok && forward(producer, rkt, m, deadline);
                read++;
                bytes += (long long)m->len;
            } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF && errors++ == 0) {
                fprintf(stderr, "floor_mirror: %s\n", rd_kafka_message_errstr(m));
            }
            rd_kafka_message_destroy(batch[i]);
        }
        rd_kafka_poll(producer, read < n ? 0 : 10);
    }
    if (delivered >= n) {
        seconds = floor_now() - first_delivered;
        cpu = floor_cpu_seconds() - cpu_first_delivered;
    }
    int status =
        floor_report(&(floor_run_t){.program = "floor_mirror",
                                    .n = n,
                                    .delivered = delivered,
                                    .failed = failed,
                                    .errors = failed + errors,
                                    .bytes = bytes,
                                    .seconds = seconds,
                                    .cpu_seconds = cpu,
                                    .total_seconds = floor_now() - start,
                                    .total_cpu_seconds = floor_cpu_seconds() - cpu_start,
                                    .first_error = first_error});
    rd_kafka_queue_destroy(queue);
    rd_kafka_consumer_close(consumer);
    rd_kafka_destroy(consumer);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_flush(producer, 1000);
    rd_kafka_destroy(producer);
    return status;
}
