/*
 * connect_records.c - Connect's record formats (see connect_records.h).
 */
#include "store/kafka/connect_records.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "core/tb_base64.h"
#include "store/tb_store_backend.h"

/* The prefixes of the keys, by kind, for the config topic and the status
 * topic; NULL where a topic has no such key. */
static const char *const tb_key_prefixes[2][TB_CONNECT_KEY_FENCING + 1] = {
    {
        [TB_CONNECT_KEY_CONNECTOR] = "connector-",
        [TB_CONNECT_KEY_TASK] = "task-",
        [TB_CONNECT_KEY_COMMIT] = "commit-",
        [TB_CONNECT_KEY_TARGET] = "target-state-",
        [TB_CONNECT_KEY_RESTART] = "restart-connector-",
        [TB_CONNECT_KEY_FENCING] = "tasks-fencing-",
    },
    {
        [TB_CONNECT_KEY_CONNECTOR] = "status-connector-",
        [TB_CONNECT_KEY_TASK] = "status-task-",
    },
};

static char *tb_dump(json_t *json, size_t flags)
{
    char *text = json == NULL ? NULL : json_dumps(json, flags | JSON_COMPACT);

    json_decref(json);
    return text;
}

/* Splits "<name>-<n>" at its last '-', as Connect does; -1 when there is
 * no non-negative task number after it. */
static int tb_split_task(const char *rest, size_t len, size_t *name_len, int *task)
{
    const char *dash = memrchr(rest, '-', len);
    char digits[16];
    char *end;

    if (dash == NULL || dash == rest) {
        return -1;
    }
    size_t n = len - (size_t)(dash + 1 - rest);
    if (n == 0 || n >= sizeof(digits)) {
        return -1;
    }
    memcpy(digits, dash + 1, n);
    digits[n] = '\0';
    errno = 0;
    long value = strtol(digits, &end, 10);
    if (*end != '\0' || errno != 0 || value < 0 || value > 0x7fffffff) {
        return -1;
    }
    *name_len = (size_t)(dash - rest);
    *task = (int)value;
    return 0;
}

int tb_connect_key_parse(const char *key, size_t key_len, int status,
                         tb_connect_key_t *out)
{
    memset(out, 0, sizeof(*out));
    for (int kind = TB_CONNECT_KEY_CONNECTOR; kind <= TB_CONNECT_KEY_FENCING; kind++) {
        const char *prefix = tb_key_prefixes[status ? 1 : 0][kind];
        size_t plen = prefix == NULL ? 0 : strlen(prefix);

        if (prefix == NULL || key_len <= plen || memcmp(key, prefix, plen) != 0) {
            continue;
        }
        const char *rest = key + plen;
        size_t name_len = key_len - plen;
        if (kind == TB_CONNECT_KEY_TASK &&
            tb_split_task(rest, name_len, &name_len, &out->task) != 0) {
            return 0;
        }
        out->name = strndup(rest, name_len);
        if (out->name == NULL) {
            return -1;
        }
        out->kind = (tb_connect_key_kind_t)kind;
        return 0;
    }
    return 0;
}

void tb_connect_key_clear(tb_connect_key_t *key)
{
    free(key->name);
    memset(key, 0, sizeof(*key));
}

char *tb_connect_key_format(tb_connect_key_kind_t kind, int status, const char *name,
                            int task)
{
    char *key = NULL;
    const char *prefix = tb_key_prefixes[status ? 1 : 0][kind];
    int n = kind == TB_CONNECT_KEY_TASK ? asprintf(&key, "%s%s-%d", prefix, name, task)
                                        : asprintf(&key, "%s%s", prefix, name);

    return n < 0 ? NULL : key;
}

char *tb_connect_properties_value(const json_t *properties)
{
    return tb_dump(json_pack("{s:O}", "properties", properties), JSON_SORT_KEYS);
}

const json_t *tb_connect_properties_parse(const json_t *value)
{
    json_t *properties = json_object_get(value, "properties");
    const char *key;
    json_t *v;

    if (!json_is_object(properties)) {
        return NULL;
    }
    json_object_foreach (properties, key, v) {
        if (!json_is_string(v)) {
            return NULL;
        }
    }
    return properties;
}

char *tb_connect_commit_value(int tasks)
{
    return tb_dump(json_pack("{s:i}", "tasks", tasks), 0);
}

/* A count field of value: a non-negative int, else -1. */
static int tb_count_of(const json_t *value, const char *field)
{
    json_t *count = json_object_get(value, field);

    if (!json_is_integer(count) || json_integer_value(count) < 0 ||
        json_integer_value(count) > 0x7fffffff) {
        return -1;
    }
    return (int)json_integer_value(count);
}

int tb_connect_commit_parse(const json_t *value)
{
    return tb_count_of(value, "tasks");
}

char *tb_connect_fencing_value(int task_count)
{
    return tb_dump(json_pack("{s:i}", "task-count", task_count), 0);
}

int tb_connect_fencing_parse(const json_t *value)
{
    return tb_count_of(value, "task-count");
}

