/* Token buckets over simulated time: exact arithmetic (1000/s burst 2000,
 * per-minute and per-hour rates), per-source isolation and IPv6 /64
 * grouping, per-rule sharing and worker split, the full-table policy
 * (no eviction of live state, shared overflow bucket), and no overflow
 * with huge rates, bursts or idle times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ratelimit.h"

#define MS 1000000ull
#define S (1000 * MS)

static struct rfw_limit lim(uint64_t rate, uint64_t interval_ms, uint64_t burst,
			    uint32_t per)
{
	struct rfw_limit l;

	memset(&l, 0, sizeof(l));
	l.rate = rate;
	l.interval_ms = interval_ms;
	l.burst = burst;
	l.per = per;
	return l;
}

static struct pkt_key v4(uint32_t a)
{
	struct pkt_key k;

	memset(&k, 0, sizeof(k));
	k.family = 4;
	k.proto = 6;
	for (int i = 0; i < 4; i++)
		k.src[i] = (uint8_t)(a >> (24 - 8 * i));
	return k;
}

static struct pkt_key v6(uint16_t w3, uint16_t w7)
{
	struct pkt_key k;

	memset(&k, 0, sizeof(k));
	k.family = 6;
	k.src[0] = 0x20;
	k.src[1] = 0x01;
	k.src[6] = (uint8_t)(w3 >> 8);
	k.src[7] = (uint8_t)w3;
	k.src[14] = (uint8_t)(w7 >> 8);
	k.src[15] = (uint8_t)w7;
	return k;
}

static unsigned burst_at(struct rl_table *t, uint32_t limit,
			 const struct pkt_key *k, uint64_t now, unsigned n)
{
	unsigned pass = 0;

	for (unsigned i = 0; i < n; i++)
		pass += (unsigned)rl_allow(t, limit, k, now);
	return pass;
}

static void test_exact_1000_per_s(void **state)
{
	struct rfw_limit l = lim(1000, 1000, 2000, RFW_LIMIT_PER_RULE);
	struct rl_table t;
	struct pkt_key k = v4(0x0a000001u);
	uint64_t t0 = 5 * S;
	unsigned pass = 0;

	(void)state;
	assert_int_equal(rl_table_init(&t, &l, 1, NULL), 0);
	assert_int_equal(t.params[1].cost, 1000000);	/* 1e9 / gcd */
	assert_int_equal(t.params[1].gain, 1);
	/* The burst at t0, not one more. */
	assert_int_equal(burst_at(&t, 1, &k, t0, 2001), 2000);
	/* Then exactly one per ms. */
	assert_int_equal(rl_allow(&t, 1, &k, t0 + MS - 1), 0);
	assert_int_equal(burst_at(&t, 1, &k, t0 + MS, 3), 1);
	assert_int_equal(rl_allow(&t, 1, &k, t0 + MS + MS / 2), 0);
	assert_int_equal(burst_at(&t, 1, &k, t0 + 2 * MS, 3), 1);
	/* A packet every 100 us for 10 s: one in ten passes, exactly. */
	for (uint64_t now = t0 + 2 * MS + 100000; now <= t0 + 10 * S + 2 * MS;
	     now += 100000)
		pass += (unsigned)rl_allow(&t, 1, &k, now);
	assert_int_equal(pass, 10000);
	/* Idle for a while: full again, capped at the burst. */
	assert_int_equal(burst_at(&t, 1, &k, t0 + 100 * S, 2500), 2000);
	assert_int_equal(t.lstats[1].passed, 2000 + 1 + 1 + 10000 + 2000);
	assert_int_equal(t.lstats[1].excess,
			 1 + 1 + 2 + 1 + 2 + (100000 - 10000) + 500);
	/* Time going backwards counts as no time. */
	assert_int_equal(rl_allow(&t, 1, &k, t0), 0);
	assert_int_equal(rl_allow(&t, 1, &k, t0 + 100 * S + MS), 1);
	/* No limit on the rule: always allowed, nothing counted. */
	assert_int_equal(rl_allow(&t, 0, &k, t0), 1);
	/* A limit number the table does not have: denied, counted. */
	assert_int_equal(rl_allow(&t, 2, &k, t0), 0);
	assert_int_equal(t.stats.bad_limit, 1);
	rl_table_free(&t);
}

