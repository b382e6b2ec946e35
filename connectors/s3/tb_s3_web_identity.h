/*
 * tb_s3_web_identity.h - the S3 sink's credentials for a web identity (a
 * Kubernetes service account's token, an OIDC provider's): the token read
 * from AWS_WEB_IDENTITY_TOKEN_FILE is exchanged with STS's
 * AssumeRoleWithWebIdentity for a temporary key pair of AWS_ROLE_ARN, as
 * the AWS SDKs' default chain does. The request is not signed (the token
 * is the proof), and the file is read again at every exchange, since
 * Kubernetes rotates it.
 *
 * Messages name the role, the token file and what STS answered, never the
 * token or a key.
 */
#ifndef TB_S3_WEB_IDENTITY_H
#define TB_S3_WEB_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *token_file;   /* AWS_WEB_IDENTITY_TOKEN_FILE, borrowed */
    const char *role_arn;     /* AWS_ROLE_ARN, borrowed */
    const char *session_name; /* AWS_ROLE_SESSION_NAME, else "tributary" */
    char sts_url[512];        /* AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, else
                                 https://sts.<region>.amazonaws.com */
} tb_s3_web_identity_t;

/* Fills *out from the environment when AWS_WEB_IDENTITY_TOKEN_FILE and
 * AWS_ROLE_ARN are both set; the strings are borrowed from the
 * environment, which tributary never changes. */
bool tb_s3_web_identity_from_env(const char *region, tb_s3_web_identity_t *out);

/* A temporary key pair. The strings are owned; tb_s3_credentials_clear()
 * wipes and frees them. */
typedef struct {
    char *access_key;
    char *secret_key;
    char *session_token;
    int64_t expires_ms; /* wall clock */
} tb_s3_credentials_t;

/* AssumeRoleWithWebIdentity, the whole exchange bounded by timeout_ms.
 * 0 with *out filled; -1 with errstr, *transient saying whether a later
 * attempt may succeed (the network, 5xx, throttling). */
int tb_s3_web_identity_assume(const tb_s3_web_identity_t *identity, long timeout_ms,
                              tb_s3_credentials_t *out, bool *transient, char *errstr,
                              size_t errstr_size);

void tb_s3_credentials_clear(tb_s3_credentials_t *credentials);

#endif
