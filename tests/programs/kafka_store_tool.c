/*
 * kafka_store_tool.c - drives a Kafka store (store/kafka/tb_store_kafka.h) for
 * the integration tests: tests/integration/test_kafka_store.py. Built in
 * test builds only, as build/<dir>/kafka_store_tool.
 *
 *   kafka_store_tool --bootstrap HOST:PORT --config-topic T --offsets-topic T
 *                 --status-topic T [--partitions N] [--replication-factor N]
 *                 [--worker-id ID] [--generation N] [--timeout-ms N]
 *                 [--set KEY=VALUE]...
 *
 * --partitions is used for the offsets and status topics when they are
 * created; --set passes a librdkafka property. The store is opened, then
 * each line of stdin is one command, a JSON object, answered by one line
 * of JSON on stdout: {"ok":true,...} or {"ok":false,"error":"..."}.
 *   {"op":"put","name","config","target":"STARTED|PAUSED|STOPPED","tasks":[...]}
 *   {"op":"delete","name"}
 *   {"op":"load"}                         -> "connectors":[{name,config,target,tasks}]
 *   {"op":"status_put","name","task":-1,"state","trace"?}
 *   {"op":"status_get","name"}            -> "status"
 *   {"op":"offsets_put","name","offsets":[{"partition","offset"|null}]}
 *   {"op":"offsets_get","name"}           -> "offsets"
 *   {"op":"offsets_delete","name"}
 *   {"op":"refresh"}                      -> "changed":[names]
 *   {"op":"fencing_put","name","count"}
 *   {"op":"fencing_get","name"}           -> "fencing":{"task_count","pending"}
 * An open that fails prints its error on stderr and exits 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>

#include "core/tb_state.h"
#include "store/tb_store.h"
#include "store/kafka/tb_store_kafka.h"

#define TB_ERR_SIZE 1024

static int collect(const tb_store_connector_t *c, void *opaque)
{
    return json_array_append_new(opaque, json_pack("{s:s, s:O, s:s, s:O}", "name",
                                                   c->name, "config", c->config, "target",
                                                   tb_target_state_name(c->target),
                                                   "tasks", c->task_configs));
}

static int state_parse(const char *name, tb_state_t *out)
{
    for (int s = TB_STATE_UNASSIGNED; s <= TB_STATE_RESTARTING; s++) {
        if (name != NULL && strcmp(name, tb_state_name((tb_state_t)s)) == 0) {
            *out = (tb_state_t)s;
            return 0;
        }
    }
    return -1;
}

static int run_put(tb_store_t *store, json_t *cmd, char *err)
{
    tb_store_connector_t c = {
        .name = json_string_value(json_object_get(cmd, "name")),
        .config = json_object_get(cmd, "config"),
        .task_configs = json_object_get(cmd, "tasks"),
    };
    const char *target = json_string_value(json_object_get(cmd, "target"));

    if (c.name == NULL || tb_target_state_parse(target ? target : "STARTED", &c.target)) {
        snprintf(err, TB_ERR_SIZE, "put needs a name and a known target");
        return -1;
    }
    return tb_store_connector_put(store, &c, err, TB_ERR_SIZE);
}

/* Runs one command; fills reply's fields, or err. */
static int run(tb_store_t *store, json_t *cmd, json_t *reply, char *err)
{
    const char *op = json_string_value(json_object_get(cmd, "op"));
    const char *name = json_string_value(json_object_get(cmd, "name"));
    json_t *out = NULL;
    tb_state_t state;

    if (op == NULL ||
        (strcmp(op, "load") != 0 && strcmp(op, "refresh") != 0 && name == NULL)) {
        snprintf(err, TB_ERR_SIZE,
                 "a command needs \"op\" and, but for load and "
                 "refresh, \"name\"");
        return -1;
    }
    if (strcmp(op, "put") == 0) {
        return run_put(store, cmd, err);
    } else if (strcmp(op, "delete") == 0) {
        return tb_store_connector_delete(store, name, err, TB_ERR_SIZE);
    } else if (strcmp(op, "load") == 0) {
        out = json_array();
        if (tb_store_connectors_load(store, collect, out, err, TB_ERR_SIZE) != 0) {
            json_decref(out);
            return -1;
        }
        return json_object_set_new(reply, "connectors", out);
    } else if (strcmp(op, "status_put") == 0) {
        if (state_parse(json_string_value(json_object_get(cmd, "state")), &state) != 0) {
            snprintf(err, TB_ERR_SIZE, "unknown state");
            return -1;
        }
        return tb_store_status_put(
            store, name, (int)json_integer_value(json_object_get(cmd, "task")), state,
            json_string_value(json_object_get(cmd, "trace")), err, TB_ERR_SIZE);
    } else if (strcmp(op, "status_get") == 0) {
        out = tb_store_status_get(store, name, err, TB_ERR_SIZE);
        return out == NULL ? -1 : json_object_set_new(reply, "status", out);
    } else if (strcmp(op, "offsets_put") == 0) {
        return tb_store_offsets_put(store, name, json_object_get(cmd, "offsets"), err,
                                    TB_ERR_SIZE);
    } else if (strcmp(op, "offsets_get") == 0) {
        out = tb_store_offsets_get(store, name, err, TB_ERR_SIZE);
        return out == NULL ? -1 : json_object_set_new(reply, "offsets", out);
    } else if (strcmp(op, "offsets_delete") == 0) {
        return tb_store_offsets_delete(store, name, err, TB_ERR_SIZE);
    } else if (strcmp(op, "fencing_put") == 0) {
        return tb_store_fencing_put(
            store, name, (int)json_integer_value(json_object_get(cmd, "count")), err,
            TB_ERR_SIZE);
    } else if (strcmp(op, "fencing_get") == 0) {
        tb_store_fencing_t fencing;
        tb_store_fencing_get(store, name, &fencing);
        return json_object_set_new(reply, "fencing",
                                   json_pack("{s:i, s:b}", "task_count",
                                             fencing.task_count, "pending",
                                             fencing.pending));
    } else if (strcmp(op, "refresh") == 0) {
        out = tb_store_refresh(store, err, TB_ERR_SIZE);
        return out == NULL ? -1 : json_object_set_new(reply, "changed", out);
    }
    snprintf(err, TB_ERR_SIZE, "unknown op '%s'", op);
    return -1;
}

