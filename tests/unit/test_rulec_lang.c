/* The whole policy language (POLICY.md) end to end: every key compiled and
 * checked through the runtime's own code on the loaded artifact —
 * cls_lookup for rules, cls_entry_matches over the NAT entries,
 * lpm_lookup over the route table and address sets — plus the policy
 * defaults, limits, host bypass and rule positions; every new error pinned
 * in a must-fail fixture; warnings pinned, and --strict making them errors
 * with nothing written; includes with a cycle and a name in two files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <glob.h>

#include "cls.h"
#include "lpm.h"
#include "rulec.h"
#include "values.h"
#include "test_rulec_util.h"

#define LANG DATA "/good/lang/main.yaml"

static uint8_t iface(const struct rfw_view *v, const char *name)
{
	for (uint32_t i = 0; i < v->interface_count; i++)
		if (strcmp(v->interfaces[i].name, name) == 0)
			return (uint8_t)i;
	fail_msg("no interface %s", name);
	return 0xff;
}

static struct pkt_key key(const char *proto, const char *src, uint16_t sport, const char *dst,
			  uint16_t dport)
{
	struct pkt_key k = {.in_if = 0xff, .out_if = 0xff, .ct_state = RFW_STATE_NEW};
	uint8_t f2;

	assert_int_equal(val_parse_addr(src, &k.family, k.src), 0);
	assert_int_equal(val_parse_addr(dst, &f2, k.dst), 0);
	k.proto = (uint8_t)val_parse_proto(proto);
	k.has_ports = (uint8_t)val_proto_has_ports(k.proto);
	k.sport = sport;
	k.dport = dport;
	return k;
}

/* The NAT rule the runtime would pick: first NAT entry that matches. */
static uint32_t nat_lookup(const struct rfw_view *v, const struct pkt_key *k)
{
	struct cls_sets sets = {v->sets, v->set_count, v->lpm_data};

	for (uint32_t i = 0; i < v->nat_acl_count; i++)
		if (cls_entry_matches(&sets, &v->nat_acl[i], k))
			return v->nat_acl[i].rule;
	return 0;
}

static uint32_t route_lookup(const struct rfw_view *v, const char *addr)
{
	const struct rfw_lpm_ref *ref;
	struct lpm t;
	uint8_t fam, a[16];

	assert_int_equal(val_parse_addr(addr, &fam, a), 0);
	ref = fam == 6 ? &v->route_table->v6 : &v->route_table->v4;
	if (ref->offset == RFW_LPM_NONE)
		return 0;
	t = (struct lpm){v->lpm_data + ref->offset, v->lpm_data + ref->offset + LPM_ROOT_SIZE,
			 ref->group_count, fam == 6 ? 16 : 4};
	return lpm_lookup(&t, a);
}

static void test_lang_queries(void **state)
{
	struct rfw_view v;
	void *buf;

	(void)state;
	compile_view(LANG, &v, &buf);
	/* Every "# query:" line of the fixture, through cls_lookup. */
	assert_int_equal(expect_file_queries(&v, LANG), 34);
	free(buf);
}

static void expect_refused_query(const struct rfw_view *v, const char *q, const char *want)
{
	char ans[256] = "", err[512] = "";

	if (rulec_query_line(v, q, ans, sizeof(ans), err, sizeof(err)) == 0)
		fail_msg("query '%s' answered '%s', want refused with '%s'", q, ans, want);
	if (strcmp(err, want) != 0)
		fail_msg("query '%s': got '%s', want '%s'", q, err, want);
}

/* An ICMP query without a type (or a code) is answered only when every
 * type (code) gets the same rule; before, it silently asked about type 0
 * (echo-reply) code 0. */
