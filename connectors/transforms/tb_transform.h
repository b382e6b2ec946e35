/*
 * tb_transform.h - what a transformation or predicate class is; for the
 * classes in this folder (the runtime uses tb_chain.h).
 *
 * A class is one static const tb_transform_class_t, listed in registry.c.
 * Connect's $Key and $Value variants are two classes sharing one
 * implementation, told apart by their side. The chain parses a class's keys
 * with its config table, fills the class's typed config struct from the
 * table's columns (tb_config_fill) once, and hands check() and create()
 * that struct: no class reads a key by its name.
 */
#ifndef TB_TRANSFORM_H
#define TB_TRANSFORM_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "connectors/converters/tb_json_edit.h"
#include "core/tb_config.h"
#include "core/tb_record.h"
#include "core/tb_result.h"

#define TB_TRANSFORMS_PACKAGE "org.apache.kafka.connect.transforms."
#define TB_PREDICATES_PACKAGE "org.apache.kafka.connect.transforms.predicates."

typedef enum { TB_TRANSFORMATION = 0, TB_PREDICATE } tb_transform_kind_t;

typedef struct tb_transform_class {
    const char *name; /* Connect's class name */
    tb_transform_kind_t kind;
    tb_side_t side; /* for $Key / $Value classes */
    const tb_config_table_t *config;
    /* sizeof the struct config's columns fill (0: no columns). */
    size_t config_size;
    /* Optional: the checks across keys that Connect makes when it
     * configures the class, on its filled config (keys that each parsed).
     * Returns NULL, or the key (without its prefix) to report the problem
     * under, with the message in message. */
    const char *(*check)(const void *config, char *message, size_t message_size);
    /* The state of one use from its filled config, or NULL with errstr.
     * config (and the strings and lists it borrows) is the chain's and
     * outlives the state: the state may keep pointers into it. Optional:
     * without it the state is the config itself. */
    void *(*create)(const void *config, tb_side_t side, char *errstr, size_t errstr_size);
    void (*destroy)(void *state); /* NULL: the state needs no freeing */
    /* Transformations: changes record; TB_RESULT_OK (the record goes on),
     * TB_RESULT_DROPPED, or TB_RESULT_FAILED with errstr. */
    int (*apply)(void *state, tb_record_t *record, char *errstr, size_t errstr_size);
    /* Transformations that never read nor change the key or value (they
     * route, filter, or change headers): the chain runs them as they are
     * on a record whose value it edits as text (tb_chain_apply_json()). */
    bool keeps_data;
    /* Optional, for a $Value class: apply()'s change made on a schemaless
     * value that is a JSON object held as text (tb_json_edit.h), exactly
     * the change apply() makes on the map JsonConverter reads of it, with
     * the same results and messages. */
    int (*edit)(void *state, tb_record_t *record, tb_json_object_t *object, char *errstr,
                size_t errstr_size);
    /* Predicates: whether the predicate holds for record. */
    bool (*test)(void *state, tb_record_t *record);
} tb_transform_class_t;

/* The class called name: its class name, or the name without its package
 * ("RegexRouter", "InsertField$Value", "TopicNameMatches"). NULL when none. */
const tb_transform_class_t *tb_transform_class_find(const char *name);

/* Every class, NULL-terminated (registry.c). */
extern const tb_transform_class_t *const tb_transform_classes[];

#endif
