/*
 * tb_converter_class.h - what a converter class is; for the converters in
 * this folder only (the runtime uses tb_converter.h).
 *
 * A class is one static const tb_converter_class_t, listed in converters.c.
 * The registry handles nulls, so no callback ever sees data == NULL, and it
 * parses the settings against the class's config table before create().
 */
#ifndef TB_CONVERTER_CLASS_H
#define TB_CONVERTER_CLASS_H

#include "connectors/converters/tb_converter.h"

typedef struct {
    const char *name;  /* Connect's class name */
    const char *alias; /* its simple name */
    const tb_config_table_t *config;
    /* Optional: the converter's state from its parsed settings (borrowed),
     * or NULL with errstr filled. Without it the state is NULL. */
    void *(*create)(const json_t *values, bool for_key, char *errstr, size_t errstr_size);
    /* Frees what create() returned; required with create. */
    void (*destroy)(void *state);
    /* As tb_converter_to_plugin(); NULL: the bytes pass through unchanged. */
    int (*to_plugin)(void *state, const void *data, size_t len, const void **out,
                     size_t *out_len, bool *owned, char *errstr, size_t errstr_size);
    /* As tb_converter_from_plugin(); NULL: a copy of the bytes. */
    int (*from_plugin)(void *state, tb_data_kind_t kind, const void *data, size_t len,
                       void **out, size_t *out_len, char *errstr, size_t errstr_size);
    /* Optional, instead of from_plugin for a converter that needs the topic
     * (topic may be NULL when the caller does not know it). */
    int (*from_plugin_topic)(void *state, const char *topic, tb_data_kind_t kind,
                             const void *data, size_t len, void **out, size_t *out_len,
                             char *errstr, size_t errstr_size);
    /* Optional: as tb_converter_to_typed() and tb_converter_from_typed(),
     * for a converter that reads or writes Connect data. */
    int (*to_typed)(void *state, const void *data, size_t len, tb_schema_t **schema,
                    tb_value_t **value, char *errstr, size_t errstr_size);
    int (*from_typed)(void *state, const char *topic, const tb_schema_t *schema,
                      const tb_value_t *value, void **out, size_t *out_len, char *errstr,
                      size_t errstr_size);
    /* Optional: whether to_typed() reads JSON text with no schema, an
     * object as a map (tb_converter_json_schemaless()). */
    bool (*json_schemaless)(const void *state);
} tb_converter_class_t;

extern const tb_converter_class_t tb_string_converter;
extern const tb_converter_class_t tb_byte_array_converter;
extern const tb_converter_class_t tb_json_converter;
extern const tb_converter_class_t tb_avro_converter;
extern const tb_converter_class_t tb_json_schema_converter;
extern const tb_converter_class_t tb_protobuf_converter;

#endif
