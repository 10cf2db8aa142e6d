/* The DPDK router's own neighbour cache: see neigh_cache.h. */
#include "neigh_cache.h"

#include <string.h>

void nc_init(struct neigh_cache *c, const struct nc_config *cfg)
{
	memset(c, 0, sizeof(*c));
	c->seed = neigh_seed(c);
	c->cfg = cfg ? *cfg : (struct nc_config){30000, 1000, 3, 0};
	if (!c->cfg.delay_ms)
		c->cfg.delay_ms = 5000;
	if (c->cfg.delay_ms > c->cfg.reachable_ms)
		c->cfg.delay_ms = c->cfg.reachable_ms;	/* never later than a reachable one's */
	if (!c->cfg.probes)
		c->cfg.probes = 1;
	if (c->cfg.probes > 255)
		c->cfg.probes = 255;	/* (nc_entry.probes) */
}

_Static_assert(NC_MAX < 65535 && !(NC_INDEX_SLOTS & (NC_INDEX_SLOTS - 1)),
	       "index: a uint16_t place, a power of two of slots");

static uint32_t home_slot(const struct neigh_cache *c, uint8_t port, uint8_t family,
			  const uint8_t *addr)
{
	return neigh_key_hash(c->seed, port, family, addr) & (NC_INDEX_SLOTS - 1);
}

static uint32_t next_slot(uint32_t i)
{
	return (i + 1) & (NC_INDEX_SLOTS - 1);
}

/* The index slot holding the entry of this key, or the free slot that
 * ends its probe chain. */
static uint32_t slot_of(const struct neigh_cache *c, uint8_t port, uint8_t family,
			const uint8_t *addr)
{
	unsigned len = family == 4 ? 4 : 16;
	uint32_t i = home_slot(c, port, family, addr);

	for (; c->index[i]; i = next_slot(i)) {
		const struct nc_entry *e = &c->e[c->index[i] - 1];

		if (e->port == port && e->family == family && !memcmp(e->addr, addr, len))
			break;
	}
	return i;
}

static struct nc_entry *find(struct neigh_cache *c, uint8_t port, uint8_t family,
			     const uint8_t *addr)
{
	uint32_t at = c->index[slot_of(c, port, family, addr)];

	return at ? &c->e[at - 1] : NULL;
}

static struct nc_entry *add(struct neigh_cache *c, uint8_t port, uint8_t family,
			    const uint8_t *addr, const uint8_t *mac)
{
	struct nc_entry *e;

	if (c->n == NC_MAX) {
		c->st.full++;
		return NULL;
	}
	c->index[slot_of(c, port, family, addr)] = (uint16_t)(c->n + 1);
	e = &c->e[c->n++];
	memset(e, 0, sizeof(*e));
	memcpy(e->addr, addr, family == 4 ? 4 : 16);
	memcpy(e->mac, mac, 6);
	e->port = port;
	e->family = family;
	e->dirty = 1;
	return e;
}

/* e out of the cache; the last entry takes its place in e[]. Its index
 * slot is refilled by shifting the rest of its probe chain back (as
 * runtime/neigh.c's neigh_del: no tombstones, chains stay short). */
static void drop(struct neigh_cache *c, struct nc_entry *e)
{
	uint32_t at = (uint32_t)(e - c->e), last = c->n - 1;
	uint32_t hole = slot_of(c, e->port, e->family, e->addr);

	for (uint32_t i = next_slot(hole); c->index[i]; i = next_slot(i)) {
		const struct nc_entry *x = &c->e[c->index[i] - 1];
		uint32_t from_home = (i - home_slot(c, x->port, x->family, x->addr)) & (NC_INDEX_SLOTS - 1);

		if (from_home >= ((i - hole) & (NC_INDEX_SLOTS - 1))) {
			c->index[hole] = c->index[i];
			hole = i;
		}
	}
	c->index[hole] = 0;
	if (at != last) {
		const struct nc_entry *x = &c->e[last];

		c->index[slot_of(c, x->port, x->family, x->addr)] = (uint16_t)(at + 1);
		c->e[at] = c->e[last];
	}
	c->n = last;
}

