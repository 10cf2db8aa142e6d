/* NAT allocator and key mapping (see nat.h for the strategies). A slot is
 * address index * ports + port index; a port index i stands for port
 * port_first + i * port_stride, so the worker partition is built into the
 * numbering and no other worker's port is ever representable. */
#include "nat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { IPP_ICMP = 1, IPP_TCP = 6, IPP_UDP = 17, IPP_ICMPV6 = 58, IPP_SCTP = 132 };

static int is_echo_request(const struct pkt_key *k)
{
	return (k->proto == IPP_ICMP && k->icmp_type == 8) ||
	       (k->proto == IPP_ICMPV6 && k->icmp_type == 128);
}

/* Does the flow take a port (or echo id) from the pool? */
static int uses_port(const struct pkt_key *k)
{
	if (k->proto == IPP_TCP || k->proto == IPP_UDP || k->proto == IPP_SCTP)
		return k->has_ports;
	return is_echo_request(k);
}

static unsigned addr_len(uint8_t family)
{
	return family == 4 ? 4 : 16;
}

int nat_pool_config_from_rule(struct nat_pool_config *c,
			      const struct rfw_nat_rule *r,
			      const uint8_t *masq_addr, uint16_t worker_id,
			      uint16_t worker_count)
{
	memset(c, 0, sizeof(*c));
	if ((r->family != 4 && r->family != 6) || worker_id >= worker_count)
		return -1;
	c->family = r->family;
	c->strategy = NAT_PARTITION;
	c->worker_id = worker_id;
	c->worker_count = worker_count;
	c->port_lo = r->port_lo;
	c->port_hi = r->port_hi;
	if (!c->port_lo && !c->port_hi) {
		c->port_lo = NAT_DEFAULT_PORT_LO;
		c->port_hi = NAT_DEFAULT_PORT_HI;
	}
	if (r->kind == RFW_NAT_SNAT) {
		memcpy(c->addr_lo, r->addr_lo, 16);
		memcpy(c->addr_hi, r->addr_hi, 16);
	} else if (r->kind == RFW_NAT_MASQUERADE && masq_addr) {
		memset(c->addr_lo, 0, 16);
		memcpy(c->addr_lo, masq_addr, addr_len(r->family));
		memcpy(c->addr_hi, c->addr_lo, 16);
	} else {
		return -1;
	}
	return 0;
}

/* hi - lo + 1 addresses, capped; 0 when hi < lo. */
static uint32_t range_count(const uint8_t *lo, const uint8_t *hi, unsigned n,
			    uint8_t *truncated)
{
	unsigned __int128 a = 0, b = 0;

	/* An IPv6 range can hold 2^128 addresses; only its size matters. */
	for (unsigned i = 0; i < n; i++) {
		a = a << 8 | lo[i];
		b = b << 8 | hi[i];
	}
	*truncated = 0;
	if (b < a)
		return 0;
	if (b - a >= NAT_POOL_MAX_ADDRS) {
		*truncated = 1;
		return NAT_POOL_MAX_ADDRS;
	}
	return (uint32_t)(b - a) + 1;
}

