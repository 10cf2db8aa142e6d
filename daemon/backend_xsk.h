/* The AF_XDP backend: the worker's frames live in UMEMs. Worker k's
 * sockets (queue k of every port) share one UMEM where the kernel lets
 * them, so a forwarded frame goes out by its address, no copy; a socket
 * the kernel would not bind to it has a UMEM of its own, and frames
 * forwarded to or from it are copied once. Bounced frames always go back
 * out as the same frame. */
#ifndef RAMPART_DAEMON_BACKEND_XSK_H
#define RAMPART_DAEMON_BACKEND_XSK_H

#include "backend.h"
#include "port.h"

/* Worker k's view, on cache lines of its own (it writes next_port). */
struct backend_xsk_worker {
	_Alignas(64) struct xsk_queue *q[PIPE_MAX_PORTS];	/* queue k of port p */
	uint32_t next_port;		/* rx starts here, for fairness */
};

struct backend_xsk {
	struct backend be;		/* first: the worker sees only this */
	struct xsk_port *ports[PIPE_MAX_PORTS];
	struct backend_xsk_worker w[XSK_MAX_QUEUES];
};

/* Ports are opened by the caller (queue q of every port is worker q's). */
void backend_xsk_init(struct backend_xsk *x, struct xsk_port *const *ports, uint32_t nports,
		      uint32_t nqueues);

#endif
