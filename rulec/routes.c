/* routes: [{prefix, via, interface}] for router mode. The interface joins
 * the policy's interfaces; via must be of the prefix's family; one route
 * per prefix. The LPM table over them is built in compile.c. */
#include "policy.h"

#include <stdio.h>
#include <string.h>

static const char *const route_keys[] = {"prefix", "via", "interface"};

/* A next hop is a neighbour's address: not 0/8, 127/8, 224/4 and up
 * (multicast, class E, the broadcast), nor IPv6's ::, ::1 or ff00::/8. */
static int unicast_gateway(const uint8_t *a, uint8_t family)
{
	static const uint8_t zero[15];

	if (family == 4)
		return a[0] != 0 && a[0] != 127 && a[0] < 224;
	if (a[0] == 0xff)
		return 0;
	return memcmp(a, zero, 15) != 0 || a[15] > 1;
}

static void parse_route(struct policy *pol, yaml_node_t *n)
{
	struct route_def rd = {.node = n, .file = pol->cur};
	yaml_node_t *pv, *vv, *iv;
	struct prefix p;
	char why[256];
	long ifc;
	int bad = 0;

	if (policy_want_mapping(pol, n, "a route") < 0)
		return;
	if (ytree_check_keys(pol->yt, n, pol->d, "route", route_keys, N(route_keys), NULL, 0))
		bad = 1;
	pv = ytree_get(pol->yt, n, "prefix", NULL);
	vv = ytree_get(pol->yt, n, "via", NULL);
	iv = ytree_get(pol->yt, n, "interface", NULL);
	if (!pv || !iv) {
		ytree_error(pol->d, n, "a route needs 'prefix' and 'interface' (and 'via' unless on-link)");
		return;
	}
	if (!ytree_str(pv) || val_parse_prefix(ytree_str(pv), &p, why, sizeof(why)) < 0) {
		if (!ytree_str(pv))
			ytree_error(pol->d, pv, "a route prefix must be an address or prefix, not %s",
				    ytree_kind(pv));
		else
			ytree_error(pol->d, pv, "%s", why);
		bad = 1;
	} else {
		memcpy(rd.r.prefix, p.addr, 16);
		rd.r.len = p.len;
		rd.r.family = p.family;
	}
	if (vv) {
		const char *s = ytree_str(vv);
		uint8_t fam;

		if (!s || val_parse_addr(s, &fam, rd.r.via) < 0) {
			ytree_error(pol->d, vv, "'via' must be a gateway address, not '%s'",
				    s ? s : ytree_kind(vv));
			bad = 1;
		} else if (!bad && fam != rd.r.family) {
			ytree_error(pol->d, vv, "gateway %s is IPv%u but the prefix is IPv%u; use an IPv%u gateway",
				    s, fam, rd.r.family, rd.r.family);
			bad = 1;
		} else if (!unicast_gateway(rd.r.via, fam)) {
			ytree_error(pol->d, vv, "gateway %s is not a unicast address a neighbour can "
				    "have (unspecified, loopback, multicast or broadcast)", s);
			bad = 1;
		} else {
			rd.r.has_via = 1;
		}
	}
	ifc = ytree_str(iv) ? zones_iface(pol, iv, ytree_str(iv)) : -1;
	if (!ytree_str(iv))
		ytree_error(pol->d, iv, "'interface' must be an interface name, not %s", ytree_kind(iv));
	if (ifc < 0)
		bad = 1;
	rd.r.interface = (uint32_t)ifc;
	if (bad)
		return;
	for (size_t i = 0; i < pol->routes.n; i++) {
		const struct route_def *o = &pol->routes.v[i];
		char where[512];

		if (o->r.family != rd.r.family || o->r.len != rd.r.len ||
		    memcmp(o->r.prefix, rd.r.prefix, 16) != 0)
			continue;
		policy_where_node(pol, o->file, o->node, where, sizeof(where));
		ytree_error(pol->d, pv, "duplicate route for %s (first at %s); keep one", ytree_str(pv),
			    where);
		return;
	}
	VEC_PUSH(pol->routes, rd);
}

void routes_parse(struct policy *pol, yaml_node_t *section)
{
	if (section->type != YAML_SEQUENCE_NODE) {
		ytree_error(pol->d, section, "'routes' must be a list of {prefix, via, interface}, not %s",
			    ytree_kind(section));
		return;
	}
	for (yaml_node_item_t *it = section->data.sequence.items.start;
	     it < section->data.sequence.items.top; it++)
		parse_route(pol, ytree_node(pol->yt, *it));
}
