/* rulec's rule analysis (rulec/analyze.c): hand-built cases, a brute-force
 * cross-check over tiny header spaces where every packet can be tried
 * through cls_entry_matches, and a timed ClassBench 10k run. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "../../bench/classbench.h"
#include "../../rulec/analyze.h"
#include "artifact.h"
#include "cls.h"

#define DEFAULT_SHARED_DIR RAMPART_SOURCE_DIR "/../shared"

enum { DROP = RFW_ACTION_DROP, ACCEPT = RFW_ACTION_ACCEPT, REJECT = RFW_ACTION_REJECT };

/* ---- building entries ---- */

static struct rfw_acl_entry any(uint32_t rule, uint8_t family)
{
	struct rfw_acl_entry e;

	memset(&e, 0, sizeof(e));
	e.rule = rule;
	e.family = family;
	e.sport_hi = e.dport_hi = 65535;
	return e;
}

static struct rfw_acl_entry v4(uint32_t rule) { return any(rule, 4); }

static void pfx(uint8_t *addr, uint8_t *len, const char *cidr)
{
	char buf[64];
	char *slash;

	snprintf(buf, sizeof(buf), "%s", cidr);
	slash = strchr(buf, '/');
	assert_non_null(slash);
	*slash = 0;
	*len = (uint8_t)atoi(slash + 1);
	memset(addr, 0, 16);
	assert_int_equal(inet_pton(strchr(buf, ':') ? AF_INET6 : AF_INET, buf, addr), 1);
}

static struct rfw_acl_entry src(struct rfw_acl_entry e, const char *cidr)
{
	pfx(e.src, &e.src_len, cidr);
	return e;
}

static struct rfw_acl_entry dst(struct rfw_acl_entry e, const char *cidr)
{
	pfx(e.dst, &e.dst_len, cidr);
	return e;
}

static struct rfw_acl_entry proto(struct rfw_acl_entry e, uint8_t p)
{
	e.flags |= RFW_ACL_PROTO;
	e.proto = p;
	return e;
}

static struct rfw_acl_entry dport(struct rfw_acl_entry e, uint16_t lo, uint16_t hi)
{
	e.flags |= RFW_ACL_PORTS;
	e.dport_lo = lo;
	e.dport_hi = hi;
	return e;
}

static struct rfw_acl_entry state(struct rfw_acl_entry e, uint8_t mask)
{
	e.flags |= RFW_ACL_STATE;
	e.state_mask = mask;
	return e;
}

static struct rfw_acl_entry tcp(uint32_t rule) { return proto(v4(rule), 6); }

/* ---- collecting findings as text: "S3:1,2" shadowed, "R1:0" redundant,
 * "N2" never matches, space-separated in report order ---- */

struct out {
	char text[512];
	uint32_t last_rule;
};

static void collect(void *ctx, const struct analyze_finding *f)
{
	struct out *o = ctx;
	size_t n = strlen(o->text);
	static const char kind[] = {'S', 'R', 'N'};

	assert_true(f->rule > o->last_rule);	/* once per rule, in rule order */
	o->last_rule = f->rule;
	n += (size_t)snprintf(o->text + n, sizeof(o->text) - n, "%s%c%u", n ? " " : "",
			      kind[f->kind], f->rule);
	for (uint32_t i = 0; i < f->other_count; i++)
		n += (size_t)snprintf(o->text + n, sizeof(o->text) - n, "%c%u", i ? ',' : ':',
				      f->others[i]);
}

static struct out last;

/* Analyse rules 1..rules, actions[0] = default; returns the findings. */
static const char *run_lim(const struct rfw_acl_entry *e, uint32_t n, uint32_t rules,
			   const uint8_t *actions, const struct analyze_limits *lim, int *given_up)
{
	memset(&last, 0, sizeof(last));
	*given_up = analyze_rules(e, n, rules, actions, lim, collect, &last);
	return last.text;
}

static const char *run(const struct rfw_acl_entry *e, uint32_t n, uint32_t rules,
		       const uint8_t *actions)
{
	int given_up;
	const char *s = run_lim(e, n, rules, actions, NULL, &given_up);

	assert_int_equal(given_up, 0);
	return s;
}

#define N(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))
#define RUN(e, actions) run(e, N(e), N(actions) - 1, actions)

/* ---- hand-built cases ---- */

static void test_single_cover(void **s)
{
	(void)s;
	struct rfw_acl_entry e[] = {
		dport(tcp(1), 1, 100),
		dport(tcp(2), 10, 20),
		dport(tcp(3), 1, 100),
	};
	const uint8_t act[] = {REJECT, ACCEPT, DROP, ACCEPT};

	assert_string_equal(RUN(e, act), "S2:1 S3:1");
}

