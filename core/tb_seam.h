/*
 * tb_seam.h - the test seams: the faults and delays the integration tests
 * inject through environment variables. They exist only in builds with
 * TB_TEST_SEAMS (the sanitizer build the tests run, CMakeLists.txt); in any
 * other build every seam reads as unset. Every seam is listed here, with its
 * variable and what it does.
 */
#ifndef TB_SEAM_H
#define TB_SEAM_H

typedef enum {
    /* TB_STORE_CRASH_AFTER=<write>: the process kills itself (SIGKILL) right
     * after the SQLite store commits a write of that label (tb_store.h). */
    TB_SEAM_STORE_CRASH_AFTER,
    /* TB_FENCING_DELAY_MS=<ms>: each fencing of an exactly-once source's
     * task generation starts ms late, as on a slow broker (tb_fencing.h). */
    TB_SEAM_FENCING_DELAY_MS,
    /* TB_EOS_START_DELAY=<task>:<ms>: that task number's init_transactions
     * starts ms late, as on a slow worker. */
    TB_SEAM_EOS_START_DELAY,
    /* TB_FILE_SINK_HOLD=<suffix>: a FileStreamSink writing to F refuses
     * every put() as retriable, taking nothing, while the file F<suffix>
     * exists. */
    TB_SEAM_FILE_SINK_HOLD,
    /* TB_STATUS_WRITE_HOLD=<path>: while the file path exists, every status
     * write to the store fails, as on a broker that does not answer, and
     * appends "<connector> <task> <STATE>" (task -1: the connector) as a
     * line to the file. */
    TB_SEAM_STATUS_WRITE_HOLD,
    /* TB_STORE_WRITE_STALL=<path>: while the file path exists (up to 120 s),
     * every write of the Kafka store appends "<op> <connector>" as a line to
     * it and waits before it is sent, as on a broker slow to acknowledge
     * (store/kafka/tb_store_kafka.c). */
    TB_SEAM_STORE_WRITE_STALL,
    TB_SEAM_COUNT
} tb_seam_t;

/* The seam's value: its environment variable, or NULL when that is unset
 * or the build has no test seams. Borrowed from the environment. */
const char *tb_seam(tb_seam_t seam);

/* The seam's environment variable. */
const char *tb_seam_name(tb_seam_t seam);

#endif
