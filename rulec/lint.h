/* Rule warnings (shadowed, redundant, never matching) for rulec, and NAT
 * rules shadowed by earlier ones. */
#ifndef RULEC_LINT_H
#define RULEC_LINT_H

#include <stdint.h>
#include "artifact.h"
#include "policy.h"

/* Each address set's prefixes (index = set number): the analysis spells
 * small sets out as prefixes, so that `src: ten` and `src: "!ten"`
 * together cover a rule. */
struct lint_sets {
	const pfx_list *const *pfx;
	size_t count;
};

/* Warn (at each rule's position) about rules[1..rule_count] over their
 * compiled entries. Returns the number of rules the analysis gave up on
 * (too costly to decide), or -1 when memory ran out. */
int lint_rules(struct policy *pol, const struct rfw_acl_entry *acl, uint32_t count,
	       const struct rfw_rule *rules, uint32_t rule_count, const char *strings,
	       const struct lint_sets *sets);

/* The same for NAT rules nat[1..nat_count] (entries in acl): a NAT rule
 * whose every packet an earlier one of its list (DNAT; SNAT and
 * masquerade) takes first. */
int lint_nat(struct policy *pol, const struct rfw_acl_entry *acl,
	     const struct rfw_nat_rule *nat, uint32_t nat_count, const char *strings,
	     const struct lint_sets *sets);

#endif
