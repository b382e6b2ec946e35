/*
 * Base64 decoding (core/tb_base64.h): the strict reading refuses what
 * Java's basic decoder refuses (no padding, the URL-safe alphabet, padding
 * inside), the lenient one takes both alphabets with or without padding;
 * both refuse bytes that do not fit.
 */
#include "tb_test.h"

#include <string.h>

#include "core/tb_base64.h"

static long decode(const char *text, tb_base64_mode_t mode, uint8_t *out, size_t out_size)
{
    return tb_base64_decode(text, strlen(text), mode, out, out_size);
}

static void test_both_readings_decode_padded_standard_text(void **state)
{
    (void)state;
    static const struct {
        const char *text, *bytes;
    } cases[] = {{"", ""},
                 {"Zg==", "f"},
                 {"Zm8=", "fo"},
                 {"Zm9v", "foo"},
                 {"Zm9vYg==", "foob"},
                 {"Zm9vYmE=", "fooba"},
                 {"+/8=", "\xfb\xff"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (int mode = TB_BASE64_STRICT; mode <= TB_BASE64_LENIENT; mode++) {
            uint8_t out[16];
            long n = decode(cases[i].text, (tb_base64_mode_t)mode, out, sizeof(out));
            assert_int_equal(n, strlen(cases[i].bytes));
            assert_memory_equal(out, cases[i].bytes, (size_t)n);
        }
    }
}

static void test_the_strict_reading_refuses_what_java_refuses(void **state)
{
    (void)state;
    static const char *const refused[] = {
        "Zg",   "Zg=",       "Zm8",      "-_8=",      "Zg=a",
        "Z===", "Zm9v Yg==", "Zg==Zg==", "Zm9vYg===", "*A=="};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        uint8_t out[16];
        assert_int_equal(decode(refused[i], TB_BASE64_STRICT, out, sizeof(out)), -1);
    }
}

static void test_the_lenient_reading_takes_url_safe_text_without_padding(void **state)
{
    (void)state;
    uint8_t out[16];
    assert_int_equal(decode("-_8", TB_BASE64_LENIENT, out, sizeof(out)), 2);
    assert_memory_equal(out, "\xfb\xff", 2);
    assert_int_equal(decode("Zm9vYg", TB_BASE64_LENIENT, out, sizeof(out)), 4);
    assert_memory_equal(out, "foob", 4);
    assert_int_equal(decode("Z", TB_BASE64_LENIENT, out, sizeof(out)), -1);
    assert_int_equal(decode("Zm9v*", TB_BASE64_LENIENT, out, sizeof(out)), -1);
}

static void test_bytes_that_do_not_fit_are_refused(void **state)
{
    (void)state;
    uint8_t out[4];
    assert_int_equal(decode("Zm9vYg==", TB_BASE64_STRICT, out, 3), -1);
    assert_int_equal(decode("Zm9vYg==", TB_BASE64_STRICT, out, 4), 4);
    assert_int_equal(decode("Zm9vYmE", TB_BASE64_LENIENT, out, 4), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_both_readings_decode_padded_standard_text),
        cmocka_unit_test(test_the_strict_reading_refuses_what_java_refuses),
        cmocka_unit_test(test_the_lenient_reading_takes_url_safe_text_without_padding),
        cmocka_unit_test(test_bytes_that_do_not_fit_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
