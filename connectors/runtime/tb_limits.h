/*
 * tb_limits.h - what the worker lets connectors reach: files only under
 * file.allowed.dirs, URLs only on hosts of http.sink.allowed.hosts (both
 * empty by default: no limit, as in Kafka Connect).
 *
 * Plugins need no code for it: their config tables mark the keys that hold
 * a path or a URL (tb_config_role_t), and the runtime checks those keys at
 * validation and again when a task starts.
 */
#ifndef TB_LIMITS_H
#define TB_LIMITS_H

#include <jansson.h>

#include "core/tb_config.h"

typedef struct {
    const json_t *allowed_dirs;  /* array of directories; empty: anywhere */
    const json_t *allowed_hosts; /* array of host names; empty: any */
} tb_limits_t;

/* Adds an error naming the key for each path or URL of config (keys of
 * table) that the limits do not allow. Paths are resolved with realpath, so
 * a symbolic link cannot lead out of an allowed directory. */
void tb_limits_check(const tb_limits_t *limits, const tb_config_table_t *table,
                     const json_t *config, json_t *errors);

#endif
