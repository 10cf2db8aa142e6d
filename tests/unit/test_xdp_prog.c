/* The XDP program itself, loaded from the build (not attached anywhere)
 * and run on frames with BPF_PROG_TEST_RUN, its maps written by the
 * loader's own xsk_prog_update_host: what goes to the kernel (XDP_PASS)
 * and what to rampart (with --fail closed and no socket: XDP_DROP).
 * Needs root (CI runs as root), as loading any BPF program does. */
#define _GNU_SOURCE	/* pthread_setaffinity_np */
#include <pthread.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <xdp/libxdp.h>
#include <netinet/in.h>

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

static void update_pass(const struct rfw_host_addr *a, uint32_t n, unsigned flags,
			const struct rfw_host_pass *pass, uint32_t npass)
{
	struct xsk_prog_cfg c = {.flags = flags, .host_addrs = a, .host_addr_count = n,
				 .host_pass = pass, .host_pass_count = npass};
	char err[256] = "";

	if (xsk_prog_update_host(&prog, &c, err, sizeof(err)))
		fail_msg("update: %s", err);
}

static void update(const struct rfw_host_addr *a, uint32_t n, unsigned flags)
{
	update_pass(a, n, flags, NULL, 0);
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

/* One of the kernel's own IPv6 addresses, and another host's. */
static const uint8_t ours[16] = {0xfd, 0, 0, 1, [15] = 1};
static const uint8_t transit[16] = {0xfd, 0, 0, 0x99, [15] = 5};

static void set_own6(const uint8_t (*own)[16], uint32_t n)
{
	char err[256] = "";

	if (xsk_prog_set_own6(&prog, own, n, err, sizeof(err)))
		fail_msg("own6: %s", err);
}

/* Router mode hands neighbour discovery to the kernel: only what can be
 * neighbour discovery (hop limit 255; RS, RA and redirects to a
 * multicast or link-local address; NS and NA to those or to one of the
 * kernel's own addresses), not a routed packet of that type. */
static void test_neighbour_discovery(void **state)
{
	static const uint8_t all_nodes[16] = {0xff, 2, [15] = 1};
	static const uint8_t link_local[16] = {0xfe, 0x80, [15] = 1};
	(void)state;

	update(NULL, 0, RAMPART_XDP_FAIL_CLOSED | RAMPART_XDP_PASS_NEIGH);
	set_own6(&ours, 1);
	assert_int_equal(icmp6(135, all_nodes, 255), XDP_PASS);	/* NS */
	assert_int_equal(icmp6(135, ours, 255), XDP_PASS);	/* unicast NS */
	assert_int_equal(icmp6(136, ours, 255), XDP_PASS);	/* unicast NA */
	assert_int_equal(icmp6(136, link_local, 255), XDP_PASS);	/* NA */
	assert_int_equal(icmp6(134, all_nodes, 255), XDP_PASS);	/* RA */
	/* to a host behind the router: to be routed, so the rules' */
	assert_int_equal(icmp6(135, transit, 255), XDP_DROP);
	assert_int_equal(icmp6(136, transit, 255), XDP_DROP);
	assert_int_equal(icmp6(135, ours, 64), XDP_DROP);	/* routed: rules */
	assert_int_equal(icmp6(136, all_nodes, 254), XDP_DROP);
	assert_int_equal(icmp6(137, transit, 255), XDP_DROP);	/* redirect, transit */
	assert_int_equal(icmp6(133, transit, 255), XDP_DROP);	/* RS, transit */
	assert_int_equal(icmp6(128, all_nodes, 255), XDP_DROP);	/* echo: rules */
}

/* The kernel's addresses change: an address added passes NS from then
 * on, one removed no longer does, one in both lists all along; more than
 * the limit is refused whole. */
static void test_own_addresses_followed(void **state)
{
	static uint8_t many[RAMPART_XDP_MAX_OWN6 + 1][16];
	static const uint8_t added[16] = {0xfd, 0, 0, 2, [15] = 1};
	const uint8_t both[2][16] = {
		{0xfd, 0, 0, 1, [15] = 1}, {0xfd, 0, 0, 2, [15] = 1},
	};
	char err[256] = "";
	(void)state;

	update(NULL, 0, RAMPART_XDP_FAIL_CLOSED | RAMPART_XDP_PASS_NEIGH);
	set_own6(&ours, 1);
	assert_int_equal(icmp6(135, added, 255), XDP_DROP);
	set_own6(both, 2);
	assert_int_equal(icmp6(135, ours, 255), XDP_PASS);
	assert_int_equal(icmp6(135, added, 255), XDP_PASS);
	set_own6(&added, 1);
	assert_int_equal(icmp6(135, ours, 255), XDP_DROP);
	assert_int_equal(icmp6(135, added, 255), XDP_PASS);
	/* a full set replaced by another full set: the map holds both */
	for (uint32_t i = 0; i < RAMPART_XDP_MAX_OWN6 + 1; i++)
		many[i][0] = 0xfd, many[i][1] = 7, many[i][14] = (uint8_t)(i >> 8),
		many[i][15] = (uint8_t)i;
	set_own6(many, RAMPART_XDP_MAX_OWN6);
	set_own6(many + 1, RAMPART_XDP_MAX_OWN6);
	assert_int_equal(icmp6(135, many[0], 255), XDP_DROP);
	assert_int_equal(icmp6(135, many[RAMPART_XDP_MAX_OWN6], 255), XDP_PASS);
	assert_int_equal(xsk_prog_set_own6(&prog, many, RAMPART_XDP_MAX_OWN6 + 1, err,
					   sizeof(err)), -E2BIG);
	assert_int_equal(icmp6(135, many[1], 255), XDP_PASS);	/* the set in force stays */
	set_own6(&ours, 1);
}

/* xsk_own6_read finds the kernel's addresses, without link-local or
 * loopback ones: ::1 is on lo in every namespace with IPv6 (skipped),
 * and a read of none says how many it left out. */
static void test_own6_read(void **state)
{
	static uint8_t out[RAMPART_XDP_MAX_OWN6][16];
	uint32_t left_out = 99, left_none = 0;
	int n = xsk_own6_read(out, RAMPART_XDP_MAX_OWN6, &left_out);
	(void)state;

	assert_true(n >= 0);
	assert_int_equal(left_out, 0);
	for (int i = 0; i < n; i++) {
		assert_false(out[i][0] == 0xfe && (out[i][1] & 0xc0) == 0x80);
		assert_false(IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)(const void *)out[i]));
		for (int k = 0; k < i; k++)
			assert_memory_not_equal(out[i], out[k], 16);
	}
	assert_int_equal(xsk_own6_read(out, 0, &left_none), 0);
	assert_int_equal(left_none, (uint32_t)n);
}

