/*
 * tb_connector_dir.h - declarative connectors: the worker's connectors.dir,
 * a directory of connector files (tb_connector_file.h: *.json and
 * *.properties) applied at start and on SIGHUP. A connector whose file is
 * new is created in its initial_state, one whose file differs from its
 * stored config is updated (tasks whose configs are unchanged keep
 * running), one whose file is unchanged is left alone. A file that cannot
 * be read, or whose config is invalid, is logged by name and touches
 * nothing. Each connector created or updated from a file records the
 * file's name in its config (TB_CONNECTOR_DIR_ORIGIN_KEY). With prune,
 * each connector that records a file and has none any more is deleted
 * (connectors made through the REST API or on the command line never
 * are), unless a file could not be read (it may have been that
 * connector's) or the directory could not be. The count of files the last
 * pass could not apply is the gauge tributary_connectors_dir_invalid_files.
 *
 * Ownership: borrows the herder. Locking: none of its own; the herder's
 * operations lock.
 */
#ifndef TB_CONNECTOR_DIR_H
#define TB_CONNECTOR_DIR_H

#include <stdbool.h>

#include "connectors/runtime/herder/tb_herder.h"

/* The key of a connector's config naming the file of connectors.dir it
 * came from. */
#define TB_CONNECTOR_DIR_ORIGIN_KEY "tributary.connectors.dir.file"

typedef struct {
    int created, updated, unchanged, deleted, invalid;
} tb_connector_dir_result_t;

/* The connector files of dir (*.json and *.properties, not hidden), sorted:
 * a new array of paths, or NULL with errno set when dir cannot be read. */
json_t *tb_connector_dir_files(const char *dir);

/* Applies dir once, logging each change and each invalid file, then one
 * line that sums it up. Returns 0, or -1 (logged, nothing changed) when
 * the directory cannot be read. */
int tb_connector_dir_apply(tb_herder_t *herder, const char *dir, bool prune,
                           tb_connector_dir_result_t *result);

#endif