static void test_union_of_ports(void **s)
{
	(void)s;
	struct rfw_acl_entry e[] = {
		dport(tcp(1), 1, 50),
		dport(tcp(2), 51, 100),
		dport(tcp(3), 1, 100),
		dport(tcp(4), 0, 100),	/* port 0 is left: not shadowed */
	};
	const uint8_t act[] = {REJECT, ACCEPT, ACCEPT, DROP, DROP};

	assert_string_equal(RUN(e, act), "S3:1,2");
}

static void test_union_of_prefixes(void **s)
{
	(void)s;
	struct rfw_acl_entry e[] = {
		dst(v4(1), "10.0.0.0/25"),
		dst(v4(2), "10.0.0.128/25"),
		dst(v4(3), "10.0.0.0/24"),
		src(v4(4), "192.168.0.0/26"),
		src(v4(5), "192.168.0.64/26"),
		src(v4(6), "192.168.0.128/25"),
		src(dst(tcp(7), "10.1.0.7/32"), "192.168.0.0/24"),
	};
	const uint8_t act[] = {REJECT, ACCEPT, ACCEPT, DROP, ACCEPT, ACCEPT, ACCEPT, DROP};

	assert_string_equal(RUN(e, act), "S3:1,2 S7:4,5,6");
}

static void test_partial_overlap(void **s)
{
	(void)s;
	struct rfw_acl_entry e[] = {
		dport(tcp(1), 1, 50),
		dport(tcp(2), 40, 100),
		dst(v4(3), "10.0.0.0/25"),
		dst(v4(4), "10.0.0.0/24"),
	};
	const uint8_t act[] = {REJECT, ACCEPT, DROP, ACCEPT, DROP};

	assert_string_equal(RUN(e, act), "");
}

static void test_portless_not_shadowed_by_port_rules(void **s)
{
	(void)s;
	struct rfw_acl_entry e[] = {
		dport(tcp(1), 0, 65535),
		tcp(2),			/* fragments have no ports */
		dport(tcp(3), 80, 80),	/* but this one is: 1 and 2 */
	};
	const uint8_t act[] = {REJECT, ACCEPT, DROP, ACCEPT};

	assert_string_equal(RUN(e, act), "S3:1");

	/* Only TCP, UDP and SCTP packets have ports, so port rules for the
	 * three cover an any-protocol port rule, and only that. */
	struct rfw_acl_entry f[] = {
		dport(tcp(1), 0, 65535),
		dport(proto(v4(2), 17), 0, 65535),
		dport(proto(v4(3), 132), 0, 65535),
		dport(v4(4), 0, 65535),
		v4(5),
	};
	const uint8_t act2[] = {REJECT, ACCEPT, ACCEPT, ACCEPT, DROP, DROP};

	assert_string_equal(RUN(f, act2), "S4:1,2,3");
}

static void test_families(void **s)
{
	(void)s;
	struct rfw_acl_entry e[] = {
		v4(1),
		any(2, 6),
		any(3, 0),	/* both families, taken by 1 and 2 */
	};
	const uint8_t act[] = {ACCEPT, ACCEPT, DROP, REJECT};

	assert_string_equal(RUN(e, act), "S3:1,2");

	struct rfw_acl_entry f[] = {
		v4(1),
		any(2, 0),	/* IPv6 is left */
		dst(any(3, 6), "2001:db8::/33"),
		dst(any(4, 6), "2001:db8:8000::/33"),
		dst(any(5, 6), "2001:db8::/32"),
		dst(any(6, 6), "2001:db8::/31"),
	};
	const uint8_t act2[] = {REJECT, ACCEPT, DROP, ACCEPT, ACCEPT, DROP, ACCEPT};

	assert_string_equal(RUN(f, act2), "S3:2 S4:2 S5:2 S6:2");
	f[1] = any(2, 4);
	assert_string_equal(RUN(f, act2), "S2:1 S5:3,4");
}

static void test_state_conditions(void **s)
{
	(void)s;
	struct rfw_acl_entry e[] = {
		state(tcp(1), RFW_STATE_ESTABLISHED),
		state(tcp(2), RFW_STATE_NEW),
		tcp(3),		/* 1 and 2 do not cover it: conservative */
	};
	const uint8_t act[] = {REJECT, ACCEPT, DROP, ACCEPT};

	/* but 2 (NEW) cannot meet 1 (ESTABLISHED), so 3 makes 1 redundant */
	assert_string_equal(RUN(e, act), "R1:3");

	struct rfw_acl_entry f[] = {
		state(tcp(1), RFW_STATE_ESTABLISHED | RFW_STATE_RELATED),
		state(dport(tcp(2), 22, 22), RFW_STATE_RELATED),	/* narrower: covered */
		state(dport(tcp(3), 22, 22), RFW_STATE_NEW),
		v4(4),
		state(dport(tcp(5), 80, 80), RFW_STATE_NEW),	/* any condition under 4 */
	};
	const uint8_t act2[] = {REJECT, ACCEPT, DROP, DROP, ACCEPT, DROP};

	assert_string_equal(RUN(f, act2), "S2:1 S5:4");
}

