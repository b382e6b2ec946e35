/*
 * The error vocabulary (core/tb_error.h): every code has a name for the
 * logs and the HTTP status the REST API answers with, so a code added
 * without its row fails here rather than answering status 0.
 */
#include "tb_test.h"

#include <string.h>

#include "core/tb_error.h"

static void test_every_code_has_a_name_and_a_status(void **state)
{
    (void)state;
    for (int err = TB_OK; err < TB_ERR__COUNT; err++) {
        assert_non_null(tb_err_name((tb_err_t)err));
        assert_true(strlen(tb_err_name((tb_err_t)err)) > 0);
        assert_in_range(tb_err_http_status((tb_err_t)err), 200, 599);
    }
}

static void test_codes_answer_their_http_status(void **state)
{
    (void)state;
    assert_int_equal(tb_err_http_status(TB_OK), 200);
    assert_int_equal(tb_err_http_status(TB_ERR_BAD_REQUEST), 400);
    assert_int_equal(tb_err_http_status(TB_ERR_CONFLICT), 409);
    assert_int_equal(tb_err_http_status(TB_ERR_UNAVAILABLE), 503);
    assert_int_equal(tb_err_http_status(TB_ERR_URI_TOO_LONG), 414);
    assert_string_equal(tb_err_name(TB_ERR_UNAVAILABLE), "unavailable");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_code_has_a_name_and_a_status),
        cmocka_unit_test(test_codes_answer_their_http_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
