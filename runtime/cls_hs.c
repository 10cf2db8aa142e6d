/* HyperSplit lookup (packet side of cls_hs): walk the family's tree with
 * one compare per level, then check the leaf's few entries in rule order. */
#include "cls_hs.h"
#include "cls.h"

static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void key_fields(const struct pkt_key *k, uint32_t f[CLS_DIM_COUNT])
{
	for (unsigned w = 0; w < 4; w++) {
		f[CLS_DIM_SRC0 + w] = be32(k->src + 4 * w);
		f[CLS_DIM_DST0 + w] = be32(k->dst + 4 * w);
	}
	f[CLS_DIM_SPORT] = k->sport;
	f[CLS_DIM_DPORT] = k->dport;
	f[CLS_DIM_PROTO] = k->proto;
}

static inline uint32_t leaf_match(const struct cls_hs *t, const struct rfw_cls_node *n,
				  const struct pkt_key *k)
{
	const uint32_t *l = t->leaf_entries + n->left;

	for (uint32_t i = 0; i < n->right; i++) {
		const struct rfw_acl_entry *e = &t->entries[l[i]];

		if (cls_entry_matches(e, k))
			return e->rule;
	}
	return 0;
}

uint32_t cls_hs_lookup(const struct cls_hs *t, const struct pkt_key *k)
{
	uint32_t f[CLS_DIM_COUNT], best = CLS_HS_NONE;
	const struct rfw_cls_tree *trees;

	if (k->family != 4 && k->family != 6)
		return 0;
	key_fields(k, f);
	trees = t->trees.tree[k->family == 6];
	for (unsigned p = 0; p < CLS_HS_PARTS && trees[p].first_rule < best; p++) {
		const struct rfw_cls_node *n = &t->nodes[trees[p].root];
		uint32_t r;

		while (n->dim != CLS_HS_LEAF)
			n = &t->nodes[f[n->dim] <= n->threshold ? n->left : n->right];
		r = leaf_match(t, n, k);
		if (r && r < best)
			best = r;
	}
	return best == CLS_HS_NONE ? 0 : best;
}

void cls_hs_lookup_batch(const struct cls_hs *t, const struct pkt_key *const *keys,
			 uint32_t n, uint32_t *rules)
{
	for (uint32_t i = 0; i < n; i++)
		rules[i] = cls_hs_lookup(t, keys[i]);
}
