/*
 * floor_consume - the librdkafka floor of the sink side: reads a whole topic
 * from the beginning with a fresh consumer group, through librdkafka's batched
 * consume (rd_kafka_consume_batch_queue on the consumer queue), and only
 * counts records and bytes.
 *
 *   floor_consume -b BOOTSTRAP -t TOPIC -n N [-T TIMEOUT_S] [-g GROUP] [-o FILE]
 *                 [--flush-each] [--check] [-X key=value]...
 *
 * Prints one JSON line: records, bytes, seconds (start of the program to the
 * N-th record), cpu_seconds (utime + stime of this process over that span, from
 * /proc/self/stat), hwm_kb (VmHWM). Exits 0 once N records were read, 1 at
 * the timeout.
 *
 * With -o, also writes each value and a newline to FILE through a 256 KiB
 * stdio buffer, flushed before the N-th record's time is taken: the work of a
 * file sink without a connector runtime; with --flush-each, the buffer is
 * flushed after every batch, as a file sink's put does (the latency
 * scenario reads the file while it grows), and a batch is what is waiting,
 * not what arrives within 10 ms. With --check, checks the content
 * (floor_check.h) and adds duplicates, out_of_order, unparsed, distinct and
 * check_passed to the line; it then exits 1 when the check fails.
 *
 * With -p URL -f FLUSH (URL an S3 bucket's, http://host:port/bucket), also
 * appends each value and a newline to a buffer of its partition and PUTs
 * the buffer as one object, signed with AWS Signature Version 4 (libcurl's,
 * the key pair from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, region
 * us-east-1, the payload's SHA-256 computed), once it holds FLUSH records,
 * and the rest of each buffer after the N-th record: the work of an S3
 * sink's JsonFormat of raw values, without a connector runtime.
 *
 *   floor_consume --end-offsets -b BOOTSTRAP -t TOPIC -n N [-T TIMEOUT_S]
 *                 [-i INTERVAL_MS] [-c PARTITIONS] [--first]
 *
 * Watches the topic instead: asks for the end offsets of all its partitions
 * every INTERVAL_MS (default 20) until their sum reaches N. With -c, first
 * creates the topic with PARTITIONS partitions (Admin API; an existing topic
 * is kept). Prints "ready P" once the topic's partitions are known, then a JSON
 * line {"end_offsets":S,"seconds":T}. Exits 0 when the sum reached N, 1 at the
 * timeout. The harness uses it to see when a source has written N records.
 * With --first, also prints "first T" (seconds since its start) as soon as
 * the sum is above 0: bench/mirror.py takes a replicator's CPU time then.
 */
#include <curl/curl.h>
#include <librdkafka/rdkafka.h>
#include <openssl/sha.h>
#include <stdbool.h>

#include "floor_check.h"
#include "floor_common.h"

#define WRITE_BUFFER (256 * 1024)

static void usage(void)
{
    fprintf(
        stderr,
        "usage: floor_consume -b BOOTSTRAP -t TOPIC -n N [-T TIMEOUT_S] [-g GROUP] "
        "[-o FILE | -p BUCKET_URL -f FLUSH] [--flush-each] [--check] [-X key=value]...\n"
        "       floor_consume --end-offsets -b BOOTSTRAP -t TOPIC -n N [-T TIMEOUT_S] "
        "[-i INTERVAL_MS] [-c PARTITIONS] [--first]\n");
    exit(2);
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value)
{
    char errstr[512];
    if (rd_kafka_conf_set(conf, key, value, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "floor_consume: %s\n", errstr);
        exit(2);
    }
}

/* The -p mode's objects: a buffer per partition, PUT every `flush` records. */
#define PUT_PARTITIONS 64

typedef struct {
    char *data;
    size_t len, cap;
    long long records, first_offset;
} put_buffer_t;

