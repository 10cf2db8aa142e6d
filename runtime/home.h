/* Which worker owns a flow, when frames may arrive on any worker's queue
 * (pipe_config.handoff): a keyed hash of the flow's tuple that is the
 * same for both directions (the two endpoints are hashed apart and
 * added), mapped onto the workers. The pipeline hands every frame to its
 * flow's worker by it (the frame's own tuple, an ICMP error's quoted
 * one, a DNAT flow's translated one: pipeline.c packet_home), and SNAT
 * picks its ports so that the reply's tuple maps to the same worker
 * (nat.h NAT_STEER). Every worker must use the same seed. */
#ifndef RAMPART_HOME_H
#define RAMPART_HOME_H

#include <stdint.h>
#include <string.h>

static inline uint64_t home_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* One endpoint: 16 address bytes (IPv4 in the first 4, zeros after, as
 * pkt_key and ct_key keep them) and its port. */
static inline uint64_t home_endpoint(const uint8_t addr[16], uint16_t port, uint64_t seed)
{
	uint64_t lo, hi;

	memcpy(&lo, addr, 8);
	memcpy(&hi, addr + 8, 8);
	return home_mix(home_mix(lo ^ seed) ^ hi ^ ((uint64_t)port << 48));
}

/* Symmetric: home_hash(a, b) == home_hash(b, a) for every field. */
static inline uint64_t home_hash(const uint8_t src[16], const uint8_t dst[16], uint16_t sport,
				 uint16_t dport, uint8_t proto, uint64_t seed)
{
	return home_mix(home_endpoint(src, sport, seed) + home_endpoint(dst, dport, seed) +
			proto);
}

/* The worker of a hash, 0 .. n - 1 (a multiply, not a division). */
static inline uint32_t home_worker(uint64_t h, uint32_t n)
{
	return (uint32_t)(((h >> 32) * n) >> 32);
}

#endif
