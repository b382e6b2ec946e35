/*
 * tb_forward.h - distributed mode's REST writes reach the leader.
 *
 * Every write under /connectors (create, PUT and PATCH config, pause,
 * resume, stop, connector restarts, delete, offsets changes) is answered by
 * the cluster's leader (tb_cluster.h), the one writer of connector configs,
 * and a task's restart by the worker that runs it: another worker sends it
 * on with libcurl, the method, path, query and body unchanged, with the
 * caller's Authorization header, so the receiver authenticates the caller
 * again (rest.auth): forwarding grants nothing the caller's credentials do
 * not. The leader's reply is the reply. A forwarded request carries
 * X-Tributary-Forwarded and is answered where it arrives, so it is never
 * forwarded twice.
 *
 * A forwarded request is signed (tb_request_signature.h) with the
 * cluster's session key (tb_session_key.h) by inter.worker.signature.
 * algorithm. A request that carries X-Tributary-Forwarded or a signature
 * is answered only when the signature is that of the current session key,
 * or of the key before it in its grace, by one of inter.worker.
 * verification.algorithms; else it is refused with 403 and one log line
 * (method, path and reason; never a key or a signature), so that no
 * client can make a worker that does not lead write the config topic. A
 * sender refused so (the receiver may not have read a new key yet) tries
 * again, as it does while no leader is known.
 *
 * While no leader is known (a rebalance, a leader that just died), no
 * session key is known yet, or a task runs nowhere, the request waits, up
 * to the request's deadline (tb_deadline_get(), set on the handler thread
 * a little before rest.request.timeout.ms runs out), and is not refused
 * with 409 as Connect's are; a leader that cannot be reached or does not
 * answer (frozen) is waited for the same way, within the same deadline,
 * or until the worker stops (tb_forward_stop): a request still waiting
 * then gets 503. Both 503s carry Retry-After (TB_HTTP_RETRY_AFTER_S).
 *
 * Ownership: tb_forward_create copies its options but borrows the
 * cluster, which must outlive it. Locking: none of its own; each call has
 * its own curl handle.
 */
#ifndef TB_FORWARD_H
#define TB_FORWARD_H

#include <stdbool.h>

#include <jansson.h>

#include "api/tb_api.h"
#include "connectors/runtime/cluster/tb_cluster.h"

#define TB_FORWARDED_HEADER "X-Tributary-Forwarded"

typedef struct tb_forward tb_forward_t;

typedef struct {
    tb_cluster_t *cluster;
    const char *signature_algorithm;       /* inter.worker.signature.algorithm */
    const json_t *verification_algorithms; /* inter.worker.verification.algorithms */
} tb_forward_options_t;

/* NULL when out of memory. */
tb_forward_t *tb_forward_create(const tb_forward_options_t *options);

/* NULL is a no-op. */
void tb_forward_destroy(tb_forward_t *forward);

/* Ends every wait for a leader at once (the worker is stopping), so the
 * REST server's stop is not held until the requests' deadlines. Thread-safe;
 * NULL is a no-op. */
void tb_forward_stop(tb_forward_t *forward);

/* tb_api_context_t's forward, opaque the tb_forward_t. Call on a thread
 * whose deadline is set (tb_deadline_set; the handler pool's are): without
 * one, the forward is tried once and answered 503 at once. */
bool tb_forward_request(void *forward, const tb_api_request_t *req,
                        tb_api_response_t *res);

#endif
