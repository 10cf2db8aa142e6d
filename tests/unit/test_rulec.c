/* rulec end to end: policies compile to artifacts whose rules and query
 * answers are the hand-computed ones, every must-fail fixture fails with its
 * pinned positioned messages and writes nothing, damaged artifacts are
 * refused, and the CLI prints exactly the documented formats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "rulec.h"
#include "values.h"
#include "diag.h"
#include "test_rulec_util.h"

#define DEMO RAMPART_SOURCE_DIR "/examples/policies/demo.yaml"

static void test_demo_queries(void **state)
{
	struct rfw_view v;
	void *buf;

	(void)state;
	compile_view(DEMO, &v, &buf);
	expect_answer(&v, "tcp 10.10.0.1:40000 10.10.0.2:8080", "1 web-in accept");
	expect_answer(&v, "tcp 10.10.0.1:40000 10.10.0.2:9090", "0 default drop");
	expect_answer(&v, "icmp 10.10.0.1 10.10.0.3", "0 default drop");
	expect_answer(&v, "icmp 10.10.0.1 10.10.0.2", "6 ping-web-server accept");
	expect_answer(&v, "icmp 10.10.0.2 10.10.0.1", "7 ping-replies accept");
	expect_answer(&v, "tcp 10.10.0.2:8080 10.10.0.1:40000", "2 web-replies accept");
	expect_answer(&v, "tcp 10.10.0.2:8081 10.10.0.1:40000", "0 default drop");
	expect_answer(&v, "udp 10.10.0.1:5000 10.10.0.2:7001", "3 echo-in accept");
	expect_answer(&v, "udp 10.10.0.1:5000 10.10.0.2:7002", "0 default drop");
	expect_answer(&v, "udp 10.10.0.2:7000 10.10.0.1:5000", "4 echo-replies accept");
	expect_answer(&v, "udp 192.168.1.1:1 192.168.1.2:9000", "5 no-udp-9000 drop");
	expect_answer(&v, "tcp [fd00:10::1]:40000 [fd00:10::2]:8080", "1 web-in accept");
	expect_answer(&v, "tcp [fd00:10::2]:8080 [fd00:10::1]:40000", "2 web-replies accept");
	expect_answer(&v, "udp [fd00:10::1]:1 [fd00:10::2]:7000", "3 echo-in accept");
	expect_answer(&v, "icmpv6 fd00:10::1 fd00:10::2", "8 ipv6-control accept");
	expect_answer(&v, "58 fd00:10::9 fd00:10::8", "8 ipv6-control accept");
	/* ICMP rules name IPv4 networks only: ICMP between the IPv6 hosts misses. */
	expect_answer(&v, "icmp fd00:10::1 fd00:10::2", "0 default drop");
	/* No port given is port 0, as the runtime's key would say. */
	expect_answer(&v, "tcp 10.10.0.1 10.10.0.2", "0 default drop");
	free(buf);
}

/* The good fixture: every "# query: Q => A" line of the fixture holds. */
static void test_good_fixture_queries(void **state)
{
	const char *path = DATA "/good/objects.yaml";
	struct rfw_view v;
	void *buf;

	(void)state;
	compile_view(path, &v, &buf);
	assert_int_equal(expect_file_queries(&v, path), 22);
	assert_int_equal(v.policy->rule_count, 7);
	assert_string_equal(rfw_rule_name(&v, 3), "rule-3");	/* unnamed rule */
	assert_int_equal(v.rules[1].entry_count, 8);	/* 4 same-family pairs x 2 services */
	assert_int_equal(v.rules[2].entry_count, 9);	/* 3 prefixes x 3 port ranges */
	assert_int_equal(v.rules[6].entry_count, 1);	/* the IPv6 half is skipped */
	assert_int_equal(v.rules[7].entry_count, 1);	/* no icmp entry for IPv6 */
	free(buf);
}

static const char *const bad_fixtures[] = {
	"unknown_key", "bad_action", "bad_address", "host_bits", "unknown_network",
	"cycle", "duplicate_rule", "port_icmp", "yaml_syntax",
	"version_missing", "version_wrong", "families", "proto_service", "many_errors",
	"icmp_family",
};

