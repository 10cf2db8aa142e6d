/* The DPDK backend sends frames another worker handed over (handles
 * with BACKEND_HANDLE_FOREIGN, data in a handoff ring): each is copied
 * into an mbuf of the port's pool, counted as copied, and its handle is
 * never freed as an mbuf; received mbufs still go out as themselves.
 * With the pool empty, the copy fails and the burst's rest is given
 * back. A received mbuf whose IPv4 header checksum the NIC found right
 * comes with PIPE_RX_IPV4_CSUM_GOOD, others without. On a net_ring port
 * (its TX ring is its RX ring), EAL without hugepages or PCI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "backend_dpdk.h"

static struct dp_ports ports;
static struct backend_dpdk bd;

static int setup(void **state)
{
	static const char *const names[] = { "net_ring0" };
	char *argv[] = { "test_dp_handoff", "-l", "0,1", "--no-huge", "-m", "128", "--no-pci",
			 "--no-shconf", "--no-telemetry", "--log-level=lib.eal:error",
			 "--vdev", "net_ring0", NULL };
	struct dp_open_cfg cfg = { .names = names, .nports = 1, .queues = 1,
				   .eal_argc = 12, .eal_argv = argv };
	char err[512];

	(void)state;
	if (dp_open(&ports, &cfg, err, sizeof(err))) {
		fprintf(stderr, "dp_open: %s\n", err);
		return -1;
	}
	backend_dpdk_init(&bd, &ports);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	dp_close(&ports);
	return 0;
}

static struct rte_mempool *pool(void)
{
	return ports.pool[ports.socket[0]];
}

static void foreign_frames_are_copied(void **state)
{
	struct backend *be = &bd.be;
	uint8_t ring_slot[2][128];
	struct pipe_pkt p[3], *pp[3] = { &p[0], &p[1], &p[2] }, in[8];
	uint64_t h[3], hin[8], now = 0;
	struct rte_mbuf *own = rte_pktmbuf_alloc(pool());
	unsigned avail = rte_mempool_avail_count(pool());
	uint32_t copied = 99, got;
	(void)state;

	assert_non_null(own);
	for (int i = 0; i < 2; i++) {
		memset(ring_slot[i], 0xa0 + i, sizeof(ring_slot[i]));
		p[i] = (struct pipe_pkt){ .data = ring_slot[i], .len = 60 + i, .room = 128 };
		h[i] = BACKEND_HANDLE_FOREIGN;
	}
	memset(rte_pktmbuf_mtod(own, uint8_t *), 0x55, 64);
	p[2] = (struct pipe_pkt){ .data = rte_pktmbuf_mtod(own, uint8_t *), .len = 64 };
	h[2] = (uint64_t)(uintptr_t)own;
	assert_int_equal(be->ops->tx_burst(be, 0, 0, pp, h, 3, &copied), 3);
	assert_int_equal(copied, 2);
	got = be->ops->rx_burst(be, 0, in, hin, 8, &now);
	assert_int_equal(got, 3);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(in[i].len, 60 + i);
		assert_memory_equal(in[i].data, ring_slot[i], 60 + i);
		assert_int_equal(in[i].homed, 0);
	}
	assert_ptr_equal((void *)(uintptr_t)hin[2], own);	/* itself, not a copy */
	be->ops->free(be, 0, 0, hin, got);
	be->ops->free(be, 0, 0, h, 2);	/* foreign: nothing to give back */
	assert_int_equal(rte_mempool_avail_count(pool()), avail + 1);	/* own went back too */
}

static void empty_pool_gives_the_rest_back(void **state)
{
	struct backend *be = &bd.be;
	uint8_t slot[64];
	struct rte_mbuf *held[8192], *own;
	struct pipe_pkt p[2], *pp[2] = { &p[0], &p[1] };
	uint64_t h[2];
	uint32_t copied = 99, nheld = 0;
	unsigned avail;
	(void)state;

	own = rte_pktmbuf_alloc(pool());
	assert_non_null(own);
	while (nheld < 8192 && (held[nheld] = rte_pktmbuf_alloc(pool())))
		nheld++;
	assert_true(nheld < 8192);	/* the pool ran dry */
	avail = rte_mempool_avail_count(pool());
	memset(slot, 1, sizeof(slot));
	p[0] = (struct pipe_pkt){ .data = slot, .len = 60, .room = 64 };
	h[0] = BACKEND_HANDLE_FOREIGN;
	p[1] = (struct pipe_pkt){ .data = rte_pktmbuf_mtod(own, uint8_t *), .len = 60 };
	h[1] = (uint64_t)(uintptr_t)own;
	assert_int_equal(be->ops->tx_burst(be, 0, 0, pp, h, 2, &copied), 0);
	assert_int_equal(copied, 0);
	/* own was given back, nothing else taken */
	assert_int_equal(rte_mempool_avail_count(pool()), avail + 1);
	for (uint32_t i = 0; i < nheld; i++)
		rte_pktmbuf_free(held[i]);
}

/* The offload flag of each mbuf, as the NIC would set it, becomes the
 * frame's rx_flags: only "good" vouches for the header. */
static void nic_checksum_flags_reach_the_pipeline(void **state)
{
	static const uint64_t ol[4] = {
		RTE_MBUF_F_RX_IP_CKSUM_GOOD, RTE_MBUF_F_RX_IP_CKSUM_BAD,
		RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN, RTE_MBUF_F_RX_IP_CKSUM_NONE,
	};
	struct backend *be = &bd.be;
	struct rte_mbuf *m[4];
	struct pipe_pkt in[8];
	uint64_t hin[8], now = 0;
	uint32_t got;
	(void)state;

	for (int i = 0; i < 4; i++) {
		m[i] = rte_pktmbuf_alloc(pool());
		assert_non_null(m[i]);
		memset(rte_pktmbuf_append(m[i], 60), 0x11, 60);
		m[i]->ol_flags = ol[i];
	}
	assert_int_equal(rte_eth_tx_burst(ports.port_id[0], 0, m, 4), 4);
	got = be->ops->rx_burst(be, 0, in, hin, 8, &now);
	assert_int_equal(got, 4);
	assert_int_equal(in[0].rx_flags, PIPE_RX_IPV4_CSUM_GOOD);
	for (int i = 1; i < 4; i++)
		assert_int_equal(in[i].rx_flags, 0);
	be->ops->free(be, 0, 0, hin, got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(foreign_frames_are_copied),
		cmocka_unit_test(empty_pool_gives_the_rest_back),
		cmocka_unit_test(nic_checksum_flags_reach_the_pipeline),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
