/*
 * The worker's shared producers: at-least-once source tasks whose final
 * producer properties are equal (worker keys, producer.override.*, resolved
 * secrets; all but client.id) share one idempotent librdkafka producer
 * instead of one each, with its threads and buffers. Exactly-once tasks,
 * and tasks whose properties differ in anything, keep their own
 * (source_produce.c).
 *
 * Each task joins through a lane. A record's opaque names its lane (a slot
 * in the producer's table and that slot's generation) and its place in the
 * task's ring (seq % RING_SIZE: the ring never holds more than RING_SIZE
 * records, so the task finds the whole number back from its head). One
 * thread per shared producer serves its delivery reports: it hands each to
 * its lane's inbox and wakes the task, which applies them on its own
 * thread as a task with its own producer does (tb_source_apply_report). A
 * failed record's bytes are copied into its report, for the dead letter
 * queue and the log; a delivered one's are not.
 *
 * A task that stops waits for its own records' reports only, within its
 * shutdown bound. A report that arrives after its task left finds no lane
 * (the slot is empty or of a later generation) and is dropped: that
 * record's source offset was never recorded, so the task's next run sends
 * it again (at-least-once holds). A final error of the producer (fatal,
 * failed authentication) fails every task on it.
 */
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connectors/kafka/tb_kafka_conf.h"
#include "connectors/kafka/tb_kafka_reaper.h"
#include "connectors/runtime/source/source_engine_internal.h"
#include "core/tb_log.h"
#include "core/tb_metrics.h"
#include "core/tb_record.h"
#include "core/tb_time.h"

_Static_assert(RING_SIZE == 1 << 16, "a record's opaque keeps 16 bits of its number");

#define GEN_BITS 24     /* a slot's generation, in a record's opaque */
#define POLL_MS 1000    /* the poller's wait; a stop cuts it short (rd_kafka_yield) */
#define INBOX_START 256 /* reports an inbox has room for at first */

typedef struct shared_producer shared_producer_t;

/* A task's place on a shared producer. */
struct tb_source_lane {
    shared_producer_t *producer; /* borrowed: lives while it has lanes */
    const tb_task_env_t *env;    /* the task's (borrowed) */
    uint32_t slot;
    uint32_t gen;
    /* under producer->lock */
    pthread_cond_t arrived; /* the inbox got a report, or failure was set */
    tb_source_report_t *inbox;
    size_t count;
    size_t capacity;
    char failure[512]; /* a final error of the producer; "" none */
};

struct shared_producer {
    shared_producer_t *next; /* in the registry */
    char *key;               /* its properties, canonical JSON, without client.id */
    char client_id[64];
    rd_kafka_t *rk;
    pthread_t poller;
    atomic_bool stopping;
    tb_series_t *tasks; /* tributary_source_shared_producer_tasks */
    size_t lane_count;  /* under the registry's lock */
    pthread_mutex_t lock;
    tb_source_lane_t **lanes; /* by slot; NULL: free */
    uint32_t *gens;           /* each slot's generation */
    size_t slots;
};

/* The registry: the shared producers of the process, by key. A process runs
 * one worker; two workers in one process would share only producers of
 * identical properties, which is what sharing allows anyway. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static shared_producer_t *registry;
static unsigned long producers_made;

static const char *const producer_labels[] = {"producer", NULL};
static const tb_metric_def_t shared_tasks = {
    .name = "tributary_source_shared_producer_tasks",
    .type = TB_METRIC_GAUGE,
    .help = "At-least-once source tasks that share one producer (by its client.id).",
    .labels = producer_labels};

/* A copy of the n bytes at data (NULL for NULL). */
static void *copy_bytes(const void *data, size_t n)
{
    void *copy = data != NULL ? malloc(n > 0 ? n : 1) : NULL;
    if (copy != NULL && n > 0) {
        memcpy(copy, data, n);
    }
    return copy;
}

/* A failed record, copied for its report (borrowed from librdkafka until
 * the callback returns). */
