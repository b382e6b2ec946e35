/*
 * tb_verbs.h - the verbs of tributary's command line that print and exit,
 * with no worker: each returns the process's exit code.
 */
#ifndef TB_VERBS_H
#define TB_VERBS_H

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
