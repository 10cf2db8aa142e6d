/* Linear first-match classifier over the compiled entry list. */
#include "cls.h"

#include <string.h>

static inline int prefix_match(const uint8_t *a, const uint8_t *p, unsigned len)
{
	unsigned bytes = len / 8, bits = len % 8;

	for (unsigned i = 0; i < bytes; i++)
		if (a[i] != p[i])
			return 0;
	if (bits) {
		uint8_t mask = (uint8_t)(0xff00 >> bits);

		if ((a[bytes] ^ p[bytes]) & mask)
			return 0;
	}
	return 1;
}

int cls_entry_matches(const struct rfw_acl_entry *e, const struct pkt_key *k)
{
	if (e->family && e->family != k->family)
		return 0;
	if ((e->flags & RFW_ACL_PROTO) && e->proto != k->proto)
		return 0;
	if (e->flags & RFW_ACL_PORTS) {
		if (!k->has_ports ||
		    k->sport < e->sport_lo || k->sport > e->sport_hi ||
		    k->dport < e->dport_lo || k->dport > e->dport_hi)
			return 0;
	}
	return prefix_match(k->src, e->src, e->src_len) &&
	       prefix_match(k->dst, e->dst, e->dst_len);
}

void cls_table_init(struct cls_table *t, const struct rfw_view *v)
{
	memset(t, 0, sizeof(*t));
	t->entries = v->acl;
	t->count = v->acl_count;
	if (v->cls_trees) {
		t->hs = (struct cls_hs){
			.nodes = v->cls_nodes,
			.leaf_entries = v->cls_leaves,
			.entries = v->acl,
			.trees = *v->cls_trees,
			.node_count = v->cls_node_count,
			.leaf_entry_count = v->cls_leaf_count,
		};
		t->compiled = 1;
	}
}

uint32_t cls_lookup(const struct cls_table *t, const struct pkt_key *k)
{
	if (t->compiled)
		return cls_hs_lookup(&t->hs, k);
	if (k->family == 0)
		return 0;
	for (uint32_t i = 0; i < t->count; i++)
		if (cls_entry_matches(&t->entries[i], k))
			return t->entries[i].rule;
	return 0;
}

void cls_lookup_batch(const struct cls_table *t, const struct pkt_key *const *keys,
		      uint32_t n, uint32_t *rules)
{
	if (t->compiled) {
		cls_hs_lookup_batch(&t->hs, keys, n, rules);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		rules[i] = cls_lookup(t, keys[i]);
}
