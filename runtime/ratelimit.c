/* Token buckets in exact integer credit (see ratelimit.h for the units
 * and the per-source replacement policy). Everything that needs 128-bit
 * or division happens once in rl_params_from_limit; a packet costs a
 * compare, a multiply and a subtract. */
#include "ratelimit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CREDIT_MAX (1ull << 62)
#define NS_PER_MS 1000000u

typedef unsigned __int128 u128;

static u128 gcd(u128 a, u128 b)
{
	while (b) {
		u128 r = a % b;

		a = b;
		b = r;
	}
	return a;
}

int rl_params_from_limit(struct rl_params *p, const struct rfw_limit *l,
			 uint32_t share)
{
	u128 interval, rate = l->rate, burst = l->burst ? l->burst : 1;
	u128 g, cost, gain, cap;

	memset(p, 0, sizeof(*p));
	if (!l->interval_ms)
		return -1;
	if (!share)
		share = 1;
	p->per = l->per;
	interval = (u128)l->interval_ms * NS_PER_MS;
	if (share > 1) {
		/* Each worker: rate per (share x interval), burst / share
		 * rounded up. */
		interval *= share;
		burst = (burst + share - 1) / share;
	}
	g = rate ? gcd(rate, interval) : interval;
	cost = interval / g;
	gain = rate / g;
	/* Keep every credit value <= 2^62 so a refill sum cannot overflow.
	 * The rate stays exact unless one packet costs more than 2^62 (a
	 * rate below one packet in 146 years) or more than
	 * 2^62 packets arrive per ns; a burst above 2^62 / cost packets is
	 * cut to that. */
	while (cost > CREDIT_MAX || gain > CREDIT_MAX) {
		cost = (cost + 1) >> 1;
		gain >>= 1;
	}
	cap = cost > CREDIT_MAX / burst ? CREDIT_MAX / cost * cost : burst * cost;
	p->cost = (uint64_t)cost;
	p->gain = (uint64_t)gain;
	p->cap = (uint64_t)cap;
	p->fill_ns = gain ? (uint64_t)((cap + gain - 1) / gain) : UINT64_MAX;
	return 0;
}

/* Credit of b at now, without changing it. Overflow-free: below fill_ns,
 * elapsed * gain < cap <= 2^62 and credit <= cap. */
static inline uint64_t credit_at(const struct rl_params *p,
				 const struct rl_bucket *b, uint64_t now)
{
	uint64_t el, c;

	if (now <= b->last_ns)
		return b->credit;
	el = now - b->last_ns;
	if (el >= p->fill_ns)
		return p->cap;
	c = b->credit + el * p->gain;
	return c < p->cap ? c : p->cap;
}

static inline int take(const struct rl_params *p, struct rl_bucket *b,
		       uint64_t now, struct rl_limit_stats *s)
{
	uint64_t c = credit_at(p, b, now);

	if (now > b->last_ns)
		b->last_ns = now;
	if (c >= p->cost) {
		b->credit = c - p->cost;
		s->passed++;
		return 1;
	}
	b->credit = c;
	s->excess++;
	return 0;
}

static uint32_t round_pow2(uint32_t v)
{
	uint32_t r = RL_WAYS;

	while (r < v && r < (1u << 30))
		r <<= 1;
	return r;
}

int rl_table_init(struct rl_table *t, const struct rfw_limit *limits,
		  uint32_t count, const struct rl_config *cfg)
{
	struct rl_params *params;
	uint32_t slots = cfg && cfg->source_slots ? cfg->source_slots
						 : RL_DEFAULT_SOURCE_SLOTS;
	uint32_t share = cfg && cfg->worker_count ? cfg->worker_count : 1;
	unsigned v6 = cfg && cfg->v6_prefix ? cfg->v6_prefix : RL_DEFAULT_V6_PREFIX;

	memset(t, 0, sizeof(*t));
	if (v6 > 128 || count > (1u << 24)) {
		errno = EINVAL;
		return -1;
	}
	slots = round_pow2(slots);
	params = calloc((size_t)count + 1, sizeof(*params));
	t->params = params;
	t->shared = calloc((size_t)count + 1, sizeof(*t->shared));
	t->lstats = calloc((size_t)count + 1, sizeof(*t->lstats));
	t->src = calloc(slots, sizeof(*t->src));
	if (!params || !t->shared || !t->lstats || !t->src) {
		rl_table_free(t);
		errno = ENOMEM;
		return -1;
	}
	for (uint32_t i = 0; i < count; i++) {
		uint32_t split = limits[i].per == RFW_LIMIT_PER_RULE ||
					 (cfg && cfg->split_sources) ? share : 1;

		if (rl_params_from_limit(&params[i + 1], &limits[i], split) < 0) {
			rl_table_free(t);
			errno = EINVAL;
			return -1;
		}
		/* last_ns 0: the first packet finds the bucket full. */
		t->shared[i + 1].credit = params[i + 1].cap;
	}
	t->limit_count = count;
	t->set_mask = slots / RL_WAYS - 1;
	t->seed = cfg ? cfg->seed : 0;
	for (unsigned bit = 0; bit < v6; bit++)
		t->v6_mask[bit / 8] |= (uint8_t)(0x80u >> (bit % 8));
	return 0;
}

