/*
 * Transformations that only route or touch headers, and Filter: none of
 * them reads a key or value, so records pass without being parsed.
 *
 *   RegexRouter      topic -> replacement when regex matches all of it
 *   TimestampRouter  topic -> topic.format with ${topic} and ${timestamp}
 *                    (the record's timestamp in UTC, as timestamp.format:
 *                    SimpleDateFormat's letters, tb_date_format.h)
 *   InsertHeader     adds header = value.literal (its text, as Connect's
 *                    SimpleHeaderConverter writes a literal)
 *   DropHeaders      removes every header named in headers
 *   Filter           drops the record (with a predicate, the ones it holds for)
 *
 * A routed topic is kept in the transform's table of topics, so the string
 * a record points at lives as long as the chain.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/transforms/tb_date_format.h"
#include "connectors/transforms/tb_field_util.h"
#include "connectors/transforms/tb_regex.h"
#include "connectors/transforms/tb_transform.h"

/* The key of table equal to s (added once): a string that lives as long
 * as table. NULL on no memory. */
static const char *intern(json_t *table, const char *s)
{
    if (json_object_get(table, s) == NULL &&
        json_object_set_new(table, s, json_true()) != 0) {
        return NULL;
    }
    return json_object_iter_key(json_object_iter_at(table, s));
}

static int out_of_memory(char *errstr, size_t errstr_size)
{
    snprintf(errstr, errstr_size, "out of memory");
    return -1;
}

/*
 * RegexRouter
 */

/* RegexRouter's keys, filled from regex_router_keys. */
typedef struct {
    const char *regex;
    const char *replacement;
} tb_regex_router_keys_t;

typedef struct {
    regex_t re;
    const char *replacement; /* the config's */
    json_t *routes;          /* topic -> routed topic (a string) */
} tb_regex_router_t;

static void regex_router_destroy(void *state)
{
    tb_regex_router_t *r = state;
    if (r == NULL) {
        return;
    }
    regfree(&r->re);
    json_decref(r->routes);
    free(r);
}

static void *regex_router_create(const void *config, tb_side_t side, char *errstr,
                                 size_t errstr_size)
{
    const tb_regex_router_keys_t *keys = config;
    tb_regex_router_t *r = calloc(1, sizeof(*r));
    (void)side;
    if (r == NULL || tb_regex_compile(&r->re, keys->regex) != 0) {
        free(r);
        snprintf(errstr, errstr_size, "RegexRouter: the regex does not compile");
        return NULL;
    }
    r->replacement = keys->replacement;
    r->routes = json_object();
    if (r->routes == NULL) {
        regex_router_destroy(r);
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    return r;
}

static int regex_router_apply(void *state, tb_record_t *record, char *errstr,
                              size_t errstr_size)
{
    tb_regex_router_t *r = state;
    json_t *route = json_object_get(r->routes, record->topic);
    if (route == NULL) {
        regmatch_t groups[10];
        char *routed = tb_regex_matches(&r->re, record->topic, groups)
                           ? tb_regex_replace(record->topic, groups, r->replacement)
                           : strdup(record->topic);
        if (routed == NULL ||
            json_object_set_new(r->routes, record->topic, json_string(routed)) != 0) {
            free(routed);
            return out_of_memory(errstr, errstr_size);
        }
        free(routed);
        route = json_object_get(r->routes, record->topic);
    }
    record->topic = json_string_value(route);
    return 0;
}

static const tb_config_def_t regex_router_keys[] = {
    {.name = "regex",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .check = tb_regex_check,
     .documentation =
         "POSIX extended regular expression that the whole topic name must match"
         " for the record to be routed.",
     .field = TB_CONFIG_AT(tb_regex_router_keys_t, regex)},
    {.name = "replacement",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .documentation =
         "The new topic name; $1 to $9 stand for the groups the regex captured.",
     .field = TB_CONFIG_AT(tb_regex_router_keys_t, replacement)},
};

static const tb_config_table_t regex_router_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "RegexRouter", regex_router_keys);

const tb_transform_class_t tb_regex_router = {
    .name = TB_TRANSFORMS_PACKAGE "RegexRouter",
    .config = &regex_router_table,
    .config_size = sizeof(tb_regex_router_keys_t),
    .create = regex_router_create,
    .destroy = regex_router_destroy,
    .apply = regex_router_apply,
    .keeps_data = true,
};

/*
 * TimestampRouter
 */

/* TimestampRouter's keys, filled from timestamp_router_keys. */
typedef struct {
    const char *topic_format;
    const char *timestamp_format;
} tb_timestamp_router_keys_t;

typedef struct {
    const tb_timestamp_router_keys_t *keys; /* the config */
    json_t *topics;                         /* the topics made so far */
} tb_timestamp_router_t;

static void timestamp_router_destroy(void *state)
{
    tb_timestamp_router_t *t = state;
    if (t == NULL) {
        return;
    }
    json_decref(t->topics);
    free(t);
}

