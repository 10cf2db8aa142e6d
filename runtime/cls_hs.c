/* HyperSplit lookup (packet side of cls_hs): walk the family's tree with
 * one compare per level, then check the leaf's few entries in rule order,
 * four per SIMD compare of 16-bit ranges (struct rfw_cls_leaf_block). The
 * best match so far is an entry index (entries are in rule order), and
 * its rule number is read once per packet at the end. */
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

/* The leaf key's words that are not node fields (enum rfw_cls_key_word)
 * live in the padding of the field vector, which no node tests. */
#define CLS_HS_F_PROTO CLS_DIM_COUNT		/* proto << 1 | has ports */
#define CLS_HS_F_IFACES (CLS_DIM_COUNT + 1)	/* in << 8 | out */
_Static_assert(CLS_HS_F_IFACES < CLS_HS_DIM_MASK, "a leaf's masked dim reads another word");

static inline uint32_t iface_key(uint8_t ifindex)
{
	return ifindex < RFW_CLS_IF_NONE ? ifindex : RFW_CLS_IF_NONE;
}

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
	f[CLS_HS_F_PROTO] = (uint32_t)k->proto << 1 | !!k->has_ports;
	f[CLS_HS_F_IFACES] = iface_key(k->in_if) << 8 | iface_key(k->out_if);
}

/* Lanes [4k, 4k + 4) of a 64-bit lane mask are block k's entries. */
#define LEAF_CHUNK 16u		/* blocks per 64-bit lane mask */
static const uint32_t no_entry = CLS_HS_NONE;
/* A block no packet passes (the key's IFACES word is at most
 * RFW_CLS_IFACES_KEY_MAX), checked in
 * place of blocks past a short leaf's end. */
static const struct rfw_cls_leaf_block never_block __attribute__((aligned(64))) = {
	.lo[RFW_CLS_KW_IFACES] = {0xffff, 0xffff, 0xffff, 0xffff}};

/* Bits 15, 31, 47, 63 of x to bits 0..3 (one multiply: the four
 * products land on bits 45..48 without carries). */
static inline uint32_t nibble_of_chunks(uint64_t x)
{
	return (uint32_t)((((x >> 15) & 0x0001000100010001ull) * 0x0000200040008001ull) >> 45) & 0xf;
}

#if defined(__AVX512BW__)
#include <immintrin.h>

/* The packet's leaf key, each word in the four lanes a block gives it
 * (word-major, as the blocks), from its field vector in one permute. */
static inline __m512i leaf_key(const uint32_t *f)
{
	static const uint16_t idx[32] __attribute__((aligned(64))) = {
		1, 1, 1, 1, 0, 0, 0, 0, 9, 9, 9, 9, 8, 8, 8, 8,
		2 * CLS_DIM_SPORT, 2 * CLS_DIM_SPORT, 2 * CLS_DIM_SPORT, 2 * CLS_DIM_SPORT,
		2 * CLS_DIM_DPORT, 2 * CLS_DIM_DPORT, 2 * CLS_DIM_DPORT, 2 * CLS_DIM_DPORT,
		2 * CLS_HS_F_PROTO, 2 * CLS_HS_F_PROTO, 2 * CLS_HS_F_PROTO, 2 * CLS_HS_F_PROTO,
		2 * CLS_HS_F_IFACES, 2 * CLS_HS_F_IFACES, 2 * CLS_HS_F_IFACES, 2 * CLS_HS_F_IFACES,
	};

	return _mm512_permutexvar_epi16(_mm512_load_si512((const void *)idx),
					_mm512_loadu_si512((const void *)f));
}
typedef __m512i leaf_key_t;
/* one permute at each leaf check: cheaper than keeping 64 bytes per
 * packet of the burst (measured) */
#define LEAF_KEY_KEPT 0

/* Lanes of block l that the packet passes (bits 0..3), and in *full those
 * that ask for the full entry. */
