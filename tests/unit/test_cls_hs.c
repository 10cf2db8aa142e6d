/* The compiled classifier against a naive first-match written here from
 * the rule text: ClassBench acl1/fw1/ipc1 (1k and 10k) and a random IPv6
 * set, 100,000 headers each (half inside a random rule's box, half
 * uniformly random). Zero disagreements allowed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "artifact.h"
#include "cls.h"
#include "cls_hs.h"
#include "crc32c.h"

/* Random queries a rule set, each against the naive first match over
 * every rule. The release build asks 100,000; the sanitizer build, which
 * is there for memory errors the same code paths would show, a quarter
 * (the naive reference over 10,000 rules is most of its time: 26 s) */
#if defined(__SANITIZE_ADDRESS__)
#define QUERIES 25000
#else
#define QUERIES 100000
#endif
/* shared/ sits beside the checkout (RAMPART_SHARED_DIR overrides). */
#define DEFAULT_SHARED_DIR RAMPART_SOURCE_DIR "/../shared"

/* A rule as the text says it, for the naive reference. */
struct naive_rule {
	uint8_t family;
	uint8_t src[16], dst[16];
	unsigned src_len, dst_len;
	int proto;			/* -1: any */
	int ports;			/* 0: both wildcard */
	uint16_t sp_lo, sp_hi, dp_lo, dp_hi;
};

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)		/* xorshift64*: reproducible runs */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static uint32_t rnd_in(uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(rnd() % ((uint64_t)hi - lo + 1));
}

static int naive_prefix(const uint8_t *a, const uint8_t *p, unsigned len)
{
	for (unsigned bit = 0; bit < len; bit++) {
		unsigned mask = 0x80u >> (bit % 8);

		if ((a[bit / 8] & mask) != (p[bit / 8] & mask))
			return 0;
	}
	return 1;
}

static uint32_t naive_lookup(const struct naive_rule *r, uint32_t n, const struct pkt_key *k)
{
	for (uint32_t i = 0; i < n; i++) {
		if (r[i].family != k->family)
			continue;
		if (r[i].proto >= 0 && r[i].proto != k->proto)
			continue;
		if (r[i].ports && (!k->has_ports ||
				   k->sport < r[i].sp_lo || k->sport > r[i].sp_hi ||
				   k->dport < r[i].dp_lo || k->dport > r[i].dp_hi))
			continue;
		if (naive_prefix(k->src, r[i].src, r[i].src_len) &&
		    naive_prefix(k->dst, r[i].dst, r[i].dst_len))
			return i + 1;
	}
	return 0;
}

static void to_entry(const struct naive_rule *r, uint32_t number, struct rfw_acl_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->family = r->family;
	memcpy(e->src, r->src, 16);
	memcpy(e->dst, r->dst, 16);
	e->src_len = (uint8_t)r->src_len;
	e->dst_len = (uint8_t)r->dst_len;
	if (r->proto >= 0) {
		e->flags |= RFW_ACL_PROTO;
		e->proto = (uint8_t)r->proto;
	}
	if (r->ports) {
		e->flags |= RFW_ACL_PORTS;
		e->sport_lo = r->sp_lo;
		e->sport_hi = r->sp_hi;
		e->dport_lo = r->dp_lo;
		e->dport_hi = r->dp_hi;
	}
	e->rule = number;
}

