/* A reload's host section into every port's XDP program, all or none
 * (xsk_update_ports_host): ports played by a callback that remembers
 * the section each one holds, and refuses where a test says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "host_update.h"

#define NPORTS 3

static const char *const names[NPORTS] = {"eth0", "eth1", "eth2"};
static const struct xsk_prog_cfg old_cfg = {.flags = 1}, new_cfg = {.flags = 2};

struct ports {
	const struct xsk_prog_cfg *holds[NPORTS];
	uint32_t writes[NPORTS];
	int refuse_new;		/* the port that refuses new_cfg, -1 none */
	int refuse_old;		/* the port that refuses old_cfg back, -1 none */
};

static int update(void *ctx, uint32_t i, const struct xsk_prog_cfg *cfg, char *err,
		  size_t errlen)
{
	struct ports *p = ctx;

	assert_true(i < NPORTS);
	p->writes[i]++;
	if ((cfg == &new_cfg && (int)i == p->refuse_new) ||
	    (cfg == &old_cfg && (int)i == p->refuse_old)) {
		if (cfg == &new_cfg)
			p->holds[i] = cfg;	/* stopped part way: some of it is in */
		snprintf(err, errlen, "map full");
		return -1;
	}
	p->holds[i] = cfg;
	return 0;
}

static struct ports running(int refuse_new, int refuse_old)
{
	struct ports p = {.refuse_new = refuse_new, .refuse_old = refuse_old};

	for (int i = 0; i < NPORTS; i++)
		p.holds[i] = &old_cfg;
	return p;
}

/* The reload's update over the three ports */
static int update_all(struct ports *p, char *err, size_t errlen)
{
	return xsk_update_ports_host(NPORTS, names, &new_cfg, &old_cfg, update, p, err, errlen);
}

static void test_every_port_updated(void **state)
{
	struct ports p = running(-1, -1);
	char err[256] = "";
	(void)state;

	assert_int_equal(update_all(&p, err, sizeof(err)), 0);
	for (int i = 0; i < NPORTS; i++)
		assert_ptr_equal(p.holds[i], &new_cfg);
}

/* Port 1 refuses: port 0, already updated, and port 1, which may hold
 * part of the new section, get the running policy's back; port 2 is
 * never touched. Before, port 0 kept the new section while the refused
 * reload left the old tables running. */
static void test_refusal_puts_the_running_section_back(void **state)
{
	struct ports p = running(1, -1);
	char err[256] = "";
	(void)state;

	assert_int_equal(update_all(&p, err, sizeof(err)), -1);
	assert_string_equal(err, "eth1: map full");
	for (int i = 0; i < NPORTS; i++)
		assert_ptr_equal(p.holds[i], &old_cfg);
	assert_int_equal(p.writes[0], 2);
	assert_int_equal(p.writes[1], 2);
	assert_int_equal(p.writes[2], 0);

	p = running(0, -1);	/* the first refuses: only it is put back */
	assert_int_equal(update_all(&p, err, sizeof(err)), -1);
	assert_string_equal(err, "eth0: map full");
	assert_ptr_equal(p.holds[0], &old_cfg);
	assert_int_equal(p.writes[1] + p.writes[2], 0);
}

/* Port 0 will not take the running section back either: said, and the
 * others are still put back. */
static void test_failed_restore_is_reported(void **state)
{
	struct ports p = running(2, 0);
	char err[256] = "", small[12] = "";
	(void)state;

	assert_int_equal(update_all(&p, err, sizeof(err)), -2);
	assert_string_equal(err, "eth2: map full; eth0: cannot put the running policy's host "
				 "section back: map full");
	assert_ptr_equal(p.holds[0], &new_cfg);
	assert_ptr_equal(p.holds[1], &old_cfg);
	assert_ptr_equal(p.holds[2], &old_cfg);

	p = running(2, 0);		/* a message buffer too small: cut, never overrun */
	assert_int_equal(update_all(&p, small, sizeof(small)), -2);
	assert_string_equal(small, "eth2: map f");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_port_updated),
		cmocka_unit_test(test_refusal_puts_the_running_section_back),
		cmocka_unit_test(test_failed_restore_is_reported),
	};
	return cmocka_run_group_tests_name("host_update", tests, NULL, NULL);
}