static void *timestamp_router_create(const void *config, tb_side_t side, char *errstr,
                                     size_t errstr_size)
{
    tb_timestamp_router_t *t = calloc(1, sizeof(*t));
    (void)side;
    if (t == NULL || (t->topics = json_object()) == NULL) {
        timestamp_router_destroy(t);
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    t->keys = config;
    return t;
}

static int timestamp_router_apply(void *state, tb_record_t *record, char *errstr,
                                  size_t errstr_size)
{
    tb_timestamp_router_t *t = state;
    char topic[1024] = "";
    if (record->timestamp < 0) {
        snprintf(errstr, errstr_size, "Timestamp missing on record: topic %s",
                 record->topic);
        return -1;
    }
    for (const char *p = t->keys->topic_format; *p != '\0';) {
        size_t used = strlen(topic);
        if (strncmp(p, "${topic}", 8) == 0) {
            snprintf(topic + used, sizeof(topic) - used, "%s", record->topic);
            p += 8;
        } else if (strncmp(p, "${timestamp}", 12) == 0) {
            tb_date_format(t->keys->timestamp_format, record->timestamp, topic + used,
                           sizeof(topic) - used);
            p += 12;
        } else if (used + 1 < sizeof(topic)) {
            topic[used] = *p++;
            topic[used + 1] = '\0';
        } else {
            break;
        }
    }
    record->topic = intern(t->topics, topic);
    return record->topic != NULL ? 0 : out_of_memory(errstr, errstr_size);
}

static const tb_config_def_t timestamp_router_keys[] = {
    {.name = "topic.format",
     .type = TB_CONFIG_STRING,
     .default_value = "${topic}-${timestamp}",
     .importance = TB_IMPORTANCE_HIGH,
     .documentation =
         "The new topic name, where ${topic} stands for the record's topic and "
         "${timestamp} for its timestamp in timestamp.format.",
     .field = TB_CONFIG_AT(tb_timestamp_router_keys_t, topic_format)},
    {.name = "timestamp.format",
     .type = TB_CONFIG_STRING,
     .default_value = "yyyyMMdd",
     .importance = TB_IMPORTANCE_HIGH,
     .check = tb_date_format_config_check,
     .documentation =
         "How ${timestamp} is written, in java.text.SimpleDateFormat's letters "
         "(y M d H k h K a m s S E D Z X z and 'quoted text'), in UTC.",
     .field = TB_CONFIG_AT(tb_timestamp_router_keys_t, timestamp_format)},
};

static const tb_config_table_t timestamp_router_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "TimestampRouter", timestamp_router_keys);

const tb_transform_class_t tb_timestamp_router = {
    .name = TB_TRANSFORMS_PACKAGE "TimestampRouter",
    .config = &timestamp_router_table,
    .config_size = sizeof(tb_timestamp_router_keys_t),
    .create = timestamp_router_create,
    .destroy = timestamp_router_destroy,
    .apply = timestamp_router_apply,
    .keeps_data = true,
};

/*
 * InsertHeader and DropHeaders have their typed config as their state.
 */

/* InsertHeader's keys, filled from insert_header_keys. */
typedef struct {
    const char *header;
    const char *value_literal;
} tb_insert_header_keys_t;

static int insert_header_apply(void *state, tb_record_t *record, char *errstr,
                               size_t errstr_size)
{
    const tb_insert_header_keys_t *keys = state;
    if (tb_record_header_add(record, keys->header, keys->value_literal,
                             strlen(keys->value_literal)) != 0) {
        return out_of_memory(errstr, errstr_size);
    }
    return 0;
}

static const tb_config_def_t insert_header_keys[] = {
    {.name = "header",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .documentation = "Name of the header added to every record.",
     .field = TB_CONFIG_AT(tb_insert_header_keys_t, header)},
    {.name = "value.literal",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .documentation = "Value of the added header, as a string.",
     .field = TB_CONFIG_AT(tb_insert_header_keys_t, value_literal)},
};

static const tb_config_table_t insert_header_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "InsertHeader", insert_header_keys);

const tb_transform_class_t tb_insert_header = {
    .name = TB_TRANSFORMS_PACKAGE "InsertHeader",
    .config = &insert_header_table,
    .config_size = sizeof(tb_insert_header_keys_t),
    .apply = insert_header_apply,
    .keeps_data = true,
};

/* DropHeaders' keys, filled from drop_headers_keys. */
typedef struct {
    const json_t *headers;
} tb_drop_headers_keys_t;

static int drop_headers_apply(void *state, tb_record_t *record, char *errstr,
                              size_t errstr_size)
{
    const tb_drop_headers_keys_t *keys = state;
    size_t i;
    json_t *name;
    json_array_foreach ((json_t *)keys->headers, i, name) {
        if (tb_record_header_remove(record, json_string_value(name)) != 0) {
            return out_of_memory(errstr, errstr_size);
        }
    }
    return 0;
}

static const tb_config_def_t drop_headers_keys[] = {
    {.name = "headers",
     .type = TB_CONFIG_LIST,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .check = tb_field_non_empty_list,
     .documentation = "Names of the headers removed from every record.",
     .field = TB_CONFIG_AT(tb_drop_headers_keys_t, headers)},
};

static const tb_config_table_t drop_headers_table =
    TB_CONFIG_TABLE(TB_TRANSFORMS_PACKAGE "DropHeaders", drop_headers_keys);

const tb_transform_class_t tb_drop_headers = {
    .name = TB_TRANSFORMS_PACKAGE "DropHeaders",
    .config = &drop_headers_table,
    .config_size = sizeof(tb_drop_headers_keys_t),
    .apply = drop_headers_apply,
    .keeps_data = true,
};

/*
 * Filter
 */

static int filter_apply(void *state, tb_record_t *record, char *errstr,
                        size_t errstr_size)
{
    (void)state;
    (void)record;
    (void)errstr;
    (void)errstr_size;
    return TB_RESULT_DROPPED;
}

static const tb_config_table_t filter_table = {
    .name = TB_TRANSFORMS_PACKAGE "Filter", .defs = NULL, .count = 0};

const tb_transform_class_t tb_filter = {
    .name = TB_TRANSFORMS_PACKAGE "Filter",
    .config = &filter_table,
    .apply = filter_apply,
    .keeps_data = true,
};