static void test_error_fixtures(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_fixtures) / sizeof(bad_fixtures[0]); i++) {
		char path[512], out[512];

		snprintf(path, sizeof(path), DATA "/bad/%s.yaml", bad_fixtures[i]);
		tmp_path(out, sizeof(out), "bad.rfw");
		check_fixture(path, out, 0);
	}
}

static void test_missing_file(void **state)
{
	char out[512], *got = NULL;
	size_t len = 0;
	FILE *diag = open_memstream(&got, &len);

	(void)state;
	tmp_path(out, sizeof(out), "none.rfw");
	assert_int_equal(rulec_compile_file(DATA "/no-such.yaml", out, diag), 1);
	fclose(diag);
	assert_non_null(strstr(got, "no-such.yaml: error: cannot open: No such file or directory\n"));
	assert_false(exists(out));
	free(got);
}

struct want_rule {
	const char *name;
	uint8_t action;
	uint32_t entries;
};

static void test_artifact_round_trip(void **state)
{
	static const struct want_rule want[] = {
		{"default", RFW_ACTION_DROP, 0}, {"web-in", RFW_ACTION_ACCEPT, 2},
		{"web-replies", RFW_ACTION_ACCEPT, 2}, {"echo-in", RFW_ACTION_ACCEPT, 2},
		{"echo-replies", RFW_ACTION_ACCEPT, 4}, {"no-udp-9000", RFW_ACTION_DROP, 1},
		{"ping-web-server", RFW_ACTION_ACCEPT, 1}, {"ping-replies", RFW_ACTION_ACCEPT, 1},
		{"ipv6-control", RFW_ACTION_ACCEPT, 1},
	};
	char out[512], err[256];
	struct rfw_view v;
	uint32_t next = 0;
	FILE *f;
	long size;
	int c;

	(void)state;
	tmp_path(out, sizeof(out), "demo.rfw");
	assert_int_equal(rulec_compile_file(DEMO, out, stderr), 0);
	assert_int_equal(rfw_open(&v, out, err, sizeof(err)), 0);
	assert_int_equal(v.policy->rule_count, 8);
	assert_int_equal(v.policy->default_action, RFW_ACTION_DROP);
	assert_string_equal(v.source, DEMO);
	/* The entry list and the compiled trees the workers use. */
	assert_int_equal(v.hdr->features, RFW_FEAT_ACL_LINEAR | RFW_FEAT_ACL_HSPLIT | RFW_FEAT_CLS_IFACE_KEY);
	assert_non_null(v.cls_trees);
	for (uint32_t r = 0; r <= 8; r++) {
		assert_string_equal(rfw_rule_name(&v, r), want[r].name);
		assert_int_equal(v.rules[r].action, want[r].action);
		assert_int_equal(v.rules[r].entry_count, want[r].entries);
		if (r == 0)
			continue;
		/* Entries are contiguous, in rule order, and carry their rule. */
		assert_int_equal(v.rules[r].first_entry, next);
		for (uint32_t e = 0; e < v.rules[r].entry_count; e++)
			assert_int_equal(v.acl[next + e].rule, r);
		next += v.rules[r].entry_count;
	}
	assert_int_equal(next, v.acl_count);
	/* web-in's first entry: clients (10.10.0.1) to servers (10.10.0.2), tcp/8080. */
	assert_int_equal(v.acl[0].family, 4);
	assert_int_equal(v.acl[0].flags, RFW_ACL_PROTO | RFW_ACL_PORTS);
	assert_int_equal(v.acl[0].proto, 6);
	assert_int_equal(v.acl[0].sport_lo, 0);
	assert_int_equal(v.acl[0].sport_hi, 65535);
	assert_int_equal(v.acl[0].dport_lo, 8080);
	assert_int_equal(v.acl[0].dport_hi, 8080);
	assert_memory_equal(v.acl[0].dst, ((uint8_t[4]){10, 10, 0, 2}), 4);
	assert_int_equal(v.acl[0].dst_len, 32);
	/* ipv6-control: proto only, no addresses, no ports. */
	assert_int_equal(v.acl[v.acl_count - 1].family, 0);
	assert_int_equal(v.acl[v.acl_count - 1].flags, RFW_ACL_PROTO);
	assert_int_equal(v.acl[v.acl_count - 1].proto, 58);
	rfw_close(&v);

	/* One byte flipped inside the ACL: the checksum catches it. */
	f = fopen(out, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, 700, SEEK_SET), 0);
	c = fgetc(f);
	assert_int_equal(fseek(f, 700, SEEK_SET), 0);
	fputc(c ^ 0x40, f);
	fclose(f);
	assert_int_equal(rfw_open(&v, out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "checksum mismatch"));

	/* A truncated artifact is refused before anything is used. */
	assert_int_equal(rulec_compile_file(DEMO, out, stderr), 0);
	f = fopen(out, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	assert_int_equal(truncate(out, size - 64), 0);
	assert_int_equal(rfw_open(&v, out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "truncated"));
}

