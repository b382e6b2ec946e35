/* Strimzi's names for Connect's metrics (connect_metrics.c): the status series
 * that follow a task's status, and a connector's task counts on this worker;
 * the names Confluent's exporter rules give the strings; and the active
 * record counts with their windows, under Connect's names and Strimzi's. */
#include "tb_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/runtime/metrics/tb_connect_metrics.h"
#include "connectors/runtime/metrics/tb_task_metrics.h"
#include "core/tb_metrics.h"

static int reset(void **state)
{
    (void)state;
    tb_metrics_reset();
    return 0;
}

/* Whether the page holds line (a whole sample line). */
static bool has_line(const char *line)
{
    char *page = tb_metrics_render_series();
    size_t len = strlen(line);
    bool found = false;
    for (const char *at = strstr(page, line); at != NULL && !found;
         at = strstr(at + 1, line)) {
        found = (at == page || at[-1] == '\n') && at[len] == '\n';
    }
    free(page);
    return found;
}

/* Whether the page mentions text anywhere. */
static bool mentions(const char *text)
{
    char *page = tb_metrics_render_series();
    bool found = strstr(page, text) != NULL;
    free(page);
    return found;
}

static void test_task_counts_follow_the_tasks_states(void **state)
{
    (void)state;
    tb_state_metrics_t connector, task0, task1;
    tb_state_metrics_take(&connector, "c", -1);
    tb_state_metrics_take(&task0, "c", 0);
    tb_state_metrics_take(&task1, "c", 1);
    assert_true(
        has_line("kafka_connect_worker_connector_total_task_count{connector=\"c\"} 2"));
    assert_true(has_line(
        "kafka_connect_worker_connector_unassigned_task_count{connector=\"c\"} 2"));
    tb_state_metrics_set(&task0, TB_STATE_RUNNING, 0);
    tb_state_metrics_set(&task1, TB_STATE_RUNNING, 0);
    tb_state_metrics_set(&task1, TB_STATE_FAILED, 0);
    assert_true(
        has_line("kafka_connect_worker_connector_running_task_count{connector=\"c\"} 1"));
    assert_true(
        has_line("kafka_connect_worker_connector_failed_task_count{connector=\"c\"} 1"));
    assert_true(has_line(
        "kafka_connect_worker_connector_unassigned_task_count{connector=\"c\"} 0"));
    assert_true(has_line(
        "kafka_connect_worker_connector_destroyed_task_count{connector=\"c\"} 0"));
    /* Connect's JMX names serve the same counts */
    assert_true(
        has_line("kafka_connect_connect_worker_metrics_connector_failed_task_count"
                 "{connector=\"c\"} 1"));
    /* one status series per task, labelled with the current status */
    assert_true(has_line("kafka_connect_connector_task_status{connector=\"c\",task=\"1\","
                         "status=\"failed\"} 1"));
    assert_false(
        mentions("kafka_connect_connector_task_status{connector=\"c\",task=\"1\","
                 "status=\"running\"}"));
    assert_true(
        has_line("kafka_connect_connector_task_metrics_status_info{connector=\"c\","
                 "task=\"1\",status=\"failed\"} 1"));
    assert_false(
        mentions("kafka_connect_connector_task_metrics_status_info{connector=\"c\","
                 "task=\"1\",status=\"running\"}"));
    /* the time shares: task 1 ran a while, and is failed now */
    assert_true(mentions("kafka_connect_connector_task_metrics_running_ratio{connector="
                         "\"c\",task=\"1\"} "));
    assert_true(mentions("kafka_connect_connector_task_pause_ratio{connector=\"c\","
                         "task=\"1\"} 0\n"));
    assert_true(has_line("kafka_connect_worker_task_count 2"));
    assert_true(has_line("kafka_connect_coordinator_assigned_tasks 2"));
    assert_true(has_line("kafka_connect_connect_coordinator_metrics_assigned_tasks 2"));

    tb_state_metrics_release(&task1);
    assert_true(
        has_line("kafka_connect_worker_connector_total_task_count{connector=\"c\"} 1"));
    assert_true(
        has_line("kafka_connect_worker_connector_failed_task_count{connector=\"c\"} 0"));
    tb_state_metrics_release(&task0);
    tb_state_metrics_release(&connector);
    assert_false(mentions("connector=\"c\""));
}

