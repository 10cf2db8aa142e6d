/* Per-worker flow table: preallocated flows, an open-addressing index
 * holding each flow under its original and its reply tuple, a timer wheel
 * for expiry, and the small IPv4/IPv6 fragment table. */
#include "ct.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "hugemem.h"
#include "wire.h"

/* Single-threaded by design (one table per worker): no locks, no atomics,
 * no allocation and no clock reads after ct_create.
 *
 * Memory (max_flows = N): N flows of 112 bytes + N/5 index buckets of 64
 * bytes (3 slots a flow, 2 used: at most 2/3 full) + a 4096-second wheel
 * + the fragment table: 124.9 bytes a flow at N = 1,000,000.
 *
 * Full table: flows past their timeout do not count (lookups ignore
 * them), so a full table first reaps up to FULL_REAP_BUDGET units of
 * expired work; then it evicts one flow that is not established (TCP
 * before its handshake completed, or reset or closed; another protocol
 * with no reply or a single one; none a packet touched this second:
 * flow_expendable) from the new flow's own index bucket or the
 * next (early drop, as Linux conntrack drops entries that are not yet
 * "assured"). A SYN flood to an open port fills the table with such
 * flows: refusing, every new connection would fail until they time out
 * (tcp_syn, 30 s); evicting, a legitimate one gets in and is safe once
 * its handshake completes (a random flood flow lives about max_flows /
 * flood rate seconds: 1 s at 1,000,000 flows and 1 Mpps). Only when
 * those buckets hold no such flow is the new one refused
 * (CT_REFUSED_FULL, counted) and its packet follows `defaults` like any
 * packet without state. Established flows are never evicted. */

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

enum {
	IPP_ICMP = 1, IPP_TCP = 6, IPP_UDP = 17, IPP_ICMPV6 = 58, IPP_SCTP = 132,
	IPP_HOPOPTS = 0, IPP_ROUTING = 43, IPP_FRAGMENT = 44, IPP_AH = 51, IPP_DSTOPTS = 60,
	TH_FIN = 0x01, TH_SYN = 0x02, TH_RST = 0x04, TH_ACK = 0x10,
};

/* The wheel turns once per second of `now`; 4096 s covers every default
 * timeout but tcp_established, whose flows go round again when visited. */
#define WHEEL_SLOTS 4096u
#define WHEEL_HEAD 0x80000000u	/* prev of a list head: WHEEL_HEAD | slot */
#define BUCKET_SLOTS 15u
#define FLOWS_PER_BUCKET 5u	/* 15 slots for 5 flows x 2 tuples */
#define FRAG_WAYS 4u
#define BATCH 64u
#define FULL_REAP_BUDGET 32u

/* struct ct_key: ct.h */
_Static_assert(sizeof(struct ct_key) == 40, "ct_key is hashed as 5 words");
_Static_assert(offsetof(struct ct_key, zero) == offsetof(struct pkt_key, has_ports) &&
	       offsetof(struct ct_key, sport) == offsetof(struct pkt_key, sport) &&
	       offsetof(struct ct_key, family) == offsetof(struct pkt_key, family) &&
	       offsetof(struct ct_key, proto) == offsetof(struct pkt_key, proto),
	       "ct_key is a prefix of pkt_key");

/* Index bucket, one cache line. Slot: (hash tag | dir << idx_bits |
 * flow + 1), 0 = empty; the tag's top bit is always set, so one compare
 * of the tag bits also tells a used slot from an empty one. `overflow`
 * counts entries that probed past this bucket, so a lookup stops at the
 * first bucket with none and a removal needs no tombstone (the idea of
 * the overflow counts in Facebook's F14 hash tables). */
struct ct_bucket {
	uint32_t slot[BUCKET_SLOTS];
	uint32_t overflow;
};
_Static_assert(sizeof(struct ct_bucket) == 64, "ct_bucket is one cache line");

struct ct_frag {
	uint8_t src[16];
	uint8_t dst[16];
	uint32_t id;		/* IPv4 16-bit id or IPv6 fragment header id */
	uint32_t expire;
	uint32_t flow;
	uint32_t rule;
	uint16_t sport, dport;	/* the first fragment's: its flow's in dir */
	uint8_t proto, family, dir, used;	/* proto: the first fragment's upper layer */
	uint8_t dgram_proto;	/* what every fragment names: frag_id */
	uint16_t judged_end;	/* where in the fragmentable part the first's
				 * upper-layer header, as far as judged, ends */
};

struct ct_table {
	/* hot: every packet */
	struct ct_flow *flows;
	struct ct_bucket *buckets;
	uint32_t nbuckets;
	uint32_t idx_bits;	/* bits of flow + 1 in a slot */
	uint32_t idx_mask;
	uint32_t tag_mask;	/* the hash tag bits of a slot */
	uint64_t key[6];	/* hash key, from the seed */
	uint32_t timeout[RFW_TIMEOUT_COUNT];
	struct ct_stats st;
	/* per new flow / per batch */
	uint32_t free_head;
	uint32_t free_count;
	uint32_t high_water;	/* 1 + the highest entry ever handed out */
	uint32_t max_flows;
	uint32_t wheel_pos;	/* wheel time: seconds before it are reaped */
	uint32_t *wheel;	/* WHEEL_SLOTS list heads */
	struct ct_frag *frags;
	uint32_t frag_sets;
	uint32_t frag_timeout;
	/* cold */
	/* ct_set_timeouts: the second of its last change, and the timeouts
	 * they replaced, which the flows touched earlier in that second
	 * expire by (touched_now); changed_again: more than one change in
	 * that second */
	uint32_t changed_second;
	uint32_t prev_timeout[RFW_TIMEOUT_COUNT];
	uint8_t changed, changed_again;
	void (*on_remove)(void *ctx, const struct ct_table *t, uint32_t flow);
	void *on_remove_ctx;
	size_t alloc_bytes;
};

/* ---- hashing ---- */

/* 64x64->128 multiply folded to 64 bits (the folded-multiply step of
 * hashes such as wyhash): the high half spreads every input bit upwards,
 * the low half downwards. Secret words are xored into every input, so an
 * attacker who cannot read the key cannot aim packets at one bucket; not
 * a cryptographic MAC, but enough against chain filling. */
static inline uint64_t mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* w: a ct_key's five words */
static inline uint64_t hash_words(const struct ct_table *t, const uint64_t w[5])
{
	return mix(mix(w[0] ^ t->key[0], w[1] ^ t->key[1]) ^ w[4] ^ t->key[4],
		   mix(w[2] ^ t->key[2], w[3] ^ t->key[3]) ^ t->key[5]);
}

static inline uint64_t ct_hash(const struct ct_table *t, const struct ct_key *k)
{
	uint64_t w[5];

	memcpy(w, k, sizeof(w));
	return hash_words(t, w);
}

