/* Per-worker NAT: the (address, port) allocator behind SNAT and
 * masquerade, the DNAT mapping, and the translated + reply keys that
 * conntrack indexes. No locks: each worker owns a disjoint share.
 *
 * Which ports a worker hands out (struct nat_pool_config.strategy):
 *
 *  NAT_PARTITION (default): worker w of n owns the ports p of the rule's
 *    range with (p - port_lo) % n == w, on every pool address. Workers
 *    can never hand out the same pair. The reply comes back on whatever
 *    queue the NIC's RSS hash picks for it, usually another worker's
 *    (1 - 1/n of the time): that worker must hand it over.
 *  NAT_STEER: the same partition (so still no collision), but among the
 *    worker's free ports it looks for one whose reply tuple hashes, with
 *    the caller's queue_of() (the NIC's RSS function), to the worker's own
 *    queue, trying at most steer_tries free ports. With n queues a random
 *    port qualifies with probability 1/n, so 64 tries miss with
 *    probability (1 - 1/n)^64 (0.02% for n = 8). When none qualifies it
 *    takes the first free one and counts `remote`: that reply arrives on
 *    another queue. Needs a hash that mixes the destination port (a
 *    Toeplitz hash over the 4-tuple does), and a symmetric key or the
 *    reply's own RSS function in queue_of. With pipe_config.handoff the
 *    pipeline steers by its own hash (home.h): the reply maps to the
 *    worker that made the flow whatever queue it arrives on.
 *
 * Ownership: a (address, port) pair is held exclusively by one flow until
 * nat_release (flow expiry); it is not reused for another destination even
 * where (dst, dport) would tell the flows apart. That makes the mapping
 * "address and port-dependent" in RFC 4787 terms (not endpoint-
 * independent: a host keeps no fixed public port across destinations)
 * and caps a worker at addresses x its ports concurrent flows per pool.
 * The address is chosen "paired" (RFC 4787 REQ-2): by a hash of the
 * internal source, so one host appears as one public address while that
 * address has free ports, then the next address with room.
 *
 * Pools that share pairs (two rules to one address with different port
 * ranges, or a reload that changed a rule's range while the old pool's
 * flows live on): each is told (nat_pool_share) and asks the caller's
 * `elsewhere` whether a pair is held in another before handing it out,
 * so a pair is still held by one flow of one pool, and the pool a flow's
 * pair goes back to is the one where it is in use (nat_slot_in_use). */
#ifndef RAMPART_NAT_H
#define RAMPART_NAT_H

#include <stdint.h>

#include "rampart/artifact.h"
#include "pkt.h"

/* The RSS/queue hash of a reply key, supplied by the backend. */
typedef uint32_t (*nat_queue_fn)(const struct pkt_key *reply, void *ctx);
struct nat_pool;
/* Whether another pool sharing pairs with p holds (addr, port). */
typedef int (*nat_elsewhere_fn)(const struct nat_pool *p, const uint8_t *addr, uint16_t port,
				void *ctx);

enum nat_strategy {
	NAT_PARTITION = 0,
	NAT_STEER = 1,
};

#define NAT_STEER_TRIES 64u
/* A pool uses at most this many addresses (the first ones of a longer,
 * e.g. IPv6, range): each costs a bitmap of the worker's ports. */
#define NAT_POOL_MAX_ADDRS 4096u
/* SNAT port range when the rule gives none (port_lo = port_hi = 0). */
#define NAT_DEFAULT_PORT_LO 1024u
#define NAT_DEFAULT_PORT_HI 65535u

struct nat_pool_config {
	uint8_t family;		/* 4 or 6 */
	uint8_t strategy;	/* enum nat_strategy */
	uint16_t worker_id;	/* 0 .. worker_count - 1 */
	uint16_t worker_count;
	uint16_t port_lo, port_hi;
	uint8_t addr_lo[16], addr_hi[16];	/* network order, IPv4 in [0..4) */
	uint32_t steer_tries;	/* NAT_STEER: free ports tried; 0 = NAT_STEER_TRIES */
	nat_queue_fn queue_of;	/* NAT_STEER: required */
	void *queue_ctx;
	uint32_t queue;		/* NAT_STEER: this worker's queue number */
	/* Where each address's port search starts: 0, the first port; else
	 * a place drawn from it. A new rampartd then does not hand out the
	 * same ports as the last one did, whose connections servers may
	 * still hold open (a SYN on such a tuple meets a challenge ACK and
	 * stalls). */
	uint64_t start_seed;
};

/* Fill a partition-strategy config from an SNAT or masquerade rule. For
 * masquerade the pool is the one address masq_addr (the egress
 * interface's, known only at run time); for SNAT masq_addr is ignored.
 * -1 for a DNAT rule, a bad family or worker numbers. */
int nat_pool_config_from_rule(struct nat_pool_config *c,
			      const struct rfw_nat_rule *rule,
			      const uint8_t *masq_addr, uint16_t worker_id,
			      uint16_t worker_count);