char *tb_connect_restart_value(bool include_tasks, bool only_failed)
{
    return tb_dump(json_pack("{s:b, s:b}", "include-tasks", include_tasks, "only-failed",
                             only_failed),
                   0);
}

int tb_connect_restart_parse(const json_t *value, bool *include_tasks, bool *only_failed)
{
    if (!json_is_object(value)) {
        return -1;
    }
    *include_tasks = json_is_true(json_object_get(value, "include-tasks"));
    *only_failed = json_is_true(json_object_get(value, "only-failed"));
    return 0;
}

char *tb_connect_session_key_value(const tb_connect_session_key_t *key)
{
    char encoded[4 * ((TB_CONNECT_SESSION_KEY_MAX_BYTES + 2) / 3) + 1];

    EVP_EncodeBlock((unsigned char *)encoded, key->bytes, (int)key->len);
    return tb_dump(json_pack("{s:s, s:s, s:I}", "key", encoded, "algorithm",
                             key->algorithm, "creation-timestamp",
                             (json_int_t)key->created_ms),
                   0);
}

int tb_connect_session_key_parse(const json_t *value, tb_connect_session_key_t *out)
{
    const char *encoded = json_string_value(json_object_get(value, "key"));
    const char *algorithm = json_string_value(json_object_get(value, "algorithm"));
    json_t *created = json_object_get(value, "creation-timestamp");
    size_t len = encoded != NULL ? strlen(encoded) : 0;

    memset(out, 0, sizeof(*out));
    if (algorithm == NULL || strlen(algorithm) >= sizeof(out->algorithm) ||
        !json_is_integer(created)) {
        return -1;
    }
    long n =
        tb_base64_decode(encoded, len, TB_BASE64_STRICT, out->bytes, sizeof(out->bytes));
    if (n <= 0) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    out->len = (size_t)n;
    snprintf(out->algorithm, sizeof(out->algorithm), "%s", algorithm);
    out->created_ms = (long long)json_integer_value(created);
    return 0;
}

char *tb_connect_target_value(tb_target_state_t target)
{
    tb_target_state_t v1 = target == TB_TARGET_STOPPED ? TB_TARGET_PAUSED : target;

    return tb_dump(json_pack("{s:s, s:s}", "state", tb_target_state_name(v1), "state.v2",
                             tb_target_state_name(target)),
                   0);
}

int tb_connect_target_parse(const json_t *value, tb_target_state_t *out)
{
    const char *v2 = json_string_value(json_object_get(value, "state.v2"));
    const char *v1 = json_string_value(json_object_get(value, "state"));

    return tb_target_state_parse(v2 != NULL ? v2 : v1 != NULL ? v1 : "", out);
}

char *tb_connect_status_value(tb_state_t state, const char *trace, const char *worker_id,
                              int generation)
{
    return tb_dump(json_pack("{s:s, s:s?, s:s, s:i}", "state", tb_state_name(state),
                             "trace", trace, "worker_id", worker_id, "generation",
                             generation),
                   0);
}

json_t *tb_connect_status_parse(const json_t *value)
{
    const char *state = json_string_value(json_object_get(value, "state"));
    const char *worker = json_string_value(json_object_get(value, "worker_id"));
    const json_t *trace = json_object_get(value, "trace");
    const json_t *generation = json_object_get(value, "generation");
    json_t *entry;

    if (state == NULL || worker == NULL || !json_is_integer(generation) ||
        (trace != NULL && !json_is_string(trace) && !json_is_null(trace))) {
        return NULL;
    }
    entry = json_pack("{s:s, s:s, s:I}", "state", state, "worker_id", worker,
                      "generation", json_integer_value(generation));
    if (entry != NULL && json_is_string(trace) &&
        json_object_set(entry, "trace", (json_t *)trace) != 0) {
        json_decref(entry);
        return NULL;
    }
    return entry;
}

char *tb_connect_offset_key(const char *connector, const json_t *partition)
{
    return tb_dump(json_pack("[s, O]", connector, partition), TB_STORE_JSON_CANONICAL);
}

int tb_connect_offset_key_parse(const char *key, size_t key_len, char **connector,
                                json_t **partition)
{
    json_t *array = json_loadb(key, key_len, 0, NULL);
    const char *name = json_string_value(json_array_get(array, 0));
    json_t *object = json_array_get(array, 1);
    int rc = -1;

    *connector = NULL;
    *partition = NULL;
    if (json_array_size(array) == 2 && name != NULL && json_is_object(object)) {
        *connector = strdup(name);
        *partition = json_incref(object);
        rc = *connector == NULL ? -1 : 0;
    }
    if (rc != 0) {
        free(*connector);
        json_decref(*partition);
        *connector = NULL;
        *partition = NULL;
    }
    json_decref(array);
    return rc;
}

json_t *tb_connect_value_parse(const char *value, size_t value_len, int *bad)
{
    json_t *json = value == NULL ? NULL : json_loadb(value, value_len, 0, NULL);

    *bad = value != NULL && json == NULL;
    return json;
}
