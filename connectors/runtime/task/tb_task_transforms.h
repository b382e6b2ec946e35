/*
 * tb_task_transforms.h - where a task's transformation chain meets its
 * records and converters (connectors/transforms/tb_chain.h), for the
 * engines. Sources apply the chain after poll and before the converters,
 * sinks after the converters and before put, as Connect does; in both, a
 * key or value is parsed only when a transformation asks for its structure
 * (a routing or header chain never parses).
 *
 * What the functions below return: 0 the record goes on, 1 the chain
 * dropped it, -1 it failed in *stage ("TRANSFORMATION", or
 * "KEY_CONVERTER" / "VALUE_CONVERTER" when the chain needed the structure
 * of data the converter cannot read) with the class that failed in
 * *failed_class (static storage) and the reason in reason, or
 * TB_RESULT_RETRY: that converter asked to be tried again later
 * (TB_RESULT_RETRY: the schema registry did not answer), failure filled
 * as for -1; the engine waits under errors.retry.* (tb_task_retry.h) and
 * runs the record again, as it does for a plain conversion.
 */
#ifndef TB_TASK_TRANSFORMS_H
#define TB_TASK_TRANSFORMS_H

#include <stdbool.h>
#include <stddef.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/runtime/metrics/tb_task_metrics.h"
#include "connectors/runtime/task/tb_task_engine.h"
#include "connectors/tb_plugin.h"
#include "connectors/transforms/tb_chain.h"

/* Tags the task's metrics (m, taken) with what it runs, as Connect 4.1
 * does (KIP-891): the plugin's class, type and version, the key, value and
 * header converters' classes and versions, and each transformation's and
 * predicate's of chain (NULL: none). Released with m. */
void tb_task_describe(const tb_task_env_t *env, tb_task_metrics_t *m,
                      const tb_converter_t *key, const tb_converter_t *value,
                      const tb_chain_t *chain);

/* The task's chain, or NULL when its connector has no transformation (the
 * engines then skip it). Returns -1 with errstr when it cannot be built. */
int tb_task_chain_create(const tb_task_env_t *env, tb_chain_t **chain, char *errstr,
                         size_t errstr_size);

/* What failed, for the dead letter queue and the task's trace. */
typedef struct {
    const char *stage;
    const char *class_name;
    char reason[512];
} tb_transform_failure_t;

/*
 * Source: transforms a polled record in place (its source typer parses no
 * converter's data, so it never returns TB_RESULT_RETRY). On 0 its topic
 * may be a string the chain owns, and each side the chain typed is Connect
 * data in the record's key_schema and key_data (value_schema, value_data),
 * the record's to free, for the converter's typed form to write (typed[side]
 * set; a typed record's sides always are); the other sides keep their bytes.
 * Headers the chain changed replace the record's (the runtime's, as
 * tb_source_record_t says).
 */
int tb_source_transform(tb_chain_t *chain, tb_converter_t *const converters[2],
                        tb_source_record_t *record, bool typed[2],
                        tb_transform_failure_t *failure);

/*
 * Sink: transforms a consumed record. record is filled by the caller (the
 * original topic, partition, offset, timestamp and headers, and the Kafka
 * bytes of key and value) and stays the caller's until put() returns
 * (tb_record_release). On 0, out gets the routed topic and the headers, and
 * for each side the chain changed its plugin form (converted[side] set, a
 * malloc'd buffer the caller frees). text_out: the plugin takes text, not
 * Connect data (tb_sink_type() will not be called), so that a chain of
 * edits on a schemaless JSON value may run on its text
 * (tb_chain_apply_json(); the value side of record then stays untyped).
 */
int tb_sink_transform(tb_chain_t *chain, tb_converter_t *const converters[2],
                      tb_record_t *record, tb_sink_record_t *out, bool text_out,
                      bool converted[2], tb_transform_failure_t *failure);

/*
 * Sink, for a plugin that takes Connect data (tb_plugin_t.typed): types both
 * sides of record through the converters (a side the chain typed stays as
 * the chain left it) and points out's key_schema, key_data, value_schema
 * and value_data at them; they stay record's. Returns 0, or -1 or
 * TB_RESULT_RETRY with the converter's stage, class and reason in
 * failure.
 */
int tb_sink_type(tb_converter_t *const converters[2], tb_record_t *record,
                 tb_sink_record_t *out, tb_transform_failure_t *failure);

#endif
