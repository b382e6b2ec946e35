/*
 * mirror_driver.c - `tributary --mirror`, MirrorMaker 2's dedicated mode:
 * reads MM2's properties file, decides the flows and each worker's and
 * connector's keys as MM2 does, and runs and watches a worker process per
 * flow (see tb_mirror_driver.h).
 */
#include "server/tb_mirror_driver.h"

#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "connectors/kafka/tb_java_client_keys.h"
#include "connectors/runtime/config/tb_connector_config.h"
#include "connectors/runtime/config/tb_connector_validate.h"
#include "connectors/runtime/herder/tb_herder.h"
#include "connectors/tb_plugin.h"
#include "core/tb_config.h"
#include "core/tb_log.h"
#include "core/tb_props.h"
#include "server/tb_startup.h"
#include "server/tb_worker_config.h"

#define LOGGER "tributary.mirror"
#define STOP_WAIT_S 90 /* how long the workers get to stop before SIGKILL */

/* MM2's connectors, in the order MirrorMaker configures them, by the simple
 * name that is also the connector's name. */
static const char *const connector_names[] = {
    "MirrorSourceConnector", "MirrorHeartbeatConnector", "MirrorCheckpointConnector"};
#define CONNECTOR_COUNT 3
#define HEARTBEAT 1 /* the heartbeat connector, which has no enabled key */
#define CONNECTOR_PACKAGE "org.apache.kafka.connect.mirror."
#define BYTE_ARRAY "org.apache.kafka.connect.converters.ByteArrayConverter"

/* The top-level keys MirrorMakerConfig.workerConfig passes to every
 * worker, by prefix. */
static const char *const worker_prefixes[] = {
    "offset.storage",     "config.storage",   "status.storage", "key.converter",
    "value.converter",    "header.converter", "task",           "worker",
    "replication.policy", "config.providers"};

/* The top-level keys of MM2's internal REST server
 * (dedicated.mode.enable.internal.rest), which also go to every worker
 * when that is true: each worker is the REST server of its flow here. */
static const char *const rest_prefixes[] = {"listeners", "rest.advertised"};

/* One flow source->target MM2 would run, and its worker. */
typedef struct {
    char *source;
    char *target;
    bool enabled; /* source->target.enabled: else heartbeats only */
    char *dir;    /* its files: worker.properties, connectors/, the store */
    pid_t pid;    /* its worker, or 0 */
} flow_t;

typedef struct {
    const char *path; /* the properties file */
    json_t *props;    /* its keys */
    json_t *lines;    /* key -> line of its (last) definition */
    int errors;
    flow_t *flows;
    size_t flow_count;
    char *dir;          /* the driver's private directory, or NULL */
    bool internal_rest; /* dedicated.mode.enable.internal.rest */
} driver_t;

static void usage(FILE *out)
{
    fprintf(out, "usage: tributary --mirror mm2.properties [--clusters ALIAS ...]\n");
}

/* Says what is wrong with key (the file's; NULL: the file as a whole),
 * naming its line when the file defines it. */
static void report(driver_t *d, const char *key, const char *fmt, ...)
{
    char message[2048];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof(message), fmt, args);
    va_end(args);
    json_t *line = key != NULL ? json_object_get(d->lines, key) : NULL;
    if (line != NULL) {
        fprintf(stderr, "tributary --mirror: %s:%lld: %s: %s\n", d->path,
                json_integer_value(line), key, message);
    } else if (key != NULL) {
        fprintf(stderr, "tributary --mirror: %s: %s: %s\n", d->path, key, message);
    } else {
        fprintf(stderr, "tributary --mirror: %s: %s\n", d->path, message);
    }
    d->errors++;
}

/* key -> the line that defines it last in text, read as tb_props reads a
 * properties file: comment lines, continuation lines (a line ending in an
 * odd number of backslashes), a key ending at an unescaped '=', ':' or
 * white space. New reference. */
