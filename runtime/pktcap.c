/* The capture ring's set-up and reader side (pktcap.h). */
#include "pktcap.h"

#include <stdlib.h>
#include <string.h>

int pktcap_ring_init(struct pktcap_ring *r, uint32_t size)
{
	memset(r, 0, sizeof(*r));
	atomic_init(&r->want, PKTCAP_OFF);
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	if (!size || (size & (size - 1)))
		return -1;
	r->rec = calloc(size, sizeof(*r->rec));
	if (!r->rec)
		return -1;
	r->mask = size - 1;
	return 0;
}

void pktcap_ring_free(struct pktcap_ring *r)
{
	free(r->rec);
	r->rec = NULL;
}

int pktcap_read(struct pktcap_ring *r, struct pktcap_rec *out)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

	if (t == atomic_load_explicit(&r->head, memory_order_acquire))
		return 0;
	*out = r->rec[t & r->mask];
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	return 1;
}
