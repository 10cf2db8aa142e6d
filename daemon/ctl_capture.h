/* The capture request of the control socket (ctl_capture.c). */
#ifndef RAMPART_DAEMON_CTL_CAPTURE_H
#define RAMPART_DAEMON_CTL_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include "artifact.h"
#include "ctl_buf.h"
#include "pktcap.h"

struct ctl_capture_req {
	uint32_t rule;			/* a rule number, or PKTCAP_DROPS */
	uint32_t count;
	uint32_t timeout_s;
	const struct rfw_view *view;	/* names in the comments */
	const char *const *ifnames;
	uint32_t nports;
	struct pktcap_ring *const *rings;	/* one per worker */
	uint32_t nworkers;
};

/* The pcapng document into out: the packets captured (up to count, for
 * at most timeout_s), or -1 with err. */
int ctl_capture(struct ctl_buf *out, const struct ctl_capture_req *q, char *err, size_t errlen);

#endif
