/* The DPDK router's own ARP/ND between threads (neigh_proto.h,
 * neigh_cache.h): each queue's worker pushes what its frames taught into
 * its ring; the main thread, every tick, takes what the rings hold into
 * its cache and gives the workers what the cache says (posts, forgets,
 * probes), through their command rings (worker_neigh_cmd). No DPDK here:
 * unit-tested with made-up rings, workers and times. */
#ifndef RAMPART_DAEMON_NEIGH_RING_H
#define RAMPART_DAEMON_NEIGH_RING_H

#include <stdatomic.h>
#include <stdint.h>

#include "neigh_cache.h"
#include "neigh_proto.h"

#define NR_SLOTS 256		/* power of two */

struct nr_item {
	struct np_learned n;
	uint8_t port;
	uint8_t asked;		/* 1: not news but a solicitation the queue
				 * sent for n.addr (nc_asked) */
};

/* One queue's: the worker writes an item then head (release); the main
 * thread reads up to head, then moves tail. */
struct nr_ring {
	_Alignas(64) atomic_uint head;
	_Alignas(64) atomic_uint tail;
	unsigned drain_to;	/* main thread: the head a drain read */
	unsigned asks_to;	/* and the head it read after every ring's
				 * drain_to, up to which it takes the asks */
	struct nr_item item[NR_SLOTS];
};

/* The main thread's side of it all. */
struct nr_main {
	struct neigh_cache *cache;
	struct nr_ring *const *rings;	/* one a queue */
	struct worker *workers;		/* one a queue, same order */
	uint32_t nq;
	uint32_t next_prober;		/* probes go to the workers in turn */
};

/* Worker: what a frame received on port taught. 1, or 0 when the ring
 * is full (dropped: a later exchange teaches it again). */
int nr_push(struct nr_ring *r, uint8_t port, const struct np_learned *l);
/* Worker: it is about to solicit addr out of port (before the frame
 * goes out, so that the ask is in its ring before any answer is in
 * another's). 1, or 0 when the ring is half full (the answer then
 * teaches nothing; a later solicitation asks again): the other half is
 * the news', which a flood of asks must not crowd out. */
int nr_push_asked(struct nr_ring *r, uint8_t port, uint8_t family, const uint8_t *addr);
/* Main thread: the items the rings hold as it starts into the cache, at
 * most NR_SLOTS a ring: bounded however fast the queues push (an ARP or
 * ND flood cannot keep the main thread here). Every ring's asks before
 * any ring's news, the asks up to heads read after all the news' heads:
 * an answer may come in on another queue than the one that asked. The
 * items taken (up to the news' heads). */
uint32_t nr_drain(struct nr_ring *const *rings, uint32_t nq, struct neigh_cache *c,
		  uint64_t now_ms);
/* Main thread, every tick: nr_drain, then the cache's actions (nc_tick)
 * to the workers; what a worker's full ring refused is done again on a
 * later tick (nc_retry). */
void nr_tick(struct nr_main *m, uint64_t now_ms);

#endif
