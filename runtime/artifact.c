/* .rfw container: verification on load (nothing in the file is trusted)
 * and layout on write. */
#include "artifact.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "lpm.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .rfw format is little-endian; a big-endian reader is not written yet"
#endif

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static uint32_t file_checksum(const uint8_t *buf, size_t len)
{
	uint32_t zero = 0;
	size_t at = offsetof(struct rfw_header, checksum);
	uint32_t crc = crc32c(0, buf, at);

	crc = crc32c(crc, &zero, sizeof(zero));
	return crc32c(crc, buf + at + sizeof(zero), len - at - sizeof(zero));
}

static const struct rfw_section *find_section(const struct rfw_section *tab,
					      uint32_t n, uint32_t type)
{
	for (uint32_t i = 0; i < n; i++)
		if (tab[i].type == type)
			return &tab[i];
	return NULL;
}

/* A section the reader needs: present, of the expected entry size. */
static int need(const struct rfw_section *tab, uint32_t n, uint32_t type,
		uint32_t entry_size, const char *what,
		const struct rfw_section **out, char *err, size_t errlen)
{
	const struct rfw_section *s = find_section(tab, n, type);

	if (!s)
		return fail(err, errlen, "artifact has no %s section", what);
	if (entry_size && s->entry_size != entry_size)
		return fail(err, errlen,
			    "%s section entries are %u bytes, this build reads %u (built by another version?)",
			    what, s->entry_size, entry_size);
	if (entry_size && s->size != s->count * (uint64_t)entry_size)
		return fail(err, errlen, "%s section size %llu does not match %llu entries",
			    what, (unsigned long long)s->size, (unsigned long long)s->count);
	*out = s;
	return 0;
}

/* The section types of one compiled classifier. */
struct cls_sections {
	uint32_t trees, nodes, leaves, children, leaf_entries;
};

static const struct cls_sections acl_cls = {RFW_SEC_CLS_TREES, RFW_SEC_CLS_NODES,
					    RFW_SEC_CLS_LEAVES, RFW_SEC_CLS_CHILDREN,
					    RFW_SEC_CLS_LEAF_ENTRIES};
static const struct cls_sections nat_cls[2] = {
	{RFW_SEC_DNAT_TREES, RFW_SEC_DNAT_NODES, RFW_SEC_DNAT_LEAVES, RFW_SEC_DNAT_CHILDREN,
	 RFW_SEC_DNAT_LEAF_ENTRIES},
	{RFW_SEC_SNAT_TREES, RFW_SEC_SNAT_NODES, RFW_SEC_SNAT_LEAVES, RFW_SEC_SNAT_CHILDREN,
	 RFW_SEC_SNAT_LEAF_ENTRIES},
};

/* A classifier's trees over entry_count entries: every index in range
 * and every child after its parent, so a lookup always ends at a leaf
 * and reads only listed entries. what names it in errors ("classifier",
 * "DNAT classifier"). */