static uint32_t load_classbench(const char *name, struct naive_rule **out)
{
	char path[512], line[512];
	FILE *f;
	uint32_t n = 0, cap = 1024;
	struct naive_rule *r = malloc(cap * sizeof(*r));

	const char *shared = getenv("RAMPART_SHARED_DIR");

	snprintf(path, sizeof(path), "%s/data/classbench/%s",
		 shared ? shared : DEFAULT_SHARED_DIR, name);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s (shared/ must sit beside the checkout)", path);
	while (fgets(line, sizeof(line), f)) {
		unsigned s[4], d[4], sl, dl, splo, sphi, dplo, dphi, proto, pmask;

		if (sscanf(line, "@%u.%u.%u.%u/%u %u.%u.%u.%u/%u %u : %u %u : %u %x/%x",
			   &s[0], &s[1], &s[2], &s[3], &sl, &d[0], &d[1], &d[2], &d[3], &dl,
			   &splo, &sphi, &dplo, &dphi, &proto, &pmask) != 16)
			continue;
		if (n == cap)
			r = realloc(r, (cap *= 2) * sizeof(*r));
		memset(&r[n], 0, sizeof(r[n]));
		r[n].family = 4;
		for (int i = 0; i < 4; i++) {
			r[n].src[i] = (uint8_t)s[i];
			r[n].dst[i] = (uint8_t)d[i];
		}
		/* ClassBench writes the address bits beyond the length too. */
		for (unsigned bit = sl; bit < 32; bit++)
			r[n].src[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
		for (unsigned bit = dl; bit < 32; bit++)
			r[n].dst[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
		r[n].src_len = sl;
		r[n].dst_len = dl;
		r[n].proto = pmask == 0xff ? (int)proto : -1;
		r[n].ports = !(splo == 0 && sphi == 65535 && dplo == 0 && dphi == 65535);
		r[n].sp_lo = (uint16_t)splo;
		r[n].sp_hi = (uint16_t)sphi;
		r[n].dp_lo = (uint16_t)dplo;
		r[n].dp_hi = (uint16_t)dphi;
		n++;
	}
	fclose(f);
	*out = r;
	return n;
}

static void random_in_prefix(uint8_t *a, const uint8_t *p, unsigned len, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		a[i] = (uint8_t)rnd();
	for (unsigned bit = 0; bit < len; bit++) {
		unsigned mask = 0x80u >> (bit % 8);

		a[bit / 8] = (uint8_t)((a[bit / 8] & ~mask) | (p[bit / 8] & mask));
	}
}

static void random_key(const struct naive_rule *r, uint32_t n, uint8_t family,
		       struct pkt_key *k)
{
	static const uint8_t protos[] = {6, 17, 1, 58, 132, 47};
	unsigned bytes = family == 6 ? 16 : 4;

	memset(k, 0, sizeof(*k));
	k->family = family;
	if (rnd() & 1) {		/* inside a random rule's box */
		const struct naive_rule *x = &r[rnd() % n];

		random_in_prefix(k->src, x->src, x->src_len, bytes);
		random_in_prefix(k->dst, x->dst, x->dst_len, bytes);
		k->proto = x->proto >= 0 ? (uint8_t)x->proto : protos[rnd() % 6];
		k->sport = (uint16_t)rnd_in(x->sp_lo, x->sp_hi);
		k->dport = (uint16_t)rnd_in(x->dp_lo, x->dp_hi);
	} else {
		random_in_prefix(k->src, k->src, 0, bytes);
		random_in_prefix(k->dst, k->dst, 0, bytes);
		k->proto = rnd() % 4 ? protos[rnd() % 6] : (uint8_t)rnd();
		k->sport = (uint16_t)rnd();
		k->dport = (uint16_t)rnd();
	}
	k->has_ports = k->proto == 6 || k->proto == 17 || k->proto == 132;
	if (!k->has_ports)
		k->sport = k->dport = 0;
}

static void check_against_naive(const struct naive_rule *r, uint32_t n, uint8_t family,
				const char *what)
{
	struct rfw_acl_entry *e = malloc(n * sizeof(*e));
	struct cls_hs_built built;
	uint32_t bad = 0, matched = 0;

	for (uint32_t i = 0; i < n; i++)
		to_entry(&r[i], i + 1, &e[i]);
	assert_int_equal(cls_hs_build(&built, e, n, NULL), 0);
	print_message("%s: %u rules, %u nodes, %zu bytes, depth %u, largest leaf %u\n",
		      what, n, built.table.node_count, cls_hs_bytes(&built.table),
		      built.max_depth_seen, built.max_leaf_seen);

	for (uint32_t q = 0; q < QUERIES; q++) {
		struct pkt_key k;
		uint32_t want, got;

		random_key(r, n, family, &k);
		want = naive_lookup(r, n, &k);
		got = cls_hs_lookup(&built.table, &k);
		matched += want != 0;
		if (want != got && bad++ < 5)
			print_message("%s: query %u: naive rule %u, compiled rule %u\n",
				      what, q, want, got);
	}
	{	/* the burst path over as many keys, some non-IP and some of
		 * the other family (a burst whose packets start at different
		 * roots) */
		struct pkt_key *keys = calloc(QUERIES, sizeof(*keys));
		const struct pkt_key **ptr = calloc(QUERIES, sizeof(*ptr));
		uint32_t *got = calloc(QUERIES, sizeof(*got));

		for (uint32_t i = 0; i < QUERIES; i++) {
			random_key(r, n, family, &keys[i]);
			if (i % 97 == 0)
				keys[i].family = 0;
			else if (i % 89 == 0) {
				keys[i].family = family == 6 ? 4 : 6;
				if (keys[i].family == 4) {	/* IPv4 keys: words 1..3 zero */
					memset(keys[i].src + 4, 0, 12);
					memset(keys[i].dst + 4, 0, 12);
				}
			}
			ptr[i] = &keys[i];
		}
		cls_hs_lookup_batch(&built.table, ptr, QUERIES, got);
		for (uint32_t i = 0; i < QUERIES; i++)
			if (got[i] != (keys[i].family ? naive_lookup(r, n, &keys[i]) : 0) &&
			    bad++ < 5)
				print_message("%s: burst key %u: compiled rule %u\n", what, i, got[i]);
		free(keys);
		free(ptr);
		free(got);
	}
	print_message("%s: %u queries, %u matched a rule, %u disagreements\n",
		      what, QUERIES, matched, bad);
	assert_int_equal(bad, 0);
	assert_true(matched > QUERIES / 4);	/* the queries exercise the rules */
	cls_hs_free(&built);
	free(e);
}

static void classbench(const char *name)
{
	struct naive_rule *r;
	uint32_t n = load_classbench(name, &r);

	assert_true(n > 500);
	check_against_naive(r, n, 4, name);
	free(r);
}

static void test_acl1_1k(void **s) { (void)s; classbench("acl1_1k"); }
static void test_fw1_1k(void **s) { (void)s; classbench("fw1_1k"); }
static void test_ipc1_1k(void **s) { (void)s; classbench("ipc1_1k"); }
static void test_acl1_10k(void **s) { (void)s; classbench("acl1_10k"); }
static void test_fw1_10k(void **s) { (void)s; classbench("fw1_10k"); }
static void test_ipc1_10k(void **s) { (void)s; classbench("ipc1_10k"); }

/* IPv6: prefixes of every length drawn around a few bases, so rules
 * overlap and split inside all four address words. */
static void test_ipv6_random(void **s)
{
	enum { N = 2000 };
	struct naive_rule *r = calloc(N, sizeof(*r));
	uint8_t bases[4][16] = {
		{0xfd, 0, 0, 0x10}, {0xfd, 0, 0, 0x10, 0, 1}, {0x20, 0x01, 0x0d, 0xb8},
		{0xfd, 0, 0xab, 0xcd, 0, 0, 0, 0, 1, 2, 3, 4},
	};
	(void)s;

	for (uint32_t i = 0; i < N; i++) {
		r[i].family = 6;
		r[i].src_len = rnd_in(8, 128);	/* no catch-all rule */
		r[i].dst_len = rnd() % 3 ? rnd_in(8, 128) : 0;
		random_in_prefix(r[i].src, bases[rnd() % 4], rnd_in(32, 100), 16);
		random_in_prefix(r[i].dst, bases[rnd() % 4], rnd_in(32, 100), 16);
		for (unsigned bit = r[i].src_len; bit < 128; bit++)
			r[i].src[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
		for (unsigned bit = r[i].dst_len; bit < 128; bit++)
			r[i].dst[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
		r[i].proto = rnd() % 2 ? 6 : 17;
		r[i].ports = rnd() % 2;
		r[i].sp_lo = 0;
		r[i].sp_hi = 65535;
		r[i].dp_lo = (uint16_t)rnd_in(0, 2000);
		r[i].dp_hi = (uint16_t)rnd_in(r[i].dp_lo, 4000);
	}
	check_against_naive(r, N, 6, "ipv6-random");
	free(r);
}

/* An interface condition of the kinds policies make: a zone of one
 * interface, a zone of neighbours, scattered interfaces, none at all. */
static uint32_t random_ifaces(void)
{
	uint32_t lo = rnd_in(0, 31), len;

	switch (rnd() % 5) {
	case 0:
		return 1u << lo;
	case 1:
		len = rnd_in(1, 32 - lo);
		return (len == 32 ? UINT32_MAX : (1u << len) - 1) << lo;
	case 2:
		return (uint32_t)rnd() & (uint32_t)rnd();
	case 3:
		return UINT32_MAX;
	default:
		return 0;
	}
}

static uint8_t random_ifindex(void)
{
	return rnd() % 8 ? (uint8_t)rnd_in(0, 33) : (uint8_t)rnd_in(34, 255);
}

/* Interfaces inside the leaf lanes (format 1.5): rules with in and out
 * interface sets of every shape, protocols with and without ports,
 * against the linear scan for packets from and to every interface index
 * (including none, 32 and above). The compiled answer must be the same
 * for the single lookup and the burst. */
static void test_interfaces_random(void **s)
{
	enum { N = 3000, Q = QUERIES / 2 };
	struct naive_rule *r = calloc(N, sizeof(*r));
	struct rfw_acl_entry *e = calloc(N, sizeof(*e));
	struct pkt_key *keys = calloc(Q, sizeof(*keys));
	const struct pkt_key **ptr = calloc(Q, sizeof(*ptr));
	uint32_t *got = calloc(Q, sizeof(*got)), bad = 0, matched = 0;
	struct cls_table linear = {.entries = e, .count = N};
	struct cls_hs_built built;
	(void)s;

	for (uint32_t i = 0; i < N; i++) {
		r[i].family = 4;
		r[i].src_len = rnd() % 3 ? rnd_in(0, 12) : rnd_in(13, 32);
		r[i].dst_len = rnd() % 3 ? rnd_in(0, 12) : rnd_in(13, 32);
		random_in_prefix(r[i].src, r[i].src, 0, 4);
		random_in_prefix(r[i].dst, r[i].dst, 0, 4);
		r[i].proto = rnd() % 3 ? (rnd() % 2 ? 6 : 17) : -1;
		r[i].ports = r[i].proto >= 0 && rnd() % 2;
		r[i].sp_hi = 65535;
		r[i].dp_lo = (uint16_t)rnd_in(0, 1000);
		r[i].dp_hi = (uint16_t)rnd_in(r[i].dp_lo, 2000);
		to_entry(&r[i], i + 1, &e[i]);
		memset(e[i].src + r[i].src_len / 8, 0, 16 - r[i].src_len / 8);
		memset(e[i].dst + r[i].dst_len / 8, 0, 16 - r[i].dst_len / 8);
		if (r[i].src_len % 8)
			e[i].src[r[i].src_len / 8] = r[i].src[r[i].src_len / 8] &
						     (uint8_t)(0xff00u >> (r[i].src_len % 8));
		if (r[i].dst_len % 8)
			e[i].dst[r[i].dst_len / 8] = r[i].dst[r[i].dst_len / 8] &
						     (uint8_t)(0xff00u >> (r[i].dst_len % 8));
		if (rnd() % 3) {
			e[i].flags |= RFW_ACL_IN_IF;
			e[i].in_ifaces = random_ifaces();
		}
		if (rnd() % 3) {
			e[i].flags |= RFW_ACL_OUT_IF;
			e[i].out_ifaces = random_ifaces();
		}
		if (i == N - 1)		/* every packet ends at some rule */
			e[i] = (struct rfw_acl_entry){.family = 4, .rule = N};
	}
	assert_int_equal(cls_hs_build(&built, e, N, NULL), 0);
	for (uint32_t q = 0; q < Q; q++) {
		random_key(r, N, 4, &keys[q]);
		keys[q].in_if = random_ifindex();
		keys[q].out_if = random_ifindex();
		ptr[q] = &keys[q];
	}
	cls_hs_lookup_batch(&built.table, ptr, Q, got);
	for (uint32_t q = 0; q < Q; q++) {
		uint32_t want = cls_lookup(&linear, &keys[q]);

		matched += want != N;
		if ((got[q] != want || cls_hs_lookup(&built.table, &keys[q]) != want) && bad++ < 5)
			print_message("query %u (in %u, out %u): linear rule %u, compiled %u\n", q,
				      keys[q].in_if, keys[q].out_if, want, got[q]);
	}
	print_message("interfaces: %u queries, %u before the last rule, %u disagreements\n", Q,
		      matched, bad);
	assert_int_equal(bad, 0);
	assert_true(matched > Q / 4);
	cls_hs_free(&built);
	free(got);
	free(ptr);
	free(keys);
	free(e);
	free(r);
}

/* Does the lane of entry `entry` ask for its full entry? */
static int lane_asks_full(const struct cls_hs_built *b, uint32_t entry)
{
	for (uint32_t i = 0; i < b->table.leaf_entry_count * RFW_CLS_LANES; i++)
		if (b->leaf_entries[i] == entry)
			return !!(b->leaves[i / RFW_CLS_LANES].hi[RFW_CLS_KW_IFACES][i % RFW_CLS_LANES] &
				  RFW_CLS_LEAF_FULL);
	fail_msg("entry %u is in no leaf", entry);
	return -1;
}

/* Which lanes the interface word says exactly, so that a packet through
 * a zone rule costs no read of its 64-byte entry: one in interface to
 * any out set that is a run of indices, any in run to any out; the
 * rest asks for the entry, rules that name only the out side among
 * them (in is the word's high field). */
static void test_interface_lanes_exact(void **s)
{
	static const struct {
		uint16_t flags;
		uint8_t proto;
		uint32_t in, out;
		int full;
	} c[] = {
		{RFW_ACL_IN_IF | RFW_ACL_OUT_IF, 0, 1u << 0, 1u << 1, 0},	/* zone to zone */
		{RFW_ACL_IN_IF | RFW_ACL_OUT_IF, 0, 1u << 2, 0x70, 0},		/* to a zone of three */
		{RFW_ACL_IN_IF, 0, 0x0c, 0, 0},					/* from a run */
		{RFW_ACL_OUT_IF | RFW_ACL_IN_IF, 0, 1u << 7, 1u << 31, 0},
		{RFW_ACL_OUT_IF, 0, 0, 1u << 31, 1},	/* out only: in, the high field, spans all */
		{RFW_ACL_IN_IF | RFW_ACL_PROTO | RFW_ACL_PORTS, 6, 1u << 3, 0, 0},
		{RFW_ACL_IN_IF | RFW_ACL_OUT_IF, 0, 0x06, 1u << 5, 1},		/* run to one: two ranges */
		{RFW_ACL_IN_IF, 0, 0x05, 0, 1},					/* not a run */
		{RFW_ACL_IN_IF, 0, 0, 0, 1},					/* no interface */
		{RFW_ACL_PORTS, 0, 0, 0, 1},			/* ports without one protocol */
		{RFW_ACL_IN_IF | RFW_ACL_STATE, 0, 1u << 0, 0, 1},
	};
	enum { N = sizeof(c) / sizeof(c[0]) };
	struct rfw_acl_entry e[N];
	struct cls_hs_built built;
	(void)s;

	for (uint32_t i = 0; i < N; i++)
		e[i] = (struct rfw_acl_entry){.family = 4, .flags = c[i].flags, .proto = c[i].proto,
					      .sport_hi = 65535, .dport_hi = 65535, .rule = i + 1,
					      .in_ifaces = c[i].in, .out_ifaces = c[i].out,
					      .state_mask = 1};
	assert_int_equal(cls_hs_build(&built, e, N, NULL), 0);
	for (uint32_t i = 0; i < N; i++) {
		if (lane_asks_full(&built, i) != c[i].full)
			print_message("case %u: full %d, want %d\n", i, !c[i].full, c[i].full);
		assert_int_equal(lane_asks_full(&built, i), c[i].full);
	}
	cls_hs_free(&built);
}

/* Pack entries and their trees into an artifact as rulec does, the leaf
 * entries section short by short_lanes. */
static void *pack_with(const struct rfw_acl_entry *e, uint32_t n, const struct cls_hs_built *b,
		       size_t *len, uint32_t short_lanes)
{
	struct rfw_policy pol = {.rule_count = n};
	struct rfw_rule *rules = calloc(n + 1, sizeof(*rules));
	static const char strings[] = "default";
	struct rfw_section_in secs[4 + CLS_HS_SECTIONS] = {
		{RFW_SEC_POLICY, sizeof(pol), &pol, sizeof(pol), 1},
		{RFW_SEC_STRINGS, 1, strings, sizeof(strings), sizeof(strings)},
		{RFW_SEC_RULES, sizeof(*rules), rules, (n + 1) * sizeof(*rules), n + 1},
		{RFW_SEC_ACL, sizeof(*e), e, n * sizeof(*e), n},
	};
	void *buf;

	for (uint32_t i = 1; i <= n; i++)
		rules[i] = (struct rfw_rule){.first_entry = i - 1, .entry_count = 1};
	cls_hs_sections(b, secs + 4);
	for (unsigned i = 4; i < 4 + CLS_HS_SECTIONS; i++)
		if (secs[i].type == RFW_SEC_CLS_LEAF_ENTRIES) {
			secs[i].count -= short_lanes;
			secs[i].size -= short_lanes * sizeof(uint32_t);
		}
	buf = rfw_build(secs, 4 + CLS_HS_SECTIONS, RFW_FEAT_ACL_LINEAR | RFW_FEAT_ACL_HSPLIT | RFW_FEAT_CLS_IFACE_KEY, len);
	free(rules);
	return buf;
}

static void *pack(const struct rfw_acl_entry *e, uint32_t n, const struct cls_hs_built *b,
		  size_t *len)
{
	return pack_with(e, n, b, len, 0);
}

static void reseal(uint8_t *buf, size_t len)
{
	struct rfw_header *h = (struct rfw_header *)buf;

	h->checksum = 0;
	h->checksum = crc32c(0, buf, len);
}

/* Through the artifact: the loaded trees give the linear scan's answer,
 * and a tree that could loop or read outside the entries is refused. */
static void test_artifact_trees(void **s)
{
	struct naive_rule *r;
	uint32_t n = load_classbench("fw1_1k", &r);
	struct rfw_acl_entry *e = malloc(n * sizeof(*e));
	struct cls_hs_built built;
	struct rfw_view v;
	struct cls_table compiled, linear = {0};
	char err[256];
	size_t len;
	uint8_t *buf;
	(void)s;

	for (uint32_t i = 0; i < n; i++)
		to_entry(&r[i], i + 1, &e[i]);
	assert_int_equal(cls_hs_build(&built, e, n, NULL), 0);
	buf = pack(e, n, &built, &len);
	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), 0);
	assert_non_null(v.cls_trees);
	cls_table_init(&compiled, &v);
	assert_true(compiled.compiled);
	linear.entries = v.acl;
	linear.count = v.acl_count;
	for (uint32_t q = 0; q < 20000; q++) {
		struct pkt_key k;

		random_key(r, n, 4, &k);
		assert_int_equal(cls_lookup(&compiled, &k), cls_lookup(&linear, &k));
	}

	{	/* a split pointing back at itself: a lookup would loop */
		struct rfw_cls_node *nodes = (struct rfw_cls_node *)(uintptr_t)v.cls_nodes;
		uint32_t inner = 0;

		while (nodes[inner].dim == RFW_CLS_LEAF || nodes[inner].kind != RFW_CLS_SPLIT)
			inner++;
		nodes[inner].right = inner;
		reseal(buf, len);
		assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "classifier node"));
	}
	free(buf);

	buf = pack(e, n, &built, &len);
	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), 0);
	{	/* a cut whose last child is the cut itself */
		struct rfw_cls_node *nodes = (struct rfw_cls_node *)(uintptr_t)v.cls_nodes;
		uint32_t *children = (uint32_t *)(uintptr_t)v.cls_children;
		uint32_t cut = 0;

		while (nodes[cut].dim == RFW_CLS_LEAF || nodes[cut].kind != RFW_CLS_CUT)
			cut++;
		children[nodes[cut].left + nodes[cut].right] = cut;
		reseal(buf, len);
		assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "classifier node"));
	}
	free(buf);

	buf = pack(e, n, &built, &len);
	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), 0);
	((uint32_t *)(uintptr_t)v.cls_leaf_entries)[0] = n;	/* past the last entry */
	reseal(buf, len);
	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "leaf entry"));
	free(buf);

	/* a cut node claiming more children than the section holds */
	buf = pack(e, n, &built, &len);
	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), 0);
	{
		struct rfw_cls_node *nodes = (struct rfw_cls_node *)(uintptr_t)v.cls_nodes;
		uint32_t cut = 0;

		while (cut < v.cls_node_count && nodes[cut].kind != RFW_CLS_CUT)
			cut++;
		assert_true(cut < v.cls_node_count);
		nodes[cut].right = v.cls_child_count;
	}
	reseal(buf, len);
	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "classifier node"));
	free(buf);

	/* a leaf record with bits this reader does not know */
	buf = pack(e, n, &built, &len);
	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), 0);
	((struct rfw_cls_leaf_block *)(uintptr_t)v.cls_leaves)[0].hi[RFW_CLS_KW_IFACES][1] |= 0x4000u;
	reseal(buf, len);
	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "malformed"));
	free(buf);

	/* a lane without an entry that a packet could pass */
	buf = pack(e, n, &built, &len);
	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), 0);
	{
		uint32_t lane = 0;

		while (lane < v.cls_leaf_count * RFW_CLS_LANES && v.cls_leaf_entries[lane] != RFW_CLS_NONE)
			lane++;
		assert_true(lane < v.cls_leaf_count * RFW_CLS_LANES);
		((struct rfw_cls_leaf_block *)(uintptr_t)v.cls_leaves)[lane / RFW_CLS_LANES]
			.lo[RFW_CLS_KW_IFACES][lane % RFW_CLS_LANES] = RFW_CLS_IFACES_KEY_MAX;
	}
	reseal(buf, len);
	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "malformed"));
	free(buf);

	/* a classifier of format 1.4 (no interface word in the lanes) */
	buf = pack(e, n, &built, &len);
	((struct rfw_header *)(void *)buf)->features &= ~(uint64_t)RFW_FEAT_CLS_IFACE_KEY;
	reseal(buf, len);
	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "compile the policy again"));
	free(buf);

	/* leaf entries that do not cover every lane of the leaves */
	buf = pack_with(e, n, &built, &len, 1);
	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "leaf entries"));
	free(buf);
	cls_hs_free(&built);
	free(e);
	free(r);
}

