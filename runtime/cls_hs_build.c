/* HyperSplit builder (build side of cls_hs). Each node chooses the field
 * with the most distinct rule boundaries inside its region and splits it at
 * the weighted median of the elementary segments, so both halves carry
 * about the same rule mass. A rule that covers the whole region of a node
 * makes every later rule unreachable there; they are cut off. Runs in
 * rulec, never on the packet path. */
#include "cls_hs.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_LEAF_SIZE 8
#define DEFAULT_MAX_DEPTH 64
/* An IPv4 address field counts as "small" for CutSplit's partition from
 * a prefix this long (IPv6: 64). It was 16: ClassBench ipc1's /14 and /15
 * prefixes then fell in the wildcard partition, whose tree every packet
 * without an earlier match walks (7.5 levels there; 4.3 levels and a
 * quarter fewer walks at 8, about 10% less time; fw1 and acl1 no slower). */
#define DEFAULT_SMALL_V4 8
/* Rule replication can grow a tree exponentially on adversarial sets; past
 * this many nodes every new node is a leaf (bigger leaves, bounded memory). */
#define NODE_BUDGET (1u << 21)
/* A multi-way cut may replicate rules into its children up to this factor
 * (HiCuts' space factor) ... */
#define CUT_SPACE_FACTOR 2
/* ... and is taken over a binary split only when its fullest child holds
 * at most 1/CUT_GAIN of the node's rules (two binary levels' worth). */
#define CUT_GAIN 4
#define CUT_MAX_BITS 8
/* The root may cut much wider: one array of up to 2^16 child indices
 * (256 KiB) in place of the top levels of the tree, which every packet
 * walks. Rules of a partition whose address field is "small" (a prefix
 * of DEFAULT_SMALL_V4 bits or more) fall in few children each, so the
 * wide cut replicates little; the space factor still bounds it. */
#define ROOT_CUT_BITS 16
#define ROOT_SPACE_FACTOR 4
/* Partitions share a tree when it needs at most this many nodes per rule
 * (see cls_hs_build). 3 rather than 2 since small_v4 is 8: ipc1_10k's
 * two mixed partitions and the wildcard one then share a tree (3 trees
 * to 2, about 5% less time), fw1_1k gets 2 trees (about 30% less). */
#ifndef MERGED_NODES
#define MERGED_NODES 3
#endif

struct range {
	uint32_t lo, hi;
};

struct box {
	struct range d[CLS_DIM_COUNT];
};

struct builder {
	const struct rfw_acl_entry *entries;
	struct box *boxes;		/* one per entry */
	struct rfw_cls_node *nodes;
	uint32_t node_count, node_cap;
	struct rfw_cls_leaf_block *leaves;
	uint32_t *leaf_entries;		/* RFW_CLS_LANES per block */
	uint32_t leaf_count, leaf_cap;
	uint32_t *children;		/* cut nodes' child indices */
	uint32_t child_count, child_cap;
	uint32_t leaf_size, max_depth, small_v4;
	uint32_t depth_seen, leaf_seen;
	uint32_t trial_cap;		/* node count a trial build may reach */
	int over;			/* ... and did exceed */
	uint32_t *scratch;		/* boundary points, 2 per rule */
	uint32_t *weights;		/* per segment */
	int nomem;
};

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The part of a prefix that falls in 32-bit word w of the address. */
static struct range prefix_word(const uint8_t *addr, unsigned len, unsigned w)
{
	int bits = (int)len - 32 * (int)w;
	uint32_t v = be32(addr + 4 * w), mask;

	if (bits >= 32)
		return (struct range){v, v};
	if (bits <= 0)
		return (struct range){0, UINT32_MAX};
	mask = UINT32_MAX << (32 - bits);
	return (struct range){v & mask, (v & mask) | ~mask};
}

static void entry_box(const struct rfw_acl_entry *e, struct box *b)
{
	for (unsigned w = 0; w < 4; w++) {
		b->d[CLS_DIM_SRC0 + w] = prefix_word(e->src, e->src_len, w);
		b->d[CLS_DIM_DST0 + w] = prefix_word(e->dst, e->dst_len, w);
	}
	if (e->flags & RFW_ACL_PORTS) {
		b->d[CLS_DIM_SPORT] = (struct range){e->sport_lo, e->sport_hi};
		b->d[CLS_DIM_DPORT] = (struct range){e->dport_lo, e->dport_hi};
	} else {
		b->d[CLS_DIM_SPORT] = b->d[CLS_DIM_DPORT] = (struct range){0, 65535};
	}
	if (e->flags & RFW_ACL_PROTO)
		b->d[CLS_DIM_PROTO] = (struct range){e->proto, e->proto};
	else
		b->d[CLS_DIM_PROTO] = (struct range){0, 255};
}