static void expect_refused(const struct rfw_view *v, const char *q, const char *needle)
{
	char ans[256] = "", err[256] = "";

	assert_int_equal(rulec_query_line(v, q, ans, sizeof(ans), err, sizeof(err)), -1);
	if (!strstr(err, needle))
		fail_msg("query '%s': error '%s' lacks '%s'", q, err, needle);
}

static void test_query_errors_and_batch(void **state)
{
	static const char input[] =
		"# comment line\n"
		"tcp 10.10.0.1:40000 10.10.0.2:8080\n"
		"\n"
		"   # indented comment\n"
		"tcp 10.10.0.1 fd00:10::2\n"
		"udp [fd00:10::1]:1 [fd00:10::2]:7001\n"
		"bogus 1.2.3.4 5.6.7.8\n"
		"icmp 10.10.0.1 10.10.0.3\n";
	struct rfw_view v;
	void *buf;
	char *out = NULL, *errs = NULL;
	size_t olen = 0, elen = 0;
	FILE *in, *o, *e;

	(void)state;
	compile_view(DEMO, &v, &buf);
	expect_refused(&v, "tcp 10.0.0.1", "expected 'PROTO SRC[:SPORT] DST[:DPORT]'");
	expect_refused(&v, "tcp 10.0.0.1 10.0.0.2 extra", "expected");
	expect_refused(&v, "tcpp 10.0.0.1 10.0.0.2", "unknown protocol 'tcpp'");
	expect_refused(&v, "256 10.0.0.1 10.0.0.2", "unknown protocol '256'");
	expect_refused(&v, "tcp 10.0.0.1 fd00::1", "both be IPv4 or both IPv6");
	expect_refused(&v, "tcp 10.0.0.300 10.0.0.1", "'10.0.0.300' is not an address");
	expect_refused(&v, "tcp [10.0.0.1]:80 10.0.0.2", "is not an address");
	expect_refused(&v, "tcp 10.0.0.1:99999 10.0.0.2", "bad port");
	expect_refused(&v, "icmp 10.0.0.1:5 10.0.0.2", "protocol 'icmp' has no ports");

	in = fmemopen((void *)input, sizeof(input) - 1, "r");
	o = open_memstream(&out, &olen);
	e = open_memstream(&errs, &elen);
	assert_int_equal(rulec_query_batch(&v, in, "q.txt", o, e), 1);
	fclose(in);
	fclose(o);
	fclose(e);
	assert_string_equal(out, "1 web-in accept\n3 echo-in accept\n0 default drop\n");
	assert_string_equal(errs,
			    "q.txt:5: error: source and destination must both be IPv4 or both IPv6\n"
			    "q.txt:7: error: unknown protocol 'bogus'\n");
	free(out);
	free(errs);
	free(buf);
}

static void query_note(const struct rfw_view *v, const char *q, const char *needle)
{
	char ans[256] = "", err[256] = "x";

	assert_int_equal(rulec_query_line(v, q, ans, sizeof(ans), err, sizeof(err)), 0);
	if (needle ? !strstr(err, needle) : err[0] != '\0')
		fail_msg("query '%s': note '%s', want %s%s", q, err, needle ? "one with " : "none",
			 needle ? needle : "");
}

