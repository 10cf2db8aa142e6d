/* daemon/neigh_cache.c: the DPDK router's own neighbour cache, with
 * made-up times: what it tells the workers when an entry is learnt,
 * moves, is confirmed, goes unanswered and is forgotten. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "neigh_cache.h"
#include "planted_neigh.h"

static const struct nc_config cfg = {.reachable_ms = 30000, .probe_ms = 1000, .probes = 3};
static const uint8_t mac_a[6] = {2, 0xcc, 0, 0, 0, 0xa};
static const uint8_t mac_b[6] = {2, 0xcc, 0, 0, 0, 0xb};
static const uint8_t zero_mac[6];

static struct np_learned told(uint8_t family, uint8_t last, const uint8_t *mac, uint8_t how)
{
	struct np_learned l = {.family = family, .how = how};

	if (family == 4)
		memcpy(l.addr, (uint8_t[]){10, 60, 2, last}, 4);
	else
		memcpy(l.addr, (uint8_t[]){0xfd, 0, 0, 0x60, 0, 2, [15] = last}, 16);
	memcpy(l.mac, mac, 6);
	return l;
}

/* One tick expected to give exactly one thing to do. */
static void expect_one(struct neigh_cache *c, uint64_t now, uint8_t op, const struct np_learned *l,
		       const uint8_t *mac)
{
	struct nc_action t[8];

	assert_int_equal(nc_tick(c, now, t, 8), 1);
	assert_int_equal(t[0].op, op);
	assert_int_equal(t[0].port, 1);
	assert_int_equal(t[0].family, l->family);
	assert_memory_equal(t[0].addr, l->addr, l->family == 4 ? 4 : 16);
	assert_memory_equal(t[0].mac, mac, 6);
}

static void expect_none(struct neigh_cache *c, uint64_t now)
{
	struct nc_action t[8];

	assert_int_equal(nc_tick(c, now, t, 8), 0);
}

/* Learnt: asked for and answered (a solicited NA); confirmed by
 * answers; unconfirmed for reachable_ms: probed three times a second
 * apart at its MAC, then forgotten. */
static void test_ages_out(void **state)
{
	static struct neigh_cache c;
	struct np_learned l = told(6, 2, mac_a, NP_ANSWER);
	(void)state;

	nc_init(&c, &cfg);
	nc_asked(&c, 1, 6, l.addr, 900);
	nc_learn(&c, 1, &l, 1000);
	expect_one(&c, 1000, NC_POST, &l, mac_a);
	expect_none(&c, 1100);
	nc_learn(&c, 1, &l, 20000);			/* confirmed: nothing to say */
	expect_none(&c, 20000);
	expect_none(&c, 49999);
	expect_one(&c, 50000, NC_PROBE, &l, mac_a);
	expect_none(&c, 50999);
	expect_one(&c, 51000, NC_PROBE, &l, mac_a);
	expect_one(&c, 52000, NC_PROBE, &l, mac_a);
	expect_none(&c, 52500);
	expect_one(&c, 53000, NC_FORGET, &l, mac_a);
	assert_int_equal(c.n, 0);
	expect_none(&c, 90000);
	assert_int_equal(c.st.learnt, 1);
	assert_int_equal(c.st.probes, 3);
	assert_int_equal(c.st.forgotten, 1);
	/* a hop asked for again and answered: a new entry */
	nc_asked(&c, 1, 6, l.addr, 94000);
	nc_learn(&c, 1, &l, 95000);
	expect_one(&c, 95000, NC_POST, &l, mac_a);
}

/* An answer to a probe makes it reachable again (told again: a refresh);
 * an answer from another MAC moves it. */
