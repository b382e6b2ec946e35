/* Routing of raw request paths (tb_http_router.h, tb_http_route_match): segments are
 * split before they are decoded, and a decoded segment is never cut short. */
#include "tb_test.h"

#include <string.h>

#include "server/tb_http_router.h"

static const tb_api_route_t *match(const char *path, const char *method,
                                   const char **params, const tb_api_route_t **path_route)
{
    static char buf[TB_HTTP_PATH_BUF_SIZE];
    return tb_http_route_match(path, method, buf, params, path_route);
}

static void test_escaped_slash_stays_in_its_segment(void **state)
{
    (void)state;
    const char *params[TB_API_MAX_PARAMS] = {0};
    const tb_api_route_t *path_route;
    const tb_api_route_t *route =
        match("/connectors/a%2Fb/config?x=1", "GET", params, &path_route);
    assert_non_null(route);
    assert_string_equal(route->template, "/connectors/{}/config");
    assert_string_equal(params[0], "a/b");
}

static void test_other_method_matches_the_path_only(void **state)
{
    (void)state;
    const char *params[TB_API_MAX_PARAMS] = {0};
    const tb_api_route_t *path_route;
    assert_null(match("/connectors/a/config", "POST", params, &path_route));
    assert_non_null(path_route);
    assert_null(match("/no/such/path", "GET", params, &path_route));
    assert_null(path_route);
}

/* fuzz_rest's check of captures (corpus/fuzz_rest/nul_segment.txt). */
static void test_escaped_nul_does_not_cut_a_name(void **state)
{
    (void)state;
    const char *params[TB_API_MAX_PARAMS] = {0};
    const tb_api_route_t *path_route;
    assert_non_null(match("/connectors/a%00b", "DELETE", params, &path_route));
    assert_string_equal(params[0], "a%00b");
    assert_non_null(match("/connectors/%00/config", "GET", params, &path_route));
    assert_string_equal(params[0], "%00");
    assert_non_null(match("/connectors/%41%2f", "GET", params, &path_route));
    assert_string_equal(params[0], "A/");
}

/* A path that does not fit the buffer is never routed cut: the DELETE of
 * .../offsets of a name near 4 095 bytes is not a DELETE of the connector. */
static void test_an_over_long_path_matches_nothing(void **state)
{
    (void)state;
    static char path[TB_HTTP_PATH_BUF_SIZE + 16];
    const char *params[TB_API_MAX_PARAMS] = {0};
    const tb_api_route_t *path_route;
    size_t prefix = strlen("/connectors/");
    memcpy(path, "/connectors/", prefix);
    memset(path + prefix, 'n', TB_HTTP_PATH_BUF_SIZE - 1 - prefix);
    strcpy(path + TB_HTTP_PATH_BUF_SIZE - 1, "/offsets");
    assert_null(match(path, "DELETE", params, &path_route));
    assert_null(path_route);
    path[TB_HTTP_PATH_BUF_SIZE - 1] = '\0';
    assert_non_null(match(path, "DELETE", params, &path_route));
}

static void test_too_many_segments_match_nothing(void **state)
{
    (void)state;
    const char *params[TB_API_MAX_PARAMS] = {0};
    const tb_api_route_t *path_route;
    assert_null(match("/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q", "GET", params, &path_route));
    assert_null(path_route);
}

/* Where a cluster answers a request is a column of the route table: every
 * write of a connector goes to the leader (a task's restart to the worker
 * running the task), and reads and the topic tracking's reset stay on the
 * worker asked. */
static void test_the_route_table_says_which_worker_answers(void **state)
{
    (void)state;
    const char *params[TB_API_MAX_PARAMS] = {0};
    const tb_api_route_t *path_route;
    size_t writes = 0;
    for (const tb_api_route_t *route = tb_api_routes(); route->method != NULL; route++) {
        bool read =
            strcmp(route->method, "GET") == 0 || strcmp(route->method, "HEAD") == 0;
        bool of_connector = strncmp(route->template, "/connectors", 11) == 0 &&
                            strstr(route->template, "/topics/reset") == NULL;
        unsigned elsewhere = route->flags & (TB_API_LEADER | TB_API_TASK_OWNER);
        if (read || !of_connector) {
            assert_int_equal(elsewhere, 0);
        } else {
            assert_int_not_equal(elsewhere, 0);
            writes++;
        }
    }
    assert_true(writes >= 11);
    const tb_api_route_t *restart =
        match("/connectors/c/tasks/0/restart", "POST", params, &path_route);
    assert_int_equal(restart->flags & TB_API_TASK_OWNER, TB_API_TASK_OWNER);
    assert_int_equal(match("/connectors/c/config", "PUT", params, &path_route)->flags &
                         TB_API_LEADER,
                     TB_API_LEADER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escaped_slash_stays_in_its_segment),
        cmocka_unit_test(test_other_method_matches_the_path_only),
        cmocka_unit_test(test_escaped_nul_does_not_cut_a_name),
        cmocka_unit_test(test_an_over_long_path_matches_nothing),
        cmocka_unit_test(test_too_many_segments_match_nothing),
        cmocka_unit_test(test_the_route_table_says_which_worker_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
