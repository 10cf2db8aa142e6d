/* Maps of the 65,536 TCP/UDP/SCTP ports, a bit each (8 KiB): which ports
 * DNAT rules may take (pipe_policy.dnat_dports and its kin). Set a word
 * at a time: an entry without a port condition spans all of them, and a
 * reload may meet thousands (1:1 NAT). */
#ifndef RAMPART_PORTMAP_H
#define RAMPART_PORTMAP_H

#include <stdint.h>

#define PORTMAP_WORDS (65536u / 64)

/* The bits of ports lo..hi (lo <= hi) in word w, w one of their words. */
static inline uint64_t portmap_word(uint32_t w, uint32_t lo, uint32_t hi)
{
	uint32_t a = w == lo / 64 ? lo % 64 : 0, b = w == hi / 64 ? hi % 64 : 63;

	return (~0ull >> (63 - (b - a))) << a;
}

/* Ports lo..hi set in map (none when lo > hi). */
static inline void portmap_mark(uint64_t *map, uint32_t lo, uint32_t hi)
{
	for (uint32_t w = lo / 64; lo <= hi && w <= hi / 64; w++)
		map[w] |= portmap_word(w, lo, hi);
}

static inline int portmap_has(const uint64_t *map, uint16_t port)
{
	return (int)(map[port >> 6] >> (port & 63) & 1);
}

#endif
