/* The stateful pipeline on crafted frames (policies compiled by rulec):
 * a TCP connection through masquerade in router mode (handshake, data,
 * teardown, replies translated back, checksums right after every
 * rewrite), port forwarding with DNAT, ICMP echo and ICMP errors of a
 * NATed flow, fragments following their first, out-of-window segments,
 * and the limits: conntrack full, NAT ports exhausted and freed again on
 * expiry, rule rate limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ct.h"
#include "frames.h"
#include "home.h"
#include "nat.h"
#include "pipeline.h"
#include "pktcap.h"
#include "router_lab.h"

#define SEC 1000000000ull

static const char policy[] =
	"version: 1\n"
	"zones: {inside: [lan0], outside: [wan0]}\n"
	"rules:\n"
	"  - name: lan-out\n"
	"    from: {zone: inside}\n"
	"    to: {zone: outside}\n"
	"    action: accept\n"
	"  - name: web-in\n"
	"    proto: tcp\n"
	"    to: {network: 10.100.0.10, port: 80}\n"
	"    action: accept\n"
	"  - name: limited\n"
	"    proto: udp\n"
	"    from: {zone: outside}\n"
	"    to: {port: 5353}\n"
	"    action: accept\n"
	"    limit: {rate: 2/s, burst: 2, per: rule}\n"
	"defaults: {action: drop}\n"
	"nat:\n"
	ROUTER_LAB_EIGHT_FORWARDS
	"  - name: web-forward\n"
	"    match: {from: {zone: outside}, to: {network: 10.0.1.1, service: tcp/8080}}\n"
	"    dnat: {to: 10.100.0.10, port: 80}\n"
	"  - name: masq\n"
	"    match: {from: {network: 10.100.0.0/16}, to: {zone: outside}}\n"
	"    snat: {to: masquerade, ports: 20000-20002}\n"
	"routes:\n"
	"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"
	"  - {prefix: 10.100.0.0/16, interface: lan0}\n";

/* A host on the outside (the port forward's client). */
static const uint8_t outside_ip[4] = {10, 200, 5, 5};

struct lab {
	void *buf;
	size_t len;
	struct rfw_view view;
	struct pipe_worker *w;
};

static void lab_open_policy(struct lab *l, uint32_t max_flows, const char *text)
{
	struct pipe_config c = {.mode = PIPE_ROUTER, .max_flows = max_flows, .seed = 7};

	router_lab_compile(text, &l->buf, &l->len, &l->view);
	assert_int_equal(l->view.policy->stateful, 1);
	router_lab_ports(&c);
	l->w = pipe_create(&c, &l->view);
	assert_non_null(l->w);
	router_lab_neighbours(l->w);
}

static void lab_open(struct lab *l, uint32_t max_flows)
{
	lab_open_policy(l, max_flows, policy);
}

static void lab_close(struct lab *l)
{
	pipe_destroy(l->w);
	free(l->buf);
}

static struct pipe_pkt run1(struct lab *l, struct frame *f, uint8_t in_port, uint64_t now)
{
	struct pipe_pkt p = {.data = f->b, .len = f->len, .room = sizeof(f->b), .in_port = in_port};

	pipe_process(l->w, &p, 1, now);
	f->len = p.len;
	return p;
}

static struct flow_spec tcp(const uint8_t *src, uint16_t sport, const uint8_t *dst, uint16_t dport,
			    uint8_t flags, uint32_t seq, uint32_t ack, uint32_t payload)
{
	struct flow_spec s = {.family = 4, .proto = 6, .sport = sport, .dport = dport,
			      .tcp_flags = flags, .seq = seq, .ack = ack, .payload = payload};

	memcpy(s.src, src, 4);
	memcpy(s.dst, dst, 4);
	return s;
}

static uint8_t *ip(struct frame *f)
{
	return f->b + 14;
}

static struct flow_spec udp(const uint8_t *src, uint16_t sport, const uint8_t *dst, uint16_t dport)
{
	struct flow_spec s = {.family = 4, .proto = 17, .sport = sport, .dport = dport};

	memcpy(s.src, src, 4);
	memcpy(s.dst, dst, 4);
	return s;
}

/* Several new flows' first packets in one burst: a packet repeated and a
 * reply arriving before the create of the flow it answers must find the
 * flow the earlier packet made (the creates' same-burst filter), not
 * make a second one on the same tuple. */
static void test_new_flows_in_one_burst(void **state)
{
	static const char both_ways[] =
		"version: 1\n"
		"zones: {inside: [lan0], outside: [wan0]}\n"
		"rules:\n"
		"  - {name: out, proto: udp, from: {zone: inside}, action: accept}\n"
		"  - {name: in, proto: udp, from: {zone: outside}, action: accept}\n"
		"defaults: {action: drop}\n"
		"routes:\n"
		"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"
		"  - {prefix: 10.100.0.0/16, interface: lan0}\n";
	struct lab l;
	struct frame f[5];
	struct flow_spec s[5] = {
		udp(client_ip, 5000, remote_ip, 53),	/* new */
		udp(client_ip, 5000, remote_ip, 53),	/* again */
		udp(remote_ip, 53, client_ip, 5000),	/* its reply */
		udp(client_ip, 5001, remote_ip, 53),	/* another new one */
		udp(remote_ip, 53, client_ip, 5001),	/* and its reply */
	};
	const uint8_t in[5] = {0, 0, 1, 0, 1};
	struct pipe_pkt p[5];
	struct ct_stats st;

	(void)state;
	lab_open_policy(&l, 64, both_ways);
	for (unsigned i = 0; i < 5; i++) {
		frame_build(&f[i], &s[i]);
		p[i] = (struct pipe_pkt){.data = f[i].b, .len = f[i].len, .room = sizeof(f[i].b),
					 .in_port = in[i]};
	}
	pipe_process(l.w, p, 5, SEC);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(p[i].verdict, PIPE_FORWARD);
	ct_get_stats(pipe_conntrack(l.w), &st);
	assert_int_equal(st.created, 2);
	assert_int_equal(st.in_use, 2);
	/* and later packets of both directions are the flows' */
	for (unsigned i = 0; i < 5; i++) {
		frame_build(&f[i], &s[i]);
		p[i] = (struct pipe_pkt){.data = f[i].b, .len = f[i].len, .room = sizeof(f[i].b),
					 .in_port = in[i]};
	}
	pipe_process(l.w, p, 5, 2 * SEC);
	ct_get_stats(pipe_conntrack(l.w), &st);
	assert_int_equal(st.created, 2);
	assert_int_equal(pipe_stats(l.w)->flows_hit, 5);
	lab_close(&l);
}

