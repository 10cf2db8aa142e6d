/* Rule-set analysis for rulec's warnings (POLICY.md "Compiler diagnostics"):
 * rules shadowed by earlier rules, rules redundant with later ones or with
 * the default, rules that can never match. Pure: compiled entries in,
 * findings out through a callback; no YAML, no I/O. */
#ifndef RULEC_ANALYZE_H
#define RULEC_ANALYZE_H

#include <stdint.h>

#include "artifact.h"

enum analyze_kind {
	ANALYZE_SHADOWED,	/* every packet of `rule` is taken by `others` first */
	ANALYZE_REDUNDANT,	/* removing `rule` changes no verdict; `others` = the
				 * later rules that take its packets, 0 = default */
	ANALYZE_NEVER_MATCHES,	/* no entries, or none any packet can satisfy */
};

struct analyze_finding {
	enum analyze_kind kind;
	uint32_t rule;		/* the rule the finding is about */
	const uint32_t *others;	/* ascending; valid during the callback only */
	uint32_t other_count;	/* 0 for NEVER_MATCHES */
};

/* Work bounds; a zero field takes its default. A rule whose analysis
 * would exceed them gets no finding and is counted as given up. */
struct analyze_limits {
	uint32_t max_boxes;	/* boxes alive in one subtraction (10,000) */
	uint64_t max_rule_work;	/* box tests + splits for one rule (2,000,000) */
	uint64_t max_total_work; /* for the whole run (500,000,000); past it the
				  * remaining rules are given up */
};

/* entries: sorted by rule, rules 1..rule_count (a rule with no entry is
 * NEVER_MATCHES). actions[r] = enum rfw_action of rule r, [0] = default,
 * or'd with ANALYZE_UNIQUE for a rule whose verdict no other rule gives
 * (its own rate limit, its log): never redundant, never the same as a
 * later rule's.
 * limits may be NULL. report() is called once per finding, in rule order.
 * Returns the number of rules given up on (>= 0), or -1 with errno
 * (ENOMEM, or EINVAL for an entry whose rule is out of order or range). */
#define ANALYZE_UNIQUE 0x80u

int analyze_rules(const struct rfw_acl_entry *entries, uint32_t count, uint32_t rule_count,
		  const uint8_t *actions, const struct analyze_limits *limits,
		  void (*report)(void *ctx, const struct analyze_finding *f), void *ctx);

#endif