static struct rfw_acl_entry flags(struct rfw_acl_entry e, uint8_t mask, uint8_t value)
{
	e.flags |= RFW_ACL_TCP_FLAGS;
	e.tcp_mask = mask;
	e.tcp_value = value;
	return e;
}

static struct rfw_acl_entry in_if(struct rfw_acl_entry e, uint32_t mask)
{
	e.flags |= RFW_ACL_IN_IF;
	e.in_ifaces = mask;
	return e;
}

/* Earlier rules with complementary conditions cover a rule together: the
 * states split in two; syn, !syn,!ack and ack. */
static void test_complementary_conditions(void **s)
{
	(void)s;
	struct rfw_acl_entry e[] = {
		state(tcp(1), RFW_STATE_NEW),
		state(tcp(2), RFW_STATE_ESTABLISHED | RFW_STATE_RELATED | RFW_STATE_INVALID),
		dport(tcp(3), 22, 22),			/* under 1 + 2 */
		flags(proto(v4(4), 17), 0, 0),		/* no packet: TCP flags on UDP */
		flags(dport(tcp(5), 80, 80), 0x02, 0x02),	/* syn */
		flags(dport(tcp(6), 80, 80), 0x12, 0x00),	/* !syn,!ack */
		flags(dport(tcp(7), 80, 80), 0x10, 0x10),	/* ack: with 5 and 6, all */
		dport(tcp(8), 80, 80),			/* under 5 + 6 + 7 (and 1 + 2) */
	};
	const uint8_t act[] = {ACCEPT, DROP, DROP, ACCEPT, DROP, DROP, DROP, DROP, DROP};

	assert_string_equal(RUN(e, act), "S3:1,2 N4 S5:1,2 S6:1,2 S7:1,2 S8:1,2");

	/* the same without 1 and 2: 5 + 6 + 7 take all of port 80 */
	struct rfw_acl_entry f[] = {
		flags(dport(tcp(1), 80, 80), 0x02, 0x02),
		flags(dport(tcp(2), 80, 80), 0x12, 0x00),
		flags(dport(tcp(3), 80, 80), 0x10, 0x10),
		dport(tcp(4), 80, 80),
		flags(dport(tcp(5), 443, 443), 0x02, 0x02),
		flags(dport(tcp(6), 443, 443), 0x12, 0x00),
		dport(tcp(7), 443, 443),		/* syn+ack... and ack are left */
	};
	const uint8_t act2[] = {ACCEPT, DROP, DROP, DROP, REJECT, DROP, DROP, REJECT};

	assert_string_equal(RUN(f, act2), "S4:1,2,3");

	/* ICMP type and code are dimensions too */
	struct rfw_acl_entry g[] = {
		proto(v4(1), 1),
		proto(v4(2), 1),
		proto(v4(3), 1),
		proto(v4(4), 1),
	};
	const uint8_t act3[] = {ACCEPT, DROP, DROP, DROP, ACCEPT};

	g[0].flags |= RFW_ACL_ICMP_TYPE;
	g[0].icmp_type = 8;
	g[1].flags |= RFW_ACL_ICMP_TYPE;	/* type 8 code 0 again: under 1 */
	g[1].flags |= RFW_ACL_ICMP_CODE;
	g[1].icmp_type = 8;
	assert_string_equal(RUN(g, act3), "R1:3 S2:1 S4:3");
}

/* Interfaces: naming every interface of the policy does not cover a rule
 * without one (a packet can come in on an interface the policy does not
 * name, which no interface condition takes). */
static void test_interfaces_leave_others(void **s)
{
	(void)s;
	struct rfw_acl_entry e[] = {
		in_if(tcp(1), 0x1),
		in_if(tcp(2), 0x2),
		dport(tcp(3), 22, 22),			/* not covered: other interfaces */
		in_if(dport(tcp(4), 23, 23), 0x3),	/* covered */
	};
	const uint8_t act[] = {ACCEPT, DROP, DROP, DROP, ACCEPT};

	assert_string_equal(RUN(e, act), "S4:1,2");
}

