#include "connectors/runtime/cluster/tb_worker_group.h"

#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connectors/kafka/tb_kafka_conf.h"
#include "connectors/kafka/tb_kafka_reaper.h"
#include "connectors/runtime/cluster/tb_consumer_protocol.h"
#include "core/tb_log.h"

#define LOGGER "tributary.cluster"
/* The longest the thread waits in a poll before it looks at stopping. */
#define POLL_WAIT_MS 200
/* How often the members are described when no rebalance asks for it. */
#define DESCRIBE_EVERY_MS 1000
/* The bound on one DescribeGroups call. */
#define DESCRIBE_TIMEOUT_MS 2000
/* The coordination topic's one partition. */
#define LEADER_PARTITION 0

struct tb_worker_group {
    rd_kafka_t *rk;
    char *group_id;
    char *topic;
    char *worker_url;
    void (*changed)(void *opaque);
    void *opaque;
    pthread_t thread;
    atomic_bool stopping;
    /* Set by the rebalance callback (the group's thread), read by it. */
    bool describe_now;
    pthread_mutex_t lock;
    tb_worker_group_view_t view; /* guarded by lock */
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void tb_worker_group_view_clear(tb_worker_group_view_t *view)
{
    for (size_t i = 0; i < view->member_count; i++) {
        free(view->members[i]);
    }
    free(view->members);
    free(view->leader_url);
    memset(view, 0, sizeof(*view));
}

static bool view_equal(const tb_worker_group_view_t *a, const tb_worker_group_view_t *b)
{
    if (a->leader != b->leader || a->member_count != b->member_count ||
        (a->leader_url == NULL) != (b->leader_url == NULL) ||
        (a->leader_url != NULL && strcmp(a->leader_url, b->leader_url) != 0)) {
        return false;
    }
    for (size_t i = 0; i < a->member_count; i++) {
        if (strcmp(a->members[i], b->members[i]) != 0) {
            return false;
        }
    }
    return true;
}

static int compare_urls(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether this worker's own assignment holds the coordination partition. */
static bool holds_leadership(tb_worker_group_t *group)
{
    rd_kafka_topic_partition_list_t *assigned = NULL;
    if (rd_kafka_assignment(group->rk, &assigned) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return false;
    }
    bool held = rd_kafka_topic_partition_list_find(assigned, group->topic,
                                                   LEADER_PARTITION) != NULL;
    rd_kafka_topic_partition_list_destroy(assigned);
    return held;
}

/* The view DescribeGroups gives, into *out. Returns false (and leaves *out
 * empty) while the group is between generations or the call fails: the old
 * view stays until a stable one is seen. */
static bool describe(tb_worker_group_t *group, tb_worker_group_view_t *out)
{
    const struct rd_kafka_group_list *list = NULL;
    rd_kafka_resp_err_t err =
        rd_kafka_list_groups(group->rk, group->group_id, &list, DESCRIBE_TIMEOUT_MS);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        TB_LOG(TB_LOG_DEBUG, LOGGER, "describing group %s failed: %s", group->group_id,
               rd_kafka_err2str(err));
        return false;
    }
    bool stable = list->group_cnt == 1 && strcmp(list->groups[0].state, "Stable") == 0;
    const struct rd_kafka_group_info *info = stable ? &list->groups[0] : NULL;
    bool ok = stable && info->member_cnt > 0 &&
              (out->members = calloc((size_t)info->member_cnt, sizeof(char *))) != NULL;
    for (int i = 0; ok && i < info->member_cnt; i++) {
        const struct rd_kafka_group_member_info *m = &info->members[i];
        ok = (out->members[i] = strdup(m->client_id)) != NULL;
        out->member_count += ok;
        int held = tb_consumer_assignment_holds(m->member_assignment,
                                                (size_t)m->member_assignment_size,
                                                group->topic, LEADER_PARTITION);
        if (held < 0) {
            TB_LOG(TB_LOG_WARN, LOGGER,
                   "group %s: member %s reported an assignment that is not a consumer "
                   "protocol assignment; it is not taken as the leader",
                   group->group_id, m->client_id);
        }
        if (ok && held > 0 && out->leader_url == NULL) {
            ok = (out->leader_url = strdup(m->client_id)) != NULL;
        }
    }
    rd_kafka_group_list_destroy(list);
    if (!ok) {
        tb_worker_group_view_clear(out);
        return false;
    }
    qsort(out->members, out->member_count, sizeof(char *), compare_urls);
    out->leader = holds_leadership(group);
    return true;
}

/* Describes the group and publishes the view when it changed. */
static void refresh(tb_worker_group_t *group)
{
    tb_worker_group_view_t fresh = {0};
    if (!describe(group, &fresh)) {
        return;
    }
    pthread_mutex_lock(&group->lock);
    bool same = view_equal(&fresh, &group->view);
    if (!same) {
        fresh.changes = group->view.changes + 1;
        tb_worker_group_view_clear(&group->view);
        group->view = fresh;
    }
    pthread_mutex_unlock(&group->lock);
    if (same) {
        tb_worker_group_view_clear(&fresh);
        return;
    }
    TB_LOG(TB_LOG_INFO, LOGGER, "group %s: %zu worker(s), leader %s%s", group->group_id,
           fresh.member_count, fresh.leader_url != NULL ? fresh.leader_url : "unknown",
           fresh.leader ? " (this worker)" : "");
    if (group->changed != NULL) {
        group->changed(group->opaque);
    }
}

/* Cooperative rebalancing: take or give up only the partitions named. The
 * coordination partition is paused at once, as it is never read. */
static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *partitions, void *opaque)
{
    tb_worker_group_t *group = opaque;
    rd_kafka_error_t *error = NULL;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        error = rd_kafka_incremental_assign(rk, partitions);
        if (error == NULL) {
            rd_kafka_pause_partitions(rk, partitions);
        }
    } else {
        error = rd_kafka_incremental_unassign(rk, partitions);
    }
    if (error != NULL) {
        TB_LOG(TB_LOG_ERROR, LOGGER, "group %s: rebalance failed: %s", group->group_id,
               rd_kafka_error_string(error));
        rd_kafka_error_destroy(error);
    }
    group->describe_now = true;
}

