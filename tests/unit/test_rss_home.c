/* The NIC's RSS hash as rampartd --home rss computes it (rss_home.h):
 * Toeplitz against Microsoft's published verification values, the byte
 * tables against the bit-by-bit definition, the symmetric key's two
 * directions, the indirection table, and the keys and tables refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rss_home.h"

/* The key of Microsoft's "Verifying the RSS Hash Calculation" */
static const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct vector4 {
	uint8_t dst[4], src[4];
	uint16_t dport, sport;
	uint32_t ip_only, with_ports;
};

static const struct vector4 v4[] = {
	{{161, 142, 100, 80}, {66, 9, 149, 187}, 1766, 2794, 0x323e8fc2, 0x51ccc178},
	{{65, 69, 140, 83}, {199, 92, 111, 2}, 4739, 14230, 0xd718262a, 0xc626b0ea},
	{{12, 22, 207, 184}, {24, 19, 198, 95}, 38024, 12898, 0xd2d0a5de, 0x5c2b394a},
	{{209, 142, 163, 6}, {38, 27, 205, 30}, 2217, 48228, 0x82989176, 0xafc7327f},
	{{202, 188, 127, 2}, {153, 39, 163, 191}, 1303, 44251, 0x5d1809c5, 0x10e828a2},
};

struct vector6 {
	uint8_t dst[16], src[16];
	uint16_t dport, sport;
	uint32_t ip_only, with_ports;
};

static const struct vector6 v6[] = {
	{{0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 1},
	 {0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 7},
	 1766, 2794, 0x2cc18cd5, 0x40207d3d},
	{{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
	 {0x3f, 0xfe, 0x05, 0x01, 0x00, 0x08, 0, 0, 0x02, 0x60, 0x97, 0xff, 0xfe, 0x40, 0xef, 0xab},
	 4739, 14230, 0x0f0c461c, 0xdde51bbf},
	{{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf},
	 {0x3f, 0xfe, 0x19, 0x00, 0x45, 0x45, 0x00, 0x03, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67,
	  0xcf},
	 38024, 44251, 0x4b61e985, 0x02d1feef},
};

static void test_microsoft_vectors(void **state)
{
	uint8_t in[RSS_INPUT_MAX];
	(void)state;

	for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		size_t n = rss_input(in, v4[i].src, v4[i].dst, 4, v4[i].sport, v4[i].dport);

		assert_int_equal(rss_toeplitz_ref(ms_key, sizeof(ms_key), in, 8), v4[i].ip_only);
		assert_int_equal(rss_toeplitz_ref(ms_key, sizeof(ms_key), in, n), v4[i].with_ports);
	}
	for (size_t i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		size_t n = rss_input(in, v6[i].src, v6[i].dst, 16, v6[i].sport, v6[i].dport);

		assert_int_equal(rss_toeplitz_ref(ms_key, sizeof(ms_key), in, 32), v6[i].ip_only);
		assert_int_equal(rss_toeplitz_ref(ms_key, sizeof(ms_key), in, n), v6[i].with_ports);
	}
}

/* The byte tables are built from a symmetric key only (rss_home_init
 * refuses Microsoft's); rss_hash against the definition on random input
 * of every length, with two symmetric keys. */
static void test_tables_match_definition(void **state)
{
	static struct rss_home r;
	uint8_t key[52], in[RSS_INPUT_MAX];
	char err[200];
	uint32_t x = 2024;
	(void)state;

	for (int k = 0; k < 2; k++) {
		size_t len = k ? 52 : 40;

		if (k) {	/* another 16-bit pattern, a 52-byte key (Intel's length) */
			for (size_t i = 0; i < len; i++)
				key[i] = i % 2 ? 0x3c : 0xa1;
		} else {
			rss_key_symmetric(key, len);
		}
		assert_int_equal(rss_home_init(&r, key, len, NULL, 128, 4, err, sizeof(err)), 0);
		for (int t = 0; t < 20000; t++) {
			uint32_t n = 1 + (uint32_t)t % RSS_INPUT_MAX;

			for (uint32_t i = 0; i < n; i++) {
				x = x * 1103515245u + 12345u;
				in[i] = (uint8_t)(x >> 16);
			}
			assert_int_equal(rss_hash(&r, in, n), rss_toeplitz_ref(key, len, in, n));
		}
	}
}

/* A symmetric key sends both directions to one worker, through the
 * default table (entry i = i mod workers) and a table of one's own. */
static void test_both_directions_one_worker(void **state)
{
	static struct rss_home r;
	uint8_t key[40], a[16], b[16];
	uint32_t table[256];
	uint32_t x = 7, seen[4] = {0};
	char err[200];
	(void)state;

	rss_key_symmetric(key, sizeof(key));
	for (int t = 0; t < 2; t++) {
		for (int i = 0; i < 256; i++)
			table[i] = (uint32_t)((i * 7 + 3) % 4);
		assert_int_equal(rss_home_init(&r, key, sizeof(key), t ? table : NULL,
					       t ? 256 : 128, 4, err, sizeof(err)), 0);
		for (int i = 0; i < 40000; i++) {
			uint8_t family = i % 2 ? 6 : 4, proto = i % 3 ? 6 : 17;
			uint32_t w1 = 0, w2 = 0, n = 0;
			uint16_t sp, dp;

			memset(a, 0, sizeof(a));
			memset(b, 0, sizeof(b));
			for (int j = 0; j < (family == 6 ? 16 : 4); j++) {
				x = x * 1103515245u + 12345u;
				a[j] = (uint8_t)(x >> 16);
				b[j] = (uint8_t)(x >> 24);
			}
			x = x * 1103515245u + 12345u;
			sp = (uint16_t)(x >> 8);
			dp = (uint16_t)(x >> 15);
			assert_true(rss_home_worker(&r, a, b, sp, dp, proto, family, &w1));
			assert_true(rss_home_worker(&r, b, a, dp, sp, proto, family, &w2));
			assert_int_equal(w1, w2);
			assert_true(w1 < 4);
			seen[w1]++;
			if (family == 4) {	/* the frame's 12 bytes in a row */
				uint8_t in[12];

				rss_input(in, a, b, 4, sp, dp);
				assert_true(rss_home_worker4(&r, in, proto, &n));
				assert_int_equal(n, w1);
			}
		}
	}
	for (int k = 0; k < 4; k++)
		assert_true(seen[k] > 80000 / 4 / 2);	/* spread over all four */
}

