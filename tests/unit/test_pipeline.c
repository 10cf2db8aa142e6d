/* The worker pipeline on crafted frames, with policies compiled by rulec:
 * bridge verdicts and per-rule counters, reject replies (TCP RST, ICMP
 * unreachable) with valid checksums, router mode (routes, next-hop MACs,
 * TTL decrement with an RFC 1624 update, time-exceeded), drop reasons
 * and per-stage counters. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "csum.h"
#include "frames.h"
#include "nat.h"
#include "pipeline.h"
#include "router_lab.h"
#include "rulec.h"

struct lab {
	void *buf;
	size_t len;
	struct rfw_view view;
	struct pipe_worker *w;
};

static void lab_open(struct lab *l, const char *yaml, const struct pipe_config *cfg)
{
	router_lab_compile(yaml, &l->buf, &l->len, &l->view);
	l->w = pipe_create(cfg, &l->view);
	assert_non_null(l->w);
}

static void lab_close(struct lab *l)
{
	pipe_destroy(l->w);
	free(l->buf);
}

/* Run one frame through; returns its pipe_pkt (frame rewritten in f). */
static struct pipe_pkt run1(struct lab *l, struct frame *f, uint8_t in_port)
{
	struct pipe_pkt p = {.data = f->b, .len = f->len, .room = sizeof(f->b), .in_port = in_port};

	pipe_process(l->w, &p, 1, 0);
	f->len = p.len;
	return p;
}

static const char bridge_policy[] =
	"version: 1\n"
	"rules:\n"
	"  - name: web\n"
	"    proto: tcp\n"
	"    from: {network: 10.0.0.0/8}\n"
	"    to: {port: 80}\n"
	"    action: accept\n"
	"  - name: no-telnet\n"
	"    proto: tcp\n"
	"    to: {port: 23}\n"
	"    action: reject\n"
	"  - name: no-discard\n"
	"    proto: udp\n"
	"    to: {port: 9}\n"
	"    action: reject\n"
	"  - name: v6-ping\n"
	"    proto: icmpv6\n"
	"    action: reject\n"
	"defaults: {action: drop, stateful: false}\n";

static const struct pipe_config bridge_cfg = {
	.mode = PIPE_BRIDGE, .nports = 2, .port = {{.name = "a"}, {.name = "b"}},
	.max_flows = 1024, .seed = 1,
};

static struct flow_spec v4spec(uint8_t proto, uint16_t sport, uint16_t dport)
{
	struct flow_spec s = {.family = 4, .proto = proto, .sport = sport, .dport = dport,
			      .src = {10, 1, 0, 5}, .dst = {10, 2, 0, 9}, .tcp_flags = 0x02,
			      .seq = 1000, .payload = 10};
	return s;
}

static void test_bridge_verdicts(void **state)
{
	struct lab l;
	struct frame f, orig;
	struct flow_spec s = v4spec(6, 40000, 80);
	struct pipe_pkt p;
	const struct pipe_rule_stats *rs;
	const struct pipe_stats *st;
	(void)state;

	lab_open(&l, bridge_policy, &bridge_cfg);
	frame_build(&f, &s);
	orig = f;
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(p.out_port, 1);
	assert_memory_equal(f.b, orig.b, orig.len);	/* bridged untouched */
	p = run1(&l, &f, 1);
	assert_int_equal(p.out_port, 0);

	s = v4spec(17, 5000, 53);			/* no rule: default drop */
	frame_build(&f, &s);
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_DROP);
	assert_int_equal(p.drop, PIPE_DROP_POLICY);

	memset(f.b, 0, 60);				/* ARP is bridged */
	frame_put16(f.b + 12, 0x0806);
	f.len = 60;
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_FORWARD);

	frame_build(&f, &s);				/* truncated IPv4: malformed */
	f.len = 14 + 10;
	p = run1(&l, &f, 1);
	assert_int_equal(p.drop, PIPE_DROP_MALFORMED);

	rs = pipe_rule_stats(l.w);
	st = pipe_stats(l.w);
	assert_int_equal(rs[1].packets, 2);
	assert_int_equal(rs[1].bytes, 2 * orig.len);
	assert_int_equal(rs[0].packets, 1);
	assert_int_equal(st->drop[PIPE_DROP_POLICY], 1);
	assert_int_equal(st->drop[PIPE_DROP_MALFORMED], 1);
	assert_int_equal(st->parse_reason[PKT_ERR_SHORT_L3], 1);
	assert_int_equal(st->non_ip, 1);
	assert_int_equal(st->stage[PIPE_ST_PARSE].packets, 5);
	assert_int_equal(st->stage[PIPE_ST_ACL].packets, 3);
	assert_int_equal(st->port[0].rx_packets, 3);
	assert_int_equal(st->port[1].tx_packets, 2);	/* web + ARP */
	assert_int_equal(st->port[0].tx_packets, 1);
	assert_int_equal(st->port[1].dropped, 1);

	/* The web packet behind three VLAN tags: not bridged as non-IP
	 * (the rules would never see it), refused as malformed. */
	s = v4spec(17, 5000, 53);
	frame_build(&f, &s);
	memmove(f.b + 12 + 12, f.b + 12, f.len - 12);
	for (int t = 0; t < 3; t++) {
		frame_put16(f.b + 12 + 4 * t, 0x8100);
		frame_put16(f.b + 14 + 4 * t, (uint16_t)(10 + t));
	}
	f.len += 12;
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_DROP);
	assert_int_equal(p.drop, PIPE_DROP_MALFORMED);
	assert_int_equal(st->parse_reason[PKT_ERR_VLAN_DEPTH], 1);
	assert_int_equal(st->non_ip, 1);
	lab_close(&l);
}

static const uint8_t sender_mac[6] = {2, 0, 0, 0, 0, 1};

/* A frame whose IPv4 header checksum the NIC vouched for
 * (PIPE_RX_IPV4_CSUM_GOOD, DPDK's offload flag, on a worker told its
 * backend sets it) is not summed again on the fast path: shown with a
 * header the NIC would never have passed. Without the flag, or on a
 * worker not told, it is dropped; frames off the fast path (IP options)
 * are always summed. */
static void test_nic_checked_ipv4_header(void **state)
{
	struct pipe_config cfg = bridge_cfg;
	struct lab l, plain;
	struct frame f;
	struct flow_spec s = v4spec(6, 40001, 80);
	struct pipe_pkt p;
	const struct pipe_stats *st;
	(void)state;

	cfg.rx_csum_flags = 1;
	lab_open(&l, bridge_policy, &cfg);
	lab_open(&plain, bridge_policy, &bridge_cfg);
	st = pipe_stats(l.w);
	frame_build(&f, &s);
	f.b[14 + 11] ^= 0x40;				/* checksum off */
	p = run1(&l, &f, 0);
	assert_int_equal(p.drop, PIPE_DROP_MALFORMED);
	assert_int_equal(st->parse_reason[PKT_ERR_BAD_CSUM], 1);
	p = (struct pipe_pkt){.data = f.b, .len = f.len, .room = sizeof(f.b),
			      .rx_flags = PIPE_RX_IPV4_CSUM_GOOD};
	pipe_process(l.w, &p, 1, 0);
	assert_int_equal(p.verdict, PIPE_FORWARD);	/* taken on the NIC's word */
	assert_int_equal(st->parse_reason[PKT_ERR_BAD_CSUM], 1);
	p = (struct pipe_pkt){.data = f.b, .len = f.len, .room = sizeof(f.b),
			      .rx_flags = PIPE_RX_IPV4_CSUM_GOOD};
	pipe_process(plain.w, &p, 1, 0);		/* not told: the flag unread */
	assert_int_equal(p.drop, PIPE_DROP_MALFORMED);
	lab_close(&plain);

	/* IPv4 with an option (no-op, end): the full parser, which sums */
	memmove(f.b + 14 + 24, f.b + 14 + 20, f.len - 14 - 20);
	f.b[14] = 0x46;
	f.b[14 + 20] = 1;
	f.b[14 + 21] = 0;
	f.b[14 + 22] = 0;
	f.b[14 + 23] = 0;
	f.len += 4;
	frame_put16(f.b + 14 + 2, (uint16_t)(frame_get16(f.b + 14 + 2) + 4));
	frame_put16(f.b + 14 + 10, 0);
	frame_put16(f.b + 14 + 10, csum_ipv4_header(f.b + 14));
	p = (struct pipe_pkt){.data = f.b, .len = f.len, .room = sizeof(f.b),
			      .rx_flags = PIPE_RX_IPV4_CSUM_GOOD};
	pipe_process(l.w, &p, 1, 0);
	assert_int_equal(p.verdict, PIPE_FORWARD);	/* right: passes */
	f.b[14 + 11] ^= 0x40;
	p = (struct pipe_pkt){.data = f.b, .len = f.len, .room = sizeof(f.b),
			      .rx_flags = PIPE_RX_IPV4_CSUM_GOOD};
	pipe_process(l.w, &p, 1, 0);
	assert_int_equal(p.drop, PIPE_DROP_MALFORMED);
	assert_int_equal(st->parse_reason[PKT_ERR_BAD_CSUM], 2);
	lab_close(&l);
}

static void test_reject_replies(void **state)
{
	struct lab l;
	struct frame f, orig;
	struct flow_spec s = v4spec(6, 40000, 23);
	struct pipe_pkt p;
	uint8_t *ip = f.b + 14;
	(void)state;

	lab_open(&l, bridge_policy, &bridge_cfg);
	frame_build(&f, &s);				/* SYN to telnet: RST|ACK */
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_int_equal(p.out_port, 0);
	assert_int_equal(f.len, 14 + 20 + 20);
	assert_true(frame_checksums_ok(f.b, f.len));
	assert_memory_equal(ip + 12, s.dst, 4);
	assert_memory_equal(ip + 16, s.src, 4);
	assert_int_equal(frame_get16(ip + 20), 23);
	assert_int_equal(frame_get16(ip + 22), 40000);
	assert_int_equal(ip[20 + 13], 0x14);		/* RST|ACK */
	assert_int_equal(frame_get32(ip + 28), 1000 + 10 + 1);	/* seq + data + SYN */
	assert_memory_equal(f.b, sender_mac, 6);	/* back to the sender */

	s.tcp_flags = 0x10;				/* ACK segment: RST with seq = its ack */
	s.ack = 777;
	frame_build(&f, &s);
	run1(&l, &f, 0);
	assert_int_equal(ip[20 + 13], 0x04);
	assert_int_equal(frame_get32(ip + 24), 777);

	s.tcp_flags = 0x04;				/* never answer a RST */
	frame_build(&f, &s);
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_DROP);

	s = v4spec(17, 5000, 9);			/* UDP: ICMP 3/13 quoting it */
	frame_build(&f, &s);
	orig = f;
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_true(frame_checksums_ok(f.b, f.len));
	assert_int_equal(ip[9], 1);
	assert_int_equal(ip[20], 3);
	assert_int_equal(ip[21], 13);
	assert_memory_equal(ip + 28, orig.b + 14, orig.len - 14);
	assert_int_equal(f.len, orig.len + 28);

	s.family = 6;					/* ICMPv6 echo: ICMPv6 1/1 */
	s.proto = 58;
	memcpy(s.src, (uint8_t[]){0xfd, 0, 0, 1, [15] = 5}, 16);
	memcpy(s.dst, (uint8_t[]){0xfd, 0, 0, 2, [15] = 9}, 16);
	frame_build(&f, &s);
	orig = f;
	p = run1(&l, &f, 1);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_true(frame_checksums_ok(f.b, f.len));
	assert_int_equal(ip[6], 58);
	assert_int_equal(ip[40], 1);
	assert_int_equal(ip[41], 1);
	assert_memory_equal(ip + 8, s.dst, 16);
	assert_memory_equal(ip + 48, orig.b + 14, orig.len - 14);
	assert_int_equal(pipe_stats(l.w)->replies, 4);

	/* The quote is of the datagram: padding or a trailer after it is
	 * not part of it. */
	s = v4spec(17, 5001, 9);
	s.payload = 0;
	frame_build(&f, &s);
	orig = f;
	memset(f.b + f.len, 0, 100);
	f.len += 100;
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_int_equal(f.len, orig.len + 28);
	assert_int_equal(frame_get16(ip + 2), 20 + 8 + 28);
	assert_memory_equal(ip + 28, orig.b + 14, 28);
	assert_true(frame_checksums_ok(f.b, f.len));

	/* No reply to a source that names no single host (RFC 1812
	 * 4.3.2.7, RFC 4443 2.4(e.6)): it would go to many, or to none. */
	{
		static const uint8_t v4_sources[][4] = {
			{0, 0, 0, 0}, {127, 0, 0, 1}, {224, 0, 0, 1}, {239, 1, 2, 3},
			{240, 0, 0, 1}, {255, 255, 255, 255},
		};
		static const uint8_t v6_sources[][16] = {
			{0}, {[15] = 1}, {0xff, 2, [15] = 1}, {0xff, 0x0e, [15] = 9},
		};
		uint64_t replies = pipe_stats(l.w)->replies;

		for (size_t k = 0; k < sizeof(v4_sources) / sizeof(v4_sources[0]); k++)
			for (int tcp = 0; tcp < 2; tcp++) {
				s = tcp ? v4spec(6, 40000, 23) : v4spec(17, 5000, 9);
				memcpy(s.src, v4_sources[k], 4);
				frame_build(&f, &s);
				assert_int_equal(run1(&l, &f, 0).verdict, PIPE_DROP);
			}
		for (size_t k = 0; k < sizeof(v6_sources) / sizeof(v6_sources[0]); k++) {
			s = v4spec(17, 5000, 9);
			s.family = 6;
			memcpy(s.src, v6_sources[k], 16);
			memcpy(s.dst, (uint8_t[]){0xfd, 0, 0, 2, [15] = 9}, 16);
			frame_build(&f, &s);
			assert_int_equal(run1(&l, &f, 1).verdict, PIPE_DROP);
		}
		assert_int_equal(pipe_stats(l.w)->replies, replies);
	}

	/* A TCP header longer than its segment: no RST (its length would
	 * wrap into the RST's acknowledgement number). */
	s = v4spec(6, 40001, 23);
	s.payload = 0;
	frame_build(&f, &s);
	ip[20 + 12] = 0xf0;
	assert_int_equal(run1(&l, &f, 0).verdict, PIPE_DROP);
	lab_close(&l);
}