static json_t *key_lines(const char *text, size_t len)
{
    json_t *lines = json_object();
    size_t i = 0;
    int line = 1;
    while (i < len) {
        int start = line;
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\f')) {
            i++;
        }
        bool comment = i < len && (text[i] == '#' || text[i] == '!');
        char key[1024];
        size_t k = 0;
        while (!comment && i < len && strchr("=: \t\f\r\n", text[i]) == NULL) {
            if (text[i] == '\\' && i + 1 < len && text[i + 1] != '\n' &&
                text[i + 1] != '\r') {
                i++;
            }
            if (text[i] == '\\') { /* a continuation inside the key: rare, left */
                break;
            }
            if (k < sizeof(key) - 1) {
                key[k++] = text[i];
            }
            i++;
        }
        if (k > 0) {
            key[k] = '\0';
            json_object_set_new(lines, key, json_integer(start));
        }
        /* the rest of the logical line */
        while (i < len && text[i] != '\n' && text[i] != '\r') {
            if (!comment && text[i] == '\\' && i + 1 < len) {
                i++;
                if (text[i] == '\r' && i + 1 < len && text[i + 1] == '\n') {
                    i++;
                }
                line += text[i] == '\n' || text[i] == '\r';
            }
            i++;
        }
        if (i < len && text[i] == '\r' && i + 1 < len && text[i + 1] == '\n') {
            i++;
        }
        if (i < len) {
            i++;
            line++;
        }
    }
    return lines;
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool is_worker_key(const char *key)
{
    const tb_config_table_t *tables[] = {&tb_worker_config_table};
    return tb_config_find(tables, 1, key) != NULL ||
           tb_worker_connect_key_find(key) != NULL;
}

/* Whether key is a key of one of MM2's connectors (MM2's allConfigNames:
 * theirs and Connect's connector keys). */
static bool is_connector_key(const char *key)
{
    for (size_t c = 0; c < CONNECTOR_COUNT; c++) {
        const tb_config_table_t *tables[3];
        const tb_plugin_t *plugin = tb_plugin_find(connector_names[c]);
        size_t n = plugin != NULL ? tb_connector_config_tables(plugin, tables) : 0;
        if (n > 0 && tb_config_find(tables, n, key) != NULL) {
            return true;
        }
    }
    return false;
}

static void put(json_t *values, json_t *origins, const char *key, const char *value,
                const char *origin)
{
    json_object_set_new(values, key, json_string(value));
    if (origin != NULL) {
        json_object_set_new(origins, key, json_string(origin));
    } else {
        json_object_del(origins, key);
    }
}

static void put_default(json_t *values, const char *key, const char *value)
{
    if (json_object_get(values, key) == NULL) {
        json_object_set_new(values, key, json_string(value));
    }
}

/* MirrorMakerConfig.clusterProps: the keys <alias>.*, the prefix taken off,
 * then the top-level client keys they do not set. */
static void cluster_props(const driver_t *d, const char *alias, json_t *values,
                          json_t *origins)
{
    char prefix[256];
    size_t n = (size_t)snprintf(prefix, sizeof(prefix), "%s.", alias);
    const char *key;
    json_t *value;
    json_object_foreach (d->props, key, value) {
        if (strncmp(key, prefix, n) == 0 && key[n] != '\0') {
            put(values, origins, key + n, json_string_value(value), key);
        }
    }
    json_object_foreach (d->props, key, value) {
        if (tb_java_client_key_is_connection(key) &&
            json_object_get(values, key) == NULL) {
            put(values, origins, key, json_string_value(value), key);
        }
    }
}

/* Whether alias is one of clusters. */
static bool is_cluster(const json_t *clusters, const char *alias, size_t len)
{
    size_t i;
    json_t *item;
    json_array_foreach ((json_t *)clusters, i, item) {
        const char *name = json_string_value(item);
        if (strlen(name) == len && strncmp(name, alias, len) == 0) {
            return true;
        }
    }
    return false;
}

/* The items of a comma-separated list, trimmed. New reference. */
static json_t *split_list(const char *text)
{
    json_t *items = json_array();
    const char *p = text;
    while (p != NULL && *p != '\0') {
        const char *comma = strchr(p, ',');
        const char *end = comma != NULL ? comma : p + strlen(p);
        while (p < end && (*p == ' ' || *p == '\t')) {
            p++;
        }
        const char *last = end;
        while (last > p && (last[-1] == ' ' || last[-1] == '\t')) {
            last--;
        }
        json_array_append_new(items, json_stringn(p, (size_t)(last - p)));
        p = comma != NULL ? comma + 1 : NULL;
    }
    return items;
}

