#include "core/tb_secret_seal.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "core/tb_base64.h"
#include "core/tb_secret.h"

#define SEALED_PREFIX "${sealed:v1:"
#define NONCE_SIZE 12
#define TAG_SIZE 16
#define KEY_ID_SIZE 8 /* hex digits */
#define SEALED_MAX (64 * 1024)

/* The worker's key, in a page of its own kept out of core dumps; NULL when
 * the worker has none. Set at start, before any other thread runs. */
static unsigned char *seal_key;
static char seal_key_id[KEY_ID_SIZE + 1];

int tb_secret_seal_key_parse(const char *text, unsigned char key[TB_SECRET_SEAL_KEY_SIZE],
                             char *errstr, size_t errstr_size)
{
    uint8_t decoded[TB_BASE64_DECODED_MAX(64)];
    size_t len = strlen(text);
    long n = len <= 64
                 ? tb_base64_decode(text, len, TB_BASE64_STRICT, decoded, sizeof(decoded))
                 : -1;
    if (n != TB_SECRET_SEAL_KEY_SIZE) {
        snprintf(errstr, errstr_size,
                 "it is not the base64 of %d bytes (make one with openssl rand -base64 "
                 "%d)",
                 TB_SECRET_SEAL_KEY_SIZE, TB_SECRET_SEAL_KEY_SIZE);
    } else {
        memcpy(key, decoded, TB_SECRET_SEAL_KEY_SIZE);
    }
    OPENSSL_cleanse(decoded, sizeof(decoded));
    return n == TB_SECRET_SEAL_KEY_SIZE ? 0 : -1;
}

/* The id of key: the first bytes of SHA-256("tributary-seal-key-id" key),
 * in hex. */
static void key_id_of(const unsigned char *key, char id[KEY_ID_SIZE + 1])
{
    static const char label[] = "tributary-seal-key-id";
    unsigned char input[sizeof(label) + TB_SECRET_SEAL_KEY_SIZE];
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    memcpy(input, label, sizeof(label));
    memcpy(input + sizeof(label), key, TB_SECRET_SEAL_KEY_SIZE);
    EVP_Digest(input, sizeof(input), digest, &digest_len, EVP_sha256(), NULL);
    OPENSSL_cleanse(input, sizeof(input));
    for (int i = 0; i < KEY_ID_SIZE / 2; i++) {
        snprintf(id + 2 * i, 3, "%02x", digest[i]);
    }
}

int tb_secret_seal_key_set(const unsigned char *key)
{
    if (seal_key != NULL) {
        OPENSSL_cleanse(seal_key, TB_SECRET_SEAL_KEY_SIZE);
        munmap(seal_key, TB_SECRET_SEAL_KEY_SIZE);
        seal_key = NULL;
        seal_key_id[0] = '\0';
    }
    if (key == NULL) {
        return 0;
    }
    void *page = mmap(NULL, TB_SECRET_SEAL_KEY_SIZE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        return -1;
    }
    madvise(page, TB_SECRET_SEAL_KEY_SIZE, MADV_DONTDUMP);
    seal_key = page;
    memcpy(seal_key, key, TB_SECRET_SEAL_KEY_SIZE);
    key_id_of(seal_key, seal_key_id);
    return 0;
}

bool tb_secret_seal_key_present(void)
{
    return seal_key != NULL;
}

/* ---- the sealed form ---- */

/* The parts of a sealed reference, pointing into it. */
typedef struct {
    const char *key_id; /* KEY_ID_SIZE hex digits */
    const char *identity;
    size_t identity_len;
    const char *data; /* base64 */
    size_t data_len;
} sealed_t;

static bool identity_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.' || c == '%';
}

static bool data_char(char c)
{
    return isalnum((unsigned char)c) || c == '+' || c == '/' || c == '=';
}