static void test_icmp_query_without_type(void **state)
{
	struct rfw_view v;
	void *buf;

	(void)state;
	compile_view(LANG, &v, &buf);
	expect_refused_query(&v, "icmp 8.8.8.8 9.9.9.9",
			     "the answer depends on the ICMP type: 3/3 meets rule 12 'unreach', 3/4 "
			     "rule 7 'frag-needed'; give the type after the destination "
			     "(9.9.9.9:TYPE[/CODE], e.g. 9.9.9.9:echo-request)");
	expect_refused_query(&v, "icmpv6 fd00::1 fd00::2",
			     "the answer depends on the ICMP type: 3/3 meets rule 0 'default', 128/3 "
			     "rule 6 'ping'; give the type after the destination ([fd00::2]:TYPE[/CODE], "
			     "e.g. [fd00::2]:echo-request)");
	expect_refused_query(&v, "icmp 8.8.8.8 9.9.9.9:destination-unreachable",
			     "the answer depends on the ICMP code: 3/3 meets rule 12 'unreach', 3/4 "
			     "rule 7 'frag-needed'; give the code after the type (9.9.9.9:3/3)");
	/* the same answer for every code of the type (and good/objects.yaml's
	 * queries without a type: the same for every type there) */
	expect_answer(&v, "icmp 8.8.8.8 9.9.9.9:echo-request", "6 ping accept");
	free(buf);
}