/* Lemire's multiply-shift range reduction: any bucket count, no modulo. */
static inline uint32_t bucket_of(const struct ct_table *t, uint64_t h)
{
	return (uint32_t)(((h >> 32) * t->nbuckets) >> 32);
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- keys ---- */

static inline int is_icmp(uint8_t proto, uint8_t family)
{
	return (proto == IPP_ICMP && family == 4) || (proto == IPP_ICMPV6 && family == 6);
}

static inline int icmp_is_echo(uint8_t family, uint8_t type, int *request)
{
	*request = family == 4 ? type == 8 : type == 128;
	return family == 4 ? (type == 8 || type == 0) : (type == 128 || type == 129);
}

/* Destination unreachable, time exceeded, parameter problem; for ICMPv6
 * also packet too big (RFC 792, RFC 4443 2.1). */
static inline int icmp_is_error(uint8_t family, uint8_t type)
{
	if (family == 4)
		return type == 3 || type == 11 || type == 12;
	return type >= 1 && type <= 4;
}

enum key_kind {
	KEY_START,		/* may start a flow */
	KEY_NOSTART,		/* belongs to a flow or is invalid */
	KEY_ICMP_ERR,
	KEY_FRAG,		/* non-first fragment */
	KEY_BAD,
};

/* Keys are written as five 8-byte words, the loads ct_hash makes of them
 * right after: written field by field (2- and 1-byte stores), those loads
 * cannot be forwarded from the stores and wait for them to retire, a
 * stall per key on the packet path. The key's last word, built in a
 * register: */
static inline uint64_t key_tail(uint16_t sport, uint16_t dport, uint8_t family, uint8_t proto)
{
	struct {
		uint16_t sport, dport;
		uint8_t family, proto;
		uint16_t zero;
	} tail = {sport, dport, family, proto, 0};
	uint64_t w;

	_Static_assert(sizeof(tail) == 8 && offsetof(struct ct_key, sport) == 32,
		       "the tail is the key's last word");
	memcpy(&w, &tail, 8);
	return w;
}

static inline void key_store(struct ct_key *k, const uint64_t w[5])
{
	memcpy(k, w, sizeof(*k));
}

static enum key_kind key_of(const struct ct_pkt *p, struct ct_key *k)
{
	const struct pkt_meta *m = p->meta;
	const struct pkt_key *pk = &m->key;
	enum key_kind kind = KEY_START;
	uint16_t sport = pk->sport, dport = pk->dport;
	uint64_t w[5];

	/* Addresses from the parsed key (IPv4's 4 bytes with zeros after
	 * them, as pkt_key keeps them); ports cleared below where the
	 * protocol has none. */
	memcpy(w, pk->src, 32);
	if (unlikely(m->kind != PKT_IP)) {
		memset(w, 0, sizeof(w));
		key_store(k, w);
		return KEY_BAD;
	}
	if (likely(m->fragment != 2)) {
		switch (pk->proto) {
		case IPP_TCP:
			/* pf's default `flags S/SA`: only a bare SYN opens a flow. */
			kind = (pk->tcp_flags & (TH_SYN | TH_ACK | TH_RST | TH_FIN)) == TH_SYN ?
				KEY_START : KEY_NOSTART;
			goto done;
		case IPP_UDP:
		case IPP_SCTP:
			if (likely(pk->has_ports))
				goto done;
			sport = dport = 0;
			kind = KEY_BAD;
			goto done;
		default:
			break;
		}
	}
	sport = dport = 0;
	if (unlikely(m->fragment == 2)) {
		kind = KEY_FRAG;
	} else if (is_icmp(pk->proto, pk->family)) {
		int request;

		if (icmp_is_echo(pk->family, pk->icmp_type, &request)) {
			if (!m->l4_off || p->len < (uint32_t)m->l4_off + 8) {
				kind = KEY_BAD;
			} else {
				sport = dport = rd16(p->frame + m->l4_off + 4);
				kind = request ? KEY_START : KEY_NOSTART;
			}
		} else if (icmp_is_error(pk->family, pk->icmp_type)) {
			kind = KEY_ICMP_ERR;
		}
	}	/* other protocols: addresses + proto, KEY_START */
done:
	w[4] = key_tail(sport, dport, pk->family, pk->proto);
	key_store(k, w);
	return kind;
}

/* The flow tuple an ICMP error refers to, in the direction the error
 * travels: the reverse of the packet embedded in it (RFC 792: its IP
 * header and first 8 data bytes). Every read bounded by the IP payload.
 * The error must go back to the embedded packet's sender. */
static int key_of_icmp_error(const struct ct_pkt *p, struct ct_key *k, uint32_t *tcp_seq)
{
	const struct pkt_meta *m = p->meta;
	const uint8_t *f = p->frame;
	uint32_t off = (uint32_t)m->l4_off + 8, end, l4;
	const uint8_t *isrc, *idst;
	uint8_t proto;
	unsigned alen;

	if (!m->l4_off)
		return 0;
	end = pkt_ip_end(f, p->len, m);
	if (m->key.family == 4) {
		uint32_t ihl;

		if (end < off + 20 || (f[off] >> 4) != 4)
			return 0;
		ihl = (uint32_t)(f[off] & 0xf) * 4;
		if (ihl < 20 || (rd16(f + off + 6) & 0x1fff))
			return 0;	/* a non-first fragment carries no ports */
		proto = f[off + 9];
		isrc = f + off + 12;
		idst = f + off + 16;
		alen = 4;
		l4 = off + ihl;
	} else {
		uint8_t nh;
		int i;

		if (end < off + 40 || (f[off] >> 4) != 6)
			return 0;
		nh = f[off + 6];
		isrc = f + off + 8;
		idst = f + off + 24;
		alen = 16;
		l4 = off + 40;
		for (i = 0; nh == IPP_HOPOPTS || nh == IPP_ROUTING || nh == IPP_DSTOPTS; i++) {
			if (i == 4 || end < l4 + 8)
				return 0;
			nh = f[l4];
			l4 += ((uint32_t)f[l4 + 1] + 1) * 8;
		}
		if (nh == IPP_FRAGMENT)
			return 0;
		proto = nh;
	}
	if (memcmp(isrc, m->key.dst, alen) != 0)
		return 0;
	memcpy(k->src, idst, alen);
	memcpy(k->dst, isrc, alen);
	k->proto = proto;
	k->family = m->key.family;
	if (proto == IPP_TCP || proto == IPP_UDP || proto == IPP_SCTP) {
		/* TCP's sequence number is checked (ct_tcp_seq_plausible): a
		 * quote without it (RFC 792 quotes 8 bytes) cannot be */
		if (end < l4 + (proto == IPP_TCP ? 8u : 4u))
			return 0;
		k->sport = rd16(f + l4 + 2);
		k->dport = rd16(f + l4);
		if (proto == IPP_TCP)	/* the quoted 8 bytes hold the sequence number */
			*tcp_seq = rd32(f + l4 + 4);
	} else if (is_icmp(proto, k->family)) {
		int request;

		if (end < l4 + 8 || !icmp_is_echo(k->family, f[l4], &request))
			return 0;	/* no errors about errors (RFC 1122 3.2.2) */
		k->sport = k->dport = rd16(f + l4 + 4);
	}
	return 1;
}

void ct_packet_tuple(const struct ct_pkt *p, struct ct_key *k)
{
	uint32_t seq;

	if (key_of(p, k) == KEY_ICMP_ERR) {
		memset(k, 0, sizeof(*k));
		(void)key_of_icmp_error(p, k, &seq);	/* zeros when it quotes no flow */
	}
}

/* A pkt_key's tuple as a ct_key (ports as given: for ICMP echo the
 * caller's convention puts the identifier in both). */
/* A pkt_key's tuple as a conntrack key, with protocol `proto` (callers
 * give the key's own, or the flow's for a NAT reply tuple). */
static void key_from_pkt(const struct pkt_key *pk, uint8_t proto, struct ct_key *k)
{
	/* IPv4 keeps the first 4 bytes of each address and zeroes the rest,
	 * whatever a caller's key holds there (a parsed key has zeros) */
	static const uint8_t first4[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
	uint64_t w[5], lo = ~0ull, hi = ~0ull;

	if (pk->family == 4) {
		memcpy(&lo, first4, 8);
		hi = 0;
	}
	memcpy(w, pk->src, 32);	/* src and dst, adjacent */
	w[0] &= lo;
	w[1] &= hi;
	w[2] &= lo;
	w[3] &= hi;
	w[4] = key_tail(pk->sport, pk->dport, pk->family, proto);
	key_store(k, w);
}

/* The tuple replies carry when nothing translates the flow. */
static void reverse_key(const struct ct_key *k, struct ct_key *r)
{
	uint64_t w[5], kw[5];

	memcpy(kw, k, sizeof(kw));
	w[0] = kw[2];
	w[1] = kw[3];
	w[2] = kw[0];
	w[3] = kw[1];
	w[4] = key_tail(k->dport, k->sport, k->family, k->proto);
	key_store(r, w);
}

/* Is r the plain reverse of k (what reverse_key makes)? Word compares. */
static inline int is_reverse(const struct ct_key *k, const struct ct_key *r)
{
	struct ct_key x;
	uint64_t a[5], b[5];

	reverse_key(k, &x);
	memcpy(a, &x, sizeof(a));
	memcpy(b, r, sizeof(b));
	return !((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]) | (a[4] ^ b[4]));
}

/* A flow's addresses in one direction, into zeroed src/dst (IPv4: 4
 * bytes each, stored at that width). */
static void flow_addrs(const struct ct_table *t, const struct ct_flow *f, unsigned dir,
		       uint8_t *src, uint8_t *dst)
{
	if (f->family == 4) {
		memcpy(src, f->addr + 8 * dir, 4);
		memcpy(dst, f->addr + 8 * dir + 4, 4);
	} else if (dir == CT_DIR_ORIG) {
		memcpy(src, f->addr, 16);
		memcpy(dst, f->addr6_dst, 16);
	} else if (f->flags & CT_F_NAT6) {
		memcpy(src, t->flows[f->aux].addr, 16);
		memcpy(dst, t->flows[f->aux].addr6_dst, 16);
	} else {
		memcpy(src, f->addr6_dst, 16);
		memcpy(dst, f->addr, 16);
	}
}

/* The key of a flow in one direction, rebuilt from the entry. */
static void flow_key(const struct ct_table *t, const struct ct_flow *f, unsigned dir,
		     struct ct_key *k)
{
	memset(k, 0, sizeof(*k));
	k->proto = f->proto;
	k->family = f->family;
	k->sport = f->port[2 * dir];
	k->dport = f->port[2 * dir + 1];
	flow_addrs(t, f, dir, k->src, k->dst);
}

/* k: a ct_key or a pkt_key (the same fields at the same places) */
#define flow_match(t, f, dir, k) \
	flow_match_parts(t, f, dir, (k)->src, (k)->dst, &(k)->sport, (k)->proto, (k)->family)

static inline int flow_match_parts(const struct ct_table *t, const struct ct_flow *f,
				   unsigned dir, const uint8_t *ksrc, const uint8_t *kdst,
				   const uint16_t *kports, uint8_t proto, uint8_t family)
{
	const uint8_t *s, *d;
	uint32_t fw, kw, fs, fd, ks, kd;

	/* both ports in one compare: adjacent in the entry and the key */
	memcpy(&fw, &f->port[2 * dir], 4);
	memcpy(&kw, kports, 4);
	if (fw != kw || f->proto != proto || f->family != family)
		return 0;
	if (f->family == 4) {
		memcpy(&fs, f->addr + 8 * dir, 4);
		memcpy(&fd, f->addr + 8 * dir + 4, 4);
		memcpy(&ks, ksrc, 4);
		memcpy(&kd, kdst, 4);
		return ((fs ^ ks) | (fd ^ kd)) == 0;
	}
	if (dir == CT_DIR_ORIG) {
		s = f->addr;
		d = f->addr6_dst;
	} else if (unlikely(f->flags & CT_F_NAT6)) {
		s = t->flows[f->aux].addr;
		d = t->flows[f->aux].addr6_dst;
	} else {
		s = f->addr6_dst;
		d = f->addr;
	}
	return memcmp(s, ksrc, 16) == 0 && memcmp(d, kdst, 16) == 0;
}

/* ---- index ---- */

static inline uint32_t tag_of(const struct ct_table *t, uint64_t h)
{
	return ((uint32_t)h & t->tag_mask) | 0x80000000u;
}

/* Bit i set for every slot i of the bucket with (slot & mask) == want:
 * tag hits (mask = tag_mask, want = tag) or empty slots (~0, 0). Four
 * 4-lane compares instead of 15 compare-and-branch steps; a miss, the
 * common case of new flows and floods, costs the same as a hit. */
static inline uint32_t bucket_match(const struct ct_bucket *bk, uint32_t mask, uint32_t want)
{
#ifdef __SSE2__
	const __m128i vm = _mm_set1_epi32((int)mask), vw = _mm_set1_epi32((int)want);
	uint32_t bits = 0;

	for (unsigned q = 0; q < 4; q++) {
		/* the fourth load takes `overflow` as lane 15, masked off below */
		__m128i v = _mm_load_si128((const __m128i *)(const void *)bk + q);

		v = _mm_cmpeq_epi32(_mm_and_si128(v, vm), vw);
		bits |= (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(v)) << (4 * q);
	}
	return bits & ((1u << BUCKET_SLOTS) - 1);
#else
	uint32_t bits = 0;

	for (unsigned i = 0; i < BUCKET_SLOTS; i++)
		bits |= (uint32_t)((bk->slot[i] & mask) == want) << i;
	return bits;
#endif
}

static inline uint32_t next_bucket(const struct ct_table *t, uint32_t b)
{
	return b + 1 == t->nbuckets ? 0 : b + 1;
}

/* The probe walk from bucket b, whose tag hits are already in `hits`:
 * compare each hit's flow, then go on while buckets say entries
 * overflowed past them. */
static uint32_t index_walk(const struct ct_table *t, const struct ct_key *k, uint32_t b,
			   uint32_t tag, uint32_t hits, unsigned *dir)
{
	for (;;) {
		const struct ct_bucket *bk = &t->buckets[b];

		for (; hits; hits &= hits - 1) {
			uint32_t s = bk->slot[__builtin_ctz(hits)];
			uint32_t idx = (s & t->idx_mask) - 1;
			unsigned d = (s >> t->idx_bits) & 1;

			if (likely(flow_match(t, &t->flows[idx], d, k))) {
				*dir = d;
				return idx;
			}
		}
		if (!bk->overflow)
			return CT_NONE;
		b = next_bucket(t, b);
		hits = bucket_match(&t->buckets[b], t->tag_mask, tag);
	}
}

static uint32_t index_find(const struct ct_table *t, const struct ct_key *k, uint64_t h,
			   unsigned *dir)
{
	uint32_t b = bucket_of(t, h), tag = tag_of(t, h);

	return index_walk(t, k, b, tag, bucket_match(&t->buckets[b], t->tag_mask, tag), dir);
}

static inline uint32_t slot_value(const struct ct_table *t, uint64_t h, unsigned dir,
				  uint32_t idx)
{
	return tag_of(t, h) | (uint32_t)dir << t->idx_bits | (idx + 1);
}

/* Walk the probe sequence of h to the first slot holding `from`, put `to`
 * there, and add `step` to the overflow count of every bucket passed:
 * insert is (0 -> v, +1), remove (v -> 0, -1). An insert always finds
 * room: the index has 3 slots for every 2 entries. */
static void index_put(struct ct_table *t, uint64_t h, uint32_t from, uint32_t to, int step)
{
	uint32_t b = bucket_of(t, h);

	for (;;) {
		struct ct_bucket *bk = &t->buckets[b];
		uint32_t m = bucket_match(bk, ~0u, from);

		if (m) {
			bk->slot[__builtin_ctz(m)] = to;
			return;
		}
		bk->overflow += (uint32_t)step;
		b = next_bucket(t, b);
	}
}

/* h: ct_hash of the key, which the caller has already computed. */
static void index_insert(struct ct_table *t, uint64_t h, unsigned dir, uint32_t idx)
{
	index_put(t, h, 0, slot_value(t, h, dir, idx), 1);
}

static void index_remove(struct ct_table *t, const struct ct_key *k, unsigned dir, uint32_t idx)
{
	uint64_t h = ct_hash(t, k);

	index_put(t, h, slot_value(t, h, dir, idx), 0, -1);
}

/* ---- timer wheel ----
 * One list per second, modulo WHEEL_SLOTS. Refreshing a flow only moves
 * its expire forward; it stays in its list and is moved when the wheel
 * reaches it (lazy), so the packet path writes no list pointers. Only a
 * shorter timeout (FIN, RST) relinks at once. */

static void wheel_insert(struct ct_table *t, uint32_t idx)
{
	struct ct_flow *f = &t->flows[idx];
	uint32_t e = f->expire, s;

	if ((int32_t)(e - t->wheel_pos) < 0)
		e = t->wheel_pos;
	if (e - t->wheel_pos >= WHEEL_SLOTS)
		e = t->wheel_pos + WHEEL_SLOTS - 1;
	s = e & (WHEEL_SLOTS - 1);
	f->prev = WHEEL_HEAD | s;
	f->next = t->wheel[s];
	if (f->next != CT_NONE)
		t->flows[f->next].prev = idx;
	t->wheel[s] = idx;
}

static void wheel_unlink(struct ct_table *t, uint32_t idx)
{
	struct ct_flow *f = &t->flows[idx];

	if (f->prev & WHEEL_HEAD)
		t->wheel[f->prev & ~WHEEL_HEAD] = f->next;
	else
		t->flows[f->prev].next = f->next;
	if (f->next != CT_NONE)
		t->flows[f->next].prev = f->prev;
}

/* ---- create / destroy ---- */

void ct_config_from_policy(struct ct_config *c, const struct rfw_policy *p)
{
	memset(c, 0, sizeof(*c));
	c->max_flows = p->max_flows;
	memcpy(c->timeout, p->timeout, sizeof(c->timeout));
}

struct ct_table *ct_create(const struct ct_config *cfg)
{
	struct ct_table *t;
	uint64_t seed;
	size_t total = 0;
	uint32_t n, fs;

	if (!cfg || cfg->max_flows == 0 || cfg->max_flows > CT_MAX_FLOWS) {
		errno = EINVAL;
		return NULL;
	}
	n = cfg->max_flows;
	t = hugemem_zalloc(sizeof(*t), &total);
	if (!t)
		return NULL;
	t->max_flows = n;
	t->nbuckets = (n + FLOWS_PER_BUCKET - 1) / FLOWS_PER_BUCKET;
	if (t->nbuckets < 2)
		t->nbuckets = 2;
	t->idx_bits = 32u - (uint32_t)__builtin_clz(n);
	t->idx_mask = (1u << t->idx_bits) - 1;
	t->tag_mask = ~((2u << t->idx_bits) - 1);
	fs = cfg->frag_slots ? cfg->frag_slots : CT_FRAG_SLOTS;
	t->frag_sets = (fs + FRAG_WAYS - 1) / FRAG_WAYS;
	t->frag_timeout = cfg->frag_timeout ? cfg->frag_timeout : CT_FRAG_TIMEOUT;
	for (unsigned i = 0; i < RFW_TIMEOUT_COUNT; i++)
		t->timeout[i] = cfg->timeout[i] ? cfg->timeout[i] : 1;
	t->on_remove = cfg->on_remove;
	t->on_remove_ctx = cfg->on_remove_ctx;

	t->flows = hugemem_zalloc((size_t)n * sizeof(struct ct_flow), &total);
	t->buckets = hugemem_zalloc((size_t)t->nbuckets * sizeof(struct ct_bucket), &total);
	t->wheel = hugemem_zalloc(WHEEL_SLOTS * sizeof(uint32_t), &total);
	t->frags = hugemem_zalloc((size_t)t->frag_sets * FRAG_WAYS * sizeof(struct ct_frag), &total);
	if (!t->flows || !t->buckets || !t->wheel || !t->frags) {
		ct_destroy(t);
		errno = ENOMEM;
		return NULL;
	}
	seed = cfg->seed;
	if (!seed && getrandom(&seed, sizeof(seed), 0) != sizeof(seed)) {
		ct_destroy(t);
		return NULL;
	}
	for (unsigned i = 0; i < 6; i++)
		t->key[i] = splitmix64(&seed) | 1;
	memset(t->wheel, 0xff, WHEEL_SLOTS * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++)
		t->flows[i].next = i + 1 < n ? i + 1 : CT_NONE;
	t->free_head = 0;
	t->free_count = n;
	t->alloc_bytes = total;
	return t;
}

void ct_destroy(struct ct_table *t)
{
	if (!t)
		return;
	hugemem_free(t->flows, (size_t)t->max_flows * sizeof(struct ct_flow));
	hugemem_free(t->buckets, (size_t)t->nbuckets * sizeof(struct ct_bucket));
	hugemem_free(t->wheel, WHEEL_SLOTS * sizeof(uint32_t));
	hugemem_free(t->frags, (size_t)t->frag_sets * FRAG_WAYS * sizeof(struct ct_frag));
	hugemem_free(t, sizeof(*t));
}

double ct_bytes_per_flow(const struct ct_table *t)
{
	return (double)t->alloc_bytes / t->max_flows;
}

uint32_t ct_max_flows(const struct ct_table *t)
{
	return t->max_flows;
}

void ct_get_stats(const struct ct_table *t, struct ct_stats *s)
{
	*s = t->st;
}

/* ---- flows ---- */

static uint32_t timeout_of(const struct ct_table *t, const struct ct_flow *f)
{
	if (f->proto == IPP_TCP) {
		switch (ct_tcp_flow_state(f)) {
		case CT_TCP_SYN_SENT:
		case CT_TCP_SYN_RECV:
			return t->timeout[RFW_TIMEOUT_TCP_SYN];
		case CT_TCP_ESTABLISHED:
			return t->timeout[RFW_TIMEOUT_TCP_ESTABLISHED];
		default:
			return t->timeout[RFW_TIMEOUT_TCP_CLOSING];
		}
	}
	if (f->proto == IPP_UDP)
		return t->timeout[(f->flags & CT_F_REPLY_SEEN) ?
				  RFW_TIMEOUT_UDP_STREAM : RFW_TIMEOUT_UDP];
	if (is_icmp(f->proto, f->family))
		return t->timeout[RFW_TIMEOUT_ICMP];
	return t->timeout[RFW_TIMEOUT_OTHER];
}

/* Prefetch an entry that is about to be written whole. */
static inline void prefetch_entry_w(const struct ct_flow *f)
{
	__builtin_prefetch(f, 1);
	__builtin_prefetch((const char *)f + 56, 1);
	__builtin_prefetch((const char *)f + sizeof(*f) - 1, 1);
}

static uint32_t entry_alloc(struct ct_table *t)
{
	uint32_t idx = t->free_head;

	t->free_head = t->flows[idx].next;
	t->free_count--;
	/* the free list starts in index order: entries in use stay below
	 * this mark, and scans (reload's sweep) stop at it */
	if (idx >= t->high_water)
		t->high_water = idx + 1;
	/* The next create writes the new head: once the free list has been
	 * shuffled by expiry it is anywhere in the array, a miss per create
	 * that this hides behind the rest of this create and the next. */
	if (likely(t->free_count))
		prefetch_entry_w(&t->flows[t->free_head]);
	return idx;
}

static void entry_free(struct ct_table *t, uint32_t idx)
{
	t->flows[idx].flags = 0;
	t->flows[idx].next = t->free_head;
	t->free_head = idx;
	t->free_count++;
}

/* Did a packet make or refresh the flow at `now`? The entry keeps no
 * time of its own: its expiry is when it was touched plus its timeout
 * under the timeouts of that time. In the second ct_set_timeouts changed
 * them, a flow touched before the change has the old ones' expiry (more
 * than one change in the second: every flow counts as touched in it).
 * The one error left is on the safe side: a flow touched before a change
 * that shortened its timeout by d seconds looks touched again d seconds
 * later, and is kept for that second. */
static int touched_now(const struct ct_table *t, const struct ct_flow *f, uint32_t now)
{
	struct ct_table before;

	if (f->expire - timeout_of(t, f) == now)
		return 1;
	if (!t->changed || t->changed_second != now)
		return 0;
	if (t->changed_again)
		return 1;
	/* timeout_of on a copy of the table with the old timeouts (a full
	 * table, in that one second only): timeout_of itself stays as the
	 * per-packet paths compile it */
	before = *t;
	memcpy(before.timeout, t->prev_timeout, sizeof(before.timeout));
	return f->expire - timeout_of(&before, f) == now;
}

/* May make room for a new flow when the table is full (early drop):
 * past its time, or not established: a TCP connection before its
 * handshake completed or after a reset or both FINs, a flow of another
 * protocol that has had no reply or only one packet each way (a request
 * and its answer, done: Linux does not count such UDP flows as assured
 * either, so a spoofed flood a server answers cannot lock the table).
 * Never one a packet touched this second:
 * the pipeline holds the flows of the burst being processed (made or
 * found with this `now`) until the burst is done, so one of them must not
 * be evicted and its entry reused under it; and a flood's flows made
 * this second only evict older ones. */
static int flow_expendable(const struct ct_table *t, const struct ct_flow *f, uint32_t now)
{
	enum ct_tcp_state s;

	if ((f->flags & (CT_F_USED | CT_F_AUX)) != CT_F_USED)
		return 0;
	if ((int32_t)(now - f->expire) >= 0)
		return 1;
	if (touched_now(t, f, now))
		return 0;
	if (f->proto != IPP_TCP)
		return !(f->flags & CT_F_REPLY_SEEN) ||
		       (f->pkts[0] <= 1 && f->pkts[1] <= 1 && !f->pkts_hi[0] && !f->pkts_hi[1]);
	s = ct_tcp_flow_state(f);
	return s != CT_TCP_ESTABLISHED && s != CT_TCP_FIN_WAIT && s != CT_TCP_CLOSING;
}

/* Early drop: evict one expendable flow of bucket b or the next (a
 * bounded look, only when the table is full). 1 if one went. */
static int early_drop(struct ct_table *t, uint32_t b, uint32_t now)
{
	for (unsigned look = 0; look < 2; look++, b = next_bucket(t, b)) {
		const struct ct_bucket *bk = &t->buckets[b];

		for (unsigned i = 0; i < BUCKET_SLOTS; i++) {
			uint32_t s = bk->slot[i], idx;

			if (!s)
				continue;
			idx = (s & t->idx_mask) - 1;
			if (flow_expendable(t, &t->flows[idx], now)) {
				ct_remove(t, idx);
				t->st.evicted++;
				return 1;
			}
		}
	}
	return 0;
}

/* Drop a flow that is already off the wheel. */
static void flow_free(struct ct_table *t, uint32_t idx)
{
	struct ct_flow *f = &t->flows[idx];
	struct ct_key k;

	if (t->on_remove)
		t->on_remove(t->on_remove_ctx, t, idx);
	flow_key(t, f, CT_DIR_ORIG, &k);
	index_remove(t, &k, CT_DIR_ORIG, idx);
	flow_key(t, f, CT_DIR_REPLY, &k);
	index_remove(t, &k, CT_DIR_REPLY, idx);
	if (f->flags & CT_F_NAT6)
		entry_free(t, f->aux);
	entry_free(t, idx);
	t->st.in_use--;
}

void ct_remove(struct ct_table *t, uint32_t flow)
{
	if (flow >= t->max_flows || (t->flows[flow].flags & (CT_F_USED | CT_F_AUX)) != CT_F_USED)
		return;
	wheel_unlink(t, flow);
	flow_free(t, flow);
	t->st.removed++;
}

int ct_each(const struct ct_table *t, uint32_t *cursor, uint32_t budget,
	    void (*fn)(void *ctx, const struct ct_table *t, uint32_t flow), void *ctx)
{
	uint32_t i = *cursor, end = t->high_water;

	for (; i < end && budget; i++, budget--)
		if ((t->flows[i].flags & (CT_F_USED | CT_F_AUX)) == CT_F_USED)
			fn(ctx, t, i);
	*cursor = i;
	return i < end;
}

int ct_evict_scan(struct ct_table *t, uint32_t *cursor, uint32_t look, uint32_t now,
		  int (*want)(void *ctx, const struct ct_table *t, uint32_t flow), void *ctx)
{
	uint32_t end = t->high_water, i = *cursor;

	if (!end)
		return 0;
	if (look > end)
		look = end;
	for (; look; look--, i++) {
		if (i >= end)
			i = 0;
		if (flow_expendable(t, &t->flows[i], now) && want(ctx, t, i)) {
			ct_remove(t, i);
			t->st.evicted++;
			*cursor = i + 1;
			return 1;
		}
	}
	*cursor = i;
	return 0;
}

void ct_set_timeouts(struct ct_table *t, const uint32_t timeout[RFW_TIMEOUT_COUNT],
		     uint32_t now)
{
	uint32_t next[RFW_TIMEOUT_COUNT];

	for (unsigned i = 0; i < RFW_TIMEOUT_COUNT; i++)
		next[i] = timeout[i] ? timeout[i] : 1;
	if (!memcmp(next, t->timeout, sizeof(next)))
		return;
	if (t->changed && t->changed_second == now) {
		t->changed_again = 1;
	} else {
		memcpy(t->prev_timeout, t->timeout, sizeof(t->prev_timeout));
		t->changed_second = now;
		t->changed = 1;
		t->changed_again = 0;
	}
	memcpy(t->timeout, next, sizeof(next));
}

void ct_flow_set_rule(struct ct_table *t, uint32_t flow, uint32_t rule)
{
	if (flow < t->max_flows && (t->flows[flow].flags & (CT_F_USED | CT_F_AUX)) == CT_F_USED)
		t->flows[flow].rule = rule;
}

/* Slots [0, max_flows) are flows, the fragment entries follow. */
int ct_rewrite_rules(struct ct_table *t, uint32_t *cursor, uint32_t budget,
		     uint32_t (*fn)(void *ctx, uint32_t rule), void *ctx)
{
	uint64_t nfrag = (uint64_t)t->frag_sets * FRAG_WAYS, end = t->max_flows + nfrag;
	uint64_t i = *cursor, stop;

	if (i < t->max_flows && i >= t->high_water)
		i = t->max_flows;	/* no entry was ever used past the mark */
	stop = i + budget < end ? i + budget : end;
	if (i < t->high_water && stop > t->high_water)
		stop = t->high_water;
	for (; i < stop; i++) {
		if (i < t->max_flows) {
			struct ct_flow *f = &t->flows[i];

			if ((f->flags & (CT_F_USED | CT_F_AUX)) == CT_F_USED)
				f->rule = fn(ctx, f->rule);
		} else {
			struct ct_frag *g = &t->frags[i - t->max_flows];

			if (g->used)
				g->rule = fn(ctx, g->rule);
		}
	}
	*cursor = (uint32_t)i;
	return i < end;
}

static inline int flow_live(const struct ct_flow *f, uint32_t now)
{
	return (int32_t)(now - f->expire) < 0;
}

/* A SYN may reuse the ports of a closed connection (TIME_WAIT or reset),
 * as a TCP stack does (RFC 793 TIME-WAIT, RFC 6191), from either side: a
 * SYN from the old responder is a new connection the other way (pf
 * purges a state both of whose peers are at FIN_WAIT_2 or later on a SYN
 * either way; Linux reopens from TIME_WAIT either way). The rules judge
 * it as any new flow. Not from the reply side of a translated flow:
 * reply_reopen_refused. */
static inline int tcp_reusable(const struct ct_flow *f, const struct ct_key *k,
			       enum key_kind kind)
{
	enum ct_tcp_state s;

	if (f->proto != IPP_TCP || k->proto != IPP_TCP || kind != KEY_START)
		return 0;
	s = ct_tcp_flow_state(f);
	return s == CT_TCP_TIME_WAIT || s == CT_TCP_CLOSED;
}

/* A SYN from the reply side of a closed translated flow (tcp_reusable)
 * opens nothing: its tuple is the translated one. Behind SNAT it is aimed
 * at the pool's pair, not at a host: as a new flow it could only be
 * judged towards the pool's address, and taking the entry over would
 * give the pair back to the pool while the responder still aims at it;
 * as the old flow's it would reach the translated host, and SNAT lets no
 * connection in. So it is invalid, and the closed flow keeps its pair
 * until tcp_closing ends it. A DNAT target opening one back to the
 * client is refused the same way (one rule for every translated flow). */
static inline int reply_reopen_refused(const struct ct_flow *f, unsigned dir)
{
	return dir == CT_DIR_REPLY && (f->flags & CT_F_NAT);
}

static void count_packet(struct ct_flow *f, unsigned dir, uint32_t len)
{
	if (unlikely(++f->pkts[dir] == 0))
		f->pkts_hi[dir]++;
	f->bytes[dir] += len;
}

static inline void refresh(struct ct_table *t, uint32_t idx, uint32_t now)
{
	struct ct_flow *f = &t->flows[idx];
	uint32_t e = now + timeout_of(t, f);

	if (unlikely((int32_t)(e - f->expire) < 0)) {
		f->expire = e;
		wheel_unlink(t, idx);
		wheel_insert(t, idx);
	} else {
		f->expire = e;
	}
}

/* account() of a packet that is neither a fragment nor an ICMP error. */
static inline int account_known(struct ct_table *t, uint32_t flow, unsigned dir,
				const struct ct_pkt *p, uint32_t now)
{
	struct ct_flow *f = &t->flows[flow];

	if (f->proto == IPP_TCP && !ct_tcp_track(f, dir, p)) {
		t->st.invalid++;
		return 0;
	}
	if (dir == CT_DIR_REPLY)
		f->flags |= CT_F_REPLY_SEEN;
	count_packet(f, dir, p->len);
	refresh(t, flow, now);
	return 1;
}

/* ct_update on a flow known to be live and dir known to be 0 or 1. */
static inline int account(struct ct_table *t, uint32_t flow, unsigned dir,
			  const struct ct_pkt *p, uint32_t now)
{
	const struct pkt_key *pk = &p->meta->key;
	struct ct_flow *f = &t->flows[flow];

	/* A fragment follows its first; an ICMP error is RELATED: both
	 * counted, but neither advances the TCP state nor keeps the flow
	 * alive. */
	if (unlikely(p->meta->fragment == 2 ||
		     (is_icmp(pk->proto, pk->family) && icmp_is_error(pk->family, pk->icmp_type)))) {
		count_packet(f, dir, p->len);
		return 1;
	}
	return account_known(t, flow, dir, p, now);
}

int ct_update(struct ct_table *t, uint32_t flow, unsigned dir, const struct ct_pkt *p,
	      uint32_t now)
{
	if (unlikely(flow >= t->max_flows || dir > 1 || !(t->flows[flow].flags & CT_F_USED))) {
		t->st.invalid++;
		return 0;
	}
	return account(t, flow, dir, p, now);
}

/* A new entry's tuple (both directions) and rule; the rest zero. */
static inline void entry_fill(struct ct_flow *nf, const struct ct_key *ok, const struct ct_key *rk,
			      uint32_t rule)
{
	memset(nf, 0, sizeof(*nf));
	nf->proto = ok->proto;
	nf->family = ok->family;
	nf->flags = CT_F_USED;
	nf->port[0] = ok->sport;
	nf->port[1] = ok->dport;
	nf->port[2] = rk->sport;
	nf->port[3] = rk->dport;
	nf->rule = rule;
	if (!is_reverse(ok, rk))
		nf->flags |= CT_F_NAT;
	if (ok->family == 4) {
		memcpy(nf->addr, ok->src, 4);
		memcpy(nf->addr + 4, ok->dst, 4);
		memcpy(nf->addr + 8, rk->src, 4);
		memcpy(nf->addr + 12, rk->dst, 4);
	} else {
		memcpy(nf->addr, ok->src, 16);
		memcpy(nf->addr6_dst, ok->dst, 16);
	}
}

/* An IPv6 flow whose reply addresses are not the reverse: they go in a
 * side entry (the caller made sure one is free). */
static void entry_nat6(struct ct_table *t, struct ct_flow *nf, const struct ct_key *rk)
{
	uint32_t aux = entry_alloc(t);

	memset(&t->flows[aux], 0, sizeof(struct ct_flow));
	t->flows[aux].flags = CT_F_AUX;
	memcpy(t->flows[aux].addr, rk->src, 16);
	memcpy(t->flows[aux].addr6_dst, rk->dst, 16);
	nf->flags |= CT_F_NAT6;
	nf->aux = aux;
}

/* A filled entry (expire set) into the index both ways and the wheel. */
static inline void entry_link(struct ct_table *t, uint32_t idx, uint64_t ohash, uint64_t rhash)
{
	index_insert(t, ohash, CT_DIR_ORIG, idx);
	index_insert(t, rhash, CT_DIR_REPLY, idx);
	wheel_insert(t, idx);
	t->st.in_use++;
}

void ct_create_prefetch(const struct ct_table *t, const struct ct_pkt *p,
			const struct pkt_key *reply_key, struct ct_create_hint *hint)
{
	struct ct_key own, own_r, *ok = hint ? &hint->orig : &own, *rk = hint ? &hint->reply : &own_r;
	uint64_t oh, rh;

	if (hint)
		hint->valid = 0;
	if (key_of(p, ok) != KEY_START)
		return;
	/* The packet's own bucket too: the stages between lookup and create
	 * (a 10k-rule classifier) evict it often enough to show. */
	oh = ct_hash(t, ok);
	__builtin_prefetch(&t->buckets[bucket_of(t, oh)], 1);
	if (reply_key) {
		key_from_pkt(reply_key, ok->proto, rk);
	} else {
		reverse_key(ok, rk);
	}
	rh = ct_hash(t, rk);
	__builtin_prefetch(&t->buckets[bucket_of(t, rh)], 1);
	if (hint) {
		hint->orig_hash = oh;
		hint->reply_hash = rh;
		hint->valid = 1;
		hint->absent = 0;
	}
}

int ct_create_flow(struct ct_table *t, const struct ct_pkt *p, const struct pkt_key *reply_key,
		   uint32_t rule, uint32_t now, uint32_t *flow)
{
	return ct_create_flow_hinted(t, p, reply_key, rule, now, flow, NULL);
}

int ct_create_flow_hinted(struct ct_table *t, const struct ct_pkt *p,
			  const struct pkt_key *reply_key, uint32_t rule, uint32_t now,
			  uint32_t *flow, const struct ct_create_hint *hint)
{
	struct ct_key ok, rk;
	struct ct_flow *nf;
	enum key_kind kind = KEY_START;
	unsigned dir, need;
	uint32_t idx;
	uint64_t ohash, rhash;

	*flow = CT_NONE;
	if (hint && !hint->valid)
		hint = NULL;
	if (hint)	/* valid: the packet may start a flow, and this is its key */
		ok = hint->orig;
	else
		kind = key_of(p, &ok);
	if (kind != KEY_START)
		return CT_REFUSED_INVALID;
	/* Two packets of one new flow in a batch both miss; the second finds
	 * the first here. A dead or closed flow on the tuple is recycled. */
	ohash = hint ? hint->orig_hash : ct_hash(t, &ok);
	idx = hint && hint->absent ? CT_NONE : index_find(t, &ok, ohash, &dir);
	if (idx != CT_NONE) {
		if (flow_live(&t->flows[idx], now)) {
			if (!tcp_reusable(&t->flows[idx], &ok, kind)) {
				*flow = idx;
				ct_update(t, idx, dir, p, now);
				return CT_EXISTS;
			}
			if (reply_reopen_refused(&t->flows[idx], dir)) {
				t->st.invalid++;
				return CT_REFUSED_INVALID;
			}
		}
		ct_remove(t, idx);
	}
	if (reply_key) {
		if (reply_key->family != ok.family)
			return CT_REFUSED_INVALID;
		if (hint)
			rk = hint->reply;
		else
			key_from_pkt(reply_key, ok.proto, &rk);
		/* NAT picked a tuple a live flow already answers to. */
		rhash = hint ? hint->reply_hash : ct_hash(t, &rk);
		idx = index_find(t, &rk, rhash, &dir);
		if (idx != CT_NONE) {
			if (flow_live(&t->flows[idx], now))
				return CT_REFUSED_INVALID;
			ct_remove(t, idx);
		}
	} else {
		if (hint)
			rk = hint->reply;
		else
			reverse_key(&ok, &rk);
		rhash = hint ? hint->reply_hash : ct_hash(t, &rk);
	}

	need = 1;
	if (ok.family == 6 && (memcmp(rk.src, ok.dst, 16) || memcmp(rk.dst, ok.src, 16)))
		need = 2;	/* CT_F_NAT6: the reply addresses in an entry of their own */
	if (unlikely(t->free_count < need))
		ct_expire(t, now, FULL_REAP_BUDGET);
	while (unlikely(t->free_count < need)) {
		if (!early_drop(t, bucket_of(t, ohash), now)) {
			t->st.refused_full++;
			return CT_REFUSED_FULL;
		}
	}
	if (t->st.in_use == 0)
		t->wheel_pos = now;	/* empty wheel: nothing to walk up to now */
	/* The entry is written in place, not built on the stack and copied:
	 * the copy's wide loads would wait for the field stores before them
	 * to retire (no store forwarding across sizes). */
	idx = entry_alloc(t);
	nf = &t->flows[idx];
	entry_fill(nf, &ok, &rk, rule);
	/* (a SYN whose TCP header cannot be read: the entry goes back; when
	 * the table is also full, the refusal above counts it as full) */
	if (ok.proto == IPP_TCP && !ct_tcp_init(nf, p)) {
		entry_free(t, idx);
		t->st.invalid++;
		return CT_REFUSED_INVALID;
	}
	if (need == 2)
		entry_nat6(t, nf, &rk);
	count_packet(nf, CT_DIR_ORIG, p->len);
	nf->expire = now + timeout_of(t, nf);
	entry_link(t, idx, ohash, rhash);
	t->st.created++;
	*flow = idx;
	return CT_CREATED;
}

uint32_t ct_expire(struct ct_table *t, uint32_t now, uint32_t budget)
{
	uint32_t removed = 0, work = 0;

	if (t->st.in_use == 0) {
		t->wheel_pos = now;
		return 0;
	}
	if (unlikely((int32_t)(now - t->wheel_pos) < 0))
		return 0;	/* `now` went backwards: nothing can be due */
	while (work < budget) {
		uint32_t s = t->wheel_pos & (WHEEL_SLOTS - 1), idx = t->wheel[s];

		work++;
		if (idx == CT_NONE) {
			if ((int32_t)(t->wheel_pos - now) >= 0)
				break;
			t->wheel_pos++;
			continue;
		}
		wheel_unlink(t, idx);
		if (!flow_live(&t->flows[idx], now)) {
			flow_free(t, idx);
			t->st.expired++;
			removed++;
		} else {
			/* expire > now >= wheel_pos: lands in another list. */
			wheel_insert(t, idx);
		}
	}
	return removed;
}

/* ---- fragments ---- */

/* The identification of a fragment: IPv4 header id, or the IPv6
 * fragment header's (found again along the extension chain); and the
 * protocol by which its datagram's fragments go together, the same in
 * each: IPv4's, or the fragment header's next header, the first header
 * of the fragmentable part (RFC 8200 4.5), which for a first fragment
 * may be an options header before its upper layer. Where it has them,
 * where.part is the frame offset of the fragmentable part and
 * where.offset the fragment's place in it, in bytes. */
struct frag_where {
	uint32_t part, offset;
};

static int frag_id(const struct ct_pkt *p, uint32_t *id, uint8_t *proto, struct frag_where *where)
{
	const struct pkt_meta *m = p->meta;
	const uint8_t *f = p->frame;
	uint32_t off = m->l3_off;

	if (m->key.family == 4) {
		if (p->len < off + 20)
			return 0;
		*id = rd16(f + off + 4);
		*proto = f[off + 9];
		if (where) {
			where->part = off + (f[off] & 0x0fu) * 4;
			where->offset = (uint32_t)(rd16(f + off + 6) & 0x1fff) * 8;
		}
		return 1;
	}
	if (p->len < off + 40)
		return 0;
	uint8_t nh = f[off + 6];

	off += 40;
	for (int i = 0; i < 8; i++) {
		if (p->len < off + 8)
			return 0;
		if (nh == IPP_FRAGMENT) {
			*id = rd32(f + off + 4);
			*proto = f[off];
			if (where) {
				where->part = off + 8;
				where->offset = rd16(f + off + 2) & 0xfff8u;
			}
			return 1;
		}
		if (nh != IPP_HOPOPTS && nh != IPP_ROUTING && nh != IPP_DSTOPTS && nh != IPP_AH)
			return 0;
		uint32_t hlen = nh == IPP_AH ? ((uint32_t)f[off + 1] + 2) * 4 :
				((uint32_t)f[off + 1] + 1) * 8;

		nh = f[off];
		off += hlen;
	}
	return 0;
}

int ct_packet_frag_id(const struct ct_pkt *p, uint32_t *id, uint8_t *proto)
{
	return frag_id(p, id, proto, NULL);
}

static struct ct_frag *frag_set(struct ct_table *t, const struct pkt_key *k, uint32_t id,
				uint8_t proto)
{
	struct ct_key fk;

	struct pkt_key ids = *k;

	ids.sport = (uint16_t)id;
	ids.dport = (uint16_t)(id >> 16);
	key_from_pkt(&ids, proto, &fk);
	return &t->frags[(uint32_t)(((ct_hash(t, &fk) >> 32) * t->frag_sets) >> 32) * FRAG_WAYS];
}

static inline int frag_match(const struct ct_frag *e, const struct pkt_key *k, uint32_t id,
			     uint8_t proto)
{
	return e->used && e->id == id && e->dgram_proto == proto && e->family == k->family &&
	       memcmp(e->src, k->src, 16) == 0 && memcmp(e->dst, k->dst, 16) == 0;
}

void ct_frag_accept(struct ct_table *t, const struct ct_pkt *p, uint32_t flow, unsigned dir,
		    uint32_t rule, uint32_t now)
{
	const struct pkt_key *k = &p->meta->key;
	struct ct_frag *set, *e = NULL;
	struct frag_where where;
	uint32_t id, judged_end = 0;
	uint8_t dp;

	if (p->meta->fragment != 1 || !frag_id(p, &id, &dp, &where))
		return;
	/* an IPv6 first fragment's upper layer may come after options
	 * headers inside the fragmentable part: a later fragment is checked
	 * against where it really is (frag_lookup) */
	if (p->meta->l4_off >= where.part)
		judged_end = p->meta->l4_off - where.part + pkt_l4_judged_len(k->proto);
	set = frag_set(t, k, id, dp);
	for (unsigned i = 0; i < FRAG_WAYS && !e; i++)
		if (frag_match(&set[i], k, id, dp))
			e = &set[i];
	for (unsigned i = 0; i < FRAG_WAYS && !e; i++)
		if (!set[i].used || (int32_t)(now - set[i].expire) >= 0)
			e = &set[i];
	if (!e) {		/* all live: replace the one closest to expiry */
		e = &set[0];
		for (unsigned i = 1; i < FRAG_WAYS; i++)
			if ((int32_t)(set[i].expire - e->expire) < 0)
				e = &set[i];
		t->st.frag_evicted++;
	}
	memcpy(e->src, k->src, 16);
	memcpy(e->dst, k->dst, 16);
	{	/* the flow's ports as conntrack keys them (an echo's id) */
		struct ct_key ck;

		(void)key_of(p, &ck);
		e->sport = ck.sport;
		e->dport = ck.dport;
	}
	e->id = id;
	e->proto = k->proto;
	e->dgram_proto = dp;
	e->judged_end = (uint16_t)(judged_end < 0xffff ? judged_end : 0xffff);
	e->family = k->family;
	e->dir = (uint8_t)dir;
	e->flow = flow;
	e->rule = rule;
	e->expire = now + t->frag_timeout;
	e->used = 1;
}

void ct_frag_forget(struct ct_table *t, const struct ct_pkt *p)
{
	const struct pkt_key *k = &p->meta->key;
	struct ct_frag *set;
	uint32_t id;
	uint8_t dp;

	if (p->meta->fragment != 1 || !frag_id(p, &id, &dp, NULL))
		return;
	set = frag_set(t, k, id, dp);
	for (unsigned i = 0; i < FRAG_WAYS; i++)
		if (frag_match(&set[i], k, id, dp))
			set[i].used = 0;
}

/* The flow a fragment entry names is still the flow of its first
 * fragment: live, and not an entry reused since by another flow, even
 * one between the same two hosts (an evicted DNS query's slot taken by
 * the next query: its translation is not this datagram's). */
static int frag_flow_alive(const struct ct_table *t, const struct ct_frag *e, uint32_t now)
{
	const struct ct_flow *f = &t->flows[e->flow];
	struct ct_key fk;

	if ((f->flags & (CT_F_USED | CT_F_AUX)) != CT_F_USED || !flow_live(f, now))
		return 0;
	flow_key(t, f, e->dir, &fk);
	return fk.proto == e->proto && fk.sport == e->sport && fk.dport == e->dport &&
	       memcmp(fk.src, e->src, 16) == 0 && memcmp(fk.dst, e->dst, 16) == 0;
}

static void frag_lookup(struct ct_table *t, const struct ct_pkt *p, uint32_t now,
			struct ct_result *r)
{
	const struct pkt_key *k = &p->meta->key;
	struct frag_where where;
	struct ct_frag *set;
	uint32_t id;
	uint8_t dp;

	if (frag_id(p, &id, &dp, &where)) {
		set = frag_set(t, k, id, dp);
		for (unsigned i = 0; i < FRAG_WAYS; i++) {
			struct ct_frag *e = &set[i];

			if (!frag_match(e, k, id, dp) || (int32_t)(now - e->expire) >= 0)
				continue;
			/* RFC 1858 where the parser cannot tell: an IPv6
			 * fragment that starts inside its first's upper-layer
			 * header behind options headers */
			if (where.offset < e->judged_end) {
				r->kind = CT_FRAG_OVERLAP;
				r->state = RFW_STATE_INVALID;
				t->st.frag_overlap++;
				return;
			}
			if (e->flow == CT_NONE || frag_flow_alive(t, e, now)) {
				r->kind = CT_FRAG;
				r->flow = e->flow;
				r->dir = e->dir;
				r->rule = e->rule;
				r->state = RFW_STATE_ESTABLISHED;
				t->st.frag_hit++;
				return;
			}
		}
	}
	r->kind = CT_FRAG_ORPHAN;
	r->state = RFW_STATE_INVALID;
	t->st.frag_orphan++;
}

/* ---- lookup ---- */

/* A batch lookup's first two passes, per packet: the home bucket and
 * tag of hash h, the bucket prefetched; then the bucket's tag hits, the
 * first hit's flow prefetched (the part a packet touches, ct.h: the
 * compared, timer, counter and TCP fields that ct_update writes right
 * after, and for IPv6 the rest of the addresses). */
static inline void home_prefetch(const struct ct_table *t, uint64_t h, uint32_t *bkt,
				 uint32_t *tag)
{
	*bkt = bucket_of(t, h);
	*tag = tag_of(t, h);
	__builtin_prefetch(&t->buckets[*bkt]);
}

static inline uint32_t hits_prefetch(const struct ct_table *t, uint32_t b, uint32_t tag,
				     uint8_t proto, uint8_t family)
{
	const struct ct_bucket *bk = &t->buckets[b];
	uint32_t hits = bucket_match(bk, t->tag_mask, tag);

	if (hits)
		ct_flow_prefetch(&t->flows[(bk->slot[__builtin_ctz(hits)] & t->idx_mask) - 1],
				 proto, family);
	return hits;
}

/* ICMP errors, non-first fragments, packets conntrack cannot key: out
 * of line, so the per-packet path below stays small enough to inline. */
static __attribute__((noinline)) void lookup_other(struct ct_table *t, const struct ct_pkt *p,
						   enum key_kind kind, uint32_t now,
						   struct ct_result *r)
{
	if (kind == KEY_ICMP_ERR) {
		struct ct_key ik;
		uint32_t seq = 0, idx;
		unsigned dir = 0;

		memset(&ik, 0, sizeof(ik));
		if (key_of_icmp_error(p, &ik, &seq)) {
			idx = index_find(t, &ik, ct_hash(t, &ik), &dir);
			/* For TCP the quoted segment must be one its sender could
			 * have sent (as pf checks), so a forged error has to guess
			 * the window. */
			if (idx != CT_NONE && flow_live(&t->flows[idx], now) &&
			    (t->flows[idx].proto != IPP_TCP ||
			     ct_tcp_seq_plausible(&t->flows[idx], !dir, seq))) {
				r->kind = CT_RELATED;
				r->flow = idx;
				r->dir = (uint8_t)dir;
				r->rule = t->flows[idx].rule;
				r->state = RFW_STATE_RELATED;
				t->st.related++;
				return;
			}
		}
	} else if (kind == KEY_FRAG) {
		frag_lookup(t, p, now, r);
		return;
	}
	r->kind = CT_INVALID;
	r->state = RFW_STATE_INVALID;
	t->st.invalid++;
}

/* hits: the tag hits of the key's home bucket, found when its flow was
 * prefetched; usually one, the flow itself, so the bucket is not scanned
 * again. */
static inline void lookup_one(struct ct_table *t, const struct ct_pkt *p, const struct ct_key *k,
			      enum key_kind kind, uint32_t b, uint32_t tag, uint32_t hits,
			      uint32_t now, struct ct_result *r)
{
	unsigned dir = 0;
	uint32_t idx = CT_NONE;

	r->flow = CT_NONE;
	r->rule = 0;
	r->dir = CT_DIR_ORIG;
	r->flags = 0;
	if (unlikely(kind != KEY_START && kind != KEY_NOSTART)) {
		lookup_other(t, p, kind, now, r);
		return;
	}
	if (likely(hits)) {	/* the first hit, inline: nearly always the flow */
		uint32_t s = t->buckets[b].slot[__builtin_ctz(hits)];
		uint32_t c = (s & t->idx_mask) - 1;

		dir = (s >> t->idx_bits) & 1;
		if (likely(flow_match(t, &t->flows[c], dir, k)))
			idx = c;
		else
			idx = index_walk(t, k, b, tag, hits & (hits - 1), &dir);
	} else if (t->buckets[b].overflow) {
		idx = index_walk(t, k, b, tag, 0, &dir);
	}
	if (likely(idx != CT_NONE) && flow_live(&t->flows[idx], now)) {
		if (likely(!tcp_reusable(&t->flows[idx], k, kind))) {
			r->kind = CT_FOUND;
			r->flow = idx;
			r->dir = (uint8_t)dir;
			r->rule = t->flows[idx].rule;
			r->state = RFW_STATE_ESTABLISHED;
		} else if (reply_reopen_refused(&t->flows[idx], dir)) {
			lookup_other(t, p, KEY_BAD, now, r);
		} else {
			r->kind = CT_NEW;	/* over a closed connection */
			r->state = RFW_STATE_NEW;
		}
	} else if (kind == KEY_START) {
		r->kind = CT_NEW;
		r->state = RFW_STATE_NEW;
		if (idx == CT_NONE)
			r->flags = CT_RF_ABSENT;
	} else {
		lookup_other(t, p, KEY_BAD, now, r);
	}
}

/* track: also ct_update each packet of a flow right after finding it
 * (a constant in each caller, so each gets its own copy). */
static inline void lookup_batch(struct ct_table *t, const struct ct_pkt *pkts, uint32_t n,
				uint32_t now, struct ct_result *out, int track)
{
	struct ct_key keys[BATCH];
	uint32_t bkt[BATCH], tag[BATCH], hits[BATCH];
	uint8_t kind[BATCH];

	/* Three passes over the batch rather than one software pipeline
	 * with a fixed distance: measured here, the misses of a batch are
	 * bounded by how many lines the core keeps in flight (~12-16), not
	 * by when they are issued, and the passes cost fewer instructions. */
	for (uint32_t base = 0; base < n; base += BATCH) {
		uint32_t m = n - base < BATCH ? n - base : BATCH;

		/* Pass 1: keys and hashes, prefetch every home bucket. */
		for (uint32_t i = 0; i < m; i++) {
			kind[i] = (uint8_t)key_of(&pkts[base + i], &keys[i]);
			home_prefetch(t, ct_hash(t, &keys[i]), &bkt[i], &tag[i]);
		}
		/* Pass 2: the tag hits of each bucket, kept for pass 3 (so no
		 * bucket is scanned twice); prefetch the first hit's flow. */
		for (uint32_t i = 0; i < m; i++)
			hits[i] = hits_prefetch(t, bkt[i], tag[i], keys[i].proto, keys[i].family);
		/* Pass 3: compare and decide (and account). */
		for (uint32_t i = 0; i < m; i++) {
			struct ct_result *r = &out[base + i];

			lookup_one(t, &pkts[base + i], &keys[i], (enum key_kind)kind[i], bkt[i],
				   tag[i], hits[i], now, r);
			if (track && r->flow != CT_NONE) {	/* FOUND, RELATED or FRAG */
				if (!account(t, r->flow, r->dir, &pkts[base + i], now))
					r->flags = CT_RF_INVALID;
				else if (t->flows[r->flow].flags & CT_F_NAT)
					r->flags = CT_RF_NAT;
			}
		}
	}
}

void ct_lookup_batch(struct ct_table *t, const struct ct_pkt *pkts, uint32_t n, uint32_t now,
		     struct ct_result *out)
{
	lookup_batch(t, pkts, n, now, out, 0);
}

void ct_track_batch(struct ct_table *t, const struct ct_pkt *pkts, uint32_t n, uint32_t now,
		    struct ct_result *out)
{
	lookup_batch(t, pkts, n, now, out, 1);
}

/* ---- the flow cache's hit path ---- */

const struct ct_flow *ct_flow_entries(const struct ct_table *t)
{
	return t->flows;
}

void ct_hint_batch(struct ct_table *t, struct ct_hint *h, uint32_t n, uint32_t now)
{
	for (uint32_t i = 0; i < n; i++) {
		struct ct_hint *x = &h[i];
		const struct pkt_key *k = &x->pkt.meta->key;
		const struct ct_flow *f;
		unsigned d = x->dir & 1, o = d ^ 1;
		uint8_t ok = CT_HINT_OK;

		x->result = CT_HINT_MISS;
		if (unlikely(x->flow >= t->max_flows))	/* the rest is the caller's promise */
			continue;
		f = &t->flows[x->flow];
		if ((f->flags & (CT_F_USED | CT_F_AUX)) != CT_F_USED || f->rule != x->rule ||
		    !flow_live(f, now) || !flow_match(t, f, d, k))
			continue;
		if (f->flags & CT_F_NAT) {
			if (f->family != 4)
				continue;
			/* leaves as the reverse of the other direction */
			memcpy(x->wire.src, f->addr + 8 * o + 4, 4);
			memcpy(x->wire.dst, f->addr + 8 * o, 4);
			x->wire.sport = f->port[2 * o + 1];
			x->wire.dport = f->port[2 * o];
			ok = CT_HINT_OK_NAT;
		}
		x->result = account_known(t, x->flow, d, &x->pkt, now) ? ok : CT_HINT_INVALID;
	}
}

/* An express frame's TCP header for ct_tcp_track (pkt_fast_frame's
 * offsets; it reads nothing else of the meta). */
static const struct pkt_meta express_tcp4 = {
	.key = {.family = 4, .proto = IPP_TCP},
	.l3_off = 14,
	.l4_off = 34,
};

_Static_assert(offsetof(struct ct_flow, family) == offsetof(struct ct_flow, proto) + 1 &&
		       offsetof(struct ct_flow, flags) == offsetof(struct ct_flow, proto) + 2,
	       "ct_hint4_batch reads proto, family and flags as one word");

void ct_hint4_batch(struct ct_table *t, struct ct_hint4 *h, uint32_t n, uint32_t now)
{
	for (uint32_t i = 0; i < n; i++) {
		struct ct_hint4 *x = &h[i];
		const uint8_t *fr = x->frame;
		struct ct_pkt p;
		const struct ct_flow *f;
		unsigned d = x->dir & 1;
		uint32_t fs, fd, fp, ks, kd, kp, fk, want;
		uint16_t kports[2];
		uint8_t ok = CT_HINT_OK, kind[4];

		x->result = CT_HINT_MISS;
		if (unlikely(x->flow >= t->max_flows))	/* the rest is the caller's promise */
			continue;
		f = &t->flows[x->flow];
		memcpy(&fs, f->addr + 8 * d, 4);
		memcpy(&fd, f->addr + 8 * d + 4, 4);
		memcpy(&fp, &f->port[2 * d], 4);
		memcpy(&ks, fr + 26, 4);
		memcpy(&kd, fr + 30, 4);
		kports[0] = (uint16_t)(fr[34] << 8 | fr[35]);
		kports[1] = (uint16_t)(fr[36] << 8 | fr[37]);
		memcpy(&kp, kports, 4);
		/* proto, family and the flags' USED and AUX bits: one word */
		memcpy(&fk, &f->proto, 4);
		kind[0] = 0xff, kind[1] = 0xff, kind[2] = CT_F_USED | CT_F_AUX, kind[3] = 0;
		memcpy(&want, kind, 4);
		fk &= want;
		kind[0] = fr[23], kind[1] = 4, kind[2] = CT_F_USED;
		memcpy(&want, kind, 4);
		if (((fk ^ want) | (fs ^ ks) | (fd ^ kd) | (fp ^ kp) | (f->rule ^ x->rule)) ||
		    !flow_live(f, now))
			continue;
		if (f->flags & CT_F_NAT)
			ok = CT_HINT_OK_NAT;	/* the wire: ct_flow_wire4 */
		p = (struct ct_pkt){&express_tcp4, x->frame, x->len};
		x->result = account_known(t, x->flow, d, &p, now) ? ok : CT_HINT_INVALID;
	}
}

/* ---- the express path's flow-cache misses ---- */

/* An express frame's ports as the 4 bytes ct_key and ct_flow hold them
 * (sport, dport, each in host order), from one load of the header's. */
static inline uint32_t frame4_ports(const uint8_t *fr)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t pw;

	memcpy(&pw, fr + 34, 4);
	pw = __builtin_bswap32(pw);	/* sport << 16 | dport */
	return pw >> 16 | pw << 16;
#else
	uint16_t ports[2] = {(uint16_t)(fr[34] << 8 | fr[35]), (uint16_t)(fr[36] << 8 | fr[37])};
	uint32_t kp;

	memcpy(&kp, ports, 4);
	return kp;
#endif
}

