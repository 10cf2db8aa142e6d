/* One worker's pipeline. A new flow's first packet goes
 *   parse -> flow (miss) -> DNAT -> route -> ACL -> limit -> CT (SNAT,
 *   create) -> NAT rewrite -> forward,
 * a known flow's packets go parse -> flow (hit) -> route -> NAT rewrite ->
 * forward, following the flow's verdict and translation (POLICY.md:
 * DNAT first so rules see the real server, SNAT after so rules see the
 * real client). Each stage walks the whole burst; per-packet state
 * between stages lives in struct pipe_burst on the worker. */
#include "pipeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "csum.h"
#include "pipeline_int.h"
#include "fragment.h"
#include "reply.h"
#include "tcp_mss.h"
#include "martian.h"
#include "wire.h"

#define EXPIRE_BUDGET 64	/* conntrack expiry work per burst */

static inline uint64_t cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

static int addr_len(uint8_t family)
{
	return family == 6 ? 16 : 4;
}

/* Addresses of a family differ? Sizes the compiler sees, so no call. */
static inline int addr_differs(const uint8_t *a, const uint8_t *b, uint8_t family)
{
	return family == 6 ? memcmp(a, b, 16) != 0 : memcmp(a, b, 4) != 0;
}

/* ---- NAT pools: one per SNAT rule, one per (masquerade rule, port
 * with an address of the rule's family), all made at create. ---- */

void pipe_snat_own_address(struct pipe_worker *w, uint32_t flow)
{
	w->own_address_mark[flow >> 6] |= 1ull << (flow & 63);
}

static inline int snat_own_address(const struct pipe_worker *w, uint32_t flow)
{
	return (int)(w->own_address_mark[flow >> 6] >> (flow & 63) & 1);
}

/* Does the flow (fi) hold a pool's pair as its source translation? Its
 * reply goes to another address than its source (only SNAT changes that
 * side: DNAT alone leaves it), or SNAT gave it its source's own address
 * (own: own_address_mark's bit; its tuples cannot tell it from a flow
 * never translated, whose source pair may be one the pool holds for
 * another flow). */
static int snat_holds_pair(const struct ct_flow_info *fi, int own)
{
	return own || memcmp(fi->reply.dst, fi->orig.src, 16) != 0;
}

/* On flow removal, give its SNAT port back: the pair is the reply's
 * destination, and the pool is the one holding it (pools may share
 * pairs, nat.h: one holds it). */
static void release_nat(void *ctx, const struct ct_table *t, uint32_t flow)
{
	struct pipe_worker *w = ctx;
	struct ct_flow_info fi;
	int own = snat_own_address(w, flow);

	if (w->kept_mark && (w->kept_mark[flow >> 6] >> (flow & 63) & 1)) {
		w->kept_mark[flow >> 6] &= ~(1ull << (flow & 63));	/* one less for the kept rules */
		__atomic_store_n(&w->kept_flows, w->kept_flows - 1, __ATOMIC_RELAXED);
	}
	if (w->restored_mark && (w->restored_mark[flow >> 6] >> (flow & 63) & 1)) {
		w->restored_mark[flow >> 6] &= ~(1ull << (flow & 63));	/* one less redirected to */
		__atomic_store_n(&w->restored_flows, w->restored_flows - 1, __ATOMIC_RELAXED);
	}

	w->own_address_mark[flow >> 6] &= ~(1ull << (flow & 63));	/* not the entry's next flow */
	if (ct_flow_get(t, flow, &fi) < 0 || !snat_holds_pair(&fi, own))
		return;			/* no SNAT on this flow */
	for (uint32_t i = 0; i < w->npools; i++) {
		struct nat_pool *p = &w->pools[i]->pool;
		uint32_t slot;

		if (p->family != fi.orig.family)
			continue;
		slot = nat_pair_slot(p, fi.reply.dst, fi.reply.dport);
		if (nat_slot_in_use(p, slot)) {
			nat_release(p, slot);
			return;
		}
	}
}

void pipe_port_addrs_get(const struct pipe_port_cfg *c, struct pipe_port_addrs *a)
{
	memset(a, 0, sizeof(*a));
	a->has_v4 = c->has_v4;
	a->has_v6 = c->has_v6;
	memcpy(a->v4, c->v4, 4);
	memcpy(a->v6, c->v6, 16);
	a->nmore4 = c->nmore4 < PIPE_PORT_MORE_ADDRS ? c->nmore4 : PIPE_PORT_MORE_ADDRS;
	a->nmore6 = c->nmore6 < PIPE_PORT_MORE_ADDRS ? c->nmore6 : PIPE_PORT_MORE_ADDRS;
	memcpy(a->more4, c->more4, (size_t)a->nmore4 * 4);
	memcpy(a->more6, c->more6, (size_t)a->nmore6 * 16);
}

void pipe_port_addrs_put(struct pipe_port_cfg *c, const struct pipe_port_addrs *a)
{
	c->has_v4 = a->has_v4;
	c->has_v6 = a->has_v6;
	memcpy(c->v4, a->v4, 4);
	memcpy(c->v6, a->v6, 16);
	c->nmore4 = a->nmore4;
	c->nmore6 = a->nmore6;
	memcpy(c->more4, a->more4, sizeof(c->more4));
	memcpy(c->more6, a->more6, sizeof(c->more6));
}

static const uint8_t *port_addr(const struct pipe_config *c, uint32_t port, uint8_t family)
{
	const struct pipe_port_cfg *pc = &c->port[port];

	if (family == 4)
		return pc->has_v4 ? pc->v4 : NULL;
	return pc->has_v6 ? pc->v6 : NULL;
}

/* addr is one of the port's own addresses (first or more). Only asked
 * where a next hop is missing, so never on the forwarding path. */
static __attribute__((cold, noinline)) int port_owns(const struct pipe_port_cfg *pc,
						     uint8_t family, const uint8_t *addr)
{
	return family == 4
		       ? addr_list_has(pc->v4, pc->has_v4, (const uint8_t *)pc->more4, pc->nmore4, 4, addr)
		       : addr_list_has(pc->v6, pc->has_v6, (const uint8_t *)pc->more6, pc->nmore6, 16,
				       addr);
}

/* The address the router's own ICMP errors about a packet that came in
 * on `port` are sent from: the port's, unless (IPv6) it has only a
 * link-local one, as an uplink often has when its provider delegates a
 * prefix to the LAN: an error from a link-local source is not forwarded
 * beyond the link, so path MTU discovery and traceroute from outside
 * would fail. Then another port's global address (RFC 4443 2.2: any
 * unicast address of the node). NULL: none. */
static const uint8_t *reply_source(const struct pipe_worker *w, uint32_t port, uint8_t family)
{
	const uint8_t *a = port_addr(&w->cfg, port, family);

	if (family == 4 || !a || !link_local6(a))
		return a;
	for (uint32_t k = 0; k < w->nports; k++) {
		const uint8_t *g = port_addr(&w->cfg, k, 6);

		if (g && !link_local6(g))
			return g;
	}
	return a;
}

struct pipe_worker *pipe_create(const struct pipe_config *cfg, const struct rfw_view *view)
{
	struct pipe_worker *w;
	struct pipe_policy *p;
	int saved;

	if (cfg->nports == 0 || cfg->nports > PIPE_MAX_PORTS ||
	    (cfg->mode == PIPE_BRIDGE && cfg->nports % 2) ||
	    (cfg->mode == PIPE_ROUTER && !view->route_table) ||
	    (cfg->worker_count && cfg->worker_id >= cfg->worker_count)) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->cfg = *cfg;
	for (uint32_t k = 0; k < PIPE_MAX_PORTS; k++)
		pipe_port_addrs_get(&cfg->port[k], &w->next_addrs[k]);
	w->mode = cfg->mode;
	w->nports = cfg->nports;
	w->stateful = view->policy->stateful;
	/* before the policy is built: its SNAT pools steer (pipe_policy.c) */
	w->handoff = cfg->handoff && cfg->worker_count > 1 && w->stateful;
	if (w->handoff) {
		w->dgrams = calloc(PIPE_DGRAM_SLOTS, sizeof(*w->dgrams));
		if (!w->dgrams)
			goto fail;
	}
	if (!cfg->seed && getrandom(&w->nat_start, sizeof(w->nat_start), 0) != sizeof(w->nat_start))
		w->nat_start = 0;
	w->pools = calloc(PIPE_MAX_POOLS, sizeof(*w->pools));
	if (!w->pools)
		goto fail;
	if (w->stateful) {
		struct ct_config cc;

		ct_config_from_policy(&cc, view->policy);
		cc.seed = cfg->seed;
		if (cfg->max_flows)
			cc.max_flows = cfg->max_flows;
		cc.on_remove = release_nat;
		cc.on_remove_ctx = w;
		w->ct = ct_create(&cc);
		if (!w->ct)
			goto fail;
		if (!cfg->no_flow_cache) {
			if (flowcache_init(&w->fc, flowcache_slots_for(cc.max_flows),
					   cfg->seed ? cfg->seed ^ 0x2545f4914f6cdd1dull : 0) < 0)
				goto fail;
			w->have_fc = 1;
		}
		w->express_ct = cfg->no_flow_cache != 1;
	}
	if (w->handoff && w->ct &&
	    !(w->kept_mark = calloc((ct_max_flows(w->ct) + 63) / 64, sizeof(uint64_t))))
		goto fail;
	if (w->ct &&
	    !(w->own_address_mark = calloc((ct_max_flows(w->ct) + 63) / 64, sizeof(uint64_t))))
		goto fail;
	p = pipe_policy_build(w, view, NULL, PIPE_FLOWS_KEEP, NULL, NULL, 0);
	if (!p)
		goto fail;
	pipe_adopt(w, p);
	neigh_init(&w->neigh);
	for (uint32_t k = 0; k < PIPE_MAX_PORTS; k++)
		pipe_set_mtu(w, k, k < w->nports ? cfg->port[k].mtu : 0);
	if (w->mode == PIPE_ROUTER) {
		w->extra_room = calloc(PIPE_MAX_EXTRA, PIPE_EXTRA_ROOM);
		w->held_room = calloc(PIPE_MAX_HELD, PIPE_EXTRA_ROOM);
		if (!w->extra_room || !w->held_room) {
			pipe_destroy(w);
			errno = ENOMEM;
			return NULL;
		}
	}
	if (cfg->park_fragments && !(w->park_room = calloc(PIPE_MAX_PARKED, PIPE_EXTRA_ROOM))) {
		pipe_destroy(w);
		errno = ENOMEM;
		return NULL;
	}
	if (cfg->reply_rate) {
		uint32_t burst = cfg->reply_rate / 10 > 10 ? cfg->reply_rate / 10 : 10;

		w->reply_cost = 1000000000ull / cfg->reply_rate;
		w->reply_cap = w->reply_credit = w->reply_cost * burst;
	}
	return w;
fail:
	saved = errno ? errno : ENOMEM;
	pipe_destroy(w);
	errno = saved;
	return NULL;
}

void pipe_destroy(struct pipe_worker *w)
{
	if (!w)
		return;
	if (w->ct)
		ct_destroy(w->ct);	/* calls release_nat: pools still here */
	free(w->kept_mark);
	free(w->restored_mark);
	free(w->own_address_mark);
	for (uint32_t i = 0; i < w->npools; i++) {
		nat_pool_free(&w->pools[i]->pool);
		free(w->pools[i]);
	}
	free(w->pools);
	free(w->dgrams);
	free(w->redirect);
	free(w->extra_room);
	free(w->held_room);
	free(w->park_room);
	pipe_policy_free(w->pol);
	flowcache_free(&w->fc);
	free(w);
}

uint32_t pipe_held_count(const struct pipe_worker *w)
{
	return w->nheld;
}

const struct pipe_stats *pipe_stats(const struct pipe_worker *w)
{
	return &w->stats;
}

const struct pipe_rule_stats *pipe_rule_stats(const struct pipe_worker *w)
{
	return w->pol->rules;
}

uint32_t pipe_rule_count(const struct pipe_worker *w)
{
	return w->pol->rule_count;
}

uint64_t pipe_rule_limited(const struct pipe_worker *w, uint32_t rule)
{
	return rule <= w->pol->rule_count ? w->pol->limited[rule] : 0;
}

const struct ct_table *pipe_conntrack(const struct pipe_worker *w)
{
	return w->ct;
}

void pipe_flow_end(struct pipe_worker *w, uint32_t flow)
{
	/* the flow cache's slots and fragment entries check their flow
	 * before use, as after an expiry */
	if (w->ct)
		ct_remove(w->ct, flow);
}

uint32_t pipe_flow_cache_slots(const struct pipe_worker *w)
{
	return w->have_fc ? w->fc.mask + 1 : 0;
}

uint32_t pipe_nat_pool_count(const struct pipe_worker *w)
{
	return w->npools;
}

void pipe_second_chance_sources(const struct pipe_worker *w, int *dnat_kept,
				uint32_t *redirects)
{
	*dnat_kept = 0;
	for (const struct pipe_dnat_set *d = w->pol ? w->pol->prev_dnat : NULL; d; d = d->older)
		(*dnat_kept)++;
	*redirects = __atomic_load_n(&w->redirect_count, __ATOMIC_RELAXED);
}

const struct nat_pool *pipe_nat_pool(const struct pipe_worker *w, uint32_t i)
{
	return i < w->npools ? &w->pools[i]->pool : NULL;
}

uint8_t pipe_port_policy_if(const struct pipe_worker *w, uint32_t port)
{
	return port < w->nports ? w->pol->port_if[port] : PIPE_NO_PORT;
}

int pipe_neigh_set(struct pipe_worker *w, uint32_t port, uint8_t family, const uint8_t *addr,
		   const uint8_t mac[6])
{
	const uint8_t *now;

	if (port >= w->nports)
		return -1;
	now = neigh_lookup(&w->neigh, (uint8_t)port, family, addr);
	if (now && !memcmp(now, mac, 6))
		return 0;	/* a refresh: the flow cache stays */
	if (neigh_set(&w->neigh, (uint8_t)port, family, addr, mac))
		return -1;
	/* A moved MAC: cached next hops may carry the old one. A new entry
	 * stales nothing: only forwarded packets are cached, with the MAC
	 * they went to, so none is cached towards a hop never known. */
	if (now)
		w->fc_epoch++;
	return 0;
}

int pipe_neigh_forget(struct pipe_worker *w, uint32_t port, uint8_t family, const uint8_t *addr)
{
	if (port >= w->nports || neigh_del(&w->neigh, (uint8_t)port, family, addr))
		return -1;
	w->fc_epoch++;		/* cached next hops may still carry its MAC */
	return 0;
}

void pipe_set_mtu(struct pipe_worker *w, uint32_t port, uint32_t mtu)
{
	uint32_t least = UINT32_MAX;

	if (port >= PIPE_MAX_PORTS)
		return;
	w->mtu[port] = mtu && w->mode == PIPE_ROUTER ? mtu : UINT32_MAX;
	w->mss4[port] = tcp_mss_for_mtu(mtu, 4);
	w->mss6[port] = tcp_mss_for_mtu(mtu, 6);
	for (uint32_t k = PIPE_MAX_PORTS; k < 256; k++)
		w->mtu[k] = UINT32_MAX;	/* PIPE_NO_PORT and the like */
	for (uint32_t k = 0; k < w->nports; k++)
		if (w->mtu[k] < least)
			least = w->mtu[k];
	w->cache_max_len = least == UINT32_MAX ? UINT32_MAX : 14 + least;
}

void pipe_set_port_addrs(struct pipe_worker *w, uint32_t port, const struct pipe_port_addrs *a)
{
	if (port < PIPE_MAX_PORTS)
		w->next_addrs[port] = *a;
}

uint32_t pipe_extra(struct pipe_worker *w, struct pipe_pkt **pkts)
{
	*pkts = w->extra;
	return w->nextra;
}

void pipe_extra_clear(struct pipe_worker *w)
{
	w->nextra = 0;
}

uint32_t pipe_unresolved(struct pipe_worker *w, struct pipe_nexthop *out, uint32_t max)
{
	uint32_t n = w->nunresolved < max ? w->nunresolved : max;

	memcpy(out, w->unresolved, n * sizeof(*out));
	w->nunresolved -= n;
	memmove(w->unresolved, w->unresolved + n, w->nunresolved * sizeof(*out));
	return n;
}

/* May this worker write one more reply (pipe_config.reply_rate)? Takes
 * its cost when it may; counts it when not. Rare: replies only. */
static int reply_allowed(struct pipe_worker *w)
{
	uint64_t now = w->now_ns;

	if (!w->reply_cost)
		return 1;
	if (now > w->reply_last_ns) {
		uint64_t c = w->reply_credit + (now - w->reply_last_ns);

		w->reply_credit = c < w->reply_cap ? c : w->reply_cap;
	}
	w->reply_last_ns = now;
	if (w->reply_credit >= w->reply_cost) {
		w->reply_credit -= w->reply_cost;
		return 1;
	}
	w->stats.replies_limited++;
	return 0;
}

/* A next hop without a MAC, remembered once (a burst to it asks once). */
static void want_neighbour(struct pipe_worker *w, uint8_t port, uint8_t family,
			   const uint8_t *addr)
{
	struct pipe_nexthop *h;
	uint32_t len = family == 4 ? 4 : 16;

	for (uint32_t k = 0; k < w->nunresolved; k++)
		if (w->unresolved[k].port == port && w->unresolved[k].family == family &&
		    !memcmp(w->unresolved[k].addr, addr, len))
			return;
	if (w->nunresolved == PIPE_UNRESOLVED)
		return;		/* asked again by a later packet */
	h = &w->unresolved[w->nunresolved++];
	memset(h, 0, sizeof(*h));
	memcpy(h->addr, addr, len);
	h->port = port;
	h->family = family;
}

static inline void drop(struct pipe_worker *w, struct pipe_pkt *p, enum pipe_drop why)
{
	p->verdict = PIPE_DROP;
	p->drop = (uint8_t)why;
	w->stats.drop[why]++;
}

static inline int echo_request(const struct pkt_key *k)
{
	return (k->proto == 1 && k->icmp_type == 8) || (k->proto == 58 && k->icmp_type == 128);
}

/* Destination unreachable, time exceeded, parameter problem; ICMPv6's
 * packet too big too (RFC 792, RFC 4443 2.1). */
