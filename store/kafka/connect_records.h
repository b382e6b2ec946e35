/*
 * connect_records.h - the records of Kafka Connect's three internal topics,
 * byte for byte as a Connect 3.9 worker writes and reads them (keys as
 * text, values JSON as JsonConverter writes with schemas off). Pure
 * functions: no Kafka, no state. docs/ARCHITECTURE.md ("Kafka store")
 * gives the formats.
 *
 * Functions returning char * return text the caller frees with free(), or
 * NULL when out of memory. Parsers borrow their input.
 */
#ifndef TB_CONNECT_RECORDS_H
#define TB_CONNECT_RECORDS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/tb_state.h"
#include "store/kafka/tb_connect_session_key.h"

/* What a key of the config or status topic names. */
typedef enum {
    TB_CONNECT_KEY_OTHER = 0, /* a key this store does not use (session-key, ...) */
    TB_CONNECT_KEY_CONNECTOR, /* config: connector-<c>; status: status-connector-<c> */
    TB_CONNECT_KEY_TASK,      /* config: task-<c>-<n>; status: status-task-<c>-<n> */
    TB_CONNECT_KEY_COMMIT,    /* config: commit-<c> */
    TB_CONNECT_KEY_TARGET,    /* config: target-state-<c> */
    TB_CONNECT_KEY_RESTART,   /* config: restart-connector-<c> */
    TB_CONNECT_KEY_FENCING,   /* config: tasks-fencing-<c> (KIP-618) */
} tb_connect_key_kind_t;

typedef struct {
    tb_connect_key_kind_t kind;
    char *name; /* the connector, owned (free()); NULL for OTHER */
    int task;   /* TASK only */
} tb_connect_key_t;

/* Parses a key of the config topic (status is 0) or of the status topic
 * (status is 1) into out. A key this store does not use, or a task key
 * without a task number, is OTHER. Returns -1 only when out of memory.
 * tb_connect_key_clear() frees what out holds. */
int tb_connect_key_parse(const char *key, size_t key_len, int status,
                         tb_connect_key_t *out);
void tb_connect_key_clear(tb_connect_key_t *key);

/* The key of a record of the config topic (kind CONNECTOR, TASK, COMMIT,
 * TARGET, RESTART or FENCING) or of the status topic (CONNECTOR or TASK); task is used by
 * TASK only. */
char *tb_connect_key_format(tb_connect_key_kind_t kind, int status, const char *name,
                            int task);

/* {"properties":{...}}: a connector's or a task's config (an object of
 * strings), keys sorted. */
char *tb_connect_properties_value(const json_t *properties);

/* The "properties" object of a connector or task config value (borrowed
 * from value), or NULL when value is not {"properties":{<strings>}}. */
const json_t *tb_connect_properties_parse(const json_t *value);

/* {"tasks":N}. */
char *tb_connect_commit_value(int tasks);

/* The task count of a commit value; -1 when it has none. */
int tb_connect_commit_parse(const json_t *value);

/* {"task-count":N}: the tasks of an exactly-once source whose producers
 * a fencing of the connector's next task configs must fence (KIP-618). */
char *tb_connect_fencing_value(int task_count);

/* The task count of a fencing value; -1 when it has none. */
int tb_connect_fencing_parse(const json_t *value);

/* {"state":...,"state.v2":...}: "state" is PAUSED for STOPPED, which
 * workers before 3.5 do not know. */
char *tb_connect_target_value(tb_target_state_t target);

/* The target state of a value: "state.v2" when it is a string, else
 * "state". Returns -1 when neither names a target state. */
int tb_connect_target_parse(const json_t *value, tb_target_state_t *out);

/* {"include-tasks":bool,"only-failed":bool}: a request to restart a
 * connector (and per the flags its tasks) wherever its instances run. */
char *tb_connect_restart_value(bool include_tasks, bool only_failed);

/* The flags of a restart value (a flag left out is false, as in Connect).
 * Returns -1 when value is not an object. */
int tb_connect_restart_parse(const json_t *value, bool *include_tasks, bool *only_failed);

/* {"state","trace","worker_id","generation"} in that order; trace null
 * when NULL. */
char *tb_connect_status_value(tb_state_t state, const char *trace, const char *worker_id,
                              int generation);

/* The entry of a status value: {"state","trace" when not null,
 * "worker_id","generation"} (a new reference), or NULL when value is not a
 * status. */
json_t *tb_connect_status_parse(const json_t *value);

/* {"key":<base64>,"algorithm":...,"creation-timestamp":...}. */
char *tb_connect_session_key_value(const tb_connect_session_key_t *key);

/* Fills out from a session-key value. Returns -1 when value is not one
 * (a key that is not base64, empty, or longer than the maximum). */
int tb_connect_session_key_parse(const json_t *value, tb_connect_session_key_t *out);

/* ["<connector>",{partition}] as one compact JSON text, the partition's
 * keys sorted. Its bytes decide the offsets topic's partition (murmur2),
 * so the same partition always makes the same key. */
char *tb_connect_offset_key(const char *connector, const json_t *partition);

/* Parses an offsets key into the connector's name (owned, free()) and its
 * partition (a new reference). Returns -1 when key is not
 * ["<connector>",{...}]. */
int tb_connect_offset_key_parse(const char *key, size_t key_len, char **connector,
                                json_t **partition);

/* A value's JSON (a new reference); NULL for a tombstone (value NULL) or
 * for bytes that are not JSON, told apart by *bad. */
json_t *tb_connect_value_parse(const char *value, size_t value_len, int *bad);

#endif