/* The ct_key of an express frame (ct_hint4's promise), as five words
 * built in registers (see key_tail): IPv4 addresses in the first 4 bytes
 * of their 16, ports in host order. */
static inline void frame4_words(const uint8_t *fr, uint64_t w[5])
{
	_Static_assert(offsetof(struct ct_key, sport) == 32 && offsetof(struct ct_key, family) == 36 &&
		       offsetof(struct ct_key, proto) == 37, "the tail is the key's last word");
	uint32_t s4, d4;

	/* Each word whole, in a register. memcpy of the 4 address bytes
	 * into a zeroed word made the compiler store 4 bytes into its stack
	 * slot and load 8 back for the hash: a load no store can forward,
	 * which waited for both stores to retire, twice a packet (measured:
	 * ctbench's lookups in flow order 53-57 ns a packet, against 36-41
	 * with the words built here). */
	memcpy(&s4, fr + 26, 4);
	memcpy(&d4, fr + 30, 4);
	w[1] = w[3] = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	w[0] = s4;
	w[2] = d4;
	/* the ports word, then family and proto: shifts, not byte stores */
	w[4] = frame4_ports(fr) | (uint64_t)4 << 32 | (uint64_t)fr[23] << 40;
#else
	w[0] = (uint64_t)s4 << 32;
	w[2] = (uint64_t)d4 << 32;
	w[4] = key_tail((uint16_t)(fr[34] << 8 | fr[35]), (uint16_t)(fr[36] << 8 | fr[37]), 4, fr[23]);
#endif
}

