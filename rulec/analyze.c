/* Shadowed, redundant and never-matching rules, by set arithmetic on
 * boxes: each entry is a box in header space (Kazemian et al., "Header
 * Space Analysis", NSDI 2012), and "covered by other rules" is box
 * subtraction until nothing is left. Agrees with cls_entry_matches.
 * Every condition but an address set is a dimension of the box, so
 * complementary rules (state new, then the other states; syn, then !syn)
 * cover a rule together; an address set only counts as the very same
 * condition (lint.c spells small sets out as prefixes first). */
#include "analyze.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

/* The small dimensions of a box. D_PORTS is the packet's has_ports: an
 * entry with RFW_ACL_PORTS needs 1, one without takes both, so a
 * port-less rule is never covered by port rules. Port-less packets sit at
 * D_PORTS = 0 with full port ranges. The ICMP type and code are the
 * key's fields whatever the protocol (cls_entry_extra_matches reads
 * them so). */
enum { D_FAM, D_PORTS, D_PROTO, D_SPORT, D_DPORT, D_ICMPT, D_ICMPC, NDIM };

/* Dimensions that are sets of values rather than ranges, as bit masks:
 * a packet has one conntrack state (runtime/pipeline.c gives every key
 * one), and one input and one output interface: an interface bit, or
 * none the policy names (PIPE_NO_PORT, bit IF_OTHER), which no interface
 * condition takes, so naming every zone never covers a rule without one. */
enum { S_STATE, S_IN, S_OUT, NSET };
#define IF_OTHER 32
#define ALL_STATES 0x0full
#define ALL_IFACES ((1ull << (IF_OTHER + 1)) - 1)

/* A box: src and dst as 128-bit big-endian ranges (an IPv4 prefix uses
 * the top 32 bits, as cls_prefix_match does), the rest as small ranges,
 * value sets, and the TCP flags as a cube: the bits in fcare have the
 * values in fval, the others either. Every range is inclusive; lo > hi
 * only in a box marked empty. */
struct box {
	u128 alo[2], ahi[2];
	uint32_t lo[NDIM], hi[NDIM];
	uint64_t set[NSET];
	uint8_t fcare, fval;
};

/* A box cut to 28 bytes for the index's first test (a quarter of the
 * cache lines): addresses to their top 32 bits, exact for IPv4 and a
 * superset for IPv6; family and has_ports left to box_meets. */
struct brief {
	uint32_t d_lo, d_hi, s_lo, s_hi;
	uint16_t dp_lo, dp_hi, sp_lo, sp_hi;
	uint8_t p_lo, p_hi;
};

/* A piece still to cover and the first candidate it has not met. */
struct frame {
	struct box b;
	uint32_t next;
};

/* The conditions a box cannot hold: address sets (their prefixes are
 * not here). */
#define SET_FLAGS ((uint16_t)(RFW_ACL_SRC_SET | RFW_ACL_DST_SET | RFW_ACL_SRC_NOT | \
			      RFW_ACL_DST_NOT))

#define BUCKETS 257u		/* first address byte, 256 = shorter than /8 */
#define PCLASSES 4u		/* protocol: a range, TCP, UDP, another one */
#define NO_RULE UINT32_MAX
#define WITNESSES 8		/* points tried before splitting boxes */

struct an {
	const struct rfw_acl_entry *e;
	uint32_t count;
	const uint8_t *actions;
	struct analyze_limits lim;
	struct box *ebox;	/* per entry */
	uint8_t *live;		/* per entry: its box is not empty */
	uint32_t *rfirst;	/* per rule: first entry; rfirst[r + 1] ends it */
	uint32_t *bstart;	/* index: BUCKETS^2 * PCLASSES + 1 offsets into bitems */
	uint32_t *bitems;	/* entry indices, ascending within a bucket */
	uint32_t *full;		/* the non-empty buckets */
	uint32_t full_count;
	uint32_t listed, listed_n;	/* entry whose earlier() is in cand */
	uint32_t *cand;		/* candidates: entry index, or count + i for nop[i] */
	uint32_t *dcand;	/* later entries of another action */
	uint16_t *size;		/* per entry: box_size() */
	struct brief *brief;	/* per entry */
	uint64_t *keys;		/* sort keys for the candidates */
	uint32_t *stamp;	/* per rule: == token when already in `others` */
	uint32_t *others;
	uint32_t other_n, token;
	struct frame *stack;	/* the pieces of one cover test */
	uint32_t stack_cap;
	struct box nop[4];	/* where no packet is, see no_port_protos */
	uint64_t work, total_work;
	int over;		/* a limit was hit for this rule */
};

/* Packets with ports are TCP, UDP or SCTP (runtime/pkt.c), so the rest
 * of D_PORTS = 1 holds no packet: these boxes join every cover test. */