static inline int icmp_error_message(const struct pkt_key *k)
{
	return (k->proto == 1 && (k->icmp_type == 3 || k->icmp_type == 11 || k->icmp_type == 12)) ||
	       (k->proto == 58 && k->icmp_type >= 1 && k->icmp_type <= 4);
}

/* An ICMP or ICMPv6 echo request or reply. */
static inline int echo_message(const struct pkt_key *k)
{
	return (k->proto == 1 && (k->icmp_type == 8 || k->icmp_type == 0)) ||
	       (k->proto == 58 && (k->icmp_type == 128 || k->icmp_type == 129));
}

/* The "ports" NAT and conntrack use: TCP/UDP/SCTP ports, or the ICMP
 * echo identifier in both (conntrack's convention). */
static void wire_ports(const struct pkt_meta *m, const uint8_t *frame, uint16_t *sp, uint16_t *dp)
{
	const struct pkt_key *k = &m->key;
	int echo = echo_message(k);

	*sp = k->sport;
	*dp = k->dport;
	if (echo && m->l4_off && m->fragment != 2) {
		*sp = *dp = (uint16_t)(frame[m->l4_off + 4] << 8 | frame[m->l4_off + 5]);
	}
}

/* ---- stages ---- */

static uint32_t nat_match(const struct pipe_worker *w, const struct pkt_key *k, int dnat);

/* The worker that owns the flow of a parsed IP packet (home.h) when the
 * DNAT entries are dnat's (NULL: none; dports: the ports they may take,
 * NULL any) of view v: by the tuple conntrack knows it by, and for a
 * packet a DNAT rule takes, by the translated tuple, which its reply
 * carries. Every worker computes the same (same seed, same policy). */
static inline uint32_t home_through(const struct pipe_worker *w, const struct pipe_pkt *p,
				    const struct pkt_meta *m, const struct rfw_view *v,
				    const struct nat_match *dnat, const uint64_t *dports)
{
	const uint32_t count = dnat ? dnat->count : 0;
	const struct pkt_key *pk = &m->key;
	struct ct_pkt cp = { .meta = m, .frame = p->data, .len = p->len };
	struct ct_key k;
	uint32_t r;

	/* TCP, UDP, SCTP: the parsed key is conntrack's tuple already, and
	 * no DNAT rule need be looked at for a port none of them takes */
	if (__builtin_expect(pk->has_ports &&
			     (!count || (dports && !((dports[pk->dport >> 6] >> (pk->dport & 63)) & 1))),
			     1))
		return pipe_home_of(w, pk->src, pk->dst, pk->sport, pk->dport, pk->proto,
				    pk->family);
	ct_packet_tuple(&cp, &k);	/* ICMP's identifier or quoted packet, ... */
	if (count) {
		struct pkt_key t = m->key, wire;

		memcpy(t.src, k.src, 16);
		memcpy(t.dst, k.dst, 16);
		t.sport = k.sport;
		t.dport = k.dport;
		t.proto = k.proto;
		/* an ICMP error's quoted TCP/UDP/SCTP tuple has ports: a DNAT
		 * entry with a port condition must see them (a forward's error
		 * from outside went to the worker of the untranslated tuple) */
		t.has_ports = k.proto == 6 || k.proto == 17 || k.proto == 132;
		r = nat_match_first(dnat, &t);
		if (r) {
			nat_dnat_key(&v->nat_rules[r], &t, &wire);
			memcpy(k.dst, wire.dst, 16);
			k.dport = wire.dport;
		}
	}
	return pipe_home_of(w, k.src, k.dst, k.sport, k.dport, k.proto, k.family);
}

int pipe_dnat_homes(const struct pipe_worker *w, const uint8_t *src, const uint8_t *dst,
		    uint16_t sport, uint16_t dport, uint8_t proto, uint8_t family, uint32_t *homes)
{
	const struct pipe_policy *pol = w->pol;
	struct pkt_key k = {.sport = sport, .dport = dport, .family = family, .proto = proto,
			    .has_ports = 1, .ct_state = RFW_STATE_NEW, .out_if = PIPE_NO_PORT};
	int n = 0;

	if (!pol->nat_dnat_count || (proto != 6 && proto != 17 && proto != 132))
		return 0;
	memcpy(k.src, src, 16);
	memcpy(k.dst, dst, 16);
	for (uint32_t port = 0; port < w->nports; port++) {
		struct pkt_key wire;
		uint32_t r, home;
		int seen = 0;

		k.in_if = pol->port_if[port];
		r = nat_match_first(&pol->dnat_match, &k);
		if (!r)
			continue;
		nat_dnat_key(&pol->view->nat_rules[r], &k, &wire);
		home = pipe_home_of(w, k.src, wire.dst, sport, wire.dport, proto, family);
		for (int i = 0; i < n; i++)
			seen |= homes[i] == home;
		if (!seen)
			homes[n++] = home;
	}
	return n;
}

/* The packet's worker under the current policy's DNAT rules. */
static uint32_t packet_home(const struct pipe_worker *w, const struct pipe_pkt *p,
			    const struct pkt_meta *m)
{
	const struct pipe_policy *pol = w->pol;

	return home_through(w, p, m, pol->view, &pol->dnat_match, pol->dnat_dports);
}

/* A fragmented datagram's hash (addresses, protocol and IP id; the
 * same on every worker, and for each fragment: the protocol its fragment
 * header names, ct_packet_frag_id): 0 when the fragment's id cannot be
 * read. */
static int datagram_hash(const struct pipe_worker *w, const struct pkt_meta *m,
			 const uint8_t *frame, uint32_t len, uint64_t *h)
{
	struct ct_pkt cp = { .meta = m, .frame = frame, .len = len };
	uint32_t id;
	uint8_t proto;

	if (!ct_packet_frag_id(&cp, &id, &proto))
		return 0;
	*h = home_hash(m->key.src, m->key.dst, (uint16_t)id, (uint16_t)(id >> 16), proto,
		       ~w->cfg.home_seed);
	return 1;
}

/* A first fragment came (h: datagram_hash): the parked fragments of
 * its datagram (and of the others that share its tag) may go on. Marked
 * even with none parked: its others may be parked later in the same
 * burst (with handoff, a first that only passes through here is gone by
 * then). process_burst forgets the marks while nothing is parked. */
static inline void first_fragment_seen(struct pipe_worker *w, uint64_t h)
{
	w->parked_seen |= 1ull << (h & 63);
}

static inline void first_fragment_accepted(struct pipe_worker *w, const struct pkt_meta *m,
					   const uint8_t *frame, uint32_t len)
{
	uint64_t h;

	if (w->park_room && datagram_hash(w, m, frame, len, &h))
		first_fragment_seen(w, h);
}

/* A first fragment came (parsed, whether it stays or goes on):
 * conntrack forgets the entry of an earlier datagram with the same
 * addresses, protocol and IP id (the sender's ids come round), before
 * the burst's lookups, so that its other fragments follow it once taken
 * in (those of this burst are looked up again after it:
 * frags_after_first) or, refused or gone on, nothing here; never the
 * earlier datagram's flow, rule and translation. */
static __attribute__((cold, noinline)) void first_fragment_came(struct pipe_worker *w,
								 const struct pipe_pkt *p,
								 const struct pkt_meta *m)
{
	struct ct_pkt cp = { .meta = m, .frame = p->data, .len = p->len };

	if (w->stateful && w->ct)
		ct_frag_forget(w->ct, &cp);
}

/* Where a non-first fragment of datagram h (datagram_hash) goes from
 * here: where its first went, as this worker's entry says, while it has
 * handoffs left; this worker otherwise. */
static inline uint32_t fragment_follows(const struct pipe_worker *w, const struct pipe_pkt *p,
					uint64_t h)
{
	const struct pipe_dgram *e = &w->dgrams[h & (PIPE_DGRAM_SLOTS - 1)];

	return e->tag == h && (uint32_t)(w->now_ns / 1000000000u) < e->expire &&
			       p->homed < PIPE_FRAG_HOPS_MAX
		       ? e->worker
		       : w->cfg.worker_id;
}

/* A fragment's worker. A non-first fragment has no ports, so fragments
 * go first to their datagram's worker (by addresses, protocol and IP
 * id); there the first fragment, which has them, says whose flow the
 * datagram is (remembered for PIPE_DGRAM_TIMEOUT) and goes on to that
 * worker, and the others follow it there. Fragments of a datagram come
 * in order from one queue (one sender, one NIC hash), and a worker
 * takes another's frames in order, so the first fragment normally
 * reaches the datagram's worker first; when it does not, the others stay
 * there, orphans, as they would with one worker. A worker that hands a
 * first fragment on once more (second_chance: it found no flow there)
 * says where in its own entry, and the others follow it on from there
 * (at most PIPE_FRAG_HOPS_MAX handoffs in all); where the first stays,
 * its entry, if any, says so. */
static uint32_t fragment_home(struct pipe_worker *w, const struct pipe_pkt *p,
			      const struct pkt_meta *m)
{
	uint32_t self = w->cfg.worker_id, now = (uint32_t)(w->now_ns / 1000000000u), d;
	struct pipe_dgram *e;
	uint64_t h;

	if (!datagram_hash(w, m, p->data, p->len, &h))
		return self;	/* unreadable: conntrack here refuses it */
	/* With --home rss, where the NIC sends every fragment of the
	 * datagram anyway (by its addresses): no hop to get there. */
	d = w->cfg.rss_home ? rss_home_addr_worker(w->cfg.rss_home, m->key.src, m->key.dst,
						   m->key.family)
			    : home_worker(h, w->cfg.worker_count);
	if (d != self && !p->homed)
		return d;
	e = &w->dgrams[h & (PIPE_DGRAM_SLOTS - 1)];
	if (m->fragment == 1) {
		/* handed over at most once on its way here: it has not been
		 * on from its datagram's worker yet (back there, it is >= 2) */
		if (d == self && p->homed < 2) {
			first_fragment_seen(w, h);
			e->tag = h;
			e->worker = packet_home(w, p, m);
			e->expire = now + PIPE_DGRAM_TIMEOUT;
			return e->worker;
		}
		if (e->tag == h)	/* it stays (unless second_chance hands it on) */
			e->worker = self;
		return self;
	}
	return fragment_follows(w, p, h);
}

/* A first fragment that second_chance hands to worker `to`: the others
 * of its datagram, which come here after it, follow it there (and those
 * parked here waiting for it are run again). */
static __attribute__((cold, noinline)) void first_fragment_goes_on(struct pipe_worker *w,
								    const struct pipe_pkt *p,
								    const struct pkt_meta *m,
								    uint32_t to)
{
	struct pipe_dgram *e;
	uint64_t h;

	if (!datagram_hash(w, m, p->data, p->len, &h))
		return;
	first_fragment_seen(w, h);
	e = &w->dgrams[h & (PIPE_DGRAM_SLOTS - 1)];
	e->tag = h;
	e->worker = to;
	e->expire = (uint32_t)(w->now_ns / 1000000000u) + PIPE_DGRAM_TIMEOUT;
}

/* With handoff: the worker p goes to (this one when it stays). */
static uint32_t frame_home(struct pipe_worker *w, const struct pipe_pkt *p,
			   const struct pkt_meta *m)
{
	if (m->fragment)
		return fragment_home(w, p, m);
	return p->homed ? w->cfg.worker_id : packet_home(w, p, m);
}

/* A frame pkt_fast_frame took (IPv4 without options, TCP or UDP) for the
 * express path (express_cache, express_conntrack): with the L4 checksum
 * in the frame, not a TCP SYN (the full path decides whether one opens a
 * new connection), and in router mode one the router forwards (TTL > 1). */
static inline int express_frame(const uint8_t *f, uint32_t len, int router)
{
	return len >= 14 + 20 + 18 && !(f[23] == 6 && (f[47] & 0x02)) && (!router || f[22] > 1);
}

/* A bit for an IPv4 TCP tuple in either direction (addresses: the first
 * 4 bytes; ports in host order): a SYN may reopen a closed connection
 * from either side (ct.c tcp_reusable). */
static inline uint64_t syn_filter_bit(const uint8_t *src, const uint8_t *dst, uint16_t sport,
				      uint16_t dport)
{
	uint32_t a, d;

	memcpy(&a, src, 4);
	memcpy(&d, dst, 4);
	return 1ull << ((((a ^ d) + (uint32_t)(sport ^ dport)) * 0x9e3779b1u) >> 26);
}

/* Parse, and, when `probe`, hash the flow cache's probes and prefetch
 * their slots while the tuple is at hand (stage_cache makes them): a
 * cache for a million flows is larger than L2, and a probe that waits
 * for its slot stalls the next. Fragments and ICMP are not probed (the
 * full path decides), nor TCP SYNs (see cache_after_syn). Frames for the
 * express path are not parsed at all here, only hashed when probing
 * (l_x; and with handoff homed); a stateful worker gathers them when not
 * probing too, for express_conntrack. nic_csum (a constant in each
 * copy): the backend may set PIPE_RX_IPV4_CSUM_GOOD
 * (pipe_config.rx_csum_flags). */
static inline __attribute__((always_inline)) uint32_t
parse_burst(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t n, const int probe,
	    const int nic_csum)
{
	struct pipe_burst *b = &w->burst;
	const uint8_t *port_if = w->pol->port_if;
	const struct flowcache *c = &w->fc;
	const int handoff = w->handoff;	/* once: the stores below may alias it */
	const int router = w->mode == PIPE_ROUTER;
	const struct pipe_policy *pol = w->pol;
	const uint32_t self = w->cfg.worker_id;
	const uint32_t nports = w->nports;
	const uint32_t cache_max_len = w->cache_max_len;
	const int xct = w->express_ct;	/* express frames for express_conntrack too */
	uint32_t nkeys = 0, nprobe = 0, nsyn = 0, nx = 0;

	/* whole arrays, a few wide stores, rather than a byte per packet */
	memset(b->logme, 0, sizeof(b->logme));
	memset(b->rule, 0, sizeof(b->rule));	/* until a rule or a flow says otherwise */
	memset(b->path, PATH_NEW, sizeof(b->path));
	memset(b->nat, 0, sizeof(b->nat));
	memset(b->has_reply, 0, sizeof(b->has_reply));
	memset(b->fcp, 0, sizeof(b->fcp));
	memset(b->fc_taken, 0, sizeof(b->fc_taken));
	for (uint32_t i = 0; i < n; i++) {
		struct pipe_pkt *p = &pkts[i];
		struct pkt_meta *m = &b->meta[i];
		struct pipe_port_stats *ps;
		uint64_t h;
		int kind, fast, syn;
		uint8_t ttl;

		if (p->in_port >= nports)
			p->in_port = 0;	/* a backend bug must not index past */
		ps = &w->stats.port[p->in_port];
		ps->rx_packets++;
		ps->rx_bytes += p->len;
		p->verdict = PIPE_FORWARD;
		p->drop = PIPE_DROP_NONE;
		p->out_port = router ? PIPE_NO_PORT : p->in_port ^ 1;
		if (nic_csum)
			fast = pkt_fast_shape(p->data, p->len) &&
			       ((p->rx_flags & PIPE_RX_IPV4_CSUM_GOOD) ||
				pkt_ipv4_header_ok(p->data + 14, 20));
		else	/* rx_flags not read: backends without it need not set it */
			fast = pkt_fast_frame(p->data, p->len);
		if ((probe || xct) && fast && express_frame(p->data, p->len, router) &&
		    p->len <= cache_max_len &&
		    !(handoff && !p->homed && pol->nat_dnat_count &&
		      pipe_dnat_port_may(pol, (uint16_t)(p->data[36] << 8 | p->data[37])))) {
			/* (a port a DNAT rule may take: the full path finds
			 * the worker by the translated tuple) */
			const uint8_t *f = p->data;
			uint16_t sport = (uint16_t)(f[34] << 8 | f[35]);
			uint16_t dport = (uint16_t)(f[36] << 8 | f[37]);
			uint32_t s4, d4, pw;

			if (__builtin_expect(handoff, 0)) {	/* packet_home's, from the frame */
				w->stats.handed_in += p->homed != 0;
				p->worker = (uint8_t)(p->homed ? self
						  : pipe_home_frame4(w, f, sport, dport));
				if (p->worker != self) {
					p->verdict = PIPE_HANDOFF;
					p->second = PIPE_SECOND_NONE;
					w->stats.handed_off++;
					ps->rx_packets--;	/* the owner counts it */
					ps->rx_bytes -= p->len;
					continue;
				}
			}
			if (probe) {
				memcpy(&s4, f + 26, 4);
				memcpy(&d4, f + 30, 4);
				memcpy(&pw, f + 34, 4);
				h = flowcache_hash_v4(c, s4, d4, pw, f[23], 1, 0, p->in_port);
				b->fch[i] = h;
				b->fcp[i] = 1;
				__builtin_prefetch(flowcache_slot(c, h));
			}
			b->l_x[nx++] = i;
			continue;	/* no meta yet: the express stages */
		}
		if (fast) {
			pkt_fill_fast(p->data, m);
			kind = PKT_IP;
		} else {	/* (a fragment is never `fast`) */
			kind = pkt_parse(p->data, p->len, m);
			if (__builtin_expect(m->fragment == 1, 0) && kind == PKT_IP)
				first_fragment_came(w, p, m);
		}
		switch (kind) {
		case PKT_IP:
			m->key.in_if = port_if[p->in_port];
			m->key.out_if = p->out_port == PIPE_NO_PORT ? PIPE_NO_PORT
								    : port_if[p->out_port];
			m->key.ct_state = RFW_STATE_NEW;
			if (__builtin_expect(handoff, 0)) {
				/* taken from a ring, whether it stays or (a
				 * fragment) goes on: off - in = lost + in flight */
				w->stats.handed_in += p->homed != 0;
				if ((p->worker = (uint8_t)frame_home(w, p, m)) != w->cfg.worker_id) {
					p->verdict = PIPE_HANDOFF;
					p->second = PIPE_SECOND_NONE;
					w->stats.handed_off++;
					ps->rx_packets--;	/* the owner counts it */
					ps->rx_bytes -= p->len;
					break;
				}
			}
			b->l_new[nkeys++] = i;
			if (!probe)
				break;
			/* IPv4 TCP/UDP parsed inline: read the frame, not the m
			 * just written (see flowcache_hash_v4) */
			if (fast) {
				syn = p->data[23] == 6 && (p->data[47] & 0x02);
				ttl = p->data[22];
			} else {
				if (m->fragment || !m->key.has_ports)
					break;
				syn = m->key.proto == 6 && (m->key.tcp_flags & 0x02);
				ttl = p->data[m->l3_off + (m->key.family == 4 ? 8 : 7)];
			}
			if (syn) {
				b->syn_at[nsyn++] = i;
				break;
			}
			/* a router's last hop: the full path answers (and a
			 * packet it does not forward is not cached) */
			if (w->mode == PIPE_ROUTER && ttl <= 1)
				break;
			if (p->len > cache_max_len)
				break;	/* maybe too big for its port: stage_forward checks */
			if (fast) {
				const uint8_t *f = p->data;
				uint32_t s4, d4, pw;

				memcpy(&s4, f + 26, 4);
				memcpy(&d4, f + 30, 4);
				memcpy(&pw, f + 34, 4);
				h = flowcache_hash_v4(c, s4, d4, pw, f[23], 1, 0, p->in_port);
			} else {
				h = flowcache_hash(c, &m->key, p->in_port);
			}
			b->fch[i] = h;
			b->fcp[i] = 1;
			__builtin_prefetch(flowcache_slot(c, h));
			b->l_probe[nprobe++] = i;
			break;
		case PKT_NON_IP:
			/* Bridged unchanged (CLI.md); a router leaves them to
			 * the kernel, which the XDP program hands them to. */
			w->stats.non_ip++;
			if (w->mode == PIPE_ROUTER)
				drop(w, p, PIPE_DROP_NON_IP);
			break;
		default:
			w->stats.parse_reason[m->reason < PKT_REASON_COUNT ? m->reason : 0]++;
			drop(w, p, PIPE_DROP_MALFORMED);
			break;
		}
	}
	b->nprobe = nprobe;
	b->nsyn = nsyn;
	b->nx = nx;
	b->ncand = b->xfound = 0;
	b->syn_slots_made = 0;
	b->nfrag_wait = 0;
	return nkeys;
}

