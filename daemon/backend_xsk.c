/* AF_XDP rx/tx/free for the worker: ring work per burst, syscalls only to
 * kick TX (when the kernel asks) or to sleep when idle. A frame goes out
 * by its address when the egress socket shares the ingress socket's UMEM
 * and is copied once when it does not. */
#include "backend_xsk.h"

#include <poll.h>
#include <string.h>
#include <time.h>
#include <linux/if_xdp.h>

_Static_assert(PIPE_MAX_PORTS <= XSK_MAX_SHARE, "xsk_queues_refill takes every port's socket");

static inline struct backend_xsk *xsk_of(struct backend *b)
{
	return (struct backend_xsk *)b;
}

static uint32_t xsk_rx_burst(struct backend *b, uint32_t queue, struct pipe_pkt *pkts,
			     uint64_t *handle, uint32_t n, uint64_t *now_ns)
{
	struct backend_xsk_worker *w = &xsk_of(b)->w[queue];
	uint32_t got = 0;

	for (uint32_t k = 0; k < b->nports && got < n; k++) {
		uint32_t port = (w->next_port + k) % b->nports;
		struct xsk_queue *q = w->q[port];
		uint32_t idx = 0, m = xsk_ring_cons__peek(&q->rx, n - got, &idx);

		for (uint32_t i = 0; i < m; i++, got++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&q->rx, idx + i);

			pkts[got].data = xsk_pool_data(q->pool, d->addr);
			pkts[got].len = d->len;
			/* replies may grow the frame up to the end of its chunk */
			pkts[got].room = XSK_FRAME_SIZE - (uint32_t)(d->addr - xsk_pool_frame(d->addr));
			pkts[got].in_port = (uint8_t)port;
			pkts[got].homed = 0;
			pkts[got].rx_flags = 0;	/* AF_XDP passes no checksum result */
			handle[got] = d->addr;
		}
		if (m)
			xsk_ring_cons__release(&q->rx, m);
	}
	w->next_port = (w->next_port + 1) % b->nports;
	if (got) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		*now_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	return got;
}

/* How many of pkts, from the front, can go now: each needs a TX ring
 * slot, and a free frame of the egress UMEM unless it already is one of
 * its frames (a bounce, or a forward between sockets sharing the UMEM). */
static uint32_t tx_prefix(const struct backend_xsk_worker *w, struct xsk_queue *out,
			  struct pipe_pkt *const *pkts, const uint64_t *handle, uint32_t n)
{
	uint32_t ring = xsk_prod_nb_free(&out->tx, n), copies = 0, k;

	for (k = 0; k < n && k < ring; k++) {
		if (!(handle[k] & BACKEND_HANDLE_FOREIGN) &&
		    w->q[pkts[k]->in_port]->pool == out->pool)
			continue;
		if (copies == out->pool->nfree)
			break;
		copies++;
	}
	return k;
}

static uint32_t xsk_tx_burst(struct backend *b, uint32_t queue, uint32_t port,
			     struct pipe_pkt *const *pkts, const uint64_t *handle, uint32_t n,
			     uint32_t *copied)
{
	const struct backend_xsk_worker *w = &xsk_of(b)->w[queue];
	struct xsk_queue *out = w->q[port];
	uint32_t sent, tidx = 0, copies = 0;

	sent = tx_prefix(w, out, pkts, handle, n);
	if (sent < n) {
		xsk_queue_reap(out);		/* completions free TX slots and frames */
		sent = tx_prefix(w, out, pkts, handle, n);
	}
	if (sent && xsk_ring_prod__reserve(&out->tx, sent, &tidx) != sent)
		sent = 0;	/* cannot happen: nb_free said they fit */
	for (uint32_t i = 0; i < n; i++) {
		const struct pipe_pkt *p = pkts[i];
		int foreign = !!(handle[i] & BACKEND_HANDLE_FOREIGN);
		struct xsk_umem_pool *in = foreign ? NULL : w->q[p->in_port]->pool;
		struct xdp_desc *t;

		if (i >= sent) {
			if (!foreign)
				xsk_pool_put(in, handle[i]);
			continue;
		}
		t = xsk_ring_prod__tx_desc(&out->tx, tidx + i);
		t->len = p->len;
		t->options = 0;
		if (in == out->pool) {
			t->addr = handle[i];	/* same UMEM: the frame itself */
			continue;
		}
		t->addr = xsk_pool_get(out->pool);
		memcpy(xsk_pool_data(out->pool, t->addr), p->data, p->len);
		if (!foreign)
			xsk_pool_put(in, handle[i]);
		copies++;
	}
	if (sent) {
		xsk_ring_prod__submit(&out->tx, sent);
		out->tx_inflight += sent;
		xsk_queue_kick_tx(out);
	}
	*copied = copies;
	return sent;
}

