/* AF_XDP rx/tx/free for the worker: ring work per burst, syscalls only to
 * kick TX (when the kernel asks) or to sleep when idle. A frame goes out
 * by its address when the egress socket shares the ingress socket's UMEM
 * and is copied once when it does not. */
#include "backend_xsk.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/if_xdp.h>

_Static_assert(PIPE_MAX_PORTS <= XSK_MAX_SHARE, "xsk_queues_refill takes every port's socket");

static inline struct backend_xsk *xsk_of(struct backend *b)
{
	return (struct backend_xsk *)b;
}

#ifndef XDP_PKT_CONTD	/* linux/if_xdp.h of kernels before 6.6 */
#define XDP_PKT_CONTD (1 << 0)
#endif

static inline void rx_frame(struct pipe_pkt *p, uint8_t *data, uint32_t len, uint32_t room,
			    uint32_t port)
{
	p->data = data;
	p->len = len;
	p->room = room;
	p->in_port = (uint8_t)port;
	p->homed = 0;
	p->rx_flags = 0;	/* AF_XDP passes no checksum result */
}

/* One chain from the RX ring at descriptor idx + i (multi-buffer: all but
 * its last say XDP_PKT_CONTD), copied whole into the worker's next free
 * slot, its frames given back at once, and put in *p as a foreign frame
 * (*made = 1); longer than a slot: dropped and counted. Returns the
 * descriptor after it, or i when the peek of m cut it (it waits for the
 * next burst, not consumed: the kernel publishes a frame's descriptors
 * together). */
static uint32_t rx_chain(struct backend_xsk_worker *w, struct xsk_queue *q, uint32_t idx,
			 uint32_t i, uint32_t m, struct pipe_pkt *p, uint64_t *handle, uint32_t port,
			 uint32_t *made)
{
	uint32_t last = i, len = 0, fits = w->joined != NULL;
	uint8_t *to;

	*made = 0;
	while (last < m && (xsk_ring_cons__rx_desc(&q->rx, idx + last)->options & XDP_PKT_CONTD))
		last++;
	if (last == m)
		return i;
	to = w->joined ? w->joined + (size_t)w->njoined * XSK_JOINED_ROOM : NULL;
	for (uint32_t j = i; j <= last; j++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&q->rx, idx + j);

		if (fits && d->len <= XSK_JOINED_ROOM - len) {
			memcpy(to + len, xsk_pool_data(q->pool, d->addr), d->len);
			len += d->len;
		} else {
			fits = 0;
		}
		xsk_pool_put(q->pool, d->addr);
	}
	if (!fits) {	/* (no slots: cannot happen, no chain without multi-buffer) */
		__atomic_store_n(&w->too_long[port], w->too_long[port] + 1, __ATOMIC_RELAXED);
		return last + 1;
	}
	rx_frame(p, to, len, XSK_JOINED_ROOM, port);
	*handle = BACKEND_HANDLE_FOREIGN;
	*made = 1;
	w->njoined++;
	return last + 1;
}

/* The frames of descriptors i.. of the m peeked from idx, from the first
 * chain on, at pkts[got]: out of line, so that the common loop (a frame
 * a descriptor) keeps its registers. Returns the descriptors consumed
 * (high 32 bits) and got after them (low). */
static __attribute__((noinline, cold)) uint64_t
rx_rest(struct backend_xsk_worker *w, struct xsk_queue *q, uint32_t idx, uint32_t i, uint32_t m,
	struct pipe_pkt *pkts, uint64_t *handle, uint32_t got, uint32_t port)
{
	while (i < m) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&q->rx, idx + i);

		if (d->options & XDP_PKT_CONTD) {
			uint32_t made, end = rx_chain(w, q, idx, i, m, &pkts[got], &handle[got], port,
						      &made);

			got += made;
			if (end == i)
				break;	/* cut by the peek */
			i = end;
			continue;
		}
		rx_frame(&pkts[got], xsk_pool_data(q->pool, d->addr), d->len,
			 XSK_FRAME_SIZE - (uint32_t)(d->addr - xsk_pool_frame(d->addr)), port);
		handle[got++] = d->addr;
		i++;
	}
	return (uint64_t)i << 32 | got;
}