/* One copy of the loop each way: the common one reads no rx_flags, and
 * the probing one tests no `probe` per frame. */
static uint32_t stage_parse(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t n, int probe)
{
	if (probe)
		return w->cfg.rx_csum_flags ? parse_burst(w, pkts, n, 1, 1)
					    : parse_burst(w, pkts, n, 1, 0);
	return w->cfg.rx_csum_flags ? parse_burst(w, pkts, n, 0, 1) : parse_burst(w, pkts, n, 0, 0);
}

/* The wire key of a known flow's packet: its addresses/ports as the
 * flow's other direction expects them. `there` is that direction's
 * tuple (the reply's for an original packet and the other way round). */
static void flow_wire(struct pipe_burst *b, uint32_t i, const struct pipe_pkt *p,
		      const struct pkt_key *there)
{
	const struct pkt_meta *m = &b->meta[i];
	struct pkt_key *wk = &b->wire[i];
	uint16_t sp, dp;

	*wk = m->key;
	wire_ports(m, p->data, &sp, &dp);
	/* the packet must look like the reverse of the other direction;
	 * IPv4 addresses copied and compared at 4 bytes, as ct_flow_tuple
	 * stored them (a wider read would wait for those stores to retire),
	 * the rest of both keys being zero */
	if (m->key.family == 4) {
		memcpy(wk->src, there->dst, 4);
		memcpy(wk->dst, there->src, 4);
	} else {
		memcpy(wk->src, there->dst, 16);
		memcpy(wk->dst, there->src, 16);
	}
	wk->sport = there->dport;
	wk->dport = there->sport;
	b->nat[i] = addr_differs(there->dst, m->key.src, m->key.family) ||
		    addr_differs(there->src, m->key.dst, m->key.family) ||
		    ((m->key.has_ports || sp != m->key.sport) &&
		     (wk->sport != sp || wk->dport != dp));
}

/* A non-first fragment that conntrack found starting inside its first's
 * upper-layer header (an IPv6 one, behind options headers the parser
 * cannot see past): malformed, as the parser calls the ones it can tell
 * (PKT_ERR_FRAG_OVERLAP), counted and dropped with them. */
static __attribute__((cold, noinline)) void fragment_overlaps(struct pipe_worker *w,
							      struct pipe_pkt *p)
{
	w->stats.parse_reason[PKT_ERR_FRAG_OVERLAP]++;
	drop(w, p, PIPE_DROP_MALFORMED);
}

/* A packet conntrack calls invalid (out of window, no flow and cannot
 * start one). Only a policy with a `state: invalid` rule gets to see
 * it; otherwise it is dropped here and counted. Returns 1 when it stays
 * on the new-flow path (written at *slot). */
static uint32_t invalid(struct pipe_worker *w, struct pipe_pkt *p, struct pkt_key *key,
			uint32_t *slot, uint32_t i)
{
	key->ct_state = RFW_STATE_INVALID;
	if (!w->pol->rules_see_invalid) {
		drop(w, p, PIPE_DROP_CT_INVALID);
		w->burst.logme[i] = 2;
		w->burst.rule[i] = 0;
		return 0;
	}
	*slot = i;
	return 1;
}

/* The outer addresses of an ICMP error about a flow, as they leave: an
 * endpoint's address is translated like the flow's packets; a router in
 * the middle keeps its own (RFC 5508 section 4). Routing uses this. */
static void related_wire(struct pipe_burst *b, uint32_t i)
{
	const struct ct_flow_info *fi = &b->flow[i];
	const struct pkt_key *key = &b->meta[i].key;
	const struct pkt_key *o = &fi->orig, *r = &fi->reply;
	struct pkt_key *wk = &b->wire[i];
	int n = addr_len(key->family);

	*wk = *key;
	if (b->res[i].dir == CT_DIR_REPLY) {
		if (!memcmp(key->dst, r->dst, n))
			memcpy(wk->dst, o->src, 16);
		if (!memcmp(key->src, r->src, n))
			memcpy(wk->src, o->dst, 16);
	} else {
		if (!memcmp(key->src, o->src, n))
			memcpy(wk->src, r->dst, 16);
		if (!memcmp(key->dst, o->dst, n))
			memcpy(wk->dst, r->src, 16);
	}
}

/* The policy interface toward addr by the routes, or PIPE_NO_PORT. */
static uint8_t route_if(const struct pipe_policy *pol, uint8_t family, const uint8_t *addr)
{
	uint32_t v = 0;

	if (family == 4 && pol->have_route4)
		v = lpm_lookup(&pol->route4, addr);
	else if (family == 6 && pol->have_route6)
		v = lpm_lookup(&pol->route6, addr);
	if (!v || v > pol->view->policy->route_count)
		return PIPE_NO_PORT;
	return (uint8_t)pol->view->routes[v - 1].interface;
}

/* Reload re-check: the rule the current policy gives the flow's first
 * packet, as rules saw it (after DNAT, before SNAT), seen as a new
 * connection (TCP: a SYN; ICMP: an echo request) on the interfaces the
 * flow's original direction uses (an ICMP error's r->dir is its own
 * direction, against the packet it quotes). */
static uint32_t recheck_rule(const struct pipe_worker *w, const struct pipe_pkt *p,
			     const struct ct_result *r)
{
	const struct pipe_policy *pol = w->pol;
	struct ct_flow_info fi;
	struct pkt_key k;
	int orig = r->dir == CT_DIR_ORIG;

	if (ct_flow_get(w->ct, r->flow, &fi) < 0)
		return 0;
	k = fi.orig;
	memcpy(k.dst, fi.reply.src, 16);
	k.has_ports = k.proto == 6 || k.proto == 17 || k.proto == 132;
	if (k.has_ports) {
		k.dport = fi.reply.sport;
	} else {
		k.sport = k.dport = 0;
		k.icmp_type = k.proto == 1 ? 8 : k.proto == 58 ? 128 : 0;
		k.icmp_code = 0;
	}
	k.tcp_flags = k.proto == 6 ? 0x02 : 0;
	k.ct_state = RFW_STATE_NEW;
	if (w->mode == PIPE_BRIDGE) {
		uint32_t in = orig ? p->in_port : p->in_port ^ 1u;

		k.in_if = pol->port_if[in];
		k.out_if = pol->port_if[in ^ 1u];
	} else {
		k.in_if = orig ? pol->port_if[p->in_port] : route_if(pol, k.family, k.src);
		k.out_if = orig ? route_if(pol, k.family, k.dst) : pol->port_if[p->in_port];
	}
	return cls_lookup(&pol->acl, &k);
}

/* A fragment entry due a re-check: its flow's own re-check decides,
 * made by this fragment when no packet of the flow has made it yet (the
 * sweep cannot: the rules may name the port a packet came in on). 1 when
 * the re-check is still to be made; 0 with *rule when the flow has
 * passed it (its rule of this generation, none due) or is gone. */
static __attribute__((cold, noinline)) int frag_recheck_due(const struct pipe_worker *w,
							    const struct ct_result *r,
							    uint32_t *rule)
{
	struct ct_flow_info fi;

	if (ct_flow_get(w->ct, r->flow, &fi) < 0)
		return 0;
	if (fi.rule >> PIPE_RULE_BITS == w->pol->tag) {
		*rule = fi.rule & PIPE_RULE_MASK;
		return 0;
	}
	return 1;
}

/* A flow made under an earlier policy generation: move it to the rule
 * that continues its own, or, when the reload asked for it, run it
 * through the new rules. A non-first fragment follows its first's flow,
 * so it meets the flow's re-check too: a datagram whose flow the new
 * policy refuses does not pass in pieces until the fragment entry
 * expires. An ICMP error about a flow due its re-check is judged by it
 * too, without settling it. Returns 1 when the packet was dropped (the
 * new policy refuses its flow; the flow ended unless p is an ICMP
 * error). */
static int restamp(struct pipe_worker *w, struct pipe_pkt *p, const struct pkt_meta *m,
		   struct ct_result *r)
{
	const struct pipe_policy *pol = w->pol;
	uint32_t rule;
	int recheck = pipe_flow_restamp_rule(pol, r->rule, &rule);

	if (r->flow == CT_NONE ||
	    (r->kind == CT_FRAG && (!recheck || !frag_recheck_due(w, r, &rule)))) {
		r->rule = rule;		/* fragment entries are short-lived: map only */
		return 0;
	}
	if (recheck) {
		uint32_t now_rule = recheck_rule(w, p, r);

		if (pol->view->rules[now_rule].action != RFW_ACTION_ACCEPT) {
			pol->rules[now_rule].packets++;
			pol->rules[now_rule].bytes += p->len;
			pol->rules[now_rule].last_ns = w->now_ns;
			/* An ICMP error about a flow the new rules refuse does
			 * not pass, but it does not end the flow either: anyone
			 * on the path can send one, and the flow's own next
			 * packet meets the same re-check. */
			if (r->kind != CT_RELATED) {
				ct_remove(w->ct, r->flow);
				w->stats.recheck_ended++;
			}
			drop(w, p, m->key.ct_state == RFW_STATE_INVALID ? PIPE_DROP_CT_INVALID
									 : PIPE_DROP_POLICY);
			return 1;
		}
		if (r->kind != CT_RELATED) {
			rule = now_rule;
			recheck = 0;
		}
	}
	/* an ICMP error does not settle a pending re-check */
	ct_flow_set_rule(w->ct, r->flow,
			 pipe_flow_rule(pol->tag | (recheck ? PIPE_TAG_RECHECK : 0), rule));
	r->rule = rule;
	return 0;
}

/* Router mode: a routed packet's TTL / hop limit, and its IPv4 header
 * checksum updated for it (RFC 1624: TTL is the high byte of a word). */
static inline void ttl_decrement(uint8_t *l3, uint8_t family)
{
	if (family == 4) {
		csum_ttl_decrement(l3);
	} else {
		l3[7]--;		/* IPv6 has no header checksum */
	}
}

/* A flow cache hit: the packet leaves as the full pipeline sent the
 * flow's packet before it (flowcache.h); wire: its IPv4 translation
 * (CT_HINT_OK_NAT), applied as stage_nat applies it, or NULL. */
static inline void cache_finish(struct pipe_worker *w, struct pipe_pkt *p, uint32_t i,
				const struct flowcache_entry *e, const struct ct_hint_wire *wire)
{
	struct pipe_burst *b = &w->burst;
	struct pkt_meta *m = &b->meta[i];
	struct pipe_rule_stats *rs;
	uint32_t r = e->rule & PIPE_RULE_MASK;
	int ttl_done = 0;

	if (wire) {
		/* a router's TTL goes in the same IP checksum update */
		ttl_done = w->mode == PIPE_ROUTER;
		if (csum_rewrite4(p->data, p->len, m, wire->src, wire->sport, wire->dst,
				  wire->dport, ttl_done) < 0) {	/* SCTP */
			ttl_done = 0;
			if (memcmp(wire->src, m->key.src, 4) || wire->sport != m->key.sport)
				csum_rewrite(p->data, p->len, m, CSUM_SRC, wire->src, wire->sport);
			if (memcmp(wire->dst, m->key.dst, 4) || wire->dport != m->key.dport)
				csum_rewrite(p->data, p->len, m, CSUM_DST, wire->dst, wire->dport);
		}
		w->stats.nat_rewrites++;
	}
	if (w->mode == PIPE_ROUTER) {
		p->out_port = e->out_port;
		if (!ttl_done)
			ttl_decrement(p->data + m->l3_off, m->key.family);
		memcpy(p->data, e->mac, 12);	/* next hop's and our own address */
	}
	if (r > w->pol->rule_count)
		r = 0;
	b->rule[i] = r;
	b->path[i] = PATH_FLOW;
	m->key.ct_state = RFW_STATE_ESTABLISHED;
	rs = &w->pol->rules[r];
	rs->packets++;
	rs->bytes += p->len;
	rs->last_ns = w->now_ns;
}

/* The flow cache slots of the burst's TCP SYNs, made at most once a
 * burst and only when it has both SYNs and candidates. */
static void syn_slots(struct pipe_worker *w, const struct pipe_pkt *pkts)
{
	struct pipe_burst *b = &w->burst;

	if (b->syn_slots_made)
		return;
	for (uint32_t x = 0; x < b->nsyn; x++) {
		uint32_t i = b->syn_at[x];

		b->syn_slot[x] = flowcache_index(&w->fc, flowcache_hash(&w->fc, &b->meta[i].key,
									pkts[i].in_port));
	}
	b->syn_slots_made = 1;
}

/* Is packet i (its flow cache slot) behind a SYN of the burst in that slot?
 * syn_slots first. */
static int behind_syn(const struct pipe_burst *b, uint32_t i, uint32_t slot)
{
	for (uint32_t x = 0; x < b->nsyn; x++)
		if (b->syn_slot[x] == slot && b->syn_at[x] < i)
			return 1;
	return 0;
}

/* A burst's TCP SYNs take the full path (one may open a new connection
 * over a closed one), and so does every later packet of the burst in a
 * SYN's slot, so that it meets conntrack in the full path's order, after
 * the SYN (test_flowcache test_syn_then_old_segment). Drops those from
 * the candidates. */
static uint32_t cache_after_syn(struct pipe_worker *w, const struct pipe_pkt *pkts,
				uint32_t ncand)
{
	struct pipe_burst *b = &w->burst;
	uint32_t kept = 0;

	syn_slots(w, pkts);
	for (uint32_t j = 0; j < ncand; j++) {
		uint32_t i = b->l_hint[j];

		if (behind_syn(b, i, flowcache_index(&w->fc, b->fch[i])))
			continue;
		b->l_hint[kept] = i;
		b->hint[kept] = b->hint[j];
		kept++;
	}
	return kept;
}

/* The flow cache, before conntrack: packets whose slot remembers a flow
 * (probes hashed by stage_parse) are checked against that flow
 * (ct_hint_batch) and, if still its, finished here. Returns the packets
 * left for the full pipeline (in l_new); *ninv: packets of a cached flow
 * that TCP tracking refused and that stay on the new-flow path as
 * invalid (in l_inv). */
static uint32_t stage_cache(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t nnew,
			    uint32_t now, uint32_t *ninv)
{
	struct pipe_burst *b = &w->burst;
	const struct flowcache *c = &w->fc;
	const uint32_t epoch = w->fc_epoch, probed = b->nprobe;
	uint32_t ncand = 0, kept = 0, inv = *ninv, hits = 0, taken = 0;
	const struct ct_flow *flows;
	uint32_t max_flows;

	flows = ct_flow_entries(w->ct);
	max_flows = ct_max_flows(w->ct);
	/* The candidates: packets whose slot remembers a flow. */
	for (uint32_t x = 0; x < probed; x++) {
		uint32_t i = b->l_probe[x];
		const struct pipe_pkt *p = &pkts[i];
		const struct flowcache_entry *e;
		uint64_t h = b->fch[i];
		struct ct_hint *hc;

		e = flowcache_slot(c, h);
		if (e->sig != flowcache_sig(h) || e->epoch != epoch || e->in_port != p->in_port)
			continue;
		if (e->flow < max_flows)	/* what ct_hint_batch reads */
			ct_flow_prefetch(flows + e->flow, b->meta[i].key.proto, b->meta[i].key.family);
		hc = &b->hint[ncand];
		hc->pkt.meta = &b->meta[i];
		hc->pkt.frame = p->data;
		hc->pkt.len = p->len;
		hc->flow = e->flow;
		hc->dir = e->dir;
		hc->rule = e->rule;
		b->l_hint[ncand++] = i;
	}
	b->ncand = ncand;
	if (ncand && b->nsyn)
		ncand = cache_after_syn(w, pkts, ncand);
	if (!ncand)
		return nnew;
	ct_hint_batch(w->ct, b->hint, ncand, now);
	for (uint32_t j = 0; j < ncand; j++) {
		uint32_t i = b->l_hint[j];
		uint8_t res = b->hint[j].result;

		if (__builtin_expect(res == CT_HINT_OK || res == CT_HINT_OK_NAT, 1)) {
			cache_finish(w, &pkts[i], i, flowcache_slot(c, b->fch[i]),
				     res == CT_HINT_OK_NAT ? &b->hint[j].wire : NULL);
			b->fc_taken[i] = 1;
			hits++;
		} else if (res == CT_HINT_INVALID) {
			b->cp[i] = b->hint[j].pkt;
			inv += invalid(w, &pkts[i], &b->meta[i].key, &b->l_inv[inv], i);
			b->fc_taken[i] = 1;
			taken++;
		}
	}
	w->stats.flow_cache_hits += hits;
	w->stats.flows_hit += hits;
	*ninv = inv;
	if (hits + taken == nnew)
		return 0;	/* the steady state: every packet a hit */
	for (uint32_t k = 0; k < nnew; k++) {
		uint32_t i = b->l_new[k];

		if (!b->fc_taken[i])
			b->l_new[kept++] = i;
	}
	return kept;
}

