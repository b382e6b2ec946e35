/*
 * tb_forward.h - distributed mode's REST writes reach the leader.
 *
 * Every write under /connectors (create, PUT and PATCH config, pause,
 * resume, stop, connector restarts, delete, offsets changes) is answered by
 * the cluster's leader (tb_cluster.h), the one writer of connector configs,
 * and a task's restart by the worker that runs it: another worker sends it
 * on with libcurl, the method, path, query and body unchanged, with the
 * caller's Authorization header, so the receiver authenticates the caller
 * again (rest.auth): forwarding grants
 * nothing the caller's credentials do not. The leader's reply is the
 * reply. A forwarded request carries X-Tributary-Forwarded and is
 * answered where it arrives, so it is never forwarded twice.
 *
 * While no leader is known (a rebalance, a leader that just died), or a
 * task runs nowhere, the request waits for one, up to TB_FORWARD_WAIT_MS, and is not
 * refused with 409 as Connect's are; a leader that cannot be reached is waited for the
 * same way.
 *
 * Locking: none of its own; each call has its own curl handle.
 */
#ifndef TB_FORWARD_H
#define TB_FORWARD_H

#include <stdbool.h>

#include "api/tb_api.h"
#include "connectors/runtime/tb_cluster.h"

#define TB_FORWARD_WAIT_MS 60000

/* tb_api_context_t's forward, opaque the tb_cluster_t. */
bool tb_forward_request(void *cluster, const tb_api_request_t *req,
                        tb_api_response_t *res);

#endif