static const char router_policy[] =
	"version: 1\n"
	"zones:\n"
	"  inside: [lan0]\n"
	"  outside: [wan0]\n"
	"rules:\n"
	"  - name: out\n"
	"    from: {zone: inside}\n"
	"    to: {zone: outside}\n"
	"    action: accept\n"
	"  - name: lan-local\n"
	"    from: {zone: inside}\n"
	"    to: {zone: inside}\n"
	"    action: accept\n"
	"defaults: {action: drop, stateful: false}\n"
	"routes:\n"
	"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"
	"  - {prefix: 10.100.0.0/16, interface: lan0}\n"
	"  - {prefix: \"fd00:200::/32\", via: \"fd00:1::fe\", interface: wan0}\n";

static void router_cfg(struct pipe_config *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = PIPE_ROUTER;
	c->nports = 2;
	c->max_flows = 1024;
	c->seed = 1;
	strcpy(c->port[0].name, "lan0");
	memcpy(c->port[0].mac, (uint8_t[]){2, 0xaa, 0, 0, 0, 1}, 6);
	c->port[0].has_v4 = 1;
	memcpy(c->port[0].v4, (uint8_t[]){10, 100, 0, 1}, 4);
	strcpy(c->port[1].name, "wan0");
	memcpy(c->port[1].mac, (uint8_t[]){2, 0xaa, 0, 0, 0, 2}, 6);
}

static void test_router(void **state)
{
	static const uint8_t gw_mac[6] = {2, 0xbb, 0, 0, 0, 0xfe};
	struct pipe_config cfg;
	struct lab l;
	struct frame f;
	struct flow_spec s = v4spec(17, 5000, 53);
	struct pipe_pkt p;
	const struct pipe_stats *st;
	uint8_t *ip = f.b + 14;
	(void)state;

	router_cfg(&cfg);
	lab_open(&l, router_policy, &cfg);
	assert_int_equal(pipe_port_policy_if(l.w, 0) != PIPE_NO_PORT, 1);
	memcpy(s.src, (uint8_t[]){10, 100, 0, 5}, 4);
	memcpy(s.dst, (uint8_t[]){10, 200, 1, 1}, 4);

	frame_build(&f, &s);				/* no neighbour yet (not held: */
	p = run1(&l, &f, 0);				/* hold_unresolved is off) */
	assert_int_equal(p.drop, PIPE_DROP_NO_NEIGH);
	assert_int_equal(pipe_neigh_set(l.w, 1, 4, (uint8_t[]){10, 0, 1, 254}, gw_mac), 0);

	frame_build(&f, &s);
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(p.out_port, 1);
	assert_int_equal(ip[8], 63);
	assert_true(frame_checksums_ok(f.b, f.len));	/* incremental == full */
	assert_memory_equal(f.b, gw_mac, 6);
	assert_memory_equal(f.b + 6, cfg.port[1].mac, 6);

	s.ttl = 1;					/* time exceeded from lan0's address */
	frame_build(&f, &s);
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_int_equal(p.out_port, 0);
	assert_true(frame_checksums_ok(f.b, f.len));
	assert_int_equal(ip[20], 11);
	assert_memory_equal(ip + 12, cfg.port[0].v4, 4);
	assert_memory_equal(ip + 16, s.src, 4);

	s.ttl = 0;
	memcpy(s.dst, (uint8_t[]){10, 201, 0, 1}, 4);	/* no route */
	frame_build(&f, &s);
	p = run1(&l, &f, 0);
	assert_int_equal(p.drop, PIPE_DROP_NO_ROUTE);

	memcpy(s.src, (uint8_t[]){10, 200, 0, 5}, 4);	/* outside -> inside: policy */
	memcpy(s.dst, (uint8_t[]){10, 100, 0, 7}, 4);
	frame_build(&f, &s);
	p = run1(&l, &f, 1);
	assert_int_equal(p.drop, PIPE_DROP_POLICY);

	s.family = 6;					/* IPv6 via fd00:1::fe, hop limit */
	memcpy(s.src, (uint8_t[]){0xfd, 0, 0, 0x10, [15] = 5}, 16);
	memcpy(s.dst, (uint8_t[]){0xfd, 0, 2, 0, [15] = 1}, 16);
	assert_int_equal(pipe_neigh_set(l.w, 1, 6, (uint8_t[]){0xfd, 0, 0, 1, [15] = 0xfe}, gw_mac), 0);
	frame_build(&f, &s);
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(ip[7], 63);
	assert_true(frame_checksums_ok(f.b, f.len));
	assert_memory_equal(f.b, gw_mac, 6);

	memset(f.b, 0, 60);				/* ARP: the kernel's, not ours */
	frame_put16(f.b + 12, 0x0806);
	f.len = 60;
	p = run1(&l, &f, 0);
	assert_int_equal(p.drop, PIPE_DROP_NON_IP);

	st = pipe_stats(l.w);
	assert_int_equal(st->drop[PIPE_DROP_NO_NEIGH], 1);
	assert_int_equal(st->drop[PIPE_DROP_TTL], 1);
	assert_int_equal(st->stage[PIPE_ST_ROUTE].packets, 6);
	assert_int_equal(st->stage[PIPE_ST_FORWARD].packets, 4);
	assert_int_equal(pipe_rule_stats(l.w)[1].packets, 4);
	lab_close(&l);
}

/* A ping to an address a DNAT rule forwards whole (no port or protocol:
 * a "DMZ host"), IPv4 and IPv6: the request reaches the server with its
 * identifier, and the server's reply leaves from the forwarded address
 * with the same identifier, checksums right, several pings at once.
 * (Conntrack keys an echo by its identifier, which the DNAT-only path
 * must carry into the flow's reply tuple; without it the reply was
 * dropped as invalid.) */
static const char forward_policy[] =
	"version: 1\n"
	"zones: {inside: [lan0], outside: [wan0]}\n"
	"rules:\n"
	"  - {name: out, from: {zone: inside}, to: {zone: outside}, action: accept}\n"
	"  - {name: ping-in, proto: icmp, to: {network: 10.100.0.10}, action: accept}\n"
	"  - {name: ping6-in, proto: icmpv6, to: {network: \"fd00:100::10\"}, action: accept}\n"
	"defaults: {action: drop}\n"
	"nat:\n"
	"  - {name: dmz, match: {from: {zone: outside}, to: {network: 10.0.1.1}},\n"
	"     dnat: {to: 10.100.0.10}}\n"
	"  - {name: dmz6, match: {from: {zone: outside}, to: {network: \"fd00:1::1\"}},\n"
	"     dnat: {to: \"fd00:100::10\"}}\n"
	"routes:\n"
	"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"
	"  - {prefix: 10.100.0.0/16, interface: lan0}\n"
	"  - {prefix: \"fd00:200::/32\", via: \"fd00:1::fe\", interface: wan0}\n"
	"  - {prefix: \"fd00:100::/64\", interface: lan0}\n";

static void test_ping_through_forward(void **state)
{
	static const uint8_t remote6[16] = {0xfd, 0, 2, 0, [15] = 1};
	static const uint8_t wan6[16] = {0xfd, 0, 0, 1, [15] = 1};
	static const uint8_t server6[16] = {0xfd, 0, 1, 0, [15] = 0x10};
	struct pipe_config cfg = {.mode = PIPE_ROUTER, .max_flows = 1024, .seed = 1};
	struct lab l;
	struct frame f;
	struct pipe_pkt p;
	(void)state;

	router_lab_ports(&cfg);
	lab_open(&l, forward_policy, &cfg);
	router_lab_neighbours(l.w);
	assert_int_equal(pipe_neigh_set(l.w, 0, 6, server6, server_mac), 0);
	assert_int_equal(pipe_neigh_set(l.w, 1, 6, (uint8_t[]){0xfd, 0, 0, 1, [15] = 0xfe}, gw_mac),
			 0);
	for (int family = 4; family <= 6; family += 2) {
		const int n = family == 4 ? 4 : 16, id_at = 14 + (family == 4 ? 20 : 40) + 4;
		const uint8_t *remote = family == 4 ? remote_ip : remote6;
		const uint8_t *wan = family == 4 ? wan_ip : wan6;
		const uint8_t *server = family == 4 ? server_ip : server6;

		for (uint16_t i = 0; i < 8; i++) {	/* four requests, then the replies */
			struct flow_spec s = {.family = (uint8_t)family,
					      .proto = family == 4 ? 1 : 58,
					      .sport = (uint16_t)(0x0700 + i % 4), .payload = 16};
			const int reply = i >= 4;

			memcpy(s.src, reply ? server : remote, n);
			memcpy(s.dst, reply ? remote : wan, n);
			if (reply)
				frame_build_echo_reply(&f, &s);
			else
				frame_build(&f, &s);
			p = run1(&l, &f, reply ? 0 : 1);
			assert_int_equal(p.verdict, PIPE_FORWARD);
			assert_int_equal(p.out_port, reply ? 1 : 0);
			if (reply)	/* from the forwarded address */
				assert_memory_equal(f.b + 14 + (family == 4 ? 12 : 8), wan, n);
			else		/* to the server */
				assert_memory_equal(f.b + 14 + (family == 4 ? 16 : 24), server, n);
			assert_int_equal(frame_get16(f.b + id_at), 0x0700 + i % 4);
			assert_true(frame_checksums_ok(f.b, f.len));
		}
	}
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_CT_INVALID], 0);
	lab_close(&l);
}

/* IPv6 through masquerade (NAT66): a ping, a TCP handshake and a UDP
 * exchange from the LAN out through the WAN port's address, each reply
 * back to the client translated, every checksum right (ICMPv6, TCP and
 * UDP all cover the addresses). */
static const char masq6_policy[] =
	"version: 1\n"
	"zones: {inside: [lan0], outside: [wan0]}\n"
	"rules:\n"
	"  - {name: out, from: {zone: inside}, to: {zone: outside}, action: accept}\n"
	"defaults: {action: drop}\n"
	"nat:\n"
	"  - {name: masq6, match: {from: {zone: inside}, to: {zone: outside}, family: ipv6},\n"
	"     snat: {to: masquerade}}\n"
	"routes:\n"
	"  - {prefix: \"fd00:200::/32\", via: \"fd00:1::fe\", interface: wan0}\n"
	"  - {prefix: \"fd00:100::/64\", interface: lan0}\n";