typedef struct {
    const char *url, *topic;
    long long flush;
    CURL *curl;
    char userpwd[512];
    put_buffer_t buffers[PUT_PARTITIONS];
    long long objects;
} put_t;

static size_t discard(char *ptr, size_t size, size_t nmemb, void *opaque)
{
    (void)ptr;
    (void)opaque;
    return size * nmemb;
}

/* PUTs the partition's buffer as <url>/<topic>+<partition>+<first offset>.json
 * and empties it; -1 when the store refused it. */
static int put_object(put_t *put, int partition)
{
    put_buffer_t *b = &put->buffers[partition];
    unsigned char digest[SHA256_DIGEST_LENGTH];
    char url[1024], hex[2 * SHA256_DIGEST_LENGTH + 1], header[128];
    SHA256((const unsigned char *)b->data, b->len, digest);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    }
    snprintf(url, sizeof(url), "%s/%s+%d+%010lld.json", put->url, put->topic, partition,
             b->first_offset);
    snprintf(header, sizeof(header), "x-amz-content-sha256: %s", hex);
    struct curl_slist *headers = curl_slist_append(NULL, header);
    CURL *c = put->curl;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, b->data);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)b->len);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK || status != 200) {
        fprintf(stderr, "floor_consume: PUT %s: %s, status %ld\n", url,
                curl_easy_strerror(rc), status);
        return -1;
    }
    b->len = 0;
    b->records = 0;
    put->objects++;
    return 0;
}

static int put_append(put_t *put, const rd_kafka_message_t *m)
{
    if (m->partition < 0 || m->partition >= PUT_PARTITIONS) {
        fprintf(stderr, "floor_consume: -p takes partitions below %d\n", PUT_PARTITIONS);
        return -1;
    }
    put_buffer_t *b = &put->buffers[m->partition];
    if (b->len + m->len + 1 > b->cap) {
        size_t cap = b->cap > 0 ? b->cap : 1 << 20;
        while (cap < b->len + m->len + 1) {
            cap *= 2;
        }
        char *grown = realloc(b->data, cap);
        if (grown == NULL) {
            fprintf(stderr, "floor_consume: out of memory\n");
            return -1;
        }
        b->data = grown;
        b->cap = cap;
    }
    if (b->records == 0) {
        b->first_offset = m->offset;
    }
    memcpy(b->data + b->len, m->payload, m->len);
    b->data[b->len + m->len] = '\n';
    b->len += m->len + 1;
    return ++b->records >= put->flush ? put_object(put, m->partition) : 0;
}

/* PUTs what every buffer still holds. */
static int put_rest(put_t *put)
{
    for (int p = 0; p < PUT_PARTITIONS; p++) {
        if (put->buffers[p].records > 0 && put_object(put, p) != 0) {
            return -1;
        }
    }
    return 0;
}

