/*
 * tb_limits.h - what the worker lets connectors reach: files only under
 * file.allowed.dirs, URLs only on hosts of http.sink.allowed.hosts (both
 * empty by default: no limit, as in Kafka Connect), and never the worker's
 * own data directory (the directory of offset.storage.file.filename, which
 * holds the store, its -wal and -shm files and <store>.secrets) nor the
 * worker's own files and variables (tb_secret_deny_t: its properties file,
 * what its config names), whatever the settings: neither as a path nor
 * through a secret reference.
 *
 * Plugins need little code for it: their config tables mark the keys that
 * hold a path or a URL (tb_config_role_t), the runtime checks those keys at
 * validation and again when a task starts, and the file connectors open
 * their files through tb_limits_fopen, which checks once more, race-free.
 */
#ifndef TB_LIMITS_H
#define TB_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "core/tb_config.h"
#include "core/tb_secret.h"

/* Everything borrowed; must outlive the tasks. */
typedef struct {
    const json_t *allowed_dirs;   /* array of directories; empty: anywhere */
    const json_t *allowed_hosts;  /* array of host names; empty: any */
    const char *store_path;       /* offset.storage.file.filename; NULL: none */
    const tb_secret_deny_t *deny; /* the worker's own files and variables; NULL: none */
} tb_limits_t;

/* Adds an error naming the key for each path or URL of config (keys of
 * table) that the limits do not allow, and for each value of any key whose
 * references name one of the worker's own files or variables. Paths are
 * resolved with realpath, so a symbolic link cannot lead out of an allowed
 * directory, nor into the worker's data directory or to its files. */
void tb_limits_check(const tb_limits_t *limits, const tb_config_table_t *table,
                     const json_t *config, json_t *errors);

/* Opens path for a file connector: for reading, or for appending (created
 * with mode 0666 less the umask when missing; readable too, so that a sink
 * can look at what it wrote before). The path is resolved, checked
 * as tb_limits_check does, then opened one component at a time from "/"
 * with O_NOFOLLOW, so a symbolic link swapped in after the check fails the
 * open instead of being followed; the opened file is then compared (device
 * and inode) with the store's files and the worker's own (tb_secret_deny_t),
 * so a hard link to them is refused too.
 * Returns a new FILE (fclose it), or NULL with errstr naming path and why;
 * errno is then ENOENT when the file or its directory does not exist (yet),
 * EACCES when the limits refuse it. limits may be NULL: no limits. */
FILE *tb_limits_fopen(const tb_limits_t *limits, const char *path, bool append,
                      char *errstr, size_t errstr_size);

#endif
