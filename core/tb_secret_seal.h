/*
 * tb_secret_seal.h - a distributed worker's literal secrets, sealed.
 *
 * A connector's secret written literally is kept, in distributed mode, in
 * the config topic encrypted under the worker's secrets.encryption.key,
 * which every worker of the cluster has: AES-256-GCM, a random 96-bit
 * nonce per value, the connector's name and the config key authenticated
 * with it. The sealed form is a reference of its own,
 *   ${sealed:v1:<key id>:<owner>.<config key>:<base64 of nonce, ciphertext, tag>}
 * (owner and config key encoded as tb_secret_file_key() does), so that
 * what resolves references opens it, when a task starts, and nothing else
 * does. The key id (8 hex digits of a SHA-256 of the key) tells keys apart
 * and says nothing of the key.
 *
 * The key is set once, at start, before any other thread runs; it lives in
 * memory kept out of core dumps. Nothing here logs, and no error message
 * holds a secret or the key.
 */
#ifndef TB_SECRET_SEAL_H
#define TB_SECRET_SEAL_H

#include <stdbool.h>
#include <stddef.h>

#define TB_SECRET_SEAL_KEY_SIZE 32

/* Reads the text of a key: the base64 of 32 random bytes (openssl rand
 * -base64 32). Returns 0, or -1 with errstr (which never holds the text). */
int tb_secret_seal_key_parse(const char *text, unsigned char key[TB_SECRET_SEAL_KEY_SIZE],
                             char *errstr, size_t errstr_size);

/* Sets the worker's key (copied), or wipes it with NULL. Returns 0, or -1
 * when out of memory. Call at start, before any other thread runs, and at
 * exit. */
int tb_secret_seal_key_set(const unsigned char *key);

/* True when the worker has a key: literal secrets can be sealed. */
bool tb_secret_seal_key_present(void);

/* True when value is one whole sealed secret. */
bool tb_secret_is_sealed(const char *value);

/* Seals secret, the value of config_key of connector owner. Returns the
 * sealed reference (malloc'd), or NULL with errstr when the worker has no
 * key or out of memory. */
char *tb_secret_seal(const char *owner, const char *config_key, const char *secret,
                     char *errstr, size_t errstr_size);

/* Opens sealed (tb_secret_is_sealed). Returns the secret (malloc'd), or
 * NULL with errstr naming the connector and key it belongs to and why: no
 * key, another key (both ids named), or a value altered. */
char *tb_secret_seal_open(const char *sealed, char *errstr, size_t errstr_size);

/* Checks that sealed, found in a config of connector owner, may stay
 * there: sealed for owner (for config_key too, unless NULL) under this
 * worker's key. Returns 0, or -1 with reason. */
int tb_secret_seal_check(const char *sealed, const char *owner, const char *config_key,
                         char *reason, size_t reason_size);

#endif
