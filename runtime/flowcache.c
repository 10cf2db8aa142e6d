/* The flow cache's table (the lookups are inline in flowcache.h and the
 * pipeline's stage_cache). */
#include "flowcache.h"

#include "hugemem.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

uint32_t flowcache_slots_for(uint32_t max_flows)
{
	uint32_t slots = FLOWCACHE_MIN_SLOTS;

	/* the power of two nearest max_flows / 16 (geometrically): double
	 * while that is more than 1.5 x slots, so a slot stands for 12 to
	 * 24 flows, under 2.7 bytes a flow */
	while (slots < FLOWCACHE_MAX_SLOTS &&
	       (uint64_t)slots * 3 * FLOWCACHE_FLOWS_PER_SLOT / 2 < max_flows)
		slots *= 2;
	return slots;
}

int flowcache_init(struct flowcache *c, uint32_t slots, uint64_t seed)
{
	size_t bytes = (size_t)slots * sizeof(struct flowcache_entry);

	if (slots < FLOWCACHE_MIN_SLOTS || slots > FLOWCACHE_MAX_SLOTS || (slots & (slots - 1))) {
		errno = EINVAL;
		return -1;
	}
	/* a slot is a random read per packet: huge pages spare it a page walk */
	c->slot = hugemem_zalloc(bytes, NULL);
	if (!c->slot)
		return -1;
	c->mask = slots - 1;
	c->fill_bursts = slots / 64;
	/* keyed like conntrack: a sender must not be able to aim its flows
	 * at one slot and keep the worker's real flows out of the cache */
	if (!seed && getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint64_t)(uintptr_t)c->slot * 0x9e3779b97f4a7c15ull;
	c->seed = seed | 1u;
	return 0;
}

void flowcache_free(struct flowcache *c)
{
	if (c->slot)
		hugemem_free(c->slot, ((size_t)c->mask + 1) * sizeof(struct flowcache_entry));
	c->slot = NULL;
}
