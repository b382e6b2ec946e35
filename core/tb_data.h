/*
 * tb_data.h - Connect's data model: schemas and the values that conform to
 * them, or schemaless values.
 *
 * A schema (tb_schema_t) has a type, optional flag, default value, name,
 * version, doc and parameters, and per type its fields (STRUCT), items
 * (ARRAY) or key and value schemas (MAP). Schemas are reference counted,
 * jansson-style: a constructor returns a reference the caller owns, a
 * function documented as "steals" takes over the reference it is given,
 * "borrowed" results live as long as their owner. A schema is built while
 * its creator holds the only reference; once shared (incref'd or stolen
 * into another schema or value) it is read only.
 *
 * A value (tb_value_t) is owned by exactly one owner: NULL is Connect's
 * null, containers own their members, a struct value holds a reference to
 * its schema. Schemaless data uses the same values: maps, arrays and
 * primitives without a schema (integers then carry their width, as Java's
 * Long or Integer would).
 *
 * Logical types are schemas with Connect's names, as in Connect:
 *   Decimal    BYTES, the unscaled value big-endian two's complement,
 *              parameter "scale";
 *   Date       INT32 days since the epoch;
 *   Time       INT32 milliseconds since midnight;
 *   Timestamp  INT64 milliseconds since the epoch.
 * Their values are the underlying BYTES and integers.
 *
 * Every constructor returns NULL only when memory runs out.
 */
#ifndef TB_DATA_H
#define TB_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

typedef enum {
    TB_TYPE_INT8 = 0,
    TB_TYPE_INT16,
    TB_TYPE_INT32,
    TB_TYPE_INT64,
    TB_TYPE_FLOAT32,
    TB_TYPE_FLOAT64,
    TB_TYPE_BOOLEAN,
    TB_TYPE_STRING,
    TB_TYPE_BYTES,
    TB_TYPE_ARRAY,
    TB_TYPE_MAP,
    TB_TYPE_STRUCT,
} tb_type_t;

#define TB_LOGICAL_DECIMAL "org.apache.kafka.connect.data.Decimal"
#define TB_LOGICAL_DATE "org.apache.kafka.connect.data.Date"
#define TB_LOGICAL_TIME "org.apache.kafka.connect.data.Time"
#define TB_LOGICAL_TIMESTAMP "org.apache.kafka.connect.data.Timestamp"
#define TB_DECIMAL_SCALE "scale"

typedef struct tb_schema tb_schema_t;
typedef struct tb_value tb_value_t;

/* A field of a STRUCT schema; borrowed from its schema. */
typedef struct {
    const char *name;
    size_t index;
    tb_schema_t *schema;
} tb_field_t;

/* Connect's name of a type: "INT8", ..., "STRUCT". Static storage. */
const char *tb_type_name(tb_type_t type);

/* True for the types without members. */
bool tb_type_is_primitive(tb_type_t type);

/* -------------------------------------------------------------------------
 * Schemas
 */

/* A required schema of a primitive type or an empty STRUCT, without name. */
tb_schema_t *tb_schema_new(tb_type_t type);

/* An ARRAY schema of items (steals). */
tb_schema_t *tb_schema_array(tb_schema_t *items);

/* A MAP schema (steals both). */
tb_schema_t *tb_schema_map(tb_schema_t *keys, tb_schema_t *values);

/* The logical types, required. */
tb_schema_t *tb_schema_decimal(int scale);
tb_schema_t *tb_schema_date(void);
tb_schema_t *tb_schema_time(void);
tb_schema_t *tb_schema_timestamp(void);

/* Returns s; NULL is a no-op. */
tb_schema_t *tb_schema_incref(tb_schema_t *s);

/* Drops a reference; frees on the last. NULL is a no-op. */
void tb_schema_decref(tb_schema_t *s);

/* A deep copy the caller may edit (one reference). */
tb_schema_t *tb_schema_copy(const tb_schema_t *s);

/* Whether a and b are the same schema (NULL equals only NULL). */
bool tb_schema_equal(const tb_schema_t *a, const tb_schema_t *b);

