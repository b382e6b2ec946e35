/*
 * tb_avro_data.h - Avro schemas <-> Connect schemas (core/tb_data.h), as
 * Confluent's AvroConverter maps them; for avro_converter.c.
 *
 * Connect -> Avro: INT8 and INT16 are int with "connect.type", INT32 int,
 * INT64 long, FLOAT32 float, FLOAT64 double; STRUCT a record named after
 * the schema (unnamed: ConnectDefault, ConnectDefault2, ... in namespace
 * io.confluent.connect.avro), ARRAY an array, MAP with STRING keys a map;
 * an optional schema the union ["null", T] with default null (or
 * [T, "null"] under its non-null default). Decimal is bytes with logical
 * type decimal (scale, and precision from "connect.decimal.precision",
 * else 64), Date int/date, Time int/time-millis, Timestamp
 * long/timestamp-millis. A name, version, doc and parameters travel as
 * connect.name, connect.version, connect.doc and connect.parameters.
 *
 * Avro -> Connect: the other way round, and: enum is STRING (parameter
 * io.confluent.connect.avro.Enum: its name), fixed BYTES (parameter
 * connect.fixed.size), uuid STRING, time-micros and the timestamp-micros
 * and local-timestamp types INT64. A union other than null and one type has
 * no Connect form here.
 *
 * Values take the Avro JSON form of registry/avro/tb_avro.h, which for these
 * schemas is Connect's JSON payload form (tb_json_data.h) with Decimals as
 * their exact digits.
 */
#ifndef TB_AVRO_DATA_H
#define TB_AVRO_DATA_H

#include <stddef.h>

#include "core/tb_data.h"
#include "registry/avro/tb_avro.h"

/* The Connect schema of an Avro schema (a new reference), or NULL with
 * errstr naming the field that has none. */
tb_schema_t *tb_avro_to_connect(const tb_avro_schema_t *schema, char *errstr,
                                size_t errstr_size);

/* The Avro schema text (malloc'd) of a Connect schema, or NULL with errstr
 * naming the field that has none. */
char *tb_avro_from_connect(const tb_schema_t *schema, char *errstr, size_t errstr_size);

/* The value (new, the caller's) of the Avro binary datum payload[0..len)
 * under avro, whose Connect schema is connect. 0, or -1 with errstr. */
int tb_avro_to_value(const tb_avro_schema_t *avro, const tb_schema_t *connect,
                     const uint8_t *payload, size_t len, tb_value_t **value, char *errstr,
                     size_t errstr_size);

/* Appends the Avro binary of value under schema, which avro was derived
 * from. 0, or -1 with errstr naming the field that does not fit. */
int tb_avro_from_value(const tb_avro_schema_t *avro, const tb_schema_t *schema,
                       const tb_value_t *value, tb_buf_t *out, char *errstr,
                       size_t errstr_size);

#endif
