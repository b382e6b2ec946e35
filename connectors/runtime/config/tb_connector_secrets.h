/*
 * tb_connector_secrets.h - literal secrets kept out of the store.
 *
 * A connector config may hold a secret written literally when the worker
 * allows it (secrets.literal.allowed, true by default). Such a secret never
 * reaches the store as given. Standalone, it goes to the worker's secrets
 * file, "<store file>.secrets", readable by the worker's user only, and the
 * config keeps a ${file:<secrets file>:<key>} reference in its place.
 * Distributed, the config keeps it sealed under the worker's
 * secrets.encryption.key (tb_secret_seal.h), which every worker has.
 *
 * Locking: none; the herder calls these under its lock, which keeps the
 * secrets file's writers one at a time.
 */
#ifndef TB_CONNECTOR_SECRETS_H
#define TB_CONNECTOR_SECRETS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "connectors/tb_plugin.h"

/* Replaces, in config (changed in place), every literal secret of connector
 * name (PASSWORD keys and credential headers) by its sealed form (seal) or
 * by a reference to the secrets file beside the store at store_path, and
 * logs one warning naming the keys (never a value) when there was any. A
 * secret previous (the config stored before, borrowed; NULL for a new
 * connector) already holds sealed is kept as it was. Returns 0, or -1 with
 * msg when the secrets file cannot be written or the worker has no key to
 * seal with. */
int tb_connector_secrets_externalize(const char *store_path, bool seal, const char *name,
                                     const tb_plugin_t *plugin, const json_t *previous,
                                     json_t *config, char *msg, size_t msg_size);

/* Removes connector name's entries from the secrets file; a failure is
 * logged (the connector is gone from the store all the same). */
void tb_connector_secrets_forget(const char *store_path, const char *name);

#endif