static inline uint32_t block_pass(const struct rfw_cls_leaf_block *l, const __m512i *key,
				  uint32_t *full)
{
	const __m512i fullbit = _mm512_set1_epi16((short)RFW_CLS_LEAF_FULL);
	__m512i lo = _mm512_loadu_si512((const void *)l->lo);
	__m512i hi = _mm512_loadu_si512((const void *)l->hi);
	/* bit 4w + j: word w of lane j is inside its range */
	uint32_t ok = _mm512_mask_cmple_epu16_mask(_mm512_cmple_epu16_mask(lo, *key), *key, hi);

	ok &= ok >> 16;
	ok &= ok >> 8;
	ok &= ok >> 4;
	/* only the IFACES word (bits 28..31) carries the flag */
	*full = _mm512_mask_test_epi16_mask(0xf0000000u, hi, fullbit) >> 28;
	return ok & 0xf;
}

#elif defined(__AVX2__)
#include <immintrin.h>

/* AVX2 (no AVX-512: AMD Zen 1-3, Intel before Skylake-SP): the same
 * compares on two 256-bit vectors, words 0-3 and 4-7 of the four lanes.
 * AVX2 has no unsigned 16-bit compare; lo <= key is max(key, lo) == key
 * and key <= hi is min(key, hi) == key. */
struct leaf_key {
	__m256i v[2];	/* word w in all four 16-bit lanes, word-major */
};
typedef struct leaf_key leaf_key_t;
/* built once per packet, as the portable form's */
#define LEAF_KEY_KEPT 1

static inline leaf_key_t leaf_key(const uint32_t *f)
{
	/* each word's four lanes are one 64-bit broadcast of its value */
	const uint64_t r = 0x0001000100010001ull;
	leaf_key_t k;

	k.v[0] = _mm256_setr_epi64x((long long)((f[CLS_DIM_SRC0] >> 16) * r),
				    (long long)((f[CLS_DIM_SRC0] & 0xffff) * r),
				    (long long)((f[CLS_DIM_DST0] >> 16) * r),
				    (long long)((f[CLS_DIM_DST0] & 0xffff) * r));
	k.v[1] = _mm256_setr_epi64x((long long)((f[CLS_DIM_SPORT] & 0xffff) * r),
				    (long long)((f[CLS_DIM_DPORT] & 0xffff) * r),
				    (long long)((f[CLS_HS_F_PROTO] & 0xffff) * r),
				    (long long)((f[CLS_HS_F_IFACES] & 0xffff) * r));
	return k;
}

static inline uint32_t block_pass(const struct rfw_cls_leaf_block *l, const leaf_key_t *key,
				  uint32_t *full)
{
	const __m256i *lo = (const __m256i *)(const void *)l->lo;
	const __m256i *hi = (const __m256i *)(const void *)l->hi;
	__m256i ok0 = _mm256_and_si256(
		_mm256_cmpeq_epi16(_mm256_max_epu16(key->v[0], _mm256_loadu_si256(&lo[0])), key->v[0]),
		_mm256_cmpeq_epi16(_mm256_min_epu16(key->v[0], _mm256_loadu_si256(&hi[0])), key->v[0]));
	__m256i ok1 = _mm256_and_si256(
		_mm256_cmpeq_epi16(_mm256_max_epu16(key->v[1], _mm256_loadu_si256(&lo[1])), key->v[1]),
		_mm256_cmpeq_epi16(_mm256_min_epu16(key->v[1], _mm256_loadu_si256(&hi[1])), key->v[1]));
	__m256i ok = _mm256_and_si256(ok0, ok1);	/* 64-bit chunk c: words c, c + 4 */
	__m128i ok2 = _mm_and_si128(_mm256_castsi256_si128(ok), _mm256_extracti128_si256(ok, 1));
	/* 16-bit lanes (all ones or zero) to bytes: bits 0-3 and 4-7 of the
	 * mask are the lanes' results on words {0,2,4,6} and {1,3,5,7} */
	uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(ok2, ok2));
	uint64_t h;

	memcpy(&h, l->hi[RFW_CLS_KW_IFACES], sizeof(h));
	*full = nibble_of_chunks(h & (RFW_CLS_LEAF_FULL * 0x0001000100010001ull));
	return m & (m >> 4) & 0xf;
}

