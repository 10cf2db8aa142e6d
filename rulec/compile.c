/* From resolved rules to the artifact: rule-level checks (ports against
 * protocols, proto against service, address families), expansion into the
 * cross product of classifier entries, and the .rfw sections. */
#include "rulec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cls_hs.h"
#include "policy.h"

/* Far beyond any hand-written policy; stops a typo'd cross product from
 * eating the machine before the classifier even sees it. */
#define MAX_ENTRIES (1u << 24)

/* One protocol/destination-port alternative of a rule. */
struct alt {
	int proto;		/* -1: any */
	int has_dport;
	struct range dport;
};
typedef VEC(struct alt) alt_list;

struct out {
	VEC(struct rfw_acl_entry) acl;
	VEC(struct rfw_rule) rules;
	VEC(char) strings;
};

static uint32_t add_string(struct out *o, const char *s)
{
	uint32_t off = (uint32_t)o->strings.n;

	for (size_t i = 0; i <= strlen(s); i++)
		VEC_PUSH(o->strings, s[i]);
	return off;
}

static unsigned families(const pfx_list *l)
{
	unsigned f = 0;

	for (size_t i = 0; i < l->n; i++)
		f |= l->v[i].family == 4 ? 1u : 2u;
	return f;
}

static const char *family_words(unsigned f)
{
	return f == 1 ? "IPv4 only" : f == 2 ? "IPv6 only" : "mixed";
}

/* The protocol/dport alternatives, or -1 after reporting why none fit. */
static int rule_alts(struct policy *pol, struct rule *r, alt_list *alts)
{
	char pbuf[8];

	if (r->has_svc) {
		if (r->has_dport) {
			ytree_error(pol->d, r->dport_node,
				    "rule '%s': 'port' and 'service' cannot both be given in 'to'; the service sets the destination port",
				    r->name);
			return -1;
		}
		for (size_t i = 0; i < r->svc.n; i++) {
			const struct svc_item *it = &r->svc.v[i];
			struct alt a = {it->proto, it->has_ports, {it->lo, it->hi}};

			/* proto narrows a service to the items of that protocol. */
			if (r->proto >= 0 && it->proto != r->proto)
				continue;
			VEC_PUSH(*alts, a);
		}
		if (alts->n == 0 && r->proto >= 0) {
			ytree_error(pol->d, r->proto_node,
				    "rule '%s': proto '%s' does not agree with any protocol of its service",
				    r->name, val_proto_name(r->proto, pbuf, sizeof(pbuf)));
			return -1;
		}
	} else if (r->has_dport) {
		for (size_t i = 0; i < r->dport.n; i++) {
			struct alt a = {r->proto, 1, r->dport.v[i]};

			VEC_PUSH(*alts, a);
		}
	} else {
		struct alt a = {r->proto, 0, {0, 0}};

		VEC_PUSH(*alts, a);
	}
	if (alts->n == 0) {
		ytree_error(pol->d, r->has_svc ? r->svc_node : r->dport_node,
			    "rule '%s' can never match: the list is empty", r->name);
		return -1;
	}
	/* A port only exists for TCP, UDP and SCTP: a port with any other
	 * protocol would be an entry that can never match. */
	for (size_t i = 0; i < alts->n; i++) {
		const struct alt *a = &alts->v[i];
		int portless = a->proto >= 0 && !val_proto_has_ports(a->proto);

		if (portless && (r->has_sport || a->has_dport)) {
			ytree_error(pol->d, r->has_sport ? r->sport_node : r->dport_node,
				    "rule '%s': a port needs a protocol with ports (tcp, udp, sctp); '%s' has none",
				    r->name, val_proto_name(a->proto, pbuf, sizeof(pbuf)));
			return -1;
		}
	}
	return 0;
}

static int rule_check_sets(struct policy *pol, struct rule *r)
{
	unsigned fs, fd;

	if (r->has_src && r->src.n == 0) {
		ytree_error(pol->d, r->src_node, "rule '%s' can never match: its 'from' network is empty",
			    r->name);
		return -1;
	}
	if (r->has_dst && r->dst.n == 0) {
		ytree_error(pol->d, r->dst_node, "rule '%s' can never match: its 'to' network is empty",
			    r->name);
		return -1;
	}
	if (r->has_sport && r->sport.n == 0) {
		ytree_error(pol->d, r->sport_node, "rule '%s' can never match: the port list is empty",
			    r->name);
		return -1;
	}
	fs = families(&r->src);
	fd = families(&r->dst);
	if (r->has_src && r->has_dst && !(fs & fd)) {
		ytree_error(pol->d, r->dst_node,
			    "rule '%s' can never match: from is %s and to is %s", r->name,
			    family_words(fs), family_words(fd));
		return -1;
	}
	return 0;
}

static void set_addr(uint8_t *addr, uint8_t *len, uint8_t *family, const struct prefix *p)
{
	memcpy(addr, p->addr, 16);
	*len = p->len;
	*family = p->family;
}

/* ICMP is IPv4's and ICMPv6 is IPv6's: an entry pairing one with the other
 * family is as impossible as an IPv4 source with an IPv6 destination. */
static int icmp_mismatch(int proto, uint8_t family)
{
	return (proto == 1 && family == 6) || (proto == 58 && family == 4);
}

/* src × dst × alternative × sport: one entry each, skipping the address
 * pairs of different families and ICMP of the wrong family. */
