/*
 * avro_schema.c - Avro schemas: checked by libavro, compiled into nodes
 * that keep logical types and defaults; and schemas inferred from JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <avro.h>

#include "registry/avro/tb_avro_node.h"

#define MAX_NESTING 64
#define MAX_SCALE 1000 /* a decimal's digits after the point */

typedef struct {
    tb_avro_schema_t *schema;
    char *errstr;
    size_t errstr_size;
} compiler_t;

static const char *const kind_names[] = {
    "null",   "boolean", "int",  "long",  "float", "double", "bytes",
    "string", "record",  "enum", "array", "map",   "union",  "fixed",
};

static const struct {
    const char *name;
    tb_avro_logical_t logical;
    tb_avro_kind_t kind; /* the type it annotates */
} logicals[] = {
    {"decimal", TB_AVRO_DECIMAL, TB_AVRO_BYTES},
    {"decimal", TB_AVRO_DECIMAL, TB_AVRO_FIXED},
    {"date", TB_AVRO_DATE, TB_AVRO_INT},
    {"time-millis", TB_AVRO_TIME_MILLIS, TB_AVRO_INT},
    {"time-micros", TB_AVRO_TIME_MICROS, TB_AVRO_LONG},
    {"timestamp-millis", TB_AVRO_TIMESTAMP_MILLIS, TB_AVRO_LONG},
    {"timestamp-micros", TB_AVRO_TIMESTAMP_MICROS, TB_AVRO_LONG},
    {"local-timestamp-millis", TB_AVRO_LOCAL_TIMESTAMP_MILLIS, TB_AVRO_LONG},
    {"local-timestamp-micros", TB_AVRO_LOCAL_TIMESTAMP_MICROS, TB_AVRO_LONG},
    {"uuid", TB_AVRO_UUID, TB_AVRO_STRING},
};

const char *tb_avro_branch_name(const tb_avro_node_t *node)
{
    return node->fullname != NULL ? node->fullname : kind_names[node->kind];
}

static tb_avro_node_t *node_new(compiler_t *c, tb_avro_kind_t kind)
{
    tb_avro_schema_t *s = c->schema;
    tb_avro_node_t *node = calloc(1, sizeof(*node));
    if (node == NULL) {
        return NULL;
    }
    if (s->node_count == s->node_cap) {
        size_t cap = s->node_cap > 0 ? s->node_cap * 2 : 16;
        tb_avro_node_t **nodes = realloc(s->nodes, cap * sizeof(*nodes));
        if (nodes == NULL) {
            free(node);
            return NULL;
        }
        s->nodes = nodes;
        s->node_cap = cap;
    }
    s->nodes[s->node_count++] = node;
    node->kind = kind;
    return node;
}

static void node_free(tb_avro_node_t *node)
{
    for (size_t i = 0; i < node->count; i++) {
        if (node->names != NULL) {
            free(node->names[i]);
        }
        if (node->defaults != NULL) {
            json_decref(node->defaults[i]);
        }
    }
    free(node->names);
    free(node->defaults);
    free(node->children);
    free(node->fullname);
    json_decref(node->props);
    free(node);
}

void tb_avro_schema_destroy(tb_avro_schema_t *schema)
{
    if (schema == NULL) {
        return;
    }
    for (size_t i = 0; i < schema->node_count; i++) {
        node_free(schema->nodes[i]);
    }
    free(schema->nodes);
    free(schema);
}

static tb_avro_node_t *fail(compiler_t *c, const char *what, const char *detail)
{
    snprintf(c->errstr, c->errstr_size, "invalid Avro schema: %s%s", what,
             detail != NULL ? detail : "");
    return NULL;
}

static tb_avro_node_t *find_named(compiler_t *c, const char *fullname)
{
    for (size_t i = 0; i < c->schema->node_count; i++) {
        const char *name = c->schema->nodes[i]->fullname;
        if (name != NULL && strcmp(name, fullname) == 0) {
            return c->schema->nodes[i];
        }
    }
    return NULL;
}

