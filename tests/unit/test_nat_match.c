/* nat_match: the first NAT rule of a kind that takes a packet, by the
 * classifier a policy of many NAT rules gets (the one rulec writes into
 * the artifact, and the one the runtime builds for an artifact without
 * it), against the scan in order a policy of a few keeps, on a
 * compiled policy of DNAT, SNAT and masquerade rules interleaved, with
 * zones, interfaces, named networks, lists (several entries a rule),
 * protocols with and without ports, and random packets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cls.h"
#include "nat_match.h"
#include "portmap.h"
#include "router_lab.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static const char *const zone_of[3] = {"inside", "outside", "dmz"};

/* A "to:" or "from:" side: maybe a zone, maybe an interface, maybe a
 * network (a literal /32 or /24 of 10.0.x, or a named list). */
static void side(FILE *f, const char *key, int want_net)
{
	fprintf(f, "%s: {", key);
	switch (rnd() % 4) {
	case 0:
		fprintf(f, "zone: %s, ", zone_of[rnd() % 3]);
		break;
	case 1:
		fprintf(f, "interface: %s, ", (const char *[]){"lan0", "wan0", "dmz0"}[rnd() % 3]);
		break;
	default:
		break;
	}
	if (want_net || rnd() % 8) {
		switch (rnd() % 8) {
		case 0:
		case 1:
		case 2:
		case 3:
		case 4:
			fprintf(f, "network: 10.0.%u.%u/32", rnd() % 4, rnd() % 8);
			break;
		case 5:
			fprintf(f, "network: 10.0.%u.0/24", rnd() % 4);
			break;
		default:
			fprintf(f, "network: list%u", rnd() % 3);
			break;
		}
	} else {
		fprintf(f, "network: 0.0.0.0/0");
	}
	fprintf(f, "}");
}

static void random_policy(FILE *f, uint32_t nrules)
{
	fprintf(f, "version: 1\n"
		   "networks:\n"
		   "  list0: [10.0.0.1, 10.0.1.0/28, 10.0.2.7]\n"
		   "  list1: [10.0.3.0/24, 10.0.0.4/30]\n"
		   "  list2: [\"!list0\"]\n"
		   "zones: {inside: [lan0], outside: [wan0], dmz: [dmz0]}\n"
		   "rules:\n  - {name: any, action: accept}\n"
		   "nat:\n");
	for (uint32_t i = 0; i < nrules; i++) {
		uint32_t kind = rnd() % 3, proto = rnd() % 4;

		fprintf(f, "  - name: n%u\n    match: {", i);
		if (proto == 3)
			fprintf(f, "proto: icmp, ");
		side(f, "from", 0);
		fprintf(f, ", ");
		side(f, "to", kind == 0);
		if (proto < 2)
			fprintf(f, ", proto: %s", proto ? "udp" : "tcp");
		fprintf(f, "}\n");
		if (kind == 0 && proto < 2) {
			/* a port or a range; the key's own dport ranges */
			fprintf(f, "    dnat: {to: 10.50.0.%u, port: %u}\n", i % 250 + 1, 22 + rnd() % 4);
		} else if (kind == 0) {
			fprintf(f, "    dnat: {to: 10.50.0.%u}\n", i % 250 + 1);
		} else if (kind == 1) {
			fprintf(f, "    snat: {to: [10.9.%u.1-10.9.%u.4]}\n", i % 250, i % 250);
		} else {
			fprintf(f, "    snat: {to: masquerade}\n");
		}
	}
	fprintf(f, "routes:\n  - {prefix: 10.0.0.0/8, interface: lan0}\n");
}

