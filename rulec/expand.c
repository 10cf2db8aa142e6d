/* From a resolved rule (or NAT match) to classifier entries: rule-level
 * checks (ports against protocols, proto against service, ICMP types and
 * TCP flags against protocols, address families) and expansion into the
 * cross product of source × destination × protocol alternative × source
 * port. Large, negated and file networks are address sets: one entry. */
#include "expand.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Far beyond any hand-written policy; stops a typo'd cross product from
 * eating the machine before the classifier even sees it. */
#define MAX_ENTRIES (1u << 24)

/* One protocol/destination-port alternative of a rule. */
struct alt {
	int proto;		/* -1: any */
	int has_dport;
	struct range dport;
	int icmp_type, icmp_code;	/* -1: any */
};
typedef VEC(struct alt) alt_list;

/* One address alternative of a side: a prefix, a set, or anything. */
struct addr_alt {
	const struct prefix *p;		/* NULL: none or a set */
	int is_set, negated;
	uint32_t set;
	unsigned fams;			/* bit 0 IPv4, bit 1 IPv6 */
};
typedef VEC(struct addr_alt) addr_list;

/* A rule that can never match is an error; a NAT rule that can never
 * match is a warning (POLICY.md), and simply gets no entries. */
static const char *what(const struct expand_ctx *x)
{
	return x->nat ? "NAT rule" : "rule";
}

