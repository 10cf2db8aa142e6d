/* rampartd --state-file (flowstate.h). */
#include "flowstate.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pipe_state.h"

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
	if (st && pipe_state_workers(st) == n && pipe_state_handoff(st) == !!handoff)
		*seed = pipe_state_home_seed(st);
}

void flowstate_restore(const struct rampartd_opts *o, struct pipe_state *st,
		       struct pipe_worker *const *w, uint32_t n)
{
	struct pipe_state_counts c;
	char err[512];

	if (!st)
		return;
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
	/* In the tables now: a crash from here on must not bring back these
	 * flows as they were at the last stop. */
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
