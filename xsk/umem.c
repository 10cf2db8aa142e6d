/* UMEM setup and the two frame-returning paths (fill refill, completion
 * reap), each on the ring of the socket it is called for. The area is
 * mmap'ed once at start; nothing here allocates later. */
#include "umem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int xsk_pool_create(struct xsk_umem_pool *p, uint32_t nframes, char *err, size_t errlen)
{
	int e;

	memset(p, 0, sizeof(*p));
	p->nframes = nframes;
	p->area_size = (uint64_t)p->nframes * XSK_FRAME_SIZE;
	p->area = mmap(NULL, p->area_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->area == MAP_FAILED) {
		e = -errno;
		p->area = NULL;
		snprintf(err, errlen, "cannot map UMEM area: %s", strerror(-e));
		return e;
	}
	p->free = calloc(p->nframes, sizeof(*p->free));
#ifndef NDEBUG
	p->owned = calloc(p->nframes, 1);
	if (!p->owned) {
		free(p->free);
		p->free = NULL;
	}
#endif
	if (!p->free) {
		snprintf(err, errlen, "cannot allocate frame stack: %s", strerror(ENOMEM));
		xsk_pool_destroy(p);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < p->nframes; i++)
		xsk_pool_put(p, (uint64_t)i * XSK_FRAME_SIZE);
	return 0;
}

int xsk_pool_register(struct xsk_umem_pool *p, struct xsk_ring_prod *fill,
		      struct xsk_ring_cons *comp, char *err, size_t errlen)
{
	struct xsk_umem_config cfg = {
		.fill_size = XSK_RING_SIZE,
		.comp_size = XSK_RING_SIZE,
		.frame_size = XSK_FRAME_SIZE,
		.frame_headroom = 0,
		.flags = 0,
	};
	int e;

	e = xsk_umem__create(&p->umem, p->area, p->area_size, fill, comp, &cfg);
	if (e) {
		p->umem = NULL;
		snprintf(err, errlen, "cannot create UMEM: %s", strerror(-e));
	}
	return e;
}

void xsk_pool_destroy(struct xsk_umem_pool *p)
{
	if (p->umem)
		xsk_umem__delete(p->umem);
	if (p->area)
		munmap(p->area, p->area_size);
	free(p->free);
#ifndef NDEBUG
	free(p->owned);
#endif
	memset(p, 0, sizeof(*p));
}

uint32_t xsk_pool_refill(struct xsk_umem_pool *p, struct xsk_ring_prod *fill, uint32_t max)
{
	uint32_t n, idx = 0;

	if (max > p->nfree)
		max = p->nfree;
	if (!max)
		return 0;
	n = xsk_prod_nb_free(fill, max);
	if (n > max)
		n = max;
	if (!n)
		return 0;
	/* reserve is all-or-nothing; nb_free said n fit. */
	if (xsk_ring_prod__reserve(fill, n, &idx) != n)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(fill, idx + i) = xsk_pool_get(p);
	xsk_ring_prod__submit(fill, n);
	return n;
}

uint32_t xsk_pool_reap(struct xsk_umem_pool *p, struct xsk_ring_cons *comp)
{
	uint32_t n, idx = 0;

	n = xsk_ring_cons__peek(comp, XSK_RING_SIZE, &idx);
	for (uint32_t i = 0; i < n; i++)
		xsk_pool_put(p, *xsk_ring_cons__comp_addr(comp, idx + i));
	if (n)
		xsk_ring_cons__release(comp, n);
	return n;
}
