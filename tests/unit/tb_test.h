/* Includes cmocka the way it must be included, for every unit test. */
#ifndef TB_TEST_H
#define TB_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#endif