static void test_masquerade_ipv6(void **state)
{
	static const uint8_t client6[16] = {0xfd, 0, 1, 0, [15] = 5};
	static const uint8_t remote6[16] = {0xfd, 0, 2, 0, [15] = 1};
	static const uint8_t wan6[16] = {0xfd, 0, 0, 1, [15] = 1};
	struct pipe_config cfg = {.mode = PIPE_ROUTER, .max_flows = 1024, .seed = 1};
	struct lab l;
	struct frame f;
	struct pipe_pkt p;
	const uint8_t protos[3] = {58, 6, 17};
	(void)state;

	router_lab_ports(&cfg);
	cfg.port[1].has_v6 = 1;
	memcpy(cfg.port[1].v6, wan6, 16);
	lab_open(&l, masq6_policy, &cfg);
	assert_int_equal(pipe_neigh_set(l.w, 0, 6, client6, client_mac), 0);
	assert_int_equal(pipe_neigh_set(l.w, 1, 6, (uint8_t[]){0xfd, 0, 0, 1, [15] = 0xfe}, gw_mac),
			 0);
	for (int k = 0; k < 3; k++) {
		struct flow_spec s = {.family = 6, .proto = protos[k], .sport = (uint16_t)(0x4400 + k),
				      .dport = protos[k] == 58 ? 0 : 443, .tcp_flags = 0x02,
				      .seq = 1000, .payload = protos[k] == 6 ? 0 : 12};
		uint16_t pub;

		memcpy(s.src, client6, 16);
		memcpy(s.dst, remote6, 16);
		frame_build(&f, &s);
		p = run1(&l, &f, 0);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_memory_equal(f.b + 14 + 8, wan6, 16);
		assert_true(frame_checksums_ok(f.b, f.len));
		pub = frame_get16(f.b + 14 + 40 + (protos[k] == 58 ? 4 : 0));

		memcpy(s.src, remote6, 16);
		memcpy(s.dst, wan6, 16);
		if (protos[k] == 58) {
			s.sport = pub;
			frame_build_echo_reply(&f, &s);
		} else {
			s.sport = 443;
			s.dport = pub;
			s.tcp_flags = 0x12;
			s.ack = 1001;
			frame_build(&f, &s);
		}
		p = run1(&l, &f, 1);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_memory_equal(f.b + 14 + 24, client6, 16);
		assert_int_equal(frame_get16(f.b + 14 + 40 + (protos[k] == 58 ? 4 : 2)), 0x4400 + k);
		assert_true(frame_checksums_ok(f.b, f.len));
	}
	{	/* a router beyond says packet too big about the TCP flow's
		 * segment as it left (from wan6): the client gets it about its
		 * own, and its path MTU discovery works through the NAT */
		static const uint8_t hop6[16] = {0xfd, 0, 2, 0, [15] = 0xfe};
		struct flow_spec s = {.family = 6, .proto = 6, .sport = 0x4401, .dport = 443,
				      .tcp_flags = 0x18, .seq = 1001, .ack = 1, .payload = 1300};
		struct frame seg;
		uint8_t *ip6 = f.b + 14, *icmp = ip6 + 40;
		uint32_t quote = 1232 - 40 - 8;	/* as much as fits in the minimum MTU */

		memcpy(s.src, client6, 16);
		memcpy(s.dst, remote6, 16);
		frame_build(&seg, &s);
		p = run1(&l, &seg, 0);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		memset(&f, 0, sizeof(f));
		memcpy(f.b, (uint8_t[]){2, 0xaa, 0, 0, 0, 2, 2, 0xbb, 0, 0, 0, 0xfe}, 12);
		frame_put16(f.b + 12, 0x86DD);
		ip6[0] = 0x60;
		frame_put16(ip6 + 4, (uint16_t)(8 + quote));
		ip6[6] = 58;
		ip6[7] = 64;
		memcpy(ip6 + 8, hop6, 16);
		memcpy(ip6 + 24, wan6, 16);
		icmp[0] = 2;			/* packet too big */
		frame_put32(icmp + 4, 1280);
		memcpy(icmp + 8, seg.b + 14, quote);
		frame_put16(icmp + 2, csum_l4(6, hop6, wan6, 58, icmp, 8 + quote));
		f.len = 14 + 40 + 8 + quote;
		p = run1(&l, &f, 1);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(p.out_port, 0);
		assert_memory_equal(ip6 + 24, client6, 16);		/* to the client */
		assert_memory_equal(icmp + 8 + 8, client6, 16);		/* about its segment */
		assert_int_equal(frame_get16(icmp + 8 + 40), 0x4401);
		assert_int_equal(frame_get32(icmp + 4), 1280);
		assert_true(frame_checksums_ok(f.b, f.len));
	}
	lab_close(&l);
}

/* A burst longer than PIPE_BURST with mixed verdicts: every frame gets its
 * own answer, in order. */
/* Next hops without a MAC are kept for the daemon to have the kernel
 * resolve (pipe_unresolved): each once however many packets went to it,
 * IPv4 and IPv6, up to PIPE_UNRESOLVED, taken oldest first; a hop that
 * has its MAC is not asked for. */
static void test_router_wants_neighbours(void **state)
{
	static const uint8_t gw_mac[6] = {2, 0xbb, 0, 0, 0, 0xfe};
	static struct frame f[16];
	struct pipe_pkt p[16];
	struct pipe_nexthop hop[2 * PIPE_UNRESOLVED];
	struct pipe_config cfg;
	struct lab l;
	(void)state;

	router_cfg(&cfg);
	lab_open(&l, router_policy, &cfg);
	assert_int_equal(pipe_unresolved(l.w, hop, 16), 0);
	/* a burst: 3 packets via 10.0.1.254, 1 via fd00:1::fe, all wan0 */
	for (uint32_t i = 0; i < 4; i++) {
		struct flow_spec s = v4spec(17, (uint16_t)(5000 + i), 53);

		memcpy(s.src, (uint8_t[]){10, 100, 0, 5}, 4);
		memcpy(s.dst, (uint8_t[]){10, 200, 1, (uint8_t)(1 + i)}, 4);
		if (i == 3) {
			s.family = 6;
			memcpy(s.src, (uint8_t[]){0xfd, 0, 0, 0x10, [15] = 5}, 16);
			memcpy(s.dst, (uint8_t[]){0xfd, 0, 2, 0, [15] = 1}, 16);
		}
		frame_build(&f[i], &s);
		p[i] = (struct pipe_pkt){.data = f[i].b, .len = f[i].len, .room = sizeof(f[i].b)};
	}
	pipe_process(l.w, p, 4, 0);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(p[i].drop, PIPE_DROP_NO_NEIGH);
	assert_int_equal(pipe_unresolved(l.w, hop, 1), 1);	/* oldest first */
	assert_int_equal(hop[0].port, 1);
	assert_int_equal(hop[0].family, 4);
	assert_memory_equal(hop[0].addr, ((uint8_t[16]){10, 0, 1, 254}), 16);
	assert_int_equal(pipe_unresolved(l.w, hop, 16), 1);
	assert_int_equal(hop[0].family, 6);
	assert_memory_equal(hop[0].addr, ((uint8_t[16]){0xfd, 0, 0, 1, [15] = 0xfe}), 16);
	assert_int_equal(pipe_unresolved(l.w, hop, 16), 0);	/* taken */

	/* resolved: forwarded, not asked for again */
	assert_int_equal(pipe_neigh_set(l.w, 1, 4, (uint8_t[]){10, 0, 1, 254}, gw_mac), 0);
	{
		struct flow_spec s = v4spec(17, 6000, 53);

		memcpy(s.src, (uint8_t[]){10, 100, 0, 5}, 4);
		memcpy(s.dst, (uint8_t[]){10, 200, 1, 1}, 4);
		frame_build(&f[0], &s);
		p[0] = (struct pipe_pkt){.data = f[0].b, .len = f[0].len, .room = sizeof(f[0].b)};
		pipe_process(l.w, p, 1, 0);
		assert_int_equal(p[0].verdict, PIPE_FORWARD);
		assert_memory_equal(f[0].b, gw_mac, 6);
		assert_int_equal(pipe_unresolved(l.w, hop, 16), 0);
		/* forgotten (it stopped answering): the flow's next packet
		 * waits for it and asks again (test_flowcache: not from the
		 * flow cache either) */
		frame_build(&f[0], &s);
		p[0] = (struct pipe_pkt){.data = f[0].b, .len = f[0].len, .room = sizeof(f[0].b)};
		pipe_process(l.w, p, 1, 0);
		assert_int_equal(p[0].verdict, PIPE_FORWARD);
		assert_int_equal(pipe_neigh_forget(l.w, 1, 4, (uint8_t[]){10, 0, 1, 254}), 0);
		assert_int_equal(pipe_neigh_forget(l.w, 1, 4, (uint8_t[]){10, 0, 1, 254}), -1);
		frame_build(&f[0], &s);
		p[0] = (struct pipe_pkt){.data = f[0].b, .len = f[0].len, .room = sizeof(f[0].b)};
		pipe_process(l.w, p, 1, 0);
		assert_int_equal(p[0].drop, PIPE_DROP_NO_NEIGH);
		assert_int_equal(pipe_unresolved(l.w, hop, 16), 1);
		assert_memory_equal(hop[0].addr, ((uint8_t[16]){10, 0, 1, 254}), 16);
		assert_int_equal(pipe_neigh_set(l.w, 1, 4, (uint8_t[]){10, 0, 1, 254}, gw_mac), 0);
	}
	assert_int_equal(pipe_unresolved(l.w, hop, 16), 0);

	/* 16 hosts on lan0 (direct: each its own next hop): the first
	 * PIPE_UNRESOLVED kept */
	for (uint32_t i = 0; i < 16; i++) {
		struct flow_spec s = v4spec(17, 7000, 53);

		memcpy(s.src, (uint8_t[]){10, 100, 0, 5}, 4);
		memcpy(s.dst, (uint8_t[]){10, 100, 1, (uint8_t)(1 + i)}, 4);
		frame_build(&f[i], &s);
		p[i] = (struct pipe_pkt){.data = f[i].b, .len = f[i].len, .room = sizeof(f[i].b)};
	}
	pipe_process(l.w, p, 16, 0);
	assert_int_equal(pipe_unresolved(l.w, hop, 2 * PIPE_UNRESOLVED), PIPE_UNRESOLVED);
	for (uint32_t k = 0; k < PIPE_UNRESOLVED; k++) {
		assert_int_equal(hop[k].port, 0);
		assert_memory_equal(hop[k].addr, ((uint8_t[16]){10, 100, 1, (uint8_t)(1 + k)}), 16);
	}
	lab_close(&l);
}

/* pipe_config.reply_rate 10: a burst of 10 replies, then one per 100 ms
 * of the burst clock; a packet over the rate is dropped without one and
 * counted (replies_limited). */
static void test_reply_rate(void **state)
{
	struct pipe_config cfg = bridge_cfg;
	struct lab l;
	struct frame f;
	struct flow_spec s = v4spec(6, 1000, 23);	/* no-telnet: reject, RST */
	uint32_t bounced = 0;
	const uint64_t t0 = 5000000000ull;
	(void)state;

	cfg.reply_rate = 10;
	lab_open(&l, bridge_policy, &cfg);
	for (uint32_t k = 0; k < 15; k++) {
		struct pipe_pkt p;

		s.sport = (uint16_t)(1000 + k);
		frame_build(&f, &s);
		p = (struct pipe_pkt){.data = f.b, .len = f.len, .room = sizeof(f.b)};
		pipe_process(l.w, &p, 1, t0);
		assert_int_equal(p.drop, PIPE_DROP_POLICY);
		bounced += p.verdict == PIPE_BOUNCE;
	}
	assert_int_equal(bounced, 10);
	assert_int_equal(pipe_stats(l.w)->replies, 10);
	assert_int_equal(pipe_stats(l.w)->replies_limited, 5);
	bounced = 0;
	for (uint32_t k = 0; k < 5; k++) {			/* 350 ms later: 3 more */
		struct pipe_pkt p;

		s.proto = 17;					/* no-discard: ICMP unreachable */
		s.dport = 9;
		frame_build(&f, &s);
		p = (struct pipe_pkt){.data = f.b, .len = f.len, .room = sizeof(f.b)};
		pipe_process(l.w, &p, 1, t0 + 350000000ull);
		bounced += p.verdict == PIPE_BOUNCE;
	}
	assert_int_equal(bounced, 3);
	assert_int_equal(pipe_stats(l.w)->replies_limited, 7);
	lab_close(&l);
}

/* A UDP frame from the LAN host to 10.200.1.1 (or fd00:200::1) of
 * `ip_len` bytes of IP packet, DF set when df (IPv4). */
