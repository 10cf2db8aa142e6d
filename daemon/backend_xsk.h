/* The AF_XDP backend: the worker's frames live in each port's UMEM.
 * Bounced frames go back out of their own port from the same UMEM frame
 * (no copy); forwarded ones are copied once into the egress port's UMEM
 * (each port has its own). */
#ifndef RAMPART_DAEMON_BACKEND_XSK_H
#define RAMPART_DAEMON_BACKEND_XSK_H

#include "backend.h"
#include "port.h"

struct backend_xsk {
	struct backend be;		/* first: the worker sees only this */
	struct xsk_port *ports[PIPE_MAX_PORTS];
	uint32_t next_port;		/* rx starts here, for fairness */
};

/* Ports are opened by the caller (queue q of every port is worker q's). */
void backend_xsk_init(struct backend_xsk *x, struct xsk_port *const *ports, uint32_t nports,
		      uint32_t nqueues);

#endif