#ifdef RAMPART_CLS_HS_AVX2
/* This program is built a second time with runtime/cls_hs.c compiled for
 * AVX2 without AVX-512 (tests/unit/CMakeLists.txt), so the AVX2 leaf
 * check is tested on a CPU whose native build takes the AVX-512 path. */
#if !defined(__AVX2__) || defined(__AVX512F__)
#error "the AVX2 variant must be built with AVX2 and without AVX-512"
#endif
static void test_no_avx2_here(void **s)
{
	(void)s;
	skip();		/* this CPU cannot run the AVX2 build */
}
#endif

int main(void)
{
#ifdef RAMPART_CLS_HS_AVX2
	if (!__builtin_cpu_supports("avx2")) {
		const struct CMUnitTest none[] = {cmocka_unit_test(test_no_avx2_here)};

		return cmocka_run_group_tests_name("cls_hs_avx2", none, NULL, NULL);
	}
#endif
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_acl1_1k),
		cmocka_unit_test(test_fw1_1k),
		cmocka_unit_test(test_ipc1_1k),
		cmocka_unit_test(test_acl1_10k),
		cmocka_unit_test(test_fw1_10k),
		cmocka_unit_test(test_ipc1_10k),
		cmocka_unit_test(test_ipv6_random),
		cmocka_unit_test(test_interfaces_random),
		cmocka_unit_test(test_interface_lanes_exact),
		cmocka_unit_test(test_artifact_trees),
	};
#ifdef RAMPART_CLS_HS_AVX2
	return cmocka_run_group_tests_name("cls_hs_avx2", tests, NULL, NULL);
#else
	return cmocka_run_group_tests_name("cls_hs", tests, NULL, NULL);
#endif
}
