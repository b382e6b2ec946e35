/*
 * tb_http_tls.h - the https listeners' certificate chain and private key,
 * which can be replaced while the listeners serve.
 *
 * libmicrohttpd has no call that swaps a running daemon's certificate; it
 * does let GnuTLS ask a callback for the certificate of each handshake
 * (MHD_OPTION_HTTPS_CERT_CALLBACK). The listeners' callback hands out what
 * tb_http_tls_select gives: the credentials last loaded. A reload loads
 * new ones and makes them current; connections already open keep the
 * session they negotiated, and every later handshake gets the new ones.
 * Credentials once handed out are kept until tb_http_tls_destroy (GnuTLS
 * sessions borrow them for their lifetime): a reload that finds new files
 * costs a few kB, one that finds the same ones nothing.
 *
 * Ownership: the set owns every credential it loaded; tb_http_tls_select's
 * are borrowed. Locking: a mutex of its own; any thread may call anything
 * but destroy, which runs once no listener serves.
 */
#ifndef TB_HTTP_TLS_H
#define TB_HTTP_TLS_H

#include <stddef.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

typedef struct tb_http_tls tb_http_tls_t;

/* An empty set (no credentials yet), or NULL when out of memory. */
tb_http_tls_t *tb_http_tls_create(void);

/* Frees tls and every credential it loaded. NULL is a no-op. */
void tb_http_tls_destroy(tb_http_tls_t *tls);

/* Reads the PEM certificate chain at cert_path and the PEM key at
 * key_path (decrypted with password, NULL when it is not encrypted),
 * checks that the key is the certificate's, and makes them current.
 * Returns 0, or -1 with errstr naming the worker key at fault
 * (listeners.https.ssl.certificate.location, .key.location or
 * .key.password) and why; the current credentials then stay. The serial
 * number of the certificate loaded, in hex, goes to serial (at least 41
 * bytes) when it is not NULL. */
int tb_http_tls_load(tb_http_tls_t *tls, const char *cert_path, const char *key_path,
                     const char *password, char *serial, char *errstr,
                     size_t errstr_size);

/* The current credentials, for a handshake (borrowed). Returns -1 when
 * none were loaded. */
int tb_http_tls_select(tb_http_tls_t *tls, gnutls_pcert_st **certs, unsigned *count,
                       gnutls_privkey_t *key);

/* Reads a PEM file of at most 1 MiB into *out (NUL-terminated, malloc'd;
 * wipe a key's before freeing it). key names the configuration key in
 * errors. Returns 0, or -1 with errstr. */
int tb_http_tls_read_pem(const char *path, const char *key, char **out, size_t *out_len,
                         char *errstr, size_t errstr_size);

#endif
