/* rte_eth_rx_burst / rte_eth_tx_burst for the worker: the pipeline works
 * on the mbuf's own data; lengths are written back before TX. */
#include "backend_dpdk.h"

#include <string.h>
#include <time.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

static inline struct backend_dpdk *dpdk_of(struct backend *b)
{
	return (struct backend_dpdk *)b;
}

/* An ARP or ND frame (router mode): answered from the same mbuf when it
 * asks for a port's address, what it teaches queued for the main
 * thread; never the pipeline's. */
static void neigh_in(struct backend_dpdk *x, struct dp_queue_state *qs, uint32_t queue,
		     uint32_t port, struct rte_mbuf *m)
{
	uint8_t reply[NP_FRAME_MAX];
	struct np_learned l;
	uint32_t n = np_receive(&x->np[port], rte_pktmbuf_mtod(m, uint8_t *), m->data_len, &l,
				reply);

	if (l.family) {
		qs->neigh_news++;
		(void)nr_push(&qs->learnt, (uint8_t)port, &l);	/* full: dropped */
	}
	if (!n || rte_pktmbuf_tailroom(m) + m->data_len < n) {
		rte_pktmbuf_free(m);
		return;
	}
	memcpy(rte_pktmbuf_mtod(m, uint8_t *), reply, n);
	m->data_len = (uint16_t)n;
	m->pkt_len = n;
	if (rte_eth_tx_burst(x->ports->port_id[port], (uint16_t)queue, &m, 1) == 1)
		qs->neigh_answered++;
	else
		rte_pktmbuf_free(m);
}

static uint32_t dpdk_rx_burst(struct backend *b, uint32_t queue, struct pipe_pkt *pkts,
			      uint64_t *handle, uint32_t n, uint64_t *now_ns)
{
	struct backend_dpdk *x = dpdk_of(b);
	struct dp_queue_state *qs = &x->q[queue];
	struct rte_mbuf *m[PIPE_BURST];
	uint32_t got = 0;

	if (n > PIPE_BURST)
		n = PIPE_BURST;
	for (uint32_t k = 0; k < b->nports && got < n; k++) {
		uint32_t port = (qs->next_port + k) % b->nports;
		uint16_t r = rte_eth_rx_burst(x->ports->port_id[port], (uint16_t)queue, m,
					      (uint16_t)(n - got));

		for (uint16_t i = 0; i < r; i++) {
			if (unlikely(m[i]->nb_segs != 1)) {
				qs->multiseg++;
				rte_pktmbuf_free(m[i]);
				continue;
			}
			if (unlikely(x->own_neigh) &&
			    np_is_neigh(rte_pktmbuf_mtod(m[i], uint8_t *), m[i]->data_len)) {
				neigh_in(x, qs, queue, port, m[i]);
				continue;
			}
			pkts[got].data = rte_pktmbuf_mtod(m[i], uint8_t *);
			pkts[got].len = m[i]->data_len;
			/* replies may grow the frame into the tailroom */
			pkts[got].room = (uint32_t)m[i]->data_len + rte_pktmbuf_tailroom(m[i]);
			pkts[got].in_port = (uint8_t)port;
			pkts[got].homed = 0;
			/* the NIC summed the IPv4 header: the parser need not */
			pkts[got].rx_flags = (m[i]->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) ==
						     RTE_MBUF_F_RX_IP_CKSUM_GOOD
					     ? PIPE_RX_IPV4_CSUM_GOOD : 0;
			handle[got++] = (uint64_t)(uintptr_t)m[i];
		}
	}
	qs->next_port = (qs->next_port + 1) % b->nports;
	if (got) {
		struct timespec ts;

		qs->empty_polls = 0;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		*now_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	return got;
}

static void free_handles(const uint64_t *handle, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!(handle[i] & BACKEND_HANDLE_FOREIGN))	/* a copy, not an mbuf */
			rte_pktmbuf_free((struct rte_mbuf *)(uintptr_t)handle[i]);
}

/* A frame another worker handed over, in an mbuf of the port's pool;
 * NULL when the pool is empty. */
static struct rte_mbuf *copy_in(const struct backend_dpdk *x, uint32_t port,
				const struct pipe_pkt *p)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(x->ports->pool[x->ports->socket[port]]);

	if (m && rte_pktmbuf_tailroom(m) < p->len) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	if (m)
		memcpy(rte_pktmbuf_mtod(m, uint8_t *), p->data, p->len);
	return m;
}

