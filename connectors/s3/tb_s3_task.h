/*
 * tb_s3_task.h - an S3 sink task's state, shared by the files of its task:
 * s3_objects.c (its partitions' commit groups and the objects open in
 * them), s3_upload.c (objects' bytes uploaded, committed, the metrics),
 * s3_views.c (a record as each stored view sees it, written to its
 * objects) and s3_sink.c (the task's entry points).
 *
 * Ownership: a task owns its partitions (tps), each its objects, each its
 * buffer and format state; the strings a task keeps are its own.
 */
#ifndef TB_S3_TASK_H
#define TB_S3_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "connectors/s3/tb_s3_client.h"
#include "connectors/s3/tb_s3_config.h"
#include "connectors/s3/tb_s3_format.h"
#include "connectors/s3/tb_s3_partitioner.h"
#include "connectors/tb_plugin.h"
#include "core/tb_buf.h"
#include "core/tb_metrics.h"

/* How the objects of a view are written; format NULL: the view is not
 * stored. */
typedef struct {
    const tb_s3_format_t *format;
    const void *options; /* the task's bytes, avro, parquet, or NULL */
    char *extension;     /* ".keys" or ".headers" before it, ".gz" after */
    bool gzip;           /* s3.compression.type, for JsonFormat and ByteArrayFormat */
    const char *what;    /* how a failure names the view: "" for the values */
} tb_s3_writer_t;

/* An object being written: one view of one encoded partition of a commit
 * group. */
typedef struct {
    tb_s3_view_t view;
    char *topic; /* as routed: the name's */
    char *encoded;
    char *key;
    int64_t start;
    tb_buf_t buf; /* bytes not uploaded yet (compressed, with gzip) */
    z_stream z;
    bool z_open;
    void *state;   /* the format's (tb_s3_format_t.open), NULL: none */
    bool finished; /* the format's and the compressor's ends are in buf */
    bool done;     /* visible in the bucket */
    char *upload_id;
    char **etags;
    int parts;
} tb_s3_object_t;

/* A Kafka partition of the task and its commit group. */
typedef struct {
    char *topic; /* as read from Kafka */
    int32_t partition;
    tb_s3_object_t *objects; /* in the order they began: by start offset */
    size_t count;
    size_t records;      /* in the group */
    int64_t group_start; /* the group's first offset */
    int64_t last;        /* the group's last offset */
    int64_t next;        /* after the last record taken; -1: none yet */
    int64_t base_time;   /* the group's first record's time (rotate.interval.ms) */
    int64_t deadline_ms; /* wall clock (rotate.schedule.interval.ms); 0: none */
    bool full;           /* the group is to be committed before more is taken */
} tb_s3_tp_t;

typedef struct {
    const tb_task_context_t *ctx;
    tb_s3_client_t *client;
    tb_s3_partitioner_t *partitioner;
    char *bucket;
    char *topics_dir;
    char *directory_delim;
    char *file_delim;
    tb_s3_layout_t layout;
    tb_s3_writer_t writers[TB_S3_VIEW_COUNT];
    tb_s3_bytes_options_t bytes;
    tb_s3_avro_options_t avro;
    tb_s3_parquet_options_t parquet;
    char *separator;
    tb_schema_t *header_entry;   /* {key, value} of STRINGs, Confluent's */
    tb_schema_t *headers_schema; /* an ARRAY of them */
    tb_schema_t *headers_struct; /* RecordHeaders {headers}, for ParquetFormat */
    int level;
    size_t flush_size;
    int64_t rotate_ms;
    int64_t schedule_ms;
    size_t part_size;
    size_t reserve; /* per encoded partition being written (tb_s3_config_group_reserve) */
    size_t buffer_max; /* s3.buffer.max.bytes */
    bool ignore_nulls;
    int64_t task_backoff_ms;
    tb_s3_tp_t *tps;
    size_t tp_count;
    tb_buf_t scratch;       /* one record's bytes */
    tb_series_t *buffered;  /* tributary_s3_buffered_bytes */
    tb_series_t *committed; /* tributary_s3_objects_total */
    tb_series_t *requests;  /* tributary_s3_requests_total */
    uint64_t requests_seen; /* what requests was told so far */
} tb_s3_task_t;

/* The metric families a task updates (s3_upload.c). */
extern const tb_metric_def_t tb_s3_buffered_bytes;
extern const tb_metric_def_t tb_s3_objects_total;
extern const tb_metric_def_t tb_s3_requests_total;

/* s3_objects.c */

