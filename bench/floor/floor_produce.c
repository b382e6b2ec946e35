/*
 * floor_produce - the librdkafka floor of the source side: produces N records
 * of SIZE-byte JSON values (null keys) to a topic as fast as librdkafka takes
 * them, with acks=all and idempotence on, and counts the delivery reports.
 * Nothing else: no conversion, no offsets, no framework.
 *
 *   floor_produce -b BOOTSTRAP -t TOPIC -n N [-s SIZE] [-T TIMEOUT_S] [-r RATE] [-k]
 *                 [-X key=value]...
 *   floor_produce -o FILE -n N [-s SIZE]      write the same values as lines, no Kafka
 *
 * With -r, paced: record i is produced RATE records/s after the first
 * (i / RATE seconds after it, never earlier), and each value is
 * {"id":i,"ts":T,"note":"xxx…"} of SIZE bytes, where T is the wall-clock time
 * it was handed to librdkafka, in microseconds since 1970: the latency
 * scenario reads it back from the sink's output.
 *
 * With -k, each record has a key as datagen's have: the decimal text of a
 * number below 1000 (a mix of i), so that the partitioner spreads records
 * over the partitions by key instead of sticking to one for a batch.
 *
 * Prints one JSON line: records (delivered), errors, bytes, seconds (start of
 * the program to the last delivery report), cpu_seconds (utime + stime of this
 * process over the same span, from /proc/self/stat), hwm_kb (VmHWM).
 * Exits 0 when every record was delivered, 1 on errors or at the timeout.
 */
#include <errno.h>
#include <librdkafka/rdkafka.h>
#include <stdbool.h>

#include "floor_common.h"

static long long delivered, failed;
static char first_error[256];

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (failed++ == 0) {
            snprintf(first_error, sizeof(first_error), "%s", rd_kafka_err2str(m->err));
        }
    } else {
        delivered++;
    }
}

/* A paced record's value: its number and the time it is sent, padded to size
 * bytes (at least 64: room for both numbers). */
static size_t stamped_value(char *buf, size_t size, long long i)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int n = snprintf(buf, size + 1, "{\"id\":%lld,\"ts\":%lld,\"note\":\"", i,
                     (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000);
    return floor_pad(buf, size, (size_t)n);
}

/* Sleeps until the monotonic time due (floor_now's clock), serving delivery
 * reports meanwhile. */
static void wait_until(rd_kafka_t *rk, double due)
{
    double left;
    while ((left = due - floor_now()) > 0) {
        rd_kafka_poll(rk, 0);
        struct timespec pause = {.tv_sec = 0,
                                 .tv_nsec = (long)((left < 0.001 ? left : 0.001) * 1e9)};
        nanosleep(&pause, NULL);
    }
}

static void usage(void)
{
    fprintf(stderr,
            "usage: floor_produce -b BOOTSTRAP -t TOPIC -n N [-s SIZE] [-T TIMEOUT_S] "
            "[-r RATE] [-k] [-X key=value]...\n"
            "       floor_produce -o FILE -n N [-s SIZE]\n");
    exit(2);
}

