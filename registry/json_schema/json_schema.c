/*
 * json_schema.c - draft-7 validation (tb_json_schema.h). The schema stays
 * jansson's tree; its patterns are compiled once.
 */
#include <math.h>
#include <stdbool.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry/json_schema/tb_json_schema.h"

#define MAX_DEPTH 64

typedef struct {
    const char *source; /* borrowed from the schema tree */
    regex_t regex;
} pattern_t;

struct tb_json_schema {
    json_t *root;
    json_t *references; /* name -> parsed schema */
    pattern_t *patterns;
    size_t pattern_count;
};

typedef struct {
    const tb_json_schema_t *schema;
    char *errstr;
    size_t errstr_size;
    char where[256];
} validator_t;

/* -------------------------------------------------------------------------
 * Compiling
 */

static int add_pattern(tb_json_schema_t *s, const char *source, char *errstr,
                       size_t errstr_size)
{
    pattern_t *grown = realloc(s->patterns, (s->pattern_count + 1) * sizeof(*grown));
    if (grown == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    s->patterns = grown;
    pattern_t *p = &s->patterns[s->pattern_count];
    if (regcomp(&p->regex, source, REG_EXTENDED | REG_NOSUB) != 0) {
        snprintf(errstr, errstr_size, "invalid JSON schema: pattern %s", source);
        return -1;
    }
    p->source = source;
    s->pattern_count++;
    return 0;
}

/* Compiles every pattern and patternProperties key under node. */
static int collect_patterns(tb_json_schema_t *s, const json_t *node, int depth,
                            char *errstr, size_t errstr_size)
{
    const char *key;
    const json_t *child;
    size_t i;

    if (depth > MAX_DEPTH) {
        snprintf(errstr, errstr_size, "invalid JSON schema: nested too deeply");
        return -1;
    }
    if (json_is_array(node)) {
        json_array_foreach (node, i, child) {
            if (collect_patterns(s, child, depth + 1, errstr, errstr_size) != 0) {
                return -1;
            }
        }
        return 0;
    }
    json_object_foreach ((json_t *)node, key, child) {
        if (strcmp(key, "pattern") == 0 && json_is_string(child) &&
            add_pattern(s, json_string_value(child), errstr, errstr_size) != 0) {
            return -1;
        }
        if (strcmp(key, "patternProperties") == 0 && json_is_object(child)) {
            const char *source;
            const json_t *sub;
            json_object_foreach ((json_t *)child, source, sub) {
                if (add_pattern(s, source, errstr, errstr_size) != 0) {
                    return -1;
                }
            }
        }
        if (collect_patterns(s, child, depth + 1, errstr, errstr_size) != 0) {
            return -1;
        }
    }
    return 0;
}

static json_t *parse_schema(const char *text, char *errstr, size_t errstr_size)
{
    json_error_t error;
    json_t *json = json_loads(text, JSON_DECODE_ANY, &error);
    if (json == NULL || !(json_is_object(json) || json_is_boolean(json))) {
        snprintf(errstr, errstr_size, "invalid JSON schema: %s",
                 json == NULL ? error.text : "neither an object nor a boolean");
        json_decref(json);
        return NULL;
    }
    return json;
}

tb_json_schema_t *tb_json_schema_create(const char *text, const json_t *references,
                                        char *errstr, size_t errstr_size)
{
    tb_json_schema_t *s = calloc(1, sizeof(*s));
    const char *name;
    json_t *ref;

    if (s == NULL || (s->references = json_object()) == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    s->root = parse_schema(text, errstr, errstr_size);
    if (s->root == NULL || collect_patterns(s, s->root, 0, errstr, errstr_size) != 0) {
        goto fail;
    }
    json_object_foreach ((json_t *)references, name, ref) {
        json_t *parsed = parse_schema(json_string_value(ref), errstr, errstr_size);
        if (parsed == NULL || json_object_set_new(s->references, name, parsed) != 0 ||
            collect_patterns(s, parsed, 0, errstr, errstr_size) != 0) {
            goto fail;
        }
    }
    return s;

fail:
    tb_json_schema_destroy(s);
    return NULL;
}

const json_t *tb_json_schema_root(const tb_json_schema_t *schema)
{
    return schema->root;
}

void tb_json_schema_destroy(tb_json_schema_t *schema)
{
    if (schema == NULL) {
        return;
    }
    for (size_t i = 0; i < schema->pattern_count; i++) {
        regfree(&schema->patterns[i].regex);
    }
    free(schema->patterns);
    json_decref(schema->root);
    json_decref(schema->references);
    free(schema);
}

const char *tb_json_schema_title(const tb_json_schema_t *schema)
{
    return json_string_value(json_object_get(schema->root, "title"));
}

int tb_json_schema_takes_text(const tb_json_schema_t *schema)
{
    const char *type = json_string_value(json_object_get(schema->root, "type"));
    return type != NULL && strcmp(type, "string") == 0;
}

/* -------------------------------------------------------------------------
 * Validating
 */

static int invalid(validator_t *v, const char *keyword, const char *detail)
{
    snprintf(v->errstr, v->errstr_size, "JSON schema validation failed at %s: %s%s%s",
             v->where[0] != '\0' ? v->where : "the top level", keyword,
             detail != NULL ? ": " : "", detail != NULL ? detail : "");
    return -1;
}

static bool matches(const validator_t *v, const char *source, const char *text)
{
    for (size_t i = 0; i < v->schema->pattern_count; i++) {
        if (strcmp(v->schema->patterns[i].source, source) == 0) {
            return regexec(&v->schema->patterns[i].regex, text, 0, NULL, 0) == 0;
        }
    }
    return false;
}

static int check(validator_t *v, const json_t *schema, const json_t *value, int depth);

/* check() without keeping its message (for anyOf, oneOf, not, if). */
static bool passes(validator_t *v, const json_t *schema, const json_t *value, int depth)
{
    char saved[512];
    snprintf(saved, sizeof(saved), "%s", v->errstr);
    bool ok = check(v, schema, value, depth) == 0;
    snprintf(v->errstr, v->errstr_size, "%s", saved);
    return ok;
}

/* Checks value under a member name or index, extending where. */
static int check_at(validator_t *v, const json_t *schema, const json_t *value,
                    const char *name, size_t index, int depth)
{
    size_t len = strlen(v->where);
    if (name != NULL) {
        snprintf(v->where + len, sizeof(v->where) - len, "/%s", name);
    } else {
        snprintf(v->where + len, sizeof(v->where) - len, "/%zu", index);
    }
    int rc = check(v, schema, value, depth + 1);
    if (rc == 0) {
        v->where[len] = '\0';
    }
    return rc;
}

static bool type_is(const char *type, const json_t *value)
{
    if (strcmp(type, "integer") == 0) {
        return json_is_integer(value) ||
               (json_is_real(value) &&
                floor(json_real_value(value)) == json_real_value(value));
    }
    static const struct {
        const char *name;
        json_type types[2];
    } kinds[] = {
        {"object", {JSON_OBJECT, JSON_OBJECT}}, {"array", {JSON_ARRAY, JSON_ARRAY}},
        {"string", {JSON_STRING, JSON_STRING}}, {"number", {JSON_INTEGER, JSON_REAL}},
        {"boolean", {JSON_TRUE, JSON_FALSE}},   {"null", {JSON_NULL, JSON_NULL}},
    };
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcmp(type, kinds[i].name) == 0) {
            return json_typeof(value) == kinds[i].types[0] ||
                   json_typeof(value) == kinds[i].types[1];
        }
    }
    return false;
}

