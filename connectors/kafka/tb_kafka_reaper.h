/*
 * tb_kafka_reaper.h - destroys a librdkafka client within a bound.
 *
 * librdkafka's rd_kafka_destroy joins its own threads, and those wait for
 * the client's outstanding requests: to a broker that stopped answering,
 * until they time out (seen to take longer than 20 s with 2.0.2; 2.8.0
 * still waits past the bound, test_sink_engine's broker-gone stop), however
 * the client was closed before. tb_kafka_destroy_within runs the destroy on a
 * detached thread of its own and waits for it at most until a deadline; a
 * destroy that takes longer finishes in the background, and the caller says
 * so once.
 *
 * Ownership: the client passes to the call; the caller never touches it
 * again. Threads: any thread; the destroying thread touches only the client
 * and the reaper's own state, freed by whichever of the two ends last.
 */
#ifndef TB_KAFKA_REAPER_H
#define TB_KAFKA_REAPER_H

#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stdint.h>

/* The least a destroy is waited for, even past the deadline: what a client
 * whose broker answers needs. */
#define TB_KAFKA_DESTROY_MIN_MS 100

/* Destroys rk with rd_kafka_destroy_flags(rk, flags), waiting until
 * deadline_ms (monotonic, tb_time.h), and at least TB_KAFKA_DESTROY_MIN_MS.
 * Returns whether the destroy finished by then; when it did not, it goes on
 * in the background. */
bool tb_kafka_destroy_within(rd_kafka_t *rk, int flags, int64_t deadline_ms);

#endif