static void test_lang_sections(void **state)
{
	const struct rfw_policy *p;
	struct cls_sets sets;
	struct cls_table t;
	struct pkt_key k;
	struct rfw_view v;
	uint8_t a[16], fam;
	void *buf;

	(void)state;
	compile_view(LANG, &v, &buf);
	p = v.policy;
	/* defaults */
	assert_int_equal(p->rule_count, 12);
	assert_int_equal(p->default_action, RFW_ACTION_DROP);
	assert_int_equal(p->stateful, 0);
	assert_int_equal(p->max_flows, 5000);
	assert_int_equal(p->tcp_mss, 1400);
	assert_true(v.hdr->features & RFW_FEAT_TCP_MSS);
	assert_int_equal(p->timeout[RFW_TIMEOUT_TCP_SYN], 10);
	assert_int_equal(p->timeout[RFW_TIMEOUT_TCP_ESTABLISHED], 3600);
	assert_int_equal(p->timeout[RFW_TIMEOUT_TCP_CLOSING], 30);
	assert_int_equal(p->timeout[RFW_TIMEOUT_UDP], 20);
	assert_int_equal(p->timeout[RFW_TIMEOUT_UDP_STREAM], 180);
	assert_int_equal(p->timeout[RFW_TIMEOUT_ICMP], 30);
	assert_int_equal(p->timeout[RFW_TIMEOUT_OTHER], 60);
	/* interfaces in order of first mention, zones as bit masks */
	assert_int_equal(p->interface_count, 5);
	assert_string_equal(v.interfaces[0].name, "eth0");
	assert_string_equal(v.interfaces[3].name, "eth3");
	assert_string_equal(v.interfaces[4].name, "eth4");	/* from routes */
	assert_int_equal(v.zone_count, 2);
	assert_string_equal(v.strings + v.zones[1].name_off, "inside");
	assert_int_equal(v.zones[1].ifaces, 0x6);
	assert_int_equal(v.interfaces[2].zone, 1);
	assert_int_equal(v.interfaces[3].zone, RFW_NONE);
	/* include first: rule 1 comes from objects/common.yaml */
	assert_string_equal(rfw_rule_name(&v, 1), "from-include");
	assert_non_null(v.rule_source);
	assert_int_equal(v.rule_source[2].line, 28);
	assert_int_equal(v.rule_source[2].column, 5);
	/* address sets: the file list and the negation, one entry each */
	assert_int_equal(v.set_count, 2);
	assert_string_equal(v.strings + v.sets[0].name_off, "bogons");
	assert_int_equal(v.sets[0].prefix_count, 5);
	assert_int_equal(v.rules[2].entry_count, 1);
	assert_true(v.acl[v.rules[2].first_entry].flags & RFW_ACL_SRC_SET);
	assert_true(v.acl[v.rules[2].first_entry].flags & RFW_ACL_IN_IF);
	assert_int_equal(v.acl[v.rules[2].first_entry].in_ifaces, 1);
	sets = (struct cls_sets){v.sets, v.set_count, v.lpm_data};
	val_parse_addr("127.1.2.3", &fam, a);
	assert_true(cls_set_member(&sets, 0, 4, a));
	val_parse_addr("8.8.8.8", &fam, a);
	assert_false(cls_set_member(&sets, 0, 4, a));
	val_parse_addr("fc00::1", &fam, a);
	assert_true(cls_set_member(&sets, 0, 6, a));
	assert_true(v.acl[v.rules[5].first_entry].flags & RFW_ACL_SRC_NOT);
	/* log, limits */
	assert_int_equal(v.rules[3].flags, RFW_RULE_LOG);
	assert_int_equal(v.rules[3].limit, 1);
	assert_int_equal(v.limit_count, 2);
	assert_int_equal(v.limits[0].rule, 3);
	assert_int_equal(v.limits[0].rate, 1000);
	assert_int_equal(v.limits[0].interval_ms, 1000);
	assert_int_equal(v.limits[0].burst, 2000);
	assert_int_equal(v.limits[0].per, RFW_LIMIT_PER_SOURCE);
	assert_int_equal(v.limits[1].rule, 6);
	assert_int_equal(v.limits[1].interval_ms, 60000);
	assert_int_equal(v.limits[1].burst, 10);
	assert_int_equal(v.limits[1].per, RFW_LIMIT_PER_RULE);
	assert_int_equal(v.rules[4].flags, 0);
	/* tcp flags and state as the entry carries them */
	assert_int_equal(v.acl[v.rules[8].first_entry].tcp_mask, 0x12);
	assert_int_equal(v.acl[v.rules[8].first_entry].tcp_value, 0x02);
	assert_int_equal(v.acl[v.rules[9].first_entry].state_mask,
			 RFW_STATE_ESTABLISHED | RFW_STATE_RELATED);
	/* the classifier: zone from + zone to */
	cls_table_init(&t, &v);
	k = key("tcp", "10.1.2.3", 1000, "8.8.8.8", 80);
	k.in_if = iface(&v, "eth2");
	k.out_if = iface(&v, "eth0");
	assert_int_equal(cls_lookup(&t, &k), 4);
	k.out_if = iface(&v, "eth2");
	assert_int_equal(cls_lookup(&t, &k), 0);

	/* NAT: numbered from 1, [0] unused, entries carry the NAT number */
	assert_int_equal(p->nat_count, 3);
	assert_int_equal(v.nat_rules[1].kind, RFW_NAT_MASQUERADE);
	assert_int_equal(v.nat_rules[1].family, 4);
	assert_int_equal(v.nat_rules[1].port_lo, 1024);
	assert_int_equal(v.nat_rules[1].port_hi, 65535);
	assert_int_equal(v.nat_rules[2].kind, RFW_NAT_SNAT);
	assert_memory_equal(v.nat_rules[2].addr_lo, ((uint8_t[4]){198, 51, 100, 10}), 4);
	assert_memory_equal(v.nat_rules[2].addr_hi, ((uint8_t[4]){198, 51, 100, 21}), 4);
	assert_int_equal(v.nat_rules[2].port_lo, 20000);
	assert_int_equal(v.nat_rules[3].kind, RFW_NAT_DNAT);
	assert_memory_equal(v.nat_rules[3].addr_lo, ((uint8_t[4]){10, 1, 0, 10}), 4);
	assert_int_equal(v.nat_rules[3].port_lo, 80);
	assert_string_equal(v.strings + v.nat_rules[3].name_off, "web-forward");
	k = key("udp", "10.1.9.9", 5000, "9.9.9.9", 53);
	k.out_if = iface(&v, "eth0");
	assert_int_equal(nat_lookup(&v, &k), 1);
	k.out_if = iface(&v, "eth1");
	assert_int_equal(nat_lookup(&v, &k), 0);
	k = key("tcp", "10.2.3.4", 5000, "9.9.9.9", 443);
	k.out_if = iface(&v, "eth0");
	assert_int_equal(nat_lookup(&v, &k), 2);
	k = key("tcp", "9.9.9.9", 5000, "203.0.113.10", 8080);
	k.in_if = iface(&v, "eth0");
	assert_int_equal(nat_lookup(&v, &k), 3);
	k.dport = 80;
	assert_int_equal(nat_lookup(&v, &k), 0);
	/* masquerade is IPv4 unless the match says otherwise */
	k = key("udp", "2001:db8:1::1", 5000, "2001:db8:9::9", 53);
	k.out_if = iface(&v, "eth0");
	assert_int_equal(nat_lookup(&v, &k), 0);

	/* routes: LPM value = index + 1 */
	assert_int_equal(p->route_count, 5);
	assert_non_null(v.route_table);
	assert_int_equal(route_lookup(&v, "10.1.2.5"), 3);
	assert_int_equal(v.routes[2].interface, iface(&v, "eth2"));
	assert_int_equal(v.routes[2].has_via, 1);
	assert_int_equal(route_lookup(&v, "10.1.9.9"), 2);
	assert_int_equal(v.routes[1].has_via, 0);
	assert_int_equal(route_lookup(&v, "8.8.8.8"), 1);
	assert_int_equal(route_lookup(&v, "2001:db8:77::1"), 4);
	assert_int_equal(v.routes[3].family, 6);
	assert_int_equal(route_lookup(&v, "192.168.9.200"), 5);

	/* host bypass */
	assert_int_equal(v.host_addr_count, 2);
	assert_int_equal(v.host_addrs[1].family, 6);
	assert_int_equal(v.host_pass_count, 5);
	assert_int_equal(v.host_pass[0].kind, RFW_HOST_PASS_ARP);
	assert_int_equal(v.host_pass[1].kind, RFW_HOST_PASS_NDP);
	assert_int_equal(v.host_pass[2].kind, RFW_HOST_PASS_SERVICE);
	assert_int_equal(v.host_pass[2].proto, 6);
	assert_int_equal(v.host_pass[2].port_lo, 22);
	assert_int_equal(v.host_pass[3].port_hi, 68);
	assert_int_equal(v.host_pass[4].proto, 1);
	assert_int_equal(v.host_pass[4].port_hi, 65535);
	free(buf);
}