static uint64_t mix_start(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int nat_pool_init(struct nat_pool *p, const struct nat_pool_config *c)
{
	uint32_t range;

	memset(p, 0, sizeof(*p));
	if ((c->family != 4 && c->family != 6) || !c->worker_count ||
	    c->worker_id >= c->worker_count || c->port_hi < c->port_lo ||
	    (c->strategy == NAT_STEER && !c->queue_of) ||
	    c->strategy > NAT_STEER)
		goto inval;
	range = (uint32_t)c->port_hi - c->port_lo + 1;
	if (c->worker_id >= range)
		goto inval;	/* more workers than ports: this one has none */
	p->family = c->family;
	p->strategy = c->strategy;
	p->addr_count = range_count(c->addr_lo, c->addr_hi, addr_len(c->family),
				    &p->truncated);
	if (!p->addr_count)
		goto inval;
	p->ports = (range - c->worker_id + c->worker_count - 1) / c->worker_count;
	p->words = (p->ports + 63) / 64;
	p->capacity = p->addr_count * p->ports;
	p->port_first = (uint16_t)(c->port_lo + c->worker_id);
	p->port_stride = c->worker_count;
	memcpy(p->base, c->addr_lo, 16);
	p->steer_tries = c->steer_tries ? c->steer_tries : NAT_STEER_TRIES;
	p->queue = c->queue;
	p->queue_of = c->queue_of;
	p->queue_ctx = c->queue_ctx;

	p->used = calloc((size_t)p->addr_count * p->words, sizeof(*p->used));
	p->free_count = calloc(p->addr_count, sizeof(*p->free_count));
	p->cursor = calloc(p->addr_count, sizeof(*p->cursor));
	if (!p->used || !p->free_count || !p->cursor) {
		nat_pool_free(p);
		errno = ENOMEM;
		return -1;
	}
	for (uint32_t a = 0; a < p->addr_count; a++) {
		/* Bits past the last port are "taken" so a scan never
		 * returns them. */
		if (p->ports % 64)
			p->used[(size_t)a * p->words + p->words - 1] =
				~0ull << (p->ports % 64);
		p->free_count[a] = p->ports;
		if (c->start_seed)	/* splitmix64's finalizer of (seed, address) */
			p->cursor[a] = (uint32_t)(mix_start(c->start_seed + a) % p->ports);
	}
	return 0;
inval:
	errno = EINVAL;
	return -1;
}

void nat_pool_free(struct nat_pool *p)
{
	free(p->used);
	free(p->free_count);
	free(p->cursor);
	p->used = NULL;
	p->free_count = p->cursor = NULL;
	p->capacity = 0;
}

static void addr_at(const struct nat_pool *p, uint32_t index, uint8_t *out)
{
	unsigned n = addr_len(p->family);
	uint32_t carry = index;

	if (n == 4) {	/* one 32-bit add; the 16 bytes in one store, as they
			 * are read back right after (nat_reply_key) */
		uint32_t v = ((uint32_t)p->base[0] << 24 | (uint32_t)p->base[1] << 16 |
			      (uint32_t)p->base[2] << 8 | p->base[3]) + index;
		uint8_t a[16] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8),
				 (uint8_t)v};

		memcpy(out, a, 16);
		return;
	}
	memset(out, 0, 16);
	memcpy(out, p->base, n);
	/* base + index, big-endian, carry through every byte. */
	for (int i = (int)n - 1; i >= 0 && carry; i--) {
		carry += out[i & 15];
		out[i & 15] = (uint8_t)carry;
		carry >>= 8;
	}
}

static inline uint16_t port_of(const struct nat_pool *p, uint32_t idx)
{
	return (uint16_t)(p->port_first + idx * p->port_stride);
}

/* First free port index at or after `from` in address a, wrapping;
 * the caller knows there is one (free_count[a] > 0). */
static uint32_t next_free(const struct nat_pool *p, uint32_t a, uint32_t from)
{
	const uint64_t *w = p->used + (size_t)a * p->words;
	uint32_t i = from / 64;
	uint64_t avail = ~w[i] & (~0ull << (from % 64));

	for (uint32_t n = 0; !avail && n < p->words; n++) {
		i = i + 1 == p->words ? 0 : i + 1;
		avail = ~w[i];
	}
	return i * 64 + (uint32_t)__builtin_ctzll(avail);
}

/* FNV-1a over the source address: the "paired" pool address. */
static uint32_t src_hash(const struct pkt_key *k)
{
	uint32_t h = 2166136261u;

	for (unsigned i = 0; i < addr_len(k->family); i++)
		h = (h ^ k->src[i]) * 16777619u;
	return h;
}

static uint32_t pick_addr(const struct nat_pool *p, const struct pkt_key *k)
{
	return p->addr_count == 1 ? 0 : src_hash(k) % p->addr_count;
}

/* NAT_STEER: the reply to port index idx lands on this worker's queue
 * (reply's dst address already set; counted when it does). */
static int steers_home(struct nat_pool *p, struct pkt_key *reply, uint32_t idx, int echo)
{
	reply->dport = port_of(p, idx);
	if (echo)
		reply->sport = reply->dport;
	if (p->queue_of(reply, p->queue_ctx) != p->queue)
		return 0;
	p->stats.steered++;
	return 1;
}

/* Choose a port index in address a for a reply key whose dst address is
 * already set; steering tries the free ports from the cursor on. */
static uint32_t choose(struct nat_pool *p, uint32_t a, struct pkt_key *reply,
		       int echo, uint8_t *remote)
{
	uint32_t first = next_free(p, a, p->cursor[a]), idx = first;
	uint32_t tries = p->steer_tries;

	*remote = 0;
	if (p->strategy != NAT_STEER)
		return first;
	if (tries > p->free_count[a])
		tries = p->free_count[a];
	for (uint32_t t = 0; t < tries; t++) {
		if (steers_home(p, reply, idx, echo))
			return idx;
		if (t + 1 < tries)
			idx = next_free(p, a, idx + 1 == p->ports ? 0 : idx + 1);
	}
	*remote = 1;
	p->stats.remote++;
	return first;
}

