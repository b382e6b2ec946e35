#include "core/tb_allocator.h"

#include <stdio.h>
#include <string.h>

#ifdef TB_JEMALLOC
#include <jemalloc/jemalloc.h>

const char *tb_allocator_describe(char *buf, size_t size)
{
    const char *version = "unknown";
    size_t length = sizeof(version);
    /* the version the running library reports, not the header's; the call
     * also keeps the link to jemalloc where the linker drops unused ones */
    mallctl("version", &version, &length, NULL, 0);
    snprintf(buf, size, "jemalloc %.*s", (int)strcspn(version, "-"), version);
    return buf;
}
#else
const char *tb_allocator_describe(char *buf, size_t size)
{
    snprintf(buf, size, "the default malloc");
    return buf;
}
#endif
