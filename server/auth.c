/* REST API authentication: PBKDF2 hashes, the credentials file and the
 * Authorization header. See tb_auth.h. */
#include "server/tb_auth.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "core/tb_base64.h"
#include "core/tb_metrics.h"
#include "core/tb_time.h"
#include "server/tb_http_conns.h"

#define HASH_PREFIX "pbkdf2-sha256$"
#define SALT_LEN 16
#define SALT_MIN 8
#define SALT_MAX 64
#define HASH_LEN 32
#define NAME_MAX_LEN 256
#define PASSWORD_MAX_LEN 1024
#define HEADER_B64_MAX 4096
#define CACHE_KEY_LEN 32
#define DIGEST_LEN 32
#define VERIFIED_SLOTS 64                      /* headers remembered as verified */
#define CLIENT_SLOTS 256                       /* clients whose failures are counted */
#define CLIENT_KEY_LEN TB_HTTP_CLIENT_KEY_SIZE /* tb_http_client_key's */

typedef struct {
    unsigned iterations;
    unsigned char salt[SALT_MAX];
    size_t salt_len;
    unsigned char hash[HASH_LEN];
} hash_t;

typedef struct {
    char *name;
    hash_t hash;
} entry_t;

/* A client's run of failed attempts. */
typedef struct {
    unsigned char key[CLIENT_KEY_LEN]; /* all zero: a free slot */
    unsigned failures;
    int64_t last_ms;  /* of the last failure */
    int64_t until_ms; /* backing off until then */
} client_t;

static const char *const failure_labels[] = {"reason", NULL};
static const tb_metric_def_t auth_hashes = {
    .name = "tributary_rest_auth_hashes_total",
    .type = TB_METRIC_COUNTER,
    .help = "PBKDF2 verifications of REST credentials run (a header verified once "
            "is not verified again)."};
static const tb_metric_def_t auth_failures = {
    .name = "tributary_rest_auth_failures_total",
    .type = TB_METRIC_COUNTER,
    .help = "REST requests refused for their credentials: invalid (verified and "
            "wrong) or throttled (refused unverified while their client backs off).",
    .labels = failure_labels};

struct tb_auth {
    tb_auth_mode_t mode;
    entry_t *entries;
    size_t count;
    /* Keys the HMAC of verified headers, so that what stays in memory is no
     * fast unsalted hash of a credential. */
    unsigned char cache_key[CACHE_KEY_LEN];
    pthread_mutex_t lock; /* guards what follows */
    bool lock_made;
    unsigned char verified[VERIFIED_SLOTS][DIGEST_LEN];
    size_t verified_count; /* slots filled */
    size_t verified_next;  /* the slot a new header takes */
    client_t clients[CLIENT_SLOTS];
    tb_series_t *hashes;
    tb_series_t *invalid;
    tb_series_t *throttled;
};

int tb_auth_mode_parse(const char *text, tb_auth_mode_t *mode)
{
    static const char *const names[] = {
        [TB_AUTH_NONE] = "none", [TB_AUTH_BASIC] = "basic", [TB_AUTH_BEARER] = "bearer"};
    for (size_t i = 0; text != NULL && i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(text, names[i]) == 0) {
            *mode = (tb_auth_mode_t)i;
            return 0;
        }
    }
    return -1;
}

static int derive(const char *secret, size_t len, const hash_t *params,
                  unsigned char out[HASH_LEN])
{
    return PKCS5_PBKDF2_HMAC(secret, (int)len, params->salt, (int)params->salt_len,
                             (int)params->iterations, EVP_sha256(), HASH_LEN, out) == 1
               ? 0
               : -1;
}

int tb_auth_hash(const char *secret, size_t len, unsigned iterations, char *out,
                 size_t out_size)
{
    hash_t params = {.iterations = iterations, .salt_len = SALT_LEN};
    unsigned char hash[HASH_LEN];
    char salt_b64[4 * ((SALT_LEN + 2) / 3) + 1];
    char hash_b64[4 * ((HASH_LEN + 2) / 3) + 1];
    int rc = -1;

    if (iterations < TB_AUTH_MIN_ITERATIONS || iterations > TB_AUTH_MAX_ITERATIONS ||
        len > PASSWORD_MAX_LEN || RAND_bytes(params.salt, SALT_LEN) != 1 ||
        derive(secret, len, &params, hash) != 0) {
        goto done;
    }
    EVP_EncodeBlock((unsigned char *)salt_b64, params.salt, SALT_LEN);
    EVP_EncodeBlock((unsigned char *)hash_b64, hash, HASH_LEN);
    int n =
        snprintf(out, out_size, HASH_PREFIX "%u$%s$%s", iterations, salt_b64, hash_b64);
    rc = n > 0 && (size_t)n < out_size ? 0 : -1;

done:
    OPENSSL_cleanse(hash, sizeof(hash));
    return rc;
}

