/*
 * SimpleDateFormat's patterns, in UTC (tb_date_format.h).
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/transforms/tb_date_format.h"
#include "core/tb_time.h"

#define MS_PER_DAY 86400000LL

static const char *const months[] = {"January",   "February", "March",    "April",
                                     "May",       "June",     "July",     "August",
                                     "September", "October",  "November", "December"};
static const char *const weekdays[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                       "Thursday", "Friday", "Saturday"};

/* The broken-down UTC time of ms. */
typedef struct {
    int64_t year;
    int month; /* 1..12 */
    int day;   /* 1..31 */
    int hour, minute, second, milli;
    int weekday; /* 0 Sunday */
    int yday;    /* 1..366 */
} tb_civil_t;

/* Days since 1970-01-01 of a proleptic Gregorian date (any month, which
 * rolls over into the years, as a lenient calendar does). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y += (m - 1 >= 0 ? (m - 1) / 12 : -((12 - m) / 12));
    m = ((m - 1) % 12 + 12) % 12 + 1;
    return tb_days_from_civil(y, (int)m, 1) + d - 1;
}

static tb_civil_t civil_of(int64_t ms)
{
    tb_civil_t c;
    int64_t days = ms >= 0 ? ms / MS_PER_DAY : -((-ms + MS_PER_DAY - 1) / MS_PER_DAY);
    int64_t in_day = ms - days * MS_PER_DAY;
    tb_civil_from_days(days, &c.year, &c.month, &c.day);
    c.hour = (int)(in_day / 3600000);
    c.minute = (int)(in_day / 60000 % 60);
    c.second = (int)(in_day / 1000 % 60);
    c.milli = (int)(in_day % 1000);
    c.weekday = (int)(((days % 7) + 11) % 7); /* 1970-01-01 was a Thursday */
    c.yday = (int)(days - days_from_civil(c.year, 1, 1) + 1);
    return c;
}

static bool known_letter(char c)
{
    return strchr("yMdHkhKamsSEDZXz", c) != NULL;
}

int tb_date_format_check(const char *pattern, char *reason, size_t reason_size)
{
    for (const char *p = pattern; *p != '\0'; p++) {
        if (*p == '\'') {
            const char *end = strchr(p + 1, '\'');
            if (end == NULL) {
                snprintf(reason, reason_size, "Unterminated quote");
                return -1;
            }
            p = end;
        } else if (isalpha((unsigned char)*p) && !known_letter(*p)) {
            snprintf(reason, reason_size, "Illegal pattern character '%c'", *p);
            return -1;
        }
    }
    return 0;
}

int tb_date_format_config_check(const json_t *value, char *reason, size_t reason_size)
{
    return tb_date_format_check(json_string_value(value), reason, reason_size);
}

/* The length of the run of the letter at p. */
static size_t run_of(const char *p)
{
    size_t n = 1;
    while (p[n] == p[0]) {
        n++;
    }
    return n;
}

/* Appends to out. */
static void put(char *out, size_t size, size_t *used, const char *fmt, long long v,
                int width)
{
    if (*used + 1 < size) {
        int n = snprintf(out + *used, size - *used, fmt, width, v);
        *used += n > 0 ? (size_t)n : 0;
        if (*used >= size) {
            *used = size - 1;
        }
    }
}

static void put_text(char *out, size_t size, size_t *used, const char *text, size_t len)
{
    for (size_t i = 0; i < len && *used + 1 < size; i++) {
        out[(*used)++] = text[i];
    }
    out[*used] = '\0';
}

void tb_date_format(const char *pattern, int64_t ms, char *out, size_t size)
{
    tb_civil_t c = civil_of(ms);
    size_t used = 0;
    out[0] = '\0';
    for (const char *p = pattern; *p != '\0' && used + 1 < size;) {
        size_t n = run_of(p);
        int w = (int)n;
        switch (*p) {
        case 'y':
            put(out, size, &used, "%0*lld", n == 2 ? c.year % 100 : c.year, w);
            break;
        case 'M':
            if (n >= 3) {
                const char *name = months[c.month - 1];
                put_text(out, size, &used, name, n == 3 ? 3 : strlen(name));
            } else {
                put(out, size, &used, "%0*lld", c.month, w);
            }
            break;
        case 'E': {
            const char *name = weekdays[c.weekday];
            put_text(out, size, &used, name, n <= 3 ? 3 : strlen(name));
            break;
        }
        case 'd':
            put(out, size, &used, "%0*lld", c.day, w);
            break;
        case 'D':
            put(out, size, &used, "%0*lld", c.yday, w);
            break;
        case 'H':
            put(out, size, &used, "%0*lld", c.hour, w);
            break;
        case 'k':
            put(out, size, &used, "%0*lld", c.hour == 0 ? 24 : c.hour, w);
            break;
        case 'K':
            put(out, size, &used, "%0*lld", c.hour % 12, w);
            break;
        case 'h':
            put(out, size, &used, "%0*lld", c.hour % 12 == 0 ? 12 : c.hour % 12, w);
            break;
        case 'a':
            put_text(out, size, &used, c.hour < 12 ? "AM" : "PM", 2);
            break;
        case 'm':
            put(out, size, &used, "%0*lld", c.minute, w);
            break;
        case 's':
            put(out, size, &used, "%0*lld", c.second, w);
            break;
        case 'S':
            put(out, size, &used, "%0*lld", c.milli, w);
            break;
        case 'Z':
            put_text(out, size, &used, "+0000", 5);
            break;
        case 'X':
            put_text(out, size, &used, "Z", 1);
            break;
        case 'z':
            put_text(out, size, &used, n >= 4 ? "Coordinated Universal Time" : "UTC",
                     n >= 4 ? 26 : 3);
            break;
        case '\'':
            if (p[1] == '\'') {
                put_text(out, size, &used, "'", 1);
                p += 2;
                continue;
            } else {
                const char *end = strchr(p + 1, '\'');
                size_t len = end != NULL ? (size_t)(end - p - 1) : strlen(p + 1);
                put_text(out, size, &used, p + 1, len);
                p += len + 1 + (end != NULL);
                continue;
            }
        default:
            put_text(out, size, &used, p, 1);
            p++;
            continue;
        }
        p += n;
    }
}