static int verify_trees(struct rfw_cls_view *c, const struct cls_sections *ids,
			uint32_t entry_count, const char *what, const struct rfw_section *tab,
			uint32_t n, const uint8_t *b, char *err, size_t errlen)
{
	const struct rfw_section *s;
	char name[48];

	snprintf(name, sizeof(name), "%s trees", what);
	if (need(tab, n, ids->trees, sizeof(struct rfw_cls_trees), name, &s, err, errlen))
		return -1;
	if (s->count != 1)
		return fail(err, errlen, "artifact %s trees section must hold one entry", what);
	c->trees = (const void *)(b + s->offset);
	snprintf(name, sizeof(name), "%s nodes", what);
	if (need(tab, n, ids->nodes, sizeof(struct rfw_cls_node), name, &s, err, errlen))
		return -1;
	if (s->count >= RFW_CLS_NONE)
		return fail(err, errlen, "artifact %s has too many nodes", what);
	c->nodes = (const void *)(b + s->offset);
	c->node_count = (uint32_t)s->count;
	snprintf(name, sizeof(name), "%s leaves", what);
	if (need(tab, n, ids->leaves, sizeof(struct rfw_cls_leaf_block), name, &s, err, errlen))
		return -1;
	if (s->count >= RFW_CLS_NONE)
		return fail(err, errlen, "artifact %s has too many leaf entries", what);
	c->leaves = (const void *)(b + s->offset);
	c->leaf_count = (uint32_t)s->count;
	snprintf(name, sizeof(name), "%s leaf entries", what);
	if (need(tab, n, ids->leaf_entries, sizeof(uint32_t), name, &s, err, errlen))
		return -1;
	if (s->count != (uint64_t)c->leaf_count * RFW_CLS_LANES)
		return fail(err, errlen, "artifact %s leaf entries do not match its leaves", what);
	c->leaf_entries = (const void *)(b + s->offset);

	for (unsigned f = 0; f < 2; f++) {
		uint32_t prev = 0;

		for (unsigned p = 0; p < RFW_CLS_PARTS; p++) {
			const struct rfw_cls_tree *t = &c->trees->tree[f][p];

			if (t->root == RFW_CLS_NONE) {
				if (t->first_rule != RFW_CLS_NONE)
					return fail(err, errlen, "artifact %s tree %u/%u is malformed",
						    what, f, p);
				prev = RFW_CLS_NONE;
				continue;
			}
			if (t->root >= c->node_count || t->first_rule < prev)
				return fail(err, errlen, "artifact %s tree %u/%u is out of range", what,
					    f, p);
			prev = t->first_rule;
		}
	}
	s = find_section(tab, n, ids->children);
	if (s) {
		snprintf(name, sizeof(name), "%s children", what);
		if (need(tab, n, ids->children, sizeof(uint32_t), name, &s, err, errlen))
			return -1;
		if (s->count >= RFW_CLS_NONE)
			return fail(err, errlen, "artifact %s has too many children", what);
		c->children = (const void *)(b + s->offset);
		c->child_count = (uint32_t)s->count;
	}
	for (uint32_t i = 0; i < c->node_count; i++) {
		const struct rfw_cls_node *node = &c->nodes[i];

		if (node->dim == RFW_CLS_LEAF) {
			/* the batch lookup steps leaves as splits (result unused):
			 * a leaf marked as a cut would index the children */
			if (node->kind != RFW_CLS_SPLIT ||
			    (uint64_t)node->left + ((uint64_t)node->right + RFW_CLS_LANES - 1) / RFW_CLS_LANES >
			    c->leaf_count)
				return fail(err, errlen, "artifact %s leaf %u is out of range", what, i);
		} else if (node->dim >= RFW_CLS_DIMS || node->kind > RFW_CLS_CUT) {
			return fail(err, errlen, "artifact %s node %u is malformed", what, i);
		} else if (node->kind == RFW_CLS_CUT) {
			if (node->shift > 31 || node->reserved ||
			    (uint64_t)node->left + node->right + 1 > c->child_count)
				return fail(err, errlen, "artifact %s node %u is malformed", what, i);
			for (uint32_t k = 0; k <= node->right; k++) {
				uint32_t child = c->children[node->left + k];

				if (child <= i || child >= c->node_count)
					return fail(err, errlen, "artifact %s node %u is malformed", what,
						    i);
			}
		} else if (node->left <= i || node->right <= i ||
			   node->left >= c->node_count || node->right >= c->node_count) {
			return fail(err, errlen, "artifact %s node %u is malformed", what, i);
		}
	}
	/* A lane's entry is read only when it is in range; a lane without
	 * one must not ask for it and must never pass (no key's IFACES word
	 * is above RFW_CLS_IFACES_KEY_MAX). */
	for (uint32_t i = 0; i < c->leaf_count; i++) {
		const struct rfw_cls_leaf_block *l = &c->leaves[i];

		for (unsigned j = 0; j < RFW_CLS_LANES; j++) {
			uint32_t entry = c->leaf_entries[(size_t)i * RFW_CLS_LANES + j];
			uint32_t hi = l->hi[RFW_CLS_KW_IFACES][j];

			if (entry >= entry_count && entry != RFW_CLS_NONE)
				return fail(err, errlen, "artifact %s leaf entry %u is out of range",
					    what, i);
			if ((hi & RFW_CLS_IFACES_RESERVED) ||
			    (entry == RFW_CLS_NONE && ((hi & RFW_CLS_LEAF_FULL) ||
						       l->lo[RFW_CLS_KW_IFACES][j] <= RFW_CLS_IFACES_KEY_MAX)))
				return fail(err, errlen, "artifact %s leaf entry %u is malformed", what,
					    i);
		}
	}
	return 0;
}

/* The ACL's classifier, into the view's fields. The view keeps the
 * leaves as a uint32_t pointer; they are blocks (struct
 * rfw_cls_leaf_block) since format 1.2. */