/* Drops tp's group (aborting its multipart uploads). */
void tb_s3_group_clear(tb_s3_task_t *task, tb_s3_tp_t *tp);

/* The task's state of a Kafka partition, or NULL. */
tb_s3_tp_t *tb_s3_tp_find(tb_s3_task_t *task, const char *topic, int32_t partition);

/* A new state of a Kafka partition (the task's), or NULL on no memory. */
tb_s3_tp_t *tb_s3_tp_add(tb_s3_task_t *task, const char *topic, int32_t partition);

/* Drops tp's group and tp from the task. */
void tb_s3_tp_remove(tb_s3_task_t *task, tb_s3_tp_t *tp);

/* The object of view of tp's group for records of topic (as routed) in
 * encoded, or NULL. */
tb_s3_object_t *tb_s3_object_find(tb_s3_tp_t *tp, const char *topic, const char *encoded,
                                  tb_s3_view_t view);

/* A new object of view of tp's group, begun at offset. -1 on no memory. */
int tb_s3_object_add(tb_s3_task_t *task, tb_s3_tp_t *tp, const char *topic,
                     const char *encoded, int64_t offset, tb_s3_view_t view);

/* Drops the last count objects of tp's group, begun for a record that
 * could not be written. */
void tb_s3_objects_drop_last(tb_s3_task_t *task, tb_s3_tp_t *tp, size_t count);

/* Appends record (as o's view sees it) to o, begun for it when fresh,
 * through the format: 0, or -1 with reason. */
int tb_s3_object_write(tb_s3_task_t *task, tb_s3_object_t *o, bool fresh,
                       const tb_sink_record_t *r, char *reason, size_t reason_size);

/* Whether one more encoded partition's objects would set aside more than
 * s3.buffer.max.bytes (errstr says so). */
bool tb_s3_buffers_full(const tb_s3_task_t *task, char *errstr, size_t errstr_size);

/* s3_upload.c */

/* Appends data to o's buffer, through gzip when the task compresses.
 * Returns 0, or -1 on no memory. */
int tb_s3_object_append(tb_s3_task_t *task, tb_s3_object_t *o, const void *data,
                        size_t len, bool finish);

/* Uploads the full parts of tp's objects, and commits its group when it is
 * full: object by object in the order of their start offsets, so that the
 * last one written is the one recovery looks at. */
int tb_s3_tp_sync(tb_s3_task_t *task, tb_s3_tp_t *tp, char *errstr, size_t errstr_size);

/* The gauge of buffered bytes and the count of requests, after a put or a
 * flush. */
void tb_s3_metrics_update(tb_s3_task_t *task);

/* tb_s3_tp_sync() for every partition of the task; the first failure's result. */
int tb_s3_sync_all(tb_s3_task_t *task, char *errstr, size_t errstr_size);

/* s3_views.c */

/* A record as each stored view sees it: the view's data as the value of a
 * record, so that a format writes it as it writes values, with what was
 * made for it (tb_s3_views_free). */
typedef struct {
    tb_sink_record_t records[TB_S3_VIEW_COUNT];
    tb_value_t *values[TB_S3_VIEW_COUNT];
    tb_schema_t *schemas[TB_S3_VIEW_COUNT];
} tb_s3_views_t;

/* Frees the values and schemas made for views (not views itself). */
void tb_s3_views_free(tb_s3_views_t *views);

/* Fills views with r as each stored view sees it: 0, or -1 with reason
 * when r cannot be stored (a null key or no headers, as Confluent's
 * refuses them). */
int tb_s3_views_of(const tb_s3_task_t *task, const tb_sink_record_t *r,
                   tb_s3_views_t *views, char *reason, size_t reason_size);

/* Whether every view of r fits the objects of tp's group in encoded (a
 * format with a schema per object: AvroFormat, ParquetFormat). */
bool tb_s3_views_fit(tb_s3_task_t *task, tb_s3_tp_t *tp, const char *topic,
                     const char *encoded, const tb_s3_views_t *views);

/* Writes every view of r to its object of tp's group in encoded (begun for
 * it when fresh), the keys and headers first: 0, 1 when r cannot be
 * written (reason says why; nothing of it stays, the fresh objects
 * dropped), or -1 with errstr when a view failed after another took r (the
 * group cannot be committed: the task fails, and writes it again). */
int tb_s3_views_write(tb_s3_task_t *task, tb_s3_tp_t *tp, const char *topic,
                      const char *encoded, bool fresh, const tb_s3_views_t *views,
                      char *reason, size_t reason_size, char *errstr, size_t errstr_size);

#endif
