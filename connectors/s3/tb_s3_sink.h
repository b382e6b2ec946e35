/*
 * tb_s3_sink.h - the S3 sink plugin's parts, shared by its files only (the
 * plugin itself is tb_s3_sink_plugin, listed in connectors/plugins.c):
 *
 *   s3_sink.c           the task's entry points: put, flush, open,
 *                       close, start
 *   s3_views.c          a record as each stored view sees it, written
 *                       to its objects (tb_s3_task.h)
 *   s3_objects.c        a task's partitions, commit groups and open
 *                       objects (tb_s3_task.h)
 *   s3_upload.c         objects uploaded as parts and committed, the
 *                       metrics (tb_s3_task.h)
 *   s3_config.c         the config table, the typed settings and the
 *                       checks across keys (tb_s3_config.h)
 *   s3_client.c         S3's requests, signed by libcurl (tb_s3_client.h)
 *   s3_partitioner.c    encoded partitions and object names
 *                       (tb_s3_partitioner.h)
 *   s3_format_json.c    JsonFormat, s3_format_avro.c AvroFormat,
 *                       s3_format_bytes.c ByteArrayFormat,
 *                       s3_format_parquet.c ParquetFormat (tb_s3_format.h)
 *   parquet_pages.c     Parquet's level encoding and codecs
 *                       (tb_parquet_pages.h)
 *   thrift_compact.c    Thrift's compact protocol, for Parquet's metadata
 *                       (tb_thrift_compact.h)
 *   s3_recovery.c       where a partition resumes, from the bucket's names
 *                       (tb_s3_recovery.h)
 */
#ifndef TB_S3_SINK_H
#define TB_S3_SINK_H

#define TB_S3_KEY_BUCKET "s3.bucket.name"
#define TB_S3_KEY_REGION "s3.region"
#define TB_S3_KEY_STORE_URL "store.url"
#define TB_S3_KEY_PATH_STYLE "s3.path.style.access.enabled"
#define TB_S3_KEY_TOPICS_DIR "topics.dir"
#define TB_S3_KEY_DIRECTORY_DELIM "directory.delim"
#define TB_S3_KEY_FILE_DELIM "file.delim"
#define TB_S3_KEY_ZERO_PAD "filename.offset.zero.pad.width"
#define TB_S3_KEY_FLUSH_SIZE "flush.size"
#define TB_S3_KEY_ROTATE_INTERVAL "rotate.interval.ms"
#define TB_S3_KEY_ROTATE_SCHEDULE "rotate.schedule.interval.ms"
#define TB_S3_KEY_FORMAT "format.class"
#define TB_S3_KEY_PARTITIONER "partitioner.class"
#define TB_S3_KEY_FIELD_NAME "partition.field.name"
#define TB_S3_KEY_PATH_FORMAT "path.format"
#define TB_S3_KEY_DURATION "partition.duration.ms"
#define TB_S3_KEY_LOCALE "locale"
#define TB_S3_KEY_TIMEZONE "timezone"
#define TB_S3_KEY_EXTRACTOR "timestamp.extractor"
#define TB_S3_KEY_TIMESTAMP_FIELD "timestamp.field"
#define TB_S3_KEY_PART_SIZE "s3.part.size"
#define TB_S3_KEY_COMPRESSION "s3.compression.type"
#define TB_S3_KEY_COMPRESSION_LEVEL "s3.compression.level"
#define TB_S3_KEY_SEPARATOR "format.bytearray.separator"
#define TB_S3_KEY_EXTENSION "format.bytearray.extension"
#define TB_S3_KEY_PARQUET_CODEC "parquet.codec"
#define TB_S3_KEY_AVRO_CODEC "avro.codec"
#define TB_S3_KEY_NULL_VALUES "behavior.on.null.values"
#define TB_S3_KEY_STORE_KEYS "store.kafka.keys"
#define TB_S3_KEY_STORE_HEADERS "store.kafka.headers"
#define TB_S3_KEY_KEYS_FORMAT "keys.format.class"
#define TB_S3_KEY_HEADERS_FORMAT "headers.format.class"
#define TB_S3_KEY_SSE_ALGORITHM "s3.sse.algorithm"
#define TB_S3_KEY_SSE_KMS_KEY "s3.sse.kms.key.id"
#define TB_S3_KEY_SSE_CUSTOMER_KEY "s3.sse.customer.key"
#define TB_S3_KEY_ACL "s3.acl.canned"
#define TB_S3_KEY_RETRY_BACKOFF "s3.retry.backoff.ms"
#define TB_S3_KEY_PART_RETRIES "s3.part.retries"
#define TB_S3_KEY_TASK_BACKOFF "retry.backoff.ms"
#define TB_S3_KEY_REQUEST_TIMEOUT "s3.request.timeout.ms"
#define TB_S3_KEY_BUFFER_MAX "s3.buffer.max.bytes"
#define TB_S3_KEY_ACCESS_KEY "aws.access.key.id"
#define TB_S3_KEY_SECRET_KEY "aws.secret.access.key"
#define TB_S3_KEY_SCHEMA_COMPATIBILITY "schema.compatibility"

/* The class names of the formats and partitioners, as Confluent's. */
#define TB_S3_FORMAT_JSON "io.confluent.connect.s3.format.json.JsonFormat"
#define TB_S3_FORMAT_BYTES "io.confluent.connect.s3.format.bytearray.ByteArrayFormat"
#define TB_S3_FORMAT_AVRO "io.confluent.connect.s3.format.avro.AvroFormat"
#define TB_S3_FORMAT_PARQUET "io.confluent.connect.s3.format.parquet.ParquetFormat"
#define TB_S3_PARTITIONER_PACKAGE "io.confluent.connect.storage.partitioner."

#endif
