/* runtime/neigh.c: the router's next-hop table, deletion included (a
 * backward shift that must leave every other entry reachable). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "neigh.h"

#define KEYS 3000u	/* more than the table takes: full tables too */

struct model {
	uint8_t in[KEYS];
	uint8_t mac[KEYS][6];
};

static void key_of(uint32_t k, uint8_t *port, uint8_t *family, uint8_t addr[16])
{
	memset(addr, 0, 16);
	*port = (uint8_t)(k % 3);
	*family = k % 2 ? 6 : 4;
	addr[0] = 10;
	addr[2] = (uint8_t)(k >> 8);
	addr[3] = (uint8_t)k;
	if (*family == 6) {
		addr[0] = 0xfd;
		addr[15] = (uint8_t)k;
		addr[14] = (uint8_t)(k >> 8);
	}
}

static void check_all(const struct neigh_table *t, const struct model *m)
{
	uint32_t used = 0;

	for (uint32_t k = 0; k < KEYS; k++) {
		uint8_t port, family, addr[16];
		const uint8_t *mac;

		key_of(k, &port, &family, addr);
		mac = neigh_lookup(t, port, family, addr);
		if (m->in[k]) {
			assert_non_null(mac);
			assert_memory_equal(mac, m->mac[k], 6);
			used++;
		} else {
			assert_null(mac);
		}
	}
	assert_int_equal(t->used, used);
}

/* Random sets and deletions against a model: every entry stays found
 * after any deletion, deleted ones are gone, a full table refuses. */
static void test_against_model(void **state)
{
	static struct neigh_table t;
	static struct model m;
	uint32_t seed = 12345;
	(void)state;

	neigh_init(&t);
	memset(&m, 0, sizeof(m));
	for (uint32_t op = 0; op < 60000; op++) {
		uint8_t port, family, addr[16], mac[6] = {2, 0, 0, 0, 0, 0};
		uint32_t k;
		int r;

		seed = seed * 1103515245u + 12345u;
		k = (seed >> 8) % KEYS;
		key_of(k, &port, &family, addr);
		mac[4] = (uint8_t)(op >> 8);
		mac[5] = (uint8_t)op;
		/* grow to full for the first half, then mostly delete */
		if ((seed >> 4) % 8 < (op < 30000 ? 5u : 3u)) {
			r = neigh_set(&t, port, family, addr, mac);
			if (r == 0) {
				m.in[k] = 1;
				memcpy(m.mac[k], mac, 6);
			} else {
				assert_false(m.in[k]);	/* only a new entry is refused */
				assert_int_equal(t.used, NEIGH_SLOTS / 2);
			}
		} else {
			r = neigh_del(&t, port, family, addr);
			assert_int_equal(r, m.in[k] ? 0 : -1);
			m.in[k] = 0;
		}
		if (op % 997 == 0)
			check_all(&t, &m);
	}
	check_all(&t, &m);
	for (uint32_t k = 0; k < KEYS; k++) {	/* empty again */
		uint8_t port, family, addr[16];

		key_of(k, &port, &family, addr);
		assert_int_equal(neigh_del(&t, port, family, addr), m.in[k] ? 0 : -1);
	}
	assert_int_equal(t.used, 0);
	for (uint32_t i = 0; i < NEIGH_SLOTS; i++)
		assert_int_equal(t.slot[i].family, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