/* Client 10.100.0.5:40000 -> 10.200.1.1:443 through masquerade. */
static void test_tcp_through_masquerade(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	uint16_t pub_port;
	const struct pipe_stats *st;
	(void)state;

	lab_open(&l, 1024);
	s = tcp(client_ip, 40000, remote_ip, 443, 0x02, 1000, 0, 0);	/* SYN */
	frame_build(&f, &s);
	p = run1(&l, &f, 0, 10 * SEC);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(p.out_port, 1);
	assert_memory_equal(ip(&f) + 12, wan_ip, 4);
	assert_memory_equal(ip(&f) + 16, remote_ip, 4);
	pub_port = frame_get16(ip(&f) + 20);
	assert_true(pub_port >= 20000 && pub_port <= 20002);
	assert_int_equal(frame_get16(ip(&f) + 22), 443);
	assert_int_equal(ip(&f)[8], 63);
	assert_true(frame_checksums_ok(f.b, f.len));
	assert_memory_equal(f.b, gw_mac, 6);

	s = tcp(remote_ip, 443, wan_ip, pub_port, 0x12, 5000, 1001, 0);	/* SYN-ACK */
	frame_build(&f, &s);
	p = run1(&l, &f, 1, 10 * SEC);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(p.out_port, 0);
	assert_memory_equal(ip(&f) + 16, client_ip, 4);
	assert_int_equal(frame_get16(ip(&f) + 22), 40000);
	assert_memory_equal(ip(&f) + 12, remote_ip, 4);
	assert_true(frame_checksums_ok(f.b, f.len));
	assert_memory_equal(f.b, client_mac, 6);

	s = tcp(client_ip, 40000, remote_ip, 443, 0x10, 1001, 5001, 0);	/* ACK */
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 0, 11 * SEC).verdict, PIPE_FORWARD);
	s = tcp(client_ip, 40000, remote_ip, 443, 0x18, 1001, 5001, 100);	/* data */
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 0, 11 * SEC).verdict, PIPE_FORWARD);
	assert_int_equal(frame_get16(ip(&f) + 20), pub_port);
	assert_true(frame_checksums_ok(f.b, f.len));
	s = tcp(remote_ip, 443, wan_ip, pub_port, 0x18, 5001, 1101, 300);	/* data back */
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 1, 11 * SEC).verdict, PIPE_FORWARD);
	assert_true(frame_checksums_ok(f.b, f.len));

	/* A segment far outside the window: invalid, dropped, counted. */
	s = tcp(remote_ip, 443, wan_ip, pub_port, 0x18, 5001 + 3000000, 1101, 10);
	frame_build(&f, &s);
	p = run1(&l, &f, 1, 12 * SEC);
	assert_int_equal(p.verdict, PIPE_DROP);
	assert_int_equal(p.drop, PIPE_DROP_CT_INVALID);

	/* An unsolicited SYN to another public port is not a flow: a new
	 * packet for our own address, which has no route here (host traffic
	 * is the kernel's, the XDP program passes it up). */
	s = tcp(remote_ip, 443, wan_ip, pub_port == 20000 ? 20001 : 20000, 0x02, 1, 0, 0);
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 1, 12 * SEC).drop, PIPE_DROP_NO_ROUTE);
	/* and one to a LAN host is refused by the rules */
	s = tcp(remote_ip, 443, client_ip, 40000, 0x02, 1, 0, 0);
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 1, 12 * SEC).drop, PIPE_DROP_POLICY);

	/* Teardown: FIN each way, last ACK. */
	s = tcp(client_ip, 40000, remote_ip, 443, 0x11, 1101, 5301, 0);
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 0, 13 * SEC).verdict, PIPE_FORWARD);
	s = tcp(remote_ip, 443, wan_ip, pub_port, 0x11, 5301, 1102, 0);
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 1, 13 * SEC).verdict, PIPE_FORWARD);
	s = tcp(client_ip, 40000, remote_ip, 443, 0x10, 1102, 5302, 0);
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 0, 13 * SEC).verdict, PIPE_FORWARD);

	st = pipe_stats(l.w);
	assert_int_equal(pipe_rule_stats(l.w)[1].packets, 8);	/* the flow, both ways */
	assert_int_equal(st->flows_hit, 7);
	assert_int_equal(st->stage[PIPE_ST_ACL].packets, 2);	/* SYN, stray SYN to the LAN */
	assert_int_equal(st->nat_rewrites, 8);
	assert_int_equal(st->drop[PIPE_DROP_CT_INVALID], 1);
	lab_close(&l);
}

/* A burst of bare ACKs of no flow (an ACK flood): each is conntrack's
 * "invalid", looked up once (the express lookup answers for stage_flow),
 * dropped and counted as before; with a rule that names `state:
 * invalid` the rules see them and decide, still without a flow. */
static void run_acks(struct lab *l, uint32_t n, uint64_t now, struct pipe_pkt *p, struct frame *f)
{
	for (uint32_t i = 0; i < n; i++) {
		struct flow_spec s = tcp(remote_ip, 443, client_ip, (uint16_t)(30000 + i), 0x10,
					 7 + i, 9, 0);

		frame_build(&f[i], &s);
		p[i] = (struct pipe_pkt){.data = f[i].b, .len = f[i].len, .room = sizeof(f[i].b),
					 .in_port = 1};
	}
	pipe_process(l->w, p, n, now);
}

static void test_ack_flood(void **state)
{
	static const char see_invalid[] =
		"version: 1\n"
		"zones: {inside: [lan0], outside: [wan0]}\n"
		"rules:\n"
		"  - {name: stray, state: invalid, from: {zone: outside}, action: accept}\n"
		"defaults: {action: drop}\n"
		"routes:\n"
		"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"
		"  - {prefix: 10.100.0.0/16, interface: lan0}\n";
	enum { N = 8 };
	struct frame f[N];
	struct pipe_pkt p[N];
	const struct pipe_stats *st;
	struct ct_stats cs;
	struct lab l;

	(void)state;
	lab_open(&l, 64);
	run_acks(&l, N, SEC, p, f);
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(p[i].verdict, PIPE_DROP);
		assert_int_equal(p[i].drop, PIPE_DROP_CT_INVALID);
	}
	st = pipe_stats(l.w);
	ct_get_stats(pipe_conntrack(l.w), &cs);
	assert_int_equal(cs.invalid, N);
	assert_int_equal(cs.created, 0);
	assert_int_equal(st->drop[PIPE_DROP_CT_INVALID], N);
	assert_int_equal(st->stage[PIPE_ST_FLOW].packets, N);	/* one lookup each */
	assert_int_equal(st->stage[PIPE_ST_ACL].packets, 0);
	lab_close(&l);

	lab_open_policy(&l, 64, see_invalid);
	run_acks(&l, N, SEC, p, f);
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(p[i].verdict, PIPE_FORWARD);
	st = pipe_stats(l.w);
	ct_get_stats(pipe_conntrack(l.w), &cs);
	assert_int_equal(cs.invalid, N);
	assert_int_equal(cs.created, 0);
	assert_int_equal(cs.in_use, 0);
	assert_int_equal(st->stage[PIPE_ST_FLOW].packets, N);
	assert_int_equal(pipe_rule_stats(l.w)[1].packets, N);
	lab_close(&l);
}

