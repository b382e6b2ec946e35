/*
 * Time zones (core/tb_zone.h) against the system's tz database: the
 * offsets of regions on both sides of their daylight saving changes, in
 * the years the TZif transitions cover and in those only the footer's rule
 * covers (after 2037), south of the equator too; names that are no zone.
 * The expected offsets are Python's zoneinfo's for the same instants.
 */
#include "tb_test.h"

#include <stdlib.h>
#include <string.h>

#include "core/tb_zone.h"

static void test_regions_follow_daylight_saving_time(void **state)
{
    (void)state;
    static const struct {
        const char *zone;
        int64_t at; /* UTC seconds */
        int32_t offset;
    } cases[] = {
        {"Europe/Paris", 1705320000, 3600},       /* 2024-01-15 12:00 */
        {"Europe/Paris", 1711846799, 3600},       /* 2024-03-31 00:59:59 */
        {"Europe/Paris", 1711846800, 7200},       /* 01:00: summer time */
        {"Europe/Paris", 1729990799, 7200},       /* 2024-10-27 00:59:59 */
        {"Europe/Paris", 1729990800, 3600},       /* 01:00: winter time */
        {"Europe/Paris", -2208988800, 561},       /* 1900: Paris mean time */
        {"Europe/Paris", 4109878799, 3600},       /* 2100-03-28 00:59:59, the rule */
        {"Europe/Paris", 4109878800, 7200},       /* 01:00 */
        {"America/New_York", 1710053999, -18000}, /* 2024-03-10 06:59:59 */
        {"America/New_York", 1710054000, -14400},
        {"America/New_York", 2215061999, -18000}, /* 2040-03-11 06:59:59 */
        {"America/New_York", 2215062000, -14400},
        {"Australia/Sydney", 4102444800, 39600}, /* 2100-01-01: summer */
        {"Australia/Sydney", 4110451199, 39600}, /* 2100-04-03 15:59:59 */
        {"Australia/Sydney", 4110451200, 36000},
        {"Australia/Sydney", 4118083200, 36000}, /* 2100-07-01: winter */
        {"Asia/Tokyo", 4118083200, 32400},       /* no DST: a footer of JST-9 */
    };
    char errstr[512] = "";
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tb_zone_t *zone = tb_zone_load(cases[i].zone, errstr, sizeof(errstr));
        assert_non_null(zone);
        if (tb_zone_offset(zone, cases[i].at) != cases[i].offset) {
            fail_msg("%s at %lld: %d, not %d", cases[i].zone, (long long)cases[i].at,
                     tb_zone_offset(zone, cases[i].at), cases[i].offset);
        }
        tb_zone_free(zone);
    }
}

static void test_fixed_zones_never_change(void **state)
{
    (void)state;
    tb_zone_t *zone = tb_zone_fixed(-330 * 60);
    assert_int_equal(tb_zone_offset(zone, 0), -19800);
    assert_int_equal(tb_zone_offset(zone, 4118083200), -19800);
    tb_zone_free(zone);
}

static void test_names_that_are_no_zone_are_refused(void **state)
{
    (void)state;
    static const char *const names[] = {"Mars/Olympus", "../../etc/passwd", "/etc/passwd",
                                        "America",      "Europe/Paris;x",   ""};
    char errstr[512];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        errstr[0] = '\0';
        assert_null(tb_zone_load(names[i], errstr, sizeof(errstr)));
        assert_true(errstr[0] != '\0');
    }
    assert_null(tb_zone_load("Mars/Olympus", errstr, sizeof(errstr)));
    assert_non_null(strstr(errstr, "no time zone of the tz database"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regions_follow_daylight_saving_time),
        cmocka_unit_test(test_fixed_zones_never_change),
        cmocka_unit_test(test_names_that_are_no_zone_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
