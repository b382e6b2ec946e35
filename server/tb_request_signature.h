/*
 * tb_request_signature.h - the HMAC that authenticates a request one
 * worker of a cluster forwards to another (server/tb_forward.h), keyed
 * with the cluster's session key (tb_session_key.h), sent in Connect's
 * headers: X-Connect-Authorization (the base64 HMAC) and
 * X-Connect-Request-Signature-Algorithm (inter.worker.signature.algorithm,
 * Java's name: HmacSHA256).
 *
 * Connect signs the body alone. tributary signs the method, the path, the
 * query and the body, each after a newline ("POST\n/connectors/c/restart\n
 * {"includeTasks":["true"]}\n<body>", the query as compact JSON of name ->
 * values, names sorted), so that a signed request cannot be replayed with
 * another method, at another path or with other query arguments. A worker
 * of tributary never signs for a Java worker (they cannot share a group),
 * so this difference is never seen on the wire between the two.
 *
 * Pure functions; no key is ever logged.
 */
#ifndef TB_REQUEST_SIGNATURE_H
#define TB_REQUEST_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>

#include "api/tb_api.h"
#include "store/kafka/tb_connect_session_key.h"

#define TB_SIGNATURE_HEADER "X-Connect-Authorization"
#define TB_SIGNATURE_ALGORITHM_HEADER "X-Connect-Request-Signature-Algorithm"
/* base64 of the longest HMAC (SHA-512), with its NUL */
#define TB_SIGNATURE_MAX 90

/* Writes the base64 HMAC of req under key with algorithm (a Mac name
 * tb_session_key_digest knows) into out. Returns 0, or -1 when the
 * algorithm is unknown or out of memory. */
int tb_request_signature_sign(const tb_connect_session_key_t *key, const char *algorithm,
                              const tb_api_request_t *req, char out[TB_SIGNATURE_MAX]);

/* Whether signature is req's under key and algorithm (compared in
 * constant time). A key of len 0 matches nothing. */
bool tb_request_signature_matches(const tb_connect_session_key_t *key,
                                  const char *algorithm, const tb_api_request_t *req,
                                  const char *signature);

#endif