/* The outside reaches 10.0.1.1:8080, the server 10.100.0.10:80 answers. */
static void test_port_forward(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	(void)state;

	lab_open(&l, 1024);
	s = tcp(outside_ip, 5555, wan_ip, 8080, 0x02, 77, 0, 0);
	frame_build(&f, &s);
	p = run1(&l, &f, 1, SEC);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(p.out_port, 0);
	assert_memory_equal(ip(&f) + 16, server_ip, 4);
	assert_int_equal(frame_get16(ip(&f) + 22), 80);
	assert_memory_equal(ip(&f) + 12, outside_ip, 4);	/* client address kept */
	assert_true(frame_checksums_ok(f.b, f.len));
	assert_memory_equal(f.b, server_mac, 6);
	assert_int_equal(pipe_rule_stats(l.w)[2].packets, 1);	/* web-in saw port 80 */

	s = tcp(server_ip, 80, outside_ip, 5555, 0x12, 900, 78, 0);
	frame_build(&f, &s);
	p = run1(&l, &f, 0, SEC);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(p.out_port, 1);
	assert_memory_equal(ip(&f) + 12, wan_ip, 4);
	assert_int_equal(frame_get16(ip(&f) + 20), 8080);
	assert_true(frame_checksums_ok(f.b, f.len));

	s = tcp(outside_ip, 5555, server_ip, 80, 0x02, 77, 0, 0);	/* not via DNAT */
	frame_build(&f, &s);
	p = run1(&l, &f, 1, SEC);
	assert_int_equal(p.verdict, PIPE_FORWARD);	/* web-in allows the server itself */
	lab_close(&l);
}

/* Ping out through masquerade; a time-exceeded about a NATed SYN comes
 * back to the client with the quoted packet translated too. */
static void test_icmp(void **state)
{
	struct lab l;
	struct frame f, syn;
	struct flow_spec s = {.family = 4, .proto = 1, .sport = 0x4242, .payload = 16};
	struct pipe_pkt p;
	uint16_t id, pub_port;
	uint8_t *q;
	(void)state;

	lab_open(&l, 1024);
	memcpy(s.src, client_ip, 4);
	memcpy(s.dst, remote_ip, 4);
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 0, SEC).verdict, PIPE_FORWARD);
	assert_memory_equal(ip(&f) + 12, wan_ip, 4);
	id = frame_get16(ip(&f) + 24);
	assert_true(frame_checksums_ok(f.b, f.len));

	memcpy(s.src, remote_ip, 4);			/* echo reply to the public id */
	memcpy(s.dst, wan_ip, 4);
	s.icmp_type = 0;
	s.sport = id;
	frame_build(&f, &s);
	f.b[14 + 20] = 0;				/* type 0: echo reply */
	frame_put16(f.b + 14 + 22, 0);
	frame_put16(f.b + 14 + 22, csum_l4(4, remote_ip, wan_ip, 1, f.b + 34, f.len - 34));
	p = run1(&l, &f, 1, SEC);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_memory_equal(ip(&f) + 16, client_ip, 4);
	assert_int_equal(frame_get16(ip(&f) + 24), 0x4242);
	assert_true(frame_checksums_ok(f.b, f.len));

	s = tcp(client_ip, 41000, remote_ip, 22, 0x02, 1, 0, 0);
	frame_build(&syn, &s);
	assert_int_equal(run1(&l, &syn, 0, SEC).verdict, PIPE_FORWARD);
	pub_port = frame_get16(syn.b + 14 + 20);
	/* a router at 10.200.9.9 answers the translated SYN: time exceeded */
	frame_build_time_exceeded(&f, wan_mac, gw_mac, (uint8_t[]){10, 200, 9, 9}, wan_ip, &syn);
	q = f.b + 14;
	p = run1(&l, &f, 1, SEC);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(p.out_port, 0);
	assert_memory_equal(q + 16, client_ip, 4);		/* outer to the client */
	assert_memory_equal(q + 28 + 12, client_ip, 4);		/* quoted source too */
	assert_int_equal(frame_get16(q + 28 + 20), 41000);
	assert_int_not_equal(pub_port, 41000);
	assert_int_equal(csum_ipv4_header(q + 28), frame_get16(q + 28 + 10));
	assert_true(frame_checksums_ok(f.b, f.len));		/* outer IP + ICMP */
	assert_int_equal(pipe_stats(l.w)->related, 1);
	lab_close(&l);
}

/* A packet whose TTL ends here, of a flow this router translates, gets a
 * time-exceeded that its sender can match (traceroute through NAT): sent
 * to the sender's own address and quoting the packet as it sent it, not
 * as NAT would have rewritten it. SNAT (the client's first hop) and DNAT
 * (a port forward's first packet from outside). */
static void test_time_exceeded_before_nat(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	const uint8_t *q;
	(void)state;

	lab_open(&l, 1024);
	s = udp(client_ip, 33434, remote_ip, 33435);	/* traceroute's first probe */
	s.ttl = 1;
	frame_build(&f, &s);
	p = run1(&l, &f, 0, SEC);
	q = ip(&f);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_int_equal(p.out_port, 0);
	assert_int_equal(q[9], 1);
	assert_int_equal(q[20], 11);				/* time exceeded */
	assert_memory_equal(q + 12, ((uint8_t[]){10, 100, 0, 1}), 4);	/* from lan0 */
	assert_memory_equal(q + 16, client_ip, 4);
	assert_memory_equal(q + 28 + 12, client_ip, 4);	/* the probe as sent */
	assert_memory_equal(q + 28 + 16, remote_ip, 4);
	assert_int_equal(frame_get16(q + 28 + 20), 33434);
	assert_true(frame_checksums_ok(f.b, f.len));

	s = tcp(outside_ip, 5555, wan_ip, 8080, 0x02, 77, 0, 0);	/* to the port forward */
	s.ttl = 1;
	frame_build(&f, &s);
	p = run1(&l, &f, 1, SEC);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_int_equal(p.out_port, 1);
	assert_int_equal(q[20], 11);
	assert_memory_equal(q + 12, wan_ip, 4);
	assert_memory_equal(q + 16, outside_ip, 4);
	assert_memory_equal(q + 28 + 16, wan_ip, 4);		/* the public address */
	assert_int_equal(frame_get16(q + 28 + 22), 8080);
	assert_true(frame_checksums_ok(f.b, f.len));
	lab_close(&l);
}

/* A flow through masquerade whose small packets the flow cache (the
 * express path) takes, then one longer than wan0's MTU: still checked,
 * answered with fragmentation needed that goes to the client and quotes
 * the packet as the client sent it; the next small one goes on. */
