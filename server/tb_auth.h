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
 * PBKDF2 is slow on purpose, so that failed attempts cannot burn the CPU:
 * - an Authorization header verified once is remembered, as an HMAC-SHA256
 *   under a random per-process key, and accepted again without PBKDF2
 *   (from any connection and client);
 * - a client (an IPv4 address, or an IPv6 /64) that failed
 *   TB_AUTH_FREE_FAILURES times in a row is refused (TB_AUTH_THROTTLED)
 *   without any PBKDF2 for a backoff that starts at
 *   TB_AUTH_BACKOFF_INITIAL_MS and doubles with each further failure up to
 *   TB_AUTH_BACKOFF_MAX_MS; a success clears its count, and a count
 *   untouched for TB_AUTH_FORGET_MS is forgotten. Clients are counted
 *   apart, so failures from one address never lock out another, and a
 *   header already verified passes even during its client's backoff.
 * Metrics: tributary_rest_auth_hashes_total (PBKDF2 verifications run) and
 * tributary_rest_auth_failures_total{reason="invalid"|"throttled"}.
 *
 * Hash and cache comparisons run in constant time (CRYPTO_memcmp). Nothing
 * here logs; every buffer that held a secret is wiped before it is
 * released.
 */
#ifndef TB_AUTH_H
#define TB_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef enum {
    TB_AUTH_NONE = 0,
    TB_AUTH_BASIC,
    TB_AUTH_BEARER,
} tb_auth_mode_t;

typedef enum {
    TB_AUTH_OK = 0,
    TB_AUTH_MISSING,   /* no Authorization header, or one of another scheme */
    TB_AUTH_INVALID,   /* malformed, unknown name or wrong secret */
    TB_AUTH_THROTTLED, /* not checked: the client is backing off */
} tb_auth_result_t;

/* PBKDF2 iterations of `tributary --hash-password`: about 50 ms of one core
 * of a 2020s x86 server per verification. */
#define TB_AUTH_DEFAULT_ITERATIONS 100000u
/* Bounds accepted in a credentials file. */
#define TB_AUTH_MIN_ITERATIONS 1000u
#define TB_AUTH_MAX_ITERATIONS 10000000u
/* Room for any encoded hash, with its NUL. */
#define TB_AUTH_HASH_MAX 160
/* Failed attempts of one client before it backs off, and the backoff. */
#define TB_AUTH_FREE_FAILURES 5u
#define TB_AUTH_BACKOFF_INITIAL_MS 1000
#define TB_AUTH_BACKOFF_MAX_MS 60000
#define TB_AUTH_FORGET_MS (15 * 60 * 1000)

typedef struct tb_auth tb_auth_t;

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

/* Checks an Authorization header value (NULL when absent) sent by client
 * (its address; NULL counts as one "unknown" client), with the cache and
 * backoff described above. On TB_AUTH_THROTTLED, *retry_after_ms (when not
 * NULL) gets how long the client still has to wait. Thread-safe. */
tb_auth_result_t tb_auth_check(tb_auth_t *auth, const char *authorization,
                               const struct sockaddr *client, int64_t *retry_after_ms);

/* Splits `Basic <base64(user:password)>` (scheme in any case, RFC 7617)
 * into user and password, NUL-terminated. Returns 0, or -1 when the header
 * is not Basic, the base64 is not strict, there is no ':', the user is
 * empty, a NUL or control character appears, or a buffer is too small. */
int tb_auth_basic_parse(const char *header, char *user, size_t user_size, char *password,
                        size_t password_size);

#endif
