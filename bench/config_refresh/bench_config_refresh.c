/*
 * bench_config_refresh - the time a distributed worker's config refresh
 * takes when every connector changed in one batch of config records
 * (bench/README.md, "The config refresh"), without a broker.
 *
 *   bench_config_refresh DIR N...   for each N: a store in DIR holding N
 *       connectors, loaded into a config state (tb_config_state.h); then
 *       every row is written again with a changed config, as other workers'
 *       records change them, and the config state rereads all N changed
 *       names (tb_config_state_reread, as tb_herder_refresh does).
 *
 * Prints one JSON line per N: connectors, changed, seconds (of the reread,
 * the monotonic clock) and us_per_connector, which stays flat when the
 * refresh grows linearly with the batch; and seconds_one_by_one, the same
 * batch reread one name at a time, as the refresh did before (one walk of
 * every row per changed connector: N * N). The store is the SQLite one: the
 * Kafka store's rows are walked the same way (tb_store_connectors_load).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "connectors/runtime/config/tb_config_state.h"
#include "core/tb_time.h"
#include "store/tb_store.h"

static void die(const char *what, const char *why)
{
    fprintf(stderr, "bench_config_refresh: %s: %s\n", what, why);
    exit(1);
}

/* Writes connector i's row, its config marked with round. */
static void put(tb_store_t *store, long i, int round)
{
    char name[64], note[64], errstr[512];
    snprintf(name, sizeof(name), "c%06ld", i);
    snprintf(note, sizeof(note), "round %d", round);
    json_t *config = json_pack("{s:s, s:s, s:s, s:s}", "connector.class", "datagen",
                               "topic", name, "name", name, "note", note);
    json_t *task_configs = json_pack("[O]", config);
    tb_store_connector_t row = {name, config, TB_TARGET_STARTED, task_configs};
    if (tb_store_connector_put(store, &row, errstr, sizeof(errstr)) != 0) {
        die("writing a connector", errstr);
    }
    json_decref(task_configs);
    json_decref(config);
}

/* Removes the store at path, with its write-ahead log. */
static void remove_store(const char *path)
{
    char side[4200];
    unlink(path);
    snprintf(side, sizeof(side), "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof(side), "%s-shm", path);
    unlink(side);
}

static void measure(const char *dir, long n)
{
    char path[4096], errstr[512];
    snprintf(path, sizeof(path), "%s/refresh-%ld.db", dir, n);
    remove_store(path);
    tb_store_t *store = tb_store_open(path, errstr, sizeof(errstr));
    if (store == NULL) {
        die(path, errstr);
    }
    for (long i = 0; i < n; i++) {
        put(store, i, 0);
    }
    tb_config_state_t *state = tb_config_state_create(store);
    if (tb_config_state_load(state, errstr, sizeof(errstr)) != 0) {
        die("loading", errstr);
    }
    json_t *names = json_array();
    for (long i = 0; i < n; i++) {
        put(store, i, 1);
        json_array_append_new(names, json_sprintf("c%06ld", i));
    }
    int64_t start = tb_monotonic_us();
    if (tb_config_state_reread(state, names, errstr, sizeof(errstr)) != 0) {
        die("rereading", errstr);
    }
    double seconds = (double)(tb_monotonic_us() - start) / 1e6;
    /* the same batch again, one reread per name, as the refresh did before */
    for (long i = 0; i < n; i++) {
        put(store, i, 2);
    }
    start = tb_monotonic_us();
    for (long i = 0; i < n; i++) {
        json_t *one = json_pack("[O]", json_array_get(names, (size_t)i));
        if (tb_config_state_reread(state, one, errstr, sizeof(errstr)) != 0) {
            die("rereading", errstr);
        }
        json_decref(one);
    }
    double one_by_one = (double)(tb_monotonic_us() - start) / 1e6;
    printf("{\"connectors\": %ld, \"changed\": %ld, \"seconds\": %.4f, "
           "\"us_per_connector\": %.1f, \"seconds_one_by_one\": %.4f}\n",
           n, n, seconds, seconds * 1e6 / (double)n, one_by_one);
    json_decref(names);
    tb_config_state_destroy(state);
    tb_store_close(store);
    remove_store(path);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_config_refresh DIR N...\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        measure(argv[1], atol(argv[i]));
    }
    return 0;
}
