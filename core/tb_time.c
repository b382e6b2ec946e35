#include "core/tb_time.h"

#include <time.h>

static int64_t ms_of(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t tb_monotonic_ms(void)
{
    return ms_of(CLOCK_MONOTONIC);
}

int64_t tb_monotonic_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static _Thread_local int64_t tb_thread_deadline_ms;

void tb_deadline_set(int64_t deadline_ms)
{
    tb_thread_deadline_ms = deadline_ms;
}

int64_t tb_deadline_get(void)
{
    return tb_thread_deadline_ms;
}

void tb_deadline_timespec(int64_t deadline_ms, struct timespec *abs)
{
    abs->tv_sec = (time_t)(deadline_ms / 1000);
    abs->tv_nsec = (long)(deadline_ms % 1000) * 1000000L;
}

int64_t tb_wall_ms(void)
{
    return ms_of(CLOCK_REALTIME);
}

/* Division rounding toward minus infinity. */
static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

int64_t tb_days_from_civil(int64_t year, int month, int day)
{
    year -= month <= 2;
    int64_t era = floor_div(year, 400);
    int64_t yoe = year - era * 400;
    int64_t doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void tb_civil_from_days(int64_t days, int64_t *year, int *month, int *day)
{
    days += 719468;
    int64_t era = floor_div(days, 146097);
    int64_t doe = days - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *day = (int)(doy - (153 * mp + 2) / 5 + 1);
    *month = (int)(mp < 10 ? mp + 3 : mp - 9);
    *year = yoe + era * 400 + (*month <= 2);
}
