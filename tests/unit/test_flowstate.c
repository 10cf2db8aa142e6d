/* Checkpoints of a running rampartd (daemon/flowstate.h): worker threads
 * copy their flows through the ring between their loops while the main
 * thread writes the file. Each worker holds more flows than the ring has
 * room for, so the copy wraps it many times; every flow comes back from
 * the file. A worker that does not answer: no file is written (the last
 * one stays), the next checkpoint is skipped while it still holds the
 * job, and once it runs again it lets go of the job. A reload while the
 * workers copy voids the checkpoint. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ct.h"
#include "flowstate.h"
#include "frames.h"
#include "pipe_state.h"
#include "pipeline.h"
#include "reload.h"
#include "router_lab.h"

#define WORKERS 2
#define FLOWS 10000u		/* a worker's: over FLOWSTATE_RING */

static const char policy[] =
	"version: 1\n"
	"zones: {inside: [lan0], outside: [wan0]}\n"
	"rules:\n"
	"  - {name: lan-out, from: {zone: inside}, to: {zone: outside}, action: accept}\n"
	"defaults: {action: drop}\n"
	"routes:\n"
	"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"
	"  - {prefix: 10.100.0.0/16, interface: lan0}\n";

struct lab {
	void *buf;
	size_t len;
	struct rfw_view view;
	struct pipe_worker *pipe[WORKERS];
	struct worker w[WORKERS];
	struct worker *wp[WORKERS];
	pthread_t thread[WORKERS];
	struct loop_arg {
		struct lab *lab;
		uint32_t k;
	} arg[WORKERS];
	atomic_int stop;
	struct reloader *reload_meanwhile;	/* worker 0 bumps its seq mid-checkpoint */
	/* worker 0 plays one preempted between freeing its last job's slot
	 * and storing its done: that store lands after the next post */
	atomic_int late_done;
	atomic_uint last_done[WORKERS];	/* what each stored for its last job */
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void lab_open(struct lab *l)
{
	struct pipe_config c = {.mode = PIPE_ROUTER, .max_flows = 2 * FLOWS, .seed = 3,
				.worker_count = WORKERS};

	memset(l, 0, sizeof(*l));
	router_lab_compile(policy, &l->buf, &l->len, &l->view);
	router_lab_ports(&c);
	for (uint32_t k = 0; k < WORKERS; k++) {
		c.worker_id = (uint16_t)k;
		l->pipe[k] = pipe_create(&c, &l->view);
		assert_non_null(l->pipe[k]);
		router_lab_neighbours(l->pipe[k]);
		l->w[k].pipe = l->pipe[k];
		atomic_init(&l->w[k].save_job, NULL);
		l->wp[k] = &l->w[k];
	}
}

static void lab_close(struct lab *l)
{
	for (uint32_t k = 0; k < WORKERS; k++)
		pipe_destroy(l->pipe[k]);
	free(l->buf);
}

/* FLOWS UDP flows from the LAN into worker k, now. */
static void fill(struct lab *l, uint32_t k)
{
	static struct frame f[64];
	struct pipe_pkt p[64];
	uint64_t now = monotonic_ns();

	for (uint32_t i = 0; i < FLOWS; i += 64) {
		uint32_t n = FLOWS - i < 64 ? FLOWS - i : 64;

		for (uint32_t j = 0; j < n; j++) {
			struct flow_spec s = {.family = 4, .proto = 17, .sport = 1024,
					      .dport = (uint16_t)(1000 + k), .payload = 8};
			uint32_t h = i + j;

			memcpy(s.src, (uint8_t[]){10, 100, (uint8_t)(h >> 8), (uint8_t)h}, 4);
			memcpy(s.dst, remote_ip, 4);
			frame_build(&f[j], &s);
			p[j] = (struct pipe_pkt){.data = f[j].b, .len = f[j].len,
						 .room = sizeof(f[j].b), .in_port = 0};
		}
		pipe_process(l->pipe[k], p, n, now);
		for (uint32_t j = 0; j < n; j++)
			assert_int_equal(p[j].verdict, PIPE_FORWARD);
	}
}

/* What worker_run does for checkpoints, once per loop. */
static void *worker_loop(void *p)
{
	struct loop_arg *arg = p;
	struct lab *l = arg->lab;

	while (!atomic_load(&l->stop)) {
		struct flow_save_job *job = atomic_load(&l->w[arg->k].save_job);
		int busy = job != NULL;

		if (busy && arg->k == 0 && l->reload_meanwhile) {
			/* a reload put in force while the workers copy */
			reload_lock(l->reload_meanwhile);
			l->reload_meanwhile->seq++;
			reload_unlock(l->reload_meanwhile);
			l->reload_meanwhile = NULL;
		}
		if (busy && arg->k == 0 && atomic_load(&l->late_done)) {
			atomic_store(&job->done, atomic_load(&l->last_done[0]));
			usleep(50000);
			atomic_store(&l->late_done, 0);
		}
		if (!flowstate_poll(&l->w[arg->k]))
			sched_yield();
		if (busy && !atomic_load(&l->w[arg->k].save_job))
			l->last_done[arg->k] = atomic_load(&job->done);
	}
	return NULL;
}

static void start_workers(struct lab *l, uint32_t n)
{
	atomic_store(&l->stop, 0);
	for (uint32_t k = 0; k < n; k++) {
		l->arg[k] = (struct loop_arg){.lab = l, .k = k};
		assert_int_equal(pthread_create(&l->thread[k], NULL, worker_loop, &l->arg[k]), 0);
	}
}

static void stop_workers(struct lab *l, uint32_t n)
{
	atomic_store(&l->stop, 1);
	for (uint32_t k = 0; k < n; k++)
		pthread_join(l->thread[k], NULL);
}

static char *temp_path(void)
{
	char *path = router_lab_temp_path();

	unlink(path);	/* the checkpoint makes it */
	return path;
}

/* The file at path restored into a new lab b (closed by the caller). */
static void restore_into(struct lab *b, const char *path, struct pipe_state_counts *c)
{
	struct pipe_state *st;
	char err[256];

	st = pipe_state_open(path, err, sizeof(err));
	assert_non_null(st);
	assert_int_equal(pipe_state_workers(st), WORKERS);
	lab_open(b);
	assert_int_equal(pipe_state_restore(st, b->pipe, WORKERS, monotonic_ns(), 0, 0, c, err,
					    sizeof(err)), 0);
	pipe_state_close(st);
}

/* A lab whose every worker has FLOWS flows and runs, checkpointing to
 * a new path. */
static void running_lab(struct lab *a, struct rampartd_opts *o)
{
	lab_open(a);
	for (uint32_t k = 0; k < WORKERS; k++)
		fill(a, k);
	memset(o, 0, sizeof(*o));
	o->state_file = temp_path();
	start_workers(a, WORKERS);
}

static void test_checkpoint_while_running(void **state)
{
	struct lab a, b;
	struct rampartd_opts o;
	struct pipe_state_counts c;
	(void)state;

	running_lab(&a, &o);
	flowstate_checkpoint(&o, a.wp, a.pipe, WORKERS, NULL, &a.view);
	stop_workers(&a, WORKERS);
	for (uint32_t k = 0; k < WORKERS; k++)	/* every job let go */
		assert_null(atomic_load(&a.w[k].save_job));
	lab_close(&a);

	restore_into(&b, o.state_file, &c);
	assert_int_equal(c.flows, WORKERS * FLOWS);
	assert_int_equal(c.restored, WORKERS * FLOWS);
	for (uint32_t k = 0; k < WORKERS; k++) {
		const struct ct_table *ct = pipe_conntrack(b.pipe[k]);
		struct ct_flow_info fi;
		struct ct_stats cs;
		uint32_t lan_out = 0;

		ct_get_stats(ct, &cs);
		assert_int_equal(cs.in_use, FLOWS);
		/* under their rule, found by name (the checkpoint named the
		 * rules by the policy the workers run) */
		for (uint32_t i = 0; i < ct_max_flows(ct); i++)
			lan_out += ct_flow_get(ct, i, &fi) == 0 && (fi.rule & 0xffffffu) == 1;
		assert_int_equal(lan_out, FLOWS);
	}
	lab_close(&b);
	unlink(o.state_file);
	flowstate_free();
}

/* A worker's late store of its last job's done does not end the next
 * checkpoint's copy of its flows before it began (the file would hold
 * the other workers' flows only). */
static void test_late_done_of_the_last_job(void **state)
{
	struct lab a, b;
	struct rampartd_opts o;
	struct pipe_state_counts c;
	(void)state;

	running_lab(&a, &o);
	atomic_store(&a.last_done[0], ~0u);
	flowstate_checkpoint(&o, a.wp, a.pipe, WORKERS, NULL, &a.view);
	for (int i = 0; i < 1000 && atomic_load(&a.last_done[0]) == ~0u; i++)
		usleep(1000);
	assert_int_not_equal(atomic_load(&a.last_done[0]), ~0u);
	atomic_store(&a.late_done, 1);
	flowstate_checkpoint(&o, a.wp, a.pipe, WORKERS, NULL, &a.view);
	stop_workers(&a, WORKERS);
	lab_close(&a);

	restore_into(&b, o.state_file, &c);
	assert_int_equal(c.flows, WORKERS * FLOWS);
	lab_close(&b);
	unlink(o.state_file);
	flowstate_free();
}

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

static void test_worker_not_answering(void **state)
{
	struct lab a;
	struct rampartd_opts o = {0};
	char *path = temp_path();
	off_t size;
	(void)state;

	lab_open(&a);
	fill(&a, 0);
	o.state_file = path;
	start_workers(&a, WORKERS);
	flowstate_checkpoint(&o, a.wp, a.pipe, WORKERS, NULL, &a.view);
	stop_workers(&a, WORKERS);
	size = file_size(path);
	assert_true(size > (off_t)(FLOWS * PIPE_STATE_RECORD_SIZE));

	/* worker 1 stopped: after FLOWSTATE_TIMEOUT_MS, no new file */
	fill(&a, 1);
	start_workers(&a, 1);
	flowstate_checkpoint(&o, a.wp, a.pipe, WORKERS, NULL, &a.view);
	assert_int_equal(file_size(path), size);	/* the last one stays */
	{
		char tmp[4096];

		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		assert_int_equal(file_size(tmp), -1);	/* nothing left behind */
	}
	assert_non_null(atomic_load(&a.w[1].save_job));
	/* still holding it: skipped at once */
	flowstate_checkpoint(&o, a.wp, a.pipe, WORKERS, NULL, &a.view);
	assert_int_equal(file_size(path), size);
	stop_workers(&a, 1);
	/* back: it sees the job cancelled and lets go; the next one works */
	start_workers(&a, WORKERS);
	for (int i = 0; i < 1000 && atomic_load(&a.w[1].save_job); i++)
		usleep(1000);
	assert_null(atomic_load(&a.w[1].save_job));
	flowstate_checkpoint(&o, a.wp, a.pipe, WORKERS, NULL, &a.view);
	stop_workers(&a, WORKERS);
	assert_true(file_size(path) > size + (off_t)(FLOWS * PIPE_STATE_RECORD_SIZE) - 1);
	lab_close(&a);
	unlink(path);
	flowstate_free();
}

/* A reload while the workers copy voids the checkpoint: the rules would
 * be named by a policy no longer in force. The last file stays; the next
 * checkpoint, with no reload meanwhile, is written. */
static void test_reload_voids(void **state)
{
	struct lab a;
	struct rampartd_opts o = {0};
	struct reloader rl;
	char *path = temp_path();
	unsigned long long voided = atomic_load(&flowstate_stats.voided);
	unsigned long long written = atomic_load(&flowstate_stats.written);
	(void)state;

	memset(&rl, 0, sizeof(rl));
	pthread_mutex_init(&rl.lock, NULL);
	rl.seq = 1;
	lab_open(&a);
	rl.view = &a.view;
	fill(&a, 0);
	o.state_file = path;
	a.reload_meanwhile = &rl;
	start_workers(&a, WORKERS);
	flowstate_checkpoint(&o, a.wp, a.pipe, WORKERS, &rl, NULL);
	assert_int_equal(atomic_load(&flowstate_stats.voided), voided + 1);
	assert_int_equal(atomic_load(&flowstate_stats.written), written);
	assert_int_equal(file_size(path), -1);	/* nothing put in place */
	flowstate_checkpoint(&o, a.wp, a.pipe, WORKERS, &rl, NULL);
	stop_workers(&a, WORKERS);
	assert_int_equal(atomic_load(&flowstate_stats.written), written + 1);
	assert_int_equal(atomic_load(&flowstate_stats.last_flows), FLOWS);
	assert_true(file_size(path) > (off_t)(FLOWS * PIPE_STATE_RECORD_SIZE));
	lab_close(&a);
	pthread_mutex_destroy(&rl.lock);
	unlink(path);
	flowstate_free();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checkpoint_while_running),
		cmocka_unit_test(test_late_done_of_the_last_job),
		cmocka_unit_test(test_worker_not_answering),
		cmocka_unit_test(test_reload_voids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
