/* rampartd's command line (CLI.md) parsed and checked into one struct;
 * every value is validated here so that set-up only meets kernel errors. */
#ifndef RAMPART_DAEMON_OPTIONS_H
#define RAMPART_DAEMON_OPTIONS_H

#include <stdint.h>
#include "pipeline.h"
#include "rss_home.h"

#define EXIT_USAGE 1	/* usage or policy error (CLI.md) */
#define EXIT_SETUP 2	/* interface or NIC set-up failed */
#define EXIT_RESTART 3	/* a clean stop for a restart (SIGUSR2): systemd's
			 * RestartForceExitStatus starts the next one */

#define OPT_MAX_PCAP_IN 32
#define OPT_MAX_NEIGH 256
#define OPT_MAX_QUEUES 64	/* = XSK_MAX_QUEUES */

enum opt_backend { OPT_BACKEND_XSK, OPT_BACKEND_PCAP, OPT_BACKEND_DPDK };

struct opt_file {
	const char *ifname;	/* points into argv (IF=FILE, '=' cut) */
	const char *path;
};

/* --port-addr IF=MAC[,IPv4...][,IPv6...][,mtu=N] */
struct opt_port_addr {
	const char *ifname;
	uint8_t mac[6];
	struct pipe_port_addrs addrs;	/* the first of each family, then more */
	uint32_t mtu;		/* mtu=N: router mode's port MTU; 0: the port's own */
};

/* --neighbor IF=IP=MAC */
struct opt_neigh {
	const char *ifname;
	uint8_t family;
	uint8_t addr[16];
	uint8_t mac[6];
};

struct rampartd_opts {
	const char *policy;
	const char *ifnames[PIPE_MAX_PORTS];
	uint32_t nifs;
	enum pipe_mode mode;
	enum opt_backend backend;
	const char *xdp_object;
	const char *control;	/* --control PATH (control.h has the default) */
	int verbose;
	struct opt_file pcap_in[OPT_MAX_PCAP_IN];
	uint32_t npcap_in;
	struct opt_file pcap_out[PIPE_MAX_PORTS];
	uint32_t npcap_out;
	struct opt_port_addr port_addr[PIPE_MAX_PORTS];
	uint32_t nport_addr;
	struct opt_neigh neigh[OPT_MAX_NEIGH];
	uint32_t nneigh;
	uint32_t queues;	/* --queues; 0 = every RX queue of the interfaces */
	uint16_t cores[OPT_MAX_QUEUES];	/* --cores, in worker order */
	uint32_t ncores;	/* 0 = round-robin over the CPUs we may run on */
	int fail_closed;	/* --fail closed */
	enum pipe_flow_policy reload_flows;	/* --reload-flows keep|recheck */
	int no_sandbox;		/* --no-sandbox: keep capabilities, no worker filter */
	const char *metrics;	/* --metrics ADDR:PORT (Prometheus), NULL: none */
	const char *log;	/* --log FILE|-: packet log (JSON lines), NULL: none */
	uint32_t log_rate;	/* --log-rate N: records a second per rule */
	const char *state_file;	/* --state-file PATH: flows over a restart; NULL: none */
	uint32_t state_interval;	/* --state-interval S: also every S s (0: at stop only) */
	uint32_t reply_rate;	/* --reply-rate N: replies a second per worker, 0 = no limit */
	int eal_argc;		/* --backend dpdk: what follows "--", after */
	char **eal_argv;	/* argv[0] (docs/dpdk.md) */
	int dpdk_isolate;	/* --dpdk-isolate: rte_flow_isolate the ports */
	int dpdk_static_neigh;	/* --dpdk-static-neighbors: no ARP/ND of our own */
	uint32_t dpdk_reachable;	/* --dpdk-neighbor-reachable S; 0: the default (30) */
	int umem_per_interface;	/* --umem per-interface: no shared UMEM */
	int no_handoff;		/* --handoff off */
	int home_rss;		/* --home rss: flows homed by the NIC's RSS */
	uint8_t rss_key[RSS_KEY_MAX];	/* --rss-key: for ports that do not say */
	size_t rss_key_len;	/* 0: not given */
};

/* 0, or EXIT_USAGE after printing why. May exit(0) for --help. */
int options_parse(int argc, char **argv, struct rampartd_opts *o);

/* The port number of ifname among --interface, or -1. */
int options_port(const struct rampartd_opts *o, const char *ifname);

#endif
