/* Worker side of the control mailbox: copies of the worker's counters,
 * conntrack and NAT numbers, and the flow listing a slice per loop. */
#include "ctl_job.h"

#include <string.h>
#include <time.h>

int ctl_job_post(struct worker *w, struct ctl_job *job)
{
	struct ctl_job *none = NULL;

	if (atomic_load_explicit(&w->ctl_job, memory_order_acquire))
		return -1;
	job->nflows = 0;
	job->matched = 0;
	job->deleted = 0;
	job->cursor = 0;
	job->started = 0;
	job->seq++;
	/* release: the worker sees the job's fields once it sees the pointer */
	return atomic_compare_exchange_strong_explicit(&w->ctl_job, &none, job,
						       memory_order_release,
						       memory_order_relaxed) ? 0 : -1;
}

static void copy_stats(struct worker *w, struct ctl_job *job)
{
	const struct pipe_rule_stats *rules = pipe_rule_stats(w->pipe);
	const struct ct_table *ct = pipe_conntrack(w->pipe);
	uint32_t npools = pipe_nat_pool_count(w->pipe);

	job->stats = *pipe_stats(w->pipe);
	memcpy(job->port, w->port, sizeof(job->port));
	/* the same policy as the control thread's, unless a reload is
	 * half-way (a worker that never adopted it): never past either */
	uint32_t n = pipe_rule_count(w->pipe) + 1 < job->nrules ? pipe_rule_count(w->pipe) + 1
								 : job->nrules;

	memcpy(job->rules, rules, n * sizeof(*rules));
	memset(job->rules + n, 0, (job->nrules - n) * sizeof(*rules));
	for (uint32_t r = 0; r < job->nrules; r++)
		job->limited[r] = pipe_rule_limited(w->pipe, r);
	job->has_ct = ct != NULL;
	if (ct)
		ct_get_stats(ct, &job->ct);
	else
		memset(&job->ct, 0, sizeof(job->ct));
	job->npools = npools < CTL_MAX_POOLS ? npools : CTL_MAX_POOLS;
	for (uint32_t i = 0; i < job->npools; i++) {
		const struct nat_pool *p = pipe_nat_pool(w->pipe, i);

		job->pool[i] = p->stats;
		job->pool_capacity[i] = p->capacity;
	}
	pipe_second_chance_sources(w->pipe, &job->dnat_kept, &job->redirects);
}

/* One slice of the listing; 1 when the whole table has been scanned. */
static int copy_flows(struct worker *w, struct ctl_job *job)
{
	const struct ct_table *ct = pipe_conntrack(w->pipe);
	uint32_t end;

	if (!ct)
		return 1;
	if (!job->started) {
		struct timespec ts;

		/* the same clock the backend stamps bursts with */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		job->now = ts.tv_sec;
		job->started = 1;
	}
	end = job->max_flows - job->cursor > CTL_SCAN_PER_LOOP ? job->cursor + CTL_SCAN_PER_LOOP
							       : job->max_flows;
	for (; job->cursor < end; job->cursor++) {
		struct ct_flow_info info;

		if (ct_flow_get(ct, job->cursor, &info) || !ctl_filter_match(&job->filter, &info))
			continue;
		if (job->nflows < job->limit) {
			struct ctl_flow *f = &job->flows[job->nflows++];

			f->info = info;
			f->expires_in = (int64_t)info.expire - job->now;
			f->worker = job->worker;
		}
		job->matched++;
		if (job->delete) {	/* listed as it was, then ended */
			pipe_flow_end(w->pipe, job->cursor);
			job->deleted++;
		}
	}
	return job->cursor >= job->max_flows;
}

uint32_t ctl_job_serve(struct worker *w)
{
	struct ctl_job *job = atomic_load_explicit(&w->ctl_job, memory_order_acquire);
	uint32_t seq;

	if (job->kind == CTL_JOB_FLOWS && !copy_flows(w, job))
		return 1;
	copy_stats(w, job);
	seq = job->seq;	/* the job is the control thread's once the slot is free */
	/* slot free first: the control thread may post again once done */
	atomic_store_explicit(&w->ctl_job, NULL, memory_order_relaxed);
	atomic_store_explicit(&job->done, seq, memory_order_release);
	return 0;
}
