/*
 * tb_session_key.h - the key a cluster's workers sign their requests to
 * one another with (server/tb_request_signature.h), shared as Connect
 * shares it: the "session-key" record of the config topic
 * (connect_records.h).
 *
 * Every worker follows the config topic and keeps the newest session key
 * it read. The leader (only it writes the config topic) writes a new one
 * when there is none, or when the newest is inter.worker.key.ttl.ms old
 * (by its creation-timestamp, the writer's wall clock): random bytes of
 * inter.worker.key.size bits, named after inter.worker.key.generation.
 * algorithm. So a cluster taking over a Connect cluster's topics uses
 * Connect's key until it expires.
 *
 * After a rotation the key before stays valid for
 * TB_SESSION_KEY_GRACE_MS after this worker read the new one, so that a
 * request signed just before the rotation is not refused.
 *
 * The key's bytes are never logged.
 *
 * Ownership: the caller owns the tb_session_keys_t and closes it; keys are
 * copied out. Locking: tb_session_keys_tick runs on one thread (the
 * cluster's); tb_session_keys_get may run on any, under the object's
 * mutex.
 */
#ifndef TB_SESSION_KEY_H
#define TB_SESSION_KEY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "store/kafka/tb_connect_session_key.h"

#define TB_SESSION_KEY_GRACE_MS 60000

typedef struct tb_session_keys tb_session_keys_t;

typedef struct {
    const json_t *client_props; /* bootstrap.servers and the security keys */
    const char *config_topic;   /* config.storage.topic */
    int replication_factor;     /* config.storage.replication.factor */
    const char *algorithm;      /* inter.worker.key.generation.algorithm */
    int key_bits;               /* inter.worker.key.size; 0: the digest's size */
    long long ttl_ms;           /* inter.worker.key.ttl.ms */
} tb_session_keys_options_t;

/* The digest of a Java Mac algorithm name (HmacSHA1, HmacSHA224,
 * HmacSHA256, HmacSHA384, HmacSHA512) as OpenSSL names it, or NULL when
 * the name is none of them. */
const char *tb_session_key_digest(const char *algorithm);

/* Opens the config topic for reading and writing session keys; reads
 * nothing yet. NULL with errstr on failure. */
tb_session_keys_t *tb_session_keys_open(const tb_session_keys_options_t *options,
                                        char *errstr, size_t errstr_size);

/* Reads the session keys written since the last call; on the leader,
 * writes a new key when there is none or the newest expired. Returns 0, or
 * -1 with errstr. */
int tb_session_keys_tick(tb_session_keys_t *keys, bool leader, char *errstr,
                         size_t errstr_size);

/* Copies the newest key into current (0), or returns -1 while none is
 * known. previous gets the key before it while its grace lasts, else its
 * len is 0. */
int tb_session_keys_get(tb_session_keys_t *keys, tb_connect_session_key_t *current,
                        tb_connect_session_key_t *previous);

/* NULL is a no-op. */
void tb_session_keys_close(tb_session_keys_t *keys);

#endif
