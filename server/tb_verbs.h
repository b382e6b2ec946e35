/*
 * tb_verbs.h - the verbs of tributary's command line that print and exit,
 * with no worker: each returns the process's exit code.
 */
#ifndef TB_VERBS_H
#define TB_VERBS_H

#include <stdio.h>

/* The command line's synopsis, on out (--help, and a usage error). */
void tb_verbs_usage(FILE *out);

/* --version: tributary's, Connect REST's and librdkafka's versions and the
 * allocator. */
int tb_verbs_version(void);

/* validate [worker.properties] [connector...] (argv holds what follows
 * validate): Connect's validation of each connector file (of the worker's
 * connectors.dir when none is named) by a worker of that worker file (the
 * defaults without one), with no store, no Kafka and no listener. 0 when
 * every file is valid, 1 when any has an error (or the worker file has
 * one), 2 on usage. */
int tb_verbs_validate(int argc, char **argv);

/* --config-reference: docs/configuration.md on stdout: the worker's keys and
 * the decision on each key of Connect's worker, the keys Connect defines for
 * every connector, each plugin's own, each transformation's and
 * predicate's, and Kafka's Java client keys. */
int tb_verbs_config_reference(void);

/* --routes: every REST route, "METHOD /template" a line. */
int tb_verbs_routes(void);

/* --hash-password: reads one line (a password or token secret) from stdin,
 * without echo on a terminal, and prints its hash for
 * rest.auth.credentials.file. */
int tb_verbs_hash_password(void);

#endif