/* See flowcache_judge. */
static void fc_judge(struct pipe_worker *w)
{
	const struct pipe_burst *b = &w->burst;

	flowcache_judge(&w->fc_rest, w->fc.fill_bursts, b->nprobe + b->nx, b->ncand + b->xfound);
}

/* An express frame of a known flow, sent: counted under its flow's rule
 * (the value the flow stores). */
static inline void express_count(struct pipe_worker *w, const struct pipe_pkt *p, uint32_t i,
				 uint32_t rule)
{
	struct pipe_burst *b = &w->burst;
	struct pipe_rule_stats *rs;
	uint32_t r = rule & PIPE_RULE_MASK;

	if (r > w->pol->rule_count)
		r = 0;
	b->rule[i] = r;		/* for the capture, which also reads the kind */
	b->meta[i].kind = PKT_IP;
	rs = &w->pol->rules[r];
	rs->packets++;
	rs->bytes += p->len;
	rs->last_ns = w->now_ns;
}

/* An express hit leaves as cache_finish sends a flow-cache hit, from the
 * frame (pkt_fast_frame's offsets) instead of its meta. */
static inline void express_finish(struct pipe_worker *w, struct pipe_pkt *p, uint32_t i,
				  const struct flowcache_entry *e, const struct ct_flow *nat)
{
	uint8_t *f = p->data;
	const int router = w->mode == PIPE_ROUTER;

	if (nat) {
		const uint8_t *src, *dst;
		uint16_t sport, dport;

		ct_flow_wire4(nat, e->flow, e->dir, &src, &dst, &sport, &dport);
		/* a router's TTL goes in the same IP checksum update */
		csum_rewrite4_at(f, 14, 34, f[23], src, sport, dst, dport, router);
		w->stats.nat_rewrites++;
	}
	if (router) {
		p->out_port = e->out_port;
		if (!nat)
			ttl_decrement(f + 14, 4);
		memcpy(f, e->mac, 12);	/* next hop's and our own address */
	}
	express_count(w, p, i, e->rule);
}

/* The next hop express_known resolved last: a burst's frames mostly
 * share one (the default gateway), and the tables do not change within
 * a burst (stage_forward's memo). */
struct express_hop {
	const uint8_t *mac;	/* NULL: none yet */
	uint32_t addr;
	uint8_t port;
};

/* While probing, a frame express_known sent: its flow into the slot its
 * probe missed, as cache_insert puts a known flow the full path sent
 * (and under its take-over rule). The MAC addresses from where they
 * came: read back from the frame, a wide load would wait for the narrow
 * stores just made there to retire. */
static inline void express_learn(struct pipe_worker *w, const struct pipe_pkt *p, uint32_t i,
				 const struct ct_hint4 *x, const uint8_t *dmac,
				 const uint8_t *smac)
{
	struct pipe_burst *b = &w->burst;
	struct flowcache_entry *e = flowcache_slot(&w->fc, b->fch[i]);

	if (e->sig && e->epoch == w->fc_epoch && (++w->fc_evict & 7))
		return;
	e->sig = flowcache_sig(b->fch[i]);
	e->epoch = w->fc_epoch;
	e->flow = x->flow;
	e->dir = x->dir;
	e->rule = x->rule;	/* of this policy: express_known checked its tag */
	e->in_port = p->in_port;
	e->out_port = p->out_port;
	if (dmac) {
		memcpy(e->mac, dmac, 6);
		memcpy(e->mac + 6, smac, 6);
	}
}

/* A frame express_conntrack found the flow of, sent as a flow-cache hit
 * is, its route and neighbour looked up instead of remembered. 1 when
 * sent; 0 leaves it to the full path, which decides and counts: a flow
 * of an older policy (flow_known's restamp), no route or port, no known
 * neighbour (the firewall's own address among them), or too big for its
 * port. What the full path does to a known flow's packet besides (the
 * martian, RPF and broadcast checks) is for new flows only; a TTL of 1
 * and SYNs never come here (express_frame). */
static inline int express_known(struct pipe_worker *w, struct pipe_pkt *p, uint32_t i,
				const struct ct_hint4 *x, const struct ct_flow *flows,
				struct express_hop *memo, const int probe)
{
	const struct pipe_policy *pol = w->pol;
	const int router = w->mode == PIPE_ROUTER;
	const uint8_t *src = NULL, *dst = p->data + 30, *hop, *mac = NULL, *own = NULL;
	uint8_t *f = p->data;
	uint16_t sport = 0, dport = 0;

	if (__builtin_expect(x->rule >> PIPE_RULE_BITS != pol->tag, 0))
		return 0;
	if (x->result == CT_HINT_OK_NAT)
		ct_flow_wire4(flows, x->flow, x->dir, &src, &dst, &sport, &dport);
	if (router) {
		const struct rfw_route *r;
		uint32_t v = pol->have_route4 ? lpm_lookup(&pol->route4, dst) : 0, h4;
		uint8_t port;

		if (!v || v > pol->view->policy->route_count)
			return 0;
		r = &pol->view->routes[v - 1];
		port = pol->if_port[r->interface];
		if (port == PIPE_NO_PORT || p->len - 14 > w->mtu[port])
			return 0;
		hop = r->has_via ? r->via : dst;	/* route_list's next hop */
		memcpy(&h4, hop, 4);
		if (memo->mac && h4 == memo->addr && port == memo->port) {
			mac = memo->mac;
		} else {
			mac = neigh_lookup(&w->neigh, port, 4, hop);
			if (!mac)
				return 0;
			*memo = (struct express_hop){mac, h4, port};
		}
		p->out_port = port;
		own = w->cfg.port[port].mac;
	}
	if (src) {	/* a router's TTL goes in the same IP checksum update */
		csum_rewrite4_at(f, 14, 34, f[23], src, sport, dst, dport, router);
		w->stats.nat_rewrites++;
	} else if (router) {
		ttl_decrement(f + 14, 4);
	}
	if (router) {
		memcpy(f, mac, 6);
		memcpy(f + 6, own, 6);
	}
	express_count(w, p, i, x->rule);
	if (probe)
		express_learn(w, p, i, x, mac, own);
	return 1;
}

/* An express frame that takes the full path after all: its meta, as
 * stage_parse makes it for the same frame. */
static void express_parse(struct pipe_worker *w, struct pipe_pkt *p, uint32_t i)
{
	struct pkt_meta *m = &w->burst.meta[i];
	const uint8_t *port_if = w->pol->port_if;

	pkt_fill_fast(p->data, m);	/* pkt_fast_frame took it */
	m->key.in_if = port_if[p->in_port];
	m->key.out_if = p->out_port == PIPE_NO_PORT ? PIPE_NO_PORT : port_if[p->out_port];
	m->key.ct_state = RFW_STATE_NEW;
}

/* An express frame of a known flow that TCP tracking refused: parsed,
 * and on to the rules that see invalid packets (l_inv). */
static void express_invalid(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t i,
			    uint32_t *ninv)
{
	struct pipe_burst *b = &w->burst;

	express_parse(w, &pkts[i], i);
	b->cp[i] = (struct ct_pkt){&b->meta[i], pkts[i].data, pkts[i].len};
	*ninv += invalid(w, &pkts[i], &b->meta[i].key, &b->l_inv[*ninv], i);
	b->fc_taken[i] = 1;
}

static int flow_known(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t i);

/* The express path: IPv4 TCP/UDP frames that stage_parse did not parse
 * (l_x), in up to three steps. express_cache takes the flow-cache hits;
 * express_conntrack finds the flows of those the cache does not hold
 * (or all, while it rests) in conntrack itself, from the frame's bytes;
 * express_rest parses the frames left and puts them on the full path.
 * Each step leaves b->xleft frames of l_x unfinished (fc_taken 0). */

/* The flow-cache hits, checked against their flow (ct_hint4_batch) and
 * finished from the frame, no meta made. It runs the flow cache's checks
 * (stage_cache), with the same answers; what it saves is the parse into
 * a meta and the lists of the full path. The frames that TCP tracking
 * refused are parsed and join the invalid ones (*ninv, in l_inv). */
static void express_cache(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t now,
			  uint32_t *ninv)
{
	struct pipe_burst *b = &w->burst;
	const struct flowcache *c = &w->fc;
	const uint32_t epoch = w->fc_epoch, nx = b->nx, nsyn = b->nsyn;
	const struct ct_flow *flows = ct_flow_entries(w->ct);
	const uint32_t max_flows = ct_max_flows(w->ct);
	uint32_t ncand = 0, hits = 0, taken = 0, inv = *ninv;

	if (nsyn)		/* a SYN's later packets in its slot: cache_after_syn */
		syn_slots(w, pkts);
	for (uint32_t x = 0; x < nx; x++) {
		uint32_t i = b->l_x[x];
		const struct pipe_pkt *p = &pkts[i];
		const uint8_t *f = p->data;
		const struct flowcache_entry *e;
		uint64_t h = b->fch[i];
		struct ct_hint4 *hc;

		e = flowcache_slot(c, h);
		if (e->sig != flowcache_sig(h) || e->epoch != epoch || e->in_port != p->in_port)
			continue;
		if (__builtin_expect(nsyn != 0, 0) && behind_syn(b, i, flowcache_index(c, h)))
			continue;
		if (e->flow < max_flows)	/* what ct_hint4_batch reads */
			ct_flow_prefetch(flows + e->flow, f[23], 4);
		hc = &b->hint4[ncand];
		hc->frame = f;
		hc->len = p->len;
		hc->flow = e->flow;
		hc->rule = e->rule;
		hc->dir = e->dir;
		b->l_hint4[ncand++] = i;
	}
	b->xfound = ncand;
	ct_hint4_batch(w->ct, b->hint4, ncand, now);
	for (uint32_t j = 0; j < ncand; j++) {
		uint32_t i = b->l_hint4[j];
		uint8_t res = b->hint4[j].result;

		if (__builtin_expect(res == CT_HINT_OK || res == CT_HINT_OK_NAT, 1)) {
			express_finish(w, &pkts[i], i, flowcache_slot(c, b->fch[i]),
				       res == CT_HINT_OK_NAT ? flows : NULL);
			b->fc_taken[i] = 1;
			hits++;
		} else if (res == CT_HINT_INVALID) {
			express_invalid(w, pkts, i, &inv);
			taken++;
		}
	}
	w->stats.flow_cache_hits += hits;
	w->stats.flows_hit += hits;
	*ninv = inv;
	b->xleft = nx - hits - taken;
}

/* The express frames the flow cache did not finish, looked up in
 * conntrack from their bytes (ct_find4_batch: ct_track_batch's answers
 * and accounting for these frames). Those of a known flow are sent from
 * here (express_known, which while probing also puts the flow in the
 * cache) when their route and next hop need no more than a lookup; the
 * other known ones are parsed and go on as known flows (l_xknown,
 * joined to l_known after stage_flow) without stage_flow's key from the
 * meta and general lookup; those TCP tracking refused join the invalid
 * ones. A UDP frame of no live flow (NEW, stage_flow's answer too) is
 * parsed and joins the new flows after stage_flow (l_xnew), and a TCP
 * segment of none (NOFLOW: stage_flow's CT_INVALID, an ACK flood's
 * every frame) joins the invalid ones, neither looked up a second time;
 * with handoff both take the full path, whose second chance may hand
 * them on. Those stay for express_rest, as does every TCP frame whose
 * tuple a SYN of the burst may share (syn_filter_bit): conntrack meets
 * it after the SYN, in the full path's order, as cache_after_syn keeps
 * it for the flow cache. */
static void express_conntrack(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t nnew,
			      uint32_t now, uint32_t *ninv, int probe)
{
	struct pipe_burst *b = &w->burst;
	const struct ct_flow *flows = ct_flow_entries(w->ct);
	struct express_hop memo = {0};
	uint32_t ncand = 0, found = 0, inv = *ninv, taken = 0, sent = 0, noflow = 0;
	uint64_t syns = 0;

	/* the SYNs are among the frames stage_parse parsed (l_new): found
	 * here, not there, so that a burst with no express frame left (a
	 * SYN flood, a burst of flow-cache hits) pays nothing for them */
	for (uint32_t k = 0; k < nnew; k++) {
		const struct pkt_key *key = &b->meta[b->l_new[k]].key;

		if (key->family == 4 && key->proto == 6 && (key->tcp_flags & 0x02))
			syns |= syn_filter_bit(key->src, key->dst, key->sport, key->dport);
	}
	for (uint32_t x = 0; x < b->nx; x++) {
		uint32_t i = b->l_x[x];
		const uint8_t *f = pkts[i].data;

		if (b->fc_taken[i])
			continue;
		if (__builtin_expect(syns != 0, 0) && f[23] == 6) {
			uint16_t sport = (uint16_t)(f[34] << 8 | f[35]);
			uint16_t dport = (uint16_t)(f[36] << 8 | f[37]);

			if (syns & syn_filter_bit(f + 26, f + 30, sport, dport))
				continue;
		}
		b->hint4[ncand].frame = f;
		b->hint4[ncand].len = pkts[i].len;
		b->l_hint4[ncand++] = i;
	}
	ct_find4_batch(w->ct, b->hint4, ncand, now);
	for (uint32_t j = 0; j < ncand; j++) {
		const struct ct_hint4 *x = &b->hint4[j];
		uint32_t i = b->l_hint4[j];
		struct ct_result *r = &b->res[i];

		if (x->result == CT_HINT_MISS)
			continue;
		if (x->result == CT_HINT_INVALID) {
			express_invalid(w, pkts, i, &inv);
			taken++;
			continue;
		}
		if (x->result == CT_HINT_NOFLOW) {
			/* stage_flow's CT_INVALID already, the handoff's second
			 * chance aside, as for NEW below */
			if (w->handoff)
				continue;
			*r = (struct ct_result){.flow = CT_NONE, .dir = CT_DIR_ORIG,
						.state = RFW_STATE_INVALID, .kind = CT_INVALID};
			express_invalid(w, pkts, i, &inv);
			noflow++;
			taken++;
			continue;
		}
		if (x->result == CT_HINT_NEW || x->result == CT_HINT_NEW_EXPIRED) {
			/* stage_flow's answer already (with handoff its second
			 * chance may want the frame: the full path asks) */
			if (w->handoff)
				continue;
			express_parse(w, &pkts[i], i);
			*r = (struct ct_result){.flow = CT_NONE, .dir = CT_DIR_ORIG,
						.state = RFW_STATE_NEW, .kind = CT_NEW,
						.flags = x->result == CT_HINT_NEW ? CT_RF_ABSENT : 0};
			b->cp[i] = (struct ct_pkt){&b->meta[i], pkts[i].data, pkts[i].len};
			b->fc_taken[i] = 1;
			b->l_xnew[b->nxnew++] = i;
			taken++;
			continue;
		}
		if (express_known(w, &pkts[i], i, x, flows, &memo, probe)) {
			b->fc_taken[i] = 1;
			taken++;
			sent++;
			continue;
		}
		express_parse(w, &pkts[i], i);
		*r = (struct ct_result){.flow = x->flow, .rule = x->rule, .dir = x->dir,
					.state = RFW_STATE_ESTABLISHED, .kind = CT_FOUND,
					.flags = x->result == CT_HINT_OK_NAT ? CT_RF_NAT : 0};
		b->fc_taken[i] = 1;
		taken++;
		if (flow_known(w, pkts, i))
			b->l_xknown[found++] = i;
	}
	b->nxknown = found;
	if (noflow)
		ct_count_invalid(w->ct, noflow);
	w->stats.flows_hit += sent;
	w->stats.express_sent += sent;
	*ninv = inv;
	b->xleft -= taken;
}

/* l_new[0..nnew) and add[0..nadd), both in burst order, merged into
 * l_new in burst order; returns its new length. */
static uint32_t new_merge(struct pipe_burst *b, uint32_t nnew, const uint32_t *add, uint32_t nadd)
{
	uint32_t merged = 0, k = 0;

	for (uint32_t x = 0; x < nadd; x++) {
		while (k < nnew && b->l_new[k] < add[x])
			b->l_merge[merged++] = b->l_new[k++];
		b->l_merge[merged++] = add[x];
	}
	while (k < nnew)
		b->l_merge[merged++] = b->l_new[k++];
	memcpy(b->l_new, b->l_merge, merged * sizeof(b->l_new[0]));
	return merged;
}

/* The express frames left: parsed and merged into l_new by burst index,
 * as stage_parse would have put them there; returns its new length. */
static uint32_t express_rest(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t nnew)
{
	struct pipe_burst *b = &w->burst;
	uint32_t left[PIPE_BURST], n = 0;

	for (uint32_t x = 0; x < b->nx; x++) {
		uint32_t i = b->l_x[x];

		if (b->fc_taken[i])
			continue;
		express_parse(w, &pkts[i], i);
		left[n++] = i;
	}
	return new_merge(b, nnew, left, n);
}

/* express_conntrack's new flows (CT_HINT_NEW) joined to what stage_flow
 * left on the new-flow path, by burst index, as if stage_flow had found
 * them so; returns l_new's new length. */
static uint32_t express_new_merge(struct pipe_worker *w, uint32_t nnew)
{
	return new_merge(&w->burst, nnew, w->burst.l_xnew, w->burst.nxnew);
}

/* Remember the known flows the full pipeline forwarded (IPv6 ones only
 * untranslated: their NAT state is in two entries; see ct_hint_batch). */
static void cache_insert(struct pipe_worker *w, const struct pipe_pkt *pkts,
			 const uint32_t *list, uint32_t n)
{
	struct pipe_burst *b = &w->burst;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = list[k];
		const struct pipe_pkt *p = &pkts[i];
		struct flowcache_entry *e;

		if (!b->fcp[i] || b->path[i] != PATH_FLOW || (b->nat[i] && b->meta[i].key.family != 4) ||
		    p->verdict != PIPE_FORWARD)
			continue;	/* IPv6 translations: the full path */
		e = flowcache_slot(&w->fc, b->fch[i]);
		/* Another live flow holds the slot: take it over only now and
		 * then, so that more active flows than slots do not turn every
		 * packet into a store (the few that stay still hit). */
		if (e->sig && e->epoch == w->fc_epoch && (++w->fc_evict & 7))
			continue;
		e->sig = flowcache_sig(b->fch[i]);
		e->epoch = w->fc_epoch;
		e->flow = b->res[i].flow;
		e->dir = b->res[i].dir;
		e->rule = pipe_flow_rule(w->pol->tag, b->rule[i]);
		e->in_port = p->in_port;
		e->out_port = p->out_port;
		if (w->mode == PIPE_ROUTER)
			memcpy(e->mac, p->data, 12);	/* as stage_forward wrote them */
	}
}

