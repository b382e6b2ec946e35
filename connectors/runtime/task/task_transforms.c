/*
 * A task's transformation chain between its records and its converters
 * (tb_task_transforms.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/task/tb_task_transforms.h"
#include "core/tb_time.h"

int tb_task_chain_create(const tb_task_env_t *env, tb_chain_t **chain, char *errstr,
                         size_t errstr_size)
{
    *chain = tb_chain_create(env->connector_config, errstr, errstr_size);
    if (*chain == NULL) {
        return -1;
    }
    if (tb_chain_empty(*chain)) {
        tb_chain_destroy(*chain);
        *chain = NULL;
    }
    return 0;
}

static const char *const converter_stages[] = {"KEY_CONVERTER", "VALUE_CONVERTER"};

/* What a typer needs: the task's converters (sink) or the plugin's data
 * kinds (source), and which side failed to be read, and how. */
typedef struct {
    tb_converter_t *const *converters;
    const tb_source_record_t *source;
    int failed_side; /* -1: none */
    int failed_rc;   /* the typer's: -1, or TB_RESULT_RETRY */
} tb_typing_t;

/* What a failure of the typer's converter makes of rc, a failed -1:
 * TB_RESULT_RETRY when the converter asked to be tried again later. */
static int typing_outcome(const tb_typing_t *typing, int rc)
{
    return rc == -1 && typing->failed_side >= 0 && typing->failed_rc == TB_RESULT_RETRY
               ? TB_RESULT_RETRY
               : rc;
}

static int sink_typer(void *opaque, tb_side_t side, const void *bytes, size_t len,
                      tb_schema_t **schema, tb_value_t **value, char *errstr,
                      size_t errstr_size)
{
    tb_typing_t *t = opaque;
    int rc = tb_converter_to_typed(t->converters[side], bytes, len, schema, value, errstr,
                                   errstr_size);
    if (rc != 0) {
        t->failed_side = (int)side;
        t->failed_rc = rc;
    }
    return rc;
}

static int source_typer(void *opaque, tb_side_t side, const void *bytes, size_t len,
                        tb_schema_t **schema, tb_value_t **value, char *errstr,
                        size_t errstr_size)
{
    tb_typing_t *t = opaque;
    tb_data_kind_t kind =
        side == TB_SIDE_KEY ? t->source->key_kind : t->source->value_kind;
    int rc =
        tb_plugin_data_to_typed(kind, bytes, len, schema, value, errstr, errstr_size);
    if (rc != 0) {
        t->failed_side = (int)side;
    }
    return rc;
}

/* Applies chain to record, filling failure. */
static int run_chain(tb_chain_t *chain, tb_record_t *record, const tb_typing_t *typing,
                     tb_converter_t *const converters[2], tb_transform_failure_t *failure)
{
    const char *failed_class = NULL;
    int rc = tb_chain_apply(chain, record, &failed_class, failure->reason,
                            sizeof(failure->reason));
    if (rc == -1 && typing->failed_side >= 0) {
        failure->stage = converter_stages[typing->failed_side];
        failure->class_name = tb_converter_class_name(converters[typing->failed_side]);
    } else if (rc == -1) {
        failure->stage = "TRANSFORMATION";
        failure->class_name = failed_class;
    }
    return typing_outcome(typing, rc);
}

int tb_source_transform(tb_chain_t *chain, tb_converter_t *const converters[2],
                        tb_source_record_t *record, bool typed[2],
                        tb_transform_failure_t *failure)
{
    tb_typing_t typing = {.source = record, .failed_side = -1};
    tb_record_t r = {.topic = record->topic,
                     .partition = record->partition,
                     .offset = -1,
                     .timestamp =
                         record->timestamp > 0 ? record->timestamp : tb_wall_ms(),
                     .headers = record->headers,
                     .header_count = record->header_count,
                     .key = {.bytes = record->key, .len = record->key_len},
                     .value = {.bytes = record->value, .len = record->value_len},
                     .typer = source_typer,
                     .typer_opaque = &typing};
    if (record->typed) { /* the plugin's Connect data, now the record's */
        tb_record_set(&r, TB_SIDE_KEY, record->key_schema, record->key_data);
        tb_record_set(&r, TB_SIDE_VALUE, record->value_schema, record->value_data);
        record->key_schema = record->value_schema = NULL;
        record->key_data = record->value_data = NULL;
    }
    int rc = run_chain(chain, &r, &typing, converters, failure);
    record->topic = r.topic;
    record->partition = r.partition;
    tb_header_t *headers;
    size_t header_count;
    if (tb_record_headers_take(&r, &headers, &header_count)) { /* the chain's copies */
        tb_headers_free(record->headers, record->header_count);
        record->headers = headers;
        record->header_count = header_count;
    }
    for (tb_side_t side = TB_SIDE_KEY; rc == 0 && side <= TB_SIDE_VALUE; side++) {
        tb_record_side_t *s = tb_record_side(&r, side);
        typed[side] = s->typed;
        if (s->typed) { /* the chain's Connect data, now the record's again */
            *(side == TB_SIDE_KEY ? &record->key_schema : &record->value_schema) =
                s->schema;
            *(side == TB_SIDE_KEY ? &record->key_data : &record->value_data) = s->value;
            s->typed = false;
            s->schema = NULL;
            s->value = NULL;
        }
    }
    tb_record_release(&r);
    return rc;
}