static uint32_t xsk_rx_burst(struct backend *b, uint32_t queue, struct pipe_pkt *pkts,
			     uint64_t *handle, uint32_t n, uint64_t *now_ns)
{
	struct backend_xsk_worker *w = &xsk_of(b)->w[queue];
	uint32_t got = 0;

	w->njoined = 0;	/* the last burst's frames are gone */
	for (uint32_t k = 0; k < b->nports && got < n; k++) {
		uint32_t port = (w->next_port + k) % b->nports;
		struct xsk_queue *q = w->q[port];
		uint32_t idx = 0, m = xsk_ring_cons__peek(&q->rx, n - got, &idx), i;

		for (i = 0; i < m; i++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&q->rx, idx + i);

			if (__builtin_expect(d->options & XDP_PKT_CONTD, 0)) {
				uint64_t r = rx_rest(w, q, idx, i, m, pkts, handle, got, port);

				i = (uint32_t)(r >> 32);
				got = (uint32_t)r;
				break;
			}
			/* replies may grow the frame up to the end of its chunk */
			rx_frame(&pkts[got], xsk_pool_data(q->pool, d->addr), d->len,
				 XSK_FRAME_SIZE - (uint32_t)(d->addr - xsk_pool_frame(d->addr)), port);
			handle[got++] = d->addr;
		}
		if (i)
			xsk_ring_cons__release(&q->rx, i);
		if (__builtin_expect(i < m, 0))
			xsk_ring_cons__cancel(&q->rx, m - i);
	}
	w->next_port = (w->next_port + 1) % b->nports;
	if (got) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		*now_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	return got;
}

/* TX descriptors (and, for a copy, free frames) a frame needs: one,
 * or with multi-buffer one per UMEM frame of it. 0: it cannot go out of
 * this socket (longer than a frame without multi-buffer; the port's MTU
 * keeps the pipeline from making such frames, backend_xsk_frame_max). */
static inline uint32_t tx_segments(const struct xsk_queue *out, uint32_t len)
{
	uint32_t n = len <= XSK_FRAME_SIZE ? 1 : (len + XSK_FRAME_SIZE - 1) / XSK_FRAME_SIZE;

	return n == 1 || (out->sg && len <= XSK_JOINED_ROOM) ? n : 0;
}

static inline int tx_in_place(const struct backend_xsk_worker *w, const struct xsk_queue *out,
			      const struct pipe_pkt *p, uint64_t handle)
{
	return !(handle & BACKEND_HANDLE_FOREIGN) && w->q[p->in_port]->pool == out->pool;
}

/* How many of pkts, from the front, can go now: each needs TX ring
 * slots, and free frames of the egress UMEM unless it already is one of
 * its frames (a bounce, or a forward between sockets sharing the UMEM).
 * *slots gets the ring slots they take. A frame that can never go
 * (tx_segments 0) ends the prefix and sets *unsendable. */
static inline __attribute__((always_inline)) uint32_t
tx_prefix(const struct backend_xsk_worker *w, struct xsk_queue *out, struct pipe_pkt *const *pkts,
	  const uint64_t *handle, uint32_t n, uint32_t *slots, int *unsendable)
{
	/* ring: the free slots less those chains took beyond one a frame
	 * (extra), so a frame in one slot costs what it did before chains */
	uint32_t ring = xsk_prod_nb_free(&out->tx, n), copies = 0, extra = 0, k;

	for (k = 0; k < n && k < ring; k++) {
		uint32_t segs = 1;

		if (tx_in_place(w, out, pkts[k], handle[k]))
			continue;
		if (__builtin_expect(pkts[k]->len > XSK_FRAME_SIZE, 0)) {
			segs = tx_segments(out, pkts[k]->len);
			if (!segs) {
				*unsendable = 1;
				break;
			}
			if (k + segs > ring) {	/* more than the cached count may say */
				uint32_t have = xsk_prod_nb_free(&out->tx, k + extra + segs);

				if (have < k + extra + segs)
					break;
				ring = have - extra;
			}
		}
		if (copies + segs > out->pool->nfree)
			break;
		copies += segs;
		extra += segs - 1;
		ring -= segs - 1;
	}
	*slots = k + extra;
	return k;
}

/* Copy p into frames of out's UMEM from TX slot tidx on: one descriptor
 * per frame, all but the last marked XDP_PKT_CONTD. Returns the slots. */
static uint32_t tx_copy(struct xsk_queue *out, uint32_t tidx, const struct pipe_pkt *p)
{
	uint32_t off = 0, n = 0;

	do {
		struct xdp_desc *t = xsk_ring_prod__tx_desc(&out->tx, tidx + n++);
		uint32_t part = p->len - off < XSK_FRAME_SIZE ? p->len - off : XSK_FRAME_SIZE;

		t->addr = xsk_pool_get(out->pool);
		t->len = part;
		memcpy(xsk_pool_data(out->pool, t->addr), p->data + off, part);
		off += part;
		t->options = off < p->len ? XDP_PKT_CONTD : 0;
	} while (off < p->len);
	return n;
}