/* Splits value into its parts; false when it is not a sealed reference. */
static bool parse(const char *value, sealed_t *s)
{
    size_t n = value != NULL ? strnlen(value, SEALED_MAX + 1) : 0;
    size_t p = strlen(SEALED_PREFIX);
    if (n <= p || n > SEALED_MAX || strncmp(value, SEALED_PREFIX, p) != 0 ||
        value[n - 1] != '}') {
        return false;
    }
    s->key_id = value + p;
    for (size_t i = 0; i < KEY_ID_SIZE; i++) {
        if (!isxdigit((unsigned char)s->key_id[i])) {
            return false;
        }
    }
    if (s->key_id[KEY_ID_SIZE] != ':') {
        return false;
    }
    s->identity = s->key_id + KEY_ID_SIZE + 1;
    s->identity_len = 0;
    while (identity_char(s->identity[s->identity_len])) {
        s->identity_len++;
    }
    if (s->identity_len == 0 || s->identity[s->identity_len] != ':') {
        return false;
    }
    s->data = s->identity + s->identity_len + 1;
    s->data_len = (size_t)(value + n - 1 - s->data);
    for (size_t i = 0; i < s->data_len; i++) {
        if (!data_char(s->data[i])) {
            return false;
        }
    }
    return s->data_len > 0;
}

bool tb_secret_is_sealed(const char *value)
{
    sealed_t s;
    return parse(value, &s);
}

/* "<owner>.<config key>", encoded (tb_secret_file_key). malloc'd. */
static char *identity_of(const char *owner, const char *config_key)
{
    char probe[1];
    int n = tb_secret_file_key(owner, config_key, probe, sizeof(probe));
    char *identity = malloc((size_t)n + 1);
    if (identity != NULL) {
        tb_secret_file_key(owner, config_key, identity, (size_t)n + 1);
    }
    return identity;
}

/* AES-256-GCM of in[0..len) into out (len bytes) and tag, or back (then
 * tag is checked). Returns 0, or -1 when the tag does not match. */
static int gcm(bool encrypt, const unsigned char *nonce, const char *aad, size_t aad_len,
               const unsigned char *in, size_t len, unsigned char *out,
               unsigned char *tag)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int out_len = 0, ok = ctx != NULL;
    ok = ok && EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, seal_key, nonce,
                                 encrypt ? 1 : 0) == 1;
    ok = ok && EVP_CipherUpdate(ctx, NULL, &out_len, (const unsigned char *)aad,
                                (int)aad_len) == 1;
    ok = ok && EVP_CipherUpdate(ctx, out, &out_len, in, (int)len) == 1;
    ok = ok &&
         (encrypt || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_SIZE, tag) == 1);
    ok = ok && EVP_CipherFinal_ex(ctx, out + out_len, &out_len) == 1;
    ok = ok &&
         (!encrypt || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_SIZE, tag) == 1);
    EVP_CIPHER_CTX_free(ctx);
    return ok ? 0 : -1;
}

char *tb_secret_seal(const char *owner, const char *config_key, const char *secret,
                     char *errstr, size_t errstr_size)
{
    size_t len = strlen(secret);
    size_t blob_len = NONCE_SIZE + len + TAG_SIZE;
    char *identity = identity_of(owner, config_key);
    unsigned char *blob = malloc(blob_len);
    char *text = malloc(4 * ((blob_len + 2) / 3) + 1);
    char *sealed = NULL;
    if (seal_key == NULL) {
        snprintf(errstr, errstr_size,
                 "%s is literal and this worker has no secrets.encryption.key to seal it",
                 config_key);
        goto done;
    }
    if (identity == NULL || blob == NULL || text == NULL ||
        RAND_bytes(blob, NONCE_SIZE) != 1 ||
        gcm(true, blob, identity, strlen(identity), (const unsigned char *)secret, len,
            blob + NONCE_SIZE, blob + NONCE_SIZE + len) != 0) {
        snprintf(errstr, errstr_size, "%s cannot be sealed: out of memory or no random",
                 config_key);
        goto done;
    }
    EVP_EncodeBlock((unsigned char *)text, blob, (int)blob_len);
    if (asprintf(&sealed, SEALED_PREFIX "%s:%s:%s}", seal_key_id, identity, text) < 0) {
        sealed = NULL;
        snprintf(errstr, errstr_size, "%s cannot be sealed: out of memory", config_key);
    }

done:
    free(identity);
    free(blob);
    free(text);
    return sealed;
}