/* Reads an unsigned number of at most max digits (0: any) at *s. */
static bool read_number(const char **s, size_t max, long long *v)
{
    const char *start = *s;
    bool negative = **s == '-';
    *s += negative;
    long long n = 0;
    size_t digits = 0;
    while (isdigit((unsigned char)**s) && (max == 0 || digits < max)) {
        n = n * 10 + (**s - '0');
        (*s)++;
        digits++;
    }
    if (digits == 0) {
        *s = start;
        return false;
    }
    *v = negative ? -n : n;
    return true;
}

/* The index of the name at *s among names (full, or its first 3 letters). */
static int read_name(const char **s, const char *const *names, int count)
{
    for (int i = 0; i < count; i++) {
        size_t full = strlen(names[i]);
        if (strncasecmp(*s, names[i], full) == 0) {
            *s += full;
            return i;
        }
    }
    for (int i = 0; i < count; i++) {
        if (strncasecmp(*s, names[i], 3) == 0) {
            *s += 3;
            return i;
        }
    }
    return -1;
}

/* Whether the pattern element at p (after a field) is a number field: an
 * abutting field is read with its width. */
static bool numeric_at(const char *p)
{
    return *p != '\0' && strchr("yMdHkhKmsSD", *p) != NULL &&
           (*p != 'M' || run_of(p) < 3);
}

int tb_date_parse(const char *pattern, const char *text, int64_t *ms)
{
    long long year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0;
    long long milli = 0, offset_minutes = 0, yday = -1;
    int pm = -1;
    const char *s = text;
    for (const char *p = pattern; *p != '\0';) {
        size_t n = run_of(p);
        size_t width = numeric_at(p + n) ? n : 0;
        long long v = 0;
        int i;
        switch (*p) {
        case 'y':
            if (!read_number(&s, width, &v)) {
                return -1;
            }
            year = n == 2 && v < 100 ? (v < 70 ? 2000 + v : 1900 + v) : v;
            break;
        case 'M':
            if (n >= 3) {
                if ((i = read_name(&s, months, 12)) < 0) {
                    return -1;
                }
                month = i + 1;
            } else if (!read_number(&s, width, &month)) {
                return -1;
            }
            break;
        case 'E':
            if (read_name(&s, weekdays, 7) < 0) {
                return -1;
            }
            break;
        case 'a':
            if (strncasecmp(s, "AM", 2) != 0 && strncasecmp(s, "PM", 2) != 0) {
                return -1;
            }
            pm = toupper((unsigned char)s[0]) == 'P';
            s += 2;
            break;
        case 'Z':
        case 'X':
        case 'z':
            if (*s == 'Z') {
                s++;
            } else if (*s == '+' || *s == '-') {
                int sign = *s++ == '-' ? -1 : 1;
                long long hh = 0, mm = 0;
                if (!read_number(&s, 2, &hh)) {
                    return -1;
                }
                s += *s == ':';
                read_number(&s, 2, &mm);
                offset_minutes = sign * (hh * 60 + mm);
            } else if (strncasecmp(s, "UTC", 3) == 0 || strncasecmp(s, "GMT", 3) == 0) {
                s += 3;
            } else {
                return -1;
            }
            break;
        case '\'':
            if (p[1] == '\'') {
                if (*s++ != '\'') {
                    return -1;
                }
                p += 2;
                continue;
            } else {
                const char *end = strchr(p + 1, '\'');
                size_t len = end != NULL ? (size_t)(end - p - 1) : strlen(p + 1);
                if (strncmp(s, p + 1, len) != 0) {
                    return -1;
                }
                s += len;
                p += len + 1 + (end != NULL);
                continue;
            }
        default:
            if (!isalpha((unsigned char)*p)) {
                if (*s++ != *p++) {
                    return -1;
                }
                continue;
            }
            if (!read_number(&s, width, &v)) {
                return -1;
            }
            switch (*p) {
            case 'd':
                day = v;
                break;
            case 'D':
                yday = v;
                break;
            case 'H':
            case 'k':
                hour = *p == 'k' && v == 24 ? 0 : v;
                break;
            case 'h':
            case 'K':
                hour = v % 12;
                break;
            case 'm':
                minute = v;
                break;
            case 's':
                second = v;
                break;
            default: /* S */
                milli = v;
                break;
            }
            break;
        }
        p += n;
    }
    if (pm == 1 && hour < 12) {
        hour += 12;
    }
    int64_t days = yday >= 0 ? days_from_civil(year, 1, 1) + yday - 1
                             : days_from_civil(year, month, day);
    *ms = days * MS_PER_DAY + hour * 3600000LL + minute * 60000LL + second * 1000LL +
          milli - offset_minutes * 60000LL;
    return 0;
}
