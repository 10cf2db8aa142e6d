/* `status` and `stats` answers of the control socket, rendered from the
 * workers' answers (ctl_job) summed over the workers: aligned columns for
 * people, or one JSON object with the same numbers. */
#ifndef RAMPART_DAEMON_CTL_STATS_H
#define RAMPART_DAEMON_CTL_STATS_H

#include <stdint.h>
#include "control.h"
#include "ctl_buf.h"
#include "ctl_flows.h"
#include "ctl_job.h"
#include "ctl_request.h"

struct ctl_report {
	const struct control_src *src;
	const struct ctl_job *jobs;	/* one per worker, all done */
	const struct ctl_rule_names *names;
	const char (*cpus)[64];		/* per worker: CPUs it may run on */
	long pid;
	uint64_t uptime_s;
	/* per port: frames the kernel or NIC dropped before a worker saw
	 * them (the backend's rx_loss; zeros when it has none) */
	struct backend_rx_loss rx_loss[PIPE_MAX_PORTS];
};

struct reloader;
struct reload_timing;
/* The answer to a reload that put the policy in force. */
void ctl_reload_answer(struct ctl_buf *out, const struct reloader *rl,
		       const struct reload_timing *t, enum pipe_flow_policy flows, int json);

void ctl_status(struct ctl_buf *out, const struct ctl_report *r, int json);
void ctl_stats(struct ctl_buf *out, const struct ctl_report *r, unsigned sections, int json);

/* Sums over the workers, as the renderers above use them. */
struct counters_port;
void ctl_sum_port(const struct ctl_report *r, uint32_t port, struct counters_port *s);
void ctl_sum_worker(const struct ctl_report *r, uint32_t k, struct counters_port *s);
void ctl_sum_rule(const struct ctl_report *r, uint32_t n, uint64_t *packets, uint64_t *bytes,
		  uint64_t *limited);
void ctl_sum_runtime(const struct ctl_report *r, struct pipe_stats *sum, uint64_t *tx_full);
void ctl_sum_conntrack(const struct ctl_report *r, uint64_t *in_use, uint64_t *max);
/* Flows a full table evicted to make room (early drop), all workers. */
uint64_t ctl_sum_evicted(const struct ctl_report *r);
void ctl_sum_pool(const struct ctl_report *r, uint32_t i, uint64_t *in_use, uint64_t *cap,
		  uint64_t *failures);
/* Pool i's pairs taken back from flows not established (nat.h). */
uint64_t ctl_pool_reclaimed(const struct ctl_report *r, uint32_t i);
const char *ctl_rule_name(const struct ctl_report *r, uint32_t n);
/* Seconds since rule n's last packet; -1 when it has had none. */
double ctl_rule_last_hit_ago(const struct ctl_report *r, uint32_t n);
const char *ctl_rule_action(const struct ctl_report *r, uint32_t n);

/* The raw sample `rampartctl top` makes rates of (not a user format). */
void ctl_top_sample(struct ctl_buf *out, const struct ctl_report *r);

/* The Prometheus text exposition (format 0.0.4) of the same numbers. */
void ctl_metrics(struct ctl_buf *out, const struct ctl_report *r);

#endif
