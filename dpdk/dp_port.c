/* EAL, ports, queues, RSS and mbuf pools for the DPDK backend (see
 * dp_port.h). Set-up only: nothing here runs per packet. */
#define _GNU_SOURCE	/* rte_cpuset_t, CPU_ISSET */
#include "dp_port.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_lcore.h>
#include <rte_launch.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "dp_flow.h"

#define DP_RX_DESC 1024
#define DP_TX_DESC 1024
#define DP_POOL_CACHE 256
#define DP_RSS_KEY_MAX 52	/* the longest Toeplitz key a PMD asks for */

/* A Toeplitz key of one repeated 16-bit pattern hashes (src, dst) and
 * (dst, src) alike, so both directions of a flow reach the same queue
 * (Woo and Park, "Scalable TCP Session Monitoring with Symmetric
 * Receive-side Scaling", 2012). */
void dp_rss_key(uint8_t *key, size_t len)
{
	for (size_t i = 0; i < len; i++)
		key[i] = i % 2 ? 0x5a : 0x6d;
}

static int fail(char *err, size_t errlen, const char *fmt, const char *what, int e)
{
	snprintf(err, errlen, fmt, what, e < 0 ? strerror(-e) : strerror(e));
	return -1;
}

int dp_port_rss(const struct dp_ports *d, uint32_t port, struct rss_port_conf *c, char *err,
		size_t errlen)
{
	struct rte_eth_rss_reta_entry64 reta[RSS_TABLE_MAX / RTE_ETH_RETA_GROUP_SIZE];
	struct rte_eth_rss_conf conf;
	struct rte_eth_dev_info info;
	uint16_t id = d->port_id[port];
	uint8_t key[DP_RSS_KEY_MAX];
	int e;

	memset(c, 0, sizeof(*c));
	if (!d->rss[port])
		return 1;
	e = rte_eth_dev_info_get(id, &info);
	if (e)
		return fail(err, errlen, "%s: cannot read device info: %s", d->driver[port], e);
	memset(&conf, 0, sizeof(conf));
	conf.rss_key = key;
	conf.rss_key_len = sizeof(key);
	if (rte_eth_dev_rss_hash_conf_get(id, &conf) == 0 && conf.rss_key_len >= RSS_KEY_MIN &&
	    conf.rss_key_len <= RSS_KEY_MAX) {
		c->key_len = conf.rss_key_len;
		memcpy(c->key, key, c->key_len);
	} else {	/* what dp_open gave it */
		c->key_len = info.hash_key_size >= RSS_KEY_MIN && info.hash_key_size <= RSS_KEY_MAX
				     ? info.hash_key_size : RSS_KEY_MIN;
		dp_rss_key(c->key, c->key_len);
		conf.rss_hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			      info.flow_type_rss_offloads;
	}
	c->ports[0][0] = !!(conf.rss_hf & RTE_ETH_RSS_NONFRAG_IPV4_TCP);
	c->ports[0][1] = !!(conf.rss_hf & RTE_ETH_RSS_NONFRAG_IPV4_UDP);
	c->ports[1][0] = !!(conf.rss_hf & RTE_ETH_RSS_NONFRAG_IPV6_TCP);
	c->ports[1][1] = !!(conf.rss_hf & RTE_ETH_RSS_NONFRAG_IPV6_UDP);
	c->table_size = info.reta_size && info.reta_size <= RSS_TABLE_MAX ? info.reta_size
									  : RSS_TABLE_DEFAULT;
	memset(reta, 0, sizeof(reta));
	for (uint32_t g = 0; g * RTE_ETH_RETA_GROUP_SIZE < c->table_size; g++)
		reta[g].mask = ~0ull;
	if (info.reta_size && rte_eth_dev_rss_reta_query(id, reta, (uint16_t)c->table_size) == 0) {
		for (uint32_t i = 0; i < c->table_size; i++)
			c->table[i] = reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE];
	} else {
		for (uint32_t i = 0; i < c->table_size; i++)
			c->table[i] = i % d->nqueues;
	}
	return 0;
}

/* Worker lcores in EAL order: one per queue, the main lcore keeps the
 * signals, the control socket and the counters. */
static uint32_t worker_lcores(struct dp_ports *d)
{
	uint32_t n = 0;
	unsigned lc;

	RTE_LCORE_FOREACH_WORKER(lc) {
		if (n == DP_MAX_QUEUES)
			break;
		d->lcore[n++] = lc;
	}
	return n;
}

/* Find every port and settle the queue count: --queues, else the most
 * that every port and the worker lcores allow. */
