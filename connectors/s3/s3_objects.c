/*
 * s3_objects.c - an S3 sink task's partitions, their commit groups and the objects
 * open in them: found, added, dropped, written to, within the buffers'
 * budget (tb_s3_task.h).
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

static void object_clear(const tb_s3_task_t *task, tb_s3_object_t *o)
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

void tb_s3_group_clear(tb_s3_task_t *task, tb_s3_tp_t *tp)
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

tb_s3_tp_t *tb_s3_tp_find(tb_s3_task_t *task, const char *topic, int32_t partition)
{
    for (size_t i = 0; i < task->tp_count; i++) {
        if (task->tps[i].partition == partition &&
            strcmp(task->tps[i].topic, topic) == 0) {
            return &task->tps[i];
        }
    }
    return NULL;
}

tb_s3_tp_t *tb_s3_tp_add(tb_s3_task_t *task, const char *topic, int32_t partition)
{
    tb_s3_tp_t *grown = realloc(task->tps, (task->tp_count + 1) * sizeof(*grown));
    if (grown == NULL) {
        return NULL;
    }
    task->tps = grown;
    tb_s3_tp_t *tp = &task->tps[task->tp_count];
    *tp = (tb_s3_tp_t){.partition = partition, .group_start = -1, .next = -1};
    if ((tp->topic = strdup(topic)) == NULL) {
        return NULL;
    }
    task->tp_count++;
    return tp;
}

void tb_s3_tp_remove(tb_s3_task_t *task, tb_s3_tp_t *tp)
{
    tb_s3_group_clear(task, tp);
    free(tp->topic);
    size_t i = (size_t)(tp - task->tps);
    memmove(&task->tps[i], &task->tps[i + 1], (task->tp_count - i - 1) * sizeof(*tp));
    task->tp_count--;
}

tb_s3_object_t *tb_s3_object_find(tb_s3_tp_t *tp, const char *topic, const char *encoded,
                                  tb_s3_view_t view)
{
    for (size_t i = 0; i < tp->count; i++) {
        tb_s3_object_t *o = &tp->objects[i];
        if (o->view == view && strcmp(o->encoded, encoded) == 0 &&
            strcmp(o->topic, topic) == 0) {
            return o;
        }
    }
    return NULL;
}

int tb_s3_object_add(tb_s3_task_t *task, tb_s3_tp_t *tp, const char *topic,
                     const char *encoded, int64_t offset, tb_s3_view_t view)
{
    tb_s3_object_t *grown = realloc(tp->objects, (tp->count + 1) * sizeof(*grown));
    if (grown == NULL) {
        return -1;
    }
    tp->objects = grown;
    tb_s3_object_t *o = &tp->objects[tp->count];
    *o = (tb_s3_object_t){.view = view, .start = offset};
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

void tb_s3_objects_drop_last(tb_s3_task_t *task, tb_s3_tp_t *tp, size_t count)
{
    while (count-- > 0) {
        object_clear(task, &tp->objects[--tp->count]);
    }
}

int tb_s3_object_write(tb_s3_task_t *task, tb_s3_object_t *o, bool fresh,
                       const tb_sink_record_t *r, char *reason, size_t reason_size)
{
    const tb_s3_writer_t *w = &task->writers[o->view];
    task->scratch.len = 0;
    int rc = fresh && w->format->open != NULL
                 ? w->format->open(w->options, r, o->key, &o->state, &task->scratch,
                                   reason, reason_size)
                 : 0;
    return rc == 0 ? w->format->write(w->options, o->state, r, &task->scratch, reason,
                                      reason_size)
                   : rc;
}

bool tb_s3_buffers_full(const tb_s3_task_t *task, char *errstr, size_t errstr_size)
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
