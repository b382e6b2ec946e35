#include "server/tb_http_handlers.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/tb_log.h"
#include "core/tb_time.h"

struct tb_http_call {
    struct tb_http_call *next; /* every live call, in submission order */
    tb_http_call_fn run;
    tb_http_ready_fn ready;
    void (*free_arg)(void *);
    void *arg;
    char *what; /* "METHOD path", for the log */
    int64_t deadline_ms;
    tb_api_response_t res; /* the answer, once answered */
    bool queued;           /* waits for a thread */
    bool running;
    bool answered; /* ready was told */
    bool released;
};

struct tb_http_handlers {
    pthread_mutex_t lock;
    pthread_cond_t work; /* a call queued, or stopping */
    pthread_cond_t tick; /* a new deadline, or stopping */
    pthread_t threads[TB_HTTP_HANDLER_THREADS];
    pthread_t deadlines;
    size_t started; /* threads started; the deadline thread too once all are */
    long long timeout_ms;
    /* guarded by lock */
    tb_http_call_t *calls;
    bool stopping;
};

/* Frees call once no one needs it. Called with the lock held. */
static void call_settle(tb_http_handlers_t *handlers, tb_http_call_t *call)
{
    if (!call->released || call->running || call->queued) {
        return;
    }
    for (tb_http_call_t **at = &handlers->calls; *at != NULL; at = &(*at)->next) {
        if (*at == call) {
            *at = call->next;
            break;
        }
    }
    json_decref(call->res.body);
    free(call->res.text);
    free(call->res.location);
    call->free_arg(call->arg);
    free(call->what);
    free(call);
}

/* Answers call with 503 unless answered; never runs it if it still
 * waits. Called with the lock held. */
static void call_refuse(tb_http_call_t *call, const char *why)
{
    if (call->answered) {
        return;
    }
    call->queued = false;
    tb_api_reply_error(&call->res, TB_ERR_UNAVAILABLE, "%s %s", call->what, why);
    call->res.retry_after_s = TB_HTTP_RETRY_AFTER_S;
    call->answered = true;
    call->ready(call->arg);
}

static void *handler_thread(void *opaque)
{
    tb_http_handlers_t *handlers = opaque;
    pthread_mutex_lock(&handlers->lock);
    for (;;) {
        tb_http_call_t *call = handlers->calls;
        while (call != NULL && !call->queued) {
            call = call->next;
        }
        if (call == NULL) {
            if (handlers->stopping) {
                break;
            }
            pthread_cond_wait(&handlers->work, &handlers->lock);
            continue;
        }
        call->queued = false;
        call->running = true;
        pthread_mutex_unlock(&handlers->lock);
        tb_api_response_t res = {0};
        tb_deadline_set(call->deadline_ms - TB_HTTP_GIVE_UP_MARGIN_MS);
        call->run(call->arg, &res);
        tb_deadline_set(0);
        if (res.status == 503 && res.retry_after_s == 0) {
            res.retry_after_s = TB_HTTP_RETRY_AFTER_S;
        }
        pthread_mutex_lock(&handlers->lock);
        call->running = false;
        if (!call->answered) {
            call->res = res;
            call->answered = true;
            call->ready(call->arg);
        } else {
            TB_LOG(TB_LOG_WARN, "tributary.rest",
                   "%s answered 503 at its deadline, then finished with %u: its answer "
                   "was dropped",
                   call->what, res.status);
            json_decref(res.body);
            free(res.text);
            free(res.location);
        }
        call_settle(handlers, call);
    }
    pthread_mutex_unlock(&handlers->lock);
    return NULL;
}

static void *deadline_thread(void *opaque)
{
    tb_http_handlers_t *handlers = opaque;
    char why[160];
    snprintf(why, sizeof(why),
             "did not finish within rest.request.timeout.ms (%lld ms); it may still take "
             "effect: check before trying again",
             handlers->timeout_ms);
    pthread_mutex_lock(&handlers->lock);
    while (!handlers->stopping) {
        int64_t now = tb_monotonic_ms();
        int64_t next = now + handlers->timeout_ms;
        for (tb_http_call_t *call = handlers->calls; call != NULL;) {
            tb_http_call_t *following = call->next;
            if (!call->answered && call->deadline_ms <= now) {
                call_refuse(call, why);
                call_settle(handlers, call);
            } else if (!call->answered && call->deadline_ms < next) {
                next = call->deadline_ms;
            }
            call = following;
        }
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        int64_t wait_ms = next - now;
        until.tv_sec += wait_ms / 1000;
        until.tv_nsec += (wait_ms % 1000) * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&handlers->tick, &handlers->lock, &until);
    }
    pthread_mutex_unlock(&handlers->lock);
    return NULL;
}

