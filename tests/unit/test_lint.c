/* rulec's rule warnings, end to end from YAML: a rule shadowed by the
 * union of two earlier rules (both named), a rule redundant with a later
 * rule of the same action, what is deliberately not warned about (an
 * explicit drop before the default drop, partial overlap), and --strict
 * turning the warnings into errors with nothing produced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "rulec.h"

static const char policy[] =
	"version: 1\n"
	"rules:\n"
	"  - name: low-ports\n"			/* 1 */
	"    proto: tcp\n"
	"    to: {port: 1-1023}\n"
	"    action: accept\n"
	"  - name: high-ports\n"		/* 2 */
	"    proto: tcp\n"
	"    to: {port: 1024-65535}\n"
	"    action: accept\n"
	"  - name: any-tcp\n"			/* 3: shadowed by 1 + 2 ... */
	"    proto: tcp\n"
	"    to: {port: 1-65535}\n"
	"    action: drop\n"
	"  - name: dns-a\n"			/* 4: redundant with 5 */
	"    proto: udp\n"
	"    to: {network: 10.0.0.53, port: 53}\n"
	"    action: accept\n"
	"  - name: dns-net\n"			/* 5 */
	"    proto: udp\n"
	"    to: {network: 10.0.0.0/24, port: 53}\n"
	"    action: accept\n"
	"  - name: web-partial\n"		/* 6: overlaps 5 only in part */
	"    proto: udp\n"
	"    to: {network: 10.0.0.0/23}\n"
	"    action: drop\n"
	"  - name: explicit-drop\n"		/* 7: same as the default: fine */
	"    proto: udp\n"
	"    to: {port: 9}\n"
	"    action: drop\n"
	"defaults: {action: drop}\n";

/* Compile text, return the diagnostics (malloc'ed) and the error count. */
static char *compile(const char *text, int strict, unsigned *errors, unsigned *warnings,
		     void **buf)
{
	char path[] = "/tmp/rampart-test-lint-XXXXXX";
	int fd = mkstemp(path);
	char *out = NULL;
	size_t outlen = 0, len;
	FILE *diag = open_memstream(&out, &outlen);
	struct rulec_opts opts = {.strict = strict, .warnings = warnings};

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	*errors = rulec_compile_opts(path, diag, &opts, buf, &len);
	fclose(diag);
	unlink(path);
	/* file names differ per run: keep what follows the first ':' */
	{
		char *clean = calloc(1, outlen + 1), *w = clean;

		for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
			char *colon = strchr(line, ':');

			w += sprintf(w, "%s\n", colon ? colon + 1 : line);
		}
		free(out);
		return clean;
	}
}

static void test_warnings(void **state)
{
	unsigned errors, warnings = 0;
	void *buf = NULL;
	char *d = compile(policy, 0, &errors, &warnings, &buf);
	(void)state;

	assert_int_equal(errors, 0);
	assert_non_null(buf);
	assert_string_equal(d,
		"11:5: warning: rule 'any-tcp' is never reached: every packet it matches is "
		"matched first by rules 'low-ports' and 'high-ports'; remove it or move it above them\n"
		"15:5: warning: rule 'dns-a' is redundant: without it its packets get the same "
		"action from rule 'dns-net'; remove it (judged one rule at a time)\n");
	assert_int_equal(warnings, 2);
	free(d);
	free(buf);
}

static void test_strict(void **state)
{
	unsigned errors, warnings = 0;
	void *buf = (void *)1;
	char *d = compile(policy, 1, &errors, &warnings, &buf);
	(void)state;

	assert_int_equal(errors, 2);
	assert_null(buf);
	assert_non_null(strstr(d, "11:5: error: rule 'any-tcp' is never reached"));
	free(d);
}

/* --strict reports the rule analysis's findings beside other warnings
 * made errors (an unused network); they used to stop the analysis. */