static void test_too_big_through_nat(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s = udp(client_ip, 7000, remote_ip, 53);
	struct pipe_pkt p;
	const uint8_t *q = ip(&f);
	(void)state;

	lab_open(&l, 1024);
	pipe_set_mtu(l.w, 1, 1400);
	s.payload = 100;
	for (int k = 0; k < 4; k++) {
		frame_build(&f, &s);
		assert_int_equal(run1(&l, &f, 0, SEC).verdict, PIPE_FORWARD);
		assert_memory_equal(q + 12, wan_ip, 4);
	}
	assert_true(pipe_stats(l.w)->flow_cache_hits > 0);
	s.payload = 1500 - 28;
	frame_build(&f, &s);
	f.b[14 + 6] |= 0x40;					/* DF */
	frame_put16(f.b + 14 + 10, 0);
	frame_put16(f.b + 14 + 10, csum_ipv4_header(f.b + 14));
	p = run1(&l, &f, 0, SEC);
	assert_int_equal(p.verdict, PIPE_BOUNCE);
	assert_int_equal(p.out_port, 0);
	assert_int_equal(q[20], 3);
	assert_int_equal(q[21], 4);
	assert_int_equal(frame_get16(q + 26), 1400);
	assert_memory_equal(q + 16, client_ip, 4);
	assert_memory_equal(q + 28 + 12, client_ip, 4);		/* as sent */
	assert_int_equal(frame_get16(q + 28 + 20), 7000);
	assert_true(frame_checksums_ok(f.b, f.len));
	s.payload = 100;
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 0, SEC).verdict, PIPE_FORWARD);
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_TOO_BIG], 1);
	lab_close(&l);
}

/* A datagram without DF, longer than wan0's MTU, through masquerade: the
 * fragments all carry the NAT address, the first the NAT port, and the
 * UDP checksum NAT updated holds for the datagram they make together. */
static void test_fragmented_through_nat(void **state)
{
	static uint8_t dgram[2048];
	struct lab l;
	struct frame f;
	struct flow_spec s = udp(client_ip, 7100, remote_ip, 53);
	struct pipe_pkt p, *ex;
	uint32_t n, at = 0;
	uint16_t sum;
	(void)state;

	lab_open(&l, 1024);
	pipe_set_mtu(l.w, 1, 576);
	s.payload = 1000 - 28;
	frame_build(&f, &s);
	p = run1(&l, &f, 0, SEC);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	n = pipe_extra(l.w, &ex);
	assert_int_equal(n, 1);
	for (uint32_t k = 0; k <= n; k++) {
		const uint8_t *ip = k ? ex[k - 1].data + 14 : f.b + 14;
		uint32_t bytes = frame_get16(ip + 2) - 20u;

		assert_memory_equal(ip + 12, wan_ip, 4);		/* every fragment */
		assert_memory_equal(ip + 16, remote_ip, 4);
		assert_int_equal(csum_ipv4_header(ip), frame_get16(ip + 10));
		assert_int_equal((frame_get16(ip + 6) & 0x1fff) * 8, at);
		memcpy(dgram + at, ip + 20, bytes);
		at += bytes;
	}
	assert_int_equal(at, 980);
	assert_int_not_equal(frame_get16(dgram), 7100);		/* the NAT port */
	sum = frame_get16(dgram + 6);
	frame_put16(dgram + 6, 0);
	assert_int_equal(csum_l4(4, wan_ip, remote_ip, 17, dgram, at), sum);
	pipe_extra_clear(l.w);
	lab_close(&l);
}

/* The lab policy holding packets for unresolved next hops, and no
 * neighbour known. */
static void lab_open_holding(struct lab *l)
{
	struct pipe_config c = {.mode = PIPE_ROUTER, .max_flows = 1024, .seed = 7,
				.hold_unresolved = 1};

	router_lab_compile(policy, &l->buf, &l->len, &l->view);
	router_lab_ports(&c);
	l->w = pipe_create(&c, &l->view);
	assert_non_null(l->w);
}

/* A packet held for its next hop through masquerade: what goes out once
 * the gateway is known is the translated packet. */
static void test_held_through_nat(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s = udp(client_ip, 7200, remote_ip, 53);
	struct pipe_pkt p, *ex;
	(void)state;

	lab_open_holding(&l);					/* no neighbours yet */
	frame_build(&f, &s);
	p = run1(&l, &f, 0, SEC);
	assert_int_equal(p.verdict, PIPE_HELD);
	assert_int_equal(pipe_neigh_set(l.w, 1, 4, (uint8_t[]){10, 0, 1, 254}, gw_mac), 0);
	assert_int_equal(pipe_held_poll(l.w, 0), 1);
	assert_int_equal(pipe_extra(l.w, &ex), 1);
	assert_memory_equal(ex[0].data + 14 + 12, wan_ip, 4);	/* translated */
	assert_int_not_equal(frame_get16(ex[0].data + 34), 7200);
	assert_memory_equal(ex[0].data, gw_mac, 6);
	assert_true(frame_checksums_ok(ex[0].data, ex[0].len));
	pipe_extra_clear(l.w);
	lab_close(&l);
}

/* A held packet whose next hop never resolves: dropped after
 * PIPE_HELD_NS, and its sender gets an ICMP host unreachable from the
 * LAN port's address, out of the LAN port, quoting the packet as it
 * arrived (untranslated, its TTL untouched): what the client's stack
 * matches to its socket. Not when the worker stops (UINT64_MAX). */
static void test_unresolved_host_unreachable(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s = udp(client_ip, 7300, remote_ip, 53);
	struct pipe_pkt p, *ex;
	static const uint8_t lan_ip[4] = {10, 100, 0, 1};
	uint8_t *err, *quote, macs[12];
	(void)state;

	lab_open_holding(&l);
	assert_int_equal(pipe_neigh_set(l.w, 0, 4, client_ip, client_mac), 0);	/* no gateway */
	frame_build(&f, &s);
	memcpy(macs, f.b, 12);
	p = run1(&l, &f, 0, SEC);
	assert_int_equal(p.verdict, PIPE_HELD);
	assert_int_equal(pipe_held_poll(l.w, 2 * SEC), 0);	/* still waiting */
	assert_int_equal(pipe_extra(l.w, &ex), 0);
	assert_int_equal(pipe_held_poll(l.w, SEC + PIPE_HELD_NS), 1);	/* the error */
	assert_int_equal(pipe_extra(l.w, &ex), 1);
	assert_int_equal(ex[0].out_port, 0);
	assert_int_equal(ex[0].verdict, PIPE_FORWARD);
	err = ex[0].data + 14;
	assert_memory_equal(ex[0].data, macs + 6, 6);	/* back to the sender */
	assert_memory_equal(ex[0].data + 6, macs, 6);	/* from the MAC it was sent to */
	assert_memory_equal(err + 12, lan_ip, 4);		/* the LAN port's address */
	assert_memory_equal(err + 16, client_ip, 4);
	assert_int_equal(err[9], 1);
	assert_int_equal(err[20], 3);	/* destination unreachable */
	assert_int_equal(err[21], 1);	/* host */
	quote = err + 28;
	assert_memory_equal(quote + 12, client_ip, 4);	/* as it came: untranslated */
	assert_memory_equal(quote + 16, remote_ip, 4);
	assert_int_equal(frame_get16(quote + 20), 7300);
	assert_int_equal(quote[8], 64);			/* TTL as sent */
	assert_true(frame_checksums_ok(ex[0].data, ex[0].len));
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_NO_NEIGH], 1);
	assert_int_equal(pipe_stats(l.w)->replies, 1);
	pipe_extra_clear(l.w);

	/* a worker that stops drops what it holds without answering */
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 0, 10 * SEC).verdict, PIPE_HELD);
	assert_int_equal(pipe_held_poll(l.w, UINT64_MAX), 0);
	assert_int_equal(pipe_extra(l.w, &ex), 0);
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_NO_NEIGH], 2);
	lab_close(&l);
}

