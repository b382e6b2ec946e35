/*
 * tb_plugin.h - what a connector plugin is.
 *
 * A plugin is one static const tb_plugin_t: its names, kind, config table
 * and callbacks. It only moves records to or from its external system; the
 * runtime owns threads, retries, offsets, metrics, converters and Kafka.
 * Plugins are listed in connectors/plugins.c.
 *
 * Callbacks that can fail return a tb_result_t (core/tb_result.h):
 * TB_RESULT_OK, TB_RESULT_RETRY for a retriable failure (the runtime
 * retries per errors.retry.*), or TB_RESULT_FAILED for a fatal one, with
 * the reason in errstr. A put() that returns TB_RESULT_RETRY with an empty
 * errstr is not logged by the runtime: the
 * plugin tells the operator itself (a JDBC sink's outage, not each step).
 */
#ifndef TB_PLUGIN_H
#define TB_PLUGIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/tb_limits.h"
#include "core/tb_config.h"
#include "core/tb_data.h"
#include "core/tb_record.h" /* tb_header_t */
#include "core/tb_result.h"

typedef enum {
    TB_PLUGIN_SOURCE = 0,
    TB_PLUGIN_SINK,
} tb_plugin_kind_t;

/* A record read from Kafka, after the key and value converters: bytes in the
 * converters' text form (a string, raw bytes, or JSON text). Borrowed for the
 * duration of put(). A NULL key or value is a null. */
typedef struct {
    const char *topic; /* as the transformations routed it */
    int32_t partition;
    int64_t offset;
    int64_t timestamp; /* ms since the epoch, -1 when none */
    /* the topic the record was read from, which partition and offset are
     * of (Connect's originalTopic()); NULL: topic */
    const char *original_topic;
    const void *key;
    size_t key_len;
    const void *value;
    size_t value_len;
    const tb_header_t *headers;
    size_t header_count;
    /* For a plugin that is typed (tb_plugin_t.typed): key and value as
     * Connect data, made by the task's converters (tb_converter_to_typed) or
     * the transformation chain, borrowed like the rest. A NULL schema is
     * schemaless data, a NULL value a null. key and value above are then
     * the Kafka bytes as read (what a dead letter queue gets), or the text
     * form of a side the chain changed. Unset (NULL) for other plugins. */
    const tb_schema_t *key_schema;
    const tb_value_t *key_data;
    const tb_schema_t *value_schema;
    const tb_value_t *value_data;
} tb_sink_record_t;

/* A partition a sink task is given or loses (Connect's open() and close()).
 * For open(), offset comes as TB_PLUGIN_NO_OFFSET, and the plugin may set it
 * to the next offset to read; stored is the offset the store holds for the
 * partition (TB_PLUGIN_NO_OFFSET when none, and always for close()). */
typedef struct {
    const char *topic; /* borrowed for the call */
    int32_t partition;
    int64_t offset;
    int64_t stored;
} tb_sink_partition_t;

#define TB_PLUGIN_NO_OFFSET (-1)

/* A record a source task hands to the runtime. The runtime takes ownership
 * of key, value (free()) and the source partition and offset (json_decref);
 * topic stays the task's and must live, unchanged, until task_stop (the
 * runtime knows a topic by its pointer).
 *
 * Borrowed bytes: a plugin that sets bytes_borrowed keeps key and value
 * instead. They must stay valid and unchanged until the plugin's next
 * poll() or its task_stop(), whichever comes first; the runtime never frees
 * them and copies whatever it needs longer (librdkafka copies them into its
 * message as it takes them). The runtime calls poll() again only once it is
 * done with every record of the previous poll, so a plugin may write each
 * poll's records into one buffer it reuses (its read buffer, an arena) and
 * allocate nothing per record. A record whose bytes the runtime must
 * rewrite (write.mode=upsert, transforms, a converter that is not
 * StringConverter or ByteArrayConverter) is copied first, as if the plugin
 * had allocated it.
 *
 * Typed records: a plugin whose data has a Connect schema (a change data
 * capture source) sets typed and hands key_schema/key_data and
 * value_schema/value_data instead of bytes (key and value stay NULL, the
 * kinds are ignored). The runtime takes ownership of all four (a NULL data
 * is a null, a NULL schema schemaless data) and the task's converters write
 * them as Connect's converters write a SourceRecord (tb_converter_from_typed),
 * after any transforms, which see them already typed. */
