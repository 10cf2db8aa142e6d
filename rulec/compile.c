/* From the resolved policy to the artifact: rules and NAT matches expanded
 * (expand.c), then every section of format 1.1 laid out: policy defaults,
 * rules with limits and positions, interfaces and zones, address sets and
 * LPM tables, NAT, routes, host bypass, and the HyperSplit trees. */
#include "rulec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cls_hs.h"
#include "expand.h"
#include "lint.h"

struct out {
	struct expand_ctx x;
	acl_list acl, nat_acl;
	VEC(struct rfw_rule) rules;
	VEC(struct rfw_rule_source) src;
	VEC(struct rfw_limit) limits;
	VEC(struct rfw_nat_rule) nat;
	VEC(struct rfw_interface) ifaces;
	VEC(struct rfw_zone) zones;
	VEC(struct rfw_route) routes;
	struct rfw_route_table rt;
	int has_rt;
};

static void compile_rules(struct policy *pol, struct out *o)
{
	struct rfw_rule def = {.name_off = expand_string(&o->x, "default"),
			       .action = pol->default_action};
	struct rfw_rule_source ds = {pol->defaults_pos.line, pol->defaults_pos.col};

	VEC_PUSH(o->rules, def);
	VEC_PUSH(o->src, ds);
	for (size_t i = 0; i < pol->rules.n; i++) {
		struct rule *r = &pol->rules.v[i];
		struct rfw_rule rr = {.action = r->action, .first_entry = (uint32_t)o->acl.n};
		struct rfw_rule_source rs = {ytree_line(r->node), ytree_col(r->node)};

		policy_enter(pol, r->file);
		/* Rules with parse errors were reported already; checking their
		 * meaning too would only add noise. */
		if (r->bad || expand_rule(pol, r, (uint32_t)(i + 1), &o->x, &o->acl) < 0)
			continue;
		rr.name_off = expand_string(&o->x, r->name);
		rr.entry_count = (uint32_t)(o->acl.n - rr.first_entry);
		rr.flags = r->log ? RFW_RULE_LOG : 0;
		if (r->has_limit) {
			r->limit.rule = (uint32_t)(i + 1);
			VEC_PUSH(o->limits, r->limit);
			rr.limit = (uint16_t)o->limits.n;
		}
		VEC_PUSH(o->rules, rr);
		VEC_PUSH(o->src, rs);
	}
	if (o->limits.n > UINT16_MAX)
		diag_error(pol->d, 0, 0, "more than %u rules have a limit", UINT16_MAX);
}

/* The match's family is the translation's: a NAT rule rewrites one family. */
static int nat_family(struct policy *pol, struct nat_def *nd)
{
	struct rule *m = &nd->match;
	unsigned f = 3, family_said = m->family;

	if (nd->kind == RFW_NAT_MASQUERADE) {
		/* Masquerade has no address to take the family from: IPv4,
		 * unless the match says IPv6. */
		if (m->family)
			nd->family = m->family;
		else if (m->from.has_net && !m->from.net.negated && m->from.net.pfx.n &&
			 !(m->from.net.pfx.v[0].family == 4))
			nd->family = 6;
		else
			nd->family = 4;
	}
	if (m->family && m->family != nd->family) {
		ytree_error(pol->d, m->family_node,
			    "NAT rule '%s': the match is ipv%u but it translates to IPv%u; use an IPv%u %s",
			    nd->name, m->family, nd->family, m->family,
			    nd->kind == RFW_NAT_DNAT ? "server" : "pool");
		return -1;
	}
	unsigned mixed = 0;

	for (int side = 0; side < 2; side++) {
		const struct side *s = side ? &m->to : &m->from;
		unsigned sf = 0;

		if (!s->has_net || s->net.negated)
			continue;
		for (size_t i = 0; i < s->net.pfx.n; i++)
			sf |= s->net.pfx.v[i].family == 4 ? 1u : 2u;
		f &= sf;
		mixed |= sf == 3;
	}
	if (!(f & (nd->family == 4 ? 1u : 2u))) {
		diag_warn_at(pol, nd->node,
			     "NAT rule '%s' can never match: its match has no IPv%u addresses and it translates IPv%u",
			     nd->name, nd->family, nd->family);
		return 1;
	}
	/* nftables' inet masquerade would take both families; this rule
	 * takes one, and the other's packets pass untranslated (said unless
	 * the rule names its family) */
	if (mixed && !family_said)
		diag_warn_at(pol, nd->node,
			     "NAT rule '%s' translates IPv%u only: the IPv%u addresses of its match pass "
			     "untranslated (a second NAT rule with family: ipv%u can translate them)",
			     nd->name, nd->family, nd->family == 4 ? 6 : 4, nd->family == 4 ? 6 : 4);
	m->family = nd->family;
	return 0;
}