static void big_frame(struct frame *f, uint8_t family, uint32_t ip_len, int df, uint16_t sport)
{
	struct flow_spec s = v4spec(17, sport, 53);

	s.family = family;
	if (family == 4) {
		memcpy(s.src, (uint8_t[]){10, 100, 0, 5}, 4);
		memcpy(s.dst, (uint8_t[]){10, 200, 1, 1}, 4);
		s.payload = ip_len - 28;
	} else {
		memcpy(s.src, (uint8_t[]){0xfd, 0, 0, 0x10, [15] = 5}, 16);
		memcpy(s.dst, (uint8_t[]){0xfd, 0, 2, 0, [15] = 1}, 16);
		s.payload = ip_len - 48;
	}
	frame_build(f, &s);
	if (family == 4 && df) {
		f->b[14 + 6] |= 0x40;
		frame_put16(f->b + 14 + 10, 0);
		frame_put16(f->b + 14 + 10, csum_ipv4_header(f->b + 14));
	}
}

/* Router mode with hold_unresolved, a next hop without a MAC: its
 * packets are held (a copy, PIPE_HELD, counted neither sent nor
 * dropped) and go out through
 * pipe_extra once the address is known, TTL decremented and MACs
 * written; one never resolved is dropped after PIPE_HELD_NS as
 * no-neighbour; with every slot taken, the next is dropped at once. */
static void test_router_holds_packets(void **state)
{
	static const uint8_t gw_mac[6] = {2, 0xbb, 0, 0, 0, 0xfe};
	static struct frame f[PIPE_MAX_HELD + 1];
	struct pipe_pkt p[PIPE_MAX_HELD + 1], *ex;
	struct pipe_config cfg;
	struct lab l;
	const uint64_t t0 = 10000000000ull;
	(void)state;

	router_cfg(&cfg);
	cfg.hold_unresolved = 1;
	lab_open(&l, router_policy, &cfg);
	for (uint32_t i = 0; i < 3; i++) {			/* via 10.0.1.254, unknown */
		struct flow_spec s = v4spec(17, (uint16_t)(5000 + i), 53);

		memcpy(s.src, (uint8_t[]){10, 100, 0, 5}, 4);
		memcpy(s.dst, (uint8_t[]){10, 200, 1, 1}, 4);
		frame_build(&f[i], &s);
		p[i] = (struct pipe_pkt){.data = f[i].b, .len = f[i].len, .room = sizeof(f[i].b)};
	}
	pipe_process(l.w, p, 3, t0);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(p[i].verdict, PIPE_HELD);
	assert_int_equal(pipe_stats(l.w)->held, 3);
	assert_int_equal(pipe_stats(l.w)->port[0].dropped, 0);
	assert_int_equal(pipe_held_poll(l.w, t0), 0);		/* not known yet */
	assert_int_equal(pipe_neigh_set(l.w, 1, 4, (uint8_t[]){10, 0, 1, 254}, gw_mac), 0);
	assert_int_equal(pipe_held_poll(l.w, 0), 3);
	assert_int_equal(pipe_extra(l.w, &ex), 3);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(ex[i].out_port, 1);
		assert_memory_equal(ex[i].data, gw_mac, 6);
		assert_memory_equal(ex[i].data + 6, cfg.port[1].mac, 6);
		assert_int_equal(ex[i].data[14 + 8], 63);
		assert_int_equal(frame_get16(ex[i].data + 34), 5000 + i);	/* in order */
		assert_true(frame_checksums_ok(ex[i].data, ex[i].len));
	}
	assert_int_equal(pipe_stats(l.w)->held_sent, 3);
	pipe_extra_clear(l.w);

	for (uint32_t i = 0; i <= PIPE_MAX_HELD; i++) {		/* lan hosts, unknown */
		struct flow_spec s = v4spec(17, 7000, 53);

		memcpy(s.src, (uint8_t[]){10, 100, 0, 5}, 4);
		memcpy(s.dst, (uint8_t[]){10, 100, 2, (uint8_t)(1 + i)}, 4);
		frame_build(&f[i], &s);
		p[i] = (struct pipe_pkt){.data = f[i].b, .len = f[i].len, .room = sizeof(f[i].b)};
	}
	pipe_process(l.w, p, PIPE_MAX_HELD + 1, t0);
	for (uint32_t i = 0; i < PIPE_MAX_HELD; i++)
		assert_int_equal(p[i].verdict, PIPE_HELD);
	assert_int_equal(p[PIPE_MAX_HELD].drop, PIPE_DROP_NO_NEIGH);	/* no slot left */
	assert_int_equal(pipe_held_poll(l.w, t0 + PIPE_HELD_NS - 1), 0);
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_NO_NEIGH], 1);
	/* never resolved: dropped, each sender told (host unreachable) */
	assert_int_equal(pipe_held_poll(l.w, t0 + PIPE_HELD_NS), PIPE_MAX_HELD);
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_NO_NEIGH], 1 + PIPE_MAX_HELD);
	assert_int_equal(pipe_extra(l.w, &ex), PIPE_MAX_HELD);
	for (uint32_t i = 0; i < PIPE_MAX_HELD; i++) {
		assert_int_equal(ex[i].out_port, 0);
		assert_int_equal(ex[i].data[14 + 20], 3);	/* ICMP unreachable, host */
		assert_int_equal(ex[i].data[14 + 21], 1);
		assert_int_equal(ex[i].data[14 + 28 + 19], 1 + i);	/* quoting its packet */
	}
	pipe_extra_clear(l.w);
	lab_close(&l);
}

/* defaults.tcp_mss: SYNs and SYN-ACKs leave with their MSS option lowered
 * to what both ports carry (clamp: the smaller MTU less 40 or 60 bytes),
 * after NAT, checksums right; a port whose MTU is unknown does not count;
 * a fixed ceiling applies in a bridge too; data segments pass untouched. */
static const char mss_policy[] =
	"version: 1\n"
	"zones:\n"
	"  inside: [lan0]\n"
	"  outside: [wan0]\n"
	"rules:\n"
	"  - name: out\n"
	"    from: {zone: inside}\n"
	"    to: {zone: outside}\n"
	"    action: accept\n"
	"defaults: {action: drop, stateful: true, tcp_mss: clamp}\n"
	"nat:\n"
	"  - name: masq\n"
	"    match: {from: {network: 10.100.0.0/16}, to: {zone: outside}}\n"
	"    snat: {to: masquerade}\n"
	"routes:\n"
	"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"
	"  - {prefix: 10.100.0.0/16, interface: lan0}\n"
	"  - {prefix: \"fd00:200::/32\", via: \"fd00:1::fe\", interface: wan0}\n"
	"  - {prefix: \"fd00:0:0:10::/64\", interface: lan0}\n";

static void test_tcp_mss_clamping(void **state)
{
	static const uint8_t gw_mac[6] = {2, 0xbb, 0, 0, 0, 0xfe};
	static const uint8_t syn_opts[8] = {2, 4, 0x05, 0xb4, 1, 3, 3, 7};	/* MSS 1460, wscale */
	struct pipe_config cfg;
	struct lab l;
	struct frame f;
	struct pipe_pkt p;
	struct flow_spec s = v4spec(6, 40000, 443), r;
	const uint8_t *ip = f.b + 14;
	uint16_t nat_port;
	(void)state;

	router_cfg(&cfg);
	cfg.port[1].has_v4 = 1;
	memcpy(cfg.port[1].v4, (uint8_t[]){10, 0, 1, 1}, 4);
	cfg.port[0].mtu = 1500;
	cfg.port[1].mtu = 1492;					/* a PPPoE uplink */
	lab_open(&l, mss_policy, &cfg);
	assert_int_equal(pipe_neigh_set(l.w, 1, 4, (uint8_t[]){10, 0, 1, 254}, gw_mac), 0);
	assert_int_equal(pipe_neigh_set(l.w, 1, 6, (uint8_t[]){0xfd, 0, 0, 1, [15] = 0xfe}, gw_mac), 0);
	assert_int_equal(pipe_neigh_set(l.w, 0, 4, (uint8_t[]){10, 100, 0, 5}, gw_mac), 0);

	memcpy(s.src, (uint8_t[]){10, 100, 0, 5}, 4);
	memcpy(s.dst, (uint8_t[]){10, 200, 1, 1}, 4);
	s.payload = 0;
	frame_build_tcp_options(&f, &s, syn_opts, sizeof(syn_opts));
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(frame_get16(ip + 20 + 22), 1452);		/* 1492 - 40 */
	assert_memory_equal(ip + 12, ((uint8_t[]){10, 0, 1, 1}), 4);	/* and masqueraded */
	assert_true(frame_checksums_ok(f.b, f.len));
	nat_port = frame_get16(ip + 20);
	assert_int_equal(pipe_stats(l.w)->mss_clamped, 1);

	r = s;						/* the SYN-ACK, to the NAT address */
	memcpy(r.src, s.dst, 4);
	memcpy(r.dst, (uint8_t[]){10, 0, 1, 1}, 4);
	r.sport = 443;
	r.dport = nat_port;
	r.tcp_flags = 0x12;
	r.seq = 5000;
	r.ack = s.seq + 1;
	frame_build_tcp_options(&f, &r, syn_opts, sizeof(syn_opts));
	p = run1(&l, &f, 1);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(frame_get16(ip + 20 + 22), 1452);		/* the smaller MTU, either way */
	assert_memory_equal(ip + 16, s.src, 4);
	assert_int_equal(frame_get16(ip + 20 + 2), 40000);
	assert_true(frame_checksums_ok(f.b, f.len));

	s.tcp_flags = 0x10;					/* the ACK: not touched */
	s.seq++;
	s.ack = r.seq + 1;
	frame_build_tcp_options(&f, &s, syn_opts, sizeof(syn_opts));
	assert_int_equal(run1(&l, &f, 0).verdict, PIPE_FORWARD);
	assert_int_equal(frame_get16(ip + 20 + 22), 1460);
	assert_int_equal(pipe_stats(l.w)->mss_clamped, 2);

	s = v4spec(6, 40000, 443);				/* IPv6: 1492 - 60 */
	s.family = 6;
	memcpy(s.src, (uint8_t[]){0xfd, 0, 0, 0x10, [15] = 5}, 16);
	memcpy(s.dst, (uint8_t[]){0xfd, 0, 2, 0, [15] = 1}, 16);
	s.payload = 0;
	frame_build_tcp_options(&f, &s, syn_opts, sizeof(syn_opts));
	assert_int_equal(run1(&l, &f, 0).verdict, PIPE_FORWARD);
	assert_int_equal(frame_get16(ip + 40 + 22), 1432);
	assert_true(frame_checksums_ok(f.b, f.len));

	pipe_set_mtu(l.w, 1, 0);				/* the uplink's MTU unknown */
	s = v4spec(6, 40001, 443);
	memcpy(s.src, (uint8_t[]){10, 100, 0, 5}, 4);
	memcpy(s.dst, (uint8_t[]){10, 200, 1, 1}, 4);
	s.payload = 0;
	frame_build_tcp_options(&f, &s, (uint8_t[]){2, 4, 0x23, 0x28}, 4);	/* 9000 */
	assert_int_equal(run1(&l, &f, 0).verdict, PIPE_FORWARD);
	assert_int_equal(frame_get16(ip + 20 + 22), 1460);		/* the LAN's 1500 */
	assert_true(frame_checksums_ok(f.b, f.len));
	assert_int_equal(pipe_stats(l.w)->mss_clamped, 4);
	lab_close(&l);

	/* a ceiling, in a bridge without MTUs */
	{
		static const char bridge_mss[] =
			"version: 1\n"
			"rules:\n"
			"  - {name: web, proto: tcp, to: {port: 80}, action: accept}\n"
			"defaults: {action: drop, tcp_mss: 1200}\n";

		lab_open(&l, bridge_mss, &bridge_cfg);
		s = v4spec(6, 40000, 80);
		s.payload = 0;
		frame_build_tcp_options(&f, &s, syn_opts, sizeof(syn_opts));
		assert_int_equal(run1(&l, &f, 0).verdict, PIPE_FORWARD);
		assert_int_equal(frame_get16(ip + 20 + 22), 1200);
		assert_true(frame_checksums_ok(f.b, f.len));
		lab_close(&l);
	}
}

/* Router mode never forwards martians (runtime/martian.h), even with
 * default routes and a policy that accepts everything: link-scoped
 * multicast (mDNS, SSDP), broadcast, link-local, loopback, unspecified
 * and IPv4-mapped addresses, as source or destination, and directed
 * broadcasts to a subnet on its ports; counted as `martian`, never
 * answered (TTL 1 included). Their neighbours in the address space are
 * forwarded; a bridge forwards them all. Packets to the firewall's own
 * port addresses are dropped as `local`. */
