/* HyperSplit lookup (packet side of cls_hs): walk the family's tree with
 * one compare per level, then check the leaf's few entries in rule order. */
#include <string.h>

#include "cls_hs.h"
#include "cls.h"

static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Field vectors are padded to 16 words, so a leaf's dim (0xff) masked
 * with CLS_HS_DIM_MASK still reads inside one: the batch walk steps
 * leaves too, without a branch, and discards the result. */
#define CLS_HS_FIELDS 16
#define CLS_HS_DIM_MASK (CLS_HS_FIELDS - 1)
_Static_assert(CLS_DIM_COUNT <= CLS_HS_FIELDS, "fields fit the padded vector");

static inline void key_fields(const struct pkt_key *k, uint32_t f[CLS_HS_FIELDS])
{
	for (unsigned w = 0; w < 4; w++) {
		f[CLS_DIM_SRC0 + w] = be32(k->src + 4 * w);
		f[CLS_DIM_DST0 + w] = be32(k->dst + 4 * w);
	}
	f[CLS_DIM_SPORT] = k->sport;
	f[CLS_DIM_DPORT] = k->dport;
	f[CLS_DIM_PROTO] = k->proto;
	for (unsigned d = CLS_DIM_COUNT; d < CLS_HS_FIELDS; d++)
		f[d] = 0;
}

/* Does leaf record r admit the packet? All conditions folded into one
 * word with no branch: leaf entries match unpredictably, and a branch
 * per condition cost more in mispredictions than the work itself. */
static inline int rec_admits(const struct rfw_cls_leaf *r, const uint32_t *f,
			     uint32_t noports)
{
	uint32_t miss = ((f[CLS_DIM_SRC0] ^ r->src) & r->src_mask) |
			((f[CLS_DIM_DST0] ^ r->dst) & r->dst_mask) |
			((f[CLS_DIM_PROTO] ^ r->proto) & r->proto_mask) |
			(r->flags & noports);

	miss |= (uint32_t)(f[CLS_DIM_SPORT] - r->sport_lo) > (uint32_t)(r->sport_hi - r->sport_lo);
	miss |= (uint32_t)(f[CLS_DIM_DPORT] - r->dport_lo) > (uint32_t)(r->dport_hi - r->dport_lo);
	return miss == 0;
}

/* First entry of the leaf that matches, among those that could still
 * beat `best` (leaf records are in rule order, so stop at the first that
 * cannot). */
static inline uint32_t leaf_match(const struct cls_hs *t, const struct rfw_cls_node *n,
				  const struct pkt_key *k, const uint32_t *f, uint32_t best)
{
	const struct rfw_cls_leaf *l = t->leaves + n->left;
	uint32_t noports = k->has_ports ? 0 : RFW_CLS_LEAF_PORTS;

	for (uint32_t i = 0; i < n->right; i++) {
		const struct rfw_cls_leaf *r = &l[i];
		const struct rfw_acl_entry *e;

		if (!rec_admits(r, f, noports))
			continue;
		e = &t->entries[r->entry];
		if (e->rule >= best)
			break;
		if (!(r->flags & RFW_CLS_LEAF_FULL) || cls_entry_matches_inline(&t->sets, e, k))
			return e->rule;
	}
	return 0;
}

/* One step down: a split compares, a cut indexes its children. The clamp
 * keeps even a wrong field value inside the node's children. The split's
 * choice is a select, not a branch: which way a packet goes is as good as
 * random, so a branch there mispredicted about half the time. */
static inline uint32_t hs_next(const struct cls_hs *t, const struct rfw_cls_node *nd,
			       const uint32_t *f)
{
	uint32_t v = f[nd->dim & CLS_HS_DIM_MASK];
	uint32_t right = -(uint32_t)(v > nd->threshold);

	if (nd->kind == RFW_CLS_CUT) {
		uint32_t idx = (v - nd->threshold) >> nd->shift;

		return t->children[nd->left + (idx > nd->right ? nd->right : idx)];
	}
	return nd->left ^ ((nd->left ^ nd->right) & right);
}

