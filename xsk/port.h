/* The AF_XDP backend for one interface: our XDP program attached to it and
 * one socket per RX queue in use (queues 0..n-1; rampartd's worker k
 * drives queue k of every port). */
#ifndef RAMPART_XSK_PORT_H
#define RAMPART_XSK_PORT_H

#include <net/if.h>
#include <stddef.h>
#include "queue.h"
#include "xdp_prog.h"


#define XSK_MAX_QUEUES 64	/* = max_entries of the program's XSKMAP */

struct xsk_port {
	char ifname[IF_NAMESIZE];
	int ifindex;
	uint32_t nqueues;
	struct xsk_prog prog;
	struct xsk_queue queues[XSK_MAX_QUEUES];
};

/* Attach obj_path to ifname configured with cfg and open nqueues sockets
 * (queues 0..n-1), socket q bound to the UMEM shared[q] where the kernel
 * allows it (shared NULL: each socket a UMEM of its own; queue.h).
 * On failure what was done is undone as xsk_port_undo does; returns
 * negative errno with the reason (the kernel's, where it gave one) in
 * err. */
int xsk_port_open(struct xsk_port *p, const char *ifname, const char *obj_path,
		  const struct xsk_prog_cfg *cfg, uint32_t nqueues, struct xsk_umem_pool *shared,
		  char *err, size_t errlen);
/* Close the sockets (and their own UMEMs), then detach the program. Safe
 * on a zeroed port. */
void xsk_port_close(struct xsk_port *p);
/* Close the sockets but leave the program attached, as a killed
 * rampartd does: the program's --fail action covers the port until the
 * next rampartd replaces it (a restart that keeps its flows). */
void xsk_port_leave(struct xsk_port *p);
/* Take down a port of a start that failed, leaving the interface as it
 * was found: a port whose program replaced one a dead rampartd left
 * keeps ours on (configured, no sockets: the --fail action, as the old
 * one had it), another is closed. */
void xsk_port_undo(struct xsk_port *p);

/* The RX queues the kernel has for ifname (sysfs queues/rx-N, which
 * follows `ethtool -L`), or 0 when it cannot tell. */
uint32_t xsk_port_rx_queues(const char *ifname);

#endif
