/* The XDP program itself, loaded from the build (not attached anywhere)
 * and run on frames with BPF_PROG_TEST_RUN, its maps written by the
 * loader's own xsk_prog_update_host: what goes to the kernel (XDP_PASS)
 * and what to rampart (with --fail closed and no socket: XDP_DROP).
 * Needs root (CI runs as root), as loading any BPF program does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <xdp/libxdp.h>

#include "xdp_cfg.h"
#include "xdp_prog.h"

static struct bpf_object *obj;
static struct xsk_prog prog;
static int prog_fd;

static int setup(void **state)
{
	(void)state;
	libbpf_set_print(NULL);
	obj = bpf_object__open_file(xsk_prog_default_path(), NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "cannot load %s (root is needed)\n", xsk_prog_default_path());
		return -1;
	}
	prog_fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "rampart_xdp"));
	prog.prog = xdp_program__from_bpf_obj(obj, "xdp");
	return prog_fd < 0 || libxdp_get_error(prog.prog) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	xdp_program__close(prog.prog);
	return 0;
}

static int run(const uint8_t *frame, uint32_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .data_size_in = len, .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(prog_fd, &t), 0);
	return (int)t.retval;
}

/* Ethernet + IPv4 TCP SYN to 10.x.0.y:80 */
static int tcp4_to(uint8_t b, uint8_t d)
{
	uint8_t f[54] = {0};

	f[12] = 0x08;
	f[14] = 0x45;
	f[17] = 40;
	f[22] = 64;
	f[23] = 6;
	memcpy(f + 26, (uint8_t[]){10, 9, 9, 9}, 4);
	memcpy(f + 30, (uint8_t[]){10, b, 0, d}, 4);
	f[36] = 0x30;
	f[39] = 80;
	return run(f, sizeof(f));
}

static void update(const struct rfw_host_addr *a, uint32_t n, unsigned flags)
{
	struct xsk_prog_cfg c = {.flags = flags, .host_addrs = a, .host_addr_count = n};
	char err[256] = "";

	if (xsk_prog_update_host(&prog, &c, err, sizeof(err)))
		fail_msg("update: %s", err);
}

/* A reload from 200 host addresses to 200 others: both lists do not fit
 * the map (256) together; the update must not stop half done with some
 * new addresses passing while the old policy stays. */
static void test_host_addresses_replaced(void **state)
{
	static struct rfw_host_addr old[200], new[200];
	(void)state;

	for (int i = 0; i < 200; i++) {
		old[i] = (struct rfw_host_addr){.family = 4, .addr = {10, 0, 0, (uint8_t)i}};
		new[i] = (struct rfw_host_addr){.family = 4, .addr = {10, 1, 0, (uint8_t)i}};
	}
	update(old, 200, RAMPART_XDP_FAIL_CLOSED);
	assert_int_equal(tcp4_to(0, 5), XDP_PASS);
	assert_int_equal(tcp4_to(1, 5), XDP_DROP);
	update(new, 200, RAMPART_XDP_FAIL_CLOSED);
	assert_int_equal(tcp4_to(0, 5), XDP_DROP);
	assert_int_equal(tcp4_to(1, 5), XDP_PASS);
	assert_int_equal(tcp4_to(1, 199), XDP_PASS);
	update(old, 200, RAMPART_XDP_FAIL_CLOSED);	/* and back */
	assert_int_equal(tcp4_to(0, 199), XDP_PASS);
	assert_int_equal(tcp4_to(1, 5), XDP_DROP);
}

/* ICMPv6 of type `type` to dst with this hop limit (40 bytes of it). */
static int icmp6(uint8_t type, const uint8_t dst[16], uint8_t hop_limit)
{
	uint8_t f[14 + 40 + 40] = {0};

	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[19] = 40;
	f[20] = 58;
	f[21] = hop_limit;
	memcpy(f + 22, (uint8_t[]){0xfd, 0, 0, 1, [15] = 7}, 16);
	memcpy(f + 38, dst, 16);
	f[54] = type;
	return run(f, sizeof(f));
}

/* Router mode hands neighbour discovery to the kernel: only what can be
 * neighbour discovery (hop limit 255; RS, RA and redirects to a
 * multicast or link-local address), not a routed packet of that type. */
static void test_neighbour_discovery(void **state)
{
	static const uint8_t transit[16] = {0xfd, 0, 0, 0x99, [15] = 5};
	static const uint8_t all_nodes[16] = {0xff, 2, [15] = 1};
	static const uint8_t link_local[16] = {0xfe, 0x80, [15] = 1};
	(void)state;

	update(NULL, 0, RAMPART_XDP_FAIL_CLOSED | RAMPART_XDP_PASS_NEIGH);
	assert_int_equal(icmp6(135, all_nodes, 255), XDP_PASS);	/* NS */
	assert_int_equal(icmp6(135, transit, 255), XDP_PASS);	/* unicast NS */
	assert_int_equal(icmp6(136, link_local, 255), XDP_PASS);	/* NA */
	assert_int_equal(icmp6(134, all_nodes, 255), XDP_PASS);	/* RA */
	assert_int_equal(icmp6(135, transit, 64), XDP_DROP);	/* routed: rules */
	assert_int_equal(icmp6(136, all_nodes, 254), XDP_DROP);
	assert_int_equal(icmp6(137, transit, 255), XDP_DROP);	/* redirect, transit */
	assert_int_equal(icmp6(133, transit, 255), XDP_DROP);	/* RS, transit */
	assert_int_equal(icmp6(128, all_nodes, 255), XDP_DROP);	/* echo: rules */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_addresses_replaced),
		cmocka_unit_test(test_neighbour_discovery),
	};
	return cmocka_run_group_tests_name("xdp_prog", tests, setup, teardown);
}
