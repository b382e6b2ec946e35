/*
 * tb_chain.h - a connector's single message transforms: the chain built
 * from its `transforms` and `predicates` keys, once per task, and applied
 * to each record (sources after poll and before the converters, sinks
 * after the converters and before put, as in Connect).
 */
#ifndef TB_CHAIN_H
#define TB_CHAIN_H

#include <jansson.h>

#include "core/tb_buf.h"
#include "core/tb_config.h"
#include "core/tb_record.h"
#include "core/tb_result.h"

typedef struct tb_chain tb_chain_t;

/*
 * Builds the chain of a connector config (raw: the config as written, an
 * object of strings; borrowed). Returns NULL with errstr when a class is
 * unknown or its keys are invalid (a validated config builds). A config
 * without transforms builds an empty chain.
 */
tb_chain_t *tb_chain_create(const json_t *raw, char *errstr, size_t errstr_size);

/* NULL is a no-op. Strings a transform set as a record's topic die here. */
void tb_chain_destroy(tb_chain_t *chain);

/* Calls fn with each predicate (kind "predicate") and then each
 * transformation ("transform") of chain: its alias and its class's name
 * (both borrowed for the chain's life). NULL is an empty chain. */
void tb_chain_each(const tb_chain_t *chain,
                   void (*fn)(void *opaque, const char *kind, const char *alias,
                              const char *class_name),
                   void *opaque);

/* Whether the chain has no transformation: the engines then skip it. */
bool tb_chain_empty(const tb_chain_t *chain);

/*
 * Applies the chain to record. Returns TB_RESULT_OK when the record goes
 * on, TB_RESULT_DROPPED when a transformation dropped it, TB_RESULT_FAILED
 * when one failed: errstr says why and
 * *failed_class names the transformation's class (static storage).
 */
int tb_chain_apply(tb_chain_t *chain, tb_record_t *record, const char **failed_class,
                   char *errstr, size_t errstr_size);

/*
 * tb_chain_apply() for a sink whose value converter reads JSON without a
 * schema (tb_converter_json_schemaless()) and whose plugin takes text: when
 * every transformation of chain either leaves the data alone (routers,
 * Filter, header transforms) or changes a $Value in a way it can make on
 * the text (InsertField, ReplaceField), none under a predicate, and the
 * record's value is a JSON object that tb_json_object_read() accepts, the
 * chain edits that text and appends to out exactly what
 * tb_typed_to_plugin() would write of the value tb_chain_apply() makes,
 * without reading it into Connect data. Returns as tb_chain_apply(), or
 * TB_RESULT_DECLINED with record untouched: run tb_chain_apply() instead.
 * The value's bytes are borrowed until it returns.
 */
int tb_chain_apply_json(tb_chain_t *chain, tb_record_t *record, tb_buf_t *out,
                        const char **failed_class, char *errstr, size_t errstr_size);

/* Checks the chains of a connector config as Connect validates them,
 * adding each problem to errors under the key the user wrote
 * (`transforms.<alias>.<key>`, `predicates.<alias>.<key>`). aliases are the
 * parsed `transforms` and `predicates` lists. Borrows everything. */
void tb_chain_validate(const json_t *transforms, const json_t *predicates,
                       const json_t *raw, json_t *errors);

/* For GET /connector-plugins: every class's name, kind ("transformation" or
 * "predicate") and config table, through fn. */
void tb_chain_classes(void (*fn)(void *opaque, const char *name, const char *kind,
                                 const tb_config_table_t *config),
                      void *opaque);

/* The config table of the transformation or predicate called name (class
 * name or alias), or NULL. */
const tb_config_table_t *tb_chain_class_config(const char *name);

#endif