typedef struct {
    const char *topic;
    int32_t partition; /* -1: let the partitioner choose */
    void *key;         /* NULL: null key */
    size_t key_len;
    tb_data_kind_t key_kind; /* what the key holds, for the converter */
    void *value;             /* NULL: null value (a tombstone) */
    size_t value_len;
    tb_data_kind_t value_kind;
    bool bytes_borrowed;      /* key, value and headers stay the plugin's (above) */
    json_t *source_partition; /* where in the source this came from */
    json_t *source_offset;    /* and how far that source has been read */
    bool typed;               /* the four below hold the key and value */
    tb_schema_t *key_schema;
    tb_value_t *key_data;
    tb_schema_t *value_schema;
    tb_value_t *value_data;
    /* The record's headers (NULL: none), written as they are: each value
     * already the bytes of the header converter's form (a plugin's own
     * strings as their text, as both header converters write a string; a
     * plugin that copies Kafka records sets the headers it read). The
     * transformation chain sees them and may replace them. The runtime's:
     * the array and each name and value are freed with tb_headers_free
     * (core/tb_record.h), unless bytes_borrowed, when they are borrowed like
     * key and value. */
    tb_header_t *headers;
    size_t header_count;
    /* The record's timestamp (CreateTime), ms since the epoch, for a plugin
     * that copies it from its system; 0 (or less): none, the time the
     * runtime hands the record to Kafka. */
    int64_t timestamp;
} tb_source_record_t;

/* Context the runtime gives a task. Borrowed for the task's life. */
typedef struct {
    const char *connector; /* connector name */
    int task;              /* task id */
    /* Source: whether every record must carry its source partition and
     * offset (message ids and exactly-once need them). When false, a plugin
     * may set them only on the last record of each source partition in a
     * poll: a record without them does not move the offsets, and the ones
     * recorded still cover every record acknowledged before them. */
    bool offset_every_record;
    /* Source: the stored source offset for a source partition (new
     * reference), or NULL when none is stored. */
    json_t *(*offset_for)(void *runtime, const json_t *source_partition);
    /* Sink: reports that one record of the current put() or flush() cannot
     * be written, ever, with the reason (e.g. the target answered 400).
     * The runtime applies errors.tolerance: the task fails naming the
     * record, or the record is counted, logged and sent to the dead letter
     * queue. The plugin then treats the record as done. record is what
     * put() received or the plugin's own copy of it (records are borrowed
     * only for the duration of put(), so a plugin that buffers copies
     * them); the runtime copies what it keeps before returning. */
    void (*record_failed)(void *runtime, const tb_sink_record_t *record,
                          const char *reason);
    /* Sink: errors.tolerance=all. When false, the first record given to
     * record_failed fails the task: the plugin writes nothing past it, and
     * a plugin that keeps its own offsets stores none past it, so that the
     * restart reads it again. */
    bool tolerates_errors;
    /* Sink: waits until every record given to record_failed so far is in
     * the dead letter queue (0 at once when there is none). -1 with errstr
     * when one is not, or its task fails already: the task then fails, and
     * a plugin that keeps its own offsets must store none past that record
     * (one that commits them with its writes calls this before it
     * commits). */
    int (*failed_delivered)(void *runtime, char *errstr, size_t errstr_size);
    /* Sink: asks that the put() or flush() about to return TB_RESULT_RETRY
     * be tried again after ms milliseconds (Connect's
     * SinkTaskContext.timeout). The plugin then bounds its own retries (a
     * JDBC sink's max.retries): errors.retry.timeout does not apply to that
     * retry. */
    void (*retry_after)(void *runtime, int64_t ms);
    /* Sink: makes the runtime call put() soon, with no records when none
     * wait (as Connect calls put() with an empty collection), for a plugin
     * that writes in the background: a write of its finished, and that
     * put() handles the outcome (its record_failed calls, its failure).
     * Safe from any thread until task_stop returns. */
    void (*wake)(void *runtime);
    void *runtime;
    /* What the task may reach; a plugin opens files through
     * tb_limits_fopen with it. Set by the runtime just before task_start. */
    const tb_limits_t *limits;
    /* Set (atomic_load) once the runtime stops the task for good (a
     * DELETE, a reassignment, the worker's shutdown), before it waits for
     * the task's current call to return: a plugin that waits on its system
     * in slices gives up at the next one. Set with limits; NULL in a
     * context that never stops (a test's). */
    const atomic_bool *stopping;
} tb_task_context_t;