_Static_assert(offsetof(struct ct_flow, family) == offsetof(struct ct_flow, proto) + 1,
	       "flow_match4 reads proto and family as one word");

/* Does flow f hold the frame's tuple in direction d? flow_match for an
 * express frame: one compare each for the addresses, the ports and the
 * protocol with the family. */
static inline int flow_match4(const struct ct_flow *f, unsigned d, const uint8_t *fr)
{
	uint32_t fs, fd, fp, ks, kd;
	uint16_t fk, kk;

	memcpy(&fs, f->addr + 8 * d, 4);
	memcpy(&fd, f->addr + 8 * d + 4, 4);
	memcpy(&fp, &f->port[2 * d], 4);
	memcpy(&fk, &f->proto, 2);
	memcpy(&ks, fr + 26, 4);
	memcpy(&kd, fr + 30, 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	kk = (uint16_t)(fr[23] | 4 << 8);
#else
	kk = (uint16_t)(fr[23] << 8 | 4);
#endif
	return ((fs ^ ks) | (fd ^ kd) | (fp ^ frame4_ports(fr)) | (uint32_t)(fk ^ kk)) == 0;
}

void ct_count_invalid(struct ct_table *t, uint32_t n)
{
	t->st.invalid += n;
}

void ct_find4_batch(struct ct_table *t, struct ct_hint4 *h, uint32_t n, uint32_t now)
{
	uint32_t bkt[BATCH], tag[BATCH], hits[BATCH];

	/* lookup_batch's three passes, keyed from the frame */
	for (uint32_t base = 0; base < n; base += BATCH) {
		uint32_t m = n - base < BATCH ? n - base : BATCH;
		struct ct_hint4 *x = h + base;

		for (uint32_t i = 0; i < m; i++) {
			uint64_t w[5];

			frame4_words(x[i].frame, w);
			home_prefetch(t, hash_words(t, w), &bkt[i], &tag[i]);
		}
		for (uint32_t i = 0; i < m; i++)
			hits[i] = hits_prefetch(t, bkt[i], tag[i], x[i].frame[23], 4);
		for (uint32_t i = 0; i < m; i++) {
			const uint8_t *fr = x[i].frame;
			uint32_t idx = CT_NONE;
			unsigned d = 0;
			struct ct_pkt p;

			x[i].result = CT_HINT_MISS;
			if (likely(hits[i])) {	/* the first hit: nearly always the flow */
				uint32_t s = t->buckets[bkt[i]].slot[__builtin_ctz(hits[i])];
				uint32_t c = (s & t->idx_mask) - 1;

				d = (s >> t->idx_bits) & 1;
				if (likely(flow_match4(&t->flows[c], d, fr)))
					idx = c;
			}
			if (idx == CT_NONE && (hits[i] || t->buckets[bkt[i]].overflow)) {
				struct ct_key k;
				uint64_t w[5];

				frame4_words(fr, w);
				key_store(&k, w);
				idx = index_walk(t, &k, bkt[i], tag[i], hits[i], &d);
			}
			if (idx == CT_NONE || !flow_live(&t->flows[idx], now)) {
				/* lookup_one's answers for no live flow: UDP
				 * starts one (ABSENT when no entry holds the
				 * tuple), TCP without SYN is invalid. Answered
				 * here, so that a stray segment (an ACK flood)
				 * is not looked up twice. */
				if (fr[23] == IPP_UDP)
					x[i].result = idx == CT_NONE ? CT_HINT_NEW : CT_HINT_NEW_EXPIRED;
				else
					x[i].result = CT_HINT_NOFLOW;
				continue;
			}
			x[i].flow = idx;
			x[i].dir = (uint8_t)d;
			x[i].rule = t->flows[idx].rule;
			p = (struct ct_pkt){&express_tcp4, fr, x[i].len};
			if (!account_known(t, idx, d, &p, now))
				x[i].result = CT_HINT_INVALID;
			else
				x[i].result = t->flows[idx].flags & CT_F_NAT ? CT_HINT_OK_NAT : CT_HINT_OK;
		}
	}
}

/* ---- listing ---- */

static void key_to_pkt(const struct ct_key *k, struct pkt_key *pk)
{
	memset(pk, 0, sizeof(*pk));
	memcpy(pk->src, k->src, 16);
	memcpy(pk->dst, k->dst, 16);
	pk->sport = k->sport;
	pk->dport = k->dport;
	pk->proto = k->proto;
	pk->family = k->family;
	pk->has_ports = k->proto == IPP_TCP || k->proto == IPP_UDP || k->proto == IPP_SCTP;
}

int ct_flow_nat(const struct ct_table *t, uint32_t flow)
{
	return flow < t->max_flows && (t->flows[flow].flags & CT_F_NAT);
}

/* Straight from the entry (what flow_key and key_to_pkt would make),
 * addresses stored at their own width: the pipeline reads them back
 * right away (flow_wire), and reads wider than the stores before them
 * would wait for those to retire (see key_tail). */
void ct_flow_tuple(const struct ct_table *t, uint32_t flow, unsigned dir, struct pkt_key *k)
{
	const struct ct_flow *f = &t->flows[flow];

	memset(k, 0, sizeof(*k));
	flow_addrs(t, f, dir, k->src, k->dst);
	k->sport = f->port[2 * dir];
	k->dport = f->port[2 * dir + 1];
	k->proto = f->proto;
	k->family = f->family;
	k->has_ports = f->proto == IPP_TCP || f->proto == IPP_UDP || f->proto == IPP_SCTP;
}

int ct_flow_get(const struct ct_table *t, uint32_t flow, struct ct_flow_info *info)
{
	const struct ct_flow *f;
	struct ct_key k;

	if (flow >= t->max_flows)
		return -1;
	f = &t->flows[flow];
	if ((f->flags & (CT_F_USED | CT_F_AUX)) != CT_F_USED)
		return -1;
	memset(info, 0, sizeof(*info));
	info->flow = flow;
	info->rule = f->rule;
	flow_key(t, f, CT_DIR_ORIG, &k);
	key_to_pkt(&k, &info->orig);
	flow_key(t, f, CT_DIR_REPLY, &k);
	key_to_pkt(&k, &info->reply);
	info->tcp_state = (uint8_t)(f->proto == IPP_TCP ? ct_tcp_flow_state(f) : CT_TCP_NONE);
	info->reply_seen = !!(f->flags & CT_F_REPLY_SEEN);
	info->expire = f->expire;
	for (unsigned d = 0; d < 2; d++) {
		info->packets[d] = (uint64_t)f->pkts_hi[d] << 32 | f->pkts[d];
		info->bytes[d] = f->bytes[d];
	}
	return 0;
}

void ct_foreach(const struct ct_table *t,
		int (*fn)(const struct ct_flow_info *info, void *arg), void *arg)
{
	struct ct_flow_info info;

	for (uint32_t i = 0; i < t->max_flows; i++)
		if (ct_flow_get(t, i, &info) == 0 && fn(&info, arg))
			return;
}

/* ---- Flows over a restart ---- */

int ct_flow_save(const struct ct_table *t, uint32_t flow, uint32_t now, struct ct_saved_flow *s)
{
	const struct ct_flow *f;
	struct ct_key ok, rk;

	if (flow >= t->max_flows)
		return -1;
	f = &t->flows[flow];
	if ((f->flags & (CT_F_USED | CT_F_AUX)) != CT_F_USED || !flow_live(f, now))
		return -1;
	flow_key(t, f, CT_DIR_ORIG, &ok);
	flow_key(t, f, CT_DIR_REPLY, &rk);
	memset(s, 0, sizeof(*s));
	memcpy(s->orig_src, ok.src, 16);
	memcpy(s->orig_dst, ok.dst, 16);
	memcpy(s->reply_src, rk.src, 16);
	memcpy(s->reply_dst, rk.dst, 16);
	s->orig_sport = ok.sport;
	s->orig_dport = ok.dport;
	s->reply_sport = rk.sport;
	s->reply_dport = rk.dport;
	s->proto = f->proto;
	s->family = f->family;
	s->reply_seen = !!(f->flags & CT_F_REPLY_SEEN);
	s->rst = !!(f->flags & CT_F_RST);
	s->wscale = f->wscale;
	for (unsigned d = 0; d < 2; d++) {
		s->tstate[d] = f->tstate[d];
		s->max_win[d] = f->max_win[d];
		s->seqlo[d] = f->seqlo[d];
		s->seqhi[d] = f->seqhi[d];
		s->pkts[d] = (uint64_t)f->pkts_hi[d] << 32 | f->pkts[d];
		s->bytes[d] = f->bytes[d];
	}
	s->ttl = f->expire - now;
	s->rule = f->rule;
	return 0;
}

/* A saved tuple as a key (IPv4: the first 4 address bytes, the rest
 * zero whatever the file holds). */
static void saved_key(const uint8_t *src, const uint8_t *dst, uint16_t sport, uint16_t dport,
		      uint8_t family, uint8_t proto, struct ct_key *k)
{
	unsigned alen = family == 4 ? 4 : 16;

	memset(k, 0, sizeof(*k));
	memcpy(k->src, src, alen);
	memcpy(k->dst, dst, alen);
	k->sport = sport;
	k->dport = dport;
	k->family = family;
	k->proto = proto;
}

/* A live flow on a tuple refuses the restore; a dead one goes. */
static int tuple_taken(struct ct_table *t, const struct ct_key *k, uint64_t h, uint32_t now)
{
	unsigned dir;
	uint32_t idx = index_find(t, k, h, &dir);

	if (idx == CT_NONE)
		return 0;
	if (flow_live(&t->flows[idx], now))
		return 1;
	ct_remove(t, idx);
	return 0;
}

void ct_flow_resync(struct ct_table *t, uint32_t flow)
{
	struct ct_flow *f;

	if (flow >= t->max_flows)
		return;
	f = &t->flows[flow];
	/* past the handshake: before it the SYN and SYN+ACK carry their own */
	if ((f->flags & (CT_F_USED | CT_F_AUX)) == CT_F_USED && f->proto == IPP_TCP &&
	    f->tstate[CT_DIR_REPLY] != CT_PEER_NONE)
		f->flags |= CT_F_RESYNC_ORIG | CT_F_RESYNC_REPLY;
}

int ct_flow_restore(struct ct_table *t, const struct ct_saved_flow *s, uint32_t rule,
		    uint32_t now, uint32_t *flow)
{
	struct ct_key ok, rk;
	struct ct_flow *nf;
	uint32_t idx, longest = 0, ttl = s->ttl;
	uint64_t ohash, rhash;
	unsigned need = 1;

	*flow = CT_NONE;
	if ((s->family != 4 && s->family != 6) || s->tstate[0] > CT_PEER_TIME_WAIT ||
	    s->tstate[1] > CT_PEER_TIME_WAIT || (s->proto != IPP_TCP && (s->tstate[0] | s->tstate[1])))
		return CT_RESTORE_BAD;
	if (ttl == 0)
		return CT_RESTORE_EXPIRED;
	for (unsigned i = 0; i < RFW_TIMEOUT_COUNT; i++)
		if (t->timeout[i] > longest)
			longest = t->timeout[i];
	if (ttl > longest)
		ttl = longest;
	saved_key(s->orig_src, s->orig_dst, s->orig_sport, s->orig_dport, s->family, s->proto, &ok);
	saved_key(s->reply_src, s->reply_dst, s->reply_sport, s->reply_dport, s->family, s->proto,
		  &rk);
	ohash = ct_hash(t, &ok);
	rhash = ct_hash(t, &rk);
	if (tuple_taken(t, &ok, ohash, now) || tuple_taken(t, &rk, rhash, now))
		return CT_RESTORE_DUP;
	if (ok.family == 6 && (memcmp(rk.src, ok.dst, 16) || memcmp(rk.dst, ok.src, 16)))
		need = 2;
	if (t->free_count < need) {
		t->st.refused_full++;
		return CT_RESTORE_FULL;
	}
	if (t->st.in_use == 0)
		t->wheel_pos = now;
	idx = entry_alloc(t);
	nf = &t->flows[idx];
	entry_fill(nf, &ok, &rk, rule);
	if (need == 2)
		entry_nat6(t, nf, &rk);
	if (s->reply_seen)
		nf->flags |= CT_F_REPLY_SEEN;
	if (s->rst)
		nf->flags |= CT_F_RST;
	nf->wscale = s->wscale;
	for (unsigned d = 0; d < 2; d++) {
		nf->tstate[d] = s->tstate[d];
		nf->max_win[d] = s->max_win[d];
		nf->seqlo[d] = s->seqlo[d];
		nf->seqhi[d] = s->seqhi[d];
		nf->pkts[d] = (uint32_t)s->pkts[d];
		nf->pkts_hi[d] = (uint8_t)(s->pkts[d] >> 32);
		nf->bytes[d] = s->bytes[d];
	}
	nf->expire = now + ttl;
	entry_link(t, idx, ohash, rhash);
	*flow = idx;
	return CT_RESTORED;
}