static int check_type(validator_t *v, const json_t *type, const json_t *value)
{
    size_t i;
    const json_t *one;
    if (json_is_string(type)) {
        return type_is(json_string_value(type), value)
                   ? 0
                   : invalid(v, "type", json_string_value(type));
    }
    json_array_foreach (type, i, one) {
        if (json_is_string(one) && type_is(json_string_value(one), value)) {
            return 0;
        }
    }
    return invalid(v, "type", "none of the types");
}

/* Equality with numbers compared by value (1 equals 1.0). */
static bool same(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) {
        return json_number_value(a) == json_number_value(b);
    }
    return json_equal(a, b);
}

static int check_enum(validator_t *v, const json_t *choices, const json_t *value)
{
    size_t i;
    const json_t *choice;
    json_array_foreach (choices, i, choice) {
        if (same(choice, value)) {
            return 0;
        }
    }
    return invalid(v, "enum", NULL);
}

static int check_number(validator_t *v, const json_t *s, const json_t *value)
{
    double x = json_number_value(value);
    const json_t *k;
    if ((k = json_object_get(s, "minimum")) != NULL && x < json_number_value(k)) {
        return invalid(v, "minimum", NULL);
    }
    if ((k = json_object_get(s, "maximum")) != NULL && x > json_number_value(k)) {
        return invalid(v, "maximum", NULL);
    }
    if ((k = json_object_get(s, "exclusiveMinimum")) != NULL && json_is_number(k) &&
        x <= json_number_value(k)) {
        return invalid(v, "exclusiveMinimum", NULL);
    }
    if ((k = json_object_get(s, "exclusiveMaximum")) != NULL && json_is_number(k) &&
        x >= json_number_value(k)) {
        return invalid(v, "exclusiveMaximum", NULL);
    }
    if ((k = json_object_get(s, "multipleOf")) != NULL && json_number_value(k) > 0) {
        double q = x / json_number_value(k);
        if (fabs(q - round(q)) > 1e-9) {
            return invalid(v, "multipleOf", NULL);
        }
    }
    return 0;
}

