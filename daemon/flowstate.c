/* rampartd --state-file (flowstate.h). */
#include "flowstate.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pipe_state.h"
#include "reload.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct pipe_state *flowstate_open(const struct rampartd_opts *o)
{
	struct pipe_state *st;
	char err[512];

	if (!o->state_file)
		return NULL;
	st = pipe_state_open(o->state_file, err, sizeof(err));
	if (!st && errno == ENOENT && o->verbose)
		fprintf(stderr, "rampartd: no state file %s: starting with no flows\n", o->state_file);
	else if (!st && errno != ENOENT)
		fprintf(stderr, "rampartd: %s; starting with no flows\n", err);
	return st;
}

void flowstate_seed(const struct pipe_state *st, uint32_t n, int handoff, uint64_t *seed)
{
	/* with handoff on both sides, whatever the counts: a flow's worker
	 * is its hash modulo the count, the hash the file's key */
	(void)n;
	if (st && pipe_state_handoff(st) && handoff)
		*seed = pipe_state_home_seed(st);
}

void flowstate_restore(const struct rampartd_opts *o, struct pipe_state *st,
		       struct pipe_worker *const *w, uint32_t n)
{
	struct pipe_state_counts c;
	uint32_t saved_by;
	char err[512];

	if (!st)
		return;
	saved_by = pipe_state_workers(st);
	if (pipe_state_restore(st, w, n, clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_REALTIME),
			       o->reload_flows == PIPE_FLOWS_RECHECK, &c, err, sizeof(err))) {
		fprintf(stderr, "rampartd: state file %s not used: %s; starting with no flows\n",
			o->state_file, err);
		pipe_state_close(st);
		return;
	}
	pipe_state_close(st);
	fprintf(stderr, "rampartd: state file %s: %llu of %llu flows restored (%llu expired while "
			"down, %llu under the default's row as their rule is gone, %llu refused: "
			"%llu table full, %llu duplicate, %llu invalid; %llu NAT pairs no pool "
			"holds now)\n", o->state_file, (unsigned long long)c.restored,
		(unsigned long long)c.flows, (unsigned long long)c.expired,
		(unsigned long long)c.rule_gone,
		(unsigned long long)(c.full + c.duplicate + c.invalid), (unsigned long long)c.full,
		(unsigned long long)c.duplicate, (unsigned long long)c.invalid,
		(unsigned long long)c.nat_unclaimed);
	if (saved_by != n)
		fprintf(stderr, "rampartd: state file %s was written by %u workers: %llu flows went to "
				"another worker than had them, %llu not restored (no memory for their "
				"redirects)\n", o->state_file, saved_by,
			(unsigned long long)c.rehomed, (unsigned long long)c.unplaced);
	/* In the tables now: a crash from here on must not bring back these
	 * flows as they were at the last stop. With checkpoints that is what
	 * a crash brings back anyway (the flows of the last one): the file
	 * stays until the first checkpoint replaces it, so a crash before
	 * then still finds it. */
	if (o->state_interval)
		return;
	if (unlink(o->state_file))
		fprintf(stderr, "rampartd: cannot remove the state file %s: %s\n", o->state_file,
			strerror(errno));
}

void flowstate_save(const struct rampartd_opts *o, struct pipe_worker *const *w, uint32_t n)
{
	struct pipe_state_counts c;
	char err[512];

	if (!o->state_file)
		return;
	if (pipe_state_save(o->state_file, w, n, clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_REALTIME),
			    &c, err, sizeof(err)))
		fprintf(stderr, "rampartd: flows not kept: %s\n", err);
	else
		fprintf(stderr, "rampartd: state file %s: %llu flows written\n", o->state_file,
			(unsigned long long)c.flows);
}

/* ---- checkpoints (--state-interval) ---- */

#define FLOWSTATE_TIMEOUT_MS 2000	/* a worker that copies nothing for this long */

static struct flow_save_job *jobs;	/* one a worker, made by the first checkpoint */
static uint32_t njobs;