static void *run(void *arg)
{
    tb_worker_group_t *group = arg;
    int64_t next_describe = 0;
    while (!atomic_load(&group->stopping)) {
        rd_kafka_message_t *message = rd_kafka_consumer_poll(group->rk, POLL_WAIT_MS);
        if (message != NULL) {
            if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
                TB_LOG(TB_LOG_WARN, LOGGER, "group %s: %s", group->group_id,
                       rd_kafka_message_errstr(message));
            }
            rd_kafka_message_destroy(message);
        }
        if (group->describe_now || now_ms() >= next_describe) {
            group->describe_now = false;
            refresh(group);
            next_describe = now_ms() + DESCRIBE_EVERY_MS;
        }
    }
    return NULL;
}

/* The group's consumer: the caller's properties, then the keys the group's
 * design fixes. */
static rd_kafka_t *consumer_new(tb_worker_group_t *group, const json_t *client_props,
                                char *errstr, size_t errstr_size)
{
    json_t *props = json_deep_copy(client_props);
    if (props == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    json_object_set_new(props, "group.id", json_string(group->group_id));
    json_object_set_new(props, "client.id", json_string(group->worker_url));
    json_object_set_new(props, "partition.assignment.strategy",
                        json_string("cooperative-sticky"));
    json_object_set_new(props, "enable.auto.commit", json_string("false"));
    json_object_set_new(props, "enable.auto.offset.store", json_string("false"));
    rd_kafka_conf_t *conf = tb_kafka_conf_new(props, errstr, errstr_size);
    json_decref(props);
    if (conf == NULL) {
        return NULL;
    }
    rd_kafka_conf_set_rebalance_cb(conf, on_rebalance);
    rd_kafka_conf_set_opaque(conf, group);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, errstr_size);
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_poll_set_consumer(rk);
    return rk;
}

static void group_free(tb_worker_group_t *group)
{
    if (group->rk != NULL) {
        rd_kafka_destroy(group->rk);
    }
    tb_worker_group_view_clear(&group->view);
    pthread_mutex_destroy(&group->lock);
    free(group->group_id);
    free(group->topic);
    free(group->worker_url);
    free(group);
}

static bool subscribe(tb_worker_group_t *group, char *errstr, size_t errstr_size)
{
    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(topics, group->topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t err = rd_kafka_subscribe(group->rk, topics);
    rd_kafka_topic_partition_list_destroy(topics);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        snprintf(errstr, errstr_size, "cannot subscribe to %s: %s", group->topic,
                 rd_kafka_err2str(err));
        return false;
    }
    return true;
}

