/* Opening and servicing one AF_XDP socket. The socket is created with
 * INHIBIT_PROG_LOAD: our own program (xdp_prog.c) is already attached and
 * we insert the socket into its XSKMAP ourselves. */
#include "queue.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>

#ifndef SOL_XDP
#define SOL_XDP 283
#endif
#ifndef XDP_USE_SG	/* linux/if_xdp.h of kernels before 6.6 */
#define XDP_USE_SG (1 << 4)
#endif

/* libxdp binds the first socket of a UMEM with bind_flags and every later
 * one with XDP_SHARED_UMEM alone (the kernel then takes the mode and
 * need_wakeup of the UMEM's first socket). */
static int xsk_queue_bind(struct xsk_queue *q, const char *ifname, uint16_t mode_flag)
{
	struct xsk_socket_config cfg = {
		.rx_size = XSK_RING_SIZE,
		.tx_size = XSK_RING_SIZE,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = 0,
		.bind_flags = XDP_USE_NEED_WAKEUP | mode_flag,
	};
	const struct timespec nap = { 0, 50000000 };
	int e;

	/* A socket closed a moment ago (a rampartd that just stopped, or
	 * our own failed start) holds its queue until the kernel has
	 * released it, asynchronously: EBUSY for a while. Up to a second,
	 * then EBUSY means another user really has the queue. */
	for (int tries = 0;; tries++) {
		e = xsk_socket__create_shared(&q->sock, ifname, q->queue_id, q->pool->umem,
					      &q->rx, &q->tx, &q->fill, &q->comp, &cfg);
		if (!e)
			return 0;
		q->sock = NULL;
		if (e != -EBUSY || tries == 20)
			return e;
		nanosleep(&nap, NULL);
	}
}

/* The first socket of a UMEM registers it, its rings becoming the
 * socket's, and binds zero-copy if the driver can, else copy mode; in
 * either with multi-buffer (XDP_USE_SG, kernel 6.6) where the kernel and
 * driver have it, so that frames longer than a UMEM frame (an MTU over
 * about 3,500) arrive and leave as chains of frames. A driver with
 * zero-copy but not its multi-buffer keeps zero-copy (such frames are
 * then dropped by the kernel; the port's MTU says what fits). */
static int xsk_queue_bind_first(struct xsk_queue *q, const char *ifname, char *err,
				size_t errlen)
{
	static const uint16_t tries[] = { XDP_ZEROCOPY | XDP_USE_SG, XDP_ZEROCOPY,
					  XDP_COPY | XDP_USE_SG, XDP_COPY };
	int e = 0;

	if (!q->pool->umem)
		e = xsk_pool_register(q->pool, &q->fill, &q->comp, err, errlen);
	if (e)
		return e;
	/* Zero-copy needs driver support (not veth, not virtio). */
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		if ((tries[i] & XDP_USE_SG) && getenv("RAMPART_XSK_NO_SG"))
			continue;	/* the lab plays a kernel without it */
		e = xsk_queue_bind(q, ifname, tries[i]);
		if (!e) {
			q->pool->sg = !!(tries[i] & XDP_USE_SG);
			break;
		}
		if (e == -EBUSY)
			break;
	}
	if (e)
		snprintf(err, errlen, "cannot create AF_XDP socket on %s queue %u: %s%s", ifname,
			 q->queue_id, strerror(-e),
			 e == -EBUSY ? " (another AF_XDP user, e.g. a running rampartd, has it)" : "");
	return e;
}

/* The mode the kernel gave the socket: asked, not assumed (a socket
 * sharing a UMEM gets the UMEM's). */
static int xsk_queue_is_zerocopy(int fd)
{
	struct xdp_options opts = { 0 };
	socklen_t len = sizeof(opts);

	if (getsockopt(fd, SOL_XDP, XDP_OPTIONS, &opts, &len))
		return 0;
	return !!(opts.flags & XDP_OPTIONS_ZEROCOPY);
}

int xsk_queue_open(struct xsk_queue *q, const char *ifname, uint32_t queue_id,
		   struct xsk_umem_pool *shared, char *err, size_t errlen)
{
	int e = 0;

	memset(q, 0, sizeof(*q));
	q->fd = -1;
	q->queue_id = queue_id;
	if (shared && shared->nusers) {
		q->pool = shared;
		/* RAMPART_XSK_REFUSE_SHARE=1 plays the driver that refuses, so
		 * the lab can test the fallback on veth, which never does. */
		if (getenv("RAMPART_XSK_REFUSE_SHARE"))
			e = -EOPNOTSUPP;
		else
			e = xsk_queue_bind(q, ifname, 0);
		if (e == -EBUSY) {
			snprintf(err, errlen, "cannot create AF_XDP socket on %s queue %u: %s "
				 "(another AF_XDP user, e.g. a running rampartd, has it)", ifname,
				 queue_id, strerror(-e));
			q->pool = NULL;
			return e;
		}
		/* Some drivers refuse a UMEM registered on another device
		 * (or its mode): a UMEM of our own, forwarding copies. */
		q->shared = !e;
		q->share_err = e;
	} else if (shared) {
		q->pool = shared;
		e = xsk_queue_bind_first(q, ifname, err, errlen);
		if (e) {
			q->pool = NULL;
			return e;
		}
	}
	if (!q->sock) {
		q->pool = &q->own;
		e = xsk_pool_create(&q->own, XSK_NUM_FRAMES, err, errlen);
		if (!e)
			e = xsk_queue_bind_first(q, ifname, err, errlen);
		if (e) {
			xsk_queue_close(q);
			return e;
		}
	}
	q->pool->nusers++;
	q->fd = xsk_socket__fd(q->sock);
	q->zerocopy = xsk_queue_is_zerocopy(q->fd);
	q->sg = q->pool->sg;	/* a shared socket has its UMEM's (the kernel's rule) */
	xsk_queue_refill(q, XSK_RING_SIZE);
	return 0;
}