static int taken_elsewhere(const struct nat_pool *p, uint32_t a, uint32_t idx)
{
	uint8_t addr[16];

	addr_at(p, a, addr);
	return p->elsewhere(p, addr, port_of(p, idx), p->elsewhere_ctx);
}

/* choose() for a shared pool whose first pick another pool holds: the
 * first free pair, from address a on, that no other pool holds (steered
 * when one of the first steer_tries such does); NAT_SLOT_NONE when every
 * free pair is held elsewhere. Rare (pools that overlap), so plain. */
static uint32_t choose_shared(struct nat_pool *p, uint32_t *a_io, struct pkt_key *reply,
			      int echo, uint8_t *remote)
{
	uint32_t a = *a_io, first = NAT_SLOT_NONE, first_a = 0, tries = 0;

	for (uint32_t n = 0; n < p->addr_count; n++, a = a + 1 == p->addr_count ? 0 : a + 1) {
		uint32_t idx;

		if (!p->free_count[a])
			continue;
		idx = next_free(p, a, p->cursor[a]);
		for (uint32_t k = 0; k < p->free_count[a]; k++) {
			if (!taken_elsewhere(p, a, idx)) {
				if (p->strategy != NAT_STEER) {
					*a_io = a;
					return idx;
				}
				if (first == NAT_SLOT_NONE) {
					first = idx;
					first_a = a;
				}
				addr_at(p, a, reply->dst);
				if (steers_home(p, reply, idx, echo)) {
					*a_io = a;
					return idx;
				}
				if (++tries >= p->steer_tries)
					goto fallback;
			}
			idx = next_free(p, a, idx + 1 == p->ports ? 0 : idx + 1);
		}
	}
fallback:
	if (first != NAT_SLOT_NONE) {
		*remote = 1;
		p->stats.remote++;
		*a_io = first_a;
	}
	return first;
}

int nat_pools_overlap(const struct nat_pool_config *a, const struct nat_pool_config *b)
{
	return a->family == b->family && a->port_lo <= b->port_hi && b->port_lo <= a->port_hi &&
	       memcmp(a->addr_lo, b->addr_hi, 16) <= 0 && memcmp(b->addr_lo, a->addr_hi, 16) <= 0;
}

void nat_pool_share(struct nat_pool *p, nat_elsewhere_fn elsewhere, void *ctx)
{
	p->elsewhere = elsewhere;
	p->elsewhere_ctx = ctx;
	p->shared = 1;
}

int nat_slot_in_use(const struct nat_pool *p, uint32_t slot)
{
	uint32_t idx;

	if (slot >= p->capacity)
		return 0;
	idx = slot % p->ports;
	return (int)(p->used[(size_t)(slot / p->ports) * p->words + idx / 64] >> (idx % 64) & 1);
}

void nat_reply_key(const struct pkt_key *w, struct pkt_key *r)
{
	*r = *w;
	memcpy(r->src, w->dst, 16);
	memcpy(r->dst, w->src, 16);
	r->sport = w->dport;
	r->dport = w->sport;
	r->in_if = w->out_if;
	r->out_if = w->in_if;
	r->tcp_flags = 0;
	r->ct_state = 0;
	if (is_echo_request(w))
		r->icmp_type = w->proto == IPP_ICMP ? 0 : 129;
}

void nat_dnat_key(const struct rfw_nat_rule *rule, const struct pkt_key *orig,
		  struct pkt_key *wire)
{
	*wire = *orig;
	memset(wire->dst, 0, 16);
	memcpy(wire->dst, rule->addr_lo, addr_len(orig->family));
	if (rule->port_lo && orig->has_ports)	/* TCP, UDP, SCTP */
		wire->dport = rule->port_lo;
}

