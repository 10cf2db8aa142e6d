/* The .rfw container: a built artifact reads back section for section, and
 * every kind of damage (magic, version, checksum, truncation, bounds,
 * references) is refused with a reason instead of being used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "artifact.h"
#include "crc32c.h"
#include "rulec.h"

static const char strings[] = "default\0allow-web\0deny-all";

/* Two rules: 1 allow-web (one entry), 2 deny-all (one entry). */
static void *build_sample(size_t *len)
{
	struct rfw_policy pol = {.rule_count = 2, .default_action = RFW_ACTION_DROP};
	struct rfw_rule rules[3] = {
		{.name_off = 0, .action = RFW_ACTION_DROP},
		{.name_off = 8, .action = RFW_ACTION_ACCEPT, .first_entry = 0, .entry_count = 1},
		{.name_off = 18, .action = RFW_ACTION_DROP, .first_entry = 1, .entry_count = 1},
	};
	struct rfw_acl_entry acl[2] = {
		{.family = 4, .dst = {10, 0, 0, 1}, .dst_len = 32, .proto = 6,
		 .flags = RFW_ACL_PROTO | RFW_ACL_PORTS, .sport_hi = 65535,
		 .dport_lo = 80, .dport_hi = 80, .rule = 1},
		{.rule = 2},
	};
	const char source[] = "sample.yaml";
	struct rfw_section_in secs[] = {
		{RFW_SEC_POLICY, sizeof(pol), &pol, sizeof(pol), 1},
		{RFW_SEC_STRINGS, 1, strings, sizeof(strings), sizeof(strings)},
		{RFW_SEC_RULES, sizeof(rules[0]), rules, sizeof(rules), 3},
		{RFW_SEC_ACL, sizeof(acl[0]), acl, sizeof(acl), 2},
		{RFW_SEC_SOURCE, 1, source, sizeof(source), sizeof(source)},
	};
	return rfw_build(secs, 5, RFW_FEAT_ACL_LINEAR, len);
}

/* Recompute the checksum after a deliberate edit, so the test reaches the
 * check behind the checksum. */
static void reseal(uint8_t *buf, size_t len)
{
	struct rfw_header *h = (struct rfw_header *)buf;

	h->checksum = 0;
	h->checksum = crc32c(0, buf, len);
}

static void expect_refused(const void *buf, size_t len, const char *needle)
{
	struct rfw_view v;
	char err[256] = "";

	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), -1);
	if (!strstr(err, needle))
		fail_msg("error '%s' does not mention '%s'", err, needle);
}

static void test_round_trip(void **state)
{
	size_t len;
	uint8_t *buf = build_sample(&len);
	struct rfw_view v;
	char err[256];
	(void)state;

	assert_non_null(buf);
	assert_int_equal(len % RFW_ALIGN, 0);
	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), 0);
	assert_int_equal(v.policy->rule_count, 2);
	assert_int_equal(v.acl_count, 2);
	assert_string_equal(rfw_rule_name(&v, 0), "default");
	assert_string_equal(rfw_rule_name(&v, 1), "allow-web");
	assert_string_equal(rfw_rule_name(&v, 2), "deny-all");
	assert_string_equal(rfw_rule_name(&v, 3), "?");
	assert_int_equal(v.rules[1].action, RFW_ACTION_ACCEPT);
	assert_int_equal(v.acl[0].dport_lo, 80);
	assert_string_equal(v.source, "sample.yaml");
	assert_int_equal((uintptr_t)v.acl % RFW_ALIGN, (uintptr_t)buf % RFW_ALIGN);
	free(buf);
}

static void test_file_round_trip(void **state)
{
	size_t len;
	uint8_t *buf = build_sample(&len);
	char path[] = "/tmp/rampart-test-artifact-XXXXXX";
	int fd = mkstemp(path);
	struct rfw_view v;
	char err[256];
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rfw_write_file(path, buf, len), 0);
	assert_int_equal(rfw_open(&v, path, err, sizeof(err)), 0);
	assert_int_equal(v.size, len);
	assert_memory_equal(v.base, buf, len);
	rfw_close(&v);

	/* A file cut short is refused, not read past its end. */
	assert_int_equal(truncate(path, (off_t)len - 64), 0);
	assert_int_equal(rfw_open(&v, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "truncated"));
	unlink(path);
	assert_int_equal(rfw_open(&v, path, err, sizeof(err)), -1);
	free(buf);
}

