/* daemon/privilege.c in forked children: after priv_drop only the kept
 * capabilities are left (effective, permitted, bounding); under the worker
 * filter the packet loop's calls work and anything else (a socket, a
 * file) kills the process with SIGSYS. Needs root for the drop test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "privilege.h"

/* "CapEff:\t0000000000001000" -> the number. */
static uint64_t status_caps(const char *key)
{
	char line[256];
	uint64_t v = ~0ull;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return v;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = strtoull(line + strlen(key) + 1, NULL, 16);
	fclose(f);
	return v;
}

/* Run fn in a child; its wait status. */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	int st = 0;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static int drop_child(void)
{
	uint64_t keep = priv_needed_caps(0);
	char err[200];

	if (priv_drop(keep, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 10;
	}
	if (status_caps("CapEff:") != keep)
		return 11;
	if (status_caps("CapPrm:") != keep)
		return 12;
	if (status_caps("CapBnd:") != keep)
		return 13;
	if (status_caps("CapInh:") != 0)
		return 14;
	/* CAP_SYS_ADMIN is gone: sethostname fails */
	if (sethostname("x", 1) == 0)
		return 15;
	return 0;
}

static void test_drop(void **state)
{
	int st;
	(void)state;

	if (geteuid() != 0)
		skip();
	st = in_child(drop_child);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static int allowed_child(void)
{
	char err[200];
	struct timespec ts, nap = {0, 1000};

	if (priv_worker_filter(err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 10;
	}
	/* the loop's calls: the clock, a nap, a write, memory */
	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0 || nanosleep(&nap, NULL) < 0)
		return 11;
	if (write(STDERR_FILENO, "", 0) < 0)
		return 12;
	free(malloc(1 << 20));
	return 0;
}

static void test_filter_allows_the_loop(void **state)
{
	int st;
	(void)state;

	st = in_child(allowed_child);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static int socket_child(void)
{
	char err[200];

	if (priv_worker_filter(err, sizeof(err)) < 0)
		return 10;
	(void)socket(AF_INET, SOCK_DGRAM, 0);
	return 0;	/* not reached */
}

static int open_child(void)
{
	char err[200];

	if (priv_worker_filter(err, sizeof(err)) < 0)
		return 10;
	(void)open("/etc/hostname", O_RDONLY);
	return 0;	/* not reached */
}

static void test_filter_kills_the_rest(void **state)
{
	int st;
	(void)state;

	st = in_child(socket_child);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGSYS);
	st = in_child(open_child);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGSYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop),
		cmocka_unit_test(test_filter_allows_the_loop),
		cmocka_unit_test(test_filter_kills_the_rest),
	};
	return cmocka_run_group_tests_name("privilege", tests, NULL, NULL);
}