int nat_translate_key(struct nat_pool *p, const struct rfw_nat_rule *rule,
		      const struct pkt_key *orig, struct nat_result *out)
{
	uint32_t a, idx;
	int echo;

	out->slot = NAT_SLOT_NONE;
	out->remote = 0;
	if (rule->kind == RFW_NAT_DNAT) {
		if (orig->family != rule->family)
			return -1;
		nat_dnat_key(rule, orig, &out->wire);
		nat_reply_key(&out->wire, &out->reply);
		return 0;
	}
	if (orig->family != p->family) {
		p->stats.refused++;
		return -1;
	}
	out->wire = *orig;
	a = pick_addr(p, orig);
	if (!uses_port(orig)) {
		addr_at(p, a, out->wire.src);
		nat_reply_key(&out->wire, &out->reply);
		return 0;
	}
	if (__builtin_expect(p->stats.in_use >= p->capacity, 0)) {
		p->stats.failures++;
		return -1;
	}
	/* Paired address first, then the next ones with room: at least one
	 * has a free port, so this ends within addr_count steps. */
	while (!p->free_count[a])
		a = a + 1 == p->addr_count ? 0 : a + 1;
	addr_at(p, a, out->wire.src);
	echo = is_echo_request(orig);
	if (p->strategy == NAT_STEER)	/* steering hashes the reply's tuple */
		nat_reply_key(&out->wire, &out->reply);
	idx = choose(p, a, &out->reply, echo, &out->remote);
	if (__builtin_expect(p->shared, 0) && taken_elsewhere(p, a, idx)) {
		if (p->strategy == NAT_STEER) {	/* choose() counted that pick */
			if (out->remote)
				p->stats.remote--;
			else
				p->stats.steered--;
		}
		out->remote = 0;
		idx = choose_shared(p, &a, &out->reply, echo, &out->remote);
		if (idx == NAT_SLOT_NONE) {
			p->stats.failures++;
			return -1;
		}
		addr_at(p, a, out->wire.src);
	}

	p->used[(size_t)a * p->words + idx / 64] |= 1ull << (idx % 64);
	p->free_count[a]--;
	p->cursor[a] = idx + 1 == p->ports ? 0 : idx + 1;
	p->stats.allocs++;
	p->stats.in_use++;

	out->wire.sport = port_of(p, idx);
	if (echo)
		out->wire.dport = out->wire.sport;
	nat_reply_key(&out->wire, &out->reply);
	out->slot = a * p->ports + idx;
	return 0;
}

void nat_release(struct nat_pool *p, uint32_t slot)
{
	uint32_t a, idx;
	uint64_t *w, bit;

	if (slot >= p->capacity) {
		if (slot != NAT_SLOT_NONE)
			p->stats.bad_frees++;
		return;
	}
	a = slot / p->ports;
	idx = slot % p->ports;
	w = &p->used[(size_t)a * p->words + idx / 64];
	bit = 1ull << (idx % 64);
	if (!(*w & bit)) {
		p->stats.bad_frees++;
		return;
	}
	*w &= ~bit;
	p->free_count[a]++;
	p->stats.frees++;
	p->stats.in_use--;
}

int nat_claim(struct nat_pool *p, uint32_t slot)
{
	uint32_t a, idx;
	uint64_t *w, bit;

	if (slot >= p->capacity)
		return -1;
	a = slot / p->ports;
	idx = slot % p->ports;
	w = &p->used[(size_t)a * p->words + idx / 64];
	bit = 1ull << (idx % 64);
	if ((*w & bit) || (p->shared && taken_elsewhere(p, a, idx)))
		return -1;
	*w |= bit;
	p->free_count[a]--;
	p->stats.allocs++;
	p->stats.in_use++;
	return 0;
}

int nat_slot_pair(const struct nat_pool *p, uint32_t slot, uint8_t addr[16],
		  uint16_t *port)
{
	if (slot >= p->capacity)
		return -1;
	addr_at(p, slot / p->ports, addr);
	*port = port_of(p, slot % p->ports);
	return 0;
}

uint32_t nat_pair_slot(const struct nat_pool *p, const uint8_t *addr, uint16_t port)
{
	unsigned n = addr_len(p->family);
	uint8_t diff[16];
	uint32_t off, index = 0;
	int borrow = 0;

	if (!p->capacity || port < p->port_first || (port - p->port_first) % p->port_stride)
		return NAT_SLOT_NONE;
	off = (uint32_t)(port - p->port_first) / p->port_stride;
	if (off >= p->ports)
		return NAT_SLOT_NONE;
	/* addr - base as a big-endian number; it must fit the low 32 bits. */
	for (int i = (int)n - 1; i >= 0; i--) {
		int d = addr[i] - p->base[i] - borrow;

		borrow = d < 0;
		diff[i] = (uint8_t)(d + (borrow ? 256 : 0));
	}
	if (borrow)
		return NAT_SLOT_NONE;		/* addr < base */
	for (unsigned i = 0; i < n; i++) {
		if (i + 4 < n && diff[i])
			return NAT_SLOT_NONE;
		if (i + 4 >= n)
			index = index << 8 | diff[i];
	}
	if (index >= p->addr_count)
		return NAT_SLOT_NONE;
	return index * p->ports + off;
}