static const uint32_t no_port_protos[4][2] = {{0, 5}, {7, 16}, {18, 131}, {133, 255}};

static u128 addr_val(const uint8_t *a)
{
	u128 v = 0;

	for (int i = 0; i < 16; i++)
		v = v << 8 | a[i];
	return v;
}

static void prefix_range(const uint8_t *a, unsigned len, u128 *lo, u128 *hi)
{
	u128 mask;

	if (len == 0) {
		*lo = 0;
		*hi = ~(u128)0;
		return;
	}
	if (len > 128)
		len = 128;
	mask = ~(u128)0 << (128 - len);
	*lo = addr_val(a) & mask;
	*hi = *lo | ~mask;
}

static void full_box(struct box *b)
{
	static const uint32_t top[NDIM] = {1, 1, 255, 65535, 65535, 255, 255};

	for (int d = 0; d < 2; d++) {
		b->alo[d] = 0;
		b->ahi[d] = ~(u128)0;
	}
	for (int d = 0; d < NDIM; d++) {
		b->lo[d] = 0;
		b->hi[d] = top[d];
	}
	b->set[S_STATE] = ALL_STATES;
	b->set[S_IN] = b->set[S_OUT] = ALL_IFACES;
	b->fcare = b->fval = 0;
}

static int port_proto_in(uint32_t lo, uint32_t hi)
{
	return (lo <= 6 && hi >= 6) || (lo <= 17 && hi >= 17) || (lo <= 132 && hi >= 132);
}

/* The entry's box; 0 when no packet can satisfy the entry at all. */
static int entry_box(const struct rfw_acl_entry *e, struct box *b)
{
	uint16_t f = e->flags;

	full_box(b);
	if (e->family == 4)
		b->hi[D_FAM] = 0;
	else if (e->family == 6)
		b->lo[D_FAM] = 1;
	else if (e->family != 0)
		return 0;
	prefix_range(e->src, (f & RFW_ACL_SRC_SET) ? 0 : e->src_len, &b->alo[0], &b->ahi[0]);
	prefix_range(e->dst, (f & RFW_ACL_DST_SET) ? 0 : e->dst_len, &b->alo[1], &b->ahi[1]);
	if (f & RFW_ACL_PROTO)
		b->lo[D_PROTO] = b->hi[D_PROTO] = e->proto;
	if (f & RFW_ACL_TCP_FLAGS) {	/* the runtime also requires TCP */
		if (b->lo[D_PROTO] > 6 || b->hi[D_PROTO] < 6 || (e->tcp_value & ~e->tcp_mask))
			return 0;
		b->lo[D_PROTO] = b->hi[D_PROTO] = 6;
		b->fcare = e->tcp_mask;
		b->fval = e->tcp_value;
	}
	if (f & RFW_ACL_ICMP_TYPE)
		b->lo[D_ICMPT] = b->hi[D_ICMPT] = e->icmp_type;
	if (f & RFW_ACL_ICMP_CODE)
		b->lo[D_ICMPC] = b->hi[D_ICMPC] = e->icmp_code;
	if (f & RFW_ACL_STATE)
		b->set[S_STATE] = e->state_mask & ALL_STATES;
	if (f & RFW_ACL_IN_IF)
		b->set[S_IN] = e->in_ifaces;
	if (f & RFW_ACL_OUT_IF)
		b->set[S_OUT] = e->out_ifaces;
	if (f & RFW_ACL_PORTS) {
		b->lo[D_PORTS] = 1;
		b->lo[D_SPORT] = e->sport_lo;
		b->hi[D_SPORT] = e->sport_hi;
		b->lo[D_DPORT] = e->dport_lo;
		b->hi[D_DPORT] = e->dport_hi;
		if (e->sport_lo > e->sport_hi || e->dport_lo > e->dport_hi)
			return 0;
		if (!port_proto_in(b->lo[D_PROTO], b->hi[D_PROTO]))
			return 0;
	}
	for (int d = 0; d < NSET; d++)
		if (!b->set[d])
			return 0;
	return 1;
}

static int box_meets(const struct box *a, const struct box *b)
{
	for (int d = 0; d < NDIM; d++)
		if (a->lo[d] > b->hi[d] || b->lo[d] > a->hi[d])
			return 0;
	for (int d = 0; d < 2; d++)
		if (a->alo[d] > b->ahi[d] || b->alo[d] > a->ahi[d])
			return 0;
	for (int d = 0; d < NSET; d++)
		if (!(a->set[d] & b->set[d]))
			return 0;
	return !((a->fval ^ b->fval) & a->fcare & b->fcare);
}

