/* Helpers shared by the rulec test programs: compile a policy into a
 * verified view, check query answers, run the CLI, and read a must-fail
 * fixture's pinned "# expect: " messages. Header-only: each test program
 * is one translation unit. */
#ifndef TEST_RULEC_UTIL_H
#define TEST_RULEC_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rulec.h"

#define DATA RAMPART_SOURCE_DIR "/tests/data/rulec"
#define RULEC RAMPART_BINARY_DIR "/rulec/rulec"

/* A scratch directory per test program, made and removed by the group
 * setup and teardown. */
static char tmpdir[64];

static inline int make_tmpdir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_rulec.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static inline int remove_tmpdir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static inline void tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static inline int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Compile path into a view over a malloc'ed buffer; the caller frees *buf. */
static inline void compile_view(const char *path, struct rfw_view *v, void **buf)
{
	char *msgs = NULL, err[256];
	size_t msglen = 0, len;
	FILE *diag = open_memstream(&msgs, &msglen);
	unsigned errors;

	assert_non_null(diag);
	errors = rulec_compile(path, diag, buf, &len);
	fclose(diag);
	if (errors)
		print_error("%s", msgs);
	free(msgs);
	assert_int_equal(errors, 0);
	assert_int_equal(rfw_view_init(v, *buf, len, err, sizeof(err)), 0);
}

static inline void expect_answer(const struct rfw_view *v, const char *q, const char *want)
{
	char ans[256] = "", err[256] = "";

	if (rulec_query_line(v, q, ans, sizeof(ans), err, sizeof(err)) < 0)
		fail_msg("query '%s' refused: %s", q, err);
	if (strcmp(ans, want) != 0)
		fail_msg("query '%s': got '%s', want '%s'", q, ans, want);
}

/* Every "# query: Q => A" line of a policy file holds; returns how many. */
static inline int expect_file_queries(const struct rfw_view *v, const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *arrow;

		if (strncmp(line, "# query: ", 9) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		arrow = strstr(line, " => ");
		assert_non_null(arrow);
		*arrow = '\0';
		expect_answer(v, line + 9, arrow + 4);
		n++;
	}
	fclose(f);
	return n;
}

/* The expected stderr of a fixture: its "# expect: " lines with the path
 * in front ("@FILE " at the start names another file, relative to the
 * fixture's directory), then the summary when errors > 0. */
static inline char *expected_messages(const char *path, int strict)
{
	char *out = NULL, line[1024], dir[512];
	size_t len = 0;
	FILE *o = open_memstream(&out, &len), *f = fopen(path, "r");
	const char *slash = strrchr(path, '/');
	unsigned n = 0;

	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	assert_non_null(o);
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *msg = line + 10;

		if (strncmp(line, "# expect: ", 10) != 0)
			continue;
		if (msg[0] == '@') {
			char *sp = strchr(msg, ' ');

			assert_non_null(sp);
			fprintf(o, "%s/%.*s:", dir, (int)(sp - msg - 1), msg + 1);
			msg = sp + 1;
		} else {
			fprintf(o, "%s:", path);
		}
		if (strict && strstr(msg, ": warning: ")) {
			char *w = strstr(msg, ": warning: ");

			fprintf(o, "%.*s: error: %s", (int)(w - msg), msg, w + 11);
			n++;
			continue;
		}
		fputs(msg, o);
		n += strstr(msg, ": error: ") != NULL;
	}
	fclose(f);
	if (n)
		fprintf(o, "rulec: %u error%s, nothing written\n", n, n == 1 ? "" : "s");
	fclose(o);
	return out;
}

/* Compile a fixture into out; its messages must be exactly the pinned
 * ones, and out must exist only when there were no errors. */
static inline void check_fixture(const char *path, const char *out, int strict)
{
	struct rulec_opts opts = {.strict = strict};
	char *want = expected_messages(path, strict), *got = NULL;
	size_t len = 0;
	FILE *diag = open_memstream(&got, &len);
	int rc, errors = strstr(want, "nothing written") != NULL;

	unlink(out);
	rc = rulec_compile_file_opts(path, out, diag, &opts);
	fclose(diag);
	if (strcmp(got, want) != 0 || rc != errors) {
		fprintf(stderr, "%s (strict %d, rc %d):\n--- got\n%s--- want\n%s", path, strict, rc,
			got, want);
		free(got);
		free(want);
		fail();
	}
	assert_int_equal(exists(out), !errors);
	free(want);
	free(got);
}

/* Run a shell command, capture stdout+stderr, return the exit status. */
static inline int run(const char *cmd, char *outbuf, size_t outlen)
{
	FILE *p = popen(cmd, "r");
	size_t n;
	int st;

	assert_non_null(p);
	n = fread(outbuf, 1, outlen - 1, p);
	outbuf[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif
