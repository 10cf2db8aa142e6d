/* How many ARP requests and neighbour solicitations for next hops with
 * no MAC one DPDK worker may broadcast: SOLICIT_BURST at once, then
 * SOLICIT_PER_S a second. The per-hop gap (backend_dpdk.h) keeps a
 * flood to one address to one ask a second, but its table of hops asked
 * lately holds 64: packets to more unused addresses of a connected
 * subnet than that, in turn, made one broadcast each (up to
 * PIPE_UNRESOLVED a burst), so whoever the rules let through could make
 * the firewall flood the LAN with them at the rate of its own packets.
 * The burst covers a router that starts with a /24's hosts to find at
 * once; the rate is what a busy LAN's churn needs (Linux has no global
 * bound, but makes an entry, up to gc_thresh3, for each address it
 * asks for). A refused ask is not sent and not told to the main thread;
 * the packets wait as for an unanswered one, and the next packet to the
 * hop asks again.
 *
 * A virtual clock (the generic cell rate algorithm): `next_ns` is when
 * the bucket would be full again; an ask is taken while that is at most
 * SOLICIT_BURST - 1 intervals ahead of now. No division, no state but
 * one word, per worker: no atomics. */
#ifndef RAMPART_SOLICIT_BUDGET_H
#define RAMPART_SOLICIT_BUDGET_H

#include <stdint.h>

#define SOLICIT_BURST 256u
#define SOLICIT_PER_S 1000u
#define SOLICIT_INTERVAL_NS (1000000000ull / SOLICIT_PER_S)

struct solicit_budget {
	uint64_t next_ns;	/* 0 at start: full */
};

/* 1: an ask may go out at now_ns (and is charged); 0: over the budget. */
static inline int solicit_budget_take(struct solicit_budget *b, uint64_t now_ns)
{
	uint64_t next = b->next_ns > now_ns ? b->next_ns : now_ns;

	if (next - now_ns > (SOLICIT_BURST - 1) * SOLICIT_INTERVAL_NS)
		return 0;
	b->next_ns = next + SOLICIT_INTERVAL_NS;
	return 1;
}

#endif