/* A boolean key as MM2 reads it, but refusing what is neither true nor
 * false (Java's parseBoolean takes any other text for false). */
static bool read_bool(driver_t *d, const char *key, bool fallback)
{
    const char *value = json_string_value(json_object_get(d->props, key));
    if (value == NULL) {
        return fallback;
    }
    if (strcasecmp(value, "true") != 0 && strcasecmp(value, "false") != 0) {
        report(d, key, "%s is not true or false", value);
        return fallback;
    }
    return strcasecmp(value, "true") == 0;
}

/* Checks clusters, the flow keys and --clusters; fills d->flows with the
 * flows MirrorMakerConfig.clusterPairs gives whose target is one of
 * targets (every cluster when empty). */
static void plan_flows(driver_t *d, const json_t *clusters, const json_t *targets)
{
    const char *key;
    json_t *value;
    json_object_foreach (d->props, key, value) {
        const char *arrow = strstr(key, "->");
        const char *dot = arrow != NULL ? strchr(arrow, '.') : NULL;
        if (arrow == NULL) {
            continue;
        }
        if (dot == NULL || dot[1] == '\0') {
            report(d, key, "a flow's key is <source>-><target>.<key>");
        } else if (!is_cluster(clusters, key, (size_t)(arrow - key)) ||
                   !is_cluster(clusters, arrow + 2, (size_t)(dot - arrow - 2))) {
            report(d, key, "%.*s is not a flow between two aliases of clusters",
                   (int)(dot - key), key);
        }
    }
    size_t i, j;
    json_t *item;
    json_array_foreach ((json_t *)targets, i, item) {
        const char *alias = json_string_value(item);
        if (!is_cluster(clusters, alias, strlen(alias))) {
            report(d, "clusters", "--clusters names %s, which clusters does not", alias);
        }
    }
    bool heartbeats = read_bool(d, "emit.heartbeats.enabled", true);
    size_t n = json_array_size(clusters);
    d->flows = calloc(n * n + 1, sizeof(*d->flows));
    json_t *source, *target;
    json_array_foreach ((json_t *)clusters, i, source) {
        json_array_foreach ((json_t *)clusters, j, target) {
            const char *s = json_string_value(source), *t = json_string_value(target);
            char flow_key[600];
            if (i == j ||
                (json_array_size(targets) > 0 && !is_cluster(targets, t, strlen(t)))) {
                continue;
            }
            snprintf(flow_key, sizeof(flow_key), "%s->%s.enabled", s, t);
            bool enabled = read_bool(d, flow_key, false);
            snprintf(flow_key, sizeof(flow_key), "%s->%s.emit.heartbeats.enabled", s, t);
            if (enabled || read_bool(d, flow_key, heartbeats)) {
                d->flows[d->flow_count++] = (flow_t){
                    .source = strdup(s), .target = strdup(t), .enabled = enabled};
            }
        }
    }
}

/* MirrorMakerConfig.workerConfig for flow, with tributary's keys: REST on
 * loopback at a port the kernel picks unless listeners is set (<target>.,
 * or top-level with internal_rest), the store's lock file and the
 * connectors.dir in the flow's directory. Fills origins (worker key ->
 * file key). New reference. */