/* Parses an encoded hash. Returns -1 when it is not one this module writes
 * (within the iteration bounds). */
static int hash_decode(const char *encoded, hash_t *out)
{
    char *end;
    if (strncmp(encoded, HASH_PREFIX, strlen(HASH_PREFIX)) != 0) {
        return -1;
    }
    const char *p = encoded + strlen(HASH_PREFIX);
    if (*p < '1' || *p > '9') {
        return -1;
    }
    errno = 0;
    unsigned long iterations = strtoul(p, &end, 10);
    if (errno != 0 || *end != '$' || iterations < TB_AUTH_MIN_ITERATIONS ||
        iterations > TB_AUTH_MAX_ITERATIONS) {
        return -1;
    }
    const char *salt = end + 1;
    const char *sep = strchr(salt, '$');
    if (sep == NULL) {
        return -1;
    }
    long salt_len = tb_base64_decode(salt, (size_t)(sep - salt), TB_BASE64_STRICT,
                                     out->salt, SALT_MAX);
    unsigned char hash[HASH_LEN + 3];
    long hash_len =
        tb_base64_decode(sep + 1, strlen(sep + 1), TB_BASE64_STRICT, hash, sizeof(hash));
    if (salt_len < SALT_MIN || hash_len != HASH_LEN) {
        return -1;
    }
    out->iterations = (unsigned)iterations;
    out->salt_len = (size_t)salt_len;
    memcpy(out->hash, hash, HASH_LEN);
    return 0;
}

/* 1 when secret matches params, 0 when not (or when PBKDF2 fails). */
static int hash_matches(const char *secret, size_t len, const hash_t *params)
{
    unsigned char computed[HASH_LEN];
    int match = len <= PASSWORD_MAX_LEN && derive(secret, len, params, computed) == 0 &&
                CRYPTO_memcmp(computed, params->hash, HASH_LEN) == 0;
    OPENSSL_cleanse(computed, sizeof(computed));
    return match;
}

int tb_auth_hash_verify(const char *secret, size_t len, const char *encoded)
{
    hash_t params;
    if (hash_decode(encoded, &params) != 0) {
        return -1;
    }
    return hash_matches(secret, len, &params);
}

/* Is c in RFC 6750's b64token alphabet? */
static bool is_token_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("-._~+/=", c) != NULL);
}

/* Is name acceptable in a credentials file for mode? A user name holds no
 * space or control character; a token name only b64token characters but
 * '.', which separates it from the secret. */
static bool name_valid(const char *name, size_t len, tb_auth_mode_t mode)
{
    if (len == 0 || len > NAME_MAX_LEN) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        bool ok = mode == TB_AUTH_BEARER ? is_token_char(name[i]) && c != '.'
                                         : c > ' ' && c != 0x7f;
        if (!ok) {
            return false;
        }
    }
    return true;
}

static const entry_t *entry_find(const tb_auth_t *auth, const char *name, size_t len)
{
    for (size_t i = 0; i < auth->count; i++) {
        if (strlen(auth->entries[i].name) == len &&
            memcmp(auth->entries[i].name, name, len) == 0) {
            return &auth->entries[i];
        }
    }
    return NULL;
}

