/* Bridge mode ("bump in the wire"): one worker thread moves frames between
 * two AF_XDP ports, forwarding what the policy accepts from each out of
 * the other one. */
#ifndef RAMPART_DAEMON_BRIDGE_H
#define RAMPART_DAEMON_BRIDGE_H

#include <pthread.h>
#include <stdatomic.h>
#include "artifact.h"
#include "cls.h"
#include "counters.h"
#include "port.h"

#define BRIDGE_NO_IF 0xff	/* >= RFW_MAX_INTERFACES: matches no iface rule */

struct bridge {
	struct xsk_port *ports[2];
	struct cls_table acl;
	const struct rfw_view *view;
	struct counters *ctr;		/* written only by the worker */
	/* Each port's index in the policy's interfaces (pkt_key.in_if /
	 * out_if), or BRIDGE_NO_IF when the policy does not name it. */
	uint8_t if_index[2];
	atomic_int stop;
	pthread_t thread;
};

/* Start the worker on ports a and b (queue 0 of each). 0 or an errno. */
int bridge_start(struct bridge *b, struct xsk_port *a, struct xsk_port *bp,
		 const struct rfw_view *view, struct counters *ctr);
/* Ask the worker to stop and wait for it (at most one poll timeout). */
void bridge_stop(struct bridge *b);

#endif
