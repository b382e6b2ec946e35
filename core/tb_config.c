#include "core/tb_config.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const type_names[] = {
    [TB_CONFIG_BOOLEAN] = "BOOLEAN",   [TB_CONFIG_STRING] = "STRING",
    [TB_CONFIG_INT] = "INT",           [TB_CONFIG_SHORT] = "SHORT",
    [TB_CONFIG_LONG] = "LONG",         [TB_CONFIG_DOUBLE] = "DOUBLE",
    [TB_CONFIG_LIST] = "LIST",         [TB_CONFIG_CLASS] = "CLASS",
    [TB_CONFIG_PASSWORD] = "PASSWORD",
};
static const char *const importance_names[] = {"HIGH", "MEDIUM", "LOW"};
static const char *const width_names[] = {"NONE", "SHORT", "MEDIUM", "LONG"};

const char *tb_config_type_name(tb_config_type_t type)
{
    return type_names[type];
}

const tb_config_def_t *tb_config_find(const tb_config_table_t *const *tables,
                                      size_t ntables, const char *name)
{
    for (size_t t = 0; t < ntables; t++) {
        for (size_t i = 0; i < tables[t]->count; i++) {
            if (strcmp(tables[t]->defs[i].name, name) == 0) {
                return &tables[t]->defs[i];
            }
        }
    }
    return NULL;
}

void tb_config_error_add(json_t *errors, const char *key, const char *message)
{
    json_t *list = json_object_get(errors, key);
    if (list == NULL) {
        list = json_array();
        json_object_set_new(errors, key, list);
    }
    json_array_append_new(list, json_string(message));
}

size_t tb_config_errors_join(const json_t *errors, const char *separator, char *buf,
                             size_t size)
{
    size_t used = 0;
    const char *key;
    json_t *list;
    if (size > 0) {
        buf[0] = '\0';
    }
    json_object_foreach ((json_t *)errors, key, list) {
        size_t i;
        json_t *message;
        json_array_foreach (list, i, message) {
            if (used < size) {
                used +=
                    (size_t)snprintf(buf + used, size - used, "%s%s",
                                     used ? separator : "", json_string_value(message));
            }
        }
    }
    return used < size ? used : (size > 0 ? size - 1 : 0);
}

size_t tb_config_error_count(const json_t *errors)
{
    const char *key;
    json_t *list;
    size_t count = 0;
    json_object_foreach ((json_t *)errors, key, list) {
        count += json_array_size(list);
    }
    return count;
}

/* A trimmed copy of s (malloc'd). */
static char *trimmed(const char *s)
{
    while (isspace((unsigned char)*s)) {
        s++;
    }
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) {
        n--;
    }
    return strndup(s, n);
}

static json_t *parse_list(const char *text)
{
    json_t *list = json_array();
    char *copy = trimmed(text);
    if (*copy != '\0') {
        char *save = NULL;
        for (char *item = strtok_r(copy, ",", &save); item != NULL;
             item = strtok_r(NULL, ",", &save)) {
            char *clean = trimmed(item);
            json_array_append_new(list, json_string(clean));
            free(clean);
        }
    }
    free(copy);
    return list;
}

static json_t *parse_integer(const char *text, long long min, long long max)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min || v > max) {
        return NULL;
    }
    return json_integer(v);
}

/* The spelling def's one_of lists for text, matched case-insensitively as
 * Connect matches enums; text itself when def has no list or does not list
 * it (check_value refuses it then). */
static const char *listed_spelling(const tb_config_def_t *def, const char *text)
{
    for (size_t i = 0; def->one_of != NULL && def->one_of[i] != NULL; i++) {
        if (strcasecmp(text, def->one_of[i]) == 0) {
            return def->one_of[i];
        }
    }
    return text;
}

