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

/* Lane permutation: GCC spells it __builtin_shuffle with an index
 * vector, clang __builtin_shufflevector with constant indices (clang has
 * no __builtin_shuffle, and the fuzz build uses clang). */
#if defined(__clang__)
#define LANES_SHUF(v, ...) __builtin_shufflevector((v), (v), __VA_ARGS__)
#else
#define LANES_SHUF(v, ...) __builtin_shuffle((v), (lanes){__VA_ARGS__})
#endif

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
	sh = LANES_SHUF(cand, 4, 5, 6, 7, 0, 1, 2, 3);
	cand = LANES_MIN(cand, sh);
	sh = LANES_SHUF(cand, 2, 3, 0, 1, 6, 7, 4, 5);
	cand = LANES_MIN(cand, sh);
	sh = LANES_SHUF(cand, 1, 0, 3, 2, 5, 4, 7, 6);
	cand = LANES_MIN(cand, sh);
#else
	sh = LANES_SHUF(cand, 2, 3, 0, 1);
	cand = LANES_MIN(cand, sh);
	sh = LANES_SHUF(cand, 1, 0, 3, 2);
	cand = LANES_MIN(cand, sh);
#endif
	return cand[0];
}

/* Index of the leaf's first matching entry, or CLS_HS_NONE. */
static inline uint32_t leaf_first(const struct cls_hs *t, const struct rfw_cls_node *n,
				  const struct pkt_key *k, const uint32_t *f)
{
	const struct rfw_cls_leaf_block *l = t->leaves + n->left;
	uint32_t noports = k->has_ports ? 0 : RFW_CLS_LEAF_PORTS, found = CLS_HS_NONE;
	uint32_t nb = (n->right + RFW_CLS_LANES - 1) / RFW_CLS_LANES;

	/* blocks are in rule order: the first that finds a match wins */
	for (uint32_t j = 0; j < nb && found == CLS_HS_NONE; j++)
		found = block_first(t, &l[j], k, f, noports);
	return found;
}

/* Rule of the leaf's first matching entry, or CLS_HS_NONE. */
static inline uint32_t leaf_match(const struct cls_hs *t, const struct rfw_cls_node *n,
				  const struct pkt_key *k, const uint32_t *f)
{
	uint32_t found = leaf_first(t, n, k, f);

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

#if defined(__AVX512F__)
#include <immintrin.h>

/* AVX-512 walk of the packets walked[0..w): sixteen per vector, every
 * node field fetched with a gather. The scalar walk spends some forty
 * instructions per packet and level on loads, the select and the
 * active-list upkeep; here a level of sixteen packets is six gathers and
 * a few lane operations. The four vectors of a burst are stepped in turn,
 * so their gathers' cache misses overlap as the scalar walk's prefetches
 * did. A lane drops out (its mask bit clears) when its node is a leaf; the
 * steps are the scalar walk's (hs_next), and node_count is below 2^30 so
 * node * 2 stays a valid signed index at scale 8. */
static void walk_avx512(const struct cls_hs *t, const uint32_t (*f)[CLS_HS_FIELDS],
			const uint8_t *walked, uint32_t w, uint32_t *node)
{
	const char *nb = (const char *)t->nodes;
	__m512i nv[HS_BURST / 16], fi[HS_BURST / 16], pi[HS_BURST / 16];
	__mmask16 live[HS_BURST / 16], all[HS_BURST / 16];
	uint32_t groups = (w + 15) / 16, any;
	uint8_t idx8[HS_BURST];

	memcpy(idx8, walked, w);
	memset(idx8 + w, 0, sizeof(idx8) - w);
	for (uint32_t g = 0; g < groups; g++) {
		uint32_t left = w - 16 * g;

		all[g] = live[g] = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
		pi[g] = _mm512_cvtepu8_epi32(_mm_loadu_si128((const void *)(idx8 + 16 * g)));
		fi[g] = _mm512_slli_epi32(pi[g], 4);	/* row of f */
		nv[g] = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live[g], pi[g], node, 4);
	}
	do {
		any = 0;
		for (uint32_t g = 0; g < groups; g++) {
			__mmask16 act = live[g], cut, gt;
			__m512i n2, meta, dim, thr, left, right, v, next;

			if (!act)
				continue;
			n2 = _mm512_add_epi32(nv[g], nv[g]);
			{	/* a node is two 64-bit words, threshold|meta and
				 * left|right: four 8-lane gathers of them load half
				 * the elements four 16-lane ones would */
				__m256i lo = _mm512_castsi512_si256(n2);
				__m256i hi = _mm512_extracti64x4_epi64(n2, 1);
				__mmask8 ml = (__mmask8)act, mh = (__mmask8)(act >> 8);
				__m512i z = _mm512_setzero_si512();
				__m512i a0 = _mm512_mask_i32gather_epi64(z, ml, lo, nb, 8);
				__m512i a1 = _mm512_mask_i32gather_epi64(z, mh, hi, nb, 8);
				__m512i b0 = _mm512_mask_i32gather_epi64(z, ml, lo, nb + 8, 8);
				__m512i b1 = _mm512_mask_i32gather_epi64(z, mh, hi, nb + 8, 8);
				const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
								     20, 22, 24, 26, 28, 30);
				const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));

				thr = _mm512_permutex2var_epi32(a0, ev, a1);
				meta = _mm512_permutex2var_epi32(a0, od, a1);
				left = _mm512_permutex2var_epi32(b0, ev, b1);
				right = _mm512_permutex2var_epi32(b0, od, b1);
			}
			dim = _mm512_and_si512(meta, _mm512_set1_epi32(0xff));
			act &= _mm512_cmpneq_epi32_mask(dim, _mm512_set1_epi32(CLS_HS_LEAF));
			live[g] = act;
			if (!act)
				continue;
			any = 1;
			/* masked like the scalar walk's: a row of f is 16 words
			 * whatever the loader let through */
			v = _mm512_mask_i32gather_epi32(
				_mm512_setzero_si512(), act,
				_mm512_add_epi32(fi[g], _mm512_and_si512(dim, _mm512_set1_epi32(CLS_HS_DIM_MASK))),
				f, 4);
			gt = _mm512_cmpgt_epu32_mask(v, thr);
			next = _mm512_mask_blend_epi32(gt, left, right);
			cut = act & _mm512_cmpeq_epi32_mask(
				_mm512_and_si512(_mm512_srli_epi32(meta, 8), _mm512_set1_epi32(0xff)),
				_mm512_set1_epi32(RFW_CLS_CUT));
			if (cut) {
				__m512i sh = _mm512_and_si512(_mm512_srli_epi32(meta, 16),
							      _mm512_set1_epi32(0xff));
				__m512i ci = _mm512_min_epu32(
					_mm512_srlv_epi32(_mm512_sub_epi32(v, thr), sh), right);

				next = _mm512_mask_i32gather_epi32(next, cut, _mm512_add_epi32(left, ci),
								   t->children, 4);
			}
			nv[g] = _mm512_mask_mov_epi32(nv[g], act, next);
		}
	} while (any);
	for (uint32_t g = 0; g < groups; g++)
		_mm512_mask_i32scatter_epi32(node, all[g], pi[g], nv[g], 4);
}
#endif