static void test_probe_answered(void **state)
{
	static struct neigh_cache c;
	struct np_learned l = told(6, 2, mac_a, NP_ANSWER), moved = told(6, 2, mac_b, NP_ANSWER);
	(void)state;

	nc_init(&c, &cfg);
	nc_asked(&c, 1, 6, l.addr, 0);
	nc_learn(&c, 1, &l, 0);
	expect_one(&c, 0, NC_POST, &l, mac_a);
	expect_one(&c, 30000, NC_PROBE, &l, mac_a);
	nc_learn(&c, 1, &l, 30200);
	expect_one(&c, 30300, NC_POST, &l, mac_a);
	expect_none(&c, 60199);
	expect_one(&c, 60200, NC_PROBE, &l, mac_a);
	nc_learn(&c, 1, &moved, 60300);
	expect_one(&c, 60400, NC_POST, &moved, mac_b);
	assert_int_equal(c.st.moved, 1);
	expect_none(&c, 61200);				/* no more probes */
	expect_one(&c, 90300, NC_PROBE, &moved, mac_b);
}

/* A probe's answer without the MAC (np_receive's NP_CONFIRM: Linux's
 * answer to a unicast NS) keeps the entry, at its MAC, past reachable +
 * the probes' time, and is asked again only reachable_ms later; it never
 * makes an entry. */
static void test_probe_confirmed_without_mac(void **state)
{
	static struct neigh_cache c;
	struct np_learned l = told(6, 2, mac_a, NP_LEARN), yes = told(6, 2, zero_mac, NP_CONFIRM);
	struct np_learned stranger = told(6, 9, zero_mac, NP_CONFIRM);
	(void)state;

	nc_init(&c, &cfg);
	nc_learn(&c, 1, &l, 0);
	expect_one(&c, 0, NC_POST, &l, mac_a);
	expect_one(&c, 5000, NC_PROBE, &l, mac_a);	/* a request: STALE, probed */
	nc_learn(&c, 1, &yes, 5000);
	expect_one(&c, 5000, NC_POST, &l, mac_a);
	for (uint64_t at = 35000; at < 300000; at += 30200) {
		expect_one(&c, at, NC_PROBE, &l, mac_a);
		nc_learn(&c, 1, &yes, at + 200);
		expect_one(&c, at + 200, NC_POST, &l, mac_a);	/* a refresh, same MAC */
		expect_none(&c, at + 30199);
	}
	assert_int_equal(c.n, 1);
	assert_memory_equal(c.e[0].mac, mac_a, 6);
	assert_int_equal(c.st.forgotten, 0);
	assert_int_equal(c.st.moved, 0);
	nc_learn(&c, 1, &stranger, 300000);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.st.learnt, 1);
}

/* An answer to us (ARP reply, solicited NA) makes an entry only for an
 * address a worker asked for lately on that port (nc_asked, within
 * probes x probe_ms); a request for our address makes one anyway;
 * an answer about an entry known moves it as before. */
static void test_answers_only_to_asks(void **state)
{
	static struct neigh_cache c;
	struct np_learned a = told(4, 2, mac_a, NP_ANSWER), b = told(6, 3, mac_a, NP_ANSWER);
	struct np_learned d = told(4, 4, mac_a, NP_ANSWER), req = told(4, 5, mac_a, NP_LEARN);
	struct np_learned moved = told(4, 2, mac_b, NP_ANSWER);
	(void)state;

	nc_init(&c, &cfg);
	nc_learn(&c, 1, &a, 0);				/* nobody asked */
	expect_none(&c, 0);
	assert_int_equal(c.n, 0);
	assert_int_equal(c.st.unasked, 1);
	nc_asked(&c, 1, 4, a.addr, 1000);
	nc_learn(&c, 1, &a, 1500);
	expect_one(&c, 1500, NC_POST, &a, mac_a);
	nc_asked(&c, 1, 4, a.addr, 1550);
	nc_learn(&c, 1, &moved, 1600);			/* known, asked: moved */
	expect_one(&c, 1600, NC_POST, &moved, mac_b);
	nc_asked(&c, 1, 6, b.addr, 2000);
	nc_learn(&c, 1, &b, 5001);			/* too late */
	nc_asked(&c, 2, 4, d.addr, 2000);
	nc_learn(&c, 1, &d, 2100);			/* asked on another port */
	expect_none(&c, 5001);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.st.unasked, 3);
	nc_asked(&c, 1, 6, b.addr, 6000);
	nc_learn(&c, 1, &b, 9000);			/* within 3 s */
	expect_one(&c, 9000, NC_POST, &b, mac_a);
	nc_learn(&c, 1, &req, 9000);			/* a request for us */
	expect_one(&c, 9000, NC_POST, &req, mac_a);
	assert_int_equal(c.st.learnt, 3);
}