/* Parses text as def's type. Returns NULL with reason filled on failure. */
static json_t *parse_value(const tb_config_def_t *def, const char *text, char *reason,
                           size_t reason_size)
{
    json_t *value = NULL;
    char *clean = trimmed(text);

    switch (def->type) {
    case TB_CONFIG_BOOLEAN:
        if (strcasecmp(clean, "true") == 0 || strcasecmp(clean, "false") == 0) {
            value = json_boolean(strcasecmp(clean, "true") == 0);
        } else {
            snprintf(reason, reason_size, "Expected value to be either true or false");
        }
        break;
    case TB_CONFIG_INT:
        value = parse_integer(clean, INT32_MIN, INT32_MAX);
        break;
    case TB_CONFIG_SHORT:
        value = parse_integer(clean, INT16_MIN, INT16_MAX);
        break;
    case TB_CONFIG_LONG:
        value = parse_integer(clean, INT64_MIN, INT64_MAX);
        break;
    case TB_CONFIG_DOUBLE: {
        char *end;
        errno = 0;
        double d = strtod(clean, &end);
        if (errno == 0 && end != clean && *end == '\0' && isfinite(d)) {
            value = json_real(d);
        }
        break;
    }
    case TB_CONFIG_LIST:
        value = parse_list(clean);
        break;
    case TB_CONFIG_PASSWORD:
        value = json_string(text); /* passwords keep their spaces */
        break;
    case TB_CONFIG_STRING:
    case TB_CONFIG_CLASS:
        value = json_string(listed_spelling(def, clean));
        break;
    }
    if (value == NULL && reason[0] == '\0') {
        snprintf(reason, reason_size, "Not a number of type %s", type_names[def->type]);
    }
    free(clean);
    return value;
}

static double number_of(const json_t *value)
{
    return json_is_integer(value) ? (double)json_integer_value(value)
                                  : json_real_value(value);
}

/* Runs the declarative and custom checks of def on a parsed value. */
static int check_value(const tb_config_def_t *def, const json_t *value, char *reason,
                       size_t reason_size)
{
    if (def->range != NULL && json_is_number(value)) {
        double v = number_of(value);
        if (def->range->has_min && v < def->range->min) {
            snprintf(reason, reason_size, "Value must be at least %.15g",
                     def->range->min);
            return -1;
        }
        if (def->range->has_max && v > def->range->max) {
            snprintf(reason, reason_size, "Value must be no more than %.15g",
                     def->range->max);
            return -1;
        }
    }
    if (def->one_of != NULL && json_is_string(value)) {
        const char *s = json_string_value(value);
        bool found = false;
        size_t used = (size_t)snprintf(reason, reason_size, "String must be one of:");
        for (size_t i = 0; def->one_of[i] != NULL; i++) {
            found = found || strcmp(s, def->one_of[i]) == 0;
            if (used < reason_size) {
                used += (size_t)snprintf(reason + used, reason_size - used, "%s %s",
                                         i ? "," : "", def->one_of[i]);
            }
        }
        if (!found) {
            return -1;
        }
        reason[0] = '\0';
    }
    if (def->check != NULL && !json_is_null(value)) {
        return def->check(value, reason, reason_size);
    }
    return 0;
}

/* The raw text of a value given in a config, or NULL when absent. Scalars
 * other than strings are accepted in their JSON spelling. */
static char *raw_text(const json_t *raw, const char *name, bool *bad_type)
{
    const json_t *v = json_object_get(raw, name);
    *bad_type = false;
    if (v == NULL || json_is_null(v)) {
        return NULL;
    }
    if (json_is_string(v)) {
        return strdup(json_string_value(v));
    }
    if (json_is_object(v) || json_is_array(v)) {
        *bad_type = true;
        return NULL;
    }
    return json_dumps(v, JSON_ENCODE_ANY);
}

json_t *tb_config_parse(const tb_config_table_t *const *tables, size_t ntables,
                        const json_t *raw, json_t *errors)
{
    json_t *values = json_object();

    for (size_t t = 0; t < ntables; t++) {
        for (size_t i = 0; i < tables[t]->count; i++) {
            const tb_config_def_t *def = &tables[t]->defs[i];
            char reason[512] = "";
            char message[1024];
            bool bad_type;
            char *text = raw_text(raw, def->name, &bad_type);
            const char *source = text != NULL ? text : def->default_value;
            json_t *value;

            if (json_object_get(values, def->name) != NULL) {
                free(text);
                continue; /* an earlier table already defines it */
            }
            if (bad_type) {
                snprintf(message, sizeof(message),
                         "Invalid value for configuration %s: must be a string",
                         def->name);
                tb_config_error_add(errors, def->name, message);
                json_object_set_new(values, def->name, json_null());
                continue;
            }
            if (source == NULL) {
                if (def->required) {
                    snprintf(message, sizeof(message),
                             "Missing required configuration \"%s\" which has "
                             "no default value.",
                             def->name);
                    tb_config_error_add(errors, def->name, message);
                }
                json_object_set_new(values, def->name, json_null());
                continue;
            }
            value = parse_value(def, source, reason, sizeof(reason));
            if (value != NULL && check_value(def, value, reason, sizeof(reason)) != 0) {
                json_decref(value);
                value = NULL;
            }
            if (value == NULL) {
                snprintf(
                    message, sizeof(message), "Invalid value %s for configuration %s: %s",
                    def->type == TB_CONFIG_PASSWORD || def->role == TB_CONFIG_ROLE_HEADERS
                        ? "[hidden]"
                        : source,
                    def->name, reason);
                tb_config_error_add(errors, def->name, message);
                value = json_null();
            }
            json_object_set_new(values, def->name, value);
            free(text);
        }
    }
    return values;
}

