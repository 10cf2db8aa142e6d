/* One AF_XDP socket on one RX queue: its four rings and the UMEM its
 * frames live in. The UMEM is the worker's, shared with its sockets on
 * the other interfaces, when the kernel lets the socket bind to it;
 * otherwise the socket has one of its own. */
#ifndef RAMPART_XSK_QUEUE_H
#define RAMPART_XSK_QUEUE_H

#include <stddef.h>
#include <stdint.h>
#include "umem.h"

#define XSK_BATCH 64	/* frames taken from a ring at once */
#define XSK_MAX_SHARE 8	/* sockets one worker drives (= PIPE_MAX_PORTS) */

struct xsk_queue {
	/* hot: rings, in the order the worker touches them */
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_umem_pool *pool;	/* &own, or the worker's shared UMEM */
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	uint32_t tx_inflight;	/* on the TX or completion ring */
	int fd;
	/* cold */
	struct xsk_socket *sock;
	uint32_t queue_id;
	int zerocopy;		/* 1 bound XDP_ZEROCOPY, 0 copy mode */
	int sg;			/* frames longer than a UMEM frame come and go as chains */
	int shared;		/* 1 bound to a UMEM another socket registered */
	int share_err;		/* why the shared bind failed (negative errno), 0 if not */
	struct xsk_umem_pool own;	/* used when not sharing */
};

/* Create the socket on ifname/queue_id and give the kernel frames to
 * receive into. With shared (a pool from xsk_pool_create, possibly
 * registered by an earlier socket) it binds to that UMEM; if the kernel
 * refuses (share_err says why) the socket gets a UMEM of its own. The
 * socket that registers a UMEM binds zero-copy if the driver can, else
 * copy mode; a socket sharing it takes the mode of the UMEM. shared NULL:
 * a UMEM of its own. 0 or negative errno (-EBUSY: the queue has an
 * AF_XDP socket already), message in err. No frame arrives before
 * xsk_queue_join. */
int xsk_queue_open(struct xsk_queue *q, const char *ifname, uint32_t queue_id,
		   struct xsk_umem_pool *shared, char *err, size_t errlen);
/* Put the socket into the program's XSKMAP: frames start to arrive. */
int xsk_queue_join(struct xsk_queue *q, const char *ifname, int xskmap_fd, char *err,
		   size_t errlen);
/* Close the socket, then its own UMEM if it has one (a shared one is the
 * caller's, destroyed after all its sockets). Safe on a zeroed or
 * half-opened queue. */
void xsk_queue_close(struct xsk_queue *q);

/* Tell the kernel there is TX work, only when it asked to be told
 * (need_wakeup) - never per packet. */
void xsk_queue_kick_tx(struct xsk_queue *q);

/* Take back sent frames into the queue's UMEM, and kick TX while frames
 * wait. Returns frames taken back. */
uint32_t xsk_queue_reap(struct xsk_queue *q);
/* Give up to max free frames of the UMEM to the socket's fill ring (and
 * wake a zero-copy driver that ran dry). Returns how many. */
uint32_t xsk_queue_refill(struct xsk_queue *q, uint32_t max);
/* Both, for a queue with a UMEM of its own. Returns frames moved. */
uint32_t xsk_queue_service(struct xsk_queue *q);
/* The fill rings of n sockets (a worker's, some sharing a UMEM): each
 * first gets its share of its UMEM's free frames (free / sockets on the
 * UMEM), then, in turn from `first`, what is left as long as it has
 * room. Returns frames given. */
uint32_t xsk_queues_refill(struct xsk_queue *const *qs, uint32_t n, uint32_t first);

/* Frames of its UMEM the socket holds: in the fill ring, the RX ring, or
 * TX in flight. Read when the queue is quiet (after the worker stopped). */
int64_t xsk_queue_frames_held(const struct xsk_queue *q);

/* Frames of p in none of the places a frame can be (free stack, or held
 * by one of the n sockets, those of qs whose pool is p): 0 unless frames
 * leaked. Meaningful when the queues are quiet. */
int64_t xsk_pool_frames_unaccounted(const struct xsk_umem_pool *p,
				    const struct xsk_queue *const *qs, uint32_t n);

/* The kernel's drop counters of the socket (XDP_STATISTICS), since it
 * was opened. A socket not open (zeroed, closed) has none: *st zeroed,
 * 0. Otherwise 0 or negative errno. A system call: never from a worker. */
struct xdp_statistics;
int xsk_queue_stats(const struct xsk_queue *q, struct xdp_statistics *st);

/* Free frames in the fill ring: how many xsk_queue_refill could give. */
static inline uint32_t xsk_queue_fill_room(struct xsk_queue *q)
{
	return xsk_prod_nb_free(&q->fill, XSK_RING_SIZE);
}

#endif
