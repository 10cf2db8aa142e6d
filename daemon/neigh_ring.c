/* The DPDK router's ARP/ND between the queues and the main thread: see
 * neigh_ring.h. */
#include "neigh_ring.h"

#include <string.h>

#include "worker.h"

/* it into r if r holds fewer than `most` items. */
static int push(struct nr_ring *r, const struct nr_item *it, unsigned most)
{
	unsigned head = atomic_load_explicit(&r->head, memory_order_relaxed);
	unsigned tail = atomic_load_explicit(&r->tail, memory_order_acquire);

	if (head - tail >= most)
		return 0;
	r->item[head & (NR_SLOTS - 1)] = *it;
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
	return 1;
}

int nr_push(struct nr_ring *r, uint8_t port, const struct np_learned *l)
{
	return push(r, &(struct nr_item){.n = *l, .port = port}, NR_SLOTS);
}

int nr_push_asked(struct nr_ring *r, uint8_t port, uint8_t family, const uint8_t *addr)
{
	struct nr_item it = {.n = {.family = family}, .port = port, .asked = 1};

	memcpy(it.n.addr, addr, family == 4 ? 4 : 16);
	/* Asks take at most half the ring: a sender can make a worker ask
	 * as fast as it sends packets to unused addresses of a connected
	 * subnet, and a ring full of those asks would refuse the answers
	 * to the known neighbours' probes, which would all be forgotten. */
	return push(r, &it, NR_SLOTS / 2);
}

uint32_t nr_drain(struct nr_ring *const *rings, uint32_t nq, struct neigh_cache *c,
		  uint64_t now_ms)
{
	uint32_t taken = 0;

	/* Every head read once, before any item is looked at: what a
	 * worker pushes meanwhile waits for the next tick (a ring holds
	 * NR_SLOTS at the most). Then every head again, for the asks: an
	 * answer seen here was pushed before its ring's head was read, so
	 * its ask (pushed before the solicitation went out) before this
	 * second read of the asking ring's head, wherever the two rings
	 * are in the order (read once, the asking ring's head could be read
	 * before the ask and the answering ring's after the answer). An ask
	 * past drain_to is taken again on the next tick: harmless. */
	for (uint32_t q = 0; q < nq; q++)
		rings[q]->drain_to = atomic_load_explicit(&rings[q]->head, memory_order_acquire);
	for (uint32_t q = 0; q < nq; q++)
		rings[q]->asks_to = atomic_load_explicit(&rings[q]->head, memory_order_acquire);
	for (int asks = 1; asks >= 0; asks--) {
		for (uint32_t q = 0; q < nq; q++) {
			struct nr_ring *r = rings[q];
			unsigned tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

			for (unsigned t = tail; t != (asks ? r->asks_to : r->drain_to); t++) {
				const struct nr_item *it = &r->item[t & (NR_SLOTS - 1)];

				if (it->asked != asks)
					continue;
				if (asks)
					nc_asked(c, it->port, it->n.family, it->n.addr, now_ms);
				else
					nc_learn(c, it->port, &it->n, now_ms);
				if (t - tail < r->drain_to - tail)
					taken++;	/* (one past it: on the next tick) */
			}
		}
	}
	for (uint32_t q = 0; q < nq; q++)
		atomic_store_explicit(&rings[q]->tail, rings[q]->drain_to, memory_order_release);
	return taken;
}

#define NR_BATCH 64

/* A probe to the next worker whose ring takes it; when none does, it is
 * given back to the cache, so that only probes sent count against the
 * neighbour. */
static void post_probe(struct nr_main *m, const struct nc_action *t, uint64_t now_ms)
{
	for (uint32_t k = 0; k < m->nq; k++)
		if (!worker_neigh_cmd(&m->workers[m->next_prober++ % m->nq], WORKER_NEIGH_PROBE,
				      t->port, t->family, t->addr, t->mac))
			return;
	nc_retry(m->cache, t, now_ms);
}

void nr_tick(struct nr_main *m, uint64_t now_ms)
{
	struct nc_action act[NR_BATCH];
	uint32_t n;

	nr_drain(m->rings, m->nq, m->cache, now_ms);
	/* bounded: at most so many rounds a tick (what a full ring
	 * refused waits for the next tick: nc_retry) */
	for (uint32_t round = 0;
	     round <= NC_MAX / NR_BATCH && (n = nc_tick(m->cache, now_ms, act, NR_BATCH)); round++) {
		for (uint32_t i = 0; i < n; i++) {
			const struct nc_action *t = &act[i];
			int lost = 0;

			if (t->op == NC_PROBE) {
				post_probe(m, t, now_ms);
				continue;
			}
			for (uint32_t k = 0; k < m->nq; k++)
				lost |= worker_neigh_cmd(&m->workers[k],
							 t->op == NC_POST ? WORKER_NEIGH_SET
									  : WORKER_NEIGH_FORGET,
							 t->port, t->family, t->addr, t->mac);
			if (lost)
				nc_retry(m->cache, t, now_ms);
		}
		if (n < NR_BATCH)
			break;
	}
}
