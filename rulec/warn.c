/* Warnings: things that compile but are probably not what the operator
 * meant (an unused object, an empty set). Printed "warning:", errors under
 * --strict (diag.strict). diag_warn_at_rule lets analysers such as rule
 * shadowing point at a rule by number, in whichever file it was written. */
#include "policy.h"

#include <stdarg.h>
#include <stdio.h>

static void warn_v(struct policy *pol, size_t file, const yaml_node_t *n, const char *fmt,
		   va_list ap)
{
	char text[1024], note[80];

	vsnprintf(text, sizeof(text), fmt, ap);
	ytree_note(n, note, sizeof(note));
	diag_warn_in(pol->d, file, ytree_line(n), ytree_col(n), "%s%s", text, note);
}

void diag_warn_at(struct policy *pol, yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	warn_v(pol, pol->d->cur, n, fmt, ap);
	va_end(ap);
}

void diag_warn_at_rule(struct policy *pol, uint32_t rule, const char *fmt, ...)
{
	va_list ap;
	const struct rule *r;

	if (rule == 0 || rule > pol->rules.n)
		return;
	r = &pol->rules.v[rule - 1];
	va_start(ap, fmt);
	warn_v(pol, pol->files.v[r->file].diag_file, r->node, fmt, ap);
	va_end(ap);
}

void diag_warn_at_nat(struct policy *pol, uint32_t nat, const char *fmt, ...)
{
	va_list ap;
	const struct nat_def *nd;

	if (nat == 0 || nat > pol->nats.n)
		return;
	nd = &pol->nats.v[nat - 1];
	va_start(ap, fmt);
	warn_v(pol, pol->files.v[nd->file].diag_file, nd->node, fmt, ap);
	va_end(ap);
}

int netval_negates_everything(const struct netval *v)
{
	int all4 = 0, all6 = 0;

	for (size_t i = 0; v->negated && i < v->pfx.n; i++)
		if (v->pfx.v[i].len == 0) {
			all4 |= v->pfx.v[i].family == 4;
			all6 |= v->pfx.v[i].family == 6;
		}
	return all4 && all6;
}

void warn_unused(struct policy *pol)
{
	for (size_t i = 0; i < pol->nets.n; i++) {
		const struct net_def *n = &pol->nets.v[i];
		size_t f = pol->files.v[n->file].diag_file;

		if (!n->used && !n->bad)
			diag_warn_in(pol->d, f, ytree_line(n->key), ytree_col(n->key),
				     "network '%s' is never used; remove it or use it in a rule", n->name);
		if (!n->bad && n->state == DEF_DONE && n->val.pfx.n == 0)
			diag_warn_in(pol->d, f, ytree_line(n->value), ytree_col(n->value),
				     "network '%s' is empty: %s", n->name,
				     n->val.negated ? "its negation matches every address"
						    : "a rule using it can never match");
		else if (!n->bad && n->state == DEF_DONE && netval_negates_everything(&n->val))
			diag_warn_in(pol->d, f, ytree_line(n->value), ytree_col(n->value),
				     "network '%s' is empty: it excludes every address (0.0.0.0/0 "
				     "and ::/0); a rule using it can never match", n->name);
	}
	for (size_t i = 0; i < pol->svcs.n; i++) {
		const struct svc_def *s = &pol->svcs.v[i];

		if (!s->used && !s->bad)
			diag_warn_in(pol->d, pol->files.v[s->file].diag_file, ytree_line(s->key),
				     ytree_col(s->key),
				     "service '%s' is never used; remove it or use it in a rule", s->name);
	}
	for (size_t i = 0; i < pol->zones.n; i++) {
		const struct zone_def *z = &pol->zones.v[i];

		if (!z->used)
			diag_warn_in(pol->d, pol->files.v[z->file].diag_file, ytree_line(z->key),
				     ytree_col(z->key),
				     "zone '%s' is never used; remove it or use it in a rule", z->name);
	}
}