/* An ICMP error type asked about as new in a stateful policy gets a note:
 * the runtime never judges one so (it follows the flow it quotes, or is
 * invalid). Not with --state, not for an echo request, not when the
 * policy is stateless (there errors meet the rules as new). */
static void test_query_note_icmp_error(void **state)
{
	static const char stateful[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: ping, proto: icmp, action: accept}\n"
		"defaults: {action: drop}\n";
	char path[] = "/tmp/rulec-note-XXXXXX";
	struct rfw_view v;
	void *buf;
	FILE *f;
	int fd;
	(void)state;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(stateful, f);
	fclose(f);
	compile_view(path, &v, &buf);
	unlink(path);
	query_note(&v, "icmp 10.10.0.1 10.10.0.3:3/4", "never judges an ICMP error (type 3)");
	query_note(&v, "icmp 10.10.0.1 10.10.0.3:time-exceeded", "--state invalid");
	query_note(&v, "icmpv6 fd00:10::1 [fd00:10::2]:1/4", "(type 1)");
	query_note(&v, "--state invalid icmp 10.10.0.1 10.10.0.3:3/4", NULL);
	query_note(&v, "icmp 10.10.0.1 10.10.0.3:echo-request", NULL);
	query_note(&v, "tcp 10.10.0.1 10.10.0.2:8080", NULL);
	free(buf);
	compile_view(DEMO, &v, &buf);	/* stateless */
	query_note(&v, "icmp 10.10.0.1 10.10.0.3:3/4", NULL);
	free(buf);
}

static void test_cli(void **state)
{
	char cmd[2048], out[8192], rfw[512], q[512];
	FILE *f;

	(void)state;
	tmp_path(rfw, sizeof(rfw), "cli.rfw");
	tmp_path(q, sizeof(q), "q.txt");
	snprintf(cmd, sizeof(cmd), RULEC " compile " DEMO " -o %s 2>&1", rfw);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	snprintf(cmd, sizeof(cmd), RULEC " check " DEMO " 2>&1");
	assert_int_equal(run(cmd, out, sizeof(out)), 0);

	/* The demo names no interfaces: --in must name one the policy knows. */
	snprintf(cmd, sizeof(cmd),
		 RULEC " query %s --in eth0 tcp 10.10.0.1:40000 10.10.0.2:8080 2>&1", rfw);
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	assert_string_equal(out, "rulec: unknown interface 'eth0' (the policy names no interfaces)\n");
	snprintf(cmd, sizeof(cmd),
		 RULEC " query %s tcp 10.10.0.1:40000 10.10.0.2:8080 2>&1", rfw);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_string_equal(out, "1 web-in accept\n");
	snprintf(cmd, sizeof(cmd), RULEC " query %s tcp '[fd00:10::2]:8080' '[fd00:10::1]:9' 2>&1",
		 rfw);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_string_equal(out, "2 web-replies accept\n");
	snprintf(cmd, sizeof(cmd), RULEC " query %s icmp 10.10.0.1 10.10.0.3 2>&1", rfw);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_string_equal(out, "0 default drop\n");

	f = fopen(q, "w");
	assert_non_null(f);
	fputs("# demo\ntcp 10.10.0.1:40000 10.10.0.2:8080\n\nudp 1.1.1.1 2.2.2.2:9000\nnope\n", f);
	fclose(f);
	/* Answers on stdout, bad lines on stderr, exit 1 at the end. */
	snprintf(cmd, sizeof(cmd), RULEC " query %s --batch %s 2>/dev/null", rfw, q);
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	assert_string_equal(out, "1 web-in accept\n5 no-udp-9000 drop\n");
	snprintf(cmd, sizeof(cmd), RULEC " query %s --batch %s 2>&1 >/dev/null", rfw, q);
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	snprintf(cmd, sizeof(cmd), "%s:5: error: expected 'PROTO SRC[:SPORT] DST[:DPORT]'\n", q);
	assert_string_equal(out, cmd);

	snprintf(cmd, sizeof(cmd), RULEC " dump %s 2>&1", rfw);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "rules: 8 (+ rule 0, default), acl entries: 14\n"));
	assert_non_null(strstr(out, "     1 web-in                   accept 2 entries (line 16)\n"));
	assert_non_null(strstr(out, "     5 no-udp-9000              drop   1 entry (line 38)\n"));

	/* A file that is not an artifact: rfw_open's reason, exit 1. */
	snprintf(cmd, sizeof(cmd), RULEC " dump " DEMO " 2>&1");
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	assert_string_equal(out, "rulec: not a rampart artifact (bad magic)\n");
	snprintf(cmd, sizeof(cmd), RULEC " query " DEMO " tcp 1.1.1.1 2.2.2.2 2>&1");
	assert_int_equal(run(cmd, out, sizeof(out)), 1);

	/* Errors: nothing written, exit 1, summary line. */
	tmp_path(rfw, sizeof(rfw), "bad.rfw");
	snprintf(cmd, sizeof(cmd), RULEC " compile " DATA "/bad/cycle.yaml -o %s 2>&1", rfw);
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "cycle.yaml:6:7: error: network cycle: a -> b -> c -> a\n"
				    "rulec: 1 error, nothing written\n"));
	assert_false(exists(rfw));

	assert_int_equal(run(RULEC " --help 2>&1", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "  --out IFACE       it leaves on IFACE"));
	assert_int_equal(run(RULEC " query --help 2>&1", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "usage:"));
	assert_int_equal(run(RULEC " frobnicate 2>&1", out, sizeof(out)), 1);
	assert_int_equal(run(RULEC " compile " DEMO " 2>&1", out, sizeof(out)), 1);
	assert_int_equal(run(RULEC " 2>&1", out, sizeof(out)), 1);
}