/* Setters for a schema being built. Strings are copied; NULL clears. */
void tb_schema_set_optional(tb_schema_t *s, bool optional);
int tb_schema_set_name(tb_schema_t *s, const char *name);
void tb_schema_set_version(tb_schema_t *s, bool has_version, int version);
int tb_schema_set_doc(tb_schema_t *s, const char *doc);
int tb_schema_set_parameter(tb_schema_t *s, const char *key, const char *value);
/* Steals value (NULL: no default). */
void tb_schema_set_default(tb_schema_t *s, tb_value_t *value);

/* Appends a field to a STRUCT schema (steals schema). -1 when a field of
 * that name exists (schema is released) or out of memory. */
int tb_schema_add_field(tb_schema_t *s, const char *name, tb_schema_t *schema);

tb_type_t tb_schema_type(const tb_schema_t *s);
bool tb_schema_optional(const tb_schema_t *s);
const char *tb_schema_name(const tb_schema_t *s); /* NULL when none */
bool tb_schema_has_version(const tb_schema_t *s);
int tb_schema_version(const tb_schema_t *s);
const char *tb_schema_doc(const tb_schema_t *s);
/* The parameters, an object of strings, or NULL when none. Borrowed. */
const json_t *tb_schema_parameters(const tb_schema_t *s);
const char *tb_schema_parameter(const tb_schema_t *s, const char *key);
const tb_value_t *tb_schema_default(const tb_schema_t *s); /* borrowed */
size_t tb_schema_field_count(const tb_schema_t *s);
const tb_field_t *tb_schema_field_at(const tb_schema_t *s, size_t index);
/* The field called name, or NULL. */
const tb_field_t *tb_schema_field(const tb_schema_t *s, const char *name);
tb_schema_t *tb_schema_items(const tb_schema_t *s);      /* ARRAY; borrowed */
tb_schema_t *tb_schema_key_schema(const tb_schema_t *s); /* MAP; borrowed */
tb_schema_t *tb_schema_value_schema(const tb_schema_t *s);

/* Prefixes a reason about a field's schema with the field's name:
 * "field <name>: <reason>", or "field <name>.<inner>: ..." when the reason
 * already names a field inside it. For messages about schemas mapped
 * between formats. */
void tb_schema_error_in_field(char *errstr, size_t errstr_size, const char *field);

/* Whether s is the logical type called logical_name (TB_LOGICAL_*). */
bool tb_schema_is_logical(const tb_schema_t *s, const char *logical_name);

/* Whether s or a schema inside it (fields, items, keys, values) is the
 * logical type called logical_name. NULL: false. */
bool tb_schema_contains_logical(const tb_schema_t *s, const char *logical_name);

/* -------------------------------------------------------------------------
 * Values
 */

/* An integer of type INT8..INT64 (the caller keeps it in range), or a
 * float of type FLOAT32 or FLOAT64. */
tb_value_t *tb_value_int(tb_type_t type, int64_t i);
tb_value_t *tb_value_float(tb_type_t type, double f);
tb_value_t *tb_value_bool(bool b);
/* Copies len bytes of s, which need not end in NUL; the copy does. */
tb_value_t *tb_value_string(const char *s, size_t len);
tb_value_t *tb_value_bytes(const void *data, size_t len);
tb_value_t *tb_value_array(void);
tb_value_t *tb_value_map(void);
/* A STRUCT value of schema (a new reference is taken); every field null. */
tb_value_t *tb_value_struct(tb_schema_t *schema);

/* Appends item (steals; NULL is a null item). -1 out of memory. */
int tb_value_array_append(tb_value_t *array, tb_value_t *item);
/* Puts key -> value (steals both), replacing an equal key's value. */
int tb_value_map_put(tb_value_t *map, tb_value_t *key, tb_value_t *value);
/* Sets a field of a struct (steals value, released on failure). -1 when the
 * struct's schema has no such field. */
int tb_value_struct_set(tb_value_t *st, const char *field, tb_value_t *value);
int tb_value_struct_set_at(tb_value_t *st, size_t index, tb_value_t *value);

