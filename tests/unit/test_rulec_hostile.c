/* Hostile policies (issue 10, docs/security.md): each is refused with a
 * clear message, or compiled, within the limits stated there. rulec runs
 * as a child under `ulimit -v` (2 GiB) and `timeout` (60 s), so a
 * regression fails the test instead of taking the machine down. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_rulec_util.h"

/* ASan reserves terabytes of address space: there, time is the only
 * limit applied. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifdef SANITIZED
#define LIMITS "timeout 120 "
#else
#define LIMITS "ulimit -v 2097152; timeout 60 "
#endif

/* Write text to tmpdir/name. */
static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	tmp_path(path, sizeof(path), name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* rulec compile tmpdir/name; returns the exit status (124: timed out,
 * -1: killed), the output in out. */
static int compile_limited(const char *name, char *out, size_t outlen)
{
	char cmd[768];

	snprintf(cmd, sizeof(cmd), "cd %s && " LIMITS RULEC " compile %s -o out.rfw 2>&1",
		 tmpdir, name);
	return run(cmd, out, outlen);
}

static void expect_refused(const char *name, const char *message)
{
	static char out[1 << 20];	/* every message: a cut pipe would change the exit */
	int rc = compile_limited(name, out, sizeof(out));

	if (rc != 1 || !strstr(out, message))
		fail_msg("%s: exit %d, want 1 with '%s'; output:\n%s", name, rc, message, out);
}

/* [[[[...]]]] 100,000 deep: libyaml's scanner is quadratic in it. */
static void test_deep_flow_nesting(void **state)
{
	size_t depth = 100000;
	char *text = malloc(2 * depth + 64), *p = text;
	(void)state;

	p += sprintf(p, "version: 1\nnetworks:\n  x: ");
	memset(p, '[', depth);
	memset(p + depth, ']', depth);
	strcpy(p + 2 * depth, "\n");
	put("deep.yaml", text);
	free(text);
	expect_refused("deep.yaml", "deep.yaml:3:70: error: brackets nested more than 64 deep");
}

/* Brackets inside quotes and comments do not count. */
static void test_brackets_in_quotes_are_text(void **state)
{
	char out[4096];
	char text[4096], *p = text;
	(void)state;

	p += sprintf(p, "version: 1\n# [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n"
		     "rules:\n  - name: r\n    proto: tcp\n    action: accept\n"
		     "    log: false   # {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\n");
	(void)p;
	put("quoted.yaml", text);
	assert_int_equal(compile_limited("quoted.yaml", out, sizeof(out)), 0);
}

/* Indentation 2,000 columns deep. */
static void test_deep_indent(void **state)
{
	char *text = malloc(4096), *p = text;
	(void)state;

	p += sprintf(p, "version: 1\nnetworks:\n  x:\n");
	memset(p, ' ', 2000);
	strcpy(p + 2000, "- 10.0.0.0/8\n");
	put("indent.yaml", text);
	free(text);
	expect_refused("indent.yaml", "indented more than 1024 columns");
}

/* A 65 MiB literal: over the file limit before libyaml reads a byte. */
static void test_huge_file(void **state)
{
	char path[256];
	FILE *f;
	(void)state;

	tmp_path(path, sizeof(path), "huge.yaml");
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("version: 1\nnetworks:\n  x: '", f);
	for (int i = 0; i < 65 * 1024; i++)
		for (int j = 0; j < 1024; j++)
			fputc('a', f);
	fputs("'\n", f);
	fclose(f);
	expect_refused("huge.yaml", "a policy file may have at most 64 MiB");
}

/* Each network names the one before three times: 3^40 entries if the
 * repeats were kept. Compiles, to the two prefixes there are. */
static void test_name_bomb(void **state)
{
	char text[8192], out[8192], *p = text, cmd[512];
	(void)state;

	p += sprintf(p, "version: 1\nnetworks:\n  n0: [10.0.0.0/8, 10.1.0.0/16]\n");
	for (int i = 1; i < 40; i++)
		p += sprintf(p, "  n%d: [n%d, n%d, n%d]\n", i, i - 1, i - 1, i - 1);
	sprintf(p, "rules:\n  - {name: r, from: {network: n39}, proto: tcp, action: accept}\n");
	put("bomb.yaml", text);
	if (compile_limited("bomb.yaml", out, sizeof(out)) != 0)
		fail_msg("bomb.yaml did not compile within the limits:\n%s", out);
	snprintf(cmd, sizeof(cmd), RULEC " query %s/out.rfw tcp 10.1.2.3 10.9.9.9:80 2>&1", tmpdir);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_string_equal(out, "1 r accept\n");
}

/* Networks a1..a(levels - 1) after a0, each eight aliases of the one
 * before: 8^k copies of a0 at level k. Returns the end of the text. */
static char *alias_levels(char *p, int levels)
{
	for (int i = 1; i < levels; i++)
		p += sprintf(p, "  a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i,
			     i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
	return p;
}

/* YAML aliases of aliases: each use is a copy (so that messages name
 * it), and the copies stop at 262,144 values, refused at the alias that
 * passes them. */
static void test_alias_bomb(void **state)
{
	char text[8192], *p = text;
	(void)state;

	p += sprintf(p, "version: 1\nnetworks:\n  a0: &a0 [10.0.0.0/8, 10.1.0.0/16]\n");
	p = alias_levels(p, 30);
	sprintf(p, "rules:\n  - {name: r, from: {network: a29}, action: accept}\n");
	put("alias.yaml", text);
	expect_refused("alias.yaml", "alias.yaml:9:17: error: YAML aliases here and before stand "
				     "for more than 262144 values: too many for a policy");
}

/* Aliases of aliases of one long value: 37,448 copies are well under
 * the values' limit, but of a 60,000-byte text they are 2.2 GB (before,
 * the copies ran out of memory). Copied text is bounded too (64 MiB),
 * refused at the alias that passes it. */
static void test_alias_bomb_long_value(void **state)
{
	static char text[65536];
	char *p = text;
	(void)state;

	p += sprintf(p, "version: 1\nnetworks:\n  a0: &a0 \"");
	memset(p, 'x', 60000);
	p += 60000;
	p += sprintf(p, "\"\n");
	p = alias_levels(p, 6);
	sprintf(p, "rules:\n  - {name: r, from: {network: a5}, action: accept}\n");
	put("alias_long.yaml", text);
	expect_refused("alias_long.yaml", "alias_long.yaml:7:17: error: YAML aliases here and "
					  "before stand for more than 64 MiB of text: too much "
					  "for a policy");
}

/* An alias inside the value it names (libyaml allows it): refused, not
 * copied without end. */
static void test_alias_cycle(void **state)
{
	(void)state;
	put("alias_cycle.yaml", "version: 1\nnetworks:\n  a: &x [10.0.0.0/8, *x]\n");
	expect_refused("alias_cycle.yaml", "alias_cycle.yaml:3:22: error: YAML alias inside the "
					   "value it names");
}

/* The negation of a file list whose prefixes lie side by side (262,144
 * /24s making up 10.0.0.0/6): what it leaves out is a few prefixes, but
 * finding them for the analysis (lint.c spells small sets out) read the
 * whole list at each of the half a million steps down to its /24s:
 * some 9 minutes (35 s for 65,536). The analysis gives up on it within a
 * bound, and the policy compiles at once. */
static void test_negated_contiguous_list(void **state)
{
	char path[256], out[4096];
	FILE *f;
	(void)state;

	tmp_path(path, sizeof(path), "side_by_side.txt");
	f = fopen(path, "w");
	assert_non_null(f);
	for (uint32_t i = 0; i < (1u << 18); i++)
		fprintf(f, "%u.%u.%u.0/24\n", 10 + (i >> 16), i >> 8 & 255, i & 255);
	fclose(f);
	put("negated_list.yaml", "version: 1\nnetworks:\n  listed: {file: side_by_side.txt}\n"
				 "  unlisted: [\"!listed\"]\n"
				 "rules:\n  - {name: r, from: {network: unlisted}, proto: tcp, action: drop}\n"
				 "  - {name: ssh, proto: tcp, to: {port: 22}, action: accept}\n");
	if (compile_limited("negated_list.yaml", out, sizeof(out)) != 0)
		fail_msg("negated_list.yaml did not compile within the limits:\n%s", out);
}

/* An include cycle: refused, naming the files. */
static void test_include_cycle(void **state)
{
	(void)state;
	put("cyc_a.yaml", "version: 1\ninclude: [cyc_b.yaml]\n");
	put("cyc_b.yaml", "version: 1\ninclude: [cyc_a.yaml]\n");
	expect_refused("cyc_a.yaml", "include cycle");
}

/* A prefix list one line over the limit (16.7 M lines: release builds
 * only, it takes a while under ASan). */
static void test_file_list_limit(void **state)
{
	char path[256];
	FILE *f;
	(void)state;

#ifdef SANITIZED
	skip();
#endif
	tmp_path(path, sizeof(path), "over.txt");
	f = fopen(path, "w");
	assert_non_null(f);
	for (uint32_t i = 0; i <= (1u << 24); i++)
		fprintf(f, "10.%u.%u.%u\n", i >> 16 & 255, i >> 8 & 255, i & 255);
	fclose(f);
	put("over.yaml", "version: 1\nnetworks:\n  big: {file: over.txt}\n"
			 "rules:\n  - {name: r, from: {network: big}, action: drop}\n");
	expect_refused("over.yaml", "more than 16777216 prefixes in one list");
}

/* Files with no size to check first: /dev/zero as the policy, as an
 * include and as a prefix list ends with a message, not a hang. */
static void test_endless_files(void **state)
{
	(void)state;
	put("zero_inc.yaml", "version: 1\ninclude: [/dev/zero]\n");
	expect_refused("zero_inc.yaml", "a policy file may have at most 64 MiB");
	put("zero_list.yaml", "version: 1\nnetworks:\n  bl: {file: /dev/zero}\n"
			      "rules:\n  - {name: r, from: {network: bl}, action: drop}\n");
	expect_refused("zero_list.yaml", "/dev/zero:1: error: a line longer than 1024 bytes, "
					 "or a NUL byte: not a prefix list");
}

/* 32,000 networks each naming the next: refused at a depth, not a crash
 * of the recursion that resolves them. */
static void test_name_chain(void **state)
{
	static char text[1 << 20];
	char *p = text;
	(void)state;

	p += sprintf(p, "version: 1\nnetworks:\n");
	for (int i = 0; i < 32000; i++)
		p += sprintf(p, "  n%d: [n%d]\n", i, i + 1);
	sprintf(p, "  n32000: [10.0.0.0/8]\n"
		   "rules:\n  - {name: r, from: {network: n0}, action: accept}\n");
	put("chain.yaml", text);
	expect_refused("chain.yaml", "names nested more than 256 deep");
}

/* Bad UTF-8: where, as line:column, like every other error. */
static void test_encoding_error_position(void **state)
{
	(void)state;
	put("latin1.yaml", "version: 1\nrules:\n  - {name: caf\xe9, action: accept}\n");
	expect_refused("latin1.yaml", "latin1.yaml:3:16: error: invalid YAML: invalid ");
}

/* Empty lists that would match everything are refused as every other
 * empty list is. */
static void test_empty_state_and_flags(void **state)
{
	(void)state;
	put("nostate.yaml", "version: 1\nrules:\n  - {name: r, state: [], proto: udp, action: accept}\n");
	expect_refused("nostate.yaml", "3:22: error: rule 'r' can never match: the state list is empty");
	put("noflags.yaml", "version: 1\nrules:\n  - {name: r, tcp_flags: [], proto: tcp, action: accept}\n");
	expect_refused("noflags.yaml", "3:26: error: tcp_flags names no flag");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deep_flow_nesting),
		cmocka_unit_test(test_brackets_in_quotes_are_text),
		cmocka_unit_test(test_deep_indent),
		cmocka_unit_test(test_huge_file),
		cmocka_unit_test(test_name_bomb),
		cmocka_unit_test(test_endless_files),
		cmocka_unit_test(test_name_chain),
		cmocka_unit_test(test_encoding_error_position),
		cmocka_unit_test(test_empty_state_and_flags),
		cmocka_unit_test(test_alias_bomb),
		cmocka_unit_test(test_alias_bomb_long_value),
		cmocka_unit_test(test_alias_cycle),
		cmocka_unit_test(test_include_cycle),
		cmocka_unit_test(test_file_list_limit),
		cmocka_unit_test(test_negated_contiguous_list),
	};
	return cmocka_run_group_tests_name("rulec_hostile", tests, make_tmpdir, remove_tmpdir);
}