static int verify_cls(struct rfw_view *v, const struct rfw_section *tab, uint32_t n,
		      const uint8_t *b, char *err, size_t errlen)
{
	struct rfw_cls_view c = {0};

	if (verify_trees(&c, &acl_cls, v->acl_count, "classifier", tab, n, b, err, errlen) < 0)
		return -1;
	v->cls_trees = c.trees;
	v->cls_nodes = c.nodes;
	v->cls_node_count = c.node_count;
	v->cls_leaves = (const void *)c.leaves;
	v->cls_leaf_count = c.leaf_count;
	v->cls_leaf_entries = c.leaf_entries;
	v->cls_children = c.children;
	v->cls_child_count = c.child_count;
	return 0;
}

/* A NAT kind's classifier (1.6), when the artifact has one: its
 * entries must be exactly RFW_SEC_NAT_ACL's of the kind, in order (so
 * its answers are the scan's), and its trees index them. */
static int verify_nat_cls(struct rfw_view *v, unsigned kind, const struct rfw_section *tab,
			  uint32_t n, const uint8_t *b, char *err, size_t errlen)
{
	static const uint32_t entries_sec[2] = {RFW_SEC_DNAT_ENTRIES, RFW_SEC_SNAT_ENTRIES};
	const char *what = kind ? "SNAT classifier" : "DNAT classifier";
	struct rfw_cls_view *c = &v->nat_cls[kind];
	const struct rfw_section *s = find_section(tab, n, entries_sec[kind]);
	char name[48];
	uint32_t k = 0;

	if (!s) {
		if (find_section(tab, n, nat_cls[kind].trees))
			return fail(err, errlen, "artifact %s has trees but no entries", what);
		return 0;
	}
	snprintf(name, sizeof(name), "%s entries", what);
	if (need(tab, n, entries_sec[kind], sizeof(struct rfw_acl_entry), name, &s, err, errlen))
		return -1;
	if (s->count > v->nat_acl_count)
		return fail(err, errlen, "artifact %s has more entries than the NAT rules", what);
	c->entries = (const void *)(b + s->offset);
	c->entry_count = (uint32_t)s->count;
	for (uint32_t e = 0; e < v->nat_acl_count; e++) {
		const struct rfw_acl_entry *x = &v->nat_acl[e];

		if ((v->nat_rules[x->rule].kind == RFW_NAT_DNAT) != !kind)
			continue;
		if (k >= c->entry_count || memcmp(&c->entries[k], x, sizeof(*x)) != 0)
			return fail(err, errlen, "artifact %s entry %u is not the NAT rules' own", what,
				    k);
		k++;
	}
	if (k != c->entry_count)
		return fail(err, errlen, "artifact %s has %u entries, the NAT rules %u", what,
			    c->entry_count, k);
	if (verify_trees(c, &nat_cls[kind], c->entry_count, what, tab, n, b, err, errlen) < 0) {
		memset(c, 0, sizeof(*c));
		return -1;
	}
	return 0;
}

/* An optional section: absent means empty. Returns its entry count, or
 * -1 (err set) when present but malformed. */
static int64_t optional(const struct rfw_section *tab, uint32_t n, const uint8_t *b,
			uint32_t type, uint32_t entry_size, const char *what,
			const void **out, char *err, size_t errlen)
{
	const struct rfw_section *s = find_section(tab, n, type);

	*out = NULL;
	if (!s)
		return 0;
	if (need(tab, n, type, entry_size, what, &s, err, errlen))
		return -1;
	if (s->count >= RFW_NONE)
		return fail(err, errlen, "artifact %s section is too large", what);
	*out = b + s->offset;
	return (int64_t)s->count;
}

/* An LPM table must lie inside the data and every child index must name
 * one of its groups, so lookups stay inside the file. */
/* A name in the string table: there, and shorter than rulec makes them
 * (128 bytes), which is what the daemon's messages and captures are
 * sized for. */
#define RFW_NAME_MAX 128

static int name_ok(const struct rfw_view *v, uint32_t off)
{
	return off < v->strings_size && strnlen(v->strings + off, v->strings_size - off) < RFW_NAME_MAX;
}

static int verify_lpm(const struct rfw_view *v, const struct rfw_lpm_ref *r,
		      const char *what, char *err, size_t errlen)
{
	uint64_t words;

	if (r->offset == RFW_LPM_NONE)
		return 0;
	words = LPM_WORDS(r->group_count);
	if (r->offset > v->lpm_words || words > v->lpm_words - r->offset)
		return fail(err, errlen, "artifact %s LPM table is out of bounds", what);
	for (uint64_t i = 0; i < words; i++) {
		uint32_t e = v->lpm_data[r->offset + i];

		if ((e & 0x80000000u) && (e & 0x7fffffffu) >= r->group_count)
			return fail(err, errlen, "artifact %s LPM table has a bad child", what);
	}
	return 0;
}