static void test_sets_and_interfaces(void **s)
{
	(void)s;
	/* address sets and interfaces cover only the same or a narrower
	 * condition of the same kind */
	struct rfw_acl_entry e[] = {
		proto(v4(1), 6),
		dport(tcp(2), 81, 81),
		dport(tcp(3), 80, 80),
		dport(tcp(4), 80, 80),
		proto(v4(5), 17),
		dport(proto(v4(6), 17), 53, 53),
		dport(proto(v4(7), 17), 53, 53),
	};
	const uint8_t act[] = {ACCEPT, ACCEPT, DROP, REJECT, REJECT, DROP, DROP, REJECT};

	e[0].flags |= RFW_ACL_SRC_SET;		/* set 0 */
	e[2].flags |= RFW_ACL_SRC_SET;		/* the same set: covered */
	e[3].flags |= RFW_ACL_SRC_SET | RFW_ACL_SRC_NOT;	/* not in it: not */
	e[4].flags |= RFW_ACL_IN_IF;
	e[4].in_ifaces = 0x3;
	e[5].flags |= RFW_ACL_IN_IF;
	e[5].in_ifaces = 0x2;			/* narrower: covered */
	e[6].flags |= RFW_ACL_OUT_IF;
	e[6].out_ifaces = 0x2;			/* another condition: not */
	assert_string_equal(RUN(e, act), "S3:1 S6:5");
}

static void test_redundant_with_later(void **s)
{
	(void)s;
	struct rfw_acl_entry e[] = {
		dport(tcp(1), 80, 80),
		proto(v4(2), 17),	/* other action, meets nothing of 1 */
		tcp(3),
	};
	const uint8_t act[] = {REJECT, ACCEPT, DROP, ACCEPT};

	assert_string_equal(RUN(e, act), "R1:3");

	/* in between, another action on some of rule 1's packets: blocked */
	e[1] = dport(tcp(2), 1, 100);
	assert_string_equal(RUN(e, act), "");

	/* a union of later rules works as well */
	struct rfw_acl_entry f[] = {
		dst(dport(tcp(1), 1, 100), "10.0.0.0/8"),
		dport(tcp(2), 1, 60),
		dport(tcp(3), 50, 100),
		proto(v4(4), 17),
	};
	const uint8_t act2[] = {REJECT, ACCEPT, ACCEPT, ACCEPT, DROP};

	assert_string_equal(RUN(f, act2), "R1:2,3");
}

static void test_redundant_with_default(void **s)
{
	(void)s;
	struct rfw_acl_entry e[] = {
		proto(v4(1), 17),
		tcp(2),
	};
	const uint8_t act[] = {DROP, DROP, ACCEPT};

	assert_string_equal(RUN(e, act), "R1:0");

	/* a later accept for some of its packets keeps it */
	struct rfw_acl_entry f[] = {
		proto(v4(1), 17),
		dst(v4(2), "10.0.0.0/8"),
	};
	assert_string_equal(RUN(f, act), "");

	/* a reject is another action than the default drop */
	const uint8_t act3[] = {DROP, REJECT, ACCEPT};

	assert_string_equal(RUN(e, act3), "");
}

static void test_never_matches(void **s)
{
	(void)s;
	struct rfw_acl_entry e[] = {
		tcp(1),
		dport(proto(v4(3), 1), 1, 10),	/* ICMP has no ports */
		dport(tcp(4), 10, 5),
		dst(v4(5), "10.0.0.0/8"),
	};
	const uint8_t act[] = {REJECT, ACCEPT, DROP, DROP, DROP, ACCEPT};

	assert_string_equal(RUN(e, act), "N2 N3 N4");
}

static void test_limits_give_up(void **s)
{
	(void)s;
	/* rule 17 is covered by sixteen small boxes, a port each in either
	 * half of the source space: proving it keeps several pieces alive */
	struct rfw_acl_entry e[17];
	uint8_t act[18];
	struct analyze_limits lim = {.max_boxes = 1};
	int given_up;
	const char *all;

	act[0] = REJECT;
	for (uint16_t i = 0; i < 16; i++) {
		e[i] = src(dport(tcp(i + 1u), (uint16_t)(1 + i % 8), (uint16_t)(1 + i % 8)),
			   i < 8 ? "10.0.0.0/9" : "10.128.0.0/9");
		act[i + 1] = ACCEPT;
	}
	e[16] = src(dport(tcp(17), 1, 8), "10.0.0.0/8");
	act[17] = DROP;
	all = run(e, 17, 17, act);
	assert_string_equal(all, "S17:1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16");
	assert_string_equal(run_lim(e, 17, 17, act, &lim, &given_up), "");
	assert_int_equal(given_up, 1);
	lim = (struct analyze_limits){.max_rule_work = 1};
	assert_string_equal(run_lim(e, 17, 17, act, &lim, &given_up), "");
	assert_int_equal(given_up, 17);
	lim = (struct analyze_limits){.max_total_work = 1};
	assert_string_equal(run_lim(e, 17, 17, act, &lim, &given_up), "");
	assert_int_equal(given_up, 17);
}