/* Parses one non-blank, non-comment line into a new entry. */
static int parse_line(tb_auth_t *auth, char *line, const char *path, unsigned number,
                      char *errstr, size_t errstr_size)
{
    char *colon = strchr(line, ':');
    hash_t hash;
    if (colon == NULL) {
        snprintf(errstr, errstr_size,
                 "%s line %u: expected <name>:pbkdf2-sha256$<iterations>$<salt>$<hash> "
                 "(made with tributary --hash-password)",
                 path, number);
        return -1;
    }
    size_t name_len = (size_t)(colon - line);
    if (!name_valid(line, name_len, auth->mode)) {
        snprintf(errstr, errstr_size,
                 "%s line %u: the name is empty, longer than %d bytes, or holds %s", path,
                 number, NAME_MAX_LEN,
                 auth->mode == TB_AUTH_BEARER
                     ? "a character other than letters, digits and -_~+/="
                     : "a space or control character");
        return -1;
    }
    if (hash_decode(colon + 1, &hash) != 0) {
        snprintf(errstr, errstr_size,
                 "%s line %u: the hash is not pbkdf2-sha256$<iterations>$<salt "
                 "base64>$<32-byte hash base64> with %u to %u iterations (made with "
                 "tributary --hash-password)",
                 path, number, TB_AUTH_MIN_ITERATIONS, TB_AUTH_MAX_ITERATIONS);
        return -1;
    }
    if (entry_find(auth, line, name_len) != NULL) {
        snprintf(errstr, errstr_size, "%s line %u: %.*s is listed twice", path, number,
                 (int)name_len, line);
        return -1;
    }
    entry_t *grown = realloc(auth->entries, (auth->count + 1) * sizeof(entry_t));
    if (grown == NULL) {
        snprintf(errstr, errstr_size, "%s: out of memory", path);
        return -1;
    }
    auth->entries = grown;
    auth->entries[auth->count] = (entry_t){.name = strndup(line, name_len), .hash = hash};
    if (auth->entries[auth->count].name == NULL) {
        snprintf(errstr, errstr_size, "%s: out of memory", path);
        return -1;
    }
    auth->count++;
    return 0;
}

tb_auth_t *tb_auth_create(tb_auth_mode_t mode, const char *path, char *errstr,
                          size_t errstr_size)
{
    tb_auth_t *auth = calloc(1, sizeof(*auth));
    FILE *file = NULL;
    char *line = NULL;
    size_t line_size = 0;
    unsigned number = 0;

    if (auth == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    auth->mode = mode;
    auth->lock_made = pthread_mutex_init(&auth->lock, NULL) == 0;
    auth->hashes = tb_metrics_series(&auth_hashes, NULL);
    auth->invalid = tb_metrics_series(&auth_failures, (const char *const[]){"invalid"});
    auth->throttled =
        tb_metrics_series(&auth_failures, (const char *const[]){"throttled"});
    if (!auth->lock_made || RAND_bytes(auth->cache_key, CACHE_KEY_LEN) != 1) {
        snprintf(errstr, errstr_size, "no lock or no random bytes for a cache key");
        goto fail;
    }
    file = fopen(path, "r");
    if (file == NULL) {
        snprintf(errstr, errstr_size, "%s: %s", path, strerror(errno));
        goto fail;
    }
    while (getline(&line, &line_size, file) >= 0) {
        size_t len = strlen(line);
        char *start = line;
        number++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
                           line[len - 1] == ' ' || line[len - 1] == '\t')) {
            line[--len] = '\0';
        }
        while (*start == ' ' || *start == '\t') {
            start++;
        }
        if (*start == '\0' || *start == '#') {
            continue;
        }
        if (parse_line(auth, start, path, number, errstr, errstr_size) != 0) {
            goto fail;
        }
    }
    if (ferror(file)) {
        snprintf(errstr, errstr_size, "%s: %s", path, strerror(errno));
        goto fail;
    }
    if (auth->count == 0) {
        snprintf(errstr, errstr_size, "%s: no credentials in the file", path);
        goto fail;
    }
    free(line);
    fclose(file);
    return auth;

fail:
    free(line);
    if (file != NULL) {
        fclose(file);
    }
    tb_auth_destroy(auth);
    return NULL;
}

void tb_auth_destroy(tb_auth_t *auth)
{
    if (auth == NULL) {
        return;
    }
    for (size_t i = 0; i < auth->count; i++) {
        free(auth->entries[i].name);
    }
    OPENSSL_cleanse(auth->entries, auth->count * sizeof(entry_t));
    free(auth->entries);
    if (auth->lock_made) {
        pthread_mutex_destroy(&auth->lock);
    }
    tb_series_release(auth->hashes);
    tb_series_release(auth->invalid);
    tb_series_release(auth->throttled);
    OPENSSL_cleanse(auth, sizeof(*auth));
    free(auth);
}

const char *tb_auth_challenge(const tb_auth_t *auth)
{
    return auth->mode == TB_AUTH_BEARER ? "Bearer realm=\"tributary\""
                                        : "Basic realm=\"tributary\"";
}

/* The credentials after `<scheme> ` (scheme in any case, then one or more
 * spaces), without trailing spaces, or NULL when header is of another
 * scheme. *len gets their length. */