/* The first fragment decides; the next ones follow with its translation. */
static void test_fragments(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s = {.family = 4, .proto = 17, .sport = 7000, .dport = 53, .payload = 40};
	(void)state;

	lab_open(&l, 1024);
	memcpy(s.src, client_ip, 4);
	memcpy(s.dst, remote_ip, 4);
	frame_build(&f, &s);
	frame_set_fragment(&f, 0x1234, 0x2000);		/* MF, offset 0 */
	assert_int_equal(run1(&l, &f, 0, SEC).verdict, PIPE_FORWARD);
	assert_memory_equal(ip(&f) + 12, wan_ip, 4);

	frame_build(&f, &s);				/* second fragment: offset 48 */
	frame_set_fragment(&f, 0x1234, 6);
	assert_int_equal(run1(&l, &f, 0, SEC).verdict, PIPE_FORWARD);
	assert_memory_equal(ip(&f) + 12, wan_ip, 4);	/* same translation */
	assert_int_equal(csum_ipv4_header(ip(&f)), frame_get16(ip(&f) + 10));

	frame_put16(ip(&f) + 4, 0x9999);		/* a fragment of nothing we saw */
	memcpy(ip(&f) + 12, client_ip, 4);
	frame_put16(ip(&f) + 10, 0);
	frame_put16(ip(&f) + 10, csum_ipv4_header(ip(&f)));
	assert_int_equal(run1(&l, &f, 0, SEC).drop, PIPE_DROP_FRAG_ORPHAN);
	lab_close(&l);
}

/* Fragments as a host sends them, back to back in one burst: the second
 * fragment is looked up before its first (same burst) is accepted, yet
 * follows it. Then a second datagram of the now known flow: its first
 * fragment finds the flow, and its other fragments follow that one. */
static void test_fragments_in_one_burst(void **state)
{
	struct lab l;
	struct frame f[4];
	struct pipe_pkt p[4];
	struct flow_spec s = {.family = 4, .proto = 17, .sport = 7001, .dport = 53, .payload = 40};
	(void)state;

	lab_open(&l, 1024);
	memcpy(s.src, client_ip, 4);
	memcpy(s.dst, remote_ip, 4);
	for (int d = 0; d < 2; d++) {	/* datagram 0 opens the flow, 1 finds it */
		for (int i = 0; i < 2; i++) {
			frame_build(&f[2 * d + i], &s);
			frame_set_fragment(&f[2 * d + i], (uint16_t)(0x4000 + d), i ? 6 : 0x2000);
		}
	}
	for (int d = 0; d < 2; d++) {
		for (int i = 0; i < 2; i++)
			p[i] = (struct pipe_pkt){.data = f[2 * d + i].b, .len = f[2 * d + i].len,
						 .room = FRAME_ROOM};
		pipe_process(l.w, p, 2, SEC);
		for (int i = 0; i < 2; i++) {
			assert_int_equal(p[i].verdict, PIPE_FORWARD);
			assert_memory_equal(ip(&f[2 * d + i]) + 12, wan_ip, 4);
		}
	}
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_FRAG_ORPHAN], 0);
	lab_close(&l);
}

/* A non-first fragment of datagram id (second fragment: offset 48). */
static void second_fragment(struct frame *f, const struct flow_spec *s, uint16_t id)
{
	frame_build(f, s);
	frame_set_fragment(f, id, 6);
}

/* The tag the pipeline files a parked IPv4 fragment under (pipeline.c
 * datagram_hash, handoff off: home seed 0). */
static unsigned parked_tag(const uint8_t src[4], const uint8_t dst[4], uint16_t id)
{
	uint8_t s16[16] = {0}, d16[16] = {0};

	memcpy(s16, src, 4);
	memcpy(d16, dst, 4);
	return (unsigned)(home_hash(s16, d16, id, 0, 17, ~0ull) & 63);
}

/* With park_fragments, fragments that come before their first wait for
 * it: alone (run again once it came, with its translation), in one
 * burst behind it, back in their slot when run too early (another
 * datagram with their tag), dropped as frag-orphan when their time is
 * up or no slot is free, and all dropped by a worker that stops. */
