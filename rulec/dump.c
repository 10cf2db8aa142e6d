/* `rulec dump`: a human summary of a verified artifact, so an operator can
 * see what the runtime will load without reading YAML or hex: every
 * section, the rules, and the objects (interfaces, zones, sets, limits,
 * NAT, routes, host bypass). */
#include "rulec.h"

#include <arpa/inet.h>
#include <inttypes.h>

#include "lpm.h"

static const char *const section_names[] = {
	[RFW_SEC_STRINGS] = "strings", [RFW_SEC_POLICY] = "policy", [RFW_SEC_RULES] = "rules",
	[RFW_SEC_ACL] = "acl", [RFW_SEC_SOURCE] = "source", [RFW_SEC_CLS_TREES] = "cls-trees",
	[RFW_SEC_CLS_NODES] = "cls-nodes", [RFW_SEC_CLS_LEAVES] = "cls-leaves",
	[RFW_SEC_INTERFACES] = "interfaces", [RFW_SEC_ZONES] = "zones", [RFW_SEC_SETS] = "sets",
	[RFW_SEC_LPM_DATA] = "lpm-data", [RFW_SEC_LIMITS] = "limits",
	[RFW_SEC_NAT_RULES] = "nat-rules", [RFW_SEC_NAT_ACL] = "nat-acl",
	[RFW_SEC_ROUTES] = "routes", [RFW_SEC_ROUTE_TABLE] = "route-table",
	[RFW_SEC_HOST_ADDRS] = "host-addrs", [RFW_SEC_HOST_PASS] = "host-pass",
	[RFW_SEC_RULE_SOURCE] = "rule-source", [RFW_SEC_CLS_CHILDREN] = "cls-children",
	[RFW_SEC_CLS_LEAF_ENTRIES] = "cls-leaf-entries",
	[RFW_SEC_DNAT_ENTRIES] = "dnat-entries", [RFW_SEC_DNAT_TREES] = "dnat-trees",
	[RFW_SEC_DNAT_NODES] = "dnat-nodes", [RFW_SEC_DNAT_LEAVES] = "dnat-leaves",
	[RFW_SEC_DNAT_CHILDREN] = "dnat-children", [RFW_SEC_DNAT_LEAF_ENTRIES] = "dnat-leaf-entries",
	[RFW_SEC_SNAT_ENTRIES] = "snat-entries", [RFW_SEC_SNAT_TREES] = "snat-trees",
	[RFW_SEC_SNAT_NODES] = "snat-nodes", [RFW_SEC_SNAT_LEAVES] = "snat-leaves",
	[RFW_SEC_SNAT_CHILDREN] = "snat-children", [RFW_SEC_SNAT_LEAF_ENTRIES] = "snat-leaf-entries",
};

static const char *section_name(uint32_t type, char *buf, size_t len)
{
	if (type < sizeof(section_names) / sizeof(section_names[0]) && section_names[type])
		return section_names[type];
	snprintf(buf, len, "type-%u", type);
	return buf;
}

static const char *addr_str(const uint8_t *a, uint8_t family, char *buf, size_t len)
{
	return inet_ntop(family == 6 ? AF_INET6 : AF_INET, a, buf, (socklen_t)len);
}

static void dump_timeouts(const struct rfw_view *v, FILE *out)
{
	static const char *const names[] = {"tcp_syn", "tcp_established", "tcp_closing", "udp",
					    "udp_stream", "icmp", "other"};
	const struct rfw_policy *p = v->policy;

	fprintf(out, "defaults: action %s, stateful %s, max_flows %u, timeouts",
		rfw_action_name(p->default_action), p->stateful ? "true" : "false", p->max_flows);
	for (unsigned i = 0; i < RFW_TIMEOUT_COUNT; i++)
		fprintf(out, " %s=%u", names[i], p->timeout[i]);
	if (p->tcp_mss == RFW_TCP_MSS_CLAMP)
		fprintf(out, ", tcp_mss clamp");
	else if (p->tcp_mss)
		fprintf(out, ", tcp_mss %u", p->tcp_mss);
	if (p->rpf)
		fprintf(out, ", rpf %s", p->rpf == RFW_RPF_STRICT ? "strict" : "loose");
	fputc('\n', out);
}