static void test_refuses_damage(void **state)
{
	size_t len;
	uint8_t *buf = build_sample(&len);
	struct rfw_header *h = (struct rfw_header *)buf;
	(void)state;

	expect_refused(buf, 10, "too short");

	buf[0] ^= 1;
	expect_refused(buf, len, "bad magic");
	buf[0] ^= 1;

	buf[len - 1] ^= 0x40;		/* padding byte: only the checksum sees it */
	expect_refused(buf, len, "checksum");
	buf[len - 1] ^= 0x40;

	h->version_major = RFW_VERSION_MAJOR + 1;
	reseal(buf, len);
	expect_refused(buf, len, "version");
	h->version_major = RFW_VERSION_MAJOR;

	h->header_size += 4;		/* section table would be misaligned */
	reseal(buf, len);
	expect_refused(buf, len, "header size");
	h->header_size -= 4;

	h->features |= 1ull << 40;
	reseal(buf, len);
	expect_refused(buf, len, "features");
	h->features &= ~(1ull << 40);
	reseal(buf, len);

	expect_refused(buf, len - RFW_ALIGN, "truncated");
	free(buf);
}

static struct rfw_section *section_of(uint8_t *buf, uint32_t type)
{
	struct rfw_header *h = (struct rfw_header *)buf;
	struct rfw_section *tab = (struct rfw_section *)(buf + h->header_size);

	for (uint32_t i = 0; i < h->section_count; i++)
		if (tab[i].type == type)
			return &tab[i];
	return NULL;
}

static void test_refuses_bad_references(void **state)
{
	size_t len;
	uint8_t *buf = build_sample(&len);
	struct rfw_section *acl = section_of(buf, RFW_SEC_ACL);
	struct rfw_section *rules = section_of(buf, RFW_SEC_RULES);
	struct rfw_acl_entry *e = (struct rfw_acl_entry *)(buf + acl->offset);
	struct rfw_rule *r = (struct rfw_rule *)(buf + rules->offset);
	(void)state;

	acl->offset = len;		/* section past the end */
	acl->size = 64;
	reseal(buf, len);
	expect_refused(buf, len, "out of bounds");
	free(buf);

	buf = build_sample(&len);
	acl = section_of(buf, RFW_SEC_ACL);
	acl->entry_size = 32;		/* written by another layout */
	reseal(buf, len);
	expect_refused(buf, len, "entries are 32 bytes");
	free(buf);

	buf = build_sample(&len);
	acl = section_of(buf, RFW_SEC_ACL);
	rules = section_of(buf, RFW_SEC_RULES);
	e = (struct rfw_acl_entry *)(buf + acl->offset);
	r = (struct rfw_rule *)(buf + rules->offset);
	e[1].rule = 7;			/* names a rule that does not exist */
	reseal(buf, len);
	expect_refused(buf, len, "bad rule number");
	e[1].rule = 2;

	e[0].dst_len = 33;		/* IPv4 prefix longer than 32 */
	reseal(buf, len);
	expect_refused(buf, len, "bad address");
	e[0].dst_len = 32;

	r[2].name_off = 4096;		/* name outside the string table */
	reseal(buf, len);
	expect_refused(buf, len, "name is out of bounds");
	r[2].name_off = 18;

	r[1].action = 9;
	reseal(buf, len);
	expect_refused(buf, len, "unknown action");
	r[1].action = RFW_ACTION_ACCEPT;

	r[2].entry_count = 5;
	reseal(buf, len);
	expect_refused(buf, len, "entries are out of bounds");
	r[2].entry_count = 1;

	/* defaults.tcp_mss: only 0, clamp or 536.., and set exactly when the
	 * feature bit is (a runtime without the feature refuses the bit) */
	{
		struct rfw_section *ps = section_of(buf, RFW_SEC_POLICY);
		struct rfw_policy *p = (struct rfw_policy *)(buf + ps->offset);
		struct rfw_header *h = (struct rfw_header *)buf;
		struct rfw_view v;
		char err[256];

		p->tcp_mss = 1400;		/* without the bit */
		reseal(buf, len);
		expect_refused(buf, len, "TCP MSS setting 1400");
		h->features |= RFW_FEAT_TCP_MSS;
		reseal(buf, len);
		assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), 0);
		assert_int_equal(v.policy->tcp_mss, 1400);
		p->tcp_mss = RFW_TCP_MSS_CLAMP;
		reseal(buf, len);
		assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), 0);
		p->tcp_mss = 535;
		reseal(buf, len);
		expect_refused(buf, len, "TCP MSS setting 535");
		p->tcp_mss = 0;			/* the bit without a setting */
		reseal(buf, len);
		expect_refused(buf, len, "TCP MSS setting 0");
		h->features &= ~(uint64_t)RFW_FEAT_TCP_MSS;

		p->rpf = RFW_RPF_STRICT;		/* defaults.rpf: the same rule */
		reseal(buf, len);
		expect_refused(buf, len, "reverse path setting 2");
		h->features |= RFW_FEAT_RPF;
		reseal(buf, len);
		assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), 0);
		p->rpf = 3;
		reseal(buf, len);
		expect_refused(buf, len, "reverse path setting 3");
	}
	free(buf);
}

