/* The DPDK backend behind daemon/backend.h: a frame is an rte_mbuf (its
 * pointer is the handle), received and sent in bursts on the worker's own
 * queue of every port. Any port's mbuf can go out of any port, so a
 * forwarded frame is never copied. */
#ifndef RAMPART_DPDK_BACKEND_DPDK_H
#define RAMPART_DPDK_BACKEND_DPDK_H

#include "backend.h"
#include "dp_port.h"

/* Polls that may find nothing before an idle worker starts to sleep, and
 * how long it then sleeps: DPDK queues have no interrupt here (af_xdp,
 * pcap, ring), and the lab's cores are shared. */
#define DP_IDLE_SPINS 256
#define DP_IDLE_SLEEP_US 50

struct dp_queue_state {
	uint32_t next_port;		/* rx starts here, for fairness */
	uint32_t empty_polls;
	uint64_t multiseg;		/* chained mbufs refused (no scatter) */
} __attribute__((aligned(64)));

struct backend_dpdk {
	struct backend be;		/* first: the worker sees only this */
	const struct dp_ports *ports;
	struct dp_queue_state q[DP_MAX_QUEUES];
};

void backend_dpdk_init(struct backend_dpdk *b, const struct dp_ports *ports);

#endif