static void test_strict_reports_all(void **state)
{
	static const char both[] =
		"version: 1\n"
		"networks:\n"
		"  spare: [10.9.0.0/16]\n"
		"rules:\n"
		"  - {name: tcp, proto: tcp, action: accept}\n"
		"  - {name: ssh, proto: tcp, to: {port: 22}, action: drop}\n";
	unsigned errors, warnings = 0;
	void *buf = (void *)1;
	char *d = compile(both, 1, &errors, &warnings, &buf);
	(void)state;

	assert_int_equal(errors, 2);
	assert_null(buf);
	assert_string_equal(d,
		"3:3: error: network 'spare' is never used; remove it or use it in a rule\n"
		"6:5: error: rule 'ssh' is never reached: every packet it matches is matched first "
		"by rule 'tcp'; remove it or move it above it\n");
	free(d);
}

/* A rule with its own rate limit or log is not redundant with a later
 * rule of the same action (removing it would lift the limit, lose the
 * log), nor is a rule before a later one that has them. */
static void test_limit_and_log_not_redundant(void **state)
{
	static const char limited[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: capped, proto: udp, to: {port: 53}, action: accept, limit: {rate: 10/s}}\n"
		"  - {name: logged, proto: udp, to: {port: 123}, action: accept, log: true}\n"
		"  - {name: web, proto: tcp, to: {port: 80}, action: accept}\n"
		"  - {name: udp-all, proto: udp, action: accept}\n"
		"  - {name: tcp-capped, proto: tcp, action: accept, limit: {rate: 10/s}}\n"
		"  - {name: dns-again, proto: udp, to: {port: 53}, action: accept}\n";
	unsigned errors, warnings = 0;
	void *buf = NULL;
	char *d = compile(limited, 1, &errors, &warnings, &buf);
	(void)state;

	/* only the last: shadowed by udp-all, whatever the verdicts */
	assert_int_equal(errors, 1);
	assert_null(strstr(d, "redundant"));
	assert_non_null(strstr(d, "rule 'dns-again' is never reached"));
	free(d);
	free(buf);
}

/* A network that excludes every address is an empty set: warned. */
static void test_negation_of_everything(void **state)
{
	static const char none[] =
		"version: 1\n"
		"networks:\n"
		"  all: [0.0.0.0/0, \"::/0\"]\n"
		"  all4: [0.0.0.0/0]\n"
		"  nothing: [\"!all\"]\n"
		"  v6: [\"!all4\"]\n"
		"rules:\n"
		"  - {name: never, from: {network: nothing}, action: accept}\n"
		"  - {name: six, from: {network: v6}, action: accept}\n";
	unsigned errors, warnings = 0;
	void *buf = NULL;
	char *d = compile(none, 0, &errors, &warnings, &buf);
	(void)state;

	assert_int_equal(errors, 1);		/* the rule that uses it */
	assert_non_null(strstr(d, "5:12: warning: network 'nothing' is empty: it excludes every "
				  "address (0.0.0.0/0 and ::/0)"));
	assert_non_null(strstr(d, "rule 'never' can never match: its 'from' network is empty"));
	assert_null(strstr(d, "'v6' is empty"));	/* every IPv6 address */
	free(d);
	free(buf);
}

/* Rules covered only by earlier rules together, each with the opposite
 * condition of the other: a network and its negation (a negated network
 * is an address set, spelled out as prefixes for the analysis), the
 * conntrack states split in two, syn and !syn. And what is not covered:
 * every zone (a packet may come in on an interface no zone names), a
 * negation of another network. */
