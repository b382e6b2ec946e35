/*
 * tb_converter.h - record converters: Kafka bytes <-> a plugin's text form.
 *
 * A sink task hands its plugin each key and value in a "text form" (a
 * string, raw bytes, or JSON text); a source task turns what its plugin
 * produced into Kafka bytes. Kafka Connect's converter class names select
 * the behaviour (key.converter / value.converter); the settings under
 * key.converter.* / value.converter.* reach a converter with the prefix
 * removed.
 *
 *   StringConverter, ByteArrayConverter: bytes pass through both ways.
 *   JsonConverter: with schemas.enable (the default) Kafka bytes are the
 *   envelope {"schema":S,"payload":P}; a plugin gets P alone, as compact
 *   JSON text, except that a string (or the base64 text of bytes) arrives
 *   as its text, unquoted, as Connect's FileStreamSink writes a string
 *   value. Numbers keep the spelling they had in the message.
 *
 * A null (data NULL) is a null out, in both directions. A converter is used
 * by one task thread at a time.
 */
#ifndef TB_CONVERTER_H
#define TB_CONVERTER_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/tb_config.h"
#include "core/tb_data.h"
#include "core/tb_result.h"

/* What a source plugin produced: raw bytes, UTF-8 text, or JSON text. */
typedef enum { TB_DATA_BYTES = 0, TB_DATA_STRING, TB_DATA_JSON } tb_data_kind_t;

typedef struct tb_converter tb_converter_t;

/*
 * tb_converter_to_plugin() and tb_converter_from_plugin() return a
 * tb_result_t: TB_RESULT_OK (converted), TB_RESULT_FAILED (the record cannot
 * be converted: it follows errors.tolerance), or TB_RESULT_RETRY: the
 * converter could not tell, because a service it needs (a schema registry)
 * did not answer. The record is not bad: the caller keeps it and tries
 * again later (errstr says why).
 */

/* Connect's class name for name (a class name or a short alias such as
 * "JsonConverter"), or NULL when name is no converter. Static storage. */
const char *tb_converter_canonical_name(const char *name);

/* Connect's class name for a header converter (SimpleHeaderConverter,
 * StringConverter or ByteArrayConverter, by class name or short alias), or
 * NULL. Static storage. Header values reach plugins as their bytes under
 * each class (header_converter.c says why). */
const char *tb_header_converter_canonical_name(const char *name);

/* A tb_config_def_t check of header.converter: Connect's "Class X could not
 * be found." for a class that is not a header converter. */
int tb_header_converter_check(const json_t *value, char *reason, size_t size);

/*
 * Creates a converter for keys (for_key) or values. settings is an object of
 * strings (borrowed; NULL = none). Returns NULL with errstr filled when name is unknown
 * ("Class X could not be found.") or a setting is invalid (Connect's text,
 * naming the setting). Free with tb_converter_destroy().
 */
tb_converter_t *tb_converter_create(const char *name, const json_t *settings,
                                    bool for_key, char *errstr, size_t errstr_size);

/* NULL is a no-op. */
void tb_converter_destroy(tb_converter_t *c);

/* Connect's class name of c's converter. Static storage. */
const char *tb_converter_class_name(const tb_converter_t *c);

/* True when tb_converter_to_plugin() returns its input unchanged, so a hot
 * path may skip the call. */
bool tb_converter_passthrough(const tb_converter_t *c);

/* True when c's typed form of Kafka bytes is their JSON read without a
 * schema (JsonConverter without schemas.enable or schema.content): an
 * object is a map of its members, so that a chain may edit the object's
 * text instead (tb_chain_apply_json()). */
bool tb_converter_json_schemaless(const tb_converter_t *c);

/*
 * Sink side: Kafka bytes (data NULL = null) -> what a sink plugin gets. On
 * success returns 0 and sets *out, *out_len and *owned: *out points into
 * data (owned false, valid as long as data) or to a new malloc'd buffer
 * (owned true, the caller frees it). A null gives *out NULL. Returns -1 with
 * the reason in errstr when the bytes cannot be converted, or
 * TB_RESULT_RETRY.
 */