int nc_permanent(struct neigh_cache *c, uint8_t port, uint8_t family, const uint8_t *addr,
		 const uint8_t mac[6])
{
	struct nc_entry *e = find(c, port, family, addr);

	if (!e && !(e = add(c, port, family, addr, mac)))
		return -1;
	memcpy(e->mac, mac, 6);
	e->state = NC_PERMANENT;
	e->dirty = 0;		/* the caller set the workers' tables */
	return 0;
}

static struct nc_asked *asked_slot(struct neigh_cache *c, uint8_t port, uint8_t family,
				   const uint8_t *addr)
{
	return &c->asked[neigh_key_hash(c->seed, port, family, addr) & (NC_ASKED_SLOTS - 1)];
}

void nc_asked(struct neigh_cache *c, uint8_t port, uint8_t family, const uint8_t *addr,
	      uint64_t now_ms)
{
	struct nc_asked *a;

	if (family != 4 && family != 6)
		return;
	a = asked_slot(c, port, family, addr);
	memset(a, 0, sizeof(*a));
	memcpy(a->addr, addr, family == 4 ? 4 : 16);
	a->port = port;
	a->family = family;
	a->at_ms = now_ms;
}

/* An answer about l's address, which no entry has: was it asked for
 * lately? Then the ask is used up. */
static int answers_ask(struct neigh_cache *c, uint8_t port, const struct np_learned *l,
		       uint64_t now_ms)
{
	struct nc_asked *a = asked_slot(c, port, l->family, l->addr);

	if (a->family != l->family || a->port != port ||
	    memcmp(a->addr, l->addr, l->family == 4 ? 4 : 16) ||
	    now_ms - a->at_ms > (uint64_t)c->cfg.probes * c->cfg.probe_ms)
		return 0;
	a->family = 0;
	return 1;
}

/* e's MAC unconfirmed (RFC 4861's STALE): still the workers', probed
 * delay_ms from now unless an answer confirms it first. One already
 * stale keeps its probe's time: news that moves it again and again
 * (a spoofer's gratuitous ARPs, each another MAC) does not put it off. */
static void make_stale(struct neigh_cache *c, struct nc_entry *e, uint64_t now_ms)
{
	if (e->state != NC_STALE)
		e->next_ms = now_ms + c->cfg.delay_ms;
	e->state = NC_STALE;
	e->probes = 0;
}

void nc_learn(struct neigh_cache *c, uint8_t port, const struct np_learned *l, uint64_t now_ms)
{
	struct nc_entry *e;
	int answer, confirmed, other_mac;

	if (l->family != 4 && l->family != 6)
		return;
	e = find(c, port, l->family, l->addr);
	answer = l->how == NP_ANSWER || l->how == NP_ANSWER_KEEP || l->how == NP_CONFIRM;
	if (!e) {
		if (l->how == NP_CONFIRM)
			return;		/* no MAC to make one with */
		if (answer && !answers_ask(c, port, l, now_ms)) {
			c->st.unasked++;
			return;
		}
		if ((l->how != NP_LEARN && !answer) || !(e = add(c, port, l->family, l->addr, l->mac)))
			return;
		c->st.learnt++;
		if (answer) {
			e->state = NC_REACHABLE;
			e->confirmed_ms = now_ms;
		} else {
			/* a request for our address says where its sender is,
			 * not that it hears us (RFC 4861 7.2.3: STALE) */
			make_stale(c, e, now_ms);
		}
		return;
	}
	if (e->state == NC_PERMANENT)
		return;
	/* Only an answer to a question of ours confirms that the neighbour
	 * hears us (RFC 4861 7.2.5, 7.3.1): a solicited NA says it is one
	 * (its S flag), an ARP reply does not, so it counts only while the
	 * entry is being probed or its address was asked for lately. A
	 * request, a gratuitous ARP or an unsolicited NA (any sender can
	 * make them) confirms nothing: with a new MAC the entry takes it,
	 * unconfirmed (STALE: probed soon, at it), with the same MAC it
	 * stays as it is. */
	confirmed = answer && (l->family == 6 || e->state == NC_PROBING ||
			       answers_ask(c, port, l, now_ms));
	other_mac = l->how != NP_CONFIRM && memcmp(e->mac, l->mac, 6);
	if (other_mac && (l->how == NP_ANSWER_KEEP || l->how == NP_MERGE_KEEP)) {
		/* RFC 4861 7.2.5: without override, an NA for another MAC
		 * (a proxy's answer, an unsolicited one) neither moves nor
		 * confirms the entry, so that the owner's answer wins
		 * whatever the order; a reachable one becomes STALE (asked
		 * again soon, at the MAC it has) */
		if (e->state == NC_REACHABLE)
			make_stale(c, e, now_ms);
		return;
	}
	if (other_mac) {
		memcpy(e->mac, l->mac, 6);
		e->dirty = 1;
		c->st.moved++;
	}
	if (confirmed) {
		if (e->state == NC_PROBING)
			/* told again: a worker may have missed the forget's
			 * undoing (nc_retry); a refresh costs a worker nothing */
			e->dirty = 1;
		e->state = NC_REACHABLE;
		e->probes = 0;
		e->confirmed_ms = now_ms;
	} else if (other_mac) {
		make_stale(c, e, now_ms);
	}
}

