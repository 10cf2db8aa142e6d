/* One worker's pipeline: parse -> route (router mode) -> ACL -> forward.
 * Each stage walks the whole burst; the per-packet state between stages
 * lives in struct pipe_burst on the worker, not on the stack of each
 * call, so the hot loop touches the same few cache lines every burst. */
#include "pipeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cls.h"
#include "csum.h"
#include "lpm.h"
#include "neigh.h"
#include "reply.h"

/* Per-burst scratch: the parsed metadata and what each stage decided. */
struct pipe_burst {
	struct pkt_meta meta[PIPE_BURST];
	const struct pkt_key *keys[PIPE_BURST];
	uint32_t key_of[PIPE_BURST];	/* burst index of keys[k] */
	uint32_t rule[PIPE_BURST];
	uint8_t nexthop[PIPE_BURST][16];
};

struct pipe_worker {
	/* hot: read every burst */
	enum pipe_mode mode;
	uint32_t nports;
	const struct rfw_view *view;
	struct cls_table acl;
	struct lpm route4, route6;
	int have_route4, have_route6;
	uint8_t port_if[PIPE_MAX_PORTS];		/* port -> policy interface */
	uint8_t if_port[RFW_MAX_INTERFACES];		/* policy interface -> port */
	struct pipe_stats stats;
	struct pipe_rule_stats *rules;
	struct pipe_burst burst;
	/* cold */
	struct pipe_config cfg;
	struct neigh_table neigh;
};

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

static int lpm_from_ref(struct lpm *t, const struct rfw_view *v, const struct rfw_lpm_ref *r,
			uint8_t bytes)
{
	if (!v->lpm_data || r->offset == RFW_LPM_NONE)
		return 0;
	t->root = v->lpm_data + r->offset;
	t->groups = t->root + LPM_ROOT_SIZE;
	t->group_count = r->group_count;
	t->addr_bytes = bytes;
	return 1;
}

struct pipe_worker *pipe_create(const struct pipe_config *cfg, const struct rfw_view *view)
{
	struct pipe_worker *w;

	if (cfg->nports == 0 || cfg->nports > PIPE_MAX_PORTS ||
	    (cfg->mode == PIPE_BRIDGE && cfg->nports % 2) ||
	    (cfg->mode == PIPE_ROUTER && !view->route_table)) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->rules = calloc((size_t)view->policy->rule_count + 1, sizeof(*w->rules));
	if (!w->rules) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->cfg = *cfg;
	w->mode = cfg->mode;
	w->nports = cfg->nports;
	w->view = view;
	cls_table_init(&w->acl, view);
	if (view->route_table) {
		w->have_route4 = lpm_from_ref(&w->route4, view, &view->route_table->v4, 4);
		w->have_route6 = lpm_from_ref(&w->route6, view, &view->route_table->v6, 16);
	}
	memset(w->if_port, PIPE_NO_PORT, sizeof(w->if_port));
	for (uint32_t p = 0; p < cfg->nports; p++) {
		w->port_if[p] = PIPE_NO_PORT;
		for (uint32_t i = 0; i < view->interface_count; i++)
			if (!strncmp(view->interfaces[i].name, cfg->port[p].name,
				     sizeof(view->interfaces[i].name))) {
				w->port_if[p] = (uint8_t)i;
				w->if_port[i] = (uint8_t)p;
			}
	}
	neigh_init(&w->neigh);
	return w;
}

void pipe_destroy(struct pipe_worker *w)
{
	if (!w)
		return;
	free(w->rules);
	free(w);
}

const struct pipe_stats *pipe_stats(const struct pipe_worker *w)
{
	return &w->stats;
}

const struct pipe_rule_stats *pipe_rule_stats(const struct pipe_worker *w)
{
	return w->rules;
}

uint8_t pipe_port_policy_if(const struct pipe_worker *w, uint32_t port)
{
	return port < w->nports ? w->port_if[port] : PIPE_NO_PORT;
}

int pipe_neigh_set(struct pipe_worker *w, uint32_t port, uint8_t family, const uint8_t *addr,
		   const uint8_t mac[6])
{
	if (port >= w->nports)
		return -1;
	return neigh_set(&w->neigh, (uint8_t)port, family, addr, mac);
}

