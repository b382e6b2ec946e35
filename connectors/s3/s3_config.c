/*
 * s3_config.c - the S3 sink's config table and the checks across its keys
 * (tb_s3_config.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "connectors/s3/tb_s3_config.h"
#include "connectors/s3/tb_s3_partitioner.h"
#include "connectors/s3/tb_s3_sink.h"

#define GROUP_S3 "S3"
#define GROUP_STORAGE "Storage"
#define GROUP_PARTITIONER "Partitioner"
#define MIN_PART_SIZE 5242880

static const char *const compression_types[] = {"none", "gzip", NULL};
static const char *const extractors[] = {"Record", "RecordField", "Wallclock", NULL};
static const char *const null_behaviors[] = {"fail", "ignore", NULL};
static const char *const parquet_codecs[] = {"none",   "snappy", "gzip", "lzo",
                                             "brotli", "lz4",    "zstd", NULL};
static const char *const avro_codecs[] = {"null", "deflate",   "snappy", "bzip2",
                                          "xz",   "zstandard", NULL};
static const char *const sse_algorithms[] = {"", "AES256", "aws:kms", NULL};
static const char *const acls[] = {"private",
                                   "public-read",
                                   "public-read-write",
                                   "authenticated-read",
                                   "log-delivery-write",
                                   "bucket-owner-read",
                                   "bucket-owner-full-control",
                                   "aws-exec-read",
                                   NULL};
static const char *const compatibilities[] = {"NONE", "BACKWARD", "FORWARD", "FULL",
                                              NULL};

static const tb_config_range_t at_least_one = {.has_min = true, .min = 1};
static const tb_config_range_t part_sizes = {
    .has_min = true, .min = MIN_PART_SIZE, .has_max = true, .max = 2147483647};
static const tb_config_range_t not_negative = {.has_min = true, .min = 0};
static const tb_config_range_t buffer_sizes = {.has_min = true, .min = MIN_PART_SIZE};
static const tb_config_range_t levels = {
    .has_min = true, .min = -1, .has_max = true, .max = 9};
static const tb_config_range_t pad_widths = {
    .has_min = true, .min = 0, .has_max = true, .max = 19};

static int path_format_check(const json_t *value, char *reason, size_t reason_size)
{
    return tb_s3_path_format_check(json_string_value(value), reason, reason_size);
}

static const tb_config_def_t s3_sink_keys[] = {
    {.name = TB_S3_KEY_BUCKET,
     .type = TB_CONFIG_STRING,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_S3,
     .order = 1,
     .field = TB_CONFIG_AT(tb_s3_settings_t, bucket),
     .documentation = "The bucket the objects are written to."},
    {.name = TB_S3_KEY_REGION,
     .type = TB_CONFIG_STRING,
     .default_value = "us-west-2",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_S3,
     .order = 2,
     .field = TB_CONFIG_AT(tb_s3_settings_t, region),
     .documentation = "The region of the bucket, which requests are signed for."},
    {.name = TB_S3_KEY_STORE_URL,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_S3,
     .order = 3,
     .role = TB_CONFIG_ROLE_URL,
     .field = TB_CONFIG_AT(tb_s3_settings_t, store_url),
     .documentation = "The store's URL, for a store that speaks S3's API (MinIO, Ceph, "
                      "R2, ...); null: AWS's endpoint of s3.region. Subject to the "
                      "worker's http.sink.allowed.hosts."},
    {.name = TB_S3_KEY_PATH_STYLE,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "true",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_S3,
     .order = 4,
     .field = TB_CONFIG_AT(tb_s3_settings_t, path_style),
     .documentation = "Path-style requests (<url>/<bucket>/<key>); false: the bucket in "
                      "the host name (<bucket>.<host>/<key>)."},
    {.name = TB_S3_KEY_ACCESS_KEY,
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_S3,
     .order = 5,
     .field = TB_CONFIG_AT(tb_s3_settings_t, access_key),
     .documentation =
         "The access key id; a secret reference. Null: the worker's "
         "AWS_ACCESS_KEY_ID environment variable (with AWS_SECRET_ACCESS_KEY "
         "and AWS_SESSION_TOKEN), else a web identity (AWS_WEB_IDENTITY_TOKEN_FILE "
         "and AWS_ROLE_ARN, exchanged with STS), else unsigned requests."},
    {.name = TB_S3_KEY_SECRET_KEY,
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_S3,
     .order = 6,
     .field = TB_CONFIG_AT(tb_s3_settings_t, secret_key),
     .documentation = "The secret access key; a secret reference."},
    {.name = TB_S3_KEY_PART_SIZE,
     .type = TB_CONFIG_INT,
     .default_value = "26214400",
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_S3,
     .order = 7,
     .range = &part_sizes,
     .field = TB_CONFIG_AT(tb_s3_settings_t, part_size),
     .documentation = "The size of a multipart upload's part, in bytes: an object's "
                      "buffer, uploaded as a part once full. An object smaller than a "
                      "part is written in one PutObject. Memory: about this much per "
                      "object being written."},
    {.name = TB_S3_KEY_COMPRESSION,
     .type = TB_CONFIG_STRING,
     .default_value = "none",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_S3,
     .order = 8,
     .one_of = compression_types,
     .field = TB_CONFIG_AT(tb_s3_settings_t, compression),
     .documentation = "Compression of the objects: none, or gzip (the extension gets "
                      ".gz)."},
    {.name = TB_S3_KEY_COMPRESSION_LEVEL,
     .type = TB_CONFIG_INT,
     .default_value = "-1",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_S3,
     .order = 9,
     .range = &levels,
     .field = TB_CONFIG_AT(tb_s3_settings_t, compression_level),
     .documentation = "The gzip level, 0 to 9; -1: zlib's default."},
    {.name = TB_S3_KEY_SSE_ALGORITHM,
     .type = TB_CONFIG_STRING,
     .default_value = "",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_S3,
     .order = 10,
     .one_of = sse_algorithms,
     .field = TB_CONFIG_AT(tb_s3_settings_t, sse_algorithm),
     .documentation = "Server-side encryption of the objects: AES256 or aws:kms; empty: "
                      "the bucket's default."},
    {.name = TB_S3_KEY_SSE_KMS_KEY,
     .type = TB_CONFIG_STRING,
     .default_value = "",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_S3,
     .order = 11,
     .field = TB_CONFIG_AT(tb_s3_settings_t, sse_kms_key),
     .documentation = "The KMS key of s3.sse.algorithm=aws:kms; empty: the account's. "
                      "Needs libcurl 8.10 or later, which signs its header right."},
    {.name = TB_S3_KEY_SSE_CUSTOMER_KEY,
     .type = TB_CONFIG_PASSWORD,
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_S3,
     .order = 12,
     .field = TB_CONFIG_AT(tb_s3_settings_t, sse_customer_key),
     .documentation = "Encryption with a key of the customer's (SSE-C): not built in "
                      "tributary; a config that sets it is refused."},
    {.name = TB_S3_KEY_ACL,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_S3,
     .order = 13,
     .one_of = acls,
     .field = TB_CONFIG_AT(tb_s3_settings_t, acl),
     .documentation = "A canned ACL set on each object; null: none."},
    {.name = TB_S3_KEY_PART_RETRIES,
     .type = TB_CONFIG_INT,
     .default_value = "3",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_S3,
     .order = 14,
     .range = &not_negative,
     .field = TB_CONFIG_AT(tb_s3_settings_t, part_retries),
     .documentation = "How many times a request that failed for a reason that may pass "
                      "(a network error, a timeout, 429, 5xx, SlowDown) is tried again "
                      "before the task waits retry.backoff.ms; 0: never."},
    {.name = TB_S3_KEY_RETRY_BACKOFF,
     .type = TB_CONFIG_LONG,
     .default_value = "200",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_S3,
     .order = 15,
     .range = &not_negative,
     .field = TB_CONFIG_AT(tb_s3_settings_t, retry_backoff),
     .documentation = "The wait before the first retry of a request, in ms; each next "
                      "wait doubles."},
    {.name = TB_S3_KEY_REQUEST_TIMEOUT,
     .type = TB_CONFIG_LONG,
     .default_value = "60000",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_S3,
     .order = 16,
     .range = &at_least_one,
     .field = TB_CONFIG_AT(tb_s3_settings_t, request_timeout),
     .documentation = "tributary's own: how long one request may take, in ms, its "
                      "connection included (at most 10 s of it)."},
    {.name = TB_S3_KEY_BUFFER_MAX,
     .type = TB_CONFIG_LONG,
     .default_value = "1073741824",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_S3,
     .order = 18,
     .range = &buffer_sizes,
     .field = TB_CONFIG_AT(tb_s3_settings_t, buffer_max),
     .documentation =
         "tributary's own: the memory a task may set aside for the objects "
         "it is writing at once, in bytes: s3.part.size for each (twice that "
         "with ParquetFormat, which also holds a row group). A task that "
         "would open an object past it fails, naming this key, rather than "
         "grow without bound."},
    {.name = TB_S3_KEY_TASK_BACKOFF,
     .type = TB_CONFIG_LONG,
     .default_value = "5000",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_S3,
     .order = 17,
     .range = &not_negative,
     .field = TB_CONFIG_AT(tb_s3_settings_t, task_backoff),
     .documentation = "When a request's retries are spent, the wait before the task "
                      "tries again, in ms (without limit: nothing is dropped)."},
    {.name = TB_S3_KEY_FORMAT,
     .type = TB_CONFIG_CLASS,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_STORAGE,
     .order = 1,
     .field = TB_CONFIG_AT(tb_s3_settings_t, format),
     .documentation =
         "How records are written: " TB_S3_FORMAT_JSON " (.json), " TB_S3_FORMAT_AVRO
         " (.avro) or " TB_S3_FORMAT_BYTES " (.bin) or " TB_S3_FORMAT_PARQUET
         " (.parquet, after the codec's extension: .snappy.parquet, "
         ".gz.parquet, .zstd.parquet)."},
    {.name = TB_S3_KEY_FLUSH_SIZE,
     .type = TB_CONFIG_INT,
     .required = true,
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_STORAGE,
     .order = 2,
     .range = &at_least_one,
     .field = TB_CONFIG_AT(tb_s3_settings_t, flush_size),
     .documentation = "The records of a partition an object group holds before it is "
                      "committed."},
    {.name = TB_S3_KEY_ROTATE_INTERVAL,
     .type = TB_CONFIG_LONG,
     .default_value = "-1",
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_STORAGE,
     .order = 3,
     .field = TB_CONFIG_AT(tb_s3_settings_t, rotate_interval),
     .documentation = "Commit a partition's objects when a record's time (per "
                      "timestamp.extractor; with a partitioner that is not time-based, "
                      "its Kafka timestamp) is this many ms past the first record's; -1: "
                      "never."},
    {.name = TB_S3_KEY_ROTATE_SCHEDULE,
     .type = TB_CONFIG_LONG,
     .default_value = "-1",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_STORAGE,
     .order = 4,
     .field = TB_CONFIG_AT(tb_s3_settings_t, rotate_schedule),
     .documentation = "Commit open objects at each multiple of this many ms of the wall "
                      "clock (checked as records arrive and at each offset flush); -1: "
                      "never. Not deterministic: a restart may cut objects elsewhere."},
    {.name = TB_S3_KEY_TOPICS_DIR,
     .type = TB_CONFIG_STRING,
     .default_value = "topics",
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_STORAGE,
     .order = 5,
     .field = TB_CONFIG_AT(tb_s3_settings_t, topics_dir),
     .documentation = "The top directory of the objects."},
    {.name = TB_S3_KEY_DIRECTORY_DELIM,
     .type = TB_CONFIG_STRING,
     .default_value = "/",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_STORAGE,
     .order = 6,
     .field = TB_CONFIG_AT(tb_s3_settings_t, directory_delim),
     .documentation = "The delimiter between the directories of a name."},
    {.name = TB_S3_KEY_FILE_DELIM,
     .type = TB_CONFIG_STRING,
     .default_value = "+",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_STORAGE,
     .order = 7,
     .field = TB_CONFIG_AT(tb_s3_settings_t, file_delim),
     .documentation =
         "The delimiter between topic, partition and offset in a file name."},
    {.name = TB_S3_KEY_ZERO_PAD,
     .type = TB_CONFIG_INT,
     .default_value = "10",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_STORAGE,
     .order = 8,
     .range = &pad_widths,
     .field = TB_CONFIG_AT(tb_s3_settings_t, zero_pad),
     .documentation = "The digits of the start offset in a file name, zero-padded."},
    {.name = TB_S3_KEY_SEPARATOR,
     .type = TB_CONFIG_STRING,
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_STORAGE,
     .order = 9,
     .field = TB_CONFIG_AT(tb_s3_settings_t, separator),
     .documentation = "ByteArrayFormat: what follows each record; null: a newline."},
    {.name = TB_S3_KEY_EXTENSION,
     .type = TB_CONFIG_STRING,
     .default_value = ".bin",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_STORAGE,
     .order = 10,
     .field = TB_CONFIG_AT(tb_s3_settings_t, extension),
     .documentation = "ByteArrayFormat: the extension of the objects."},
    {.name = TB_S3_KEY_NULL_VALUES,
     .type = TB_CONFIG_STRING,
     .default_value = "fail",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_STORAGE,
     .order = 11,
     .one_of = null_behaviors,
     .field = TB_CONFIG_AT(tb_s3_settings_t, null_values),
     .documentation = "A record with a null value (a tombstone): fail (the record fails, "
                      "per errors.tolerance) or ignore (skipped)."},
    {.name = TB_S3_KEY_SCHEMA_COMPATIBILITY,
     .type = TB_CONFIG_STRING,
     .default_value = "NONE",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_STORAGE,
     .order = 12,
     .one_of = compatibilities,
     .field = TB_CONFIG_AT(tb_s3_settings_t, schema_compatibility),
     .documentation = "Only NONE is built: objects are not rotated on a schema change."},
    {.name = TB_S3_KEY_STORE_KEYS,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_STORAGE,
     .order = 13,
     .field = TB_CONFIG_AT(tb_s3_settings_t, store_keys),
     .documentation = "Write the records' keys too, in keys.format.class, each object's "
                      "in a companion object named with .keys before the extension "
                      "(<topic>+<partition>+<start>.keys.avro), one key per value in "
                      "the same order. A record with a null key then fails (per "
                      "errors.tolerance)."},
    {.name = TB_S3_KEY_STORE_HEADERS,
     .type = TB_CONFIG_BOOLEAN,
     .default_value = "false",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_STORAGE,
     .order = 14,
     .field = TB_CONFIG_AT(tb_s3_settings_t, store_headers),
     .documentation = "Write the records' headers too, in headers.format.class, each "
                      "object's in a companion object named with .headers before the "
                      "extension: per record an array of {key, value} strings. A "
                      "record without headers then fails (per errors.tolerance)."},
    {.name = TB_S3_KEY_KEYS_FORMAT,
     .type = TB_CONFIG_CLASS,
     .default_value = TB_S3_FORMAT_AVRO,
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_STORAGE,
     .order = 15,
     .field = TB_CONFIG_AT(tb_s3_settings_t, keys_format),
     .documentation = "The format of the keys of store.kafka.keys: JsonFormat, "
                      "AvroFormat, ParquetFormat (each key in a struct RecordKey {key}) "
                      "or ByteArrayFormat, of io.confluent.connect.s3.format."},
    {.name = TB_S3_KEY_HEADERS_FORMAT,
     .type = TB_CONFIG_CLASS,
     .default_value = TB_S3_FORMAT_AVRO,
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_STORAGE,
     .order = 16,
     .field = TB_CONFIG_AT(tb_s3_settings_t, headers_format),
     .documentation = "The format of the headers of store.kafka.headers: JsonFormat, "
                      "AvroFormat or ParquetFormat (in a struct RecordHeaders "
                      "{headers}), of io.confluent.connect.s3.format."},
    {.name = TB_S3_KEY_AVRO_CODEC,
     .type = TB_CONFIG_STRING,
     .default_value = "null",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_STORAGE,
     .order = 17,
     .one_of = avro_codecs,
     .field = TB_CONFIG_AT(tb_s3_settings_t, avro_codec),
     .documentation = "AvroFormat's codec: null or deflate (snappy, bzip2, xz and "
                      "zstandard are not built and are refused)."},
    {.name = TB_S3_KEY_PARQUET_CODEC,
     .type = TB_CONFIG_STRING,
     .default_value = "snappy",
     .importance = TB_IMPORTANCE_LOW,
     .group = GROUP_STORAGE,
     .order = 18,
     .one_of = parquet_codecs,
     .field = TB_CONFIG_AT(tb_s3_settings_t, parquet_codec),
     .documentation =
         "ParquetFormat's codec: none, snappy, gzip or zstd (lzo, brotli and "
         "lz4 are not built and are refused)."},
    {.name = TB_S3_KEY_PARTITIONER,
     .type = TB_CONFIG_CLASS,
     .default_value = TB_S3_PARTITIONER_PACKAGE "DefaultPartitioner",
     .importance = TB_IMPORTANCE_HIGH,
     .group = GROUP_PARTITIONER,
     .order = 1,
     .field = TB_CONFIG_AT(tb_s3_settings_t, partitioner),
     .documentation = "Where in the bucket records go, as Confluent's partitioners of "
                      "io.confluent.connect.storage.partitioner: DefaultPartitioner "
                      "(partition=<n>), FieldPartitioner, TimeBasedPartitioner, "
                      "DailyPartitioner, HourlyPartitioner."},
    {.name = TB_S3_KEY_FIELD_NAME,
     .type = TB_CONFIG_LIST,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_PARTITIONER,
     .order = 2,
     .field = TB_CONFIG_AT(tb_s3_settings_t, field_name),
     .documentation = "FieldPartitioner: the fields of the value, each a directory "
                      "<field>=<value>."},
    {.name = TB_S3_KEY_PATH_FORMAT,
     .type = TB_CONFIG_STRING,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_PARTITIONER,
     .order = 3,
     .check = path_format_check,
     .field = TB_CONFIG_AT(tb_s3_settings_t, path_format),
     .documentation = "TimeBasedPartitioner: the directories of a time, a Joda-Time "
                      "pattern: 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH. Letters y Y M "
                      "d H m s S D and 'quoted text'."},
    {.name = TB_S3_KEY_DURATION,
     .type = TB_CONFIG_LONG,
     .default_value = "-1",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_PARTITIONER,
     .order = 4,
     .field = TB_CONFIG_AT(tb_s3_settings_t, duration),
     .documentation = "TimeBasedPartitioner: the span of time of one directory, in ms."},
    {.name = TB_S3_KEY_LOCALE,
     .type = TB_CONFIG_STRING,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_PARTITIONER,
     .order = 5,
     .field = TB_CONFIG_AT(tb_s3_settings_t, locale),
     .documentation = "The time-based partitioners' locale, required by them; month "
                      "names (MMM) are written in English whatever it says."},
    {.name = TB_S3_KEY_TIMEZONE,
     .type = TB_CONFIG_STRING,
     .default_value = "",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_PARTITIONER,
     .order = 6,
     .field = TB_CONFIG_AT(tb_s3_settings_t, timezone),
     .documentation = "The time-based partitioners' zone, required by them: UTC, or a "
                      "region of the tz database (Europe/Paris)."},
    {.name = TB_S3_KEY_EXTRACTOR,
     .type = TB_CONFIG_STRING,
     .default_value = "Wallclock",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_PARTITIONER,
     .order = 7,
     .one_of = extractors,
     .field = TB_CONFIG_AT(tb_s3_settings_t, extractor),
     .documentation = "The time of a record: Record (its Kafka timestamp), RecordField "
                      "(timestamp.field of its value: a Timestamp or a number of ms) or "
                      "Wallclock (when it is written: not deterministic)."},
    {.name = TB_S3_KEY_TIMESTAMP_FIELD,
     .type = TB_CONFIG_STRING,
     .default_value = "timestamp",
     .importance = TB_IMPORTANCE_MEDIUM,
     .group = GROUP_PARTITIONER,
     .order = 8,
     .field = TB_CONFIG_AT(tb_s3_settings_t, timestamp_field),
     .documentation = "The field of timestamp.extractor=RecordField."},
};

const tb_config_table_t tb_s3_config_table = TB_CONFIG_TABLE("S3 sink", s3_sink_keys);

/* A class name's simple name. */
const char *tb_s3_config_simple_name(const char *class_name)
{
    const char *dot = class_name != NULL ? strrchr(class_name, '.') : NULL;
    return dot != NULL ? dot + 1 : class_name != NULL ? class_name : "";
}