enum { HOPOPTS = 0, TCP = 6, UDP = 17, ROUTING = 43, FRAGMENT = 44, ICMPV6 = 58, DSTOPTS = 60 };

/* An IPv6 frame from fd00:0:1::7 to dst: the extension headers in ext
 * (their chain starts with first_nh), then 40 bytes of upper layer that
 * start with l4[0..3]. */
static int ip6_frame(const uint8_t dst[16], uint8_t hop_limit, uint8_t first_nh,
		     const uint8_t *ext, size_t ext_len, const uint8_t l4[4])
{
	uint8_t f[14 + 40 + 256 + 40] = {0};
	size_t payload = ext_len + 40;

	assert_true(ext_len <= 256);
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[18] = (uint8_t)(payload >> 8);
	f[19] = (uint8_t)payload;
	f[20] = first_nh;
	f[21] = hop_limit;
	memcpy(f + 22, (uint8_t[]){0xfd, 0, 0, 1, [15] = 7}, 16);
	memcpy(f + 38, dst, 16);
	memcpy(f + 54, ext, ext_len);
	memcpy(f + 54 + ext_len, l4, 4);
	return run(f, 54 + payload);
}

/* An 8-byte options header (hop-by-hop or destination) followed by nh. */
#define OPTS8(nh) (nh), 0, 1, 4, 0, 0, 0, 0	/* PadN of 4 */
/* A fragment header followed by nh; offset in 8-byte units, more flag. */
#define FRAG(nh, offset, more, id) (nh), 0, (uint8_t)((offset) >> 5), \
	(uint8_t)(((offset) << 3) | (more)), 0, 0, 0, (id)

