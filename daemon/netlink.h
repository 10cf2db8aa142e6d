/* Router mode's next hops from the kernel: dump its neighbour table over
 * rtnetlink (libmnl) and post what changed to every worker. The main
 * thread calls nl_neigh_refresh once at start and then every second
 * (every tick while it waits for a resolution it asked for). The kernel
 * resolves only addresses it sends to itself, so next hops the workers
 * found no MAC for are asked for (nl_neigh_ask: RTM_NEWNEIGH with
 * NTF_USE, the kernel's "resolve this", which sends ARP or NS; the
 * answer reaches the kernel, as the XDP program passes ARP and ND in
 * router mode, and the next dump brings it to the workers). After a
 * complete dump the workers forget what the kernel failed to resolve
 * (FAILED), and what the kernel no longer has is asked for again (its
 * garbage collection drops entries only rampart uses: the kernel never
 * sends to them itself), to be kept when the answer comes and forgotten
 * when it fails: the workers' tables hold 2,048 next hops, and entries
 * that only ever came (made-up solicitation senders, clients' rotating
 * IPv6 addresses) would otherwise fill them for good, after which no new
 * next hop could be learnt. `--neighbor` entries are pinned: the
 * kernel's entries for the same address never replace them. */
#ifndef RAMPART_DAEMON_NETLINK_H
#define RAMPART_DAEMON_NETLINK_H

#include <stddef.h>
#include <stdint.h>
#include "neigh.h"
#include "worker.h"

struct mnl_socket;

#define NL_ASKED 64
#define NL_ASK_AGAIN_MS 1000	/* a next hop still unresolved is asked again after */
#define NL_SWEEP_ASKS 32	/* entries the kernel dropped, asked again a dump */

struct nl_neigh_sync {
	struct mnl_socket *nl;
	uint32_t portid, seq;
	int ifindex[PIPE_MAX_PORTS];	/* port -> kernel ifindex */
	uint32_t nports;
	struct worker *const *workers;
	uint32_t nworkers;
	/* What the workers were last told: only changes are posted. */
	struct neigh_table *told;
	struct neigh_table *seen;	/* this dump's resolved entries (the mark) */
	struct neigh_table *failed;	/* this dump's FAILED ones */
	struct neigh_table *present;	/* this dump's unresolved ones, failed or not */
	int seen_full;			/* more than they hold: no sweep this time */
	struct neigh_table *pinned;	/* --neighbor entries: the kernel's never post */
	uint64_t posted;	/* updates handed to the workers */
	uint64_t forgotten;	/* entries the workers were told to forget */
	uint64_t sweep_asks;	/* entries the kernel dropped, asked for again */
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
/* A --neighbor entry (the workers have it from their start): dumps
 * never replace or forget it. 0, or -1 when the table is full. */
int nl_neigh_pin(struct nl_neigh_sync *s, uint32_t port, uint8_t family, const uint8_t *addr,
		 const uint8_t mac[6]);
/* One dump. Returns the number of updates posted, or -1 with err. */
int nl_neigh_refresh(struct nl_neigh_sync *s, char *err, size_t errlen);
/* The dump's parts, apart for tests: a resolved entry of the dump
 * (posted when new or changed), an unresolved one (failed: FAILED, else
 * INCOMPLETE and the like), and, after a complete dump, the sweep of
 * what it did not have resolved. ask(ctx, hop): have the kernel resolve
 * hop, 0 or -1 when it refuses (then the entry is forgotten too);
 * nl_neigh_refresh passes its RTM_NEWNEIGH with NTF_USE. */
void nl_neigh_dump_begin(struct nl_neigh_sync *s);
void nl_neigh_seen(struct nl_neigh_sync *s, uint32_t port, uint8_t family, const uint8_t *addr,
		   const uint8_t mac[6]);
void nl_neigh_unresolved(struct nl_neigh_sync *s, uint32_t port, uint8_t family,
			 const uint8_t *addr, int failed);
void nl_neigh_sweep(struct nl_neigh_sync *s,
		    int (*ask)(struct nl_neigh_sync *s, const struct pipe_nexthop *hop));
void nl_neigh_close(struct nl_neigh_sync *s);
/* Take every worker's unresolved next hops and ask the kernel to resolve
 * those not asked for in the last NL_ASK_AGAIN_MS (now_ms: CLOCK_MONOTONIC).
 * Returns how many were asked; a refusal is counted, not fatal. */
uint32_t nl_neigh_ask(struct nl_neigh_sync *s, uint64_t now_ms);
/* The ports' MTUs again (SIOCGIFMTU), a change posted to every worker
 * (worker_post_mtu); with each neighbour refresh. */
void nl_mtu_refresh(struct nl_neigh_sync *s);

#endif