/* What the NIC does not hash by ports is not homed by it: other
 * protocols, and UDP when the NIC says so. */
static void test_only_hashed_ports(void **state)
{
	static struct rss_home r;
	uint8_t key[40], a[16] = {10, 1}, b[16] = {10, 2}, in[12];
	uint32_t w;
	char err[200];
	(void)state;

	rss_key_symmetric(key, sizeof(key));
	assert_int_equal(rss_home_init(&r, key, sizeof(key), NULL, 128, 2, err, sizeof(err)), 0);
	assert_false(rss_home_worker(&r, a, b, 1, 2, 1, 4, &w));	/* ICMP */
	assert_false(rss_home_worker(&r, a, b, 1, 2, 132, 4, &w));	/* SCTP */
	assert_false(rss_home_worker(&r, a, b, 1, 2, 58, 6, &w));	/* ICMPv6 */
	assert_true(rss_home_worker(&r, a, b, 1, 2, 17, 4, &w));
	rss_home_ports(&r, 4, 1, 0);
	assert_false(rss_home_worker(&r, a, b, 1, 2, 17, 4, &w));
	rss_input(in, a, b, 4, 1, 2);
	assert_false(rss_home_worker4(&r, in, 17, &w));
	assert_true(rss_home_worker4(&r, in, 6, &w));
	assert_true(rss_home_worker(&r, a, b, 1, 2, 17, 6, &w));	/* UDP over IPv6 still */
}

static void test_refused(void **state)
{
	static struct rss_home r;
	uint8_t key[40];
	uint32_t table[128] = {0};
	char err[200];
	(void)state;

	/* Microsoft's key: the two directions hash apart */
	assert_int_equal(rss_home_init(&r, ms_key, sizeof(ms_key), NULL, 128, 2, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "not symmetric"));
	rss_key_symmetric(key, sizeof(key));
	assert_int_equal(rss_home_init(&r, key, 16, NULL, 128, 2, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "16 bytes"));
	table[77] = 300;	/* a queue no worker reads (more than a byte holds) */
	assert_int_equal(rss_home_init(&r, key, sizeof(key), table, 128, 2, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "entry 77"));
	assert_int_equal(rss_home_init(&r, key, sizeof(key), NULL, RSS_TABLE_MAX + 1, 2, err,
				       sizeof(err)), -1);
	/* a table of 3 entries (no power of two): modulo */
	table[77] = 0;
	table[0] = 1;
	table[1] = 0;
	table[2] = 1;
	assert_int_equal(rss_home_init(&r, key, sizeof(key), table, 3, 2, err, sizeof(err)), 0);
	assert_int_equal(r.table_mask, 0);
	for (int i = 0; i < 1000; i++) {
		uint8_t a[16] = {10, 0, 0, (uint8_t)i}, b[16] = {10, 9, (uint8_t)(i >> 3), 1}, in[12];
		uint32_t w;

		rss_input(in, a, b, 4, (uint16_t)i, 80);
		assert_true(rss_home_worker(&r, a, b, (uint16_t)i, 80, 6, 4, &w));
		assert_int_equal(w, table[rss_toeplitz_ref(key, 40, in, 12) % 3]);
	}
}

static void test_key_text(void **state)
{
	uint8_t key[RSS_KEY_MAX];
	char text[3 * RSS_KEY_MAX];
	size_t len;
	(void)state;

	assert_int_equal(rss_key_parse("symmetric", key, sizeof(key), &len), 0);
	assert_int_equal(len, 40);
	rss_key_format(key, len, text, sizeof(text));
	assert_int_equal(strlen(text), 40 * 3 - 1);
	assert_memory_equal(text, "6d:5a:6d:5a", 11);
	assert_int_equal(rss_key_parse("6D5a:56da", key, sizeof(key), &len), 0);
	assert_int_equal(len, 4);
	assert_int_equal(key[2], 0x56);
	assert_int_equal(rss_key_parse("6d:5", key, sizeof(key), &len), -1);
	assert_int_equal(rss_key_parse("6d::5a", key, sizeof(key), &len), -1);
	assert_int_equal(rss_key_parse("xy", key, sizeof(key), &len), -1);
	assert_int_equal(rss_key_parse("", key, sizeof(key), &len), -1);
	assert_int_equal(rss_key_parse("6d5a6d", key, 2, &len), -1);	/* too long */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_microsoft_vectors),
		cmocka_unit_test(test_tables_match_definition),
		cmocka_unit_test(test_both_directions_one_worker),
		cmocka_unit_test(test_only_hashed_ports),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_key_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
