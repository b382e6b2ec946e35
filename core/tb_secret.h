/*
 * tb_secret.h - secret references in configs.
 *
 * A PASSWORD value holds a reference, resolved only when a task starts:
 *   ${env:NAME}           the environment variable NAME
 *   ${file:/path:key}     key of the Java properties file /path
 * Nothing here logs or returns a resolved value in an error message.
 */
#ifndef TB_SECRET_H
#define TB_SECRET_H

#include <stdbool.h>
#include <stddef.h>

/* True when value is one whole reference of a known kind. */
bool tb_secret_is_reference(const char *value);

/* Resolves value: a reference to its secret, anything else to itself.
 * Returns a malloc'd string, or NULL with errstr naming the reference (its
 * variable, file or key, never a secret) when it cannot be resolved. */
char *tb_secret_resolve(const char *value, char *errstr, size_t errstr_size);

#endif
