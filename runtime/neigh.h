/* Next-hop MAC addresses for router mode, per worker: a small open-
 * addressed table keyed by (port, family, address), filled off the packet
 * path (by the daemon from the kernel's neighbour table or from its own
 * ARP/ND with DPDK, or by tests and the pcap backend from configuration).
 * Lookups never allocate. */
#ifndef RAMPART_NEIGH_H
#define RAMPART_NEIGH_H

#include <stdint.h>

#define NEIGH_SLOTS 4096	/* power of two; at most half used */

struct neigh_entry {
	uint8_t addr[16];
	uint8_t mac[6];
	uint8_t port;
	uint8_t family;		/* 0 = empty slot */
};

struct neigh_table {
	struct neigh_entry slot[NEIGH_SLOTS];
	uint32_t used;
	uint32_t seed;		/* hash key (neigh_init: random) */
};

/* Empty, with a hash key of its own from getrandom(): the addresses
 * come from frames (an ARP request teaches any sender address), so a
 * sender must not be able to aim them at one slot and make every lookup
 * a walk over the table (as conntrack and the flow cache are keyed). */
void neigh_init(struct neigh_table *t);
/* Add or replace. 0, or -1 when the table is half full (refused so that
 * probe chains stay short). */
int neigh_set(struct neigh_table *t, uint8_t port, uint8_t family, const uint8_t *addr,
	      const uint8_t mac[6]);
/* Remove (port, family, addr): 0, or -1 when it is not there. */
int neigh_del(struct neigh_table *t, uint8_t port, uint8_t family, const uint8_t *addr);
/* The hash of a key under a seed (before it is cut to a slot):
 * rampartd's own neighbour cache (daemon/neigh_cache.c) indexes its
 * entries with it, under a seed of its own (neigh_seed). */
uint32_t neigh_key_hash(uint32_t seed, uint8_t port, uint8_t family, const uint8_t *addr);
/* A random hash key (getrandom(); without it, one from the clock and
 * where `where` is). */
uint32_t neigh_seed(const void *where);
/* The MAC for (port, family, addr), or NULL. */
const uint8_t *neigh_lookup(const struct neigh_table *t, uint8_t port, uint8_t family,
			    const uint8_t *addr);

#endif