/* A rule name longer than rulec writes (127 bytes) is refused: the
 * daemon's messages and capture comments are sized for rulec's. */
static void test_refuses_long_names(void **state)
{
	for (size_t n = 127; n <= 128; n++) {
		char strings_long[8 + 129] = "default";
		struct rfw_policy pol = {.rule_count = 1, .default_action = RFW_ACTION_DROP};
		struct rfw_rule rules[2] = {
			{.name_off = 0, .action = RFW_ACTION_DROP},
			{.name_off = 8, .action = RFW_ACTION_ACCEPT, .first_entry = 0, .entry_count = 1},
		};
		struct rfw_acl_entry acl[1] = {{.rule = 1}};
		struct rfw_section_in secs[] = {
			{RFW_SEC_POLICY, sizeof(pol), &pol, sizeof(pol), 1},
			{RFW_SEC_STRINGS, 1, strings_long, 8 + n + 1, 8 + n + 1},
			{RFW_SEC_RULES, sizeof(rules[0]), rules, sizeof(rules), 2},
			{RFW_SEC_ACL, sizeof(acl[0]), acl, sizeof(acl), 1},
		};
		struct rfw_view v;
		char err[256] = "";
		size_t len;
		void *buf;
		(void)state;

		memset(strings_long + 8, 'a', n);
		strings_long[8 + n] = '\0';
		buf = rfw_build(secs, 4, RFW_FEAT_ACL_LINEAR, &len);
		assert_non_null(buf);
		if (n < 128)
			assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), 0);
		else
			expect_refused(buf, len, "rule 1 name is out of bounds or too long");
		free(buf);
	}
}

/* A policy with every table whose fields index another: zones over
 * interfaces, rules with limits, NAT rules with their matches, the host
 * pass list. */
static const char policy_all_tables[] =
	"version: 1\n"
	"zones: {wan: [eth0], lan: [eth1]}\n"
	"defaults: {action: drop}\n"
	"rules:\n"
	"  - {name: lan-out, from: {zone: lan}, to: {zone: wan}, action: accept}\n"
	"  - {name: ssh, proto: tcp, to: {port: 22}, action: accept,\n"
	"     limit: {rate: 10/s, per: source}}\n"
	"nat:\n"
	"  - name: out\n"
	"    match: {from: {zone: lan}, to: {zone: wan}}\n"
	"    snat: {to: 10.0.1.1, ports: 1024-65535}\n"
	"routes:\n"
	"  - {prefix: 0.0.0.0/0, via: 10.0.1.254, interface: eth0}\n"
	"host:\n"
	"  addresses: [10.0.1.1]\n"
	"  pass: [arp, ndp, tcp/22]\n";

static void *compile_all_tables(size_t *len)
{
	char path[] = "/tmp/rampart-test-artifact-XXXXXX";
	int fd = mkstemp(path);
	void *buf = NULL;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, policy_all_tables, strlen(policy_all_tables)),
			 (ssize_t)strlen(policy_all_tables));
	close(fd);
	assert_int_equal(rulec_compile(path, stderr, &buf, len), 0);
	unlink(path);
	return buf;
}

/* A field of a compiled artifact changed by edit(), the file resealed:
 * refused with a message naming `needle`. */
static void expect_field_refused(void (*edit)(struct rfw_view *v), const char *needle)
{
	size_t len;
	uint8_t *buf = compile_all_tables(&len);
	struct rfw_view v;
	char err[256];

	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), 0);
	edit(&v);
	reseal(buf, len);
	expect_refused(buf, len, needle);
	free(buf);
}

#define WRITABLE(p) ((void *)(uintptr_t)(p))