static void test_per_minute_and_hour(void **state)
{
	struct rfw_limit l[3] = {
		lim(60, 60000, 1, RFW_LIMIT_PER_RULE),		/* 60/m */
		lim(1, 3600000, 1, RFW_LIMIT_PER_RULE),		/* 1/h */
		lim(7, 60000, 3, RFW_LIMIT_PER_RULE),		/* 7/m */
	};
	struct rl_table t;
	struct pkt_key k = v4(1);
	uint64_t t0 = 1;

	(void)state;
	assert_int_equal(rl_table_init(&t, l, 3, NULL), 0);
	assert_int_equal(rl_allow(&t, 1, &k, t0), 1);
	assert_int_equal(rl_allow(&t, 1, &k, t0 + S - 1), 0);
	assert_int_equal(rl_allow(&t, 1, &k, t0 + S), 1);

	assert_int_equal(rl_allow(&t, 2, &k, t0), 1);
	assert_int_equal(rl_allow(&t, 2, &k, t0 + 3600 * S - 1), 0);
	assert_int_equal(rl_allow(&t, 2, &k, t0 + 3600 * S), 1);
	assert_int_equal(rl_allow(&t, 2, &k, t0 + 3600 * S + 1), 0);

	/* 7/m: 60/7 s a packet, which no whole number of ns is: the credit
	 * units keep it exact (7 packets in exactly 60 s after the burst). */
	assert_int_equal(burst_at(&t, 3, &k, t0, 4), 3);
	{
		unsigned pass = 0;

		for (uint64_t now = t0 + MS; now <= t0 + 60 * S; now += MS)
			pass += (unsigned)rl_allow(&t, 3, &k, now);
		assert_int_equal(pass, 7);
		assert_int_equal(rl_allow(&t, 3, &k, t0 + 60 * S + 60 * S / 7), 0);
		assert_int_equal(rl_allow(&t, 3, &k, t0 + 60 * S + 60 * S / 7 + 1), 1);
	}
	rl_table_free(&t);
}

static void test_per_source_isolation(void **state)
{
	struct rfw_limit l = lim(10, 1000, 5, RFW_LIMIT_PER_SOURCE);
	struct rl_table t;
	struct pkt_key a = v4(0x0a000001u), b = v4(0x0a000002u);
	uint64_t now = 42 * S;

	(void)state;
	assert_int_equal(rl_table_init(&t, &l, 1, NULL), 0);
	assert_int_equal(burst_at(&t, 1, &a, now, 50), 5);
	/* b is unaffected by a's excess. */
	assert_int_equal(burst_at(&t, 1, &b, now, 50), 5);
	/* 100 ms later each has one token of its own. */
	assert_int_equal(burst_at(&t, 1, &a, now + 100 * MS, 3), 1);
	assert_int_equal(burst_at(&t, 1, &b, now + 100 * MS, 3), 1);
	assert_int_equal(t.stats.src_inserted, 2);
	assert_int_equal(t.lstats[1].overflow, 0);

	/* IPv6: one /64 is one source by default. */
	{
		struct pkt_key x = v6(1, 1), y = v6(1, 2), z = v6(2, 1);

		assert_int_equal(burst_at(&t, 1, &x, now, 3), 3);
		assert_int_equal(burst_at(&t, 1, &y, now, 3), 2);
		assert_int_equal(burst_at(&t, 1, &z, now, 6), 5);
	}
	rl_table_free(&t);
	/* ... or each address, with v6_prefix 128. */
	{
		struct rl_config c = { .v6_prefix = 128, .seed = 99 };
		struct pkt_key x = v6(1, 1), y = v6(1, 2);

		assert_int_equal(rl_table_init(&t, &l, 1, &c), 0);
		assert_int_equal(burst_at(&t, 1, &x, now, 6), 5);
		assert_int_equal(burst_at(&t, 1, &y, now, 6), 5);
		rl_table_free(&t);
	}
}

