/* Frames between workers (pipe_config.handoff): one single-producer,
 * single-consumer ring per ordered pair of workers, of frame copies. A
 * worker whose pipeline says PIPE_HANDOFF copies the frame into its ring
 * to the owner and gives its own buffer back at once (buffers belong to
 * a worker's UMEM or queue, which no other thread may touch); the owner
 * takes the copies once per loop, runs them through its pipeline and
 * sends them on its own queues (the backend copies them into its
 * buffers). No locks: each ring has one writer of head and one of tail,
 * published with release stores, read with acquire loads, once per
 * burst. A full ring drops the frame (counted). */
#ifndef RAMPART_DAEMON_HANDOFF_H
#define RAMPART_DAEMON_HANDOFF_H

#include <stdatomic.h>
#include <stdint.h>

#include "pipeline.h"

#define HANDOFF_FRAME 2048u	/* a slot's room: frames up to this take one */
/* Longest frame handed over: a DPDK jumbo frame (DP_MAX_MTU 9600 and its
 * Ethernet header, two VLAN tags and FCS), more than an AF_XDP frame (a
 * page). A frame longer than a slot takes as many as it needs, up to
 * HANDOFF_SPAN_MAX: its bytes run on over the next slots, headers and
 * all (each ring has HANDOFF_SPAN_MAX - 1 spare slots after its last for
 * a frame that starts near the end). */
#define HANDOFF_FRAME_MAX 9728u
#define HANDOFF_SPAN_MAX 5u
#define HANDOFF_MAX_WORKERS 64	/* = XSK_MAX_QUEUES = DP_MAX_QUEUES */

struct handoff_slot {
	uint32_t len;
	uint8_t in_port;
	uint8_t homed;		/* the frame's pipe_pkt.homed on arrival */
	uint8_t second;		/* its pipe_pkt.second */
	uint8_t span;		/* slots the frame takes: 1 to HANDOFF_SPAN_MAX */
	_Alignas(64) uint8_t data[HANDOFF_FRAME];
};
_Static_assert(HANDOFF_FRAME + (HANDOFF_SPAN_MAX - 1) * sizeof(struct handoff_slot) >=
		       HANDOFF_FRAME_MAX,
	       "HANDOFF_SPAN_MAX slots hold the longest frame");

/* The bytes from a slot's data to the end of span slots. */
static inline uint32_t handoff_span_room(uint32_t span)
{
	return HANDOFF_FRAME + (span - 1) * (uint32_t)sizeof(struct handoff_slot);
}

/* Slots a frame of len bytes takes. */
static inline uint32_t handoff_span(uint32_t len)
{
	return len <= HANDOFF_FRAME ? 1
				    : 1 + (len - HANDOFF_FRAME + (uint32_t)sizeof(struct handoff_slot) - 1) /
						  (uint32_t)sizeof(struct handoff_slot);
}

struct handoff_ring {
	_Alignas(64) atomic_uint head;	/* producer: slots written */
	_Alignas(64) atomic_uint tail;	/* consumer: slots given back */
	uint32_t peeked;	/* consumer: slots the last handoff_peek returned */
	_Alignas(64) uint32_t mask;	/* slots - 1 */
	struct handoff_slot *slot;	/* mask + HANDOFF_SPAN_MAX: the last are spill room */
};

/* A worker about to sleep says so; a worker that hands it frames then
 * writes its eventfd (a system call only while it sleeps). */
struct handoff_wake {
	_Alignas(64) atomic_int sleeping;
	int fd;				/* eventfd, non-blocking */
};

struct handoff {
	uint32_t n;			/* workers */
	struct handoff_wake *wake;	/* [n] */
	uint32_t slots;			/* per ring, a power of two */
	struct handoff_ring *ring;	/* [from * n + to]; from == to unused */
	void *mem;			/* every ring's slots, one mapping */
	size_t mem_len;
};

/* Rings for n workers (n >= 2): slots per ring shrink as n grows so the
 * n * (n - 1) rings stay near 64k slots (~140 MB) in all; the mapping
 * is touched only as frames pass. 0, or -1 with errno. */
int handoff_init(struct handoff *h, uint32_t n);
void handoff_free(struct handoff *h);

static inline struct handoff_ring *handoff_ring(const struct handoff *h, uint32_t from,
						uint32_t to)
{
	return &h->ring[from * h->n + to];
}

/* Producer: copy up to n frames into r, in order; returns how many fit
 * (the rest are the caller's to drop). Frames longer than
 * HANDOFF_FRAME_MAX are the caller's to refuse before. */
uint32_t handoff_send(struct handoff_ring *r, struct pipe_pkt *const *pkts, uint32_t n);

/* Sleeping and waking (the pairing of a store and a load on each side,
 * with a full fence between, means one of them sees the other: a frame
 * sent while the owner goes to sleep either is seen by its last look or
 * wakes it).
 * handoff_sleep: worker `self` is about to sleep; 0 when it may (its
 * eventfd to wait on in *fd), 1 when frames are already waiting (it
 * must not, and is marked awake again). handoff_awake: after the sleep
 * (empties the eventfd). handoff_wake: after handoff_send to `to`. */
int handoff_sleep(struct handoff *h, uint32_t self, int *fd);
void handoff_awake(struct handoff *h, uint32_t self);
void handoff_wake(struct handoff *h, uint32_t to);

/* Consumer: up to max frames waiting in r as pipe_pkts (data in the ring,
 * homed one more than it was at the sender, room what their slots hold);
 * give them all back with handoff_done once sent or dropped. */
uint32_t handoff_peek(struct handoff_ring *r, struct pipe_pkt *pkts, uint32_t max);
void handoff_done(struct handoff_ring *r);

#endif