/* Does a contain b? */
static int box_holds(const struct box *a, const struct box *b)
{
	for (int d = 0; d < NDIM; d++)
		if (a->lo[d] > b->lo[d] || a->hi[d] < b->hi[d])
			return 0;
	for (int d = 0; d < 2; d++)
		if (a->alo[d] > b->alo[d] || a->ahi[d] < b->ahi[d])
			return 0;
	for (int d = 0; d < NSET; d++)
		if (b->set[d] & ~a->set[d])
			return 0;
	return !(a->fcare & ~b->fcare) && !((a->fval ^ b->fval) & a->fcare);
}

/* The part of header space both boxes hold (they meet). */
static void box_intersect(const struct box *a, const struct box *b, struct box *out)
{
	for (int x = 0; x < 2; x++) {
		out->alo[x] = a->alo[x] > b->alo[x] ? a->alo[x] : b->alo[x];
		out->ahi[x] = a->ahi[x] < b->ahi[x] ? a->ahi[x] : b->ahi[x];
	}
	for (int x = 0; x < NDIM; x++) {
		out->lo[x] = a->lo[x] > b->lo[x] ? a->lo[x] : b->lo[x];
		out->hi[x] = a->hi[x] < b->hi[x] ? a->hi[x] : b->hi[x];
	}
	for (int x = 0; x < NSET; x++)
		out->set[x] = a->set[x] & b->set[x];
	out->fcare = a->fcare | b->fcare;
	out->fval = (uint8_t)((a->fval & a->fcare) | (b->fval & b->fcare));
}

/* Does every packet meeting l's address-set conditions meet e's? A set
 * condition only counts when l has the very same one, so an earlier rule
 * with a set covers nothing else. */
static int sets_implied(const struct rfw_acl_entry *e, const struct rfw_acl_entry *l)
{
	uint16_t f = e->flags & SET_FLAGS, g = l->flags;

	if (!f)
		return 1;
	if ((f & RFW_ACL_SRC_SET) &&
	    (!(g & RFW_ACL_SRC_SET) || memcmp(e->src, l->src, 4) ||
	     ((e->flags ^ g) & RFW_ACL_SRC_NOT)))
		return 0;
	if ((f & RFW_ACL_DST_SET) &&
	    (!(g & RFW_ACL_DST_SET) || memcmp(e->dst, l->dst, 4) ||
	     ((e->flags ^ g) & RFW_ACL_DST_NOT)))
		return 0;
	return 1;
}

/* Can no packet meet both entries' set conditions: the same set, in it
 * for one and not for the other? (The rest is box_meets'.) */
static int sets_disjoint(const struct rfw_acl_entry *a, const struct rfw_acl_entry *b)
{
	uint16_t both = a->flags & b->flags;

	return ((both & RFW_ACL_SRC_SET) && !memcmp(a->src, b->src, 4) &&
		((a->flags ^ b->flags) & RFW_ACL_SRC_NOT)) ||
	       ((both & RFW_ACL_DST_SET) && !memcmp(a->dst, b->dst, 4) &&
		((a->flags ^ b->flags) & RFW_ACL_DST_NOT));
}

static int charge(struct an *a, uint64_t units)
{
	a->work += units;
	a->total_work += units;
	if (a->work > a->lim.max_rule_work || a->total_work > a->lim.max_total_work)
		a->over = 1;
	return a->over;
}