static void dump_objects(const struct rfw_view *v, FILE *out)
{
	static const char *const nat_kinds[] = {"?", "snat", "masquerade", "dnat"};
	char a[64], b[64];

	fprintf(out, "interfaces: %u\n", v->interface_count);
	for (uint32_t i = 0; i < v->interface_count; i++)
		fprintf(out, "  %2u %-16s zone %s\n", i, v->interfaces[i].name,
			v->interfaces[i].zone == RFW_NONE ? "-" :
			v->strings + v->zones[v->interfaces[i].zone].name_off);
	fprintf(out, "zones: %u\n", v->zone_count);
	for (uint32_t i = 0; i < v->zone_count; i++)
		fprintf(out, "  %-16s interfaces 0x%08x\n", v->strings + v->zones[i].name_off,
			v->zones[i].ifaces);
	fprintf(out, "sets: %u\n", v->set_count);
	for (uint32_t i = 0; i < v->set_count; i++) {
		const struct rfw_set *s = &v->sets[i];
		const char *name = v->strings + s->name_off;

		fprintf(out, "  %2u %-16s %u prefixes, %" PRIu64 " bytes\n", i, *name ? name : "(literal)",
			s->prefix_count,
			((s->v4.offset == RFW_LPM_NONE ? 0 : LPM_WORDS(s->v4.group_count)) +
			 (s->v6.offset == RFW_LPM_NONE ? 0 : LPM_WORDS(s->v6.group_count))) * 4);
	}
	fprintf(out, "limits: %u\n", v->limit_count);
	for (uint32_t i = 0; i < v->limit_count; i++) {
		const struct rfw_limit *l = &v->limits[i];

		fprintf(out, "  rule %u %s: %" PRIu64 " per %" PRIu64 " ms, burst %" PRIu64 ", per %s\n",
			l->rule, rfw_rule_name(v, l->rule), l->rate, l->interval_ms, l->burst,
			l->per == RFW_LIMIT_PER_SOURCE ? "source" : "rule");
	}
	fprintf(out, "nat rules: %u, nat entries: %u\n", v->policy->nat_count, v->nat_acl_count);
	for (uint32_t i = 1; i <= v->policy->nat_count; i++) {
		const struct rfw_nat_rule *n = &v->nat_rules[i];

		fprintf(out, "  %4u %-16s %-10s", i, v->strings + n->name_off,
			nat_kinds[n->kind <= 3 ? n->kind : 0]);
		if (n->kind == RFW_NAT_SNAT)
			fprintf(out, " %s-%s", addr_str(n->addr_lo, n->family, a, sizeof(a)),
				addr_str(n->addr_hi, n->family, b, sizeof(b)));
		else if (n->kind == RFW_NAT_DNAT)
			fprintf(out, " %s", addr_str(n->addr_lo, n->family, a, sizeof(a)));
		if (n->kind == RFW_NAT_DNAT)
			fprintf(out, " port %u", n->port_lo);
		else
			fprintf(out, " ports %u-%u", n->port_lo, n->port_hi);
		fprintf(out, " %u entr%s\n", n->entry_count, n->entry_count == 1 ? "y" : "ies");
	}
	fprintf(out, "routes: %u\n", v->policy->route_count);
	for (uint32_t i = 0; i < v->policy->route_count; i++) {
		const struct rfw_route *r = &v->routes[i];

		fprintf(out, "  %s/%u", addr_str(r->prefix, r->family, a, sizeof(a)), r->len);
		if (r->has_via)
			fprintf(out, " via %s", addr_str(r->via, r->family, b, sizeof(b)));
		fprintf(out, " dev %s\n", v->interfaces[r->interface].name);
	}
	fprintf(out, "host addresses: %u\n", v->host_addr_count);
	for (uint32_t i = 0; i < v->host_addr_count; i++)
		fprintf(out, "  %s\n", addr_str(v->host_addrs[i].addr, v->host_addrs[i].family, a,
						 sizeof(a)));
	fprintf(out, "host pass: %u\n", v->host_pass_count);
	for (uint32_t i = 0; i < v->host_pass_count; i++) {
		const struct rfw_host_pass *h = &v->host_pass[i];

		if (h->kind == RFW_HOST_PASS_ARP)
			fprintf(out, "  arp\n");
		else if (h->kind == RFW_HOST_PASS_NDP)
			fprintf(out, "  ndp\n");
		else if (h->port_lo == 0 && h->port_hi == 65535)
			fprintf(out, "  proto %u\n", h->proto);
		else
			fprintf(out, "  proto %u ports %u-%u\n", h->proto, h->port_lo, h->port_hi);
	}
}

void rulec_dump(const struct rfw_view *v, FILE *out)
{
	const struct rfw_section *tab =
		(const void *)((const char *)v->base + v->hdr->header_size);

	fprintf(out, "artifact: version %u.%u, %zu bytes, features 0x%" PRIx64 ", checksum 0x%08x\n",
		v->hdr->version_major, v->hdr->version_minor, v->size, v->hdr->features,
		v->hdr->checksum);
	fprintf(out, "source: %s\n", v->source[0] ? v->source : "(none)");
	fprintf(out, "sections: %u\n", v->hdr->section_count);
	for (uint32_t i = 0; i < v->hdr->section_count; i++) {
		char nb[16];

		fprintf(out, "  %-11s offset %8" PRIu64 "  size %8" PRIu64 "  count %" PRIu64 "\n",
			section_name(tab[i].type, nb, sizeof(nb)), tab[i].offset, tab[i].size,
			tab[i].count);
	}
	dump_timeouts(v, out);
	fprintf(out, "rules: %u (+ rule 0, default), acl entries: %u\n",
		v->policy->rule_count, v->acl_count);
	for (uint32_t r = 0; r <= v->policy->rule_count; r++) {
		fprintf(out, "  %4u %-24s %-6s %u entr%s", r, rfw_rule_name(v, r),
			rfw_action_name(v->rules[r].action), v->rules[r].entry_count,
			v->rules[r].entry_count == 1 ? "y" : "ies");
		if (v->rules[r].flags & RFW_RULE_LOG)
			fprintf(out, " log");
		if (v->rules[r].limit)
			fprintf(out, " limit %u", v->rules[r].limit);
		if (r && v->rule_source)
			fprintf(out, " (line %u)", v->rule_source[r].line);
		fputc('\n', out);
	}
	dump_objects(v, out);
}
