/* Time zones: fixed offsets, and regions read from TZif files
 * (tb_zone.h). */
#include "core/tb_zone.h"
#include "core/tb_time.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZONEINFO "/usr/share/zoneinfo"
#define MAX_FILE (1 << 20)
#define HEADER 44
#define DAY 86400

/* A day of the year a POSIX TZ rule names, and the local time of that day
 * the offset changes at. */
typedef struct {
    char kind; /* 'M' month.week.weekday, 'J' 1..365 never counting Feb 29,
                  'D' 0..365 counting it */
    int month, week, weekday;
    int day;
    int32_t time; /* seconds after local midnight, maybe negative or > a day */
} rule_day_t;

typedef struct {
    int32_t std; /* east of UTC */
    bool has_dst;
    int32_t dst;
    rule_day_t start, end;
} rule_t;

struct tb_zone {
    size_t count;    /* transitions */
    int64_t *at;     /* their instants, UTC seconds, ascending */
    int32_t *offset; /* east of UTC from at[i] on */
    int32_t before;  /* before the first transition */
    bool has_rule;   /* the footer's rule holds after the last one */
    rule_t rule;
};

tb_zone_t *tb_zone_fixed(int32_t seconds_east)
{
    tb_zone_t *zone = calloc(1, sizeof(*zone));
    if (zone != NULL) {
        zone->before = seconds_east;
    }
    return zone;
}

void tb_zone_free(tb_zone_t *zone)
{
    if (zone != NULL) {
        free(zone->at);
        free(zone->offset);
        free(zone);
    }
}

/* ---- calendar ---- */

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