static size_t code_points(const char *s)
{
    size_t n = 0;
    for (; *s != '\0'; s++) {
        n += ((unsigned char)*s & 0xc0) != 0x80;
    }
    return n;
}

static int check_string(validator_t *v, const json_t *s, const json_t *value)
{
    const char *text = json_string_value(value);
    const json_t *k;
    size_t n = code_points(text);
    if ((k = json_object_get(s, "minLength")) != NULL &&
        n < (size_t)json_integer_value(k)) {
        return invalid(v, "minLength", NULL);
    }
    if ((k = json_object_get(s, "maxLength")) != NULL &&
        n > (size_t)json_integer_value(k)) {
        return invalid(v, "maxLength", NULL);
    }
    if ((k = json_object_get(s, "pattern")) != NULL && json_is_string(k) &&
        !matches(v, json_string_value(k), text)) {
        return invalid(v, "pattern", json_string_value(k));
    }
    return 0;
}

static int check_items(validator_t *v, const json_t *s, const json_t *value, int depth)
{
    const json_t *items = json_object_get(s, "items");
    const json_t *additional = json_object_get(s, "additionalItems");
    size_t i;
    const json_t *item;

    json_array_foreach (value, i, item) {
        const json_t *schema = items;
        if (json_is_array(items)) {
            schema = i < json_array_size(items) ? json_array_get(items, i) : additional;
        }
        if (schema != NULL && check_at(v, schema, item, NULL, i, depth) != 0) {
            return -1;
        }
    }
    return 0;
}

static int check_array(validator_t *v, const json_t *s, const json_t *value, int depth)
{
    const json_t *k;
    size_t n = json_array_size(value);
    if ((k = json_object_get(s, "minItems")) != NULL &&
        n < (size_t)json_integer_value(k)) {
        return invalid(v, "minItems", NULL);
    }
    if ((k = json_object_get(s, "maxItems")) != NULL &&
        n > (size_t)json_integer_value(k)) {
        return invalid(v, "maxItems", NULL);
    }
    if (json_is_true(json_object_get(s, "uniqueItems"))) {
        for (size_t i = 0; i < n; i++) {
            for (size_t j = i + 1; j < n; j++) {
                if (same(json_array_get(value, i), json_array_get(value, j))) {
                    return invalid(v, "uniqueItems", NULL);
                }
            }
        }
    }
    if ((k = json_object_get(s, "contains")) != NULL) {
        bool found = false;
        for (size_t i = 0; i < n && !found; i++) {
            found = passes(v, k, json_array_get(value, i), depth + 1);
        }
        if (!found) {
            return invalid(v, "contains", NULL);
        }
    }
    return check_items(v, s, value, depth);
}

/* The schema additionalProperties and patternProperties give member key,
 * when properties does not name it; *pattern_hits counts the patterns. */
static int check_member(validator_t *v, const json_t *s, const char *key,
                        const json_t *member, int depth)
{
    const json_t *props = json_object_get(s, "properties");
    const json_t *patterns = json_object_get(s, "patternProperties");
    const json_t *additional = json_object_get(s, "additionalProperties");
    const json_t *names = json_object_get(s, "propertyNames");
    const char *source;
    const json_t *sub;
    bool covered = false;

    if (names != NULL) {
        json_t *name = json_string(key);
        bool ok = name != NULL && passes(v, names, name, depth + 1);
        json_decref(name);
        if (!ok) {
            return invalid(v, "propertyNames", key);
        }
    }
    if (json_object_get(props, key) != NULL) {
        covered = true;
        if (check_at(v, json_object_get(props, key), member, key, 0, depth) != 0) {
            return -1;
        }
    }
    json_object_foreach ((json_t *)patterns, source, sub) {
        if (matches(v, source, key)) {
            covered = true;
            if (check_at(v, sub, member, key, 0, depth) != 0) {
                return -1;
            }
        }
    }
    if (!covered && json_is_false(additional)) {
        return invalid(v, "additionalProperties", key);
    }
    if (!covered && json_is_object(additional)) {
        return check_at(v, additional, member, key, 0, depth);
    }
    return 0;
}