static const char martian_policy[] =
	"version: 1\n"
	"rules:\n"
	"  - {name: all, action: accept}\n"
	"defaults: {action: drop, stateful: false}\n"
	"routes:\n"
	"  - {prefix: 0.0.0.0/0, via: 10.0.1.254, interface: wan0}\n"
	"  - {prefix: \"::/0\", via: \"fd00:1::fe\", interface: wan0}\n"
	"  - {prefix: 10.100.0.0/16, interface: lan0}\n"
	"  - {prefix: 10.101.0.0/30, interface: lan0}\n"
	"  - {prefix: 10.102.0.0/31, interface: lan0}\n"
	"  - {prefix: 10.103.0.0/16, via: 10.100.0.9, interface: lan0}\n"
	"  - {prefix: \"fd00:0:0:10::/64\", interface: lan0}\n";

static int parse_addr(const char *text, uint8_t *a)
{
	return strchr(text, ':') ? inet_pton(AF_INET6, text, a) : inet_pton(AF_INET, text, a);
}

static struct pipe_pkt send_udp_on(struct lab *l, struct frame *f, const char *src,
				   const char *dst, uint8_t ttl, uint8_t in_port)
{
	struct flow_spec s = v4spec(17, 5353, 5353);

	memset(s.src, 0, 16);
	memset(s.dst, 0, 16);
	assert_int_equal(parse_addr(src, s.src), 1);
	assert_int_equal(parse_addr(dst, s.dst), 1);
	s.family = strchr(src, ':') ? 6 : 4;
	s.ttl = ttl;
	frame_build(f, &s);
	return run1(l, f, in_port);
}

static struct pipe_pkt send_udp(struct lab *l, struct frame *f, const char *src, const char *dst,
				uint8_t ttl)
{
	return send_udp_on(l, f, src, dst, ttl, 0);
}

static void test_router_martians(void **state)
{
	static const uint8_t gw_mac[6] = {2, 0xbb, 0, 0, 0, 0xfe};
	static const char *const martians[][2] = {
		{"10.100.0.5", "224.0.0.251"},		/* mDNS */
		{"10.100.0.5", "239.255.255.250"},	/* SSDP */
		{"10.100.0.5", "255.255.255.255"},
		{"10.100.0.5", "169.254.1.1"},
		{"10.100.0.5", "127.0.0.1"},
		{"10.100.0.5", "0.1.2.3"},
		{"169.254.7.7", "10.200.1.1"},
		{"127.0.0.1", "10.200.1.1"},
		{"0.0.0.0", "10.200.1.1"},
		{"224.1.1.1", "10.200.1.1"},
		{"255.255.255.255", "10.200.1.1"},
		{"fd00:0:0:10::5", "ff02::fb"},
		{"fd00:0:0:10::5", "ff05::fb"},
		{"fd00:0:0:10::5", "fe80::99"},
		{"fd00:0:0:10::5", "febf::1"},
		{"fd00:0:0:10::5", "::1"},
		{"fd00:0:0:10::5", "::"},
		{"fd00:0:0:10::5", "::ffff:10.200.1.1"},
		{"fe80::1", "fd00:200::1"},
		{"::1", "fd00:200::1"},
		{"::", "fd00:200::1"},
		{"ff02::1", "fd00:200::1"},
		{"::ffff:10.100.0.5", "fd00:200::1"},
		{"10.1.0.5", "10.100.255.255"},	/* directed broadcasts (RFC 2644) */
		{"10.1.0.5", "10.101.0.3"},
	};
	static const char *const routable[][2] = {
		{"10.100.0.5", "223.255.255.255"},
		{"10.100.0.5", "240.0.0.1"},		/* reserved, but routed by some */
		{"10.100.0.5", "255.255.255.254"},
		{"10.100.0.5", "169.253.255.255"},
		{"10.100.0.5", "169.255.0.1"},
		{"10.100.0.5", "1.0.0.0"},
		{"10.100.0.5", "126.255.255.255"},
		{"10.100.0.5", "128.0.0.0"},
		{"fd00:0:0:10::5", "fec0::1"},		/* site-local: deprecated, not link */
		{"fd00:0:0:10::5", "fe7f::1"},
		{"fd00:0:0:10::5", "::2"},
		{"fd00:0:0:10::5", "::1:0:0:1"},
		{"fd00:0:0:10::5", "::fffe:a00:1"},
		{"fd00:0:0:10::5", "64:ff9b::a00:1"},	/* NAT64 */
		{"fd00:0:0:10::5", "2001:db8::1"},
		{"10.1.0.5", "10.103.255.255"},	/* a remote subnet's: its own router decides */
	};
	struct pipe_config cfg;
	struct lab l;
	struct frame f;
	struct pipe_pkt p;
	(void)state;

	router_cfg(&cfg);
	cfg.port[0].has_v6 = 1;
	memcpy(cfg.port[0].v6, (uint8_t[]){0xfd, 0, 0, 0, 0, 0, 0, 0x10, [15] = 1}, 16);
	cfg.port[0].nmore4 = 2;		/* secondary addresses */
	memcpy(cfg.port[0].more4[0], (uint8_t[]){10, 100, 0, 2}, 4);
	memcpy(cfg.port[0].more4[1], (uint8_t[]){10, 100, 7, 7}, 4);
	cfg.port[0].nmore6 = 1;
	memcpy(cfg.port[0].more6[0], (uint8_t[]){0xfd, 0, 0, 0, 0, 0, 0, 0x10, [15] = 2}, 16);
	lab_open(&l, martian_policy, &cfg);
	assert_int_equal(pipe_neigh_set(l.w, 1, 4, (uint8_t[]){10, 0, 1, 254}, gw_mac), 0);
	assert_int_equal(pipe_neigh_set(l.w, 1, 6, (uint8_t[]){0xfd, 0, 0, 1, [15] = 0xfe}, gw_mac), 0);
	for (size_t k = 0; k < sizeof(martians) / sizeof(martians[0]); k++) {
		p = send_udp(&l, &f, martians[k][0], martians[k][1], 255);
		if (p.verdict != PIPE_DROP || p.drop != PIPE_DROP_MARTIAN)
			fail_msg("%s -> %s: verdict %d drop %d", martians[k][0], martians[k][1],
				 p.verdict, p.drop);
	}
	p = send_udp(&l, &f, "10.100.0.5", "224.0.0.252", 1);	/* LLMNR, TTL 1: no reply */
	assert_int_equal(p.verdict, PIPE_DROP);
	assert_int_equal(p.drop, PIPE_DROP_MARTIAN);
	assert_int_equal(pipe_stats(l.w)->replies, 0);
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_MARTIAN],
			 sizeof(martians) / sizeof(martians[0]) + 1);
	assert_int_equal(pipe_neigh_set(l.w, 0, 4, (uint8_t[]){10, 100, 0, 9}, gw_mac), 0);
	assert_int_equal(pipe_neigh_set(l.w, 0, 4, (uint8_t[]){10, 102, 0, 1}, gw_mac), 0);
	for (size_t k = 0; k < sizeof(routable) / sizeof(routable[0]); k++) {
		p = send_udp(&l, &f, routable[k][0], routable[k][1], 64);
		if (p.verdict != PIPE_FORWARD)
			fail_msg("%s -> %s: verdict %d drop %d", routable[k][0], routable[k][1],
				 p.verdict, p.drop);
	}
	p = send_udp(&l, &f, "10.1.0.5", "10.102.0.1", 64);	/* a /31 has no broadcast */
	assert_int_equal(p.verdict, PIPE_FORWARD);

	/* the firewall's own port addresses: dropped as local, not held for
	 * a neighbour that is ourselves (nor answered host-unreachable) */
	p = send_udp(&l, &f, "10.1.0.5", "10.100.0.1", 64);
	assert_int_equal(p.verdict, PIPE_DROP);
	assert_int_equal(p.drop, PIPE_DROP_LOCAL);
	p = send_udp(&l, &f, "fd00:200::5", "fd00:0:0:10::1", 64);
	assert_int_equal(p.verdict, PIPE_DROP);
	assert_int_equal(p.drop, PIPE_DROP_LOCAL);
	/* and its other addresses (secondary IPv4, more global IPv6) */
	p = send_udp(&l, &f, "10.1.0.5", "10.100.7.7", 64);
	assert_int_equal(p.drop, PIPE_DROP_LOCAL);
	p = send_udp(&l, &f, "10.1.0.5", "10.100.0.2", 64);
	assert_int_equal(p.drop, PIPE_DROP_LOCAL);
	p = send_udp(&l, &f, "fd00:200::5", "fd00:0:0:10::2", 64);
	assert_int_equal(p.drop, PIPE_DROP_LOCAL);
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_LOCAL], 5);
	/* a neighbour's address next to them still waits for its neighbour */
	p = send_udp(&l, &f, "10.1.0.5", "10.100.0.3", 64);
	assert_int_not_equal(p.drop, PIPE_DROP_LOCAL);
	p = send_udp(&l, &f, "fd00:200::5", "fd00:0:0:10::3", 64);
	assert_int_not_equal(p.drop, PIPE_DROP_LOCAL);
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_LOCAL], 5);
	assert_int_equal(pipe_stats(l.w)->replies, 0);
	lab_close(&l);

	lab_open(&l, martian_policy, &(struct pipe_config){.mode = PIPE_BRIDGE, .nports = 2,
			  .port = {{.name = "a"}, {.name = "b"}}, .max_flows = 1024, .seed = 1});
	p = send_udp(&l, &f, "10.100.0.5", "224.0.0.251", 255);	/* a bridge forwards it */
	assert_int_equal(p.verdict, PIPE_FORWARD);
	p = send_udp(&l, &f, "fe80::1", "ff02::fb", 255);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	lab_close(&l);
}

/* defaults.rpf: strict drops a packet whose source the routes would not
 * reach through the port it came in on (a LAN address from the uplink, an
 * outside address from the LAN); loose only one whose source has no
 * route at all. Known flows are not looked at again. */
static void test_router_rpf(void **state)
{
	static const uint8_t gw_mac[6] = {2, 0xbb, 0, 0, 0, 0xfe};
	static const char strict[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: all, action: accept}\n"
		"defaults: {action: drop, stateful: true, rpf: strict}\n"
		"routes:\n"
		"  - {prefix: 0.0.0.0/0, via: 10.0.1.254, interface: wan0}\n"
		"  - {prefix: 10.100.0.0/16, interface: lan0}\n"
		"  - {prefix: \"::/0\", via: \"fd00:1::fe\", interface: wan0}\n"
		"  - {prefix: \"fd00:0:0:10::/64\", interface: lan0}\n";
	static const char loose[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: all, action: accept}\n"
		"defaults: {action: drop, stateful: true, rpf: loose}\n"
		"routes:\n"
		"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"
		"  - {prefix: 10.100.0.0/16, interface: lan0}\n";
	struct pipe_config cfg;
	struct lab l;
	struct frame f;
	struct pipe_pkt p;
	struct flow_spec s;
	(void)state;

	router_cfg(&cfg);
	lab_open(&l, strict, &cfg);
	assert_int_equal(pipe_neigh_set(l.w, 1, 4, (uint8_t[]){10, 0, 1, 254}, gw_mac), 0);
	assert_int_equal(pipe_neigh_set(l.w, 1, 6, (uint8_t[]){0xfd, 0, 0, 1, [15] = 0xfe}, gw_mac), 0);
	assert_int_equal(pipe_neigh_set(l.w, 0, 4, (uint8_t[]){10, 100, 0, 5}, gw_mac), 0);
	assert_int_equal(send_udp(&l, &f, "10.100.0.5", "10.200.1.1", 64).verdict, PIPE_FORWARD);
	assert_int_equal(send_udp(&l, &f, "fd00:0:0:10::5", "fd00:200::1", 64).verdict, PIPE_FORWARD);
	p = send_udp(&l, &f, "10.200.1.1", "10.200.1.2", 64);	/* an outside source from the LAN */
	assert_int_equal(p.verdict, PIPE_DROP);
	assert_int_equal(p.drop, PIPE_DROP_RPF);
	p = send_udp(&l, &f, "2001:db8::1", "fd00:200::1", 64);
	assert_int_equal(p.drop, PIPE_DROP_RPF);

	/* from the uplink (port 1): a LAN source is spoofed, an outside one fine */
	s = v4spec(17, 5353, 53);
	memcpy(s.src, (uint8_t[]){10, 100, 0, 6}, 4);
	memcpy(s.dst, (uint8_t[]){10, 100, 0, 5}, 4);
	frame_build(&f, &s);
	p = run1(&l, &f, 1);
	assert_int_equal(p.verdict, PIPE_DROP);
	assert_int_equal(p.drop, PIPE_DROP_RPF);
	memcpy(s.src, (uint8_t[]){10, 200, 7, 7}, 4);
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 1).verdict, PIPE_FORWARD);
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_RPF], 3);
	lab_close(&l);

	lab_open(&l, loose, &cfg);
	assert_int_equal(pipe_neigh_set(l.w, 1, 4, (uint8_t[]){10, 0, 1, 254}, gw_mac), 0);
	assert_int_equal(pipe_neigh_set(l.w, 0, 4, (uint8_t[]){10, 100, 0, 5}, gw_mac), 0);
	memcpy(s.src, (uint8_t[]){10, 100, 0, 6}, 4);		/* routed, wrong port: loose takes it */
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 1).verdict, PIPE_FORWARD);
	memcpy(s.src, (uint8_t[]){10, 99, 0, 1}, 4);		/* no route back at all */
	frame_build(&f, &s);
	p = run1(&l, &f, 1);
	assert_int_equal(p.verdict, PIPE_DROP);
	assert_int_equal(p.drop, PIPE_DROP_RPF);
	lab_close(&l);
}

