/* Interfaces and zones. Every interface named anywhere in the policy
 * (zones, from/to, routes) gets an index in order of first mention; the
 * index is its bit in classifier masks, so there are at most
 * RFW_MAX_INTERFACES. A zone is a named set of interfaces; an interface is
 * in at most one zone (the artifact records one zone per interface). */
#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long find_zone(const struct policy *pol, const char *name)
{
	for (size_t i = 0; i < pol->zones.n; i++)
		if (strcmp(pol->zones.v[i].name, name) == 0)
			return (long)i;
	return -1;
}

long zones_iface(struct policy *pol, yaml_node_t *at, const char *name)
{
	struct iface ifc = {.zone = RFW_NONE};

	for (size_t i = 0; i < pol->ifaces.n; i++)
		if (strcmp(pol->ifaces.v[i].name, name) == 0)
			return (long)i;
	if (!*name || strlen(name) >= sizeof(ifc.name) || strpbrk(name, " /\t")) {
		ytree_error(pol->d, at,
			    "'%s' is not an interface name (1-15 characters, no spaces or '/')", name);
		return -1;
	}
	if (pol->ifaces.n == RFW_MAX_INTERFACES) {
		ytree_error(pol->d, at,
			    "interface '%s' would be interface number %d: a policy names at most %d interfaces",
			    name, RFW_MAX_INTERFACES + 1, RFW_MAX_INTERFACES);
		return -1;
	}
	strcpy(ifc.name, name);
	VEC_PUSH(pol->ifaces, ifc);
	return (long)pol->ifaces.n - 1;
}

struct zone_ctx {
	size_t zone;
	uint32_t mask;
	yaml_node_t *listed[RFW_MAX_INTERFACES];	/* where each was first listed */
};

static int zone_iface_entry(struct policy *pol, yaml_node_t *n, void *p)
{
	struct zone_ctx *z = p;
	const char *s = ytree_str(n);
	long i;

	if (!s) {
		ytree_error(pol->d, n, "a zone lists interface names, not %s", ytree_kind(n));
		return -1;
	}
	i = zones_iface(pol, n, s);
	if (i < 0)
		return -1;
	if (pol->ifaces.v[i].zone != RFW_NONE && pol->ifaces.v[i].zone != z->zone) {
		ytree_error(pol->d, n, "interface '%s' is already in zone '%s'; an interface belongs to one zone",
			    s, pol->zones.v[pol->ifaces.v[i].zone].name);
		return -1;
	}
	/* Harmless to the masks, but a second listing is a slip (a typo of
	 * another interface, or a list merged twice): say so. */
	if (z->mask >> i & 1) {
		ytree_error(pol->d, n, "interface '%s' is listed twice in zone '%s' (first at line %u column %u)",
			    s, pol->zones.v[z->zone].name, ytree_line(z->listed[i]),
			    ytree_col(z->listed[i]));
		return -1;
	}
	z->listed[i] = n;
	pol->ifaces.v[i].zone = (uint32_t)z->zone;
	z->mask |= 1u << i;
	return 0;
}

void zones_parse(struct policy *pol, yaml_node_t *section)
{
	if (section->type != YAML_MAPPING_NODE) {
		ytree_error(pol->d, section, "'zones' must be a mapping of name: [interfaces], not %s",
			    ytree_kind(section));
		return;
	}
	for (yaml_node_pair_t *p = section->data.mapping.pairs.start;
	     p < section->data.mapping.pairs.top; p++) {
		yaml_node_t *k = ytree_node(pol->yt, p->key);
		const char *name = ytree_str(k);
		struct zone_def z = {.name = name, .key = k, .file = pol->cur};
		struct zone_ctx ctx;
		long prev;

		if (!name || !val_is_name(name)) {
			ytree_error(pol->d, k,
				    "'%s' is not a valid zone name (a letter or '_', then letters, digits, '_', '-', '.')",
				    name ? name : ytree_kind(k));
			continue;
		}
		prev = find_zone(pol, name);
		if (prev >= 0) {
			const struct zone_def *o = &pol->zones.v[prev];
			char where[512];

			policy_where_node(pol, o->file, o->key, where, sizeof(where));
			ytree_error(pol->d, k, "zone '%s' is defined twice (first at %s)", name, where);
			continue;
		}
		VEC_PUSH(pol->zones, z);
		ctx = (struct zone_ctx){.zone = pol->zones.n - 1};
		policy_each(pol, ytree_node(pol->yt, p->value), zone_iface_entry, &ctx);
		pol->zones.v[ctx.zone].ifaces = ctx.mask;
	}
}

static int side_zone_entry(struct policy *pol, yaml_node_t *n, void *p)
{
	struct side *s = p;
	const char *name = ytree_str(n);
	const char **names;
	const char *hint;
	long z;

	if (!name) {
		ytree_error(pol->d, n, "'zone' takes zone names, not %s", ytree_kind(n));
		return -1;
	}
	z = find_zone(pol, name);
	if (z >= 0) {
		pol->zones.v[z].used = 1;
		s->ifaces |= pol->zones.v[z].ifaces;
		return 0;
	}
	names = vec_grow(NULL, &(size_t){0}, pol->zones.n + 1, sizeof(*names));
	for (size_t i = 0; i < pol->zones.n; i++)
		names[i] = pol->zones.v[i].name;
	hint = pol->zones.n ? diag_suggest(name, names, pol->zones.n) : NULL;
	if (hint)
		ytree_error(pol->d, n, "unknown zone '%s'; did you mean '%s'?", name, hint);
	else
		ytree_error(pol->d, n, "unknown zone '%s'; define it under 'zones'", name);
	free(names);
	return -1;
}

static int side_iface_entry(struct policy *pol, yaml_node_t *n, void *p)
{
	struct side *s = p;
	const char *name = ytree_str(n);
	long i;

	if (!name) {
		ytree_error(pol->d, n, "'interface' takes interface names, not %s", ytree_kind(n));
		return -1;
	}
	i = zones_iface(pol, n, name);
	if (i < 0)
		return -1;
	s->ifaces |= 1u << i;
	return 0;
}

/* zone: and interface: of one side; both together would be ambiguous
 * (union or intersection?), so it is one or the other. */
int zones_side(struct policy *pol, yaml_node_t *zone, yaml_node_t *iface, struct side *s)
{
	if (zone && iface) {
		ytree_error(pol->d, iface,
			    "give 'zone' or 'interface', not both; list the interfaces in one of them");
		return -1;
	}
	s->has_if = 1;
	s->if_node = zone ? zone : iface;
	if (zone)
		return policy_each(pol, zone, side_zone_entry, s);
	return policy_each(pol, iface, side_iface_entry, s);
}
