/* Control-socket request lines: the command, --json, stats sections,
 * flows --limit, --delete and --filter (the rest of the line), a reload
 * file, and options refused where they do not belong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ctl_request.h"

static int parse(const char *text, struct ctl_request *rq, char *line, char *err)
{
	strcpy(line, text);
	if (ctl_request_parse(line, rq, err, 256))
		return -1;
	return ctl_request_check(rq, err, 256);
}

static void test_commands(void **state)
{
	struct ctl_request rq;
	char line[512], err[256];

	(void)state;
	assert_int_equal(parse("status", &rq, line, err), 0);
	assert_string_equal(rq.cmd, "status");
	assert_false(rq.json);
	assert_int_equal(parse("status --json", &rq, line, err), 0);
	assert_true(rq.json);
	assert_int_equal(parse("stats --rules --stages --json", &rq, line, err), 0);
	assert_int_equal(rq.sections, CTL_S_RULES | CTL_S_STAGES);
	assert_int_equal(parse("stats", &rq, line, err), 0);
	assert_int_equal(rq.sections, 0);
	assert_int_equal(parse("reload /etc/rampart/p.rfw", &rq, line, err), 0);
	assert_string_equal(rq.file, "/etc/rampart/p.rfw");
}

static void test_flows(void **state)
{
	struct ctl_request rq;
	char line[512], err[256];

	(void)state;
	assert_int_equal(parse("flows", &rq, line, err), 0);
	assert_int_equal(rq.limit, CTL_DEFAULT_LIMIT);
	assert_null(rq.filter);
	assert_int_equal(parse("flows --limit 5 --json --filter proto=tcp  dport=80", &rq, line, err), 0);
	assert_int_equal(rq.limit, 5);
	assert_true(rq.json);
	/* the rest of the line, spaces and all */
	assert_string_equal(rq.filter, "proto=tcp  dport=80");
	assert_int_equal(parse("flows --filter", &rq, line, err), 0);
	assert_string_equal(rq.filter, "");
	assert_false(rq.delete);
	assert_int_equal(parse("flows --delete --filter proto=udp", &rq, line, err), 0);
	assert_true(rq.delete);
	assert_string_equal(rq.filter, "proto=udp");
}

static void expect_error(const char *text, const char *what)
{
	struct ctl_request rq;
	char line[512], err[256] = "";

	assert_int_equal(parse(text, &rq, line, err), -1);
	assert_non_null(strstr(err, what));
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("", "empty request");
	expect_error("flows --limit", "--limit takes a number");
	expect_error("flows --limit 0", "--limit takes a number");
	expect_error("flows --limit -3", "--limit takes a number");
	expect_error("flows --limit 99999999999", "--limit takes a number");
	expect_error("flows --limit 5x", "--limit takes a number");
	expect_error("stats --bogus", "stats: unknown option '--bogus'");
	expect_error("status --rules", "belong to stats");
	expect_error("stats --limit 3", "belong to flows");
	expect_error("status --filter proto=tcp", "belong to flows");
	expect_error("status extra", "unexpected argument 'extra'");
	/* ending every flow takes a filter that says so, not a slip */
	expect_error("flows --delete", "flows --delete needs a --filter");
	expect_error("flows --delete --filter   ", "flows --delete needs a --filter");
	expect_error("stats --delete", "belong to flows");
}

/* A reload's path as long as the kernel opens fits a request line with
 * every reload option beside it and reaches the daemon whole; a longer
 * one is refused with its length, never cut to another file's name. */
static void test_long_reload_path(void **state)
{
	static char line[CTL_MAX_REQUEST + 64], path[PATH_MAX + 1];
	struct ctl_request rq;
	char err[256];
	(void)state;

	path[0] = '/';
	memset(path + 1, 'p', PATH_MAX - 2);	/* PATH_MAX - 1 bytes */
	snprintf(line, sizeof(line), "reload %s --flows recheck --json", path);
	assert_true(strlen(line) + 1 < CTL_MAX_REQUEST);	/* + newline */
	assert_int_equal(ctl_request_parse(line, &rq, err, sizeof(err)), 0);
	assert_int_equal(strlen(rq.file), PATH_MAX - 1);
	assert_string_equal(rq.flows, "recheck");
	assert_true(rq.json);

	path[PATH_MAX - 1] = 'p';		/* PATH_MAX bytes: no file has it */
	snprintf(line, sizeof(line), "reload %s", path);
	assert_int_equal(ctl_request_parse(line, &rq, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "reload: a path of 4096 bytes is longer than any file can have (4095)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_flows),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_long_reload_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