static void test_bad_input(void **s)
{
	(void)s;
	struct rfw_acl_entry e[] = {tcp(2), tcp(1)};
	const uint8_t act[] = {DROP, DROP, DROP};
	int given_up;

	errno = 0;
	run_lim(e, 2, 2, act, NULL, &given_up);
	assert_int_equal(given_up, -1);
	assert_int_equal(errno, EINVAL);
	run_lim(e, 1, 1, act, NULL, &given_up);
	assert_int_equal(given_up, -1);
}

/* ---- brute force over a tiny header space ----
 * Addresses use 3 bits (the top of the first byte), ports 0..4 plus one
 * value for 5..65535 (every random range either ends at 65535 or below
 * 5), protocols ICMP, TCP, UDP (ports) and 50 (no ports): each packet
 * stands for a class of real packets that every entry treats alike. */

#define MAX_RULES 7
#define MAX_ENTRIES 16
#define MAX_PKTS 24000

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 2685821657736338717ull) >> 33) % n;
}

static struct pkt_key pkts[MAX_PKTS];
static uint32_t pkt_count;

/* The random sets' modes: addresses, protocols and ports only; with
 * conntrack states new and established (sound, not exact); with every
 * condition a box holds (exact over their few values). */
enum { PLAIN, WITH_STATE, WITH_EXTRAS };

/* WITH_EXTRAS: 4 source and destination addresses, the source port 0,
 * every state, interfaces 0, 1 and none, TCP flags over syn and ack,
 * ICMP types 0, 8 and 3: a packet of each class the entries can tell. */
static void make_extra_packets(void)
{
	static const uint8_t protos[] = {1, 6, 17, 50}, ifs[] = {0, 1, 0xff};
	static const uint8_t flags[] = {0, 0x02, 0x10, 0x12}, types[] = {0, 8, 3};
	static const uint16_t ports[] = {0, 1, 2, 3, 4, 4000};
	struct pkt_key k;

	pkt_count = 0;
	memset(&k, 0, sizeof(k));
	for (int st = 0; st < 4; st++)
		for (int in = 0; in < 3; in++)
			for (int fam = 0; fam < 2; fam++)
				for (int sa = 0; sa < 4; sa++)
					for (int da = 0; da < 4; da++)
						for (int p = 0; p < 4; p++)
							for (int hp = 0; hp < 2; hp++)
								for (int dp = 0; dp < (hp ? 6 : 1); dp++)
									for (int x = 0; x < 4; x++) {
		if ((hp && protos[p] != 6 && protos[p] != 17) ||
		    (x && protos[p] != 6 && (protos[p] != 1 || x > 2)))
			continue;
		k.ct_state = (uint8_t)(1u << st);
		k.in_if = ifs[in];
		k.out_if = 0xff;
		k.family = fam ? 6 : 4;
		k.src[0] = (uint8_t)(sa << 6);
		k.dst[0] = (uint8_t)(da << 6);
		k.proto = protos[p];
		k.has_ports = (uint8_t)hp;
		k.dport = hp ? ports[dp] : 0;
		k.tcp_flags = protos[p] == 6 ? flags[x] : 0;
		k.icmp_type = protos[p] == 1 ? types[x] : 0;
		assert_true(pkt_count < MAX_PKTS);
		pkts[pkt_count++] = k;
	}
}

static void make_packets(int with_state)
{
	static const uint8_t protos[] = {1, 6, 17, 50};
	static const uint16_t ports[] = {0, 1, 2, 3, 4, 4000};
	struct pkt_key k;

	pkt_count = 0;
	memset(&k, 0, sizeof(k));
	for (int st = 0; st < (with_state ? 2 : 1); st++)
		for (int fam = 0; fam < 2; fam++)
			for (int sa = 0; sa < 8; sa++)
				for (int da = 0; da < 8; da++)
					for (int p = 0; p < 4; p++)
						for (int hp = 0; hp < 2; hp++)
							for (int sp = 0; sp < (hp ? 6 : 1); sp++)
								for (int dp = 0; dp < (hp ? 6 : 1); dp++) {
		if (hp && protos[p] != 6 && protos[p] != 17)
			continue;
		k.ct_state = st ? RFW_STATE_ESTABLISHED : RFW_STATE_NEW;
		k.family = fam ? 6 : 4;
		k.src[0] = (uint8_t)(sa << 5);
		k.dst[0] = (uint8_t)(da << 5);
		k.proto = protos[p];
		k.has_ports = (uint8_t)hp;
		k.sport = hp ? ports[sp] : 0;
		k.dport = hp ? ports[dp] : 0;
		assert_true(pkt_count < MAX_PKTS);
		pkts[pkt_count++] = k;
	}
}

