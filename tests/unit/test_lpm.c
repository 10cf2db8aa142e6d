/* LPM trie against a naive longest-prefix scan: random IPv4 and IPv6
 * prefix sets of mixed lengths (incl. /0, /32, /128, nested prefixes),
 * random and prefix-derived addresses; plus the edge cases by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lpm.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct pfx {
	uint8_t a[16];
	unsigned len;
	uint32_t value;
};

static int in_prefix(const uint8_t *addr, const struct pfx *p)
{
	for (unsigned bit = 0; bit < p->len; bit++) {
		unsigned m = 0x80u >> (bit % 8);

		if ((addr[bit / 8] & m) != (p->a[bit / 8] & m))
			return 0;
	}
	return 1;
}

/* Longest wins; among equal prefixes the one added last. */
static uint32_t naive(const struct pfx *p, unsigned n, const uint8_t *addr)
{
	int best_len = -1;
	uint32_t v = 0;

	for (unsigned i = 0; i < n; i++)
		if (in_prefix(addr, &p[i]) && (int)p[i].len >= best_len) {
			best_len = (int)p[i].len;
			v = p[i].value;
		}
	return v;
}

static void random_set(unsigned bytes, unsigned n, unsigned queries)
{
	struct pfx *p = calloc(n, sizeof(*p));
	struct lpm_builder b;
	struct lpm t;
	unsigned bits = 8 * bytes;

	assert_int_equal(lpm_builder_init(&b, bytes), 0);
	for (unsigned i = 0; i < n; i++) {
		/* Half nested under an earlier prefix, so overlaps are common. */
		if (i && rnd() % 2) {
			const struct pfx *up = &p[rnd() % i];

			p[i] = *up;
			for (unsigned bit = up->len; bit < bits; bit++)
				if (rnd() & 1)
					p[i].a[bit / 8] |= (uint8_t)(0x80u >> (bit % 8));
			p[i].len = up->len + (unsigned)(rnd() % (bits - up->len + 1));
		} else {
			for (unsigned k = 0; k < bytes; k++)
				p[i].a[k] = (uint8_t)rnd();
			p[i].len = (unsigned)(rnd() % (bits + 1));
		}
		for (unsigned bit = p[i].len; bit < bits; bit++)
			p[i].a[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
		p[i].value = 1 + (uint32_t)(rnd() % 1000000);
		assert_int_equal(lpm_add(&b, p[i].a, p[i].len, p[i].value), 0);
	}
	assert_int_equal(lpm_build(&b, &t), 0);
	print_message("lpm %u-byte: %u prefixes, %u groups, %zu bytes\n", bytes, n,
		      t.group_count, lpm_bytes(&t));
	for (unsigned q = 0; q < queries; q++) {
		uint8_t addr[16];

		for (unsigned k = 0; k < 16; k++)
			addr[k] = (uint8_t)rnd();
		if (rnd() % 4) {	/* mostly inside some prefix */
			const struct pfx *x = &p[rnd() % n];

			for (unsigned bit = 0; bit < x->len; bit++) {
				unsigned m = 0x80u >> (bit % 8);

				addr[bit / 8] = (uint8_t)((addr[bit / 8] & ~m) | (x->a[bit / 8] & m));
			}
		}
		assert_int_equal(lpm_lookup(&t, addr), naive(p, n, addr));
	}
	lpm_builder_free(&b);
	free(p);
}

static void test_ipv4_random(void **s) { (void)s; random_set(4, 3000, 100000); }
static void test_ipv6_random(void **s) { (void)s; random_set(16, 1500, 50000); }

static void test_edges(void **s)
{
	struct lpm_builder b;
	struct lpm t;
	(void)s;

	assert_int_equal(lpm_builder_init(&b, 4), 0);
	assert_int_equal(lpm_add(&b, (uint8_t[]){10, 1, 2, 3}, 32, 7), 0);
	assert_int_equal(lpm_add(&b, (uint8_t[]){0, 0, 0, 0}, 0, 1), 0);
	assert_int_equal(lpm_add(&b, (uint8_t[]){10, 1, 0, 0}, 16, 2), 0);
	assert_int_equal(lpm_add(&b, (uint8_t[]){10, 1, 2, 0}, 24, 3), 0);
	assert_int_equal(lpm_add(&b, (uint8_t[]){10, 1, 2, 0}, 24, 4), 0);	/* later wins */
	assert_int_equal(lpm_add(&b, (uint8_t[]){10, 1, 255, 9}, 17, 5), 0);	/* host bits */
	assert_int_equal(lpm_add(&b, (uint8_t[]){10, 0, 0, 0}, 33, 1), -1);
	assert_int_equal(lpm_add(&b, (uint8_t[]){10, 0, 0, 0}, 8, 0), -1);
	assert_int_equal(lpm_build(&b, &t), 0);
	assert_int_equal(lpm_lookup(&t, (uint8_t[]){10, 1, 2, 3}), 7);
	assert_int_equal(lpm_lookup(&t, (uint8_t[]){10, 1, 2, 4}), 4);
	assert_int_equal(lpm_lookup(&t, (uint8_t[]){10, 1, 3, 4}), 2);
	assert_int_equal(lpm_lookup(&t, (uint8_t[]){10, 1, 128, 1}), 5);
	assert_int_equal(lpm_lookup(&t, (uint8_t[]){192, 168, 0, 1}), 1);
	lpm_builder_free(&b);

	assert_int_equal(lpm_builder_init(&b, 4), 0);	/* empty: no match */
	assert_int_equal(lpm_build(&b, &t), 0);
	assert_int_equal(lpm_lookup(&t, (uint8_t[]){1, 2, 3, 4}), 0);
	lpm_builder_free(&b);
	assert_int_equal(lpm_builder_init(&b, 5), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_ipv4_random),
		cmocka_unit_test(test_ipv6_random),
	};
	return cmocka_run_group_tests_name("lpm", tests, NULL, NULL);
}