static void test_complementary_rules(void **state)
{
	static const char complementary[] =
		"version: 1\n"
		"networks:\n"
		"  ten: [10.0.0.0/8]\n"
		"  nine: [9.0.0.0/8]\n"
		"zones:\n"
		"  inside: [eth1]\n"
		"  outside: [eth0]\n"
		"rules:\n"
		"  - {name: ten-low, proto: tcp, from: {network: ten}, to: {port: 1-1023}, "
		"action: drop}\n"							/* 9 */
		"  - {name: not-ten-low, proto: tcp, from: {network: \"!ten\"}, to: {port: 1-1023}, "
		"action: drop}\n"
		"  - {name: ssh, proto: tcp, to: {port: 22}, action: accept}\n"		/* 11 */
		"  - {name: udp-new, proto: udp, state: [new], action: accept}\n"
		"  - {name: udp-rest, proto: udp, state: [established, related, invalid], "
		"action: accept}\n"
		"  - {name: dns, proto: udp, to: {port: 53}, action: drop}\n"		/* 14 */
		"  - {name: syn, proto: tcp, tcp_flags: syn, action: accept}\n"
		"  - {name: not-syn, proto: tcp, tcp_flags: \"!syn\", action: accept}\n"
		"  - {name: web, proto: tcp, to: {port: 8080}, action: drop}\n"	/* 17 */
		"  - {name: in, from: {zone: inside}, proto: sctp, action: drop}\n"
		"  - {name: out, from: {zone: outside}, proto: sctp, action: drop}\n"
		"  - {name: sctp, proto: sctp, action: accept}\n"			/* 20 */
		"  - {name: from-nine, proto: gre, from: {network: nine}, action: accept}\n"
		"  - {name: gre-not-ten, proto: gre, from: {network: \"!ten\"}, action: drop}\n"
		"  - {name: gre, proto: gre, action: accept}\n"			/* 23 */
		"defaults: {action: drop}\n";
	unsigned errors, warnings = 0;
	void *buf = NULL;
	char *d = compile(complementary, 0, &errors, &warnings, &buf);
	(void)state;

	assert_int_equal(errors, 0);
	assert_string_equal(d,
		"11:5: warning: rule 'ssh' is never reached: every packet it matches is matched "
		"first by rules 'ten-low' and 'not-ten-low'; remove it or move it above them\n"
		"14:5: warning: rule 'dns' is never reached: every packet it matches is matched "
		"first by rules 'udp-new' and 'udp-rest'; remove it or move it above them\n"
		"17:5: warning: rule 'web' is never reached: every packet it matches is matched "
		"first by rules 'syn' and 'not-syn'; remove it or move it above them\n");
	assert_int_equal(warnings, 3);
	free(d);
	free(buf);
}

/* 2,000 rules each naming one set of 200 prefixes (a set: more than
 * 64), then three repeated rules. Written out for the analysis, the set
 * made 400,000 entries (capped at 200,000): 70 times the time, and the
 * analysis ran out of work before the last rules, which went unwarned.
 * A set is written out in every entry or in none, and only while that
 * adds no more entries than the policy has (4,096 at least): an entry
 * left with the set condition is covered by the same condition only,
 * so 'again' is found behind 'r0' as it was before sets were written
 * out (and 'r0' redundant with it). */
static void test_many_rules_naming_a_set(void **state)
{
	size_t cap = 1 << 20, at = 0;
	char *text = malloc(cap);
	unsigned errors, warnings = 0;
	void *buf = NULL;
	char *d;
	(void)state;

	assert_non_null(text);
	at += (size_t)snprintf(text + at, cap - at, "version: 1\nnetworks:\n  big: [");
	for (int i = 0; i < 200; i++)
		at += (size_t)snprintf(text + at, cap - at, "%s172.%d.%d.0/24", i ? ", " : "",
				       16 + i / 128, 2 * i % 256);
	at += (size_t)snprintf(text + at, cap - at, "]\nrules:\n");
	for (int i = 0; i < 2000; i++)
		at += (size_t)snprintf(text + at, cap - at,
				       "  - {name: r%d, proto: tcp, from: {network: big, port: %d}, "
				       "to: {network: 10.%d.%d.0/24}, action: %s}\n",
				       i, 1000 + i, i % 256, i / 256, i % 2 ? "accept" : "drop");
	snprintf(text + at, cap - at,
		 "  - {name: again, proto: tcp, from: {network: big, port: 1000}, "
		 "to: {network: 10.0.0.0/24}, action: drop}\n"		/* 2005 */
		 "  - {name: dns, proto: udp, to: {port: 53}, action: drop}\n"
		 "  - {name: dns-again, proto: udp, to: {port: 53}, action: drop}\n");
	d = compile(text, 0, &errors, &warnings, &buf);
	assert_int_equal(errors, 0);
	assert_string_equal(d,
		"5:5: warning: rule 'r0' is redundant: without it its packets get the same "
		"action from rule 'again'; remove it (judged one rule at a time)\n"
		"2005:5: warning: rule 'again' is never reached: every packet it matches is "
		"matched first by rule 'r0'; remove it or move it above it\n"
		"2006:5: warning: rule 'dns' is redundant: without it its packets get the same "
		"action from rule 'dns-again'; remove it (judged one rule at a time)\n"
		"2007:5: warning: rule 'dns-again' is never reached: every packet it matches is "
		"matched first by rule 'dns'; remove it or move it above it\n");
	free(d);
	free(buf);
	free(text);
}

