/* See hugemem.h. */
#include "hugemem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

static size_t rounded(size_t n)
{
	return n ? (n + 63) & ~(size_t)63 : 64;
}

void *hugemem_zalloc(size_t n, size_t *total)
{
	size_t sz = rounded(n), span, head;
	uint8_t *m, *p;

	if (sz < HUGE_PAGE) {
		if (posix_memalign((void **)&p, 64, sz))
			return NULL;
		memset(p, 0, sz);
	} else {
		/* a mapping a huge page longer, trimmed to a 2 MiB boundary */
		sz = (sz + 4095) & ~(size_t)4095;
		span = sz + HUGE_PAGE;
		m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		p = (uint8_t *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
		head = (size_t)(p - m);
		if (head)
			munmap(m, head);
		munmap(p + sz, span - head - sz);
		(void)madvise(p, sz & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);	/* a hint */
		memset(p, 0, sz);	/* fresh pages are zero: this touches them */
	}
	if (total)
		*total += sz;
	return p;
}

void hugemem_free(void *p, size_t n)
{
	size_t sz = rounded(n);

	if (!p)
		return;
	if (sz < HUGE_PAGE)
		free(p);
	else
		munmap(p, (sz + 4095) & ~(size_t)4095);
}
