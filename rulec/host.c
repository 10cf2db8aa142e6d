/* host: {addresses, pass}: traffic for this machine that stays with the
 * Linux stack (XDP_PASS): packets to one of its addresses, and whatever
 * pass lists: arp, ndp, a protocol, or protocol/port(s). */
#include "policy.h"
#include "../xsk/xdp_cfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

static const char *const host_keys[] = {"addresses", "pass"};

static int host_addr_entry(struct policy *pol, yaml_node_t *n, void *unused)
{
	struct rfw_host_addr a = {0};
	const char *s = ytree_str(n);

	(void)unused;
	for (size_t i = 0; s && i < pol->host_addrs.n; i++) {
		uint8_t fam, addr[16];

		if (val_parse_addr(s, &fam, addr) == 0 && fam == pol->host_addrs.v[i].family &&
		    memcmp(addr, pol->host_addrs.v[i].addr, 16) == 0) {
			ytree_error(pol->d, n, "host address %s is listed twice", s);
			return -1;
		}
	}
	if (!s || val_parse_addr(s, &a.family, a.addr) < 0) {
		ytree_error(pol->d, n, "a host address must be one IPv4 or IPv6 address (no /len), not '%s'",
			    s ? s : ytree_kind(n));
		return -1;
	}
	VEC_PUSH(pol->host_addrs, a);
	return 0;
}

static int host_pass_entry(struct policy *pol, yaml_node_t *n, void *unused)
{
	struct rfw_host_pass hp = {0};
	const char *s = ytree_str(n);
	svc_list items = {0};
	int rc = 0;

	(void)unused;
	if (s && strcmp(s, "arp") == 0)
		hp.kind = RFW_HOST_PASS_ARP;
	else if (s && strcmp(s, "ndp") == 0)
		hp.kind = RFW_HOST_PASS_NDP;
	if (hp.kind) {
		VEC_PUSH(pol->host_pass, hp);
		return 0;
	}
	if (!s) {
		ytree_error(pol->d, n, "a pass entry is arp, ndp, or a service like tcp/22, not %s",
			    ytree_kind(n));
		return -1;
	}
	if (val_is_name(s) && val_parse_proto(s) < 0) {
		size_t i = 0;

		while (i < pol->svcs.n && strcmp(pol->svcs.v[i].name, s) != 0)
			i++;
		if (i == pol->svcs.n) {
			ytree_error(pol->d, n,
				    "unknown pass entry '%s'; expected arp, ndp, a protocol, PROTO/PORT or a service name",
				    s);
			return -1;
		}
	}
	/* Anything a service may say, by literal or by name. */
	if (resolve_service_value(pol, n, &items) < 0) {
		free(items.v);
		return -1;
	}
	for (size_t i = 0; i < items.n; i++) {
		if (items.v[i].icmp_type >= 0) {
			ytree_error(pol->d, n, "host pass matches whole protocols and ports; write '%s' without an ICMP type",
				    items.v[i].proto == 1 ? "icmp" : "icmpv6");
			rc = -1;
			break;
		}
		hp = (struct rfw_host_pass){.kind = RFW_HOST_PASS_SERVICE, .proto = items.v[i].proto,
					    .port_lo = items.v[i].has_ports ? items.v[i].lo : 0,
					    .port_hi = items.v[i].has_ports ? items.v[i].hi : 65535};
		VEC_PUSH(pol->host_pass, hp);
	}
	free(items.v);
	return rc;
}

/* rampartd's AF_XDP backend gives the host section to its XDP program,
 * whose maps hold so many (xsk/xdp_cfg.h) and refuse the policy past
 * that; said here so that it is found when the policy is written, not
 * when it is loaded. */
static void host_check_xdp_room(struct policy *pol, yaml_node_t *addrs, yaml_node_t *pass)
{
	size_t n4 = 0, n6 = 0;

	for (size_t i = 0; i < pol->host_addrs.n; i++)
		pol->host_addrs.v[i].family == 6 ? n6++ : n4++;
	if (addrs && (n4 > RAMPART_XDP_MAX_HOST || n6 > RAMPART_XDP_MAX_HOST))
		diag_warn_at(pol, addrs,
			     "host.addresses has %zu IPv4 and %zu IPv6 addresses; rampartd on AF_XDP "
			     "refuses more than %d of a family (its XDP program's maps)",
			     n4, n6, RAMPART_XDP_MAX_HOST);
	if (pass && pol->host_pass.n > RAMPART_XDP_MAX_PASS)
		diag_warn_at(pol, pass,
			     "host.pass has %zu entries; rampartd on AF_XDP refuses more than %d "
			     "(its XDP program's table): merge ports into ranges",
			     pol->host_pass.n, RAMPART_XDP_MAX_PASS);
}

void host_parse(struct policy *pol, yaml_node_t *section)
{
	yaml_node_t *v, *addrs;

	if (policy_want_mapping(pol, section, "'host'") < 0)
		return;
	ytree_check_keys(pol->yt, section, pol->d, "host", host_keys, N(host_keys), NULL, 0);
	addrs = ytree_get(pol->yt, section, "addresses", NULL);
	if (addrs)
		policy_each(pol, addrs, host_addr_entry, NULL);
	v = ytree_get(pol->yt, section, "pass", NULL);
	if (v)
		policy_each(pol, v, host_pass_entry, NULL);
	host_check_xdp_room(pol, addrs, v);
}

static int in_prefix(const struct rfw_host_addr *a, const struct prefix *p)
{
	unsigned full = p->len / 8, rest = p->len % 8;

	if (a->family != p->family || memcmp(a->addr, p->addr, full))
		return 0;
	return !rest || ((a->addr[full] ^ p->addr[full]) & (0xff00u >> rest) & 0xff) == 0;
}

static int in_range(const struct rfw_host_addr *a, uint8_t family, const uint8_t *lo,
		    const uint8_t *hi)
{
	int n = family == 6 ? 16 : 4;

	return a->family == family && memcmp(a->addr, lo, (size_t)n) >= 0 &&
	       memcmp(a->addr, hi, (size_t)n) <= 0;
}

/* A host address is handed to the kernel before any rule or NAT: one that
 * is also a NAT address (an SNAT pool's, a DNAT rule's destination) takes
 * that NAT's traffic away from rampartd. */
void host_check_nat(struct policy *pol)
{
	for (size_t i = 0; i < pol->nats.n; i++) {
		const struct nat_def *nd = &pol->nats.v[i];

		for (size_t h = 0; !nd->bad && h < pol->host_addrs.n; h++) {
			const struct rfw_host_addr *a = &pol->host_addrs.v[h];
			int hit = 0;
			char txt[64];

			if (nd->kind == RFW_NAT_SNAT)
				hit = in_range(a, nd->family, nd->lo, nd->hi);
			else if (nd->kind == RFW_NAT_DNAT && nd->match.to.has_net &&
				 !nd->match.to.net.negated)
				for (size_t k = 0; !hit && k < nd->match.to.net.pfx.n; k++)
					hit = in_prefix(a, &nd->match.to.net.pfx.v[k]);
			if (!hit)
				continue;
			inet_ntop(a->family == 6 ? AF_INET6 : AF_INET, a->addr, txt, sizeof(txt));
			diag_warn_at(pol, nd->node,
				     "NAT rule '%s' uses %s, which host.addresses hands to the kernel "
				     "before any NAT: its traffic never reaches rampartd; take %s out "
				     "of host.addresses (pass the host's own services with host.pass)",
				     nd->name, txt, txt);
		}
	}
}