static void test_per_rule_sharing(void **state)
{
	struct rfw_limit l[2] = {
		lim(10, 1000, 5, RFW_LIMIT_PER_RULE),
		lim(10, 1000, 5, RFW_LIMIT_PER_SOURCE),
	};
	struct rl_table t;
	struct pkt_key a = v4(1), b = v4(2);

	(void)state;
	assert_int_equal(rl_table_init(&t, l, 2, NULL), 0);
	/* Per rule: every source draws from one bucket. */
	assert_int_equal(burst_at(&t, 1, &a, S, 3), 3);
	assert_int_equal(burst_at(&t, 1, &b, S, 3), 2);
	/* Different limits never share, even for the same source. */
	assert_int_equal(burst_at(&t, 2, &a, S, 6), 5);
	assert_int_equal(t.lstats[1].passed, 5);
	assert_int_equal(t.lstats[1].excess, 1);
	assert_int_equal(t.lstats[2].excess, 1);
	rl_table_free(&t);

	/* Split over 4 workers: each gets 10/4 per s and a burst of 2. */
	{
		struct rl_config c = { .worker_count = 4 };
		unsigned pass = 0;

		assert_int_equal(rl_table_init(&t, l, 2, &c), 0);
		assert_int_equal(burst_at(&t, 1, &a, S, 5), 2);
		for (uint64_t now = S + MS; now <= 5 * S; now += MS)
			pass += (unsigned)rl_allow(&t, 1, &a, now);
		assert_int_equal(pass, 10);	/* 4 s x 2.5/s */
		/* Per source is not divided (a stateless policy's). */
		assert_int_equal(burst_at(&t, 2, &a, S, 6), 5);
		rl_table_free(&t);
	}
	/* A stateful policy's: per source split like per rule (each worker
	 * 10/4 per s and a burst of 2 for each source). */
	{
		struct rl_config c = { .worker_count = 4, .split_sources = 1 };
		unsigned pass = 0;

		assert_int_equal(rl_table_init(&t, l, 2, &c), 0);
		assert_int_equal(burst_at(&t, 2, &a, S, 6), 2);
		assert_int_equal(burst_at(&t, 2, &b, S, 6), 2);	/* per source */
		for (uint64_t now = S + MS; now <= 5 * S; now += MS)
			pass += (unsigned)rl_allow(&t, 2, &a, now);
		assert_int_equal(pass, 10);	/* 4 s x 2.5/s */
		rl_table_free(&t);
	}
}

static void test_table_full(void **state)
{
	struct rfw_limit l = lim(1, 1000, 3, RFW_LIMIT_PER_SOURCE);
	struct rl_config c = { .source_slots = 4 };	/* one set */
	struct rl_table t;
	uint64_t now = 10 * S;

	(void)state;
	assert_int_equal(rl_table_init(&t, &l, 1, &c), 0);
	assert_int_equal(t.set_mask, 0);
	/* Four active sources fill the set. */
	for (uint32_t s = 1; s <= 4; s++) {
		struct pkt_key k = v4(s);

		assert_int_equal(rl_allow(&t, 1, &k, now), 1);
	}
	assert_int_equal(t.stats.src_inserted, 4);
	/* A flood of new sources: none evicts an active one; together they
	 * get one source's burst from the overflow bucket. */
	{
		unsigned pass = 0;

		for (uint32_t s = 100; s < 1100; s++) {
			struct pkt_key k = v4(s);

			pass += (unsigned)rl_allow(&t, 1, &k, now + 1);
		}
		assert_int_equal(pass, 3);
		assert_int_equal(t.lstats[1].overflow, 1000);
		assert_int_equal(t.stats.src_inserted, 4);
	}
	/* The tracked sources kept their state: two tokens each left. */
	for (uint32_t s = 1; s <= 4; s++) {
		struct pkt_key k = v4(s);

		assert_int_equal(burst_at(&t, 1, &k, now + 2, 3), 2);
	}
	/* Once an entry has refilled to full (3 s at 1/s), it is replaced
	 * losslessly: the newcomer starts full, the old source would too. */
	{
		struct pkt_key k1 = v4(1), n = v4(5000);

		assert_int_equal(rl_allow(&t, 1, &k1, now + 3 * S), 1);
		/* k1 no longer full; sources 2..4 are at now + 3 s + 2. */
		assert_int_equal(burst_at(&t, 1, &n, now + 3 * S + 2, 4), 3);
		assert_int_equal(t.stats.src_replaced, 1);
		assert_int_equal(t.lstats[1].overflow, 1000);
	}
	rl_table_free(&t);
}

