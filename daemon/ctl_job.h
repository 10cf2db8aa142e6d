/* The mailbox between the control thread and a worker. The control
 * thread fills a job and publishes it in worker->ctl_job; the worker
 * looks once per loop, answers from its own state (nothing of the packet
 * path is read from another thread), clears the slot and sets done to the
 * job's number. A
 * flow listing is done in slices (CTL_SCAN_PER_LOOP table slots per loop)
 * so a big table never holds up a burst for long. */
#ifndef RAMPART_DAEMON_CTL_JOB_H
#define RAMPART_DAEMON_CTL_JOB_H

#include <stdatomic.h>
#include <stdint.h>
#include "ct.h"
#include "ctl_filter.h"
#include "nat.h"
#include "pipeline.h"
#include "worker.h"

#define CTL_SCAN_PER_LOOP 2048u	/* conntrack slots looked at per worker loop */
#define CTL_MAX_POOLS 64u		/* NAT pools reported (the rest are summed in none) */

enum ctl_job_kind {
	CTL_JOB_STATS,		/* counters, conntrack and NAT use */
	CTL_JOB_FLOWS,		/* + a filtered copy of the flow table */
};

/* A flow as copied by its worker: expires_in is relative to the
 * worker's clock at the copy (the table's `now` is the worker's). */
struct ctl_flow {
	struct ct_flow_info info;
	int64_t expires_in;	/* seconds */
	uint32_t worker;
};

struct ctl_job {
	/* set by the control thread before publishing */
	uint8_t kind;		/* enum ctl_job_kind */
	uint32_t nrules;	/* entries of rules[] and limited[]: rule_count + 1 */
	uint32_t max_flows;	/* conntrack slots to scan */
	struct ctl_filter filter;	/* a copy: a late worker outlives the request */
	uint32_t limit;		/* flows[] room */
	uint8_t delete;		/* end the matching flows too (flows --delete) */
	uint32_t worker;
	struct pipe_rule_stats *rules;
	uint64_t *limited;
	struct ctl_flow *flows;
	/* filled by the worker */
	struct pipe_stats stats;
	struct worker_port_stats port[PIPE_MAX_PORTS];
	int has_ct;
	struct ct_stats ct;
	uint32_t npools;
	struct nat_stats pool[CTL_MAX_POOLS];
	uint32_t pool_capacity[CTL_MAX_POOLS];
	int dnat_kept;		/* pipe_second_chance_sources */
	uint32_t redirects;
	uint32_t nflows;	/* copied into flows[] */
	uint64_t matched;	/* flows matching the filter, copied or not */
	uint64_t deleted;	/* of them, ended (delete) */
	uint32_t cursor;	/* next slot to scan */
	int64_t now;		/* worker clock (s) when the listing began */
	int started;
	/* The number of the last post (control thread) and of the last job
	 * served (worker). A number, not a flag: a worker that cleared the
	 * slot and was preempted before its store of done would otherwise
	 * mark the next post done before it was served. */
	uint32_t seq;
	atomic_uint done;
};

/* Worker side, once per loop: serve a pending job. Returns 1 while a
 * job is still in progress (the worker must not go idle), else 0. */
uint32_t ctl_job_serve(struct worker *w);

static inline uint32_t ctl_job_poll(struct worker *w)
{
	if (!atomic_load_explicit(&w->ctl_job, memory_order_acquire))
		return 0;
	return ctl_job_serve(w);
}

/* Control side: 1 once the worker has served the job last posted. */
static inline int ctl_job_done(const struct ctl_job *job)
{
	return atomic_load_explicit(&job->done, memory_order_acquire) == job->seq;
}

/* Control side: 1 while w still holds a job (its fields are then the
 * worker's: fill a job only when this is 0). */
static inline int ctl_job_busy(struct worker *w)
{
	return atomic_load_explicit(&w->ctl_job, memory_order_acquire) != NULL;
}

/* Control side: publish job for w. -1, with job untouched, when w has
 * not finished a previous job (one that timed out): the caller reports
 * the worker busy. Only the control thread posts. */
int ctl_job_post(struct worker *w, struct ctl_job *job);

#endif
