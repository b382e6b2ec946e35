/*
 * bench_typed - CPU per record of the typed record path, without a broker
 * (bench/README.md, "The typed path").
 *
 *   bench_typed transforms N   the transforms scenario's per-record work:
 *       the 100-byte JSON values (JsonConverter, schemas.enable=false) through
 *       the chain RegexRouter, InsertField$Value, ReplaceField$Value, as a
 *       sink task whose plugin takes text runs it (tb_sink_transform: the
 *       chain on the value's text, tb_chain_apply_json, where it can, else
 *       parse, transform, write the plugin's JSON text);
 *   bench_typed cdc N          a CDC source's typed records: a change
 *       event envelope struct (before, after, source, op, ts_ms), its schema
 *       built once as a CDC source builds it per table, written by
 *       JsonConverter with schemas.enable=true (tb_converter_from_typed),
 *       then read back as a sink of such a topic does (tb_converter_to_typed).
 *
 * Prints one JSON line: scenario, records, cpu_seconds, cpu_us_per_record,
 * and the first output's first 120 bytes (for a look). The CPU clock is the
 * thread's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connectors/converters/tb_converter.h"
#include "connectors/runtime/task/tb_task_transforms.h"

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *why)
{
    fprintf(stderr, "bench_typed: %s: %s\n", what, why);
    exit(1);
}

static void report(const char *scenario, long n, double cpu, const char *first,
                   size_t first_len)
{
    json_t *line = json_pack("{s:s, s:I, s:f, s:f, s:s%}", "scenario", scenario,
                             "records", (json_int_t)n, "cpu_seconds", cpu,
                             "cpu_us_per_record", cpu * 1e6 / (double)n, "first", first,
                             first_len < 120 ? first_len : 120);
    char *text = json_dumps(line, JSON_COMPACT);
    puts(text);
    free(text);
    json_decref(line);
}

static tb_converter_t *json_converter(bool schemas)
{
    char errstr[512];
    json_t *settings = json_pack("{s:s}", "schemas.enable", schemas ? "true" : "false");
    tb_converter_t *c = tb_converter_create("org.apache.kafka.connect.json.JsonConverter",
                                            settings, false, errstr, sizeof(errstr));
    json_decref(settings);
    if (c == NULL) {
        die("JsonConverter", errstr);
    }
    return c;
}

static void transforms(long n)
{
    char errstr[512];
    json_t *config = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "transforms",
        "route,insert,drop", "transforms.route.type",
        "org.apache.kafka.connect.transforms.RegexRouter", "transforms.route.regex",
        "bench-in-(.*)", "transforms.route.replacement", "routed-$1",
        "transforms.insert.type", "org.apache.kafka.connect.transforms.InsertField$Value",
        "transforms.insert.static.field", "origin", "transforms.insert.static.value",
        "bench", "transforms.insert.topic.field", "topic", "transforms.drop.type",
        "org.apache.kafka.connect.transforms.ReplaceField$Value",
        "transforms.drop.exclude", "note");
    tb_chain_t *chain = tb_chain_create(config, errstr, sizeof(errstr));
    json_decref(config);
    if (chain == NULL) {
        die("chain", errstr);
    }
    tb_converter_t *converters[2] = {json_converter(false), json_converter(false)};
    char values[64][128];
    for (int i = 0; i < 64; i++) { /* as bench/harness.py's records: 100 bytes */
        int len = snprintf(values[i], sizeof(values[i]),
                           "{\"id\":%d,\"customer\":\"c%05d\",\"amount\":%d.%02d,"
                           "\"currency\":\"EUR\",\"note\":\"",
                           i * 7919, i * 31, 1000 + i * 377, i % 100);
        while (len < 98) {
            values[i][len++] = 'x';
        }
        memcpy(values[i] + len, "\"}", 3);
    }
    char *first = NULL;
    size_t first_len = 0;
    double start = cpu_seconds();
    for (long i = 0; i < n; i++) {
        const char *value = values[i % 64];
        tb_record_t record = {.topic = "bench-in-1",
                              .partition = 0,
                              .offset = i,
                              .timestamp = 1700000000000,
                              .value = {.bytes = value, .len = strlen(value)}};
        tb_sink_record_t out = {0};
        bool converted[2] = {false, false};
        tb_transform_failure_t failure = {0};
        if (tb_sink_transform(chain, converters, &record, &out, true, converted,
                              &failure) != 0) {
            die("transform", failure.reason);
        }
        if (first == NULL) {
            first = (char *)out.value;
            first_len = out.value_len;
        } else {
            free((void *)out.value);
        }
        tb_record_release(&record);
    }
    double cpu = cpu_seconds() - start;
    report("transforms", n, cpu, first, first_len);
    free(first);
    tb_chain_destroy(chain);
    tb_converter_destroy(converters[0]);
    tb_converter_destroy(converters[1]);
}

static tb_schema_t *optional(tb_schema_t *s)
{
    tb_schema_set_optional(s, true);
    return s;
}

static tb_schema_t *row_schema(void)
{
    tb_schema_t *s = optional(tb_schema_new(TB_TYPE_STRUCT));
    tb_schema_set_name(s, "bench.public.orders.Value");
    tb_schema_add_field(s, "id", tb_schema_new(TB_TYPE_INT64));
    tb_schema_add_field(s, "customer", optional(tb_schema_new(TB_TYPE_STRING)));
    tb_schema_add_field(s, "amount", optional(tb_schema_decimal(2)));
    tb_schema_add_field(s, "price", optional(tb_schema_new(TB_TYPE_FLOAT64)));
    tb_schema_add_field(s, "created", optional(tb_schema_timestamp()));
    tb_schema_add_field(s, "active", optional(tb_schema_new(TB_TYPE_BOOLEAN)));
    return s;
}

