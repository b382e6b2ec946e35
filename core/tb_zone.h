/*
 * tb_zone.h - time zones: a fixed offset from UTC, or a region of the
 * system's tz database (Europe/Paris), whose offset changes with the date:
 * daylight saving time and the region's history.
 *
 * A region is read once from its TZif file (RFC 8536) under $TZDIR, else
 * /usr/share/zoneinfo: its transitions, then the POSIX TZ rule of its
 * footer for the instants after the last one. Asking for an offset reads
 * only the zone, so any thread may ask at once: the process's TZ, tzset()
 * and localtime() are never used.
 *
 * Ownership: a zone is the caller's (tb_zone_free).
 */
#ifndef TB_ZONE_H
#define TB_ZONE_H

#include <stddef.h>
#include <stdint.h>

typedef struct tb_zone tb_zone_t;

/* A zone seconds_east of UTC all year. NULL on no memory. */
tb_zone_t *tb_zone_fixed(int32_t seconds_east);

/* The region name of the tz database (e.g. America/New_York). NULL with
 * errstr when the name is no zone there (or not a safe relative path), its
 * file is not TZif version 2 or later, or its rule cannot be read. */
tb_zone_t *tb_zone_load(const char *name, char *errstr, size_t errstr_size);

/* The offset east of UTC, in seconds, of zone at utc_seconds since the
 * epoch. */
int32_t tb_zone_offset(const tb_zone_t *zone, int64_t utc_seconds);

/* NULL is a no-op. */
void tb_zone_free(tb_zone_t *zone);

#endif