#else

/* Portable form with GCC vector extensions: the same compares on
 * 16-byte vectors (two key words of four lanes each), which every x86-64
 * and arm64 target has; wider ones GCC splits element by element. */
typedef uint16_t v16x8 __attribute__((vector_size(16)));
typedef uint16_t v16x8_u __attribute__((vector_size(16), aligned(2)));
#define KEY_VECS (sizeof(struct rfw_cls_leaf_block) / 2 / sizeof(v16x8))
struct leaf_key {
	v16x8 v[KEY_VECS];	/* word w in all four 16-bit lanes */
};
typedef struct leaf_key leaf_key_t;
/* built once per packet: several scalar steps, each tree's leaf uses it */
#define LEAF_KEY_KEPT 1

static inline leaf_key_t leaf_key(const uint32_t *f)
{
	const uint16_t w[RFW_CLS_KEY_WORDS] = {
		(uint16_t)(f[CLS_DIM_SRC0] >> 16), (uint16_t)f[CLS_DIM_SRC0],
		(uint16_t)(f[CLS_DIM_DST0] >> 16), (uint16_t)f[CLS_DIM_DST0],
		(uint16_t)f[CLS_DIM_SPORT], (uint16_t)f[CLS_DIM_DPORT],
		(uint16_t)f[CLS_HS_F_PROTO], (uint16_t)f[CLS_HS_F_IFACES],
	};
	uint64_t q[RFW_CLS_KEY_WORDS];
	leaf_key_t k;

	for (unsigned i = 0; i < RFW_CLS_KEY_WORDS; i++)
		q[i] = w[i] * 0x0001000100010001ull;
	memcpy(k.v, q, sizeof(k.v));
	return k;
}

static inline uint32_t block_pass(const struct rfw_cls_leaf_block *l, const leaf_key_t *key,
				  uint32_t *full)
{
	const v16x8_u *lo = (const v16x8_u *)(const void *)l->lo;
	const v16x8_u *hi = (const v16x8_u *)(const void *)l->hi;
	v16x8 ok = (v16x8)((key->v[0] >= lo[0]) & (key->v[0] <= hi[0]));
	uint64_t w[2], h;

	for (unsigned i = 1; i < KEY_VECS; i++)
		ok &= (v16x8)((key->v[i] >= lo[i]) & (key->v[i] <= hi[i]));
	memcpy(w, &ok, sizeof(w));
	/* 16-bit chunk j of w[0] & w[1]: lane j is inside on every word */
	memcpy(&h, l->hi[RFW_CLS_KW_IFACES], sizeof(h));
	*full = nibble_of_chunks(h & (RFW_CLS_LEAF_FULL * 0x0001000100010001ull));
	return nibble_of_chunks(w[0] & w[1]);
}
#endif

/* The rest of an entry for a packet that passed its lane. The lane has
 * checked exactly what cls_hs_build.c put in it from the entry's own box:
 * the first 32 bits of both addresses (a prefix is a range on each
 * 16-bit half), ports, protocol, needs-ports, the family by the tree,
 * and the interfaces where they make one range of the IFACES word.
 * Left: prefixes longer than 32 bits (IPv6) and "needs ports" without
 * one protocol (the PROTO word is then wider than the entry), which
 * take the whole entry, else the conditions outside the box (the
 * interface sets no range says, inline; then the rare ones). */
static inline int lane_confirm(const struct cls_sets *s, const struct rfw_acl_entry *e,
			       const struct pkt_key *k)
{
	if (__builtin_expect(e->src_len > 32 || e->dst_len > 32 ||
			     (e->flags & (RFW_ACL_PROTO | RFW_ACL_PORTS)) == RFW_ACL_PORTS, 0))
		return cls_entry_matches_inline(s, e, k);
	return cls_entry_rest_matches(s, e, k);
}