/* Merges: news of a known neighbour move it (a gratuitous ARP after a
 * failover); of an unknown one, nothing. Permanent entries do not move
 * and are never probed. */
static void test_merges_and_permanent(void **state)
{
	static struct neigh_cache c;
	struct np_learned l = told(4, 2, mac_a, 0), garp = told(4, 2, mac_b, 1);
	struct np_learned stranger = told(4, 9, mac_b, 1), fixed = told(4, 1, mac_a, 0);
	struct np_learned fixed_moved = told(4, 1, mac_b, 0);
	(void)state;

	nc_init(&c, &cfg);
	nc_learn(&c, 1, &stranger, 0);
	expect_none(&c, 0);
	assert_int_equal(c.n, 0);
	assert_int_equal(nc_permanent(&c, 1, 4, fixed.addr, mac_a), 0);
	nc_learn(&c, 1, &l, 0);
	expect_one(&c, 0, NC_POST, &l, mac_a);
	nc_learn(&c, 1, &garp, 100);
	expect_one(&c, 100, NC_POST, &garp, mac_b);
	nc_learn(&c, 1, &fixed_moved, 200);
	nc_learn(&c, 2, &l, 200);			/* same address, other port */
	{
		struct nc_action t[8];

		assert_int_equal(nc_tick(&c, 200, t, 8), 1);
		assert_int_equal(t[0].port, 2);
	}
	for (uint64_t now = 1000; now < 200000; now += 1000) {
		struct nc_action t[8];
		uint32_t n = nc_tick(&c, now, t, 8);

		for (uint32_t k = 0; k < n; k++)
			assert_memory_not_equal(t[k].addr, fixed.addr, 4);
	}
	assert_int_equal(c.n, 1);			/* only the permanent one */
	assert_memory_equal(c.e[0].mac, mac_a, 6);
	{
		struct nc_summary sum;
		struct np_learned again = told(6, 3, mac_a, 0), late = told(6, 4, mac_b, 0);
		struct nc_action t[8];

		nc_learn(&c, 1, &again, 300000);		/* a request: STALE */
		late.how = NP_ANSWER;
		nc_asked(&c, 1, 6, late.addr, 300000);
		nc_learn(&c, 1, &late, 300000);		/* an answer: REACHABLE */
		assert_int_equal(nc_tick(&c, 300000, t, 8), 2);	/* both posted */
		nc_summarize(&c, &sum);
		assert_int_equal(sum.stale, 1);
		assert_int_equal(sum.reachable, 1);
		assert_int_equal(sum.probing, 0);
		assert_int_equal(nc_tick(&c, 305000, t, 8), 1);	/* `again` probed */
		assert_int_equal(t[0].op, NC_PROBE);
		nc_summarize(&c, &sum);
		assert_int_equal(sum.permanent, 1);
		assert_int_equal(sum.probing, 1);
		assert_int_equal(sum.stale, 0);
		assert_int_equal(sum.reachable, 1);
		assert_int_equal(sum.st.learnt, c.st.learnt);
		assert_int_equal(sum.st.moved, 1);
	}
}

/* l (an answer) asked for on port 1 and answered at now: a new entry,
 * posted, reachable. */
static void learn_answered(struct neigh_cache *c, const struct np_learned *l, uint64_t now)
{
	nc_asked(c, 1, l->family, l->addr, now);
	nc_learn(c, 1, l, now);
	expect_one(c, now, NC_POST, l, l->mac);
	assert_int_equal(c->e[c->n - 1].state, NC_REACHABLE);
}

