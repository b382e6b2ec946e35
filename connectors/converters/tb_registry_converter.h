/*
 * tb_registry_converter.h - what the Schema Registry converters (Avro,
 * Protobuf and JSON Schema) share; for the converters in this folder only.
 *
 * registry_converter.c does the framing, the subject name strategies, the
 * registry client and a bounded cache of compiled schemas by id; a format
 * supplies the schema compiler and the codec as a tb_registry_format_t.
 */
#ifndef TB_REGISTRY_CONVERTER_H
#define TB_REGISTRY_CONVERTER_H

#include "connectors/converters/tb_converter_class.h"
#include "core/tb_buf.h"
#include "registry/tb_registry.h"

typedef struct {
    tb_schema_type_t type;
    const char *name; /* for messages: "Avro", "Protobuf", "JSON Schema" */
    /* Compiles schema text with the texts it references (name -> text,
     * borrowed). Returns NULL with errstr. */
    void *(*compile)(const char *text, const json_t *references, char *errstr,
                     size_t errstr_size);
    void (*destroy)(void *compiled);
    /* The name RecordNameStrategy uses (the top-level record or message),
     * or NULL. Borrowed from compiled. */
    const char *(*record_name)(const void *compiled);
    /* Whether text from a plugin is encoded as a string rather than read as
     * JSON. */
    bool (*takes_text)(const void *compiled);
    /* Appends the JSON text of payload (what follows the 5-byte header). */
    int (*decode)(const void *compiled, const uint8_t *payload, size_t len, tb_buf_t *out,
                  char *errstr, size_t errstr_size);
    /* Appends the payload for value (Protobuf: message indexes included). */
    int (*encode)(const void *compiled, const json_t *value, tb_buf_t *out, char *errstr,
                  size_t errstr_size);
    /* The schema text to register for value (auto.register.schemas), malloc'd,
     * or NULL with errstr. */
    char *(*infer)(const json_t *value, char *errstr, size_t errstr_size);
    /* Connect data: the Connect schema of the part of compiled a payload holds (a new
     * reference), and the schema text of a Connect schema (malloc'd); NULL
     * with errstr. */
    tb_schema_t *(*to_connect)(const void *compiled, const uint8_t *payload, size_t len,
                               char *errstr, size_t errstr_size);
    char *(*from_connect)(const tb_schema_t *schema, char *errstr, size_t errstr_size);
    /* A payload as a value (new, the caller's) under connect, compiled's
     * Connect schema; a value under schema as the payload for compiled,
     * appended to out. 0, or -1 with errstr. */
    int (*to_value)(const void *compiled, const tb_schema_t *connect,
                    const uint8_t *payload, size_t len, tb_value_t **value, char *errstr,
                    size_t errstr_size);
    int (*from_value)(const void *compiled, const tb_schema_t *schema,
                      const tb_value_t *value, tb_buf_t *out, char *errstr,
                      size_t errstr_size);
    /* Optional: how many leading bytes of a payload pick the part of its
     * schema that it holds (Protobuf's message indexes), so that each part's
     * Connect schema is kept apart. */
    size_t (*selector)(const uint8_t *payload, size_t len);
} tb_registry_format_t;

/* The settings every registry converter takes, named after class_name. */
extern const tb_config_table_t tb_avro_converter_config;
extern const tb_config_table_t tb_json_schema_converter_config;

/* A converter's state for format from its parsed settings, or NULL with
 * errstr. Free with tb_registry_converter_destroy(). */
void *tb_registry_converter_create(const tb_registry_format_t *format,
                                   const json_t *values, bool for_key, char *errstr,
                                   size_t errstr_size);
void tb_registry_converter_destroy(void *state);

/* The class callbacks: decode a framed record, encode plugin data; the
 * same as Connect data (from_typed derives the schema from the Connect schema, and
 * registers or looks it up under the subject as from_plugin does its inferred one). */
int tb_registry_converter_to_plugin(void *state, const void *data, size_t len,
                                    const void **out, size_t *out_len, bool *owned,
                                    char *errstr, size_t errstr_size);
int tb_registry_converter_from_plugin(void *state, const char *topic, tb_data_kind_t kind,
                                      const void *data, size_t len, void **out,
                                      size_t *out_len, char *errstr, size_t errstr_size);
int tb_registry_converter_to_typed(void *state, const void *data, size_t len,
                                   tb_schema_t **schema, tb_value_t **value, char *errstr,
                                   size_t errstr_size);
int tb_registry_converter_from_typed(void *state, const char *topic,
                                     const tb_schema_t *schema, const tb_value_t *value,
                                     void **out, size_t *out_len, char *errstr,
                                     size_t errstr_size);

#endif
