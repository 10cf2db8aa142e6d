/* Router mode's next hops from the kernel: dump its neighbour table over
 * rtnetlink (libmnl) and post what changed to every worker. The main
 * thread calls nl_neigh_refresh once at start and then every second
 * (every tick while it waits for a resolution it asked for). The kernel
 * resolves only addresses it sends to itself, so next hops the workers
 * found no MAC for are asked for (nl_neigh_ask: RTM_NEWNEIGH with
 * NTF_USE, the kernel's "resolve this", which sends ARP or NS; the
 * answer reaches the kernel, as the XDP program passes ARP and ND in
 * router mode, and the next dump brings it to the workers). */
#ifndef RAMPART_DAEMON_NETLINK_H
#define RAMPART_DAEMON_NETLINK_H

#include <stddef.h>
#include <stdint.h>
#include "neigh.h"
#include "worker.h"

struct mnl_socket;

#define NL_ASKED 64
#define NL_ASK_AGAIN_MS 1000	/* a next hop still unresolved is asked again after */

struct nl_neigh_sync {
	struct mnl_socket *nl;
	uint32_t portid, seq;
	int ifindex[PIPE_MAX_PORTS];	/* port -> kernel ifindex */
	uint32_t nports;
	struct worker *const *workers;
	uint32_t nworkers;
	/* What the workers were last told: only changes are posted. */
	struct neigh_table *told;
	uint64_t posted;	/* updates handed to the workers */
	uint64_t ring_full;	/* updates that waited for the next refresh */
	/* Resolutions asked for lately: one per next hop a second at most. */
	struct nl_asked {
		struct pipe_nexthop hop;
		uint64_t at_ms;
	} asked[NL_ASKED];
	uint32_t asked_next;	/* the entry replaced next */
	uint64_t asks;		/* resolutions asked of the kernel */
	uint64_t ask_errors;	/* ... that it refused */
	uint64_t last_ask_ms;
	uint32_t mtu[PIPE_MAX_PORTS];	/* what the workers were last told */
	uint8_t mtu_fixed[PIPE_MAX_PORTS];	/* --port-addr mtu=: not refreshed */
	uint32_t mtu_max[PIPE_MAX_PORTS];	/* what the backend carries; 0: no limit */
	char *buf;
};

int nl_neigh_open(struct nl_neigh_sync *s, const int *ifindex, uint32_t nports,
		  struct worker *const *workers, uint32_t nworkers, char *err, size_t errlen);
/* One dump. Returns the number of updates posted, or -1 with err. */
int nl_neigh_refresh(struct nl_neigh_sync *s, char *err, size_t errlen);
void nl_neigh_close(struct nl_neigh_sync *s);
/* Take every worker's unresolved next hops and ask the kernel to resolve
 * those not asked for in the last NL_ASK_AGAIN_MS (now_ms: CLOCK_MONOTONIC).
 * Returns how many were asked; a refusal is counted, not fatal. */
uint32_t nl_neigh_ask(struct nl_neigh_sync *s, uint64_t now_ms);
/* The ports' MTUs again (SIOCGIFMTU), a change posted to every worker
 * (worker_post_mtu); with each neighbour refresh. */
void nl_mtu_refresh(struct nl_neigh_sync *s);

#endif
