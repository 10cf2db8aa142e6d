/* The rings of handoff.h. */
#include "handoff.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>

#define HANDOFF_BUDGET 65536u	/* slots over all rings */

static uint32_t slots_for(uint32_t n)
{
	uint32_t want = HANDOFF_BUDGET / (n * (n - 1)), s = 32;

	while (s * 2 <= want && s < 1024)
		s *= 2;
	return s;
}

int handoff_init(struct handoff *h, uint32_t n)
{
	size_t rings, per_ring;

	memset(h, 0, sizeof(*h));
	if (n < 2 || n > HANDOFF_MAX_WORKERS) {
		errno = EINVAL;
		return -1;
	}
	rings = (size_t)n * n;
	h->n = n;
	h->slots = slots_for(n);
	per_ring = (size_t)h->slots * sizeof(struct handoff_slot);
	h->wake = aligned_alloc(64, n * sizeof(*h->wake));
	if (!h->wake)
		goto fail;
	for (uint32_t k = 0; k < n; k++) {
		atomic_init(&h->wake[k].sleeping, 0);
		h->wake[k].fd = -1;
	}
	h->ring = aligned_alloc(64, rings * sizeof(*h->ring));
	if (!h->ring)
		goto fail;
	memset(h->ring, 0, rings * sizeof(*h->ring));
	for (uint32_t k = 0; k < n; k++) {
		h->wake[k].fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (h->wake[k].fd < 0)
			goto fail;
	}
	h->mem_len = rings * per_ring;
	h->mem = mmap(NULL, h->mem_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (h->mem == MAP_FAILED) {
		h->mem = NULL;
		goto fail;
	}
	for (size_t i = 0; i < rings; i++) {
		struct handoff_ring *r = &h->ring[i];

		atomic_init(&r->head, 0);
		atomic_init(&r->tail, 0);
		r->mask = h->slots - 1;
		r->slot = (struct handoff_slot *)((char *)h->mem + i * per_ring);
	}
	return 0;
fail:
	handoff_free(h);
	return -1;
}

void handoff_free(struct handoff *h)
{
	int saved = errno;

	if (h->mem)
		munmap(h->mem, h->mem_len);
	for (uint32_t k = 0; h->wake && k < h->n; k++)
		if (h->wake[k].fd >= 0)
			close(h->wake[k].fd);
	free(h->wake);
	free(h->ring);
	memset(h, 0, sizeof(*h));
	errno = saved;
}

int handoff_sleep(struct handoff *h, uint32_t self, int *fd)
{
	struct handoff_wake *me = &h->wake[self];

	atomic_store_explicit(&me->sleeping, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	for (uint32_t from = 0; from < h->n; from++) {
		struct handoff_ring *r = handoff_ring(h, from, self);

		if (from != self && atomic_load_explicit(&r->head, memory_order_relaxed) !=
					    atomic_load_explicit(&r->tail, memory_order_relaxed)) {
			atomic_store_explicit(&me->sleeping, 0, memory_order_relaxed);
			return 1;
		}
	}
	*fd = me->fd;
	return 0;
}

void handoff_awake(struct handoff *h, uint32_t self)
{
	uint64_t v;

	atomic_store_explicit(&h->wake[self].sleeping, 0, memory_order_relaxed);
	(void)!read(h->wake[self].fd, &v, sizeof(v));	/* EAGAIN when none came */
}

void handoff_wake(struct handoff *h, uint32_t to)
{
	static const uint64_t one = 1;

	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&h->wake[to].sleeping, memory_order_relaxed))
		(void)!write(h->wake[to].fd, &one, sizeof(one));
}

uint32_t handoff_send(struct handoff_ring *r, struct pipe_pkt *const *pkts, uint32_t n)
{
	unsigned head = atomic_load_explicit(&r->head, memory_order_relaxed);
	unsigned tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint32_t room = r->mask + 1 - (head - tail);

	if (n > room)
		n = room;
	for (uint32_t i = 0; i < n; i++) {
		struct handoff_slot *s = &r->slot[(head + i) & r->mask];

		s->len = pkts[i]->len;
		s->in_port = pkts[i]->in_port;
		s->homed = (uint8_t)(pkts[i]->homed + 1);
		memcpy(s->data, pkts[i]->data, pkts[i]->len);
	}
	if (n)
		atomic_store_explicit(&r->head, head + n, memory_order_release);
	return n;
}

uint32_t handoff_peek(struct handoff_ring *r, struct pipe_pkt *pkts, uint32_t max)
{
	unsigned tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	unsigned head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint32_t n = head - tail;

	if (n > max)
		n = max;
	for (uint32_t i = 0; i < n; i++) {
		struct handoff_slot *s = &r->slot[(tail + i) & r->mask];

		memset(&pkts[i], 0, sizeof(pkts[i]));
		pkts[i].data = s->data;
		pkts[i].len = s->len;
		pkts[i].room = HANDOFF_FRAME;
		pkts[i].in_port = s->in_port;
		pkts[i].homed = s->homed;
	}
	return n;
}

void handoff_done(struct handoff_ring *r, uint32_t n)
{
	unsigned tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

	atomic_store_explicit(&r->tail, tail + n, memory_order_release);
}