/* An uplink with only a link-local IPv6 address (the provider delegates a
 * prefix to the LAN): the router's ICMPv6 errors about packets from
 * outside come from the LAN port's global address, which the sender can
 * receive, not from fe80:: (never forwarded back to it). */
static void test_router_errors_from_a_global_address(void **state)
{
	static const uint8_t gw_mac[6] = {2, 0xbb, 0, 0, 0, 0xfe};
	static const uint8_t lan6[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0x10, [15] = 1};
	static const uint8_t wan_ll[16] = {0xfe, 0x80, [15] = 2};
	static const char policy[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: all, action: accept}\n"
		"defaults: {action: drop, stateful: false}\n"
		"routes:\n"
		"  - {prefix: \"::/0\", via: \"fe80::fe\", interface: wan0}\n"
		"  - {prefix: \"fd00:0:0:10::/64\", interface: lan0}\n";
	struct pipe_config cfg;
	struct lab l;
	struct frame f;
	struct pipe_pkt p;
	(void)state;

	router_cfg(&cfg);
	cfg.port[0].has_v6 = 1;
	memcpy(cfg.port[0].v6, lan6, 16);
	cfg.port[1].has_v6 = 1;
	memcpy(cfg.port[1].v6, wan_ll, 16);
	lab_open(&l, policy, &cfg);
	assert_int_equal(pipe_neigh_set(l.w, 1, 6, (uint8_t[]){0xfe, 0x80, [15] = 0xfe}, gw_mac), 0);
	assert_int_equal(pipe_neigh_set(l.w, 0, 6, (uint8_t[]){0xfd, 0, 0, 0, 0, 0, 0, 0x10, [15] = 5},
					gw_mac), 0);
	/* from outside, hop limit 1: time exceeded from the LAN's address */
	p = send_udp_on(&l, &f, "2001:db8::9", "fd00:0:0:10::5", 1, 1);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_int_equal(f.b[14 + 40], 3);			/* ICMPv6 time exceeded */
	assert_memory_equal(f.b + 14 + 8, lan6, 16);
	assert_true(frame_checksums_ok(f.b, f.len));
	/* the LAN port's own global address for its own side, as before */
	p = send_udp(&l, &f, "fd00:0:0:10::5", "2001:db8::9", 1);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_memory_equal(f.b + 14 + 8, lan6, 16);
	lab_close(&l);
}

/* Router mode and the egress port's MTU (wan0: 1400): a packet that fits
 * goes; a longer one is answered from lan0's address with fragmentation
 * needed (IPv4 with DF) or packet too big (IPv6), the MTU in the
 * message, the packet quoted, counted too-big; IPv4 without DF is
 * fragmented (test_router_fragments). A new MTU (pipe_set_mtu) applies
 * from the next burst, 0 lifting the limit. The reply rate does not
 * hold these back (path MTU discovery needs them). (A stateless policy: the
 * flow cache's share is test_pipeline_state test_too_big_through_nat.) */
static void test_router_mtu(void **state)
{
	static const uint8_t gw_mac[6] = {2, 0xbb, 0, 0, 0, 0xfe};
	static const uint8_t lan6[16] = {0xfd, 0, 0, 0x10, [15] = 1};
	struct pipe_config cfg;
	struct lab l;
	struct frame f;
	struct pipe_pkt p;
	const uint8_t *ip = f.b + 14;
	(void)state;

	router_cfg(&cfg);
	cfg.port[0].has_v6 = 1;
	memcpy(cfg.port[0].v6, lan6, 16);
	cfg.port[1].mtu = 1400;
	cfg.reply_rate = 10;
	lab_open(&l, router_policy, &cfg);
	assert_int_equal(pipe_neigh_set(l.w, 1, 4, (uint8_t[]){10, 0, 1, 254}, gw_mac), 0);
	assert_int_equal(pipe_neigh_set(l.w, 1, 6, (uint8_t[]){0xfd, 0, 0, 1, [15] = 0xfe}, gw_mac), 0);
	for (int k = 0; k < 12; k++) {				/* the reply rate spent */
		big_frame(&f, 4, 100, 1, 5000);
		f.b[14 + 8] = 1;				/* TTL 1: time exceeded */
		frame_put16(f.b + 14 + 10, 0);
		frame_put16(f.b + 14 + 10, csum_ipv4_header(f.b + 14));
		run1(&l, &f, 0);
	}
	assert_int_equal(pipe_stats(l.w)->replies_limited, 2);	/* too-big is not limited: */

	big_frame(&f, 4, 1400, 1, 5000);			/* fits exactly */
	assert_int_equal(run1(&l, &f, 0).verdict, PIPE_FORWARD);

	big_frame(&f, 4, 1401, 1, 5000);			/* DF: fragmentation needed */
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_int_equal(p.out_port, 0);
	assert_int_equal(ip[9], 1);
	assert_int_equal(ip[20], 3);
	assert_int_equal(ip[21], 4);
	assert_int_equal(frame_get16(ip + 26), 1400);		/* next-hop MTU */
	assert_memory_equal(ip + 12, cfg.port[0].v4, 4);
	assert_memory_equal(ip + 16, ((uint8_t[]){10, 100, 0, 5}), 4);
	assert_int_equal(frame_get16(ip + 28 + 2), 1401);	/* the packet quoted */
	assert_int_equal(p.len, 14 + 576);			/* up to 576 bytes */
	assert_true(frame_checksums_ok(f.b, f.len));

	big_frame(&f, 4, 1401, 0, 5001);			/* no DF: fragments */
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(pipe_stats(l.w)->fragmented, 1);
	pipe_extra_clear(l.w);

	big_frame(&f, 6, 1401, 0, 5002);			/* IPv6: packet too big */
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_int_equal(ip[6], 58);
	assert_int_equal(ip[40], 2);
	assert_int_equal(ip[41], 0);
	assert_int_equal(frame_get16(ip + 44) << 16 | frame_get16(ip + 46), 1400);
	assert_memory_equal(ip + 8, lan6, 16);
	assert_int_equal(p.len, 14 + 1280);
	assert_true(frame_checksums_ok(f.b, f.len));

	big_frame(&f, 4, 1500, 1, 6000);
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_int_equal(frame_get16(ip + 26), 1400);

	pipe_set_mtu(l.w, 1, 1500);				/* the port's MTU changed */
	big_frame(&f, 4, 1500, 1, 6000);
	assert_int_equal(run1(&l, &f, 0).verdict, PIPE_FORWARD);
	big_frame(&f, 4, 1501, 1, 6000);
	assert_int_equal(run1(&l, &f, 0).verdict, PIPE_BOUNCE);
	pipe_set_mtu(l.w, 1, 0);				/* none */
	big_frame(&f, 4, 1900, 1, 6000);
	assert_int_equal(run1(&l, &f, 0).verdict, PIPE_FORWARD);

	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_TOO_BIG], 4);

	/* The datagram counts against the MTU, not the frame: a trailer
	 * after it is trimmed (as Linux does), not a reason to refuse it. */
	pipe_set_mtu(l.w, 1, 1400);
	big_frame(&f, 4, 1400, 1, 6001);
	memset(f.b + f.len, 0xee, 100);
	f.len += 100;
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(p.len, 14 + 1400);
	big_frame(&f, 6, 1400, 0, 6002);
	f.len += 100;
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(p.len, 14 + 1400);
	big_frame(&f, 4, 1401, 1, 6003);			/* still too big without it */
	f.len += 100;
	assert_int_equal(run1(&l, &f, 0).verdict, PIPE_BOUNCE);

	/* IPv6: a non-first fragment too big for the link gets its packet
	 * too big as well (RFC 4443 has no exception for it; IPv4 does). */
	big_frame(&f, 6, 1401, 0, 6005);
	memmove(f.b + 14 + 48, f.b + 14 + 40, f.len - 14 - 40);
	memset(f.b + 14 + 40, 0, 8);
	f.b[14 + 40] = 17;
	frame_put16(f.b + 14 + 42, 0x0100 << 3);		/* offset 2048, last */
	f.b[14 + 6] = 44;
	frame_put16(f.b + 14 + 4, (uint16_t)(frame_get16(f.b + 14 + 4) + 8));
	f.len += 8;
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_int_equal(ip[40], 2);
	assert_int_equal(frame_get16(ip + 44) << 16 | frame_get16(ip + 46), 1400);
	assert_true(frame_checksums_ok(f.b, f.len));

	/* Path MTU replies are not rate limited, so never larger than the
	 * packet that caused them, even under 576 bytes. */
	pipe_set_mtu(l.w, 1, 296);
	big_frame(&f, 4, 400, 1, 6004);
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_int_equal(frame_get16(ip + 26), 296);
	assert_int_equal(frame_get16(ip + 2), 400);
	assert_int_equal(p.len, 14 + 400);
	assert_true(frame_checksums_ok(f.b, f.len));
	lab_close(&l);
}

/* The fragments of one datagram (first + extras) put back together:
 * each within mtu, header checksum right, offsets contiguous from
 * `first_off`, MF on all but the last (which keeps `last_mf`), TTL and
 * MACs as forwarded; the payload equals `payload` (len bytes). */
static void check_fragments(const struct pipe_pkt *first, const struct pipe_pkt *extra,
			    uint32_t nextra, uint32_t mtu, uint16_t first_off, int last_mf,
			    const uint8_t *payload, uint32_t len)
{
	static uint8_t got[65536];
	uint32_t at = 0;

	for (uint32_t k = 0; k <= nextra; k++) {
		const struct pipe_pkt *p = k ? &extra[k - 1] : first;
		const uint8_t *ip = p->data + 14;
		uint16_t word = frame_get16(ip + 6), total = frame_get16(ip + 2);
		uint32_t hl = (uint32_t)(ip[0] & 0x0f) * 4;

		assert_int_equal(p->verdict, PIPE_FORWARD);
		assert_true(total <= mtu);
		assert_int_equal(p->len, 14 + total);
		assert_int_equal(csum_ipv4_header(ip), frame_get16(ip + 10));
		assert_int_equal((word & 0x1fff) * 8, first_off * 8 + at);
		assert_int_equal(!!(word & 0x2000), k < nextra ? 1 : last_mf);
		assert_int_equal(ip[8], 63);
		assert_memory_equal(p->data, ((uint8_t[]){2, 0xbb, 0, 0, 0, 0xfe}), 6);
		assert_int_equal(k < nextra ? (total - hl) % 8 : 0, 0);
		memcpy(got + at, ip + hl, total - hl);
		at += total - hl;
	}
	assert_int_equal(at, len);
	assert_memory_equal(got, payload, len);
}

/* A 1900-byte UDP datagram without DF (big_frame) with `len` bytes of IP
 * options (a multiple of 4) put after its header. */
static void with_options(struct frame *f, uint16_t sport, const uint8_t *opt, uint32_t len)
{
	big_frame(f, 4, 1900, 0, sport);
	memmove(f->b + 34 + len, f->b + 34, f->len - 34);
	memcpy(f->b + 34, opt, len);
	f->b[14] = (uint8_t)(0x40 | (20 + len) / 4);
	f->len += len;
	frame_put16(f->b + 14 + 2, (uint16_t)(1900 + len));
	frame_put16(f->b + 14 + 10, 0);
	frame_put16(f->b + 14 + 10, csum_ipv4_header(f->b + 14));
}

/* Router mode, IPv4 without DF, longer than wan0's MTU: cut into
 * fragments of at most the MTU (the first in the packet's frame, the
 * others from pipe_extra), payload cut at multiples of 8, put back
 * together byte for byte; a datagram that is itself a first fragment is
 * cut further (all pieces MF); the extras pile up until pipe_extra_clear
 * and a datagram that needs more room than is left is dropped as
 * too-big. IP options: all in the first fragment, only the copied ones
 * (copy flag) in the others, padded to 4 bytes; options that cannot be
 * walked: dropped as too-big. */