/* Interface bits (entries' in/out interfaces, zones) past the
 * interfaces the artifact lists name nothing: a file that has them was
 * not written by rulec. */
static int ifaces_ok(const struct rfw_view *v, uint32_t mask)
{
	return v->interface_count >= 32 || !(mask >> v->interface_count);
}

#define RFW_ACL_FLAGS_KNOWN ((uint16_t)((RFW_ACL_DST_NOT << 1) - 1))
#define RFW_STATE_KNOWN ((uint8_t)((RFW_STATE_INVALID << 1) - 1))

static int verify_entries(const struct rfw_view *v, const struct rfw_acl_entry *acl,
			  uint32_t count, uint32_t max_rule, const char *what,
			  char *err, size_t errlen)
{
	for (uint32_t i = 0; i < count; i++) {
		const struct rfw_acl_entry *e = &acl[i];
		unsigned maxlen = e->family == 6 ? 128 : 32;

		if ((e->flags & ~RFW_ACL_FLAGS_KNOWN) || (e->state_mask & ~RFW_STATE_KNOWN))
			return fail(err, errlen, "artifact %s entry %u has unknown flags 0x%x/0x%x",
				    what, i, e->flags & ~RFW_ACL_FLAGS_KNOWN,
				    e->state_mask & ~RFW_STATE_KNOWN);
		if (!ifaces_ok(v, e->in_ifaces) || !ifaces_ok(v, e->out_ifaces))
			return fail(err, errlen,
				    "artifact %s entry %u names interfaces past the %u it lists",
				    what, i, v->interface_count);

		if (e->rule == 0 || e->rule > max_rule || (i && e->rule < acl[i - 1].rule))
			return fail(err, errlen, "artifact %s entry %u has bad rule number %u",
				    what, i, e->rule);
		if ((e->family != 0 && e->family != 4 && e->family != 6) ||
		    e->src_len > maxlen || e->dst_len > maxlen ||
		    (e->family == 0 && (e->src_len || e->dst_len)))
			return fail(err, errlen, "artifact %s entry %u has a bad address", what, i);
		if (((e->flags & RFW_ACL_SRC_SET) &&
		     (e->src_len || (uint32_t)(e->src[0] | e->src[1] << 8 | e->src[2] << 16 |
					       (uint32_t)e->src[3] << 24) >= v->set_count)) ||
		    ((e->flags & RFW_ACL_DST_SET) &&
		     (e->dst_len || (uint32_t)(e->dst[0] | e->dst[1] << 8 | e->dst[2] << 16 |
					       (uint32_t)e->dst[3] << 24) >= v->set_count)))
			return fail(err, errlen, "artifact %s entry %u names a bad address set", what, i);
	}
	return 0;
}

