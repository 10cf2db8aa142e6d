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

/* The two halves of a 128-bit product folded: one multiply that mixes
 * every bit of both operands into the result. */
static inline uint64_t home_fold(uint64_t a, uint64_t b)
{
	unsigned __int128 p = (unsigned __int128)a * b;

	return (uint64_t)p ^ (uint64_t)(p >> 64);
}

/* One endpoint: 16 address bytes (IPv4 in the first 4, zeros after, as
 * pkt_key and ct_key keep them) and its port, in the low bits, which the
 * multiply carries into every higher one. */
static inline uint64_t home_endpoint(const uint8_t addr[16], uint16_t port, uint64_t seed)
{
	uint64_t lo, hi;

	memcpy(&lo, addr, 8);
	memcpy(&hi, addr + 8, 8);
	return home_fold(lo ^ seed, hi ^ port ^ 0x9e3779b97f4a7c15ull);
}

/* The finalizer (MurmurHash3's) over the two endpoints' sum. It matters:
 * SNAT steering walks a worker's ports in order, 1 in n of which must
 * map back to it, and without it the workers' shares of consecutive
 * ports were uneven (in a sweep of seeds, 6 to 100 of 625 ports per
 * worker where a random function gives 17 to 66, and runs of up to 296
 * ports without one). */
static inline uint64_t home_finish(uint64_t x, uint64_t seed)
{
	x ^= seed;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* Symmetric: home_hash(a, b) == home_hash(b, a) for every field. */
static inline uint64_t home_hash(const uint8_t src[16], const uint8_t dst[16], uint16_t sport,
				 uint16_t dport, uint8_t proto, uint64_t seed)
{
	return home_finish(home_endpoint(src, sport, seed) + home_endpoint(dst, dport, seed) + proto,
			   seed);
}

/* home_hash of an IPv4 tuple, its addresses as the 4 bytes a frame
 * holds (home_endpoint's first word is those bytes and four zeros). */
static inline uint64_t home_hash4(const uint8_t src[4], const uint8_t dst[4], uint16_t sport,
				  uint16_t dport, uint8_t proto, uint64_t seed)
{
	uint8_t s8[8] = {0}, d8[8] = {0};
	uint64_t s, d;

	memcpy(s8, src, 4);
	memcpy(d8, dst, 4);
	memcpy(&s, s8, 8);
	memcpy(&d, d8, 8);
	return home_finish(home_fold(s ^ seed, sport ^ 0x9e3779b97f4a7c15ull) +
				   home_fold(d ^ seed, dport ^ 0x9e3779b97f4a7c15ull) + proto,
			   seed);
}

/* The worker of a hash, 0 .. n - 1 (a multiply, not a division). */
static inline uint32_t home_worker(uint64_t h, uint32_t n)
{
	return (uint32_t)(((h >> 32) * n) >> 32);
}

#endif
