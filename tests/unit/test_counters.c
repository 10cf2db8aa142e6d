/* The counters block rampartd prints (SIGUSR1, exit): the rule lines
 * follow the control thread's view, which a reload that timed out
 * leaves older than the policy the workers run; a worker's counters are
 * read only as far as it has them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "counters.h"
#include "pipeline.h"
#include "router_lab.h"
#include "worker.h"

struct compiled {
	void *buf;
	size_t len;
	struct rfw_view view;
};

static const struct pipe_config bridge_cfg = {
	.mode = PIPE_BRIDGE, .nports = 2, .port = {{.name = "a"}, {.name = "b"}},
	.max_flows = 1024, .seed = 1,
};

/* A policy of n accepting rules on ports 1000.., each named r<i>. */
static void compile_rules(struct compiled *c, uint32_t n)
{
	size_t cap = 128 + (size_t)n * 80, at;
	char *text = malloc(cap);

	assert_non_null(text);
	at = (size_t)snprintf(text, cap, "version: 1\nrules:\n");
	for (uint32_t i = 0; i < n; i++)
		at += (size_t)snprintf(text + at, cap - at,
				       "  - {name: r%u, proto: udp, to: {port: %u}, action: accept}\n",
				       i, 1000 + i);
	snprintf(text + at, cap - at, "defaults: {action: drop}\n");
	router_lab_compile(text, &c->buf, &c->len, &c->view);
	free(text);
}

static void test_view_with_more_rules_than_the_worker(void **state)
{
	struct compiled small, big;
	struct worker *w = calloc(1, sizeof(*w));
	struct worker *const workers[] = { w };
	const char *const ifnames[] = { "a", "b" };
	char *text = NULL, line[128];
	size_t len = 0;
	FILE *out;
	(void)state;

	assert_non_null(w);
	compile_rules(&small, 1);
	compile_rules(&big, 400);
	w->pipe = pipe_create(&bridge_cfg, &small.view);
	assert_non_null(w->pipe);
	/* the old view (400 rules) while the worker runs the new (1) */
	struct counters_src src = {
		.view = &big.view, .workers = workers, .nworkers = 1,
		.ifnames = ifnames, .nports = 2,
	};
	out = open_memstream(&text, &len);
	assert_non_null(out);
	counters_print(out, &src);
	fclose(out);
	/* every rule the worker does not have reads 0 */
	for (uint32_t n = 2; n <= 400; n++) {
		snprintf(line, sizeof(line), "\n%u r%u accept 0 0\n", n, n - 1);
		assert_non_null(strstr(text, line));
	}
	free(text);
	pipe_destroy(w->pipe);
	free(w);
	free(small.buf);
	free(big.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view_with_more_rules_than_the_worker),
	};
	return cmocka_run_group_tests_name("counters", tests, NULL, NULL);
}