/* Router mode's neighbour discovery behind extension headers (an MLD-
 * style hop-by-hop header, destination options) still reaches the kernel,
 * under the same rules as without them; a fragment is never read as it
 * (RFC 6980: fragmented ND is dropped; a later fragment has no ICMPv6
 * header, only bytes that may look like one). */
static void test_neighbour_discovery_behind_extension_headers(void **state)
{
	static const uint8_t all_nodes[16] = {0xff, 2, [15] = 1};
	static const uint8_t ns[4] = {135}, na[4] = {136}, ra[4] = {134}, rs[4] = {133};
	static const uint8_t hbh[] = {OPTS8(ICMPV6)};
	static const uint8_t dst_opts[] = {OPTS8(ICMPV6)};
	static const uint8_t hbh_dst[] = {OPTS8(DSTOPTS), OPTS8(ICMPV6)};
	static const uint8_t dst_hbh[] = {OPTS8(HOPOPTS), OPTS8(ICMPV6)};
	static const uint8_t first_frag[] = {FRAG(ICMPV6, 0, 1, 9)};
	static const uint8_t later_frag[] = {FRAG(ICMPV6, 1, 0, 9)};
	static const uint8_t atomic_frag[] = {FRAG(ICMPV6, 0, 0, 9)};
	static const uint8_t hbh_later_frag[] = {OPTS8(FRAGMENT), FRAG(ICMPV6, 2, 1, 9)};
	static const uint8_t route0[] = {ICMPV6, 0, 0, 0, 0, 0, 0, 0};
	static const uint8_t two_atomic_frags[] = {FRAG(FRAGMENT, 0, 0, 9), FRAG(ICMPV6, 0, 0, 9)};
	uint8_t nine[9 * 8];
	(void)state;

	for (int i = 0; i < 9; i++)	/* nine destination options headers */
		memcpy(nine + 8 * i, (uint8_t[]){OPTS8(i < 8 ? DSTOPTS : ICMPV6)}, 8);
	update(NULL, 0, RAMPART_XDP_FAIL_CLOSED | RAMPART_XDP_PASS_NEIGH);
	set_own6(&ours, 1);
	assert_int_equal(ip6_frame(ours, 255, HOPOPTS, hbh, sizeof(hbh), ns), XDP_PASS);
	assert_int_equal(ip6_frame(transit, 255, HOPOPTS, hbh, sizeof(hbh), ns), XDP_DROP);
	assert_int_equal(ip6_frame(all_nodes, 255, DSTOPTS, dst_opts, sizeof(dst_opts), na),
			 XDP_PASS);
	assert_int_equal(ip6_frame(all_nodes, 255, HOPOPTS, hbh_dst, sizeof(hbh_dst), ra),
			 XDP_PASS);
	assert_int_equal(ip6_frame(all_nodes, 255, HOPOPTS, hbh, sizeof(hbh), rs), XDP_PASS);
	/* the rules of ND without extension headers hold behind them */
	assert_int_equal(ip6_frame(ours, 64, HOPOPTS, hbh, sizeof(hbh), ns), XDP_DROP);
	assert_int_equal(ip6_frame(transit, 255, HOPOPTS, hbh, sizeof(hbh), rs), XDP_DROP);
	/* fragments: the first holds ND (dropped by its receiver), a later
	 * one only bytes that read 135; an atomic fragment (offset 0, no
	 * more) has the fragment header RFC 6980 5 ignores ND under, as
	 * Linux does (suppress_frag_ndisc) */
	assert_int_equal(ip6_frame(ours, 255, FRAGMENT, first_frag, sizeof(first_frag), ns),
			 XDP_DROP);
	assert_int_equal(ip6_frame(all_nodes, 255, FRAGMENT, atomic_frag, sizeof(atomic_frag), na),
			 XDP_DROP);
	assert_int_equal(ip6_frame(ours, 255, FRAGMENT, later_frag, sizeof(later_frag), ns),
			 XDP_DROP);
	assert_int_equal(ip6_frame(all_nodes, 255, HOPOPTS, hbh_later_frag,
				   sizeof(hbh_later_frag), na), XDP_DROP);
	/* chains runtime/pkt.c refuses go to the rules: hop-by-hop not
	 * first, more than eight headers, a type 0 routing header, two
	 * fragment headers */
	assert_int_equal(ip6_frame(ours, 255, DSTOPTS, dst_hbh, sizeof(dst_hbh), ns), XDP_DROP);
	assert_int_equal(ip6_frame(ours, 255, DSTOPTS, nine, sizeof(nine), ns), XDP_DROP);
	assert_int_equal(ip6_frame(ours, 255, DSTOPTS, nine + 8, sizeof(nine) - 8, ns),
			 XDP_PASS);	/* eight */
	assert_int_equal(ip6_frame(all_nodes, 255, ROUTING, route0, sizeof(route0), na), XDP_DROP);
	assert_int_equal(ip6_frame(ours, 255, FRAGMENT, two_atomic_frags,
				   sizeof(two_atomic_frags), ns), XDP_DROP);
}

