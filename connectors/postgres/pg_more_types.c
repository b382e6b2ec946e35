/* Bit strings, points and extension types (tb_pg_more_types.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "connectors/postgres/tb_pg_java_order.h"
#include "connectors/postgres/tb_pg_more_types.h"

#define OID_POINT 600
#define OID_BIT 1560
#define OID_VARBIT 1562
/* what Debezium takes for the length of a bit varying without one */
#define UNBOUNDED_BITS 2147483647

typedef enum { KIND_NONE = 0, KIND_BITS, KIND_POINT, KIND_HSTORE, KIND_TEXT } kind_t;

static kind_t kind_of(const tb_pg_type_t *t)
{
    if (t->oid == OID_BIT || t->oid == OID_VARBIT) {
        return KIND_BITS;
    }
    if (t->oid == OID_POINT) {
        return KIND_POINT;
    }
    if (t->base_name == NULL) {
        return KIND_NONE;
    }
    if (strcmp(t->base_name, "hstore") == 0) {
        return KIND_HSTORE;
    }
    /* ltree gets its name below; citext and isn's isbn are plain strings */
    if (strcmp(t->base_name, "citext") == 0 || strcmp(t->base_name, "ltree") == 0 ||
        strcmp(t->base_name, "isbn") == 0) {
        return KIND_TEXT;
    }
    return KIND_NONE;
}

/* bit(n), bit varying(n): Bits of length n; a single bit: BOOLEAN. */
static tb_schema_t *bits_schema(const tb_pg_type_t *t)
{
    int length = t->typmod > 0 ? t->typmod : UNBOUNDED_BITS;
    if (length == 1) {
        return tb_schema_new(TB_TYPE_BOOLEAN);
    }
    char text[16];
    snprintf(text, sizeof(text), "%d", length);
    tb_schema_t *s = tb_pg_named_schema(TB_TYPE_BYTES, "io.debezium.data.Bits");
    if (s != NULL && tb_schema_set_parameter(s, "length", text) != 0) {
        tb_schema_decref(s);
        return NULL;
    }
    return s;
}

static tb_schema_t *point_schema(void)
{
    tb_schema_t *s =
        tb_pg_named_schema(TB_TYPE_STRUCT, "io.debezium.data.geometry.Point");
    int rc = s == NULL || tb_schema_set_doc(s, "Geometry (POINT)") != 0;
    rc = rc || tb_schema_add_field(s, "x", tb_schema_new(TB_TYPE_FLOAT64));
    rc = rc || tb_schema_add_field(s, "y", tb_schema_new(TB_TYPE_FLOAT64));
    rc = rc || tb_schema_add_field(s, "wkb", tb_pg_optional_schema(TB_TYPE_BYTES));
    rc = rc || tb_schema_add_field(s, "srid", tb_pg_optional_schema(TB_TYPE_INT32));
    if (rc) {
        tb_schema_decref(s);
        return NULL;
    }
    return s;
}

tb_schema_t *tb_pg_more_schema(const tb_pg_type_t *t, const tb_pg_modes_t *modes)
{
    switch (kind_of(t)) {
    case KIND_BITS:
        return bits_schema(t);
    case KIND_POINT:
        return point_schema();
    case KIND_HSTORE:
        return modes->hstore == TB_PG_HSTORE_JSON
                   ? tb_pg_named_schema(TB_TYPE_STRING, "io.debezium.data.Json")
                   : tb_schema_map(tb_schema_new(TB_TYPE_STRING),
                                   tb_pg_optional_schema(TB_TYPE_STRING));
    case KIND_TEXT:
        return strcmp(t->base_name, "ltree") == 0
                   ? tb_pg_named_schema(TB_TYPE_STRING, "io.debezium.data.Ltree")
                   : tb_schema_new(TB_TYPE_STRING);
    default:
        return NULL;
    }
}

tb_schema_t *tb_pg_more_items_schema(const tb_pg_type_t *elem, const tb_pg_modes_t *modes)
{
    kind_t kind = kind_of(elem);
    if (kind != KIND_HSTORE && kind != KIND_TEXT) {
        return NULL; /* Debezium maps no array of bits or points */
    }
    tb_schema_t *items = tb_pg_more_schema(elem, modes);
    /* isbn's array has required items: Debezium's converter builds them from
     * the element's schema alone */
    if (items != NULL && strcmp(elem->base_name, "isbn") != 0) {
        tb_schema_set_optional(items, true);
    }
    return items;
}

/* "0110...": as Debezium's, the bytes of a bit set whose bit 0 is the
 * last character, little-endian, up to the highest bit set (no bytes when
 * none is); a single bit is a boolean. */
static tb_value_t *bits_value(const tb_schema_t *schema, const char *text)
{
    size_t n = strlen(text);
    if (n == 0 || strspn(text, "01") != n) {
        return NULL;
    }
    if (tb_schema_type(schema) == TB_TYPE_BOOLEAN) {
        return n == 1 ? tb_value_bool(text[0] == '1') : NULL;
    }
    uint8_t *bytes = calloc(n / 8 + 1, 1);
    size_t used = 0;
    if (bytes == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (text[n - 1 - i] == '1') {
            bytes[i / 8] |= (uint8_t)(1u << (i % 8));
            used = i / 8 + 1;
        }
    }
    tb_value_t *v = tb_value_bytes(bytes, used);
    free(bytes);
    return v;
}

