/*
 * s3_views.c - a record as each stored view of an S3 sink task sees it
 * (its keys, its headers, its value) and its views written to their
 * objects (tb_s3_task.h).
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

void tb_s3_views_free(tb_s3_views_t *views)
{
    for (int v = 0; v < TB_S3_VIEW_COUNT; v++) {
        tb_value_free(views->values[v]);
        tb_schema_decref(views->schemas[v]);
    }
}

/* The headers of r as Confluent's header view has them: an array of
 * {key, value}, each value the header's text. NULL with reason. */
static tb_value_t *headers_value(const tb_s3_task_t *task, const tb_sink_record_t *r,
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

int tb_s3_views_of(const tb_s3_task_t *task, const tb_sink_record_t *r,
                   tb_s3_views_t *views, char *reason, size_t reason_size)
{
    *views = (tb_s3_views_t){0};
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

bool tb_s3_views_fit(tb_s3_task_t *task, tb_s3_tp_t *tp, const char *topic,
                     const char *encoded, const tb_s3_views_t *views)
{
    for (int v = 0; v < TB_S3_VIEW_COUNT; v++) {
        const tb_s3_format_t *format = task->writers[v].format;
        tb_s3_object_t *o = format != NULL && format->fits != NULL
                                ? tb_s3_object_find(tp, topic, encoded, (tb_s3_view_t)v)
                                : NULL;
        if (o != NULL && !format->fits(o->state, &views->records[v])) {
            return false;
        }
    }
    return true;
}

int tb_s3_views_write(tb_s3_task_t *task, tb_s3_tp_t *tp, const char *topic,
                      const char *encoded, bool fresh, const tb_s3_views_t *views,
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
        const tb_s3_writer_t *w = &task->writers[v];
        if (w->format == NULL) {
            continue;
        }
        tb_s3_object_t *o = tb_s3_object_find(tp, topic, encoded, (tb_s3_view_t)v);
        char why[400];
        if (tb_s3_object_write(task, o, fresh, &views->records[v], why, sizeof(why)) !=
            0) {
            snprintf(reason, reason_size, "%s%s", w->what, why);
            if (fresh) {
                tb_s3_objects_drop_last(task, tp, stored);
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
        if (tb_s3_object_append(task, o, task->scratch.data, task->scratch.len, false) !=
            0) {
            snprintf(errstr, errstr_size, "out of memory buffering records for s3://%s",
                     task->bucket);
            return -1;
        }
        taken++;
    }
    return 0;
}