uint32_t flowstate_serve(struct worker *w)
{
	struct flow_save_job *j = atomic_load_explicit(&w->save_job, memory_order_acquire);
	uint32_t head, tail, at, room, got, seq;
	int finished = 1;

	if (!atomic_load_explicit(&j->cancel, memory_order_relaxed)) {
		if (!j->started) {
			/* the clock the backend stamps bursts with */
			j->now = (uint32_t)(clock_ns(CLOCK_MONOTONIC) / 1000000000u);
			j->started = 1;
		}
		head = atomic_load_explicit(&j->head, memory_order_relaxed);
		tail = atomic_load_explicit(&j->tail, memory_order_acquire);
		at = head & (FLOWSTATE_RING - 1);
		room = FLOWSTATE_RING - (head - tail);
		if (room > FLOWSTATE_RING - at)
			room = FLOWSTATE_RING - at;	/* up to the ring's end */
		if (!room)
			return 1;	/* the main thread is writing: wait for it */
		finished = pipe_state_collect(w->pipe, j->worker, j->names, j->now, &j->cursor,
					      FLOWSTATE_SLOTS_PER_LOOP,
					      j->ring + (size_t)at * PIPE_STATE_RECORD_SIZE, room,
					      &got);
		atomic_store_explicit(&j->head, head + got, memory_order_release);
	}
	if (!finished)
		return 1;
	seq = j->seq;	/* the job is the main thread's once the slot is free */
	/* slot free first: the main thread may post again once done */
	atomic_store_explicit(&w->save_job, NULL, memory_order_relaxed);
	atomic_store_explicit(&j->done, seq, memory_order_release);
	return 0;
}

/* Records [tail, head) of the ring to the file, in at most two pieces. */
static int drain(struct pipe_state_writer *wr, struct flow_save_job *j, uint32_t head,
		 char *err, size_t errlen)
{
	uint32_t tail = atomic_load_explicit(&j->tail, memory_order_relaxed);

	while (tail != head) {
		uint32_t at = tail & (FLOWSTATE_RING - 1), n = head - tail;

		if (n > FLOWSTATE_RING - at)
			n = FLOWSTATE_RING - at;
		if (pipe_state_writer_put(wr, j->ring + (size_t)at * PIPE_STATE_RECORD_SIZE, n, err,
					  errlen))
			return -1;
		tail += n;
		atomic_store_explicit(&j->tail, tail, memory_order_release);
	}
	return 0;
}

/* Worker k's flows through its job to the file. 0; -1 with err when the
 * worker stopped answering (its job cancelled); -2 with err when the
 * file failed (the writer has aborted itself). */
static int save_worker(struct pipe_state_writer *wr, struct worker *w, struct flow_save_job *j,
		       uint32_t k, const struct rfw_view *names, char *err, size_t errlen)
{
	const struct timespec nap = { 0, 200000 };
	uint64_t last = clock_ns(CLOCK_MONOTONIC);

	j->names = names;
	j->worker = k;
	j->cursor = 0;
	j->started = 0;
	atomic_store_explicit(&j->head, 0, memory_order_relaxed);
	atomic_store_explicit(&j->tail, 0, memory_order_relaxed);
	atomic_store_explicit(&j->cancel, 0, memory_order_relaxed);
	j->seq++;
	/* release: the worker sees the job's fields once it sees the pointer */
	atomic_store_explicit(&w->save_job, j, memory_order_release);
	for (;;) {
		/* done before head: once done is seen, head is the last */
		int done = atomic_load_explicit(&j->done, memory_order_acquire) == j->seq;
		uint32_t head = atomic_load_explicit(&j->head, memory_order_acquire);

		if (head != atomic_load_explicit(&j->tail, memory_order_relaxed)) {
			if (drain(wr, j, head, err, errlen)) {
				atomic_store_explicit(&j->cancel, 1, memory_order_relaxed);
				return -2;
			}
			last = clock_ns(CLOCK_MONOTONIC);
		} else if (done) {
			return 0;
		} else if (clock_ns(CLOCK_MONOTONIC) - last > FLOWSTATE_TIMEOUT_MS * 1000000ull) {
			atomic_store_explicit(&j->cancel, 1, memory_order_relaxed);
			snprintf(err, errlen, "worker %u copied nothing for %d ms", k,
				 FLOWSTATE_TIMEOUT_MS);
			return -1;
		} else {
			nanosleep(&nap, NULL);
		}
	}
}

static int make_jobs(uint32_t n)
{
	if (jobs)
		return 0;
	jobs = calloc(n, sizeof(*jobs));
	if (!jobs)
		return -1;
	njobs = n;
	for (uint32_t k = 0; k < n; k++) {
		jobs[k].ring = malloc((size_t)FLOWSTATE_RING * PIPE_STATE_RECORD_SIZE);
		if (!jobs[k].ring) {
			flowstate_free();
			return -1;
		}
	}
	return 0;
}