/* The state of the one entry there is. */
static uint8_t state_of(const struct neigh_cache *c)
{
	assert_int_equal(c->n, 1);
	return c->e[0].state;
}

/* l told on port 1 at now; then the one entry there is in state want. */
static void learn_into(struct neigh_cache *c, const struct np_learned *l, uint64_t now,
		       uint8_t want)
{
	nc_learn(c, 1, l, now);
	assert_int_equal(state_of(c), want);
}

/* RFC 4861 7.2.3: a request for our address (an NS with the sender's
 * MAC, an ARP request) makes its sender's entry STALE, used and probed
 * delay_ms later (5 s), not reachable; a solicited NA makes it
 * REACHABLE; the sender's next request at the same MAC changes
 * nothing (its probe is reachable_ms after that answer). */
static void test_request_stale_answer_reachable(void **state)
{
	static struct neigh_cache c;
	struct np_learned req = told(6, 2, mac_a, NP_LEARN), na = told(6, 2, mac_a, NP_ANSWER);
	(void)state;

	nc_init(&c, &cfg);
	nc_learn(&c, 1, &req, 0);
	expect_one(&c, 0, NC_POST, &req, mac_a);	/* it forwards */
	assert_int_equal(state_of(&c), NC_STALE);
	assert_int_equal(c.st.learnt, 1);
	expect_none(&c, 4999);
	expect_one(&c, 5000, NC_PROBE, &req, mac_a);
	learn_into(&c, &na, 5100, NC_REACHABLE);
	expect_one(&c, 5100, NC_POST, &req, mac_a);	/* (a refresh after a probe) */
	learn_into(&c, &req, 20000, NC_REACHABLE);
	expect_none(&c, 35099);
	expect_one(&c, 35100, NC_PROBE, &req, mac_a);
}

/* An unsolicited NA with override and a new MAC moves a reachable
 * entry to it, STALE (probed 5 s later, at the new MAC; more moves meanwhile
 * do not put the probe off); the new MAC's answer makes it reachable. */
static void test_unsolicited_na_moves_stale(void **state)
{
	static struct neigh_cache c;
	struct np_learned l = told(6, 2, mac_a, NP_ANSWER), una = told(6, 2, mac_b, NP_MERGE);
	struct np_learned answer = told(6, 2, mac_b, NP_ANSWER), back = told(6, 2, mac_a, NP_MERGE);
	(void)state;

	nc_init(&c, &cfg);
	learn_answered(&c, &l, 0);
	nc_learn(&c, 1, &una, 1000);
	expect_one(&c, 1000, NC_POST, &una, mac_b);
	assert_int_equal(state_of(&c), NC_STALE);
	assert_int_equal(c.st.moved, 1);
	nc_learn(&c, 1, &back, 3000);			/* moved back: probed at 6000 all the same */
	expect_one(&c, 3000, NC_POST, &back, mac_a);
	nc_learn(&c, 1, &una, 5000);
	expect_one(&c, 5000, NC_POST, &una, mac_b);
	assert_int_equal(c.st.moved, 3);
	expect_none(&c, 5999);
	expect_one(&c, 6000, NC_PROBE, &una, mac_b);
	learn_into(&c, &answer, 6100, NC_REACHABLE);
	assert_int_equal(c.st.learnt, 1);
}

/* RFC 4861 7.2.5: a solicited NA without override for another MAC
 * leaves the address alone, and a reachable entry STALE (asked again
 * soon, at its own MAC); while it is probed such an answer is ignored;
 * the owner's answer confirms it. */
