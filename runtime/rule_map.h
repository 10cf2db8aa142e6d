/* Which rule of a new policy continues each rule of the running one, by
 * name (rulec gives every rule a unique name; unnamed ones are "rule-N"
 * after their place). Reload uses the map to keep counters, conntrack's
 * rule of each flow and rate-limit state with the rule they belong to. */
#ifndef RAMPART_RULE_MAP_H
#define RAMPART_RULE_MAP_H

#include <stdint.h>
#include "artifact.h"

/* A policy's rule names, indexed when the artifact is loaded (it depends
 * on that artifact alone), so that pairing it with the running policy
 * reads no string in the usual case: per rule a 128-bit hash of its name
 * (two independent 64-bit hashes; names are taken as equal when both
 * agree: a false match needs a collision of both, about 2^-128 a pair),
 * and a hash table from name to rule. */
#define RULE_MAP_GONE 0xffffffffu

struct rule_index {
	uint64_t (*hash)[2];	/* [1..rule_count] */
	uint32_t *slot;		/* rule numbers, 0 = empty */
	uint32_t mask;
	uint32_t count;
};
int rule_index_build(struct rule_index *ix, const struct rfw_view *v);	/* 0 or -1 */
void rule_index_free(struct rule_index *ix);
/* The rule of ix named `name`, or RULE_MAP_GONE (rule 0, the default,
 * is "default" and not in the index: callers map it themselves). */
uint32_t rule_index_lookup(const struct rule_index *ix, const char *name);

/* map[r] for r in 0..from->policy->rule_count: the rule of `to` with r's
 * name, or RULE_MAP_GONE; map[0] = 0 (the default continues the
 * default). from_ix, to_ix: rule_index_build of each, or NULL to make them
 * here. malloc'ed; NULL on allocation failure. Cost: one sequential pass
 * over the hashes that follows the usual edits (rules inserted, removed
 * or changed in place), and a table lookup for each rule it could not
 * place. */
uint32_t *rule_map_build(const struct rfw_view *from, const struct rule_index *from_ix,
			 const struct rfw_view *to, const struct rule_index *to_ix);

/* fwd[l] for the limits of `from` (1..limit_count; [0] unused): the limit
 * of `to` that continues l (same rule by name, same rate, burst, interval
 * and per), or 0. malloc'ed; NULL on allocation failure. */
uint32_t *rule_map_limits(const struct rfw_view *from, const struct rfw_view *to,
			  const uint32_t *map);

#endif