struct flowstate_stats flowstate_stats;

static void note_failure(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note_failure(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	atomic_fetch_add_explicit(&flowstate_stats.failed, 1, memory_order_relaxed);
}

void flowstate_checkpoint(const struct rampartd_opts *o, struct worker *const *w,
			  struct pipe_worker *const *pipes, uint32_t n, struct reloader *rl,
			  const struct rfw_view *view)
{
	struct pipe_state_writer *wr;
	const struct rfw_view *names;
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), wall, flows, seq, now_seq;
	char err[512];

	if (!o->state_file || n == 0)
		return;
	if (make_jobs(n)) {
		note_failure("rampartd: checkpoint: out of memory\n");
		return;
	}
	for (uint32_t k = 0; k < n; k++)
		if (atomic_load_explicit(&w[k]->save_job, memory_order_acquire)) {
			note_failure("rampartd: checkpoint skipped: worker %u has not finished the "
				     "last one\n", k);
			return;
		}
	/* The names are written under the reload lock (a reload frees the
	 * view it replaces); the flows not: rampartctl and reloads do not
	 * wait for a checkpoint. A reload meanwhile makes it void (rules
	 * would be named by the wrong policy), checked again before the
	 * rename; from here on `names` is only compared, never read. A
	 * checkpoint never starts inside a reload: reload_run holds the lock
	 * from its build through the publish until every worker has adopted
	 * the new policy, so each worker's flows are judged (and marked due
	 * a re-check) by the policy whose names are written. Only a reload
	 * left stuck (a worker that did not adopt it: "restart rampartd")
	 * breaks that; the workers that did adopt it save their flows under
	 * rule 0, marks kept
	 * (pipe_state_collect). */
	if (rl)
		reload_lock(rl);
	seq = rl ? rl->seq : 0;
	names = rl ? rl->view : view;
	wr = pipe_state_writer_open(o->state_file, pipes[0], n, names, 1, err, sizeof(err));
	if (rl)
		reload_unlock(rl);
	if (!wr) {
		note_failure("rampartd: checkpoint not written: %s\n", err);
		return;
	}
	for (uint32_t k = 0; k < n; k++) {
		int rc = save_worker(wr, w[k], &jobs[k], k, names, err, sizeof(err));

		if (rc) {
			if (rc == -1)
				pipe_state_writer_abort(wr);
			note_failure("rampartd: checkpoint not written: %s\n", err);
			return;
		}
	}
	wall = clock_ns(CLOCK_REALTIME);
	if (pipe_state_writer_sync(wr, wall, err, sizeof(err))) {
		note_failure("rampartd: checkpoint not written: %s\n", err);
		return;
	}
	if (rl)
		reload_lock(rl);
	now_seq = rl ? rl->seq : 0;
	if (now_seq != seq) {
		pipe_state_writer_abort(wr);
		if (rl)
			reload_unlock(rl);
		/* not a failure: the next one, with the new policy's names */
		atomic_fetch_add_explicit(&flowstate_stats.voided, 1, memory_order_relaxed);
		return;
	}
	if (pipe_state_writer_close(wr, wall, &flows, err, sizeof(err))) {
		if (rl)
			reload_unlock(rl);
		note_failure("rampartd: checkpoint not written: %s\n", err);
		return;
	}
	if (rl)
		reload_unlock(rl);
	atomic_store_explicit(&flowstate_stats.last_flows, flows, memory_order_relaxed);
	atomic_store_explicit(&flowstate_stats.last_ns,
			      clock_ns(CLOCK_MONOTONIC) - t0, memory_order_relaxed);
	atomic_store_explicit(&flowstate_stats.last_wall_s, wall / 1000000000u,
			      memory_order_relaxed);
	atomic_fetch_add_explicit(&flowstate_stats.written, 1, memory_order_relaxed);
	if (o->verbose)
		fprintf(stderr, "rampartd: checkpoint: %llu flows written to %s in %llu ms\n",
			(unsigned long long)flows, o->state_file,
			(unsigned long long)((clock_ns(CLOCK_MONOTONIC) - t0) / 1000000u));
}

void flowstate_free(void)
{
	for (uint32_t k = 0; jobs && k < njobs; k++)
		free(jobs[k].ring);
	free(jobs);
	jobs = NULL;
	njobs = 0;
}
