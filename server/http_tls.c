#include "server/tb_http_tls.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/x509.h>
#include <openssl/crypto.h>

#define PEM_MAX_BYTES (1024 * 1024)
/* Certificates of a chain: the listener's and its intermediates. */
#define CHAIN_MAX 16

typedef struct credentials {
    gnutls_pcert_st certs[CHAIN_MAX];
    unsigned count;
    gnutls_privkey_t key;
    struct credentials *older; /* handed out before, kept until destroy */
} credentials_t;

struct tb_http_tls {
    pthread_mutex_t lock;
    credentials_t *current; /* guarded by lock; NULL until the first load */
};

tb_http_tls_t *tb_http_tls_create(void)
{
    tb_http_tls_t *tls = calloc(1, sizeof(*tls));
    if (tls != NULL) {
        pthread_mutex_init(&tls->lock, NULL);
    }
    return tls;
}

static void credentials_free(credentials_t *creds)
{
    for (unsigned i = 0; i < creds->count; i++) {
        gnutls_pcert_deinit(&creds->certs[i]);
    }
    if (creds->key != NULL) {
        gnutls_privkey_deinit(creds->key);
    }
    free(creds);
}

void tb_http_tls_destroy(tb_http_tls_t *tls)
{
    if (tls == NULL) {
        return;
    }
    while (tls->current != NULL) {
        credentials_t *older = tls->current->older;
        credentials_free(tls->current);
        tls->current = older;
    }
    pthread_mutex_destroy(&tls->lock);
    free(tls);
}

int tb_http_tls_read_pem(const char *path, const char *key, char **out, size_t *out_len,
                         char *errstr, size_t errstr_size)
{
    FILE *file = fopen(path, "r");
    char *buf = NULL;
    size_t len = 0;
    if (file == NULL) {
        snprintf(errstr, errstr_size, "%s %s: %s", key, path, strerror(errno));
        goto fail;
    }
    buf = malloc(PEM_MAX_BYTES + 1);
    if (buf == NULL) {
        snprintf(errstr, errstr_size, "%s %s: out of memory", key, path);
        goto fail;
    }
    len = fread(buf, 1, PEM_MAX_BYTES + 1, file);
    if (ferror(file) || len == 0 || len > PEM_MAX_BYTES) {
        snprintf(errstr, errstr_size, "%s %s: %s", key, path,
                 ferror(file) ? strerror(errno)
                 : len == 0   ? "the file is empty"
                              : "the file is larger than 1 MiB");
        goto fail;
    }
    buf[len] = '\0';
    fclose(file);
    *out = buf;
    *out_len = len;
    return 0;

fail:
    if (buf != NULL) {
        OPENSSL_cleanse(buf, len);
        free(buf);
    }
    if (file != NULL) {
        fclose(file);
    }
    return -1;
}

/* Whether key is the private key of cert's public key. */
static bool key_matches(gnutls_pubkey_t cert_key, gnutls_privkey_t key)
{
    unsigned char a[64], b[64];
    size_t a_len = sizeof(a), b_len = sizeof(b);
    gnutls_pubkey_t pub = NULL;
    bool same =
        gnutls_pubkey_init(&pub) == 0 &&
        gnutls_pubkey_import_privkey(pub, key, 0, 0) == 0 &&
        gnutls_pubkey_get_key_id(pub, GNUTLS_KEYID_USE_SHA256, a, &a_len) == 0 &&
        gnutls_pubkey_get_key_id(cert_key, GNUTLS_KEYID_USE_SHA256, b, &b_len) == 0 &&
        a_len == b_len && memcmp(a, b, a_len) == 0;
    if (pub != NULL) {
        gnutls_pubkey_deinit(pub);
    }
    return same;
}

/* The serial number of the DER certificate der, in hex, into out (41+). */
static void serial_of(const gnutls_datum_t *der, char *out)
{
    unsigned char serial[20];
    size_t len = sizeof(serial);
    gnutls_x509_crt_t crt = NULL;
    out[0] = '\0';
    if (gnutls_x509_crt_init(&crt) == 0 &&
        gnutls_x509_crt_import(crt, der, GNUTLS_X509_FMT_DER) == 0 &&
        gnutls_x509_crt_get_serial(crt, serial, &len) == 0) {
        for (size_t i = 0; i < len; i++) {
            sprintf(out + 2 * i, "%02x", serial[i]);
        }
    }
    if (crt != NULL) {
        gnutls_x509_crt_deinit(crt);
    }
}