static const char *credentials_of(const char *header, const char *scheme, size_t *len)
{
    size_t n = strlen(scheme);
    if (strncasecmp(header, scheme, n) != 0 || (header[n] != ' ' && header[n] != '\t')) {
        return NULL;
    }
    const char *start = header + n;
    while (*start == ' ' || *start == '\t') {
        start++;
    }
    *len = strlen(start);
    while (*len > 0 && (start[*len - 1] == ' ' || start[*len - 1] == '\t')) {
        (*len)--;
    }
    return start;
}

int tb_auth_basic_parse(const char *header, char *user, size_t user_size, char *password,
                        size_t password_size)
{
    unsigned char decoded[HEADER_B64_MAX / 4 * 3 + 1];
    size_t len = 0;
    long decoded_len = -1;
    int rc = -1;
    const char *b64 = credentials_of(header, "Basic", &len);

    if (b64 == NULL || len > HEADER_B64_MAX) {
        goto done;
    }
    decoded_len =
        tb_base64_decode(b64, len, TB_BASE64_STRICT, decoded, sizeof(decoded) - 1);
    if (decoded_len < 0) {
        goto done;
    }
    for (long i = 0; i < decoded_len; i++) {
        if (decoded[i] < ' ' || decoded[i] == 0x7f) {
            goto done;
        }
    }
    decoded[decoded_len] = '\0';
    char *colon = strchr((char *)decoded, ':');
    if (colon == NULL || colon == (char *)decoded) {
        goto done;
    }
    size_t user_len = (size_t)(colon - (char *)decoded);
    size_t password_len = strlen(colon + 1);
    if (user_len >= user_size || password_len >= password_size) {
        goto done;
    }
    memcpy(user, decoded, user_len);
    user[user_len] = '\0';
    memcpy(password, colon + 1, password_len + 1);
    rc = 0;

done:
    OPENSSL_cleanse(decoded, sizeof(decoded));
    return rc;
}

/* Checks name and secret against the file; an unknown name costs the same
 * hash computation as a known one. */
static tb_auth_result_t check_pair(const tb_auth_t *auth, const char *name,
                                   size_t name_len, const char *secret, size_t secret_len)
{
    const entry_t *entry = entry_find(auth, name, name_len);
    if (entry == NULL) {
        (void)hash_matches(secret, secret_len, &auth->entries[0].hash);
        return TB_AUTH_INVALID;
    }
    return hash_matches(secret, secret_len, &entry->hash) ? TB_AUTH_OK : TB_AUTH_INVALID;
}

static tb_auth_result_t check_basic(const tb_auth_t *auth, const char *header)
{
    char user[NAME_MAX_LEN + 1];
    char password[PASSWORD_MAX_LEN + 1];
    tb_auth_result_t result = TB_AUTH_INVALID;
    if (tb_auth_basic_parse(header, user, sizeof(user), password, sizeof(password)) ==
        0) {
        result = check_pair(auth, user, strlen(user), password, strlen(password));
    }
    OPENSSL_cleanse(password, sizeof(password));
    return result;
}

/* `Bearer <name>.<secret>`, the token in RFC 6750's b64token alphabet. */
static tb_auth_result_t check_bearer(const tb_auth_t *auth, const char *header)
{
    size_t len = 0;
    const char *token = credentials_of(header, "Bearer", &len);
    const char *dot = token != NULL ? memchr(token, '.', len) : NULL;
    if (dot == NULL || dot == token || dot + 1 == token + len ||
        len > PASSWORD_MAX_LEN + NAME_MAX_LEN) {
        return TB_AUTH_INVALID;
    }
    for (size_t i = 0; i < len; i++) {
        if (!is_token_char(token[i])) {
            return TB_AUTH_INVALID;
        }
    }
    return check_pair(auth, token, (size_t)(dot - token), dot + 1,
                      len - (size_t)(dot + 1 - token));
}

/* What counts failures together: the client (tb_http_client_key: an IPv4
 * address or an IPv6 /64). NULL or another family: all zero but the first
 * byte. */
static void client_key(const struct sockaddr *client, unsigned char key[CLIENT_KEY_LEN])
{
    if (client == NULL || tb_http_client_key(client, key) != 0) {
        memset(key, 0, CLIENT_KEY_LEN);
        key[0] = 0xff; /* a used slot's key is never all zero */
    }
}

/* Was digest verified before? Every slot is compared, in constant time. */
static bool verified_find(const tb_auth_t *auth, const unsigned char *digest)
{
    bool found = false;
    for (size_t i = 0; i < VERIFIED_SLOTS; i++) {
        found |= i < auth->verified_count &&
                 CRYPTO_memcmp(auth->verified[i], digest, DIGEST_LEN) == 0;
    }
    return found;
}

