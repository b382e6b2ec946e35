/*
 * tributary - a Kafka Connect-compatible connector service.
 *
 *   tributary [--dev] [worker.properties [connector files...]]
 *     as connect-standalone: each connector file (properties, a JSON map, or
 *     {name,config,initial_state}) creates or updates its connector
 *   tributary --mirror mm2.properties [--clusters ALIAS...]
 *                                  MirrorMaker 2's dedicated mode
 *                                  (tb_mirror_driver.h)
 *   tributary validate [worker.properties] [connector...]
 *                                  Connect's validation of each connector
 *                                  file (or of connectors.dir's), with no
 *                                  Kafka and no server
 *   tributary --config-reference   prints docs/configuration.md
 *   tributary --routes             prints every REST route, one per line
 *   tributary --hash-password      reads a password or token secret on stdin,
 *                                  prints its hash for rest.auth.credentials.file
 *   tributary --version
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <curl/curl.h>

#include "core/tb_log.h"
#include "server/tb_startup.h"
#include "server/tb_mirror_driver.h"
#include "server/tb_verbs.h"

/* What the command line asks for. */
typedef enum {
    CLI_RUN = 0, /* run a worker */
    CLI_EXIT,    /* a verb ran: exit with its code */
} cli_action_t;

/* Reads the options and the worker's files into args, or runs the verb
 * the command line names (*exit_code gets its code). */
static cli_action_t parse_cli(int argc, char **argv, tb_startup_args_t *args,
                              int *exit_code)
{
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dev") == 0) {
            args->dev = true;
        } else if (strcmp(argv[i], "--version") == 0) {
            *exit_code = tb_verbs_version();
            return CLI_EXIT;
        } else if (strcmp(argv[i], "--config-reference") == 0) {
            *exit_code = tb_verbs_config_reference();
            return CLI_EXIT;
        } else if (strcmp(argv[i], "--routes") == 0) {
            *exit_code = tb_verbs_routes();
            return CLI_EXIT;
        } else if (strcmp(argv[i], "--hash-password") == 0) {
            *exit_code = tb_verbs_hash_password();
            return CLI_EXIT;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            tb_verbs_usage(stdout);
            *exit_code = 0;
            return CLI_EXIT;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "tributary: unknown option %s\n", argv[i]);
            tb_verbs_usage(stderr);
            *exit_code = 2;
            return CLI_EXIT;
        } else if (positional++ == 0) {
            args->worker_file = argv[i];
        } else {
            if (args->connector_files == NULL) {
                args->connector_files = &argv[i];
            }
            args->connector_file_count++;
        }
    }
    return CLI_RUN;
}

/* Waits for SIGTERM or SIGINT, which it returns; meanwhile reloads on
 * SIGHUP (tb_reload.h) and, distributed (cluster set), applies
 * connectors.dir each time this worker becomes the leader, which alone
 * applies it. A standalone worker applied it at start. */
static int wait_for_stop(tb_reload_t *reload, tb_cluster_t *cluster)
{
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGHUP);
    bool was_leader = cluster == NULL;
    for (;;) {
        struct timespec tick = {.tv_sec = 1};
        char url[320] = "";
        int signal_number = cluster != NULL ? sigtimedwait(&signals, NULL, &tick)
                                            : sigwaitinfo(&signals, NULL);
        if (signal_number == SIGTERM || signal_number == SIGINT) {
            return signal_number;
        }
        bool leader =
            cluster == NULL || tb_cluster_leader(cluster, url, sizeof(url)) == 1;
        if (signal_number == SIGHUP) {
            bool ok;
            json_decref(tb_reload_run(reload, "SIGHUP received", &ok));
        } else if (leader && !was_leader) {
            tb_reload_apply_dir(reload, "this worker leads");
        }
        was_leader = leader;
    }
}

/* Starts the worker the command line describes, step by step
 * (tb_startup.h), runs it until SIGTERM or SIGINT, and stops it. */
static int run(const tb_startup_args_t *args)
{
    tb_startup_t worker = TB_STARTUP_INIT;
    int rc = 1;

    if (tb_startup_settings(&worker, args) != 0 || tb_startup_check(&worker) != 0 ||
        tb_startup_lock_store(&worker) != 0 || tb_startup_secrets(&worker) != 0 ||
        tb_startup_bind(&worker) != 0 || tb_startup_store(&worker) != 0 ||
        tb_startup_herder(&worker) != 0 || tb_startup_join(&worker) != 0 ||
        tb_startup_serve(&worker) != 0) {
        goto fail;
    }
    int signal_number = wait_for_stop(worker.reload, worker.cluster);
    TB_LOG(TB_LOG_INFO, "tributary.worker", "%s received; stopping",
           strsignal(signal_number));
    rc = 0;

fail:
    tb_startup_release(&worker);
    if (rc == 0) {
        TB_LOG(TB_LOG_INFO, "tributary.worker", "stopped");
    }
    tb_log_shutdown();
    return rc;
}

/* Sets the process up for a worker: signals for the main thread's wait
 * alone, and libcurl's global state. */
static void process_setup(void)
{
    sigset_t signals;
    /* Every thread inherits this mask, so only the main thread's wait sees
     * the signals. */
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* once, before any thread: libcurl's global state (the HTTP sink) */
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

int main(int argc, char **argv)
{
    tb_startup_args_t args = {0};
    int exit_code = 0;

    /* not dumpable before any secret is read (core.dumps.enable undoes it) */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

    if (argc > 1 && strcmp(argv[1], "validate") == 0) {
        return tb_verbs_validate(argc - 2, argv + 2);
    }
    if (argc > 1 && strcmp(argv[1], "--mirror") == 0) {
        return tb_mirror_driver_main(argc - 2, argv + 2);
    }
    if (parse_cli(argc, argv, &args, &exit_code) == CLI_EXIT) {
        return exit_code;
    }
    process_setup();
    int rc = run(&args);
    curl_global_cleanup();
    return rc;
}