static inline void drop(struct pipe_worker *w, struct pipe_pkt *p, enum pipe_drop why)
{
	p->verdict = PIPE_DROP;
	p->drop = (uint8_t)why;
	w->stats.drop[why]++;
}

/* Parse every frame; IP frames join the key list for the next stages. */
static uint32_t stage_parse(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t n)
{
	struct pipe_burst *b = &w->burst;
	uint32_t nkeys = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct pipe_pkt *p = &pkts[i];
		struct pkt_meta *m = &b->meta[i];
		struct pipe_port_stats *ps = &w->stats.port[p->in_port];

		ps->rx_packets++;
		ps->rx_bytes += p->len;
		p->verdict = PIPE_FORWARD;
		p->drop = PIPE_DROP_NONE;
		p->out_port = w->mode == PIPE_BRIDGE ? p->in_port ^ 1 : PIPE_NO_PORT;
		switch (pkt_parse(p->data, p->len, m)) {
		case PKT_IP:
			m->key.in_if = w->port_if[p->in_port];
			m->key.out_if = p->out_port == PIPE_NO_PORT ? PIPE_NO_PORT
								    : w->port_if[p->out_port];
			b->keys[nkeys] = &m->key;
			b->key_of[nkeys++] = i;
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
	return nkeys;
}

/* Router mode: the egress port and next hop of every IP packet, before
 * the rules (which may name the outgoing zone). */
static uint32_t stage_route(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t nkeys)
{
	struct pipe_burst *b = &w->burst;
	uint32_t kept = 0;

	for (uint32_t k = 0; k < nkeys; k++) {
		uint32_t i = b->key_of[k];
		struct pkt_key *key = &b->meta[i].key;
		uint32_t v = 0;
		const struct rfw_route *r;

		if (key->family == 4 && w->have_route4)
			v = lpm_lookup(&w->route4, key->dst);
		else if (key->family == 6 && w->have_route6)
			v = lpm_lookup(&w->route6, key->dst);
		if (!v || v > w->view->policy->route_count) {
			drop(w, &pkts[i], PIPE_DROP_NO_ROUTE);
			continue;
		}
		r = &w->view->routes[v - 1];
		if (w->if_port[r->interface] == PIPE_NO_PORT) {
			drop(w, &pkts[i], PIPE_DROP_NO_PORT);
			continue;
		}
		pkts[i].out_port = w->if_port[r->interface];
		key->out_if = (uint8_t)r->interface;
		memcpy(b->nexthop[i], r->has_via ? r->via : key->dst, 16);
		b->keys[kept] = key;
		b->key_of[kept++] = i;
	}
	return kept;
}

/* Classify, count per rule, turn rejects into replies. Returns the number
 * of accepted packets left in the key list. */
static uint32_t stage_acl(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t nkeys)
{
	struct pipe_burst *b = &w->burst;
	const struct rfw_rule *rules = w->view->rules;
	uint32_t kept = 0;

	cls_lookup_batch(&w->acl, b->keys, nkeys, b->rule);
	for (uint32_t k = 0; k < nkeys; k++) {
		uint32_t i = b->key_of[k], r = b->rule[k];
		struct pipe_pkt *p = &pkts[i];
		const struct pkt_meta *m = &b->meta[i];
		uint8_t action = rules[r].action;
		uint32_t len;

		w->rules[r].packets++;
		w->rules[r].bytes += p->len;
		if (action == RFW_ACTION_ACCEPT) {
			b->keys[kept] = b->keys[k];
			b->key_of[kept++] = i;
			continue;
		}
		drop(w, p, PIPE_DROP_POLICY);
		if (action != RFW_ACTION_REJECT)
			continue;
		/* reject: TCP RST, else ICMP unreachable from the address the
		 * packet was sent to (the sender sees its peer refuse). */
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

/* The address a reply from port `port` is sent from, or NULL. */
static const uint8_t *port_addr(const struct pipe_worker *w, uint32_t port, uint8_t family)
{
	const struct pipe_port_cfg *c = &w->cfg.port[port];

	if (family == 4)
		return c->has_v4 ? c->v4 : NULL;
	return c->has_v6 ? c->v6 : NULL;
}

/* Router mode: hop limit and Ethernet addresses of accepted packets. */
static void stage_forward(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t nkeys)
{
	struct pipe_burst *b = &w->burst;

	for (uint32_t k = 0; k < nkeys; k++) {
		uint32_t i = b->key_of[k];
		struct pipe_pkt *p = &pkts[i];
		struct pkt_meta *m = &b->meta[i];
		uint8_t *l3 = p->data + m->l3_off;
		uint8_t *ttl = m->key.family == 4 ? l3 + 8 : l3 + 7;
		const uint8_t *mac;

		if (*ttl <= 1) {
			const uint8_t *from = port_addr(w, p->in_port, m->key.family);
			uint32_t len = from ? reply_icmp_error(p->data, p->len, p->room, m,
							       REPLY_TIME_EXCEEDED, from)
					    : 0;

			drop(w, p, PIPE_DROP_TTL);
			if (len) {
				p->len = len;
				p->verdict = PIPE_BOUNCE;
				w->stats.replies++;
			}
			continue;
		}
		mac = neigh_lookup(&w->neigh, p->out_port, m->key.family, b->nexthop[i]);
		if (!mac) {
			drop(w, p, PIPE_DROP_NO_NEIGH);
			continue;
		}
		if (m->key.family == 4) {	/* RFC 1624: TTL is the high byte of a word */
			uint16_t old = (uint16_t)(*ttl << 8 | l3[9]), csum = (uint16_t)(l3[10] << 8 | l3[11]);

			(*ttl)--;
			csum = csum_update16(csum, old, (uint16_t)(*ttl << 8 | l3[9]));
			l3[10] = (uint8_t)(csum >> 8);
			l3[11] = (uint8_t)csum;
		} else {
			(*ttl)--;		/* IPv6 has no header checksum */
		}
		memcpy(p->data, mac, 6);
		memcpy(p->data + 6, w->cfg.port[p->out_port].mac, 6);
	}
}

static void account_out(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct pipe_pkt *p = &pkts[i];
		uint32_t port = p->verdict == PIPE_BOUNCE ? p->in_port : p->out_port;

		if (p->verdict == PIPE_DROP) {
			w->stats.port[p->in_port].dropped++;
			continue;
		}
		if (p->verdict == PIPE_BOUNCE)
			p->out_port = p->in_port;
		w->stats.port[port].tx_packets++;
		w->stats.port[port].tx_bytes += p->len;
	}
}

static void process_burst(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t n)
{
	struct pipe_stage_stats *st = w->stats.stage;
	uint64_t t0 = cycles(), t1;
	uint32_t nkeys;

	nkeys = stage_parse(w, pkts, n);
	t1 = cycles();
	st[PIPE_ST_PARSE].packets += n;
	st[PIPE_ST_PARSE].cycles += t1 - t0;

	if (w->mode == PIPE_ROUTER && nkeys) {
		st[PIPE_ST_ROUTE].packets += nkeys;
		nkeys = stage_route(w, pkts, nkeys);
		t0 = cycles();
		st[PIPE_ST_ROUTE].cycles += t0 - t1;
		t1 = t0;
	}
	if (nkeys) {
		st[PIPE_ST_ACL].packets += nkeys;
		nkeys = stage_acl(w, pkts, nkeys);
		t0 = cycles();
		st[PIPE_ST_ACL].cycles += t0 - t1;
		t1 = t0;
	}
	if (w->mode == PIPE_ROUTER && nkeys) {
		st[PIPE_ST_FORWARD].packets += nkeys;
		stage_forward(w, pkts, nkeys);
		t0 = cycles();
		st[PIPE_ST_FORWARD].cycles += t0 - t1;
	}
	account_out(w, pkts, n);
}

void pipe_process(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t n, uint64_t now_ns)
{
	(void)now_ns;	/* read by the stateful stages */
	for (uint32_t done = 0; done < n; done += PIPE_BURST)
		process_burst(w, pkts + done, n - done < PIPE_BURST ? n - done : PIPE_BURST);
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
	};
	return drop < PIPE_DROP_COUNT ? names[drop] : "?";
}

const char *pipe_stage_name(unsigned stage)
{
	static const char *const names[PIPE_ST_COUNT] = {
		[PIPE_ST_PARSE] = "parse",
		[PIPE_ST_ROUTE] = "route",
		[PIPE_ST_ACL] = "acl",
		[PIPE_ST_FORWARD] = "forward",
	};
	return stage < PIPE_ST_COUNT ? names[stage] : "?";
}
