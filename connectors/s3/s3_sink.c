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
#include "core/tb_log.h"
#include "core/tb_metrics.h"
#include "core/tb_time.h"

#define LOGGER "tributary.task"

/* ---- metrics ---- */

static const char *const metric_labels[] = {"connector", "task", NULL};
static const tb_metric_def_t buffered_bytes = {
    .name = "tributary_s3_buffered_bytes",
    .type = TB_METRIC_GAUGE,
    .help = "Bytes an S3 sink task holds of objects not uploaded yet: at most about "
            "s3.part.size for each object it is writing.",
    .labels = metric_labels};
static const tb_metric_def_t objects_total = {
    .name = "tributary_s3_objects_total",
    .type = TB_METRIC_COUNTER,
    .help = "Objects an S3 sink task made visible in its bucket.",
    .labels = metric_labels};
static const tb_metric_def_t requests_total = {
    .name = "tributary_s3_requests_total",
    .type = TB_METRIC_COUNTER,
    .help = "Requests an S3 sink task sent to its store, retries included.",
    .labels = metric_labels};

/* ---- the task's state ---- */

/* How the objects of a view are written; format NULL: the view is not
 * stored. */
typedef struct {
    const tb_s3_format_t *format;
    const void *options; /* the task's bytes, avro, parquet, or NULL */
    char *extension;     /* ".keys" or ".headers" before it, ".gz" after */
    bool gzip;           /* s3.compression.type, for JsonFormat and ByteArrayFormat */
    const char *what;    /* how a failure names the view: "" for the values */
} s3_writer_t;

/* An object being written: one view of one encoded partition of a commit
 * group. */
typedef struct {
    tb_s3_view_t view;
    char *topic; /* as routed: the name's */
    char *encoded;
    char *key;
    int64_t start;
    tb_buf_t buf; /* bytes not uploaded yet (compressed, with gzip) */
    z_stream z;
    bool z_open;
    void *state;   /* the format's (tb_s3_format_t.open), NULL: none */
    bool finished; /* the format's and the compressor's ends are in buf */
    bool done;     /* visible in the bucket */
    char *upload_id;
    char **etags;
    int parts;
} s3_object_t;

/* A Kafka partition of the task and its commit group. */
typedef struct {
    char *topic; /* as read from Kafka */
    int32_t partition;
    s3_object_t *objects; /* in the order they began: by start offset */
    size_t count;
    size_t records;      /* in the group */
    int64_t group_start; /* the group's first offset */
    int64_t last;        /* the group's last offset */
    int64_t next;        /* after the last record taken; -1: none yet */
    int64_t base_time;   /* the group's first record's time (rotate.interval.ms) */
    int64_t deadline_ms; /* wall clock (rotate.schedule.interval.ms); 0: none */
    bool full;           /* the group is to be committed before more is taken */
} s3_tp_t;

typedef struct {
    const tb_task_context_t *ctx;
    tb_s3_client_t *client;
    tb_s3_partitioner_t *partitioner;
    char *bucket;
    char *topics_dir;
    char *directory_delim;
    char *file_delim;
    tb_s3_layout_t layout;
    s3_writer_t writers[TB_S3_VIEW_COUNT];
    tb_s3_bytes_options_t bytes;
    tb_s3_avro_options_t avro;
    tb_s3_parquet_options_t parquet;
    char *separator;
    tb_schema_t *header_entry;   /* {key, value} of STRINGs, Confluent's */
    tb_schema_t *headers_schema; /* an ARRAY of them */
    tb_schema_t *headers_struct; /* RecordHeaders {headers}, for ParquetFormat */
    int level;
    size_t flush_size;
    int64_t rotate_ms;
    int64_t schedule_ms;
    size_t part_size;
    size_t reserve; /* per encoded partition being written (tb_s3_config_group_reserve) */
    size_t buffer_max; /* s3.buffer.max.bytes */
    bool ignore_nulls;
    int64_t task_backoff_ms;
    s3_tp_t *tps;
    size_t tp_count;
    tb_buf_t scratch;       /* one record's bytes */
    tb_series_t *buffered;  /* tributary_s3_buffered_bytes */
    tb_series_t *committed; /* tributary_s3_objects_total */
    tb_series_t *requests;  /* tributary_s3_requests_total */
    uint64_t requests_seen; /* what requests was told so far */
} s3_task_t;