static tb_sink_record_t *copy_refused(const rd_kafka_message_t *msg)
{
    tb_header_t *headers;
    tb_sink_record_t borrowed = tb_source_refused_record(msg, &headers);
    tb_sink_record_t *copy = malloc(sizeof(*copy));
    *copy = borrowed;
    copy->topic = strdup(borrowed.topic);
    copy->key = copy_bytes(borrowed.key, borrowed.key_len);
    copy->value = copy_bytes(borrowed.value, borrowed.value_len);
    copy->headers = borrowed.header_count > 0
                        ? tb_headers_copy(borrowed.headers, borrowed.header_count, 0)
                        : NULL;
    copy->header_count = copy->headers != NULL ? borrowed.header_count : 0;
    free(headers);
    return copy;
}

void tb_source_report_free(tb_source_report_t *report)
{
    tb_sink_record_t *r = report->refused;
    if (r != NULL) {
        free((char *)r->topic);
        free((void *)r->key);
        free((void *)r->value);
        tb_headers_free((tb_header_t *)r->headers, r->header_count);
        free(r);
    }
    report->refused = NULL;
}

/* The lane a record's opaque names, or NULL when its task left. Under
 * producer->lock. */
static tb_source_lane_t *lane_of(const shared_producer_t *producer, uint64_t opaque)
{
    uint64_t slot = opaque >> (16 + GEN_BITS);
    uint32_t gen = (uint32_t)(opaque >> 16) & ((1u << GEN_BITS) - 1);
    if (slot >= producer->slots || producer->lanes[slot] == NULL ||
        (producer->gens[slot] & ((1u << GEN_BITS) - 1)) != gen) {
        return NULL;
    }
    return producer->lanes[slot];
}

/* Wakes the task of lane once its inbox has something. Under
 * producer->lock, which its stop takes before it leaves. */
static void wake_lane(tb_source_lane_t *lane)
{
    pthread_cond_signal(&lane->arrived);
    lane->env->wake(lane->env->task);
}

static void on_shared_delivery(rd_kafka_t *rk, const rd_kafka_message_t *msg,
                               void *opaque)
{
    shared_producer_t *producer = opaque;
    (void)rk;
    /* the copy is made before the lock, and let go if the task left */
    tb_source_report_t report = {
        .slot = (uint32_t)((uintptr_t)msg->_private & (RING_SIZE - 1)),
        .err = msg->err,
        .partition = msg->partition,
        .offset = msg->offset,
        .rkt = msg->rkt,
        .refused = msg->err != RD_KAFKA_RESP_ERR_NO_ERROR ? copy_refused(msg) : NULL};
    pthread_mutex_lock(&producer->lock);
    tb_source_lane_t *lane = lane_of(producer, (uint64_t)(uintptr_t)msg->_private);
    if (lane != NULL && lane->count == lane->capacity) {
        size_t capacity = lane->capacity > 0 ? lane->capacity * 2 : INBOX_START;
        lane->inbox = realloc(lane->inbox, capacity * sizeof(*lane->inbox));
        lane->capacity = capacity;
    }
    if (lane != NULL) {
        lane->inbox[lane->count++] = report;
        if (lane->count == 1) {
            wake_lane(lane);
        }
    }
    pthread_mutex_unlock(&producer->lock);
    if (lane == NULL) {
        tb_source_report_free(&report); /* its task left: see the top of this file */
    }
}

/* A final error of the producer fails every task on it; librdkafka retries
 * the others itself. */
static void on_shared_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    shared_producer_t *producer = opaque;
    (void)rk;
    if (!tb_kafka_error_is_final(err)) {
        return;
    }
    pthread_mutex_lock(&producer->lock);
    for (size_t i = 0; i < producer->slots; i++) {
        tb_source_lane_t *lane = producer->lanes[i];
        if (lane != NULL && lane->failure[0] == '\0') {
            snprintf(lane->failure, sizeof(lane->failure),
                     "Kafka (the producer shared as %s): %s", producer->client_id,
                     reason);
            wake_lane(lane);
        }
    }
    pthread_mutex_unlock(&producer->lock);
}

/* The poller: serves the shared producer's reports until it is stopped. */
static void *poll_reports(void *opaque)
{
    shared_producer_t *producer = opaque;
    while (!atomic_load(&producer->stopping)) {
        rd_kafka_poll(producer->rk, POLL_MS);
    }
    return NULL;
}

