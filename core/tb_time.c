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

int64_t tb_wall_ms(void)
{
    return ms_of(CLOCK_REALTIME);
}
