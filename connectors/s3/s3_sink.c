/*
 * s3_sink.c - a sink that writes topics to S3 (or a store that speaks its
 * API: store.url) as Confluent's S3 sink does: its keys, its object names
 * and its formats (tb_s3_sink.h lists the files).
 *
 * Objects: the records of a Kafka partition go to one object per encoded
 * partition (with store.kafka.keys and store.kafka.headers, two more
 * beside it for the keys and the headers, committed before it), all of
 * them rotated together (a commit group): after
 * flush.size records, when a record's time is rotate.interval.ms past the
 * group's first, or at the wall clock's rotate.schedule.interval.ms
 * boundary. An object's bytes are uploaded as parts of a multipart upload
 * as soon as s3.part.size of them are buffered, and an object becomes
 * visible only whole: at the completion of its multipart upload, or in one
 * PutObject when it is smaller than a part.
 *
 * Exactly once: the runtime records a partition's offset only up to the
 * first record of its open group (pending_offset), so a restart writes the
 * group again, over the same object names (the partitioners are
 * deterministic, except Wallclock and the scheduled rotation, as in
 * Confluent's). When a partition is opened, the bucket is asked where it
 * resumes (tb_s3_recovery.h), which wins when it is ahead of the store.
 *
 * Failures: every request is retried per s3.part.retries and
 * s3.retry.backoff.ms (tb_s3_client.h); when those are spent, put() or
 * flush() returns TB_RESULT_RETRY and asks to be called again after
 * retry.backoff.ms, without limit, as Connect retries a RetriableException:
 * nothing is lost, and a put() that the runtime gives again skips the
 * records it already took (by offset). A store that refuses (403, 404, an
 * unknown bucket) fails the task, naming the bucket and the key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <curl/curl.h>
#include <zlib.h>

#include "connectors/s3/tb_parquet_pages.h"
#include "connectors/s3/tb_s3_client.h"
#include "connectors/s3/tb_s3_config.h"
#include "connectors/s3/tb_s3_format.h"
#include "connectors/s3/tb_s3_partitioner.h"
#include "connectors/s3/tb_s3_recovery.h"
#include "connectors/s3/tb_s3_sink.h"
#include "connectors/s3/tb_s3_task.h"
#include "core/tb_log.h"
#include "core/tb_metrics.h"
#include "core/tb_time.h"

#define LOGGER "tributary.task"

/* The first multiple of the schedule after now. */
static int64_t schedule_deadline(const tb_s3_task_t *task, int64_t now)
{
    return (now / task->schedule_ms + 1) * task->schedule_ms;
}

/* Takes the views of r (its time is time, rotate_time for
 * rotate.interval.ms) into the objects of tp's group in its encoded
 * partition: 0 (taken, or failed through record_failed), TB_RESULT_RETRY
 * or -1 with errstr. */
static int take_views(tb_s3_task_t *task, tb_s3_tp_t *tp, const tb_sink_record_t *r,
                      const tb_s3_views_t *views, int64_t time, int64_t rotate_time,
                      int64_t now, char *errstr, size_t errstr_size)
{
    char reason[512];
    char *encoded =
        tb_s3_partitioner_encode(task->partitioner, r, time, reason, sizeof(reason));
    int rc = 0;
    if (encoded == NULL) {
        task->ctx->record_failed(task->ctx->runtime, r, reason);
        tp->next = r->offset + 1;
        return 0;
    }
    bool fresh = tb_s3_object_find(tp, r->topic, encoded, TB_S3_VIEW_VALUE) == NULL;
    if (!fresh && !tb_s3_views_fit(task, tp, r->topic, encoded, views)) {
        /* a schema of its own: the objects are rotated first */
        tp->full = true;
        if ((rc = tb_s3_tp_sync(task, tp, errstr, errstr_size)) != 0) {
            goto done; /* the record is not taken */
        }
        fresh = true;
    }
    if (fresh && tb_s3_buffers_full(task, errstr, errstr_size)) {
        rc = -1; /* the record is not taken */
        goto done;
    }
    for (int v = 0; fresh && v < TB_S3_VIEW_COUNT; v++) {
        if (task->writers[v].format != NULL &&
            tb_s3_object_add(task, tp, r->topic, encoded, r->offset, (tb_s3_view_t)v) !=
                0) {
            snprintf(errstr, errstr_size, "out of memory buffering records for s3://%s",
                     task->bucket);
            rc = -1;
            goto done;
        }
    }
    rc = tb_s3_views_write(task, tp, r->topic, encoded, fresh, views, reason,
                           sizeof(reason), errstr, errstr_size);
    if (rc == 1) {
        task->ctx->record_failed(task->ctx->runtime, r, reason);
        tp->next = r->offset + 1;
        rc = 0;
        goto done;
    }
    if (rc != 0) {
        goto done;
    }
    if (tp->records == 0) {
        tp->group_start = r->offset;
        tp->base_time = rotate_time;
        tp->deadline_ms = task->schedule_ms > 0 ? schedule_deadline(task, now) : 0;
    }
    tp->records++;
    tp->last = r->offset;
    tp->next = r->offset + 1;
    tp->full = tp->records >= task->flush_size;
    rc = tb_s3_tp_sync(task, tp, errstr, errstr_size);

done:
    free(encoded);
    return rc;
}