/* A packet conntrack found a flow for (or the flow of its first
 * fragment, or of the packet an ICMP error quotes): its path, rule and
 * wire key. 0 when a reload's re-check refused the flow (dropped). The
 * translation is copied here, before stage_ct's creates: an ICMP error or
 * a fragment does not refresh its flow, so a full table may evict that
 * flow for a new one later in the burst (ct.h, ct_create_flow). */
static int flow_known(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t i)
{
	struct pipe_burst *b = &w->burst;
	struct ct_result *r = &b->res[i];
	struct pkt_key *key = &b->meta[i].key;

	if (__builtin_expect(r->rule >> PIPE_RULE_BITS != w->pol->tag, 0) &&
	    restamp(w, &pkts[i], &b->meta[i], r))
		return 0;		/* refused by the re-check */
	b->path[i] = r->kind == CT_RELATED ? PATH_RELATED : r->kind == CT_FRAG ? PATH_FRAG
										: PATH_FLOW;
	w->stats.related += r->kind == CT_RELATED;
	key->ct_state = r->kind == CT_RELATED ? RFW_STATE_RELATED : RFW_STATE_ESTABLISHED;
	b->rule[i] = r->rule & PIPE_RULE_MASK;
	b->nat[i] = 0;	/* wire[i] is written only for flows that translate */
	if (!(r->flags & CT_RF_NAT)) {
		b->path[i] = b->path[i] == PATH_RELATED ? PATH_FLOW : b->path[i];
	} else if (b->path[i] == PATH_RELATED) {
		if (ct_flow_get(w->ct, r->flow, &b->flow[i]) == 0)
			related_wire(b, i);
		else
			b->path[i] = PATH_FLOW;
	} else {
		struct pkt_key there;

		ct_flow_tuple(w->ct, r->flow, r->dir ^ 1, &there);
		flow_wire(b, i, &pkts[i], &there);
	}
	return 1;
}

/* ---- Parked fragments (pipe_frag_take) ---- */

enum park_state { PARK_FREE = 0, PARK_WAITING, PARK_LENT };

/* One frame into the armed capture ring; never waiting (full: counted). */
static void capture_one(struct pktcap_ring *r, const struct pipe_pkt *p, uint32_t rule,
			uint64_t now_ns)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	struct pktcap_rec *rec;

	if (h - atomic_load_explicit(&r->tail, memory_order_acquire) > r->mask) {
		r->full++;
		return;
	}
	rec = &r->rec[h & r->mask];
	rec->mono_ns = now_ns;
	rec->rule = rule;
	rec->len = p->len;
	rec->caplen = p->len < PKTCAP_SNAP ? p->len : PKTCAP_SNAP;
	rec->verdict = p->verdict;
	rec->drop = p->drop;
	rec->in_port = p->in_port;
	rec->out_port = p->out_port;
	memcpy(rec->data, p->data, rec->caplen);
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
}

/* A parked fragment whose first did not come (its time is up, or its
 * slot is wanted): counted received (and handed in, if it was) and
 * dropped as frag-orphan, and seen by a capture of drops like any
 * dropped frame. */
static void parked_drop(struct pipe_worker *w, uint32_t s, uint64_t now_ns)
{
	struct pipe_parked *e = &w->parked[s];
	struct pipe_port_stats *ps = &w->stats.port[e->in_port];

	ps->rx_packets++;
	ps->rx_bytes += e->len;
	ps->dropped++;
	w->stats.handed_in += e->homed != 0;	/* as parse_burst would have */
	w->stats.drop[PIPE_DROP_FRAG_ORPHAN]++;
	if (w->cap && atomic_load_explicit(&w->cap->want, memory_order_relaxed) == PKTCAP_DROPS) {
		const struct pipe_pkt p = {.data = w->park_room[s], .len = e->len,
					   .in_port = e->in_port, .out_port = PIPE_NO_PORT,
					   .verdict = PIPE_DROP, .drop = PIPE_DROP_FRAG_ORPHAN};

		capture_one(w->cap, &p, 0, now_ns);
	}
	e->state = PARK_FREE;
	w->nparked--;
}

/* Every slot taken: the one waiting longest gives its slot up, so that a
 * flood of orphans cannot keep a reordered datagram from waiting (each
 * waits until 64 newer ones came, not behind them). The slot, or
 * PIPE_MAX_PARKED when all are lent out. */
static uint32_t park_evict(struct pipe_worker *w)
{
	uint32_t old = PIPE_MAX_PARKED;

	for (uint32_t s = 0; s < PIPE_MAX_PARKED; s++)
		if (w->parked[s].state == PARK_WAITING &&
		    (old == PIPE_MAX_PARKED || w->parked[s].until_ns < w->parked[old].until_ns))
			old = s;
	if (old < PIPE_MAX_PARKED)
		parked_drop(w, old, w->now_ns);
	return old;
}

/* With handoff: p, which found no flow here, to worker `to` (second:
 * its enum pipe_second there). */
static void hand_on(struct pipe_worker *w, struct pipe_pkt *p, uint32_t to, uint8_t second)
{
	p->verdict = PIPE_HANDOFF;
	p->worker = (uint8_t)to;
	p->second = second;
	w->stats.handed_off++;
	w->stats.port[p->in_port].rx_packets--;	/* the owner counts it */
	w->stats.port[p->in_port].rx_bytes -= p->len;
}

/* A non-first fragment without its first: into a free parking slot, or
 * the oldest one's (or, run again from its own slot, back into it,
 * keeping its deadline); dropped as frag-orphan when every slot is lent
 * out. Counted as received, and as handed in when another worker handed
 * it here, when it is run again or dropped (else each run would count it
 * handed in once more: handed_off - handed_in would go negative). */
static __attribute__((cold, noinline)) void park_or_drop(struct pipe_worker *w,
							 struct pipe_pkt *p,
							 const struct pkt_meta *m)
{
	const uintptr_t at = (uintptr_t)p->data, room = (uintptr_t)w->park_room;
	struct pipe_port_stats *ps = &w->stats.port[p->in_port];
	uint32_t s = 0;
	uint64_t h;

	if (!w->park_room || p->len > PIPE_EXTRA_ROOM || !datagram_hash(w, m, p->data, p->len, &h)) {
		drop(w, p, PIPE_DROP_FRAG_ORPHAN);
		return;
	}
	if (at - room < (uintptr_t)PIPE_MAX_PARKED * PIPE_EXTRA_ROOM) {
		s = (uint32_t)((at - room) / PIPE_EXTRA_ROOM);	/* lent, come back */
		if (w->parked[s].state != PARK_LENT) {
			drop(w, p, PIPE_DROP_FRAG_ORPHAN);
			return;
		}
		w->parked[s].state = PARK_WAITING;
		w->nlent--;
		if (!w->nparked || w->parked[s].until_ns < w->park_next_ns)
			w->park_next_ns = w->parked[s].until_ns;
	} else {
		while (s < PIPE_MAX_PARKED && w->parked[s].state != PARK_FREE)
			s++;
		if (s == PIPE_MAX_PARKED && (s = park_evict(w)) == PIPE_MAX_PARKED) {
			drop(w, p, PIPE_DROP_FRAG_ORPHAN);
			return;
		}
		memcpy(w->park_room[s], p->data, p->len);
		if (!w->nparked || w->now_ns + PIPE_PARK_NS < w->park_next_ns)
			w->park_next_ns = w->now_ns + PIPE_PARK_NS;
		w->parked[s] = (struct pipe_parked){
			.until_ns = w->now_ns + PIPE_PARK_NS, .tag = (uint8_t)(h & 63),
			.state = PARK_WAITING, .in_port = p->in_port, .homed = p->homed,
			.second = p->second, .len = p->len};
		w->stats.frag_parked++;
	}
	w->nparked++;
	p->verdict = PIPE_HELD;
	ps->rx_packets--;	/* counted when it runs again, or is dropped */
	ps->rx_bytes -= p->len;
	w->stats.handed_in -= p->homed != 0;	/* the same: parse_burst counts each run */
}

uint32_t pipe_frag_take(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t max, uint64_t now_ns)
{
	const uint64_t seen = w->parked_seen;
	uint64_t next = UINT64_MAX;
	uint32_t n = 0;
	int all = 1;

	if (!now_ns)
		now_ns = w->now_ns;
	/* the common call, every loop while some wait: nothing to do */
	if (!w->nlent && !seen && now_ns < w->park_next_ns)
		return 0;
	for (uint32_t s = 0; s < PIPE_MAX_PARKED && (w->nparked || w->nlent); s++) {
		struct pipe_parked *e = &w->parked[s];

		if (e->state == PARK_LENT) {	/* run since, and gone on */
			e->state = PARK_FREE;
			w->nlent--;
			continue;
		}
		if (e->state != PARK_WAITING)
			continue;
		if (now_ns >= e->until_ns) {	/* its first never came */
			parked_drop(w, s, now_ns == UINT64_MAX ? w->now_ns : now_ns);
			continue;
		}
		if (!(seen >> e->tag & 1) || n == max) {
			all &= !(seen >> e->tag & 1);
			next = e->until_ns < next ? e->until_ns : next;
			continue;
		}
		pkts[n++] = (struct pipe_pkt){
			.data = w->park_room[s], .len = e->len, .room = PIPE_EXTRA_ROOM,
			.in_port = e->in_port, .homed = e->homed, .second = e->second};
		e->state = PARK_LENT;
		w->nparked--;
		w->nlent++;
		w->stats.frag_resumed++;
	}
	if (all)
		w->parked_seen = 0;
	w->park_next_ns = next;	/* (lent ones: their own next take) */
	return n;
}

uint32_t pipe_parked_count(const struct pipe_worker *w)
{
	return w->nparked + w->nlent;
}

uint64_t pipe_clock_ns(const struct pipe_worker *w)
{
	return w->now_ns;
}

/* Orphans are rare: look back for a first fragment only for them. */
static int first_fragment_before(const struct pipe_burst *b, uint32_t i)
{
	for (uint32_t j = 0; j < i; j++)
		if (b->meta[j].fragment == 1 && b->meta[j].kind == PKT_IP)
			return 1;
	return 0;
}

/* ---- redirects (pipe_worker.redirect) ---- */

static uint64_t redirect_tag(const struct pipe_worker *w, const uint8_t *src, const uint8_t *dst,
			     uint16_t sport, uint16_t dport, uint8_t proto)
{
	/* another key than the homes', so a tag says nothing about a home */
	return home_hash(src, dst, sport, dport, proto, w->cfg.home_seed ^ 0x5ec0dc4a7ce5ull) | 1;
}

static int redirect_put(struct pipe_worker *w, uint64_t tag, uint32_t worker)
{
	uint32_t i;

	if (2 * (w->redirect_count + 1) > w->redirect_mask + 1) {	/* grow: under half full */
		uint32_t slots = w->redirect ? 2 * (w->redirect_mask + 1) : 1024;
		struct pipe_redirect *old = w->redirect, *t = calloc(slots, sizeof(*t));
		uint32_t old_slots = old ? w->redirect_mask + 1 : 0;

		if (!t)
			return -1;
		w->redirect = t;
		w->redirect_mask = slots - 1;
		w->redirect_count = 0;
		for (uint32_t k = 0; k < old_slots; k++)
			if (old[k].tag)
				redirect_put(w, old[k].tag, old[k].worker);
		free(old);
	}
	for (i = (uint32_t)tag & w->redirect_mask; w->redirect[i].tag && w->redirect[i].tag != tag;
	     i = (i + 1) & w->redirect_mask)
		;
	w->redirect_count += !w->redirect[i].tag;
	w->redirect[i] = (struct pipe_redirect){tag, worker};
	return 0;
}

int pipe_redirect_add(struct pipe_worker *w, const uint8_t *src, const uint8_t *dst,
		      uint16_t sport, uint16_t dport, uint8_t proto, uint32_t worker)
{
	return redirect_put(w, redirect_tag(w, src, dst, sport, dport, proto), worker);
}

int pipe_redirect_target(struct pipe_worker *w, uint32_t flow)
{
	if (!w->ct || flow >= ct_max_flows(w->ct))
		return -1;
	if (!w->restored_mark &&
	    !(w->restored_mark = calloc((ct_max_flows(w->ct) + 63) / 64, sizeof(uint64_t))))
		return -1;
	if (!(w->restored_mark[flow >> 6] >> (flow & 63) & 1)) {
		w->restored_mark[flow >> 6] |= 1ull << (flow & 63);
		__atomic_store_n(&w->restored_flows, w->restored_flows + 1, __ATOMIC_RELAXED);
	}
	return 0;
}

int pipe_redirects_needed(const struct pipe_worker *w)
{
	return __atomic_load_n(&w->restored_flows, __ATOMIC_RELAXED) != 0;
}

uint32_t pipe_redirect_count(const struct pipe_worker *w)
{
	return __atomic_load_n(&w->redirect_count, __ATOMIC_RELAXED);
}

void pipe_drop_redirects(struct pipe_worker *w)
{
	free(w->redirect);
	w->redirect = NULL;
	w->redirect_mask = 0;
	__atomic_store_n(&w->redirect_count, 0, __ATOMIC_RELAXED);
	free(w->restored_mark);
	w->restored_mark = NULL;
	__atomic_store_n(&w->restored_flows, 0, __ATOMIC_RELAXED);
}

/* The worker a packet's flow was restored on, from this worker's
 * redirects (by the packet's conntrack tuple), or UINT32_MAX. */
static uint32_t redirect_find(const struct pipe_worker *w, const struct pipe_pkt *p,
			      const struct pkt_meta *m)
{
	struct ct_pkt cp = { .meta = m, .frame = p->data, .len = p->len };
	struct ct_key k;
	uint64_t tag;

	ct_packet_tuple(&cp, &k);
	tag = redirect_tag(w, k.src, k.dst, k.sport, k.dport, k.proto);
	for (uint32_t i = (uint32_t)tag & w->redirect_mask; w->redirect[i].tag;
	     i = (i + 1) & w->redirect_mask)
		if (w->redirect[i].tag == tag)
			return w->redirect[i].worker;
	return UINT32_MAX;
}

/* A packet that found no flow here, where a DNAT rule its tuple matches
 * homed it (its own tuple would have homed it here otherwise), may be a
 * reply of a flow that is not DNAT's (a masqueraded or routed connection
 * whose port a port forward also takes): that flow is where its own
 * tuple says. Worth a look when it cannot start a flow (a TCP segment
 * without SYN, an echo reply, an ICMP error), or could be another flow's
 * reply (dnat_answer_dports: a port an SNAT rule gives out too, or one a
 * forward of more than one address takes; without ports, when a DNAT
 * rule takes such packets, any but an echo request, which only starts
 * a flow). Of a datagram in fragments, the first (the others follow it:
 * fragment_home). */
static inline int answer_maybe_elsewhere(const struct pipe_policy *pol, const struct pkt_meta *m,
					 uint8_t kind)
{
	uint16_t port = m->key.dport;

	if (!pol->nat_dnat_count)
		return 0;
	/* an error about a flow: a DNAT rule homed it by its quote, which
	 * may be a masqueraded flow's on a port a forward also takes */
	if (!m->key.has_ports && kind == CT_INVALID && !m->fragment && icmp_error_message(&m->key))
		return 1;
	if (!m->key.has_ports)
		return pol->dnat_portless && m->fragment != 2 &&
		       (kind == CT_INVALID ||
			(kind == CT_NEW && !echo_request(&m->key)));
	return kind == CT_INVALID ||
	       (kind == CT_NEW && pol->dnat_answer_dports &&
		((pol->dnat_answer_dports[port >> 6] >> (port & 63)) & 1));
}

/* enum pipe_second: a packet that found no flow here is handed to the
 * worker its flow may live on: the one a state file's restore put it on
 * (w->redirect), or, after reloads that changed the DNAT rules
 * (prev_dnat), the one the rules before would have sent it to, where a
 * flow they translated lives, and from there on to those of the rules
 * kept from before them; or that of its own tuple when a DNAT rule homed
 * it here (answer_maybe_elsewhere). One that finds none on the way goes
 * back to start its flow where the rules now send it (and its replies).
 * A PROBE carries the number of the next kept rules to try (none after a
 * redirect or an own-tuple look); workers it would visit twice (its home,
 * the one it is on) are passed over, so it makes at most
 * PIPE_DNAT_KEPT_MAX + 1 hops after its home. So does a first fragment
 * (the worker that hands it on says so, for the others of its datagram,
 * which follow it: first_fragment_goes_on); not the others, which have
 * no ports of their own. Returns 1 when p was handed. */
