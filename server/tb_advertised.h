/*
 * tb_advertised.h - the REST URL a worker advertises to the others, as
 * Connect's rest.advertised.* keys make it: scheme://host:port, where the
 * others forward the requests this worker answers (the leader's writes, a
 * task's restart), and whose host:port is the worker's worker_id.
 *
 * - rest.advertised.listener (http or https) picks the first listener of
 *   that scheme; unset, the first listener. Its scheme is the URL's.
 * - rest.advertised.host.name, else that listener's host; a listener on
 *   every interface (0.0.0.0, ::, or no host) advertises the machine's
 *   host name (gethostname), as Connect does, since 0.0.0.0 names no
 *   machine for the others.
 * - rest.advertised.port, else that listener's port: the one it is bound
 *   to when it names port 0 (the kernel's pick).
 */
#ifndef TB_ADVERTISED_H
#define TB_ADVERTISED_H

#include <stddef.h>

#include "server/tb_http.h"
#include "server/tb_worker_config.h"

/* Writes the advertised URL of the worker's settings into url; server
 * (borrowed; NULL: not bound yet) gives a port 0 listener's bound port.
 * Returns 0, or -1 with errstr naming the key at fault. */
int tb_advertised_url(const tb_worker_settings_t *settings,
                      const tb_http_server_t *server, char *url, size_t url_size,
                      char *errstr, size_t errstr_size);

/* The worker_id of an advertised URL: the URL without its scheme. */
const char *tb_advertised_worker_id(const char *url);

#endif