static void test_fragments_parked(void **state)
{
	struct pipe_config c = {.mode = PIPE_ROUTER, .max_flows = 1024, .seed = 7,
				.park_fragments = 1};
	struct flow_spec s = {.family = 4, .proto = 17, .sport = 7002, .dport = 53, .payload = 40};
	const struct pipe_stats *st;
	struct frame f, g, orig, burst[2];
	struct pipe_pkt p[PIPE_BURST], two[2];
	uint64_t rx;
	struct lab l;
	uint16_t id2;
	struct pktcap_ring cap;
	(void)state;

	router_lab_compile(policy, &l.buf, &l.len, &l.view);
	router_lab_ports(&c);
	l.w = pipe_create(&c, &l.view);
	assert_non_null(l.w);
	router_lab_neighbours(l.w);
	st = pipe_stats(l.w);
	memcpy(s.src, client_ip, 4);
	memcpy(s.dst, remote_ip, 4);

	/* the second fragment first: parked, not yet counted as received */
	second_fragment(&g, &s, 0x5000);
	orig = g;
	rx = st->port[0].rx_packets;
	assert_int_equal(run1(&l, &g, 0, SEC).verdict, PIPE_HELD);
	assert_int_equal(st->port[0].rx_packets, rx);
	assert_int_equal(pipe_parked_count(l.w), 1);
	assert_int_equal(st->frag_parked, 1);
	assert_int_equal(pipe_frag_take(l.w, p, PIPE_BURST, 0), 0);	/* no first yet */
	frame_build(&f, &s);
	frame_set_fragment(&f, 0x5000, 0x2000);
	assert_int_equal(run1(&l, &f, 0, SEC).verdict, PIPE_FORWARD);
	assert_memory_equal(ip(&f) + 12, wan_ip, 4);
	/* now it comes back, as it came, and follows its first */
	assert_int_equal(pipe_frag_take(l.w, p, PIPE_BURST, 0), 1);
	assert_int_equal(p[0].len, orig.len);
	assert_memory_equal(p[0].data, orig.b, orig.len);
	pipe_process(l.w, p, 1, SEC);
	assert_int_equal(p[0].verdict, PIPE_FORWARD);
	assert_memory_equal(p[0].data + 14 + 12, wan_ip, 4);
	assert_int_equal(csum_ipv4_header(p[0].data + 14), frame_get16(p[0].data + 14 + 10));
	assert_int_equal(st->frag_resumed, 1);
	assert_int_equal(st->port[0].rx_packets, rx + 2);
	assert_int_equal(pipe_parked_count(l.w), 1);		/* lent until the next take */
	assert_int_equal(pipe_frag_take(l.w, p, PIPE_BURST, 0), 0);
	assert_int_equal(pipe_parked_count(l.w), 0);

	/* second and first in one burst: the second waits one take */
	second_fragment(&burst[0], &s, 0x5001);
	frame_build(&burst[1], &s);
	frame_set_fragment(&burst[1], 0x5001, 0x2000);
	for (int i = 0; i < 2; i++)
		two[i] = (struct pipe_pkt){.data = burst[i].b, .len = burst[i].len, .room = FRAME_ROOM};
	pipe_process(l.w, two, 2, SEC);
	assert_int_equal(two[0].verdict, PIPE_HELD);
	assert_int_equal(two[1].verdict, PIPE_FORWARD);
	assert_int_equal(pipe_frag_take(l.w, p, PIPE_BURST, 0), 1);
	pipe_process(l.w, p, 1, SEC);
	assert_int_equal(p[0].verdict, PIPE_FORWARD);
	assert_memory_equal(p[0].data + 14 + 12, wan_ip, 4);
	assert_int_equal(pipe_frag_take(l.w, p, PIPE_BURST, 0), 0);

	/* run again too early (another datagram's first, the same tag): back
	 * in its slot, its deadline kept */
	second_fragment(&g, &s, 0x6000);
	assert_int_equal(run1(&l, &g, 0, 2 * SEC).verdict, PIPE_HELD);
	id2 = 0x6001;
	while (parked_tag(client_ip, remote_ip, id2) != parked_tag(client_ip, remote_ip, 0x6000))
		id2++;
	frame_build(&f, &s);
	frame_set_fragment(&f, id2, 0x2000);
	assert_int_equal(run1(&l, &f, 0, 2 * SEC + SEC / 2).verdict, PIPE_FORWARD);
	assert_int_equal(pipe_frag_take(l.w, p, PIPE_BURST, 0), 1);
	pipe_process(l.w, p, 1, 2 * SEC + SEC / 2);
	assert_int_equal(p[0].verdict, PIPE_HELD);
	assert_int_equal(st->frag_parked, 3);			/* not again */
	assert_int_equal(pipe_parked_count(l.w), 1);
	assert_int_equal(pipe_frag_take(l.w, p, PIPE_BURST, 2 * SEC + PIPE_PARK_NS - 1), 0);
	assert_int_equal(pipe_parked_count(l.w), 1);
	rx = st->port[0].rx_packets;
	assert_int_equal(st->drop[PIPE_DROP_FRAG_ORPHAN], 0);
	assert_int_equal(pipe_frag_take(l.w, p, PIPE_BURST, 2 * SEC + PIPE_PARK_NS), 0);
	assert_int_equal(pipe_parked_count(l.w), 0);
	assert_int_equal(st->drop[PIPE_DROP_FRAG_ORPHAN], 1);
	assert_int_equal(st->port[0].rx_packets, rx + 1);	/* counted once dropped */

	/* every slot taken (a flood of orphans): the next fragment takes the
	 * slot of the one waiting longest, which is dropped (and seen by a
	 * capture of drops, as the expired one below) */
	assert_int_equal(pktcap_ring_init(&cap, 256), 0);
	atomic_store(&cap.want, PKTCAP_DROPS);
	pipe_set_capture(l.w, &cap);
	for (uint16_t k = 0; k < PIPE_MAX_PARKED; k++) {
		second_fragment(&g, &s, (uint16_t)(0x7000 + k));
		assert_int_equal(run1(&l, &g, 0, 4 * SEC + k).verdict, PIPE_HELD);
	}
	assert_int_equal(pipe_parked_count(l.w), PIPE_MAX_PARKED);
	rx = st->port[0].rx_packets;
	second_fragment(&g, &s, 0x7fff);
	orig = g;
	assert_int_equal(run1(&l, &g, 0, 4 * SEC + PIPE_MAX_PARKED).verdict, PIPE_HELD);
	assert_int_equal(st->drop[PIPE_DROP_FRAG_ORPHAN], 2);	/* 0x7000's */
	assert_int_equal(st->port[0].rx_packets, rx + 1);
	assert_int_equal(pipe_parked_count(l.w), PIPE_MAX_PARKED);
	/* and it still follows its first, which comes behind the flood */
	for (uint16_t k = 0; k < PIPE_MAX_PARKED / 2; k++) {
		second_fragment(&g, &s, (uint16_t)(0x7100 + k));
		assert_int_equal(run1(&l, &g, 0, 4 * SEC + 100 + k).verdict, PIPE_HELD);
	}
	assert_int_equal(st->drop[PIPE_DROP_FRAG_ORPHAN], 2 + PIPE_MAX_PARKED / 2);
	frame_build(&f, &s);
	frame_set_fragment(&f, 0x7fff, 0x2000);
	assert_int_equal(run1(&l, &f, 0, 4 * SEC + 200).verdict, PIPE_FORWARD);
	{	/* with it, the orphans of its tag: back into their slots */
		uint32_t n = pipe_frag_take(l.w, p, PIPE_BURST, 0), ours = n;

		assert_true(n >= 1);
		for (uint32_t i = 0; i < n; i++)
			if (p[i].len == orig.len && !memcmp(p[i].data, orig.b, orig.len))
				ours = i;
		assert_true(ours < n);
		pipe_process(l.w, p, n, 4 * SEC + 200);
		for (uint32_t i = 0; i < n; i++)
			assert_int_equal(p[i].verdict, i == ours ? PIPE_FORWARD : PIPE_HELD);
	}
	assert_int_equal(pipe_frag_take(l.w, p, PIPE_BURST, 0), 0);
	assert_int_equal(pipe_parked_count(l.w), PIPE_MAX_PARKED - 1);
	/* a worker that stops drops them all */
	assert_int_equal(pipe_frag_take(l.w, p, 0, UINT64_MAX), 0);
	assert_int_equal(pipe_parked_count(l.w), 0);
	assert_int_equal(st->drop[PIPE_DROP_FRAG_ORPHAN], 2 + PIPE_MAX_PARKED / 2 + PIPE_MAX_PARKED - 1);
	{	/* every one dropped from a slot captured, as it was parked */
		struct pktcap_rec rec;
		uint32_t got = 0;

		second_fragment(&g, &s, 0x7000);
		while (pktcap_read(&cap, &rec)) {
			assert_int_equal(rec.verdict, PIPE_DROP);
			assert_int_equal(rec.drop, PIPE_DROP_FRAG_ORPHAN);
			assert_int_equal(rec.len, g.len);
			if (!got)	/* the first: 0x7000's, the longest waiting */
				assert_memory_equal(rec.data, g.b, g.len);
			got++;
		}
		assert_int_equal(got, 1 + PIPE_MAX_PARKED / 2 + PIPE_MAX_PARKED - 1);
	}
	pipe_set_capture(l.w, NULL);
	pktcap_ring_free(&cap);
	lab_close(&l);
}