static const char *const bad_fixtures[] = {
	"lang_parse", "lang_expand", "lang_nat", "lang_routes", "lang_ifaces", "lang_zones", "lang_mss",
	"lang_rpf", "lang_alias",
	"inc_cycle/main", "inc_dup/main", "inc_err/main",
};

static void test_lang_errors(void **state)
{
	char path[512], out[512];

	(void)state;
	snprintf(out, sizeof(out), "%s/bad.rfw", tmpdir);
	for (size_t i = 0; i < sizeof(bad_fixtures) / sizeof(bad_fixtures[0]); i++) {
		snprintf(path, sizeof(path), DATA "/bad/%s.yaml", bad_fixtures[i]);
		check_fixture(path, out, 0);
	}
}

/* Warnings print and the artifact is written; --strict: errors, nothing. */
static void test_lang_warnings(void **state)
{
	char out[512], cmd[1024], got[4096];
	const char *path = DATA "/bad/lang_warnings.yaml";

	(void)state;
	snprintf(out, sizeof(out), "%s/warn.rfw", tmpdir);
	check_fixture(path, out, 0);
	check_fixture(path, out, 1);
	unlink(out);
	snprintf(cmd, sizeof(cmd), RULEC " compile --strict %s -o %s 2>&1", path, out);
	assert_int_equal(run(cmd, got, sizeof(got)), 1);
	assert_non_null(strstr(got, "rulec: 10 errors, nothing written\n"));
	assert_false(exists(out));
	snprintf(cmd, sizeof(cmd), RULEC " check %s 2>&1", path);
	assert_int_equal(run(cmd, got, sizeof(got)), 0);
	assert_non_null(strstr(got, ": warning: zone 'spare' is never used"));
}