#define SECOND_NO_MORE 0x0fu	/* a PROBE's next kept rules: none (> PIPE_DNAT_KEPT_MAX) */
static int second_chance(struct pipe_worker *w, struct pipe_pkt *p, uint32_t i)
{
	const struct pipe_dnat_set *d = w->pol->prev_dnat;
	const struct pkt_meta *m = &w->burst.meta[i];
	const uint32_t self = w->cfg.worker_id;
	uint8_t second = p->homed ? p->second : PIPE_SECOND_NONE;
	uint32_t to, next = (uint32_t)second >> PIPE_SECOND_GEN_SHIFT, g = 0;

	second &= PIPE_SECOND_KIND;
	if (m->fragment == 2 || second == PIPE_SECOND_BACK)
		return 0;
	if (second == PIPE_SECOND_PROBE) {
		const uint32_t home = packet_home(w, p, m);

		to = home;
		second = PIPE_SECOND_BACK;
		for (; d; d = d->older, g++) {	/* the kept rules not tried yet */
			uint32_t there;

			if (g < next)
				continue;
			there = home_through(w, p, m, d->view, &d->match, d->dports);
			if (there != self && there != home) {
				to = there;
				second = (uint8_t)(PIPE_SECOND_PROBE | (g + 1) << PIPE_SECOND_GEN_SHIFT);
				break;
			}
		}
		/* the kept rules tried: its own tuple's worker, once */
		if (!d && next != SECOND_NO_MORE &&
		    answer_maybe_elsewhere(w->pol, m, w->burst.res[i].kind)) {
			uint32_t own = home_through(w, p, m, w->pol->view, NULL, NULL);

			if (own != self && own != home) {
				to = own;
				second = (uint8_t)(PIPE_SECOND_PROBE |
						   SECOND_NO_MORE << PIPE_SECOND_GEN_SHIFT);
			}
		}
	} else if (w->redirect && (to = redirect_find(w, p, m)) != UINT32_MAX) {
		second = (uint8_t)(PIPE_SECOND_PROBE | SECOND_NO_MORE << PIPE_SECOND_GEN_SHIFT);	/* restored there */
	} else if (d) {
		for (; d; d = d->older, g++) {	/* the newest kept rules homing it elsewhere */
			to = home_through(w, p, m, d->view, &d->match, d->dports);
			if (to != self)
				break;
		}
		if (d) {
			second = (uint8_t)(PIPE_SECOND_PROBE | (g + 1) << PIPE_SECOND_GEN_SHIFT);
		} else if (answer_maybe_elsewhere(w->pol, m, w->burst.res[i].kind)) {
			/* every kept set homes it here too: its own tuple's
			 * worker, as without kept rules (below) */
			to = home_through(w, p, m, w->pol->view, NULL, NULL);
			second = (uint8_t)(PIPE_SECOND_PROBE | SECOND_NO_MORE << PIPE_SECOND_GEN_SHIFT);
		} else {
			return 0;
		}
	} else if (answer_maybe_elsewhere(w->pol, m, w->burst.res[i].kind)) {
		/* its own tuple's worker: no DNAT entries (an ICMP packet's
		 * identifier or quoted tuple, as packet_home takes them) */
		to = home_through(w, p, m, w->pol->view, NULL, NULL);
		second = (uint8_t)(PIPE_SECOND_PROBE | SECOND_NO_MORE << PIPE_SECOND_GEN_SHIFT);
	} else {
		return 0;
	}
	if (to == self)
		return 0;
	if (m->fragment)
		first_fragment_goes_on(w, p, m, to);
	hand_on(w, p, to, second);
	w->stats.second_chance += (second & PIPE_SECOND_KIND) == PIPE_SECOND_PROBE;
	return 1;
}

/* Conntrack: packets of known flows leave the new-flow path. Returns the
 * number of packets still on it (in l_new); known ones go to l_known. */
static uint32_t stage_flow(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t nnew,
			   uint32_t now, uint32_t *nknown)
{
	struct pipe_burst *b = &w->burst;
	uint32_t kept = 0, known = 0;
	const int handoff = w->handoff;	/* once: the stores below may alias it */

	for (uint32_t k = 0; k < nnew; k++) {
		uint32_t i = b->l_new[k];

		b->cpl[k] = (struct ct_pkt){&b->meta[i], pkts[i].data, pkts[i].len};
	}
	ct_track_batch(w->ct, b->cpl, nnew, now, b->resl);
	for (uint32_t k = 0; k < nnew; k++) {
		uint32_t i = b->l_new[k];
		struct ct_result *r = &b->res[i];
		struct pkt_key *key = &b->meta[i].key;

		*r = b->resl[k];
		if (__builtin_expect(handoff, 0) && (r->kind == CT_NEW || r->kind == CT_INVALID) &&
		    (w->pol->prev_dnat || w->redirect || (pkts[i].homed && pkts[i].second) ||
		     answer_maybe_elsewhere(w->pol, &b->meta[i], r->kind)) &&
		    second_chance(w, &pkts[i], i))
			continue;
		switch (r->kind) {
		case CT_FOUND:
		case CT_RELATED:
		case CT_FRAG:
			if (r->flags & CT_RF_INVALID) {
				b->cp[i] = b->cpl[k];
				kept += invalid(w, &pkts[i], key, &b->l_new[kept], i);
				break;
			}
			if (!flow_known(w, pkts, i))
				break;
			/* a known flow's first fragment: its other fragments
			 * follow it (a new flow's: stage_ct, once accepted),
			 * under its rule as this generation numbers it (a
			 * restamp leaves r->rule a bare number, which the next
			 * fragment would take for an older generation's) */
			if (b->meta[i].fragment == 1 && r->kind == CT_FOUND) {
				ct_frag_accept(w->ct, &b->cpl[k], r->flow, r->dir,
					       pipe_flow_rule(w->pol->tag, b->rule[i]), now);
				first_fragment_accepted(w, &b->meta[i], pkts[i].data, pkts[i].len);
			}
			b->l_known[known++] = i;
			break;
		case CT_FRAG_OVERLAP:
			fragment_overlaps(w, &pkts[i]);
			break;
		case CT_FRAG_ORPHAN:
			if (first_fragment_before(b, i))	/* it may be its first */
				b->l_frag_wait[b->nfrag_wait++] = i;
			else
				park_or_drop(w, &pkts[i], &b->meta[i]);
			break;
		case CT_INVALID:
			b->cp[i] = b->cpl[k];
			kept += invalid(w, &pkts[i], key, &b->l_new[kept], i);
			break;
		default:		/* CT_NEW */
			b->cp[i] = b->cpl[k];
			b->l_new[kept++] = i;
			break;
		}
	}
	*nknown = known;
	return kept;
}

static inline __attribute__((always_inline)) uint32_t
route_list(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t *list, uint32_t n, int known);

/* With handoff: a non-first fragment whose first came before it in the
 * burst and went on from here (second_chance) follows it. 1 when
 * handed. */
static __attribute__((cold, noinline)) int fragment_after_first(struct pipe_worker *w,
								struct pipe_pkt *p,
								const struct pkt_meta *m)
{
	uint32_t to;
	uint64_t h;

	if (!w->handoff || !datagram_hash(w, m, p->data, p->len, &h) ||
	    (to = fragment_follows(w, p, h)) == w->cfg.worker_id)
		return 0;
	hand_on(w, p, to, PIPE_SECOND_NONE);
	return 1;
}

/* The non-first fragments stage_flow found no first for while a first
 * fragment came earlier in the burst: looked up again once stage_ct has
 * accepted the new flows' first fragments. Those that follow a first
 * now join the known flows (routed here, as the others were); those
 * whose first went on from here follow it (fragment_after_first); the
 * rest are orphans. Returns how many joined l_known after its first
 * nknown. */
static uint32_t frags_after_first(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t now,
				  uint32_t nknown)
{
	struct pipe_burst *b = &w->burst;
	uint32_t n = b->nfrag_wait, found = 0;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = b->l_frag_wait[k];

		b->cpl[k] = (struct ct_pkt){&b->meta[i], pkts[i].data, pkts[i].len};
	}
	ct_track_batch(w->ct, b->cpl, n, now, b->resl);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = b->l_frag_wait[k];

		b->res[i] = b->resl[k];
		if (b->res[i].kind == CT_FRAG_OVERLAP) {
			fragment_overlaps(w, &pkts[i]);
		} else if (b->res[i].kind != CT_FRAG) {
			if (!fragment_after_first(w, &pkts[i], &b->meta[i]))
				park_or_drop(w, &pkts[i], &b->meta[i]);
		} else if (b->res[i].flags & CT_RF_INVALID)
			drop(w, &pkts[i], PIPE_DROP_CT_INVALID);
		else if (flow_known(w, pkts, i))
			b->l_frag_wait[found++] = i;
	}
	if (w->mode == PIPE_ROUTER)
		found = route_list(w, pkts, b->l_frag_wait, found, 1);
	for (uint32_t k = 0; k < found; k++)
		b->l_known[nknown + k] = b->l_frag_wait[k];
	return found;
}

/* First DNAT (dnat) or SNAT/masquerade rule whose match takes k, or 0
 * (nat_match.h: a scan for a few, the kind's classifier for many). */
static uint32_t nat_match(const struct pipe_worker *w, const struct pkt_key *k, int dnat)
{
	return nat_match_first(dnat ? &w->pol->dnat_match : &w->pol->snat_match, k);
}

/* DNAT of new flows: the rules will see the translated destination. */
static void stage_dnat(struct pipe_worker *w, uint32_t nnew)
{
	struct pipe_burst *b = &w->burst;
	const int any = w->stateful && w->pol->nat_dnat_count;
	uint32_t nask = 0, at[PIPE_BURST];

	for (uint32_t k = 0; k < nnew; k++) {
		uint32_t i = b->l_new[k];
		const struct pkt_key *key = &b->meta[i].key;

		b->akey[i] = *key;
		if (any && key->ct_state == RFW_STATE_NEW) {	/* b->keys: the ACL stage's next */
			at[nask] = i;
			b->keys[nask++] = key;
		}
	}
	if (!nask)
		return;
	nat_match_batch(&w->pol->dnat_match, b->keys, nask, b->rules);
	for (uint32_t k = 0; k < nask; k++) {
		uint32_t r = b->rules[k], i = at[k];

		if (r) {
			nat_dnat_key(&w->pol->view->nat_rules[r], b->keys[k], &b->akey[i]);
			b->nat[i] = 1;
		}
	}
}

/* An IPv4 directed broadcast: a new packet to the broadcast address of
 * a subnet on one of our ports (an on-link route of /30 or shorter), which
 * a router does not forward (RFC 2644: a smurf amplifier otherwise, as
 * the kernel's neighbour entry for it is the broadcast MAC). */
static inline int directed_broadcast(const struct rfw_route *r, const struct pkt_key *key)
{
	uint32_t host;

	if (key->family != 4 || r->has_via || r->len > 30)
		return 0;
	host = 0xffffffffu >> r->len;
	return (rd32(key->dst) & host) == host;
}

/* defaults.rpf for a new packet (its source as it came): loose, some
 * route leads back to the source; strict, the route to it leaves through
 * the port the packet came in on (RFC 3704 feasible paths are not
 * modelled: one route per prefix). 1 when it passes. */
static int reverse_path_ok(const struct pipe_worker *w, const struct pipe_pkt *p,
			   const struct pkt_key *k, uint8_t rpf)
{
	const struct pipe_policy *pol = w->pol;
	uint32_t v = 0;

	if (k->family == 4 && pol->have_route4)
		v = lpm_lookup(&pol->route4, k->src);
	else if (k->family == 6 && pol->have_route6)
		v = lpm_lookup(&pol->route6, k->src);
	if (!v || v > pol->view->policy->route_count)
		return 0;
	return rpf == RFW_RPF_LOOSE ||
	       pol->if_port[pol->view->routes[v - 1].interface] == p->in_port;
}

/* Router mode: the egress port and next hop, by the (translated)
 * destination: a new flow's after DNAT (akey), a known flow's as it
 * leaves (wire, written only when the flow translates; its frame's own
 * key otherwise).
 * known: a constant in each caller (inlined, so the new-flow checks
 * cost the known flows nothing). */
static inline __attribute__((always_inline)) uint32_t
route_list(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t *list, uint32_t n, int known)
{
	struct pipe_burst *b = &w->burst;
	const struct pipe_policy *pol = w->pol;
	const uint8_t rpf = pol->view->policy->rpf;
	const uint32_t nroutes = pol->view->policy->route_count;
	uint32_t kept = 0;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = list[k], v = 0;
		struct pkt_key *key = !known ? &b->akey[i]
				    : b->nat[i] || b->path[i] == PATH_RELATED ? &b->wire[i]
									     : &b->meta[i].key;
		const struct pkt_key *came = &b->meta[i].key;
		const struct rfw_route *r;
		uint8_t port;

		/* a new packet's addresses as it came (a known flow's were
		 * when it began) */
		if (!known && martian(came->family, came->src, came->dst)) {
			drop(w, &pkts[i], PIPE_DROP_MARTIAN);
			continue;
		}
		if (!known && rpf && !reverse_path_ok(w, &pkts[i], came, rpf)) {
			drop(w, &pkts[i], PIPE_DROP_RPF);
			continue;
		}
		if (key->family == 4 && pol->have_route4)
			v = lpm_lookup(&pol->route4, key->dst);
		else if (key->family == 6 && pol->have_route6)
			v = lpm_lookup(&pol->route6, key->dst);
		if (!v || v > nroutes) {
			drop(w, &pkts[i], PIPE_DROP_NO_ROUTE);
			continue;
		}
		r = &pol->view->routes[v - 1];
		port = pol->if_port[r->interface];
		if (port == PIPE_NO_PORT) {
			drop(w, &pkts[i], PIPE_DROP_NO_PORT);
			continue;
		}
		if (!known && directed_broadcast(r, key)) {
			drop(w, &pkts[i], PIPE_DROP_MARTIAN);
			continue;
		}
		pkts[i].out_port = port;
		key->out_if = (uint8_t)r->interface;
		memcpy(b->nexthop[i], r->has_via ? r->via : key->dst, 16);
		list[kept++] = i;
	}
	return kept;
}

/* The rules, over the new-flow path. Rejects become replies. Returns the
 * accepted packets, left in l_new. */
static uint32_t stage_acl(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t nnew)
{
	struct pipe_burst *b = &w->burst;
	const struct rfw_rule *rules = w->pol->view->rules;
	struct pipe_rule_stats *counts = w->pol->rules;
	uint32_t kept = 0;

	for (uint32_t k = 0; k < nnew; k++)
		b->keys[k] = &b->akey[b->l_new[k]];
	cls_lookup_batch(&w->pol->acl, b->keys, nnew, b->rules);
	for (uint32_t k = 0; k < nnew; k++) {
		uint32_t i = b->l_new[k], r = b->rules[k];
		struct pipe_pkt *p = &pkts[i];
		const struct pkt_meta *m = &b->meta[i];
		uint8_t action = rules[r].action;
		uint32_t len;

		b->rule[i] = r;
		counts[r].packets++;
		counts[r].bytes += p->len;
		counts[r].last_ns = w->now_ns;
		b->logme[i] = (uint8_t)(rules[r].flags & RFW_RULE_LOG);
		if (action == RFW_ACTION_ACCEPT) {
			b->l_new[kept++] = i;
			continue;
		}
		drop(w, p, m->key.ct_state == RFW_STATE_INVALID ? PIPE_DROP_CT_INVALID
								 : PIPE_DROP_POLICY);
		if (action != RFW_ACTION_REJECT)
			continue;
		/* reject: TCP RST, else ICMP unreachable from the address the
		 * packet was sent to (the sender sees its peer refuse). */
		if (!reply_allowed(w))
			continue;
		len = m->key.proto == 6 ? reply_tcp_rst(p->data, p->len, p->room, m)
					: reply_icmp_error(p->data, p->len, p->room, m,
							   REPLY_UNREACHABLE, m->key.dst);
		if (len) {
			p->len = len;
			p->verdict = PIPE_BOUNCE;
			w->stats.replies++;
		}
	}
	return kept;
}

/* Rules with `limit`: over the bucket, the packet is dropped. */
/* Packets of one flow: the tuple and ICMP type (the bytes of pkt_key up
 * to icmp_code). */
static inline int same_flow_tuple(const struct pkt_key *a, const struct pkt_key *b)
{
	return !memcmp(a, b, offsetof(struct pkt_key, icmp_code));
}

/* A stateful policy's limit counts new flows (POLICY.md): a packet whose
 * flow an earlier packet of this burst was let through for is that
 * flow's, not another new one (in the next burst it would meet its flow
 * and no limit). */
static int flow_admitted_earlier(const struct pipe_burst *b, const struct rfw_rule *rules,
				 uint32_t kept, uint32_t i)
{
	for (uint32_t j = 0; j < kept; j++) {
		uint32_t e = b->l_new[j];

		if (rules[b->rule[e]].limit && same_flow_tuple(&b->meta[e].key, &b->meta[i].key))
			return 1;
	}
	return 0;
}

static uint32_t stage_limit(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t nnew,
			    uint64_t now_ns)
{
	struct pipe_burst *b = &w->burst;
	const struct rfw_rule *rules = w->pol->view->rules;
	uint32_t kept = 0;

	for (uint32_t k = 0; k < nnew; k++) {
		uint32_t i = b->l_new[k], r = b->rule[i];

		if (rules[r].limit && !(w->stateful && flow_admitted_earlier(b, rules, kept, i)) &&
		    !rl_allow(&w->pol->rl, rules[r].limit, &b->meta[i].key, now_ns)) {
			w->pol->limited[r]++;
			drop(w, &pkts[i], PIPE_DROP_RATE_LIMIT);
			continue;
		}
		b->l_new[kept++] = i;
	}
	return kept;
}

static struct nat_pool *snat_pool_for(struct pipe_worker *w, uint32_t r, uint8_t out_port)
{
	int32_t idx = w->pol->snat_pool[r];

	if (w->pol->view->nat_rules[r].kind == RFW_NAT_MASQUERADE)
		idx = out_port < w->nports ? w->pol->masq_pool[r * w->nports + out_port] : -1;
	return idx < 0 ? NULL : &w->pools[idx]->pool;
}

/* A burst's filter of 64-bit hashes: no false negatives; with two
 * hashes per flow and 64 flows, at most one false positive in eight. */
#define FILTER_WORDS 16u
static inline uint32_t filter_bit(uint64_t h)
{
	return (uint32_t)(h >> 20) & (FILTER_WORDS * 64 - 1);
}

static inline int filter_has(const uint64_t *f, uint64_t h)
{
	uint32_t b = filter_bit(h);

	return (int)(f[b / 64] >> (b % 64) & 1);
}

static inline void filter_add(uint64_t *f, uint64_t h)
{
	uint32_t b = filter_bit(h);

	f[b / 64] |= 1ull << (b % 64);
}

/* The first 4 bytes of two addresses (an IPv4 address whole) are equal:
 * one compare where a full one would branch on the family. */
static inline int addr_head_equal(const uint8_t *a, const uint8_t *b)
{
	uint32_t x, y;

	memcpy(&x, a, 4);
	memcpy(&y, b, 4);
	return x == y;
}

/* A new SNAT flow whose pair has its source's own address (its pool has
 * it): its tuples will not show that it holds the pair, so it is marked
 * (release_nat). */
static __attribute__((cold, noinline)) void snat_own_address_check(struct pipe_worker *w,
								  const struct pipe_burst *b,
								  uint32_t i, uint32_t flow)
{
	if (!addr_differs(b->reply[i].dst, b->akey[i].src, b->akey[i].family))
		pipe_snat_own_address(w, flow);
}

struct reclaim_pick {
	const struct pipe_worker *w;
	const struct nat_pool *pool;
};

/* ct_evict_scan's pick for snat_reclaim: a flow holding a pair of the
 * pool (its reply's destination, as release_nat finds it). */
