/* The `rampartctl flows --filter` language: every key, prefixes of both
 * families, case and '-' in state names, and the errors (unknown key,
 * bad values, host bits past the prefix, missing '='). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "ctl_filter.h"

static struct ct_flow_info flow4(uint8_t proto, const char *src, uint16_t sport, const char *dst,
				 uint16_t dport)
{
	struct ct_flow_info f;

	memset(&f, 0, sizeof(f));
	f.orig.family = 4;
	f.orig.proto = proto;
	inet_pton(AF_INET, src, f.orig.src);
	inet_pton(AF_INET, dst, f.orig.dst);
	f.orig.sport = sport;
	f.orig.dport = dport;
	f.rule = 2;
	f.tcp_state = proto == 6 ? CT_TCP_ESTABLISHED : CT_TCP_NONE;
	return f;
}

static int matches(const char *expr, const struct ct_flow_info *f)
{
	struct ctl_filter flt;
	char err[256];

	assert_int_equal(ctl_filter_parse(&flt, expr, err, sizeof(err)), 0);
	flt.rule = 2;	/* as if rule=NAME had been resolved to rule 2 */
	return ctl_filter_match(&flt, f);
}

static void test_empty_matches_all(void **state)
{
	struct ct_flow_info f = flow4(17, "10.0.0.1", 1000, "10.0.0.2", 53);

	(void)state;
	assert_true(matches("", &f));
	assert_true(matches("   ", &f));
}

static void test_terms(void **state)
{
	struct ct_flow_info t = flow4(6, "10.1.2.3", 40000, "10.9.0.1", 8080);
	struct ct_flow_info u = flow4(17, "10.1.2.3", 40000, "10.9.0.1", 8080);

	(void)state;
	assert_true(matches("proto=tcp", &t));
	assert_false(matches("proto=tcp", &u));
	assert_true(matches("proto=UDP", &u));
	assert_true(matches("proto=17", &u));
	assert_true(matches("src=10.1.0.0/16 dst=10.9.0.1", &t));
	assert_false(matches("src=10.2.0.0/16", &t));
	assert_true(matches("src=10.1.2.2/31", &t));
	assert_true(matches("src=0.0.0.0/0", &t));
	assert_true(matches("sport=40000 dport=8080", &t));
	assert_false(matches("dport=8081", &t));
	assert_true(matches("state=established", &t));
	assert_true(matches("state=ESTABLISHED", &t));
	assert_false(matches("state=time-wait", &t));
	assert_false(matches("state=established", &u));	/* not TCP */
	assert_true(matches("rule=web", &t));
	assert_true(matches("  proto=tcp \t dport=8080  ", &t));
}

static void test_ports_need_ports(void **state)
{
	struct ct_flow_info icmp = flow4(1, "10.0.0.1", 77, "10.0.0.2", 77);

	(void)state;
	/* an echo id sits where ports would: never taken for a port */
	assert_false(matches("sport=77", &icmp));
	assert_true(matches("proto=icmp", &icmp));
}

static void test_ipv6(void **state)
{
	struct ct_flow_info f;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.orig.family = 6;
	f.orig.proto = 6;
	inet_pton(AF_INET6, "fd00:10::1", f.orig.src);
	inet_pton(AF_INET6, "fd00:20::2", f.orig.dst);
	assert_true(matches("src=fd00:10::/64", &f));
	assert_true(matches("dst=fd00:20::2", &f));
	assert_false(matches("src=fd00:11::/64", &f));
	assert_true(matches("src=fd00::/15", &f));
	assert_false(matches("src=10.0.0.0/8", &f));	/* family differs */
}

static void expect_error(const char *expr, const char *what)
{
	struct ctl_filter flt;
	char err[256] = "";

	assert_int_equal(ctl_filter_parse(&flt, expr, err, sizeof(err)), -1);
	assert_non_null(strstr(err, what));
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("colour=blue", "unknown filter key 'colour'");
	expect_error("proto", "is not key=value");
	expect_error("proto=tcpx", "bad value in filter term 'proto=tcpx'");
	expect_error("proto=256", "bad value");
	expect_error("src=10.0.0.300", "bad value");
	expect_error("src=10.0.0.1/33", "bad value");
	expect_error("src=10.0.0.1/24", "bad value");	/* host bits set */
	expect_error("dst=fd00::1/200", "bad value");
	expect_error("sport=65536", "bad value");
	expect_error("dport=-1", "bad value");
	expect_error("dport=", "bad value");
	expect_error("state=sleepy", "bad value in filter term 'state=sleepy'");
	expect_error("state=none", "bad value");
	expect_error("rule=", "bad value");
	expect_error("proto=tcp bogus", "'bogus' is not key=value");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_matches_all),
		cmocka_unit_test(test_terms),
		cmocka_unit_test(test_ports_need_ports),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
