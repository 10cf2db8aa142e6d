/* Flow isolation (--dpdk-isolate, meant for mlx5's bifurcated driver):
 * once a port is isolated the PMD receives only what rte_flow rules give
 * it and the kernel keeps the rest. These are the rules that hand
 * rampartd its transit traffic, spread over the workers' queues with the
 * symmetric RSS key. */
#ifndef RAMPART_DPDK_DP_FLOW_H
#define RAMPART_DPDK_DP_FLOW_H

#include <stddef.h>
#include <stdint.h>
#include "artifact.h"

/* On started port `port` with nqueues RX queues: one rule per route
 * (destination inside its prefix), or with no routes (bridge mode) one
 * rule for all IPv4 and one for all IPv6. 0, or -1 with err (the PMD's
 * reason). */
int dp_flow_take(uint16_t port, uint32_t nqueues, const struct rfw_route *routes,
		 uint32_t nroutes, char *err, size_t errlen);

#endif