/* The memory an object being written sets aside (s3.buffer.max.bytes):
 * its part buffer, and ParquetFormat's row group beside it. */
static long long object_reserve(const char *format, long long part_size)
{
    return strcmp(tb_s3_config_simple_name(format), "ParquetFormat") == 0 ? 2 * part_size
                                                                          : part_size;
}

/* The format class of each view an object of a group has (tb_s3_format.h's
 * record views), in the order they are committed: the keys, the headers
 * and last the values; NULL for a view not stored. */
void tb_s3_config_view_formats(const tb_s3_settings_t *k,
                               const char *formats[TB_S3_VIEW_COUNT])
{
    formats[TB_S3_VIEW_KEYS] = k->store_keys ? k->keys_format : NULL;
    formats[TB_S3_VIEW_HEADERS] = k->store_headers ? k->headers_format : NULL;
    formats[TB_S3_VIEW_VALUE] = k->format;
}

/* What the objects of one encoded partition set aside together. */
long long tb_s3_config_group_reserve(const tb_s3_settings_t *k)
{
    const char *formats[TB_S3_VIEW_COUNT];
    tb_s3_config_view_formats(k, formats);
    long long reserve = 0;
    for (int v = 0; v < TB_S3_VIEW_COUNT; v++) {
        reserve += formats[v] != NULL ? object_reserve(formats[v], k->part_size) : 0;
    }
    return reserve;
}