/* Index of the non-empty leaf's first entry that admits the packet, or
 * CLS_HS_NONE (callers pass over empty leaves; nothing can pass there).
 * All blocks of a chunk are checked (no early exit: which one matches is
 * unpredictable); the first two always, a leaf shorter than that reading
 * never_block instead. GCC makes that choice a branch; AVX-512 masked
 * loads and a forced branch-free select both measured no better. A lane that asks for the full entry is confirmed with
 * it (rare); the lowest lane that stands is the first match. */
static inline __attribute__((always_inline)) uint32_t
leaf_first(const struct cls_hs *t, const struct rfw_cls_node *n, const struct pkt_key *k,
	   const leaf_key_t *key)
{
	const struct rfw_cls_leaf_block *l = t->leaves + n->left;
	uint32_t nb = (n->right + RFW_CLS_LANES - 1) / RFW_CLS_LANES;

	for (uint32_t c = 0;; c += LEAF_CHUNK) {
		uint32_t left = nb - c, cnt = left < LEAF_CHUNK ? left : LEAF_CHUNK, fl;
		uint64_t pass, full;

		pass = block_pass(&l[c], key, &fl);
		full = fl;
		pass |= (uint64_t)block_pass(cnt > 1 ? &l[c + 1] : &never_block, key, &fl) << 4;
		full |= (uint64_t)fl << 4;
		for (uint32_t j = 2; j < cnt; j++) {
			pass |= (uint64_t)block_pass(&l[c + j], key, &fl) << (4 * j);
			full |= (uint64_t)fl << (4 * j);
		}
		while (__builtin_expect(!!(pass & -pass & full), 0)) {
			uint32_t lane = (uint32_t)__builtin_ctzll(pass);
			uint32_t e = t->leaf_entries[(size_t)(n->left + c) * RFW_CLS_LANES + lane];

			if (lane_confirm(&t->sets, &t->entries[e], k))
				return e;
			pass &= pass - 1;
		}
		/* a select, not a branch: whether a leaf matches is as
		 * unpredictable as where a packet goes */
		{
			const uint32_t *src = pass ? &t->leaf_entries[(size_t)(n->left + c) * RFW_CLS_LANES +
								     (uint32_t)__builtin_ctzll(pass)]
						   : &no_entry;

			if (__builtin_expect(nb <= c + LEAF_CHUNK, 1) || pass)
				return *src;
		}
	}
}

/* A leaf's first block (both lines) and its entry indices (lanes). */
static inline void leaf_prefetch(const struct rfw_cls_leaf_block *l, const uint32_t *lanes)
{
	__builtin_prefetch(l->lo);
	__builtin_prefetch(l->hi);
	__builtin_prefetch(lanes);
}

/* One step down: a split compares, a cut indexes its children. The clamp
 * keeps even a wrong field value inside the node's children. The split's
 * choice is a select, not a branch: which way a packet goes is as good as
 * random, so a branch there mispredicted about half the time. */
static inline uint32_t node_step(const uint32_t *children, uint32_t thr, uint32_t kind,
				 uint32_t shift, uint32_t left, uint32_t right, uint32_t v)
{
	if (__builtin_expect(kind == RFW_CLS_CUT, 0)) {
		uint32_t idx = (v - thr) >> shift;

		return children[left + (idx > right ? right : idx)];
	}
	return left ^ ((left ^ right) & -(uint32_t)(v > thr));
}

static inline uint32_t hs_next(const struct cls_hs *t, const struct rfw_cls_node *nd,
			       const uint32_t *f)
{
	return node_step(t->children, nd->threshold, nd->kind, nd->shift, nd->left, nd->right,
			 f[nd->dim & CLS_HS_DIM_MASK]);
}

