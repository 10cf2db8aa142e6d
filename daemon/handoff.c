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
	per_ring = (size_t)(h->slots + HANDOFF_SPAN_MAX - 1) * sizeof(struct handoff_slot);	/* + spill room */
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
	uint32_t room = r->mask + 1 - (head - tail), used = 0, i;

	for (i = 0; i < n; i++) {
		const struct pipe_pkt *p = pkts[i];
		struct handoff_slot *s = &r->slot[(head + used) & r->mask];
		uint8_t span = (uint8_t)handoff_span(p->len);

		if (used + span > room)
			break;	/* in order: what follows is dropped too */
		s->len = p->len;
		s->in_port = p->in_port;
		s->homed = (uint8_t)(p->homed + 1);
		s->second = p->second;	/* the pipeline set it when it handed p */
		s->span = span;
		/* the next slots are the next in memory, or the spill room */
		memcpy(s->data, p->data, p->len);
		used += span;
	}
	if (used)
		atomic_store_explicit(&r->head, head + used, memory_order_release);
	return i;
}

uint32_t handoff_peek(struct handoff_ring *r, struct pipe_pkt *pkts, uint32_t max)
{
	unsigned tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	unsigned head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint32_t used = 0, n = 0;

	while (n < max && used < head - tail) {
		const struct handoff_slot *s = &r->slot[(tail + used) & r->mask];

		memset(&pkts[n], 0, sizeof(pkts[n]));
		pkts[n].data = (uint8_t *)s->data;
		pkts[n].len = s->len;
		pkts[n].room = handoff_span_room(s->span);
		pkts[n].in_port = s->in_port;
		pkts[n].homed = s->homed;
		pkts[n].second = s->second;
		used += s->span;
		n++;
	}
	r->peeked = used;
	return n;
}

void handoff_done(struct handoff_ring *r)
{
	unsigned tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

	atomic_store_explicit(&r->tail, tail + r->peeked, memory_order_release);
	r->peeked = 0;
}