static json_t *worker_props(const driver_t *d, const flow_t *flow, json_t *origins)
{
    json_t *values = json_object();
    char text[1024];
    cluster_props(d, flow->target, values, origins);
    const char *key;
    json_t *value;
    json_object_foreach (d->props, key, value) {
        for (size_t i = 0; i < sizeof(worker_prefixes) / sizeof(*worker_prefixes); i++) {
            if (starts_with(key, worker_prefixes[i]) && !is_connector_key(key)) {
                put(values, origins, key, json_string_value(value), key);
            }
        }
        for (size_t i = 0;
             d->internal_rest && i < sizeof(rest_prefixes) / sizeof(*rest_prefixes);
             i++) {
            if (starts_with(key, rest_prefixes[i])) {
                put(values, origins, key, json_string_value(value), key);
            }
        }
    }
    snprintf(text, sizeof(text), "%s-mm2", flow->source);
    put_default(values, "group.id", text);
    static const char *const topics[][2] = {{"offset.storage.topic", "mm2-offsets"},
                                            {"status.storage.topic", "mm2-status"},
                                            {"config.storage.topic", "mm2-configs"}};
    for (size_t i = 0; i < 3; i++) {
        snprintf(text, sizeof(text), "%s.%s.internal", topics[i][1], flow->source);
        put_default(values, topics[i][0], text);
    }
    /* MM2 sets ByteArrayConverter for headers too; tributary's header
     * converters hand plugins the headers' bytes as they are anyway */
    put_default(values, "key.converter", BYTE_ARRAY);
    put_default(values, "value.converter", BYTE_ARRAY);
    put_default(values, "listeners", "http://127.0.0.1:0");
    /* a worker's id is its advertised URL, whose port is the kernel's pick
     * and differs at each start: a departed worker never comes back to take
     * its tasks again, so they move at once */
    put_default(values, "scheduled.rebalance.max.delay.ms", "0");
    snprintf(text, sizeof(text), "%s/store.db", flow->dir);
    put(values, origins, "offset.storage.file.filename", text, NULL);
    snprintf(text, sizeof(text), "%s/connectors", flow->dir);
    put(values, origins, "connectors.dir", text, NULL);
    put(values, origins, "connectors.dir.prune", "true", NULL);
    return values;
}

/* Adds one cluster's keys to a connector config as connectorBaseConfig
 * does: its client keys under <side>.cluster., its consumer.*, producer.*
 * and admin.* under <side>.; the worker's keys of that cluster stay out. */
static void put_side(const driver_t *d, const char *alias, const char *side,
                     json_t *config, json_t *origins)
{
    json_t *values = json_object(), *from = json_object();
    const char *key;
    json_t *value;
    char name[600];
    cluster_props(d, alias, values, from);
    json_object_foreach (values, key, value) {
        const char *origin = json_string_value(json_object_get(from, key));
        if (starts_with(key, "consumer") || starts_with(key, "producer") ||
            starts_with(key, "admin")) {
            snprintf(name, sizeof(name), "%s.%s", side, key);
        } else if (strcmp(key, "bootstrap.servers") == 0 || !is_worker_key(key)) {
            snprintf(name, sizeof(name), "%s.cluster.%s", side, key);
        } else {
            continue;
        }
        put(config, origins, name, json_string_value(value), origin);
    }
    json_decref(values);
    json_decref(from);
}

/* MirrorMakerConfig.connectorBaseConfig for flow and connector c. Fills
 * origins (connector key -> file key). New reference. */
static json_t *connector_config(const driver_t *d, const flow_t *flow, size_t c,
                                json_t *origins)
{
    json_t *config = json_object();
    const char *key;
    json_t *value;
    char text[600];
    json_object_foreach (d->props, key, value) {
        if (strstr(key, "->") == NULL &&
            (is_connector_key(key) || starts_with(key, "config.providers") ||
             starts_with(key, "replication.policy"))) {
            put(config, origins, key, json_string_value(value), key);
        }
    }
    put_side(d, flow->source, "source", config, origins);
    put_side(d, flow->target, "target", config, origins);
    put_default(config, "name", connector_names[c]);
    snprintf(text, sizeof(text), "%s%s", CONNECTOR_PACKAGE, connector_names[c]);
    put_default(config, "connector.class", text);
    put_default(config, "source.cluster.alias", flow->source);
    put_default(config, "target.cluster.alias", flow->target);
    size_t n =
        (size_t)snprintf(text, sizeof(text), "%s->%s.", flow->source, flow->target);
    bool heartbeat = c == HEARTBEAT;
    json_object_foreach (d->props, key, value) {
        if (strncmp(key, text, n) == 0 &&
            (!heartbeat || strcmp(key + n, "enabled") != 0)) {
            put(config, origins, key + n, json_string_value(value), key);
        }
    }
    if (!heartbeat) { /* MM2's: a flow runs only when enabled */
        put_default(config, "enabled", "false");
    }
    return config;
}

/* Reports each problem of errors (key -> messages) under the file's key
 * that key came from. */
