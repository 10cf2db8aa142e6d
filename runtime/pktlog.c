/* The packet log ring's reader side and set-up (pktlog.h). */
#include "pktlog.h"

#include <stdlib.h>
#include <string.h>

int pktlog_ring_init(struct pktlog_ring *r, uint32_t size)
{
	memset(r, 0, sizeof(*r));
	if (!size || (size & (size - 1)))
		return -1;
	r->rec = calloc(size, sizeof(*r->rec));
	if (!r->rec)
		return -1;
	r->mask = size - 1;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	return 0;
}

void pktlog_ring_free(struct pktlog_ring *r)
{
	free(r->rec);
	r->rec = NULL;
}

uint32_t pktlog_read(struct pktlog_ring *r, struct pktlog_rec *out, uint32_t max)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire), n = 0;

	for (; t != h && n < max; t++, n++)
		out[n] = r->rec[t & r->mask];
	atomic_store_explicit(&r->tail, t, memory_order_release);
	return n;
}
