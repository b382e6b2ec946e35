/*
 * tb_http_handlers.h - the pool that answers the REST requests that may be
 * slow, off the listener threads.
 *
 * A write (a forward to the leader, a claim of a connector, a stop of its
 * tasks, a config written to the Kafka store) may wait on other workers or
 * on the broker. server/http.c suspends its connection (libmicrohttpd's
 * suspend/resume) and submits it here: one of TB_HTTP_HANDLER_THREADS
 * threads runs it, and the listener threads go on answering /health,
 * /metrics and reads. Each call has a deadline (rest.request.timeout.ms,
 * from its submission): a call that has not answered by then answers 503
 * with Retry-After, whether it still waits for a thread (it then never
 * runs) or runs (it finishes in the background and its answer is dropped:
 * the write may still take effect). A call's waits on others (a claim of
 * a connector, a forward to the leader) give up TB_HTTP_GIVE_UP_MARGIN_MS
 * before its deadline (tb_deadline_get(), core/tb_time.h), so that its own
 * 503 says why, and its thread is free for the next call. Every 503 a call
 * answers carries Retry-After.
 */
#ifndef TB_HTTP_HANDLERS_H
#define TB_HTTP_HANDLERS_H

#include <stdbool.h>

#include "api/tb_api.h"

#define TB_HTTP_HANDLER_THREADS 4
/* How long before its deadline a call gives up waiting on others. */
#define TB_HTTP_GIVE_UP_MARGIN_MS 250
/* The Retry-After of a 503 (seconds). */
#define TB_HTTP_RETRY_AFTER_S 5

typedef struct tb_http_handlers tb_http_handlers_t;
typedef struct tb_http_call tb_http_call_t;

/* What a call runs on a handler thread: fills res. */
typedef void (*tb_http_call_fn)(void *arg, tb_api_response_t *res);
/* Told once the call's answer is ready (its own, or the 503): on a
 * handler thread, the deadline thread, or in tb_http_handlers_abort. */
typedef void (*tb_http_ready_fn)(void *arg);

/* Starts the threads. timeout_ms: each call's deadline. NULL on failure. */
tb_http_handlers_t *tb_http_handlers_create(long long timeout_ms);

/* A call of run(arg), not submitted yet; NULL when out of memory. ready(arg)
 * will be told exactly once, with the pool's lock held (it must not call
 * back into the pool: it resumes a connection). arg is the caller's, freed
 * with free_arg once the call is released and no thread runs it. what
 * ("METHOD path", copied) names it in answers and in the log. Its deadline
 * runs from here. */
tb_http_call_t *tb_http_call_new(tb_http_handlers_t *handlers, tb_http_call_fn run,
                                 tb_http_ready_fn ready, void (*free_arg)(void *),
                                 const char *what, void *arg);

/* Queues call for a handler thread; answered 503 at once (ready told from
 * here) when the pool is stopping. */
void tb_http_handlers_submit(tb_http_handlers_t *handlers, tb_http_call_t *call);

/* Moves the call's answer into res once ready was told; false before. */
bool tb_http_call_take(tb_http_handlers_t *handlers, tb_http_call_t *call,
                       tb_api_response_t *res);

/* The caller is done with call (its request is complete). */
void tb_http_call_release(tb_http_handlers_t *handlers, tb_http_call_t *call);

/* Answers every call not answered yet with 503 (the worker is stopping),
 * and refuses new ones. */
void tb_http_handlers_abort(tb_http_handlers_t *handlers);

/* Aborts, then waits for the calls that run (a handler's waits on others
 * end by its deadline; a stop of tasks by task.shutdown.graceful.timeout.ms)
 * and frees the pool. Called once
 * the listeners are stopped, when every call is released. NULL is a
 * no-op. */
void tb_http_handlers_destroy(tb_http_handlers_t *handlers);

#endif