/* A type name used as a reference: as it is, then in namespace. */
static tb_avro_node_t *resolve(compiler_t *c, const char *name, const char *namespace)
{
    if (strchr(name, '.') == NULL && namespace != NULL && namespace[0] != '\0') {
        char full[512];
        snprintf(full, sizeof(full), "%s.%s", namespace, name);
        tb_avro_node_t *node = find_named(c, full);
        if (node != NULL) {
            return node;
        }
    }
    return find_named(c, name);
}

static tb_avro_node_t *compile(compiler_t *c, const json_t *json, const char *namespace,
                               int depth);

static int primitive_kind(const char *name, tb_avro_kind_t *kind)
{
    for (int k = TB_AVRO_NULL; k <= TB_AVRO_STRING; k++) {
        if (strcmp(name, kind_names[k]) == 0) {
            *kind = (tb_avro_kind_t)k;
            return 0;
        }
    }
    return -1;
}

static tb_avro_node_t *compile_name(compiler_t *c, const char *name,
                                    const char *namespace)
{
    tb_avro_kind_t kind;
    if (primitive_kind(name, &kind) == 0) {
        return node_new(c, kind);
    }
    tb_avro_node_t *node = resolve(c, name, namespace);
    return node != NULL ? node : fail(c, "unknown type ", name);
}

/* Sets node's full name from json's name and namespace; *namespace_out is
 * the namespace its children are in. */
static int name_node(compiler_t *c, tb_avro_node_t *node, const json_t *json,
                     const char *namespace, char **namespace_out)
{
    const char *name = json_string_value(json_object_get(json, "name"));
    const char *own = json_string_value(json_object_get(json, "namespace"));
    const char *dot;
    if (name == NULL) {
        fail(c, "a named type has no name", NULL);
        return -1;
    }
    if (strchr(name, '.') != NULL) {
        node->fullname = strdup(name);
    } else if ((own != NULL ? own : namespace) != NULL &&
               (own != NULL ? own : namespace)[0] != '\0') {
        const char *ns = own != NULL ? own : namespace;
        node->fullname = malloc(strlen(ns) + strlen(name) + 2);
        if (node->fullname != NULL) {
            sprintf(node->fullname, "%s.%s", ns, name);
        }
    } else {
        node->fullname = strdup(name);
    }
    if (node->fullname == NULL) {
        fail(c, "out of memory", NULL);
        return -1;
    }
    dot = strrchr(node->fullname, '.');
    *namespace_out = dot != NULL ? strndup(node->fullname, (size_t)(dot - node->fullname))
                                 : strdup("");
    return *namespace_out != NULL ? 0 : -1;
}

static int alloc_members(tb_avro_node_t *node, size_t count, bool names, bool defaults)
{
    node->count = count;
    node->children = calloc(count > 0 ? count : 1, sizeof(*node->children));
    node->names = names ? calloc(count > 0 ? count : 1, sizeof(*node->names)) : NULL;
    node->defaults =
        defaults ? calloc(count > 0 ? count : 1, sizeof(*node->defaults)) : NULL;
    return node->children == NULL || (names && node->names == NULL) ||
                   (defaults && node->defaults == NULL)
               ? -1
               : 0;
}

static tb_avro_node_t *compile_record(compiler_t *c, const json_t *json,
                                      const char *namespace, int depth)
{
    const json_t *fields = json_object_get(json, "fields");
    tb_avro_node_t *node = node_new(c, TB_AVRO_RECORD);
    char *inner = NULL;
    size_t i;
    const json_t *field;

    if (node == NULL || name_node(c, node, json, namespace, &inner) != 0 ||
        alloc_members(node, json_array_size(fields), true, true) != 0) {
        free(inner);
        return node != NULL ? fail(c, "cannot compile record", NULL) : NULL;
    }
    json_array_foreach (fields, i, field) {
        const char *name = json_string_value(json_object_get(field, "name"));
        const json_t *value = json_object_get(field, "default");
        node->names[i] = strdup(name != NULL ? name : "");
        node->defaults[i] = value != NULL ? json_incref((json_t *)value) : NULL;
        node->children[i] = compile(c, json_object_get(field, "type"), inner, depth + 1);
        if (node->children[i] == NULL || node->names[i] == NULL) {
            free(inner);
            return NULL;
        }
    }
    free(inner);
    return node;
}

