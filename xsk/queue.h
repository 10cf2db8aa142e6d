/* One AF_XDP socket on one RX queue, with the UMEM it owns: the unit a
 * worker drives. Multi-queue interfaces get one of these per queue. */
#ifndef RAMPART_XSK_QUEUE_H
#define RAMPART_XSK_QUEUE_H

#include <stddef.h>
#include <stdint.h>
#include "umem.h"

#define XSK_BATCH 64	/* frames taken from a ring at once */

struct xsk_queue {
	/* hot: rings, in the order the worker touches them */
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_umem_pool pool;
	uint32_t tx_inflight;	/* on the TX or completion ring */
	int fd;
	/* cold */
	struct xsk_socket *sock;
	uint32_t queue_id;
	int zerocopy;		/* 1 bound XDP_ZEROCOPY, 0 copy mode */
};

/* Create UMEM and socket on ifname/queue_id (zero-copy if the driver can,
 * else copy mode) and give the kernel frames to receive into. 0 or
 * negative errno (-EBUSY: the queue has an AF_XDP socket already),
 * message in err. No frame arrives before xsk_queue_join. */
int xsk_queue_open(struct xsk_queue *q, const char *ifname, uint32_t queue_id,
		   char *err, size_t errlen);
/* Put the socket into the program's XSKMAP: frames start to arrive. */
int xsk_queue_join(struct xsk_queue *q, const char *ifname, int xskmap_fd, char *err,
		   size_t errlen);
/* Close socket then UMEM. Safe on a zeroed or half-opened queue. */
void xsk_queue_close(struct xsk_queue *q);

/* Tell the kernel there is TX work, only when it asked to be told
 * (need_wakeup) - never per packet. */
void xsk_queue_kick_tx(struct xsk_queue *q);

/* Per-loop housekeeping: take back sent frames, refill the fill ring, and
 * kick TX while frames wait. Returns frames moved (0 = nothing to do). */
uint32_t xsk_queue_service(struct xsk_queue *q);

/* Frames not found in any of the places a frame can be (free stack, fill
 * ring, RX ring, TX in flight): 0 unless frames leaked. Meaningful when
 * the queue is quiet (after the worker stopped). */
int64_t xsk_queue_frames_unaccounted(const struct xsk_queue *q);

/* Frames the queue can still send now (ring space and free frames). */
static inline uint32_t xsk_queue_tx_room(struct xsk_queue *q, uint32_t want)
{
	uint32_t n = xsk_prod_nb_free(&q->tx, want);

	if (n > want)
		n = want;
	return n < q->pool.nfree ? n : q->pool.nfree;
}

#endif
