/*
 * tb_s3_client.h - the S3 sink's requests: one reused curl handle per task,
 * every request signed by libcurl (CURLOPT_AWS_SIGV4), bounded in time
 * (s3.request.timeout.ms) and retried when the store may recover (a
 * network error, 5xx, 429, SlowDown) up to s3.part.retries times, the
 * wait doubling from s3.retry.backoff.ms.
 *
 * Messages name the bucket and the key and what the store answered (its
 * error Code and Message), never a credential.
 *
 * curl_global_init() is called once by the server's main, never here.
 * Ownership: the client owns copies of everything in its options.
 */
#ifndef TB_S3_CLIENT_H
#define TB_S3_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "connectors/s3/tb_s3_web_identity.h"

typedef struct {
    const char *endpoint; /* store.url, NULL: AWS's endpoint of region */
    const char *bucket;
    const char *region;
    bool path_style;
    const char *access_key; /* NULL: no signing (an anonymous store) */
    const char *secret_key;
    const char *session_token; /* NULL: none */
    /* With no access_key: key pairs from STS for this web identity,
     * exchanged at the first request and again 5 minutes before they
     * expire (copied). NULL: none. */
    const tb_s3_web_identity_t *web_identity;
    const char *sse_algorithm;  /* NULL: none */
    const char *sse_kms_key_id; /* NULL: none */
    const char *acl_canned;     /* NULL: none */
    long timeout_ms;
    long connect_timeout_ms;
    int retries;        /* extra attempts of a request */
    int64_t backoff_ms; /* the first wait, doubled at each */
} tb_s3_client_options_t;

/* What a request came to, after its retries. */
typedef enum {
    TB_S3_OK = 0,
    TB_S3_TRANSIENT, /* the store may recover: try again later */
    TB_S3_REFUSED,   /* the store refuses (403, 404, 400): no retry helps */
} tb_s3_outcome_t;

typedef struct tb_s3_client tb_s3_client_t;

/* A new client, or NULL with errstr. */
tb_s3_client_t *tb_s3_client_new(const tb_s3_client_options_t *options, char *errstr,
                                 size_t errstr_size);

/* NULL is a no-op. Secrets are wiped. */
void tb_s3_client_free(tb_s3_client_t *client);

/* The user metadata written with an object (x-amz-meta-<name>). */
typedef struct {
    const char *name;
    char value[32];
} tb_s3_meta_t;

/* PutObject of body[0..len) at key, with meta_count entries of meta. */
tb_s3_outcome_t tb_s3_put_object(tb_s3_client_t *client, const char *key,
                                 const void *body, size_t len, const tb_s3_meta_t *meta,
                                 size_t meta_count, char *errstr, size_t errstr_size);

/* CreateMultipartUpload: *upload_id gets a new string (free()). */
tb_s3_outcome_t tb_s3_multipart_start(tb_s3_client_t *client, const char *key,
                                      const tb_s3_meta_t *meta, size_t meta_count,
                                      char **upload_id, char *errstr, size_t errstr_size);

/* UploadPart number part (from 1): *etag gets a new string (free()). */
tb_s3_outcome_t tb_s3_multipart_part(tb_s3_client_t *client, const char *key,
                                     const char *upload_id, int part, const void *body,
                                     size_t len, char **etag, char *errstr,
                                     size_t errstr_size);

/* CompleteMultipartUpload of the count parts whose etags are given, in
 * order: the object becomes visible, whole. */
tb_s3_outcome_t tb_s3_multipart_complete(tb_s3_client_t *client, const char *key,
                                         const char *upload_id, char *const *etags,
                                         int count, char *errstr, size_t errstr_size);

/* AbortMultipartUpload, best effort (a lifecycle rule removes what stays). */
void tb_s3_multipart_abort(tb_s3_client_t *client, const char *key,
                           const char *upload_id);

/* ListObjectsV2 of every key under prefix, page after page: fn is called
 * for each key (a NUL-terminated string, borrowed for the call). */
tb_s3_outcome_t tb_s3_list(tb_s3_client_t *client, const char *prefix,
                           void (*fn)(void *arg, const char *key), void *arg,
                           char *errstr, size_t errstr_size);

/* HeadObject: the value of user metadata name into value (size bytes),
 * "" when the object has none of that name. */
tb_s3_outcome_t tb_s3_head_meta(tb_s3_client_t *client, const char *key, const char *name,
                                char *value, size_t size, char *errstr,
                                size_t errstr_size);

/* How many requests the client sent, retries included. */
uint64_t tb_s3_client_requests(const tb_s3_client_t *client);

#endif
