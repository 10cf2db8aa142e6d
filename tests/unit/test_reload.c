/* The reloader's refusals of a path: a long one's message still says
 * why (its middle shortened, the path said once), and one no file can
 * have is refused whole instead of cut to another file's name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "reload.h"
#include "router_lab.h"

static const char policy[] =
	"version: 1\n"
	"rules:\n"
	"  - {name: any, action: accept}\n"
	"defaults: {action: drop}\n";

static void test_long_path_refusals(void **state)
{
	static char path[PATH_MAX + 1];
	struct reloader r;
	struct reload_timing t;
	struct rfw_view view;
	void *buf;
	size_t len;
	char err[512];	/* as the control socket's */
	const char *dots;
	(void)state;

	router_lab_compile(policy, &buf, &len, &view);
	assert_int_equal(reload_init(&r, &view, "/tmp/p.rfw", NULL, 0, NULL, 0,
				     PIPE_FLOWS_KEEP), 0);

	/* 1,000 bytes of a path that does not exist: the reason kept */
	memset(path, 0, sizeof(path));
	strcpy(path, "/tmp/rampart-test-no-such-dir/");
	memset(path + strlen(path), 'x', 1000 - strlen(path) - 4);
	strcat(path, ".rfw");
	assert_int_equal(reload_run(&r, path, PIPE_FLOWS_KEEP, &t, err, sizeof(err)), -1);
	dots = strstr(err, "...");
	assert_non_null(dots);
	assert_memory_equal(err, "/tmp/rampart-test-no-such-dir/xx", 32);
	assert_string_equal(dots + 3 + strlen(dots + 3) - strlen("xx.rfw: No such file or directory"),
			    "xx.rfw: No such file or directory");
	assert_null(strstr(dots + 3, "/tmp/"));	/* the path once */

	/* a short one as it was: "PATH: reason" */
	assert_int_equal(reload_run(&r, "/tmp/rampart-test-no-such.rfw", PIPE_FLOWS_KEEP, &t, err,
				    sizeof(err)), -1);
	assert_string_equal(err, "/tmp/rampart-test-no-such.rfw: No such file or directory");

	/* PATH_MAX bytes: no file has such a name; refused as such */
	memset(path, 'p', PATH_MAX);
	path[0] = '/';
	path[PATH_MAX] = '\0';
	assert_int_equal(reload_run(&r, path, PIPE_FLOWS_KEEP, &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ": a path of 4096 bytes is longer than any file can have (4095)"));
	assert_int_equal(r.refused, 3);
	assert_string_equal(r.path, "/tmp/p.rfw");	/* the policy in force stays */
	reload_free(&r);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_path_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
