/* Rule warnings from the compiled entries: rules never reached (fully
 * shadowed by earlier ones), rules whose removal changes nothing, rules
 * that cannot match. The geometry is rulec/analyze.c's; this file only
 * turns its findings into positioned warnings (errors with --strict). */
#include "lint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "cls.h"

/* Bounds on spelling address sets out for the analysis; a set whose
 * spelling is longer stays one condition, which only the very same
 * condition covers (analyze.c). */
#define SPELL_MAX_PIECES 256	/* prefixes of a set, or of what it leaves out */
#define SPELL_MAX_ENTRY 4096	/* entries one entry becomes */
/* Entries added in all: at most as many as the policy has (4,096 at
 * least), and 200,000. Each added entry is one more the analysis tests
 * every later one against: a 2,000-rule policy whose rules all name a
 * set of 200 prefixes became 200,000 entries, 70 times the time, and
 * the analysis ran out of its work bound before its last rules. */
#define SPELL_MIN_ADDED 4096
#define SPELL_MAX_ADDED 200000
/* prefix tests spent finding what negated sets leave out, in all: each
 * step reads the whole set, so a long set whose prefixes lie side by
 * side (65,536 /24s making up a /8: few pieces outside, half a million
 * steps inside) would cost steps x prefixes; about 50 ms */
#define SPELL_MAX_TESTS (1u << 24)

/* One set, or its complement, as prefixes: state 0 not tried yet, 1
 * spelled (v, n), -1 too long. Spelled in every entry that names it or
 * in none (off): an entry that keeps the set condition is only covered
 * by entries with the very same one, not by the set's prefixes. */
struct spelled {
	int state;
	struct prefix *v;
	size_t n;
	int off, decided;
	size_t cost;		/* entries it makes, an upper bound */
};

/* Does outer hold every address of inner? */
static int pfx_holds(const struct prefix *outer, const struct prefix *inner)
{
	return outer->family == inner->family && outer->len <= inner->len &&
	       cls_prefix_match(inner->addr, outer->addr, outer->len);
}

/* The prefixes of p's space no prefix of l holds, appended to s; -1 when
 * that takes more than SPELL_MAX_PIECES, or more prefix tests than *tests
 * has left. Splits p while a prefix of l lies strictly inside it. */
static int complement(const pfx_list *l, struct prefix p, struct spelled *s, size_t *tests)
{
	int inside = 0;
	struct prefix half = p;

	if (l->n > *tests)
		return -1;
	*tests -= l->n;
	for (size_t i = 0; i < l->n; i++) {
		if (pfx_holds(&l->v[i], &p))
			return 0;
		inside |= pfx_holds(&p, &l->v[i]);
	}
	if (!inside) {
		if (s->n == SPELL_MAX_PIECES)
			return -1;
		s->v[s->n++] = p;
		return 0;
	}
	half.len++;
	if (complement(l, half, s, tests) < 0)
		return -1;
	half.addr[p.len / 8] |= (uint8_t)(0x80u >> (p.len % 8));
	return complement(l, half, s, tests);
}

/* Set idx (negated: the addresses outside it) as prefixes, cached in c;
 * a negation's tests come out of *tests. */
static struct spelled *spell_set(struct spelled *c, const struct lint_sets *sets,
				 uint32_t idx, int negated, size_t *tests)
{
	struct spelled *s;
	const pfx_list *l;

	if (idx >= sets->count || !sets->pfx[idx])
		return NULL;
	s = &c[2 * (size_t)idx + !!negated];
	l = sets->pfx[idx];
	if (s->state == 0) {
		s->state = -1;
		s->v = malloc(SPELL_MAX_PIECES * sizeof(*s->v));
		if (!s->v)
			return NULL;
		if (!negated) {
			if (l->n <= SPELL_MAX_PIECES) {
				memcpy(s->v, l->v, l->n * sizeof(*s->v));
				s->n = l->n;
				s->state = 1;
			}
		} else {
			struct prefix all4 = {.family = 4}, all6 = {.family = 6};

			if (complement(l, all4, s, tests) == 0 && complement(l, all6, s, tests) == 0)
				s->state = 1;
		}
	}
	return s->state == 1 ? s : NULL;
}

