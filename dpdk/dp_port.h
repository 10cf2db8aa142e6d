/* DPDK ports for rampartd: EAL start-up from the arguments after "--",
 * ports found by their EAL device names, one RX and one TX queue per
 * worker with a symmetric RSS key, mbuf pools per NUMA socket, and the
 * worker lcores (one per RX queue). Everything DPDK-specific that is not
 * the per-burst path (backend_dpdk.c) lives here. */
#ifndef RAMPART_DPDK_DP_PORT_H
#define RAMPART_DPDK_DP_PORT_H

#include "rss_home.h"
#include <stddef.h>
#include <stdint.h>
#include "artifact.h"
#include "pipeline.h"

#define DP_MAX_QUEUES 64	/* = OPT_MAX_QUEUES */
#define DP_MAX_SOCKETS 8
#define DP_MAX_MTU 9600		/* jumbo frames: mbufs of ~9.8 KB */

struct rte_mempool;

struct dp_ports {
	uint32_t nports;
	uint32_t nqueues;		/* RX = TX queues per port = workers */
	uint16_t port_id[PIPE_MAX_PORTS];	/* rampart port -> ethdev port */
	int socket[PIPE_MAX_PORTS];	/* NUMA socket of each port */
	uint8_t rss[PIPE_MAX_PORTS];	/* RSS configured (the PMD offers it) */
	uint8_t started[PIPE_MAX_PORTS];
	uint8_t isolated[PIPE_MAX_PORTS];
	uint8_t rx_ipv4_csum[PIPE_MAX_PORTS];	/* the NIC checks IPv4 header checksums */
	char driver[PIPE_MAX_PORTS][16];	/* "net_af_xdp", "mlx5_pci", ... */
	unsigned lcore[DP_MAX_QUEUES];	/* worker k's lcore */
	struct rte_mempool *pool[DP_MAX_SOCKETS];
	uint32_t frame_max;	/* the longest frame one mbuf holds */
	int eal_up;
};

struct dp_open_cfg {
	const char *const *names;	/* EAL device names, in rampart port order */
	uint32_t nports;
	uint32_t queues;		/* 0: as many as lcores and ports allow */
	int isolate;			/* rte_flow_isolate before configuring, */
	const struct rfw_route *routes;	/* then take these prefixes (dp_flow.h) */
	uint32_t nroutes;
	int eal_argc;
	char **eal_argv;		/* argv[0] is the program name */
	/* each port's MTU (0: the PMD's): set on the device, and the pool's
	 * mbufs sized so that a frame of the largest fits in one */
	uint32_t mtu[PIPE_MAX_PORTS];
};

/* The symmetric RSS key every port gets (0x6d5a repeated), len bytes. */
void dp_rss_key(uint8_t *key, size_t len);
/* rte_eal_init, then every port configured and started. 0, or -1 with
 * err (the caller still calls dp_close). */
int dp_open(struct dp_ports *d, const struct dp_open_cfg *cfg, char *err, size_t errlen);
/* The port's MAC address (6 bytes). */
void dp_port_mac(const struct dp_ports *d, uint32_t port, uint8_t mac[6]);
/* The device's MTU, 0 when it cannot say. */
uint32_t dp_port_mtu(const struct dp_ports *d, uint32_t port);
/* The port's RSS as --home rss follows it (rss_home.h): the symmetric
 * key it was given, its indirection table (the PMD's answer, else the
 * default: entry i = i mod queues) and the fields hashed. 0, 1 when the
 * port has no RSS (one queue, or a PMD without it, as net_af_xdp), -1
 * with err. */
int dp_port_rss(const struct dp_ports *d, uint32_t port, struct rss_port_conf *c, char *err,
		size_t errlen);
/* The CPU worker k's lcore runs on (-1 when EAL did not pin it). */
int dp_worker_cpu(const struct dp_ports *d, uint32_t k);
/* Run fn(arg) on worker k's lcore; 0 or a negative errno. */
int dp_launch(const struct dp_ports *d, uint32_t k, int (*fn)(void *), void *arg);
/* Wait for worker k's lcore to return (the caller has asked it to stop). */
void dp_wait(const struct dp_ports *d, uint32_t k);
/* Stop and close the ports, free the pools, rte_eal_cleanup. */
void dp_close(struct dp_ports *d);

#endif