static json_t *default_json(const tb_config_def_t *def)
{
    if (def->required || def->default_value == NULL) {
        return json_null();
    }
    if (def->type == TB_CONFIG_PASSWORD) {
        return json_string("[hidden]");
    }
    return json_string(def->default_value);
}

/* A ConfigKeyInfo. Its position is served twice, as "order" (Connect up to
 * 4.1) and "order_in_group" (Connect 4.2 renamed it), so that clients of
 * either line read it. */
static json_t *key_info(const tb_config_def_t *def)
{
    int order = def->order ? def->order : -1;
    return json_pack("{s:s, s:s, s:b, s:o, s:s, s:s, s:o, s:s, s:s, s:[], s:i, s:i}",
                     "name", def->name, "type", type_names[def->type], "required",
                     def->required, "default_value", default_json(def), "importance",
                     importance_names[def->importance], "documentation",
                     def->documentation ? def->documentation : "", "group",
                     def->group ? json_string(def->group) : json_null(), "width",
                     width_names[def->width], "display_name",
                     def->display_name ? def->display_name : def->name, "dependents",
                     "order", order, "order_in_group", order);
}

json_t *tb_config_keys_json(const tb_config_table_t *const *tables, size_t ntables)
{
    json_t *keys = json_array();
    for (size_t t = 0; t < ntables; t++) {
        for (size_t i = 0; i < tables[t]->count; i++) {
            json_array_append_new(keys, key_info(&tables[t]->defs[i]));
        }
    }
    return keys;
}

/* The text shown as a key's value in ConfigInfos: the given value, else
 * the default; "[hidden]" for a PASSWORD. */
static json_t *shown_value(const tb_config_def_t *def, const json_t *raw)
{
    bool bad_type;
    char *text = raw_text(raw, def->name, &bad_type);
    json_t *shown;
    if (text == NULL) {
        shown = default_json(def);
    } else if (def->type == TB_CONFIG_PASSWORD) {
        shown = json_string("[hidden]");
    } else {
        shown = json_string(text);
    }
    free(text);
    return shown;
}

static json_t *value_info(const char *name, json_t *shown, const json_t *errors)
{
    json_t *list = json_object_get(errors, name);
    return json_pack("{s:s, s:o, s:[], s:o, s:b}", "name", name, "value", shown,
                     "recommended_values", "errors",
                     list ? json_incref(list) : json_array(), "visible", 1);
}

json_t *tb_config_infos(const char *name, const tb_config_table_t *const *tables,
                        size_t ntables, const json_t *raw, const json_t *errors)
{
    json_t *groups = json_array();
    json_t *configs = json_array();
    const char *key;
    json_t *list;

    for (size_t t = 0; t < ntables; t++) {
        for (size_t i = 0; i < tables[t]->count; i++) {
            const tb_config_def_t *def = &tables[t]->defs[i];
            bool seen = def->group == NULL;
            for (size_t g = 0; !seen && g < json_array_size(groups); g++) {
                seen =
                    strcmp(json_string_value(json_array_get(groups, g)), def->group) == 0;
            }
            if (!seen) {
                json_array_append_new(groups, json_string(def->group));
            }
            json_array_append_new(
                configs, json_pack("{s:o, s:o}", "definition", key_info(def), "value",
                                   value_info(def->name, shown_value(def, raw), errors)));
        }
    }
    json_object_foreach ((json_t *)errors, key, list) {
        if (tb_config_find(tables, ntables, key) == NULL) {
            json_array_append_new(configs,
                                  json_pack("{s:n, s:o}", "definition", "value",
                                            value_info(key, json_null(), errors)));
        }
    }
    return json_pack("{s:s, s:I, s:o, s:o}", "name", name, "error_count",
                     (json_int_t)tb_config_error_count(errors), "groups", groups,
                     "configs", configs);
}

