/*
 * libFuzzer target: a connector file given on the command line
 * (server/tb_connector_file.h): Java properties, a JSON map of strings, or
 * {"name","config","initial_state"}. The input is the file's content, kept
 * in a memory file so that no disk is touched.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "server/tb_connector_file.h"

static void check(bool condition)
{
    if (!condition) {
        __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    char errstr[512] = "";
    const char *key;
    json_t *value;

    if (fd < 0) {
        fd = memfd_create("connector.properties", 0);
        check(fd >= 0);
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    }
    check(ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size);
    json_t *loaded = tb_connector_file_load(path, errstr, sizeof(errstr));
    if (loaded == NULL) {
        check(errstr[0] != '\0'); /* a refusal says why */
        return 0;
    }
    /* what main() then hands to the herder */
    json_t *config = json_object_get(loaded, "config");
    check(json_is_string(json_object_get(loaded, "name")));
    check(json_is_string(json_object_get(loaded, "initial_state")));
    check(json_is_object(config));
    json_object_foreach (config, key, value) {
        check(json_is_string(value));
    }
    json_decref(loaded);
    return 0;
}
