/* Router mode's next hops from the kernel: dump its neighbour table over
 * rtnetlink (libmnl) and post what changed to every worker. The main
 * thread calls nl_neigh_refresh once at start and then every second. */
#ifndef RAMPART_DAEMON_NETLINK_H
#define RAMPART_DAEMON_NETLINK_H

#include <stddef.h>
#include <stdint.h>
#include "neigh.h"
#include "worker.h"

struct mnl_socket;

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
	char *buf;
};

int nl_neigh_open(struct nl_neigh_sync *s, const int *ifindex, uint32_t nports,
		  struct worker *const *workers, uint32_t nworkers, char *err, size_t errlen);
/* One dump. Returns the number of updates posted, or -1 with err. */
int nl_neigh_refresh(struct nl_neigh_sync *s, char *err, size_t errlen);
void nl_neigh_close(struct nl_neigh_sync *s);

#endif