tb_http_handlers_t *tb_http_handlers_create(long long timeout_ms)
{
    tb_http_handlers_t *handlers = calloc(1, sizeof(*handlers));
    pthread_condattr_t attr;
    if (handlers == NULL) {
        return NULL;
    }
    handlers->timeout_ms = timeout_ms;
    pthread_mutex_init(&handlers->lock, NULL);
    pthread_cond_init(&handlers->work, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&handlers->tick, &attr);
    pthread_condattr_destroy(&attr);
    for (; handlers->started < TB_HTTP_HANDLER_THREADS; handlers->started++) {
        if (pthread_create(&handlers->threads[handlers->started], NULL, handler_thread,
                           handlers) != 0) {
            goto fail;
        }
    }
    if (pthread_create(&handlers->deadlines, NULL, deadline_thread, handlers) != 0) {
        goto fail;
    }
    handlers->started++;
    return handlers;

fail:
    tb_http_handlers_destroy(handlers);
    return NULL;
}

tb_http_call_t *tb_http_call_new(tb_http_handlers_t *handlers, tb_http_call_fn run,
                                 tb_http_ready_fn ready, void (*free_arg)(void *),
                                 const char *what, void *arg)
{
    tb_http_call_t *call = calloc(1, sizeof(*call));
    char *copy = strdup(what);
    if (call == NULL || copy == NULL) {
        free(call);
        free(copy);
        return NULL;
    }
    *call = (tb_http_call_t){.run = run,
                             .ready = ready,
                             .free_arg = free_arg,
                             .arg = arg,
                             .what = copy,
                             .deadline_ms = tb_monotonic_ms() + handlers->timeout_ms};
    return call;
}

void tb_http_handlers_submit(tb_http_handlers_t *handlers, tb_http_call_t *call)
{
    pthread_mutex_lock(&handlers->lock);
    tb_http_call_t **at = &handlers->calls;
    while (*at != NULL) {
        at = &(*at)->next;
    }
    *at = call;
    call->queued = true;
    if (handlers->stopping) {
        call_refuse(call, "came as the worker stopped");
    }
    pthread_cond_signal(&handlers->work);
    pthread_cond_signal(&handlers->tick);
    pthread_mutex_unlock(&handlers->lock);
}

bool tb_http_call_take(tb_http_handlers_t *handlers, tb_http_call_t *call,
                       tb_api_response_t *res)
{
    pthread_mutex_lock(&handlers->lock);
    bool answered = call->answered;
    if (answered) {
        *res = call->res;
        call->res = (tb_api_response_t){0};
    }
    pthread_mutex_unlock(&handlers->lock);
    return answered;
}

void tb_http_call_release(tb_http_handlers_t *handlers, tb_http_call_t *call)
{
    pthread_mutex_lock(&handlers->lock);
    call->released = true;
    call_settle(handlers, call);
    pthread_mutex_unlock(&handlers->lock);
}

void tb_http_handlers_abort(tb_http_handlers_t *handlers)
{
    pthread_mutex_lock(&handlers->lock);
    handlers->stopping = true;
    for (tb_http_call_t *call = handlers->calls; call != NULL;) {
        tb_http_call_t *following = call->next;
        call_refuse(call, "was not answered before the worker stopped; it may still "
                          "take effect: check before trying again");
        call_settle(handlers, call);
        call = following;
    }
    pthread_cond_broadcast(&handlers->work);
    pthread_cond_broadcast(&handlers->tick);
    pthread_mutex_unlock(&handlers->lock);
}

void tb_http_handlers_destroy(tb_http_handlers_t *handlers)
{
    if (handlers == NULL) {
        return;
    }
    tb_http_handlers_abort(handlers);
    size_t threads = handlers->started < TB_HTTP_HANDLER_THREADS
                         ? handlers->started
                         : TB_HTTP_HANDLER_THREADS;
    for (size_t i = 0; i < threads; i++) {
        pthread_join(handlers->threads[i], NULL);
    }
    if (handlers->started > TB_HTTP_HANDLER_THREADS) {
        pthread_join(handlers->deadlines, NULL);
    }
    /* calls whose requests never completed (their connections closed
     * with the daemon): nothing runs them any more */
    while (handlers->calls != NULL) {
        handlers->calls->released = true;
        call_settle(handlers, handlers->calls);
    }
    pthread_cond_destroy(&handlers->tick);
    pthread_cond_destroy(&handlers->work);
    pthread_mutex_destroy(&handlers->lock);
    free(handlers);
}