uint32_t cls_hs_lookup(const struct cls_hs *t, const struct pkt_key *k)
{
	uint32_t f[CLS_HS_FIELDS], best = CLS_HS_NONE;
	const struct rfw_cls_tree *trees;

	if (k->family != 4 && k->family != 6)
		return 0;
	key_fields(k, f);
	trees = t->trees.tree[k->family == 6];
	for (unsigned p = 0; p < CLS_HS_PARTS && trees[p].first_rule < best; p++) {
		const struct rfw_cls_node *n = &t->nodes[trees[p].root];
		uint32_t r;

		while (n->dim != CLS_HS_LEAF)
			n = &t->nodes[hs_next(t, n, f)];
		r = leaf_match(t, n, k, f, best);
		if (r && r < best)
			best = r;
	}
	return best == CLS_HS_NONE ? 0 : best;
}

/* The batch walks every packet of the burst one tree level at a time and
 * prefetches each packet's next node: a single walk is a chain of
 * dependent loads, a burst keeps many of them in flight (VPP-style).
 * A packet that reaches its leaf stays there (the step is a select) and
 * leaves the active list by not advancing its count, so the walk has no
 * per-packet branch; its leaf records are prefetched and checked after
 * the whole burst has walked the tree. */
#define HS_BURST 64

void cls_hs_lookup_batch(const struct cls_hs *t, const struct pkt_key *const *keys,
			 uint32_t n, uint32_t *rules)
{
	while (n > HS_BURST) {
		cls_hs_lookup_batch(t, keys, HS_BURST, rules);
		keys += HS_BURST;
		rules += HS_BURST;
		n -= HS_BURST;
	}

	uint32_t f[HS_BURST][CLS_HS_FIELDS], best[HS_BURST], node[HS_BURST];
	uint8_t fam[HS_BURST], active[HS_BURST], walked[HS_BURST];

	for (uint32_t i = 0; i < n; i++) {
		best[i] = CLS_HS_NONE;
		fam[i] = keys[i]->family == 6;
		if (keys[i]->family == 4 || keys[i]->family == 6)
			key_fields(keys[i], f[i]);
		else
			best[i] = 0;	/* non-IP: the default rule, no walk */
	}
	for (unsigned p = 0; p < CLS_HS_PARTS; p++) {
		uint32_t m = 0, w;

		for (uint32_t i = 0; i < n; i++) {
			const struct rfw_cls_tree *tr = &t->trees.tree[fam[i]][p];

			node[i] = tr->root;
			__builtin_prefetch(&t->nodes[tr->root]);
			active[m] = (uint8_t)i;
			m += best[i] && tr->first_rule < best[i];
		}
		memcpy(walked, active, m);
		w = m;
		while (m) {
			uint32_t still = 0;

			for (uint32_t j = 0; j < m; j++) {
				uint32_t i = active[j], next;
				const struct rfw_cls_node *nd = &t->nodes[node[i]];
				uint32_t leaf = nd->dim == CLS_HS_LEAF;

				next = hs_next(t, nd, f[i]);
				next = leaf ? node[i] : next;
				node[i] = next;
				__builtin_prefetch(leaf ? (const void *)&t->leaves[nd->left]
							: (const void *)&t->nodes[next]);
				active[still] = (uint8_t)i;
				still += !leaf;
			}
			m = still;
		}
		for (uint32_t j = 0; j < w; j++) {
			uint32_t i = walked[j];
			uint32_t r = leaf_match(t, &t->nodes[node[i]], keys[i], f[i], best[i]);

			if (r && r < best[i])
				best[i] = r;
		}
	}
	for (uint32_t i = 0; i < n; i++)
		rules[i] = best[i] == CLS_HS_NONE ? 0 : best[i];
}
