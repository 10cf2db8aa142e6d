/* Which rule of a new policy continues each rule of the running one, by
 * name (rulec gives every rule a unique name; unnamed ones are "rule-N"
 * after their place). Reload uses the map to keep counters, conntrack's
 * rule of each flow and rate-limit state with the rule they belong to. */
#ifndef RAMPART_RULE_MAP_H
#define RAMPART_RULE_MAP_H

#include <stdint.h>
#include "artifact.h"

/* map[r] for r in 0..from->policy->rule_count: the rule of `to` with r's
 * name, or RULE_MAP_GONE; map[0] = 0 (the default continues the
 * default). malloc'ed; NULL on allocation failure. Cost: one pass when
 * the names are in the same order (the usual edit), a hash otherwise. */
#define RULE_MAP_GONE 0xffffffffu
uint32_t *rule_map_build(const struct rfw_view *from, const struct rfw_view *to);

/* fwd[l] for the limits of `from` (1..limit_count; [0] unused): the limit
 * of `to` that continues l (same rule by name, same rate, burst, interval
 * and per), or 0. malloc'ed; NULL on allocation failure. */
uint32_t *rule_map_limits(const struct rfw_view *from, const struct rfw_view *to,
			  const uint32_t *map);

#endif