static void rnd_range(uint16_t *lo, uint16_t *hi)
{
	uint32_t a = rnd(6), b = rnd(6);

	if (a > b) {
		uint32_t t = a;

		a = b;
		b = t;
	}
	*lo = (uint16_t)a;
	*hi = b == 5 ? 65535 : (uint16_t)b;
}

static struct rfw_acl_entry rnd_entry(uint32_t rule, int with_state)
{
	static const uint8_t fams[] = {0, 4, 6, 4};
	struct rfw_acl_entry e = any(rule, fams[rnd(4)]);

	e.src_len = (uint8_t)rnd(4);
	e.src[0] = (uint8_t)(rnd(8) << 5 & (0xff00 >> e.src_len));
	e.dst_len = (uint8_t)rnd(4);
	e.dst[0] = (uint8_t)(rnd(8) << 5 & (0xff00 >> e.dst_len));
	switch (rnd(4)) {
	case 0: break;
	case 1: e = proto(e, 1); break;
	default: e = proto(e, 6); break;
	}
	if (rnd(2)) {
		e.flags |= RFW_ACL_PORTS;
		rnd_range(&e.sport_lo, &e.sport_hi);
		rnd_range(&e.dport_lo, &e.dport_hi);
		if (rnd(2))
			e.sport_lo = 0, e.sport_hi = 65535;
	}
	if (with_state && rnd(3) == 0)
		e = state(e, (uint8_t)(1 + rnd(3)));	/* NEW, EST or both */
	return e;
}

/* An entry over make_extra_packets' classes: any state set, interface
 * set, TCP flag test over syn and ack, ICMP type. */
static struct rfw_acl_entry rnd_extra_entry(uint32_t rule)
{
	static const uint8_t fams[] = {0, 4, 6, 4};
	struct rfw_acl_entry e = any(rule, fams[rnd(4)]);

	/* addresses and ports seldom, so that rules differ mostly in the
	 * other conditions and complementary ones turn up */
	if (rnd(4) == 0) {
		e.src_len = (uint8_t)(1 + rnd(2));
		e.src[0] = (uint8_t)(rnd(4) << 6 & (0xff00 >> e.src_len));
	}
	if (rnd(4) == 0) {
		e.dst_len = (uint8_t)(1 + rnd(2));
		e.dst[0] = (uint8_t)(rnd(4) << 6 & (0xff00 >> e.dst_len));
	}
	switch (rnd(4)) {
	case 0: break;
	case 1: e = proto(e, 1); break;
	default: e = proto(e, 6); break;
	}
	if (rnd(4) == 0) {
		e.flags |= RFW_ACL_PORTS;
		rnd_range(&e.dport_lo, &e.dport_hi);
	}
	if (rnd(2))
		e = state(e, (uint8_t)(1 + rnd(15)));
	if (rnd(3) == 0) {
		e.flags |= RFW_ACL_IN_IF;
		e.in_ifaces = 1 + rnd(3);
	}
	if (e.proto == 6 && rnd(2)) {
		static const uint8_t masks[] = {0x02, 0x10, 0x12};

		e.flags |= RFW_ACL_TCP_FLAGS;
		e.tcp_mask = masks[rnd(3)];
		e.tcp_value = (uint8_t)(rnd(256) & e.tcp_mask);
	}
	if (e.proto == 1 && rnd(2)) {
		e.flags |= RFW_ACL_ICMP_TYPE;
		e.icmp_type = rnd(2) ? 8 : 0;
	}
	return e;
}

struct found {
	int kind[MAX_RULES + 1];	/* -1 none */
	uint32_t others[MAX_RULES + 1][MAX_RULES + 1];
	uint32_t other_count[MAX_RULES + 1];
};

static void collect_found(void *ctx, const struct analyze_finding *f)
{
	struct found *o = ctx;

	assert_true(f->rule >= 1 && f->rule <= MAX_RULES);
	assert_int_equal(o->kind[f->rule], -1);
	o->kind[f->rule] = (int)f->kind;
	o->other_count[f->rule] = f->other_count;
	memcpy(o->others[f->rule], f->others, f->other_count * sizeof(*f->others));
}

