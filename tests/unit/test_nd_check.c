/* rampartd's bridge-mode warning (daemon/nd_check.h): a policy that
 * accepts IPv6 traffic but drops neighbour discovery between the bridged
 * ports is found, with the direction and the rule; one that lets it
 * through, one without IPv6 and the shipped bridge examples are not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nd_check.h"
#include "router_lab.h"

static const char *const ports[2] = {"lan0", "wan0"};

#define ZONES "zones: {inside: [lan0], outside: [wan0]}\n"
#define WEB6 "  - {name: web6, proto: tcp, to: {network: \"fd00:1::/64\", port: 80}, action: accept}\n"

/* nd_check_bridge on the policy text; 1 when it found a block (*b). */
static int check(const char *text, const char *const *names, struct nd_block *b)
{
	void *buf;
	size_t len;
	struct rfw_view v;
	int found;

	router_lab_compile(text, &buf, &len, &v);
	found = nd_check_bridge(&v, names, 2, b);
	if (found) {
		char line[512];

		nd_block_describe(&v, names, b, line, sizeof(line));
		assert_non_null(strstr(line, "rampartd: warning: "));
		assert_non_null(strstr(line, b->from == 0 ? "from lan0 to wan0" : "from wan0 to lan0"));
		assert_int_equal(line[strlen(line) - 1], '\n');
	}
	free(buf);
	return found;
}

static void test_default_drop_finds_it(void **state)
{
	struct nd_block b;
	(void)state;

	assert_int_equal(check("version: 1\n" ZONES "rules:\n" WEB6 "defaults: {action: drop}\n",
			       ports, &b), 1);
	assert_int_equal(b.from, 0);
	assert_int_equal(b.to, 1);
	assert_int_equal(b.icmp_type, 135);	/* the solicitation first */
	assert_int_equal(b.rule, 0);		/* the default */
}

static void test_rule_and_direction(void **state)
{
	struct nd_block b;
	(void)state;

	/* a rule that rejects ICMPv6: named */
	assert_int_equal(check("version: 1\n" ZONES "rules:\n" WEB6
			       "  - {name: no-icmp6, proto: icmpv6, action: reject}\n"
			       "defaults: {action: drop}\n", ports, &b), 1);
	assert_int_equal(b.rule, 2);
	/* neighbour discovery only from inside out: the answers' way in */
	assert_int_equal(check("version: 1\n" ZONES "rules:\n" WEB6
			       "  - {name: nd-out, proto: icmpv6, from: {zone: inside}, action: accept}\n"
			       "defaults: {action: drop}\n", ports, &b), 1);
	assert_int_equal(b.from, 1);
	assert_int_equal(b.to, 0);
	assert_int_equal(b.rule, 0);
	/* solicitations pass, advertisements do not */
	assert_int_equal(check("version: 1\n" ZONES "rules:\n" WEB6
			       "  - {name: ns, proto: icmpv6, icmp_type: neighbor-solicitation, "
			       "action: accept}\ndefaults: {action: drop}\n", ports, &b), 1);
	assert_int_equal(b.icmp_type, 136);
}

static void test_quiet_when_right(void **state)
{
	struct nd_block b;
	(void)state;

	/* neighbour discovery accepted both ways */
	assert_int_equal(check("version: 1\n" ZONES "services:\n"
			       "  nd: [icmpv6/neighbor-solicitation, icmpv6/neighbor-advertisement]\n"
			       "rules:\n" WEB6 "  - {name: nd, to: {service: nd}, action: accept}\n"
			       "defaults: {action: drop}\n", ports, &b), 0);
	/* no IPv6 in the policy: nothing to say */
	assert_int_equal(check("version: 1\n" ZONES "rules:\n"
			       "  - {name: web, proto: tcp, to: {network: 10.0.0.0/8, port: 80}, "
			       "action: accept}\ndefaults: {action: drop}\n", ports, &b), 0);
	/* the default accepts */
	assert_int_equal(check("version: 1\n" ZONES "rules:\n" WEB6 "defaults: {action: accept}\n",
			       ports, &b), 0);
}

/* The shipped bridge policies, with the ports they name. */
static void test_examples(void **state)
{
	static const char *const bump[2] = {"eth0", "eth1"};
	const char *files[2] = {RAMPART_SOURCE_DIR "/examples/bump-in-the-wire/policy.yaml",
				RAMPART_SOURCE_DIR "/examples/policies/demo.yaml"};
	(void)state;

	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(files[i], "r");
		char text[16384];
		size_t n;
		struct nd_block b;

		assert_non_null(f);
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		text[n] = '\0';
		assert_int_equal(check(text, i == 0 ? bump : ports, &b), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_drop_finds_it),
		cmocka_unit_test(test_rule_and_direction),
		cmocka_unit_test(test_quiet_when_right),
		cmocka_unit_test(test_examples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
