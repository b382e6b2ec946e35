/*
 * bench_formats - encode and decode throughput of one of tributary's
 * converters, as a task calls it, on the JSON values of the other scenarios
 * (bench/README.md, "Formats").
 *
 *   bench_formats -c CONVERTER -t TOPIC -i FILE -n N [-s key=value]...
 *
 * CONVERTER is a class name (e.g. io.confluent.connect.avro.AvroConverter),
 * configured as a value converter with the -s settings (schema.registry.url
 * and the like). Reads up to SAMPLES lines of FILE (JSON values), then:
 *
 *   check   every sample is encoded (TB_DATA_JSON -> Kafka bytes, as a source
 *           task does for TOPIC) and decoded back (as a sink task does) and
 *           must equal itself as JSON: a converter that loses data cannot
 *           look fast. This pass also fills the registry client's caches.
 *   encode  N encodes, cycling over the samples;
 *   decode  N decodes of their encoded forms.
 *
 * Each timed loop is measured with the thread's CPU clock and the monotonic
 * clock. Prints one JSON line: converter, records, encode_seconds,
 * encode_cpu_seconds, decode_seconds, decode_cpu_seconds, value_bytes and
 * encoded_bytes (means per record). Exits 1 with the reason on stderr when a
 * sample does not convert or does not come back equal.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "connectors/converters/tb_converter.h"

#define SAMPLES 4096

typedef struct {
    char *json; /* a value of the input file, NUL-terminated */
    size_t json_len;
    void *encoded; /* its Kafka bytes */
    size_t encoded_len;
} sample_t;

static void usage(void)
{
    fprintf(
        stderr,
        "usage: bench_formats -c CONVERTER -t TOPIC -i FILE -n N [-s key=value]...\n");
    exit(2);
}

static double clock_seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* JSON equality where numbers compare by value: 1.50 and 1.5, 3 and 3.0. */
static bool same_json(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) {
        return json_number_value(a) == json_number_value(b);
    }
    if (json_typeof(a) != json_typeof(b)) {
        return false;
    }
    if (json_is_object(a)) {
        const char *key;
        json_t *value;
        if (json_object_size(a) != json_object_size(b)) {
            return false;
        }
        json_object_foreach ((json_t *)a, key, value) {
            json_t *other = json_object_get(b, key);
            if (other == NULL || !same_json(value, other)) {
                return false;
            }
        }
        return true;
    }
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b)) {
            return false;
        }
        for (size_t i = 0; i < json_array_size(a); i++) {
            if (!same_json(json_array_get(a, i), json_array_get(b, i))) {
                return false;
            }
        }
        return true;
    }
    return json_equal(a, b);
}

static size_t read_samples(const char *path, sample_t *samples)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "bench_formats: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    size_t count = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while (count < SAMPLES && (len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] == '\n') {
            line[--len] = '\0';
        }
        if (len == 0) {
            continue;
        }
        samples[count].json = strndup(line, (size_t)len);
        samples[count].json_len = (size_t)len;
        count++;
    }
    free(line);
    fclose(f);
    if (count == 0) {
        fprintf(stderr, "bench_formats: %s has no values\n", path);
        exit(1);
    }
    return count;
}

/* Encodes and decodes each sample once; exits unless each comes back equal. */
static void check_round_trips(tb_converter_t *converter, const char *topic,
                              sample_t *samples, size_t count)
{
    char errstr[512];
    for (size_t i = 0; i < count; i++) {
        sample_t *s = &samples[i];
        const void *decoded;
        size_t decoded_len;
        bool owned;
        if (tb_converter_from_plugin_topic(converter, topic, TB_DATA_JSON, s->json,
                                           s->json_len, &s->encoded, &s->encoded_len,
                                           errstr, sizeof(errstr)) != 0 ||
            tb_converter_to_plugin(converter, s->encoded, s->encoded_len, &decoded,
                                   &decoded_len, &owned, errstr, sizeof(errstr)) != 0) {
            fprintf(stderr, "bench_formats: value %zu (%s): %s\n", i, s->json, errstr);
            exit(1);
        }
        json_t *want = json_loads(s->json, 0, NULL);
        json_t *got = json_loadb(decoded, decoded_len, 0, NULL);
        bool same = want != NULL && got != NULL && same_json(want, got);
        if (!same) {
            fprintf(stderr,
                    "bench_formats: value %zu came back different:\n  in:  %s\n"
                    "  out: %.*s\n",
                    i, s->json, (int)decoded_len, (const char *)decoded);
        }
        json_decref(want);
        json_decref(got);
        if (owned) {
            free((void *)decoded);
        }
        if (!same) {
            exit(1);
        }
    }
}