/* A NAT rule whose every packet an earlier NAT rule of its list takes
 * (first match, DNAT and SNAT looked up apart) is warned about, as rules
 * are; a DNAT and an SNAT with the same match both apply (the SNAT sees
 * the translated packet): not warned. */
static void test_nat_shadowed(void **state)
{
	static const char nat_policy[] =
		"version: 1\n"
		"networks:\n"
		"  lan: [10.1.0.0/16]\n"
		"  vip: [203.0.113.10]\n"
		"zones:\n"
		"  outside: [eth0]\n"
		"rules:\n"
		"  - {name: r, action: accept}\n"
		"nat:\n"
		"  - name: web\n"						/* 10 */
		"    match: {to: {network: vip, service: tcp/80}}\n"
		"    dnat: {to: 10.1.0.10}\n"
		"  - name: web-from-outside\n"					/* 13 */
		"    match: {from: {zone: outside}, to: {network: vip, service: tcp/80}}\n"
		"    dnat: {to: 10.1.0.11}\n"
		"  - name: dns-redirect\n"					/* 16 */
		"    match: {from: {network: lan}, to: {network: 0.0.0.0/0, service: udp/53}}\n"
		"    dnat: {to: 10.9.0.53}\n"
		"  - name: dns-masq\n"						/* 19 */
		"    match: {from: {network: lan}, to: {network: 0.0.0.0/0, service: udp/53}}\n"
		"    snat: {to: [10.9.0.1]}\n"
		"  - name: lan-low\n"						/* 22 */
		"    match: {from: {network: 10.1.0.0/17}, to: {zone: outside}}\n"
		"    snat: {to: masquerade}\n"
		"  - name: lan-high\n"						/* 25 */
		"    match: {from: {network: 10.1.128.0/17}, to: {zone: outside}}\n"
		"    snat: {to: masquerade}\n"
		"  - name: lan-tcp\n"						/* 28 */
		"    match: {from: {network: lan}, proto: tcp, to: {zone: outside}}\n"
		"    snat: {to: [198.51.100.1]}\n";
	unsigned errors, warnings = 0;
	void *buf = NULL;
	char *d = compile(nat_policy, 0, &errors, &warnings, &buf);
	(void)state;

	assert_int_equal(errors, 0);
	assert_string_equal(d,
		"13:5: warning: NAT rule 'web-from-outside' is never reached: every packet it "
		"matches is matched first by NAT rule 'web'; remove it or move it above it\n"
		"28:5: warning: NAT rule 'lan-tcp' is never reached: every packet it matches is "
		"matched first by NAT rules 'lan-low' and 'lan-high'; remove it or move it above "
		"them\n");
	assert_int_equal(warnings, 2);
	free(d);
	free(buf);
}

/* A host address that is also a NAT address (a DNAT destination, an SNAT
 * pool's) is warned about: the kernel would take that NAT's traffic. */