static tb_avro_node_t *compile_enum(compiler_t *c, const json_t *json,
                                    const char *namespace)
{
    const json_t *symbols = json_object_get(json, "symbols");
    tb_avro_node_t *node = node_new(c, TB_AVRO_ENUM);
    char *inner = NULL;
    size_t i;
    const json_t *symbol;

    if (node == NULL || name_node(c, node, json, namespace, &inner) != 0 ||
        alloc_members(node, json_array_size(symbols), true, false) != 0) {
        free(inner);
        return fail(c, "cannot compile enum", NULL);
    }
    free(inner);
    json_array_foreach (symbols, i, symbol) {
        node->names[i] = strdup(json_string_value(symbol));
        if (node->names[i] == NULL) {
            return fail(c, "out of memory", NULL);
        }
    }
    return node;
}

static tb_avro_node_t *compile_fixed(compiler_t *c, const json_t *json,
                                     const char *namespace)
{
    tb_avro_node_t *node = node_new(c, TB_AVRO_FIXED);
    char *inner = NULL;
    if (node == NULL || name_node(c, node, json, namespace, &inner) != 0) {
        free(inner);
        return fail(c, "cannot compile fixed", NULL);
    }
    free(inner);
    node->size = (size_t)json_integer_value(json_object_get(json, "size"));
    return node;
}

static tb_avro_node_t *compile_container(compiler_t *c, const json_t *json,
                                         tb_avro_kind_t kind, const char *namespace,
                                         int depth)
{
    tb_avro_node_t *node = node_new(c, kind);
    if (node == NULL || alloc_members(node, 1, false, false) != 0) {
        return fail(c, "out of memory", NULL);
    }
    node->count = 0; /* the item type is no member to free by name */
    node->children[0] =
        compile(c, json_object_get(json, kind == TB_AVRO_ARRAY ? "items" : "values"),
                namespace, depth + 1);
    return node->children[0] != NULL ? node : NULL;
}

static tb_avro_node_t *compile_union(compiler_t *c, const json_t *json,
                                     const char *namespace, int depth)
{
    tb_avro_node_t *node = node_new(c, TB_AVRO_UNION);
    size_t i;
    const json_t *branch;
    if (node == NULL || alloc_members(node, json_array_size(json), false, false) != 0) {
        return fail(c, "out of memory", NULL);
    }
    json_array_foreach (json, i, branch) {
        node->children[i] = compile(c, branch, namespace, depth + 1);
        if (node->children[i] == NULL) {
            return NULL;
        }
    }
    return node;
}

/* Applies a logicalType annotation that fits; others are ignored, as the
 * specification asks. */
static void annotate(tb_avro_node_t *node, const json_t *json)
{
    const char *name = json_string_value(json_object_get(json, "logicalType"));
    if (node->props == NULL) {
        node->props = json_incref((json_t *)json);
    }
    if (name == NULL || node->logical != TB_AVRO_PLAIN) {
        return;
    }
    for (size_t i = 0; i < sizeof(logicals) / sizeof(logicals[0]); i++) {
        if (strcmp(name, logicals[i].name) == 0 && node->kind == logicals[i].kind) {
            node->logical = logicals[i].logical;
            json_int_t scale = json_integer_value(json_object_get(json, "scale"));
            node->scale = scale > 0 && scale <= MAX_SCALE ? (int)scale : 0;
        }
    }
}