/* Format 1.1 sections (all optional). */
static int verify_v11(struct rfw_view *v, const struct rfw_section *tab, uint32_t n,
		      const uint8_t *b, char *err, size_t errlen)
{
	const void *p;
	int64_t c;

#define OPTIONAL(type, st, what, field, countf)                                           \
	do {                                                                               \
		c = optional(tab, n, b, type, sizeof(st), what, &p, err, errlen);          \
		if (c < 0)                                                                 \
			return -1;                                                         \
		v->field = p;                                                              \
		v->countf = (uint32_t)c;                                                   \
	} while (0)

	OPTIONAL(RFW_SEC_INTERFACES, struct rfw_interface, "interfaces", interfaces, interface_count);
	OPTIONAL(RFW_SEC_ZONES, struct rfw_zone, "zones", zones, zone_count);
	OPTIONAL(RFW_SEC_SETS, struct rfw_set, "sets", sets, set_count);
	OPTIONAL(RFW_SEC_LIMITS, struct rfw_limit, "limits", limits, limit_count);
	OPTIONAL(RFW_SEC_NAT_ACL, struct rfw_acl_entry, "nat acl", nat_acl, nat_acl_count);
	OPTIONAL(RFW_SEC_HOST_ADDRS, struct rfw_host_addr, "host addresses", host_addrs, host_addr_count);
	OPTIONAL(RFW_SEC_HOST_PASS, struct rfw_host_pass, "host pass", host_pass, host_pass_count);
#undef OPTIONAL
	{
		const struct rfw_section *s = find_section(tab, n, RFW_SEC_LPM_DATA);

		if (s) {
			if (need(tab, n, RFW_SEC_LPM_DATA, sizeof(uint32_t), "lpm data", &s, err, errlen))
				return -1;
			v->lpm_data = (const void *)(b + s->offset);
			v->lpm_words = s->count;
		}
	}

	if (v->interface_count > RFW_MAX_INTERFACES ||
	    v->interface_count != v->policy->interface_count)
		return fail(err, errlen, "artifact has %u interfaces (policy says %u, at most %u)",
			    v->interface_count, v->policy->interface_count, RFW_MAX_INTERFACES);
	for (uint32_t i = 0; i < v->interface_count; i++)
		if (memchr(v->interfaces[i].name, 0, sizeof(v->interfaces[i].name)) == NULL ||
		    (v->interfaces[i].zone != RFW_NONE && v->interfaces[i].zone >= v->zone_count))
			return fail(err, errlen, "artifact interface %u is malformed", i);
	for (uint32_t i = 0; i < v->zone_count; i++) {
		if (!name_ok(v, v->zones[i].name_off))
			return fail(err, errlen, "artifact zone %u name is out of bounds", i);
		if (!ifaces_ok(v, v->zones[i].ifaces))
			return fail(err, errlen,
				    "artifact zone %u names interfaces (0x%x) past the %u it lists",
				    i, v->zones[i].ifaces, v->interface_count);
	}
	for (uint32_t i = 0; i < v->host_addr_count; i++)
		if (v->host_addrs[i].family != 4 && v->host_addrs[i].family != 6)
			return fail(err, errlen, "artifact host address %u has family %u", i,
				    v->host_addrs[i].family);
	for (uint32_t i = 0; i < v->host_pass_count; i++) {
		const struct rfw_host_pass *h = &v->host_pass[i];

		if (h->kind < RFW_HOST_PASS_ARP || h->kind > RFW_HOST_PASS_SERVICE)
			return fail(err, errlen, "artifact host pass entry %u has unknown kind %u",
				    i, h->kind);
		/* the XDP program passes port in [lo, hi]: reversed, nothing */
		if (h->port_lo > h->port_hi)
			return fail(err, errlen,
				    "artifact host pass entry %u has ports out of order (%u-%u)",
				    i, h->port_lo, h->port_hi);
		if (h->kind != RFW_HOST_PASS_SERVICE && (h->proto || h->port_lo || h->port_hi))
			return fail(err, errlen,
				    "artifact host pass entry %u (arp/ndp) has a protocol or ports", i);
	}
	for (uint32_t i = 0; i < v->set_count; i++)
		if (!name_ok(v, v->sets[i].name_off) ||
		    verify_lpm(v, &v->sets[i].v4, "set", err, errlen) < 0 ||
		    verify_lpm(v, &v->sets[i].v6, "set", err, errlen) < 0)
			return fail(err, errlen, "artifact address set %u is malformed", i);
	for (uint32_t i = 0; i < v->limit_count; i++)
		if (v->limits[i].rule == 0 || v->limits[i].rule > v->policy->rule_count ||
		    v->limits[i].per > RFW_LIMIT_PER_SOURCE || v->limits[i].interval_ms == 0)
			return fail(err, errlen, "artifact limit %u is malformed", i);
	for (uint32_t r = 0; r <= v->policy->rule_count; r++)
		if (v->rules[r].limit > v->limit_count ||
		    (v->rules[r].limit && v->limits[v->rules[r].limit - 1].rule != r))
			return fail(err, errlen, "artifact rule %u names a missing limit or another rule's", r);
	/* read once here, so that building a worker's view (reload) need not */
	for (uint32_t i = 0; i < v->acl_count; i++)
		if ((v->acl[i].flags & RFW_ACL_STATE) && (v->acl[i].state_mask & RFW_STATE_INVALID))
			v->rules_see_invalid = 1;
	if (verify_entries(v, v->acl, v->acl_count, v->policy->rule_count, "acl", err, errlen))
		return -1;
	for (uint32_t r = 0; r <= v->policy->rule_count; r++)
		for (uint32_t k = 0; k < v->rules[r].entry_count; k++)
			if (v->acl[v->rules[r].first_entry + k].rule != r)
				return fail(err, errlen, "artifact rule %u entries belong to another rule", r);

	c = optional(tab, n, b, RFW_SEC_NAT_RULES, sizeof(struct rfw_nat_rule), "nat rules", &p,
		     err, errlen);
	if (c < 0)
		return -1;
	if ((uint64_t)c != (v->policy->nat_count ? (uint64_t)v->policy->nat_count + 1 : 0))
		return fail(err, errlen, "artifact has %lld NAT records for %u NAT rules",
			    (long long)c, v->policy->nat_count);
	v->nat_rules = p;
	for (uint32_t i = 1; i <= v->policy->nat_count; i++) {
		const struct rfw_nat_rule *nr = &v->nat_rules[i];

		if (!name_ok(v, nr->name_off) || nr->kind < RFW_NAT_SNAT ||
		    nr->kind > RFW_NAT_DNAT || (nr->family != 4 && nr->family != 6) ||
		    (uint64_t)nr->first_entry + nr->entry_count > v->nat_acl_count)
			return fail(err, errlen, "artifact NAT rule %u is malformed", i);
		if (nr->kind != RFW_NAT_DNAT && nr->port_lo > nr->port_hi)
			return fail(err, errlen,
				    "artifact NAT rule %u has ports out of order (%u-%u)", i,
				    nr->port_lo, nr->port_hi);
	}
	if (verify_entries(v, v->nat_acl, v->nat_acl_count, v->policy->nat_count, "nat acl",
			   err, errlen))
		return -1;
	for (uint32_t i = 1; i <= v->policy->nat_count; i++)
		for (uint32_t k = 0; k < v->nat_rules[i].entry_count; k++)
			if (v->nat_acl[v->nat_rules[i].first_entry + k].rule != i)
				return fail(err, errlen,
					    "artifact NAT rule %u entries belong to another rule", i);

	c = optional(tab, n, b, RFW_SEC_ROUTES, sizeof(struct rfw_route), "routes", &p, err, errlen);
	if (c < 0)
		return -1;
	if ((uint64_t)c != v->policy->route_count)
		return fail(err, errlen, "artifact has %lld routes, policy says %u", (long long)c,
			    v->policy->route_count);
	v->routes = p;
	for (uint32_t i = 0; i < v->policy->route_count; i++)
		if ((v->routes[i].family != 4 && v->routes[i].family != 6) ||
		    v->routes[i].len > (v->routes[i].family == 6 ? 128 : 32) ||
		    v->routes[i].interface >= v->interface_count)
			return fail(err, errlen, "artifact route %u is malformed", i);
	c = optional(tab, n, b, RFW_SEC_ROUTE_TABLE, sizeof(struct rfw_route_table), "route table",
		     &p, err, errlen);
	if (c < 0 || c > 1)
		return c < 0 ? -1 : fail(err, errlen, "artifact has %lld route tables", (long long)c);
	v->route_table = p;
	if (v->route_table && (verify_lpm(v, &v->route_table->v4, "route", err, errlen) < 0 ||
			       verify_lpm(v, &v->route_table->v6, "route", err, errlen) < 0))
		return -1;

	c = optional(tab, n, b, RFW_SEC_RULE_SOURCE, sizeof(struct rfw_rule_source), "rule source",
		     &p, err, errlen);
	if (c < 0)
		return -1;
	if (c && (uint64_t)c != (uint64_t)v->policy->rule_count + 1)
		return fail(err, errlen, "artifact rule source section has %lld records", (long long)c);
	v->rule_source = p;
	return 0;
}

