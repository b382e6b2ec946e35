/*
 * tb_auth.h - REST API authentication: salted password hashes, the
 * credentials file, and the Authorization header (rest.auth).
 *
 * A hash is PBKDF2-HMAC-SHA256 over the secret with a random 16-byte salt
 * of its own, encoded as
 *
 *     pbkdf2-sha256$<iterations>$<salt, base64>$<32-byte hash, base64>
 *
 * (`tributary --hash-password` prints one). The credentials file holds one
 * entry a line, `<name>:<hash>`; blank lines and lines starting with '#'
 * are ignored. For rest.auth=basic the name is a user name; for
 * rest.auth=bearer it names a token, and clients send
 * `Authorization: Bearer <name>.<secret>`, so that a request costs one hash
 * computation however many tokens the file holds (token names therefore
 * contain no '.').
 *
 * Hash comparisons run in constant time (CRYPTO_memcmp). Nothing here logs;
 * every buffer that held a secret is wiped before it is released.
 */
#ifndef TB_AUTH_H
#define TB_AUTH_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    TB_AUTH_NONE = 0,
    TB_AUTH_BASIC,
    TB_AUTH_BEARER,
} tb_auth_mode_t;

typedef enum {
    TB_AUTH_OK = 0,
    TB_AUTH_MISSING, /* no Authorization header, or one of another scheme */
    TB_AUTH_INVALID, /* malformed, unknown name or wrong secret */
} tb_auth_result_t;

/* PBKDF2 iterations of `tributary --hash-password`: about 50 ms of one core
 * of a 2020s x86 server per verification. */
#define TB_AUTH_DEFAULT_ITERATIONS 100000u
/* Bounds accepted in a credentials file. */
#define TB_AUTH_MIN_ITERATIONS 1000u
#define TB_AUTH_MAX_ITERATIONS 10000000u
/* Room for any encoded hash, with its NUL. */
#define TB_AUTH_HASH_MAX 160

typedef struct tb_auth tb_auth_t;

/* The last verified Authorization header of one connection, kept as its
 * SHA-256 so that a keep-alive connection pays for PBKDF2 once. Starts
 * zeroed; lives as long as the connection. */
typedef struct {
    unsigned char digest[32];
    bool valid;
} tb_auth_cache_t;

/* Parses "none", "basic" or "bearer" (any case). Returns -1 when unknown. */
int tb_auth_mode_parse(const char *text, tb_auth_mode_t *mode);

/* Hashes secret (len bytes) with a fresh random salt into out (at least
 * TB_AUTH_HASH_MAX bytes). Returns 0, or -1 when iterations are out of
 * bounds, out is too small or OpenSSL fails. */
int tb_auth_hash(const char *secret, size_t len, unsigned iterations, char *out,
                 size_t out_size);

/* Does secret match encoded? Returns 1 when it does, 0 when it does not,
 * -1 when encoded is not a hash this module writes. */
int tb_auth_hash_verify(const char *secret, size_t len, const char *encoded);

/* Reads a credentials file for mode (basic or bearer). Returns NULL and
 * fills errstr, naming the file and the line, when the file cannot be read,
 * a line is malformed, a name repeats or there is no entry at all. Free
 * with tb_auth_destroy. */
tb_auth_t *tb_auth_create(tb_auth_mode_t mode, const char *path, char *errstr,
                          size_t errstr_size);

/* Frees. NULL is a no-op. */
void tb_auth_destroy(tb_auth_t *auth);

/* The WWW-Authenticate value of a 401: `Basic realm="tributary"` or
 * `Bearer realm="tributary"`. Static. */
const char *tb_auth_challenge(const tb_auth_t *auth);

/* Checks an Authorization header value (NULL when absent). cache may be
 * NULL; when given, a header equal to the last one verified through it is
 * accepted without recomputing the hash, and a verified one is remembered.
 * Thread-safe for distinct caches. */
tb_auth_result_t tb_auth_check(const tb_auth_t *auth, const char *authorization,
                               tb_auth_cache_t *cache);

/* Splits `Basic <base64(user:password)>` (scheme in any case, RFC 7617)
 * into user and password, NUL-terminated. Returns 0, or -1 when the header
 * is not Basic, the base64 is not strict, there is no ':', the user is
 * empty, a NUL or control character appears, or a buffer is too small. */
int tb_auth_basic_parse(const char *header, char *user, size_t user_size, char *password,
                        size_t password_size);

#endif