static uint32_t le32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One side of x set to prefix p; 0 when p's family is not x's. */
static int put_piece(struct rfw_acl_entry *x, int dst, const struct prefix *p)
{
	if (x->family && x->family != p->family)
		return 0;
	x->family = p->family;
	x->flags &= (uint16_t)~(dst ? RFW_ACL_DST_SET | RFW_ACL_DST_NOT
				  : RFW_ACL_SRC_SET | RFW_ACL_SRC_NOT);
	memcpy(dst ? x->dst : x->src, p->addr, 16);
	*(dst ? &x->dst_len : &x->src_len) = p->len;
	return 1;
}

/* The spelled set of e's source (dst: destination), unless it is off. */
static struct spelled *side_set(struct spelled *c, const struct lint_sets *sets,
				const struct rfw_acl_entry *e, int dst, size_t *tests)
{
	uint16_t set = dst ? RFW_ACL_DST_SET : RFW_ACL_SRC_SET;
	uint16_t not = dst ? RFW_ACL_DST_NOT : RFW_ACL_SRC_NOT;
	struct spelled *s;

	if (!(e->flags & set))
		return NULL;
	s = spell_set(c, sets, le32_at(dst ? e->dst : e->src), e->flags & not, tests);
	return s && !s->off ? s : NULL;
}

/* Which sets are spelled out: none that would make one entry more than
 * SPELL_MAX_ENTRY, then in order of first use while what they make in
 * all fits in max_added. */
static void choose_sets(const struct rfw_acl_entry *acl, uint32_t count,
			const struct lint_sets *sets, struct spelled *cache, size_t max_added,
			size_t *tests)
{
	size_t added = 0;

	for (uint32_t i = 0; i < count; i++) {
		struct spelled *sp = side_set(cache, sets, &acl[i], 0, tests);
		struct spelled *dp = side_set(cache, sets, &acl[i], 1, tests);

		if (sp && dp && sp->n * dp->n > SPELL_MAX_ENTRY)
			sp->off = dp->off = 1;
	}
	for (uint32_t i = 0; i < count; i++) {
		struct spelled *sp = side_set(cache, sets, &acl[i], 0, tests);
		struct spelled *dp = side_set(cache, sets, &acl[i], 1, tests);
		size_t made = (sp ? sp->n : 1) * (dp ? dp->n : 1);

		if (sp)
			sp->cost += made;
		if (dp && dp != sp)
			dp->cost += made;
	}
	for (uint32_t i = 0; i < count; i++)
		for (int dst = 0; dst < 2; dst++) {
			struct spelled *s = side_set(cache, sets, &acl[i], dst, tests);

			if (!s || s->decided)
				continue;
			s->decided = 1;
			if (added + s->cost <= max_added)
				added += s->cost;
			else
				s->off = 1;
		}
}

/* The entries with their small address sets spelled out as prefixes
 * (a set's entry becomes one entry per prefix; "not in the set", one per
 * prefix of the rest), same rules, same order: what the analysis sees.
 * *out is malloc'ed; 0, or -1 when memory ran out. */
static int spell_out_sets(const struct rfw_acl_entry *acl, uint32_t count,
			  const struct lint_sets *sets, struct rfw_acl_entry **out,
			  uint32_t *out_count)
{
	struct spelled *cache = calloc(2 * sets->count + 1, sizeof(*cache));
	VEC(struct rfw_acl_entry) v = {0};
	size_t tests = SPELL_MAX_TESTS;
	size_t max_added = count < SPELL_MIN_ADDED ? SPELL_MIN_ADDED
			 : count > SPELL_MAX_ADDED ? SPELL_MAX_ADDED : count;

	if (!cache)
		return -1;
	choose_sets(acl, count, sets, cache, max_added, &tests);
	for (uint32_t i = 0; i < count; i++) {
		const struct rfw_acl_entry *e = &acl[i];
		const struct spelled *sp = side_set(cache, sets, e, 0, &tests);
		const struct spelled *dp = side_set(cache, sets, e, 1, &tests);
		size_t ns = sp ? sp->n : 1, nd = dp ? dp->n : 1;

		if (!sp && !dp) {
			VEC_PUSH(v, *e);
			continue;
		}
		for (size_t a = 0; a < ns; a++)
			for (size_t b = 0; b < nd; b++) {
				struct rfw_acl_entry x = *e;

				if ((!sp || put_piece(&x, 0, &sp->v[a])) &&
				    (!dp || put_piece(&x, 1, &dp->v[b])))
					VEC_PUSH(v, x);
			}
	}
	for (size_t k = 0; k < 2 * sets->count; k++)
		free(cache[k].v);
	free(cache);
	if (v.n > UINT32_MAX) {
		free(v.v);
		return -1;
	}
	*out = v.v;
	*out_count = (uint32_t)v.n;
	return 0;
}

