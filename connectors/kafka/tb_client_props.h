/*
 * tb_client_props.h - the final librdkafka properties of a connector's
 * Kafka clients, and the checks that keep them from being weaker than they
 * look.
 *
 * A client's properties are, in order: the worker's common client keys
 * (bootstrap.servers, security.protocol, sasl.*, ssl.*), the worker's
 * "producer." / "consumer." / "admin." keys for the client's role, then the
 * connector's "<role>.override." keys as the override policy allows
 * (bootstrap.servers only when the allowlist names it: the connector's
 * secrets would go to another cluster), then tributary's defaults for keys
 * none of those set (client_props.c says which and why). The security check runs on that
 * final map, so no override can weaken the transport: with the worker on
 * SSL or SASL_SSL, none may turn TLS, certificate verification or host name
 * checks off unless the worker allows downgrades. Secret references are
 * resolved only when a task starts.
 */
#ifndef TB_CLIENT_PROPS_H
#define TB_CLIENT_PROPS_H

#include <stdbool.h>

#include <jansson.h>

typedef enum {
    TB_CLIENT_PRODUCER = 0,
    TB_CLIENT_CONSUMER,
    TB_CLIENT_ADMIN,
} tb_client_role_t;

/* The worker's side, owned by the worker for its whole life. */
typedef struct {
    const json_t *worker_props; /* common keys, and producer./consumer./admin. ones */
    bool overrides_allowed;     /* connector.client.config.override.policy=All */
    const json_t *allowlist;    /* override keys allowed (no prefix); empty: any */
    bool literal_secrets;       /* secrets.literal.allowed */
    bool literal_unsealable;    /* distributed, without secrets.encryption.key:
                                   a connector's literal secret cannot be kept */
    bool downgrade_allowed;     /* connector.client.security.downgrade.allowed */
    bool producers_shared;      /* connector.producer.sharing.enabled: at-least-once
                                   sources of equal producer properties share one */
} tb_client_settings_t;

/* Builds a client's properties for a connector config. With resolve, secret
 * references are resolved (task start); without, they are only checked
 * (validation). Every problem is added to errors (key -> messages, the key
 * being the config key that fixes it). Returns the map (new reference), or
 * NULL when errors got any. */
json_t *tb_client_props(const tb_client_settings_t *settings, tb_client_role_t role,
                        const json_t *connector_config, bool resolve, json_t *errors);

/* True when settings refuse a literal secret in config_key of a
 * connector: msg then says why and which worker key to set. */
bool tb_client_literal_refused(const tb_client_settings_t *settings,
                               const char *config_key, char *msg, size_t msg_size);

/* True when config_key names a client secret (sasl.password,
 * ssl.key.password, ...), bare or under a producer./consumer./admin. or
 * <client>.override. prefix. */
bool tb_client_secret_key(const char *config_key);

/* tb_client_props() with secrets resolved, for a task about to start: the
 * problems, if any, joined into errstr. */
json_t *tb_client_props_resolved(const tb_client_settings_t *settings,
                                 tb_client_role_t role, const json_t *connector_config,
                                 char *errstr, size_t errstr_size);

#endif