/* Three public ports: the fourth flow is refused until one expires, and
 * expiry gives the port back. A 4-flow table refuses the fifth flow. A
 * 2/s rule passes two packets at once, then one per half second. */
static void test_limits(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s = {.family = 4, .proto = 17, .dport = 53, .payload = 8};
	struct pipe_pkt p;
	(void)state;

	lab_open(&l, 1024);
	memcpy(s.src, client_ip, 4);
	memcpy(s.dst, remote_ip, 4);
	for (uint16_t i = 0; i < 4; i++) {
		s.sport = (uint16_t)(6000 + i);
		frame_build(&f, &s);
		p = run1(&l, &f, 0, 100 * SEC);
		assert_int_equal(p.verdict, i < 3 ? PIPE_FORWARD : PIPE_DROP);
	}
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_NAT_FAILED], 1);
	/* UDP flows time out after 30 s; expiry runs a little per burst */
	s.sport = 6100;
	frame_build(&f, &s);
	for (int i = 0; i < 3; i++) {
		frame_build(&f, &s);
		p = run1(&l, &f, 0, 200 * SEC);
	}
	assert_int_equal(p.verdict, PIPE_FORWARD);
	lab_close(&l);

	lab_open(&l, 4);
	s.sport = 1;
	memcpy(s.dst, (uint8_t[]){10, 100, 0, 10}, 4);	/* lan-local: no NAT, no rule... */
	for (uint16_t i = 0; i < 5; i++) {		/* outside -> lan, limited rule */
		struct flow_spec o = s;

		memcpy(o.src, (uint8_t[]){10, 200, 0, (uint8_t)i}, 4);
		o.dport = 5353;
		frame_build(&f, &o);
		p = run1(&l, &f, 1, 5 * SEC);
		assert_int_equal(p.verdict, i < 2 ? PIPE_FORWARD : PIPE_DROP);
	}
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_RATE_LIMIT], 3);
	assert_int_equal(pipe_rule_limited(l.w, 3), 3);
	for (uint16_t i = 0; i < 4; i++) {		/* half a second later: one more */
		struct flow_spec o = s;

		memcpy(o.src, (uint8_t[]){10, 200, 1, (uint8_t)i}, 4);
		o.dport = 5353;
		frame_build(&f, &o);
		p = run1(&l, &f, 1, 5 * SEC + SEC / 2);
		assert_int_equal(p.verdict, i < 1 ? PIPE_FORWARD : PIPE_DROP);
	}
	/* 3 flows exist; lan -> outside: the 2nd new one finds the table
	 * full, and every flow touched this second (none may be evicted) */
	memcpy(s.dst, remote_ip, 4);
	for (uint16_t i = 0; i < 2; i++) {
		s.sport = (uint16_t)(7000 + i);
		frame_build(&f, &s);
		p = run1(&l, &f, 0, 5 * SEC + 9 * SEC / 10);
		assert_int_equal(p.verdict, i < 1 ? PIPE_FORWARD : PIPE_DROP);
	}
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_CT_FULL], 1);
	/* a second later the same flow evicts one that had no reply */
	frame_build(&f, &s);
	p = run1(&l, &f, 0, 7 * SEC);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_CT_FULL], 1);
	{
		struct ct_stats cs;

		ct_get_stats(pipe_conntrack(l.w), &cs);
		assert_int_equal(cs.evicted, 1);
		assert_int_equal(cs.in_use, 4);
	}
	lab_close(&l);
}

/* The masquerade pool that flows went through (one per rule and port). */
static const struct nat_pool *used_pool(const struct lab *l)
{
	for (uint32_t k = 0; k < pipe_nat_pool_count(l->w); k++)
		if (pipe_nat_pool(l->w, k)->stats.allocs)
			return pipe_nat_pool(l->w, k);
	fail();
	return NULL;
}

/* Masquerade's three ports all held by flows: a new flow takes one back
 * from a flow that is not established (a second after it was last
 * touched: not in the same second), never from an established one. */
static void test_pool_full_reclaims(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	struct ct_stats cs;
	const struct nat_pool *pool;
	(void)state;

	lab_open(&l, 1024);
	for (uint16_t i = 0; i < 4; i++) {	/* three unanswered UDP flows; a fourth */
		s = udp(client_ip, (uint16_t)(6000 + i), remote_ip, 53);
		frame_build(&f, &s);
		p = run1(&l, &f, 0, 100 * SEC);
		assert_int_equal(p.verdict, i < 3 ? PIPE_FORWARD : PIPE_DROP);
	}
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_NAT_FAILED], 1);	/* same second */
	pool = used_pool(&l);
	frame_build(&f, &s);
	p = run1(&l, &f, 0, 101 * SEC);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(pool->stats.reclaimed, 1);
	assert_int_equal(pool->stats.failures, 1);
	assert_int_equal(pool->stats.in_use, 3);
	ct_get_stats(pipe_conntrack(l.w), &cs);
	assert_int_equal(cs.evicted, 1);
	assert_int_equal(cs.in_use, 3);
	lab_close(&l);

	lab_open(&l, 1024);	/* three established TCP connections hold them */
	for (uint16_t i = 0; i < 3; i++) {
		uint16_t pub;

		s = tcp(client_ip, (uint16_t)(6000 + i), remote_ip, 443, 0x02, 1000, 0, 0);
		frame_build(&f, &s);
		assert_int_equal(run1(&l, &f, 0, 10 * SEC).verdict, PIPE_FORWARD);
		pub = frame_get16(ip(&f) + 20);
		s = tcp(remote_ip, 443, wan_ip, pub, 0x12, 5000, 1001, 0);
		frame_build(&f, &s);
		assert_int_equal(run1(&l, &f, 1, 10 * SEC).verdict, PIPE_FORWARD);
		s = tcp(client_ip, (uint16_t)(6000 + i), remote_ip, 443, 0x10, 1001, 5001, 0);
		frame_build(&f, &s);
		assert_int_equal(run1(&l, &f, 0, 10 * SEC).verdict, PIPE_FORWARD);
	}
	pool = used_pool(&l);
	s = tcp(client_ip, 6100, remote_ip, 443, 0x02, 1000, 0, 0);
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 0, 15 * SEC).verdict, PIPE_DROP);
	assert_int_equal(pipe_stats(l.w)->drop[PIPE_DROP_NAT_FAILED], 1);
	assert_int_equal(pool->stats.reclaimed, 0);
	lab_close(&l);
}