/* First rule (not `skip`) whose entries match packet p, 0 = none. */
static uint32_t first_rule(const uint32_t *match, uint32_t p, const struct rfw_acl_entry *e,
			   uint32_t skip)
{
	for (uint32_t m = match[p]; m; m &= m - 1) {
		uint32_t r = e[__builtin_ctz(m)].rule;

		if (r != skip)
			return r;
	}
	return 0;
}

struct tally {
	uint32_t shadowed, never, redundant, removable;
};

static void cross_check(int mode, struct tally *t)
{
	static uint32_t match[MAX_PKTS];
	struct rfw_acl_entry e[MAX_ENTRIES];
	uint8_t act[MAX_RULES + 1];
	uint32_t rules = 1 + rnd(MAX_RULES), n = 0;
	struct found f;
	const struct cls_sets sets = {0};

	for (uint32_t r = 1; r <= rules; r++)
		for (uint32_t c = rnd(4) == 0 ? 0 : 1 + rnd(2); c; c--)
			e[n++] = mode == WITH_EXTRAS ? rnd_extra_entry(r) : rnd_entry(r, mode);
	for (uint32_t r = 0; r <= rules; r++)
		act[r] = (uint8_t)(rnd(5) == 0 ? REJECT : rnd(2));
	memset(&f, 0, sizeof(f));
	for (uint32_t r = 0; r <= MAX_RULES; r++)
		f.kind[r] = -1;
	assert_int_equal(analyze_rules(e, n, rules, act, NULL, collect_found, &f), 0);

	for (uint32_t p = 0; p < pkt_count; p++) {
		match[p] = 0;
		for (uint32_t i = 0; i < n; i++)
			if (cls_entry_matches(&sets, &e[i], &pkts[p]))
				match[p] |= 1u << i;
	}
	for (uint32_t r = 1; r <= rules; r++) {
		uint32_t mine = 0, cover = 0;
		int matches = 0, reached = 0, removable = 1;

		for (uint32_t i = 0; i < n; i++) {
			if (e[i].rule == r)
				mine |= 1u << i;
			for (uint32_t j = 0; j < f.other_count[r]; j++)
				if (e[i].rule == f.others[r][j])
					cover |= 1u << i;
		}
		for (uint32_t p = 0; p < pkt_count; p++) {
			uint32_t with = first_rule(match, p, e, 0), without = first_rule(match, p, e, r);

			matches |= (match[p] & mine) != 0;
			reached |= with == r;
			if (act[with] != act[without])
				removable = 0;
			/* the named earlier rules alone take the rule's packets */
			if (f.kind[r] == ANALYZE_SHADOWED && (match[p] & mine))
				assert_true(match[p] & cover);
		}
		switch (f.kind[r]) {
		case ANALYZE_NEVER_MATCHES:
			assert_false(matches);
			t->never++;
			break;
		case ANALYZE_SHADOWED:
			assert_true(matches && !reached);
			for (uint32_t j = 0; j < f.other_count[r]; j++)
				assert_true(f.others[r][j] >= 1 && f.others[r][j] < r);
			t->shadowed++;
			break;
		case ANALYZE_REDUNDANT:
			assert_true(removable);
			for (uint32_t j = 0; j < f.other_count[r]; j++)
				assert_true(f.others[r][j] == 0 ||
					    (f.others[r][j] > r && act[f.others[r][j]] == act[r]));
			t->redundant++;
			break;
		default:
			/* exact where the packets hold every class: anything
			 * unreached was found */
			if (mode != WITH_STATE) {
				assert_true(matches);
				assert_true(reached);
			}
			break;
		}
		t->removable += removable && reached;
	}
}

static void test_random_exact(void **s)
{
	struct tally t = {0};

	(void)s;
	make_packets(0);
	for (int i = 0; i < 1500; i++)
		cross_check(PLAIN, &t);
	printf("# 1500 random sets: %u shadowed, %u never match, %u redundant "
	       "(of %u reached rules removable)\n", t.shadowed, t.never, t.redundant, t.removable);
	assert_true(t.shadowed > 100 && t.never > 50 && t.redundant > 100);
}

static void test_random_with_state_sound(void **s)
{
	struct tally t = {0};

	(void)s;
	make_packets(1);
	for (int i = 0; i < 500; i++)
		cross_check(WITH_STATE, &t);
	printf("# 500 random sets with state: %u shadowed, %u never match, %u redundant\n",
	       t.shadowed, t.never, t.redundant);
	assert_true(t.shadowed > 10 && t.redundant > 10);
}

/* States, interfaces, TCP flags and ICMP types are box dimensions: the
 * analysis is exact over them too, so rules shadowed only by the union
 * of complementary earlier ones (state new, then the other states; syn,
 * then !syn) are found. */