static void test_answer_without_override_other_mac(void **state)
{
	static struct neigh_cache c;
	struct np_learned l = told(6, 2, mac_a, NP_ANSWER), proxy = told(6, 2, mac_b, NP_ANSWER_KEEP);
	struct np_learned owner = told(6, 2, mac_a, NP_ANSWER_KEEP);
	(void)state;

	nc_init(&c, &cfg);
	learn_answered(&c, &l, 0);
	nc_learn(&c, 1, &proxy, 1000);
	expect_none(&c, 1000);				/* nothing moved */
	assert_memory_equal(c.e[0].mac, mac_a, 6);
	assert_int_equal(state_of(&c), NC_STALE);
	expect_one(&c, 6000, NC_PROBE, &l, mac_a);
	learn_into(&c, &proxy, 6100, NC_PROBING);
	assert_memory_equal(c.e[0].mac, mac_a, 6);
	learn_into(&c, &owner, 6200, NC_REACHABLE);
	assert_int_equal(c.st.moved, 0);
}

/* RFC 4861 7.2.5 holds for an unsolicited NA too: without override and
 * for another MAC it makes a reachable entry STALE (probed at its own
 * MAC) and moves nothing; with the MAC it has it changes nothing; one
 * probed or unknown ignores it (before, it was ignored also when the
 * entry was reachable, which went on using a MAC the neighbour may have
 * left until its next probe). */
static void test_unsolicited_na_without_override(void **state)
{
	static struct neigh_cache c;
	struct np_learned l = told(6, 2, mac_a, NP_ANSWER), una = told(6, 2, mac_b, NP_MERGE_KEEP);
	struct np_learned same = told(6, 2, mac_a, NP_MERGE_KEEP);
	struct np_learned stranger = told(6, 3, mac_b, NP_MERGE_KEEP);
	(void)state;

	nc_init(&c, &cfg);
	learn_answered(&c, &l, 0);
	learn_into(&c, &same, 500, NC_REACHABLE);
	learn_into(&c, &una, 1000, NC_STALE);
	expect_none(&c, 1000);				/* nothing moved */
	assert_memory_equal(c.e[0].mac, mac_a, 6);
	expect_one(&c, 6000, NC_PROBE, &l, mac_a);
	learn_into(&c, &una, 6100, NC_PROBING);
	assert_memory_equal(c.e[0].mac, mac_a, 6);
	learn_into(&c, &l, 6200, NC_REACHABLE);
	assert_int_equal(c.st.moved, 0);
	nc_learn(&c, 1, &stranger, 6300);		/* not learnt */
	assert_int_equal(c.n, 1);
}

/* ARP says nothing of being asked: a gratuitous ARP or an ARP reply
 * nobody asked for confirms nothing (the entry is probed reachable_ms
 * after its last answer all the same, and a probed one goes on being
 * probed and is forgotten); an ARP reply while the entry is probed is
 * the probe's answer. */
static void test_gratuitous_arp_confirms_nothing(void **state)
{
	static struct neigh_cache c;
	struct np_learned l = told(4, 2, mac_a, NP_ANSWER), garp = told(4, 2, mac_a, NP_MERGE);
	(void)state;

	nc_init(&c, &cfg);
	learn_answered(&c, &l, 0);
	nc_learn(&c, 1, &garp, 10000);
	nc_learn(&c, 1, &l, 20000);			/* a reply, unasked */
	assert_int_equal(state_of(&c), NC_REACHABLE);
	expect_none(&c, 29999);
	expect_one(&c, 30000, NC_PROBE, &l, mac_a);
	learn_into(&c, &garp, 30100, NC_PROBING);
	expect_one(&c, 31000, NC_PROBE, &l, mac_a);
	expect_one(&c, 32000, NC_PROBE, &l, mac_a);
	expect_one(&c, 33000, NC_FORGET, &l, mac_a);
	assert_int_equal(c.n, 0);
	/* asked again; its probe answered by an ARP reply: reachable */
	learn_answered(&c, &l, 40000);
	expect_one(&c, 70000, NC_PROBE, &l, mac_a);
	learn_into(&c, &l, 70100, NC_REACHABLE);
	expect_one(&c, 70100, NC_POST, &l, mac_a);
	expect_none(&c, 100099);
	expect_one(&c, 100100, NC_PROBE, &l, mac_a);
}

/* Full: new entries refused and counted; at most max things a tick, the
 * rest on the next; a POST or FORGET a worker could not take is done
 * again. */