static void random_key(struct pkt_key *k)
{
	static const uint8_t ifs[4] = {0, 1, 2, 32};
	uint32_t p = rnd() % 4;

	memset(k, 0, sizeof(*k));
	k->family = 4;
	k->src[0] = k->dst[0] = 10;
	k->src[2] = (uint8_t)(rnd() % 5);
	k->src[3] = (uint8_t)(rnd() % 3 ? rnd() % 10 : rnd());
	k->dst[2] = (uint8_t)(rnd() % 5);
	k->dst[3] = (uint8_t)(rnd() % 3 ? rnd() % 10 : rnd());
	k->proto = p == 3 ? 1 : p == 2 ? 47 : p ? 17 : 6;
	k->has_ports = p < 2;
	if (k->has_ports) {
		k->sport = (uint16_t)(1024 + rnd() % 60000);
		k->dport = (uint16_t)(rnd() % 2 ? rnd() % 100 : rnd());
	} else if (p == 3) {
		k->icmp_type = (uint8_t)(rnd() % 2 ? 8 : rnd() % 20);
	}
	k->in_if = ifs[rnd() % 4];
	k->out_if = ifs[rnd() % 4];
	k->ct_state = RFW_STATE_NEW;
}

static uint32_t scan(const struct rfw_view *v, const struct cls_sets *sets, const uint32_t *order,
		     uint32_t n, const struct pkt_key *k)
{
	for (uint32_t e = 0; e < n; e++)
		if (cls_entry_matches(sets, &v->nat_acl[order[e]], k))
			return v->nat_acl[order[e]].rule;
	return 0;
}

static void run(uint32_t nrules, uint32_t queries)
{
	static char text[1 << 20];
	FILE *f = fmemopen(text, sizeof(text), "w");
	struct rfw_view v;
	void *buf;
	size_t len;
	uint32_t *order, n = 0, ndnat = 0, matched[2] = {0, 0}, distinct[2] = {0, 0};
	uint8_t *seen;
	struct cls_sets sets;

	assert_non_null(f);
	random_policy(f, nrules);
	fclose(f);
	router_lab_compile(text, &buf, &len, &v);
	sets = (struct cls_sets){v.sets, v.set_count, v.lpm_data};
	order = malloc(((size_t)v.nat_acl_count + 1) * sizeof(*order));
	seen = calloc((size_t)v.policy->nat_count + 1, 1);
	assert_non_null(order);
	assert_non_null(seen);
	for (int dnat = 1; dnat >= 0; dnat--) {	/* as pipe_policy splits them */
		for (uint32_t e = 0; e < v.nat_acl_count; e++)
			if ((v.nat_rules[v.nat_acl[e].rule].kind == RFW_NAT_DNAT) == dnat)
				order[n++] = e;
		if (dnat)
			ndnat = n;
	}
	{
		const uint32_t start[2] = {0, ndnat}, count[2] = {ndnat, n - ndnat};
		/* [kind][0]: from the artifact's classifier (rulec's), or scanned
		 * when it has none; [kind][1]: as for an artifact without one,
		 * built here, or scanned */
		struct nat_match m[2][2];
		const struct pkt_key *ptr[PIPE_BURST];
		struct pkt_key keys[PIPE_BURST];
		uint32_t got[PIPE_BURST];

		for (int kind = 0; kind < 2; kind++) {
			assert_int_equal(v.nat_cls[kind].trees != NULL, count[kind] >= RFW_NAT_CLS_MIN);
			assert_int_equal(nat_match_init(&m[kind][0], v.nat_acl, &sets, order + start[kind],
							count[kind], &v.nat_cls[kind]), 0);
			assert_int_equal(nat_match_init(&m[kind][1], v.nat_acl, &sets, order + start[kind],
							count[kind], NULL), 0);
			assert_int_equal(m[kind][0].compiled, count[kind] >= RFW_NAT_CLS_MIN);
			assert_int_equal(m[kind][1].compiled, count[kind] > NAT_MATCH_SCAN_MAX);
			assert_int_equal(m[kind][0].own, 0);	/* nothing built for it */
		}
		for (uint32_t q = 0; q < queries; q += PIPE_BURST) {
			for (uint32_t i = 0; i < PIPE_BURST; i++) {
				random_key(&keys[i]);
				ptr[i] = &keys[i];
			}
			for (int kind = 0; kind < 2; kind++) {
				for (uint32_t i = 0; i < PIPE_BURST; i++) {
					uint32_t want = scan(&v, &sets, order + start[kind], count[kind],
							     &keys[i]);

					matched[kind] += want != 0;
					distinct[kind] += want && !seen[want];
					seen[want] = 1;
					got[i] = want;
				}
				for (int way = 0; way < 2; way++) {
					uint32_t batch[PIPE_BURST];

					nat_match_batch(&m[kind][way], ptr, PIPE_BURST, batch);
					for (uint32_t i = 0; i < PIPE_BURST; i++) {
						assert_int_equal(nat_match_first(&m[kind][way], &keys[i]),
								 got[i]);
						assert_int_equal(batch[i], got[i]);
					}
				}
			}
		}
		print_message("%u NAT rules (%u DNAT entries, %u SNAT): %u queries, %u and %u matched, "
			      "by %u and %u rules\n", nrules, count[0], count[1], queries, matched[0],
			      matched[1], distinct[0], distinct[1]);
		for (int kind = 0; kind < 2; kind++) {
			/* enough of both, by enough rules, that a wrong answer
			 * would show */
			if (count[kind] > 100) {
				assert_true(matched[kind] > queries / 50);
				assert_true(distinct[kind] > 20);
			}
			nat_match_free(&m[kind][0]);
			nat_match_free(&m[kind][1]);
		}
	}
	free(seen);
	free(order);
	free(buf);
}

