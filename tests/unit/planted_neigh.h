/* Tests: the next hops an on-link host would make up to put them all in
 * one slot of a neighbour table whose hash it knows (an ARP request for
 * a port's address teaches any sender address it gives, docs/dpdk.md).
 * The hash is what runtime/neigh.c used before it was keyed: FNV-1a of
 * port, family and address, cut to NEIGH_SLOTS. */
#ifndef RAMPART_TESTS_PLANTED_NEIGH_H
#define RAMPART_TESTS_PLANTED_NEIGH_H

#include <stdint.h>
#include <string.h>

#include "neigh.h"

static uint32_t unkeyed_slot(uint8_t port, const uint8_t addr[4])
{
	uint32_t h = 2166136261u ^ port ^ 4u << 8;

	for (unsigned i = 0; i < 4; i++)
		h = (h ^ addr[i]) * 16777619u;
	return h & (NEIGH_SLOTS - 1);
}

/* n IPv4 addresses in 10/8 of port's that share slot 0; n, or fewer
 * when 10/8 has not that many. */
static uint32_t planted_neighbours(uint8_t port, uint32_t n, uint8_t (*addr)[4])
{
	uint32_t found = 0;

	for (uint32_t k = 0; k < 1u << 24 && found < n; k++) {
		uint8_t a[4] = {10, (uint8_t)(k >> 16), (uint8_t)(k >> 8), (uint8_t)k};

		if (!unkeyed_slot(port, a))
			memcpy(addr[found++], a, 4);
	}
	return found;
}

#endif