json_t *tb_config_redact(const tb_config_table_t *const *tables, size_t ntables,
                         const json_t *raw)
{
    json_t *copy = json_deep_copy(raw);
    const char *key;
    json_t *value;
    json_object_foreach (copy, key, value) {
        const tb_config_def_t *def = tb_config_find(tables, ntables, key);
        if (def != NULL && def->type == TB_CONFIG_PASSWORD && !json_is_null(value)) {
            json_object_set_new(copy, key, json_string("[hidden]"));
        }
    }
    return copy;
}

long long tb_config_int(const json_t *values, const char *name)
{
    return json_integer_value(json_object_get(values, name));
}

bool tb_config_bool(const json_t *values, const char *name)
{
    return json_is_true(json_object_get(values, name));
}

double tb_config_double(const json_t *values, const char *name)
{
    return number_of(json_object_get(values, name));
}

const char *tb_config_string(const json_t *values, const char *name)
{
    return json_string_value(json_object_get(values, name));
}

const json_t *tb_config_list(const json_t *values, const char *name)
{
    return json_object_get(values, name);
}

/* Whether a column of kind can hold a key of def's type. */
static bool field_fits(const tb_config_def_t *def, tb_config_field_kind_t kind)
{
    switch (kind) {
    case TB_CONFIG_FIELD_NONE:
        return true;
    case TB_CONFIG_FIELD_BOOL:
        return def->type == TB_CONFIG_BOOLEAN;
    case TB_CONFIG_FIELD_INT:
        return def->type == TB_CONFIG_INT || def->type == TB_CONFIG_SHORT;
    case TB_CONFIG_FIELD_LONG:
        return def->type == TB_CONFIG_LONG || def->type == TB_CONFIG_INT;
    case TB_CONFIG_FIELD_DOUBLE:
        return def->type == TB_CONFIG_DOUBLE;
    case TB_CONFIG_FIELD_STRING:
        return def->type == TB_CONFIG_STRING || def->type == TB_CONFIG_CLASS ||
               def->type == TB_CONFIG_PASSWORD;
    case TB_CONFIG_FIELD_LIST:
        return def->type == TB_CONFIG_LIST;
    case TB_CONFIG_FIELD_ENUM:
        return def->type == TB_CONFIG_STRING && def->one_of != NULL;
    case TB_CONFIG_FIELD_VALUE:
        return true;
    }
    return false;
}

/* The index of value in one_of (spelled as the list spells it, as parsing
 * leaves it), or -1 for a null value. */
static int enum_index(const char *const *one_of, const char *value)
{
    for (int i = 0; value != NULL && one_of[i] != NULL; i++) {
        if (strcmp(one_of[i], value) == 0) {
            return i;
        }
    }
    return -1;
}

int tb_config_fields_check(const tb_config_table_t *table, char *reason,
                           size_t reason_size)
{
    for (size_t i = 0; i < table->count; i++) {
        const tb_config_def_t *def = &table->defs[i];
        if (!field_fits(def, def->field.kind)) {
            snprintf(reason, reason_size, "%s: the column of %s does not fit its type %s",
                     table->name, def->name, tb_config_type_name(def->type));
            return -1;
        }
    }
    return 0;
}