static tb_avro_node_t *compile_object(compiler_t *c, const json_t *json,
                                      const char *namespace, int depth)
{
    const json_t *type = json_object_get(json, "type");
    const char *name = json_string_value(type);
    tb_avro_node_t *node;

    if (name == NULL) {
        return compile(c, type, namespace, depth + 1);
    }
    if (strcmp(name, "record") == 0 || strcmp(name, "error") == 0) {
        node = compile_record(c, json, namespace, depth);
    } else if (strcmp(name, "enum") == 0) {
        node = compile_enum(c, json, namespace);
    } else if (strcmp(name, "fixed") == 0) {
        node = compile_fixed(c, json, namespace);
    } else if (strcmp(name, "array") == 0) {
        node = compile_container(c, json, TB_AVRO_ARRAY, namespace, depth);
    } else if (strcmp(name, "map") == 0) {
        node = compile_container(c, json, TB_AVRO_MAP, namespace, depth);
    } else {
        tb_avro_kind_t kind;
        node = primitive_kind(name, &kind) == 0 ? node_new(c, kind)
                                                : compile_name(c, name, namespace);
        if (node != NULL && node->fullname != NULL) {
            return node; /* a reference: not annotated here */
        }
    }
    if (node != NULL) {
        annotate(node, json);
    }
    return node;
}

static tb_avro_node_t *compile(compiler_t *c, const json_t *json, const char *namespace,
                               int depth)
{
    if (depth > MAX_NESTING) {
        return fail(c, "nested too deeply", NULL);
    }
    if (json_is_string(json)) {
        return compile_name(c, json_string_value(json), namespace);
    }
    if (json_is_array(json)) {
        return compile_union(c, json, namespace, depth);
    }
    if (json_is_object(json)) {
        return compile_object(c, json, namespace, depth);
    }
    return fail(c, "a type is neither a name, an object nor a union", NULL);
}

/* libavro's verdict on text. With references, text is checked together with
 * them, as the branches of one union (which defines their names in order). */
static int check_with_libavro(compiler_t *c, const char *text, const json_t *references)
{
    avro_schema_t checked = NULL;
    char *combined = NULL;
    int rc;

    if (json_object_size(references) > 0) {
        json_t *all = json_array();
        json_t *main_json = json_loads(text, JSON_DECODE_ANY, NULL);
        const char *name;
        json_t *ref;
        json_object_foreach ((json_t *)references, name, ref) {
            json_array_append_new(
                all, json_loads(json_string_value(ref), JSON_DECODE_ANY, NULL));
        }
        if (json_is_array(main_json)) {
            json_array_extend(all, main_json);
        } else {
            json_array_append(all, main_json);
        }
        combined = json_dumps(all, JSON_COMPACT);
        json_decref(all);
        json_decref(main_json);
    }
    const char *checked_text = combined != NULL ? combined : text;
    rc = avro_schema_from_json_length(checked_text, strlen(checked_text), &checked);
    if (rc != 0) {
        snprintf(c->errstr, c->errstr_size, "invalid Avro schema: %s", avro_strerror());
    }
    avro_schema_decref(checked);
    free(combined);
    return rc != 0 ? -1 : 0;
}

/* Compiles the text of one schema; the root when is_root. */
static int compile_text(compiler_t *c, const char *text, bool is_root)
{
    json_error_t error;
    json_t *json = json_loads(text, JSON_DECODE_ANY, &error);
    if (json == NULL) {
        snprintf(c->errstr, c->errstr_size, "invalid Avro schema: %s", error.text);
        return -1;
    }
    tb_avro_node_t *node = compile(c, json, NULL, 0);
    json_decref(json);
    if (is_root) {
        c->schema->root = node;
    }
    return node != NULL ? 0 : -1;
}

