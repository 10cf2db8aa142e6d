/* Router mode on AF_XDP: what the kernel's neighbour dumps tell the
 * workers (daemon/netlink.c), without a kernel: entries as a dump gives
 * them, the workers' command rings applied to tables like theirs. The
 * workers' tables hold 2,048 next hops: what the kernel failed to
 * resolve is forgotten, what it dropped is asked for again, so a stream
 * of new neighbours cannot fill them for good; --neighbor entries stay. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "neigh.h"
#include "netlink.h"
#include "worker.h"

#define WORKERS 2

static struct worker *workers[WORKERS];
static struct neigh_table *table[WORKERS];	/* as the workers' pipelines */
static struct nl_neigh_sync nl;
static const uint8_t mac_a[6] = {2, 0, 0, 0, 0, 0xa}, mac_b[6] = {2, 0, 0, 0, 0, 0xb};

static int ask_answer;	/* the fake kernel's answer to a resolution: 0 or -1 */
static uint32_t asked;

static int fake_ask(struct nl_neigh_sync *s, const struct pipe_nexthop *hop)
{
	(void)s, (void)hop;
	asked++;
	return ask_answer;
}

static int setup(void **state)
{
	char err[128];
	int ifindex[2] = {0, 0};
	(void)state;

	for (int k = 0; k < WORKERS; k++) {
		workers[k] = calloc(1, sizeof(*workers[k]));
		table[k] = calloc(1, sizeof(*table[k]));
		if (!workers[k] || !table[k])
			return -1;
		neigh_init(table[k]);
	}
	ask_answer = 0;
	asked = 0;
	/* its rtnetlink socket is made, not used */
	return nl_neigh_open(&nl, ifindex, 2, workers, WORKERS, err, sizeof(err));
}

static int teardown(void **state)
{
	(void)state;
	nl_neigh_close(&nl);
	for (int k = 0; k < WORKERS; k++) {
		free(workers[k]);
		free(table[k]);
	}
	return 0;
}

static const uint8_t *host(uint32_t h)
{
	static uint8_t a[16];

	memset(a, 0, sizeof(a));
	a[0] = 10;
	a[1] = 7;
	a[2] = (uint8_t)(h >> 8);
	a[3] = (uint8_t)h;
	return a;
}

struct applied {
	uint32_t sets, forgets, refused;	/* refused: a SET the full table did not take */
};

/* Worker k's waiting commands, applied to its table as worker.c does. */
static struct applied apply(int k)
{
	struct worker *w = workers[k];
	unsigned head = atomic_load(&w->neigh_head), tail = atomic_load(&w->neigh_tail);
	struct applied n = {0};

	for (; tail != head; tail++) {
		const struct worker_neigh_cmd *c = &w->neigh[tail & (WORKER_NEIGH_RING - 1)];

		if (c->op == WORKER_NEIGH_SET) {
			n.sets++;
			n.refused += !!neigh_set(table[k], c->port, c->family, c->addr, c->mac);
		} else if (c->op == WORKER_NEIGH_FORGET) {
			n.forgets++;
			(void)neigh_del(table[k], c->port, c->family, c->addr);
		}
	}
	atomic_store(&w->neigh_tail, tail);
	return n;
}

static void resolved(uint32_t from, uint32_t to)
{
	for (uint32_t h = from; h < to; h++)
		nl_neigh_seen(&nl, 0, 4, host(h), mac_a);
}

static void unresolved(uint32_t from, uint32_t to, int failed)
{
	for (uint32_t h = from; h < to; h++)
		nl_neigh_unresolved(&nl, 0, 4, host(h), failed);
}

/* The end of a dump: the sweep, then every worker's commands applied;
 * worker 0's counts (every worker gets the same). */
static struct applied sweep(void)
{
	struct applied first = {0};

	nl_neigh_sweep(&nl, fake_ask);
	for (int k = 0; k < WORKERS; k++) {
		struct applied n = apply(k);

		if (!k)
			first = n;
		assert_memory_equal(&n, &first, sizeof(n));
	}
	return first;
}