/* A string key's value, NULL when unset or empty. */
const char *tb_s3_config_nonempty(const char *value)
{
    return value != NULL && value[0] != '\0' ? value : NULL;
}

/* A codec (the value of key) one of built, which listed says in words. */
static void check_codec(const char *key, const char *codec, const char *const *built,
                        const char *listed, json_t *errors)
{
    bool known = codec == NULL;
    for (size_t i = 0; built[i] != NULL && !known; i++) {
        known = strcmp(codec, built[i]) == 0;
    }
    if (!known) {
        char message[512];
        snprintf(message, sizeof(message), "%s %s is not built in tributary: %s", key,
                 codec, listed);
        tb_config_error_add(errors, key, message);
    }
}

static const char *const avro_codecs_built[] = {"null", "deflate", NULL};
static const char *const parquet_codecs_built[] = {"none", "snappy", "gzip", "zstd",
                                                   NULL};

/* The format class of key, of a view (NULL: not stored) that takes the
 * formats of allowed (simple names), which listed says in words. */
static void check_view_format(const char *key, const char *format,
                              const char *const *allowed, const char *listed,
                              json_t *errors)
{
    const char *name = tb_s3_config_simple_name(format);
    bool known = format == NULL;
    for (size_t i = 0; allowed[i] != NULL && !known; i++) {
        known = strcmp(name, allowed[i]) == 0;
    }
    if (!known) {
        char message[512];
        snprintf(message, sizeof(message), "%s %s is no format of the S3 sink for %s",
                 key, format, listed);
        tb_config_error_add(errors, key, message);
    }
}