static void object_clear(const s3_task_t *task, s3_object_t *o)
{
    if (o->upload_id != NULL && !o->done) {
        tb_s3_multipart_abort(task->client, o->key, o->upload_id);
    }
    if (o->state != NULL) {
        task->writers[o->view].format->free(o->state);
    }
    if (o->z_open) {
        deflateEnd(&o->z);
    }
    for (int i = 0; i < o->parts; i++) {
        free(o->etags[i]);
    }
    free(o->etags);
    free(o->upload_id);
    free(o->buf.data);
    free(o->topic);
    free(o->encoded);
    free(o->key);
    memset(o, 0, sizeof(*o));
}

/* Drops tp's group (aborting its multipart uploads). */
static void group_clear(s3_task_t *task, s3_tp_t *tp)
{
    for (size_t i = 0; i < tp->count; i++) {
        object_clear(task, &tp->objects[i]);
    }
    free(tp->objects);
    tp->objects = NULL;
    tp->count = 0;
    tp->records = 0;
    tp->group_start = -1;
    tp->full = false;
    tp->deadline_ms = 0;
}

static s3_tp_t *tp_find(s3_task_t *task, const char *topic, int32_t partition)
{
    for (size_t i = 0; i < task->tp_count; i++) {
        if (task->tps[i].partition == partition &&
            strcmp(task->tps[i].topic, topic) == 0) {
            return &task->tps[i];
        }
    }
    return NULL;
}

static s3_tp_t *tp_add(s3_task_t *task, const char *topic, int32_t partition)
{
    s3_tp_t *grown = realloc(task->tps, (task->tp_count + 1) * sizeof(*grown));
    if (grown == NULL) {
        return NULL;
    }
    task->tps = grown;
    s3_tp_t *tp = &task->tps[task->tp_count];
    *tp = (s3_tp_t){.partition = partition, .group_start = -1, .next = -1};
    if ((tp->topic = strdup(topic)) == NULL) {
        return NULL;
    }
    task->tp_count++;
    return tp;
}

static void tp_remove(s3_task_t *task, s3_tp_t *tp)
{
    group_clear(task, tp);
    free(tp->topic);
    size_t i = (size_t)(tp - task->tps);
    memmove(&task->tps[i], &task->tps[i + 1], (task->tp_count - i - 1) * sizeof(*tp));
    task->tp_count--;
}

/* ---- writing objects ---- */

/* Appends data to o's buffer, through gzip when the task compresses.
 * Returns 0, or -1 on no memory. */
static int object_append(s3_task_t *task, s3_object_t *o, const void *data, size_t len,
                         bool finish)
{
    if (!task->writers[o->view].gzip) {
        tb_buf_append(&o->buf, data, len);
        return o->buf.failed ? -1 : 0;
    }
    if (!o->z_open) {
        if (deflateInit2(&o->z, task->level, Z_DEFLATED, 15 + 16, 8,
                         Z_DEFAULT_STRATEGY) != Z_OK) {
            return -1;
        }
        o->z_open = true;
    }
    o->z.next_in = (Bytef *)data;
    o->z.avail_in = (uInt)len;
    int rc;
    do {
        if (!tb_buf_reserve(&o->buf, 65536)) {
            return -1;
        }
        o->z.next_out = (Bytef *)o->buf.data + o->buf.len;
        o->z.avail_out = (uInt)(o->buf.cap - o->buf.len - 1);
        size_t room = o->z.avail_out;
        rc = deflate(&o->z, finish ? Z_FINISH : Z_NO_FLUSH);
        o->buf.len += room - o->z.avail_out;
    } while (rc == Z_OK && (o->z.avail_in > 0 || o->z.avail_out == 0 || finish));
    return rc == Z_OK || rc == Z_BUF_ERROR || rc == Z_STREAM_END ? 0 : -1;
}