static void test_failed_forgotten(void **state)
{
	struct applied n;
	(void)state;

	nl_neigh_dump_begin(&nl);
	resolved(1, 4);
	n = sweep();
	assert_int_equal(n.sets, 3);
	assert_int_equal(n.forgets, 0);
	/* host 2 FAILED: forgotten everywhere */
	nl_neigh_dump_begin(&nl);
	resolved(1, 2);
	unresolved(2, 3, 1);
	resolved(3, 4);
	n = sweep();
	assert_int_equal(n.sets, 0);
	assert_int_equal(n.forgets, 1);
	assert_null(neigh_lookup(table[0], 0, 4, host(2)));
	assert_non_null(neigh_lookup(table[1], 0, 4, host(3)));
	/* resolved again: told again (it was forgotten on our side too) */
	nl_neigh_dump_begin(&nl);
	resolved(1, 4);
	n = sweep();
	assert_int_equal(n.sets, 1);
	assert_int_equal(asked, 0);
}

static void test_dropped_asked_again(void **state)
{
	struct applied n;
	(void)state;

	nl_neigh_dump_begin(&nl);
	resolved(1, 3);
	sweep();
	/* the kernel's garbage collection dropped host 2: asked, kept */
	nl_neigh_dump_begin(&nl);
	resolved(1, 2);
	n = sweep();
	assert_int_equal(asked, 1);
	assert_int_equal(n.forgets, 0);
	assert_non_null(neigh_lookup(table[0], 0, 4, host(2)));
	/* being resolved (INCOMPLETE): waits, not asked again */
	nl_neigh_dump_begin(&nl);
	resolved(1, 2);
	unresolved(2, 3, 0);
	n = sweep();
	assert_int_equal(asked, 1);
	assert_int_equal(n.forgets, 0);
	/* the kernel's answer: it failed */
	nl_neigh_dump_begin(&nl);
	resolved(1, 2);
	unresolved(2, 3, 1);
	n = sweep();
	assert_int_equal(n.forgets, 1);
	/* a request the kernel refuses: forgotten at once */
	nl_neigh_dump_begin(&nl);
	resolved(1, 2);
	resolved(5, 6);
	sweep();
	ask_answer = -1;
	nl_neigh_dump_begin(&nl);
	resolved(1, 2);
	n = sweep();
	assert_int_equal(asked, 2);
	assert_int_equal(n.forgets, 1);
	assert_null(neigh_lookup(table[0], 0, 4, host(5)));
}

/* Neighbours that come and go, 500 a dump (a worker's ring takes 1,024
 * commands between two), 2,048 at most in a worker's table: every new
 * one is taken, dump after dump. */
static void test_stream_of_neighbours(void **state)
{
	(void)state;

	for (uint32_t round = 0; round < 12; round++) {
		uint32_t from = 1 + round * 500;
		struct applied n;

		nl_neigh_dump_begin(&nl);
		if (round)
			unresolved(from - 500, from, 1);	/* the last round's, gone */
		resolved(from, from + 500);
		n = sweep();
		assert_int_equal(n.sets, 500);
		assert_int_equal(n.refused, 0);
		assert_int_equal(n.forgets, round ? 500 : 0);
	}
}

static void test_pinned_stays(void **state)
{
	struct applied n;
	(void)state;

	assert_int_equal(nl_neigh_pin(&nl, 0, 4, host(9), mac_b), 0);
	/* the kernel has another MAC for it (an ARP spoofer's): not posted */
	nl_neigh_dump_begin(&nl);
	resolved(9, 10);
	n = sweep();
	assert_int_equal(n.sets, 0);
	/* and never forgotten (the workers had it from their start) */
	nl_neigh_dump_begin(&nl);
	unresolved(9, 10, 1);
	n = sweep();
	assert_int_equal(n.forgets, 0);
	assert_int_equal(asked, 0);
}

/* A dump that could not all be marked forgets nothing. */
static void test_partial_mark_forgets_nothing(void **state)
{
	struct applied n;
	(void)state;

	nl_neigh_dump_begin(&nl);
	resolved(1, 1001);
	sweep();
	nl_neigh_dump_begin(&nl);
	unresolved(1, 1001, 1);
	unresolved(3000, 4100, 0);	/* 2,100 unresolved: more than the mark holds */
	n = sweep();
	assert_int_equal(n.forgets, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_failed_forgotten, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropped_asked_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_of_neighbours, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pinned_stays, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_mark_forgets_nothing, setup, teardown),
	};
	return cmocka_run_group_tests_name("netlink_sweep", tests, NULL, NULL);
}