static void check_format(const tb_s3_settings_t *k, json_t *errors)
{
    static const char *const all[] = {"JsonFormat", "AvroFormat", "ParquetFormat",
                                      "ByteArrayFormat", NULL};
    /* as Confluent's: ByteArrayFormat does not write headers */
    static const char *const for_headers[] = {"JsonFormat", "AvroFormat", "ParquetFormat",
                                              NULL};
    const char *formats[TB_S3_VIEW_COUNT];
    tb_s3_config_view_formats(k, formats);
    check_view_format(TB_S3_KEY_FORMAT, formats[TB_S3_VIEW_VALUE], all,
                      "values: JsonFormat, AvroFormat, ParquetFormat or ByteArrayFormat",
                      errors);
    check_view_format(TB_S3_KEY_KEYS_FORMAT, formats[TB_S3_VIEW_KEYS], all,
                      "keys: JsonFormat, AvroFormat, ParquetFormat or ByteArrayFormat",
                      errors);
    check_view_format(TB_S3_KEY_HEADERS_FORMAT, formats[TB_S3_VIEW_HEADERS], for_headers,
                      "headers: JsonFormat, AvroFormat or ParquetFormat", errors);
    bool avro = false, parquet = false;
    for (int v = 0; v < TB_S3_VIEW_COUNT; v++) {
        avro = avro || (formats[v] != NULL &&
                        strcmp(tb_s3_config_simple_name(formats[v]), "AvroFormat") == 0);
        parquet = parquet ||
                  (formats[v] != NULL &&
                   strcmp(tb_s3_config_simple_name(formats[v]), "ParquetFormat") == 0);
    }
    if (avro) {
        check_codec(TB_S3_KEY_AVRO_CODEC, k->avro_codec, avro_codecs_built,
                    "null or deflate", errors);
    }
    if (parquet) {
        check_codec(TB_S3_KEY_PARQUET_CODEC, k->parquet_codec, parquet_codecs_built,
                    "none, snappy, gzip or zstd", errors);
    }
    /* a format that compresses itself takes no s3.compression.type; keys
     * or headers in it beside values that are compressed are not */
    const char *name = tb_s3_config_simple_name(k->format);
    bool own = strcmp(name, "AvroFormat") == 0 || strcmp(name, "ParquetFormat") == 0;
    const char *compression = k->compression;
    if (own && compression != NULL && strcmp(compression, "none") != 0) {
        char message[512];
        snprintf(message, sizeof(message),
                 TB_S3_KEY_COMPRESSION " applies to JsonFormat and ByteArrayFormat: %s "
                                       "compresses with %s",
                 name,
                 strcmp(name, "AvroFormat") == 0 ? TB_S3_KEY_AVRO_CODEC
                                                 : TB_S3_KEY_PARQUET_CODEC);
        tb_config_error_add(errors, TB_S3_KEY_COMPRESSION, message);
    }
}