/* The outcome of a request as put()'s or flush()'s result: a store that
 * refuses fails the task; otherwise the task asks to be called again. */
static int result_of(s3_task_t *task, tb_s3_outcome_t outcome)
{
    if (outcome == TB_S3_OK) {
        return 0;
    }
    if (outcome == TB_S3_REFUSED) {
        return -1;
    }
    task->ctx->retry_after(task->ctx->runtime, task->task_backoff_ms);
    return TB_RESULT_RETRY;
}

/* The metadata of o: its group's start, and for the group's last object
 * the offset after the group. */
static size_t meta_of(const s3_tp_t *tp, bool last, tb_s3_meta_t *meta)
{
    meta[0].name = TB_S3_META_GROUP_START;
    snprintf(meta[0].value, sizeof(meta[0].value), "%lld", (long long)tp->group_start);
    if (!last) {
        return 1;
    }
    meta[1].name = TB_S3_META_NEXT;
    snprintf(meta[1].value, sizeof(meta[1].value), "%lld", (long long)(tp->last + 1));
    return 2;
}

/* Uploads o's buffer as its next part, starting its multipart upload when
 * none is. */
static int upload_part(s3_task_t *task, const s3_tp_t *tp, s3_object_t *o, char *errstr,
                       size_t errstr_size)
{
    tb_s3_meta_t meta[2];
    tb_s3_outcome_t outcome = TB_S3_OK;
    if (o->upload_id == NULL) {
        size_t n = meta_of(tp, false, meta);
        outcome = tb_s3_multipart_start(task->client, o->key, meta, n, &o->upload_id,
                                        errstr, errstr_size);
    }
    char **etags = outcome == TB_S3_OK
                       ? realloc(o->etags, (size_t)(o->parts + 1) * sizeof(*etags))
                       : o->etags;
    if (etags == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    o->etags = etags;
    if (outcome == TB_S3_OK) {
        outcome = tb_s3_multipart_part(task->client, o->key, o->upload_id, o->parts + 1,
                                       o->buf.data, o->buf.len, &o->etags[o->parts],
                                       errstr, errstr_size);
    }
    if (outcome == TB_S3_OK) {
        o->parts++;
        o->buf.len = 0;
    }
    return result_of(task, outcome);
}

/* Makes o visible, whole: the rest as its last part and the upload
 * completed, or all of it in one PutObject. */
static int object_commit(s3_task_t *task, const s3_tp_t *tp, s3_object_t *o, bool last,
                         char *errstr, size_t errstr_size)
{
    if (!o->finished) {
        const tb_s3_format_t *format = task->writers[o->view].format;
        task->scratch.len = 0;
        if ((format->close != NULL && format->close(o->state, &task->scratch) != 0) ||
            object_append(task, o, task->scratch.data, task->scratch.len, true) != 0) {
            snprintf(errstr, errstr_size, "out of memory finishing s3://%s/%s",
                     task->bucket, o->key);
            return -1;
        }
        o->finished = true;
    }
    tb_s3_meta_t meta[2];
    size_t n = meta_of(tp, last, meta);
    if (o->upload_id == NULL) {
        tb_s3_outcome_t outcome = tb_s3_put_object(
            task->client, o->key, o->buf.data, o->buf.len, meta, n, errstr, errstr_size);
        o->done = outcome == TB_S3_OK;
        return result_of(task, outcome);
    }
    if (o->buf.len > 0) {
        int rc = upload_part(task, tp, o, errstr, errstr_size);
        if (rc != 0) {
            return rc;
        }
    }
    tb_s3_outcome_t outcome = tb_s3_multipart_complete(
        task->client, o->key, o->upload_id, o->etags, o->parts, errstr, errstr_size);
    o->done = outcome == TB_S3_OK;
    return result_of(task, outcome);
}

/* Uploads the full parts of tp's objects, and commits its group when it is
 * full: object by object in the order of their start offsets, so that the
 * last one written is the one recovery looks at. */
static int tp_sync(s3_task_t *task, s3_tp_t *tp, char *errstr, size_t errstr_size)
{
    for (size_t i = 0; i < tp->count; i++) {
        s3_object_t *o = &tp->objects[i];
        if (!o->done && o->buf.len >= task->part_size) {
            int rc = upload_part(task, tp, o, errstr, errstr_size);
            if (rc != 0) {
                return rc;
            }
        }
    }
    if (!tp->full) {
        return 0;
    }
    for (size_t i = 0; i < tp->count; i++) {
        if (!tp->objects[i].done) {
            int rc = object_commit(task, tp, &tp->objects[i], i + 1 == tp->count, errstr,
                                   errstr_size);
            if (rc != 0) {
                return rc;
            }
        }
    }
    tb_series_add(task->committed, (double)tp->count);
    group_clear(task, tp);
    return 0;
}

/* The gauge of buffered bytes and the count of requests, after a put or a
 * flush. */
static void metrics_update(s3_task_t *task)
{
    size_t bytes = 0;
    for (size_t i = 0; i < task->tp_count; i++) {
        for (size_t j = 0; j < task->tps[i].count; j++) {
            const s3_object_t *o = &task->tps[i].objects[j];
            bytes += o->buf.cap;
            const tb_s3_format_t *format = task->writers[o->view].format;
            if (o->state != NULL && format->held != NULL) {
                bytes += format->held(o->state);
            }
        }
    }
    tb_series_set(task->buffered, (double)bytes);
    uint64_t requests = tb_s3_client_requests(task->client);
    tb_series_add(task->requests, (double)(requests - task->requests_seen));
    task->requests_seen = requests;
}

static int sync_all(s3_task_t *task, char *errstr, size_t errstr_size)
{
    for (size_t i = 0; i < task->tp_count; i++) {
        int rc = tp_sync(task, &task->tps[i], errstr, errstr_size);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* The object of view of tp's group for records of topic (as routed) in
 * encoded, or NULL. */
static s3_object_t *object_find(s3_tp_t *tp, const char *topic, const char *encoded,
                                tb_s3_view_t view)
{
    for (size_t i = 0; i < tp->count; i++) {
        s3_object_t *o = &tp->objects[i];
        if (o->view == view && strcmp(o->encoded, encoded) == 0 &&
            strcmp(o->topic, topic) == 0) {
            return o;
        }
    }
    return NULL;
}

/* A new object of view of tp's group, begun at offset. -1 on no memory. */
static int object_add(s3_task_t *task, s3_tp_t *tp, const char *topic,
                      const char *encoded, int64_t offset, tb_s3_view_t view)
{
    s3_object_t *grown = realloc(tp->objects, (tp->count + 1) * sizeof(*grown));
    if (grown == NULL) {
        return -1;
    }
    tp->objects = grown;
    s3_object_t *o = &tp->objects[tp->count];
    *o = (s3_object_t){.view = view, .start = offset};
    o->topic = strdup(topic);
    o->encoded = strdup(encoded);
    o->key = tb_s3_object_key(&task->layout, topic, encoded, tp->partition, offset,
                              task->writers[view].extension);
    if (o->topic == NULL || o->encoded == NULL || o->key == NULL) {
        object_clear(task, o);
        return -1;
    }
    tp->count++;
    return 0;
}

/* Drops the last count objects of tp's group, begun for a record that
 * could not be written. */
static void objects_drop_last(s3_task_t *task, s3_tp_t *tp, size_t count)
{
    while (count-- > 0) {
        object_clear(task, &tp->objects[--tp->count]);
    }
}

/* Appends record (as o's view sees it) to o, begun for it when fresh,
 * through the format: 0, or -1 with reason. */
static int object_write(s3_task_t *task, s3_object_t *o, bool fresh,
                        const tb_sink_record_t *r, char *reason, size_t reason_size)
{
    const s3_writer_t *w = &task->writers[o->view];
    task->scratch.len = 0;
    int rc = fresh && w->format->open != NULL
                 ? w->format->open(w->options, r, o->key, &o->state, &task->scratch,
                                   reason, reason_size)
                 : 0;
    return rc == 0 ? w->format->write(w->options, o->state, r, &task->scratch, reason,
                                      reason_size)
                   : rc;
}

/* Whether one more encoded partition's objects would set aside more than
 * s3.buffer.max.bytes (errstr says so). */
static bool buffers_full(const s3_task_t *task, char *errstr, size_t errstr_size)
{
    size_t open = 1;
    for (size_t i = 0; i < task->tp_count; i++) {
        for (size_t j = 0; j < task->tps[i].count; j++) {
            open += task->tps[i].objects[j].view == TB_S3_VIEW_VALUE;
        }
    }
    if (open * task->reserve <= task->buffer_max) {
        return false;
    }
    snprintf(errstr, errstr_size,
             "s3://%s: writing %zu objects at once would set aside %zu bytes, "
             "over " TB_S3_KEY_BUFFER_MAX " %zu (%zu bytes each: " TB_S3_KEY_PART_SIZE
             ", twice it with ParquetFormat, and as much for its keys and headers "
             "objects): raise " TB_S3_KEY_BUFFER_MAX ", lower " TB_S3_KEY_PART_SIZE
             ", or rotate objects sooner or into fewer directories (flush.size, "
             "rotate.interval.ms, partitioner.class)",
             task->bucket, open, open * task->reserve, task->buffer_max, task->reserve);
    return true;
}

/* ---- the views of a record ---- */

/* A record as each stored view sees it: the view's data as the value of a
 * record, so that a format writes it as it writes values, with what was
 * made for it (views_free). */
typedef struct {
    tb_sink_record_t records[TB_S3_VIEW_COUNT];
    tb_value_t *values[TB_S3_VIEW_COUNT];
    tb_schema_t *schemas[TB_S3_VIEW_COUNT];
} s3_views_t;

static void views_free(s3_views_t *views)
{
    for (int v = 0; v < TB_S3_VIEW_COUNT; v++) {
        tb_value_free(views->values[v]);
        tb_schema_decref(views->schemas[v]);
    }
}

/* The headers of r as Confluent's header view has them: an array of
 * {key, value}, each value the header's text. NULL with reason. */
static tb_value_t *headers_value(const s3_task_t *task, const tb_sink_record_t *r,
                                 char *reason, size_t reason_size)
{
    tb_value_t *list = tb_value_array();
    for (size_t i = 0; list != NULL && i < r->header_count; i++) {
        const tb_header_t *h = &r->headers[i];
        if (h->value == NULL) {
            snprintf(reason, reason_size,
                     "its header %s has a null value, which " TB_S3_KEY_STORE_HEADERS
                     "=true cannot write",
                     h->name);
            tb_value_free(list);
            return NULL;
        }
        tb_value_t *entry = tb_value_struct(task->header_entry);
        if (entry == NULL ||
            tb_value_struct_set(entry, "key",
                                tb_value_string(h->name, strlen(h->name))) != 0 ||
            tb_value_struct_set(entry, "value",
                                tb_value_string(h->value, h->value_len)) != 0 ||
            tb_value_array_append(list, entry) != 0) {
            tb_value_free(list);
            list = NULL;
        }
    }
    if (list == NULL) {
        snprintf(reason, reason_size, "out of memory");
    }
    return list;
}

/* A struct of one field, name, holding data of schema (ParquetFormat
 * writes structs: Confluent's envelope of a key or the headers). 0, or -1
 * on no memory. */
static int envelope(const char *struct_name, const char *name, tb_schema_t *schema,
                    const tb_value_t *data, tb_schema_t **out_schema,
                    tb_value_t **out_value)
{
    tb_schema_t *st = tb_schema_new(TB_TYPE_STRUCT);
    if (st == NULL || tb_schema_set_name(st, struct_name) != 0 ||
        tb_schema_add_field(st, name, tb_schema_incref(schema)) != 0) {
        tb_schema_decref(st);
        return -1;
    }
    *out_schema = st;
    *out_value = tb_value_struct(st);
    tb_value_t *copy = data != NULL ? tb_value_copy(data) : NULL;
    return *out_value != NULL && (data == NULL || copy != NULL) &&
                   tb_value_struct_set(*out_value, name, copy) == 0
               ? 0
               : -1;
}

/* Fills views with r as each stored view sees it: 0, or -1 with reason
 * when r cannot be stored (a null key or no headers, as Confluent's
 * refuses them). */
static int views_of(const s3_task_t *task, const tb_sink_record_t *r, s3_views_t *views,
                    char *reason, size_t reason_size)
{
    *views = (s3_views_t){0};
    views->records[TB_S3_VIEW_VALUE] = *r;
    if (task->writers[TB_S3_VIEW_KEYS].format != NULL) {
        if (r->key == NULL && r->key_data == NULL) {
            snprintf(reason, reason_size,
                     "a null key, which " TB_S3_KEY_STORE_KEYS "=true cannot write");
            return -1;
        }
        tb_sink_record_t *k = &views->records[TB_S3_VIEW_KEYS];
        *k = *r;
        k->value = r->key;
        k->value_len = r->key_len;
        k->value_schema = r->key_schema;
        k->value_data = r->key_data;
        if (task->writers[TB_S3_VIEW_KEYS].format == &tb_s3_format_parquet) {
            if (r->key_schema == NULL) {
                snprintf(reason, reason_size,
                         "a key without a schema, which " TB_S3_KEY_KEYS_FORMAT
                         " ParquetFormat cannot write");
                return -1;
            }
            if (envelope("RecordKey", "key", (tb_schema_t *)r->key_schema, r->key_data,
                         &views->schemas[TB_S3_VIEW_KEYS],
                         &views->values[TB_S3_VIEW_KEYS]) != 0) {
                snprintf(reason, reason_size, "out of memory");
                return -1;
            }
            k->value_schema = views->schemas[TB_S3_VIEW_KEYS];
            k->value_data = views->values[TB_S3_VIEW_KEYS];
        }
    }
    if (task->writers[TB_S3_VIEW_HEADERS].format != NULL) {
        if (r->header_count == 0) {
            snprintf(reason, reason_size,
                     "no headers, which " TB_S3_KEY_STORE_HEADERS "=true cannot write");
            return -1;
        }
        tb_value_t *list = headers_value(task, r, reason, reason_size);
        if (list == NULL) {
            return -1;
        }
        tb_sink_record_t *h = &views->records[TB_S3_VIEW_HEADERS];
        *h = *r;
        h->value = NULL;
        h->value_len = 0;
        h->value_schema = task->headers_schema;
        h->value_data = views->values[TB_S3_VIEW_HEADERS] = list;
        if (task->writers[TB_S3_VIEW_HEADERS].format == &tb_s3_format_parquet) {
            views->values[TB_S3_VIEW_HEADERS] = tb_value_struct(task->headers_struct);
            if (views->values[TB_S3_VIEW_HEADERS] == NULL ||
                tb_value_struct_set(views->values[TB_S3_VIEW_HEADERS], "headers", list) !=
                    0) {
                snprintf(reason, reason_size, "out of memory");
                return -1;
            }
            h->value_schema = task->headers_struct;
            h->value_data = views->values[TB_S3_VIEW_HEADERS];
        }
    }
    return 0;
}

/* Whether every view of r fits the objects of tp's group in encoded (a
 * format with a schema per object: AvroFormat, ParquetFormat). */
static bool views_fit(s3_task_t *task, s3_tp_t *tp, const char *topic,
                      const char *encoded, const s3_views_t *views)
{
    for (int v = 0; v < TB_S3_VIEW_COUNT; v++) {
        const tb_s3_format_t *format = task->writers[v].format;
        s3_object_t *o = format != NULL && format->fits != NULL
                             ? object_find(tp, topic, encoded, (tb_s3_view_t)v)
                             : NULL;
        if (o != NULL && !format->fits(o->state, &views->records[v])) {
            return false;
        }
    }
    return true;
}

/* Writes every view of r to its object of tp's group in encoded (begun for
 * it when fresh), the keys and headers first: 0, 1 when r cannot be
 * written (reason says why; nothing of it stays, the fresh objects
 * dropped), or -1 with errstr when a view failed after another took r (the
 * group cannot be committed: the task fails, and writes it again). */
static int views_write(s3_task_t *task, s3_tp_t *tp, const char *topic,
                       const char *encoded, bool fresh, const s3_views_t *views,
                       char *reason, size_t reason_size, char *errstr, size_t errstr_size)
{
    size_t stored = 0;
    for (int v = 0; v < TB_S3_VIEW_COUNT; v++) {
        stored += task->writers[v].format != NULL;
    }
    /* a view that would fail after another took the record is found first */
    for (int v = 0; !fresh && stored > 1 && v < TB_S3_VIEW_COUNT; v++) {
        const tb_sink_record_t *view = &views->records[v];
        if (task->writers[v].format != NULL && view->value_schema != NULL &&
            tb_value_validate(view->value_schema, view->value_data, reason,
                              reason_size) != 0) {
            return 1;
        }
    }
    size_t taken = 0;
    for (int v = 0; v < TB_S3_VIEW_COUNT; v++) {
        const s3_writer_t *w = &task->writers[v];
        if (w->format == NULL) {
            continue;
        }
        s3_object_t *o = object_find(tp, topic, encoded, (tb_s3_view_t)v);
        char why[400];
        if (object_write(task, o, fresh, &views->records[v], why, sizeof(why)) != 0) {
            snprintf(reason, reason_size, "%s%s", w->what, why);
            if (fresh) {
                objects_drop_last(task, tp, stored);
            }
            if (fresh || taken == 0) {
                return 1;
            }
            snprintf(errstr, errstr_size,
                     "s3://%s/%s: record %s-%d at offset %lld was written to the "
                     "group's other objects but cannot be to this one: %s",
                     task->bucket, o->key, views->records[TB_S3_VIEW_VALUE].topic,
                     (int)tp->partition,
                     (long long)views->records[TB_S3_VIEW_VALUE].offset, reason);
            return -1;
        }
        if (object_append(task, o, task->scratch.data, task->scratch.len, false) != 0) {
            snprintf(errstr, errstr_size, "out of memory buffering records for s3://%s",
                     task->bucket);
            return -1;
        }
        taken++;
    }
    return 0;
}

/* The first multiple of the schedule after now. */
static int64_t schedule_deadline(const s3_task_t *task, int64_t now)
{
    return (now / task->schedule_ms + 1) * task->schedule_ms;
}

/* Takes the views of r (its time is time, rotate_time for
 * rotate.interval.ms) into the objects of tp's group in its encoded
 * partition: 0 (taken, or failed through record_failed), TB_RESULT_RETRY
 * or -1 with errstr. */
static int take_views(s3_task_t *task, s3_tp_t *tp, const tb_sink_record_t *r,
                      const s3_views_t *views, int64_t time, int64_t rotate_time,
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
    bool fresh = object_find(tp, r->topic, encoded, TB_S3_VIEW_VALUE) == NULL;
    if (!fresh && !views_fit(task, tp, r->topic, encoded, views)) {
        /* a schema of its own: the objects are rotated first */
        tp->full = true;
        if ((rc = tp_sync(task, tp, errstr, errstr_size)) != 0) {
            goto done; /* the record is not taken */
        }
        fresh = true;
    }
    if (fresh && buffers_full(task, errstr, errstr_size)) {
        rc = -1; /* the record is not taken */
        goto done;
    }
    for (int v = 0; fresh && v < TB_S3_VIEW_COUNT; v++) {
        if (task->writers[v].format != NULL &&
            object_add(task, tp, r->topic, encoded, r->offset, (tb_s3_view_t)v) != 0) {
            snprintf(errstr, errstr_size, "out of memory buffering records for s3://%s",
                     task->bucket);
            rc = -1;
            goto done;
        }
    }
    rc = views_write(task, tp, r->topic, encoded, fresh, views, reason, sizeof(reason),
                     errstr, errstr_size);
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
    rc = tp_sync(task, tp, errstr, errstr_size);

done:
    free(encoded);
    return rc;
}

/* Takes one record into its partition's group: 0 (taken, or failed
 * through record_failed), TB_RESULT_RETRY or -1 with errstr. */
static int take(s3_task_t *task, const tb_sink_record_t *r, int64_t now, char *errstr,
                size_t errstr_size)
{
    const char *source = r->original_topic != NULL ? r->original_topic : r->topic;
    s3_tp_t *tp = tp_find(task, source, r->partition);
    if (tp == NULL && (tp = tp_add(task, source, r->partition)) == NULL) {
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
    s3_views_t views;
    if (views_of(task, r, &views, reason, sizeof(reason)) != 0) {
        views_free(&views);
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
        rc = tp_sync(task, tp, errstr, errstr_size); /* else the record is not taken */
    }
    if (rc == 0 && time < 0) {
        task->ctx->record_failed(task->ctx->runtime, r, reason);
        tp->next = r->offset + 1;
    } else if (rc == 0) {
        rc = take_views(task, tp, r, &views, time, rotate_time, now, errstr, errstr_size);
    }
    views_free(&views);
    return rc;
}

static int s3_sink_put(void *opaque, const tb_sink_record_t *records, size_t count,
                       char *errstr, size_t errstr_size)
{
    s3_task_t *task = opaque;
    /* what failed before goes first; while it fails, nothing is taken */
    int rc = sync_all(task, errstr, errstr_size);
    int64_t now = tb_wall_ms();
    for (size_t i = 0; i < count && rc == 0; i++) {
        rc = take(task, &records[i], now, errstr, errstr_size);
    }
    metrics_update(task);
    return rc;
}

static int s3_sink_flush(void *opaque, char *errstr, size_t errstr_size)
{
    s3_task_t *task = opaque;
    int64_t now = tb_wall_ms();
    for (size_t i = 0; i < task->tp_count; i++) {
        s3_tp_t *tp = &task->tps[i];
        if (tp->records > 0 && tp->deadline_ms > 0 && now >= tp->deadline_ms) {
            tp->full = true;
        }
    }
    int rc = sync_all(task, errstr, errstr_size);
    metrics_update(task);
    return rc;
}

static int64_t s3_sink_pending_offset(void *opaque, const char *topic, int32_t partition)
{
    s3_task_t *task = opaque;
    const s3_tp_t *tp = tp_find(task, topic, partition);
    return tp != NULL && tp->records > 0 ? tp->group_start : TB_PLUGIN_NO_OFFSET;
}

static int s3_sink_open(void *opaque, tb_sink_partition_t *partitions, size_t count,
                        char *errstr, size_t errstr_size)
{
    s3_task_t *task = opaque;
    for (size_t i = 0; i < count; i++) {
        tb_sink_partition_t *p = &partitions[i];
        s3_tp_t *tp = tp_find(task, p->topic, p->partition);
        if (tp != NULL) {
            tp_remove(task, tp); /* opened again: its state starts afresh */
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
    s3_task_t *task = opaque;
    for (size_t i = 0; i < count; i++) {
        s3_tp_t *tp = tp_find(task, partitions[i].topic, partitions[i].partition);
        if (tp != NULL) {
            tp_remove(task, tp);
        }
    }
}

static void s3_sink_task_stop(void *opaque)
{
    s3_task_t *task = opaque;
    if (task == NULL) {
        return;
    }
    while (task->tp_count > 0) {
        tp_remove(task, &task->tps[task->tp_count - 1]);
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
static int writer_setup(s3_task_t *task, const tb_s3_settings_t *k, tb_s3_view_t view,
                        const char *format_class, const char *codec_extension)
{
    static const char *const infixes[TB_S3_VIEW_COUNT] = {".keys", ".headers", ""};
    static const char *const whats[TB_S3_VIEW_COUNT] = {
        "its key (" TB_S3_KEY_KEYS_FORMAT "): ",
        "its headers (" TB_S3_KEY_HEADERS_FORMAT "): ", ""};
    s3_writer_t *w = &task->writers[view];
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
static int headers_schema_setup(s3_task_t *task)
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

static int configure(s3_task_t *task, const tb_s3_settings_t *k, char *errstr,
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
    s3_task_t *task = NULL;
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
    task->buffered = tb_metrics_series(&buffered_bytes, labels);
    task->committed = tb_metrics_series(&objects_total, labels);
    task->requests = tb_metrics_series(&requests_total, labels);
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