static uint32_t dpdk_tx_burst(struct backend *b, uint32_t queue, uint32_t port,
			      struct pipe_pkt **pkts, uint64_t *handle, uint32_t n,
			      uint32_t *copied)
{
	struct backend_dpdk *x = dpdk_of(b);
	struct rte_mbuf *m[PIPE_BURST];
	uint16_t id = x->ports->port_id[port], sent = 0;
	uint8_t copy[PIPE_BURST];
	uint32_t copies = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (handle[i] & BACKEND_HANDLE_FOREIGN) {
			m[i] = copy_in(x, port, pkts[i]);
			if (!m[i]) {	/* no mbuf: this one and the rest stay */
				free_handles(handle + i, n - i);
				n = i;
				break;
			}
		} else {
			m[i] = (struct rte_mbuf *)(uintptr_t)handle[i];
		}
		copy[i] = !!(handle[i] & BACKEND_HANDLE_FOREIGN);
		/* the pipeline may have shortened or grown the frame */
		m[i]->data_len = (uint16_t)pkts[i]->len;
		m[i]->pkt_len = pkts[i]->len;
	}
	/* One retry: a full ring usually has completions to reap. */
	for (int tries = 0; tries < 2 && sent < n; tries++)
		sent += rte_eth_tx_burst(id, (uint16_t)queue, m + sent, (uint16_t)(n - sent));
	if (sent < n) {	/* the copies made for them are ours to free */
		for (uint32_t i = sent; i < n; i++)
			rte_pktmbuf_free(m[i]);
	}
	/* the received mbuf itself goes out, or a handed-over frame's copy */
	for (uint32_t i = 0; i < sent; i++)
		copies += copy[i];
	*copied = copies;
	return sent;
}

static void dpdk_free(struct backend *b, uint32_t queue, uint32_t port, const uint64_t *handle,
		      uint32_t n)
{
	(void)b;
	(void)queue;
	(void)port;
	free_handles(handle, n);
}

static uint32_t dpdk_service(struct backend *b, uint32_t queue)
{
	(void)b;
	(void)queue;
	return 0;	/* PMDs reap TX completions inside tx_burst */
}

/* An ARP or ND frame of ours (build: np_solicit or np_probe) out of
 * port from the worker's own queue. 1 when sent. */
static int neigh_send(struct backend_dpdk *x, uint32_t queue, const struct pipe_nexthop *hop,
		      const uint8_t *probe_mac)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(x->ports->pool[x->ports->socket[hop->port]]);
	const struct np_port *np = &x->np[hop->port];
	uint8_t *f;
	uint32_t n;

	if (!m)
		return 0;
	f = rte_pktmbuf_mtod(m, uint8_t *);
	if (rte_pktmbuf_tailroom(m) < NP_FRAME_MAX ||
	    !(n = probe_mac ? np_probe(np, hop->family, hop->addr, probe_mac, f)
			    : np_solicit(np, hop->family, hop->addr, f))) {
		rte_pktmbuf_free(m);
		return 0;
	}
	m->data_len = (uint16_t)n;
	m->pkt_len = n;
	if (rte_eth_tx_burst(x->ports->port_id[hop->port], (uint16_t)queue, &m, 1) != 1) {
		rte_pktmbuf_free(m);
		return 0;
	}
	return 1;
}

/* A next hop the pipeline has no MAC for: an ARP request or neighbour
 * solicitation out of its port, at most one a DP_SOLICIT_GAP_NS per hop
 * (a table of the hops asked lately, by a hash of the address), and
 * within the queue's budget for all hops (solicit_budget.h). */
static void dpdk_solicit(struct backend *b, uint32_t queue, const struct pipe_nexthop *hop,
			 uint64_t now_ns)
{
	struct backend_dpdk *x = dpdk_of(b);
	struct dp_queue_state *qs = &x->q[queue];
	uint32_t len = hop->family == 4 ? 4 : 16, h = hop->port * 31u + hop->family;
	struct dp_asked *a;

	if (!x->own_neigh || hop->port >= b->nports)
		return;
	for (uint32_t i = 0; i < len; i++)
		h = h * 31u + hop->addr[i];
	a = &qs->asked[h & (DP_ASKED_SLOTS - 1)];
	if (a->at_ns && now_ns - a->at_ns < DP_SOLICIT_GAP_NS && a->port == hop->port &&
	    a->family == hop->family && !memcmp(a->addr, hop->addr, len))
		return;
	if (!solicit_budget_take(&qs->solicit, now_ns)) {
		qs->neigh_ask_limited++;
		return;
	}
	/* the main thread learns from an answer only what was asked for,
	 * told before the question goes out */
	(void)nr_push_asked(&qs->learnt, hop->port, hop->family, hop->addr);
	if (!neigh_send(x, queue, hop, NULL))
		return;
	qs->neigh_asked++;
	*a = (struct dp_asked){.at_ns = now_ns, .port = hop->port, .family = hop->family};
	memcpy(a->addr, hop->addr, len);
}