typedef struct {
    double seconds;
    double cpu_seconds;
} timing_t;

static timing_t time_encodes(tb_converter_t *converter, const char *topic,
                             const sample_t *samples, size_t count, long long n)
{
    char errstr[512];
    double wall = clock_seconds(CLOCK_MONOTONIC);
    double cpu = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
    for (long long i = 0; i < n; i++) {
        const sample_t *s = &samples[i % (long long)count];
        void *out;
        size_t out_len;
        if (tb_converter_from_plugin_topic(converter, topic, TB_DATA_JSON, s->json,
                                           s->json_len, &out, &out_len, errstr,
                                           sizeof(errstr)) != 0) {
            fprintf(stderr, "bench_formats: encode %lld: %s\n", i, errstr);
            exit(1);
        }
        free(out);
    }
    return (timing_t){clock_seconds(CLOCK_MONOTONIC) - wall,
                      clock_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu};
}

static timing_t time_decodes(tb_converter_t *converter, const sample_t *samples,
                             size_t count, long long n)
{
    char errstr[512];
    double wall = clock_seconds(CLOCK_MONOTONIC);
    double cpu = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
    for (long long i = 0; i < n; i++) {
        const sample_t *s = &samples[i % (long long)count];
        const void *out;
        size_t out_len;
        bool owned;
        if (tb_converter_to_plugin(converter, s->encoded, s->encoded_len, &out, &out_len,
                                   &owned, errstr, sizeof(errstr)) != 0) {
            fprintf(stderr, "bench_formats: decode %lld: %s\n", i, errstr);
            exit(1);
        }
        if (owned) {
            free((void *)out);
        }
    }
    return (timing_t){clock_seconds(CLOCK_MONOTONIC) - wall,
                      clock_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu};
}

int main(int argc, char **argv)
{
    const char *class_name = NULL, *topic = NULL, *input = NULL;
    long long n = 0;
    json_t *settings = json_object();
    int opt;
    while ((opt = getopt(argc, argv, "c:t:i:n:s:")) != -1) {
        char *eq;
        switch (opt) {
        case 'c':
            class_name = optarg;
            break;
        case 't':
            topic = optarg;
            break;
        case 'i':
            input = optarg;
            break;
        case 'n':
            n = atoll(optarg);
            break;
        case 's':
            eq = strchr(optarg, '=');
            if (eq == NULL) {
                usage();
            }
            *eq = '\0';
            json_object_set_new(settings, optarg, json_string(eq + 1));
            break;
        default:
            usage();
        }
    }
    if (class_name == NULL || topic == NULL || input == NULL || n <= 0) {
        usage();
    }

    char errstr[512];
    tb_converter_t *converter =
        tb_converter_create(class_name, settings, false, errstr, sizeof(errstr));
    json_decref(settings);
    if (converter == NULL) {
        fprintf(stderr, "bench_formats: %s: %s\n", class_name, errstr);
        return 1;
    }
    static sample_t samples[SAMPLES];
    size_t count = read_samples(input, samples);
    check_round_trips(converter, topic, samples, count);

    size_t value_bytes = 0, encoded_bytes = 0;
    for (size_t i = 0; i < count; i++) {
        value_bytes += samples[i].json_len;
        encoded_bytes += samples[i].encoded_len;
    }
    timing_t encode = time_encodes(converter, topic, samples, count, n);
    timing_t decode = time_decodes(converter, samples, count, n);
    printf(
        "{\"converter\":\"%s\",\"records\":%lld,\"encode_seconds\":%.6f,"
        "\"encode_cpu_seconds\":%.6f,\"decode_seconds\":%.6f,\"decode_cpu_seconds\":%.6f,"
        "\"value_bytes\":%.1f,\"encoded_bytes\":%.1f}\n",
        class_name, n, encode.seconds, encode.cpu_seconds, decode.seconds,
        decode.cpu_seconds, (double)value_bytes / (double)count,
        (double)encoded_bytes / (double)count);

    for (size_t i = 0; i < count; i++) {
        free(samples[i].json);
        free(samples[i].encoded);
    }
    tb_converter_destroy(converter);
    return 0;
}