static void test_router_fragments(void **state)
{
	static const uint8_t gw_mac[6] = {2, 0xbb, 0, 0, 0, 0xfe};
	static uint8_t orig[4096];
	struct pipe_config cfg;
	struct lab l;
	struct frame f;
	struct pipe_pkt p, *ex;
	uint32_t n, len;
	(void)state;

	router_cfg(&cfg);
	cfg.port[1].mtu = 576;
	lab_open(&l, router_policy, &cfg);
	assert_int_equal(pipe_neigh_set(l.w, 1, 4, (uint8_t[]){10, 0, 1, 254}, gw_mac), 0);

	big_frame(&f, 4, 1900, 0, 5000);			/* 1880 bytes of UDP */
	len = 1880;
	memcpy(orig, f.b + 34, len);
	p = run1(&l, &f, 0);
	n = pipe_extra(l.w, &ex);
	assert_int_equal(n, 3);					/* 552 * 3 + 224 */
	assert_int_equal(frame_get16(f.b + 14 + 2), 20 + 552);
	check_fragments(&p, ex, n, 576, 0, 0, orig, len);
	assert_int_equal(pipe_stats(l.w)->fragments, 4);

	big_frame(&f, 4, 1020, 0, 5001);			/* a first fragment itself */
	f.b[14 + 6] = 0x20;					/* MF, offset 0 */
	frame_put16(f.b + 14 + 10, 0);
	frame_put16(f.b + 14 + 10, csum_ipv4_header(f.b + 14));
	memcpy(orig, f.b + 34, 1000);
	p = run1(&l, &f, 0);
	assert_int_equal(pipe_extra(l.w, &ex), 4);		/* 3 before + 1 */
	check_fragments(&p, ex + 3, 1, 576, 0, 1, orig, 1000);
	pipe_extra_clear(l.w);
	assert_int_equal(pipe_extra(l.w, &ex), 0);

	for (uint32_t k = 0; k < PIPE_MAX_EXTRA / 3; k++) {	/* room: 21 x 3 of 64 */
		big_frame(&f, 4, 1900, 0, (uint16_t)(6000 + k));
		assert_int_equal(run1(&l, &f, 0).verdict, PIPE_FORWARD);
	}
	big_frame(&f, 4, 1900, 0, 7000);
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_DROP);
	assert_int_equal(p.drop, PIPE_DROP_TOO_BIG);
	pipe_extra_clear(l.w);
	big_frame(&f, 4, 1900, 0, 7000);
	assert_int_equal(run1(&l, &f, 0).verdict, PIPE_FORWARD);
	pipe_extra_clear(l.w);

	/* Options: stream id (136, copied), a NOP, record route (7, not
	 * copied, 3 bytes), EOL: 8 bytes, a 28-byte header. */
	with_options(&f, 7001, (const uint8_t[]){136, 4, 0x12, 0x34, 1, 7, 3, 4}, 8);
	memcpy(orig, f.b + 14 + 28, 1880);
	p = run1(&l, &f, 0);
	n = pipe_extra(l.w, &ex);
	assert_int_equal(n, 3);			/* 544 (576 - 28), then 552s (576 - 24) */
	assert_int_equal(f.b[14], 0x47);	/* the first: every option */
	assert_memory_equal(f.b + 14 + 20, ((uint8_t[]){136, 4, 0x12, 0x34, 1, 7, 3, 4}), 8);
	assert_int_equal(frame_get16(f.b + 14 + 2), 28 + 544);
	for (uint32_t k = 0; k < n; k++) {	/* the others: the copied one */
		assert_int_equal(ex[k].data[14], 0x46);
		assert_memory_equal(ex[k].data + 14 + 20, ((uint8_t[]){136, 4, 0x12, 0x34}), 4);
	}
	check_fragments(&p, ex, n, 576, 0, 0, orig, 1880);
	pipe_extra_clear(l.w);

	/* A record route past the header: the parser refuses it before any
	 * rule or fragmentation sees it. */
	with_options(&f, 7002, (const uint8_t[]){7, 9, 4, 0, 0, 0, 0, 0}, 8);
	p = run1(&l, &f, 0);
	assert_int_equal(p.verdict, PIPE_DROP);
	assert_int_equal(p.drop, PIPE_DROP_MALFORMED);
	lab_close(&l);
}

static void test_long_burst(void **state)
{
	enum { N = 300 };
	struct lab l;
	struct frame *f = calloc(N, sizeof(*f));
	struct pipe_pkt *p = calloc(N, sizeof(*p));
	(void)state;

	lab_open(&l, bridge_policy, &bridge_cfg);
	for (uint32_t i = 0; i < N; i++) {
		struct flow_spec s = v4spec(i % 3 ? 6 : 17, (uint16_t)(1000 + i), i % 3 ? 80 : 53);

		frame_build(&f[i], &s);
		p[i] = (struct pipe_pkt){.data = f[i].b, .len = f[i].len, .room = FRAME_ROOM,
					 .in_port = (uint8_t)(i & 1)};
	}
	pipe_process(l.w, p, N, 0);
	for (uint32_t i = 0; i < N; i++) {
		assert_int_equal(p[i].verdict, i % 3 ? PIPE_FORWARD : PIPE_DROP);
		if (i % 3)
			assert_int_equal(p[i].out_port, (i & 1) ^ 1);
	}
	assert_int_equal(pipe_rule_stats(l.w)[1].packets, 200);
	assert_int_equal(pipe_rule_stats(l.w)[0].packets, 100);
	lab_close(&l);
	free(f);
	free(p);
}

/* A stateful bridge without NAT: the reply needs no rule of its own, it
 * follows the flow the request opened; an unsolicited packet the other
 * way is dropped. */
static void test_stateful_bridge(void **state)
{
	static const char policy[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: out, proto: udp, from: {network: 10.1.0.0/16}, action: accept}\n"
		"defaults: {action: drop}\n";
	struct lab l;
	struct frame f;
	struct flow_spec s = v4spec(17, 5000, 53), r;
	(void)state;

	lab_open(&l, policy, &bridge_cfg);
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 0).verdict, PIPE_FORWARD);
	r = s;					/* the answer, port b -> a */
	memcpy(r.src, s.dst, 4);
	memcpy(r.dst, s.src, 4);
	r.sport = s.dport;
	r.dport = s.sport;
	frame_build(&f, &r);
	assert_int_equal(run1(&l, &f, 1).verdict, PIPE_FORWARD);
	r.sport = 54;				/* not an answer: no flow, no rule */
	frame_build(&f, &r);
	assert_int_equal(run1(&l, &f, 1).drop, PIPE_DROP_POLICY);
	assert_int_equal(pipe_rule_stats(l.w)[1].packets, 2);
	assert_int_equal(pipe_stats(l.w)->flows_hit, 1);
	lab_close(&l);
}

/* An IPv6 fragment of a TCP datagram: Ethernet, IPv6 (fd00::1 to fd00::2),
 * a fragment header (id 0x77, offset in bytes, more fragments) naming a
 * destination options header, then what the fragmentable part holds from
 * that offset on (len bytes of part). */
static void frag6_frame(struct frame *f, uint16_t offset, int more, const uint8_t *part,
			uint32_t len)
{
	static const uint8_t a[16] = {0xfd, [15] = 1}, b[16] = {0xfd, [15] = 2};
	uint8_t *ip = f->b + 14, *fh = ip + 40;

	memset(f, 0, sizeof(*f));
	memcpy(f->b, (uint8_t[]){2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd}, 14);
	ip[0] = 0x60;
	frame_put16(ip + 4, (uint16_t)(8 + len));
	ip[6] = 44;		/* fragment header */
	ip[7] = 64;
	memcpy(ip + 8, a, 16);
	memcpy(ip + 24, b, 16);
	fh[0] = 60;		/* destination options */
	frame_put16(fh + 2, (uint16_t)(offset | (more ? 1 : 0)));
	frame_put32(fh + 4, 0x77);
	memcpy(fh + 8, part, len);
	f->len = 14 + 40 + 8 + len;
}

/* The fragmentable part of a first fragment: a destination options
 * header (next header TCP, one PadN option) at bytes 0-7, then a SYN
 * from port 40000 to 22 at bytes 8-27. */
static void syn_behind_padn(uint8_t first[32])
{
	memset(first, 0, 32);
	first[0] = 6;
	first[2] = 1;
	first[3] = 4;
	frame_put16(first + 8, 40000);
	frame_put16(first + 10, 22);
	first[8 + 12] = 5 << 4;
	first[8 + 13] = 0x02;		/* SYN */
}

/* RFC 1858 behind IPv6 options headers: the first fragment of a TCP
 * datagram carries a destination options header, then the TCP header,
 * at bytes 8-27 of the fragmentable part. A later fragment starting at
 * byte 8, 16 or 24 would rewrite the ports or flags the rules judged;
 * its own fragment header names only the options header, so the parser
 * cannot tell, and conntrack checks it against the first it remembers:
 * dropped as malformed (fragment-overlap). One starting at byte 32
 * follows its first. */
static void test_ipv6_fragment_overlapping_behind_options(void **state)
{
	static const char policy[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: ssh, proto: tcp, from: {network: 'fd00::/8'}, to: {port: 22}, action: accept}\n"
		"defaults: {action: drop}\n";
	uint8_t first[32], rest[16] = {0};
	struct lab l;
	struct frame f;
	struct pipe_pkt p;
	(void)state;

	syn_behind_padn(first);
	lab_open(&l, policy, &bridge_cfg);
	frag6_frame(&f, 0, 1, first, sizeof(first));
	assert_int_equal(run1(&l, &f, 0).verdict, PIPE_FORWARD);
	for (uint16_t at = 8; at <= 24; at += 8) {
		frag6_frame(&f, at, 0, rest, sizeof(rest));
		p = run1(&l, &f, 0);
		assert_int_equal(p.verdict, PIPE_DROP);
		assert_int_equal(p.drop, PIPE_DROP_MALFORMED);
	}
	assert_int_equal(pipe_stats(l.w)->parse_reason[PKT_ERR_FRAG_OVERLAP], 3);
	frag6_frame(&f, 32, 0, rest, sizeof(rest));
	assert_int_equal(run1(&l, &f, 0).verdict, PIPE_FORWARD);
	assert_int_equal(pipe_rule_stats(l.w)[1].packets, 2);
	lab_close(&l);
}

/* The same overlaps where the fragment waits for its first: behind it in
 * one burst (looked up again once the first is accepted), and parked
 * before it came (run again once it did). Each is dropped as malformed
 * (fragment-overlap), received once, and leaves no parking slot held;
 * a fragment past the upper-layer header, parked with it, follows its
 * first. */
static void test_ipv6_fragment_overlap_waiting_for_its_first(void **state)
{
	static const char policy[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: ssh, proto: tcp, from: {network: 'fd00::/8'}, to: {port: 22}, action: accept}\n"
		"defaults: {action: drop}\n";
	struct pipe_config cfg = bridge_cfg;
	uint8_t first[32], rest[16] = {0};
	const struct pipe_stats *st;
	struct frame f[2], over, past;
	struct pipe_pkt p[PIPE_BURST];
	uint32_t n;
	struct lab l;
	(void)state;

	syn_behind_padn(first);
	cfg.park_fragments = 1;
	lab_open(&l, policy, &cfg);
	st = pipe_stats(l.w);

	/* first and overlapping fragment in one burst */
	frag6_frame(&f[0], 0, 1, first, sizeof(first));
	frag6_frame(&f[1], 8, 0, rest, sizeof(rest));
	for (int i = 0; i < 2; i++)
		p[i] = (struct pipe_pkt){.data = f[i].b, .len = f[i].len, .room = sizeof(f[i].b)};
	pipe_process(l.w, p, 2, 0);
	assert_int_equal(p[0].verdict, PIPE_FORWARD);
	assert_int_equal(p[1].verdict, PIPE_DROP);
	assert_int_equal(p[1].drop, PIPE_DROP_MALFORMED);
	assert_int_equal(st->parse_reason[PKT_ERR_FRAG_OVERLAP], 1);
	assert_int_equal(st->port[0].rx_packets, 2);

	/* another datagram: an overlapping and a following fragment before
	 * their first, parked */
	frag6_frame(&over, 16, 1, rest, sizeof(rest));
	frag6_frame(&past, 32, 0, rest, sizeof(rest));
	frame_put32(over.b + 14 + 40 + 4, 0x78);
	frame_put32(past.b + 14 + 40 + 4, 0x78);
	assert_int_equal(run1(&l, &over, 0).verdict, PIPE_HELD);
	assert_int_equal(run1(&l, &past, 0).verdict, PIPE_HELD);
	assert_int_equal(pipe_parked_count(l.w), 2);
	assert_int_equal(st->port[0].rx_packets, 2);		/* not yet counted */
	frag6_frame(&f[0], 0, 1, first, sizeof(first));
	frame_put32(f[0].b + 14 + 40 + 4, 0x78);
	assert_int_equal(run1(&l, &f[0], 0).verdict, PIPE_FORWARD);
	n = pipe_frag_take(l.w, p, PIPE_BURST, 0);
	assert_int_equal(n, 2);
	pipe_process(l.w, p, n, 0);
	for (uint32_t i = 0; i < n; i++) {
		const int overlapping = p[i].len == over.len && !memcmp(p[i].data, over.b, over.len);

		assert_int_equal(p[i].verdict, overlapping ? PIPE_DROP : PIPE_FORWARD);
		if (overlapping)
			assert_int_equal(p[i].drop, PIPE_DROP_MALFORMED);
	}
	assert_int_equal(st->parse_reason[PKT_ERR_FRAG_OVERLAP], 2);
	assert_int_equal(st->port[0].rx_packets, 5);
	assert_int_equal(st->drop[PIPE_DROP_FRAG_ORPHAN], 0);
	assert_int_equal(pipe_frag_take(l.w, p, PIPE_BURST, 0), 0);
	assert_int_equal(pipe_parked_count(l.w), 0);
	assert_int_equal(pipe_rule_stats(l.w)[1].packets, 3);	/* two firsts, one past */
	lab_close(&l);
}

