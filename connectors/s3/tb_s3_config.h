/*
 * tb_s3_config.h - the S3 sink's config (s3_config.c): its table, the
 * typed settings a task and the checks read, and the checks across keys.
 *
 * Ownership: tb_s3_settings_t's strings and lists are borrowed from the
 * parsed values it was filled from (tb_config_fill), which outlive it.
 */
#ifndef TB_S3_CONFIG_H
#define TB_S3_CONFIG_H

#include <stdbool.h>

#include <jansson.h>

#include "core/tb_config.h"

/* The views of a record an encoded partition's objects hold, as
 * Confluent's record views: with store.kafka.keys and store.kafka.headers
 * the keys and the headers in companion objects beside the values',
 * named with ".keys" or ".headers" before the extension. In the order the
 * objects are committed: the companions first, so that a value object
 * that is visible has its companions visible too (recovery reads value
 * objects only, tb_s3_partitioner.h). */
typedef enum {
    TB_S3_VIEW_KEYS = 0,
    TB_S3_VIEW_HEADERS,
    TB_S3_VIEW_VALUE,
    TB_S3_VIEW_COUNT
} tb_s3_view_t;

/* The keys a task and the checks across keys read, filled from s3_sink_keys
 * (tb_config_fill); strings and lists are borrowed from the parsed values. */
typedef struct {
    const char *bucket;
    const char *region;
    const char *store_url;
    bool path_style;
    const char *access_key;
    const char *secret_key;
    int part_size;
    const char *compression;
    int compression_level;
    const char *sse_algorithm;
    const char *sse_kms_key;
    const char *sse_customer_key;
    const char *acl;
    int part_retries;
    long long retry_backoff;
    long long request_timeout;
    long long buffer_max;
    long long task_backoff;
    const char *format;
    int flush_size;
    long long rotate_interval;
    long long rotate_schedule;
    const char *topics_dir;
    const char *directory_delim;
    const char *file_delim;
    int zero_pad;
    const char *separator;
    const char *extension;
    const char *null_values;
    const char *schema_compatibility;
    bool store_keys;
    bool store_headers;
    const char *keys_format;
    const char *headers_format;
    const char *avro_codec;
    const char *parquet_codec;
    const char *partitioner;
    const json_t *field_name;
    const char *path_format;
    long long duration;
    const char *locale;
    const char *timezone;
    const char *extractor;
    const char *timestamp_field;
} tb_s3_settings_t;

/* The S3 sink's keys, with columns in tb_s3_settings_t. */
extern const tb_config_table_t tb_s3_config_table;

/* Connect's keys of Confluent's S3 sink that tributary does not build,
 * NULL-terminated (prefixes end with a dot). */
extern const char *const tb_s3_config_refused_keys[];

/* The checks across keys, on the keys as parsed: errors gets each problem
 * under the key to name. */
void tb_s3_config_validate(const json_t *values, json_t *errors);

/* max_tasks copies of config (new reference). */
json_t *tb_s3_config_task_configs(const json_t *config, int max_tasks);

/* A class name's simple name. */
const char *tb_s3_config_simple_name(const char *class_name);

/* The format class of each view an object of a group has (tb_s3_format.h's
 * record views), in the order they are committed: the keys, the headers
 * and last the values; NULL for a view not stored. */
void tb_s3_config_view_formats(const tb_s3_settings_t *k,
                               const char *formats[TB_S3_VIEW_COUNT]);

/* What the objects of one encoded partition set aside together
 * (s3.buffer.max.bytes). */
long long tb_s3_config_group_reserve(const tb_s3_settings_t *k);

/* A string key's value, NULL when unset or empty. */
const char *tb_s3_config_nonempty(const char *value);

#endif
