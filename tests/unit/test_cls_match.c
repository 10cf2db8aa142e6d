/* The conditions beyond the 5-tuple, through a real artifact: address
 * sets (and their negation) stored as LPM tables, ICMP type/code, TCP
 * flags, conntrack state and interfaces; and the loader refusing sets and
 * LPM tables that would read outside the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "artifact.h"
#include "cls.h"
#include "cls_hs.h"
#include "crc32c.h"
#include "lpm.h"

enum { NRULES = 7 };

struct built {
	uint8_t *buf;
	size_t len;
	struct rfw_view view;
	struct cls_table table;
};

static void set_id(uint8_t *addr, uint32_t id)
{
	memset(addr, 0, 16);
	addr[0] = (uint8_t)id;
	addr[1] = (uint8_t)(id >> 8);
}

/* Rules:
 *  1 drop    src in set 0 (10.9.0.0/16, 10.8.1.0/24, fd00:9::/32)
 *  2 accept  icmp echo-request (type 8 code 0)
 *  3 drop    tcp syn,!ack from outside the set 1 (10.1.0.0/16)
 *  4 accept  state established
 *  5 accept  in on interface 1, to udp/53
 *  6 accept  ipv6 to set 0 (the v6 part)
 *  7 drop    everything else */
static void build(struct built *b)
{
	static const char strings[] = "default\0r";
	struct rfw_policy pol = {.rule_count = NRULES, .interface_count = 2};
	struct rfw_rule rules[NRULES + 1];
	struct rfw_acl_entry e[NRULES];
	struct rfw_interface ifs[2] = {{.name = "eth0", .zone = RFW_NONE},
				      {.name = "eth1", .zone = RFW_NONE}};
	struct rfw_set sets[2];
	struct lpm_builder lb;
	struct lpm t;
	uint32_t *lpm = NULL;
	uint64_t words = 0;
	struct cls_hs_built hs;
	struct rfw_section_in secs[7 + CLS_HS_SECTIONS];
	char err[256];

	memset(e, 0, sizeof(e));
	memset(rules, 0, sizeof(rules));
	memset(sets, 0, sizeof(sets));
	/* Two sets: 0 has v4 and v6 tables, 1 only v4. */
	struct { unsigned bytes; uint8_t a[16]; unsigned len; int set; } pfx[] = {
		{4, {10, 9}, 16, 0}, {4, {10, 8, 1}, 24, 0},
		{16, {0xfd, 0, 0, 9}, 32, 0}, {4, {10, 1}, 16, 1},
	};
	for (int s = 0; s < 2; s++) {
		for (unsigned fam = 4; fam <= 16; fam += 12) {
			struct rfw_lpm_ref *ref = fam == 4 ? &sets[s].v4 : &sets[s].v6;
			int any = 0;

			assert_int_equal(lpm_builder_init(&lb, fam), 0);
			for (unsigned i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
				if (pfx[i].set == s && pfx[i].bytes == fam) {
					assert_int_equal(lpm_add(&lb, pfx[i].a, pfx[i].len, 1), 0);
					any = 1;
				}
			assert_int_equal(lpm_build(&lb, &t), 0);
			if (!any) {
				ref->offset = RFW_LPM_NONE;
			} else {
				uint64_t w = LPM_WORDS(t.group_count);

				lpm = realloc(lpm, (words + w) * sizeof(*lpm));
				memcpy(lpm + words, t.root, LPM_ROOT_SIZE * sizeof(*lpm));
				if (t.group_count)
					memcpy(lpm + words + LPM_ROOT_SIZE, t.groups,
					       (size_t)t.group_count * LPM_GROUP_SIZE * sizeof(*lpm));
				ref->offset = words;
				ref->group_count = t.group_count;
				words += w;
			}
			lpm_builder_free(&lb);
		}
	}

	for (uint32_t i = 0; i < NRULES; i++) {
		e[i].rule = i + 1;
		rules[i + 1] = (struct rfw_rule){.name_off = 8, .first_entry = i, .entry_count = 1,
						 .action = RFW_ACTION_ACCEPT};
	}
	e[0].flags = RFW_ACL_SRC_SET;
	set_id(e[0].src, 0);
	e[1] = (struct rfw_acl_entry){.family = 4, .proto = 1, .icmp_type = 8, .icmp_code = 0,
				      .flags = RFW_ACL_PROTO | RFW_ACL_ICMP_TYPE | RFW_ACL_ICMP_CODE,
				      .rule = 2};
	e[2] = (struct rfw_acl_entry){.family = 4, .proto = 6, .tcp_mask = 0x12, .tcp_value = 0x02,
				      .flags = RFW_ACL_PROTO | RFW_ACL_TCP_FLAGS | RFW_ACL_SRC_SET |
					       RFW_ACL_SRC_NOT, .rule = 3};
	set_id(e[2].src, 1);
	e[3] = (struct rfw_acl_entry){.state_mask = RFW_STATE_ESTABLISHED, .flags = RFW_ACL_STATE,
				      .rule = 4};
	e[4] = (struct rfw_acl_entry){.proto = 17, .in_ifaces = 1u << 1, .sport_hi = 65535,
				      .dport_lo = 53, .dport_hi = 53,
				      .flags = RFW_ACL_PROTO | RFW_ACL_PORTS | RFW_ACL_IN_IF, .rule = 5};
	e[5] = (struct rfw_acl_entry){.family = 6, .flags = RFW_ACL_DST_SET, .rule = 6};
	set_id(e[5].dst, 0);
	e[6] = (struct rfw_acl_entry){.rule = 7};

	assert_int_equal(cls_hs_build(&hs, e, NRULES, NULL), 0);
	secs[0] = (struct rfw_section_in){RFW_SEC_POLICY, sizeof(pol), &pol, sizeof(pol), 1};
	secs[1] = (struct rfw_section_in){RFW_SEC_STRINGS, 1, strings, sizeof(strings), sizeof(strings)};
	secs[2] = (struct rfw_section_in){RFW_SEC_RULES, sizeof(rules[0]), rules, sizeof(rules), NRULES + 1};
	secs[3] = (struct rfw_section_in){RFW_SEC_ACL, sizeof(e[0]), e, sizeof(e), NRULES};
	secs[4] = (struct rfw_section_in){RFW_SEC_INTERFACES, sizeof(ifs[0]), ifs, sizeof(ifs), 2};
	secs[5] = (struct rfw_section_in){RFW_SEC_SETS, sizeof(sets[0]), sets, sizeof(sets), 2};
	secs[6] = (struct rfw_section_in){RFW_SEC_LPM_DATA, 4, lpm, words * 4, words};
	cls_hs_sections(&hs, secs + 7);
	b->buf = rfw_build(secs, 7 + CLS_HS_SECTIONS, RFW_FEAT_ACL_LINEAR | RFW_FEAT_ACL_HSPLIT | RFW_FEAT_CLS_IFACE_KEY, &b->len);
	assert_non_null(b->buf);
	cls_hs_free(&hs);
	free(lpm);
	assert_int_equal(rfw_view_init(&b->view, b->buf, b->len, err, sizeof(err)), 0);
	assert_int_equal(b->view.set_count, 2);
	cls_table_init(&b->table, &b->view);
	assert_true(b->table.compiled);
}

static struct pkt_key v4(const uint8_t src[4], const uint8_t dst[4], uint8_t proto)
{
	struct pkt_key k = {.family = 4, .proto = proto};

	memcpy(k.src, src, 4);
	memcpy(k.dst, dst, 4);
	k.has_ports = proto == 6 || proto == 17;
	return k;
}

/* Same answer from the compiled trees and the linear scan. */
static uint32_t lookup(const struct built *b, const struct pkt_key *k)
{
	struct cls_table linear = b->table;
	const struct pkt_key *one[1] = {k};
	uint32_t batch;

	linear.compiled = 0;
	cls_lookup_batch(&b->table, one, 1, &batch);
	assert_int_equal(cls_lookup(&linear, k), cls_lookup(&b->table, k));
	assert_int_equal(batch, cls_lookup(&b->table, k));
	return batch;
}

static void test_conditions(void **state)
{
	struct built b;
	struct pkt_key k;
	(void)state;

	build(&b);
	k = v4((uint8_t[]){10, 9, 3, 4}, (uint8_t[]){10, 1, 0, 1}, 17);
	assert_int_equal(lookup(&b, &k), 1);			/* in set 0 */
	k = v4((uint8_t[]){10, 8, 1, 200}, (uint8_t[]){10, 1, 0, 1}, 6);
	assert_int_equal(lookup(&b, &k), 1);
	k = v4((uint8_t[]){10, 8, 2, 1}, (uint8_t[]){10, 1, 0, 1}, 1);
	k.icmp_type = 8;
	assert_int_equal(lookup(&b, &k), 2);			/* echo request */
	k.icmp_code = 1;
	assert_int_equal(lookup(&b, &k), 7);
	k = v4((uint8_t[]){10, 2, 0, 1}, (uint8_t[]){10, 1, 0, 1}, 6);
	k.tcp_flags = 0x02;					/* SYN from outside set 1 */
	assert_int_equal(lookup(&b, &k), 3);
	k.tcp_flags = 0x12;					/* SYN+ACK: not rule 3 */
	assert_int_equal(lookup(&b, &k), 7);
	k.ct_state = RFW_STATE_ESTABLISHED;
	assert_int_equal(lookup(&b, &k), 4);
	k = v4((uint8_t[]){10, 1, 0, 9}, (uint8_t[]){10, 1, 0, 1}, 6);
	k.tcp_flags = 0x02;					/* SYN from inside set 1 */
	assert_int_equal(lookup(&b, &k), 7);
	k = v4((uint8_t[]){10, 3, 0, 1}, (uint8_t[]){10, 1, 0, 1}, 17);
	k.dport = 53;
	k.in_if = 0;
	assert_int_equal(lookup(&b, &k), 7);
	k.in_if = 1;
	assert_int_equal(lookup(&b, &k), 5);
	memset(&k, 0, sizeof(k));
	k.family = 6;
	k.proto = 58;
	k.dst[0] = 0xfd;
	k.dst[3] = 9;
	assert_int_equal(lookup(&b, &k), 6);			/* v6 part of set 0 */
	k.dst[3] = 10;
	assert_int_equal(lookup(&b, &k), 7);
	k.src[0] = 0xfd;
	k.src[3] = 9;						/* v6 source in set 0 */
	assert_int_equal(lookup(&b, &k), 1);
	free(b.buf);
}

static void reseal(uint8_t *buf, size_t len)
{
	struct rfw_header *h = (struct rfw_header *)buf;

	h->checksum = 0;
	h->checksum = crc32c(0, buf, len);
}

static void expect_refused(struct built *b, const char *needle)
{
	struct rfw_view v;
	char err[256] = "";

	reseal(b->buf, b->len);
	assert_int_equal(rfw_view_init(&v, b->buf, b->len, err, sizeof(err)), -1);
	if (!strstr(err, needle))
		fail_msg("error '%s' does not mention '%s'", err, needle);
}

/* cls_prefix_match against a bit-by-bit reference: every length 0..128,
 * addresses that differ in exactly one bit (before, at and after the
 * prefix's end) and random pairs. */
static int prefix_ref(const uint8_t *a, const uint8_t *p, unsigned len)
{
	for (unsigned i = 0; i < len && i < 128; i++)
		if ((a[i / 8] ^ p[i / 8]) & (0x80 >> (i % 8)))
			return 0;
	return 1;
}

static void test_prefix_match(void **state)
{
	uint64_t r = 0x243f6a8885a308d3ull;

	(void)state;
	for (unsigned len = 0; len <= 130; len++) {
		for (unsigned bit = 0; bit < 128; bit++) {
			uint8_t a[16], p[16];

			for (unsigned i = 0; i < 16; i++) {
				r = r * 6364136223846793005ull + 1442695040888963407ull;
				a[i] = (uint8_t)(r >> 56);
			}
			memcpy(p, a, 16);
			p[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
			assert_int_equal(cls_prefix_match(a, p, len), bit >= len);
			assert_int_equal(cls_prefix_match(a, p, len), prefix_ref(a, p, len));
			for (unsigned i = 0; i < 16; i++) {
				r = r * 6364136223846793005ull + 1442695040888963407ull;
				p[i] = (uint8_t)(r >> 56);
			}
			assert_int_equal(cls_prefix_match(a, p, len), prefix_ref(a, p, len));
		}
	}
}

static void test_refuses_bad_sets(void **state)
{
	struct built b;
	(void)state;

	build(&b);	/* an entry naming a set that does not exist */
	((struct rfw_acl_entry *)(uintptr_t)b.view.acl)[0].src[0] = 2;
	expect_refused(&b, "bad address set");
	free(b.buf);

	build(&b);	/* an LPM child past the table's groups */
	{
		uint32_t *data = (uint32_t *)(uintptr_t)b.view.lpm_data;
		uint64_t i = b.view.sets[0].v4.offset;

		while (!(data[i] & LPM_CHILD))
			i++;
		data[i] = LPM_CHILD | 999;
	}
	expect_refused(&b, "address set 0");
	free(b.buf);

	build(&b);	/* a table reaching past the data */
	((struct rfw_set *)(uintptr_t)b.view.sets)[1].v4.group_count = 1000000;
	expect_refused(&b, "address set 1");
	free(b.buf);

	build(&b);	/* more interfaces than the policy says */
	((struct rfw_policy *)(uintptr_t)b.view.policy)->interface_count = 3;
	expect_refused(&b, "interfaces");
	free(b.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conditions),
		cmocka_unit_test(test_refuses_bad_sets),
		cmocka_unit_test(test_prefix_match),
	};
	return cmocka_run_group_tests_name("cls_match", tests, NULL, NULL);
}