static void pass_kind_unknown(struct rfw_view *v)
{
	((struct rfw_host_pass *)WRITABLE(v->host_pass))[2].kind = 9;
}

static void pass_ports_reversed(struct rfw_view *v)
{
	struct rfw_host_pass *h = WRITABLE(v->host_pass);

	h[2].port_lo = 23;	/* tcp/22: 23-22 */
}

static void pass_arp_with_port(struct rfw_view *v)
{
	((struct rfw_host_pass *)WRITABLE(v->host_pass))[0].port_hi = 22;
}

static void zone_past_interfaces(struct rfw_view *v)
{
	((struct rfw_zone *)WRITABLE(v->zones))[0].ifaces |= 1u << v->interface_count;
}

static void host_addr_family(struct rfw_view *v)
{
	((struct rfw_host_addr *)WRITABLE(v->host_addrs))[0].family = 5;
}

static void entry_interface_past(struct rfw_view *v)
{
	struct rfw_acl_entry *e = WRITABLE(v->acl);

	assert_true(e[0].flags & RFW_ACL_IN_IF);
	e[0].in_ifaces |= 1u << 31;
}

static void entry_unknown_flag(struct rfw_view *v)
{
	((struct rfw_acl_entry *)WRITABLE(v->acl))[0].flags |= 1u << 15;
}

static void nat_entry_interface_past(struct rfw_view *v)
{
	((struct rfw_acl_entry *)WRITABLE(v->nat_acl))[0].out_ifaces |= 1u << 5;
}

static void limit_of_other_rule(struct rfw_view *v)
{
	((struct rfw_limit *)WRITABLE(v->limits))[0].rule = 1;	/* rule 2's limit */
}

static void rule_entries_of_other_rule(struct rfw_view *v)
{
	struct rfw_rule *r = WRITABLE(v->rules);

	r[2].first_entry = r[1].first_entry;	/* rule 1's entry, same count */
	r[2].entry_count = 1;
}

static void nat_ports_reversed(struct rfw_view *v)
{
	struct rfw_nat_rule *n = WRITABLE(v->nat_rules);

	n[1].port_lo = 65535;
	n[1].port_hi = 1024;
}

/* Fields that index or bound another table, corrupted in a compiled
 * artifact one at a time: each refused on load with its reason, never
 * handed to the workers or the XDP program. */
static void test_refuses_bad_fields(void **state)
{
	size_t len;
	uint8_t *buf = compile_all_tables(&len);
	struct rfw_view v;
	char err[256];
	(void)state;

	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), 0);
	assert_int_equal(v.host_pass_count, 3);
	assert_int_equal(v.host_pass[2].kind, RFW_HOST_PASS_SERVICE);
	assert_int_equal(v.host_pass[2].port_lo, 22);
	assert_int_equal(v.interface_count, 2);
	assert_int_equal(v.limit_count, 1);
	assert_int_equal(v.rules[2].limit, 1);
	assert_int_equal(v.policy->nat_count, 1);
	free(buf);

	expect_field_refused(pass_kind_unknown, "host pass entry 2 has unknown kind 9");
	expect_field_refused(pass_ports_reversed, "host pass entry 2 has ports out of order (23-22)");
	expect_field_refused(pass_arp_with_port, "host pass entry 0 (arp/ndp) has a protocol or ports");
	expect_field_refused(zone_past_interfaces, "zone 0 names interfaces (0x5) past the 2");
	expect_field_refused(host_addr_family, "host address 0 has family 5");
	expect_field_refused(entry_interface_past, "acl entry 0 names interfaces past the 2");
	expect_field_refused(entry_unknown_flag, "acl entry 0 has unknown flags 0x8000");
	expect_field_refused(nat_entry_interface_past, "nat acl entry 0 names interfaces past");
	expect_field_refused(limit_of_other_rule, "rule 2 names a missing limit or another rule's");
	expect_field_refused(rule_entries_of_other_rule, "rule 2 entries belong to another rule");
	expect_field_refused(nat_ports_reversed, "NAT rule 1 has ports out of order (65535-1024)");
}

/* Twelve port forwards and a masquerade: rulec writes a DNAT classifier
 * (format 1.6), not an SNAT one (one entry). */
