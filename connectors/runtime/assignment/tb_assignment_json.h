/*
 * tb_assignment_json.h - an assignment (tb_incremental_assignment.h) as
 * JSON, the form the cluster's leader publishes it in (tb_cluster.h):
 * {"<worker>":[["<connector>",<task>],...],...}, a task of -1 being the
 * connector's own instance.
 *
 * Ownership: tb_assignment_to_json returns a new reference;
 * tb_assignment_from_json fills *out with copies, freed by
 * tb_assignment_clear.
 */
#ifndef TB_ASSIGNMENT_JSON_H
#define TB_ASSIGNMENT_JSON_H

#include <jansson.h>

#include "connectors/runtime/assignment/tb_incremental_assignment.h"

json_t *tb_assignment_to_json(const tb_assignment_t *assignment);

/* Reads json into *out, workers sorted as tb_assignment_compute sorts
 * them. Returns 0, or -1 (with *out empty) when json is not of the form
 * above. */
int tb_assignment_from_json(const json_t *json, tb_assignment_t *out);

/* A copy of assignment into *out. Returns 0, or -1 when out of memory. */
int tb_assignment_copy(const tb_assignment_t *assignment, tb_assignment_t *out);

#endif
