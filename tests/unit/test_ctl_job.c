/* The control thread's mailbox to a worker (ctl_job.h): a job posted is
 * done only once the worker served that job, not when a late store of
 * the job before it lands. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctl_job.h"
#include "pipeline.h"
#include "router_lab.h"

static const char policy[] =
	"version: 1\n"
	"rules:\n"
	"  - {name: dns, proto: udp, to: {port: 53}, action: accept}\n"
	"defaults: {action: drop}\n";

static const struct pipe_config bridge_cfg = {
	.mode = PIPE_BRIDGE, .nports = 2, .port = {{.name = "a"}, {.name = "b"}},
	.max_flows = 1024, .seed = 1,
};

static void test_late_done_of_the_last_job(void **state)
{
	struct worker *w = calloc(1, sizeof(*w));
	struct pipe_rule_stats rules[2];
	uint64_t limited[2];
	struct ctl_job job;
	struct rfw_view view;
	unsigned last;
	void *buf;
	size_t len;
	(void)state;

	assert_non_null(w);
	router_lab_compile(policy, &buf, &len, &view);
	w->pipe = pipe_create(&bridge_cfg, &view);
	assert_non_null(w->pipe);
	memset(&job, 0, sizeof(job));
	atomic_init(&job.done, 0);
	job.kind = CTL_JOB_STATS;
	job.nrules = 2;
	job.rules = rules;
	job.limited = limited;

	assert_int_equal(ctl_job_post(w, &job), 0);
	assert_false(ctl_job_done(&job));
	assert_int_equal(ctl_job_poll(w), 0);	/* served */
	assert_true(ctl_job_done(&job));
	assert_false(ctl_job_busy(w));
	last = atomic_load(&job.done);

	/* the next request; the worker's store for the last one lands now
	 * (it was preempted between freeing the slot and storing done) */
	assert_int_equal(ctl_job_post(w, &job), 0);
	atomic_store(&job.done, last);
	assert_false(ctl_job_done(&job));
	assert_int_equal(ctl_job_poll(w), 0);
	assert_true(ctl_job_done(&job));

	pipe_destroy(w->pipe);
	free(w);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_late_done_of_the_last_job),
	};
	return cmocka_run_group_tests_name("ctl_job", tests, NULL, NULL);
}