tb_avro_schema_t *tb_avro_schema_create(const char *text, const json_t *references,
                                        char *errstr, size_t errstr_size)
{
    compiler_t c = {.errstr = errstr, .errstr_size = errstr_size};
    const char *name;
    json_t *ref;

    c.schema = calloc(1, sizeof(*c.schema));
    if (c.schema == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    if (check_with_libavro(&c, text, references) != 0) {
        goto fail;
    }
    json_object_foreach ((json_t *)references, name, ref) {
        if (compile_text(&c, json_string_value(ref), false) != 0) {
            goto fail;
        }
    }
    if (compile_text(&c, text, true) != 0) {
        goto fail;
    }
    return c.schema;

fail:
    tb_avro_schema_destroy(c.schema);
    return NULL;
}

const char *tb_avro_schema_name(const tb_avro_schema_t *schema)
{
    return schema->root->fullname;
}

int tb_avro_schema_takes_text(const tb_avro_schema_t *schema)
{
    return schema->root->kind == TB_AVRO_STRING || schema->root->kind == TB_AVRO_BYTES;
}

/* -------------------------------------------------------------------------
 * Inference
 */

typedef struct {
    int records; /* ConnectDefault names given so far */
    char *errstr;
    size_t errstr_size;
} inferrer_t;

static json_t *infer(inferrer_t *in, const json_t *value, int depth);

static bool valid_name(const char *name)
{
    if (!((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z') ||
          name[0] == '_')) {
        return false;
    }
    for (const char *p = name + 1; *p != '\0'; p++) {
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9') || *p == '_')) {
            return false;
        }
    }
    return true;
}

static json_t *infer_record(inferrer_t *in, const json_t *object, int depth)
{
    char name[32];
    json_t *fields = json_array();
    const char *key;
    json_t *member;

    in->records++;
    if (in->records == 1) {
        snprintf(name, sizeof(name), "ConnectDefault");
    } else {
        snprintf(name, sizeof(name), "ConnectDefault%d", in->records);
    }
    json_object_foreach ((json_t *)object, key, member) {
        if (!valid_name(key)) {
            snprintf(in->errstr, in->errstr_size, "field name \"%s\" is not an Avro name",
                     key);
            json_decref(fields);
            return NULL;
        }
        json_t *type = infer(in, member, depth + 1);
        if (type == NULL) {
            json_decref(fields);
            return NULL;
        }
        json_t *field = json_pack("{s:s, s:o}", "name", key, "type", type);
        if (json_is_null(member)) {
            json_object_set_new(field, "default", json_null());
        }
        json_array_append_new(fields, field);
    }
    return json_pack("{s:s, s:s, s:s, s:o}", "type", "record", "name", name, "namespace",
                     "io.confluent.connect.avro", "fields", fields);
}

static json_t *infer(inferrer_t *in, const json_t *value, int depth)
{
    if (depth > MAX_NESTING) {
        snprintf(in->errstr, in->errstr_size, "the value is nested too deeply");
        return NULL;
    }
    switch (json_typeof(value)) {
    case JSON_OBJECT:
        return infer_record(in, value, depth);
    case JSON_ARRAY: {
        json_t *items = json_array_size(value) > 0
                            ? infer(in, json_array_get(value, 0), depth + 1)
                            : json_string("string");
        return items != NULL ? json_pack("{s:s, s:o}", "type", "array", "items", items)
                             : NULL;
    }
    case JSON_STRING:
        return json_string("string");
    case JSON_INTEGER:
        return json_string("long");
    case JSON_REAL:
        return json_string("double");
    case JSON_TRUE:
    case JSON_FALSE:
        return json_string("boolean");
    case JSON_NULL:
        break;
    }
    return json_pack("[s, s]", "null", "string");
}

char *tb_avro_infer(const json_t *value, char *errstr, size_t errstr_size)
{
    inferrer_t in = {.errstr = errstr, .errstr_size = errstr_size};
    json_t *schema = infer(&in, value, 0);
    char *text =
        schema != NULL ? json_dumps(schema, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_decref(schema);
    return text;
}
