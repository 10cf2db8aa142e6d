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

/* RFW_CLS_LANES lanes of 32 bits (4: one SSE register in any x86-64
 * build) with GCC vector extensions, no intrinsics to keep in step. */
typedef uint32_t lanes __attribute__((vector_size(4 * RFW_CLS_LANES)));
/* Blocks are 64-byte aligned in an artifact but only malloc-aligned
 * straight from the builder: load them unaligned (as fast when aligned). */
typedef uint32_t lanes_u __attribute__((vector_size(4 * RFW_CLS_LANES), aligned(4)));

/* A macro, not a function: were the lanes widened to 8, a 32-byte
 * vector return is an ABI question in a build without AVX. */
#define LANES_MIN(a, b) (((a) & (lanes)((a) < (b))) | ((b) & ~(lanes)((a) < (b))))

/* Smallest entry index among the block's lanes that admit the packet (a
 * lane's entry index, RFW_CLS_NONE in unused lanes, keeps rule order),
 * or RFW_CLS_NONE. All conditions are folded into one mask per lane, with
 * no branch: which entries match is unpredictable, and a branch per
 * condition cost more in mispredictions than the work. */
static inline uint32_t block_first(const struct cls_hs *t, const struct rfw_cls_leaf_block *l,
				   const struct pkt_key *k, const uint32_t *f, uint32_t noports)
{
	const lanes_u *v = (const lanes_u *)(const void *)l;
	lanes proto = v[9], miss, cand, sh;

	miss = ((f[CLS_DIM_SRC0] ^ v[1]) & v[2]) | ((f[CLS_DIM_DST0] ^ v[3]) & v[4]) |
	       ((f[CLS_DIM_PROTO] ^ proto) & (proto >> 8) & 0xff) | ((proto >> 16) & noports);
	miss |= (lanes)((f[CLS_DIM_SPORT] - v[5]) > v[6]);
	miss |= (lanes)((f[CLS_DIM_DPORT] - v[7]) > v[8]);
	cand = v[0] | (lanes)(miss != 0);	/* a miss is RFW_CLS_NONE */
	{	/* lanes that admit the packet but ask for the full entry (rare) */
		lanes full = (proto >> 17) & 1 & ~(lanes)(miss != 0);
		uint64_t w[sizeof(full) / 8], any = 0;

		memcpy(w, &full, sizeof(full));	/* OR the lanes as words, not one by one */
		for (unsigned j = 0; j < sizeof(full) / 8; j++)
			any |= w[j];
		if (__builtin_expect(!!any, 0))
			for (unsigned j = 0; j < RFW_CLS_LANES; j++)
				if (full[j] &&
				    !cls_entry_matches_inline(&t->sets, &t->entries[l->entry[j]], k))
					cand[j] = RFW_CLS_NONE;
	}
#if RFW_CLS_LANES == 8
	sh = __builtin_shuffle(cand, (lanes){4, 5, 6, 7, 0, 1, 2, 3});
	cand = LANES_MIN(cand, sh);
	sh = __builtin_shuffle(cand, (lanes){2, 3, 0, 1, 6, 7, 4, 5});
	cand = LANES_MIN(cand, sh);
	sh = __builtin_shuffle(cand, (lanes){1, 0, 3, 2, 5, 4, 7, 6});
	cand = LANES_MIN(cand, sh);
#else
	sh = __builtin_shuffle(cand, (lanes){2, 3, 0, 1});
	cand = LANES_MIN(cand, sh);
	sh = __builtin_shuffle(cand, (lanes){1, 0, 3, 2});
	cand = LANES_MIN(cand, sh);
#endif
	return cand[0];
}

/* Rule of the leaf's first matching entry, or CLS_HS_NONE. */
static inline uint32_t leaf_match(const struct cls_hs *t, const struct rfw_cls_node *n,
				  const struct pkt_key *k, const uint32_t *f)
{
	const struct rfw_cls_leaf_block *l = t->leaves + n->left;
	uint32_t noports = k->has_ports ? 0 : RFW_CLS_LEAF_PORTS, found = CLS_HS_NONE;
	uint32_t nb = (n->right + RFW_CLS_LANES - 1) / RFW_CLS_LANES;

	/* blocks are in rule order: the first that finds a match wins */
	for (uint32_t j = 0; j < nb && found == CLS_HS_NONE; j++)
		found = block_first(t, &l[j], k, f, noports);
	return found == CLS_HS_NONE ? CLS_HS_NONE : t->entries[found].rule;
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
		r = leaf_match(t, n, k, f);
		best = r < best ? r : best;
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
			uint32_t r = leaf_match(t, &t->nodes[node[i]], keys[i], f[i]);

			best[i] = r < best[i] ? r : best[i];
		}
	}
	for (uint32_t i = 0; i < n; i++)
		rules[i] = best[i] == CLS_HS_NONE ? 0 : best[i];
}