static void test_huge_values(void **state)
{
	struct rfw_limit l[5] = {
		lim(UINT64_MAX, 1, UINT64_MAX, RFW_LIMIT_PER_RULE),
		lim(1, UINT64_MAX, UINT64_MAX, RFW_LIMIT_PER_RULE),
		lim(UINT64_MAX, UINT64_MAX, 1, RFW_LIMIT_PER_SOURCE),
		lim(0, 1000, 2, RFW_LIMIT_PER_RULE),		/* never refills */
		lim(1000000000, 1, 1, RFW_LIMIT_PER_RULE),	/* 1e9 per ms */
	};
	struct rl_table t;
	struct pkt_key k = v4(7);
	struct rl_config c = { .worker_count = 65535 };

	(void)state;
	assert_int_equal(rl_table_init(&t, l, 5, &c), 0);
	for (uint32_t i = 1; i <= 5; i++) {
		assert_true(t.params[i].cap <= (1ull << 62));
		assert_true(t.params[i].gain <= (1ull << 62));
		assert_true(t.params[i].cost >= 1);
		assert_true(t.params[i].cap >= t.params[i].cost);
	}
	/* Unlimited in practice, at any time, after any idle time. */
	assert_int_equal(burst_at(&t, 1, &k, 0, 100000), 100000);
	assert_int_equal(burst_at(&t, 1, &k, UINT64_MAX - 1, 1000), 1000);
	assert_int_equal(burst_at(&t, 1, &k, UINT64_MAX, 1000), 1000);
	/* 1 per 2^64 ms (x 65535 workers): one packet costs more than 2^62
	 * credit, so the burst is cut to 1; then nothing, ever. */
	assert_int_equal(burst_at(&t, 2, &k, 1, 1000), 1);
	assert_int_equal(rl_allow(&t, 2, &k, UINT64_MAX), 0);
	/* UINT64_MAX per UINT64_MAX ms is exactly 1 per ms. */
	assert_int_equal(t.params[3].cost, 1000000);
	assert_int_equal(t.params[3].gain, 1);
	assert_int_equal(rl_allow(&t, 3, &k, 1), 1);
	assert_int_equal(rl_allow(&t, 3, &k, 2), 0);
	assert_int_equal(rl_allow(&t, 3, &k, 1 + MS), 1);
	assert_int_equal(rl_allow(&t, 3, &k, UINT64_MAX), 1);
	/* Rate 0: the burst, once, ever. */
	assert_int_equal(burst_at(&t, 4, &k, 5, 3), 1);	/* 2 over 65535 workers: 1 */
	assert_int_equal(rl_allow(&t, 4, &k, UINT64_MAX), 0);
	/* Long idle after heavy use: full, not wrapped around. */
	{
		struct rl_table u;
		struct rfw_limit m = lim(1000000000, 1, 1000, RFW_LIMIT_PER_RULE);

		assert_int_equal(rl_table_init(&u, &m, 1, NULL), 0);
		assert_int_equal(burst_at(&u, 1, &k, 1, 2000), 1000);
		assert_int_equal(burst_at(&u, 1, &k, UINT64_MAX, 2000), 1000);
		rl_table_free(&u);
	}
	rl_table_free(&t);
	/* interval 0 is refused. */
	l[0].interval_ms = 0;
	assert_int_equal(rl_table_init(&t, l, 1, NULL), -1);
}

/* A reload into a table of another size (source_slots): the per-rule
 * buckets and the per-source entries carry over all the same, the
 * sources to their sets in the new table; a renumbered limit too. */
static void test_carry_other_size(void **state)
{
	struct rfw_limit l[2] = {
		lim(1, 1000, 3, RFW_LIMIT_PER_RULE),
		lim(1, 1000, 3, RFW_LIMIT_PER_SOURCE),
	};
	struct rfw_limit swapped[2] = {l[1], l[0]};
	struct rl_config small = {.source_slots = 8, .seed = 5}, big = {.source_slots = 256};
	struct pkt_key a = v4(0x0a000001u), b = v4(0x0a000002u), c = v4(0x0a000003u);
	const uint32_t same[3] = {0, 1, 2}, renumbered[3] = {0, 2, 1};
	uint64_t now = 10 * S;
	(void)state;

	for (int renumber = 0; renumber <= 1; renumber++) {
		struct rl_table from, to;
		uint32_t rule_limit = renumber ? 2 : 1, src_limit = renumber ? 1 : 2;

		assert_int_equal(rl_table_init(&from, l, 2, &small), 0);
		assert_int_equal(burst_at(&from, 1, &a, now, 5), 3);	/* emptied */
		assert_int_equal(burst_at(&from, 2, &a, now, 5), 3);
		assert_int_equal(burst_at(&from, 2, &b, now, 5), 3);
		assert_int_equal(rl_table_init(&to, renumber ? swapped : l, 2, &big), 0);
		rl_table_carry(&to, &from, renumber ? renumbered : same);
		/* nothing refilled: each bucket as empty as it was */
		assert_int_equal(rl_allow(&to, rule_limit, &c, now), 0);
		assert_int_equal(rl_allow(&to, src_limit, &a, now), 0);
		assert_int_equal(rl_allow(&to, src_limit, &b, now), 0);
		/* a source never seen starts full; counters carried */
		assert_int_equal(burst_at(&to, src_limit, &c, now, 5), 3);
		assert_int_equal(to.lstats[rule_limit].passed, 3);
		assert_int_equal(to.lstats[src_limit].passed, 9);
		/* and refill at their rate */
		assert_int_equal(rl_allow(&to, src_limit, &a, now + S), 1);
		rl_table_free(&from);
		rl_table_free(&to);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_1000_per_s),
		cmocka_unit_test(test_per_minute_and_hour),
		cmocka_unit_test(test_per_source_isolation),
		cmocka_unit_test(test_per_rule_sharing),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_huge_values),
		cmocka_unit_test(test_carry_other_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
