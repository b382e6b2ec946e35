/*
 * s3_upload.c - an S3 sink task's objects uploaded as parts, committed, and the
 * metrics of it (tb_s3_task.h).
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

static const char *const metric_labels[] = {"connector", "task", NULL};
const tb_metric_def_t tb_s3_buffered_bytes = {
    .name = "tributary_s3_buffered_bytes",
    .type = TB_METRIC_GAUGE,
    .help = "Bytes an S3 sink task holds of objects not uploaded yet: at most about "
            "s3.part.size for each object it is writing.",
    .labels = metric_labels};
const tb_metric_def_t tb_s3_objects_total = {
    .name = "tributary_s3_objects_total",
    .type = TB_METRIC_COUNTER,
    .help = "Objects an S3 sink task made visible in its bucket.",
    .labels = metric_labels};
const tb_metric_def_t tb_s3_requests_total = {
    .name = "tributary_s3_requests_total",
    .type = TB_METRIC_COUNTER,
    .help = "Requests an S3 sink task sent to its store, retries included.",
    .labels = metric_labels};

int tb_s3_object_append(tb_s3_task_t *task, tb_s3_object_t *o, const void *data,
                        size_t len, bool finish)
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
static int result_of(tb_s3_task_t *task, tb_s3_outcome_t outcome)
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
static size_t meta_of(const tb_s3_tp_t *tp, bool last, tb_s3_meta_t *meta)
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
static int upload_part(tb_s3_task_t *task, const tb_s3_tp_t *tp, tb_s3_object_t *o,
                       char *errstr, size_t errstr_size)
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
static int object_commit(tb_s3_task_t *task, const tb_s3_tp_t *tp, tb_s3_object_t *o,
                         bool last, char *errstr, size_t errstr_size)
{
    if (!o->finished) {
        const tb_s3_format_t *format = task->writers[o->view].format;
        task->scratch.len = 0;
        if ((format->close != NULL && format->close(o->state, &task->scratch) != 0) ||
            tb_s3_object_append(task, o, task->scratch.data, task->scratch.len, true) !=
                0) {
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

int tb_s3_tp_sync(tb_s3_task_t *task, tb_s3_tp_t *tp, char *errstr, size_t errstr_size)
{
    for (size_t i = 0; i < tp->count; i++) {
        tb_s3_object_t *o = &tp->objects[i];
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
    tb_s3_group_clear(task, tp);
    return 0;
}

void tb_s3_metrics_update(tb_s3_task_t *task)
{
    size_t bytes = 0;
    for (size_t i = 0; i < task->tp_count; i++) {
        for (size_t j = 0; j < task->tps[i].count; j++) {
            const tb_s3_object_t *o = &task->tps[i].objects[j];
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

int tb_s3_sync_all(tb_s3_task_t *task, char *errstr, size_t errstr_size)
{
    for (size_t i = 0; i < task->tp_count; i++) {
        int rc = tb_s3_tp_sync(task, &task->tps[i], errstr, errstr_size);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}
