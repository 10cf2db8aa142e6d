/* Neighbour table: linear probing over a fixed array. A deletion shifts
 * the entries after it back into the hole (no tombstones), so a lookup
 * still stops at its first empty slot. */
#include "neigh.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>

uint32_t neigh_key_hash(uint32_t seed, uint8_t port, uint8_t family, const uint8_t *addr)
{
	uint32_t h = (2166136261u ^ seed) ^ port ^ (uint32_t)family << 8;
	unsigned n = family == 6 ? 16 : 4;

	for (unsigned i = 0; i < n; i++)
		h = (h ^ addr[i]) * 16777619u;	/* FNV-1a from the seed */
	/* murmur3's finalizer: FNV's low bits (the slot) depend only on
	 * the low bits of the seed and the bytes; mixed, on all of them */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	return h ^ h >> 16;
}

uint32_t neigh_seed(const void *where)
{
	uint32_t seed;

	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		seed = (uint32_t)((uint64_t)(uintptr_t)where * 0x9e3779b97f4a7c15ull >> 32) ^
		       (uint32_t)ts.tv_nsec;
	}
	return seed;
}

static uint32_t neigh_hash(const struct neigh_table *t, uint8_t port, uint8_t family,
			   const uint8_t *addr)
{
	return neigh_key_hash(t->seed, port, family, addr) & (NEIGH_SLOTS - 1);
}

static int same(const struct neigh_entry *e, uint8_t port, uint8_t family, const uint8_t *addr)
{
	return e->family == family && e->port == port &&
	       !memcmp(e->addr, addr, family == 6 ? 16 : 4);
}

void neigh_init(struct neigh_table *t)
{
	memset(t, 0, sizeof(*t));
	t->seed = neigh_seed(t);
}

int neigh_set(struct neigh_table *t, uint8_t port, uint8_t family, const uint8_t *addr,
	      const uint8_t mac[6])
{
	uint32_t i = neigh_hash(t, port, family, addr);

	if (family != 4 && family != 6)
		return -1;
	for (;; i = (i + 1) & (NEIGH_SLOTS - 1)) {
		struct neigh_entry *e = &t->slot[i];

		if (same(e, port, family, addr)) {
			memcpy(e->mac, mac, 6);
			return 0;
		}
		if (!e->family) {
			if (t->used >= NEIGH_SLOTS / 2)
				return -1;
			memset(e->addr, 0, sizeof(e->addr));
			memcpy(e->addr, addr, family == 6 ? 16 : 4);
			memcpy(e->mac, mac, 6);
			e->port = port;
			e->family = family;
			t->used++;
			return 0;
		}
	}
}

int neigh_del(struct neigh_table *t, uint8_t port, uint8_t family, const uint8_t *addr)
{
	uint32_t hole = neigh_hash(t, port, family, addr);

	for (;; hole = (hole + 1) & (NEIGH_SLOTS - 1)) {
		if (!t->slot[hole].family)
			return -1;
		if (same(&t->slot[hole], port, family, addr))
			break;
	}
	/* Backward shift: an entry after the hole moves into it unless its
	 * home slot lies cyclically after the hole (moved, it would sit
	 * before its home, out of reach of its own lookups). */
	for (uint32_t i = (hole + 1) & (NEIGH_SLOTS - 1); t->slot[i].family;
	     i = (i + 1) & (NEIGH_SLOTS - 1)) {
		const struct neigh_entry *e = &t->slot[i];
		uint32_t home = neigh_hash(t, e->port, e->family, e->addr);

		if (((i - home) & (NEIGH_SLOTS - 1)) >= ((i - hole) & (NEIGH_SLOTS - 1))) {
			t->slot[hole] = *e;
			hole = i;
		}
	}
	memset(&t->slot[hole], 0, sizeof(t->slot[hole]));
	t->used--;
	return 0;
}

const uint8_t *neigh_lookup(const struct neigh_table *t, uint8_t port, uint8_t family,
			    const uint8_t *addr)
{
	for (uint32_t i = neigh_hash(t, port, family, addr);; i = (i + 1) & (NEIGH_SLOTS - 1)) {
		const struct neigh_entry *e = &t->slot[i];

		if (!e->family)
			return NULL;
		if (same(e, port, family, addr))
			return e->mac;
	}
}
