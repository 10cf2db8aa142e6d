/* Token buckets for the rules' `limit: {rate, burst, per}` (POLICY.md),
 * one table per worker: no atomics, no clock reads (the caller passes the
 * batch's `now`), no allocation after rl_table_init.
 *
 * Arithmetic: a bucket holds integer "credit"; one packet costs
 * interval_ns / g and every nanosecond adds rate / g, with
 * g = gcd(rate, interval_ns), so 1000/s refills exactly 1 packet per ms and
 * 1/h exactly 1 per hour, with no rounding drift. Refill is computed
 * from the time since the bucket was last touched; an idle time of at
 * least the empty-to-full time simply fills the bucket, so neither long
 * idle times nor huge rates can overflow. Credit stays below 2^62: only
 * absurd limits lose exactness (a burst above 2^62 / cost packets is cut;
 * a cost or gain above 2^62, i.e. under one packet per 146 years or over
 * 2^62 per ns, is scaled).
 * A bucket starts full (`burst` packets pass at once).
 *
 * Per rule (`per: rule`): one bucket per limit and worker. With
 * worker_count > 1 each worker enforces 1/worker_count of the rate (and a
 * rounded-up share of the burst), so the sum over workers respects the
 * limit; traffic skewed onto one queue is limited below it.
 *
 * Per source (`per: source`): a fixed-size set-associative table (4
 * ways) keyed by (limit, source address); IPv6 sources are grouped by
 * their /64 by default (rl_config.v6_prefix), since a single host usually
 * owns a whole /64 and could otherwise rotate addresses. Divided by
 * workers like a per-rule limit when rl_config.split_sources is set: for
 * a stateful policy, whose limits count a source's new flows, and those
 * go to workers by their tuples' hash, so the sum over the workers is the
 * limit. Otherwise (a stateless policy: every packet counts, and one flow
 * stays on one queue) each worker enforces the whole limit, and a source
 * whose flows spread over n queues can reach n times it.
 *
 * Replacement when a set is full: an entry is only replaced when its
 * bucket has refilled to full (or the way is empty). Replacing a full
 * bucket loses nothing, because a new source also starts full. When no
 * way qualifies, the new source is charged to its limit's one shared
 * overflow bucket (same rate and burst as a single source) and is not
 * tracked. So a flood of new (spoofed) sources can never evict an active
 * source's state or earn anyone a fresh burst; the flood shares one
 * source's allowance, which legitimate new sources must also share until
 * entries refill (at most burst / rate after their last packet). An
 * attacker who rotates through more sources than the table holds gets,
 * in total, one source's rate from the overflow bucket plus one burst per
 * entry that refills. */
#ifndef RAMPART_RATELIMIT_H
#define RAMPART_RATELIMIT_H

#include <stdint.h>

#include "rampart/artifact.h"
#include "pkt.h"

#define RL_WAYS 4u
#define RL_DEFAULT_SOURCE_SLOTS 65536u
#define RL_DEFAULT_V6_PREFIX 64u

struct rl_config {
	uint32_t source_slots;	/* per-source entries, rounded up to a power
				 * of two >= RL_WAYS; 0 = RL_DEFAULT_SOURCE_SLOTS */
	uint32_t worker_count;	/* splits per-rule limits; 0 is taken as 1 */
	uint8_t split_sources;	/* and per-source limits too */
	uint8_t v6_prefix;	/* IPv6 source grouping, 1..128; 0 = /64 */
	uint64_t seed;		/* source hash key (random per run: the caller's) */
};

/* One limit, derived from struct rfw_limit at init. */
struct rl_params {
	uint64_t cost;		/* credit per packet */
	uint64_t gain;		/* credit per nanosecond */
	uint64_t cap;		/* full bucket */
	uint64_t fill_ns;	/* empty to full; UINT64_MAX when gain = 0 */
	uint32_t per;		/* enum rfw_limit_per */
	uint32_t reserved;
};

struct rl_bucket {
	uint64_t credit;
	uint64_t last_ns;	/* when credit was last brought up to date */
};

struct rl_source {
	struct rl_bucket b;
	uint32_t limit;		/* 1-based; 0 = empty way */
	uint8_t family;
	uint8_t reserved[3];
	uint8_t src[16];	/* masked source address */
};

struct rl_limit_stats {
	uint64_t passed;
	uint64_t excess;	/* dropped over the limit */
	uint64_t overflow;	/* per-source: charged to the shared bucket */
};

struct rl_stats {
	uint64_t src_inserted;	/* new source entries */
	uint64_t src_replaced;	/* ... of which replaced a full bucket */
	uint64_t bad_limit;	/* limit number out of range: denied */
};

struct rl_table {
	/* Indexed by limit number (1-based, [0] unused). */
	const struct rl_params *params;
	struct rl_bucket *shared;	/* per rule: the bucket; per source: overflow */
	struct rl_limit_stats *lstats;
	struct rl_source *src;	/* sets of RL_WAYS */
	uint32_t set_mask;
	uint32_t limit_count;
	uint64_t seed;
	uint8_t v6_mask[16];
	struct rl_stats stats;
};

/* Derive a bucket from a limit (exposed for tests and `rulec dump`).
 * share: the number of workers the limit is split over (>= 1).
 * -1 for interval_ms = 0. A burst of 0 is taken as 1. */
int rl_params_from_limit(struct rl_params *p, const struct rfw_limit *l,
			 uint32_t share);

/* limits: the artifact's RFW_SEC_LIMITS (count entries). 0, or -1 with
 * errno EINVAL / ENOMEM. */
int rl_table_init(struct rl_table *t, const struct rfw_limit *limits,
		  uint32_t count, const struct rl_config *cfg);
void rl_table_free(struct rl_table *t);

/* Reload: carry the state of `from` (the running table) into `to` (made
 * by rl_table_init for the new policy). fwd[l], for each limit l of
 * `from` (1..from->limit_count), is the limit of `to` that continues it,
 * or 0: its per-rule bucket and stats move over, and its per-source
 * entries are renumbered (or emptied when 0). With the same limits and
 * source_slots the two tables swap their source arrays, so `from` keeps
 * only empty state, to be freed with it; otherwise each source entry is
 * moved to its set in `to` (one a full set has no room for restarts
 * full). fwd NULL: nothing continues (all start full). */
void rl_table_carry(struct rl_table *to, struct rl_table *from, const uint32_t *fwd);

/* Charge one packet of key k to limit number `limit` (1-based, as
 * rfw_rule.limit; 0 = the rule has none) at time now_ns (monotonic;
 * a time before the bucket's last update counts as no time passed).
 * 1: within the limit; 0: over it (counted as excess). An out-of-range
 * limit is denied and counted in bad_limit (fail closed). */
int rl_allow(struct rl_table *t, uint32_t limit, const struct pkt_key *k,
	     uint64_t now_ns);

#endif
