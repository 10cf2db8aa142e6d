/* The flow cache: a worker's small direct-mapped table from a packet's
 * tuple to what the full pipeline decided for it the last time, so the
 * next packets of a known flow (IPv6 ones untranslated) skip the
 * conntrack index, the routes, the neighbour table and the per-stage
 * bookkeeping; an IPv4 translation is read from the flow itself.
 *
 * An entry is only a hint. Its flow is re-checked in conntrack on every
 * hit (ct_hint_batch: alive, same tuple in the same direction, still
 * under the same rule and generation), so a flow that ended, moved to
 * another rule on reload or was replaced in its slot is a miss, never a
 * wrong verdict or translation. What conntrack does not know (the
 * route and the next hop's MAC address) is tied to the worker's epoch,
 * which moves on every policy adoption and neighbour change.
 *
 * Sized with the conntrack table: about one 32-byte slot per 16 flows
 * it may hold (the nearest power of two, so under 2.7 bytes a flow),
 * from 8,192 slots (256 KiB) to 262,144 (8 MiB); 65,536 (2 MiB, this
 * machine's L2) for a million flows. It pays off while the active flows fit (measured in
 * docs/PERFORMANCE.md: 50,000 active flows of a million cost 40% less
 * with 65,536 slots than with 8,192); with more, most probes miss and
 * cost a hash and one load, and the pipeline stops probing for a while.
 * Untagged IPv4 TCP/UDP frames go through it on the pipeline's express
 * path (pipeline.c express_cache), which works from the frame's bytes;
 * those it misses, and all while it rests, are looked up in conntrack
 * from the same bytes (express_conntrack), and only the frames of no
 * known flow are parsed. */
#ifndef RAMPART_FLOWCACHE_H
#define RAMPART_FLOWCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pkt.h"

_Static_assert(offsetof(struct pkt_key, icmp_type) == offsetof(struct pkt_key, sport) + 7,
	       "flowcache_hash reads sport..icmp_type as one word");

#define FLOWCACHE_MIN_SLOTS 8192u
#define FLOWCACHE_MAX_SLOTS 262144u
#define FLOWCACHE_FLOWS_PER_SLOT 16u

struct flowcache_entry {
	uint32_t sig;		/* hash bits above the index, | 1; 0 = empty */
	uint32_t epoch;		/* the worker's epoch when written */
	uint32_t flow;		/* conntrack flow */
	uint32_t rule;		/* the rule value the flow stores (tagged) */
	uint8_t dir;		/* enum ct_dir */
	uint8_t in_port;
	uint8_t out_port;
	uint8_t reserved;
	uint8_t mac[12];	/* router: destination and source, as written */
};
_Static_assert(sizeof(struct flowcache_entry) == 32, "two entries a cache line");

struct flowcache {
	struct flowcache_entry *slot;
	uint32_t mask;		/* slots - 1 */
	uint32_t fill_bursts;	/* bursts of 64 it takes to fill it */
	uint64_t seed;
};

/* When the cache is worth probing. More active flows than slots: most
 * probes miss, and each costs a hash, a slot and an insert. After
 * fill_bursts judged bursts in a row with hardly a hit (as many bursts as
 * it takes to fill the cache, so a warming cache is not mistaken for a
 * thrashing one), the cache rests (the pipeline does not probe it) for
 * FLOWCACHE_REST_FILLS times as long, then tries again. Each rest that
 * follows another without a good burst between lasts twice as long as
 * the one before, up to FLOWCACHE_REST_FILLS << FLOWCACHE_REST_DOUBLINGS
 * fills: under a steady thrash the cache is probed one burst in 25 rather
 * than one in 4, and a cache that starts to hit again (one good burst)
 * is back to the shortest rest. The longest rest is 24 fills' worth of
 * bursts (49,152 for 131,072 slots: about 0.2 s at 15 Mpps), how long a
 * worker may go on without the cache after its traffic becomes
 * cacheable; the express path's conntrack lookup serves the known flows
 * meanwhile. */
#define FLOWCACHE_REST_FILLS 3u
#define FLOWCACHE_REST_DOUBLINGS 3u

struct flowcache_rest {
	uint32_t left;		/* bursts left that skip the cache */
	uint32_t bad;		/* judged bursts in a row with hardly a hit */
	uint32_t doublings;	/* of the next rest: rests in a row without a good burst */
};

