/* The flow cache's table (the lookups are inline in flowcache.h and the
 * pipeline's stage_cache). */
#include "flowcache.h"

#include <stdlib.h>
#include <sys/random.h>

int flowcache_init(struct flowcache *c, uint64_t seed)
{
	size_t bytes = FLOWCACHE_SLOTS * sizeof(struct flowcache_entry);

	c->slot = aligned_alloc(64, bytes);
	if (!c->slot)
		return -1;
	memset(c->slot, 0, bytes);
	/* keyed like conntrack: a sender must not be able to aim its flows
	 * at one slot and keep the worker's real flows out of the cache */
	if (!seed && getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint64_t)(uintptr_t)c->slot * 0x9e3779b97f4a7c15ull;
	c->seed = seed | 1u;
	return 0;
}

void flowcache_free(struct flowcache *c)
{
	free(c->slot);
	c->slot = NULL;
}
