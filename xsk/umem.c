/* UMEM setup and the two frame-returning paths (fill refill, completion
 * reap). The area is mmap'ed once at start; nothing here allocates later. */
#include "umem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int xsk_pool_create(struct xsk_umem_pool *p, char *err, size_t errlen)
{
	struct xsk_umem_config cfg = {
		.fill_size = XSK_RING_SIZE,
		.comp_size = XSK_RING_SIZE,
		.frame_size = XSK_FRAME_SIZE,
		.frame_headroom = 0,
		.flags = 0,
	};
	int e;

	memset(p, 0, sizeof(*p));
	p->nframes = XSK_NUM_FRAMES;
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
	e = xsk_umem__create(&p->umem, p->area, p->area_size, &p->fill, &p->comp, &cfg);
	if (e) {
		p->umem = NULL;
		snprintf(err, errlen, "cannot create UMEM: %s", strerror(-e));
		xsk_pool_destroy(p);
		return e;
	}
	for (uint32_t i = 0; i < p->nframes; i++)
		xsk_pool_put(p, (uint64_t)i * XSK_FRAME_SIZE);
	return 0;
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

uint32_t xsk_pool_refill(struct xsk_umem_pool *p)
{
	uint32_t n, idx = 0;

	n = xsk_prod_nb_free(&p->fill, p->nfree);
	if (n > p->nfree)
		n = p->nfree;
	if (!n)
		return 0;
	/* reserve is all-or-nothing; nb_free said n fit. */
	if (xsk_ring_prod__reserve(&p->fill, n, &idx) != n)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&p->fill, idx + i) = xsk_pool_get(p);
	xsk_ring_prod__submit(&p->fill, n);
	return n;
}

uint32_t xsk_pool_reap(struct xsk_umem_pool *p)
{
	uint32_t n, idx = 0;

	n = xsk_ring_cons__peek(&p->comp, XSK_RING_SIZE, &idx);
	for (uint32_t i = 0; i < n; i++)
		xsk_pool_put(p, *xsk_ring_cons__comp_addr(&p->comp, idx + i));
	if (n)
		xsk_ring_cons__release(&p->comp, n);
	return n;
}