static void report_problems(driver_t *d, const flow_t *flow, const char *what,
                            const json_t *errors, const json_t *origins)
{
    const char *key;
    json_t *messages;
    json_object_foreach ((json_t *)errors, key, messages) {
        const char *origin = json_string_value(json_object_get(origins, key));
        size_t i;
        json_t *message;
        json_array_foreach (messages, i, message) {
            if (origin != NULL) {
                report(d, origin, "%s", json_string_value(message));
            } else {
                report(d, NULL, "%s of %s->%s: %s: %s", what, flow->source, flow->target,
                       key, json_string_value(message));
            }
        }
    }
}

/* Writes values into a new properties file at path. */
static int write_props(driver_t *d, const char *path, const json_t *values)
{
    const char *key;
    json_t *value;
    char errstr[1024];
    json_object_foreach ((json_t *)values, key, value) {
        if (tb_props_file_set(path, key, json_string_value(value), errstr,
                              sizeof(errstr)) != 0) {
            report(d, NULL, "%s", errstr);
            return -1;
        }
    }
    return 0;
}

/* Builds, checks and writes flow's worker file and connector files. */
static void prepare_flow(driver_t *d, flow_t *flow, size_t index)
{
    char path[4096];
    json_t *worker_origins = json_object();
    json_t *problems = json_object();
    json_t *values = NULL, *kafka_props = NULL;
    snprintf(path, sizeof(path), "%s/flow%zu", d->dir, index);
    flow->dir = strdup(path);
    snprintf(path, sizeof(path), "%s/connectors", flow->dir);
    if (mkdir(flow->dir, 0700) != 0 || mkdir(path, 0700) != 0) {
        report(d, NULL, "cannot make %s: %s", path, strerror(errno));
        goto fail;
    }
    json_t *raw = worker_props(d, flow, worker_origins);
    const tb_config_table_t *tables[] = {&tb_worker_config_table};
    values = tb_config_parse(tables, 1, raw, problems);
    report_problems(d, flow, "the worker", problems, worker_origins);
    snprintf(path, sizeof(path), "%s/worker.properties", flow->dir);
    if (write_props(d, path, raw) != 0 || d->errors > 0 ||
        tb_worker_config_check_connect_keys(raw) != 0) {
        json_decref(raw);
        goto fail;
    }
    kafka_props = tb_worker_config_kafka_props(raw);
    json_decref(raw);
    tb_worker_settings_t settings;
    if (tb_config_fill(&tb_worker_config_table, values, &settings) != 0) {
        report(d, NULL, "the worker's settings of flow %zu cannot be read", index);
        goto fail;
    }
    tb_worker_options_t options = tb_startup_worker_options(&settings, kafka_props);
    tb_client_settings_t client;
    tb_connector_checks_t checks = tb_herder_offline_checks(&options, &client);
    /* as the worker, distributed, will refuse a literal secret it cannot seal */
    client.literal_unsealable = settings.secrets_encryption_key == NULL;
    for (size_t c = 0; c < CONNECTOR_COUNT; c++) {
        json_t *origins = json_object();
        json_t *config = connector_config(d, flow, c, origins);
        json_t *errors = tb_connector_validate_errors(
            &checks, tb_plugin_find(connector_names[c]), config);
        report_problems(d, flow, connector_names[c], errors, origins);
        snprintf(path, sizeof(path), "%s/connectors/%s.json", flow->dir,
                 connector_names[c]);
        json_t *file =
            json_pack("{s:s, s:o}", "name", connector_names[c], "config", config);
        if (tb_config_error_count(errors) == 0 && json_dump_file(file, path, 0) != 0) {
            report(d, NULL, "cannot write %s", path);
        }
        json_decref(file);
        json_decref(errors);
        json_decref(origins);
    }
fail:
    json_decref(kafka_props);
    json_decref(values);
    json_decref(problems);
    json_decref(worker_origins);
}

/* Starts flow's worker: this binary with its worker file, killed when the
 * driver dies (PR_SET_PDEATHSIG), as a worker is when MM2's JVM dies. */