static int nat_checks(struct policy *pol, struct nat_def *nd)
{
	struct rule *m = &nd->match;

	if (nd->kind == RFW_NAT_DNAT && !m->to.has_net) {
		ytree_error(pol->d, m->node,
			    "NAT rule '%s': dnat needs the address it translates; give match: {to: {network: ...}}",
			    nd->name);
		return -1;
	}
	if (nd->port_node && nd->kind == RFW_NAT_DNAT && !expand_ports_only(m)) {
		ytree_error(pol->d, nd->port_node,
			    "NAT rule '%s': a port needs a match on tcp, udp or sctp only (proto or service)",
			    nd->name);
		return -1;
	}
	if (nd->port_node && nd->kind != RFW_NAT_DNAT && (m->proto >= 0 || m->has_svc) &&
	    !expand_ports_only(m)) {
		ytree_error(pol->d, nd->port_node,
			    "NAT rule '%s': ports need a match on tcp, udp or sctp (or no protocol at all)",
			    nd->name);
		return -1;
	}
	return 0;
}

static void compile_nat(struct policy *pol, struct out *o)
{
	struct rfw_nat_rule zero = {0};

	if (pol->nats.n)
		VEC_PUSH(o->nat, zero);
	for (size_t i = 0; i < pol->nats.n; i++) {
		struct nat_def *nd = &pol->nats.v[i];
		struct rfw_nat_rule nr = {.kind = nd->kind, .family = nd->family,
					  .first_entry = (uint32_t)o->nat_acl.n,
					  .port_lo = nd->port_lo, .port_hi = nd->port_hi};
		int fam;

		policy_enter(pol, nd->file);
		if (nd->bad || nat_checks(pol, nd) < 0 || (fam = nat_family(pol, nd)) < 0)
			continue;
		o->x.nat = 1;
		if (fam == 0) {
			unsigned errors = diag_real_errors(pol->d);

			if (expand_rule(pol, &nd->match, (uint32_t)(i + 1), &o->x, &o->nat_acl) < 0) {
				if (diag_real_errors(pol->d) != errors)
					continue;
				/* Only warned: it stays, with no entries. */
				o->nat_acl.n = nr.first_entry;
				fam = 1;
			}
		}
		o->x.nat = 0;
		nr.family = nd->family;
		nr.name_off = expand_string(&o->x, nd->name);
		nr.entry_count = (uint32_t)(o->nat_acl.n - nr.first_entry);
		memcpy(nr.addr_lo, nd->lo, 16);
		memcpy(nr.addr_hi, nd->hi, 16);
		VEC_PUSH(o->nat, nr);
	}
}

static void compile_objects(struct policy *pol, struct out *o)
{
	for (size_t i = 0; i < pol->zones.n; i++) {
		struct rfw_zone z = {expand_string(&o->x, pol->zones.v[i].name),
				     pol->zones.v[i].ifaces};

		VEC_PUSH(o->zones, z);
	}
	for (size_t i = 0; i < pol->ifaces.n; i++) {
		struct rfw_interface ifc = {.zone = pol->ifaces.v[i].zone};

		memcpy(ifc.name, pol->ifaces.v[i].name, sizeof(ifc.name));
		VEC_PUSH(o->ifaces, ifc);
	}
	if (pol->routes.n) {
		struct lpm_item *items = calloc(pol->routes.n, sizeof(*items));
		size_t n4 = 0, n6 = 0, n = pol->routes.n;

		if (!items) {
			fputs("rulec: out of memory\n", stderr);
			exit(2);
		}
		for (size_t i = 0; i < n; i++) {
			const struct rfw_route *r = &pol->routes.v[i].r;
			struct lpm_item it = {r->prefix, r->len, (uint32_t)i + 1};

			VEC_PUSH(o->routes, *r);
			if (r->family == 4)
				items[n4++] = it;
			else
				items[n - ++n6] = it;
		}
		if (lpm_data_add(&o->x.ld, 4, items, n4, &o->rt.v4) < 0 ||
		    lpm_data_add(&o->x.ld, 6, items + n - n6, n6, &o->rt.v6) < 0)
			diag_error(pol->d, 0, 0, "out of memory building the route table");
		o->has_rt = 1;
		free(items);
	}
}

#define SEC(t, arr, n) {t, sizeof(*(arr)), (arr), (uint64_t)(n) * sizeof(*(arr)), (n)}

/* The linear entry list (the reference) plus the HyperSplit trees built
 * over it (runtime/cls_hs.h): the workers and `rulec query` use the trees,
 * through cls_table_init, whenever the artifact carries them. */