static void producer_free(shared_producer_t *producer)
{
    tb_series_release(producer->tasks);
    pthread_mutex_destroy(&producer->lock);
    free(producer->lanes);
    free(producer->gens);
    free(producer->key);
    free(producer);
}

/* A new shared producer of props (its client.id set here), its poller
 * running. NULL with errstr. Under the registry's lock. */
static shared_producer_t *producer_create(json_t *props, char *key, char *errstr,
                                          size_t errstr_size)
{
    shared_producer_t *producer = calloc(1, sizeof(*producer));
    pthread_mutex_init(&producer->lock, NULL);
    atomic_init(&producer->stopping, false);
    producer->key = key;
    snprintf(producer->client_id, sizeof(producer->client_id),
             "connector-producer-shared-%lu", ++producers_made);
    json_object_set_new(props, "client.id", json_string(producer->client_id));
    rd_kafka_conf_t *conf = tb_kafka_conf_new(props, errstr, errstr_size);
    if (conf == NULL) {
        goto fail;
    }
    rd_kafka_conf_set_opaque(conf, producer);
    rd_kafka_conf_set_dr_msg_cb(conf, on_shared_delivery);
    rd_kafka_conf_set_error_cb(conf, on_shared_error);
    producer->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, errstr_size);
    if (producer->rk == NULL) {
        rd_kafka_conf_destroy(conf);
        goto fail;
    }
    if (pthread_create(&producer->poller, NULL, poll_reports, producer) != 0) {
        snprintf(errstr, errstr_size, "cannot start the shared producer's poller");
        rd_kafka_destroy(producer->rk);
        goto fail;
    }
    /* named, or it would carry the name of the pool thread that made it */
    pthread_setname_np(producer->poller, "tb-shared-dr"); /* cosmetic: failure ignored */
    const char *values[] = {producer->client_id};
    producer->tasks = tb_metrics_series(&shared_tasks, values);
    TB_LOG(TB_LOG_INFO, "tributary.source", "shared producer %s created",
           producer->client_id);
    return producer;

fail:
    producer_free(producer);
    return NULL;
}

/* A free slot of producer for lane (the table grows by doubling). Under
 * producer->lock. */
static void take_slot(shared_producer_t *producer, tb_source_lane_t *lane)
{
    size_t slot = 0;
    while (slot < producer->slots && producer->lanes[slot] != NULL) {
        slot++;
    }
    if (slot == producer->slots) {
        size_t slots = producer->slots > 0 ? producer->slots * 2 : 16;
        producer->lanes = realloc(producer->lanes, slots * sizeof(*producer->lanes));
        producer->gens = realloc(producer->gens, slots * sizeof(*producer->gens));
        for (size_t i = producer->slots; i < slots; i++) {
            producer->lanes[i] = NULL;
            producer->gens[i] = 0;
        }
        producer->slots = slots;
    }
    producer->lanes[slot] = lane;
    lane->slot = (uint32_t)slot;
    lane->gen = producer->gens[slot] & ((1u << GEN_BITS) - 1);
}

int tb_source_shared_join(source_engine_t *engine, json_t *props, char *errstr,
                          size_t errstr_size)
{
    json_t *shared_props = json_deep_copy(props);
    json_object_del(shared_props, "client.id");
    char *key = json_dumps(shared_props, JSON_COMPACT | JSON_SORT_KEYS);
    int rc = -1;
    pthread_mutex_lock(&registry_lock);
    shared_producer_t *producer = registry;
    while (producer != NULL && strcmp(producer->key, key) != 0) {
        producer = producer->next;
    }
    if (producer == NULL) {
        producer = producer_create(shared_props, key, errstr, errstr_size);
        key = NULL; /* the producer's, or freed with it */
        if (producer == NULL) {
            goto fail;
        }
        producer->next = registry;
        registry = producer;
    }
    tb_source_lane_t *lane = calloc(1, sizeof(*lane));
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&lane->arrived, &attr);
    pthread_condattr_destroy(&attr);
    lane->producer = producer;
    lane->env = engine->env;
    pthread_mutex_lock(&producer->lock);
    take_slot(producer, lane);
    pthread_mutex_unlock(&producer->lock);
    producer->lane_count++;
    tb_series_set(producer->tasks, (double)producer->lane_count);
    engine->lane = lane;
    engine->rk = producer->rk;
    TB_LOG_TASK(TB_LOG_INFO, "tributary.task", engine->env->connector, engine->env->id,
                "produces through the shared producer %s (%zu tasks)",
                producer->client_id, producer->lane_count);
    rc = 0;