int tb_converter_to_plugin(tb_converter_t *c, const void *data, size_t len,
                           const void **out, size_t *out_len, bool *owned, char *errstr,
                           size_t errstr_size);

/*
 * Source side: plugin data of the given kind (data NULL = null) -> Kafka
 * bytes in a new malloc'd buffer the caller frees (*out NULL for a null).
 * Returns 0, or -1 with the reason in errstr (e.g. invalid JSON text), or
 * TB_RESULT_RETRY. Converters that name a subject after the topic (the
 * schema registry ones) fail here: use tb_converter_from_plugin_topic().
 */
int tb_converter_from_plugin(tb_converter_t *c, tb_data_kind_t kind, const void *data,
                             size_t len, void **out, size_t *out_len, char *errstr,
                             size_t errstr_size);

/* As tb_converter_from_plugin(), for a record bound for topic (borrowed;
 * NULL when unknown). */
int tb_converter_from_plugin_topic(tb_converter_t *c, const char *topic,
                                   tb_data_kind_t kind, const void *data, size_t len,
                                   void **out, size_t *out_len, char *errstr,
                                   size_t errstr_size);

/*
 * The typed form (core/tb_data.h), made only when a transform needs the
 * structure of a key or value.
 *
 * tb_converter_to_typed: Kafka bytes (data NULL = null) -> *schema (NULL:
 * schemaless) and *value (NULL: null), both new and the caller's. As Connect:
 * StringConverter gives an optional string, ByteArrayConverter optional
 * bytes, JsonConverter the envelope's schema and payload (schemaless data
 * without schemas.enable or with a null schema).
 *
 * tb_converter_from_typed: schema and value (borrowed) of a record bound
 * for topic (borrowed; the registry converters name their subject after
 * it) -> Kafka bytes in a new malloc'd buffer (*out NULL for a null), as
 * Connect's converters write them (JsonConverter byte for byte;
 * StringConverter writes a string's text, anything else as its JSON; the
 * registry converters the schema they derive, registered or looked up as
 * from_plugin does).
 *
 * Both return 0, or -1 with Connect's reason in errstr, or
 * TB_RESULT_RETRY from a registry converter whose registry did not
 * answer; a converter without a typed form (tb_converter_has_typed() false)
 * refuses.
 */
bool tb_converter_has_typed(const tb_converter_t *c);
int tb_converter_to_typed(tb_converter_t *c, const void *data, size_t len,
                          tb_schema_t **schema, tb_value_t **value, char *errstr,
                          size_t errstr_size);
int tb_converter_from_typed(tb_converter_t *c, const char *topic,
                            const tb_schema_t *schema, const tb_value_t *value,
                            void **out, size_t *out_len, char *errstr,
                            size_t errstr_size);

/* A source plugin's data of kind (data NULL = null) as Connect data: a
 * required string or bytes schema, or for JSON text the schema
 * JsonConverter infers and the value under it. Returns 0 or -1 (invalid
 * JSON text) with errstr. */
int tb_plugin_data_to_typed(tb_data_kind_t kind, const void *data, size_t len,
                            tb_schema_t **schema, tb_value_t **value, char *errstr,
                            size_t errstr_size);

/* What a sink plugin gets for a typed key or value: a string's text, bytes
 * as they are, a Decimal its exact decimal text (as Connect's toString of a
 * BigDecimal), anything else its payload as compact JSON text (as
 * JsonConverter would have handed it over). *out is a new malloc'd buffer,
 * NULL for a null. Returns 0 or -1 with errstr. */
int tb_typed_to_plugin(const tb_schema_t *schema, const tb_value_t *value, void **out,
                       size_t *out_len, char *errstr, size_t errstr_size);

/* The settings table of the converter called name (class name or alias;
 * may have no keys), or NULL when name is no converter. Static storage. */
const tb_config_table_t *tb_converter_config(const char *name);

/* True when config_key is a key.converter.*, value.converter.* or
 * header.converter.* setting that is a PASSWORD of some converter class
 * (basic.auth.user.info, bearer.auth.token, schema.registry.ssl.key.password,
 * ...), whichever class the connector uses. */
bool tb_converter_secret_key(const char *config_key);

#endif
