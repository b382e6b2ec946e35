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