/* ndp in host.pass (bridge mode): an NS for a host address behind a
 * hop-by-hop header is the host's too. */
static void test_ndp_pass_behind_extension_headers(void **state)
{
	static const struct rfw_host_addr host = {.family = 6, .addr = {0xfd, 0, 0, 9, [15] = 1}};
	static const struct rfw_host_pass ndp = {.kind = RFW_HOST_PASS_NDP};
	static const uint8_t solicited[16] = {0xff, 2, [11] = 1, 0xff, 0, 0, 1};
	static const uint8_t hbh[] = {OPTS8(ICMPV6)};
	uint8_t f[14 + 40 + 8 + 24] = {0};
	(void)state;

	update_pass(&host, 1, RAMPART_XDP_FAIL_CLOSED, &ndp, 1);
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[19] = 8 + 24;
	f[20] = HOPOPTS;
	f[21] = 255;
	memcpy(f + 38, solicited, 16);
	memcpy(f + 54, hbh, 8);
	f[62] = 135;
	memcpy(f + 62 + 8, host.addr, 16);	/* the target */
	assert_int_equal(run(f, sizeof(f)), XDP_PASS);
	f[62 + 8 + 15] = 2;			/* another target */
	assert_int_equal(run(f, sizeof(f)), XDP_DROP);
}

/* IPv4 UDP from 10.9.9.9 to 10.8.0.1 whose header length field says ihl
 * (4-byte units; the header is 20 bytes whatever it says), id id,
 * fragment offset (8-byte units) and more-fragments flag; a first
 * fragment carries dport. */
static int udp4_fragment_ihl(uint8_t ihl, uint16_t id, uint16_t offset, int more,
			     uint16_t dport)
{
	uint8_t f[14 + 20 + 40] = {0};
	uint16_t frag = (uint16_t)((more ? 0x2000 : 0) | offset);

	f[12] = 0x08;
	f[14] = (uint8_t)(0x40 | ihl);
	f[17] = 20 + 40;
	f[18] = (uint8_t)(id >> 8);
	f[19] = (uint8_t)id;
	f[20] = (uint8_t)(frag >> 8);
	f[21] = (uint8_t)frag;
	f[22] = 64;
	f[23] = UDP;
	memcpy(f + 26, (uint8_t[]){10, 9, 9, 9}, 4);
	memcpy(f + 30, (uint8_t[]){10, 8, 0, 1}, 4);
	if (!offset) {
		f[34 + 1] = 99;
		f[34 + 2] = (uint8_t)(dport >> 8);
		f[34 + 3] = (uint8_t)dport;
	}
	return run(f, sizeof(f));
}

static int udp4_fragment(uint16_t id, uint16_t offset, int more, uint16_t dport)
{
	return udp4_fragment_ihl(5, id, offset, more, dport);
}

/* udp/53 in host.pass, and an IPv6 destination it is not the host's */
static const struct rfw_host_pass dns = {.kind = RFW_HOST_PASS_SERVICE, .proto = UDP,
					 .port_lo = 53, .port_hi = 53};
static const uint8_t server[16] = {0xfd, 0, 0, 8, [15] = 1};

/* Every datagram the program remembers as first seen at boot, long
 * past its 30 s. */
