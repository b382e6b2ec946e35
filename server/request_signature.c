#include "server/tb_request_signature.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "connectors/runtime/cluster/tb_session_key.h"

/* method\npath\nquery\nbody: what is signed. malloc'd, *len set. */
static char *signed_text(const tb_api_request_t *req, size_t *len)
{
    char *query = req->query != NULL
                      ? json_dumps(req->query, JSON_COMPACT | JSON_SORT_KEYS)
                      : strdup("{}");
    size_t body_len = req->body != NULL ? req->body_len : 0;
    char *text = NULL;
    if (query != NULL) {
        size_t head = strlen(req->method) + strlen(req->path) + strlen(query) + 3;
        text = malloc(head + body_len + 1);
        if (text != NULL) {
            snprintf(text, head + 1, "%s\n%s\n%s\n", req->method, req->path, query);
            if (body_len > 0) {
                memcpy(text + head, req->body, body_len);
            }
            *len = head + body_len;
        }
    }
    free(query);
    return text;
}

int tb_request_signature_sign(const tb_connect_session_key_t *key, const char *algorithm,
                              const tb_api_request_t *req, char out[TB_SIGNATURE_MAX])
{
    const char *digest_name = tb_session_key_digest(algorithm);
    const EVP_MD *digest = digest_name != NULL ? EVP_get_digestbyname(digest_name) : NULL;
    size_t len = 0;
    char *text = digest != NULL ? signed_text(req, &len) : NULL;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    int rc = text != NULL && HMAC(digest, key->bytes, (int)key->len,
                                  (const unsigned char *)text, len, mac, &mac_len) != NULL
                 ? 0
                 : -1;
    if (rc == 0) {
        EVP_EncodeBlock((unsigned char *)out, mac, (int)mac_len);
    }
    OPENSSL_cleanse(mac, sizeof(mac));
    free(text);
    return rc;
}

bool tb_request_signature_matches(const tb_connect_session_key_t *key,
                                  const char *algorithm, const tb_api_request_t *req,
                                  const char *signature)
{
    char expected[TB_SIGNATURE_MAX];
    size_t len = strlen(signature);
    bool matches =
        key->len > 0 && tb_request_signature_sign(key, algorithm, req, expected) == 0 &&
        strlen(expected) == len && CRYPTO_memcmp(expected, signature, len) == 0;
    OPENSSL_cleanse(expected, sizeof(expected));
    return matches;
}
