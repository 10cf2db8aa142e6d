/* Hot reload (ARCHITECTURE.md "Hot reload"): map and verify the new
 * artifact, build every worker's view of it (pipe_policy_build), publish
 * one pointer, and free the old tables once every worker has adopted the
 * new generation between two bursts and swept its flows over (its
 * quiescent point). Workers never lock; the lock here orders reloads,
 * counter reads and control requests among the control and main threads.
 *
 * Counters of the old generation are final once it is released; they are
 * folded into `carried` under the rule of the same name, and readers add
 * carried to the live counters of the current generation. */
#ifndef RAMPART_DAEMON_RELOAD_H
#define RAMPART_DAEMON_RELOAD_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "artifact.h"
#include "pipeline.h"
#include "rule_map.h"

struct worker;

/* What workers read: one per reload, the worker's policy at pol[queue]. */
struct reload_gen {
	uint64_t seq;
	uint32_t n;
	uint32_t *map;		/* previous policy's rules -> this one's; the policies borrow it */
	struct pipe_policy *pol[];
};

/* Microseconds from the request. */
struct reload_timing {
	uint64_t mapped;	/* artifact mapped and verified */
	uint64_t built;		/* every worker's view built */
	uint64_t published;	/* the pointer is out */
	uint64_t released;	/* every worker quiescent, old tables freed */
	uint32_t dnat_kept;	/* sets of DNAT rules kept with the new policy */
	uint32_t dnat_dropped;	/* older sets PIPE_DNAT_KEPT_MAX left out */
};

/* Called before publishing, e.g. to rewrite the XDP program's host
 * section: view is the new policy, running the one in force (what to
 * put back when a refusal leaves something half done). Non-zero refuses
 * the reload (err says why). */
typedef int (*reload_hook)(void *ctx, const struct rfw_view *running, const struct rfw_view *view,
			   char *err, size_t errlen);

struct reloader {
	pthread_mutex_t lock;
	struct worker *const *workers;
	uint32_t nworkers;
	const char *const *ifnames;	/* rampartd's ports: the policy may name only these */
	uint32_t nifs;
	enum pipe_flow_policy flows;	/* --reload-flows */
	reload_hook hook;
	void *hook_ctx;
	/* Called with the lock held before the workers' views are built
	 * (e.g. to hand them the ports' current addresses); NULL: none. */
	void (*prepare)(void *ctx);
	void *prepare_ctx;
	/* The views to keep pointing at the current policy (control socket,
	 * counters), written under the lock. */
	const struct rfw_view **view_slots[4];
	uint32_t nslots;
	/* under the lock */
	char start_path[PATH_MAX];	/* --policy: SIGHUP and a bare reload read it */
	char path[PATH_MAX];		/* the file in force */
	const struct rfw_view *view;	/* current policy */
	struct rfw_view *owned;		/* view, when a reload opened it (not main's) */
	/* With handoff, after reloads that changed the DNAT rules: the
	 * policies before, newest first, whose DNAT rules the workers keep
	 * matching packets that find no flow with (enum pipe_second), and
	 * each view when a reload opened it (to close when no longer kept) */
	const struct rfw_view *dnat_kept[PIPE_DNAT_KEPT_MAX];
	struct rfw_view *dnat_kept_owned[PIPE_DNAT_KEPT_MAX];
	uint32_t ndnat_kept;
	uint64_t kept_released;		/* times no flow needed them any more */
	uint64_t kept_drop_seq;
	struct rule_index names;	/* of view */
	struct reload_gen *gen;		/* current generation (NULL: the first) */
	uint64_t seq;
	struct pipe_counters **spare;	/* per worker: zeroed counters for the next build */
	struct pipe_rule_stats *carried;	/* per rule of view */
	uint64_t *carried_limited;
	uint64_t reloads, refused;
	struct reload_timing last;
	int stuck;			/* a worker never passed: no more reloads */
	/* the one pointer workers read */
	_Alignas(64) struct reload_gen *_Atomic published;
};

/* Take over view (opened from path by main) and the workers (not yet
 * started). 0 or -1 (out of memory). */
int reload_init(struct reloader *r, const struct rfw_view *view, const char *path,
		struct worker *const *workers, uint32_t nworkers, const char *const *ifnames,
		uint32_t nifs, enum pipe_flow_policy flows);
/* After the workers have stopped. */
void reload_free(struct reloader *r);
/* Keep *slot pointing at the current view. */
void reload_track_view(struct reloader *r, const struct rfw_view **slot);

void reload_lock(struct reloader *r);
void reload_unlock(struct reloader *r);

/* With the lock held: load path (NULL: the --policy file again) and put
 * it in force. 0 with the timings, or -1 with err ("PATH: reason", the
 * reason whole: a path too long for both is shortened in its middle);
 * then the running policy is untouched. A path of PATH_MAX bytes or
 * more is refused, never cut. */
int reload_run(struct reloader *r, const char *path, enum pipe_flow_policy flows,
	       struct reload_timing *t, char *err, size_t errlen);

/* Takes the lock: when DNAT rules are kept and no worker has a flow
 * left that may need them (pipe_dnat_kept_needed), every worker stops
 * matching them and their view is closed. 1 when released, 0 when not
 * (none kept, still needed, or a worker did not answer in time). */
int reload_release_kept(struct reloader *r);

/* With the lock held: carried counters of rule n of the current view. */
static inline struct pipe_rule_stats reload_carried(const struct reloader *r, uint32_t n)
{
	return r && r->carried ? r->carried[n] : (struct pipe_rule_stats){0, 0, 0};
}
static inline uint64_t reload_carried_limited(const struct reloader *r, uint32_t n)
{
	return r && r->carried_limited ? r->carried_limited[n] : 0;
}

const char *reload_flows_name(enum pipe_flow_policy f);

#endif