/* A NAT kind's own classifier (kind 0 DNAT, 1 SNAT and masquerade), when
 * it has RFW_NAT_CLS_MIN entries or more: the kind's entries copied out
 * in order (*copy, the caller frees it) and the trees over them, as the
 * CLS_HS_SECTIONS + 1 sections at out. *copy NULL: none written. 0, or
 * -1 out of memory. */
static int nat_sections(const struct out *o, unsigned kind, struct rfw_acl_entry **copy,
			struct cls_hs_built *hs, struct rfw_section_in *out)
{
	static const uint32_t types[2][CLS_HS_SECTIONS + 1] = {
		{RFW_SEC_DNAT_ENTRIES, RFW_SEC_DNAT_TREES, RFW_SEC_DNAT_NODES, RFW_SEC_DNAT_LEAVES,
		 RFW_SEC_DNAT_CHILDREN, RFW_SEC_DNAT_LEAF_ENTRIES},
		{RFW_SEC_SNAT_ENTRIES, RFW_SEC_SNAT_TREES, RFW_SEC_SNAT_NODES, RFW_SEC_SNAT_LEAVES,
		 RFW_SEC_SNAT_CHILDREN, RFW_SEC_SNAT_LEAF_ENTRIES},
	};
	size_t count = 0;

	*copy = NULL;
	for (size_t e = 0; e < o->nat_acl.n; e++)
		count += (o->nat.v[o->nat_acl.v[e].rule].kind == RFW_NAT_DNAT) == !kind;
	if (count < RFW_NAT_CLS_MIN)
		return 0;
	*copy = malloc(count * sizeof(**copy));
	if (!*copy)
		return -1;
	count = 0;
	for (size_t e = 0; e < o->nat_acl.n; e++)
		if ((o->nat.v[o->nat_acl.v[e].rule].kind == RFW_NAT_DNAT) == !kind)
			(*copy)[count++] = o->nat_acl.v[e];
	if (cls_hs_build(hs, *copy, (uint32_t)count, NULL) < 0) {
		free(*copy);
		*copy = NULL;
		return -1;
	}
	out[0] = (struct rfw_section_in)SEC(types[kind][0], *copy, count);
	/* cls_hs_sections' order: trees, nodes, leaves, children, leaf entries */
	cls_hs_sections(hs, &out[1]);
	for (unsigned i = 1; i <= CLS_HS_SECTIONS; i++)
		out[i].type = types[kind][i];
	return 0;
}

static void *build_artifact(struct policy *pol, struct out *o, size_t *len)
{
	struct rfw_policy p = {.rule_count = (uint32_t)pol->rules.n,
			       .default_action = pol->default_action,
			       .stateful = pol->stateful,
			       .tcp_mss = pol->tcp_mss,
			       .rpf = pol->rpf,
			       .max_flows = pol->max_flows,
			       .nat_count = (uint32_t)pol->nats.n,
			       .route_count = (uint32_t)pol->routes.n,
			       .interface_count = (uint32_t)pol->ifaces.n};
	struct rfw_section_in secs[17 + 3 * (CLS_HS_SECTIONS + 1)] = {
		{RFW_SEC_POLICY, sizeof(p), &p, sizeof(p), 1},
		{RFW_SEC_STRINGS, 1, o->x.strings.v, o->x.strings.n, o->x.strings.n},
		SEC(RFW_SEC_RULES, o->rules.v, o->rules.n),
		SEC(RFW_SEC_ACL, o->acl.v, o->acl.n),
		{RFW_SEC_SOURCE, 1, pol->source, strlen(pol->source) + 1, strlen(pol->source) + 1},
		SEC(RFW_SEC_RULE_SOURCE, o->src.v, o->src.n),
		SEC(RFW_SEC_INTERFACES, o->ifaces.v, o->ifaces.n),
		SEC(RFW_SEC_ZONES, o->zones.v, o->zones.n),
		SEC(RFW_SEC_SETS, o->x.ld.sets.v, o->x.ld.sets.n),
		SEC(RFW_SEC_LPM_DATA, o->x.ld.words.v, o->x.ld.words.n),
		SEC(RFW_SEC_LIMITS, o->limits.v, o->limits.n),
		SEC(RFW_SEC_NAT_RULES, o->nat.v, o->nat.n),
		SEC(RFW_SEC_NAT_ACL, o->nat_acl.v, o->nat_acl.n),
		SEC(RFW_SEC_ROUTES, o->routes.v, o->routes.n),
		SEC(RFW_SEC_HOST_ADDRS, pol->host_addrs.v, pol->host_addrs.n),
		SEC(RFW_SEC_HOST_PASS, pol->host_pass.v, pol->host_pass.n),
	};
	uint32_t n = 16;
	struct cls_hs_built hs, nat_hs[2];
	struct rfw_acl_entry *nat_kind[2] = {NULL, NULL};
	int nat_built[2] = {0, 0};
	void *buf = NULL;

	memcpy(p.timeout, pol->timeout, sizeof(p.timeout));
	if (o->has_rt)
		secs[n++] = (struct rfw_section_in){RFW_SEC_ROUTE_TABLE, sizeof(o->rt), &o->rt,
						    sizeof(o->rt), 1};
	if (cls_hs_build(&hs, o->acl.v, (uint32_t)o->acl.n, NULL) < 0)
		return NULL;
	cls_hs_sections(&hs, &secs[n]);
	n += CLS_HS_SECTIONS;
	for (unsigned kind = 0; kind < 2; kind++) {
		if (nat_sections(o, kind, &nat_kind[kind], &nat_hs[kind], &secs[n]) < 0)
			goto out;
		nat_built[kind] = nat_kind[kind] != NULL;
		n += nat_built[kind] ? CLS_HS_SECTIONS + 1 : 0;
	}
	buf = rfw_build(secs, n,
			RFW_FEAT_ACL_LINEAR | RFW_FEAT_ACL_HSPLIT | RFW_FEAT_CLS_IFACE_KEY |
				(pol->tcp_mss ? RFW_FEAT_TCP_MSS : 0) |
				(pol->rpf ? RFW_FEAT_RPF : 0),
			len);
out:
	for (unsigned kind = 0; kind < 2; kind++) {
		if (nat_built[kind])
			cls_hs_free(&nat_hs[kind]);
		free(nat_kind[kind]);
	}
	cls_hs_free(&hs);
	return buf;
}