static void test_connector_status_and_info(void **state)
{
    (void)state;
    tb_state_metrics_t connector;
    tb_state_metrics_take(&connector, "c", -1);
    assert_true(has_line(
        "kafka_connect_connector_status{connector=\"c\",status=\"unassigned\"} 1"));
    tb_state_metrics_set(&connector, TB_STATE_PAUSED, 0);
    assert_true(
        has_line("kafka_connect_connector_status{connector=\"c\",status=\"paused\"} 1"));
    assert_false(mentions(
        "kafka_connect_connector_status{connector=\"c\",status=\"unassigned\"}"));
    tb_connect_info_set(&connector.connect, "org.example.OldConnector", "sink", "1.0");
    tb_connect_info_set(&connector.connect, "org.example.NewConnector", "source", "2.0");
    assert_true(has_line("kafka_connect_connector_connector_class{connector=\"c\","
                         "connector_class=\"org.example.NewConnector\"} 1"));
    assert_true(has_line("kafka_connect_connector_connector_type{connector=\"c\","
                         "connector_type=\"source\"} 1"));
    assert_true(has_line("kafka_connect_connector_connector_version{connector=\"c\","
                         "connector_version=\"2.0\"} 1"));
    /* Confluent's: one family, one series per string */
    assert_true(
        has_line("kafka_connect_connector_metrics{connector=\"c\",status=\"paused\","
                 "connector_class=\"\",connector_type=\"\",connector_version=\"\"} 1"));
    assert_true(
        has_line("kafka_connect_connector_metrics{connector=\"c\",status=\"\","
                 "connector_class=\"org.example.NewConnector\",connector_type=\"\","
                 "connector_version=\"\"} 1"));
    assert_true(has_line("kafka_connect_connector_metrics{connector=\"c\",status=\"\","
                         "connector_class=\"\",connector_type=\"source\","
                         "connector_version=\"\"} 1"));
    assert_true(has_line("kafka_connect_connector_metrics{connector=\"c\",status=\"\","
                         "connector_class=\"\",connector_type=\"\","
                         "connector_version=\"2.0\"} 1"));
    /* Strimzi's metrics reporter's */
    assert_true(has_line("kafka_connect_connector_metrics_status_info{connector=\"c\","
                         "status=\"paused\"} 1"));
    assert_true(has_line("kafka_connect_connector_metrics_connector_class_info{connector="
                         "\"c\",connector_class=\"org.example.NewConnector\"} 1"));
    assert_true(has_line("kafka_connect_connector_metrics_connector_type_info{connector="
                         "\"c\",connector_type=\"source\"} 1"));
    assert_true(
        has_line("kafka_connect_connector_metrics_connector_version_info{connector="
                 "\"c\",connector_version=\"2.0\"} 1"));
    tb_state_metrics_set(&connector, TB_STATE_RUNNING, 0);
    assert_true(
        has_line("kafka_connect_connector_metrics{connector=\"c\",status=\"running\","
                 "connector_class=\"\",connector_type=\"\",connector_version=\"\"} 1"));
    assert_false(
        mentions("kafka_connect_connector_metrics{connector=\"c\",status=\"paused\""));
    assert_false(mentions("OldConnector"));
    assert_true(has_line("kafka_connect_worker_connector_count 1"));
    assert_true(has_line("kafka_connect_coordinator_assigned_connectors 1"));
    assert_true(
        has_line("kafka_connect_connect_coordinator_metrics_assigned_connectors 1"));
    tb_state_metrics_release(&connector);
    assert_false(mentions("connector=\"c\""));
}

/* KIP-891's task tags and chain groups: set, replaced, and gone with the
 * task's series. */
static void test_task_tags_and_chain_info(void **state)
{
    (void)state;
    tb_task_metrics_t task;
    tb_task_metrics_take(&task, "c", 0, 1);
    const char *old[TB_CONNECT_TASK_INFO_COUNT] = {"A", "1", "sink", "A", "1", "K",
                                                   "3", "V", "3",    "H", "3"};
    const char *now[TB_CONNECT_TASK_INFO_COUNT] = {"B", "2", "sink", "B", "2", "K",
                                                   "3", "V", "3",    "H", "3"};
    tb_connect_task_info_set(&task.connect, "c", "0", old);
    tb_connect_task_info_set(&task.connect, "c", "0", now);
    assert_true(has_line("kafka_connect_connector_task_connector_class{connector=\"c\","
                         "task=\"0\",connector_class=\"B\"} 1"));
    assert_true(has_line("kafka_connect_connector_task_header_converter_version{"
                         "connector=\"c\",task=\"0\",header_converter_version=\"3\"} 1"));
    assert_false(mentions("connector_class=\"A\""));
    assert_int_equal(tb_connect_chain_info_add(&task.connect, "c", "0", "transform", "r",
                                               "org.example.R", "3"),
                     0);
    assert_int_equal(tb_connect_chain_info_add(&task.connect, "c", "0", "predicate", "p",
                                               "org.example.P", "3"),
                     0);
    assert_true(has_line("kafka_connect_connector_transform_transform_class{connector="
                         "\"c\",task=\"0\",transform=\"r\",transform_class="
                         "\"org.example.R\"} 1"));
    assert_true(has_line("kafka_connect_connector_predicate_predicate_version{connector="
                         "\"c\",task=\"0\",predicate=\"p\",predicate_version=\"3\"} 1"));
    tb_task_metrics_release(&task);
    assert_false(mentions("connector=\"c\""));
}

static int64_t fake_now_ms;

static int64_t fake_clock(void)
{
    return fake_now_ms;
}

static int reset_with_fake_clock(void **state)
{
    fake_now_ms = 0;
    tb_metrics_clock_set(fake_clock);
    return reset(state);
}