/* The frames of pkts that can never go out of out (longer than a UMEM
 * frame on a socket without multi-buffer: bridged from a port with it,
 * or handed over by another worker) moved behind the rest, both in
 * order. Returns how many can go. Only when tx_prefix met one. */
static __attribute__((cold, noinline)) uint32_t
tx_unsendable_last(const struct backend_xsk_worker *w, const struct xsk_queue *out,
		   struct pipe_pkt **pkts, uint64_t *handle, uint32_t n)
{
	struct pipe_pkt *cut[PIPE_BURST];
	uint64_t cut_handle[PIPE_BURST];
	uint32_t keep = 0, ncut = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (ncut < PIPE_BURST && !tx_in_place(w, out, pkts[i], handle[i]) &&
		    pkts[i]->len > XSK_FRAME_SIZE && !tx_segments(out, pkts[i]->len)) {
			cut[ncut] = pkts[i];
			cut_handle[ncut++] = handle[i];
			continue;
		}
		pkts[keep] = pkts[i];
		handle[keep++] = handle[i];
	}
	memcpy(pkts + keep, cut, ncut * sizeof(*cut));
	memcpy(handle + keep, cut_handle, ncut * sizeof(*cut_handle));
	return keep;
}

static uint32_t xsk_tx_burst(struct backend *b, uint32_t queue, uint32_t port,
			     struct pipe_pkt **pkts, uint64_t *handle, uint32_t n, uint32_t *copied)
{
	const struct backend_xsk_worker *w = &xsk_of(b)->w[queue];
	struct xsk_queue *out = w->q[port];
	uint32_t sent, slots = 0, tidx = 0, copies = 0, at = 0;
	int unsendable = 0;

	sent = tx_prefix(w, out, pkts, handle, n, &slots, &unsendable);
	if (sent < n) {
		xsk_queue_reap(out);		/* completions free TX slots and frames */
		sent = tx_prefix(w, out, pkts, handle, n, &slots, &unsendable);
	}
	/* After the reap: the look before it may have stopped short of an
	 * unsendable frame (no free frames yet) that the second one meets */
	if (__builtin_expect(unsendable, 0)) {
		uint32_t can = tx_unsendable_last(w, out, pkts, handle, n);

		sent = tx_prefix(w, out, pkts, handle, can, &slots, &unsendable);
	}
	if (slots && xsk_ring_prod__reserve(&out->tx, slots, &tidx) != slots)
		sent = slots = 0;	/* cannot happen: nb_free said they fit */
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
		if (in == out->pool) {
			t = xsk_ring_prod__tx_desc(&out->tx, tidx + at++);
			t->addr = handle[i];	/* same UMEM: the frame itself */
			t->len = p->len;
			t->options = 0;
			continue;
		}
		at += tx_copy(out, tidx + at, p);
		if (!foreign)
			xsk_pool_put(in, handle[i]);
		copies++;
	}
	if (slots) {
		xsk_ring_prod__submit(&out->tx, slots);
		out->tx_inflight += slots;
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
	/* chains longer than a slot: the workers' counts, read as they go */
	for (uint32_t k = 0; k < b->nqueues; k++)
		out->other += __atomic_load_n(&xsk_of(b)->w[k].too_long[port], __ATOMIC_RELAXED);
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

int backend_xsk_init(struct backend_xsk *x, struct xsk_port *const *ports, uint32_t nports,
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
	for (uint32_t k = 0; k < nqueues; k++) {
		int sg = 0;

		for (uint32_t p = 0; p < nports; p++)
			sg |= x->w[k].q[p]->sg;
		if (!sg)
			continue;
		x->w[k].joined = malloc((size_t)PIPE_BURST * XSK_JOINED_ROOM);
		if (!x->w[k].joined) {
			backend_xsk_fini(x);
			return -1;
		}
	}
	return 0;
}

void backend_xsk_fini(struct backend_xsk *x)
{
	for (uint32_t k = 0; k < XSK_MAX_QUEUES; k++) {
		free(x->w[k].joined);
		x->w[k].joined = NULL;
	}
}

uint32_t backend_xsk_frame_max(const struct backend_xsk *x, uint32_t port)
{
	uint32_t sg = 1;

	for (uint32_t k = 0; k < x->be.nqueues; k++)
		sg &= (uint32_t)x->w[k].q[port]->sg;
	return sg ? XSK_JOINED_ROOM : XSK_FRAME_SIZE;
}