static void serve(tb_store_t *store)
{
    char *line = NULL;
    size_t size = 0;

    while (getline(&line, &size, stdin) > 0) {
        char err[TB_ERR_SIZE] = "";
        json_t *cmd = json_loads(line, 0, NULL);
        json_t *reply = json_object();
        int rc = cmd == NULL ? (snprintf(err, sizeof(err), "not JSON"), -1)
                             : run(store, cmd, reply, err);

        json_object_set_new(reply, "ok", json_boolean(rc == 0));
        if (rc != 0) {
            json_object_set_new(reply, "error", json_string(err));
        }
        char *text = json_dumps(reply, JSON_COMPACT);
        printf("%s\n", text);
        fflush(stdout);
        free(text);
        json_decref(reply);
        json_decref(cmd);
    }
    free(line);
}

/* Fills options and conf from argv; -1 with a message on bad usage. */
static int parse_args(int argc, char **argv, tb_store_kafka_options_t *o,
                      rd_kafka_conf_t *conf, char *err)
{
    int partitions = 1, replication = 1;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[++i] : NULL;
        char *eq;

        if (value == NULL) {
            snprintf(err, TB_ERR_SIZE, "%s needs a value", arg);
            return -1;
        } else if (strcmp(arg, "--bootstrap") == 0) {
            rd_kafka_conf_set(conf, "bootstrap.servers", value, err, TB_ERR_SIZE);
        } else if (strcmp(arg, "--config-topic") == 0) {
            o->config.name = value;
        } else if (strcmp(arg, "--offsets-topic") == 0) {
            o->offsets.name = value;
        } else if (strcmp(arg, "--status-topic") == 0) {
            o->status.name = value;
        } else if (strcmp(arg, "--partitions") == 0) {
            partitions = atoi(value);
        } else if (strcmp(arg, "--replication-factor") == 0) {
            replication = atoi(value);
        } else if (strcmp(arg, "--worker-id") == 0) {
            o->worker_id = value;
        } else if (strcmp(arg, "--generation") == 0) {
            o->generation = atoi(value);
        } else if (strcmp(arg, "--timeout-ms") == 0) {
            o->timeout_ms = atoi(value);
        } else if (strcmp(arg, "--set") == 0 && (eq = strchr(value, '=')) != NULL) {
            char *key = strndup(value, (size_t)(eq - value));
            int rc = rd_kafka_conf_set(conf, key, eq + 1, err, TB_ERR_SIZE);
            free(key);
            if (rc != RD_KAFKA_CONF_OK) {
                return -1;
            }
        } else {
            snprintf(err, TB_ERR_SIZE, "unknown argument %s", arg);
            return -1;
        }
    }
    o->config.replication_factor = replication;
    o->offsets = (tb_store_kafka_topic_t){o->offsets.name, partitions, replication};
    o->status = (tb_store_kafka_topic_t){o->status.name, partitions, replication};
    return 0;
}

int main(int argc, char **argv)
{
    char err[TB_ERR_SIZE] = "";
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    tb_store_kafka_options_t options = {.conf = conf, .worker_id = "tb-store-tool"};
    tb_store_t *store = NULL;

    if (parse_args(argc, argv, &options, conf, err) == 0) {
        store = tb_store_kafka_open(&options, err, sizeof(err));
    }
    rd_kafka_conf_destroy(conf);
    if (store == NULL) {
        fprintf(stderr, "kafka_store_tool: %s\n", err);
        return 2;
    }
    serve(store);
    tb_store_close(store);
    return 0;
}