void cls_hs_lookup_batch(const struct cls_hs *t, const struct pkt_key *const *keys,
			 uint32_t n, uint32_t *rules)
{
	while (n > HS_BURST) {
		cls_hs_lookup_batch(t, keys, HS_BURST, rules);
		keys += HS_BURST;
		rules += HS_BURST;
		n -= HS_BURST;
	}

	uint32_t f[HS_BURST][CLS_HS_FIELDS], best[HS_BURST], node[HS_BURST], ent[HS_BURST];
	uint8_t fam[HS_BURST], active[HS_BURST], walked[HS_BURST];

	/* Each key is the burst's first touch of its packet and a likely
	 * miss: ask for all of them before reading any, so the misses
	 * overlap instead of stalling key by key. */
	for (uint32_t i = 0; i < n; i++)
		__builtin_prefetch(keys[i]);
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
#if defined(__AVX512F__)
		if (t->node_count < 1u << 30) {
			walk_avx512(t, (const uint32_t (*)[CLS_HS_FIELDS])f, walked, w, node);
			m = 0;
			/* the scalar walk prefetches each leaf as it reaches it;
			 * here all of them at once, before the checks start */
			for (uint32_t j = 0; j < w; j++)
				__builtin_prefetch(&t->leaves[t->nodes[node[walked[j]]].left]);
		}
#endif
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
		/* The matching entry's rule number is a likely cache miss
		 * (entries are 64 bytes each, the leaf blocks only hold their
		 * index): find every packet's entry first and prefetch it, then
		 * read the rules, so the misses overlap instead of each one
		 * stalling its packet's leaf check. */
		for (uint32_t j = 0; j < w; j++) {
			uint32_t i = walked[j];

			ent[j] = leaf_first(t, &t->nodes[node[i]], keys[i], f[i]);
			__builtin_prefetch((const void *)((uintptr_t)t->entries +
							  (uintptr_t)ent[j] * sizeof(*t->entries)));
		}
		for (uint32_t j = 0; j < w; j++) {
			uint32_t i = walked[j], e = ent[j];
			/* no read for a miss: a loaded artifact may have a tree
			 * whose leaves are empty and no entries at all */
			uint32_t r = e == CLS_HS_NONE ? CLS_HS_NONE : t->entries[e].rule;

			best[i] = r < best[i] ? r : best[i];
		}
	}
	for (uint32_t i = 0; i < n; i++)
		rules[i] = best[i] == CLS_HS_NONE ? 0 : best[i];
}