tb_type_t tb_value_type(const tb_value_t *v);
int64_t tb_value_int64(const tb_value_t *v); /* INT8..INT64 */
double tb_value_double(const tb_value_t *v); /* FLOAT32, FLOAT64 */
bool tb_value_boolean(const tb_value_t *v);  /* BOOLEAN */
/* STRING (NUL-terminated) or BYTES; *len may be NULL. Borrowed. */
const char *tb_value_text(const tb_value_t *v, size_t *len);
size_t tb_value_size(const tb_value_t *v); /* items, entries or fields */
const tb_value_t *tb_value_array_get(const tb_value_t *v, size_t i);
const tb_value_t *tb_value_map_key(const tb_value_t *v, size_t i);
const tb_value_t *tb_value_map_value(const tb_value_t *v, size_t i);
/* The value of key in a map, NULL when absent (or null). */
const tb_value_t *tb_value_map_get(const tb_value_t *v, const tb_value_t *key);
/* The value of the entry whose STRING key is name; NULL when none. */
const tb_value_t *tb_value_map_get_string(const tb_value_t *v, const char *name);
tb_schema_t *tb_value_struct_schema(const tb_value_t *v); /* borrowed */
const tb_value_t *tb_value_struct_get(const tb_value_t *v, const char *field);
const tb_value_t *tb_value_struct_get_at(const tb_value_t *v, size_t index);

/* Hands over the value of entry i of a map, or of field index of a struct
 * (the caller's; NULL for a null or past the end), leaving a null there:
 * for a transform that builds new data of the old's members instead of
 * copying them. */
tb_value_t *tb_value_map_take_value(tb_value_t *map, size_t i);
tb_value_t *tb_value_struct_take_at(tb_value_t *st, size_t index);

/* Removes (and frees) entry i of a map, the later ones moving up; past the
 * end a no-op. */
void tb_value_map_remove_at(tb_value_t *map, size_t i);

/* A deep copy (NULL for NULL). */
tb_value_t *tb_value_copy(const tb_value_t *v);

/* Deep equality, types included. */
bool tb_value_equal(const tb_value_t *a, const tb_value_t *b);

/* NULL is a no-op. */
void tb_value_free(tb_value_t *v);

/* The Java class Connect names for a value in its messages
 * ("java.lang.String"; "null" for a null). Static storage. */
const char *tb_value_class_name(const tb_value_t *v);

/* -------------------------------------------------------------------------
 * Decimals (core/tb_data_decimal.c), exactly: a Decimal value is its unscaled
 * integer as big-endian two's complement BYTES, as few as hold it, under
 * its schema's "scale" parameter; no digit ever goes through a double.
 */

/* The scale of a Decimal schema: its "scale" parameter, 0 when absent. */
int tb_decimal_scale(const tb_schema_t *s);

/* The plain text of the decimal whose unscaled value is unscaled[0..len)
 * under scale ("-12.50"; no exponent), malloc'd and NUL-terminated; NULL on
 * no memory or a scale beyond +-TB_DECIMAL_MAX_DIGITS (a schema's scale is
 * data: it must not size an allocation unchecked). */
char *tb_decimal_text(const void *unscaled, size_t len, int scale);

/* The BYTES value of the decimal text[0..len) under scale. The text is a
 * JSON number or Java's BigDecimal text: an optional sign, digits with an
 * optional point, an optional exponent ("-1.5E+3"). NULL with the reason in
 * errstr when it is no number, has more decimals than scale holds (other
 * than trailing zeros), or more than TB_DECIMAL_MAX_DIGITS digits. */
tb_value_t *tb_decimal_parse(const char *text, size_t len, int scale, char *errstr,
                             size_t errstr_size);

#define TB_DECIMAL_MAX_DIGITS 4096

/* Checks that value conforms to schema, as Connect's
 * ConnectSchema.validateValue does; -1 with Connect's message in errstr
 * (e.g. 'Invalid value: null used for required field: "id", schema type:
 * INT32'). */
int tb_value_validate(const tb_schema_t *schema, const tb_value_t *value, char *errstr,
                      size_t errstr_size);

#endif