/* An operator's change of a sink connector's offsets (PATCH or DELETE
 * /connectors/{name}/offsets), for a plugin that keeps its own
 * (tb_plugin_t.alter_offsets). Borrowed for the call. */
typedef struct {
    const char *connector; /* connector name */
    /* the connector's config, its secrets resolved: never store or log it */
    const json_t *config;
    const tb_limits_t *limits; /* what the connector may reach */
    /* [{"topic","partition","offset"}]: where each partition resumes, offset
     * -1 meaning that the plugin keeps none for it any more (reading then
     * starts per auto.offset.reset); NULL resets every partition the
     * connector has */
    const json_t *offsets;
} tb_sink_offsets_change_t;

typedef struct tb_plugin {
    const char *class_name;     /* Connect's class name, or tributary's */
    const char *const *aliases; /* other accepted names, NULL-terminated */
    tb_plugin_kind_t kind;
    const char *version;             /* as GET /connector-plugins and statuses show it */
    const tb_config_table_t *config; /* the plugin's own keys */

    /* Checks across keys beyond the table; adds messages to errors
     * (name -> array). values are the parsed plugin and framework keys.
     * Optional. */
    void (*validate)(const json_t *values, json_t *errors);

    /* Keys of the system the plugin stands in for (Debezium's, for a
     * connector that runs its configs) that tributary does not implement,
     * NULL-terminated; an entry ending in '.' covers every key it prefixes.
     * A config holding one that is not in the plugin's table is refused,
     * naming it, rather than silently ignored. Optional. */
    const char *const *refused_keys;

    /* Splits a validated connector config into at most max_tasks task
     * configs: returns a new JSON array of objects of strings. */
    json_t *(*task_configs)(const json_t *config, int max_tasks);

    /* Source: the one topic every record of a task goes to, when its config
     * names one, read from values (the parsed plugin and framework keys)
     * and borrowed from them; NULL when records name their own topics.
     * An exactly-once task looks there for the progress marker of earlier
     * releases (tb_progress_marker.h). Optional. */
    const char *(*config_topic)(const json_t *values);

    /* Starts a task from its config; *task receives the plugin's state. */
    int (*task_start)(const tb_task_context_t *ctx, const json_t *config, void **task,
                      char *errstr, size_t errstr_size);

    /* Source: appends up to max records to out and sets *count. Returns 0
     * with *count 0 when nothing is ready; *wake_ms then says when to ask
     * again (-1: only when the runtime is woken). */
    int (*poll)(void *task, tb_source_record_t *out, size_t max, size_t *count,
                int64_t *wake_ms, char *errstr, size_t errstr_size);

    /* Sink: whether put() reads record headers. When false (and no dead
     * letter queue needs them) records come with none: reading them costs
     * librdkafka an allocation per record. */
    bool reads_headers;

    /* Sink: put() gets each key and value as Connect data too (key_schema,
     * key_data, value_schema, value_data). A record the converters cannot
     * type (a converter without a typed form, or bad bytes) follows
     * errors.tolerance in stage KEY_CONVERTER or VALUE_CONVERTER. */
    bool typed;

    /* Sink: partitions were assigned to the task and are about to be read
     * (Connect's open()). The plugin may set each one's offset to where
     * reading starts: that offset is authoritative, over the store and the
     * group (a sink that commits its offsets with the data it writes, in
     * the same transaction, is exactly-once so). Returns 0, or
     * TB_RESULT_RETRY or -1 with errstr: the partitions then wait, and are
     * opened again later with backoff. Called again for a partition whose
     * start is resolved again. Optional. */
    int (*open)(void *task, tb_sink_partition_t *partitions, size_t count, char *errstr,
                size_t errstr_size);

    /* Sink: partitions are taken from the task (revoked, lost, or the task
     * stops), after their last flush (Connect's close()): the plugin drops
     * whatever it still holds of them. offset is TB_PLUGIN_NO_OFFSET.
     * Optional. */
    void (*close)(void *task, const tb_sink_partition_t *partitions, size_t count);

    /* Sink: the connector's offsets are being altered or reset over REST
     * while it is STOPPED (Connect's SinkConnector.alterOffsets). A plugin
     * whose open() supplies start offsets changes its own here, since they
     * win over the store's and the group's; the runtime changes those after
     * this returns 0. Returns 0, or -1 with errstr: the request then fails
     * and nothing else is changed. Called on a REST thread, with no task of
     * the connector running; it may take long (a database's connect).
     * Optional: without it the response says that offsets kept outside the
     * framework must be changed by hand. */
    int (*alter_offsets)(const tb_sink_offsets_change_t *change, char *errstr,
                         size_t errstr_size);

    /* Sink: writes records (may buffer them until flush). A plugin that
     * writes in the background (its own thread on the network, so that no
     * pool thread waits for an answer) returns once its writes are started,
     * says with pending_offset what is not durable yet, and calls wake()
     * when one finishes. It returns TB_RESULT_BUSY, taking none of the
     * records, when it holds as much as it may: the runtime then reads no
     * more and calls put() again with the same records after the plugin's
     * wake(), or within a second (the plugin bounds how long it stays
     * busy). count may be 0 (after a wake()). */
    int (*put)(void *task, const tb_sink_record_t *records, size_t count, char *errstr,
               size_t errstr_size);

    /* Sink: makes everything put so far durable; the runtime records offsets
     * only after this returns 0. Optional for sources. */
    int (*flush)(void *task, char *errstr, size_t errstr_size);

    /* Sink: for a plugin whose flush() does not make everything durable (an
     * object store sink fills an object over many flushes), what Connect's
     * preCommit() tells: asked after each flush() that returned 0, for each
     * partition, the offset of the oldest record of it that the plugin took
     * and that is not durable yet, or TB_PLUGIN_NO_OFFSET when every record
     * of it taken is durable. The runtime then records no offset past it.
     * Optional: without it, flush() makes everything durable. */
    int64_t (*pending_offset)(void *task, const char *topic, int32_t partition);

    /* Source: the offsets of offsets (an array of {"partition","offset"},
     * borrowed) were recorded in the store, so everything they cover was
     * acknowledged by Kafka and survives a restart; what Connect's
     * SourceTask.commit() tells. Called on the task's thread, between
     * polls. A source that acknowledges to its system (a replication slot's
     * flush position) does it from here. Optional. */
    void (*commit)(void *task, const json_t *offsets);

    /* Source: Kafka acknowledged a record that carried a source partition
     * and offset (both borrowed for the call): the partition and offset it
     * got in its topic, what Connect's SourceTask.commitRecord(record,
     * metadata) tells. Called on the task's thread, between polls; with
     * exactly once, for each record of a transaction once it committed (an
     * aborted transaction's records never). Optional. */
    void (*record_written)(void *task, const json_t *source_partition,
                           const json_t *source_offset, int32_t partition,
                           int64_t offset);

    /* Releases the task. Never fails. */
    void (*task_stop)(void *task);
} tb_plugin_t;

/* Every plugin built in, NULL-terminated (connectors/plugins.c). */
extern const tb_plugin_t *const tb_plugins[];

/* The plugin whose class name or alias is name; Connect's rules apply: a
 * class name may be given without its package or without its "Connector"
 * suffix. NULL when none. */
const tb_plugin_t *tb_plugin_find(const char *name);

/* "source" or "sink". */
const char *tb_plugin_kind_name(tb_plugin_kind_t kind);

#endif