static void test_values(void **state)
{
	struct prefix p;
	char why[256];
	uint16_t lo, hi;
	static const char *const keys[] = {"name", "proto", "from", "to", "action"};

	(void)state;
	assert_int_equal(val_parse_prefix("10.1.2.3/16", &p, why, sizeof(why)), -1);
	assert_string_equal(why, "10.1.2.3/16 has host bits set; write 10.1.0.0/16");
	assert_int_equal(val_parse_prefix("2001:db8::1/32", &p, why, sizeof(why)), -1);
	assert_string_equal(why, "2001:db8::1/32 has host bits set; write 2001:db8::/32");
	assert_int_equal(val_parse_prefix("10.1.0.0/16", &p, why, sizeof(why)), 0);
	assert_int_equal(p.family, 4);
	assert_int_equal(p.len, 16);
	assert_int_equal(val_parse_prefix("0.0.0.0/0", &p, why, sizeof(why)), 0);
	assert_int_equal(val_parse_prefix("fd00::1", &p, why, sizeof(why)), 0);
	assert_int_equal(p.len, 128);
	assert_int_equal(val_parse_prefix("10.0.0.0/-1", &p, why, sizeof(why)), -1);
	assert_int_equal(val_parse_port_range("0-65535", &lo, &hi, why, sizeof(why)), 0);
	assert_int_equal(hi, 65535);
	assert_int_equal(val_parse_port_range("65536", &lo, &hi, why, sizeof(why)), -1);
	assert_int_equal(val_parse_port_range("1-", &lo, &hi, why, sizeof(why)), -1);
	assert_int_equal(val_parse_proto("sctp"), 132);
	assert_int_equal(val_parse_proto("255"), 255);
	assert_int_equal(val_parse_proto("-1"), -1);
	assert_string_equal(diag_suggest("actoin", keys, 5), "action");
	assert_string_equal(diag_suggest("too", keys, 5), "to");
	assert_null(diag_suggest("zzzzzz", keys, 5));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_demo_queries),
		cmocka_unit_test(test_good_fixture_queries),
		cmocka_unit_test(test_error_fixtures),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_artifact_round_trip),
		cmocka_unit_test(test_query_errors_and_batch),
		cmocka_unit_test(test_query_note_icmp_error),
		cmocka_unit_test(test_cli),
	};

	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
