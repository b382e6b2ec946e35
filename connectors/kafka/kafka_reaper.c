/* Destroys a librdkafka client within a bound (tb_kafka_reaper.h). */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "connectors/kafka/tb_kafka_reaper.h"
#include "core/tb_time.h"

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t finished_cond;
    bool finished;
    int holders; /* the waiter and the destroying thread */
    rd_kafka_t *rk;
    int flags;
} reap_t;

/* Drops a holder's reference; the last one frees the reap. */
static void release(reap_t *reap)
{
    bool last = --reap->holders == 0;
    pthread_mutex_unlock(&reap->lock);
    if (last) {
        pthread_cond_destroy(&reap->finished_cond);
        pthread_mutex_destroy(&reap->lock);
        free(reap);
    }
}

static void *destroy_main(void *arg)
{
    reap_t *reap = arg;
    rd_kafka_destroy_flags(reap->rk, reap->flags);
    pthread_mutex_lock(&reap->lock);
    reap->finished = true;
    pthread_cond_signal(&reap->finished_cond);
    release(reap);
    return NULL;
}

bool tb_kafka_destroy_within(rd_kafka_t *rk, int flags, int64_t deadline_ms)
{
    reap_t *reap = calloc(1, sizeof(*reap));
    pthread_attr_t attr;
    pthread_t thread;
    bool started = false;
    if (reap != NULL) {
        *reap = (reap_t){.holders = 2, .rk = rk, .flags = flags};
        pthread_mutex_init(&reap->lock, NULL);
        pthread_cond_init(&reap->finished_cond, NULL);
        started = pthread_attr_init(&attr) == 0;
        started = started &&
                  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
                  pthread_create(&thread, &attr, destroy_main, reap) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!started) {
        /* no thread to hand it to: destroyed here, unbounded */
        if (reap != NULL) {
            pthread_cond_destroy(&reap->finished_cond);
            pthread_mutex_destroy(&reap->lock);
            free(reap);
        }
        rd_kafka_destroy_flags(rk, flags);
        return true;
    }
    int64_t least = tb_monotonic_ms() + TB_KAFKA_DESTROY_MIN_MS;
    int64_t until = deadline_ms > least ? deadline_ms : least;
    struct timespec at = {.tv_sec = (time_t)(until / 1000),
                          .tv_nsec = (long)(until % 1000) * 1000000L};
    pthread_mutex_lock(&reap->lock);
    while (!reap->finished && pthread_cond_clockwait(&reap->finished_cond, &reap->lock,
                                                     CLOCK_MONOTONIC, &at) == 0) {
    }
    bool finished = reap->finished;
    release(reap);
    return finished;
}
