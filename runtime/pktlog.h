/* Packet log records (rules with `log: true`, invalid packets): the worker
 * writes them into its own single-producer ring, a logger thread reads
 * them and writes JSON lines. The worker never waits: a full ring drops
 * the record and counts it, and each rule's records are rate limited
 * (a token bucket per rule) so a flood cannot fill a disk. */
#ifndef RAMPART_PKTLOG_H
#define RAMPART_PKTLOG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "pkt.h"

#define PKTLOG_NAME 64		/* rule names are cut to 63 bytes in a record */

struct pktlog_rec {
	uint64_t mono_ns;	/* the burst's clock (CLOCK_MONOTONIC) */
	uint32_t rule;		/* number in the policy of the time; 0 = default */
	uint8_t verdict;	/* enum pipe_verdict */
	uint8_t drop;		/* enum pipe_drop when dropped */
	uint8_t in_port, out_port;
	uint8_t nat;		/* wire differs from key */
	uint8_t invalid;	/* logged as an invalid packet, not for its rule */
	char name[PKTLOG_NAME];	/* the rule's name, copied: reloads free old names */
	struct pkt_key key;	/* as it arrived */
	struct pkt_key wire;	/* as it left (after NAT) */
};

struct pktlog_ring {
	_Alignas(64) _Atomic uint32_t head;	/* written by the worker */
	_Alignas(64) _Atomic uint32_t tail;	/* written by the reader */
	_Alignas(64) uint32_t mask;
	struct pktlog_rec *rec;
	uint64_t full;		/* records lost: ring full (worker's) */
	uint64_t limited;	/* records not made: over the rule's rate (worker's) */
};

/* size: a power of two. 0 or -1 (memory). */
int pktlog_ring_init(struct pktlog_ring *r, uint32_t size);
void pktlog_ring_free(struct pktlog_ring *r);

/* Worker: a slot to fill, or NULL when full (counted); then commit. */
static inline struct pktlog_rec *pktlog_claim(struct pktlog_ring *r)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	if (h - atomic_load_explicit(&r->tail, memory_order_acquire) > r->mask) {
		r->full++;
		return NULL;
	}
	return &r->rec[h & r->mask];
}

static inline void pktlog_commit(struct pktlog_ring *r)
{
	atomic_store_explicit(&r->head, atomic_load_explicit(&r->head, memory_order_relaxed) + 1,
			      memory_order_release);
}

/* Reader: up to max records copied out; returns how many. */
uint32_t pktlog_read(struct pktlog_ring *r, struct pktlog_rec *out, uint32_t max);

/* Per-rule rate: `rate` records a second, bursts of `rate`; 0 = none. */
struct pktlog_bucket {
	uint64_t last_ns;
	uint32_t credit;
};

static inline int pktlog_allow(struct pktlog_bucket *b, uint32_t rate, uint64_t now_ns)
{
	if (now_ns > b->last_ns) {
		uint64_t d = now_ns - b->last_ns;
		/* under a second the product fits 64 bits; a second refills all */
		uint64_t add = d >= 1000000000u ? rate : d * rate / 1000000000u;

		if (add) {
			b->credit = add + b->credit > rate ? rate : (uint32_t)(add + b->credit);
			b->last_ns = now_ns;
		}
	}
	if (!b->credit)
		return 0;
	b->credit--;
	return 1;
}

#endif
