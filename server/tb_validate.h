/*
 * tb_validate.h - `tributary validate`: Connect's validation of connector
 * files without a running worker (no store, no Kafka, no listener), for the
 * pipelines that check connector configs before they apply them.
 *
 * Ownership: everything is borrowed. Locking: none.
 */
#ifndef TB_VALIDATE_H
#define TB_VALIDATE_H

#include <stdio.h>

#include "connectors/runtime/config/tb_connector_validate.h"

/* Validates each connector file (tb_connector_file.h; paths, an array of
 * strings) as the worker whose
 * checks these are would. Prints on out one JSON line per file, in order:
 * {"file","name","result"} with result Connect's ConfigInfos (the answer of
 * PUT /connector-plugins/{plugin}/config/validate), or {"file","error"}
 * when the file cannot be read or names no connector class of this build.
 * Prints on err each problem, naming the file and the key. Returns the
 * count of files with at least one error. */
int tb_validate_files(const tb_connector_checks_t *checks, const json_t *paths, FILE *out,
                      FILE *err);

#endif