static void age_remembered_datagrams(void)
{
	int fd = bpf_object__find_map_fd_by_name(obj, "rampart_host_frags");
	uint8_t key[64], next[64];
	uint64_t boot = 0;
	void *prev = NULL;

	assert_true(fd >= 0);
	assert_true(bpf_map__key_size(bpf_object__find_map_by_name(obj, "rampart_host_frags")) <=
		    sizeof(key));
	for (; !bpf_map_get_next_key(fd, prev, next); prev = key) {
		assert_int_equal(bpf_map_update_elem(fd, next, &boot, BPF_EXIST), 0);
		memcpy(key, next, sizeof(key));
	}
}

/* A fragmented datagram to a port host.pass lists goes to the kernel
 * whole: its later fragments (no ports) follow the first, not to rampart,
 * which would leave the kernel a datagram it can never reassemble. */
static void test_fragments_follow_their_first_to_the_kernel(void **state)
{
	static const uint8_t to_53[4] = {0, 99, 0, 53}, to_54[4] = {0, 99, 0, 54};
	static const uint8_t first_7[] = {FRAG(UDP, 0, 1, 7)}, later_7[] = {FRAG(UDP, 185, 0, 7)};
	static const uint8_t first_8[] = {FRAG(UDP, 0, 1, 8)}, later_8[] = {FRAG(UDP, 185, 0, 8)};
	static const uint8_t later_9[] = {FRAG(UDP, 185, 0, 9)};
	(void)state;

	update_pass(NULL, 0, RAMPART_XDP_FAIL_CLOSED, &dns, 1);
	assert_int_equal(udp4_fragment(0x1234, 0, 1, 53), XDP_PASS);
	assert_int_equal(udp4_fragment(0x1234, 185, 1, 0), XDP_PASS);
	assert_int_equal(udp4_fragment(0x1234, 370, 0, 0), XDP_PASS);
	assert_int_equal(udp4_fragment(0x4321, 185, 0, 0), XDP_DROP);	/* whose first? */
	assert_int_equal(udp4_fragment(0x5555, 0, 1, 54), XDP_DROP);	/* not a host port */
	assert_int_equal(udp4_fragment(0x5555, 185, 0, 0), XDP_DROP);
	assert_int_equal(udp4_fragment(0x6666, 0, 0, 53), XDP_PASS);	/* whole */
	assert_int_equal(udp4_fragment(0x6666, 185, 0, 0), XDP_DROP);	/* not remembered */

	assert_int_equal(ip6_frame(server, 64, FRAGMENT, first_7, sizeof(first_7), to_53),
			 XDP_PASS);
	assert_int_equal(ip6_frame(server, 64, FRAGMENT, later_7, sizeof(later_7), to_54),
			 XDP_PASS);
	assert_int_equal(ip6_frame(server, 64, FRAGMENT, first_8, sizeof(first_8), to_54),
			 XDP_DROP);
	assert_int_equal(ip6_frame(server, 64, FRAGMENT, later_8, sizeof(later_8), to_53),
			 XDP_DROP);
	assert_int_equal(ip6_frame(server, 64, FRAGMENT, later_9, sizeof(later_9), to_53),
			 XDP_DROP);

	/* remembered as long as the kernel keeps fragments (30 s) */
	age_remembered_datagrams();
	assert_int_equal(udp4_fragment(0x1234, 185, 1, 0), XDP_DROP);
	assert_int_equal(ip6_frame(server, 64, FRAGMENT, later_7, sizeof(later_7), to_54),
			 XDP_DROP);
}

/* An IP id comes round again (IPv4's 16 bits wrap in seconds at a
 * few thousand datagrams a second from one source to one destination):
 * a datagram whose first fragment went to rampart keeps its later
 * fragments with rampart, though a datagram of the same addresses,
 * protocol and id went to the kernel before it. The kernel reassembles
 * the later fragments with the first it holds, so they go where the
 * last first fragment of their key went. */
