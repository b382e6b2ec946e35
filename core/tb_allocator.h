/*
 * tb_allocator.h - the malloc this binary runs on.
 *
 * Builds without sanitizers link jemalloc (CMake's TB_JEMALLOC): under glibc's
 * malloc, librdkafka's broker thread, which allocates every fetched message,
 * and the task thread, which frees it, wait for one arena lock per message
 * (docs/ARCHITECTURE.md, "Dependencies"). Sanitizer builds keep the
 * sanitizer's own allocator.
 */
#ifndef TB_ALLOCATOR_H
#define TB_ALLOCATOR_H

#include <stddef.h>

/* Writes the allocator's name and version, e.g. "jemalloc 5.3.0", into buf
 * (always terminated) and returns buf. */
const char *tb_allocator_describe(char *buf, size_t size);

#endif
