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
#include "planted_neigh.h"

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

/* The slots a lookup starting in the longest run of taken slots walks
 * (linear probing: it stops at the first free one). */
static uint32_t longest_run(const struct neigh_table *t)
{
	uint32_t most = 0, run = 0;

	for (uint32_t i = 0; i < 2 * NEIGH_SLOTS; i++) {	/* twice round: runs wrap */
		run = t->slot[i & (NEIGH_SLOTS - 1)].family ? run + 1 : 0;
		if (run > most)
			most = run;
	}
	return most;
}

/* Next hops made up to share a slot of the hash as it would be without
 * a key (an on-link host's ARP requests, learnt) do not share one: a
 * worker's lookup of its real next hops stays a walk of a few slots,
 * not of every entry (2,048 in one run before). */
static void test_planted_collisions(void **state)
{
	static struct neigh_table t;
	static uint8_t addr[NEIGH_SLOTS / 2][4];
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 1};
	uint32_t n = planted_neighbours(0, NEIGH_SLOTS / 2, addr);
	(void)state;

	assert_int_equal(n, NEIGH_SLOTS / 2);
	neigh_init(&t);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(neigh_set(&t, 0, 4, addr[i], mac), 0);
	print_message("longest run of taken slots: %u\n", longest_run(&t));
	assert_true(longest_run(&t) < 256);
	for (uint32_t i = 0; i < n; i++)
		assert_non_null(neigh_lookup(&t, 0, 4, addr[i]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_model),
		cmocka_unit_test(test_planted_collisions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