static int box_covers(const struct box *b, const struct box *region)
{
	for (unsigned d = 0; d < CLS_DIM_COUNT; d++)
		if (b->d[d].lo > region->d[d].lo || b->d[d].hi < region->d[d].hi)
			return 0;
	return 1;
}

static int overlaps(const struct range *r, const struct range *reg)
{
	return r->lo <= reg->hi && r->hi >= reg->lo;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static uint32_t new_node(struct builder *b)
{
	if (b->node_count == b->node_cap) {
		uint32_t cap = b->node_cap ? b->node_cap * 2 : 256;
		struct rfw_cls_node *n = realloc(b->nodes, cap * sizeof(*n));

		if (!n) {
			b->nomem = 1;
			return UINT32_MAX;
		}
		b->nodes = n;
		b->node_cap = cap;
	}
	memset(&b->nodes[b->node_count], 0, sizeof(b->nodes[0]));
	return b->node_count++;
}

static void lane_range(struct rfw_cls_leaf_block *l, unsigned w, unsigned lane,
		       uint32_t lo, uint32_t hi)
{
	l->lo[w][lane] = (uint16_t)lo;
	l->hi[w][lane] = (uint16_t)hi;
}

/* An interface condition as a range of the key's index byte: [lo, hi]
 * over the interface bits of mask, or every value with `any` (the key
 * says RFW_CLS_IF_NONE when there is no such interface, which only an
 * unconditioned entry admits). 1 when the range says exactly the mask. */
static int iface_range(int any, uint32_t mask, uint32_t *lo, uint32_t *hi)
{
	uint32_t l, h;

	if (any) {
		*lo = 0;
		*hi = RFW_CLS_IF_NONE;
		return 1;
	}
	if (!mask) {	/* admits no interface: the full entry says no */
		*lo = *hi = RFW_CLS_IF_NONE;
		return 0;
	}
	l = (uint32_t)__builtin_ctz(mask);
	h = 31u - (uint32_t)__builtin_clz(mask);
	*lo = l;
	*hi = h;
	return (mask >> l) == (h - l == 31 ? UINT32_MAX : (2u << (h - l)) - 1);
}

/* Lane `lane` of a leaf block for entry i: the halves of address word 0
 * (a prefix's range there is a range on each half), ports, protocol with
 * "needs ports", and the in and out interfaces, as 16-bit ranges.
 * Anything the lane cannot say exactly asks for the full entry
 * (RFW_CLS_LEAF_FULL), and the lane stays a necessary condition. A word
 * of two fields is one exact range when its high field is one value or
 * its low field spans all of its values (artifact.h). Zone rules are the
 * reason for the IFACES word: before it each asked for its entry, and
 * every packet that reached one paid the confirm (~35 instructions). */
static void leaf_lane(const struct builder *b, uint32_t i, struct rfw_cls_leaf_block *l,
		      uint32_t *entry, unsigned lane)
{
	const struct rfw_acl_entry *e = &b->entries[i];
	const struct box *x = &b->boxes[i];
	const struct range *src = &x->d[CLS_DIM_SRC0], *dst = &x->d[CLS_DIM_DST0];
	const struct range *proto = &x->d[CLS_DIM_PROTO];
	uint32_t ports = !!(e->flags & RFW_ACL_PORTS), in_lo, in_hi, out_lo, out_hi;
	int exact = e->src_len <= 32 && e->dst_len <= 32 &&
		    !(e->flags & ~(RFW_ACL_PROTO | RFW_ACL_PORTS | RFW_ACL_IN_IF | RFW_ACL_OUT_IF));

	exact &= !ports || proto->lo == proto->hi;
	exact &= iface_range(!(e->flags & RFW_ACL_IN_IF), e->in_ifaces, &in_lo, &in_hi);
	exact &= iface_range(!(e->flags & RFW_ACL_OUT_IF), e->out_ifaces, &out_lo, &out_hi);
	exact &= in_lo == in_hi || (out_lo == 0 && out_hi == RFW_CLS_IF_NONE);
	entry[lane] = i;
	lane_range(l, RFW_CLS_KW_SRC_HI, lane, src->lo >> 16, src->hi >> 16);
	lane_range(l, RFW_CLS_KW_SRC_LO, lane, src->lo & 0xffff, src->hi & 0xffff);
	lane_range(l, RFW_CLS_KW_DST_HI, lane, dst->lo >> 16, dst->hi >> 16);
	lane_range(l, RFW_CLS_KW_DST_LO, lane, dst->lo & 0xffff, dst->hi & 0xffff);
	lane_range(l, RFW_CLS_KW_SPORT, lane, x->d[CLS_DIM_SPORT].lo, x->d[CLS_DIM_SPORT].hi);
	lane_range(l, RFW_CLS_KW_DPORT, lane, x->d[CLS_DIM_DPORT].lo, x->d[CLS_DIM_DPORT].hi);
	lane_range(l, RFW_CLS_KW_PROTO, lane, proto->lo << 1 | ports, proto->hi << 1 | 1);
	lane_range(l, RFW_CLS_KW_IFACES, lane, in_lo << 8 | out_lo,
		   (in_hi << 8 | out_hi) | (exact ? 0 : RFW_CLS_LEAF_FULL));
}

static void make_leaf(struct builder *b, uint32_t node, const uint32_t *rules,
		      uint32_t n)
{
	uint32_t nb = (n + RFW_CLS_LANES - 1) / RFW_CLS_LANES;

	if (b->leaf_count + nb > b->leaf_cap) {
		uint32_t cap = b->leaf_cap ? b->leaf_cap : 256;
		struct rfw_cls_leaf_block *l;
		uint32_t *le;

		while (cap < b->leaf_count + nb)
			cap *= 2;
		l = realloc(b->leaves, cap * sizeof(*l));
		if (l)
			b->leaves = l;
		le = realloc(b->leaf_entries, (size_t)cap * RFW_CLS_LANES * sizeof(*le));
		if (le)
			b->leaf_entries = le;
		if (!l || !le) {
			b->nomem = 1;
			return;
		}
		b->leaf_cap = cap;
	}
	if (nb)
		memset(b->leaves + b->leaf_count, 0, nb * sizeof(*b->leaves));
	for (uint32_t j = 0; j < nb; j++)
		for (unsigned lane = 0; lane < RFW_CLS_LANES; lane++) {
			/* an unused lane never passes: no key's IFACES word
			 * is above RFW_CLS_IFACES_KEY_MAX */
			b->leaves[b->leaf_count + j].lo[RFW_CLS_KW_IFACES][lane] = 0xffff;
			b->leaf_entries[(b->leaf_count + j) * RFW_CLS_LANES + lane] = CLS_HS_NONE;
		}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t blk = b->leaf_count + i / RFW_CLS_LANES;

		leaf_lane(b, rules[i], &b->leaves[blk], &b->leaf_entries[blk * RFW_CLS_LANES],
			  i % RFW_CLS_LANES);
	}
	b->nodes[node].dim = CLS_HS_LEAF;
	b->nodes[node].left = b->leaf_count;
	b->nodes[node].right = n;
	b->leaf_count += nb;
	if (n > b->leaf_seen)
		b->leaf_seen = n;
}