int tb_config_fill(const tb_config_table_t *table, const json_t *values, void *out)
{
    for (size_t i = 0; i < table->count; i++) {
        const tb_config_def_t *def = &table->defs[i];
        char *at = (char *)out + def->field.offset;
        if (!field_fits(def, def->field.kind)) {
            return -1;
        }
        switch (def->field.kind) {
        case TB_CONFIG_FIELD_NONE:
            break;
        case TB_CONFIG_FIELD_BOOL:
            *(bool *)at = tb_config_bool(values, def->name);
            break;
        case TB_CONFIG_FIELD_INT:
            *(int *)at = (int)tb_config_int(values, def->name);
            break;
        case TB_CONFIG_FIELD_LONG:
            *(long long *)at = tb_config_int(values, def->name);
            break;
        case TB_CONFIG_FIELD_DOUBLE:
            *(double *)at = tb_config_double(values, def->name);
            break;
        case TB_CONFIG_FIELD_STRING:
            *(const char **)at = tb_config_string(values, def->name);
            break;
        case TB_CONFIG_FIELD_LIST:
            *(const json_t **)at = tb_config_list(values, def->name);
            break;
        case TB_CONFIG_FIELD_ENUM:
            *(int *)at = enum_index(def->one_of, tb_config_string(values, def->name));
            break;
        case TB_CONFIG_FIELD_VALUE:
            *(const json_t **)at = json_object_get(values, def->name);
            break;
        }
    }
    return 0;
}

bool tb_config_given(const tb_config_table_t *table, const json_t *raw, const void *out,
                     const void *member)
{
    size_t offset = (size_t)((const char *)member - (const char *)out);
    for (size_t i = 0; i < table->count; i++) {
        const tb_config_def_t *def = &table->defs[i];
        if (def->field.kind != TB_CONFIG_FIELD_NONE && def->field.offset == offset) {
            return json_object_get(raw, def->name) != NULL;
        }
    }
    return false;
}

json_t *tb_config_load(const tb_config_table_t *table, const json_t *raw, void *out,
                       char *errstr, size_t errstr_size)
{
    const tb_config_table_t *tables[] = {table};
    json_t *errors = json_object();
    json_t *values = tb_config_parse(tables, 1, raw, errors);
    if (values != NULL && tb_config_error_count(errors) == 0 &&
        tb_config_fill(table, values, out) != 0) {
        tb_config_error_add(errors, table->name, "a column does not fit its key's type");
    }
    if (values == NULL || tb_config_error_count(errors) > 0) {
        tb_config_errors_join(errors, "; ", errstr, errstr_size);
        json_decref(values);
        values = NULL;
    }
    json_decref(errors);
    return values;
}

int tb_config_doc_append(char **out, const char *fmt, ...)
{
    va_list ap;
    char *piece;
    va_start(ap, fmt);
    int n = vasprintf(&piece, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return -1;
    }
    size_t old = *out ? strlen(*out) : 0;
    char *grown = realloc(*out, old + (size_t)n + 1);
    if (grown == NULL) {
        free(piece);
        return -1;
    }
    memcpy(grown + old, piece, (size_t)n + 1);
    *out = grown;
    free(piece);
    return 0;
}

int tb_config_doc_markdown(const tb_config_table_t *table, char **out)
{
    if (tb_config_doc_append(out,
                             "## %s\n\n| Key | Type | Default | Valid values | "
                             "Importance | Description |\n|---|---|---|---|---|---|\n",
                             table->name) != 0) {
        return -1;
    }
    for (size_t i = 0; i < table->count; i++) {
        const tb_config_def_t *def = &table->defs[i];
        char valid[512] = "";
        size_t used = 0;
        if (def->one_of != NULL) {
            for (size_t k = 0; def->one_of[k] != NULL && used < sizeof(valid); k++) {
                used += (size_t)snprintf(valid + used, sizeof(valid) - used, "%s`%s`",
                                         k ? ", " : "", def->one_of[k]);
            }
        } else if (def->range != NULL) {
            if (def->range->has_min && def->range->has_max) {
                snprintf(valid, sizeof(valid), "[%.15g, %.15g]", def->range->min,
                         def->range->max);
            } else if (def->range->has_min) {
                snprintf(valid, sizeof(valid), "≥ %.15g", def->range->min);
            } else {
                snprintf(valid, sizeof(valid), "≤ %.15g", def->range->max);
            }
        }
        const char *dflt = def->required                   ? "(required)"
                           : def->default_value == NULL    ? "null"
                           : def->default_value[0] == '\0' ? "\"\""
                                                           : def->default_value;
        if (tb_config_doc_append(out, "| `%s` | %s | %s%s%s | %s | %s | %s |\n",
                                 def->name, type_names[def->type],
                                 def->required ? "" : "`", dflt, def->required ? "" : "`",
                                 valid, importance_names[def->importance],
                                 def->documentation ? def->documentation : "") != 0) {
            return -1;
        }
    }
    return tb_config_doc_append(out, "\n");
}