int rfw_view_init(struct rfw_view *v, const void *buf, size_t len,
		  char *err, size_t errlen)
{
	const uint8_t *b = buf;
	const struct rfw_header *h = buf;
	const struct rfw_section *tab, *s;

	memset(v, 0, sizeof(*v));
	if (len < sizeof(*h))
		return fail(err, errlen, "artifact too short (%zu bytes) for a header", len);
	if (memcmp(h->magic, RFW_MAGIC, RFW_MAGIC_LEN) != 0)
		return fail(err, errlen, "not a rampart artifact (bad magic)");
	if (h->version_major != RFW_VERSION_MAJOR)
		return fail(err, errlen,
			    "artifact format version %u.%u, this build reads %u.x: recompile the policy with this rulec",
			    h->version_major, h->version_minor, RFW_VERSION_MAJOR);
	if (h->header_size < sizeof(*h) || h->header_size > len || h->header_size % 8)
		return fail(err, errlen, "artifact header size %u is invalid", h->header_size);
	if (h->file_size != len)
		return fail(err, errlen, "artifact is %zu bytes but its header says %llu (truncated?)",
			    len, (unsigned long long)h->file_size);
	if (h->reserved[0] || h->reserved[1])
		return fail(err, errlen, "artifact reserved header fields are not zero");
	if (file_checksum(b, len) != h->checksum)
		return fail(err, errlen, "artifact checksum mismatch (file corrupted)");
	if (h->features & ~RFW_FEATURES_KNOWN)
		return fail(err, errlen,
			    "artifact needs features 0x%llx that this build does not have",
			    (unsigned long long)(h->features & ~RFW_FEATURES_KNOWN));
	if (h->section_count > RFW_MAX_SECTIONS ||
	    h->header_size + (uint64_t)h->section_count * sizeof(*tab) > len)
		return fail(err, errlen, "artifact section table is out of bounds");

	tab = (const struct rfw_section *)(b + h->header_size);
	for (uint32_t i = 0; i < h->section_count; i++) {
		if (tab[i].offset % RFW_ALIGN || tab[i].offset > len ||
		    tab[i].size > len - tab[i].offset)
			return fail(err, errlen, "artifact section %u (type %u) is out of bounds",
				    i, tab[i].type);
	}

	if (need(tab, h->section_count, RFW_SEC_POLICY, sizeof(struct rfw_policy),
		 "policy", &s, err, errlen))
		return -1;
	if (s->count != 1)
		return fail(err, errlen, "artifact policy section must hold one entry");
	v->policy = (const void *)(b + s->offset);
	if (v->policy->default_action >= RFW_ACTION_COUNT)
		return fail(err, errlen, "artifact default action %u is unknown",
			    v->policy->default_action);
	if ((v->policy->tcp_mss > RFW_TCP_MSS_CLAMP && v->policy->tcp_mss < RFW_TCP_MSS_MIN) ||
	    (v->policy->tcp_mss != 0) != !!(h->features & RFW_FEAT_TCP_MSS))
		return fail(err, errlen, "artifact TCP MSS setting %u is invalid",
			    v->policy->tcp_mss);
	if (v->policy->rpf > RFW_RPF_STRICT ||
	    (v->policy->rpf != RFW_RPF_OFF) != !!(h->features & RFW_FEAT_RPF))
		return fail(err, errlen, "artifact reverse path setting %u is invalid", v->policy->rpf);

	if (need(tab, h->section_count, RFW_SEC_STRINGS, 1, "strings", &s, err, errlen))
		return -1;
	if (s->size == 0 || b[s->offset + s->size - 1] != '\0')
		return fail(err, errlen, "artifact string table is not terminated");
	v->strings = (const char *)(b + s->offset);
	v->strings_size = s->size;

	if (need(tab, h->section_count, RFW_SEC_RULES, sizeof(struct rfw_rule),
		 "rules", &s, err, errlen))
		return -1;
	if (s->count != (uint64_t)v->policy->rule_count + 1)
		return fail(err, errlen, "artifact has %llu rule records for %u rules",
			    (unsigned long long)s->count, v->policy->rule_count);
	v->rules = (const void *)(b + s->offset);

	if (need(tab, h->section_count, RFW_SEC_ACL, sizeof(struct rfw_acl_entry),
		 "acl", &s, err, errlen))
		return -1;
	if (s->count > UINT32_MAX)
		return fail(err, errlen, "artifact acl section is too large");
	v->acl = (const void *)(b + s->offset);
	v->acl_count = (uint32_t)s->count;

	for (uint32_t r = 0; r <= v->policy->rule_count; r++) {
		const struct rfw_rule *rule = &v->rules[r];

		if (!name_ok(v, rule->name_off))
			return fail(err, errlen, "artifact rule %u name is out of bounds or too long", r);
		if (rule->action >= RFW_ACTION_COUNT)
			return fail(err, errlen, "artifact rule %u has unknown action %u", r,
				    rule->action);
		if ((uint64_t)rule->first_entry + rule->entry_count > v->acl_count)
			return fail(err, errlen, "artifact rule %u entries are out of bounds", r);
	}
	if (verify_v11(v, tab, h->section_count, b, err, errlen) < 0)
		return -1;

	/* Leaf lanes before 1.5 had no interface word: read with this one's
	 * key they would answer wrongly, so such a file is refused, not
	 * guessed at (rulec of this version writes the new lanes). */
	if ((h->features & RFW_FEAT_ACL_HSPLIT) && !(h->features & RFW_FEAT_CLS_IFACE_KEY))
		return fail(err, errlen, "artifact classifier is format %u.%u, older than this build "
			    "reads (1.5); compile the policy again with this rulec",
			    h->version_major, h->version_minor);
	if ((h->features & RFW_FEAT_ACL_HSPLIT) &&
	    verify_cls(v, tab, h->section_count, b, err, errlen) < 0)
		return -1;
	for (unsigned kind = 0; kind < 2; kind++)
		if (verify_nat_cls(v, kind, tab, h->section_count, b, err, errlen) < 0)
			return -1;

	s = find_section(tab, h->section_count, RFW_SEC_SOURCE);
	v->source = "";
	if (s && s->size && b[s->offset + s->size - 1] == '\0')
		v->source = (const char *)(b + s->offset);

	v->base = buf;
	v->size = len;
	v->hdr = h;
	return 0;
}