static void add_other(struct an *a, uint32_t rule)
{
	if (a->stamp[rule] == a->token)
		return;
	a->stamp[rule] = a->token;
	a->others[a->other_n++] = rule;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return (a > b) - (a < b);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

static uint32_t span_bits(uint32_t span)
{
	return span ? 32u - (uint32_t)__builtin_clz(span) : 0;
}

static const struct box *cbox(const struct an *a, uint32_t i)
{
	return i < a->count ? &a->ebox[i] : &a->nop[i - a->count];
}

static int push_frame(struct an *a, uint32_t *top, const struct box *b, uint32_t next)
{
	if (*top == a->stack_cap) {
		uint32_t cap = a->stack_cap ? a->stack_cap * 2 : 256;
		struct frame *ns = realloc(a->stack, cap * sizeof(*ns));

		if (!ns)
			return -1;
		a->stack = ns;
		a->stack_cap = cap;
	}
	a->stack[*top].b = *b;
	a->stack[*top].next = next;
	(*top)++;
	return 0;
}

/* Push p minus c: at most two pieces per dimension, the parts of p below
 * and above c, each narrowing what is left for the next dimension. */
static int push_difference(struct an *a, uint32_t *top, const struct box *p,
			   const struct box *c, uint32_t next)
{
	struct box r = *p, q;

	for (int d = 0; d < 2; d++) {
		if (r.alo[d] < c->alo[d]) {
			q = r;
			q.ahi[d] = c->alo[d] - 1;
			r.alo[d] = c->alo[d];
			if (push_frame(a, top, &q, next))
				return -1;
		}
		if (r.ahi[d] > c->ahi[d]) {
			q = r;
			q.alo[d] = c->ahi[d] + 1;
			r.ahi[d] = c->ahi[d];
			if (push_frame(a, top, &q, next))
				return -1;
		}
	}
	for (int d = 0; d < NDIM; d++) {
		if (r.lo[d] < c->lo[d]) {
			q = r;
			q.hi[d] = c->lo[d] - 1;
			r.lo[d] = c->lo[d];
			if (push_frame(a, top, &q, next))
				return -1;
		}
		if (r.hi[d] > c->hi[d]) {
			q = r;
			q.lo[d] = c->hi[d] + 1;
			r.hi[d] = c->hi[d];
			if (push_frame(a, top, &q, next))
				return -1;
		}
	}
	for (int d = 0; d < NSET; d++) {
		if (r.set[d] & ~c->set[d]) {
			q = r;
			q.set[d] &= ~c->set[d];
			r.set[d] &= c->set[d];
			if (push_frame(a, top, &q, next))
				return -1;
		}
	}
	/* a flag c fixes and r leaves open: the half with the other value */
	for (uint8_t open = c->fcare & ~r.fcare; open; open &= (uint8_t)(open - 1)) {
		uint8_t bit = open & (uint8_t)-open;

		q = r;
		q.fcare |= bit;
		q.fval = (uint8_t)((q.fval & ~bit) | (~c->fval & bit));
		r.fcare |= bit;
		r.fval = (uint8_t)((r.fval & ~bit) | (c->fval & bit));
		if (push_frame(a, top, &q, next))
			return -1;
	}
	return 0;
}

static uint64_t rnd64(uint64_t *s)	/* xorshift64*: reproducible */
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* A point of header space: addresses, the ranges' values, one value
 * of each set dimension, the TCP flags. */
struct point {
	u128 a[2];
	uint32_t v[NDIM];
	uint8_t s[NSET];
	uint8_t flags;
};

static int box_has(const struct box *b, const struct point *p)
{
	for (int d = 0; d < NDIM; d++)
		if (p->v[d] < b->lo[d] || p->v[d] > b->hi[d])
			return 0;
	for (int d = 0; d < 2; d++)
		if (p->a[d] < b->alo[d] || p->a[d] > b->ahi[d])
			return 0;
	for (int d = 0; d < NSET; d++)
		if (!(b->set[d] >> p->s[d] & 1))
			return 0;
	return !((p->flags ^ b->fval) & b->fcare);
}

/* The k-th (from 0) set bit of m, which has more than k. */
static uint8_t nth_bit(uint64_t m, unsigned k)
{
	while (k--)
		m &= m - 1;
	return (uint8_t)__builtin_ctzll(m);
}

/* A few points of b (its two corners, then random ones) tried against
 * every candidate: one that none holds proves b is not covered, far
 * more cheaply than splitting boxes until that piece turns up. */
static int has_witness(struct an *a, const struct box *b, const uint32_t *cand, uint32_t n)
{
	uint64_t seed = 0x9E3779B97F4A7C15ull;

	for (int t = 0; t < WITNESSES; t++) {
		struct point p;
		uint32_t j = 0;
		uint8_t any;

		for (int d = 0; d < 2; d++) {
			u128 span = b->ahi[d] - b->alo[d];
			u128 r = (u128)rnd64(&seed) << 64 | rnd64(&seed);

			p.a[d] = t == 0 ? b->alo[d] : t == 1 ? b->ahi[d] :
				 b->alo[d] + (span == ~(u128)0 ? r : r % (span + 1));
		}
		for (int d = 0; d < NDIM; d++) {
			uint64_t span = (uint64_t)b->hi[d] - b->lo[d] + 1;

			p.v[d] = t == 0 ? b->lo[d] : t == 1 ? b->hi[d] :
				 b->lo[d] + (uint32_t)(rnd64(&seed) % span);
		}
		for (int d = 0; d < NSET; d++) {
			unsigned count = (unsigned)__builtin_popcountll(b->set[d]);

			p.s[d] = nth_bit(b->set[d], t == 0 ? 0 : t == 1 ? count - 1 :
					 (unsigned)(rnd64(&seed) % count));
		}
		any = t == 0 ? 0 : t == 1 ? 0xff : (uint8_t)rnd64(&seed);
		p.flags = (uint8_t)((any & ~b->fcare) | (b->fval & b->fcare));
		while (j < n && !box_has(cbox(a, cand[j]), &p))
			j++;
		charge(a, j / 4 + 1);
		if (j == n)
			return 1;
	}
	return 0;
}

/* About log2 of a box's volume: the sum of its ranges' bit lengths. */
static uint32_t box_size(const struct box *b)
{
	uint32_t bits = 0;

	for (int d = 0; d < 2; d++) {
		u128 span = b->ahi[d] - b->alo[d];

		while (span) {
			bits++;
			span >>= 1;
		}
	}
	for (int d = 0; d < NDIM; d++)
		bits += span_bits(b->hi[d] - b->lo[d]);
	for (int d = 0; d < NSET; d++)
		bits += span_bits((uint32_t)__builtin_popcountll(b->set[d]) - 1);
	return bits + (uint32_t)__builtin_popcount((uint8_t)~b->fcare);
}

/* Largest boxes first: a few large ones cover most, and splitting by the
 * many small ones first would only cut the piece into fragments. */
static void by_size(struct an *a, uint32_t *cand, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++)
		a->keys[j] = (uint64_t)(1024 - (cand[j] < a->count ? a->size[cand[j]] : 1023)) << 32 |
			     cand[j];
	qsort(a->keys, n, sizeof(*a->keys), cmp_u64);
	for (uint32_t j = 0; j < n; j++)
		cand[j] = (uint32_t)a->keys[j];
}