static void out_free(struct out *o)
{
	free(o->x.strings.v);
	free(o->x.set_pfx.v);
	lpm_data_free(&o->x.ld);
	free(o->acl.v);
	free(o->nat_acl.v);
	free(o->rules.v);
	free(o->src.v);
	free(o->limits.v);
	free(o->nat.v);
	free(o->ifaces.v);
	free(o->zones.v);
	free(o->routes.v);
}

unsigned rulec_compile_opts(const char *path, FILE *diag, const struct rulec_opts *opts,
			    void **buf, size_t *len)
{
	struct diag d = {.file = path, .out = diag, .strict = opts && opts->strict};
	struct policy pol;
	struct out o = {0};
	unsigned errors;

	*buf = NULL;
	*len = 0;
	policy_load(&pol, path, &d);
	if (pol.files.n) {
		struct lint_sets sets;

		compile_rules(&pol, &o);
		compile_nat(&pol, &o);
		compile_objects(&pol, &o);
		host_check_nat(&pol);
		sets = (struct lint_sets){o.x.set_pfx.v, o.x.set_pfx.n};
		/* Rules never reached, redundant or impossible: warnings
		 * from the expanded entries (only when they compiled; other
		 * warnings that --strict made errors do not stop them). */
		if (diag_real_errors(&d) == 0 &&
		    (lint_rules(&pol, o.acl.v, (uint32_t)o.acl.n, o.rules.v,
				(uint32_t)o.rules.n - 1, o.x.strings.v, &sets) < 0 ||
		     lint_nat(&pol, o.nat_acl.v, o.nat.v, (uint32_t)(o.nat.n ? o.nat.n - 1 : 0),
			      o.x.strings.v, &sets) < 0))
			diag_error(&d, 0, 0, "out of memory analysing the rules");
	}
	if (d.errors == 0) {
		*buf = build_artifact(&pol, &o, len);
		if (!*buf)
			diag_error(&d, 0, 0, "out of memory building the artifact");
	}
	if (opts && opts->warnings)
		*opts->warnings = d.warnings;
	diag_free(&d);
	out_free(&o);
	policy_free(&pol);
	errors = d.errors;
	if (errors) {
		free(*buf);
		*buf = NULL;
		*len = 0;
	}
	return errors;
}

unsigned rulec_compile(const char *path, FILE *diag, void **buf, size_t *len)
{
	return rulec_compile_opts(path, diag, NULL, buf, len);
}

int rulec_compile_file_opts(const char *path, const char *out, FILE *diag,
			    const struct rulec_opts *opts)
{
	void *buf;
	size_t len;
	unsigned errors = rulec_compile_opts(path, diag, opts, &buf, &len);

	if (errors) {
		fprintf(diag, "rulec: %u error%s, nothing written\n", errors, errors == 1 ? "" : "s");
		return 1;
	}
	if (out && rfw_write_file(out, buf, len) < 0) {
		fprintf(diag, "rulec: %s: %s, nothing written\n", out, strerror(errno));
		free(buf);
		return 1;
	}
	free(buf);
	return 0;
}

int rulec_compile_file(const char *path, const char *out, FILE *diag)
{
	return rulec_compile_file_opts(path, out, diag, NULL);
}