static void never(struct policy *pol, const struct expand_ctx *x, yaml_node_t *at,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void never(struct policy *pol, const struct expand_ctx *x, yaml_node_t *at,
		  const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (x->nat)
		diag_warn_at(pol, at, "%s", text);
	else
		ytree_error(pol->d, at, "%s", text);
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

static void alt_icmp(struct alt *a, const struct svc_item *it)
{
	a->icmp_type = it->icmp_type;
	a->icmp_code = it->icmp_code;
}

/* The protocol/dport alternatives, or -1 after reporting why none fit. */
static int rule_alts(struct policy *pol, struct rule *r, const struct expand_ctx *x, alt_list *alts)
{
	char pbuf[8];

	if (r->has_svc) {
		if (r->to.has_port) {
			ytree_error(pol->d, r->to.port_node,
				    "rule '%s': 'port' and 'service' cannot both be given in 'to'; the service sets the destination port",
				    r->name);
			return -1;
		}
		for (size_t i = 0; i < r->svc.n; i++) {
			const struct svc_item *it = &r->svc.v[i];
			struct alt a = {it->proto, it->has_ports, {it->lo, it->hi}, -1, -1};

			alt_icmp(&a, it);
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
	} else if (r->to.has_port) {
		for (size_t i = 0; i < r->to.port.n; i++) {
			struct alt a = {r->proto, 1, r->to.port.v[i], -1, -1};

			VEC_PUSH(*alts, a);
		}
	} else {
		struct alt a = {r->proto, 0, {0, 0}, -1, -1};

		VEC_PUSH(*alts, a);
	}
	if (alts->n == 0) {
		never(pol, x, r->has_svc ? r->svc_node : r->to.port_node,
		      "%s '%s' can never match: the list is empty", what(x), r->name);
		return -1;
	}
	/* A port only exists for TCP, UDP and SCTP: a port with any other
	 * protocol would be an entry that can never match. */
	for (size_t i = 0; i < alts->n; i++) {
		const struct alt *a = &alts->v[i];
		int portless = a->proto >= 0 && !val_proto_has_ports(a->proto);

		if (portless && (r->from.has_port || a->has_dport)) {
			ytree_error(pol->d, r->from.has_port ? r->from.port_node : r->to.port_node,
				    "rule '%s': a port needs a protocol with ports (tcp, udp, sctp); '%s' has none",
				    r->name, val_proto_name(a->proto, pbuf, sizeof(pbuf)));
			return -1;
		}
	}
	return 0;
}

/* icmp_type and tcp_flags narrow protocols: each needs every alternative
 * to be of its protocol, or the rule would mean something else for the
 * others. */
static int rule_modifiers(struct policy *pol, struct rule *r, alt_list *alts)
{
	for (size_t i = 0; r->icmp_type && i < alts->n; i++) {
		struct alt *a = &alts->v[i];

		if (a->proto != 1 && a->proto != 58) {
			ytree_error(pol->d, r->icmp_node,
				    "rule '%s': icmp_type needs proto icmp or icmpv6 (or an icmp service)",
				    r->name);
			return -1;
		}
		if (a->icmp_type >= 0) {
			ytree_error(pol->d, r->icmp_node,
				    "rule '%s': its service already names an ICMP type; drop icmp_type or the type in the service",
				    r->name);
			return -1;
		}
		if (val_parse_icmp(r->icmp_type, a->proto, &a->icmp_type, &a->icmp_code) < 0) {
			ytree_error(pol->d, r->icmp_node,
				    "unknown %s type '%s'; expected a number 0-255[/CODE] or one of: %s",
				    a->proto == 1 ? "icmp" : "icmpv6", r->icmp_type,
				    val_icmp_names(a->proto));
			return -1;
		}
	}
	for (size_t i = 0; r->has_tcp && i < alts->n; i++) {
		if (alts->v[i].proto != 6) {
			ytree_error(pol->d, r->tcp_node,
				    "rule '%s': tcp_flags needs proto tcp (or a tcp-only service)", r->name);
			return -1;
		}
	}
	return 0;
}

/* The address alternatives of one side. */
static int side_addrs(struct policy *pol, struct rule *r, struct side *s, int to,
		      struct expand_ctx *x, addr_list *out)
{
	struct netval *nv = &s->net;

	if (!s->has_net) {
		struct addr_alt a = {.fams = 3};

		VEC_PUSH(*out, a);
		return 0;
	}
	if ((!nv->negated && nv->pfx.n == 0) || netval_negates_everything(nv)) {
		never(pol, x, s->net_node, "%s '%s' can never match: its '%s' network is empty",
		      what(x), r->name, to ? "to" : "from");
		return -1;
	}
	if (nv->negated || nv->from_file || nv->pfx.n > SET_MIN_PREFIXES) {
		struct addr_alt a = {.is_set = 1, .negated = nv->negated};
		struct net_def *def = nv->def >= 0 ? &pol->nets.v[nv->def] : NULL;
		long idx;

		/* A named network is one set however many rules use it. */
		if (def && def->set) {
			idx = (long)def->set - 1;
		} else {
			idx = sets_add(&x->ld, expand_string(x, def ? def->name : ""), &nv->pfx);
			if (idx < 0) {
				ytree_error(pol->d, s->net_node, "out of memory building an address set");
				return -1;
			}
			VEC_PUSH(x->set_pfx, &nv->pfx);
			if (def)
				def->set = (uint32_t)idx + 1;
		}
		a.set = (uint32_t)idx;
		a.fams = nv->negated ? 3 : families(&nv->pfx);
		VEC_PUSH(*out, a);
		return 0;
	}
	for (size_t i = 0; i < nv->pfx.n; i++) {
		struct addr_alt a = {.p = &nv->pfx.v[i], .fams = nv->pfx.v[i].family == 4 ? 1u : 2u};

		VEC_PUSH(*out, a);
	}
	return 0;
}

static unsigned alt_fams(const addr_list *l)
{
	unsigned f = 0;

	for (size_t i = 0; i < l->n; i++)
		f |= l->v[i].fams;
	return f;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* The address part of an entry; 0 when the families of the two sides
 * and the rule cannot meet. */
static int put_addrs(struct rfw_acl_entry *e, const struct addr_alt *s, const struct addr_alt *d,
		     uint8_t rule_family)
{
	unsigned f = s->fams & d->fams;

	if (rule_family)
		f &= rule_family == 4 ? 1u : 2u;
	if (!f)
		return 0;
	e->family = f == 1 ? 4 : f == 2 ? 6 : 0;
	if (s->p) {
		memcpy(e->src, s->p->addr, 16);
		e->src_len = s->p->len;
	} else if (s->is_set) {
		put_le32(e->src, s->set);
		e->flags |= RFW_ACL_SRC_SET | (s->negated ? RFW_ACL_SRC_NOT : 0);
	}
	if (d->p) {
		memcpy(e->dst, d->p->addr, 16);
		e->dst_len = d->p->len;
	} else if (d->is_set) {
		put_le32(e->dst, d->set);
		e->flags |= RFW_ACL_DST_SET | (d->negated ? RFW_ACL_DST_NOT : 0);
	}
	return 1;
}

/* ICMP is IPv4's and ICMPv6 is IPv6's: an entry pairing one with the other
 * family is as impossible as an IPv4 source with an IPv6 destination. */
static int icmp_mismatch(int proto, uint8_t family)
{
	return (proto == 1 && family == 6) || (proto == 58 && family == 4);
}

static void put_match(struct rfw_acl_entry *e, const struct rule *r, const struct alt *al,
		      size_t p)
{
	if (al->proto >= 0) {
		e->flags |= RFW_ACL_PROTO;
		e->proto = (uint8_t)al->proto;
	}
	/* A side the rule leaves open matches any port. */
	if (r->from.has_port || al->has_dport) {
		e->flags |= RFW_ACL_PORTS;
		e->sport_hi = e->dport_hi = 65535;
		if (r->from.has_port) {
			e->sport_lo = r->from.port.v[p].lo;
			e->sport_hi = r->from.port.v[p].hi;
		}
		if (al->has_dport) {
			e->dport_lo = al->dport.lo;
			e->dport_hi = al->dport.hi;
		}
	}
	if (al->icmp_type >= 0) {
		e->flags |= RFW_ACL_ICMP_TYPE;
		e->icmp_type = (uint8_t)al->icmp_type;
	}
	if (al->icmp_code >= 0) {
		e->flags |= RFW_ACL_ICMP_CODE;
		e->icmp_code = (uint8_t)al->icmp_code;
	}
	if (r->has_tcp) {
		e->flags |= RFW_ACL_TCP_FLAGS;
		e->tcp_mask = r->tcp_mask;
		e->tcp_value = r->tcp_value;
	}
	if (r->state_mask) {
		e->flags |= RFW_ACL_STATE;
		e->state_mask = r->state_mask;
	}
	if (r->from.has_if) {
		e->flags |= RFW_ACL_IN_IF;
		e->in_ifaces = r->from.ifaces;
	}
	if (r->to.has_if) {
		e->flags |= RFW_ACL_OUT_IF;
		e->out_ifaces = r->to.ifaces;
	}
}

int expand_rule(struct policy *pol, struct rule *r, uint32_t num, struct expand_ctx *x,
		acl_list *acl)
{
	alt_list alts = {0};
	addr_list src = {0}, dst = {0};
	size_t np = r->from.has_port ? r->from.port.n : 1, first = acl->n;
	int rc = -1, skipped_icmp = -1;
	unsigned fs, fd;

	if (r->from.has_port && r->from.port.n == 0) {
		never(pol, x, r->from.port_node, "%s '%s' can never match: the port list is empty",
		      what(x), r->name);
		goto out;
	}
	if (side_addrs(pol, r, &r->from, 0, x, &src) < 0 ||
	    side_addrs(pol, r, &r->to, 1, x, &dst) < 0)
		goto out;
	fs = alt_fams(&src);
	fd = alt_fams(&dst);
	if (r->from.has_net && r->to.has_net && !(fs & fd)) {
		never(pol, x, r->to.net_node, "%s '%s' can never match: from is %s and to is %s",
		      what(x), r->name, family_words(fs), family_words(fd));
		goto out;
	}
	if (r->family && !(fs & fd & (r->family == 4 ? 1u : 2u))) {
		never(pol, x, r->family_node ? r->family_node : r->node,
		      "%s '%s' can never match: family is ipv%c but its networks are %s", what(x),
		      r->name, r->family == 4 ? '4' : '6', family_words(fs & fd));
		goto out;
	}
	if (r->from.has_if && r->from.ifaces == 0) {
		never(pol, x, r->from.if_node, "%s '%s' can never match: its 'from' zone has no interfaces",
		      what(x), r->name);
		goto out;
	}
	if (r->to.has_if && r->to.ifaces == 0) {
		never(pol, x, r->to.if_node, "%s '%s' can never match: its 'to' zone has no interfaces",
		      what(x), r->name);
		goto out;
	}
	if (rule_alts(pol, r, x, &alts) < 0 || rule_modifiers(pol, r, &alts) < 0)
		goto out;
	if ((double)src.n * dst.n * alts.n * np + acl->n > MAX_ENTRIES) {
		ytree_error(pol->d, r->node, "rule '%s' expands to more than %u classifier entries",
			    r->name, MAX_ENTRIES);
		goto out;
	}
	for (size_t s = 0; s < src.n; s++)
		for (size_t d = 0; d < dst.n; d++)
			for (size_t a = 0; a < alts.n; a++)
				for (size_t p = 0; p < np; p++) {
					struct rfw_acl_entry e = {.rule = num};

					if (!put_addrs(&e, &src.v[s], &dst.v[d], r->family))
						continue;
					if (icmp_mismatch(alts.v[a].proto, e.family)) {
						skipped_icmp = alts.v[a].proto;
						continue;
					}
					put_match(&e, r, &alts.v[a], p);
					VEC_PUSH(*acl, e);
				}
	if (acl->n == first && skipped_icmp >= 0) {
		int v6 = skipped_icmp == 1;

		never(pol, x, r->proto_node ? r->proto_node : r->svc_node,
		      "%s '%s' can never match: its addresses are IPv%c only and '%s' is IPv%c only (use %s)",
		      what(x), r->name, v6 ? '6' : '4', v6 ? "icmp" : "icmpv6", v6 ? '4' : '6',
		      v6 ? "icmpv6" : "icmp");
		goto out;
	}
	if (acl->n == first) {
		never(pol, x, r->node, "%s '%s' can never match: no address family fits all of its fields",
		      what(x), r->name);
		goto out;
	}
	rc = 0;
out:
	free(alts.v);
	free(src.v);
	free(dst.v);
	return rc;
}

uint32_t expand_string(struct expand_ctx *x, const char *s)
{
	uint32_t off = (uint32_t)x->strings.n;
	size_t n = strlen(s) + 1;

	x->strings.v = vec_grow(x->strings.v, &x->strings.cap, x->strings.n + n, 1);
	memcpy(x->strings.v + x->strings.n, s, n);
	x->strings.n += n;
	return off;
}

/* Does rule r use only protocols with ports? For NAT port checks. */
int expand_ports_only(const struct rule *r)
{
	int any = 0;

	if (!r->has_svc)
		return r->proto >= 0 && val_proto_has_ports(r->proto);
	for (size_t i = 0; i < r->svc.n; i++) {
		if (r->proto >= 0 && r->svc.v[i].proto != r->proto)
			continue;
		if (!val_proto_has_ports(r->svc.v[i].proto))
			return 0;
		any = 1;
	}
	return any;
}