/* The file is copied into private anonymous memory, not mapped: a mapped
 * file that someone overwrites in place (cp over the running policy) would
 * change the tables under the workers, and a truncation would fault them.
 * The copy is made read-only, so a stray write faults instead of
 * silently changing a verdict. */
int rfw_open(struct rfw_view *v, const char *path, char *err, size_t errlen)
{
	struct stat st;
	uint8_t *mem;
	size_t size, got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	memset(v, 0, sizeof(*v));
	if (fd < 0)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return fail(err, errlen, "%s: not a regular, non-empty file", path);
	}
	size = (size_t)st.st_size;
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		close(fd);
		return fail(err, errlen, "%s: %zu bytes: %s", path, size, strerror(errno));
	}
	while (got < size) {
		ssize_t r = read(fd, mem + got, size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = r < 0 ? errno : 0;

			close(fd);
			munmap(mem, size);
			return fail(err, errlen, "%s: %s", path,
				    e ? strerror(e) : "file shrank while being read");
		}
		got += (size_t)r;
	}
	close(fd);
	if (mprotect(mem, size, PROT_READ) < 0) {
		fail(err, errlen, "%s: mprotect: %s", path, strerror(errno));
		munmap(mem, size);
		return -1;
	}
	if (rfw_view_init(v, mem, size, err, errlen) < 0) {
		munmap(mem, size);
		return -1;
	}
	v->mapped = 1;
	return 0;
}