static void test_lang_cli(void **state)
{
	char cmd[2048], out[16384], rfw[512], q[512];
	FILE *f;

	(void)state;
	snprintf(rfw, sizeof(rfw), "%s/lang.rfw", tmpdir);
	snprintf(q, sizeof(q), "%s/q.txt", tmpdir);
	snprintf(cmd, sizeof(cmd), RULEC " compile " LANG " -o %s 2>&1", rfw);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	snprintf(cmd, sizeof(cmd),
		 RULEC " query %s --in eth1 --out eth0 tcp 10.1.2.3:1000 8.8.8.8:80 2>&1", rfw);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_string_equal(out, "4 lan-out accept\n");
	snprintf(cmd, sizeof(cmd), RULEC " query %s --in eth7 tcp 10.1.2.3:1000 8.8.8.8:80 2>&1", rfw);
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	assert_string_equal(out, "rulec: unknown interface 'eth7' (the policy names: eth0, eth1, eth2, eth3, eth4)\n");
	snprintf(cmd, sizeof(cmd), RULEC " query %s icmp 8.8.8.8 9.9.9.9:echo-request 2>&1", rfw);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_string_equal(out, "6 ping accept\n");
	snprintf(cmd, sizeof(cmd), RULEC " query %s --state established --tcp-flags ack tcp 1.1.1.1:1 2.2.2.2:2 2>&1", rfw);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_string_equal(out, "9 established accept\n");
	f = fopen(q, "w");
	assert_non_null(f);
	fputs("tcp 10.1.2.3:1000 8.8.8.8:80\n--out eth1 tcp 10.1.2.3:1000 8.8.8.8:80\n"
	      "--state bogus tcp 1.1.1.1 2.2.2.2\n", f);
	fclose(f);
	/* Command-line options apply to every batch line. */
	snprintf(cmd, sizeof(cmd), RULEC " query %s --in eth1 --out eth0 --batch %s 2>/dev/null", rfw, q);
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	assert_string_equal(out, "4 lan-out accept\n0 default drop\n");
	snprintf(cmd, sizeof(cmd), RULEC " query %s --in eth1 --out eth0 --batch %s 2>&1 >/dev/null", rfw, q);
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	snprintf(cmd, sizeof(cmd),
		 "%s:3: error: unknown state 'bogus' (new, established, related or invalid)\n", q);
	assert_string_equal(out, cmd);
	snprintf(cmd, sizeof(cmd), RULEC " dump %s 2>&1", rfw);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "  nat-rules   offset"));
	assert_non_null(strstr(out, "  route-table offset"));
	assert_non_null(strstr(out, "defaults: action drop, stateful false, max_flows 5000, timeouts tcp_syn=10 "));
	assert_non_null(strstr(out, " other=60, tcp_mss 1400\n"));
	assert_non_null(strstr(out, "   0 bogons           5 prefixes, 524288 bytes\n"));
	assert_non_null(strstr(out, "     3 web-forward      dnat       10.1.0.10 port 80 1 entry\n"));
	assert_non_null(strstr(out, "  10.1.2.0/24 via 10.1.0.1 dev eth2\n"));
	assert_non_null(strstr(out, "  rule 3 web-in: 1000 per 1000 ms, burst 2000, per source\n"));
	assert_non_null(strstr(out, "   2 eth2             zone inside\n"));
	assert_non_null(strstr(out, "host pass: 5\n  arp\n  ndp\n  proto 6 ports 22-22\n"));
	assert_non_null(strstr(out, "     3 web-in                   accept 3 entries log limit 1 (line 32)\n"));
}

/* The ready-made policies (policies/) and the examples compile with no
 * warning at all (--strict), and answer a few questions as their comments
 * promise. */