void rl_table_free(struct rl_table *t)
{
	free((void *)t->params);
	free(t->shared);
	free(t->lstats);
	free(t->src);
	memset(t, 0, sizeof(*t));
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* A keyed mix of (limit, source); the seed keeps an outsider from
 * aiming many sources at one set. */
static inline uint32_t src_hash(const struct rl_table *t, uint32_t limit,
				const uint8_t *a)
{
	uint64_t h = t->seed ^ ((uint64_t)limit * 0x9e3779b97f4a7c15ull);

	h = (h ^ load64(a)) * 0xff51afd7ed558ccdull;
	h = (h ^ load64(a + 8) ^ (h >> 29)) * 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h ^ (h >> 32));
}

static int identity(const uint32_t *fwd, uint32_t n)
{
	for (uint32_t l = 1; l <= n; l++)
		if (fwd[l] != l)
			return 0;
	return 1;
}

/* A bucket fuller than its (new) cap is cut to it. */
static void cap_bucket(const struct rl_table *t, uint32_t limit, struct rl_bucket *b)
{
	if (b->credit > t->params[limit].cap)
		b->credit = t->params[limit].cap;
}

/* Move an entry of the old table to its set in `to` under its new limit
 * number: the set is chosen by (limit, source), so a renumbered limit
 * moves. A full set keeps what it has (the moved source restarts full). */
static void move_source(struct rl_table *to, const struct rl_source *e, uint32_t limit)
{
	struct rl_source *set = &to->src[(size_t)(src_hash(to, limit, e->src) & to->set_mask) *
					 RL_WAYS];

	for (unsigned w = 0; w < RL_WAYS; w++)
		if (!set[w].limit) {
			set[w] = *e;
			set[w].limit = limit;
			cap_bucket(to, limit, &set[w].b);
			return;
		}
}

void rl_table_carry(struct rl_table *to, struct rl_table *from, const uint32_t *fwd)
{
	uint32_t slots = (to->set_mask + 1) * RL_WAYS;
	uint32_t from_slots = (from->set_mask + 1) * RL_WAYS;

	if (!fwd || !from->src)
		return;
	for (uint32_t l = 1; l <= from->limit_count; l++) {
		uint32_t n = fwd[l];

		if (!n || n > to->limit_count)
			continue;
		to->shared[n] = from->shared[l];
		cap_bucket(to, n, &to->shared[n]);
		to->lstats[n] = from->lstats[l];
	}
	/* the old seed keeps the sources' sets where they are (moved ones
	 * are placed by it too) */
	to->seed = from->seed;
	to->stats = from->stats;
	if (from->set_mask == to->set_mask && from->limit_count == to->limit_count &&
	    identity(fwd, from->limit_count)) {
		/* same numbers, same sets: take the array over whole */
		struct rl_source *empty = to->src;

		to->src = from->src;
		from->src = empty;
		for (uint32_t i = 0; i < slots; i++)
			if (to->src[i].limit)
				cap_bucket(to, to->src[i].limit, &to->src[i].b);
		return;
	}
	/* renumbered limits, or a table of another size: each source to
	 * its set in `to` (those a full set has no room for restart full) */
	for (uint32_t i = 0; i < from_slots; i++) {
		const struct rl_source *e = &from->src[i];
		uint32_t n = e->limit && e->limit <= from->limit_count ? fwd[e->limit] : 0;

		if (n && n <= to->limit_count && to->params[n].per == RFW_LIMIT_PER_SOURCE)
			move_source(to, e, n);
	}
}

static int allow_source(struct rl_table *t, uint32_t limit,
			const struct pkt_key *k, uint64_t now)
{
	const struct rl_params *p = &t->params[limit];
	struct rl_source *set, *victim = NULL;
	uint8_t a[16];

	if (k->family == 4) {
		memcpy(a, k->src, 4);
		memset(a + 4, 0, 12);
	} else if (k->family == 6) {
		for (int i = 0; i < 16; i++)
			a[i] = k->src[i] & t->v6_mask[i];
	} else {	/* no source address: the shared bucket */
		t->lstats[limit].overflow++;
		return take(p, &t->shared[limit], now, &t->lstats[limit]);
	}
	set = &t->src[(size_t)(src_hash(t, limit, a) & t->set_mask) * RL_WAYS];
	for (unsigned w = 0; w < RL_WAYS; w++) {
		struct rl_source *e = &set[w];

		if (e->limit == limit && e->family == k->family &&
		    !memcmp(e->src, a, 16))
			return take(p, &e->b, now, &t->lstats[limit]);
		if (!victim && (!e->limit ||
				credit_at(&t->params[e->limit], &e->b, now) ==
				t->params[e->limit].cap))
			victim = e;
	}
	if (__builtin_expect(!victim, 0)) {
		t->lstats[limit].overflow++;
		return take(p, &t->shared[limit], now, &t->lstats[limit]);
	}
	t->stats.src_inserted++;
	if (victim->limit)
		t->stats.src_replaced++;
	victim->limit = limit;
	victim->family = k->family;
	memcpy(victim->src, a, 16);
	victim->b.credit = p->cap;
	victim->b.last_ns = now;
	return take(p, &victim->b, now, &t->lstats[limit]);
}

int rl_allow(struct rl_table *t, uint32_t limit, const struct pkt_key *k,
	     uint64_t now_ns)
{
	if (!limit)
		return 1;
	if (__builtin_expect(limit > t->limit_count, 0)) {
		t->stats.bad_limit++;
		return 0;
	}
	if (t->params[limit].per == RFW_LIMIT_PER_SOURCE)
		return allow_source(t, limit, k, now_ns);
	return take(&t->params[limit], &t->shared[limit], now_ns,
		    &t->lstats[limit]);
}