static tb_schema_t *envelope_schema(tb_schema_t *row)
{
    tb_schema_t *source = tb_schema_new(TB_TYPE_STRUCT);
    tb_schema_set_name(source, "io.debezium.connector.postgresql.Source");
    const char *strings[] = {"version", "connector", "name", "db", "schema", "table"};
    for (size_t i = 0; i < 6; i++) {
        tb_schema_add_field(source, strings[i], tb_schema_new(TB_TYPE_STRING));
    }
    tb_schema_add_field(source, "ts_ms", tb_schema_new(TB_TYPE_INT64));
    tb_schema_add_field(source, "txId", optional(tb_schema_new(TB_TYPE_INT64)));
    tb_schema_add_field(source, "lsn", optional(tb_schema_new(TB_TYPE_INT64)));
    tb_schema_t *s = tb_schema_new(TB_TYPE_STRUCT);
    tb_schema_set_name(s, "bench.public.orders.Envelope");
    tb_schema_set_version(s, true, 2);
    tb_schema_add_field(s, "before", tb_schema_incref(row));
    tb_schema_add_field(s, "after", tb_schema_incref(row));
    tb_schema_add_field(s, "source", source);
    tb_schema_add_field(s, "op", tb_schema_new(TB_TYPE_STRING));
    tb_schema_add_field(s, "ts_ms", optional(tb_schema_new(TB_TYPE_INT64)));
    return s;
}

static tb_value_t *event(tb_schema_t *envelope, long i)
{
    tb_schema_t *row = tb_schema_field(envelope, "after")->schema;
    tb_schema_t *source = tb_schema_field(envelope, "source")->schema;
    char customer[32];
    unsigned char cents[3] = {(unsigned char)(i >> 16), (unsigned char)(i >> 8),
                              (unsigned char)i};
    tb_value_t *after = tb_value_struct(row);
    tb_value_struct_set(after, "id", tb_value_int(TB_TYPE_INT64, i));
    snprintf(customer, sizeof(customer), "customer %ld", i % 1000);
    tb_value_struct_set(after, "customer", tb_value_string(customer, strlen(customer)));
    tb_value_struct_set(after, "amount", tb_value_bytes(cents, 3));
    tb_value_struct_set(after, "price", tb_value_float(TB_TYPE_FLOAT64, (double)i / 8));
    tb_value_struct_set(after, "created",
                        tb_value_int(TB_TYPE_INT64, 1700000000000 + i * 1000));
    tb_value_struct_set(after, "active", tb_value_bool(i % 2 == 0));
    tb_value_t *src = tb_value_struct(source);
    const char *strings[][2] = {{"version", "3.0.7.Final"}, {"connector", "postgresql"},
                                {"name", "bench"},          {"db", "bench"},
                                {"schema", "public"},       {"table", "orders"}};
    for (size_t k = 0; k < 6; k++) {
        tb_value_struct_set(src, strings[k][0],
                            tb_value_string(strings[k][1], strlen(strings[k][1])));
    }
    tb_value_struct_set(src, "ts_ms", tb_value_int(TB_TYPE_INT64, 1700000000000 + i));
    tb_value_struct_set(src, "txId", tb_value_int(TB_TYPE_INT64, 700 + i / 10));
    tb_value_struct_set(src, "lsn", tb_value_int(TB_TYPE_INT64, 24023128 + i * 64));
    tb_value_t *v = tb_value_struct(envelope);
    tb_value_struct_set(v, "after", after);
    tb_value_struct_set(v, "source", src);
    tb_value_struct_set(v, "op", tb_value_string("c", 1));
    tb_value_struct_set(v, "ts_ms", tb_value_int(TB_TYPE_INT64, 1700000000001 + i));
    return v;
}

static void cdc(long n)
{
    char errstr[512];
    tb_converter_t *c = json_converter(true);
    tb_schema_t *row = row_schema();
    tb_schema_t *envelope = envelope_schema(row);
    tb_value_t *events[64];
    for (long i = 0; i < 64; i++) {
        events[i] = event(envelope, i * 7919);
    }
    char *first = NULL;
    size_t first_len = 0;
    double start = cpu_seconds();
    for (long i = 0; i < n; i++) {
        void *out = NULL;
        size_t len = 0;
        tb_schema_t *schema = NULL;
        tb_value_t *value = NULL;
        if (tb_converter_from_typed(c, "bench.public.orders", envelope, events[i % 64],
                                    &out, &len, errstr, sizeof(errstr)) != 0 ||
            tb_converter_to_typed(c, out, len, &schema, &value, errstr, sizeof(errstr)) !=
                0) {
            die("JsonConverter", errstr);
        }
        tb_schema_decref(schema);
        tb_value_free(value);
        if (first == NULL) {
            first = out;
            first_len = len;
        } else {
            free(out);
        }
    }
    double cpu = cpu_seconds() - start;
    report("cdc", n, cpu, first, first_len);
    free(first);
    for (long i = 0; i < 64; i++) {
        tb_value_free(events[i]);
    }
    tb_schema_decref(envelope);
    tb_schema_decref(row);
    tb_converter_destroy(c);
}

int main(int argc, char **argv)
{
    long n = argc > 2 ? atol(argv[2]) : 0;
    if (argc != 3 || n <= 0 ||
        (strcmp(argv[1], "transforms") != 0 && strcmp(argv[1], "cdc") != 0)) {
        fprintf(stderr, "usage: bench_typed transforms|cdc N\n");
        return 2;
    }
    if (strcmp(argv[1], "transforms") == 0) {
        transforms(n);
    } else {
        cdc(n);
    }
    return 0;
}