static int expand_rule(struct policy *pol, struct rule *r, uint32_t num, struct out *o)
{
	alt_list alts = {0};
	size_t ns = r->has_src ? r->src.n : 1, nd = r->has_dst ? r->dst.n : 1;
	size_t np = r->has_sport ? r->sport.n : 1, first = o->acl.n;
	int rc = -1, skipped_icmp = -1;

	if (rule_check_sets(pol, r) < 0 || rule_alts(pol, r, &alts) < 0)
		goto out;
	if ((double)ns * nd * alts.n * np + o->acl.n > MAX_ENTRIES) {
		ytree_error(pol->d, r->node, "rule '%s' expands to more than %u classifier entries",
			    r->name, MAX_ENTRIES);
		goto out;
	}
	for (size_t s = 0; s < ns; s++)
		for (size_t d = 0; d < nd; d++) {
			const struct prefix *sp = r->has_src ? &r->src.v[s] : NULL;
			const struct prefix *dp = r->has_dst ? &r->dst.v[d] : NULL;

			if (sp && dp && sp->family != dp->family)
				continue;
			for (size_t a = 0; a < alts.n; a++)
				for (size_t p = 0; p < np; p++) {
					const struct alt *al = &alts.v[a];
					struct rfw_acl_entry e = {.rule = num};
					uint8_t fam = 0;

					if (sp)
						set_addr(e.src, &e.src_len, &fam, sp);
					if (dp)
						set_addr(e.dst, &e.dst_len, &fam, dp);
					e.family = fam;
					if (al->proto >= 0) {
						e.flags |= RFW_ACL_PROTO;
						e.proto = (uint8_t)al->proto;
					}
					/* A side the rule leaves open matches any port. */
					if (r->has_sport || al->has_dport) {
						e.flags |= RFW_ACL_PORTS;
						e.sport_hi = e.dport_hi = 65535;
						if (r->has_sport) {
							e.sport_lo = r->sport.v[p].lo;
							e.sport_hi = r->sport.v[p].hi;
						}
						if (al->has_dport) {
							e.dport_lo = al->dport.lo;
							e.dport_hi = al->dport.hi;
						}
					}
					if (icmp_mismatch(al->proto, fam)) {
						skipped_icmp = al->proto;
						continue;
					}
					VEC_PUSH(o->acl, e);
				}
		}
	if (o->acl.n == first && skipped_icmp >= 0) {
		int v6 = skipped_icmp == 1;

		ytree_error(pol->d, r->proto_node ? r->proto_node : r->svc_node,
			    "rule '%s' can never match: its addresses are IPv%c only and '%s' is IPv%c only (use %s)",
			    r->name, v6 ? '6' : '4', v6 ? "icmp" : "icmpv6", v6 ? '4' : '6',
			    v6 ? "icmpv6" : "icmp");
		goto out;
	}
	rc = 0;
out:
	free(alts.v);
	return rc;
}

/* The linear entry list (the reference) plus the HyperSplit trees built
 * over it (runtime/cls_hs.h): the workers and `rulec query` use the trees,
 * through cls_table_init, whenever the artifact carries them. */
static void *build_artifact(struct policy *pol, struct out *o, size_t *len)
{
	struct rfw_policy p = {.rule_count = (uint32_t)pol->rules.n,
			       .default_action = pol->default_action};
	struct rfw_section_in secs[8] = {
		{RFW_SEC_POLICY, sizeof(p), &p, sizeof(p), 1},
		{RFW_SEC_STRINGS, 1, o->strings.v, o->strings.n, o->strings.n},
		{RFW_SEC_RULES, sizeof(struct rfw_rule), o->rules.v,
		 o->rules.n * sizeof(struct rfw_rule), o->rules.n},
		{RFW_SEC_ACL, sizeof(struct rfw_acl_entry), o->acl.v,
		 o->acl.n * sizeof(struct rfw_acl_entry), o->acl.n},
		{RFW_SEC_SOURCE, 1, pol->source, strlen(pol->source) + 1,
		 strlen(pol->source) + 1},
	};
	struct cls_hs_built hs;
	void *buf;

	if (cls_hs_build(&hs, o->acl.v, (uint32_t)o->acl.n, NULL) < 0)
		return NULL;
	cls_hs_sections(&hs, &secs[5]);
	buf = rfw_build(secs, 8, RFW_FEAT_ACL_LINEAR | RFW_FEAT_ACL_HSPLIT, len);
	cls_hs_free(&hs);
	return buf;
}

unsigned rulec_compile(const char *path, FILE *diag, void **buf, size_t *len)
{
	struct diag d = {.file = path, .out = diag};
	struct policy pol;
	struct out o = {0};
	struct rfw_rule def = {0};

	*buf = NULL;
	*len = 0;
	policy_load(&pol, path, &d);
	def.name_off = add_string(&o, "default");
	def.action = pol.default_action;
	VEC_PUSH(o.rules, def);
	for (size_t i = 0; i < pol.rules.n; i++) {
		struct rule *r = &pol.rules.v[i];
		struct rfw_rule rr = {.action = r->action, .first_entry = (uint32_t)o.acl.n};

		/* Rules with parse errors were reported already; checking their
		 * meaning too would only add noise. */
		if (r->bad || expand_rule(&pol, r, (uint32_t)(i + 1), &o) < 0)
			continue;
		rr.name_off = add_string(&o, r->name);
		rr.entry_count = (uint32_t)(o.acl.n - rr.first_entry);
		VEC_PUSH(o.rules, rr);
	}
	if (d.errors == 0) {
		*buf = build_artifact(&pol, &o, len);
		if (!*buf)
			diag_error(&d, 0, 0, "out of memory building the artifact");
	}
	diag_flush(&d);
	free(o.acl.v);
	free(o.rules.v);
	free(o.strings.v);
	policy_free(&pol);
	return d.errors;
}

int rulec_compile_file(const char *path, const char *out, FILE *diag)
{
	void *buf;
	size_t len;
	unsigned errors = rulec_compile(path, diag, &buf, &len);

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
