/* What rampartd.c needs from the DPDK backend beyond dp_port.h: ports
 * opened from rampartd's options, their MACs in the pipeline's port
 * table, and the control socket's picture of them. */
#ifndef RAMPART_DPDK_DP_DAEMON_H
#define RAMPART_DPDK_DP_DAEMON_H

#include "backend_dpdk.h"
#include "control.h"
#include "dp_port.h"
#include "options.h"

/* dp_open with --interface names, --queues, --dpdk-isolate (router mode:
 * the policy's routes are what rampartd takes) and the EAL arguments;
 * prints why on failure (the caller still calls dp_close). */
int dp_daemon_open(struct dp_ports *d, const struct rampartd_opts *o,
		   const struct rfw_view *view);
/* Port MACs from the devices, for ports without --port-addr, and every
 * port's MTU (router mode's limit, read once). */
void dp_daemon_macs(const struct dp_ports *d, const struct rampartd_opts *o,
		    struct pipe_config *cfg);
void control_src_dpdk(struct control_src *s, const struct rampartd_opts *o,
		      const struct rfw_view *view, struct worker *const *workers,
		      const struct dp_ports *d, uint32_t max_flows);
/* Run worker w (its queue number k) on worker lcore k: 0, or -1 after
 * saying why. Returns once the lcore runs it. */
int dp_daemon_launch(const struct dp_ports *d, struct worker *w);
/* Ask w to stop and wait for its lcore. */
void dp_daemon_stop(const struct dp_ports *d, struct worker *w);
/* -v: where each worker runs, what each port got. */
void dp_daemon_report(const struct dp_ports *d, const struct rampartd_opts *o);
/* Reload (daemon/reload.h) with DPDK ports: the context for the check
 * below, which refuses a policy whose routes differ from the starting
 * one's while the ports are isolated (the rte_flow rules were made from
 * those routes). */
void *dp_daemon_reload_ctx(const struct rampartd_opts *o, const struct rfw_view *started);
int dp_daemon_reload_check(void *ctx, const struct rfw_view *running,
			   const struct rfw_view *view, char *err, size_t errlen);
/* -v at stop, before dp_close: each port's PMD counters (missed, no
 * mbuf, TX errors) and the chained frames the backend dropped. */
void dp_daemon_final(const struct dp_ports *d, const struct rampartd_opts *o,
		     const struct backend_dpdk *b);

#endif