static void xsk_free(struct backend *b, uint32_t queue, uint32_t port, const uint64_t *handle,
		     uint32_t n)
{
	struct xsk_umem_pool *pool = xsk_of(b)->w[queue].q[port]->pool;

	for (uint32_t i = 0; i < n; i++)
		if (!(handle[i] & BACKEND_HANDLE_FOREIGN))	/* a copy, not ours */
			xsk_pool_put(pool, handle[i]);
}

/* Completions from every socket first (into whichever UMEM they are of),
 * then the free frames spread over the fill rings. */
static uint32_t xsk_service(struct backend *b, uint32_t queue)
{
	struct backend_xsk_worker *w = &xsk_of(b)->w[queue];
	uint32_t work = 0;

	for (uint32_t p = 0; p < b->nports; p++)
		work += xsk_queue_reap(w->q[p]);
	return work + xsk_queues_refill(w->q, b->nports, w->next_port);
}

/* Sleep in the kernel until a frame arrives; while TX frames are still
 * out, wake soon to kick and reap them. */
static int xsk_idle(struct backend *b, uint32_t queue, int timeout_ms, int wake_fd)
{
	struct backend_xsk_worker *w = &xsk_of(b)->w[queue];
	struct pollfd pfd[PIPE_MAX_PORTS + 1];
	uint32_t nfd = b->nports;

	for (uint32_t p = 0; p < b->nports; p++) {
		struct xsk_queue *q = w->q[p];

		pfd[p].fd = q->fd;
		pfd[p].events = POLLIN;
		if (q->tx_inflight)
			timeout_ms = 1;
	}
	if (wake_fd >= 0) {
		pfd[nfd].fd = wake_fd;
		pfd[nfd++].events = POLLIN;
	}
	(void)poll(pfd, nfd, timeout_ms);
	return 0;
}

/* What the kernel dropped for other reasons. In copy mode a frame lost
 * for want of a fill-ring buffer counts twice, in rx_dropped and in
 * rx_fill_ring_empty_descs (__xsk_rcv: xsk_buff_alloc failed); count it
 * once, as no_buffer. Zero-copy drivers take fill buffers themselves and
 * rx_dropped has no such share. */
static uint64_t xsk_other_drops(const struct xsk_queue *q, const struct xdp_statistics *st)
{
	uint64_t empty = st->rx_fill_ring_empty_descs;

	if (q->zerocopy)
		return st->rx_dropped;
	return st->rx_dropped > empty ? st->rx_dropped - empty : 0;
}

/* The kernel's counters of the port's sockets, one per queue (the
 * mapping is docs/operations.md's). Control thread only: getsockopt. */
static int xsk_rx_loss(struct backend *b, uint32_t port, struct backend_rx_loss *out)
{
	const struct xsk_port *p = xsk_of(b)->ports[port];

	memset(out, 0, sizeof(*out));
	for (uint32_t k = 0; k < p->nqueues; k++) {
		struct xdp_statistics st;
		int e = xsk_queue_stats(&p->queues[k], &st);

		if (e) {
			memset(out, 0, sizeof(*out));
			return e;
		}
		out->ring_full += st.rx_ring_full;
		out->no_buffer += st.rx_fill_ring_empty_descs;
		out->invalid += st.rx_invalid_descs + st.tx_invalid_descs;
		out->other += xsk_other_drops(&p->queues[k], &st);
	}
	return 0;
}

static const struct backend_ops xsk_ops = {
	.rx_burst = xsk_rx_burst,
	.tx_burst = xsk_tx_burst,
	.free = xsk_free,
	.service = xsk_service,
	.idle = xsk_idle,
	.rx_loss = xsk_rx_loss,
};

void backend_xsk_init(struct backend_xsk *x, struct xsk_port *const *ports, uint32_t nports,
		      uint32_t nqueues)
{
	memset(x, 0, sizeof(*x));
	x->be.ops = &xsk_ops;
	x->be.nports = nports;
	x->be.nqueues = nqueues;
	x->be.idle_waits_fd = 1;
	x->be.monotonic_clock = 1;
	for (uint32_t p = 0; p < nports; p++) {
		x->ports[p] = ports[p];
		for (uint32_t k = 0; k < nqueues; k++)
			x->w[k].q[p] = &ports[p]->queues[k];
	}
}
