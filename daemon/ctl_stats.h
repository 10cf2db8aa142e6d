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
};

struct reloader;
struct reload_timing;
/* The answer to a reload that put the policy in force. */
void ctl_reload_answer(struct ctl_buf *out, const struct reloader *rl,
		       const struct reload_timing *t, enum pipe_flow_policy flows, int json);

void ctl_status(struct ctl_buf *out, const struct ctl_report *r, int json);
void ctl_stats(struct ctl_buf *out, const struct ctl_report *r, unsigned sections, int json);

#endif
