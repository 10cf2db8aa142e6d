/* Rule warnings from the compiled entries: rules never reached (fully
 * shadowed by earlier ones), rules whose removal changes nothing, rules
 * that cannot match. The geometry is rulec/analyze.c's; this file only
 * turns its findings into positioned warnings (errors with --strict). */
#include "lint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"

struct lint_ctx {
	struct policy *pol;
	const struct rfw_rule *rules;
	const char *strings;
};

static const char *rule_name(const struct lint_ctx *c, uint32_t r)
{
	return r ? c->strings + c->rules[r].name_off : "default";
}

/* "'a', 'b' and 'c'" (at most 4 named, then "and N more"). */
static void name_list(const struct lint_ctx *c, const uint32_t *r, uint32_t n, char *out,
		      size_t len)
{
	size_t at = 0;

	out[0] = '\0';
	for (uint32_t i = 0; i < n && at < len; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " and " : ", ";

		if (i == 4) {
			snprintf(out + at, len - at, " and %u more", n - 4);
			return;
		}
		at += (size_t)snprintf(out + at, len - at, "%s'%s'", sep, rule_name(c, r[i]));
	}
}

static void report(void *ctx, const struct analyze_finding *f)
{
	struct lint_ctx *c = ctx;
	char names[512];

	name_list(c, f->others, f->other_count, names, sizeof(names));
	switch (f->kind) {
	case ANALYZE_SHADOWED:
		diag_warn_at_rule(c->pol, f->rule,
				  "rule '%s' is never reached: every packet it matches is matched "
				  "first by rule%s %s; remove it or move it above %s",
				  rule_name(c, f->rule), f->other_count > 1 ? "s" : "", names,
				  f->other_count > 1 ? "them" : "it");
		break;
	case ANALYZE_REDUNDANT:
		/* POLICY.md asks about a later rule of the same action. An
		 * explicit drop before a default drop is common on purpose
		 * (to name and count those packets): not warned about. */
		if (f->other_count == 1 && f->others[0] == 0)
			break;
		diag_warn_at_rule(c->pol, f->rule,
				  "rule '%s' is redundant: without it its packets get the same "
				  "action from rule%s %s; remove it (judged one rule at a time)",
				  rule_name(c, f->rule), f->other_count > 1 ? "s" : "", names);
		break;
	case ANALYZE_NEVER_MATCHES:
		diag_warn_at_rule(c->pol, f->rule, "rule '%s' can never match any packet",
				  rule_name(c, f->rule));
		break;
	}
}

int lint_rules(struct policy *pol, const struct rfw_acl_entry *acl, uint32_t count,
	       const struct rfw_rule *rules, uint32_t rule_count, const char *strings)
{
	struct lint_ctx c = {pol, rules, strings};
	uint8_t *actions = malloc((size_t)rule_count + 1);
	int given_up;

	if (!actions)
		return -1;
	/* a rule's own limit or log is part of its verdict: dropping the
	 * rule would lift the limit or lose the log */
	for (uint32_t r = 0; r <= rule_count; r++)
		actions[r] = (uint8_t)(rules[r].action |
				       (rules[r].limit || (rules[r].flags & RFW_RULE_LOG)
						? ANALYZE_UNIQUE : 0));
	given_up = analyze_rules(acl, count, rule_count, actions, NULL, report, &c);
	free(actions);
	return given_up;
}