struct lint_ctx {
	struct policy *pol;
	const struct rfw_rule *rules;
	const char *strings;
	/* NAT rules instead: nat[nat_of[r]] is the analysis's rule r */
	const struct rfw_nat_rule *nat;
	const uint32_t *nat_of;
};

static const char *rule_name(const struct lint_ctx *c, uint32_t r)
{
	if (c->nat)
		return c->strings + c->nat[c->nat_of[r]].name_off;
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
	if (c->nat) {
		/* a NAT rule that cannot match at all was warned at expansion */
		if (f->kind == ANALYZE_SHADOWED)
			diag_warn_at_nat(c->pol, c->nat_of[f->rule],
					 "NAT rule '%s' is never reached: every packet it matches is "
					 "matched first by NAT rule%s %s; remove it or move it above %s",
					 rule_name(c, f->rule), f->other_count > 1 ? "s" : "", names,
					 f->other_count > 1 ? "them" : "it");
		return;
	}
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
	       const struct rfw_rule *rules, uint32_t rule_count, const char *strings,
	       const struct lint_sets *sets)
{
	struct lint_ctx c = {.pol = pol, .rules = rules, .strings = strings};
	uint8_t *actions = malloc((size_t)rule_count + 1);
	struct rfw_acl_entry *spelled = NULL;
	uint32_t spelled_count = 0;
	int given_up;

	if (!actions || spell_out_sets(acl, count, sets, &spelled, &spelled_count) < 0) {
		free(actions);
		return -1;
	}
	/* a rule's own limit or log is part of its verdict: dropping the
	 * rule would lift the limit or lose the log */
	for (uint32_t r = 0; r <= rule_count; r++)
		actions[r] = (uint8_t)(rules[r].action |
				       (rules[r].limit || (rules[r].flags & RFW_RULE_LOG)
						? ANALYZE_UNIQUE : 0));
	given_up = analyze_rules(spelled, spelled_count, rule_count, actions, NULL, report, &c);
	free(spelled);
	free(actions);
	return given_up;
}

/* One NAT list (DNAT, or SNAT and masquerade: the runtime looks each up
 * apart, first match within it) renumbered 1..n for the analysis. */
static int lint_nat_list(struct lint_ctx *c, const struct rfw_acl_entry *acl, uint32_t nat_count,
			 int dnat, const struct lint_sets *sets)
{
	VEC(struct rfw_acl_entry) list = {0};
	uint32_t *nat_of = malloc(((size_t)nat_count + 1) * sizeof(*nat_of)), n = 0;
	struct rfw_acl_entry *spelled = NULL;
	uint32_t spelled_count = 0;
	uint8_t *actions = NULL;
	int given_up = -1;

	if (!nat_of)
		return -1;
	for (uint32_t r = 1; r <= nat_count; r++) {
		const struct rfw_nat_rule *nr = &c->nat[r];

		if ((nr->kind == RFW_NAT_DNAT) != dnat)
			continue;
		nat_of[++n] = r;
		for (uint32_t i = 0; i < nr->entry_count; i++) {
			struct rfw_acl_entry e = acl[nr->first_entry + i];

			e.rule = n;
			VEC_PUSH(list, e);
		}
	}
	/* every NAT rule translates its own way: none is redundant */
	actions = malloc((size_t)n + 1);
	if (actions && spell_out_sets(list.v, (uint32_t)list.n, sets, &spelled, &spelled_count) == 0) {
		memset(actions, ANALYZE_UNIQUE, (size_t)n + 1);
		c->nat_of = nat_of;
		given_up = analyze_rules(spelled, spelled_count, n, actions, NULL, report, c);
	}
	free(spelled);
	free(actions);
	free(list.v);
	free(nat_of);
	return given_up;
}

int lint_nat(struct policy *pol, const struct rfw_acl_entry *acl,
	     const struct rfw_nat_rule *nat, uint32_t nat_count, const char *strings,
	     const struct lint_sets *sets)
{
	struct lint_ctx c = {.pol = pol, .strings = strings, .nat = nat};
	int dnat_given_up = lint_nat_list(&c, acl, nat_count, 1, sets), snat_given_up;

	if (dnat_given_up < 0)
		return -1;
	snat_given_up = lint_nat_list(&c, acl, nat_count, 0, sets);
	return snat_given_up < 0 ? -1 : dnat_given_up + snat_given_up;
}