fail:
    pthread_mutex_unlock(&registry_lock);
    free(key);
    json_decref(shared_props);
    return rc;
}

void *tb_source_shared_opaque(const tb_source_lane_t *lane, uint64_t seq)
{
    return (void *)(uintptr_t)(((uint64_t)lane->slot << (16 + GEN_BITS)) |
                               ((uint64_t)lane->gen << 16) | (seq & (RING_SIZE - 1)));
}

/* Takes what waits in the lane's inbox (reports, and a final error into
 * engine->failure). Under producer->lock. */
static tb_source_report_t *take_inbox(source_engine_t *engine, size_t *count)
{
    tb_source_lane_t *lane = engine->lane;
    tb_source_report_t *reports = lane->inbox;
    *count = lane->count;
    lane->inbox = NULL;
    lane->count = lane->capacity = 0;
    if (lane->failure[0] != '\0' && engine->failure[0] == '\0') {
        snprintf(engine->failure, sizeof(engine->failure), "%s", lane->failure);
    }
    return reports;
}

void tb_source_shared_serve(source_engine_t *engine)
{
    size_t count;
    pthread_mutex_lock(&engine->lane->producer->lock);
    tb_source_report_t *reports = take_inbox(engine, &count);
    pthread_mutex_unlock(&engine->lane->producer->lock);
    engine->served_us = tb_monotonic_us();
    for (size_t i = 0; i < count; i++) {
        uint64_t seq =
            engine->head_seq + ((reports[i].slot - engine->head_seq) & (RING_SIZE - 1));
        tb_source_apply_report(engine, seq, &reports[i]);
        tb_source_report_free(&reports[i]);
    }
    free(reports);
}

void tb_source_shared_wait(source_engine_t *engine, int64_t deadline_ms)
{
    tb_source_lane_t *lane = engine->lane;
    tb_source_shared_serve(engine);
    while (engine->awaiting > 0 && engine->failure[0] == '\0' &&
           tb_monotonic_ms() < deadline_ms) {
        struct timespec until;
        tb_deadline_timespec(deadline_ms, &until);
        pthread_mutex_lock(&lane->producer->lock);
        if (lane->count == 0 && lane->failure[0] == '\0') {
            pthread_cond_timedwait(&lane->arrived, &lane->producer->lock, &until);
        }
        pthread_mutex_unlock(&lane->producer->lock);
        tb_source_shared_serve(engine);
    }
}

bool tb_source_shared_leave(source_engine_t *engine, int64_t deadline_ms)
{
    tb_source_lane_t *lane = engine->lane;
    shared_producer_t *producer = lane->producer;
    engine->lane = NULL;
    engine->rk = NULL;
    pthread_mutex_lock(&registry_lock);
    pthread_mutex_lock(&producer->lock);
    producer->lanes[lane->slot] = NULL;
    producer->gens[lane->slot]++; /* a late report for this lane finds no one */
    pthread_mutex_unlock(&producer->lock);
    for (size_t i = 0; i < lane->count; i++) {
        tb_source_report_free(&lane->inbox[i]);
    }
    free(lane->inbox);
    pthread_cond_destroy(&lane->arrived);
    free(lane);
    bool last = --producer->lane_count == 0;
    tb_series_set(producer->tasks, (double)producer->lane_count);
    for (shared_producer_t **p = &registry; last && *p != NULL; p = &(*p)->next) {
        if (*p == producer) {
            *p = producer->next;
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    if (!last) {
        return true;
    }
    /* the last task is gone: no one waits for a report any more */
    atomic_store(&producer->stopping, true);
    rd_kafka_yield(producer->rk);
    pthread_join(producer->poller, NULL);
    TB_LOG(TB_LOG_INFO, "tributary.source", "shared producer %s closed",
           producer->client_id);
    bool finished = tb_kafka_destroy_within(producer->rk, 0, deadline_ms);
    producer_free(producer);
    return finished;
}