static bool leap_year(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* The year of a day count since 1970-01-01. */
static int64_t year_of(int64_t days)
{
    int64_t year;
    int month, day;
    tb_civil_from_days(days, &year, &month, &day);
    return year;
}

/* The day (since 1970-01-01) that rule day r names in year y. */
static int64_t rule_day_in(const rule_day_t *r, int64_t y)
{
    static const int month_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t jan1 = tb_days_from_civil(y, 1, 1);
    if (r->kind == 'J') {
        return jan1 + r->day - 1 + (leap_year(y) && r->day >= 60);
    }
    if (r->kind == 'D') {
        return jan1 + r->day;
    }
    int64_t first = tb_days_from_civil(y, r->month, 1);
    int first_weekday = (int)(((first + 4) % 7 + 7) % 7); /* 1970-01-01: Thursday */
    int64_t day = first + (r->weekday - first_weekday + 7) % 7 + (r->week - 1) * 7;
    int length = month_days[r->month - 1] + (r->month == 2 && leap_year(y));
    while (day - first >= length) {
        day -= 7;
    }
    return day;
}

static int32_t rule_offset(const rule_t *rule, int64_t t)
{
    if (!rule->has_dst) {
        return rule->std;
    }
    int64_t y = year_of(floor_div(t + rule->std, DAY));
    int64_t start = rule_day_in(&rule->start, y) * DAY + rule->start.time - rule->std;
    int64_t end = rule_day_in(&rule->end, y) * DAY + rule->end.time - rule->dst;
    bool dst = start < end ? (start <= t && t < end) : !(end <= t && t < start);
    return dst ? rule->dst : rule->std;
}

int32_t tb_zone_offset(const tb_zone_t *zone, int64_t utc_seconds)
{
    if (zone->count == 0 || utc_seconds < zone->at[0]) {
        return zone->count == 0 && zone->has_rule ? rule_offset(&zone->rule, utc_seconds)
                                                  : zone->before;
    }
    size_t lo = 0, hi = zone->count; /* at[lo] <= t < at[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (zone->at[mid] <= utc_seconds) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo + 1 == zone->count && zone->has_rule ? rule_offset(&zone->rule, utc_seconds)
                                                   : zone->offset[lo];
}

/* ---- the POSIX TZ rule of a footer ---- */

static const char *rule_name(const char *s)
{
    if (*s == '<') {
        s = strchr(s, '>');
        return s != NULL ? s + 1 : NULL;
    }
    const char *from = s;
    while ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')) {
        s++;
    }
    return s - from >= 3 ? s : NULL;
}

static const char *rule_number(const char *s, int max, int *out)
{
    if (*s < '0' || *s > '9') {
        return NULL;
    }
    *out = 0;
    while (*s >= '0' && *s <= '9') {
        *out = *out * 10 + (*s++ - '0');
        if (*out > max) {
            return NULL;
        }
    }
    return s;
}

/* [+-]hh[:mm[:ss]] into seconds. */
static const char *rule_hms(const char *s, int max_hours, int32_t *out)
{
    int sign = *s == '-' ? -1 : 1;
    int h = 0, m = 0, sec = 0;
    s += *s == '-' || *s == '+';
    s = rule_number(s, max_hours, &h);
    if (s != NULL && *s == ':') {
        s = rule_number(s + 1, 59, &m);
        if (s != NULL && *s == ':') {
            s = rule_number(s + 1, 59, &sec);
        }
    }
    *out = sign * (h * 3600 + m * 60 + sec);
    return s;
}

static const char *rule_date(const char *s, rule_day_t *r)
{
    r->time = 2 * 3600;
    if (*s == 'M') {
        r->kind = 'M';
        s = rule_number(s + 1, 12, &r->month);
        s = s != NULL && *s == '.' ? rule_number(s + 1, 5, &r->week) : NULL;
        s = s != NULL && *s == '.' ? rule_number(s + 1, 6, &r->weekday) : NULL;
        if (s == NULL || r->month < 1 || r->week < 1) {
            return NULL;
        }
    } else if (*s == 'J') {
        r->kind = 'J';
        s = rule_number(s + 1, 365, &r->day);
        if (s == NULL || r->day < 1) {
            return NULL;
        }
    } else {
        r->kind = 'D';
        s = rule_number(s, 365, &r->day);
    }
    if (s != NULL && *s == '/') {
        s = rule_hms(s + 1, 167, &r->time);
    }
    return s;
}

/* Parses the footer's rule (e.g. CET-1CEST,M3.5.0,M10.5.0/3); POSIX
 * offsets count west of UTC. */
static int parse_rule(const char *s, rule_t *rule)
{
    int32_t west;
    *rule = (rule_t){0};
    s = rule_name(s);
    s = s != NULL ? rule_hms(s, 24, &west) : NULL;
    if (s == NULL) {
        return -1;
    }
    rule->std = -west;
    if (*s == '\0') {
        return 0;
    }
    s = rule_name(s);
    if (s == NULL) {
        return -1;
    }
    rule->has_dst = true;
    rule->dst = rule->std + 3600;
    if (*s != ',' && *s != '\0') {
        s = rule_hms(s, 24, &west);
        rule->dst = -west;
    }
    /* a DST name without a rule: POSIX leaves the dates to the system */
    s = s != NULL && *s == ',' ? rule_date(s + 1, &rule->start) : NULL;
    s = s != NULL && *s == ',' ? rule_date(s + 1, &rule->end) : NULL;
    return s != NULL && *s == '\0' ? 0 : -1;
}

/* ---- TZif ---- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

typedef struct {
    uint32_t isut, isstd, leap, time, type, chars;
} counts_t;

/* The counts of the header at p (HEADER bytes), and the size of the data
 * block after it, with times of time_size bytes. 0 when it is no header. */
static size_t header_of(const unsigned char *p, int time_size, counts_t *c)
{
    if (memcmp(p, "TZif", 4) != 0) {
        return 0;
    }
    *c = (counts_t){be32(p + 20), be32(p + 24), be32(p + 28),
                    be32(p + 32), be32(p + 36), be32(p + 40)};
    if (c->type == 0 || c->time > MAX_FILE || c->type > 256 || c->chars > MAX_FILE ||
        c->leap > MAX_FILE || c->isstd > MAX_FILE || c->isut > MAX_FILE) {
        return 0;
    }
    return (size_t)c->time * (size_t)(time_size + 1) + c->type * 6u + c->chars +
           c->leap * (size_t)(time_size + 4) + c->isstd + c->isut;
}

/* Fills zone from a TZif file's bytes. 0, or -1 with errstr. */
static int parse_tzif(tb_zone_t *zone, const unsigned char *data, size_t len,
                      char *errstr, size_t errstr_size)
{
    counts_t c;
    size_t v1 = len >= HEADER ? header_of(data, 4, &c) : 0;
    if (v1 == 0 || data[4] < '2') {
        snprintf(errstr, errstr_size, "not a TZif file of version 2 or later");
        return -1;
    }
    const unsigned char *h = data + HEADER + v1;
    size_t v2 = len >= HEADER + v1 + HEADER ? header_of(h, 8, &c) : 0;
    const unsigned char *block = h + HEADER;
    const unsigned char *end = data + len;
    if (v2 == 0 || (size_t)(end - block) < v2) {
        snprintf(errstr, errstr_size, "a TZif file cut short");
        return -1;
    }
    const unsigned char *times = block;
    const unsigned char *types = times + c.time * 8u;
    const unsigned char *infos = types + c.time;
    zone->count = c.time;
    zone->at = calloc(c.time + 1, sizeof(*zone->at));
    zone->offset = calloc(c.time + 1, sizeof(*zone->offset));
    if (zone->at == NULL || zone->offset == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    zone->before = (int32_t)be32(infos);
    for (uint32_t i = 0; i < c.time; i++) {
        zone->at[i] =
            (int64_t)((uint64_t)be32(times + i * 8u) << 32 | be32(times + i * 8u + 4));
        if (types[i] >= c.type || (i > 0 && zone->at[i] <= zone->at[i - 1])) {
            snprintf(errstr, errstr_size, "a TZif file with bad transitions");
            return -1;
        }
        zone->offset[i] = (int32_t)be32(infos + types[i] * 6u);
    }
    const char *footer = (const char *)block + v2;
    const char *stop =
        footer < (const char *)end && *footer == '\n'
            ? memchr(footer + 1, '\n', (size_t)((const char *)end - footer - 1))
            : NULL;
    char rule[128];
    size_t rule_len = stop != NULL ? (size_t)(stop - footer - 1) : 0;
    if (stop == NULL || rule_len >= sizeof(rule)) {
        snprintf(errstr, errstr_size, "a TZif file without its footer");
        return -1;
    }
    memcpy(rule, footer + 1, rule_len);
    rule[rule_len] = '\0';
    zone->has_rule = rule_len > 0;
    if (zone->has_rule && parse_rule(rule, &zone->rule) != 0) {
        snprintf(errstr, errstr_size, "its rule '%s' cannot be read", rule);
        return -1;
    }
    return 0;
}

/* A name that stays within the zone folder: letters, digits, '_', '-',
 * '+' and '/', never "..", never absolute. */
static bool safe_name(const char *name)
{
    if (name[0] == '\0' || name[0] == '/' || strstr(name, "..") != NULL) {
        return false;
    }
    for (const char *p = name; *p != '\0'; p++) {
        bool ok = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                  (*p >= '0' && *p <= '9') || strchr("_-+/", *p) != NULL;
        if (!ok) {
            return false;
        }
    }
    return true;
}

tb_zone_t *tb_zone_load(const char *name, char *errstr, size_t errstr_size)
{
    const char *dir = getenv("TZDIR");
    char path[1024];
    if (name == NULL || !safe_name(name)) {
        snprintf(errstr, errstr_size, "'%s' is not a time zone name", name ? name : "");
        return NULL;
    }
    snprintf(path, sizeof(path), "%s/%s", dir != NULL && dir[0] ? dir : ZONEINFO, name);
    FILE *f = fopen(path, "rb");
    unsigned char *data = f != NULL ? malloc(MAX_FILE) : NULL;
    size_t len = data != NULL ? fread(data, 1, MAX_FILE, f) : 0;
    tb_zone_t *zone = len > 0 ? calloc(1, sizeof(*zone)) : NULL;
    char why[256] = "";
    if (len == 0) {
        snprintf(errstr, errstr_size, "'%s' is no time zone of the tz database (%s)",
                 name, path);
    } else if (zone == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
    } else if (parse_tzif(zone, data, len, why, sizeof(why)) != 0) {
        snprintf(errstr, errstr_size, "the time zone %s (%s): %s", name, path, why);
        tb_zone_free(zone);
        zone = NULL;
    }
    free(data);
    if (f != NULL) {
        fclose(f);
    }
    return zone;
}