static void verified_add(tb_auth_t *auth, const unsigned char *digest)
{
    if (!verified_find(auth, digest)) {
        memcpy(auth->verified[auth->verified_next], digest, DIGEST_LEN);
        auth->verified_next = (auth->verified_next + 1) % VERIFIED_SLOTS;
        if (auth->verified_count < VERIFIED_SLOTS) {
            auth->verified_count++;
        }
    }
}

/* The client's slot: its own, else a free or forgotten one, else the one
 * that failed longest ago. */
static client_t *client_slot(tb_auth_t *auth, const unsigned char *key, int64_t now)
{
    client_t *oldest = &auth->clients[0];
    for (size_t i = 0; i < CLIENT_SLOTS; i++) {
        client_t *c = &auth->clients[i];
        if (memcmp(c->key, key, CLIENT_KEY_LEN) == 0) {
            return c;
        }
        if (c->last_ms < oldest->last_ms) {
            oldest = c;
        }
    }
    *oldest = (client_t){0};
    memcpy(oldest->key, key, CLIENT_KEY_LEN);
    oldest->last_ms = now;
    return oldest;
}

static void client_failed(client_t *c, int64_t now)
{
    if (now - c->last_ms > TB_AUTH_FORGET_MS) {
        c->failures = 0;
    }
    c->failures++;
    c->last_ms = now;
    if (c->failures >= TB_AUTH_FREE_FAILURES) {
        unsigned doublings = c->failures - TB_AUTH_FREE_FAILURES;
        int64_t backoff = doublings >= 16
                              ? TB_AUTH_BACKOFF_MAX_MS
                              : (int64_t)TB_AUTH_BACKOFF_INITIAL_MS << doublings;
        c->until_ms =
            now + (backoff < TB_AUTH_BACKOFF_MAX_MS ? backoff : TB_AUTH_BACKOFF_MAX_MS);
    }
}

/* Checks the credentials themselves: PBKDF2. */
static tb_auth_result_t verify(tb_auth_t *auth, const char *authorization)
{
    tb_series_add(auth->hashes, 1);
    return auth->mode == TB_AUTH_BEARER ? check_bearer(auth, authorization)
                                        : check_basic(auth, authorization);
}

tb_auth_result_t tb_auth_check(tb_auth_t *auth, const char *authorization,
                               const struct sockaddr *client, int64_t *retry_after_ms)
{
    unsigned char digest[DIGEST_LEN];
    unsigned char key[CLIENT_KEY_LEN];
    unsigned digest_len = 0;
    size_t len = 0;
    const char *scheme = auth->mode == TB_AUTH_BEARER ? "Bearer" : "Basic";

    if (authorization == NULL || credentials_of(authorization, scheme, &len) == NULL) {
        return TB_AUTH_MISSING;
    }
    if (HMAC(EVP_sha256(), auth->cache_key, CACHE_KEY_LEN,
             (const unsigned char *)authorization, strlen(authorization), digest,
             &digest_len) == NULL) {
        return TB_AUTH_INVALID;
    }
    client_key(client, key);
    int64_t now = tb_monotonic_ms();
    pthread_mutex_lock(&auth->lock);
    bool known = verified_find(auth, digest);
    client_t *c = known ? NULL : client_slot(auth, key, now);
    int64_t wait_ms = c != NULL ? c->until_ms - now : 0;
    pthread_mutex_unlock(&auth->lock);
    if (known) {
        return TB_AUTH_OK;
    }
    if (wait_ms > 0) {
        tb_series_add(auth->throttled, 1);
        if (retry_after_ms != NULL) {
            *retry_after_ms = wait_ms;
        }
        return TB_AUTH_THROTTLED;
    }
    tb_auth_result_t result = verify(auth, authorization);
    pthread_mutex_lock(&auth->lock);
    c = client_slot(auth, key, now); /* again: the slot may have been reused */
    if (result == TB_AUTH_OK) {
        verified_add(auth, digest);
        *c = (client_t){.last_ms = now};
        memcpy(c->key, key, CLIENT_KEY_LEN);
    } else {
        client_failed(c, now);
    }
    pthread_mutex_unlock(&auth->lock);
    if (result != TB_AUTH_OK) {
        tb_series_add(auth->invalid, 1);
    }
    return result;
}
