/* The DPDK backend behind daemon/backend.h: a frame is an rte_mbuf (its
 * pointer is the handle), received and sent in bursts on the worker's own
 * queue of every port. Any port's mbuf can go out of any port, so a
 * forwarded frame is never copied. */
#ifndef RAMPART_DPDK_BACKEND_DPDK_H
#define RAMPART_DPDK_BACKEND_DPDK_H

#include <stdatomic.h>

#include "backend.h"
#include "dp_port.h"
#include "neigh_proto.h"
#include "neigh_ring.h"
#include "solicit_budget.h"

/* Polls that may find nothing before an idle worker starts to sleep, and
 * how long it then sleeps: DPDK queues have no interrupt here (af_xdp,
 * pcap, ring), and the lab's cores are shared. */
#define DP_IDLE_SPINS 256
#define DP_IDLE_SLEEP_US 50

/* Router mode without a kernel (neigh_proto.h): neighbours a queue's
 * frames taught go to the main thread (neigh_ring.h), which gives every
 * worker; the next hops a queue asked for lately are kept, so that a
 * flood to one asks once a DP_SOLICIT_GAP_NS. */
#define DP_ASKED_SLOTS 64		/* power of two */
#define DP_SOLICIT_GAP_NS 1000000000ull

struct dp_asked {
	uint64_t at_ns;			/* 0: free */
	uint8_t addr[16];
	uint8_t port, family;
};

struct dp_queue_state {
	uint32_t next_port;		/* rx starts here, for fairness */
	uint32_t empty_polls;
	uint64_t multiseg;		/* chained mbufs refused (no scatter) */
	/* ARP / ND (own_neigh): answers sent, frames that told of a
	 * neighbour (each one: the same neighbour's every ARP again; those
	 * the ring had no room for too; what the cache made of them, new
	 * entries and moves, is its own count, nc_stats), solicitations and
	 * probes sent */
	uint64_t neigh_answered, neigh_news, neigh_asked, neigh_probed;
	uint64_t neigh_ask_limited;	/* not sent: over solicit_budget.h's */
	struct solicit_budget solicit;
	struct dp_asked asked[DP_ASKED_SLOTS];
	struct nr_ring learnt;		/* to the main thread (nr_tick) */
} __attribute__((aligned(64)));

struct backend_dpdk {
	struct backend be;		/* first: the worker sees only this */
	const struct dp_ports *ports;
	/* router mode: answer ARP / ND for the ports' addresses and resolve
	 * next hops (the PMD's queues take those frames from the kernel) */
	int own_neigh;
	struct np_port np[PIPE_MAX_PORTS];
	struct dp_queue_state q[DP_MAX_QUEUES];
};

void backend_dpdk_init(struct backend_dpdk *b, const struct dp_ports *ports);
/* Router mode: the ports' MACs and addresses (cfg's) for ARP and ND,
 * before the workers start. */
void backend_dpdk_own_neighbours(struct backend_dpdk *b, const struct pipe_config *cfg);

#endif