uint32_t cls_hs_lookup(const struct cls_hs *t, const struct pkt_key *k)
{
	uint32_t f[CLS_HS_FIELDS], best = CLS_HS_NONE;
	const struct rfw_cls_tree *trees;
	leaf_key_t key;

	if (k->family != 4 && k->family != 6)
		return 0;
	key_fields(k, f);
	key = leaf_key(f);
	trees = t->trees.tree[k->family == 6];
	for (unsigned p = 0; p < CLS_HS_PARTS && t->first_entry[k->family == 6][p] < best; p++) {
		const struct rfw_cls_node *n = &t->nodes[trees[p].root];
		uint32_t e;

		while (n->dim != CLS_HS_LEAF)
			n = &t->nodes[hs_next(t, n, f)];
		if (!n->right)
			continue;
		e = leaf_first(t, n, k, &key);
		best = e < best ? e : best;
	}
	return best == CLS_HS_NONE ? 0 : t->entries[best].rule;
}

void cls_hs_first_entries(struct cls_hs *t, uint32_t count)
{
	for (unsigned f = 0; f < 2; f++)
		for (unsigned p = 0; p < CLS_HS_PARTS; p++) {
			uint32_t rule = t->trees.tree[f][p].first_rule, lo = 0, hi = count;

			if (t->trees.tree[f][p].root == CLS_HS_NONE) {
				t->first_entry[f][p] = CLS_HS_NONE;
				continue;
			}
			while (lo < hi) {	/* first entry whose rule is >= rule */
				uint32_t mid = lo + (hi - lo) / 2;

				if (t->entries[mid].rule < rule)
					lo = mid + 1;
				else
					hi = mid;
			}
			t->first_entry[f][p] = lo;
		}
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
 * a few lane operations. The vectors of a burst are stepped in turn, so
 * their gathers' cache misses overlap as the scalar walk's prefetches
 * did. A lane whose node is a leaf writes it to node[] and leaves: after
 * each level the packets still walking are packed into the first
 * vectors (compress), so a level costs ceil(walking / 16) vectors, not
 * one per vector that still holds the deepest packet. The steps are the
 * scalar walk's (hs_next), and node_count is below 2^30 so node * 2
 * stays a valid signed index at scale 8. */
static void walk_avx512(const struct cls_hs *t, const uint32_t (*f)[CLS_HS_FIELDS],
			const uint8_t *walked, uint32_t w, uint32_t *node)
{
	const char *nb = (const char *)t->nodes;
	uint32_t pk[HS_BURST] __attribute__((aligned(64)));	/* packet of each lane */
	uint32_t nk[HS_BURST] __attribute__((aligned(64)));	/* its node */
	uint32_t first = 1, root = w ? node[walked[0]] : 0;

	for (uint32_t j = 0; j < w; j++) {
		pk[j] = walked[j];
		nk[j] = node[walked[j]];
	}
	while (w) {
		uint32_t groups = (w + 15) / 16, out = 0;

		for (uint32_t g = 0; g < groups; g++) {
			uint32_t left = w - 16 * g;
			__mmask16 act = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1), cut, gt, leaf;
			__m512i pi = _mm512_maskz_loadu_epi32(act, pk + 16 * g);
			__m512i nv = _mm512_maskz_loadu_epi32(act, nk + 16 * g);
			__m512i n2 = _mm512_add_epi32(nv, nv), meta, dim, thr, lft, rgt, v, next;

			if (first && !_mm512_mask_cmpneq_epi32_mask(act, nv, _mm512_set1_epi32((int)root))) {
				/* every lane at one node (the tree's root, when the
				 * burst is one family): broadcast it, no gathers
				 * (about 1-3% on the 10k sets) */
				const struct rfw_cls_node *r = &t->nodes[root];

				thr = _mm512_set1_epi32((int)r->threshold);
				meta = _mm512_set1_epi32((int)(r->dim | (uint32_t)r->kind << 8 |
							       (uint32_t)r->shift << 16));
				lft = _mm512_set1_epi32((int)r->left);
				rgt = _mm512_set1_epi32((int)r->right);
			} else {	/* a node is two 64-bit words, threshold|meta and
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
				lft = _mm512_permutex2var_epi32(b0, ev, b1);
				rgt = _mm512_permutex2var_epi32(b0, od, b1);
			}
			dim = _mm512_and_si512(meta, _mm512_set1_epi32(0xff));
			leaf = act & _mm512_cmpeq_epi32_mask(dim, _mm512_set1_epi32(CLS_HS_LEAF));
			if (leaf)
				_mm512_mask_i32scatter_epi32(node, leaf, pi, nv, 4);
			act &= ~leaf;
			if (!act)
				continue;
			/* masked like the scalar walk's: a row of f is 16 words
			 * whatever the loader let through */
			v = _mm512_mask_i32gather_epi32(
				_mm512_setzero_si512(), act,
				_mm512_add_epi32(_mm512_slli_epi32(pi, 4),
						 _mm512_and_si512(dim, _mm512_set1_epi32(CLS_HS_DIM_MASK))),
				f, 4);
			gt = _mm512_cmpgt_epu32_mask(v, thr);
			next = _mm512_mask_blend_epi32(gt, lft, rgt);
			cut = act & _mm512_cmpeq_epi32_mask(
				_mm512_and_si512(_mm512_srli_epi32(meta, 8), _mm512_set1_epi32(0xff)),
				_mm512_set1_epi32(RFW_CLS_CUT));
			if (cut) {
				__m512i sh = _mm512_and_si512(_mm512_srli_epi32(meta, 16),
							      _mm512_set1_epi32(0xff));
				__m512i ci = _mm512_min_epu32(
					_mm512_srlv_epi32(_mm512_sub_epi32(v, thr), sh), rgt);

				next = _mm512_mask_i32gather_epi32(next, cut, _mm512_add_epi32(lft, ci),
								   t->children, 4);
			}
			/* out <= 16 * g: the packed lanes never overtake the
			 * group being read */
			_mm512_mask_compressstoreu_epi32(pk + out, act, pi);
			_mm512_mask_compressstoreu_epi32(nk + out, act, next);
			out += (uint32_t)__builtin_popcount(act);
		}
		w = out;
		first = 0;
	}
}
#endif

/* Scalar walk of the packets active[0..m) (the list is reused), one tree
 * level at a time over the burst, each packet's next node prefetched.
 * The steps are node_step's; a node is read as its two 64-bit words and
 * the table's arrays are held in locals, so the loop keeps its state in
 * registers (measured: the per-field form reloaded them and spilled). */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && sizeof(struct rfw_cls_node) == 16,
	       "a node's first word is threshold | dim << 32 | kind << 40 | shift << 48");