/* Distinct segment starts of dimension d inside the region (region lo
 * excluded) into b->scratch, sorted; returns how many. */
static uint32_t boundaries(struct builder *b, const uint32_t *rules, uint32_t n,
			   const struct range *reg, unsigned d)
{
	uint32_t k = 0, u = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct range *r = &b->boxes[rules[i]].d[d];

		if (r->lo > reg->lo)
			b->scratch[k++] = r->lo;
		if (r->hi < reg->hi)
			b->scratch[k++] = r->hi + 1;
	}
	qsort(b->scratch, k, sizeof(uint32_t), cmp_u32);
	for (uint32_t i = 0; i < k; i++)
		if (u == 0 || b->scratch[u - 1] != b->scratch[i])
			b->scratch[u++] = b->scratch[i];
	return u;
}

/* Segment index of value v given sorted starts s[0..m) (segment 0 starts
 * at the region's lo). */
static uint32_t segment_of(const uint32_t *s, uint32_t m, uint32_t v)
{
	uint32_t lo = 0, hi = m;	/* count of starts <= v */

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (s[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Threshold on dimension d at the weighted median of its segments. */
static uint32_t weighted_median(struct builder *b, const uint32_t *rules,
				uint32_t n, const struct range *reg, unsigned d,
				uint32_t m)
{
	uint64_t total = 0, acc = 0;
	uint32_t j;

	memset(b->weights, 0, (m + 2) * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++) {
		const struct range *r = &b->boxes[rules[i]].d[d];
		uint32_t lo = r->lo > reg->lo ? r->lo : reg->lo;
		uint32_t hi = r->hi < reg->hi ? r->hi : reg->hi;
		uint32_t a = segment_of(b->scratch, m, lo);
		uint32_t z = segment_of(b->scratch, m, hi);

		b->weights[a]++;	/* difference array over segments */
		b->weights[z + 1]--;
	}
	for (j = 1; j <= m; j++)
		b->weights[j] += b->weights[j - 1];
	for (j = 0; j <= m; j++)
		total += b->weights[j];
	for (j = 0; j < m; j++) {	/* never past the last start */
		acc += b->weights[j];
		if (2 * acc >= total)
			break;
	}
	if (j == m)
		j = m - 1;
	return b->scratch[j] - 1;	/* segment j ends where j+1 starts */
}

struct cut {
	unsigned dim, shift;
	uint32_t nchild, fullest;
};

/* Child j of a cut covers [lo + j * 2^shift, ...], clipped to the range. */
static struct range cut_child(const struct range *reg, unsigned shift, uint32_t j)
{
	uint64_t lo = (uint64_t)reg->lo + ((uint64_t)j << shift);
	uint64_t hi = lo + (1ull << shift) - 1;

	return (struct range){(uint32_t)lo, hi > reg->hi ? reg->hi : (uint32_t)hi};
}

/* The best multi-way cut of the node (HiCuts, Gupta and McKeown, Hot
 * Interconnects 1999): for each field with rule boundaries inside the
 * region, 4..256 equal children, as many as the space factor allows;
 * the winner is the one whose fullest child is smallest. */
static int best_cut(struct builder *b, const uint32_t *rules, uint32_t n,
		    const struct box *reg, const uint32_t *bounds, unsigned max_bits,
		    unsigned space_factor, struct cut *out)
{
	int found = 0;

	for (unsigned d = 0; d < CLS_DIM_COUNT; d++) {
		const struct range *rg = &reg->d[d];
		uint64_t span = (uint64_t)rg->hi - rg->lo;	/* values - 1 */

		if (bounds[d] == 0)
			continue;
		for (unsigned k = 2; k <= max_bits; k++) {
			unsigned shift = 0;
			uint32_t nchild, fullest = 0;
			uint64_t total = 0;
			int64_t acc = 0;

			while ((span >> shift) >= (1ull << k))
				shift++;
			nchild = (uint32_t)(span >> shift) + 1;
			if (nchild < 4)
				break;
			memset(b->weights, 0, (nchild + 1) * sizeof(uint32_t));
			for (uint32_t i = 0; i < n; i++) {
				const struct range *r = &b->boxes[rules[i]].d[d];
				uint32_t a = ((r->lo > rg->lo ? r->lo : rg->lo) - rg->lo) >> shift;
				uint32_t z = ((r->hi < rg->hi ? r->hi : rg->hi) - rg->lo) >> shift;

				total += z - a + 1;
				b->weights[a]++;
				b->weights[z + 1]--;
			}
			if (total > (uint64_t)space_factor * n + nchild)
				break;		/* more children only replicate more */
			for (uint32_t j = 0; j < nchild; j++) {
				acc += (int32_t)b->weights[j];
				if ((uint32_t)acc > fullest)
					fullest = (uint32_t)acc;
			}
			if (!found || fullest < out->fullest ||
			    (fullest == out->fullest && nchild < out->nchild)) {
				*out = (struct cut){d, shift, nchild, fullest};
				found = 1;
			}
		}
	}
	return found;
}

/* Rules of rules[0..n) overlapping r on field d, into out; returns count. */
static uint32_t select_rules(const struct builder *b, const uint32_t *rules, uint32_t n,
			     unsigned d, const struct range *r, uint32_t *out)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++)
		if (overlaps(&b->boxes[rules[i]].d[d], r))
			out[k++] = rules[i];
	return k;
}

/* Can the subtree built for child `prev` serve the next child too? Only
 * when both hold the same rules and every one of them spans both ranges
 * on the cut field: then nothing below ever looks at that field. */
static int same_subtree(const struct builder *b, const uint32_t *x, uint32_t nx,
			const uint32_t *y, uint32_t ny, unsigned d, uint32_t lo, uint32_t hi)
{
	if (nx != ny || memcmp(x, y, nx * sizeof(*x)) != 0)
		return 0;
	for (uint32_t i = 0; i < nx; i++) {
		const struct range *r = &b->boxes[x[i]].d[d];

		if (r->lo > lo || r->hi < hi)
			return 0;
	}
	return 1;
}

static uint32_t build_node(struct builder *b, uint32_t *rules, uint32_t n,
			   struct box *reg, uint32_t depth);

static uint32_t build_cut(struct builder *b, uint32_t node, uint32_t *rules, uint32_t n,
			  struct box *reg, uint32_t depth, const struct cut *c)
{
	struct range saved = reg->d[c->dim];
	uint32_t *cur = malloc(2 * ((size_t)n + 1) * sizeof(uint32_t)), *prev, ncur, nprev = 0;
	uint32_t base, prev_node = UINT32_MAX, prev_lo = 0;
	uint8_t *edge = calloc((size_t)c->nchild + 2, 1);

	if (!edge) {
		free(cur);
		b->nomem = 1;
		return UINT32_MAX;
	}
	/* Only children where some rule starts or ends (or covers part of the
	 * child) can hold other rules than the child before; the rest take the
	 * same subtree without looking at the rules again, which keeps a
	 * 2^16-way cut cheap to build. */
	for (uint32_t i = 0; i < n; i++) {
		const struct range *r = &b->boxes[rules[i]].d[c->dim];
		uint32_t lo = r->lo > saved.lo ? r->lo : saved.lo;
		uint32_t hi = r->hi < saved.hi ? r->hi : saved.hi;
		uint32_t a = (lo - saved.lo) >> c->shift, z = (hi - saved.lo) >> c->shift;

		edge[a] = edge[z + 1] = 1;
		if (lo != cut_child(&saved, c->shift, a).lo)
			edge[a + 1] = 1;
		if (hi != cut_child(&saved, c->shift, z).hi)
			edge[z] = 1;
	}
	if (!cur || b->child_count + c->nchild > b->child_cap) {
		uint32_t cap = b->child_cap ? b->child_cap : 1024;
		uint32_t *nc;

		while (cap < b->child_count + c->nchild)
			cap *= 2;
		nc = cur ? realloc(b->children, cap * sizeof(*nc)) : NULL;
		if (!nc) {
			free(cur);
			free(edge);
			b->nomem = 1;
			return UINT32_MAX;
		}
		b->children = nc;
		b->child_cap = cap;
	}
	prev = cur + n + 1;
	base = b->child_count;
	b->child_count += c->nchild;
	b->nodes[node] = (struct rfw_cls_node){
		.threshold = saved.lo, .dim = (uint8_t)c->dim, .kind = RFW_CLS_CUT,
		.shift = (uint8_t)c->shift, .left = base, .right = c->nchild - 1,
	};
	for (uint32_t j = 0; j < c->nchild; j++) {
		struct range r = cut_child(&saved, c->shift, j);
		uint32_t child;

		if (j && !edge[j]) {	/* same rules, all spanning both children */
			b->children[base + j] = prev_node;
			continue;
		}
		ncur = select_rules(b, rules, n, c->dim, &r, cur);
		if (prev_node != UINT32_MAX &&
		    same_subtree(b, prev, nprev, cur, ncur, c->dim, prev_lo, r.hi)) {
			child = prev_node;
		} else {
			reg->d[c->dim] = r;
			child = build_node(b, cur, ncur, reg, depth + 1);
			if (child == UINT32_MAX)
				break;
			prev_lo = r.lo;
		}
		b->children[base + j] = child;
		prev_node = child;
		memcpy(prev, cur, ncur * sizeof(*cur));
		nprev = ncur;
	}
	reg->d[c->dim] = saved;
	free(cur);
	free(edge);
	return b->nomem ? UINT32_MAX : node;
}

static uint32_t build_node(struct builder *b, uint32_t *rules, uint32_t n,
			   struct box *reg, uint32_t depth)
{
	uint32_t node = new_node(b), kept = 0, best_t = 0, best_max = 0;
	uint32_t bounds[CLS_DIM_COUNT];
	uint64_t best_cost = UINT64_MAX;
	unsigned best_d = 0;
	uint32_t *left, *right, nl = 0, nr = 0, t;
	struct range saved;
	struct cut cut = {0, 0, 0, 0};

	if (node == UINT32_MAX)
		return node;
	if (depth > b->depth_seen)
		b->depth_seen = depth;

	/* First match: behind a rule that covers the whole region and needs
	 * nothing the box does not show (no "has ports", ICMP, flags, state,
	 * interface or set condition), nothing else can ever be reached. */
	for (; kept < n; kept++) {
		const struct rfw_acl_entry *e = &b->entries[rules[kept]];

		if (!(e->flags & ~RFW_ACL_PROTO) && box_covers(&b->boxes[rules[kept]], reg)) {
			kept++;
			break;
		}
	}
	n = kept;

	if (b->node_count > b->trial_cap)
		b->over = 1;
	if (n <= b->leaf_size || depth >= b->max_depth || b->node_count > NODE_BUDGET || b->over) {
		make_leaf(b, node, rules, n);
		return node;
	}
	/* Try the weighted-median cut of every field; keep the one that
	 * replicates fewest rules into the children (HyperSplit's goal: a
	 * small tree), ties to the better balanced. */
	for (unsigned d = 0; d < CLS_DIM_COUNT; d++) {
		uint32_t m = boundaries(b, rules, n, &reg->d[d], d), cl = 0, cr = 0, td;
		uint64_t cost;

		bounds[d] = m;
		if (m == 0)
			continue;
		td = weighted_median(b, rules, n, &reg->d[d], d, m);
		for (uint32_t i = 0; i < n; i++) {
			const struct range *r = &b->boxes[rules[i]].d[d];

			cl += r->lo <= td;
			cr += r->hi > td;
		}
		cost = ((uint64_t)(cl + cr) << 32) | (cl > cr ? cl : cr);
		if (cost < best_cost) {
			best_cost = cost;
			best_d = d;
			best_t = td;
			best_max = cl > cr ? cl : cr;
		}
	}
	if (best_cost == UINT64_MAX) {	/* every rule spans the region: no cut helps */
		make_leaf(b, node, rules, n);
		return node;
	}
	/* A wide cut saves levels (one node read instead of several) where
	 * it divides the rules well within the space factor; at the root any
	 * cut that beats the binary split is taken, since every packet pays
	 * for the root's levels. */
	if (best_cut(b, rules, n, reg, bounds, depth ? CUT_MAX_BITS : ROOT_CUT_BITS,
		     depth ? CUT_SPACE_FACTOR : ROOT_SPACE_FACTOR, &cut) &&
	    (!depth || (uint64_t)cut.fullest * CUT_GAIN <= n) && cut.fullest < best_max)
		return build_cut(b, node, rules, n, reg, depth, &cut);
	t = best_t;

	left = malloc(2 * (size_t)n * sizeof(uint32_t));
	if (!left) {
		b->nomem = 1;
		return UINT32_MAX;
	}
	right = left + n;
	saved = reg->d[best_d];
	for (uint32_t i = 0; i < n; i++) {
		const struct range *r = &b->boxes[rules[i]].d[best_d];

		if (overlaps(r, &(struct range){saved.lo, t}))
			left[nl++] = rules[i];
		if (overlaps(r, &(struct range){t + 1, saved.hi}))
			right[nr++] = rules[i];
	}

	b->nodes[node].dim = (uint8_t)best_d;
	b->nodes[node].kind = RFW_CLS_SPLIT;
	b->nodes[node].threshold = t;
	reg->d[best_d] = (struct range){saved.lo, t};
	t = build_node(b, left, nl, reg, depth + 1);
	if (t != UINT32_MAX)
		b->nodes[node].left = t;
	reg->d[best_d] = (struct range){b->nodes[node].threshold + 1, saved.hi};
	t = build_node(b, right, nr, reg, depth + 1);
	if (t != UINT32_MAX)
		b->nodes[node].right = t;
	reg->d[best_d] = saved;
	free(left);
	return b->nomem ? UINT32_MAX : node;
}

/* CutSplit's partition: which address fields are "small" (a prefix of
 * at least `small` bits). */
static unsigned part_of(const struct rfw_acl_entry *e, unsigned small)
{
	return (e->src_len >= small) | (e->dst_len >= small) << 1;
}

/* The family's entries whose partition is in group g (g == CLS_HS_PARTS:
 * all of them), in rule order, into out; returns how many. */
static uint32_t gather(const struct rfw_acl_entry *entries, uint32_t count, int v6,
		       unsigned small, const unsigned *group, unsigned g, uint32_t *out)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < count; i++) {
		const struct rfw_acl_entry *e = &entries[i];

		if ((e->family == 0 || e->family == (v6 ? 6 : 4)) &&
		    (g == CLS_HS_PARTS || group[part_of(e, small)] == g))
			out[n++] = i;
	}
	return n;
}