static int write_file(const char *path, long long n, size_t size)
{
    char *value = malloc(size + 1);
    FILE *out = fopen(path, "w");
    if (value == NULL || out == NULL) {
        fprintf(stderr, "floor_produce: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    for (long long i = 0; i < n; i++) {
        size_t len = floor_value(value, size, i);
        value[len] = '\n';
        if (fwrite(value, 1, len + 1, out) != len + 1) {
            fprintf(stderr, "floor_produce: writing %s: %s\n", path, strerror(errno));
            fclose(out);
            return 1;
        }
    }
    free(value);
    return fclose(out) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    double start = floor_now();
    double cpu_start = floor_cpu_seconds();
    const char *bootstrap = NULL, *topic = NULL, *file = NULL;
    long long n = -1;
    size_t size = 100;
    double timeout = 300, rate = 0;
    bool keyed = false;
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    int opt;

    /* The floor's settings: librdkafka's defaults plus what the issue asks,
     * and the partitioner tributary's producers use (Java's, murmur2). */
    const char *fixed[][2] = {{"acks", "all"},
                              {"enable.idempotence", "true"},
                              {"partitioner", "murmur2_random"}};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        if (rd_kafka_conf_set(conf, fixed[i][0], fixed[i][1], errstr, sizeof(errstr)) !=
            RD_KAFKA_CONF_OK) {
            fprintf(stderr, "floor_produce: %s\n", errstr);
            return 2;
        }
    }
    while ((opt = getopt(argc, argv, "b:t:n:s:T:X:o:r:k")) != -1) {
        switch (opt) {
        case 'b':
            bootstrap = optarg;
            break;
        case 't':
            topic = optarg;
            break;
        case 'n':
            n = atoll(optarg);
            break;
        case 's':
            size = (size_t)atol(optarg);
            break;
        case 'T':
            timeout = atof(optarg);
            break;
        case 'o':
            file = optarg;
            break;
        case 'r':
            rate = atof(optarg);
            break;
        case 'k':
            keyed = true;
            break;
        case 'X': {
            char *eq = strchr(optarg, '=');
            if (eq == NULL) {
                usage();
            }
            *eq = '\0';
            if (rd_kafka_conf_set(conf, optarg, eq + 1, errstr, sizeof(errstr)) !=
                RD_KAFKA_CONF_OK) {
                fprintf(stderr, "floor_produce: %s\n", errstr);
                return 2;
            }
            break;
        }
        default:
            usage();
        }
    }
    if (n < 0 || size < 64 || size > 1000000 || rate < 0) {
        usage();
    }
    if (file != NULL) {
        rd_kafka_conf_destroy(conf);
        return write_file(file, n, size);
    }
    if (bootstrap == NULL || topic == NULL) {
        usage();
    }
    if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, errstr, sizeof(errstr)) !=
        RD_KAFKA_CONF_OK) {
        fprintf(stderr, "floor_produce: %s\n", errstr);
        return 2;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    if (rk == NULL) {
        fprintf(stderr, "floor_produce: %s\n", errstr);
        return 2;
    }
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    char *value = malloc(size + 1);
    double deadline = start + timeout;
    long long bytes = 0;
    bool timed_out = false;
    double paced_from = floor_now();

    for (long long i = 0; i < n && !timed_out && failed == 0; i++) {
        if (rate > 0) {
            wait_until(rk, paced_from + (double)i / rate);
        }
        size_t len =
            rate > 0 ? stamped_value(value, size, i) : floor_value(value, size, i);
        char key[8];
        int key_len = keyed ? snprintf(key, sizeof(key), "%llu",
                                       ((unsigned long long)i * 2654435761ULL) % 1000)
                            : 0;
        /* Bounded: each retry waits up to 100 ms for delivery reports; the
         * deadline ends it. */
        while (rd_kafka_produce(rkt, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, value,
                                len, keyed ? key : NULL, (size_t)key_len, NULL) != 0) {
            if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                fprintf(stderr, "floor_produce: produce: %s\n",
                        rd_kafka_err2str(rd_kafka_last_error()));
                return 1;
            }
            rd_kafka_poll(rk, 100);
            if (floor_now() > deadline) {
                timed_out = true;
                break;
            }
        }
        bytes += (long long)len;
        if ((i & 1023) == 0 || rate > 0) {
            rd_kafka_poll(rk, 0);
        }
    }
    /* Wait for the last delivery reports, bounded by the deadline. */
    while (delivered + failed < n && floor_now() < deadline) {
        rd_kafka_flush(rk, 100);
    }
    int status =
        floor_report(&(floor_run_t){.program = "floor_produce",
                                    .n = n,
                                    .delivered = delivered,
                                    .failed = failed,
                                    .errors = failed,
                                    .bytes = bytes,
                                    .seconds = floor_now() - start,
                                    .cpu_seconds = floor_cpu_seconds() - cpu_start,
                                    .total_seconds = -1,
                                    .first_error = first_error});
    rd_kafka_topic_destroy(rkt);
    rd_kafka_flush(rk, 1000);
    rd_kafka_destroy(rk);
    free(value);
    return status;
}