static void test_full_and_retry(void **state)
{
	static struct neigh_cache c;
	struct nc_action t[NC_MAX];
	uint32_t total = 0, n;
	(void)state;

	nc_init(&c, &cfg);
	for (uint32_t i = 0; i < NC_MAX + 5; i++) {
		struct np_learned l = told(6, 0, mac_a, 0);

		l.addr[13] = (uint8_t)(i >> 8);
		l.addr[14] = (uint8_t)i;
		nc_learn(&c, 1, &l, 0);
	}
	assert_int_equal(c.n, NC_MAX);
	assert_int_equal(c.st.full, 5);
	while ((n = nc_tick(&c, 0, t, 100)) != 0) {
		assert_true(n <= 100);
		total += n;
	}
	assert_int_equal(total, NC_MAX);
	nc_retry(&c, &t[0], 0);				/* ... that POST was lost */
	assert_int_equal(nc_tick(&c, 0, t + 1, 8), 0);	/* not again in this tick */
	assert_int_equal(nc_tick(&c, 1, t + 1, 8), 1);	/* but in the next */
	assert_int_equal(t[1].op, NC_POST);
	assert_memory_equal(t[1].addr, t[0].addr, 16);

	nc_init(&c, &(struct nc_config){.reachable_ms = 10, .probe_ms = 1, .probes = 1});
	{
		struct np_learned l = told(4, 7, mac_a, 0);

		nc_learn(&c, 1, &l, 0);
		expect_one(&c, 0, NC_POST, &l, mac_a);
		expect_one(&c, 10, NC_PROBE, &l, mac_a);
		assert_int_equal(nc_tick(&c, 11, t, 8), 1);
		assert_int_equal(t[0].op, NC_FORGET);
		nc_retry(&c, &t[0], 11);		/* a worker's ring was full */
		expect_one(&c, 12, NC_FORGET, &l, mac_a);
		expect_none(&c, 13);
	}
}

/* Entry i of many: IPv4 (even) or IPv6 (odd), on port 1 or 2. */
static struct np_learned many(uint32_t i, uint8_t how)
{
	struct np_learned l = told(i & 1 ? 6 : 4, 0, mac_a, how);

	l.addr[i & 1 ? 13 : 1] = (uint8_t)(i >> 8);
	l.addr[i & 1 ? 14 : 2] = (uint8_t)i;
	return l;
}

static uint8_t many_port(uint32_t i)
{
	return (uint8_t)(1 + (i >> 1 & 1));
}

/* The index follows the entries through forgets (the last entry moved
 * into the hole, probe chains shifted back): after half are forgotten
 * and learnt again, every entry is found (news of it is no new entry)
 * and none twice. */