static void test_id_reused_by_a_datagram_for_rampart(void **state)
{
	static const uint8_t to_53[4] = {0, 99, 0, 53}, to_80[4] = {0, 99, 0, 80};
	static const uint8_t first[] = {FRAG(UDP, 0, 1, 0x21)}, later[] = {FRAG(UDP, 185, 0, 0x21)};
	(void)state;

	update_pass(NULL, 0, RAMPART_XDP_FAIL_CLOSED, &dns, 1);
	assert_int_equal(udp4_fragment(0x2121, 0, 1, 53), XDP_PASS);	/* the host's */
	assert_int_equal(udp4_fragment(0x2121, 185, 0, 0), XDP_PASS);
	assert_int_equal(udp4_fragment(0x2121, 0, 1, 80), XDP_DROP);	/* transit, same id */
	assert_int_equal(udp4_fragment(0x2121, 185, 0, 0), XDP_DROP);	/* its, to rampart */
	assert_int_equal(udp4_fragment(0x2121, 0, 1, 53), XDP_PASS);	/* the host's again */
	assert_int_equal(udp4_fragment(0x2121, 185, 0, 0), XDP_PASS);

	assert_int_equal(ip6_frame(server, 64, FRAGMENT, first, sizeof(first), to_53), XDP_PASS);
	assert_int_equal(ip6_frame(server, 64, FRAGMENT, first, sizeof(first), to_80), XDP_DROP);
	assert_int_equal(ip6_frame(server, 64, FRAGMENT, later, sizeof(later), to_53), XDP_DROP);
}

/* A malformed first fragment (the rules drop it) reusing the key of a
 * datagram the kernel took starts a new datagram as a well-formed one
 * does: its later fragments go to rampart, not to the kernel unjudged.
 * IPv4: a header length under 20 bytes (the id is still in the frame);
 * IPv6: a chain behind the fragment header runtime/pkt.c refuses (a
 * hop-by-hop header not first, a type 0 routing header), which the
 * program's walk gives up on after it read the fragment header. */
static void test_malformed_first_fragment_reusing_an_id(void **state)
{
	static const uint8_t to_53[4] = {0, 99, 0, 53};
	static const uint8_t first[] = {FRAG(DSTOPTS, 0, 1, 0x41), OPTS8(UDP)};
	static const uint8_t later[] = {FRAG(DSTOPTS, 185, 0, 0x41)};
	static const uint8_t hbh_behind[] = {FRAG(DSTOPTS, 0, 1, 0x41), OPTS8(HOPOPTS),
					     OPTS8(UDP)};
	static const uint8_t route0_behind[] = {FRAG(DSTOPTS, 0, 1, 0x41), OPTS8(ROUTING),
						UDP, 0, 0, 0, 0, 0, 0, 0};
	const uint8_t *malformed6[] = {hbh_behind, route0_behind};
	const size_t malformed6_len[] = {sizeof(hbh_behind), sizeof(route0_behind)};
	(void)state;

	update_pass(NULL, 0, RAMPART_XDP_FAIL_CLOSED, &dns, 1);
	assert_int_equal(udp4_fragment(0x4141, 0, 1, 53), XDP_PASS);	/* the host's */
	assert_int_equal(udp4_fragment(0x4141, 185, 1, 0), XDP_PASS);
	assert_int_equal(udp4_fragment_ihl(4, 0x4141, 0, 1, 53), XDP_DROP);	/* malformed */
	assert_int_equal(udp4_fragment(0x4141, 185, 0, 0), XDP_DROP);	/* its, to rampart */

	for (int i = 0; i < 2; i++) {
		assert_int_equal(ip6_frame(server, 64, FRAGMENT, first, sizeof(first), to_53),
				 XDP_PASS);
		assert_int_equal(ip6_frame(server, 64, FRAGMENT, later, sizeof(later), to_53),
				 XDP_PASS);
		assert_int_equal(ip6_frame(server, 64, FRAGMENT, malformed6[i], malformed6_len[i],
					   to_53), XDP_DROP);
		assert_int_equal(ip6_frame(server, 64, FRAGMENT, later, sizeof(later), to_53),
				 XDP_DROP);
	}
}

/* A port-less entry (icmpv6) passes a fragmented datagram whole also
 * when destination options come after the fragment header (RFC 8200
 * 4.1 lets them): the later fragments' fragment header names those, not
 * ICMPv6, so they follow their first as a port entry's do. */