static void full_region(struct box *reg, int ipv6);

/* Would one tree over rules[0..n) need at most MERGED_NODES per rule?
 * Builds it with a node cap (stopping early past it) and drops it.
 * 1 yes, 0 no, -1 out of memory. */
static int fits(struct builder *b, uint32_t *rules, uint32_t n, int v6)
{
	uint32_t nodes0 = b->node_count, leaves0 = b->leaf_count, children0 = b->child_count;
	uint32_t depth0 = b->depth_seen, leaf0 = b->leaf_seen;
	struct box reg;
	int ok;

	if (n == 0)
		return 0;
	b->trial_cap = nodes0 + MERGED_NODES * n;
	full_region(&reg, v6);
	if (build_node(b, rules, n, &reg, 0) == UINT32_MAX || b->nomem)
		return -1;
	ok = !b->over;
	b->trial_cap = UINT32_MAX;
	b->over = 0;
	b->node_count = nodes0;
	b->leaf_count = leaves0;
	b->child_count = children0;
	b->depth_seen = depth0;
	b->leaf_seen = leaf0;
	return ok;
}

static void full_region(struct box *reg, int ipv6)
{
	for (unsigned d = 0; d < CLS_DIM_COUNT; d++)
		reg->d[d] = (struct range){0, UINT32_MAX};
	reg->d[CLS_DIM_SPORT].hi = reg->d[CLS_DIM_DPORT].hi = 65535;
	reg->d[CLS_DIM_PROTO].hi = 255;
	if (!ipv6)	/* IPv4 keys carry zeros in words 1..3 */
		for (unsigned w = 1; w < 4; w++)
			reg->d[CLS_DIM_SRC0 + w].hi = reg->d[CLS_DIM_DST0 + w].hi = 0;
}

