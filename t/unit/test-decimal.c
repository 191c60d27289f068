/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for lib/decimal: the one strict decimal parser, at its edges. */
#include "decimal.h"
#include "unit.h"

#include <limits.h>

TEST(digits_only)
{
	long n = 42;

	CHECK(mad_decimal("", 0, 100, &n) == -1 && n == 42);
	CHECK(mad_decimal(NULL, 0, 100, &n) == -1);
	CHECK(mad_decimal("-1", 0, 100, &n) == -1);
	CHECK(mad_decimal("+1", 0, 100, &n) == -1);
	CHECK(mad_decimal(" 1", 0, 100, &n) == -1);
	CHECK(mad_decimal("1 ", 0, 100, &n) == -1);
	CHECK(mad_decimal("1\n", 0, 100, &n) == -1);
	CHECK(mad_decimal("0x1", 0, 100, &n) == -1);
	CHECK(mad_decimal("1e2", 0, 100, &n) == -1 && n == 42);
	CHECK(mad_decimal("7", 0, 100, &n) == 0 && n == 7);
	CHECK(mad_decimal("0", 0, 100, &n) == 0 && n == 0);
	/* leading zeros read as decimal; a caller wanting one spelling checks */
	CHECK(mad_decimal("08", 0, 100, &n) == 0 && n == 8);
	CHECK(mad_decimal("0000000000000000000000001", 0, 100, &n) == 0 && n == 1);
}

TEST(range_and_overflow)
{
	uint64_t u = 5;
	long n = 42;

	CHECK(mad_decimal("1", 1, 65536, &n) == 0 && n == 1);
	CHECK(mad_decimal("0", 1, 65536, &n) == -1 && n == 1);
	CHECK(mad_decimal("65536", 1, 65536, &n) == 0 && n == 65536);
	CHECK(mad_decimal("65537", 1, 65536, &n) == -1 && n == 65536);
	CHECK(mad_decimal("9223372036854775807", 0, LONG_MAX, &n) == 0 && n == LONG_MAX);
	CHECK(mad_decimal("9223372036854775808", 0, LONG_MAX, &n) == -1 && n == LONG_MAX);
	CHECK(mad_decimal("5", 6, 5, &n) == -1);
	CHECK(mad_decimal("5", -1, 5, &n) == -1);
	CHECK(mad_decimal_span("18446744073709551615", 20, 0, UINT64_MAX, &u) == 0 && u == UINT64_MAX);
	CHECK(mad_decimal_span("18446744073709551616", 20, 0, UINT64_MAX, &u) == -1 && u == UINT64_MAX);
	CHECK(mad_decimal_span("99999999999999999999999", 23, 0, UINT64_MAX, &u) == -1);
}

TEST(spans_inside_a_token)
{
	uint64_t u = 0;

	CHECK(mad_decimal_len("12_3") == 2 && mad_decimal_len("x1") == 0 && mad_decimal_len("") == 0);
	CHECK(mad_decimal_span("12_3", 2, 0, 100, &u) == 0 && u == 12);
	CHECK(mad_decimal_span("12_3", 0, 0, 100, &u) == -1);
	CHECK(mad_decimal_span("12_3", 3, 0, 100, &u) == -1);
	CHECK(mad_decimal_span("1\0"
			       "2",
			       3, 0, 1000, &u) == -1);
}

int main(void)
{
	RUN(digits_only);
	RUN(range_and_overflow);
	RUN(spans_inside_a_token);
	return unit_done();
}