/* After a connection closed, a SYN from its old responder on the same
 * ports is a new connection the other way, judged by the rules: refused
 * where no rule lets the responder's side open one, let through (and
 * tracked as a new flow) where one does. Before, it counted as the old
 * flow's and passed when its sequence number fell in the old window. */
static void test_reopen_from_responder(void **state)
{
	static const char one_way[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: web, proto: tcp, from: {network: 10.1.0.0/16}, to: {port: 80},"
		" action: accept}\n"
		"defaults: {action: drop}\n";
	static const char both_ways[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: web, proto: tcp, from: {network: 10.1.0.0/16}, to: {port: 80},"
		" action: accept}\n"
		"  - {name: back, proto: tcp, from: {network: 10.2.0.0/16}, action: accept}\n"
		"defaults: {action: drop}\n";
	const char *policies[2] = {one_way, both_ways};
	(void)state;

	for (int allowed = 0; allowed <= 1; allowed++) {
		struct flow_spec c = v4spec(6, 5000, 80), sv = c;
		struct lab l;
		struct frame f;
		struct pipe_pkt p;

		memcpy(sv.src, c.dst, 4);
		memcpy(sv.dst, c.src, 4);
		sv.sport = 80;
		sv.dport = 5000;
		c.payload = sv.payload = 0;
		lab_open(&l, policies[allowed], &bridge_cfg);
		/* handshake, then both sides close */
		const struct {
			int from_server;
			uint8_t flags;
			uint32_t seq, ack;
		} steps[] = {
			{0, 0x02, 1000, 0}, {1, 0x12, 5000, 1001}, {0, 0x10, 1001, 5001},
			{0, 0x11, 1001, 5001}, {1, 0x11, 5001, 1002}, {0, 0x10, 1002, 5002},
		};
		for (unsigned k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
			struct flow_spec *s = steps[k].from_server ? &sv : &c;

			s->tcp_flags = steps[k].flags;
			s->seq = steps[k].seq;
			s->ack = steps[k].ack;
			frame_build(&f, s);
			assert_int_equal(run1(&l, &f, (uint8_t)steps[k].from_server).verdict,
					 PIPE_FORWARD);
		}
		/* the server opens one back, its sequence in the old window */
		sv.tcp_flags = 0x02;
		sv.seq = 5002;
		sv.ack = 0;
		frame_build(&f, &sv);
		p = run1(&l, &f, 1);
		if (!allowed) {
			assert_int_equal(p.verdict, PIPE_DROP);
			assert_int_equal(p.drop, PIPE_DROP_POLICY);
		} else {
			assert_int_equal(p.verdict, PIPE_FORWARD);
			assert_int_equal(pipe_rule_stats(l.w)[2].packets, 1);	/* back */
			c.tcp_flags = 0x12;			/* its SYN+ACK follows it */
			c.seq = 90000;
			c.ack = 5003;
			frame_build(&f, &c);
			assert_int_equal(run1(&l, &f, 0).verdict, PIPE_FORWARD);
			assert_int_equal(pipe_rule_stats(l.w)[2].packets, 2);
		}
		lab_close(&l);
	}
}

/* Two SNAT rules to one address whose port ranges overlap get a pool
 * each: a pair is still held by one flow (the wide rule's flows skip the
 * narrow one's ports while they are held), and each port goes back to
 * the pool that gave it (before, the first pool whose range held it got
 * it: the other leaked it for good, or freed a pair a live flow held). */
static const char overlap_pools_policy[] =
	"version: 1\n"
	"defaults: {action: drop, timeouts: {udp: 30, udp_stream: 30}}\n"
	"rules:\n"
	"  - {name: out, proto: udp, from: {network: 10.1.0.0/16}, action: accept}\n"
	"nat:\n"
	"  - name: wide\n"
	"    match: {from: {network: 10.1.0.0/24}}\n"
	"    snat: {to: [10.9.0.1], ports: 30000-30020}\n"
	"  - name: narrow\n"
	"    match: {from: {network: 10.1.1.0/24}}\n"
	"    snat: {to: [10.9.0.1], ports: 30000-30003}\n";

/* A UDP packet from src:sport to 10.<dst_net>.0.9:7000; 1 if forwarded,
 * its source port as it left in *port. */
static int send_from(struct lab *l, const uint8_t src[4], uint16_t sport, uint8_t dst_net,
		     uint64_t now, uint16_t *port)
{
	struct flow_spec s = {.family = 4, .proto = 17, .sport = sport, .dport = 7000,
			      .src = {src[0], src[1], src[2], src[3]}, .dst = {10, dst_net, 0, 9},
			      .payload = 10};
	struct frame f;
	struct pipe_pkt p;

	frame_build(&f, &s);
	p = (struct pipe_pkt){.data = f.b, .len = f.len, .room = sizeof(f.b)};
	pipe_process(l->w, &p, 1, now);
	*port = frame_get16(f.b + 14 + 20);
	return p.verdict == PIPE_FORWARD;
}

static int snat_from(struct lab *l, uint8_t net, uint16_t sport, uint64_t now, uint16_t *port)
{
	return send_from(l, (const uint8_t[4]){10, 1, net, 5}, sport, 2, now, port);
}

static void test_snat_pools_that_overlap(void **state)
{
	const uint64_t sec = 1000000000ull;
	struct lab l;
	uint64_t now = sec;
	uint16_t port;
	(void)state;

	lab_open(&l, overlap_pools_policy, &bridge_cfg);
	assert_int_equal(pipe_nat_pool_count(l.w), 2);
	for (int round = 0; round < 3; round++) {
		uint32_t held = 0, wide = 0;

		for (uint16_t k = 0; k < 4; k++) {		/* the narrow range, all of it */
			assert_true(snat_from(&l, 1, (uint16_t)(5000 + 10 * round + k), now, &port));
			assert_true(port >= 30000 && port <= 30003);
			assert_false(held >> (port - 30000) & 1);
			held |= 1u << (port - 30000);
		}
		for (uint16_t k = 0; k < 20; k++) {		/* the wide: 17 left */
			if (!snat_from(&l, 0, (uint16_t)(6000 + 100 * round + k), now, &port))
				continue;
			assert_true(port >= 30004 && port <= 30020);
			assert_false(held >> (port - 30000) & 1);
			held |= 1u << (port - 30000);
			wide++;
		}
		assert_int_equal(wide, 17);
		now += 100 * sec;				/* every flow times out */
		pipe_tick(l.w, now);
		pipe_tick(l.w, now + sec);
		now += 2 * sec;
		for (uint32_t i = 0; i < 2; i++) {
			assert_int_equal(pipe_nat_pool(l.w, i)->stats.in_use, 0);
			assert_int_equal(pipe_nat_pool(l.w, i)->stats.bad_frees, 0);
		}
	}
	lab_close(&l);
}

/* SNAT whose pool holds a source's own address: a flow from it may get
 * its own address, or its own address and port (no translation to see),
 * and still holds that pair; its end gives the pair back. Before, the end
 * of any flow whose reply went back to its source's own address kept the
 * pair (taken for a flow never translated): the pool ran dry for good.
 * A flow that was not translated but whose source pair is one the pool
 * holds for another flow gives back nothing. */
static const char own_address_policy[] =
	"version: 1\n"
	"defaults: {action: drop, timeouts: {udp: 30, udp_stream: 30}}\n"
	"rules:\n"
	"  - {name: out, proto: udp, from: {network: 10.1.0.0/16}, action: accept}\n"
	"nat:\n"
	"  - name: hide\n"
	"    match: {from: {network: 10.1.0.0/16}, to: {network: 10.2.0.0/16}}\n"
	"    snat: {to: [10.1.0.5], ports: 30000-30000}\n";

static void test_snat_to_own_address(void **state)
{
	const uint64_t sec = 1000000000ull;
	const uint8_t self[4] = {10, 1, 0, 5}, other[4] = {10, 1, 0, 6};
	const struct nat_pool *pool;
	struct lab l;
	uint64_t now = sec;
	uint16_t port;
	(void)state;

	lab_open(&l, own_address_policy, &bridge_cfg);
	pool = pipe_nat_pool(l.w, 0);
	/* the pool's one pair, 10.1.0.5:30000: to its own source pair, then
	 * to one of another port; each time back when the flow ends */
	for (int round = 0; round < 4; round++) {
		uint16_t sport = round & 1 ? 5000 : 30000;

		assert_true(send_from(&l, self, sport, 2, now, &port));
		assert_int_equal(port, 30000);
		assert_int_equal(pool->stats.in_use, 1);
		assert_false(send_from(&l, other, 4000, 2, now, &port));	/* none left */
		now += 100 * sec;			/* the flow times out */
		pipe_tick(l.w, now);
		pipe_tick(l.w, now + sec);
		now += 2 * sec;
		assert_int_equal(pool->stats.in_use, 0);
	}
	/* Untranslated (to 10.3/16, no NAT), from the pair another flow's
	 * translation holds: its end leaves that flow's pair held. */
	assert_true(send_from(&l, self, 30000, 3, now, &port));
	assert_int_equal(port, 30000);
	assert_int_equal(pool->stats.in_use, 0);
	assert_true(send_from(&l, other, 4000, 2, now + 5 * sec, &port));
	assert_int_equal(port, 30000);
	assert_int_equal(pool->stats.in_use, 1);
	pipe_tick(l.w, now + 31 * sec);	/* the untranslated one ends */
	pipe_tick(l.w, now + 31 * sec + 1);
	assert_int_equal(pool->stats.in_use, 1);
	pipe_tick(l.w, now + 40 * sec);
	pipe_tick(l.w, now + 41 * sec);
	assert_int_equal(pool->stats.in_use, 0);
	assert_int_equal(pool->stats.bad_frees, 0);
	lab_close(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bridge_verdicts),
		cmocka_unit_test(test_nic_checked_ipv4_header),
		cmocka_unit_test(test_reject_replies),
		cmocka_unit_test(test_snat_pools_that_overlap),
		cmocka_unit_test(test_router),
		cmocka_unit_test(test_ping_through_forward),
		cmocka_unit_test(test_masquerade_ipv6),
		cmocka_unit_test(test_router_wants_neighbours),
		cmocka_unit_test(test_router_holds_packets),
		cmocka_unit_test(test_router_mtu),
		cmocka_unit_test(test_router_martians),
		cmocka_unit_test(test_router_rpf),
		cmocka_unit_test(test_router_errors_from_a_global_address),
		cmocka_unit_test(test_tcp_mss_clamping),
		cmocka_unit_test(test_router_fragments),
		cmocka_unit_test(test_reply_rate),
		cmocka_unit_test(test_long_burst),
		cmocka_unit_test(test_stateful_bridge),
		cmocka_unit_test(test_reopen_from_responder),
		cmocka_unit_test(test_ipv6_fragment_overlapping_behind_options),
		cmocka_unit_test(test_ipv6_fragment_overlap_waiting_for_its_first),
		cmocka_unit_test(test_snat_to_own_address),
	};
	return cmocka_run_group_tests_name("pipeline", tests, NULL, NULL);
}