static void test_index_after_forgets(void **state)
{
	static struct neigh_cache c;
	static struct nc_action t[NC_MAX];
	(void)state;

	nc_init(&c, &(struct nc_config){.reachable_ms = 10, .probe_ms = 1, .probes = 1});
	for (int round = 0; round < 3; round++) {
		uint64_t t0 = (uint64_t)round * 100;

		for (uint32_t i = 0; i < NC_MAX; i++) {
			struct np_learned l = many(i, NP_LEARN);

			nc_learn(&c, many_port(i), &l, t0);
		}
		assert_int_equal(c.n, NC_MAX);
		for (uint32_t i = (uint32_t)round % 2; i < NC_MAX; i += 2 + (uint32_t)round) {
			struct np_learned l = many(i, NP_MERGE);

			nc_learn(&c, many_port(i), &l, t0 + 5);	/* these stay */
		}
		for (uint64_t now = t0; now <= t0 + 12; now++)
			while (nc_tick(&c, now, t, NC_MAX) == NC_MAX)
				;
		assert_true(c.n < NC_MAX);
		for (uint32_t i = 0; i < c.n; i++) {	/* what is left is found */
			uint64_t learnt = c.st.learnt;
			struct np_learned l = {.family = c.e[i].family, .how = NP_LEARN};

			memcpy(l.addr, c.e[i].addr, 16);
			memcpy(l.mac, c.e[i].mac, 6);
			nc_learn(&c, c.e[i].port, &l, t0 + 12);
			assert_int_equal(c.st.learnt, learnt);
		}
	}
	assert_int_equal(c.st.full, 0);
	for (uint32_t i = 0; i < NC_MAX; i++) {		/* all back: none twice */
		struct np_learned l = many(i, NP_LEARN);

		nc_learn(&c, many_port(i), &l, 400);
	}
	assert_int_equal(c.n, NC_MAX);
	assert_int_equal(c.st.full, 0);
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* News of neighbours not in a full cache (an ARP/ND flood: merges and
 * requests from made-up senders) costs a lookup of a few slots, not a
 * walk over the entries: 400,000 take well under a second of CPU (a
 * walk over 2,048 entries took some 6 us each, 2.5 s). */
static void test_learn_cost(void **state)
{
	static struct neigh_cache c;
	double t0;
	(void)state;

	nc_init(&c, NULL);
	for (uint32_t i = 0; i < NC_MAX; i++) {
		struct np_learned l = many(i, NP_LEARN);

		nc_learn(&c, many_port(i), &l, 0);
	}
	t0 = cpu_seconds();
	for (uint32_t k = 0; k < 400000; k++) {
		struct np_learned l = told(4, 0, mac_b, k & 1 ? NP_MERGE : NP_LEARN);

		l.addr[0] = 172;
		l.addr[1] = (uint8_t)(k >> 16);
		l.addr[2] = (uint8_t)(k >> 8);
		l.addr[3] = (uint8_t)k;
		nc_learn(&c, 1, &l, 1);
	}
	print_message("400,000 unknown neighbours' news, full cache: %.3f s CPU\n", cpu_seconds() - t0);
	assert_true(cpu_seconds() - t0 < 1.0);
	assert_int_equal(c.n, NC_MAX);
	assert_int_equal(c.st.full, 200000);
}

/* Requests for our address from senders made up to share a slot of the
 * index's hash as it would be without a key do not share one: each
 * frame's news stays a look at a few slots (all 2,048 in one run
 * before: a walk over every entry per frame, in the flood itself). */
static void test_planted_collisions(void **state)
{
	static struct neigh_cache c;
	static uint8_t addr[NC_MAX][4];
	uint32_t most = 0, run = 0;
	(void)state;

	assert_int_equal(planted_neighbours(1, NC_MAX, addr), NC_MAX);
	nc_init(&c, NULL);
	for (uint32_t i = 0; i < NC_MAX; i++) {
		struct np_learned l = told(4, 0, mac_a, NP_LEARN);

		memcpy(l.addr, addr[i], 4);
		nc_learn(&c, 1, &l, 0);
	}
	assert_int_equal(c.n, NC_MAX);
	for (uint32_t i = 0; i < 2 * NC_INDEX_SLOTS; i++) {	/* twice round: runs wrap */
		run = c.index[i & (NC_INDEX_SLOTS - 1)] ? run + 1 : 0;
		if (run > most)
			most = run;
	}
	print_message("longest run of taken index slots: %u\n", most);
	assert_true(most < 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ages_out),
		cmocka_unit_test(test_probe_answered),
		cmocka_unit_test(test_probe_confirmed_without_mac),
		cmocka_unit_test(test_answers_only_to_asks),
		cmocka_unit_test(test_merges_and_permanent),
		cmocka_unit_test(test_request_stale_answer_reachable),
		cmocka_unit_test(test_unsolicited_na_moves_stale),
		cmocka_unit_test(test_answer_without_override_other_mac),
		cmocka_unit_test(test_unsolicited_na_without_override),
		cmocka_unit_test(test_gratuitous_arp_confirms_nothing),
		cmocka_unit_test(test_full_and_retry),
		cmocka_unit_test(test_index_after_forgets),
		cmocka_unit_test(test_learn_cost),
		cmocka_unit_test(test_planted_collisions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