/* A burst that probed: `probed` frames, `found` of them candidates. */
static inline void flowcache_judge(struct flowcache_rest *r, uint32_t fill_bursts,
				   uint32_t probed, uint32_t found)
{
	if (probed >= 16 && found * 8 < probed) {
		if (++r->bad >= fill_bursts) {
			r->bad = 0;
			r->left = (FLOWCACHE_REST_FILLS * fill_bursts) << r->doublings;
			if (r->doublings < FLOWCACHE_REST_DOUBLINGS)
				r->doublings++;
		}
	} else if (probed) {
		r->bad = 0;
		if (probed >= 16)	/* a good burst, not just a small one */
			r->doublings = 0;
	}
}

/* 1 when this burst may probe the cache; a resting cache counts one
 * burst of its rest down. */
static inline int flowcache_probing(struct flowcache_rest *r)
{
	if (!r->left)
		return 1;
	r->left--;
	return 0;
}

/* The slot count for a conntrack table of max_flows (see above). */
uint32_t flowcache_slots_for(uint32_t max_flows);
/* slots: a power of two in [FLOWCACHE_MIN_SLOTS, FLOWCACHE_MAX_SLOTS].
 * 0 or -1 (EINVAL, ENOMEM). */
int flowcache_init(struct flowcache *c, uint32_t slots, uint64_t seed);
void flowcache_free(struct flowcache *c);

static inline uint64_t flowcache_mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* Source and destination port as the 4 bytes a TCP/UDP header holds
 * them (network order), which flowcache_hash_v4 takes as they are. */
static inline uint32_t flowcache_wire_ports(uint16_t sport, uint16_t dport)
{
	const uint8_t b[4] = {(uint8_t)(sport >> 8), (uint8_t)sport, (uint8_t)(dport >> 8),
			      (uint8_t)dport};
	uint32_t w;

	memcpy(&w, b, 4);
	return w;
}

/* An IPv4 tuple's hash from its parts: addresses and ports as their bytes
 * sit in memory (flowcache_wire_ports). stage_parse takes them from the frame
 * (reading the pkt_key it has just written would wait for those stores
 * to retire, a store-forwarding stall per packet). */
static inline uint64_t flowcache_hash_v4(const struct flowcache *c, uint32_t src, uint32_t dst,
					 uint32_t wire_ports, uint8_t proto, uint8_t has_ports,
					 uint8_t icmp_type, uint8_t in_port)
{
	uint64_t ports = (uint64_t)wire_ports | 4ull << 32 | (uint64_t)proto << 40 |
			 (uint64_t)has_ports << 48 | (uint64_t)(icmp_type ^ in_port) << 56;

	return flowcache_mix((uint64_t)src ^ c->seed ^ (uint64_t)dst << 32,
			     ports ^ 0x9e3779b97f4a7c15ull);
}

/* The hash of a parsed packet's tuple and input port. IPv4 addresses sit
 * in the first 4 bytes of src/dst, the rest zero (pkt_parse). */
static inline uint64_t flowcache_hash(const struct flowcache *c, const struct pkt_key *k,
				      uint8_t in_port)
{
	uint64_t s0, s1, d0, d1, ports;

	if (k->family == 4) {
		uint32_t s4, d4;

		memcpy(&s4, k->src, 4);
		memcpy(&d4, k->dst, 4);
		return flowcache_hash_v4(c, s4, d4, flowcache_wire_ports(k->sport, k->dport), k->proto,
					 k->has_ports, k->icmp_type, in_port);
	}
	memcpy(&s0, k->src, 8);
	memcpy(&d0, k->dst, 8);
	/* sport, dport, family, proto, has_ports, icmp_type: one load */
	memcpy(&ports, &k->sport, 8);
	ports ^= (uint64_t)in_port << 56;
	memcpy(&s1, k->src + 8, 8);
	memcpy(&d1, k->dst + 8, 8);
	return flowcache_mix(flowcache_mix(s0 ^ c->seed, s1 ^ 0x9e3779b97f4a7c15ull) ^ d0,
			     flowcache_mix(d1 ^ 0xc2b2ae3d27d4eb4full, ports ^ c->seed));
}

static inline uint32_t flowcache_index(const struct flowcache *c, uint64_t h)
{
	return (uint32_t)h & c->mask;
}

static inline struct flowcache_entry *flowcache_slot(const struct flowcache *c, uint64_t h)
{
	return &c->slot[flowcache_index(c, h)];
}

static inline uint32_t flowcache_sig(uint64_t h)
{
	return (uint32_t)(h >> 32) | 1u;
}

#endif