void rfw_close(struct rfw_view *v)
{
	if (v->mapped && v->base)
		munmap((void *)v->base, v->size);
	memset(v, 0, sizeof(*v));
}

const char *rfw_rule_name(const struct rfw_view *v, uint32_t n)
{
	if (!v->rules || n > v->policy->rule_count)
		return "?";
	return v->strings + v->rules[n].name_off;
}

const char *rfw_action_name(uint8_t action)
{
	switch (action) {
	case RFW_ACTION_DROP: return "drop";
	case RFW_ACTION_ACCEPT: return "accept";
	case RFW_ACTION_REJECT: return "reject";
	}
	return "?";
}

static uint64_t align_up(uint64_t x)
{
	return (x + RFW_ALIGN - 1) & ~(uint64_t)(RFW_ALIGN - 1);
}

void *rfw_build(const struct rfw_section_in *secs, uint32_t nsecs,
		uint64_t features, size_t *len)
{
	struct rfw_header *h;
	struct rfw_section *tab;
	uint64_t at = align_up(sizeof(*h) + (uint64_t)nsecs * sizeof(*tab));
	uint8_t *buf;

	if (nsecs > RFW_MAX_SECTIONS)
		return NULL;
	for (uint32_t i = 0; i < nsecs; i++)
		at = align_up(at + secs[i].size);
	buf = calloc(1, at);
	if (!buf)
		return NULL;

	h = (struct rfw_header *)buf;
	memcpy(h->magic, RFW_MAGIC, RFW_MAGIC_LEN);
	h->version_major = RFW_VERSION_MAJOR;
	h->version_minor = RFW_VERSION_MINOR;
	h->header_size = sizeof(*h);
	h->file_size = at;
	h->features = features;
	h->section_count = nsecs;
	tab = (struct rfw_section *)(buf + sizeof(*h));

	at = align_up(sizeof(*h) + (uint64_t)nsecs * sizeof(*tab));
	for (uint32_t i = 0; i < nsecs; i++) {
		tab[i].type = secs[i].type;
		tab[i].entry_size = secs[i].entry_size;
		tab[i].offset = at;
		tab[i].size = secs[i].size;
		tab[i].count = secs[i].count;
		if (secs[i].size)
			memcpy(buf + at, secs[i].data, secs[i].size);
		at = align_up(at + secs[i].size);
	}
	h->checksum = file_checksum(buf, at);
	*len = at;
	return buf;
}

int rfw_write_file(const char *path, const void *buf, size_t len)
{
	char tmp[4096];
	const uint8_t *p = buf;
	int fd, saved;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	if (rename(tmp, path) < 0) {
		fd = -1;
		goto fail;
	}
	return 0;
fail:
	saved = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = saved;
	return -1;
}
