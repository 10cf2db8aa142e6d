/* nat: [{name, match: {from, to, proto, family}, snat: {to, ports} |
 * dnat: {to, port}}]. NAT rules are numbered from 1 in merged order; each
 * one's match is expanded like a rule's (compile.c) into RFW_SEC_NAT_ACL.
 * The artifact holds one address range per NAT rule, so an SNAT pool must
 * be one contiguous range. */
#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const nat_keys[] = {"name", "match", "snat", "dnat"};
static const char *const match_keys[] = {"from", "to", "proto", "family"};
static const char *const snat_keys[] = {"to", "ports"};
static const char *const dnat_keys[] = {"to", "port"};

struct pool {
	struct nat_def *nd;
	int have;
};

static int addr_cmp(const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, 16);
}

/* a + 1 == b, as 128-bit big-endian numbers (IPv4 in the first 4 bytes). */
static int addr_next(const uint8_t *a, const uint8_t *b, unsigned bytes)
{
	uint8_t t[16];

	memcpy(t, a, 16);
	for (int i = (int)bytes - 1; i >= 0; i--)
		if (++t[i] != 0)
			break;
	return memcmp(t, b, bytes) == 0;
}

/* "198.51.100.10" or "198.51.100.10-198.51.100.20"; joins the pool when
 * it touches or overlaps what is there. */
static int pool_entry(struct policy *pol, yaml_node_t *n, void *p)
{
	struct pool *pl = p;
	struct nat_def *nd = pl->nd;
	const char *s = ytree_str(n), *dash = s ? strchr(s, '-') : NULL;
	uint8_t lo[16], hi[16], f1, f2;
	char a[64];
	unsigned bytes;

	if (!s || (dash ? (size_t)(dash - s) >= sizeof(a) : strlen(s) >= sizeof(a)))
		goto bad;
	snprintf(a, sizeof(a), "%.*s", dash ? (int)(dash - s) : (int)strlen(s), s);
	if (val_parse_addr(a, &f1, lo) < 0)
		goto bad;
	if (dash) {
		if (val_parse_addr(dash + 1, &f2, hi) < 0)
			goto bad;
		if (f1 != f2) {
			ytree_error(pol->d, n, "address range '%s' mixes IPv4 and IPv6", s);
			return -1;
		}
		if (addr_cmp(lo, hi) > 0) {
			ytree_error(pol->d, n, "address range '%s' is reversed; write '%s-%s'", s,
				    dash + 1, a);
			return -1;
		}
	} else {
		memcpy(hi, lo, 16);
	}
	bytes = f1 == 4 ? 4 : 16;
	if (!pl->have) {
		nd->family = f1;
		memcpy(nd->lo, lo, 16);
		memcpy(nd->hi, hi, 16);
		pl->have = 1;
		return 0;
	}
	if (f1 != nd->family) {
		ytree_error(pol->d, n, "SNAT pool mixes IPv%u and IPv%u; one NAT rule translates one family",
			    nd->family, f1);
		return -1;
	}
	if ((addr_cmp(lo, nd->hi) > 0 && !addr_next(nd->hi, lo, bytes)) ||
	    (addr_cmp(hi, nd->lo) < 0 && !addr_next(hi, nd->lo, bytes))) {
		ytree_error(pol->d, n,
			    "SNAT pool must be one contiguous address range; '%s' leaves a gap (use a second NAT rule with its own match)",
			    s);
		return -1;
	}
	if (addr_cmp(lo, nd->lo) < 0)
		memcpy(nd->lo, lo, 16);
	if (addr_cmp(hi, nd->hi) > 0)
		memcpy(nd->hi, hi, 16);
	return 0;
bad:
	ytree_error(pol->d, n, "an SNAT pool entry is an address or a range a-b of addresses, not '%s'",
		    s ? s : ytree_kind(n));
	return -1;
}

static int parse_snat(struct policy *pol, struct nat_def *nd, yaml_node_t *n)
{
	yaml_node_t *to, *ports;
	struct pool pl = {nd, 0};
	char why[256];
	int rc = 0;

	if (policy_want_mapping(pol, n, "'snat'") < 0)
		return -1;
	if (ytree_check_keys(pol->yt, n, pol->d, "snat", snat_keys, N(snat_keys), NULL, 0))
		rc = -1;
	to = ytree_get(pol->yt, n, "to", NULL);
	if (!to) {
		ytree_error(pol->d, n, "snat needs 'to: masquerade' or 'to: [address or a-b range]'");
		return -1;
	}
	if (ytree_str(to) && strcmp(ytree_str(to), "masquerade") == 0) {
		nd->kind = RFW_NAT_MASQUERADE;
	} else {
		nd->kind = RFW_NAT_SNAT;
		if (policy_each(pol, to, pool_entry, &pl) < 0)
			rc = -1;
		else if (!pl.have) {
			ytree_error(pol->d, to, "the SNAT pool is empty; list an address or a range");
			rc = -1;
		}
	}
	/* Source ports come from the unprivileged range unless told. */
	nd->port_lo = 1024;
	nd->port_hi = 65535;
	ports = ytree_get(pol->yt, n, "ports", NULL);
	if (ports) {
		nd->port_node = ports;
		if (!ytree_str(ports) ||
		    val_parse_port_range(ytree_str(ports), &nd->port_lo, &nd->port_hi, why, sizeof(why)) < 0) {
			ytree_error(pol->d, ports, "%s", ytree_str(ports) ? why : "ports must be a range a-b");
			rc = -1;
		} else if (nd->port_lo == 0) {
			ytree_error(pol->d, ports, "port 0 cannot be a source port; start the range at 1 or above");
			rc = -1;
		}
	}
	return rc;
}