/* value's bytes (an integer or a double of the host) little-endian. */
static void put_le(uint8_t *out, const void *value, size_t size)
{
    const uint16_t probe = 1;
    bool little = *(const uint8_t *)&probe == 1;
    const uint8_t *in = value;
    for (size_t i = 0; i < size; i++) {
        out[i] = little ? in[i] : in[size - 1 - i];
    }
}

/* "(x,y)": x and y, and the point's well-known binary as Debezium makes it
 * (1, then the type 1 and the coordinates little-endian); no srid. */
static tb_value_t *point_value(const tb_schema_t *schema, const char *text)
{
    char *end;
    if (*text++ != '(') {
        return NULL;
    }
    double x = strtod(text, &end);
    if (end == text || *end != ',') {
        return NULL;
    }
    text = end + 1;
    double y = strtod(text, &end);
    if (end == text || strcmp(end, ")") != 0) {
        return NULL;
    }
    uint8_t wkb[21] = {1};
    uint32_t type = 1;
    put_le(wkb + 1, &type, 4);
    put_le(wkb + 5, &x, 8);
    put_le(wkb + 13, &y, 8);
    tb_value_t *v = tb_value_struct((tb_schema_t *)schema);
    if (v == NULL ||
        tb_value_struct_set(v, "x", tb_value_float(TB_TYPE_FLOAT64, x)) != 0 ||
        tb_value_struct_set(v, "y", tb_value_float(TB_TYPE_FLOAT64, y)) != 0 ||
        tb_value_struct_set(v, "wkb", tb_value_bytes(wkb, sizeof(wkb))) != 0) {
        tb_value_free(v);
        return NULL;
    }
    return v;
}

/* One quoted item of hstore's output ("...", with \" and \\) into a new
 * string, or NULL for an unquoted NULL (*is_null). False when malformed. */
static bool hstore_item(const char **p, char **out, bool *is_null)
{
    const char *s = *p;
    *out = NULL;
    *is_null = strncmp(s, "NULL", 4) == 0;
    if (*is_null) {
        *p = s + 4;
        return true;
    }
    if (*s++ != '"') {
        return false;
    }
    char *buf = malloc(strlen(s) + 1);
    size_t n = 0;
    for (; buf != NULL && *s != '"'; s++) {
        if (*s == '\\' && s[1] != '\0') {
            s++;
        }
        if (*s == '\0') {
            free(buf);
            return false;
        }
        buf[n++] = *s;
    }
    if (buf == NULL) {
        return false;
    }
    buf[n] = '\0';
    *out = buf;
    *p = s + 1;
    return true;
}

/* hstore's text ("k"=>"v", "k2"=>NULL) as an object of strings or nulls,
 * in the order of the text. */
static json_t *hstore_pairs(const char *text)
{
    json_t *pairs = json_object();
    const char *p = text;
    while (pairs != NULL && *p != '\0') {
        char *key, *value;
        bool key_null, value_null;
        bool ok =
            hstore_item(&p, &key, &key_null) && !key_null && strncmp(p, "=>", 2) == 0;
        if (ok) {
            p += 2;
            ok = hstore_item(&p, &value, &value_null);
        }
        if (ok) {
            json_object_set_new(pairs, key,
                                value_null ? json_null() : json_string(value));
            free(value);
            if (strncmp(p, ", ", 2) == 0) {
                p += 2;
                ok = *p != '\0';
            } else {
                ok = *p == '\0';
            }
        }
        free(key);
        if (!ok) {
            json_decref(pairs);
            return NULL;
        }
    }
    return pairs;
}

/* json mode: the pairs as a JSON object; map mode: a map of strings; both
 * in the order Debezium's Java map has them. */
static tb_value_t *hstore_value(const tb_schema_t *schema, const char *text)
{
    json_t *read = hstore_pairs(text);
    json_t *pairs = read != NULL ? tb_pg_java_hashmap_order(read) : NULL;
    tb_value_t *v = NULL;
    json_decref(read);
    if (pairs == NULL) {
        return NULL;
    }
    if (tb_schema_type(schema) == TB_TYPE_STRING) {
        char *json = json_dumps(pairs, JSON_COMPACT | JSON_PRESERVE_ORDER);
        v = json != NULL ? tb_value_string(json, strlen(json)) : NULL;
        free(json);
    } else if ((v = tb_value_map()) != NULL) {
        const char *key;
        json_t *item;
        json_object_foreach (pairs, key, item) {
            const char *s = json_string_value(item);
            if (tb_value_map_put(v, tb_value_string(key, strlen(key)),
                                 s != NULL ? tb_value_string(s, strlen(s)) : NULL) != 0) {
                tb_value_free(v);
                v = NULL;
                break;
            }
        }
    }
    json_decref(pairs);
    return v;
}

int tb_pg_more_value(const tb_pg_type_t *t, const tb_schema_t *schema, const char *text,
                     tb_value_t **out)
{
    switch (kind_of(t)) {
    case KIND_BITS:
        *out = bits_value(schema, text);
        return 1;
    case KIND_POINT:
        *out = point_value(schema, text);
        return 1;
    case KIND_HSTORE:
        *out = hstore_value(schema, text);
        return 1;
    case KIND_TEXT:
        *out = tb_value_string(text, strlen(text));
        return 1;
    default:
        return 0;
    }
}
