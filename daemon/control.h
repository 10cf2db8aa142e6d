/* rampartd's control socket: a Unix stream socket (mode 0600, refused to
 * other users) served by a thread of its own, one request line per
 * connection answered with one document (control.c has the protocol).
 * Answers come from the workers through their mailboxes (ctl_job.h). */
#ifndef RAMPART_DAEMON_CONTROL_H
#define RAMPART_DAEMON_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include "artifact.h"
#include "backend.h"
#include "neigh_cache.h"
#include "pipeline.h"
#include "worker.h"

#define CONTROL_DEFAULT_PATH "/run/rampart/rampartd.sock"
#define CONTROL_PROTO_VERSION 1
/* First line of every answer: "rampart-control 1 ok" or "... error". */
#define CONTROL_MAGIC "rampart-control"

struct control_iface {
	char name[16];
	char xdp_mode[16];	/* "native", "skb", ... */
	char xsk_mode[16];	/* "zero-copy" or "copy" */
	uint32_t queues;
	/* the longest frame the port receives and sends, Ethernet header
	 * included (AF_XDP: a UMEM frame, or a joined chain with multi-buffer;
	 * DPDK: an mbuf's room); 0 when the backend has no limit (pcap) */
	uint32_t frame_max;
	char umem[16];		/* "shared" (with the worker's other ports), "own", "mixed" */
	char umem_reason[64];	/* why not shared ("" when shared) */
};

struct reloader;

/* What the control thread may show; fixed while it runs, but for view,
 * which a reload replaces (under the reloader's lock, which the control
 * thread holds while it serves a request). */
struct port_addr_watch;

struct control_src {
	const struct rfw_view *view;
	struct reloader *reload;	/* NULL: reload is refused */
	const char *policy_path;
	const char *mode;	/* "bridge" or "router" */
	const char *backend;
	/* its rx_loss op (frames lost before the workers) is asked per
	 * request; NULL, or an op NULL: none counted, shown as 0 */
	struct backend *be;
	struct worker *const *workers;
	uint32_t nworkers;
	uint32_t nports;
	struct control_iface iface[PIPE_MAX_PORTS];
	uint32_t max_flows;	/* conntrack slots per worker (0: stateless) */
	const char *state_file;	/* --state-file; NULL: none */
	uint32_t state_interval;	/* --state-interval (0: at a clean stop only) */
	const char *home;	/* with handoff, how flows are homed: "hash" or "rss" */
	/* DPDK router with its own ARP/ND: the neighbour cache's summary,
	 * as of its last tick (neigh_cache.h); NULL: none (the kernel's) */
	void (*neighbours)(struct nc_summary *out);
	/* Router mode on kernel ports: the addresses the policy was last
	 * built with (port_addrs.h; read under the reload lock, which the
	 * requests hold); NULL: the ports' never change */
	const struct port_addr_watch *addrs;
};

struct control;

/* Create the socket at path (its directory 0700 when missing), before any
 * interface is touched. A stale socket (nobody answers) is replaced.
 * NULL with err: another rampartd answers there, or the socket cannot be
 * made. */
struct control *control_open(const char *path, char *err, size_t errlen);
/* Also serve Prometheus metrics over HTTP at addr ("127.0.0.1:9630",
 * "[::1]:9630"), by the same thread. Before control_start. 0 or -1 with
 * err. */
int control_metrics_listen(struct control *c, const char *addr, char *err, size_t errlen);
/* Serve requests on a thread; src must outlive control_stop. 0 or errno. */
int control_start(struct control *c, const struct control_src *src);
/* Stop serving (join the thread), close and remove the socket. */
void control_stop(struct control *c);
/* Free what the workers may still hold (a request that timed out): only
 * once the workers are stopped. */
void control_free(struct control *c);

#endif
