/* Opening and servicing one AF_XDP socket. The socket is created with
 * INHIBIT_PROG_LOAD: our own program (xdp_prog.c) is already attached and
 * we insert the socket into its XSKMAP ourselves. */
#include "queue.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>

static int xsk_queue_bind(struct xsk_queue *q, const char *ifname,
			  uint16_t mode_flag)
{
	struct xsk_socket_config cfg = {
		.rx_size = XSK_RING_SIZE,
		.tx_size = XSK_RING_SIZE,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = 0,
		.bind_flags = XDP_USE_NEED_WAKEUP | mode_flag,
	};
	int e;

	e = xsk_socket__create(&q->sock, ifname, q->queue_id, q->pool.umem,
			       &q->rx, &q->tx, &cfg);
	if (e)
		q->sock = NULL;
	return e;
}

int xsk_queue_open(struct xsk_queue *q, const char *ifname, uint32_t queue_id,
		   char *err, size_t errlen)
{
	int e;

	memset(q, 0, sizeof(*q));
	q->fd = -1;
	q->queue_id = queue_id;
	e = xsk_pool_create(&q->pool, err, errlen);
	if (e)
		return e;
	/* Zero-copy needs driver support (not veth, not virtio): try it,
	 * then copy mode, and report which one we got. */
	e = xsk_queue_bind(q, ifname, XDP_ZEROCOPY);
	if (!e) {
		q->zerocopy = 1;
	} else {
		e = xsk_queue_bind(q, ifname, XDP_COPY);
	}
	if (e) {
		snprintf(err, errlen, "cannot create AF_XDP socket on %s queue %u: %s%s",
			 ifname, queue_id, strerror(-e),
			 e == -EBUSY ? " (another AF_XDP user, e.g. a running rampartd, has it)" : "");
		xsk_queue_close(q);
		return e;
	}
	q->fd = xsk_socket__fd(q->sock);
	xsk_pool_refill(&q->pool);
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
	if (q->sock)
		xsk_socket__delete(q->sock);
	q->sock = NULL;
	q->fd = -1;
	xsk_pool_destroy(&q->pool);
}

void xsk_queue_kick_tx(struct xsk_queue *q)
{
	if (!xsk_ring_prod__needs_wakeup(&q->tx))
		return;
	/* EAGAIN/EBUSY/ENOBUFS mean "busy, try later"; the next loop kicks
	 * again while tx_inflight > 0, so the error needs no handling. */
	(void)sendto(q->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
}

uint32_t xsk_queue_service(struct xsk_queue *q)
{
	uint32_t done = 0;

	if (q->tx_inflight) {
		done = xsk_pool_reap(&q->pool);
		q->tx_inflight -= done;
		/* Copy mode sends at most a small batch per kick: keep
		 * kicking until the ring is drained. */
		if (q->tx_inflight)
			xsk_queue_kick_tx(q);
	}
	done += xsk_pool_refill(&q->pool);
	/* A zero-copy driver stops receiving when the fill ring ran dry and
	 * waits for a wakeup; copy mode never sets the flag. */
	if (q->zerocopy && xsk_ring_prod__needs_wakeup(&q->pool.fill))
		(void)recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return done;
}

int64_t xsk_queue_frames_unaccounted(const struct xsk_queue *q)
{
	const struct xsk_ring_prod *fill = &q->pool.fill;
	uint32_t in_fill, in_rx;

	if (!q->sock)
		return 0;
	in_fill = __atomic_load_n(fill->producer, __ATOMIC_ACQUIRE) -
		  __atomic_load_n(fill->consumer, __ATOMIC_ACQUIRE);
	in_rx = __atomic_load_n(q->rx.producer, __ATOMIC_ACQUIRE) -
		__atomic_load_n(q->rx.consumer, __ATOMIC_ACQUIRE);
	return (int64_t)q->pool.nframes -
	       ((int64_t)q->pool.nfree + in_fill + in_rx + q->tx_inflight);
}