/* A known next hop unconfirmed for a while (neigh_cache.h): asked at its
 * MAC, paced by the main thread. */
static void dpdk_probe(struct backend *b, uint32_t queue, const struct pipe_nexthop *hop,
		       const uint8_t mac[6])
{
	struct backend_dpdk *x = dpdk_of(b);

	if (x->own_neigh && hop->port < b->nports && neigh_send(x, queue, hop, mac))
		x->q[queue].neigh_probed++;
}

/* Poll mode: spin a while, then sleep in short steps so that idle workers
 * leave shared cores alone (latency after a quiet spell: one step). */
static int dpdk_idle(struct backend *b, uint32_t queue, int timeout_ms, int wake_fd)
{
	struct dp_queue_state *qs = &dpdk_of(b)->q[queue];
	const struct timespec step = { 0, DP_IDLE_SLEEP_US * 1000 };

	(void)timeout_ms;
	(void)wake_fd;	/* a step is short: handed frames wait at most one (and
			 * idle_waits_fd is 0: no worker writes it for us) */
	if (qs->empty_polls < DP_IDLE_SPINS) {
		qs->empty_polls++;
		rte_pause();
		return 0;
	}
	nanosleep(&step, NULL);
	return 0;
}

/* The PMD's per-port counters (rte_eth_stats_get covers every queue of
 * the port): imissed, the RX descriptors were all taken (the worker did
 * not keep up); rx_nombuf, no mbuf to refill them (mempool too small);
 * ierrors, frames the NIC refused. DPDK has no invalid-descriptor count.
 * Control thread only. */
static int dpdk_rx_loss(struct backend *b, uint32_t port, struct backend_rx_loss *out)
{
	const struct dp_ports *d = dpdk_of(b)->ports;
	struct rte_eth_stats st;
	int e;

	memset(out, 0, sizeof(*out));
	if (!d->started[port])
		return 0;
	e = rte_eth_stats_get(d->port_id[port], &st);
	if (e)
		return e;
	out->ring_full = st.imissed;
	out->no_buffer = st.rx_nombuf;
	out->other = st.ierrors;
	return 0;
}

static const struct backend_ops dpdk_ops = {
	.rx_burst = dpdk_rx_burst,
	.tx_burst = dpdk_tx_burst,
	.free = dpdk_free,
	.service = dpdk_service,
	.idle = dpdk_idle,
	.rx_loss = dpdk_rx_loss,
	.solicit = dpdk_solicit,
	.probe = dpdk_probe,
};

void backend_dpdk_init(struct backend_dpdk *b, const struct dp_ports *ports)
{
	memset(b, 0, sizeof(*b));
	b->be.ops = &dpdk_ops;
	b->be.nports = ports->nports;
	b->be.nqueues = ports->nqueues;
	b->be.monotonic_clock = 1;
	b->ports = ports;
}

_Static_assert(NP_MORE_ADDRS == PIPE_PORT_MORE_ADDRS, "a port's addresses, both ways");

void backend_dpdk_own_neighbours(struct backend_dpdk *b, const struct pipe_config *cfg)
{
	for (uint32_t i = 0; i < b->be.nports && i < PIPE_MAX_PORTS; i++) {
		struct np_port *p = &b->np[i];

		memcpy(p->mac, cfg->port[i].mac, 6);
		p->has_v4 = cfg->port[i].has_v4;
		p->has_v6 = cfg->port[i].has_v6;
		memcpy(p->v4, cfg->port[i].v4, 4);
		memcpy(p->v6, cfg->port[i].v6, 16);
		p->nmore4 = cfg->port[i].nmore4;
		p->nmore6 = cfg->port[i].nmore6;
		memcpy(p->more4, cfg->port[i].more4, sizeof(p->more4));
		memcpy(p->more6, cfg->port[i].more6, sizeof(p->more6));
	}
	b->own_neigh = 1;
}