static int start_worker(flow_t *flow)
{
    char file[4096];
    snprintf(file, sizeof(file), "%s/worker.properties", flow->dir);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
            _exit(1);
        }
        sigprocmask(SIG_SETMASK, &none, NULL);
        execl("/proc/self/exe", "tributary", file, (char *)NULL);
        static const char failed[] = "tributary --mirror: cannot run a worker\n";
        ssize_t ignored = write(STDERR_FILENO, failed, sizeof(failed) - 1);
        (void)ignored;
        _exit(127);
    }
    if (pid < 0) {
        TB_LOG(TB_LOG_FATAL, LOGGER, "cannot start the worker of %s->%s: %s",
               flow->source, flow->target, strerror(errno));
        return -1;
    }
    flow->pid = pid;
    TB_LOG(TB_LOG_INFO, LOGGER, "%s->%s: worker pid %ld on cluster %s, group %s-mm2, %s",
           flow->source, flow->target, (long)pid, flow->target, flow->source,
           flow->enabled ? "replicating" : "heartbeats only");
    return 0;
}

/* Reaps the workers that ended; returns the first one's flow, or NULL. */
static flow_t *reap(driver_t *d, int *status)
{
    flow_t *ended = NULL;
    pid_t pid;
    while ((pid = waitpid(-1, status, WNOHANG)) > 0) {
        for (size_t i = 0; i < d->flow_count; i++) {
            if (d->flows[i].pid == pid) {
                d->flows[i].pid = 0;
                ended = ended != NULL ? ended : &d->flows[i];
            }
        }
    }
    return ended;
}

/* Stops every worker still running: SIGTERM, then SIGKILL after
 * STOP_WAIT_S. */
static void stop_workers(driver_t *d, const sigset_t *signals)
{
    int status;
    for (size_t i = 0; i < d->flow_count; i++) {
        if (d->flows[i].pid > 0) {
            kill(d->flows[i].pid, SIGTERM);
        }
    }
    for (int waited = 0; waited <= STOP_WAIT_S; waited++) {
        reap(d, &status);
        size_t running = 0;
        for (size_t i = 0; i < d->flow_count; i++) {
            running += d->flows[i].pid > 0;
        }
        if (running == 0) {
            return;
        }
        struct timespec second = {.tv_sec = 1};
        sigtimedwait(signals, NULL, &second);
    }
    for (size_t i = 0; i < d->flow_count; i++) {
        if (d->flows[i].pid > 0) {
            TB_LOG(TB_LOG_WARN, LOGGER, "%s->%s: the worker did not stop in %d s; killed",
                   d->flows[i].source, d->flows[i].target, STOP_WAIT_S);
            kill(d->flows[i].pid, SIGKILL);
            waitpid(d->flows[i].pid, &status, 0);
            d->flows[i].pid = 0;
        }
    }
}

/* The signals the driver waits for (blocked in every thread). */
static void driver_signals(sigset_t *signals)
{
    sigemptyset(signals);
    sigaddset(signals, SIGTERM);
    sigaddset(signals, SIGINT);
    sigaddset(signals, SIGHUP);
    sigaddset(signals, SIGCHLD);
}

/* Runs the workers until a signal or the end of one of them. */
static int supervise(driver_t *d)
{
    sigset_t signals;
    driver_signals(&signals);
    for (size_t i = 0; i < d->flow_count; i++) {
        if (start_worker(&d->flows[i]) != 0) {
            stop_workers(d, &signals);
            return 1;
        }
    }
    for (;;) {
        int status = 0;
        int signal_number = sigwaitinfo(&signals, NULL);
        if (signal_number == SIGTERM || signal_number == SIGINT) {
            TB_LOG(TB_LOG_INFO, LOGGER, "%s received; stopping the workers",
                   strsignal(signal_number));
            stop_workers(d, &signals);
            return 0;
        }
        if (signal_number == SIGHUP) {
            TB_LOG(TB_LOG_INFO, LOGGER,
                   "SIGHUP received: tributary --mirror reads %s at start only; restart "
                   "it to apply a change",
                   d->path);
        }
        flow_t *ended = reap(d, &status);
        if (ended != NULL) {
            TB_LOG(TB_LOG_FATAL, LOGGER,
                   "%s->%s: the worker ended (%s %d); stopping the others", ended->source,
                   ended->target, WIFEXITED(status) ? "exit status" : "signal",
                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            stop_workers(d, &signals);
            return 1;
        }
    }
}

static int remove_entry(const char *path, const struct stat *st, int type,
                        struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path);
}

