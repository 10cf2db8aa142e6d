/* rampartctl top: the top-sample answer parsed, and the screen's rates
 * between two samples (the interfaces' RX missed among them). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctl_top.h"

static const char first[] = "time_ns 1000000000\n"
			    "flows 10 1000\n"
			    "iface 100 6400 90 5760 10 5 lan0\n"
			    "iface 50 3200 50 3200 0 0 wan0\n"
			    "worker 150 140 10 0\n"
			    "rule 20 1280 ssh-in\n"
			    "drop 10 0 policy\n";
/* two seconds later */
static const char second[] = "time_ns 3000000000\n"
			     "flows 12 1000\n"
			     "iface 300 2006400 250 16000 50 2005 lan0\n"
			     "iface 50 3200 50 3200 0 0 wan0\n"
			     "worker 350 300 50 0\n"
			     "rule 220 14080 ssh-in\n"
			     "drop 50 0 policy\n";

/* The screen's row for name in the table under header, as numbers. */
static int row(const char *screen, const char *header, const char *name, double *v, int nv)
{
	const char *at = strstr(screen, header);
	char want[80];

	if (!at)
		return -1;
	snprintf(want, sizeof(want), "\n%s ", name);
	at = strstr(at, want);
	if (!at)
		return -1;
	at += strlen(want);
	for (int i = 0; i < nv; i++) {
		char *end;

		v[i] = strtod(at, &end);
		if (end == at)
			return -1;
		at = end;
	}
	return 0;
}

/* (out of line: GCC 12 takes the memstream's buffer for a local that
 * dies here and warns about the callers' pointers into it) */
__attribute__((noinline)) static char *render(const struct top_sample *a,
					      const struct top_sample *b)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	top_render(f, a, b, 5);
	fclose(f);
	return text;
}

static void test_rates(void **state)
{
	struct top_sample a, b;
	double v[6];
	char *screen;

	(void)state;
	assert_int_equal(top_parse(first, &a), 0);
	assert_int_equal(top_parse(second, &b), 0);
	assert_int_equal(b.niface, 2);
	assert_int_equal(b.iface[0].v[5], 2005);
	screen = render(&a, &b);
	assert_non_null(strstr(screen, "rates over 2.0 s"));
	assert_non_null(strstr(screen, "MISSED pps"));
	/* lan0 in 2 s: 200 packets (2,000,000 bytes) in, 160 out, 40 dropped,
	 * 2,000 missed */
	assert_int_equal(row(screen, "INTERFACE", "lan0", v, 6), 0);
	assert_true(v[0] == 100 && v[2] == 80 && v[4] == 20 && v[5] == 1000);
	assert_true(v[1] > 7.999 && v[1] < 8.001);	/* 1,000,000 B/s in Mbit/s */
	assert_int_equal(row(screen, "INTERFACE", "wan0", v, 6), 0);
	assert_true(v[0] == 0 && v[5] == 0);
	assert_int_equal(row(screen, "WORKER", "0", v, 3), 0);
	assert_true(v[0] == 100 && v[1] == 80 && v[2] == 20);
	assert_int_equal(row(screen, "TOP RULES", "ssh-in", v, 2), 0);
	assert_true(v[0] == 100 && v[1] == 220);
	free(screen);
	top_free(&a);
	top_free(&b);
}

/* A daemon from before the RX missed count sends five numbers: read as
 * none missed. Anything else malformed is refused. */
static void test_older_and_bad(void **state)
{
	struct top_sample s;

	(void)state;
	assert_int_equal(top_parse("time_ns 5\niface 1 2 3 4 5 lan0\n", &s), 0);
	assert_int_equal(s.niface, 1);
	assert_string_equal(s.iface[0].name, "lan0");
	assert_int_equal(s.iface[0].v[4], 5);
	assert_int_equal(s.iface[0].v[5], 0);
	top_free(&s);
	assert_int_equal(top_parse("time_ns 5\niface 1 2 lan0\n", &s), -1);
	assert_int_equal(top_parse("iface 1 2 3 4 5 6 lan0\n", &s), -1);	/* no time */
	assert_int_equal(top_parse("time_ns 5\nbogus 1\n", &s), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_older_and_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