static int parse_dnat(struct policy *pol, struct nat_def *nd, yaml_node_t *n)
{
	yaml_node_t *to, *port;
	unsigned long p;
	const char *s;
	int rc = 0;

	nd->kind = RFW_NAT_DNAT;
	if (policy_want_mapping(pol, n, "'dnat'") < 0)
		return -1;
	if (ytree_check_keys(pol->yt, n, pol->d, "dnat", dnat_keys, N(dnat_keys), NULL, 0))
		rc = -1;
	to = ytree_get(pol->yt, n, "to", NULL);
	s = to ? ytree_str(to) : NULL;
	if (!to) {
		ytree_error(pol->d, n, "dnat needs 'to: ADDRESS' (the real server)");
		return -1;
	}
	if (!s || val_parse_addr(s, &nd->family, nd->lo) < 0) {
		ytree_error(pol->d, to, "dnat 'to' must be one address (no /len, no range), not '%s'",
			    s ? s : ytree_kind(to));
		return -1;
	}
	memcpy(nd->hi, nd->lo, 16);
	port = ytree_get(pol->yt, n, "port", NULL);
	if (port) {
		nd->port_node = port;
		s = ytree_str(port);
		if (!s || val_parse_uint(s, 65535, &p) < 0 || p == 0) {
			ytree_error(pol->d, port, "dnat port must be one port 1-65535, not '%s'",
				    s ? s : ytree_kind(port));
			rc = -1;
		} else {
			nd->port_lo = nd->port_hi = (uint16_t)p;
		}
	}
	return rc;
}

static void parse_nat(struct policy *pol, yaml_node_t *n, size_t num)
{
	struct nat_def nd = {.node = n, .file = pol->cur};
	yaml_node_t *m, *sn, *dn;

	nd.match.node = n;
	nd.match.file = pol->cur;
	nd.match.proto = -1;
	if (policy_want_mapping(pol, n, "a NAT rule") < 0)
		return;
	nd.bad = ytree_check_keys(pol->yt, n, pol->d, "NAT rule", nat_keys, N(nat_keys), NULL, 0) != 0;
	rules_name(pol, &nd.match, n, num, 1);
	snprintf(nd.name, sizeof(nd.name), "%s", nd.match.name);
	m = ytree_get(pol->yt, n, "match", NULL);
	if (!m) {
		ytree_error(pol->d, n, "NAT rule '%s' has no 'match'; write match: {from: ..., to: ...}",
			    nd.name);
		nd.bad = 1;
	} else if (policy_want_mapping(pol, m, "'match'") < 0) {
		nd.bad = 1;
	} else {
		nd.match.node = m;
		if (ytree_check_keys(pol->yt, m, pol->d, "match", match_keys, N(match_keys), NULL, 0))
			nd.bad = 1;
		if (rules_parse_match(pol, &nd.match, m) < 0)
			nd.bad = 1;
	}
	sn = ytree_get(pol->yt, n, "snat", NULL);
	dn = ytree_get(pol->yt, n, "dnat", NULL);
	if (sn && dn) {
		ytree_error(pol->d, dn, "a NAT rule does snat or dnat, not both; split it in two");
		nd.bad = 1;
	} else if (!sn && !dn) {
		ytree_error(pol->d, n, "NAT rule '%s' needs 'snat' or 'dnat'", nd.name);
		nd.bad = 1;
	} else if ((sn ? parse_snat(pol, &nd, sn) : parse_dnat(pol, &nd, dn)) < 0) {
		nd.bad = 1;
	}
	nd.match.bad |= nd.bad;
	VEC_PUSH(pol->nats, nd);
	rules_name_commit(pol, (uint32_t)pol->nats.n - 1, 1);
}

void nat_parse(struct policy *pol, yaml_node_t *section)
{
	if (section->type != YAML_SEQUENCE_NODE) {
		ytree_error(pol->d, section, "'nat' must be a list of NAT rules, not %s",
			    ytree_kind(section));
		return;
	}
	for (yaml_node_item_t *it = section->data.sequence.items.start;
	     it < section->data.sequence.items.top; it++)
		parse_nat(pol, ytree_node(pol->yt, *it), pol->nats.n + 1);
}
