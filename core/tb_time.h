/* tb_time.h - clocks, and the proleptic Gregorian calendar of day counts. */
#ifndef TB_TIME_H
#define TB_TIME_H

#include <stdint.h>

/* Milliseconds of a monotonic clock, for intervals and deadlines. */
int64_t tb_monotonic_ms(void);

/* Microseconds of the same clock, for timing short calls. */
int64_t tb_monotonic_us(void);

/* Milliseconds since the Unix epoch, for timestamps people read. */
int64_t tb_wall_ms(void);

/* Days since 1970-01-01 of a proleptic Gregorian date, month 1 to 12 (any
 * year, before 1970 and before year 1 included). */
int64_t tb_days_from_civil(int64_t year, int month, int day);

/* The proleptic Gregorian date of a day count since 1970-01-01. */
void tb_civil_from_days(int64_t days, int64_t *year, int *month, int *day);

#endif