static __attribute__((noinline)) void walk_scalar(const struct cls_hs *t, const uint32_t (*f)[CLS_HS_FIELDS],
			uint8_t *active, uint32_t m, uint32_t *node)
{
	const char *const nodes = (const char *)t->nodes;
	const uint32_t *const children = t->children;
	const struct rfw_cls_leaf_block *const leaves = t->leaves;

	while (m) {
		uint32_t still = 0;

		for (uint32_t j = 0; j < m; j++) {
			uint32_t i = active[j], cur = node[i], thr, meta, left, right, next;
			uint64_t w0, w1;

			memcpy(&w0, nodes + (size_t)cur * sizeof(struct rfw_cls_node), 8);
			memcpy(&w1, nodes + (size_t)cur * sizeof(struct rfw_cls_node) + 8, 8);
			thr = (uint32_t)w0;
			meta = (uint32_t)(w0 >> 32);	/* dim | kind << 8 | shift << 16 */
			left = (uint32_t)w1;
			right = (uint32_t)(w1 >> 32);
			if ((meta & 0xff) == CLS_HS_LEAF) {	/* arrived: stays, leaves the list */
				__builtin_prefetch(&leaves[left]);
				continue;
			}
			next = node_step(children, thr, meta >> 8 & 0xff, meta >> 16 & 0xff, left, right,
					 f[i][meta & CLS_HS_DIM_MASK]);
			node[i] = next;
			__builtin_prefetch(nodes + (size_t)next * sizeof(struct rfw_cls_node));
			active[still++] = (uint8_t)i;
		}
		m = still;
	}
}

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
#if LEAF_KEY_KEPT
	leaf_key_t lk[HS_BURST];	/* once per packet, for every tree's leaf */