tb_worker_group_t *tb_worker_group_join(const tb_worker_group_options_t *options,
                                        char *errstr, size_t errstr_size)
{
    tb_worker_group_t *group = calloc(1, sizeof(*group));
    if (group == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&group->lock, NULL);
    group->changed = options->changed;
    group->opaque = options->opaque;
    group->group_id = strdup(options->group_id);
    group->topic = strdup(options->topic);
    group->worker_url = strdup(options->worker_url);
    if (group->group_id == NULL || group->topic == NULL || group->worker_url == NULL) {
        snprintf(errstr, errstr_size, "out of memory");
        goto fail;
    }
    group->rk = consumer_new(group, options->client_props, errstr, errstr_size);
    if (group->rk == NULL || !subscribe(group, errstr, errstr_size)) {
        goto fail;
    }
    if (pthread_create(&group->thread, NULL, run, group) != 0) {
        snprintf(errstr, errstr_size, "cannot start the group's thread");
        goto fail;
    }
    return group;
fail:
    group_free(group);
    return NULL;
}

void tb_worker_group_leave(tb_worker_group_t *group)
{
    if (group == NULL) {
        return;
    }
    atomic_store(&group->stopping, true);
    pthread_join(group->thread, NULL);
    /* A LeaveGroup: the others rebalance now, not after a session timeout.
     * It waits, at most TB_WORKER_GROUP_LEAVE_MS, for what the consumer has
     * in flight: a JoinGroup of a rebalance that waits on a member that
     * does not answer (frozen) would hold it until that member's session
     * times out. */
    int64_t deadline_ms = now_ms() + TB_WORKER_GROUP_LEAVE_MS;
    rd_kafka_queue_t *queue = rd_kafka_queue_new(group->rk);
    rd_kafka_error_t *error = rd_kafka_consumer_close_queue(group->rk, queue);
    if (error != NULL) {
        TB_LOG(TB_LOG_WARN, LOGGER, "group %s: leaving failed: %s", group->group_id,
               rd_kafka_error_string(error));
        rd_kafka_error_destroy(error);
    }
    for (int64_t left = deadline_ms - now_ms();
         error == NULL && !rd_kafka_consumer_closed(group->rk) && left > 0;
         left = deadline_ms - now_ms()) {
        /* consuming serves the rebalance callbacks and returns records */
        rd_kafka_message_t *message = rd_kafka_consume_queue(
            queue, (int)(left < POLL_WAIT_MS ? left : POLL_WAIT_MS));
        if (message != NULL) {
            rd_kafka_message_destroy(message);
        }
    }
    bool closed = rd_kafka_consumer_closed(group->rk) != 0;
    if (error == NULL && !closed) {
        TB_LOG(TB_LOG_WARN, LOGGER,
               "group %s: leaving was cut short after %d ms (a rebalance waits on a "
               "member that does not answer): the others notice that this worker is "
               "gone when its session times out",
               group->group_id, TB_WORKER_GROUP_LEAVE_MS);
    }
    rd_kafka_queue_destroy(queue);
    if (!tb_kafka_destroy_within(
            group->rk, closed ? 0 : RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE, deadline_ms)) {
        TB_LOG(TB_LOG_WARN, LOGGER,
               "group %s: destroying the group's consumer was cut short: librdkafka "
               "still waits for a broker that does not answer, and finishes the destroy "
               "in the background",
               group->group_id);
    }
    group->rk = NULL;
    group_free(group);
}

static char *copy_or_null(const char *s, bool *ok)
{
    char *copy = s != NULL ? strdup(s) : NULL;
    *ok = *ok && (s == NULL || copy != NULL);
    return copy;
}

void tb_worker_group_view(tb_worker_group_t *group, tb_worker_group_view_t *out)
{
    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&group->lock);
    const tb_worker_group_view_t *v = &group->view;
    bool ok = true;
    out->leader = v->leader;
    out->changes = v->changes;
    out->leader_url = copy_or_null(v->leader_url, &ok);
    if (v->member_count > 0) {
        out->members = calloc(v->member_count, sizeof(char *));
        ok = ok && out->members != NULL;
    }
    for (size_t i = 0; ok && i < v->member_count; i++) {
        out->members[i] = copy_or_null(v->members[i], &ok);
        out->member_count += ok;
    }
    pthread_mutex_unlock(&group->lock);
    if (!ok) {
        uint64_t changes = out->changes;
        tb_worker_group_view_clear(out); /* no memory: an empty view, never a torn one */
        out->changes = changes;
    }
}
