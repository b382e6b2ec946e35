/*
 * tb_connector_validate.h - the checks a connector config passes before it
 * is stored or run: its own keys (the plugin's and Connect's tables), and
 * what this worker allows (exactly-once, literal secrets and references,
 * client settings, file and host limits).
 *
 * Ownership: the checks borrow everything they point to; results are new
 * references for the caller. Locking: none; they read only their inputs.
 */
#ifndef TB_CONNECTOR_VALIDATE_H
#define TB_CONNECTOR_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "connectors/kafka/tb_client_props.h"
#include "connectors/tb_limits.h"
#include "connectors/tb_plugin.h"
#include "core/tb_error.h"
#include "core/tb_secret.h"

/* What this worker allows, borrowed for the checks' life. */
typedef struct {
    const tb_client_settings_t *client;      /* the worker's side of clients */
    const tb_secret_policy_t *secret_policy; /* what references may reach */
    const tb_limits_t *limits;               /* what plugins may reach */
    bool exactly_once_source;                /* exactly.once.source.support=enabled */
    bool exactly_once_available; /* and sources can run in transactions here */
} tb_connector_checks_t;

/* Every problem of a connector config (key -> messages). New reference. */
json_t *tb_connector_validate_errors(const tb_connector_checks_t *checks,
                                     const tb_plugin_t *plugin, const json_t *config);

/* Checks the config of connector name before it is stored: its name, its
 * class (*plugin gets it) and every error, in Connect's words for a 400. */
tb_err_t tb_connector_validate(const tb_connector_checks_t *checks, const char *name,
                               const json_t *config, const tb_plugin_t **plugin,
                               char *msg, size_t msg_size);

/* Logs, once per stored config, each key that nothing reads (a typo?) and
 * each accepted key that has no effect. */
void tb_connector_validate_log_unused(const char *name, const tb_plugin_t *plugin,
                                      const json_t *config);

#endif