static int find_ports(struct dp_ports *d, const struct dp_open_cfg *cfg, char *err,
		      size_t errlen)
{
	uint32_t lcores = worker_lcores(d), nq = lcores;

	if (!lcores) {
		snprintf(err, errlen, "DPDK: no worker lcore (each RX queue needs one besides the "
				      "main lcore: give EAL -l with at least two cores)");
		return -1;
	}
	for (uint32_t i = 0; i < cfg->nports; i++) {
		struct rte_eth_dev_info info;
		uint16_t id;
		int e;

		if (rte_eth_dev_get_port_by_name(cfg->names[i], &id)) {
			snprintf(err, errlen, "%s: no such DPDK port (EAL names its ports by PCI "
					      "address or --vdev name; see rampartd -- EAL arguments)",
				 cfg->names[i]);
			return -1;
		}
		e = rte_eth_dev_info_get(id, &info);
		if (e)
			return fail(err, errlen, "%s: cannot read device info: %s", cfg->names[i], e);
		d->port_id[i] = id;
		d->socket[i] = rte_eth_dev_socket_id(id);
		if (d->socket[i] < 0 || d->socket[i] >= DP_MAX_SOCKETS)
			d->socket[i] = 0;
		snprintf(d->driver[i], sizeof(d->driver[i]), "%s", info.driver_name);
		if (info.max_rx_queues < nq)
			nq = info.max_rx_queues;
		if (info.max_tx_queues < nq)
			nq = info.max_tx_queues;
	}
	if (cfg->queues > nq) {
		snprintf(err, errlen, "--queues %u: the ports and worker lcores allow %u (one "
				      "worker lcore per queue: EAL -l with N+1 cores)", cfg->queues, nq);
		return -1;
	}
	d->nqueues = cfg->queues ? cfg->queues : nq;
	d->nports = cfg->nports;
	return 0;
}

/* One pool per socket that has ports, sized for every descriptor of
 * its ports' queues, a burst in flight per worker and the lcore caches;
 * its mbufs hold a frame of the largest MTU asked for (and its QinQ
 * tags) in one piece, or DPDK's default 2 KB. */
static int make_pools(struct dp_ports *d, const struct dp_open_cfg *cfg, char *err,
		      size_t errlen)
{
	uint32_t need[DP_MAX_SOCKETS] = { 0 }, room = RTE_MBUF_DEFAULT_BUF_SIZE;

	for (uint32_t i = 0; i < d->nports; i++) {
		uint32_t want = RTE_PKTMBUF_HEADROOM + cfg->mtu[i] + RTE_ETHER_HDR_LEN + 8 +
				RTE_ETHER_CRC_LEN;

		if (cfg->mtu[i] > DP_MAX_MTU) {
			snprintf(err, errlen, "%s: mtu=%u: DPDK ports take up to %u", cfg->names[i],
				 cfg->mtu[i], DP_MAX_MTU);
			return -1;
		}
		if (cfg->mtu[i] && want > room)
			room = want;
	}
	d->frame_max = room - RTE_PKTMBUF_HEADROOM;

	for (uint32_t i = 0; i < d->nports; i++)
		need[d->socket[i]] += d->nqueues * (DP_RX_DESC + DP_TX_DESC + 2 * PIPE_BURST);
	for (int s = 0; s < DP_MAX_SOCKETS; s++) {
		char name[RTE_MEMPOOL_NAMESIZE];
		uint32_t n;

		if (!need[s])
			continue;
		n = need[s] + (d->nqueues + 1) * DP_POOL_CACHE;
		snprintf(name, sizeof(name), "rampart_mbuf_%d", s);
		d->pool[s] = rte_pktmbuf_pool_create(name, n, DP_POOL_CACHE, 0, (uint16_t)room, s);
		if (!d->pool[s]) {
			snprintf(err, errlen, "DPDK: cannot create %u mbufs of %u bytes on socket %d: %s "
					      "(hugepages reserved? see docs/dpdk.md)", n, room, s,
				 rte_strerror(rte_errno));
			return -1;
		}
	}
	return 0;
}

