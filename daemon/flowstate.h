/* rampartd --state-file: the flows read back at start, written at a
 * clean stop and, with --state-interval, while running (checkpoints).
 * runtime/pipe_state.h does the work; this says what happened on
 * stderr, which the journal keeps. */
#ifndef RAMPART_FLOWSTATE_H
#define RAMPART_FLOWSTATE_H

#include <stdatomic.h>
#include <stdint.h>
#include "options.h"
#include "worker.h"

/* A checkpoint's records pass from a worker to the main thread through a
 * single-producer ring of FLOWSTATE_RING records (1.2 MB a worker); the
 * worker copies at most FLOWSTATE_SLOTS_PER_LOOP conntrack slots between
 * two bursts, so a big table never holds a burst up for long (~50 us). */
#define FLOWSTATE_RING 8192u		/* power of two */
#define FLOWSTATE_SLOTS_PER_LOOP 1024u

struct flow_save_job {
	/* set by the main thread before publishing */
	const struct rfw_view *names;	/* the policy the file names rules by */
	uint32_t worker;		/* the worker's number in the file */
	uint8_t *ring;			/* FLOWSTATE_RING records */
	/* the worker's */
	uint32_t cursor;		/* next conntrack slot */
	uint32_t now;			/* its clock (s) when the copy began */
	int started;
	_Alignas(64) atomic_uint head;	/* records written (worker, release) */
	_Alignas(64) atomic_uint tail;	/* records taken (main thread, release) */
	atomic_int cancel;		/* main thread gave up: stop copying */
	/* The number of the last post (main thread) and of the last job
	 * finished (worker: table done or cancelled, slot free). A number,
	 * not a flag: a worker preempted between freeing the slot and its
	 * store of done would otherwise end the next checkpoint's copy of
	 * its flows before it began. */
	uint32_t seq;
	atomic_uint done;
};

/* Worker side, once per loop: copy a slice of a pending checkpoint.
 * Returns 1 while one is in progress (the worker must not go idle). */
uint32_t flowstate_serve(struct worker *w);

static inline uint32_t flowstate_poll(struct worker *w)
{
	if (!atomic_load_explicit(&w->save_job, memory_order_acquire))
		return 0;
	return flowstate_serve(w);
}

/* Main thread, workers running: every worker's flows to the state file,
 * a worker at a time. rl: the reloader, whose policy names the rules and
 * whose lock is taken only to read it and around the final rename (a
 * reload in between voids the checkpoint); NULL: no reloads, view names
 * them. Says on stderr what went wrong (and, with -v, how many flows were
 * written); the file is replaced only when all were written. */
struct reloader;
void flowstate_checkpoint(const struct rampartd_opts *o, struct worker *const *w,
			  struct pipe_worker *const *pipes, uint32_t n, struct reloader *rl,
			  const struct rfw_view *view);

/* What the checkpoints did, for rampartctl status and the metrics (the
 * main thread writes, the control thread reads). */
struct flowstate_stats {
	atomic_ullong written;		/* files put in place */
	atomic_ullong failed;		/* not written (disk, a stuck worker, memory) */
	atomic_ullong voided;		/* dropped for a reload that came meanwhile */
	atomic_ullong last_wall_s;	/* CLOCK_REALTIME of the last written; 0: none */
	atomic_ullong last_flows;
	atomic_ullong last_ns;		/* how long the last written one took */
};
extern struct flowstate_stats flowstate_stats;

/* The checkpoints' rings, once the workers have stopped. */
void flowstate_free(void);

struct pipe_state;
struct pipe_worker;

/* The state file, when --state-file names one that exists and is sound;
 * NULL otherwise (a refused one is said and left in place: the next
 * clean stop writes over it). */
struct pipe_state *flowstate_open(const struct rampartd_opts *o);
/* The handoff hash key to use for n workers: the file's when it and
 * these workers both hand frames over (its flows are placed by it), else
 * *seed unchanged. */
void flowstate_seed(const struct pipe_state *st, uint32_t n, int handoff, uint64_t *seed);
/* Put the flows back into the workers (made, not yet running), say how
 * many, remove the file once they are in (with --state-interval: leave
 * it for the first checkpoint to replace); closes st. */
void flowstate_restore(const struct rampartd_opts *o, struct pipe_state *st,
		       struct pipe_worker *const *w, uint32_t n);
/* After the workers stopped (any clean stop): write their flows, and say
 * how many or why not. */
void flowstate_save(const struct rampartd_opts *o, struct pipe_worker *const *w, uint32_t n);

#endif