/* The chain on a schemaless JSON value's text (tb_chain_apply_json()): as
 * tb_sink_transform(), or TB_RESULT_DECLINED. */
static int edit_chain(tb_chain_t *chain, tb_record_t *record, tb_sink_record_t *out,
                      bool converted[2], tb_transform_failure_t *failure)
{
    tb_buf_t text = {0};
    const char *failed_class = NULL;
    tb_buf_reserve(&text, record->value.len + 64);
    int rc = tb_chain_apply_json(chain, record, &text, &failed_class, failure->reason,
                                 sizeof(failure->reason));
    if (rc == 0 && (out->value = tb_buf_take(&text, &out->value_len)) == NULL) {
        snprintf(failure->reason, sizeof(failure->reason), "out of memory");
        failed_class = "tributary";
        rc = -1;
    }
    if (rc != 0) {
        tb_buf_release(&text);
    }
    if (rc == -1) {
        failure->stage = "TRANSFORMATION";
        failure->class_name = failed_class;
    }
    converted[TB_SIDE_KEY] = false;
    converted[TB_SIDE_VALUE] = rc == 0;
    return rc;
}

int tb_sink_transform(tb_chain_t *chain, tb_converter_t *const converters[2],
                      tb_record_t *record, tb_sink_record_t *out, bool text_out,
                      bool converted[2], tb_transform_failure_t *failure)
{
    tb_typing_t typing = {.converters = converters, .failed_side = -1};
    int rc = TB_RESULT_DECLINED;
    if (text_out && tb_converter_json_schemaless(converters[TB_SIDE_VALUE])) {
        rc = edit_chain(chain, record, out, converted, failure);
    }
    if (rc != TB_RESULT_DECLINED) {
        out->topic = record->topic;
        out->headers = record->headers;
        out->header_count = record->header_count;
        return rc;
    }
    record->typer = sink_typer;
    record->typer_opaque = &typing;
    rc = run_chain(chain, record, &typing, converters, failure);
    record->typer_opaque = NULL;
    out->topic = record->topic;
    out->headers = record->headers;
    out->header_count = record->header_count;
    for (tb_side_t side = TB_SIDE_KEY; rc == 0 && side <= TB_SIDE_VALUE; side++) {
        tb_record_side_t *s = tb_record_side(record, side);
        void *data = NULL;
        size_t len = 0;
        converted[side] = s->typed;
        if (!s->typed) {
            continue;
        }
        if (tb_typed_to_plugin(s->schema, s->value, &data, &len, failure->reason,
                               sizeof(failure->reason)) != 0) {
            failure->stage = "TRANSFORMATION";
            failure->class_name = "tributary";
            rc = -1;
            break;
        }
        if (side == TB_SIDE_KEY) {
            out->key = data;
            out->key_len = len;
        } else {
            out->value = data;
            out->value_len = len;
        }
    }
    return rc;
}

int tb_sink_type(tb_converter_t *const converters[2], tb_record_t *record,
                 tb_sink_record_t *out, tb_transform_failure_t *failure)
{
    tb_typing_t typing = {.converters = converters, .failed_side = -1};
    int rc = 0;
    record->typer = sink_typer;
    record->typer_opaque = &typing;
    for (tb_side_t side = TB_SIDE_KEY; side <= TB_SIDE_VALUE; side++) {
        const tb_record_side_t *s =
            tb_record_typed(record, side, failure->reason, sizeof(failure->reason));
        if (s == NULL) {
            failure->stage = converter_stages[side];
            failure->class_name = tb_converter_class_name(converters[side]);
            rc = typing_outcome(&typing, -1);
            break;
        }
        if (side == TB_SIDE_KEY) {
            out->key_schema = s->schema;
            out->key_data = s->value;
        } else {
            out->value_schema = s->schema;
            out->value_data = s->value;
        }
    }
    record->typer_opaque = NULL;
    return rc;
}