static int setup_port(struct dp_ports *d, uint32_t i, const struct dp_open_cfg *cfg,
		      char *err, size_t errlen)
{
	const char *name = cfg->names[i];
	uint16_t id = d->port_id[i], nrxd = DP_RX_DESC, ntxd = DP_TX_DESC;
	uint8_t key[DP_RSS_KEY_MAX];
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	int e;

	if (cfg->isolate) {
		struct rte_flow_error ferr;

		/* Before configure: the PMD then delivers only what rte_flow
		 * rules ask for, the kernel keeps the rest (mlx5). */
		if (rte_flow_isolate(id, 1, &ferr)) {
			snprintf(err, errlen, "%s: flow isolation refused: %s", name,
				 ferr.message ? ferr.message : "not supported by this PMD");
			return -1;
		}
		d->isolated[i] = 1;
	}
	e = rte_eth_dev_info_get(id, &info);
	if (e)
		return fail(err, errlen, "%s: cannot read device info: %s", name, e);
	memset(&conf, 0, sizeof(conf));
	if (d->nqueues > 1 && info.flow_type_rss_offloads) {
		size_t klen = info.hash_key_size ? info.hash_key_size : 40;

		if (klen > sizeof(key))
			klen = sizeof(key);
		dp_rss_key(key, klen);
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = key;
		conf.rx_adv_conf.rss_conf.rss_key_len = (uint8_t)klen;
		conf.rx_adv_conf.rss_conf.rss_hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP |
						    RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
		d->rss[i] = 1;
	}
	if (cfg->mtu[i]) {	/* --port-addr IF=...,mtu=N: the device's too */
		if (cfg->mtu[i] < info.min_mtu || cfg->mtu[i] > info.max_mtu) {
			snprintf(err, errlen, "%s: mtu=%u: the PMD takes %u to %u", name, cfg->mtu[i],
				 info.min_mtu, info.max_mtu);
			return -1;
		}
		conf.rxmode.mtu = cfg->mtu[i];
	}
	/* NICs that check IPv4 header checksums say so in each mbuf, and the
	 * parser then does not sum the header (pipeline.h rx_flags) */
	if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM) {
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
		d->rx_ipv4_csum[i] = 1;
	}
	e = rte_eth_dev_configure(id, (uint16_t)d->nqueues, (uint16_t)d->nqueues, &conf);
	if (e)
		return fail(err, errlen, "%s: cannot configure: %s", name, e);
	e = rte_eth_dev_adjust_nb_rx_tx_desc(id, &nrxd, &ntxd);
	if (e)
		return fail(err, errlen, "%s: descriptor counts: %s", name, e);
	for (uint32_t q = 0; q < d->nqueues; q++) {
		e = rte_eth_rx_queue_setup(id, (uint16_t)q, nrxd, (unsigned)d->socket[i], NULL,
					   d->pool[d->socket[i]]);
		if (e)
			return fail(err, errlen, "%s: RX queue set-up: %s", name, e);
		e = rte_eth_tx_queue_setup(id, (uint16_t)q, ntxd, (unsigned)d->socket[i], NULL);
		if (e)
			return fail(err, errlen, "%s: TX queue set-up: %s", name, e);
	}
	/* Bridge and router ports see frames for other MACs (PMDs without
	 * the notion, such as net_pcap, say ENOTSUP: harmless). */
	(void)rte_eth_promiscuous_enable(id);
	e = rte_eth_dev_start(id);
	if (e)
		return fail(err, errlen, "%s: cannot start: %s", name, e);
	d->started[i] = 1;
	if (d->isolated[i] &&
	    dp_flow_take(id, d->nqueues, cfg->routes, cfg->nroutes, err, errlen)) {
		fprintf(stderr, "rampartd: %s: %s\n", name, err);
		snprintf(err, errlen, "%s: cannot take transit traffic by rte_flow", name);
		return -1;
	}
	return 0;
}

int dp_open(struct dp_ports *d, const struct dp_open_cfg *cfg, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	if (rte_eal_init(cfg->eal_argc, cfg->eal_argv) < 0) {
		snprintf(err, errlen, "DPDK EAL: %s (check the EAL arguments after --)",
			 rte_strerror(rte_errno));
		return -1;
	}
	d->eal_up = 1;
	/* EAL logs to stdout by default: keep stdout for the counters. */
	rte_openlog_stream(stderr);
	if (find_ports(d, cfg, err, errlen) || make_pools(d, cfg, err, errlen))
		return -1;
	for (uint32_t i = 0; i < d->nports; i++)
		if (setup_port(d, i, cfg, err, errlen))
			return -1;
	return 0;
}

void dp_port_mac(const struct dp_ports *d, uint32_t port, uint8_t mac[6])
{
	struct rte_ether_addr a;

	if (rte_eth_macaddr_get(d->port_id[port], &a) == 0)
		memcpy(mac, a.addr_bytes, 6);
}

uint32_t dp_port_mtu(const struct dp_ports *d, uint32_t port)
{
	uint16_t mtu;

	return rte_eth_dev_get_mtu(d->port_id[port], &mtu) == 0 ? mtu : 0;
}

int dp_worker_cpu(const struct dp_ports *d, uint32_t k)
{
	rte_cpuset_t set = rte_lcore_cpuset(d->lcore[k]);
	int cpu = -1;

	/* EAL pins an lcore to one CPU unless --lcores gave it a set */
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			if (cpu >= 0)
				return -1;
			cpu = c;
		}
	return cpu;
}

int dp_launch(const struct dp_ports *d, uint32_t k, int (*fn)(void *), void *arg)
{
	return rte_eal_remote_launch(fn, arg, d->lcore[k]);
}

void dp_wait(const struct dp_ports *d, uint32_t k)
{
	(void)rte_eal_wait_lcore(d->lcore[k]);
}

void dp_close(struct dp_ports *d)
{
	if (!d->eal_up)
		return;
	for (uint32_t i = 0; i < d->nports; i++) {
		if (d->isolated[i])
			(void)rte_flow_flush(d->port_id[i], NULL);
		if (d->started[i])
			(void)rte_eth_dev_stop(d->port_id[i]);
		/* close flushes what PMDs buffer (net_pcap's output file) */
		(void)rte_eth_dev_close(d->port_id[i]);
	}
	for (int s = 0; s < DP_MAX_SOCKETS; s++)
		rte_mempool_free(d->pool[s]);
	(void)rte_eal_cleanup();
	d->eal_up = 0;
}