static void check_partitioner(const tb_s3_settings_t *k, json_t *errors)
{
    static const char *const names[] = {"DefaultPartitioner", "FieldPartitioner",
                                        "TimeBasedPartitioner", "DailyPartitioner",
                                        "HourlyPartitioner"};
    const char *partitioner = k->partitioner;
    const char *name = tb_s3_config_simple_name(partitioner);
    size_t which = 0;
    while (which < 5 && strcmp(name, names[which]) != 0) {
        which++;
    }
    if (which == 5) {
        char message[512];
        snprintf(message, sizeof(message),
                 TB_S3_KEY_PARTITIONER " %s is no partitioner tributary has: "
                                       "DefaultPartitioner, FieldPartitioner, "
                                       "TimeBasedPartitioner, DailyPartitioner or "
                                       "HourlyPartitioner",
                 partitioner != NULL ? partitioner : "");
        tb_config_error_add(errors, TB_S3_KEY_PARTITIONER, message);
        return;
    }
    if (which == 1 && json_array_size(k->field_name) == 0) {
        tb_config_error_add(errors, TB_S3_KEY_FIELD_NAME,
                            "FieldPartitioner needs " TB_S3_KEY_FIELD_NAME);
    }
    if (which < 2) {
        return;
    }
    if (which == 2 && tb_s3_config_nonempty(k->path_format) == NULL) {
        tb_config_error_add(errors, TB_S3_KEY_PATH_FORMAT,
                            "TimeBasedPartitioner needs " TB_S3_KEY_PATH_FORMAT);
    }
    /* a duration that did not parse has its own error */
    if (which == 2 && k->duration <= 0 &&
        json_object_get(errors, TB_S3_KEY_DURATION) == NULL) {
        tb_config_error_add(errors, TB_S3_KEY_DURATION,
                            "TimeBasedPartitioner needs a positive " TB_S3_KEY_DURATION);
    }
    if (tb_s3_config_nonempty(k->locale) == NULL) {
        tb_config_error_add(errors, TB_S3_KEY_LOCALE,
                            "the time-based partitioners need " TB_S3_KEY_LOCALE);
    }
    const char *zone = tb_s3_config_nonempty(k->timezone);
    char errstr[300];
    tb_s3_partitioner_t *probe = NULL;
    if (zone == NULL) {
        tb_config_error_add(errors, TB_S3_KEY_TIMEZONE,
                            "the time-based partitioners need " TB_S3_KEY_TIMEZONE);
    } else if (tb_config_error_count(errors) == 0 &&
               (probe = tb_s3_partitioner_new(k, errstr, sizeof(errstr))) == NULL) {
        tb_config_error_add(errors, TB_S3_KEY_TIMEZONE, errstr);
    }
    tb_s3_partitioner_free(probe);
}

