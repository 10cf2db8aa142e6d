/* One UMEM and the frames in it: the area, and a stack of the frames user
 * space holds. The fill and completion rings belong to the sockets (one
 * pair each), so one UMEM can serve every socket of a worker: a frame
 * received on one interface is sent out of another by its address. Every
 * frame is in exactly one place (free stack, a socket's fill ring, kernel
 * RX, RX ring, TX ring, completion). */
#ifndef RAMPART_XSK_UMEM_H
#define RAMPART_XSK_UMEM_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <xdp/xsk.h>

#define XSK_FRAME_SIZE XSK_UMEM__DEFAULT_FRAME_SIZE	/* 4096: one page */
#define XSK_RING_SIZE XSK_RING_PROD__DEFAULT_NUM_DESCS	/* 2048 */
/* Per socket: twice a ring. Its fill ring holds up to half, the rest
 * serves RX, TX and completions. A UMEM shared by n sockets has n times
 * this. */
#define XSK_NUM_FRAMES (2 * XSK_RING_SIZE)

/* Hot fields first: the free stack is touched per batch. */
struct xsk_umem_pool {
	uint64_t *free;		/* addresses of frames user space holds */
	uint32_t nfree;
	uint32_t nframes;
	uint8_t *area;
	/* cold */
	struct xsk_umem *umem;	/* NULL until the first socket registers it */
	uint32_t nusers;	/* sockets bound to this UMEM */
	/* the first socket bound with XDP_USE_SG: every socket on the UMEM
	 * takes a frame longer than one of its frames as a chain */
	int sg;
	uint64_t area_size;
#ifndef NDEBUG
	uint8_t *owned;		/* 1 while user space holds the frame */
#endif
};

/* Map an area of nframes frames, all free. The kernel learns of it with
 * xsk_pool_register, when its first socket opens. 0 or negative errno,
 * message in err. */
int xsk_pool_create(struct xsk_umem_pool *p, uint32_t nframes, char *err, size_t errlen);
/* Register the area with the kernel; fill and comp become the first
 * socket's rings (later sockets get their own). 0 or negative errno. */
int xsk_pool_register(struct xsk_umem_pool *p, struct xsk_ring_prod *fill,
		      struct xsk_ring_cons *comp, char *err, size_t errlen);
/* Delete the UMEM (after every socket on it) and unmap. Safe on a zeroed
 * pool. */
void xsk_pool_destroy(struct xsk_umem_pool *p);

/* Give up to max free frames to the kernel through one socket's fill
 * ring. Returns how many. */
uint32_t xsk_pool_refill(struct xsk_umem_pool *p, struct xsk_ring_prod *fill, uint32_t max);
/* Take back the frames one socket's kernel side finished sending.
 * Returns how many. */
uint32_t xsk_pool_reap(struct xsk_umem_pool *p, struct xsk_ring_cons *comp);

static inline uint8_t *xsk_pool_data(const struct xsk_umem_pool *p, uint64_t addr)
{
	return p->area + addr;
}

/* Frame base of an address the kernel gave us (aligned mode: the kernel
 * may add headroom or an offset inside the frame). */
static inline uint64_t xsk_pool_frame(uint64_t addr)
{
	return addr & ~(uint64_t)(XSK_FRAME_SIZE - 1);
}

static inline void xsk_pool_put(struct xsk_umem_pool *p, uint64_t addr)
{
	addr = xsk_pool_frame(addr);
#ifndef NDEBUG
	assert(addr < p->area_size && "frame of another UMEM");
	assert(!p->owned[addr / XSK_FRAME_SIZE] && "frame freed twice");
	p->owned[addr / XSK_FRAME_SIZE] = 1;
#endif
	assert(p->nfree < p->nframes);
	p->free[p->nfree++] = addr;
}

/* Caller checks nfree first. */
static inline uint64_t xsk_pool_get(struct xsk_umem_pool *p)
{
	uint64_t addr = p->free[--p->nfree];

#ifndef NDEBUG
	assert(p->owned[addr / XSK_FRAME_SIZE] && "frame used twice");
	p->owned[addr / XSK_FRAME_SIZE] = 0;
#endif
	return addr;
}

#endif