/* An idle worker's flows expire by pipe_tick as by a burst: their
 * conntrack entries and NAT ports go back; a tick with an earlier clock
 * than the last burst's does nothing. */
static void test_tick_expires_when_idle(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s;
	struct ct_stats cs;
	const struct nat_pool *pool;
	(void)state;

	lab_open(&l, 1024);
	for (uint16_t i = 0; i < 3; i++) {
		s = udp(client_ip, (uint16_t)(6000 + i), remote_ip, 53);
		frame_build(&f, &s);
		assert_int_equal(run1(&l, &f, 0, 1000 * SEC).verdict, PIPE_FORWARD);
	}
	pool = used_pool(&l);
	assert_int_equal(pool->stats.in_use, 3);
	pipe_tick(l.w, 500 * SEC);		/* back in time: nothing */
	pipe_tick(l.w, 1001 * SEC);		/* not yet their time */
	ct_get_stats(pipe_conntrack(l.w), &cs);
	assert_int_equal(cs.in_use, 3);
	pipe_tick(l.w, 2000 * SEC);		/* UDP's 30 s long past */
	ct_get_stats(pipe_conntrack(l.w), &cs);
	assert_int_equal(cs.in_use, 0);
	assert_int_equal(pool->stats.in_use, 0);
	pipe_tick(l.w, 1500 * SEC);		/* and the clock stays */
	s = udp(client_ip, 6100, remote_ip, 53);
	frame_build(&f, &s);
	assert_int_equal(run1(&l, &f, 0, 2000 * SEC).verdict, PIPE_FORWARD);
	ct_get_stats(pipe_conntrack(l.w), &cs);
	assert_int_equal(cs.in_use, 1);
	lab_close(&l);
}

/* A stateful policy's per-source limit counts a source's new flows,
 * which go to the workers by their tuples' hash: each of n workers
 * enforces 1/n of it (burst 4 over 2 workers: 2 here), so the sum is the
 * limit, as for a per-rule limit. */
static void test_source_limit_split(void **state)
{
	static const char text[] =
		"version: 1\n"
		"zones: {inside: [lan0], outside: [wan0]}\n"
		"rules:\n"
		"  - name: dns-in\n"
		"    proto: udp\n"
		"    from: {zone: outside}\n"
		"    to: {zone: inside, port: 5353}\n"
		"    action: accept\n"
		"    limit: {rate: 1/s, burst: 4, per: source}\n"
		"defaults: {action: drop}\n"
		"routes:\n"
		"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"
		"  - {prefix: 10.100.0.0/16, interface: lan0}\n";
	struct pipe_config c = {.mode = PIPE_ROUTER, .max_flows = 64, .seed = 7};
	struct flow_spec s = {.family = 4, .proto = 17, .dport = 5353, .payload = 8};
	struct lab l;
	struct frame f;
	uint32_t passed = 0;
	(void)state;

	router_lab_compile(text, &l.buf, &l.len, &l.view);
	router_lab_ports(&c);
	c.worker_count = 2;	/* worker 0 of 2 */
	l.w = pipe_create(&c, &l.view);
	assert_non_null(l.w);
	router_lab_neighbours(l.w);
	memcpy(s.src, outside_ip, 4);
	memcpy(s.dst, (uint8_t[]){10, 100, 0, 10}, 4);
	for (uint16_t i = 0; i < 6; i++) {	/* six new flows of one source */
		s.sport = (uint16_t)(3000 + i);
		frame_build(&f, &s);
		passed += run1(&l, &f, 1, 5 * SEC).verdict == PIPE_FORWARD;
	}
	assert_int_equal(passed, 2);
	assert_int_equal(pipe_rule_limited(l.w, 1), 4);
	lab_close(&l);
}

/* A stateful rule's limit counts new flows: three packets of one new
 * flow in one burst are one flow (charged once, all through), as they
 * would be in three bursts; before, each was charged, the flow's own
 * third packet dropped and the next flow too. */
static void test_limit_counts_flows_in_a_burst(void **state)
{
	struct lab l;
	struct frame f[4];
	struct pipe_pkt p[4];
	(void)state;

	lab_open(&l, 64);
	for (int i = 0; i < 4; i++) {
		struct flow_spec o = {.family = 4, .proto = 17, .sport = 1, .dport = 5353,
				      .src = {10, 200, 0, 1}, .dst = {10, 100, 0, 10},
				      .payload = 10};

		if (i == 3)
			o.src[3] = 2;		/* another flow after them */
		frame_build(&f[i], &o);
		p[i] = (struct pipe_pkt){.data = f[i].b, .len = f[i].len, .room = sizeof(f[i].b),
					 .in_port = 1};
	}
	pipe_process(l.w, p, 4, 5 * SEC);
	for (int i = 0; i < 4; i++)
		assert_int_equal(p[i].verdict, PIPE_FORWARD);	/* a burst of 2: two flows */
	assert_int_equal(pipe_rule_limited(l.w, 3), 0);
	{	/* a third flow in the same second: over */
		struct flow_spec o = {.family = 4, .proto = 17, .sport = 1, .dport = 5353,
				      .src = {10, 200, 0, 3}, .dst = {10, 100, 0, 10},
				      .payload = 10};

		frame_build(&f[0], &o);
		assert_int_equal(run1(&l, &f[0], 1, 5 * SEC).verdict, PIPE_DROP);
		assert_int_equal(pipe_rule_limited(l.w, 3), 1);
	}
	lab_close(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_through_masquerade),
		cmocka_unit_test(test_ack_flood),
		cmocka_unit_test(test_port_forward),
		cmocka_unit_test(test_icmp),
		cmocka_unit_test(test_limit_counts_flows_in_a_burst),
		cmocka_unit_test(test_time_exceeded_before_nat),
		cmocka_unit_test(test_too_big_through_nat),
		cmocka_unit_test(test_fragmented_through_nat),
		cmocka_unit_test(test_held_through_nat),
		cmocka_unit_test(test_unresolved_host_unreachable),
		cmocka_unit_test(test_fragments),
		cmocka_unit_test(test_fragments_in_one_burst),
		cmocka_unit_test(test_fragments_parked),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_pool_full_reclaims),
		cmocka_unit_test(test_tick_expires_when_idle),
		cmocka_unit_test(test_source_limit_split),
		cmocka_unit_test(test_new_flows_in_one_burst),
	};
	return cmocka_run_group_tests_name("pipeline_state", tests, NULL, NULL);
}