#endif
	uint8_t fam[HS_BURST], ip[HS_BURST], active[HS_BURST], walked[HS_BURST];

	/* Each key is the burst's first touch of its packet and a likely
	 * miss: ask for all of them before reading any, so the misses
	 * overlap instead of stalling key by key. */
	for (uint32_t i = 0; i < n; i++)
		__builtin_prefetch(keys[i]);
	for (uint32_t i = 0; i < n; i++) {
		/* best: the first matching entry's index so far (entries are in
		 * rule order); non-IP starts at 0, which no tree can beat */
		best[i] = CLS_HS_NONE;
		fam[i] = keys[i]->family == 6;
		ip[i] = keys[i]->family == 4 || keys[i]->family == 6;
		if (keys[i]->family == 4 || keys[i]->family == 6) {
			key_fields(keys[i], f[i]);
#if LEAF_KEY_KEPT
			lk[i] = leaf_key(f[i]);
#endif
		} else {
			best[i] = 0;	/* non-IP: the default rule, no walk */
		}
	}
	for (unsigned p = 0; p < CLS_HS_PARTS; p++) {
		uint32_t m = 0, w;

		/* trees are in order, the empty ones last */
		if (t->first_entry[0][p] == CLS_HS_NONE && t->first_entry[1][p] == CLS_HS_NONE)
			break;

		for (uint32_t i = 0; i < n; i++) {
			const struct rfw_cls_tree *tr = &t->trees.tree[fam[i]][p];

			node[i] = tr->root;
			__builtin_prefetch(&t->nodes[tr->root]);
			active[m] = (uint8_t)i;
			m += t->first_entry[fam[i]][p] < best[i];
		}
		memcpy(walked, active, m);
		w = m;
#if defined(__AVX512F__)
		if (t->node_count < 1u << 30) {
			walk_avx512(t, (const uint32_t (*)[CLS_HS_FIELDS])f, walked, w, node);
			m = 0;
		}
#endif
		if (m)
			walk_scalar(t, (const uint32_t (*)[CLS_HS_FIELDS])f, active, m, node);
		/* Only packets at a non-empty leaf are checked: an empty
		 * leaf (most walks of a wildcard partition's tree end at one)
		 * cannot improve the match, and leaving it out of the list
		 * (no branch) spares its check and the unpredictable branch
		 * on its size. Every listed leaf's lines are asked for before
		 * the checks start. */
		m = 0;
		for (uint32_t j = 0; j < w; j++) {
			const struct rfw_cls_node *lf = &t->nodes[node[walked[j]]];

			/* an empty leaf's prefetch would fetch a neighbour's
			 * lines for nothing: it asks for constant ones */
			leaf_prefetch(lf->right ? &t->leaves[lf->left] : &never_block,
				      lf->right ? &t->leaf_entries[(size_t)lf->left * RFW_CLS_LANES]
						: &no_entry);
			active[m] = walked[j];
			m += lf->right != 0;
		}
		for (uint32_t j = 0; j < m; j++) {
			uint32_t i = active[j], e;
#if LEAF_KEY_KEPT
			const leaf_key_t *key = &lk[i];
#else
			leaf_key_t kf = leaf_key(f[i]);
			const leaf_key_t *key = &kf;
#endif

			e = leaf_first(t, &t->nodes[node[i]], keys[i], key);
			best[i] = e < best[i] ? e : best[i];
		}
	}
	/* The rule number is in the 64-byte entry, a likely cache miss: one
	 * per packet, all asked for before any is read, so they overlap. No
	 * read without a match: a loaded artifact may have no entries. */
	for (uint32_t i = 0; i < n; i++)
		__builtin_prefetch((const void *)((uintptr_t)t->entries +
						  (uintptr_t)best[i] * sizeof(*t->entries)));
	for (uint32_t i = 0; i < n; i++)
		rules[i] = ip[i] && best[i] != CLS_HS_NONE ? t->entries[best[i]].rule : 0;
}