static void test_portless_fragments_behind_destination_options(void **state)
{
	static const struct rfw_host_pass icmp6 = {.kind = RFW_HOST_PASS_SERVICE,
						   .proto = ICMPV6, .port_hi = 65535};
	static const uint8_t echo[4] = {128};
	static const uint8_t first[] = {FRAG(DSTOPTS, 0, 1, 0x31), OPTS8(ICMPV6)};
	static const uint8_t later[] = {FRAG(DSTOPTS, 185, 0, 0x31)};
	static const uint8_t other[] = {FRAG(DSTOPTS, 185, 0, 0x32)};
	(void)state;

	update_pass(NULL, 0, RAMPART_XDP_FAIL_CLOSED, &icmp6, 1);
	assert_int_equal(ip6_frame(server, 64, FRAGMENT, first, sizeof(first), echo), XDP_PASS);
	assert_int_equal(ip6_frame(server, 64, FRAGMENT, later, sizeof(later), echo), XDP_PASS);
	assert_int_equal(ip6_frame(server, 64, FRAGMENT, other, sizeof(other), echo), XDP_DROP);
}

/* A pass entry sees the upper-layer protocol behind extension headers,
 * as the rules do. */
static void test_pass_entry_behind_extension_headers(void **state)
{
	static const struct rfw_host_pass ssh = {.kind = RFW_HOST_PASS_SERVICE, .proto = TCP,
						 .port_lo = 22, .port_hi = 22};
	static const uint8_t to_22[4] = {0, 99, 0, 22}, to_23[4] = {0, 99, 0, 23};
	static const uint8_t dst_opts[] = {OPTS8(TCP)};
	(void)state;

	update_pass(NULL, 0, RAMPART_XDP_FAIL_CLOSED, &ssh, 1);
	assert_int_equal(ip6_frame(server, 64, DSTOPTS, dst_opts, sizeof(dst_opts), to_22),
			 XDP_PASS);
	assert_int_equal(ip6_frame(server, 64, DSTOPTS, dst_opts, sizeof(dst_opts), to_23),
			 XDP_DROP);
}

/* Two pass lists that both pass udp/53, at either end of the list. */
static struct rfw_host_pass dns_first[RAMPART_XDP_MAX_PASS], dns_last[RAMPART_XDP_MAX_PASS];
static atomic_int flipping;

/* The reader and the writer on CPUs of their own, so that they overlap */
static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *flip_pass_lists(void *arg)
{
	struct xsk_prog_cfg c = {.flags = RAMPART_XDP_FAIL_CLOSED,
				 .host_pass_count = RAMPART_XDP_MAX_PASS};
	char err[256];
	(void)arg;

	pin_to_cpu(1);
	while (atomic_load(&flipping)) {
		c.host_pass = dns_last;
		(void)xsk_prog_update_host(&prog, &c, err, sizeof(err));
		c.host_pass = dns_first;
		(void)xsk_prog_update_host(&prog, &c, err, sizeof(err));
	}
	return NULL;
}

/* A reload rewrites the settings while frames go through the program:
 * each frame sees the old ones or the new, never part of each (the pass
 * list read while it was being copied over dropped udp/53, which both
 * pass: the first entry of one list, the last of the other). */
static void test_settings_never_half_written(void **state)
{
	pthread_t t;
	uint32_t wrong = 0;
	(void)state;

	for (int i = 0; i < RAMPART_XDP_MAX_PASS; i++)
		dns_first[i] = dns_last[i] = (struct rfw_host_pass){
			.kind = RFW_HOST_PASS_SERVICE, .proto = TCP, .port_lo = 1, .port_hi = 1};
	dns_first[0] = dns_last[RAMPART_XDP_MAX_PASS - 1] = dns;
	update_pass(NULL, 0, RAMPART_XDP_FAIL_CLOSED, dns_first, RAMPART_XDP_MAX_PASS);
	atomic_store(&flipping, 1);
	assert_int_equal(pthread_create(&t, NULL, flip_pass_lists, NULL), 0);
	pin_to_cpu(0);
	/* 3 s: before the two slots, some 4 frames a second here were wrong */
	for (time_t end = time(NULL) + 3; time(NULL) < end;)
		for (int i = 0; i < 1000; i++)
			wrong += udp4_fragment(0x3131, 0, 0, 53) != XDP_PASS;	/* not a fragment */
	atomic_store(&flipping, 0);
	pthread_join(t, NULL);
	assert_int_equal(wrong, 0);
}