/* Reads the file and plans the flows; 0 when nothing is wrong. */
static int load(driver_t *d, const json_t *targets)
{
    char errstr[1024];
    size_t len;
    char *text = tb_file_read_all(d->path, &len, errstr, sizeof(errstr));
    d->props = text != NULL ? tb_props_parse(text, len, errstr, sizeof(errstr)) : NULL;
    if (d->props == NULL) {
        fprintf(stderr, "tributary --mirror: %s\n", errstr);
        free(text);
        return -1;
    }
    d->lines = key_lines(text, len);
    free(text);
    const char *listed = json_string_value(json_object_get(d->props, "clusters"));
    json_t *clusters = split_list(listed);
    size_t i;
    json_t *alias;
    json_t *seen = json_object();
    json_array_foreach (clusters, i, alias) {
        if (json_string_length(alias) == 0) {
            report(d, "clusters", "an alias is empty");
        } else if (json_object_get(seen, json_string_value(alias)) != NULL) {
            report(d, "clusters", "%s is named twice", json_string_value(alias));
        }
        json_object_set(seen, json_string_value(alias), json_true());
    }
    json_decref(seen);
    if (json_array_size(clusters) < 2) {
        report(d, "clusters",
               "%s: name the aliases of at least two clusters "
               "(clusters = A, B)",
               listed == NULL ? "is not set" : "names fewer than two clusters");
    }
    d->internal_rest = read_bool(d, "dedicated.mode.enable.internal.rest", false);
    if (d->errors == 0) {
        plan_flows(d, clusters, targets);
    }
    json_array_foreach (clusters, i, alias) {
        const char *name = json_string_value(alias);
        bool used = false;
        for (size_t f = 0; f < d->flow_count; f++) {
            used = used || strcmp(d->flows[f].source, name) == 0 ||
                   strcmp(d->flows[f].target, name) == 0;
        }
        char key[600];
        snprintf(key, sizeof(key), "%s.bootstrap.servers", name);
        if (used && json_object_get(d->props, key) == NULL &&
            json_object_get(d->props, "bootstrap.servers") == NULL) {
            report(d, key, "is not set: the brokers of cluster %s (host:port,...)", name);
        }
    }
    if (d->errors == 0 && d->flow_count == 0) {
        report(d, NULL, "no flow to run: enable one (A->B.enabled = true)%s",
               json_array_size(targets) > 0 ? " whose target --clusters names" : "");
    }
    json_decref(clusters);
    return d->errors == 0 ? 0 : -1;
}

int tb_mirror_driver_main(int argc, char **argv)
{
    driver_t d = {0};
    json_t *targets = json_array();
    int rc = 1;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--clusters") == 0) {
            size_t before = json_array_size(targets);
            while (i + 1 < argc && argv[i + 1][0] != '-') {
                json_t *items = split_list(argv[++i]);
                json_array_extend(targets, items);
                json_decref(items);
            }
            if (json_array_size(targets) == before) {
                d.path = NULL;
                break;
            }
        } else if (argv[i][0] != '-' && d.path == NULL) {
            d.path = argv[i];
        } else {
            d.path = NULL;
            break;
        }
    }
    if (d.path == NULL) {
        usage(stderr);
        json_decref(targets);
        return 2;
    }
    sigset_t signals;
    driver_signals(&signals);
    sigprocmask(SIG_BLOCK, &signals, NULL);
    umask(077); /* the files hold the clusters' credentials */
    if (load(&d, targets) != 0) {
        goto done;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/tributary-mirror-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "tributary --mirror: cannot make a directory in %s: %s\n",
                tmp != NULL ? tmp : "/tmp", strerror(errno));
        goto done;
    }
    d.dir = strdup(dir);
    for (size_t i = 0; i < d.flow_count && d.errors == 0; i++) {
        prepare_flow(&d, &d.flows[i], i);
    }
    if (d.errors == 0) {
        TB_LOG(TB_LOG_INFO, LOGGER, "MirrorMaker from %s: %zu flow(s), files in %s",
               d.path, d.flow_count, d.dir);
        rc = supervise(&d);
    }

done:
    if (d.dir != NULL) {
        nftw(d.dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(d.dir);
    }
    for (size_t i = 0; i < d.flow_count; i++) {
        free(d.flows[i].source);
        free(d.flows[i].target);
        free(d.flows[i].dir);
    }
    free(d.flows);
    json_decref(d.props);
    json_decref(d.lines);
    json_decref(targets);
    tb_log_shutdown();
    return rc;
}