static int check_dependencies(validator_t *v, const json_t *s, const json_t *value,
                              int depth)
{
    const char *key;
    const json_t *dep;
    json_object_foreach ((json_t *)json_object_get(s, "dependencies"), key, dep) {
        if (json_object_get(value, key) == NULL) {
            continue;
        }
        if (json_is_array(dep)) {
            size_t i;
            const json_t *name;
            json_array_foreach (dep, i, name) {
                if (json_object_get(value, json_string_value(name)) == NULL) {
                    return invalid(v, "dependencies", key);
                }
            }
        } else if (check(v, dep, value, depth + 1) != 0) {
            return -1;
        }
    }
    return 0;
}

static int check_object(validator_t *v, const json_t *s, const json_t *value, int depth)
{
    const json_t *k;
    size_t i;
    const json_t *name;
    const char *key;
    const json_t *member;
    size_t n = json_object_size(value);

    if ((k = json_object_get(s, "minProperties")) != NULL &&
        n < (size_t)json_integer_value(k)) {
        return invalid(v, "minProperties", NULL);
    }
    if ((k = json_object_get(s, "maxProperties")) != NULL &&
        n > (size_t)json_integer_value(k)) {
        return invalid(v, "maxProperties", NULL);
    }
    json_array_foreach (json_object_get(s, "required"), i, name) {
        if (json_object_get(value, json_string_value(name)) == NULL) {
            return invalid(v, "required", json_string_value(name));
        }
    }
    json_object_foreach ((json_t *)value, key, member) {
        if (check_member(v, s, key, member, depth) != 0) {
            return -1;
        }
    }
    return check_dependencies(v, s, value, depth);
}

const json_t *tb_json_schema_resolve(const tb_json_schema_t *schema, const char *ref)
{
    const json_t *base = schema->root;
    const char *hash = strchr(ref, '#');
    if (hash != ref) {
        char name[256];
        size_t n = hash != NULL ? (size_t)(hash - ref) : strlen(ref);
        snprintf(name, sizeof(name), "%.*s", (int)n, ref);
        base = json_object_get(schema->references, name);
    }
    if (base == NULL || hash == NULL || hash[1] == '\0') {
        return base;
    }
    /* a JSON pointer: "/definitions/name"... */
    const char *p = hash + 1;
    while (base != NULL && *p == '/') {
        char part[256];
        const char *next = strchr(p + 1, '/');
        size_t n = next != NULL ? (size_t)(next - p - 1) : strlen(p + 1);
        snprintf(part, sizeof(part), "%.*s", (int)n, p + 1);
        base = json_object_get(base, part);
        p += n + 1;
    }
    return *p == '\0' ? base : NULL;
}

static int check_combinators(validator_t *v, const json_t *s, const json_t *value,
                             int depth)
{
    size_t i;
    const json_t *sub;
    const json_t *k;

    json_array_foreach (json_object_get(s, "allOf"), i, sub) {
        if (check(v, sub, value, depth + 1) != 0) {
            return -1;
        }
    }
    if ((k = json_object_get(s, "anyOf")) != NULL) {
        bool any = false;
        json_array_foreach (k, i, sub) {
            any = any || passes(v, sub, value, depth + 1);
        }
        if (!any) {
            return invalid(v, "anyOf", NULL);
        }
    }
    if ((k = json_object_get(s, "oneOf")) != NULL) {
        size_t hits = 0;
        json_array_foreach (k, i, sub) {
            hits += passes(v, sub, value, depth + 1);
        }
        if (hits != 1) {
            return invalid(v, "oneOf", hits == 0 ? "no branch" : "several branches");
        }
    }
    if ((k = json_object_get(s, "not")) != NULL && passes(v, k, value, depth + 1)) {
        return invalid(v, "not", NULL);
    }
    if ((k = json_object_get(s, "if")) != NULL) {
        const json_t *then =
            json_object_get(s, passes(v, k, value, depth + 1) ? "then" : "else");
        if (then != NULL && check(v, then, value, depth + 1) != 0) {
            return -1;
        }
    }
    return 0;
}

