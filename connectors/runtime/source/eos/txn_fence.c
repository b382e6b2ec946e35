#include "connectors/runtime/source/eos/tb_txn_fence.h"

#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "connectors/kafka/tb_kafka_conf.h"
#include "core/tb_time.h"

struct tb_txn_fence {
    json_t *props;
    json_t *ids;
    size_t next;      /* the id being fenced */
    rd_kafka_t *rk;   /* its producer, once made */
    int64_t since_ms; /* its first attempt */
};

tb_txn_fence_t *tb_txn_fence_create(const json_t *producer_props, const json_t *ids)
{
    tb_txn_fence_t *fence = calloc(1, sizeof(*fence));
    fence->props = json_deep_copy(producer_props);
    fence->ids = json_deep_copy(ids);
    return fence;
}

/* The producer of the id being fenced; NULL with errstr. */
static rd_kafka_t *producer_of(tb_txn_fence_t *fence, const char *id, char *errstr,
                               size_t errstr_size)
{
    json_t *props = json_deep_copy(fence->props);
    json_object_set_new(props, "transactional.id", json_string(id));
    json_object_set_new(props, "enable.idempotence", json_string("true"));
    rd_kafka_conf_t *conf = tb_kafka_conf_new(props, errstr, errstr_size);
    json_decref(props);
    rd_kafka_t *rk =
        conf != NULL ? rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, errstr_size) : NULL;
    if (rk == NULL && conf != NULL) {
        rd_kafka_conf_destroy(conf);
    }
    return rk;
}

int tb_txn_fence_step(tb_txn_fence_t *fence, int step_ms, char *errstr,
                      size_t errstr_size)
{
    const char *id = json_string_value(json_array_get(fence->ids, fence->next));
    if (id == NULL) {
        return 1;
    }
    if (fence->rk == NULL) {
        fence->rk = producer_of(fence, id, errstr, errstr_size);
        fence->since_ms = tb_monotonic_ms();
        if (fence->rk == NULL) {
            return -1;
        }
    }
    rd_kafka_error_t *error = rd_kafka_init_transactions(fence->rk, step_ms);
    bool retry = error != NULL && rd_kafka_error_is_retriable(error) &&
                 tb_monotonic_ms() - fence->since_ms < TB_TXN_FENCE_TIMEOUT_MS;
    if (error != NULL && !retry) {
        snprintf(errstr, errstr_size, "fencing the transactional id %s failed: %s", id,
                 rd_kafka_error_string(error));
    }
    if (error != NULL) {
        rd_kafka_error_destroy(error);
        return retry ? 0 : -1;
    }
    rd_kafka_destroy(fence->rk);
    fence->rk = NULL;
    fence->next++;
    return fence->next >= json_array_size(fence->ids) ? 1 : 0;
}

void tb_txn_fence_destroy(tb_txn_fence_t *fence)
{
    if (fence == NULL) {
        return;
    }
    if (fence->rk != NULL) {
        rd_kafka_destroy(fence->rk);
    }
    json_decref(fence->props);
    json_decref(fence->ids);
    free(fence);
}