/* Takes one record into its partition's group: 0 (taken, or failed
 * through record_failed), TB_RESULT_RETRY or -1 with errstr. */
static int take(tb_s3_task_t *task, const tb_sink_record_t *r, int64_t now, char *errstr,
                size_t errstr_size)
{
    const char *source = r->original_topic != NULL ? r->original_topic : r->topic;
    tb_s3_tp_t *tp = tb_s3_tp_find(task, source, r->partition);
    if (tp == NULL && (tp = tb_s3_tp_add(task, source, r->partition)) == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    if (r->offset < tp->next) {
        return 0; /* taken by a put() the runtime gives again */
    }
    char reason[512];
    if (r->value == NULL && r->value_data == NULL) {
        if (!task->ignore_nulls) {
            task->ctx->record_failed(task->ctx->runtime, r,
                                     "a null value, which behavior.on.null.values=fail "
                                     "does not write");
        }
        tp->next = r->offset + 1;
        return 0;
    }
    tb_s3_views_t views;
    if (tb_s3_views_of(task, r, &views, reason, sizeof(reason)) != 0) {
        tb_s3_views_free(&views);
        task->ctx->record_failed(task->ctx->runtime, r, reason);
        tp->next = r->offset + 1;
        return 0;
    }
    int64_t time =
        tb_s3_partitioner_time(task->partitioner, r, now, reason, sizeof(reason));
    int64_t rotate_time =
        tb_s3_partitioner_kind(task->partitioner) == TB_S3_PARTITION_TIME ? time
                                                                          : r->timestamp;
    int rc = 0;
    if (tp->records > 0 &&
        ((task->rotate_ms > 0 && rotate_time - tp->base_time >= task->rotate_ms) ||
         (tp->deadline_ms > 0 && now >= tp->deadline_ms))) {
        tp->full = true;
        rc = tb_s3_tp_sync(task, tp, errstr,
                           errstr_size); /* else the record is not taken */
    }
    if (rc == 0 && time < 0) {
        task->ctx->record_failed(task->ctx->runtime, r, reason);
        tp->next = r->offset + 1;
    } else if (rc == 0) {
        rc = take_views(task, tp, r, &views, time, rotate_time, now, errstr, errstr_size);
    }
    tb_s3_views_free(&views);
    return rc;
}

static int s3_sink_put(void *opaque, const tb_sink_record_t *records, size_t count,
                       char *errstr, size_t errstr_size)
{
    tb_s3_task_t *task = opaque;
    /* what failed before goes first; while it fails, nothing is taken */
    int rc = tb_s3_sync_all(task, errstr, errstr_size);
    int64_t now = tb_wall_ms();
    for (size_t i = 0; i < count && rc == 0; i++) {
        rc = take(task, &records[i], now, errstr, errstr_size);
    }
    tb_s3_metrics_update(task);
    return rc;
}

static int s3_sink_flush(void *opaque, char *errstr, size_t errstr_size)
{
    tb_s3_task_t *task = opaque;
    int64_t now = tb_wall_ms();
    for (size_t i = 0; i < task->tp_count; i++) {
        tb_s3_tp_t *tp = &task->tps[i];
        if (tp->records > 0 && tp->deadline_ms > 0 && now >= tp->deadline_ms) {
            tp->full = true;
        }
    }
    int rc = tb_s3_sync_all(task, errstr, errstr_size);
    tb_s3_metrics_update(task);
    return rc;
}

static int64_t s3_sink_pending_offset(void *opaque, const char *topic, int32_t partition)
{
    tb_s3_task_t *task = opaque;
    const tb_s3_tp_t *tp = tb_s3_tp_find(task, topic, partition);
    return tp != NULL && tp->records > 0 ? tp->group_start : TB_PLUGIN_NO_OFFSET;
}

static int s3_sink_open(void *opaque, tb_sink_partition_t *partitions, size_t count,
                        char *errstr, size_t errstr_size)
{
    tb_s3_task_t *task = opaque;
    for (size_t i = 0; i < count; i++) {
        tb_sink_partition_t *p = &partitions[i];
        tb_s3_tp_t *tp = tb_s3_tp_find(task, p->topic, p->partition);
        if (tp != NULL) {
            tb_s3_tp_remove(task, tp); /* opened again: its state starts afresh */
        }
        tb_s3_recovery_t found;
        tb_s3_outcome_t outcome =
            tb_s3_recovery_find(task->client, &task->layout, task->partitioner, p->topic,
                                p->partition, &found, errstr, errstr_size);
        if (outcome != TB_S3_OK) {
            return TB_RESULT_RETRY;
        }
        if (found.foreign) {
            TB_LOG_TASK(TB_LOG_WARN, LOGGER, task->ctx->connector, task->ctx->task,
                        "partition %s-%d: the newest object s3://%s/%s was not written "
                        "by tributary (no offsets in its metadata): the partition "
                        "resumes where the store says",
                        p->topic, (int)p->partition, task->bucket, found.latest);
        }
        if (found.next >= 0 && (p->stored < 0 || found.next > p->stored)) {
            p->offset = found.next;
            TB_LOG_TASK(
                TB_LOG_INFO, LOGGER, task->ctx->connector, task->ctx->task,
                "partition %s-%d resumes at offset %lld from the bucket (s3://%s/%s), "
                "ahead of the store's %lld",
                p->topic, (int)p->partition, (long long)found.next, task->bucket,
                found.latest, (long long)p->stored);
        }
    }
    return 0;
}

static void s3_sink_close(void *opaque, const tb_sink_partition_t *partitions,
                          size_t count)
{
    tb_s3_task_t *task = opaque;
    for (size_t i = 0; i < count; i++) {
        tb_s3_tp_t *tp =
            tb_s3_tp_find(task, partitions[i].topic, partitions[i].partition);
        if (tp != NULL) {
            tb_s3_tp_remove(task, tp);
        }
    }
}

static void s3_sink_task_stop(void *opaque)
{
    tb_s3_task_t *task = opaque;
    if (task == NULL) {
        return;
    }
    while (task->tp_count > 0) {
        tb_s3_tp_remove(task, &task->tps[task->tp_count - 1]);
    }
    free(task->tps);
    tb_s3_client_free(task->client);
    tb_s3_partitioner_free(task->partitioner);
    free(task->bucket);
    free(task->topics_dir);
    free(task->directory_delim);
    free(task->file_delim);
    free(task->separator);
    for (int v = 0; v < TB_S3_VIEW_COUNT; v++) {
        free(task->writers[v].extension);
    }
    tb_schema_decref(task->header_entry);
    tb_schema_decref(task->headers_schema);
    tb_schema_decref(task->headers_struct);
    free(task->scratch.data);
    tb_series_release(task->buffered);
    tb_series_release(task->committed);
    tb_series_release(task->requests);
    free(task);
}

/* How the objects of view are written, in format_class (checked);
 * codec_extension is parquet.codec's. 0, or -1 on no memory. */
static int writer_setup(tb_s3_task_t *task, const tb_s3_settings_t *k, tb_s3_view_t view,
                        const char *format_class, const char *codec_extension)
{
    static const char *const infixes[TB_S3_VIEW_COUNT] = {".keys", ".headers", ""};
    static const char *const whats[TB_S3_VIEW_COUNT] = {
        "its key (" TB_S3_KEY_KEYS_FORMAT "): ",
        "its headers (" TB_S3_KEY_HEADERS_FORMAT "): ", ""};
    tb_s3_writer_t *w = &task->writers[view];
    const char *name = tb_s3_config_simple_name(format_class);
    bool bytes = strcmp(name, "ByteArrayFormat") == 0;
    bool avro = strcmp(name, "AvroFormat") == 0;
    bool parquet = strcmp(name, "ParquetFormat") == 0;
    w->format = bytes     ? &tb_s3_format_bytes
                : avro    ? &tb_s3_format_avro
                : parquet ? &tb_s3_format_parquet
                          : &tb_s3_format_json;
    w->options = bytes     ? (const void *)&task->bytes
                 : avro    ? (const void *)&task->avro
                 : parquet ? (const void *)&task->parquet
                           : NULL;
    w->gzip = !avro && !parquet && strcmp(k->compression, "gzip") == 0;
    w->what = whats[view];
    if (asprintf(&w->extension, "%s%s%s%s", infixes[view], parquet ? codec_extension : "",
                 bytes ? k->extension : w->format->extension, w->gzip ? ".gz" : "") < 0) {
        w->extension = NULL;
        return -1;
    }
    return 0;
}

/* The schemas of the headers' view, as Confluent's: an array of
 * {key, value} strings, in a struct RecordHeaders {headers} for
 * ParquetFormat. 0, or -1 on no memory. */
static int headers_schema_setup(tb_s3_task_t *task)
{
    tb_schema_t *entry = tb_schema_new(TB_TYPE_STRUCT);
    if (entry == NULL ||
        tb_schema_add_field(entry, "key", tb_schema_new(TB_TYPE_STRING)) != 0 ||
        tb_schema_add_field(entry, "value", tb_schema_new(TB_TYPE_STRING)) != 0) {
        tb_schema_decref(entry);
        return -1;
    }
    task->header_entry = entry;
    task->headers_schema = tb_schema_array(tb_schema_incref(entry));
    task->headers_struct = tb_schema_new(TB_TYPE_STRUCT);
    if (task->headers_schema == NULL || task->headers_struct == NULL ||
        tb_schema_set_name(task->headers_struct, "RecordHeaders") != 0) {
        return -1;
    }
    return tb_schema_add_field(task->headers_struct, "headers",
                               tb_schema_incref(task->headers_schema));
}

static int configure(tb_s3_task_t *task, const tb_s3_settings_t *k, char *errstr,
                     size_t errstr_size)
{
    /* the chain: the connector's keys, the environment's key pair, a web
     * identity */
    const char *access = tb_s3_config_nonempty(k->access_key);
    const char *secret = tb_s3_config_nonempty(k->secret_key);
    const char *token = NULL;
    if (access == NULL) {
        access = tb_s3_config_nonempty(getenv("AWS_ACCESS_KEY_ID"));
        secret = getenv("AWS_SECRET_ACCESS_KEY");
        token = getenv("AWS_SESSION_TOKEN");
    }
    tb_s3_web_identity_t identity;
    bool web_identity =
        access == NULL && tb_s3_web_identity_from_env(k->region, &identity);
    long timeout = (long)k->request_timeout;
    tb_s3_client_options_t options = {
        .endpoint = tb_s3_config_nonempty(k->store_url),
        .bucket = k->bucket,
        .region = k->region,
        .path_style = k->path_style,
        .access_key = access,
        .secret_key = secret,
        .session_token = token,
        .web_identity = web_identity ? &identity : NULL,
        .sse_algorithm = tb_s3_config_nonempty(k->sse_algorithm),
        .sse_kms_key_id = tb_s3_config_nonempty(k->sse_kms_key),
        .acl_canned = tb_s3_config_nonempty(k->acl),
        .timeout_ms = timeout,
        .connect_timeout_ms = timeout < 10000 ? timeout : 10000,
        .retries = k->part_retries,
        .backoff_ms = k->retry_backoff,
    };
    const char *separator = k->separator;
    task->avro.deflate = strcmp(k->avro_codec, "deflate") == 0;
    /* parquet-avro's codec names and the extensions they put before .parquet */
    static const struct {
        const char *name;
        tb_parquet_codec_t codec;
        const char *extension;
    } codecs[] = {{"none", TB_PARQUET_UNCOMPRESSED, ""},
                  {"snappy", TB_PARQUET_SNAPPY, ".snappy"},
                  {"gzip", TB_PARQUET_GZIP, ".gz"},
                  {"zstd", TB_PARQUET_ZSTD, ".zstd"}};
    size_t codec = 0;
    while (codec + 1 < sizeof(codecs) / sizeof(codecs[0]) &&
           strcmp(k->parquet_codec, codecs[codec].name) != 0) {
        codec++;
    }
    task->parquet.codec = codecs[codec].codec;
    task->parquet.row_group_bytes = (size_t)k->part_size;
    const char *formats[TB_S3_VIEW_COUNT];
    tb_s3_config_view_formats(k, formats);
    for (int v = 0; v < TB_S3_VIEW_COUNT; v++) {
        if (formats[v] != NULL && writer_setup(task, k, (tb_s3_view_t)v, formats[v],
                                               codecs[codec].extension) != 0) {
            snprintf(errstr, errstr_size, "out of memory starting the S3 sink");
            return -1;
        }
    }
    if (headers_schema_setup(task) != 0) {
        snprintf(errstr, errstr_size, "out of memory starting the S3 sink");
        return -1;
    }
    task->level = k->compression_level;
    task->flush_size = (size_t)k->flush_size;
    task->rotate_ms = k->rotate_interval;
    task->schedule_ms = k->rotate_schedule;
    task->part_size = (size_t)k->part_size;
    task->reserve = (size_t)tb_s3_config_group_reserve(k);
    task->buffer_max = (size_t)k->buffer_max;
    task->ignore_nulls = strcmp(k->null_values, "ignore") == 0;
    task->task_backoff_ms = k->task_backoff;
    task->bucket = strdup(options.bucket);
    task->topics_dir = strdup(k->topics_dir);
    task->directory_delim = strdup(k->directory_delim);
    task->file_delim = strdup(k->file_delim);
    task->separator = strdup(separator != NULL ? separator : "\n");
    if (task->bucket == NULL || task->topics_dir == NULL ||
        task->directory_delim == NULL || task->file_delim == NULL ||
        task->separator == NULL) {
        snprintf(errstr, errstr_size, "out of memory starting the S3 sink");
        return -1;
    }
    task->bytes = (tb_s3_bytes_options_t){.separator = task->separator,
                                          .separator_len = strlen(task->separator)};
    task->layout = (tb_s3_layout_t){.topics_dir = task->topics_dir,
                                    .directory_delim = task->directory_delim,
                                    .file_delim = task->file_delim,
                                    .zero_pad = k->zero_pad};
    task->partitioner = tb_s3_partitioner_new(k, errstr, errstr_size);
    if (task->partitioner == NULL) {
        return -1;
    }
    task->client = tb_s3_client_new(&options, errstr, errstr_size);
    return task->client != NULL ? 0 : -1;
}

static int s3_sink_task_start(const tb_task_context_t *ctx, const json_t *config,
                              void **out, char *errstr, size_t errstr_size)
{
    const tb_config_table_t *tables[] = {&tb_s3_config_table};
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, config, errors);
    tb_s3_task_t *task = NULL;
    int rc = -1;

    tb_s3_settings_t keys;
    tb_s3_config_validate(values, errors);
    if (tb_config_error_count(errors) > 0 ||
        tb_config_fill(&tb_s3_config_table, values, &keys) != 0) {
        tb_config_errors_join(errors, "; ", errstr, errstr_size);
        goto done;
    }
    task = calloc(1, sizeof(*task));
    if (task == NULL) {
        snprintf(errstr, errstr_size, "out of memory starting the S3 sink");
        goto done;
    }
    task->ctx = ctx;
    char id[16];
    snprintf(id, sizeof(id), "%d", ctx->task);
    const char *labels[] = {ctx->connector, id};
    task->buffered = tb_metrics_series(&tb_s3_buffered_bytes, labels);
    task->committed = tb_metrics_series(&tb_s3_objects_total, labels);
    task->requests = tb_metrics_series(&tb_s3_requests_total, labels);
    if (configure(task, &keys, errstr, errstr_size) != 0) {
        goto done;
    }
    *out = task;
    task = NULL;
    rc = 0;

done:
    s3_sink_task_stop(task);
    json_decref(values);
    json_decref(errors);
    return rc;
}

static const char *const s3_sink_aliases[] = {"S3Sink", "S3SinkConnector", NULL};

const tb_plugin_t tb_s3_sink_plugin = {
    .class_name = "io.confluent.connect.s3.S3SinkConnector",
    .aliases = s3_sink_aliases,
    .kind = TB_PLUGIN_SINK,
    .version = "0.1.0",
    .config = &tb_s3_config_table,
    .validate = tb_s3_config_validate,
    .refused_keys = tb_s3_config_refused_keys,
    .task_configs = tb_s3_config_task_configs,
    .task_start = s3_sink_task_start,
    .typed = true,
    .open = s3_sink_open,
    .close = s3_sink_close,
    .put = s3_sink_put,
    .flush = s3_sink_flush,
    .pending_offset = s3_sink_pending_offset,
    .reads_headers = true,
    .task_stop = s3_sink_task_stop,
};
