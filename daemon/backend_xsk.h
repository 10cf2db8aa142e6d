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
	/* Frames that came as chains (multi-buffer, longer than a UMEM
	 * frame), each copied whole into a slot here: the pipeline reads a
	 * frame as one run of bytes. A slot lives until the burst it came
	 * in is sent or dropped (the worker finishes a burst before taking
	 * the next). NULL when no socket of the worker has multi-buffer. */
	uint8_t *joined;
	uint32_t njoined;	/* slots taken by the current burst */
	uint64_t too_long[PIPE_MAX_PORTS];	/* chains longer than a slot, dropped, by port */
};

struct backend_xsk {
	struct backend be;		/* first: the worker sees only this */
	struct xsk_port *ports[PIPE_MAX_PORTS];
	struct backend_xsk_worker w[XSK_MAX_QUEUES];
};

/* A joined frame's slot: a frame as long as another worker may hand over
 * (HANDOFF_FRAME_MAX), more than any MTU a kernel gives veth or a NIC. */
#define XSK_JOINED_ROOM 9728u

/* Ports are opened by the caller (queue q of every port is worker q's).
 * 0, or -1 with errno when the slots for chained frames cannot be had. */
int backend_xsk_init(struct backend_xsk *x, struct xsk_port *const *ports, uint32_t nports,
		     uint32_t nqueues);
/* Free what backend_xsk_init took. */
void backend_xsk_fini(struct backend_xsk *x);
/* The longest frame port can send and receive (Ethernet header
 * included): a UMEM frame, or with multi-buffer on every one of the
 * port's sockets, XSK_JOINED_ROOM. */
uint32_t backend_xsk_frame_max(const struct backend_xsk *x, uint32_t port);

#endif