static void test_random_with_extras_exact(void **s)
{
	struct tally t = {0};

	(void)s;
	make_extra_packets();
	for (int i = 0; i < 400; i++)
		cross_check(WITH_EXTRAS, &t);
	printf("# 400 random sets with every condition: %u shadowed, %u never match, "
	       "%u redundant\n", t.shadowed, t.never, t.redundant);
	assert_true(t.shadowed > 10 && t.redundant > 10);
}

/* ---- ClassBench 10k: counts and time; findings spot-checked on a trace ---- */

struct cb_out {
	uint32_t count[3];
	uint8_t *kind;		/* per rule, 0xff none */
};

static void collect_cb(void *ctx, const struct analyze_finding *f)
{
	struct cb_out *o = ctx;

	o->count[f->kind]++;
	o->kind[f->rule] = (uint8_t)f->kind;
}

static void classbench(const char *name)
{
	char path[512];
	const char *shared = getenv("RAMPART_SHARED_DIR");
	struct rfw_acl_entry *e;
	uint32_t n;
	uint8_t *act;
	struct cb_out o = {0};
	struct timespec t0, t1;
	uint64_t seed = 0x9E3779B97F4A7C15ull;
	enum { KEYS = 4000 };
	struct pkt_key *keys = malloc(KEYS * sizeof(*keys));
	const struct cls_sets sets = {0};
	int given_up;

	snprintf(path, sizeof(path), "%s/data/classbench/%s", shared ? shared : DEFAULT_SHARED_DIR,
		 name);
	if (classbench_load(path, &e, &n))
		fail_msg("cannot load %s (shared/ must sit beside the checkout)", path);
	act = malloc(n + 1);
	o.kind = malloc(n + 1);
	assert_non_null(act);
	assert_non_null(o.kind);
	memset(o.kind, 0xff, n + 1);
	act[0] = DROP;
	for (uint32_t r = 1; r <= n; r++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		act[r] = (uint8_t)(seed & 1);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	given_up = analyze_rules(e, n, n, act, NULL, collect_cb, &o);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(given_up >= 0);
	printf("# %s: %u rules, %u shadowed, %u redundant, %u never match, %d given up, "
	       "%.1f ms\n", name, n, o.count[ANALYZE_SHADOWED], o.count[ANALYZE_REDUNDANT],
	       o.count[ANALYZE_NEVER_MATCHES], given_up,
	       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);

	/* no trace packet's first match is a shadowed rule, and where it is a
	 * redundant one the next match gives the same action */
	classbench_trace(e, n, keys, KEYS, 7);
	for (uint32_t k = 0; k < KEYS; k++) {
		uint32_t i = 0, r;

		while (i < n && !cls_entry_matches(&sets, &e[i], &keys[k]))
			i++;
		r = i < n ? e[i].rule : 0;
		if (!r)
			continue;
		assert_int_not_equal(o.kind[r], ANALYZE_SHADOWED);
		if (o.kind[r] == ANALYZE_REDUNDANT) {
			for (i++; i < n && (e[i].rule == r || !cls_entry_matches(&sets, &e[i], &keys[k]));)
				i++;
			assert_int_equal(act[i < n ? e[i].rule : 0], act[r]);
		}
	}
	free(keys);
	free(o.kind);
	free(act);
	free(e);
}

static void test_classbench_acl1_10k(void **s) { (void)s; classbench("acl1_10k"); }
static void test_classbench_fw1_10k(void **s) { (void)s; classbench("fw1_10k"); }
static void test_classbench_ipc1_10k(void **s) { (void)s; classbench("ipc1_10k"); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_cover),
		cmocka_unit_test(test_union_of_ports),
		cmocka_unit_test(test_union_of_prefixes),
		cmocka_unit_test(test_partial_overlap),
		cmocka_unit_test(test_portless_not_shadowed_by_port_rules),
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_state_conditions),
		cmocka_unit_test(test_sets_and_interfaces),
		cmocka_unit_test(test_complementary_conditions),
		cmocka_unit_test(test_interfaces_leave_others),
		cmocka_unit_test(test_redundant_with_later),
		cmocka_unit_test(test_redundant_with_default),
		cmocka_unit_test(test_never_matches),
		cmocka_unit_test(test_limits_give_up),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_random_exact),
		cmocka_unit_test(test_random_with_state_sound),
		cmocka_unit_test(test_random_with_extras_exact),
		cmocka_unit_test(test_classbench_acl1_10k),
		cmocka_unit_test(test_classbench_fw1_10k),
		cmocka_unit_test(test_classbench_ipc1_10k),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
