/*
 * tb_connect_session_key.h - the key of the config topic's "session-key"
 * record (its format: connect_records.h), apart from the other records so
 * that the modules that use the key (connectors/runtime/cluster/tb_session_key.h,
 * server/tb_request_signature.h) need nothing else of the store.
 */
#ifndef TB_CONNECT_SESSION_KEY_H
#define TB_CONNECT_SESSION_KEY_H

#include <stddef.h>

/* The config topic's "session-key" record, the key that signs requests
 * between workers. */
#define TB_CONNECT_SESSION_KEY "session-key"
#define TB_CONNECT_SESSION_KEY_MAX_BYTES 1024

typedef struct {
    unsigned char bytes[TB_CONNECT_SESSION_KEY_MAX_BYTES];
    size_t len;
    char algorithm[32];   /* how it was generated, Java's name: HmacSHA256 */
    long long created_ms; /* ms since 1970, the writer's clock */
} tb_connect_session_key_t;

#endif