int xsk_queue_join(struct xsk_queue *q, const char *ifname, int xskmap_fd, char *err,
		   size_t errlen)
{
	int e = xsk_socket__update_xskmap(q->sock, xskmap_fd);

	if (e)
		snprintf(err, errlen, "cannot insert AF_XDP socket of %s queue %u into the XSKMAP: %s",
			 ifname, q->queue_id, strerror(-e));
	return e;
}

void xsk_queue_close(struct xsk_queue *q)
{
	if (q->sock) {
		xsk_socket__delete(q->sock);
		q->pool->nusers--;
	}
	q->sock = NULL;
	q->fd = -1;
	xsk_pool_destroy(&q->own);
	q->pool = NULL;
}

void xsk_queue_kick_tx(struct xsk_queue *q)
{
	if (!xsk_ring_prod__needs_wakeup(&q->tx))
		return;
	/* EAGAIN/EBUSY/ENOBUFS mean "busy, try later"; the next loop kicks
	 * again while tx_inflight > 0, so the error needs no handling. */
	(void)sendto(q->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
}

uint32_t xsk_queue_reap(struct xsk_queue *q)
{
	uint32_t done;

	if (!q->tx_inflight)
		return 0;
	done = xsk_pool_reap(q->pool, &q->comp);
	q->tx_inflight -= done;
	/* Copy mode sends at most a small batch per kick: keep kicking
	 * until the ring is drained. */
	if (q->tx_inflight)
		xsk_queue_kick_tx(q);
	return done;
}

/* A zero-copy driver stops receiving when the fill ring ran dry and
 * waits for a wakeup; copy mode never sets the flag. */
static void xsk_queue_wake_fill(struct xsk_queue *q)
{
	if (q->zerocopy && xsk_ring_prod__needs_wakeup(&q->fill))
		(void)recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
}

uint32_t xsk_queue_refill(struct xsk_queue *q, uint32_t max)
{
	uint32_t done = xsk_pool_refill(q->pool, &q->fill, max);

	xsk_queue_wake_fill(q);
	return done;
}

uint32_t xsk_queue_service(struct xsk_queue *q)
{
	uint32_t done = xsk_queue_reap(q);

	return done + xsk_queue_refill(q, XSK_RING_SIZE);
}

uint32_t xsk_queues_refill(struct xsk_queue *const *qs, uint32_t n, uint32_t first)
{
	uint32_t share[XSK_MAX_SHARE], done = 0;

	assert(n <= XSK_MAX_SHARE);
	/* shares from the counts before anyone takes: the order of the
	 * sockets does not change what each is offered */
	for (uint32_t i = 0; i < n; i++) {
		const struct xsk_umem_pool *p = qs[i]->pool;

		share[i] = p->nusers > 1 ? (p->nfree + p->nusers - 1) / p->nusers : p->nfree;
	}
	for (uint32_t i = 0; i < n; i++)
		done += xsk_pool_refill(qs[i]->pool, &qs[i]->fill, share[i]);
	for (uint32_t k = 0; k < n; k++) {
		struct xsk_queue *q = qs[(first + k) % n];

		if (q->pool->nfree)
			done += xsk_pool_refill(q->pool, &q->fill, XSK_RING_SIZE);
		xsk_queue_wake_fill(q);
	}
	return done;
}

int xsk_queue_stats(const struct xsk_queue *q, struct xdp_statistics *st)
{
	socklen_t len = sizeof(*st);

	memset(st, 0, sizeof(*st));
	if (!q->sock || q->fd < 0)
		return 0;
	/* an older kernel fills a shorter struct; the rest stays 0 */
	if (getsockopt(q->fd, SOL_XDP, XDP_STATISTICS, st, &len))
		return -errno;
	return 0;
}

int64_t xsk_queue_frames_held(const struct xsk_queue *q)
{
	const struct xsk_ring_prod *fill = &q->fill;
	uint32_t in_fill, in_rx;

	if (!q->sock)
		return 0;
	in_fill = __atomic_load_n(fill->producer, __ATOMIC_ACQUIRE) -
		  __atomic_load_n(fill->consumer, __ATOMIC_ACQUIRE);
	in_rx = __atomic_load_n(q->rx.producer, __ATOMIC_ACQUIRE) -
		__atomic_load_n(q->rx.consumer, __ATOMIC_ACQUIRE);
	return (int64_t)in_fill + in_rx + q->tx_inflight;
}

int64_t xsk_pool_frames_unaccounted(const struct xsk_umem_pool *p,
				    const struct xsk_queue *const *qs, uint32_t n)
{
	int64_t held = p->nfree;

	for (uint32_t i = 0; i < n; i++)
		if (qs[i]->pool == p)
			held += xsk_queue_frames_held(qs[i]);
	return (int64_t)p->nframes - held;
}