static void action_of(struct nc_action *t, uint8_t op, const struct nc_entry *e)
{
	memset(t, 0, sizeof(*t));
	t->op = op;
	t->port = e->port;
	t->family = e->family;
	memcpy(t->addr, e->addr, sizeof(t->addr));
	memcpy(t->mac, e->mac, 6);
}

uint32_t nc_tick(struct neigh_cache *c, uint64_t now_ms, struct nc_action *out, uint32_t max)
{
	uint32_t n = 0, i = 0;

	while (i < c->n && n < max) {
		struct nc_entry *e = &c->e[i];

		if (e->dirty && now_ms >= e->post_ms) {
			action_of(&out[n++], NC_POST, e);
			e->dirty = 0;
			continue;	/* the same entry again: it may be due */
		}
		if ((e->state == NC_REACHABLE && now_ms >= e->confirmed_ms + c->cfg.reachable_ms) ||
		    (e->state == NC_STALE && now_ms >= e->next_ms)) {
			e->state = NC_PROBING;
			e->next_ms = now_ms;
		}
		if (e->state != NC_PROBING || now_ms < e->next_ms) {
			i++;
			continue;
		}
		if (e->probes < c->cfg.probes) {
			action_of(&out[n++], NC_PROBE, e);
			e->probes++;
			e->next_ms = now_ms + c->cfg.probe_ms;
			c->st.probes++;
			i++;
			continue;
		}
		action_of(&out[n++], NC_FORGET, e);
		c->st.forgotten++;
		drop(c, e);		/* the last one here, looked at next */
	}
	return n;
}

void nc_retry(struct neigh_cache *c, const struct nc_action *t, uint64_t now_ms)
{
	struct nc_entry *e = find(c, t->port, t->family, t->addr);

	if (t->op == NC_POST) {
		if (e) {
			e->dirty = 1;
			/* not in this tick: nr_tick asks nc_tick again at
			 * now_ms, which would give the same POSTs over and over
			 * (a worker's ring full: the other workers' filled with
			 * them) and never the entries after them */
			e->post_ms = now_ms + 1;
		}
		return;
	}
	if (t->op == NC_PROBE) {
		/* not sent: it does not count against the neighbour, and is
		 * asked again on the next tick (not this one: now_ms) */
		if (e && e->state == NC_PROBING && e->probes) {
			e->probes--;
			c->st.probes--;
			e->next_ms = now_ms + 1;
		}
		return;
	}
	if (t->op != NC_FORGET || e)
		return;		/* (learnt again meanwhile: posted with it) */
	/* back, to be forgotten again at once */
	e = add(c, t->port, t->family, t->addr, t->mac);
	if (!e)
		return;
	e->dirty = 0;
	e->state = NC_PROBING;
	e->probes = (uint8_t)c->cfg.probes;
	e->next_ms = now_ms + 1;	/* the next tick (as a POST's) */
	/* the same forget again, not another neighbour forgotten: counted
	 * when it is done (a ring full for n ticks counted it n + 1 times) */
	c->st.forgotten--;
}

void nc_summarize(const struct neigh_cache *c, struct nc_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->st = c->st;
	for (uint32_t i = 0; i < c->n; i++) {
		if (c->e[i].state == NC_PERMANENT)
			out->permanent++;
		else if (c->e[i].state == NC_PROBING)
			out->probing++;
		else if (c->e[i].state == NC_STALE)
			out->stale++;
		else
			out->reachable++;
	}
}