/* Whether a and b hold the same chain and the same key. */
static bool same_credentials(const credentials_t *a, const credentials_t *b)
{
    if (a->count != b->count || !key_matches(a->certs[0].pubkey, b->key)) {
        return false;
    }
    for (unsigned i = 0; i < a->count; i++) {
        if (a->certs[i].cert.size != b->certs[i].cert.size ||
            memcmp(a->certs[i].cert.data, b->certs[i].cert.data, a->certs[i].cert.size) !=
                0) {
            return false;
        }
    }
    return true;
}

int tb_http_tls_load(tb_http_tls_t *tls, const char *cert_path, const char *key_path,
                     const char *password, char *serial, char *errstr, size_t errstr_size)
{
    char *cert_pem = NULL, *key_pem = NULL;
    size_t cert_len = 0, key_len = 0;
    credentials_t *creds = calloc(1, sizeof(*creds));
    int rc;
    if (creds == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    if (tb_http_tls_read_pem(cert_path, "listeners.https.ssl.certificate.location",
                             &cert_pem, &cert_len, errstr, errstr_size) != 0 ||
        tb_http_tls_read_pem(key_path, "listeners.https.ssl.key.location", &key_pem,
                             &key_len, errstr, errstr_size) != 0) {
        goto fail;
    }
    gnutls_datum_t cert_data = {(unsigned char *)cert_pem, (unsigned)cert_len};
    gnutls_datum_t key_data = {(unsigned char *)key_pem, (unsigned)key_len};
    creds->count = CHAIN_MAX;
    rc = gnutls_pcert_list_import_x509_raw(creds->certs, &creds->count, &cert_data,
                                           GNUTLS_X509_FMT_PEM, 0);
    if (rc < 0 || creds->count == 0) {
        creds->count = 0;
        snprintf(errstr, errstr_size,
                 "listeners.https.ssl.certificate.location %s: not a PEM certificate "
                 "chain of at most %d certificates (%s)",
                 cert_path, CHAIN_MAX, gnutls_strerror(rc));
        goto fail;
    }
    rc = gnutls_privkey_init(&creds->key);
    if (rc == 0) {
        rc = gnutls_privkey_import_x509_raw(creds->key, &key_data, GNUTLS_X509_FMT_PEM,
                                            password, 0);
    }
    if (rc < 0) {
        snprintf(errstr, errstr_size,
                 "listeners.https.ssl.key.location %s: cannot read the key (%s)%s",
                 key_path, gnutls_strerror(rc),
                 password != NULL ? ": is listeners.https.ssl.key.password its password?"
                 : rc == GNUTLS_E_DECRYPTION_FAILED
                     ? ": it is encrypted and listeners.https.ssl.key.password is not set"
                     : "");
        goto fail;
    }
    if (!key_matches(creds->certs[0].pubkey, creds->key)) {
        snprintf(errstr, errstr_size,
                 "listeners.https.ssl.key.location %s is not the key of the certificate "
                 "in listeners.https.ssl.certificate.location %s",
                 key_path, cert_path);
        goto fail;
    }
    if (serial != NULL) {
        serial_of(&creds->certs[0].cert, serial);
    }
    pthread_mutex_lock(&tls->lock);
    if (tls->current != NULL && same_credentials(tls->current, creds)) {
        credentials_free(creds); /* unchanged files: nothing to keep twice */
    } else {
        creds->older = tls->current;
        tls->current = creds;
    }
    pthread_mutex_unlock(&tls->lock);
    OPENSSL_cleanse(key_pem, key_len);
    free(key_pem);
    free(cert_pem);
    return 0;

fail:
    if (creds != NULL) {
        credentials_free(creds);
    }
    if (key_pem != NULL) {
        OPENSSL_cleanse(key_pem, key_len);
    }
    free(key_pem);
    free(cert_pem);
    return -1;
}

int tb_http_tls_select(tb_http_tls_t *tls, gnutls_pcert_st **certs, unsigned *count,
                       gnutls_privkey_t *key)
{
    pthread_mutex_lock(&tls->lock);
    credentials_t *creds = tls->current;
    if (creds != NULL) {
        *certs = creds->certs;
        *count = creds->count;
        *key = creds->key;
    }
    pthread_mutex_unlock(&tls->lock);
    return creds != NULL ? 0 : -1;
}