static void test_policies(void **state)
{
	static const char *const pats[] = {RAMPART_SOURCE_DIR "/policies/*.yaml",
					   RAMPART_SOURCE_DIR "/examples/policies/*.yaml"};
	char out[512];
	struct rfw_view v;
	void *buf;
	size_t total = 0;

	(void)state;
	snprintf(out, sizeof(out), "%s/policy.rfw", tmpdir);
	for (size_t p = 0; p < 2; p++) {
		glob_t g;

		assert_int_equal(glob(pats[p], 0, NULL, &g), 0);
		for (size_t i = 0; i < g.gl_pathc; i++) {
			struct rulec_opts opts = {.strict = 1};

			if (rulec_compile_file_opts(g.gl_pathv[i], out, stderr, &opts) != 0)
				fail_msg("%s does not compile cleanly", g.gl_pathv[i]);
			total++;
		}
		globfree(&g);
	}
	assert_true(total >= 4);
	compile_view(RAMPART_SOURCE_DIR "/policies/server.yaml", &v, &buf);
	expect_answer(&v, "tcp 8.8.8.8:40000 203.0.113.2:443", "1 web accept");
	expect_answer(&v, "tcp 10.9.9.9:40000 203.0.113.2:22", "2 ssh-admins accept");
	expect_answer(&v, "tcp 8.8.8.8:40000 203.0.113.2:22", "3 ssh-others reject");
	expect_answer(&v, "--state established udp 8.8.8.8:53 203.0.113.2:40000", "5 replies accept");
	expect_answer(&v, "udp 8.8.8.8:53 203.0.113.2:40000", "0 default drop");
	free(buf);
	compile_view(RAMPART_SOURCE_DIR "/policies/router-masquerade.yaml", &v, &buf);
	expect_answer(&v, "--in eth1 --out eth0 tcp 192.168.10.7:5000 1.1.1.1:443", "1 lan-out accept");
	expect_answer(&v, "--in eth0 --out eth1 tcp 1.1.1.1:5000 192.168.10.80:443",
		      "2 web-published accept");
	expect_answer(&v, "--in eth0 --out eth1 tcp 1.1.1.1:5000 192.168.10.7:443", "0 default drop");
	assert_int_equal(v.policy->nat_count, 2);
	assert_int_equal(v.policy->route_count, 2);
	assert_int_equal(v.policy->tcp_mss, RFW_TCP_MSS_CLAMP);
	assert_int_equal(v.policy->rpf, RFW_RPF_STRICT);
	assert_true(v.hdr->features & RFW_FEAT_RPF);
	free(buf);
	compile_view(RAMPART_SOURCE_DIR "/policies/blocklist.yaml", &v, &buf);
	expect_answer(&v, "udp 198.19.1.1:1 8.8.8.8:53", "1 drop-blocked drop");
	expect_answer(&v, "udp [2001:db8:bad::1]:1 [2001:db8::1]:53", "1 drop-blocked drop");
	expect_answer(&v, "udp 10.1.1.1:1 8.8.8.8:53", "2 drop-bogons drop");
	expect_answer(&v, "udp 8.8.4.4:1 8.8.8.8:53", "0 default accept");
	free(buf);
}

/* The complete example of the contract (shared/POLICY.md) compiles as it
 * stands (its include and list stubbed in the scratch directory) and
 * answers as its comments say. */
static void test_contract_example(void **state)
{
	char path[512], line[1024];
	FILE *in = fopen(RAMPART_SOURCE_DIR "/../shared/POLICY.md", "r"), *out;
	struct rfw_view v;
	void *buf;
	int copying = 0, done = 0;

	(void)state;
	if (!in)
		skip();
	tmp_path(path, sizeof(path), "objects");
	mkdir(path, 0755);
	tmp_path(path, sizeof(path), "lists");
	mkdir(path, 0755);
	tmp_path(path, sizeof(path), "objects/common.yaml");
	out = fopen(path, "w");
	fputs("networks: {common_unused: [192.0.2.0/24]}\n", out);
	fclose(out);
	tmp_path(path, sizeof(path), "lists/bogons.txt");
	out = fopen(path, "w");
	fputs("0.0.0.0/8\n127.0.0.0/8  # loopback\n240.0.0.0/4\n", out);
	fclose(out);
	tmp_path(path, sizeof(path), "contract.yaml");
	out = fopen(path, "w");
	assert_non_null(out);
	while (!done && fgets(line, sizeof(line), in)) {
		if (copying && strncmp(line, "```", 3) == 0)
			done = 1;
		else if (copying)
			fputs(line, out);
		else if (strncmp(line, "```yaml", 7) == 0)
			copying = 1;
	}
	fclose(in);
	fclose(out);
	assert_true(done);
	compile_view(path, &v, &buf);
	assert_int_equal(v.policy->rule_count, 5);
	expect_answer(&v, "--in eth0 tcp 127.0.0.1:1 203.0.113.10:443", "1 drop-bogons drop");
	expect_answer(&v, "--in eth0 tcp 8.8.8.8:1 203.0.113.10:443", "2 web-in accept");
	expect_answer(&v, "--in eth1 --out eth0 udp 10.1.2.3:1 8.8.8.8:53", "3 lan-out accept");
	expect_answer(&v, "tcp 8.8.8.8:1 9.9.9.9:23", "4 no-telnet reject");
	expect_answer(&v, "udp 37.184.89.217:7648 37.184.85.17:24050", "5 classbench-style accept");
	expect_answer(&v, "udp 37.184.89.217:7649 37.184.85.17:24050", "0 default drop");
	assert_int_equal(v.policy->nat_count, 3);
	assert_int_equal(v.policy->route_count, 2);
	assert_int_equal(v.host_pass_count, 3);
	free(buf);
}