static void *compile_forwards(size_t *len)
{
	char text[4096], path[] = "/tmp/rampart-test-artifact-XXXXXX";
	int fd = mkstemp(path), at;
	void *buf = NULL;

	at = snprintf(text, sizeof(text),
		      "version: 1\nzones: {wan: [eth0], lan: [eth1]}\nrules:\n"
		      "  - {name: any, action: accept}\nnat:\n");
	for (int i = 0; i < 12; i++)
		at += snprintf(text + at, sizeof(text) - (size_t)at,
			       "  - name: fwd%d\n    match: {from: {zone: wan}, to: {network: 10.0.1.1,"
			       " service: tcp/%d}}\n    dnat: {to: 10.1.0.%d, port: 22}\n",
			       i, 9000 + i, i + 2);
	at += snprintf(text + at, sizeof(text) - (size_t)at,
		       "  - name: out\n    match: {from: {zone: lan}, to: {zone: wan}}\n"
		       "    snat: {to: masquerade}\n"
		       "routes:\n  - {prefix: 0.0.0.0/0, via: 10.0.1.254, interface: eth0}\n");
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, (size_t)at), at);
	close(fd);
	assert_int_equal(rulec_compile(path, stderr, &buf, len), 0);
	unlink(path);
	return buf;
}

static void test_nat_classifier(void **state)
{
	size_t len;
	uint8_t *buf = compile_forwards(&len), *copy = malloc(len);
	struct rfw_view v;
	struct rfw_section *s;
	struct rfw_acl_entry *e;
	uint32_t *lanes;
	char err[256];
	(void)state;

	assert_non_null(copy);
	assert_int_equal(rfw_view_init(&v, buf, len, err, sizeof(err)), 0);
	assert_int_equal(v.hdr->version_minor, 6);
	assert_non_null(v.nat_cls[0].trees);
	assert_int_equal(v.nat_cls[0].entry_count, 12);
	assert_memory_equal(v.nat_cls[0].entries, v.nat_acl, 12 * sizeof(*v.nat_acl));
	assert_null(v.nat_cls[1].trees);
	memcpy(copy, buf, len);

	/* an entry that is not the NAT rules' own */
	e = (struct rfw_acl_entry *)(copy + section_of(copy, RFW_SEC_DNAT_ENTRIES)->offset);
	e[3].dport_lo++;
	reseal(copy, len);
	expect_refused(copy, len, "DNAT classifier entry 3 is not the NAT rules' own");

	/* a leaf lane past the entries */
	memcpy(copy, buf, len);
	s = section_of(copy, RFW_SEC_DNAT_LEAF_ENTRIES);
	lanes = (uint32_t *)(copy + s->offset);
	for (uint64_t i = 0; i < s->count; i++)
		if (lanes[i] != RFW_CLS_NONE) {
			lanes[i] = 12;
			break;
		}
	reseal(copy, len);
	expect_refused(copy, len, "DNAT classifier leaf entry");

	/* trees without their entries */
	memcpy(copy, buf, len);
	section_of(copy, RFW_SEC_DNAT_ENTRIES)->type = 60;	/* a type no reader knows */
	reseal(copy, len);
	expect_refused(copy, len, "DNAT classifier has trees but no entries");

	/* neither: the scan (an artifact of 1.5 and before reads so) */
	memcpy(copy, buf, len);
	for (uint32_t t = RFW_SEC_DNAT_ENTRIES; t <= RFW_SEC_DNAT_LEAF_ENTRIES; t++)
		if ((s = section_of(copy, t)) != NULL)
			s->type = 60 + (t - RFW_SEC_DNAT_ENTRIES) % 4;
	reseal(copy, len);
	assert_int_equal(rfw_view_init(&v, copy, len, err, sizeof(err)), 0);
	assert_null(v.nat_cls[0].trees);
	free(copy);
	free(buf);
}

static void test_crc32c_known_answer(void **state)
{
	(void)state;
	/* RFC 3720 B.4: 32 bytes of zeros -> 0x8a9136aa. */
	uint8_t zeros[32] = {0};
	assert_int_equal(crc32c(0, zeros, sizeof(zeros)), 0x8a9136aa);
	assert_int_equal(crc32c(0, "123456789", 9), 0xe3069283);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_file_round_trip),
		cmocka_unit_test(test_refuses_damage),
		cmocka_unit_test(test_refuses_bad_references),
		cmocka_unit_test(test_refuses_long_names),
		cmocka_unit_test(test_refuses_bad_fields),
		cmocka_unit_test(test_nat_classifier),
		cmocka_unit_test(test_crc32c_known_answer),
	};
	return cmocka_run_group_tests_name("artifact", tests, NULL, NULL);
}
