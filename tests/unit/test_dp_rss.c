/* The DPDK backend's RSS key is symmetric: Toeplitz over a flow's tuple
 * and over its reply's (addresses and ports swapped) give the same hash,
 * so a NIC sends both directions to the same queue and worker. Checked
 * with DPDK's software Toeplitz (rte_softrss), no EAL or NIC needed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include <rte_thash.h>

#include "dp_port.h"

#define FLOWS 2000

static uint32_t rnd32(void)
{
	return ((uint32_t)rand() << 16) ^ (uint32_t)rand();
}

/* words: src address words, dst address words, then (sport << 16 | dport) */
static uint32_t hash(const uint8_t *key, const uint32_t *src, const uint32_t *dst,
		     uint32_t aw, uint16_t sport, uint16_t dport)
{
	uint32_t t[9];

	for (uint32_t i = 0; i < aw; i++) {
		t[i] = src[i];
		t[aw + i] = dst[i];
	}
	t[2 * aw] = (uint32_t)sport << 16 | dport;
	return rte_softrss(t, 2 * aw + 1, key);
}

static void check_symmetric(size_t klen, uint32_t aw)
{
	uint8_t key[52];

	dp_rss_key(key, klen);
	srand(7);
	for (int f = 0; f < FLOWS; f++) {
		uint32_t a[4], b[4];
		uint16_t pa = (uint16_t)rand(), pb = (uint16_t)rand();

		for (uint32_t i = 0; i < aw; i++) {
			a[i] = rnd32();
			b[i] = rnd32();
		}
		assert_int_equal(hash(key, a, b, aw, pa, pb), hash(key, b, a, aw, pb, pa));
	}
}

static void ipv4_40(void **state)
{
	(void)state;
	check_symmetric(40, 1);
}

static void ipv6_40(void **state)
{
	(void)state;
	check_symmetric(40, 4);
}

static void ipv4_52(void **state)
{
	(void)state;
	check_symmetric(52, 1);
}

/* The key is not degenerate: flows still spread over queues. */
static void spreads(void **state)
{
	uint8_t key[40];
	uint32_t seen = 0;

	(void)state;
	dp_rss_key(key, sizeof(key));
	srand(11);
	for (int f = 0; f < 256; f++) {
		uint32_t a = rnd32(), b = rnd32();

		seen |= 1u << (hash(key, &a, &b, 1, (uint16_t)rand(), 80) % 8);
	}
	assert_int_equal(seen, 0xffu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ipv4_40),
		cmocka_unit_test(ipv6_40),
		cmocka_unit_test(ipv4_52),
		cmocka_unit_test(spreads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