/* NULL with a message when the key pair is not in the environment. */
static put_t *put_create(const char *url, const char *topic, long long flush)
{
    const char *key = getenv("AWS_ACCESS_KEY_ID"),
               *secret = getenv("AWS_SECRET_ACCESS_KEY");
    put_t *put = calloc(1, sizeof(*put));
    if (key == NULL || secret == NULL || put == NULL || flush < 1 ||
        (put->curl = curl_easy_init()) == NULL) {
        fprintf(stderr, "floor_consume: -p needs -f FLUSH and AWS_ACCESS_KEY_ID and "
                        "AWS_SECRET_ACCESS_KEY\n");
        free(put);
        return NULL;
    }
    put->url = url;
    put->topic = topic;
    put->flush = flush;
    snprintf(put->userpwd, sizeof(put->userpwd), "%s:%s", key, secret);
    curl_easy_setopt(put->curl, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
    curl_easy_setopt(put->curl, CURLOPT_USERPWD, put->userpwd);
    curl_easy_setopt(put->curl, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(put->curl, CURLOPT_TIMEOUT_MS, 60000L);
    return put;
}

static void put_destroy(put_t *put)
{
    if (put == NULL) {
        return;
    }
    for (int p = 0; p < PUT_PARTITIONS; p++) {
        free(put->buffers[p].data);
    }
    curl_easy_cleanup(put->curl);
    free(put);
}

/* Partition count of topic, or -1 while the cluster does not know it. */
static int partitions_of(rd_kafka_t *rk, const char *topic)
{
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    const struct rd_kafka_metadata *md = NULL;
    int count = -1;
    if (rd_kafka_metadata(rk, 0, rkt, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
            md->topics[0].partition_cnt > 0) {
            count = md->topics[0].partition_cnt;
        }
        rd_kafka_metadata_destroy(md);
    }
    rd_kafka_topic_destroy(rkt);
    return count;
}

/* Creates topic with `partitions` partitions (replication 1); true when it
 * was created or already exists. */
static bool create_topic(rd_kafka_t *rk, const char *topic, int partitions)
{
    char errstr[512];
    bool ok = false;
    rd_kafka_NewTopic_t *nt =
        rd_kafka_NewTopic_new(topic, partitions, 1, errstr, sizeof(errstr));
    if (nt == NULL) {
        fprintf(stderr, "floor_consume: %s\n", errstr);
        return false;
    }
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *options =
        rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_request_timeout(options, 30000, errstr, sizeof(errstr));
    rd_kafka_CreateTopics(rk, &nt, 1, options, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 40000);
    if (ev == NULL) {
        fprintf(stderr, "floor_consume: creating %s timed out\n", topic);
    } else if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        fprintf(stderr, "floor_consume: creating %s: %s\n", topic,
                rd_kafka_event_error_string(ev));
    } else {
        size_t cnt = 0;
        const rd_kafka_topic_result_t **results = rd_kafka_CreateTopics_result_topics(
            rd_kafka_event_CreateTopics_result(ev), &cnt);
        rd_kafka_resp_err_t err =
            cnt == 1 ? rd_kafka_topic_result_error(results[0]) : RD_KAFKA_RESP_ERR__FAIL;
        ok = err == RD_KAFKA_RESP_ERR_NO_ERROR ||
             err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS;
        if (!ok) {
            fprintf(stderr, "floor_consume: creating %s: %s\n", topic,
                    rd_kafka_err2str(err));
        }
    }
    if (ev != NULL) {
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    return ok;
}

static int watch_end_offsets(rd_kafka_conf_t *conf, const char *topic, long long n,
                             double timeout, int interval_ms, int create, bool first)
{
    char errstr[512];
    double start = floor_now(), deadline = start + timeout;
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    if (rk == NULL) {
        fprintf(stderr, "floor_consume: %s\n", errstr);
        return 2;
    }
    if (create > 0 && !create_topic(rk, topic, create)) {
        rd_kafka_destroy(rk);
        return 1;
    }
    int partitions = -1;
    while ((partitions = partitions_of(rk, topic)) < 0 && floor_now() < deadline) {
        usleep(100000);
    }
    if (partitions < 0) {
        fprintf(stderr, "floor_consume: topic %s not found\n", topic);
        rd_kafka_destroy(rk);
        return 1;
    }
    printf("ready %d\n", partitions);
    fflush(stdout);
    long long sum = 0;
    int rc = 1;
    while (floor_now() < deadline) {
        rd_kafka_topic_partition_list_t *list =
            rd_kafka_topic_partition_list_new(partitions);
        for (int p = 0; p < partitions; p++) {
            /* offsets_for_times with the timestamp -1 (LATEST) answers end offsets,
             * one request per leader */
            rd_kafka_topic_partition_list_add(list, topic, p)->offset =
                RD_KAFKA_OFFSET_END;
        }
        if (rd_kafka_offsets_for_times(rk, list, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            long long s = 0;
            for (int i = 0; i < list->cnt; i++) {
                if (list->elems[i].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
                    list->elems[i].offset > 0) {
                    s += list->elems[i].offset;
                }
            }
            sum = s;
        }
        if (first && sum > 0) {
            printf("first %.6f\n", floor_now() - start);
            fflush(stdout);
            first = false;
        }
        rd_kafka_topic_partition_list_destroy(list);
        if (sum >= n) {
            rc = 0;
            break;
        }
        usleep((useconds_t)interval_ms * 1000);
    }
    printf("{\"end_offsets\":%lld,\"seconds\":%.6f}\n", sum, floor_now() - start);
    fflush(stdout);
    rd_kafka_destroy(rk);
    return rc;
}

int main(int argc, char **argv)
{
    double start = floor_now();
    double cpu_start = floor_cpu_seconds();
    const char *bootstrap = NULL, *topic = NULL, *group = NULL, *output = NULL,
               *put_url = NULL;
    long long flush = 0;
    bool check = false, flush_each = false;
    long long n = -1;
    double timeout = 300;
    int interval_ms = 20, create = 0;
    bool end_offsets = false, first = false;
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    char errstr[512];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--end-offsets") == 0) {
            end_offsets = true;
        } else if (strcmp(argv[i], "--first") == 0) {
            first = true;
        } else if (strcmp(argv[i], "--check") == 0) {
            check = true;
        } else if (strcmp(argv[i], "--flush-each") == 0) {
            flush_each = true;
        } else if (i + 1 < argc && argv[i][0] == '-' && strlen(argv[i]) == 2) {
            const char *v = argv[++i];
            switch (argv[i - 1][1]) {
            case 'b':
                bootstrap = v;
                break;
            case 't':
                topic = v;
                break;
            case 'n':
                n = atoll(v);
                break;
            case 'T':
                timeout = atof(v);
                break;
            case 'g':
                group = v;
                break;
            case 'o':
                output = v;
                break;
            case 'p':
                put_url = v;
                break;
            case 'f':
                flush = atoll(v);
                break;
            case 'i':
                interval_ms = atoi(v);
                break;
            case 'c':
                create = atoi(v);
                break;
            case 'X': {
                char key[256];
                const char *eq = strchr(v, '=');
                if (eq == NULL || (size_t)(eq - v) >= sizeof(key)) {
                    usage();
                }
                memcpy(key, v, (size_t)(eq - v));
                key[eq - v] = '\0';
                set(conf, key, eq + 1);
                break;
            }
            default:
                usage();
            }
        } else {
            usage();
        }
    }
    if (bootstrap == NULL || topic == NULL || n < 0 || interval_ms < 1 ||
        (put_url != NULL && output != NULL)) {
        usage();
    }
    set(conf, "bootstrap.servers", bootstrap);
    if (end_offsets) {
        return watch_end_offsets(conf, topic, n, timeout, interval_ms, create, first);
    }

    char fresh[128];
    if (group == NULL) {
        snprintf(fresh, sizeof(fresh), "floor-%ld-%ld", (long)getpid(), (long)time(NULL));
        group = fresh;
    }
    set(conf, "group.id", group);
    set(conf, "auto.offset.reset", "earliest");
    set(conf, "enable.auto.commit", "false");
    set(conf, "enable.partition.eof", "false");
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
    if (rk == NULL) {
        fprintf(stderr, "floor_consume: %s\n", errstr);
        return 2;
    }
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_partition_list_t *subscription = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(subscription, topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t err = rd_kafka_subscribe(rk, subscription);
    rd_kafka_topic_partition_list_destroy(subscription);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        fprintf(stderr, "floor_consume: subscribe: %s\n", rd_kafka_err2str(err));
        return 2;
    }
    rd_kafka_queue_t *queue = rd_kafka_queue_get_consumer(rk);
    enum { BATCH = 4096 };
    static rd_kafka_message_t *batch[BATCH];
    long long records = 0, bytes = 0, errors = 0;
    double deadline = start + timeout, seconds = 0, cpu = 0;
    FILE *out = output != NULL ? fopen(output, "w") : NULL;
    floor_check_t *checker = check ? floor_check_create(n) : NULL;
    put_t *put = put_url != NULL ? put_create(put_url, topic, flush) : NULL;
    if (put_url != NULL && put == NULL) {
        return 2;
    }
    if ((output != NULL &&
         (out == NULL || setvbuf(out, NULL, _IOFBF, WRITE_BUFFER) != 0)) ||
        (check && checker == NULL)) {
        fprintf(stderr, "floor_consume: cannot %s\n",
                check && checker == NULL ? "allocate the check" : "open the output file");
        return 2;
    }

    /* Bounded by the deadline. A call returns with a full batch or after 10 ms, so the
     * last, partial batch is seen at most 10 ms late. With --flush-each (the latency
     * scenario) a batch is what is waiting: the first record is waited for, up to
     * 10 ms, and the rest taken without waiting, as a connector's sink takes them; a
     * call waiting to fill its batch would hold each record up to 10 ms. */
    while (records < n && floor_now() < deadline) {
        ssize_t got =
            rd_kafka_consume_batch_queue(queue, 10, batch, flush_each ? 1 : BATCH);
        if (flush_each && got == 1) {
            ssize_t more = rd_kafka_consume_batch_queue(queue, 0, batch + 1, BATCH - 1);
            got += more > 0 ? more : 0;
        }
        for (ssize_t i = 0; i < got; i++) {
            const rd_kafka_message_t *m = batch[i];
            if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
                records++;
                bytes += (long long)m->len;
                if (out != NULL) {
                    fwrite(m->payload, 1, m->len, out);
                    fputc('\n', out);
                }
                if (put != NULL && put_append(put, m) != 0) {
                    return 2;
                }
                if (checker != NULL) {
                    floor_check_record(checker, m->partition, m->payload, m->len);
                }
            } else if (errors++ == 0) {
                fprintf(stderr, "floor_consume: %s\n", rd_kafka_message_errstr(m));
            }
            rd_kafka_message_destroy(batch[i]);
        }
        if (out != NULL && flush_each && got > 0 && fflush(out) != 0) {
            fprintf(stderr, "floor_consume: writing %s failed\n", output);
            return 2;
        }
        if (records >= n || floor_now() >= deadline) {
            if (out != NULL && fflush(out) != 0) {
                fprintf(stderr, "floor_consume: writing %s failed\n", output);
                return 2;
            }
            if (put != NULL && put_rest(put) != 0) {
                return 2;
            }
            seconds = floor_now() - start;
            cpu = floor_cpu_seconds() - cpu_start;
        }
    }
    printf("{\"records\":%lld,\"errors\":%lld,\"bytes\":%lld,\"seconds\":%.6f,"
           "\"cpu_seconds\":%.3f,\"hwm_kb\":%ld",
           records, errors, bytes, seconds, cpu, floor_hwm_kb());
    if (put != NULL) {
        printf(",\"objects\":%lld", put->objects);
    }
    if (checker != NULL) {
        printf(",\"distinct\":%lld,\"duplicates\":%lld,\"out_of_order\":%lld,"
               "\"unparsed\":%lld,\"check_passed\":%s",
               checker->distinct, checker->duplicates, checker->out_of_order,
               checker->unparsed, floor_check_passed(checker) ? "true" : "false");
    }
    printf("}\n");
    fflush(stdout);
    if (records < n) {
        fprintf(stderr, "floor_consume: %lld of %lld records before the timeout\n",
                records, n);
    }
    bool passed = records >= n && (checker == NULL || floor_check_passed(checker));
    floor_check_destroy(checker);
    put_destroy(put);
    if (out != NULL) {
        fclose(out);
    }
    rd_kafka_queue_destroy(queue);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    return passed ? 0 : 1;
}