/* Is b inside the union of the candidates' boxes? Depth-first box
 * subtraction: a piece is split by the first candidate that meets it, and
 * its parts go on with the candidates after that one only (the earlier
 * ones missed the whole piece). The first piece nothing meets ends the
 * test, which keeps rules that are not covered cheap. Candidates of rules
 * above `record_above` that split a piece go to `others`. Reorders
 * cand. Returns 1 covered, 0 not (or a limit: a->over), -1 ENOMEM. */
static int covered(struct an *a, const struct box *b, uint32_t *cand, uint32_t n,
		   uint32_t record_above)
{
	uint32_t top = 0;

	if (has_witness(a, b, cand, n))
		return 0;
	by_size(a, cand, n);
	if (push_frame(a, &top, b, 0))
		return -1;
	while (top) {
		struct frame f = a->stack[--top];
		uint32_t j = f.next;

		while (j < n && !box_meets(cbox(a, cand[j]), &f.b))
			j++;
		if (charge(a, j - f.next + 1) || j == n)
			return 0;
		if (cand[j] < a->count && a->e[cand[j]].rule > record_above)
			add_other(a, a->e[cand[j]].rule);
		if (push_difference(a, &top, &f.b, cbox(a, cand[j]), j + 1))
			return -1;
		if (top > a->lim.max_boxes) {
			a->over = 1;
			return 0;
		}
	}
	return 1;
}

static void brief_of(const struct box *b, struct brief *x)
{
	x->s_lo = (uint32_t)(b->alo[0] >> 96);
	x->s_hi = (uint32_t)(b->ahi[0] >> 96);
	x->d_lo = (uint32_t)(b->alo[1] >> 96);
	x->d_hi = (uint32_t)(b->ahi[1] >> 96);
	x->sp_lo = (uint16_t)b->lo[D_SPORT];
	x->sp_hi = (uint16_t)b->hi[D_SPORT];
	x->dp_lo = (uint16_t)b->lo[D_DPORT];
	x->dp_hi = (uint16_t)b->hi[D_DPORT];
	x->p_lo = (uint8_t)b->lo[D_PROTO];
	x->p_hi = (uint8_t)b->hi[D_PROTO];
}

static int brief_meets(const struct brief *x, const struct brief *y)
{
	return x->p_lo <= y->p_hi && y->p_lo <= x->p_hi &&
	       x->dp_lo <= y->dp_hi && y->dp_lo <= x->dp_hi &&
	       x->d_lo <= y->d_hi && y->d_lo <= x->d_hi &&
	       x->s_lo <= y->s_hi && y->s_lo <= x->s_hi &&
	       x->sp_lo <= y->sp_hi && y->sp_lo <= x->sp_hi;
}

/* Bucket of an address: its first byte when the prefix fixes it. */
static uint32_t bucket_of(const uint8_t *a, unsigned len, int is_set)
{
	return (!is_set && len >= 8) ? a[0] : 256;
}

static uint32_t proto_class(const struct box *b)
{
	if (b->lo[D_PROTO] != b->hi[D_PROTO])
		return 0;
	return b->lo[D_PROTO] == 6 ? 1 : b->lo[D_PROTO] == 17 ? 2 : 3;
}

/* The protocol classes an entry meeting b can be in, as bits. */
static uint32_t proto_classes(const struct box *b)
{
	uint32_t lo = b->lo[D_PROTO], hi = b->hi[D_PROTO], m = 1;
	uint32_t known = (lo <= 6 && hi >= 6) + (lo <= 17 && hi >= 17);

	if (lo <= 6 && hi >= 6)
		m |= 2;
	if (lo <= 17 && hi >= 17)
		m |= 4;
	if (hi - lo + 1 > known)
		m |= 8;
	return m;
}