/* Why s cannot be opened or held here, in errstr; 0 when it can. */
static int check_key(const sealed_t *s, char *errstr, size_t errstr_size)
{
    if (seal_key == NULL) {
        snprintf(errstr, errstr_size,
                 "the sealed secret %.*s needs the worker's secrets.encryption.key (key "
                 "id %.*s), which this worker does not set",
                 (int)s->identity_len, s->identity, KEY_ID_SIZE, s->key_id);
        return -1;
    }
    if (strncmp(s->key_id, seal_key_id, KEY_ID_SIZE) != 0) {
        snprintf(errstr, errstr_size,
                 "the sealed secret %.*s was sealed under another "
                 "secrets.encryption.key (key id %.*s; this worker's is %s): every "
                 "worker of the cluster needs the same key",
                 (int)s->identity_len, s->identity, KEY_ID_SIZE, s->key_id, seal_key_id);
        return -1;
    }
    return 0;
}

char *tb_secret_seal_open(const char *sealed, char *errstr, size_t errstr_size)
{
    sealed_t s;
    uint8_t *blob = NULL;
    char *identity = NULL, *secret = NULL;
    long n = -1;
    if (!parse(sealed, &s)) {
        snprintf(errstr, errstr_size, "a sealed secret is damaged");
        return NULL;
    }
    if (check_key(&s, errstr, errstr_size) != 0) {
        return NULL;
    }
    blob = malloc(TB_BASE64_DECODED_MAX(s.data_len));
    identity = strndup(s.identity, s.identity_len);
    if (blob != NULL && identity != NULL) {
        n = tb_base64_decode(s.data, s.data_len, TB_BASE64_STRICT, blob,
                             TB_BASE64_DECODED_MAX(s.data_len));
    }
    size_t len = n >= NONCE_SIZE + TAG_SIZE ? (size_t)n - NONCE_SIZE - TAG_SIZE : 0;
    secret = n >= NONCE_SIZE + TAG_SIZE ? malloc(len + 1) : NULL;
    if (secret == NULL ||
        gcm(false, blob, identity, s.identity_len, blob + NONCE_SIZE, len,
            (unsigned char *)secret, blob + NONCE_SIZE + len) != 0) {
        snprintf(errstr, errstr_size,
                 "the sealed secret %.*s cannot be opened with this worker's "
                 "secrets.encryption.key (key id %s): it was altered, or moved from "
                 "another connector or key",
                 (int)s.identity_len, s.identity, seal_key_id);
        if (secret != NULL) {
            OPENSSL_cleanse(secret, len);
        }
        free(secret);
        secret = NULL;
    } else {
        secret[len] = '\0';
    }
    free(identity);
    free(blob);
    return secret;
}

int tb_secret_seal_check(const char *sealed, const char *owner, const char *config_key,
                         char *reason, size_t reason_size)
{
    sealed_t s;
    if (!parse(sealed, &s)) {
        snprintf(reason, reason_size, "it is not a whole sealed secret");
        return -1;
    }
    char *own = identity_of(owner, config_key != NULL ? config_key : "");
    size_t own_len = own != NULL ? strlen(own) : 0;
    bool mine = own != NULL &&
                (config_key != NULL
                     ? s.identity_len == own_len && memcmp(s.identity, own, own_len) == 0
                     : s.identity_len > own_len && memcmp(s.identity, own, own_len) == 0);
    free(own);
    if (!mine) {
        snprintf(reason, reason_size,
                 "it was sealed for %.*s, and a connector holds only its own sealed "
                 "secrets, each under its own key",
                 (int)s.identity_len, s.identity);
        return -1;
    }
    return check_key(&s, reason, reason_size);
}