static void refuse_unbuilt(const tb_s3_settings_t *k, json_t *errors)
{
    if (tb_s3_config_nonempty(k->sse_customer_key) != NULL) {
        tb_config_error_add(errors, TB_S3_KEY_SSE_CUSTOMER_KEY,
                            TB_S3_KEY_SSE_CUSTOMER_KEY
                            " (SSE-C) is not built in tributary: use s3.sse.algorithm");
    }
    const char *compatibility = k->schema_compatibility;
    if (compatibility != NULL && strcmp(compatibility, "NONE") != 0) {
        tb_config_error_add(errors, TB_S3_KEY_SCHEMA_COMPATIBILITY,
                            TB_S3_KEY_SCHEMA_COMPATIBILITY
                            ": only NONE is built in tributary (objects are not rotated "
                            "on a schema change)");
    }
}

/* libcurl before 8.10 signs a request that carries both
 * x-amz-server-side-encryption and x-amz-server-side-encryption-aws-kms-
 * key-id with its headers in the wrong order (by "name:value" lines, '-'
 * before ':'), and S3 refuses every such request (403
 * SignatureDoesNotMatch): refused here rather than at the first object. */
static void check_kms_key_signing(const tb_s3_settings_t *k, json_t *errors)
{
    const curl_version_info_data *curl = curl_version_info(CURLVERSION_NOW);
    const char *algorithm = k->sse_algorithm;
    if (tb_s3_config_nonempty(k->sse_kms_key) == NULL || algorithm == NULL ||
        strcmp(algorithm, "aws:kms") != 0 || curl->version_num >= 0x080a00) {
        return;
    }
    char message[512];
    snprintf(message, sizeof(message),
             TB_S3_KEY_SSE_KMS_KEY " needs libcurl 8.10 or later to sign its requests "
                                   "(this worker has %s, whose signature S3 refuses "
                                   "with it); leave it empty for the account's key",
             curl->version);
    tb_config_error_add(errors, TB_S3_KEY_SSE_KMS_KEY, message);
}