static int check(validator_t *v, const json_t *s, const json_t *value, int depth)
{
    const json_t *k;
    if (depth > MAX_DEPTH) {
        return invalid(v, "$ref", "nested too deeply");
    }
    if (json_is_boolean(s)) {
        return json_is_true(s) ? 0 : invalid(v, "false", NULL);
    }
    if ((k = json_object_get(s, "$ref")) != NULL) {
        const json_t *target = tb_json_schema_resolve(
            v->schema, json_string_value(k) ? json_string_value(k) : "");
        return target != NULL ? check(v, target, value, depth + 1)
                              : invalid(v, "$ref", "cannot be resolved");
    }
    if ((k = json_object_get(s, "type")) != NULL && check_type(v, k, value) != 0) {
        return -1;
    }
    if ((k = json_object_get(s, "enum")) != NULL && check_enum(v, k, value) != 0) {
        return -1;
    }
    if ((k = json_object_get(s, "const")) != NULL && !same(k, value)) {
        return invalid(v, "const", NULL);
    }
    if ((json_is_number(value) && check_number(v, s, value) != 0) ||
        (json_is_string(value) && check_string(v, s, value) != 0) ||
        (json_is_array(value) && check_array(v, s, value, depth) != 0) ||
        (json_is_object(value) && check_object(v, s, value, depth) != 0)) {
        return -1;
    }
    return check_combinators(v, s, value, depth);
}

int tb_json_schema_validate(const tb_json_schema_t *schema, const json_t *value,
                            char *errstr, size_t errstr_size)
{
    validator_t v = {.schema = schema, .errstr = errstr, .errstr_size = errstr_size};
    if (errstr_size > 0) {
        errstr[0] = '\0';
    }
    return check(&v, schema->root, value, 0);
}

/* -------------------------------------------------------------------------
 * Inference
 */

static json_t *infer(const json_t *value, int depth, bool titled);

static json_t *infer_object(const json_t *object, int depth, bool titled)
{
    json_t *props = json_object();
    json_t *required = json_array();
    const char *key;
    json_t *member;
    json_object_foreach ((json_t *)object, key, member) {
        json_t *sub = infer(member, depth + 1, false);
        if (sub == NULL) {
            json_decref(props);
            json_decref(required);
            return NULL;
        }
        json_object_set_new(props, key, sub);
        if (!json_is_null(member)) {
            json_array_append_new(required, json_string(key));
        }
    }
    json_t *schema =
        json_pack("{s:s, s:o, s:o, s:b}", "type", "object", "properties", props,
                  "required", required, "additionalProperties", false);
    if (titled && schema != NULL) {
        json_object_set_new(schema, "title", json_string("ConnectDefault"));
    }
    return schema;
}

static json_t *infer(const json_t *value, int depth, bool titled)
{
    if (depth > MAX_DEPTH) {
        return NULL;
    }
    switch (json_typeof(value)) {
    case JSON_OBJECT:
        return infer_object(value, depth, titled);
    case JSON_ARRAY: {
        json_t *items = json_array_size(value) > 0
                            ? infer(json_array_get(value, 0), depth + 1, false)
                            : json_object();
        return items != NULL ? json_pack("{s:s, s:o}", "type", "array", "items", items)
                             : NULL;
    }
    case JSON_STRING:
        return json_pack("{s:s}", "type", "string");
    case JSON_INTEGER:
        return json_pack("{s:s}", "type", "integer");
    case JSON_REAL:
        return json_pack("{s:s}", "type", "number");
    case JSON_TRUE:
    case JSON_FALSE:
        return json_pack("{s:s}", "type", "boolean");
    case JSON_NULL:
        break;
    }
    return json_pack("{s:[s, s]}", "type", "null", "string");
}

char *tb_json_schema_infer(const json_t *value, char *errstr, size_t errstr_size)
{
    json_t *schema = infer(value, 0, true);
    char *text = schema != NULL ? json_dumps(schema, JSON_COMPACT) : NULL;
    json_decref(schema);
    if (text == NULL) {
        snprintf(errstr, errstr_size, "cannot infer a JSON schema: nested too deeply");
    }
    return text;
}