/* A network becomes an address set above 64 prefixes (docs/policy.md). */
static void test_set_threshold(void **state)
{
	char path[512];
	struct rfw_view v;
	void *buf;

	(void)state;
	for (unsigned n = 64; n <= 65; n++) {
		FILE *f;

		tmp_path(path, sizeof(path), "threshold.yaml");
		f = fopen(path, "w");
		assert_non_null(f);
		fputs("version: 1\nnetworks:\n  many: [", f);
		for (unsigned i = 0; i < n; i++)
			fprintf(f, "%s10.%u.0.0/16", i ? ", " : "", i);
		fputs("]\nrules:\n  - {name: r, from: {network: many}, action: accept}\n", f);
		fclose(f);
		compile_view(path, &v, &buf);
		assert_int_equal(v.acl_count, n == 64 ? 64 : 1);
		assert_int_equal(v.set_count, n == 64 ? 0 : 1);
		expect_answer(&v, "udp 10.63.1.1:1 1.1.1.1:2", "1 r accept");
		expect_answer(&v, "udp 10.200.1.1:1 1.1.1.1:2", "0 default drop");
		free(buf);
	}
}

/* docs/policy.schema.json accepts every shipped policy and the fixture
 * that uses every key, and refuses a misspelt key (python3-jsonschema when
 * installed, else the script's own subset validator; skipped without
 * python3-yaml). */
static void test_schema(void **state)
{
	char out[8192];
	int rc;

	(void)state;
	rc = run("/usr/bin/python3 " DATA "/validate_schema.py " RAMPART_SOURCE_DIR
		 "/docs/policy.schema.json " RAMPART_SOURCE_DIR "/policies/*.yaml " RAMPART_SOURCE_DIR
		 "/examples/policies/*.yaml " DATA "/good/lang/main.yaml " DATA
		 "/good/lang/objects/common.yaml " DATA "/good/objects.yaml 2>&1",
		 out, sizeof(out));
	if (rc == 77) {
		printf("%s", out);
		skip();
	}
	if (rc != 0)
		fail_msg("schema validation failed:\n%s", out);
	printf("%s", out);
	rc = run("/usr/bin/python3 " DATA "/validate_schema.py " RAMPART_SOURCE_DIR
		 "/docs/policy.schema.json " DATA "/bad/unknown_key.yaml 2>&1", out, sizeof(out));
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "actoin"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lang_queries),
		cmocka_unit_test(test_icmp_query_without_type),
		cmocka_unit_test(test_lang_sections),
		cmocka_unit_test(test_lang_errors),
		cmocka_unit_test(test_lang_warnings),
		cmocka_unit_test(test_lang_cli),
		cmocka_unit_test(test_policies),
		cmocka_unit_test(test_contract_example),
		cmocka_unit_test(test_set_threshold),
		cmocka_unit_test(test_schema),
	};

	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