/* The program as the loader opens it is configured by the time it is
 * loaded, before it can be attached: under --fail closed a transit frame
 * is dropped from the first (unconfigured, it passed every frame to the
 * kernel until the loader wrote its maps after attaching it). */
static void test_configured_before_attach(void **state)
{
	static const struct rfw_host_addr host = {.family = 4, .addr = {10, 0, 0, 5}};
	struct xsk_prog_cfg c = {.flags = RAMPART_XDP_FAIL_CLOSED | RAMPART_XDP_PASS_NEIGH,
				 .host_addrs = &host, .host_addr_count = 1, .own6 = &ours,
				 .own6_count = 1};
	struct xsk_prog fresh = {0};
	struct bpf_object *loaded;
	int shared_fd = prog_fd;
	char err[256] = "";
	(void)state;

	if (xsk_prog_open(&fresh, xsk_prog_default_path(), &c, err, sizeof(err)))
		fail_msg("open: %s", err);
	loaded = xdp_program__bpf_obj(fresh.prog);
	assert_int_equal(bpf_object__load(loaded), 0);
	prog_fd = bpf_program__fd(bpf_object__find_program_by_name(loaded, "rampart_xdp"));
	assert_true(prog_fd >= 0);
	assert_int_equal(tcp4_to(0, 5), XDP_PASS);
	assert_int_equal(tcp4_to(0, 6), XDP_DROP);
	assert_int_equal(icmp6(135, ours, 255), XDP_PASS);	/* own6 in too */
	assert_int_equal(icmp6(135, transit, 255), XDP_DROP);
	prog_fd = shared_fd;
	xsk_prog_detach(&fresh);	/* not attached: only closes */
}

/* What rampartd says of the program a previous rampartd left on a port
 * (libxdp's dispatcher, where ours joins it and then removes it, cannot
 * be attached on this kernel: the attach side is compiled, not run): a
 * program ours could not remove is a warning naming it, what it does to
 * traffic (it runs before ours: under --fail closed it drops the transit
 * traffic, before, nothing was said) and how to remove it. */
static void test_stale_program_note(void **state)
{
	struct xsk_prog kept = {.stale_kept_id = 42}, replaced = {.replaced_stale = 1}, none = {0};
	char note[512];
	(void)state;

	assert_int_equal(xsk_prog_stale_note(&kept, "eth9", 1, note, sizeof(note)), 1);
	assert_non_null(strstr(note, "warning: could not remove the XDP program (id 42)"));
	assert_non_null(strstr(note, "drops this port's transit traffic"));
	assert_non_null(strstr(note, "xdp-loader unload eth9 --id 42"));
	assert_int_equal(xsk_prog_stale_note(&kept, "eth9", 0, note, sizeof(note)), 1);
	assert_non_null(strstr(note, "passes every frame on to ours"));
	assert_null(strstr(note, "drops"));
	assert_int_equal(xsk_prog_stale_note(&replaced, "eth9", 1, note, sizeof(note)), 1);
	assert_string_equal(note, "replaced the XDP program a previous rampartd left attached");
	assert_int_equal(xsk_prog_stale_note(&none, "eth9", 1, note, sizeof(note)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_addresses_replaced),
		cmocka_unit_test(test_neighbour_discovery),
		cmocka_unit_test(test_own_addresses_followed),
		cmocka_unit_test(test_own6_read),
		cmocka_unit_test(test_neighbour_discovery_behind_extension_headers),
		cmocka_unit_test(test_ndp_pass_behind_extension_headers),
		cmocka_unit_test(test_fragments_follow_their_first_to_the_kernel),
		cmocka_unit_test(test_id_reused_by_a_datagram_for_rampart),
		cmocka_unit_test(test_malformed_first_fragment_reusing_an_id),
		cmocka_unit_test(test_portless_fragments_behind_destination_options),
		cmocka_unit_test(test_pass_entry_behind_extension_headers),
		cmocka_unit_test(test_settings_never_half_written),
		cmocka_unit_test(test_configured_before_attach),
		cmocka_unit_test(test_stale_program_note),
	};
	return cmocka_run_group_tests_name("xdp_prog", tests, setup, teardown);
}