static void test_host_address_is_nat(void **state)
{
	static const char nat_policy[] =
		"version: 1\n"
		"networks:\n"
		"  vip: [10.9.0.2]\n"
		"rules:\n"
		"  - {name: web, proto: tcp, to: {port: 80}, action: accept}\n"
		"nat:\n"
		"  - name: web-forward\n"			/* 7 */
		"    match: {to: {network: vip, service: tcp/80}}\n"
		"    dnat: {to: 10.1.0.10}\n"
		"  - name: pool\n"				/* 10 */
		"    match: {from: {network: 10.1.0.0/16}}\n"
		"    snat: {to: [10.9.0.5-10.9.0.9]}\n"
		"host:\n"
		"  addresses: [10.9.0.2, 10.9.0.7, 10.9.0.1]\n";
	unsigned errors, warnings = 0;
	void *buf = NULL;
	char *d = compile(nat_policy, 0, &errors, &warnings, &buf);
	(void)state;

	assert_int_equal(errors, 0);
	assert_int_equal(warnings, 2);
	assert_non_null(strstr(d, "7:5: warning: NAT rule 'web-forward' uses 10.9.0.2, which "
				  "host.addresses hands to the kernel before any NAT"));
	assert_non_null(strstr(d, "10:5: warning: NAT rule 'pool' uses 10.9.0.7"));
	assert_null(strstr(d, "10.9.0.1,"));
	free(d);
	free(buf);
}

/* Compile a one-rule policy whose host section has KEY: [LIST]; its
 * diagnostics, with *warnings counted. */
static char *compile_host(const char *key, const char *list, unsigned *warnings)
{
	char pol[8192];
	unsigned errors;
	void *buf = NULL;
	char *d;

	snprintf(pol, sizeof(pol),
		 "version: 1\n"
		 "rules:\n"
		 "  - {name: web, proto: tcp, to: {port: 80}, action: accept}\n"
		 "host:\n"
		 "  %s: [%s]\n", key, list);
	*warnings = 0;
	d = compile(pol, 0, &errors, warnings, &buf);
	assert_int_equal(errors, 0);
	free(buf);
	return d;
}

/* A host section past what rampartd's XDP program holds (16 pass
 * entries, 256 addresses a family) is warned about where it is written;
 * one at the limit is not. */
static void test_host_section_past_xdp_room(void **state)
{
	char list[4096];
	unsigned warnings;
	char *d;
	size_t o;
	(void)state;

	for (int entries = 16; entries <= 17; entries++) {
		o = 0;
		for (int i = 1; i <= entries; i++)
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%stcp/%d", i > 1 ? ", " : "",
					      1000 + i);
		d = compile_host("pass", list, &warnings);
		if (entries == 16) {
			assert_int_equal(warnings, 0);
		} else {
			assert_int_equal(warnings, 1);
			assert_non_null(strstr(d, "5:9: warning: host.pass has 17 entries; rampartd on "
						  "AF_XDP refuses more than 16"));
		}
		free(d);
	}
	/* 257 IPv4 addresses: 10.8.0.0 - 10.8.1.0 */
	o = 0;
	for (int i = 0; i <= 256; i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s10.8.%d.%d", i ? ", " : "",
				      i / 256, i % 256);
	d = compile_host("addresses", list, &warnings);
	assert_int_equal(warnings, 1);
	assert_non_null(strstr(d, "5:14: warning: host.addresses has 257 IPv4 and 0 IPv6 addresses; "
				  "rampartd on AF_XDP refuses more than 256 of a family"));
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_warnings),
		cmocka_unit_test(test_strict),
		cmocka_unit_test(test_strict_reports_all),
		cmocka_unit_test(test_limit_and_log_not_redundant),
		cmocka_unit_test(test_negation_of_everything),
		cmocka_unit_test(test_host_address_is_nat),
		cmocka_unit_test(test_host_section_past_xdp_room),
		cmocka_unit_test(test_complementary_rules),
		cmocka_unit_test(test_nat_shadowed),
		cmocka_unit_test(test_many_rules_naming_a_set),
	};
	return cmocka_run_group_tests_name("lint", tests, NULL, NULL);
}