/* The checks across keys, on the keys as parsed (a key that did not parse
 * reads as unset, and has its own error). */
static void check_keys(const tb_s3_settings_t *k, json_t *errors)
{
    check_format(k, errors);
    check_partitioner(k, errors);
    refuse_unbuilt(k, errors);
    check_kms_key_signing(k, errors);
    if ((tb_s3_config_nonempty(k->access_key) == NULL) !=
        (tb_s3_config_nonempty(k->secret_key) == NULL)) {
        tb_config_error_add(errors, TB_S3_KEY_ACCESS_KEY,
                            TB_S3_KEY_ACCESS_KEY " and " TB_S3_KEY_SECRET_KEY
                                                 " are set together or not at all");
    }
    const char *extractor = k->extractor;
    if (extractor != NULL && strcmp(extractor, "RecordField") == 0 &&
        tb_s3_config_nonempty(k->timestamp_field) == NULL) {
        tb_config_error_add(
            errors, TB_S3_KEY_TIMESTAMP_FIELD,
            "timestamp.extractor=RecordField needs " TB_S3_KEY_TIMESTAMP_FIELD);
    }
    long long reserve = tb_s3_config_group_reserve(k);
    if (k->buffer_max > 0 && reserve > k->buffer_max) {
        char message[512];
        snprintf(message, sizeof(message),
                 TB_S3_KEY_BUFFER_MAX " %lld is less than one object needs: %lld bytes "
                                      "(" TB_S3_KEY_PART_SIZE
                                      ", twice it with ParquetFormat, for the values "
                                      "and each of the keys and headers stored)",
                 k->buffer_max, reserve);
        tb_config_error_add(errors, TB_S3_KEY_BUFFER_MAX, message);
    }
    if (tb_s3_config_nonempty(k->directory_delim) == NULL) {
        tb_config_error_add(errors, TB_S3_KEY_DIRECTORY_DELIM,
                            TB_S3_KEY_DIRECTORY_DELIM " must not be empty");
    }
    if (tb_s3_config_nonempty(k->file_delim) == NULL) {
        tb_config_error_add(errors, TB_S3_KEY_FILE_DELIM,
                            TB_S3_KEY_FILE_DELIM " must not be empty");
    }
}

void tb_s3_config_validate(const json_t *values, json_t *errors)
{
    tb_s3_settings_t keys;
    if (tb_config_fill(&tb_s3_config_table, values, &keys) == 0) {
        check_keys(&keys, errors);
    }
}

/* Connect's keys of Confluent's S3 sink that tributary does not build. */
const char *const tb_s3_config_refused_keys[] = {"s3.proxy.",
                                                 "s3.credentials.provider.",
                                                 "s3.object.tagging",
                                                 "s3.wan.mode",
                                                 "s3.elastic.buffer.",
                                                 "s3.ssea.name",
                                                 "s3.http.send.expect.continue.enabled",
                                                 "s3.object.behavior.on.tagging.error",
                                                 "parquet.",
                                                 "avro.",
                                                 "format.bytearray.",
                                                 NULL};

json_t *tb_s3_config_task_configs(const json_t *config, int max_tasks)
{
    json_t *list = json_array();
    for (int i = 0; i < max_tasks; i++) {
        json_array_append_new(list, json_deep_copy(config));
    }
    return list;
}
