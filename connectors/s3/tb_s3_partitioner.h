/*
 * tb_s3_partitioner.h - where in the bucket a record goes, as Confluent's
 * storage partitioners put it, and the object names around it:
 *
 *   <topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+<start>.<ext>
 *
 * with directory.delim between the parts and file.delim in the name.
 * DefaultPartitioner encodes "partition=<n>"; FieldPartitioner
 * "<field>=<value>" for each of partition.field.name; TimeBasedPartitioner
 * (and Daily, Hourly) the record's time, floored to partition.duration.ms
 * in timezone, written as path.format, a Joda-Time pattern.
 *
 * Ownership: a partitioner is the caller's (tb_s3_partitioner_free);
 * strings returned are new (free()).
 */
#ifndef TB_S3_PARTITIONER_H
#define TB_S3_PARTITIONER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "connectors/s3/tb_s3_config.h"
#include "connectors/tb_plugin.h"

typedef enum {
    TB_S3_PARTITION_DEFAULT = 0,
    TB_S3_PARTITION_FIELD,
    TB_S3_PARTITION_TIME,
} tb_s3_partition_kind_t;

typedef enum {
    TB_S3_TIME_WALLCLOCK = 0,
    TB_S3_TIME_RECORD,
    TB_S3_TIME_RECORD_FIELD,
} tb_s3_time_source_t;

typedef struct tb_s3_partitioner tb_s3_partitioner_t;

/* The partitioner of a config's settings (its partitioner.class and the
 * keys of its kind; nothing kept of k), or NULL with errstr naming the
 * key. */
tb_s3_partitioner_t *tb_s3_partitioner_new(const tb_s3_settings_t *k, char *errstr,
                                           size_t errstr_size);

void tb_s3_partitioner_free(tb_s3_partitioner_t *partitioner);

tb_s3_partition_kind_t tb_s3_partitioner_kind(const tb_s3_partitioner_t *partitioner);

/* The record's time for the time-based partitioner and rotate.interval.ms:
 * per timestamp.extractor (Record: the Kafka timestamp; RecordField: the
 * value's field timestamp.field, a Timestamp, a number of ms, or a text
 * in ISO 8601; Wallclock: now_ms). -1 with errstr when the record has none. */
int64_t tb_s3_partitioner_time(const tb_s3_partitioner_t *partitioner,
                               const tb_sink_record_t *record, int64_t now_ms,
                               char *errstr, size_t errstr_size);

/* The encoded partition of record (its time is time_ms), or NULL with
 * errstr (a field that is missing or not a primitive). */
char *tb_s3_partitioner_encode(const tb_s3_partitioner_t *partitioner,
                               const tb_sink_record_t *record, int64_t time_ms,
                               char *errstr, size_t errstr_size);

/* The Joda-Time pattern written at utc_ms (already floored) in the
 * partitioner's zone: 'text', yyyy/YYYY (year), MM, dd, HH, mm, ss, SSS,
 * DDD (day of year), and the letters' shorter runs. */
void tb_s3_partitioner_format_time(const tb_s3_partitioner_t *partitioner, int64_t utc_ms,
                                   char *out, size_t size);

/* 0 when pattern holds only what tb_s3_partitioner_format_time writes, or
 * -1 with the reason. */
int tb_s3_path_format_check(const char *pattern, char *reason, size_t reason_size);

/* The names of the objects: what the parts between the delimiters are. */
typedef struct {
    const char *topics_dir;
    const char *directory_delim;
    const char *file_delim;
    int zero_pad; /* filename.offset.zero.pad.width */
} tb_s3_layout_t;

/* <topics.dir>/<topic>/<encoded>/<topic>+<partition>+<start><extension>. */
char *tb_s3_object_key(const tb_s3_layout_t *layout, const char *topic,
                       const char *encoded, int32_t partition, int64_t start,
                       const char *extension);

/* Where the objects of topic are listed from: <topics.dir>/<topic>/, and
 * with DefaultPartitioner the directory of the partition only. */
char *tb_s3_list_prefix(const tb_s3_layout_t *layout,
                        const tb_s3_partitioner_t *partitioner, const char *topic,
                        int32_t partition);

/* The start offset a key names when it is an object of the values of
 * topic's partition (its last path part is <topic>+<partition>+<digits>.
 * <anything>, but not the keys or headers beside one: <digits>.keys.<ext>,
 * <digits>.headers.<ext>), or -1. */
int64_t tb_s3_key_start_offset(const tb_s3_layout_t *layout, const char *key,
                               const char *topic, int32_t partition);

#endif