static int holds_pool_pair(void *ctx, const struct ct_table *t, uint32_t flow)
{
	const struct reclaim_pick *pick = ctx;
	struct ct_flow_info fi;

	return ct_flow_get(t, flow, &fi) == 0 && fi.orig.family == pick->pool->family &&
	       snat_holds_pair(&fi, snat_own_address(pick->w, flow)) &&
	       nat_pair_slot(pick->pool, fi.reply.dst, fi.reply.dport) != NAT_SLOT_NONE;
}

/* A pool whose share of ports is all taken gets one back from a flow
 * that early drop could evict (not established, not touched this second;
 * ct.h): otherwise a host scanning through masquerade holds every port
 * for tcp_syn's 30 s and no other connection gets out. A bounded look,
 * PIPE_NAT_RECLAIM_LOOK entries from where the last one stopped, only
 * when the pool is full. 1 when a port came free. */
static int snat_reclaim(struct pipe_worker *w, struct nat_pool *pool, const struct pkt_key *k,
			uint32_t now)
{
	struct reclaim_pick pick = {w, pool};

	if (!nat_pool_full(pool) || k->family != pool->family ||
	    !ct_evict_scan(w->ct, &w->reclaim_cursor, PIPE_NAT_RECLAIM_LOOK, now, holds_pool_pair,
			   &pick))
		return 0;
	pool->stats.failures--;		/* the first try's: it gets a port after all */
	pool->stats.reclaimed++;
	return 1;
}

/* New accepted flows: SNAT choice and the conntrack entry. */
static uint32_t stage_ct(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t nnew, uint32_t now)
{
	struct pipe_burst *b = &w->burst;
	uint32_t kept = 0, mid = 0;

	/* Pass 1: SNAT choices, and the index buckets both tuples of each
	 * new flow go into prefetched while the rest of the burst is
	 * translated (the reply tuple's bucket is otherwise a memory miss
	 * inside every create). */
	for (uint32_t k = 0; k < nnew; k++) {
		uint32_t i = b->l_new[k], r;
		struct pkt_meta *m = &b->meta[i];
		struct nat_pool *pool = NULL;
		struct nat_result nr;

		b->wire[i] = b->akey[i];
		b->creating[i] = 0;
		b->snat_slot[i] = NAT_SLOT_NONE;
		if (m->key.ct_state != RFW_STATE_NEW) {	/* invalid, accepted statelessly */
			b->l_new[mid++] = i;
			continue;
		}
		r = w->pol->nat_entry_count > w->pol->nat_dnat_count ? nat_match(w, &b->akey[i], 0) : 0;
		if (r) {
			const struct rfw_nat_rule *rule = &w->pol->view->nat_rules[r];

			pool = snat_pool_for(w, r, pkts[i].out_port);
			if (!pool || (nat_translate_key(pool, rule, &b->akey[i], &nr) < 0 &&
				      (!snat_reclaim(w, pool, &b->akey[i], now) ||
				       nat_translate_key(pool, rule, &b->akey[i], &nr) < 0))) {
				drop(w, &pkts[i], PIPE_DROP_NAT_FAILED);
				continue;
			}
			/* replies come back to the translated tuple */
			b->wire[i] = nr.wire;
			b->reply[i] = nr.reply;
			b->snat_slot[i] = nr.slot;
			b->nat[i] = 1;
		} else if (b->nat[i]) {	/* DNAT alone */
			if (!m->key.has_ports)	/* an echo's identifier, as conntrack keys it */
				wire_ports(m, pkts[i].data, &b->wire[i].sport, &b->wire[i].dport);
			nat_reply_key(&b->wire[i], &b->reply[i]);
		}
		ct_create_prefetch(w->ct, &b->cp[i], b->nat[i] ? &b->reply[i] : NULL,
				   &b->create_hint[i]);
		b->snat_pool[i] = pool;
		b->creating[i] = 1;
		b->l_new[mid++] = i;
	}
	/* Pass 2: the flows. A create may skip probing for a flow on its own
	 * tuple when the lookup found none and no create of this burst has
	 * made one since: `made` is a filter of the tuple hashes (both
	 * directions) of the flows created so far in this burst, so a second
	 * packet of a new flow, or the first packet of its reply, still
	 * probes and finds the flow the earlier one made. */
	uint64_t made[FILTER_WORDS] = {0};

	for (uint32_t k = 0; k < mid; k++) {
		uint32_t i = b->l_new[k], flow = CT_NONE;
		struct pkt_meta *m = &b->meta[i];
		struct nat_pool *pool = b->snat_pool[i];
		uint32_t slot = b->snat_slot[i];
		struct ct_create_hint *hint = &b->create_hint[i];
		int st;

		if (!b->creating[i]) {
			b->l_new[kept++] = i;
			continue;
		}
		hint->absent = b->res[i].kind == CT_NEW && (b->res[i].flags & CT_RF_ABSENT) &&
			       hint->valid && !filter_has(made, hint->orig_hash);
		st = ct_create_flow_hinted(w->ct, &b->cp[i], b->nat[i] ? &b->reply[i] : NULL,
					   pipe_flow_rule(w->pol->tag, b->rule[i]), now, &flow, hint);
		if (st == CT_CREATED && hint->valid) {
			filter_add(made, hint->orig_hash);
			filter_add(made, hint->reply_hash);
		}
		if (slot != NAT_SLOT_NONE && st == CT_CREATED &&
		    __builtin_expect(addr_head_equal(b->reply[i].dst, b->akey[i].src), 0))
			snat_own_address_check(w, b, i, flow);
		if (st == CT_REFUSED_FULL || st == CT_REFUSED_INVALID) {
			if (pool && slot != NAT_SLOT_NONE)
				nat_release(pool, slot);
			drop(w, &pkts[i], st == CT_REFUSED_FULL ? PIPE_DROP_CT_FULL
								: PIPE_DROP_CT_INVALID);
			continue;
		}
		if (st == CT_EXISTS && pool && slot != NAT_SLOT_NONE) {
			/* an earlier packet of this burst made the flow: use its
			 * translation, give ours back */
			struct pkt_key there;

			nat_release(pool, slot);
			ct_flow_tuple(w->ct, flow, CT_DIR_REPLY, &there);
			flow_wire(b, i, &pkts[i], &there);
		}
		if (m->fragment == 1) {
			ct_frag_accept(w->ct, &b->cp[i], flow, CT_DIR_ORIG,
				       pipe_flow_rule(w->pol->tag, b->rule[i]), now);
			first_fragment_accepted(w, m, pkts[i].data, pkts[i].len);
		}
		b->l_new[kept++] = i;
	}
	return kept;
}

/* ICMP errors about a NATed flow: the quoted packet and the outer
 * addresses are mapped like the flow's packets (RFC 5508 section 4). */
static void rewrite_related(struct pipe_burst *b, uint32_t i, struct pipe_pkt *p)
{
	const struct ct_flow_info *fi = &b->flow[i];
	const struct pkt_meta *m = &b->meta[i];
	const struct pkt_key *o = &fi->orig, *r = &fi->reply;
	int n = addr_len(o->family);

	if (b->res[i].dir == CT_DIR_REPLY) {
		/* quoted: a packet we sent as R.dst -> R.src; give it back O's */
		csum_rewrite_icmp_inner(p->data, p->len, m, CSUM_SRC, o->src, o->sport);
		csum_rewrite_icmp_inner(p->data, p->len, m, CSUM_DST, o->dst, o->dport);
		if (!memcmp(m->key.dst, r->dst, n))
			csum_rewrite(p->data, p->len, m, CSUM_DST, o->src, 0);
		if (!memcmp(m->key.src, r->src, n))
			csum_rewrite(p->data, p->len, m, CSUM_SRC, o->dst, 0);
	} else {
		csum_rewrite_icmp_inner(p->data, p->len, m, CSUM_SRC, r->src, r->sport);
		csum_rewrite_icmp_inner(p->data, p->len, m, CSUM_DST, r->dst, r->dport);
		if (!memcmp(m->key.src, o->src, n))
			csum_rewrite(p->data, p->len, m, CSUM_SRC, r->dst, 0);
		if (!memcmp(m->key.dst, o->dst, n))
			csum_rewrite(p->data, p->len, m, CSUM_DST, r->src, 0);
	}
}

/* Apply the translations: incremental checksums (RFC 1624) in csum.c. */
/* Router mode: is the IP packet longer than its egress port's MTU? */
/* What counts against the MTU is the IP datagram, not the frame: bytes
 * after it (a trailer) go, as a Linux router trims them, and only then
 * is the datagram compared (p->data's datagram ends within the frame:
 * pkt_parse). */
static __attribute__((noinline)) int datagram_too_big(const struct pipe_worker *w,
						       struct pipe_pkt *p, const struct pkt_meta *m)
{
	p->len = pkt_ip_end(p->data, p->len, m);
	return p->len - m->l3_off > w->mtu[p->out_port];
}

static inline int too_big_for_port(const struct pipe_worker *w, struct pipe_pkt *p,
				   const struct pkt_meta *m)
{
	return p->len - m->l3_off > w->mtu[p->out_port] && datagram_too_big(w, p, m);
}

/* A packet longer than its egress port's MTU: fragmentation needed (IPv4
 * with DF) or packet too big (IPv6) from the ingress port's address,
 * with the MTU, so the sender's path MTU discovery learns it; IPv4
 * without DF is cut into fragments (RFC 1812 5.2.6) after NAT
 * (stage_fragment), returning 1: it goes on. Dropped as too-big: the
 * rest, and a datagram that cannot be cut (IP options) or whose pieces
 * find no room in pipe_extra's. */
static int answer_too_big(struct pipe_worker *w, struct pipe_pkt *p, uint32_t i)
{
	struct pipe_burst *b = &w->burst;
	struct pkt_meta *m = &b->meta[i];
	const uint32_t mtu = w->mtu[p->out_port];
	const uint8_t *from = reply_source(w, p->in_port, m->key.family);
	uint32_t len;

	if (m->key.family == 4 && !(p->data[m->l3_off + 6] & 0x40)) {
		uint32_t n = fragment_count(p->data, p->len, m->l3_off, mtu);

		if (n && mtu + m->l3_off <= PIPE_EXTRA_ROOM &&
		    w->nextra + b->cut_extra + n - 1 <= PIPE_MAX_EXTRA) {
			b->l_cut[b->ncut++] = i;
			b->cut_extra += n - 1;	/* promised */
			return 1;
		}
		drop(w, p, PIPE_DROP_TOO_BIG);
		return 0;
	}
	drop(w, p, PIPE_DROP_TOO_BIG);
	if (!from)
		return 0;
	pkt_parse(p->data, p->len, m);	/* as for time-exceeded */
	len = reply_icmp_too_big(p->data, p->len, p->room, m, from, mtu);
	if (len) {
		p->len = len;
		p->verdict = PIPE_BOUNCE;
		w->stats.replies++;
	}
	return 0;
}

/* Router mode, between stage_forward and NAT: the head of each packet
 * stage_forward will hold (its IP header and start as it arrived), for
 * the host unreachable if its next hop never resolves. A pass of its own
 * and out of line: a copy of variable length inside stage_forward's loop
 * cost every packet its registers, and inlined here the flow cache's hits
 * (+2 to +3 instructions a packet either way, callgrind). */
__attribute__((cold, noinline)) static void hold_heads(struct pipe_worker *w,
							 const struct pipe_pkt *pkts)
{
	struct pipe_burst *b = &w->burst;

	for (uint32_t k = 0; k < b->nhold; k++) {
		const struct pipe_pkt *p = &pkts[b->l_hold[k]];
		uint32_t l3 = b->meta[b->l_hold[k]].l3_off, head = p->len - l3;

		head = head < PIPE_HOLD_HEAD ? head : PIPE_HOLD_HEAD;
		memcpy(b->hold_head[k], p->data + l3, head);
		b->hold_head_len[k] = (uint16_t)head;
	}
}

/* Router mode, after NAT (so the copy is as it will leave): the packets
 * stage_forward found no MAC for, copied into free held slots until
 * their next hop is resolved (pipe_held_poll). */
static void stage_hold(struct pipe_worker *w, struct pipe_pkt *pkts, uint64_t now_ns)
{
	struct pipe_burst *b = &w->burst;
	uint32_t slot = 0;

	for (uint32_t k = 0; k < b->nhold; k++) {
		uint32_t i = b->l_hold[k];
		struct pipe_pkt *p = &pkts[i];
		struct pipe_held *h;

		if (p->verdict != PIPE_FORWARD)
			continue;
		while (slot < PIPE_MAX_HELD && w->held[slot].until_ns)
			slot++;
		if (slot == PIPE_MAX_HELD || p->len > PIPE_EXTRA_ROOM) {
			drop(w, p, PIPE_DROP_NO_NEIGH);
			continue;
		}
		h = &w->held[slot];
		memcpy(w->held_room[slot], p->data, p->len);
		h->until_ns = (now_ns ? now_ns : 1) + PIPE_HELD_NS;
		h->len = p->len;
		h->l3_off = b->meta[i].l3_off;
		memcpy(h->hop, b->nexthop[i], 16);
		h->in_port = p->in_port;
		h->out_port = p->out_port;
		h->family = b->meta[i].key.family;
		h->head_len = b->hold_head_len[k];
		memcpy(w->held_head[slot], b->hold_head[k], h->head_len);
		w->nheld++;
		w->stats.held++;
		p->verdict = PIPE_HELD;
	}
	b->nhold = 0;
}

/* A held packet whose next hop never resolved: its sender gets a host
 * (IPv6: address) unreachable from the port it came in on, as a router
 * that gave up on ARP/ND sends (RFC 1812 4.3.3.1, RFC 4443 3.1), quoting
 * the packet as it arrived (its head kept from before NAT), under the
 * reply limit. */
static uint32_t host_unreachable(struct pipe_worker *w, const struct pipe_held *h, uint32_t slot,
				 uint64_t now_ns)
{
	const uint8_t *from = reply_source(w, h->in_port, h->family);
	struct pkt_meta m;
	uint32_t len;
	uint8_t *f;

	if (!from || w->nextra >= PIPE_MAX_EXTRA)
		return 0;
	w->now_ns = now_ns;
	f = w->extra_room[w->nextra];
	memcpy(f, w->held_room[slot], h->len);
	memcpy(f + h->l3_off, w->held_head[slot], h->head_len);
	if (pkt_parse(f, h->len, &m) != PKT_IP || !reply_allowed(w))
		return 0;
	len = reply_icmp_error(f, h->len, PIPE_EXTRA_ROOM, &m, REPLY_HOST_UNREACHABLE, from);
	if (!len)
		return 0;
	w->extra[w->nextra++] = (struct pipe_pkt){
		.data = f, .len = len, .room = PIPE_EXTRA_ROOM, .in_port = h->in_port,
		.out_port = h->in_port, .verdict = PIPE_FORWARD};
	w->stats.port[h->in_port].tx_packets++;
	w->stats.port[h->in_port].tx_bytes += len;
	w->stats.replies++;
	return 1;
}

uint32_t pipe_held_poll(struct pipe_worker *w, uint64_t now_ns)
{
	uint32_t moved = 0;

	for (uint32_t s = 0; w->nheld && s < PIPE_MAX_HELD; s++) {
		struct pipe_held *h = &w->held[s];
		const uint8_t *mac;
		uint8_t *f;

		if (!h->until_ns)
			continue;
		mac = neigh_lookup(&w->neigh, h->out_port, h->family, h->hop);
		if (mac && w->nextra < PIPE_MAX_EXTRA) {
			f = w->extra_room[w->nextra];
			memcpy(f, w->held_room[s], h->len);
			ttl_decrement(f + h->l3_off, h->family);
			memcpy(f, mac, 6);
			memcpy(f + 6, w->cfg.port[h->out_port].mac, 6);
			w->extra[w->nextra++] = (struct pipe_pkt){
				.data = f, .len = h->len, .room = PIPE_EXTRA_ROOM,
				.in_port = h->in_port, .out_port = h->out_port,
				.verdict = PIPE_FORWARD};
			w->stats.port[h->out_port].tx_packets++;
			w->stats.port[h->out_port].tx_bytes += h->len;
			w->stats.held_sent++;
			moved++;
		} else if (mac || !now_ns || now_ns < h->until_ns) {
			continue;	/* no room yet, or still waiting */
		} else {
			w->stats.drop[PIPE_DROP_NO_NEIGH]++;	/* never resolved */
			w->stats.port[h->in_port].dropped++;
			if (now_ns != UINT64_MAX)	/* not for a worker that stops */
				moved += host_unreachable(w, h, s, now_ns);
		}
		h->until_ns = 0;
		w->nheld--;
	}
	return moved;
}

/* Router mode, after NAT: the datagrams stage_forward found too big and
 * without DF, cut into fragments (fragment.h), the first in place, the
 * others into pipe_extra's frames. The L4 checksum was made over the
 * whole datagram, so NAT's update of it holds for the fragments too. */
static void stage_fragment(struct pipe_worker *w, struct pipe_pkt *pkts)
{
	struct pipe_burst *b = &w->burst;

	for (uint32_t k = 0; k < b->ncut; k++) {
		uint32_t i = b->l_cut[k];
		struct pipe_pkt *p = &pkts[i];
		const uint32_t l3 = b->meta[i].l3_off, mtu = w->mtu[p->out_port];
		uint32_t n = fragment_count(p->data, p->len, l3, mtu), lens[PIPE_MAX_EXTRA];
		uint8_t *room[PIPE_MAX_EXTRA];

		if (p->verdict != PIPE_FORWARD || !n || w->nextra + n - 1 > PIPE_MAX_EXTRA)
			continue;	/* (promised in stage_forward: not expected) */
		for (uint32_t j = 0; j + 1 < n; j++)
			room[j] = w->extra_room[w->nextra + j];
		p->len = fragment_ipv4(p->data, l3, mtu, room, lens);
		for (uint32_t j = 0; j + 1 < n; j++) {
			w->extra[w->nextra++] = (struct pipe_pkt){
				.data = room[j], .len = lens[j], .room = PIPE_EXTRA_ROOM,
				.in_port = p->in_port, .out_port = p->out_port,
				.verdict = PIPE_FORWARD};
			w->stats.port[p->out_port].tx_packets++;	/* account_out counts the first */
			w->stats.port[p->out_port].tx_bytes += lens[j];
		}
		w->stats.fragmented++;
		w->stats.fragments += n;
	}
	b->ncut = 0;
	b->cut_extra = 0;
}

