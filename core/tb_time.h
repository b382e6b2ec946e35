/* tb_time.h - clocks, and the proleptic Gregorian calendar of day counts. */
#ifndef TB_TIME_H
#define TB_TIME_H

#include <stdint.h>

/* Milliseconds of a monotonic clock, for intervals and deadlines. */
int64_t tb_monotonic_ms(void);

/* Microseconds of the same clock, for timing short calls. */
int64_t tb_monotonic_us(void);

/* The deadline of what the calling thread does for a caller who waits for
 * its answer (a REST write on a handler thread, server/tb_http_handlers.h),
 * in tb_monotonic_ms(); 0 for none. A wait on another operation (a claim
 * on a connector, a forward to the leader) gives up at it, so that the
 * thread is free again when the caller has had its 503. Thread-local:
 * set by the thread that runs the work, for the work's length. */
void tb_deadline_set(int64_t deadline_ms);
int64_t tb_deadline_get(void);

/* Fills *abs for a wait until deadline_ms (tb_monotonic_ms()), for a
 * condition variable on CLOCK_MONOTONIC (pthread_condattr_setclock). */
struct timespec;
void tb_deadline_timespec(int64_t deadline_ms, struct timespec *abs);

/* Milliseconds since the Unix epoch, for timestamps people read. */
int64_t tb_wall_ms(void);

/* Days since 1970-01-01 of a proleptic Gregorian date, month 1 to 12 (any
 * year, before 1970 and before year 1 included). */
int64_t tb_days_from_civil(int64_t year, int month, int day);

/* The proleptic Gregorian date of a day count since 1970-01-01. */
void tb_civil_from_days(int64_t days, int64_t *year, int *month, int *day);

#endif