/* Many rules: both kinds compiled, their answers the scan's. */
static void test_many_rules_compiled(void **state)
{
	(void)state;
	run(400, 64 * 400);
}

/* A few: scanned, as before (and compiled once a kind has more than
 * NAT_MATCH_SCAN_MAX entries, its lists expanded). */
static void test_few_rules(void **state)
{
	(void)state;
	for (uint32_t n = 1; n <= 12; n++)
		run(n, 64 * 20);
}

/* Rules by the thousand with a lot of overlap between them. */
static void test_thousands(void **state)
{
	(void)state;
	run(3000, 64 * 100);
}

/* Port ranges marked a word at a time, against a port at a time: every
 * range within the first and within the last 200 ports, 20,000 short
 * random ones and 50 of any length (the maps DNAT's handoff reads,
 * pipe_policy.c). */
static void check_range(uint64_t *map, uint64_t *want, uint32_t lo, uint32_t hi)
{
	memset(map, 0, PORTMAP_WORDS * sizeof(*map));
	memset(want, 0, PORTMAP_WORDS * sizeof(*want));
	map[7] = want[7] = 0x8000000000000001ull;	/* bits already set stay */
	portmap_mark(map, lo, hi);
	for (uint32_t p = lo; p <= hi; p++)
		want[p / 64] |= 1ull << (p % 64);
	if (memcmp(map, want, PORTMAP_WORDS * sizeof(*map)))
		fail_msg("ports %u-%u marked wrongly", lo, hi);
	assert_int_equal(portmap_has(map, (uint16_t)lo), lo <= hi || lo == 7 * 64);
}

static void test_portmap(void **state)
{
	static uint64_t map[PORTMAP_WORDS], want[PORTMAP_WORDS];
	(void)state;

	for (uint32_t lo = 0; lo < 200; lo++)
		for (uint32_t hi = 0; hi < 200; hi++) {
			check_range(map, want, lo, hi);
			check_range(map, want, 65335 + lo, 65335 + hi);
		}
	for (uint32_t t = 0; t < 20050; t++) {
		uint32_t lo = rnd() % 65536, hi = t < 20000 ? lo + rnd() % 300 : rnd() % 65536;

		check_range(map, want, lo, hi > 65535 ? 65535 : hi);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_rules_compiled),
		cmocka_unit_test(test_few_rules),
		cmocka_unit_test(test_thousands),
		cmocka_unit_test(test_portmap),
	};

	return cmocka_run_group_tests_name("nat_match", tests, NULL, NULL);
}