int cls_hs_build(struct cls_hs_built *out, const struct rfw_acl_entry *entries,
		 uint32_t count, const struct cls_hs_params *params)
{
	struct builder b = {
		.entries = entries,
		.leaf_size = params && params->leaf_size ? params->leaf_size : DEFAULT_LEAF_SIZE,
		.max_depth = params && params->max_depth ? params->max_depth : DEFAULT_MAX_DEPTH,
		.small_v4 = params && params->small_v4 ? params->small_v4 : DEFAULT_SMALL_V4,
		.trial_cap = UINT32_MAX,
	};
	uint32_t *family_rules = malloc(((size_t)count + 1) * sizeof(uint32_t));
	struct box reg;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	b.boxes = malloc(((size_t)count + 1) * sizeof(*b.boxes));
	b.scratch = malloc(((size_t)count * 2 + 1) * sizeof(uint32_t));
	b.weights = malloc(((size_t)count * 2 + 3 + (1u << ROOT_CUT_BITS)) * sizeof(uint32_t));
	if (!family_rules || !b.boxes || !b.scratch || !b.weights)
		goto out;
	for (uint32_t i = 0; i < count; i++)
		entry_box(&entries[i], &b.boxes[i]);

	for (int v6 = 0; v6 <= 1; v6++) {
		struct rfw_cls_tree *trees = out->table.trees.tree[v6];
		unsigned small = v6 ? 64 : b.small_v4;	/* a "small" field: prefix this long */
		unsigned used = 0, group[CLS_HS_PARTS], order[CLS_HS_PARTS];
		uint32_t size[CLS_HS_PARTS] = {0}, n, root;

		/* CutSplit's partition, then merge groups while the merged tree
		 * stays within MERGED_NODES per rule (a trial build, dropped):
		 * every packet walks each tree whose first rule can still win, so
		 * fewer trees are fewer walks (ClassBench acl1: one tree, not
		 * three). Smallest groups are tried first. */
		for (uint32_t i = 0; i < count; i++)
			if (entries[i].family == 0 || entries[i].family == (v6 ? 6 : 4))
				size[part_of(&entries[i], small)]++;
		for (unsigned p = 0; p < CLS_HS_PARTS; p++)
			group[p] = order[p] = p;
		for (unsigned i = 1; i < CLS_HS_PARTS; i++)
			for (unsigned j = i; j > 0 && size[order[j]] < size[order[j - 1]]; j--) {
				unsigned tmp = order[j];

				order[j] = order[j - 1];
				order[j - 1] = tmp;
			}
		n = gather(entries, count, v6, small, group, CLS_HS_PARTS, family_rules);
		if (n && fits(&b, family_rules, n, v6) > 0) {
			for (unsigned p = 0; p < CLS_HS_PARTS; p++)
				group[p] = 0;
		} else {
			for (unsigned i = 0; i < CLS_HS_PARTS; i++) {
				unsigned a = order[i];

				if (!size[a] || group[a] != a)
					continue;
				for (unsigned j = i + 1; j < CLS_HS_PARTS; j++) {
					unsigned c = order[j];
					unsigned try[CLS_HS_PARTS];
					int r;

					if (!size[c] || group[c] != c)
						continue;
					for (unsigned p = 0; p < CLS_HS_PARTS; p++)
						try[p] = group[p] == a ? c : group[p];
					n = gather(entries, count, v6, small, try, c, family_rules);
					r = fits(&b, family_rules, n, v6);
					if (r < 0)
						goto out;
					if (r) {
						memcpy(group, try, sizeof(group));
						break;
					}
				}
			}
		}
		for (unsigned g = 0; g < CLS_HS_PARTS; g++) {
			n = gather(entries, count, v6, small, group, g, family_rules);
			if (n == 0)
				continue;
			full_region(&reg, v6);
			root = build_node(&b, family_rules, n, &reg, 0);
			if (b.nomem || root == UINT32_MAX)
				goto out;
			trees[used].root = root;
			trees[used].first_rule = entries[family_rules[0]].rule;
			used++;
		}
		for (unsigned i = used; i < CLS_HS_PARTS; i++)
			trees[i] = (struct rfw_cls_tree){CLS_HS_NONE, CLS_HS_NONE};
		/* Ascending first rule, so lookup can stop early. */
		for (unsigned i = 1; i < used; i++)
			for (unsigned j = i; j > 0 && trees[j].first_rule < trees[j - 1].first_rule; j--) {
				struct rfw_cls_tree tmp = trees[j];

				trees[j] = trees[j - 1];
				trees[j - 1] = tmp;
			}
	}
	/* Blocks are two cache lines each when 64-byte aligned, as the
	 * artifact's sections are; realloc only promises 16. */
	if (b.leaf_count) {
		size_t bytes = (size_t)b.leaf_count * sizeof(*b.leaves);
		void *aligned = aligned_alloc(64, (bytes + 63) & ~(size_t)63);

		if (!aligned)
			goto out;
		memcpy(aligned, b.leaves, bytes);
		free(b.leaves);
		b.leaves = aligned;
	}
	out->nodes = b.nodes;
	out->leaves = b.leaves;
	out->leaf_entries = b.leaf_entries;
	out->children = b.children;
	out->table.children = b.children;
	out->table.child_count = b.child_count;
	out->table.nodes = b.nodes;
	out->table.leaves = b.leaves;
	out->table.leaf_entries = b.leaf_entries;
	out->table.entries = entries;
	cls_hs_first_entries(&out->table, count);
	out->table.node_count = b.node_count;
	out->table.leaf_entry_count = b.leaf_count;
	out->max_depth_seen = b.depth_seen;
	out->max_leaf_seen = b.leaf_seen;
	b.nodes = NULL;
	b.leaves = NULL;
	b.leaf_entries = NULL;
	b.children = NULL;
	ret = 0;
out:
	free(b.nodes);
	free(b.leaves);
	free(b.leaf_entries);
	free(b.children);
	free(b.boxes);
	free(b.scratch);
	free(b.weights);
	free(family_rules);
	return ret;
}

