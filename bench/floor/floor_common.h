/*
 * Shared bits of the floor programs: the benchmark's record values, a
 * monotonic clock, and the process's own CPU time and peak RSS read from
 * /proc/self, the same counters the harness reads for tributary and Connect.
 */
#ifndef FLOOR_COMMON_H
#define FLOOR_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline double floor_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* utime + stime of this process (every thread), in seconds. */
static inline double floor_cpu_seconds(void)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    if (f == NULL) {
        return -1;
    }
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name may hold spaces: the fields start after its last ')'. */
    char *p = strrchr(buf, ')');
    if (p == NULL) {
        return -1;
    }
    p += 2; /* field 3, the state */
    for (int field = 3; field < 14 && p != NULL; field++) {
        p = strchr(p, ' ');
        if (p != NULL) {
            p++;
        }
    }
    if (p == NULL) {
        return -1;
    }
    unsigned long long utime = 0, stime = 0;
    if (sscanf(p, "%llu %llu", &utime, &stime) != 2) {
        return -1;
    }
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

/* VmHWM (peak resident set) of this process, in kB. */
static inline long floor_hwm_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kb = strtol(line + 6, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

/* What a producing floor program tells at the end of its run (floor_report). */
typedef struct {
    const char *program; /* its name, for the messages */
    long long n;         /* the records it was to deliver */
    long long delivered, failed;
    long long errors;            /* failed deliveries and any other errors */
    long long bytes;             /* of the values */
    double seconds, cpu_seconds; /* the measured span's */
    /* from the program's start; printed only when total_seconds >= 0 */
    double total_seconds, total_cpu_seconds;
    const char *first_error; /* the first failed delivery's reason */
} floor_run_t;

/*
 * Ends a producing floor program's run: one JSON line on stdout (records:
 * delivered, errors, bytes, seconds, cpu_seconds, total_seconds and
 * total_cpu_seconds when given, hwm_kb), then on stderr the failed
 * deliveries with the first one's reason, and how many were delivered of n
 * when fewer. Returns the exit status: 0 when n were delivered and none
 * failed, else 1.
 */
static inline int floor_report(const floor_run_t *run)
{
    printf("{\"records\":%lld,\"errors\":%lld,\"bytes\":%lld,\"seconds\":%.6f,"
           "\"cpu_seconds\":%.3f,",
           run->delivered, run->errors, run->bytes, run->seconds, run->cpu_seconds);
    if (run->total_seconds >= 0) {
        printf("\"total_seconds\":%.6f,\"total_cpu_seconds\":%.3f,", run->total_seconds,
               run->total_cpu_seconds);
    }
    printf("\"hwm_kb\":%ld}\n", floor_hwm_kb());
    fflush(stdout);
    if (run->failed > 0) {
        fprintf(stderr, "%s: %lld deliveries failed, first: %s\n", run->program,
                run->failed, run->first_error);
    }
    if (run->delivered < run->n) {
        fprintf(stderr, "%s: %lld of %lld delivered before the timeout\n", run->program,
                run->delivered, run->n);
    }
    return run->delivered >= run->n && run->failed == 0 ? 0 : 1;
}

/*
 * Pads the value whose first n bytes buf holds (a JSON object up to its open
 * "note" string) with 'x' to exactly size bytes and closes it. Returns size.
 */
static inline size_t floor_pad(char *buf, size_t size, size_t n)
{
    size_t len = n;
    while (len < size - 2) {
        buf[len++] = 'x';
    }
    buf[len++] = '"';
    buf[len++] = '}';
    buf[len] = '\0';
    return len;
}

/*
 * Record i's value: a JSON object of exactly `size` bytes (padded in its
 * "note" field), so a sink's output file of N records is N * (size + 1) bytes.
 * buf must hold size + 1 bytes. Returns the length (size, or the bare object
 * when size is too small for padding).
 */
static inline size_t floor_value(char *buf, size_t size, long long i)
{
    int n = snprintf(buf, size + 1,
                     "{\"id\":%lld,\"customer\":\"c%05lld\",\"amount\":%lld.%02lld,"
                     "\"currency\":\"EUR\",\"note\":\"",
                     i, (i * 7919) % 100000, (i * 104729) % 100000, i % 100);
    if (n < 0 || (size_t)n + 2 > size) {
        /* too small to pad: the shortest valid object */
        return (size_t)snprintf(buf, size + 1, "{\"id\":%lld}", i);
    }
    return floor_pad(buf, size, (size_t)n);
}

#endif