static uint32_t entry_bucket(const struct an *a, uint32_t i)
{
	const struct rfw_acl_entry *e = &a->e[i];

	return (bucket_of(e->src, e->src_len, e->flags & RFW_ACL_SRC_SET) * BUCKETS +
		bucket_of(e->dst, e->dst_len, e->flags & RFW_ACL_DST_SET)) * PCLASSES +
	       proto_class(&a->ebox[i]);
}

/* The index: live entries bucketed by the first byte of their source and
 * destination, so a query only visits entries whose addresses can meet. */
static int build_index(struct an *a)
{
	uint32_t nb = BUCKETS * BUCKETS * PCLASSES;

	a->bstart = calloc(nb + 1, sizeof(*a->bstart));
	a->bitems = malloc((a->count ? a->count : 1) * sizeof(*a->bitems));
	if (!a->bstart || !a->bitems)
		return -1;
	for (uint32_t i = 0; i < a->count; i++)
		if (a->live[i])
			a->bstart[entry_bucket(a, i) + 1]++;
	for (uint32_t k = 0; k < nb; k++)
		a->bstart[k + 1] += a->bstart[k];
	/* fill in ascending entry order, bstart[k] as the cursor, then undo */
	for (uint32_t i = 0; i < a->count; i++)
		if (a->live[i])
			a->bitems[a->bstart[entry_bucket(a, i)]++] = i;
	for (uint32_t k = nb; k > 0; k--)
		a->bstart[k] = a->bstart[k - 1];
	a->bstart[0] = 0;
	a->full = malloc((a->count ? a->count : 1) * sizeof(*a->full));
	if (!a->full)
		return -1;
	for (uint32_t k = 0; k < nb; k++)
		if (a->bstart[k + 1] > a->bstart[k])
			a->full[a->full_count++] = k;
	return 0;
}

/* The entries of bucket k before `bound` (or from it on, when later)
 * that meet q, appended to out[n...]; returns the new n. */
