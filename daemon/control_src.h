/* What rampartd tells the control socket about itself (control_src),
 * gathered from the options, the policy and the opened AF_XDP ports, so
 * that rampartd.c needs one call. */
#ifndef RAMPART_DAEMON_CONTROL_SRC_H
#define RAMPART_DAEMON_CONTROL_SRC_H

#include "control.h"
#include "options.h"
#include "port.h"

/* What every backend shares: options, policy, workers. max_flows: the
 * pipeline's conntrack size per worker (0: the policy's). */
void control_src_init(struct control_src *s, const char *backend, const struct rampartd_opts *o,
		      const struct rfw_view *view, struct worker *const *workers,
		      uint32_t nworkers, uint32_t max_flows);
/* The same, and the AF_XDP ports. */
void control_src_xsk(struct control_src *s, const struct rampartd_opts *o,
		     const struct rfw_view *view, struct worker *const *workers,
		     uint32_t nworkers, const struct xsk_port *ports, uint32_t max_flows);

#endif
