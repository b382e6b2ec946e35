/*
 * The predicates: TopicNameMatches (pattern matches all of the topic),
 * HasHeaderKey (a header called name exists) and RecordIsTombstone (the
 * value is null). None of them parses a key or value: a sink record is a
 * tombstone when its Kafka value is null.
 */
#include <stdio.h>
#include <stdlib.h>

#include "connectors/transforms/tb_regex.h"
#include "connectors/transforms/tb_transform.h"

/* TopicNameMatches' keys, filled from topic_matches_keys. */
typedef struct {
    const char *pattern;
} tb_topic_matches_keys_t;

static void *topic_matches_create(const void *config, tb_side_t side, char *errstr,
                                  size_t errstr_size)
{
    const tb_topic_matches_keys_t *keys = config;
    regex_t *re = malloc(sizeof(*re));
    (void)side;
    if (re == NULL || tb_regex_compile(re, keys->pattern) != 0) {
        free(re);
        snprintf(errstr, errstr_size, "TopicNameMatches: the pattern does not compile");
        return NULL;
    }
    return re;
}

static void topic_matches_destroy(void *state)
{
    if (state != NULL) {
        regfree(state);
        free(state);
    }
}

static bool topic_matches_test(void *state, tb_record_t *record)
{
    return record->topic != NULL && tb_regex_matches(state, record->topic, NULL);
}

static const tb_config_def_t topic_matches_keys[] = {
    {.name = "pattern",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_MEDIUM,
     .check = tb_regex_check,
     .documentation =
         "POSIX extended regular expression; the predicate holds for a record "
         "whose whole topic name matches it.",
     .field = TB_CONFIG_AT(tb_topic_matches_keys_t, pattern)},
};

static const tb_config_table_t topic_matches_table =
    TB_CONFIG_TABLE(TB_PREDICATES_PACKAGE "TopicNameMatches", topic_matches_keys);

const tb_transform_class_t tb_topic_name_matches = {
    .name = TB_PREDICATES_PACKAGE "TopicNameMatches",
    .kind = TB_PREDICATE,
    .config = &topic_matches_table,
    .config_size = sizeof(tb_topic_matches_keys_t),
    .create = topic_matches_create,
    .destroy = topic_matches_destroy,
    .test = topic_matches_test,
};

/* HasHeaderKey's keys, filled from has_header_keys: the state of a use. */
typedef struct {
    const char *name;
} tb_has_header_keys_t;

static bool has_header_test(void *state, tb_record_t *record)
{
    const tb_has_header_keys_t *keys = state;
    return tb_record_header(record, keys->name) != NULL;
}

static const tb_config_def_t has_header_keys[] = {
    {.name = "name",
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_MEDIUM,
     .documentation =
         "The predicate holds for a record that has at least one header of this "
         "name.",
     .field = TB_CONFIG_AT(tb_has_header_keys_t, name)},
};

static const tb_config_table_t has_header_table =
    TB_CONFIG_TABLE(TB_PREDICATES_PACKAGE "HasHeaderKey", has_header_keys);

const tb_transform_class_t tb_has_header_key = {
    .name = TB_PREDICATES_PACKAGE "HasHeaderKey",
    .kind = TB_PREDICATE,
    .config = &has_header_table,
    .config_size = sizeof(tb_has_header_keys_t),
    .test = has_header_test,
};

static bool tombstone_test(void *state, tb_record_t *record)
{
    (void)state;
    return tb_record_side_is_null(&record->value);
}

static const tb_config_table_t tombstone_table = {
    .name = TB_PREDICATES_PACKAGE "RecordIsTombstone", .defs = NULL, .count = 0};

const tb_transform_class_t tb_record_is_tombstone = {
    .name = TB_PREDICATES_PACKAGE "RecordIsTombstone",
    .kind = TB_PREDICATE,
    .config = &tombstone_table,
    .test = tombstone_test,
};