static void stage_nat(struct pipe_worker *w, struct pipe_pkt *pkts, const uint32_t *list,
		      uint32_t n)
{
	struct pipe_burst *b = &w->burst;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = list[k];
		struct pipe_pkt *p = &pkts[i];
		const struct pkt_meta *m = &b->meta[i];
		const struct pkt_key *wk = &b->wire[i];
		uint16_t sp, dp;

		if (!b->nat[i] && b->path[i] != PATH_RELATED)
			continue;
		/* a router's last hop, or a packet too big for its port, that
		 * stage_forward (before this) answered: as it came */
		if (p->verdict != PIPE_FORWARD)
			continue;
		if (b->path[i] == PATH_RELATED) {	/* only NATed flows stay RELATED */
			rewrite_related(b, i, p);
			w->stats.nat_rewrites++;
			continue;
		}
		w->stats.nat_rewrites++;
		if (csum_rewrite4(p->data, p->len, m, wk->src, wk->sport, wk->dst, wk->dport, 0) == 0)
			continue;	/* IPv4 TCP/UDP: both sides in one go */
		wire_ports(m, p->data, &sp, &dp);
		/* what cannot be translated does not leave untranslated: an
		 * SCTP first fragment whose port changes (its CRC32c covers
		 * the whole datagram) */
		if (((addr_differs(wk->src, m->key.src, m->key.family) || wk->sport != sp) &&
		     csum_rewrite(p->data, p->len, m, CSUM_SRC, wk->src, wk->sport) < 0) ||
		    ((addr_differs(wk->dst, m->key.dst, m->key.family) || wk->dport != dp) &&
		     csum_rewrite(p->data, p->len, m, CSUM_DST, wk->dst, wk->dport) < 0))
			drop(w, p, PIPE_DROP_NAT_FAILED);
	}
}

/* defaults.tcp_mss: the MSS option of forwarded SYNs and SYN-ACKs
 * lowered to the policy's ceiling, or for `clamp` to what the smaller of
 * the two ports' MTUs allows (a port whose MTU is unknown does not
 * count): a segment sent at that size fits both links. */
static void stage_mss(struct pipe_worker *w, struct pipe_pkt *pkts, const uint32_t *list,
		      uint32_t n, uint16_t setting)
{
	const struct pipe_burst *b = &w->burst;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = list[k];
		struct pipe_pkt *p = &pkts[i];
		const struct pkt_meta *m = &b->meta[i];
		uint16_t limit = setting, in, out;

		if (p->verdict != PIPE_FORWARD || m->key.proto != 6 || !(m->key.tcp_flags & 0x02))
			continue;
		if (setting == RFW_TCP_MSS_CLAMP) {
			const uint16_t *mss = m->key.family == 4 ? w->mss4 : w->mss6;

			in = mss[p->in_port];
			out = mss[p->out_port];
			limit = !in ? out : !out || in < out ? in : out;
			if (!limit)
				continue;
		}
		w->stats.mss_clamped += (uint64_t)tcp_mss_clamp(p->data, p->len, m, limit);
	}
}

/* Router mode: hop limit and Ethernet addresses. */
static void stage_forward(struct pipe_worker *w, struct pipe_pkt *pkts, const uint32_t *list,
			  uint32_t n)
{
	struct pipe_burst *b = &w->burst;
	/* The last next hop resolved: a burst's packets mostly share one
	 * (the default gateway), and the table does not change within a
	 * burst, so the hash and compare are paid once a burst. */
	uint64_t memo_lo = 0, memo_hi = 0;
	uint8_t memo_port = PIPE_NO_PORT, memo_family = 0;
	const uint8_t *memo_mac = NULL;
	int cut;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = list[k];
		struct pipe_pkt *p = &pkts[i];
		struct pkt_meta *m = &b->meta[i];
		uint8_t *l3 = p->data + m->l3_off;
		uint64_t hop_lo, hop_hi;
		uint8_t *ttl = m->key.family == 4 ? l3 + 8 : l3 + 7;
		const uint8_t *mac;

		if (p->verdict != PIPE_FORWARD)
			continue;
		if (*ttl <= 1) {
			const uint8_t *from = reply_source(w, p->in_port, m->key.family);
			uint32_t len;

			/* The quote is of the packet as it arrived here (NAT
			 * comes after this stage); parsed again, as the stages
			 * before wrote into its meta. */
			pkt_parse(p->data, p->len, m);
			len = from && reply_allowed(w)
				      ? reply_icmp_error(p->data, p->len, p->room, m,
							 REPLY_TIME_EXCEEDED, from) : 0;
			drop(w, p, PIPE_DROP_TTL);
			if (len) {
				p->len = len;
				p->verdict = PIPE_BOUNCE;
				w->stats.replies++;
			}
			continue;
		}
		cut = 0;
		if (__builtin_expect(too_big_for_port(w, p, m), 0) &&
		    !(cut = answer_too_big(w, p, i)))
			continue;
		memcpy(&hop_lo, b->nexthop[i], 8);
		memcpy(&hop_hi, b->nexthop[i] + 8, 8);
		if (memo_mac && hop_lo == memo_lo && hop_hi == memo_hi &&
		    p->out_port == memo_port && m->key.family == memo_family) {
			mac = memo_mac;
		} else {
			mac = neigh_lookup(&w->neigh, p->out_port, m->key.family, b->nexthop[i]);
			memo_mac = mac;
			memo_lo = hop_lo;
			memo_hi = hop_hi;
			memo_port = p->out_port;
			memo_family = m->key.family;
		}
		if (!mac) {
			/* the firewall's own address (not handed to the kernel
			 * by host.addresses): after the rules, which see and
			 * count it, and never held for a neighbour that is us */
			if (port_owns(&w->cfg.port[p->out_port], m->key.family, b->nexthop[i])) {
				drop(w, p, PIPE_DROP_LOCAL);
				continue;
			}
			want_neighbour(w, p->out_port, m->key.family, b->nexthop[i]);
			if (w->cfg.hold_unresolved && !cut && w->nheld + b->nhold < PIPE_MAX_HELD)
				b->l_hold[b->nhold++] = i;	/* after NAT: stage_hold */
			else
				drop(w, p, PIPE_DROP_NO_NEIGH);
			continue;
		}
		ttl_decrement(l3, m->key.family);
		memcpy(p->data, mac, 6);
		memcpy(p->data + 6, w->cfg.port[p->out_port].mac, 6);
	}
}

static void account_out(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct pipe_pkt *p = &pkts[i];
		struct pipe_port_stats *ps;

		if (__builtin_expect(p->verdict != PIPE_FORWARD, 0)) {
			if (p->verdict == PIPE_DROP) {
				w->stats.port[p->in_port].dropped++;
				continue;
			}
			if (p->verdict == PIPE_HANDOFF || p->verdict == PIPE_HELD)
				continue;	/* its owner counts it; sent or dropped later */
			if (p->verdict == PIPE_BOUNCE)
				p->out_port = p->in_port;
		}
		ps = &w->stats.port[p->out_port];
		ps->tx_packets++;
		ps->tx_bytes += p->len;
	}
}

/* Count known-flow packets under the rule that accepted their flow. */
static void count_known(struct pipe_worker *w, struct pipe_pkt *pkts, const uint32_t *list,
			uint32_t n)
{
	struct pipe_burst *b = &w->burst;
	/* locals: the counter stores could alias the policy's fields */
	struct pipe_rule_stats *rules = w->pol->rules;
	uint32_t nrules = w->pol->rule_count;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = list[k], r = b->rule[i];

		if (r > nrules)
			r = 0;
		rules[r].packets++;
		rules[r].bytes += pkts[i].len;
		rules[r].last_ns = w->now_ns;
	}
	w->stats.flows_hit += n;
}

/* Log records of the burst's packets whose rule logs, or that were
 * dropped as invalid: as they leave (verdict, translation), rate limited
 * per rule, never waiting for the reader. */
static void emit_logs(struct pipe_worker *w, const struct pipe_pkt *pkts, uint32_t n,
		      uint64_t now_ns)
{
	struct pipe_burst *b = &w->burst;
	const struct pipe_policy *pol = w->pol;

	for (uint32_t i = 0; i < n; i++) {
		const struct pipe_pkt *p = &pkts[i];
		uint32_t rule = b->logme[i] == 2 || b->rule[i] > pol->rule_count ? 0 : b->rule[i];
		struct pktlog_bucket *bucket;
		struct pktlog_rec *rec;

		if (!b->logme[i])
			continue;
		bucket = b->logme[i] == 2 ? &w->log_invalid : &pol->counters->logb[rule];
		if (!pktlog_allow(bucket, w->log_rate, now_ns)) {
			w->log->limited++;
			continue;
		}
		rec = pktlog_claim(w->log);
		if (!rec)
			continue;
		rec->mono_ns = now_ns;
		rec->rule = rule;
		rec->verdict = p->verdict;
		rec->drop = p->drop;
		rec->in_port = p->in_port;
		rec->out_port = p->out_port;
		rec->invalid = b->logme[i] == 2;
		rec->nat = p->verdict == PIPE_FORWARD && b->nat[i];
		rec->key = b->meta[i].key;
		rec->wire = rec->nat ? b->wire[i] : b->meta[i].key;
		snprintf(rec->name, sizeof(rec->name), "%s", rfw_rule_name(pol->view, rule));
		pktlog_commit(w->log);
	}
}

/* Armed capture: the burst's frames of the wanted rule (or dropped), as
 * they leave, into the ring. */
static void capture(struct pipe_worker *w, const struct pipe_pkt *pkts, uint32_t n,
		    uint64_t now_ns, uint32_t want)
{
	struct pipe_burst *b = &w->burst;

	for (uint32_t i = 0; i < n; i++) {
		const struct pipe_pkt *p = &pkts[i];

		if (p->verdict == PIPE_HANDOFF)
			continue;	/* its owner captures it */
		if (want == PKTCAP_DROPS ? p->verdict != PIPE_DROP
					 : p->drop == PIPE_DROP_MALFORMED || b->rule[i] != want ||
					   b->meta[i].kind != PKT_IP)
			continue;
		capture_one(w->cap, p, b->rule[i], now_ns);
	}
}

void pipe_set_capture(struct pipe_worker *w, struct pktcap_ring *ring)
{
	w->cap = ring;
}

void pipe_set_log(struct pipe_worker *w, struct pktlog_ring *ring, uint32_t rate)
{
	w->log = ring;
	w->log_rate = rate;
}

#define STAGE(id, count, call)                                  \
	do {                                                    \
		uint64_t t_ = cycles();                         \
		st[id].packets += (count);                      \
		call;                                           \
		st[id].cycles += cycles() - t_;                 \
	} while (0)

static void process_burst(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t n,
			  uint64_t now_ns)
{
	struct pipe_burst *b = &w->burst;
	struct pipe_stage_stats *st = w->stats.stage;
	uint32_t now = (uint32_t)(now_ns / 1000000000u);
	uint32_t nnew, nknown = 0, npass, ninv = 0;
	const int probe = w->have_fc && flowcache_probing(&w->fc_rest);

	w->now_ns = now_ns;
	if (!(w->nparked | w->nlent))	/* marks only for this burst's parking */
		w->parked_seen = 0;
	STAGE(PIPE_ST_PARSE, n, nnew = stage_parse(w, pkts, n, probe));
	b->nxknown = b->nxnew = 0;
	if (b->nx) {
		b->xleft = b->nx;
		if (probe)
			STAGE(PIPE_ST_CACHE, b->nx, express_cache(w, pkts, now, &ninv));
		if (b->xleft)
			STAGE(PIPE_ST_FLOW, b->xleft, express_conntrack(w, pkts, nnew, now, &ninv, probe));
		if (b->xleft)
			STAGE(PIPE_ST_PARSE, 0, nnew = express_rest(w, pkts, nnew));
	}
	if (probe && nnew)
		STAGE(PIPE_ST_CACHE, nnew, nnew = stage_cache(w, pkts, nnew, now, &ninv));
	if (probe)
		fc_judge(w);
	if (w->stateful && nnew)
		STAGE(PIPE_ST_FLOW, nnew, nnew = stage_flow(w, pkts, nnew, now, &nknown));
	if (b->nxnew)
		nnew = express_new_merge(w, nnew);
	for (uint32_t k = 0; k < b->nxknown; k++)	/* express_conntrack's */
		b->l_known[nknown++] = b->l_xknown[k];
	for (uint32_t k = 0; k < ninv; k++)	/* invalid, for the rules that see it */
		b->l_new[nnew++] = b->l_inv[k];
	if (nnew && w->stateful && w->pol->view->policy->nat_count)
		STAGE(PIPE_ST_DNAT, nnew, stage_dnat(w, nnew));
	else
		for (uint32_t k = 0; k < nnew; k++)
			b->akey[b->l_new[k]] = b->meta[b->l_new[k]].key;
	if (w->mode == PIPE_ROUTER && (nnew || nknown))
		STAGE(PIPE_ST_ROUTE, nnew + nknown,
		      (nnew = route_list(w, pkts, b->l_new, nnew, 0),
		       nknown = route_list(w, pkts, b->l_known, nknown, 1)));
	if (nnew)
		STAGE(PIPE_ST_ACL, nnew, nnew = stage_acl(w, pkts, nnew));
	if (nnew && w->pol->have_rl)
		STAGE(PIPE_ST_LIMIT, nnew, nnew = stage_limit(w, pkts, nnew, now_ns));
	if (nnew && w->stateful)
		STAGE(PIPE_ST_CT, nnew, nnew = stage_ct(w, pkts, nnew, now));
	else
		for (uint32_t k = 0; k < nnew; k++)
			b->wire[b->l_new[k]] = b->akey[b->l_new[k]];
	if (b->nfrag_wait)
		STAGE(PIPE_ST_FLOW, 0, nknown += frags_after_first(w, pkts, now, nknown));
	count_known(w, pkts, b->l_known, nknown);

	npass = 0;
	for (uint32_t k = 0; k < nknown; k++)
		b->l_pass[npass++] = b->l_known[k];
	for (uint32_t k = 0; k < nnew; k++)
		b->l_pass[npass++] = b->l_new[k];
	/* Forward first: a router's ICMP errors (TTL, MTU) are about the
	 * packet as it came, before NAT (as a Linux router checks both
	 * between DNAT and SNAT, and its conntrack maps the error back);
	 * the rewrites of the two stages commute. */
	if (w->mode == PIPE_ROUTER && npass)
		STAGE(PIPE_ST_FORWARD, npass, stage_forward(w, pkts, b->l_pass, npass));
	if (b->nhold)	/* before NAT rewrites them */
		hold_heads(w, pkts);
	if (npass && w->stateful)
		STAGE(PIPE_ST_NAT, npass, stage_nat(w, pkts, b->l_pass, npass));
	if (npass && w->pol->view->policy->tcp_mss)	/* after NAT: its last rewrite */
		STAGE(PIPE_ST_FORWARD, 0,
		      stage_mss(w, pkts, b->l_pass, npass, w->pol->view->policy->tcp_mss));
	if (b->ncut)
		STAGE(PIPE_ST_FORWARD, 0, stage_fragment(w, pkts));
	if (b->nhold)
		STAGE(PIPE_ST_FORWARD, 0, stage_hold(w, pkts, now_ns));
	if (w->have_fc && nknown)
		STAGE(PIPE_ST_CACHE, 0, cache_insert(w, pkts, b->l_known, nknown));
	account_out(w, pkts, n);
	if (w->log)
		emit_logs(w, pkts, n, now_ns);
	if (w->cap) {
		uint32_t want = atomic_load_explicit(&w->cap->want, memory_order_relaxed);

		if (want != PKTCAP_OFF)
			capture(w, pkts, n, now_ns, want);
	}
	if (w->ct)
		ct_expire(w->ct, now, EXPIRE_BUDGET);
}

void pipe_tick(struct pipe_worker *w, uint64_t now_ns)
{
	if (!w->ct || now_ns < w->now_ns)
		return;		/* the clock never goes back */
	w->now_ns = now_ns;
	ct_expire(w->ct, (uint32_t)(now_ns / 1000000000u), EXPIRE_BUDGET);
}

void pipe_process(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t n, uint64_t now_ns)
{
	if (__builtin_expect(w->nheld != 0, 0))
		pipe_held_poll(w, now_ns);
	for (uint32_t done = 0; done < n; done += PIPE_BURST)
		process_burst(w, pkts + done, n - done < PIPE_BURST ? n - done : PIPE_BURST, now_ns);
}

const char *pipe_drop_name(unsigned drop)
{
	static const char *const names[PIPE_DROP_COUNT] = {
		[PIPE_DROP_NONE] = "none",
		[PIPE_DROP_MALFORMED] = "malformed",
		[PIPE_DROP_NON_IP] = "non-ip",
		[PIPE_DROP_POLICY] = "policy",
		[PIPE_DROP_NO_ROUTE] = "no-route",
		[PIPE_DROP_NO_NEIGH] = "no-neighbour",
		[PIPE_DROP_TTL] = "ttl-expired",
		[PIPE_DROP_NO_PORT] = "no-port",
		[PIPE_DROP_CT_INVALID] = "ct-invalid",
		[PIPE_DROP_FRAG_ORPHAN] = "frag-orphan",
		[PIPE_DROP_CT_FULL] = "ct-full",
		[PIPE_DROP_NAT_FAILED] = "nat-failed",
		[PIPE_DROP_RATE_LIMIT] = "rate-limit",
		[PIPE_DROP_TOO_BIG] = "too-big",
		[PIPE_DROP_MARTIAN] = "martian",
		[PIPE_DROP_LOCAL] = "local",
		[PIPE_DROP_RPF] = "rpf",
	};
	return drop < PIPE_DROP_COUNT ? names[drop] : "?";
}

const char *pipe_stage_name(unsigned stage)
{
	static const char *const names[PIPE_ST_COUNT] = {
		[PIPE_ST_PARSE] = "parse",
		[PIPE_ST_CACHE] = "flowcache",
		[PIPE_ST_FLOW] = "flow",
		[PIPE_ST_DNAT] = "dnat",
		[PIPE_ST_ROUTE] = "route",
		[PIPE_ST_ACL] = "acl",
		[PIPE_ST_LIMIT] = "limit",
		[PIPE_ST_CT] = "conntrack",
		[PIPE_ST_NAT] = "nat",
		[PIPE_ST_FORWARD] = "forward",
	};
	return stage < PIPE_ST_COUNT ? names[stage] : "?";
}