static uint32_t scan_bucket(struct an *a, uint32_t k, const struct box *q,
			    const struct brief *qb, int later, uint32_t bound, uint32_t *out,
			    uint32_t n, uint64_t *tests)
{
	uint32_t from = a->bstart[k], to = a->bstart[k + 1], lo = from, hi = to;

	while (lo < hi) {	/* first item >= bound */
		uint32_t mid = lo + (hi - lo) / 2;

		if (a->bitems[mid] < bound)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (later)
		from = lo;
	else
		to = lo;
	*tests += to - from;
	for (uint32_t j = from; j < to; j++) {
		uint32_t i = a->bitems[j];

		if (brief_meets(&a->brief[i], qb) && box_meets(&a->ebox[i], q))
			out[n++] = i;
	}
	return n;
}

/* Live entries whose box meets q, before entry `bound` (earlier rules) or
 * from it on (later rules), into out; returns how many. */
static uint32_t query(struct an *a, const struct box *q, int later, uint32_t bound,
		      uint32_t *out)
{
	uint32_t s_lo = (uint32_t)(q->alo[0] >> 120), s_hi = (uint32_t)(q->ahi[0] >> 120);
	uint32_t d_lo = (uint32_t)(q->alo[1] >> 120), d_hi = (uint32_t)(q->ahi[1] >> 120);
	uint32_t n = 0, pcs = proto_classes(q);
	uint64_t tests = 0;
	struct brief qb;

	brief_of(q, &qb);
	/* a wide query walks the non-empty buckets rather than its range */
	if ((uint64_t)(s_hi - s_lo + 2) * (d_hi - d_lo + 2) * PCLASSES > a->full_count) {
		for (uint32_t x = 0; x < a->full_count; x++) {
			uint32_t k = a->full[x], sd = k / PCLASSES;
			uint32_t sb = sd / BUCKETS, db = sd % BUCKETS;

			if ((pcs >> (k % PCLASSES) & 1) &&
			    (sb == 256 || (sb >= s_lo && sb <= s_hi)) &&
			    (db == 256 || (db >= d_lo && db <= d_hi)))
				n = scan_bucket(a, k, q, &qb, later, bound, out, n, &tests);
		}
	} else {
		for (uint32_t s = s_lo; s <= s_hi + 1; s++)
			for (uint32_t d = d_lo; d <= d_hi + 1; d++)
				for (uint32_t pc = 0; pc < PCLASSES; pc++)
					if (pcs >> pc & 1)
						n = scan_bucket(a, ((s == s_hi + 1 ? 256 : s) * BUCKETS +
								    (d == d_hi + 1 ? 256 : d)) *
								   PCLASSES + pc,
								q, &qb, later, bound, out, n, &tests);
	}
	charge(a, tests / 8);	/* a plain box test: weighed less than a split */
	return n;
}

/* The infeasible region first, then the earlier entries that meet l's box
 * and whose other conditions l's imply. *best: the first rule with one
 * entry holding all of l's box, NO_RULE if none. */
static uint32_t earlier(struct an *a, uint32_t l, uint32_t first, uint32_t *best)
{
	uint32_t n = 4, m = 4;

	for (uint32_t p = 0; p < 4; p++)
		a->cand[p] = a->count + p;
	n += query(a, &a->ebox[l], 0, first, a->cand + 4);
	*best = NO_RULE;
	for (uint32_t j = 4; j < n; j++) {
		uint32_t i = a->cand[j];

		if (!sets_implied(&a->e[i], &a->e[l]))
			continue;
		a->cand[m++] = i;
		if (a->e[i].rule < *best && box_holds(&a->ebox[i], &a->ebox[l]))
			*best = a->e[i].rule;
	}
	return m;
}

/* Every packet of every entry is taken by earlier rules (or is none at
 * all): 1, else 0 (a->over on a limit), -1 ENOMEM. */
static int shadowed(struct an *a, uint32_t rule)
{
	uint32_t first = a->rfirst[rule], end = a->rfirst[rule + 1];

	for (uint32_t l = first; l < end; l++) {
		uint32_t best, n;
		int rc;

		if (!a->live[l])
			continue;
		n = earlier(a, l, first, &best);
		a->listed = l;
		a->listed_n = n;
		if (best != NO_RULE) {	/* one earlier rule holds it: name just that */
			add_other(a, best);
			continue;
		}
		rc = covered(a, &a->ebox[l], a->cand, n, 0);
		if (rc <= 0)
			return rc;
	}
	return 1;
}

/* Two rules give the same verdict: the same action, and neither has one
 * of its own (a limit, a log). */
static inline int same_verdict(uint8_t x, uint8_t y)
{
	return x == y && !(x & ANALYZE_UNIQUE);
}

/* Would removing the rule change no verdict? Per entry l: let stop be the
 * first later rule of another action that may take a packet of l which no
 * earlier rule takes. If the earlier rules and the later ones of the same
 * action before stop cover l, every packet reaching l still gets this
 * action without it; with no stop at all, the default gives it too when
 * it is the same action. Returns 1 yes, 0 no (a->over), -1 ENOMEM. */
static int redundant(struct an *a, uint32_t rule)
{
	uint32_t first = a->rfirst[rule], end = a->rfirst[rule + 1];
	uint8_t act = a->actions[rule];
	int by_default = 0;

	a->other_n = 0;
	if (act & ANALYZE_UNIQUE)
		return 0;
	a->token++;
	for (uint32_t l = first; l < end; l++) {
		uint32_t ne, nl, nd = 0, k = 0, stop = NO_RULE, best = NO_RULE, unused;
		uint32_t *later;
		int rc;

		if (!a->live[l])
			continue;
		/* shadowed() has just listed them for its last entry */
		if (l != a->listed) {
			a->listed = l;
			a->listed_n = earlier(a, l, first, &unused);
		}
		ne = a->listed_n;
		later = a->cand + ne;
		nl = query(a, &a->ebox[l], 1, end, later);
		for (uint32_t j = 0; j < nl; j++) {
			uint32_t i = later[j];

			if (!same_verdict(a->actions[a->e[i].rule], act)) {
				if (!sets_disjoint(&a->e[i], &a->e[l]))
					a->dcand[nd++] = i;
			} else if (sets_implied(&a->e[i], &a->e[l])) {
				later[k++] = i;
			}
		}
		for (uint32_t j = 0; j < nd; j++) {
			const struct box *d, *b = &a->ebox[l];
			struct box both;
			uint32_t lo = j;

			/* the earliest left first; nearly always the first one ends it */
			for (uint32_t x = j + 1; x < nd; x++)
				if (a->dcand[x] < a->dcand[lo])
					lo = x;
			if (charge(a, nd - j))
				return 0;
			d = &a->ebox[a->dcand[lo]];
			a->dcand[lo] = a->dcand[j];
			a->dcand[j] = (uint32_t)(d - a->ebox);

			box_intersect(b, d, &both);
			rc = covered(a, &both, a->cand, ne, NO_RULE);
			if (rc < 0)
				return -1;
			if (a->over)
				return 0;
			if (!rc) {
				stop = a->e[a->dcand[j]].rule;
				break;
			}
		}
		nl = k;
		k = 0;
		for (uint32_t j = 0; j < nl; j++) {
			uint32_t i = later[j];

			if (a->e[i].rule >= stop)
				continue;
			later[k++] = i;
			if (a->e[i].rule < best && box_holds(&a->ebox[i], &a->ebox[l]))
				best = a->e[i].rule;
		}
		if (best != NO_RULE) {
			add_other(a, best);
			continue;
		}
		if (stop == NO_RULE && same_verdict(a->actions[0], act)) {
			by_default = 1;
			continue;
		}
		rc = covered(a, &a->ebox[l], a->cand, ne + k, rule);
		if (rc <= 0)
			return rc;
	}
	if (by_default)
		add_other(a, 0);
	return 1;
}

static void emit(struct an *a, enum analyze_kind kind, uint32_t rule,
		 void (*report)(void *, const struct analyze_finding *), void *ctx)
{
	struct analyze_finding f = {kind, rule, a->others, a->other_n};

	qsort(a->others, a->other_n, sizeof(*a->others), cmp_u32);
	report(ctx, &f);
}

static void an_free(struct an *a)
{
	free(a->ebox);
	free(a->live);
	free(a->rfirst);
	free(a->bstart);
	free(a->bitems);
	free(a->full);
	free(a->cand);
	free(a->dcand);
	free(a->size);
	free(a->brief);
	free(a->keys);
	free(a->stamp);
	free(a->others);
	free(a->stack);
}

int analyze_rules(const struct rfw_acl_entry *entries, uint32_t count, uint32_t rule_count,
		  const uint8_t *actions, const struct analyze_limits *limits,
		  void (*report)(void *ctx, const struct analyze_finding *f), void *ctx)
{
	struct an a = {.e = entries, .count = count, .actions = actions};
	int given_up = 0, err = ENOMEM;

	if (limits)
		a.lim = *limits;
	if (!a.lim.max_boxes)
		a.lim.max_boxes = 10000;
	if (!a.lim.max_rule_work)
		a.lim.max_rule_work = 2000000;
	if (!a.lim.max_total_work)
		a.lim.max_total_work = 500000000;
	if (rule_count == UINT32_MAX) {
		errno = EINVAL;
		return -1;
	}
	a.ebox = malloc((count ? count : 1) * sizeof(*a.ebox));
	a.live = malloc(count ? count : 1);
	a.rfirst = calloc((size_t)rule_count + 2, sizeof(*a.rfirst));
	a.cand = malloc(((size_t)count + 4) * sizeof(*a.cand));
	a.dcand = malloc((count ? count : 1) * sizeof(*a.dcand));
	a.size = malloc((count ? count : 1) * sizeof(*a.size));
	a.brief = malloc((count ? count : 1) * sizeof(*a.brief));
	a.keys = malloc(((size_t)count + 4) * sizeof(*a.keys));
	a.stamp = calloc((size_t)rule_count + 1, sizeof(*a.stamp));
	a.others = malloc(((size_t)rule_count + 1) * sizeof(*a.others));
	if (!a.ebox || !a.live || !a.rfirst || !a.cand || !a.dcand || !a.size || !a.brief || !a.keys || !a.stamp || !a.others)
		goto fail;
	for (uint32_t i = 0; i < count; i++) {
		if (entries[i].rule == 0 || entries[i].rule > rule_count ||
		    (i && entries[i].rule < entries[i - 1].rule)) {
			err = EINVAL;
			goto fail;
		}
		a.rfirst[entries[i].rule + 1]++;
		a.live[i] = (uint8_t)entry_box(&entries[i], &a.ebox[i]);
		a.size[i] = (uint16_t)box_size(&a.ebox[i]);
		brief_of(&a.ebox[i], &a.brief[i]);
	}
	for (uint32_t r = 1; r <= rule_count + 1; r++)
		a.rfirst[r] += a.rfirst[r - 1];
	for (int p = 0; p < 4; p++) {
		full_box(&a.nop[p]);
		a.nop[p].lo[D_PORTS] = 1;
		a.nop[p].lo[D_PROTO] = no_port_protos[p][0];
		a.nop[p].hi[D_PROTO] = no_port_protos[p][1];
	}
	if (build_index(&a))
		goto fail;

	for (uint32_t r = 1; r <= rule_count; r++) {
		a.other_n = 0;
		a.token++;
		a.work = 0;
		a.listed = UINT32_MAX;
		a.over = a.total_work > a.lim.max_total_work;
		if (a.over) {
			given_up++;
			continue;
		}
		int rc = shadowed(&a, r);

		if (rc < 0)
			goto fail;
		if (a.over) {
			given_up++;
			continue;
		}
		if (rc) {
			/* nothing reaches it: no packet at all, or earlier rules */
			emit(&a, a.other_n ? ANALYZE_SHADOWED : ANALYZE_NEVER_MATCHES, r,
			     report, ctx);
			continue;
		}
		rc = redundant(&a, r);

		if (rc < 0)
			goto fail;
		if (a.over)
			given_up++;
		else if (rc)
			emit(&a, ANALYZE_REDUNDANT, r, report, ctx);
	}
	an_free(&a);
	return given_up;
fail:
	an_free(&a);
	errno = err;
	return -1;
}