static int restore_clock(void **state)
{
    (void)state;
    tb_metrics_clock_set(NULL);
    return 0;
}

/* Whether the page holds name{connector="c",task="0"} value. */
static bool task_value(const char *name, const char *value)
{
    char line[256];
    snprintf(line, sizeof(line), "%s{connector=\"c\",task=\"0\"} %s", name, value);
    return has_line(line);
}

/* Connect's sink- and source-record-active-count and their -max and -avg,
 * under Connect's names and Strimzi's: the count, and the counts it
 * changed to in the last minute (two samples of 30 s). */
static void test_active_record_counts(void **state)
{
    (void)state;
    tb_task_metrics_t sink;
    tb_source_metrics_t source;
    tb_task_metrics_take(&sink, "c", 0, 1);
    tb_source_metrics_take(&source, "s", 0);
    assert_true(
        task_value("kafka_connect_sink_task_metrics_sink_record_active_count", "0"));
    assert_true(task_value("kafka_connect_sink_task_metrics_sink_record_active_count_max",
                           "NaN"));
    tb_active_records_set(&sink.active, 5);
    tb_active_records_set(&sink.active, 5); /* no change: not a new sample */
    tb_active_records_set(&sink.active, 2);
    tb_active_records_set(&source.in_flight, 3);
    tb_active_records_set(&source.in_flight, 1);
    assert_true(
        task_value("kafka_connect_sink_task_metrics_sink_record_active_count", "2"));
    assert_true(task_value("kafka_connect_sink_task_sink_record_active_count", "2"));
    assert_true(
        task_value("kafka_connect_sink_task_metrics_sink_record_active_count_max", "5"));
    assert_true(task_value("kafka_connect_sink_task_sink_record_active_count_max", "5"));
    assert_true(task_value("kafka_connect_sink_task_metrics_sink_record_active_count_avg",
                           "3.5"));
    assert_true(
        task_value("kafka_connect_sink_task_sink_record_active_count_avg", "3.5"));
    assert_true(task_value("tributary_sink_active_records", "2"));
    assert_true(has_line("kafka_connect_source_task_metrics_source_record_active_count{"
                         "connector=\"s\",task=\"0\"} 1"));
    assert_true(
        has_line("kafka_connect_source_task_metrics_source_record_active_count_max{"
                 "connector=\"s\",task=\"0\"} 3"));
    assert_true(has_line("kafka_connect_source_task_source_record_active_count_avg{"
                         "connector=\"s\",task=\"0\"} 2"));
    fake_now_ms = 35000; /* the previous sample still counts */
    tb_active_records_set(&sink.active, 1);
    assert_true(
        task_value("kafka_connect_sink_task_metrics_sink_record_active_count_max", "5"));
    fake_now_ms = 65000; /* the first sample is out of the window */
    assert_true(
        task_value("kafka_connect_sink_task_metrics_sink_record_active_count_max", "1"));
    fake_now_ms = 130000; /* nothing changed in the last minute */
    assert_true(task_value("kafka_connect_sink_task_metrics_sink_record_active_count_max",
                           "NaN"));
    assert_true(task_value("kafka_connect_sink_task_metrics_sink_record_active_count_avg",
                           "NaN"));
    assert_true(
        task_value("kafka_connect_sink_task_metrics_sink_record_active_count", "1"));
    tb_task_metrics_release(&sink);
    tb_source_metrics_release(&source);
    assert_false(mentions("connector=\"c\""));
    assert_false(mentions("connector=\"s\""));
}

/* app-info: Strimzi's three and Confluent's one family, all released. */
static void test_app_info(void **state)
{
    (void)state;
    tb_series_t *info[TB_CONNECT_APP_INFO_COUNT] = {NULL};
    tb_connect_app_info_take(info, "h:1", "4.3.1", "abc", 1700000000.5);
    assert_true(has_line(
        "kafka_connect_app_info_version{client_id=\"h:1\",version=\"4.3.1\"} 1"));
    assert_true(has_line("kafka_connect_app{client_id=\"h:1\",version=\"4.3.1\","
                         "commit_id=\"\",start_time_ms=\"\"} 1"));
    assert_true(has_line("kafka_connect_app{client_id=\"h:1\",version=\"\","
                         "commit_id=\"abc\",start_time_ms=\"\"} 1"));
    assert_true(has_line("kafka_connect_app{client_id=\"h:1\",version=\"\","
                         "commit_id=\"\",start_time_ms=\"1700000000500\"} 1"));
    for (size_t i = 0; i < TB_CONNECT_APP_INFO_COUNT; i++) {
        tb_series_release(info[i]);
    }
    assert_false(mentions("h:1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_task_counts_follow_the_tasks_states, reset),
        cmocka_unit_test_setup(test_connector_status_and_info, reset),
        cmocka_unit_test_setup(test_task_tags_and_chain_info, reset),
        cmocka_unit_test_setup(test_app_info, reset),
        cmocka_unit_test_setup_teardown(test_active_record_counts, reset_with_fake_clock,
                                        restore_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
