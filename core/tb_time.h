/* tb_time.h - clocks. */
#ifndef TB_TIME_H
#define TB_TIME_H

#include <stdint.h>

/* Milliseconds of a monotonic clock, for intervals and deadlines. */
int64_t tb_monotonic_ms(void);

/* Microseconds of the same clock, for timing short calls. */
int64_t tb_monotonic_us(void);

/* Milliseconds since the Unix epoch, for timestamps people read. */
int64_t tb_wall_ms(void);

#endif