void cls_hs_free(struct cls_hs_built *b)
{
	free(b->nodes);
	free(b->leaves);
	free(b->leaf_entries);
	free(b->children);
	memset(b, 0, sizeof(*b));
}

size_t cls_hs_bytes(const struct cls_hs *t)
{
	return (size_t)t->node_count * sizeof(struct rfw_cls_node) +
	       (size_t)t->leaf_entry_count * (sizeof(struct rfw_cls_leaf_block) +
						RFW_CLS_LANES * sizeof(uint32_t)) +
	       (size_t)t->child_count * sizeof(uint32_t);
}

void cls_hs_sections(const struct cls_hs_built *b, struct rfw_section_in out[CLS_HS_SECTIONS])
{
	const struct cls_hs *t = &b->table;

	out[0] = (struct rfw_section_in){RFW_SEC_CLS_TREES, sizeof(t->trees),
					 &t->trees, sizeof(t->trees), 1};
	out[1] = (struct rfw_section_in){RFW_SEC_CLS_NODES, sizeof(struct rfw_cls_node),
					 t->nodes, (uint64_t)t->node_count * sizeof(struct rfw_cls_node),
					 t->node_count};
	out[2] = (struct rfw_section_in){RFW_SEC_CLS_LEAVES, sizeof(struct rfw_cls_leaf_block),
					 t->leaves,
					 (uint64_t)t->leaf_entry_count * sizeof(struct rfw_cls_leaf_block),
					 t->leaf_entry_count};
	out[3] = (struct rfw_section_in){RFW_SEC_CLS_CHILDREN, sizeof(uint32_t), t->children,
					 (uint64_t)t->child_count * sizeof(uint32_t),
					 t->child_count};
	out[4] = (struct rfw_section_in){RFW_SEC_CLS_LEAF_ENTRIES, sizeof(uint32_t), t->leaf_entries,
					 (uint64_t)t->leaf_entry_count * RFW_CLS_LANES * sizeof(uint32_t),
					 (uint64_t)t->leaf_entry_count * RFW_CLS_LANES};
}