struct nat_stats {
	uint64_t allocs;	/* pairs handed out */
	uint64_t failures;	/* pool exhausted: the new flow was refused */
	uint64_t frees;
	uint64_t in_use;	/* allocs - frees */
	uint64_t steered;	/* NAT_STEER: reply hashes to our own queue */
	uint64_t remote;	/* NAT_STEER: fell back, reply lands elsewhere */
	uint64_t refused;	/* family mismatch (no NAT46/64) */
	uint64_t bad_frees;	/* release of a slot not in use: a caller bug */
	uint64_t reclaimed;	/* pool full: pairs taken back from flows not
				 * established (the pipeline's early drop) */
};

/* A worker's share of one pool. Hot fields first. */
struct nat_pool {
	uint64_t *used;		/* bit per (address, port index): 1 = taken */
	uint32_t *free_count;	/* per address */
	uint32_t *cursor;	/* per address: next port index to look at */
	uint32_t addr_count;
	uint32_t ports;		/* this worker's ports per address */
	uint32_t words;		/* bitmap words per address */
	uint32_t capacity;	/* addr_count * ports */
	uint16_t port_first;	/* port of index 0: port_lo + worker_id */
	uint16_t port_stride;	/* worker_count */
	uint8_t family;
	uint8_t strategy;
	uint8_t truncated;	/* the range had more than NAT_POOL_MAX_ADDRS */
	uint8_t shared;		/* another pool has some of its pairs */
	uint8_t base[16];	/* first address */
	uint32_t steer_tries;
	uint32_t queue;
	nat_queue_fn queue_of;
	void *queue_ctx;
	nat_elsewhere_fn elsewhere;	/* when shared */
	void *elsewhere_ctx;
	struct nat_stats stats;
};

/* Allocates the bitmaps (setup time, never per packet). 0, or -1 with
 * errno EINVAL (bad config, empty share) or ENOMEM. */
int nat_pool_init(struct nat_pool *p, const struct nat_pool_config *c);
void nat_pool_free(struct nat_pool *p);

/* The two configs' pairs may meet (same family, address and port ranges
 * that intersect): then both pools must be shared. */
int nat_pools_overlap(const struct nat_pool_config *a, const struct nat_pool_config *b);
/* From now on p hands out no pair `elsewhere` says another pool holds,
 * and nat_claim refuses one. */
void nat_pool_share(struct nat_pool *p, nat_elsewhere_fn elsewhere, void *ctx);
/* Whether a slot of p is held (1) or free (0); 0 for one out of range. */
int nat_slot_in_use(const struct nat_pool *p, uint32_t slot);

/* Every pair of the worker's share taken (a port-using flow would fail). */
static inline int nat_pool_full(const struct nat_pool *p)
{
	return p->stats.in_use >= p->capacity;
}

#define NAT_SLOT_NONE 0xffffffffu

struct nat_result {
	struct pkt_key wire;	/* the packet as it leaves, translated */
	struct pkt_key reply;	/* the reply as it arrives on the wire */
	uint32_t slot;		/* pass to nat_release on expiry; NONE for DNAT
				 * and port-less protocols */
	uint8_t remote;		/* 1: the reply hashes to another queue (STEER) */
};

/* Translate the first packet of a new flow by rule. DNAT (pool unused,
 * may be NULL): destination := rule addr_lo, and port_lo when non-zero
 * and the protocol has ports. SNAT/masquerade: source := an allocated
 * (address, port) of pool. Ports are TCP/UDP ports; for an ICMP/ICMPv6
 * echo request the identifier stands in sport and dport (conntrack's
 * convention) and is allocated like a port; other protocols (and SCTP,
 * whose CRC32c csum_rewrite cannot follow) get the address only and use
 * no slot. The reply key is the reverse of wire (echo reply type for an
 * echo request). Returns 0, or -1: pool exhausted (counted in failures)
 * or family mismatch (counted in refused). For DNAT then SNAT, call
 * twice: SNAT on the DNAT result's wire key. */
int nat_translate_key(struct nat_pool *pool, const struct rfw_nat_rule *rule,
		      const struct pkt_key *orig, struct nat_result *out);

/* The DNAT mapping alone: orig with the rule's destination. */
void nat_dnat_key(const struct rfw_nat_rule *rule, const struct pkt_key *orig,
		  struct pkt_key *wire);
/* The reply to a packet of key wire, as it will look on the wire. */
void nat_reply_key(const struct pkt_key *wire, struct pkt_key *reply);

/* Return a slot from nat_translate_key to the pool (flow expired). */
void nat_release(struct nat_pool *pool, uint32_t slot);
/* Take a given slot (a flow restored from a state file keeps its
 * port): 0, or -1 when it is out of range or already taken. */
int nat_claim(struct nat_pool *pool, uint32_t slot);
/* The slot an (address, port) pair of this pool stands for (the
 * reverse of nat_slot_pair), or NAT_SLOT_NONE when the pair is not one
 * of this worker's. Conntrack keeps no slot; on expiry the pipeline finds
 * it again from the flow's reply tuple. */
uint32_t nat_pair_slot(const struct nat_pool *pool, const uint8_t *addr, uint16_t port);
/* The (address, port) a slot stands for; -1 for a slot out of range. */
int nat_slot_pair(const struct nat_pool *pool, uint32_t slot, uint8_t addr[16],
		  uint16_t *port);

#endif
