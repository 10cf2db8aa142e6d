/* Frames that arrive on the wrong worker's queue (pipe_config.handoff):
 * two workers of one policy, each frame delivered to either at random
 * (as veth and RSS do), handed to the worker that owns its flow when it
 * says PIPE_HANDOFF. Both directions of every flow must end up on one
 * worker and be translated there: masquerade (the port chosen so that the
 * reply maps back), DNAT (the owner found by the translated tuple), a
 * plain flow, ICMP echo and an ICMP error about a translated flow; a
 * frame handed over once is never handed on, and each frame is counted
 * received once. */
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
#include "router_lab.h"
#include "rss_home.h"

#define SEC 1000000000ull
#define NW 2		/* workers, but for the many-workers test */
#define NW_MAX 16

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
	"defaults: {action: drop}\n"
	"nat:\n"
	ROUTER_LAB_EIGHT_FORWARDS
	"  - name: web-forward\n"
	"    match: {from: {zone: outside}, to: {network: 10.0.1.1, service: tcp/8080}}\n"
	"    dnat: {to: 10.100.0.10, port: 80}\n"
	"  - name: masq\n"
	"    match: {from: {network: 10.100.0.0/16}, to: {zone: outside}}\n"
	"    snat: {to: masquerade, ports: 20000-29999}\n"
	"routes:\n"
	"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"
	"  - {prefix: 10.100.0.0/16, interface: lan0}\n";

struct lab {
	void *buf;
	size_t len;
	struct rfw_view view;
	uint32_t nw;
	struct pipe_worker *w[NW_MAX];
	uint32_t handed;	/* handoffs */
	uint32_t hops2;		/* second handoffs (fragments) */
};

static uint32_t kept_sets = 1;	/* sets of DNAT rules kept by the last reload_to, at least 1 */
static const struct rss_home *lab_rss;	/* pipe_config.rss_home of the next lab_open */

static void lab_open_text(struct lab *l, const char *text, int handoff, uint32_t nw,
			  enum pipe_mode mode)
{
	struct pipe_config c = {.mode = mode, .seed = 7,
				.worker_count = (uint16_t)nw, .handoff = (uint8_t)handoff,
				.home_seed = 0x5eed, .max_flows = 4096, .rss_home = lab_rss};

	kept_sets = 1;
	memset(l, 0, sizeof(*l));
	l->nw = nw;
	router_lab_compile(text, &l->buf, &l->len, &l->view);
	router_lab_ports(&c);
	for (uint16_t k = 0; k < nw; k++) {
		c.worker_id = k;
		l->w[k] = pipe_create(&c, &l->view);
		assert_non_null(l->w[k]);
		router_lab_neighbours(l->w[k]);
	}
}

static void lab_open_mode(struct lab *l, int handoff, uint32_t nw, enum pipe_mode mode)
{
	lab_open_text(l, policy, handoff, nw, mode);
}

static void lab_open_n(struct lab *l, int handoff, uint32_t nw)
{
	lab_open_mode(l, handoff, nw, PIPE_ROUTER);
}

static void lab_open(struct lab *l, int handoff)
{
	lab_open_n(l, handoff, NW);
}

static void lab_close(struct lab *l)
{
	for (uint32_t k = 0; k < l->nw; k++)
		pipe_destroy(l->w[k]);
	free(l->buf);
}

/* p, run by worker `at`, handed over while it says so, as rampartd's
 * workers do (anything once, a fragment twice, more for a second
 * chance). Returns the worker that ran it to its verdict. */
static uint32_t follow(struct lab *l, struct pipe_pkt *p, uint32_t at)
{
	int fragment = (frame_get16(p->data + 14 + 6) & 0x3fff) != 0;

	pipe_process(l->w[at], p, 1, SEC);
	while (p->verdict == PIPE_HANDOFF) {
		assert_true(p->worker < l->nw);
		assert_int_not_equal(p->worker, at);
		/* never handed on further, but a fragment to its datagram's
		 * worker first, and a packet that finds no flow after DNAT
		 * changes or on a forwarded port to where each set of kept
		 * rules homes it, to its own tuple's worker and back
		 * (pipe_second), the fragments of a datagram after their
		 * first: one hop more than a whole packet's at most */
		assert_true(p->homed < (fragment ? 4 + kept_sets : p->second ? 2 + kept_sets : 1));
		at = p->worker;
		l->handed++;
		p->homed++;
		l->hops2 += p->homed == 2;
		pipe_process(l->w[at], p, 1, SEC);
	}
	return at;
}

/* f arrives on worker `at`'s queue (follow). *by: the worker that ran
 * it to its verdict. */
static struct pipe_pkt deliver(struct lab *l, struct frame *f, uint8_t in_port, uint32_t at,
			       uint32_t *by)
{
	struct pipe_pkt p = {.data = f->b, .len = f->len, .room = sizeof(f->b), .in_port = in_port};

	*by = follow(l, &p, at);
	f->len = p.len;
	return p;
}

static struct flow_spec spec(uint8_t proto, const uint8_t *src, uint16_t sport,
			     const uint8_t *dst, uint16_t dport, uint8_t flags)
{
	struct flow_spec s = {.family = 4, .proto = proto, .sport = sport, .dport = dport,
			      .tcp_flags = flags, .seq = 1000, .ack = flags & 0x10 ? 1 : 0};

	memcpy(s.src, src, 4);
	memcpy(s.dst, dst, 4);
	return s;
}

static uint8_t *ip(struct frame *f)
{
	return f->b + 14;
}

/* 64 UDP flows out through masquerade, requests and replies each on a
 * random worker's queue: every reply comes back translated. */
static void test_masquerade_replies_find_their_worker(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	uint32_t by_req, by_rep, ran[NW] = {0}, seed = 12345;
	uint64_t rx = 0;
	(void)state;

	lab_open(&l, 1);
	for (uint16_t i = 0; i < 64; i++) {
		uint16_t pub;

		seed = seed * 1103515245u + 12345u;
		s = spec(17, client_ip, (uint16_t)(40000 + i), remote_ip, 53, 0);
		frame_build(&f, &s);
		p = deliver(&l, &f, 0, (seed >> 16) % NW, &by_req);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_memory_equal(ip(&f) + 12, wan_ip, 4);
		pub = frame_get16(ip(&f) + 20);
		ran[by_req]++;

		seed = seed * 1103515245u + 12345u;
		s = spec(17, remote_ip, 53, wan_ip, pub, 0);
		frame_build(&f, &s);
		p = deliver(&l, &f, 1, (seed >> 16) % NW, &by_rep);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		assert_int_equal(p.out_port, 0);
		assert_memory_equal(ip(&f) + 16, client_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 22), 40000 + i);
		assert_true(frame_checksums_ok(f.b, f.len));
	}
	for (int k = 0; k < NW; k++) {
		const struct pipe_stats *st = pipe_stats(l.w[k]);

		assert_true(ran[k] > 8);	/* the flows spread over both */
		assert_int_equal(st->drop[PIPE_DROP_CT_INVALID] + st->drop[PIPE_DROP_POLICY], 0);
		assert_true(st->handed_off > 0);
		rx += st->port[0].rx_packets + st->port[1].rx_packets;
	}
	assert_true(l.handed > 16);
	assert_int_equal(pipe_stats(l.w[0])->handed_in + pipe_stats(l.w[1])->handed_in, l.handed);
	assert_int_equal(rx, 128);	/* each frame counted once, by its owner */
	lab_close(&l);
}

/* The express path homes IPv4 frames from their bytes (home_hash4):
 * the same worker as home_hash of the zero-padded addresses. */
static void test_home_hash4_is_home_hash(void **state)
{
	uint32_t x = 99;
	(void)state;

	for (int i = 0; i < 100000; i++) {
		uint8_t s16[16] = {0}, d16[16] = {0};
		uint16_t sp, dp;
		uint64_t seed;

		for (int b = 0; b < 4; b++) {
			x = x * 1103515245u + 12345u;
			s16[b] = (uint8_t)(x >> 16);
			d16[b] = (uint8_t)(x >> 24);
		}
		x = x * 1103515245u + 12345u;
		sp = (uint16_t)(x >> 8);
		dp = (uint16_t)(x >> 12);
		seed = (uint64_t)x << 32 | (x * 2654435761u);
		assert_int_equal(home_hash4(s16, d16, sp, dp, (uint8_t)(x >> 3), seed),
				 home_hash(s16, d16, sp, dp, (uint8_t)(x >> 3), seed));
	}
}

/* Flows that go on for a while: after their first packets the flow
 * cache finishes them on the express path, which must hand them over
 * like the full path (its worker found from the frame's bytes). 32 UDP
 * flows through masquerade, 8 requests and replies each on random
 * queues: all translated, each frame counted once, and most of the later
 * ones flow-cache hits. */
static void test_cached_flows_find_their_worker(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	uint32_t by_req, by_rep, owner[32], seed = 777;
	uint16_t pub[32];
	uint64_t rx = 0, hits = 0;
	(void)state;

	lab_open(&l, 1);
	for (int round = 0; round < 8; round++) {
		for (uint16_t i = 0; i < 32; i++) {
			seed = seed * 1103515245u + 12345u;
			s = spec(17, client_ip, (uint16_t)(41000 + i), remote_ip, 53, 0);
			s.payload = 32;	/* 74 bytes: a real frame's size */
			frame_build(&f, &s);
			p = deliver(&l, &f, 0, (seed >> 16) % NW, &by_req);
			assert_int_equal(p.verdict, PIPE_FORWARD);
			assert_memory_equal(ip(&f) + 12, wan_ip, 4);
			assert_true(frame_checksums_ok(f.b, f.len));
			if (round == 0) {
				pub[i] = frame_get16(ip(&f) + 20);
				owner[i] = by_req;
			}
			assert_int_equal(frame_get16(ip(&f) + 20), pub[i]);
			assert_int_equal(by_req, owner[i]);

			seed = seed * 1103515245u + 12345u;
			s = spec(17, remote_ip, 53, wan_ip, pub[i], 0);
			s.payload = 32;
			frame_build(&f, &s);
			p = deliver(&l, &f, 1, (seed >> 16) % NW, &by_rep);
			assert_int_equal(p.verdict, PIPE_FORWARD);
			assert_int_equal(by_rep, owner[i]);
			assert_memory_equal(ip(&f) + 16, client_ip, 4);
			assert_int_equal(frame_get16(ip(&f) + 22), 41000 + i);
			assert_true(frame_checksums_ok(f.b, f.len));
		}
	}
	for (int k = 0; k < NW; k++) {
		const struct pipe_stats *st = pipe_stats(l.w[k]);

		rx += st->port[0].rx_packets + st->port[1].rx_packets;
		hits += st->flow_cache_hits;
	}
	assert_int_equal(rx, 8 * 64);
	assert_int_equal(pipe_stats(l.w[0])->handed_in + pipe_stats(l.w[1])->handed_in, l.handed);
	assert_true(l.handed > 64);
	assert_true(hits > 6 * 64);	/* rounds 2 to 8, but for slot collisions */
	lab_close(&l);
}

/* Sixteen workers: a port whose reply maps back to the worker is 1 in
 * 16, and SNAT still finds one for every flow (it tries enough ports). */
static void test_sixteen_workers(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	uint32_t by_req, by_rep, seed = 4242;
	uint64_t remote = 0;
	(void)state;

	lab_open_n(&l, 1, NW_MAX);
	for (uint16_t i = 0; i < 400; i++) {
		seed = seed * 1103515245u + 12345u;
		s = spec(17, client_ip, (uint16_t)(30000 + i), remote_ip, 53, 0);
		frame_build(&f, &s);
		p = deliver(&l, &f, 0, (seed >> 16) % NW_MAX, &by_req);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		seed = seed * 1103515245u + 12345u;
		s = spec(17, remote_ip, 53, wan_ip, frame_get16(ip(&f) + 20), 0);
		frame_build(&f, &s);
		p = deliver(&l, &f, 1, (seed >> 16) % NW_MAX, &by_rep);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
	}
	for (uint32_t k = 0; k < NW_MAX; k++)
		for (uint32_t i = 0; i < pipe_nat_pool_count(l.w[k]); i++)
			remote += pipe_nat_pool(l.w[k], i)->stats.remote;
	assert_int_equal(remote, 0);
	lab_close(&l);
}

/* Port forwarding: clients from outside to 10.0.1.1:8080, the server
 * answers from 10.100.0.10:80 on its own queue; plain flows to the server
 * (no translation) too. In l's mode: a router's, or a bridge's. */
static void handshakes(struct lab *l)
{
	static const uint8_t outside_ip[4] = {10, 200, 5, 5};
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	uint32_t by_req, by_rep, seed = 99;

	for (uint16_t i = 0; i < 64; i++) {
		int dnat = i % 2;

		seed = seed * 1103515245u + 12345u;
		s = spec(6, outside_ip, (uint16_t)(5000 + i), dnat ? wan_ip : server_ip,
			 dnat ? 8080 : 80, 0x02);
		frame_build(&f, &s);
		p = deliver(l, &f, 1, (seed >> 16) % NW, &by_req);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(p.out_port, 0);
		assert_memory_equal(ip(&f) + 16, server_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 22), 80);

		seed = seed * 1103515245u + 12345u;
		s = spec(6, server_ip, 80, outside_ip, (uint16_t)(5000 + i), 0x12);
		s.ack = 1001;
		frame_build(&f, &s);
		p = deliver(l, &f, 0, (seed >> 16) % NW, &by_rep);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		assert_int_equal(p.out_port, 1);
		assert_memory_equal(ip(&f) + 12, dnat ? wan_ip : server_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 20), dnat ? 8080 : 80);
		assert_true(frame_checksums_ok(f.b, f.len));

		/* then data both ways, on any queue: after the first, most
		 * of it the flow cache's (its express path, with handoff) */
		for (uint32_t k = 0; k < 4; k++) {
			seed = seed * 1103515245u + 12345u;
			s = spec(6, outside_ip, (uint16_t)(5000 + i), dnat ? wan_ip : server_ip,
				 dnat ? 8080 : 80, 0x18);
			s.seq = 1001 + 10 * k, s.ack = 1001 + 10 * k, s.payload = 10;
			frame_build(&f, &s);
			p = deliver(l, &f, 1, (seed >> 16) % NW, &by_rep);
			assert_int_equal(p.verdict, PIPE_FORWARD);
			assert_int_equal(by_rep, by_req);
			assert_memory_equal(ip(&f) + 16, server_ip, 4);
			assert_int_equal(frame_get16(ip(&f) + 22), 80);
			assert_true(frame_checksums_ok(f.b, f.len));

			seed = seed * 1103515245u + 12345u;
			s = spec(6, server_ip, 80, outside_ip, (uint16_t)(5000 + i), 0x18);
			s.seq = 1001 + 10 * k, s.ack = 1011 + 10 * k, s.payload = 10;
			frame_build(&f, &s);
			p = deliver(l, &f, 0, (seed >> 16) % NW, &by_rep);
			assert_int_equal(p.verdict, PIPE_FORWARD);
			assert_int_equal(by_rep, by_req);
			assert_memory_equal(ip(&f) + 12, dnat ? wan_ip : server_ip, 4);
			assert_int_equal(frame_get16(ip(&f) + 20), dnat ? 8080 : 80);
			assert_true(frame_checksums_ok(f.b, f.len));
		}
	}
	assert_true(l->handed > 16);
	assert_true(pipe_stats(l->w[0])->flow_cache_hits + pipe_stats(l->w[1])->flow_cache_hits >
		    64 * 4);
}

static void test_dnat_and_plain_replies_find_their_worker(void **state)
{
	struct lab l;
	(void)state;

	lab_open(&l, 1);
	handshakes(&l);
	lab_close(&l);
}

/* Worker k of l from policy A to `to` (with the DNAT rules `keep` kept,
 * or NULL), as rampartd's reload does. */
/* The DNAT rules kept over the lab's reloads, as rampartd's reloader
 * keeps them (daemon/reload.c). */
struct kept {
	const struct rfw_view *running;
	const struct rfw_view *v[PIPE_DNAT_KEPT_MAX];
	uint32_t n;
};

static void reload_to(struct lab *l, struct kept *kp, const struct rfw_view *to)
{
	const struct rfw_view *keep[PIPE_DNAT_KEPT_MAX];
	uint32_t n = 0, dropped = 0;
	char err[256];

	if (kp->running)
		n = pipe_dnat_to_keep(kp->running, kp->v, kp->n, to, keep, &dropped);
	for (uint32_t k = 0; k < l->nw; k++) {
		struct pipe_policy *p = pipe_policy_build(l->w[k], to, NULL, PIPE_FLOWS_KEEP, NULL,
							  err, sizeof(err));

		assert_non_null(p);
		assert_int_equal(pipe_policy_keep_dnat(l->w[k], p, keep, n), n ? 1 : 0);
		p = pipe_adopt(l->w[k], p);
		while (pipe_sweep(l->w[k]))
			;
		pipe_policy_free(p);
	}
	kp->running = to;
	memcpy(kp->v, keep, n * sizeof(keep[0]));
	kp->n = n;
	kept_sets = n > 1 ? n : 1;
}

/* pipe_dnat_to_keep(running, kept[0..nkept), next) is want[0..nwant)
 * with `dropped` left out */
static void assert_keeps(const struct rfw_view *running, const struct rfw_view *const *kept,
			 uint32_t nkept, const struct rfw_view *next, const struct rfw_view *const *want,
			 uint32_t nwant, uint32_t dropped)
{
	const struct rfw_view *keep[PIPE_DNAT_KEPT_MAX];
	uint32_t left_out, n = pipe_dnat_to_keep(running, kept, nkept, next, keep, &left_out);

	assert_int_equal(n, nwant);
	assert_int_equal(left_out, dropped);
	for (uint32_t i = 0; i < n; i++)
		assert_ptr_equal(keep[i], want[i]);
}

/* text with its first `from` replaced by `to` (in place, room enough) */
static void replace(char *text, const char *from, const char *to)
{
	char *at = strstr(text, from);
	size_t fl = strlen(from), tl = strlen(to);

	assert_non_null(at);
	memmove(at + tl, at + fl, strlen(at + fl) + 1);
	memcpy(at, to, tl);
}

/* `policy` with web-in open to servers .8 to .15, its DNAT rule
 * sending to 10.100.0.(10 + moved) */
static void compile_moved(void **buf, size_t *len, struct rfw_view *view, int moved)
{
	char text[sizeof(policy) + 64], to[64];

	strcpy(text, policy);
	replace(text, "network: 10.100.0.10, port: 80", "network: 10.100.0.8/29, port: 80");
	snprintf(to, sizeof(to), "dnat: {to: 10.100.0.%d,", 10 + moved);
	replace(text, "dnat: {to: 10.100.0.10,", to);
	router_lab_compile(text, buf, len, view);
}

/* One TCP segment of flow i of the outside host (to wan:8080), or of the
 * server `srv`'s answer, delivered at a random worker; returns where it
 * ran and checks it was forwarded to `to` / back as the public address. */
static uint32_t segment(struct lab *l, uint32_t *seed, uint16_t i, int answer,
			const uint8_t *srv, uint8_t flags, uint32_t seq, uint32_t ack)
{
	static const uint8_t outside_ip[4] = {10, 200, 5, 5};
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	uint32_t by;

	*seed = *seed * 1103515245u + 12345u;
	if (!answer)
		s = spec(6, outside_ip, (uint16_t)(6000 + i), wan_ip, 8080, flags);
	else
		s = spec(6, srv, 80, outside_ip, (uint16_t)(6000 + i), flags);
	s.seq = seq;
	s.ack = ack;
	s.payload = flags & 0x08 ? 10 : 0;
	frame_build(&f, &s);
	p = deliver(l, &f, answer ? 0 : 1, (*seed >> 16) % l->nw, &by);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	if (!answer) {
		assert_memory_equal(ip(&f) + 16, srv, 4);
		assert_int_equal(frame_get16(ip(&f) + 22), 80);
	} else {
		assert_memory_equal(ip(&f) + 12, wan_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 20), 8080);
	}
	assert_true(frame_checksums_ok(f.b, f.len));
	return by;
}

/* A connection through DNAT, opened: returns its worker. */
static uint32_t dnat_open(struct lab *l, uint32_t *seed, uint16_t i, const uint8_t *srv)
{
	uint32_t by = segment(l, seed, i, 0, srv, 0x02, 1000, 0);

	assert_int_equal(segment(l, seed, i, 1, srv, 0x12, 5000, 1001), by);
	assert_int_equal(segment(l, seed, i, 0, srv, 0x10, 1001, 5001), by);
	return by;
}

/* End every flow of l's workers whose replies come from `from` (as
 * rampartctl flows --delete would). */
static void end_flows_to(struct lab *l, const uint8_t *from)
{
	for (uint32_t k = 0; k < l->nw; k++) {
		const struct ct_table *t = pipe_conntrack(l->w[k]);

		for (uint32_t f = 0; f < ct_max_flows(t); f++) {
			struct ct_flow_info fi;

			if (ct_flow_get(t, f, &fi) == 0 && !memcmp(fi.reply.src, from, 4))
				pipe_flow_end(l->w[k], f);
		}
	}
}

/* A reload that moves a DNAT rule to another server with four workers:
 * the established connections it translated live on the workers the old
 * translation homed them on; their next packets, homed by the new one,
 * find them there (a second chance) and still reach the old server, and
 * new connections go to the new server, each both ways on one worker.
 * A second reload that leaves DNAT alone keeps the rules before. */
static void test_dnat_change_keeps_flows(void **state)
{
	static const uint8_t moved_ip[4] = {10, 100, 0, 11};
	struct lab l;
	void *buf_a, *buf_b, *buf_c;
	size_t len_a, len_b, len_c;
	struct rfw_view va, vb, vc;
	struct kept kp = {0};
	uint32_t seed = 4242, owner[32], chances = 0;
	(void)state;

	lab_open_n(&l, 1, 4);
	compile_moved(&buf_a, &len_a, &va, 0);
	compile_moved(&buf_b, &len_b, &vb, 1);
	compile_moved(&buf_c, &len_c, &vc, 1);
	/* which rules to keep: only across a change of DNAT */
	{
		const struct rfw_view *a[] = {&va}, *b[] = {&vb};

		assert_keeps(&va, NULL, 0, &l.view, NULL, 0, 0);	/* same DNAT */
		assert_keeps(&va, NULL, 0, &vb, a, 1, 0);
		assert_keeps(&vb, a, 1, &vc, a, 1, 0);	/* carried */
		assert_keeps(&vb, a, 1, &va, b, 1, 0);	/* back: B's flows */
	}
	for (uint32_t k = 0; k < l.nw; k++)
		assert_int_equal(pipe_neigh_set(l.w[k], 0, 4, moved_ip, server_mac), 0);
	kp.running = &l.view;
	reload_to(&l, &kp, &va);
	for (uint16_t i = 0; i < 32; i++)
		owner[i] = dnat_open(&l, &seed, i, server_ip);

	reload_to(&l, &kp, &vb);
	for (uint16_t i = 0; i < 32; i++) {	/* the old ones, both ways */
		assert_int_equal(segment(&l, &seed, i, 0, server_ip, 0x18, 1001, 5001), owner[i]);
		assert_int_equal(segment(&l, &seed, i, 1, server_ip, 0x18, 5001, 1011), owner[i]);
	}
	for (uint32_t k = 0; k < l.nw; k++)
		chances += (uint32_t)pipe_stats(l.w[k])->second_chance;
	assert_true(chances >= 8);	/* ~3 in 4 of the 32 moved */
	for (uint16_t i = 32; i < 64; i++)	/* new ones, to the new server */
		(void)dnat_open(&l, &seed, i, moved_ip);

	reload_to(&l, &kp, &vc);	/* DNAT unchanged */
	for (uint16_t i = 0; i < 32; i++)
		assert_int_equal(segment(&l, &seed, i, 0, server_ip, 0x18, 1011, 5011), owner[i]);
	for (uint16_t i = 32; i < 64; i++)
		(void)segment(&l, &seed, i, 0, moved_ip, 0x18, 1001, 5001);
	for (uint32_t k = 0; k < l.nw; k++) {
		const struct pipe_stats *st = pipe_stats(l.w[k]);

		assert_int_equal(st->drop[PIPE_DROP_CT_INVALID] + st->drop[PIPE_DROP_POLICY], 0);
	}

	/* The kept rules are needed while a connection from before the
	 * change lives (not for the 32 made since, through the new rule);
	 * once the old ones end, every worker can drop them, and new
	 * connections still reach the new server, with no second chance. */
	{
		uint32_t needed = 0, chances_after = 0;

		for (uint32_t k = 0; k < l.nw; k++)
			needed += (uint32_t)pipe_dnat_kept_needed(l.w[k]);
		assert_true(needed > 0);
		end_flows_to(&l, server_ip);
		chances = 0;
		for (uint32_t k = 0; k < l.nw; k++) {
			int kept;
			uint32_t redirects;

			assert_false(pipe_dnat_kept_needed(l.w[k]));
			pipe_drop_kept_dnat(l.w[k]);
			pipe_second_chance_sources(l.w[k], &kept, &redirects);
			assert_false(kept);
			chances += (uint32_t)pipe_stats(l.w[k])->second_chance;
		}
		for (uint16_t i = 64; i < 96; i++)
			(void)dnat_open(&l, &seed, i, moved_ip);
		for (uint16_t i = 32; i < 64; i++)	/* and those made before */
			(void)segment(&l, &seed, i, 0, moved_ip, 0x18, 1011, 5001);
		for (uint32_t k = 0; k < l.nw; k++)
			chances_after += (uint32_t)pipe_stats(l.w[k])->second_chance;
		assert_int_equal(chances_after, chances);
	}
	lab_close(&l);	/* its workers' policies use vc's tables */
	free(buf_a);
	free(buf_b);
	free(buf_c);
}

/* Two reloads that each move the DNAT rule, with four workers: the
 * connections made before the first still reach the first server and
 * those made between the two the second (each found through the rules
 * kept for it, the older behind the newer), new ones go to the third;
 * once the first server's connections end, the rules kept for them are
 * still needed for the second's, and once those end, for none. Then
 * the bound: the rules of at most PIPE_DNAT_KEPT_MAX policies before are
 * kept, the oldest left out. */
static void test_two_dnat_changes_keep_flows(void **state)
{
	static const uint8_t second_ip[4] = {10, 100, 0, 11}, third_ip[4] = {10, 100, 0, 12};
	struct lab l;
	void *buf[PIPE_DNAT_KEPT_MAX + 2];
	size_t len;
	struct rfw_view v[PIPE_DNAT_KEPT_MAX + 2];
	struct kept kp = {0};
	uint32_t seed = 77, owner[64], needed;
	(void)state;

	lab_open_n(&l, 1, 4);
	for (int i = 0; i < PIPE_DNAT_KEPT_MAX + 2; i++)
		compile_moved(&buf[i], &len, &v[i], i);
	for (uint32_t k = 0; k < l.nw; k++) {
		assert_int_equal(pipe_neigh_set(l.w[k], 0, 4, second_ip, server_mac), 0);
		assert_int_equal(pipe_neigh_set(l.w[k], 0, 4, third_ip, server_mac), 0);
	}
	kp.running = &l.view;
	reload_to(&l, &kp, &v[0]);
	for (uint16_t i = 0; i < 32; i++)
		owner[i] = dnat_open(&l, &seed, i, server_ip);
	reload_to(&l, &kp, &v[1]);
	for (uint16_t i = 32; i < 64; i++)
		owner[i] = dnat_open(&l, &seed, i, second_ip);
	reload_to(&l, &kp, &v[2]);
	assert_int_equal(kp.n, 2);
	for (uint16_t i = 0; i < 64; i++) {	/* both generations, both ways */
		const uint8_t *srv = i < 32 ? server_ip : second_ip;

		assert_int_equal(segment(&l, &seed, i, 0, srv, 0x18, 1001, 5001), owner[i]);
		assert_int_equal(segment(&l, &seed, i, 1, srv, 0x18, 5001, 1011), owner[i]);
	}
	for (uint16_t i = 64; i < 96; i++)	/* new ones, to the third server */
		(void)dnat_open(&l, &seed, i, third_ip);
	for (uint32_t k = 0; k < l.nw; k++) {
		const struct pipe_stats *st = pipe_stats(l.w[k]);

		assert_int_equal(st->drop[PIPE_DROP_CT_INVALID] + st->drop[PIPE_DROP_POLICY], 0);
	}
	end_flows_to(&l, server_ip);
	needed = 0;
	for (uint32_t k = 0; k < l.nw; k++)
		needed += (uint32_t)pipe_dnat_kept_needed(l.w[k]);
	assert_true(needed > 0);	/* the second server's connections */
	end_flows_to(&l, second_ip);
	for (uint32_t k = 0; k < l.nw; k++)
		assert_false(pipe_dnat_kept_needed(l.w[k]));

	/* the bound: one more change than kept rules, newest first */
	{
		const struct rfw_view *kept[PIPE_DNAT_KEPT_MAX], *want[PIPE_DNAT_KEPT_MAX];

		for (int i = 0; i < PIPE_DNAT_KEPT_MAX; i++) {
			kept[i] = &v[PIPE_DNAT_KEPT_MAX - 1 - i];	/* v[3] v[2] v[1] v[0] */
			want[i] = &v[PIPE_DNAT_KEPT_MAX - i];		/* v[4] v[3] v[2] v[1] */
		}
		assert_keeps(&v[PIPE_DNAT_KEPT_MAX], kept, PIPE_DNAT_KEPT_MAX,
			     &v[PIPE_DNAT_KEPT_MAX + 1], want, PIPE_DNAT_KEPT_MAX, 1);
		/* back to an older one: its rules are the policy's again */
		want[0] = &v[PIPE_DNAT_KEPT_MAX];
		want[1] = &v[PIPE_DNAT_KEPT_MAX - 1];
		want[2] = &v[PIPE_DNAT_KEPT_MAX - 3];
		want[3] = &v[PIPE_DNAT_KEPT_MAX - 4];
		assert_keeps(&v[PIPE_DNAT_KEPT_MAX], kept, PIPE_DNAT_KEPT_MAX,
			     &v[PIPE_DNAT_KEPT_MAX - 2], want, PIPE_DNAT_KEPT_MAX, 0);
	}
	lab_close(&l);	/* its workers' policies use v[2]'s tables */
	for (int i = 0; i < PIPE_DNAT_KEPT_MAX + 2; i++)
		free(buf[i]);
}

/* A port forward that takes the ports masquerade gives out (here all of
 * them: 20000-29999 on the public address, TCP and UDP) with four
 * workers: a masqueraded connection's answers match the forward, are
 * homed by its translation, find no flow there and go on to where their
 * own tuple says, the masqueraded flow's worker; a new connection to a
 * forwarded port still gets the forward (there and back first). */
static void test_answers_on_forwarded_ports(void **state)
{
	static const uint8_t outside_ip[4] = {10, 200, 5, 5};
	char text[sizeof(policy) + 256];
	struct lab l;
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	uint32_t seed = 777, by_req, by_rep, chances = 0;
	(void)state;

	strcpy(text, policy);
	replace(text, "service: tcp/8080", "service: tcp/20000-29999");
	replace(text, "  - name: masq\n",
		"  - name: udp-forward\n"
		"    match: {from: {zone: outside}, to: {network: 10.0.1.1, service: udp/20000-29999}}\n"
		"    dnat: {to: 10.100.0.10}\n"
		"  - name: masq\n");
	lab_open_text(&l, text, 1, 4, PIPE_ROUTER);
	for (uint16_t i = 0; i < 64; i++) {
		uint8_t proto = i % 2 ? 17 : 6;
		uint16_t pub, rport = proto == 6 ? 443 : 53;

		seed = seed * 1103515245u + 12345u;
		s = spec(proto, client_ip, (uint16_t)(41000 + i), remote_ip, rport, 0x02);
		frame_build(&f, &s);
		p = deliver(&l, &f, 0, (seed >> 16) % l.nw, &by_req);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_memory_equal(ip(&f) + 12, wan_ip, 4);
		pub = frame_get16(ip(&f) + 20);
		assert_true(pub >= 20000 && pub <= 29999);

		seed = seed * 1103515245u + 12345u;
		s = spec(proto, remote_ip, rport, wan_ip, pub, 0x12);
		s.ack = 1001;
		frame_build(&f, &s);
		p = deliver(&l, &f, 1, (seed >> 16) % l.nw, &by_rep);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		assert_int_equal(p.out_port, 0);
		assert_memory_equal(ip(&f) + 16, client_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 22), 41000 + i);
		assert_true(frame_checksums_ok(f.b, f.len));
	}
	for (uint32_t k = 0; k < l.nw; k++) {
		const struct pipe_stats *st = pipe_stats(l.w[k]);

		assert_int_equal(st->drop[PIPE_DROP_CT_INVALID] + st->drop[PIPE_DROP_POLICY], 0);
		chances += (uint32_t)st->second_chance;
	}
	assert_true(chances >= 16);	/* ~3 in 4 were homed elsewhere */
	/* a connection to a forwarded port: to the server, both ways on one
	 * worker */
	for (uint16_t i = 0; i < 16; i++) {
		uint16_t fwd = (uint16_t)(20000 + 7 * i);

		seed = seed * 1103515245u + 12345u;
		s = spec(6, outside_ip, (uint16_t)(7000 + i), wan_ip, fwd, 0x02);
		frame_build(&f, &s);
		p = deliver(&l, &f, 1, (seed >> 16) % l.nw, &by_req);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_memory_equal(ip(&f) + 16, server_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 22), 80);

		seed = seed * 1103515245u + 12345u;
		s = spec(6, server_ip, 80, outside_ip, (uint16_t)(7000 + i), 0x12);
		s.ack = 1001;
		frame_build(&f, &s);
		p = deliver(&l, &f, 0, (seed >> 16) % l.nw, &by_rep);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 12, wan_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 20), fwd);
	}
	/* a segment of no flow at all still ends, as invalid, after going
	 * there and back */
	s = spec(6, remote_ip, 443, wan_ip, 20000, 0x10);
	frame_build(&f, &s);
	for (uint32_t at = 0; at < l.nw; at++) {
		struct frame g = f;

		p = deliver(&l, &g, 1, at, &by_rep);
		assert_int_equal(p.verdict, PIPE_DROP);
		assert_int_equal(p.drop, PIPE_DROP_CT_INVALID);
	}
	lab_close(&l);
}

/* A forward of a whole network's ports (UDP 5000-5063 on 10.0.0.0/8, to
 * the server) with four workers: an inside host that is not masqueraded
 * sends from those ports to a remote server, and each answer, which the
 * forward matches and homes by its translation, still reaches the host
 * (it would start a flow there and meet the rules: dropped); a new
 * datagram to the forward still reaches the server, answered on one
 * worker. */
static void test_answers_on_network_forward(void **state)
{
	static const uint8_t host_ip[4] = {10, 101, 0, 7}, outside_ip[4] = {10, 200, 5, 5};
	char text[sizeof(policy) + 512];
	struct lab l;
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	uint32_t seed = 4711, by_req, by_rep, chances = 0;
	(void)state;

	strcpy(text, policy);
	replace(text, "  - name: masq\n",
		"  - name: any-forward\n"
		"    match: {from: {zone: outside}, to: {network: 10.0.0.0/8, service: udp/5000-5063}}\n"
		"    dnat: {to: 10.100.0.10}\n"
		"  - name: masq\n");
	replace(text, "defaults: {action: drop}",
		"  - {name: udp-in, proto: udp, to: {network: 10.100.0.10, port: 5000-5063}, "
		"action: accept}\ndefaults: {action: drop}");
	replace(text, "  - {prefix: 10.100.0.0/16, interface: lan0}\n",
		"  - {prefix: 10.100.0.0/16, interface: lan0}\n"
		"  - {prefix: 10.101.0.0/16, interface: lan0}\n");
	lab_open_text(&l, text, 1, 4, PIPE_ROUTER);
	for (uint32_t k = 0; k < l.nw; k++)
		assert_int_equal(pipe_neigh_set(l.w[k], 0, 4, host_ip, server_mac), 0);
	for (uint16_t i = 0; i < 64; i++) {
		seed = seed * 1103515245u + 12345u;
		s = spec(17, host_ip, (uint16_t)(5000 + i), remote_ip, 53, 0);
		frame_build(&f, &s);
		p = deliver(&l, &f, 0, (seed >> 16) % l.nw, &by_req);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_memory_equal(ip(&f) + 12, host_ip, 4);	/* routed as it is */

		seed = seed * 1103515245u + 12345u;
		s = spec(17, remote_ip, 53, host_ip, (uint16_t)(5000 + i), 0);
		frame_build(&f, &s);
		p = deliver(&l, &f, 1, (seed >> 16) % l.nw, &by_rep);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 16, host_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 22), 5000 + i);
	}
	for (uint32_t k = 0; k < l.nw; k++) {
		const struct pipe_stats *st = pipe_stats(l.w[k]);

		assert_int_equal(st->drop[PIPE_DROP_CT_INVALID] + st->drop[PIPE_DROP_POLICY], 0);
		chances += (uint32_t)st->second_chance;
	}
	assert_true(chances >= 16);	/* ~3 in 4 were homed elsewhere */
	for (uint16_t i = 0; i < 16; i++) {	/* the forward itself */
		seed = seed * 1103515245u + 12345u;
		s = spec(17, outside_ip, (uint16_t)(7000 + i), wan_ip, (uint16_t)(5000 + i), 0);
		frame_build(&f, &s);
		p = deliver(&l, &f, 1, (seed >> 16) % l.nw, &by_req);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_memory_equal(ip(&f) + 16, server_ip, 4);

		seed = seed * 1103515245u + 12345u;
		s = spec(17, server_ip, (uint16_t)(5000 + i), outside_ip, (uint16_t)(7000 + i), 0);
		frame_build(&f, &s);
		p = deliver(&l, &f, 0, (seed >> 16) % l.nw, &by_rep);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 12, wan_ip, 4);
	}
	lab_close(&l);
}

/* f on a random worker's queue (the next of *seed), forwarded; *by:
 * the worker that ran it. */
static struct pipe_pkt forward_anywhere(struct lab *l, struct frame *f, uint8_t in_port,
					uint32_t *seed, uint32_t *by)
{
	struct pipe_pkt p;

	*seed = *seed * 1103515245u + 12345u;
	p = deliver(l, f, in_port, (*seed >> 16) % l->nw, by);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	return p;
}

/* The policy with a forward of every protocol to a whole network
 * (10.0.0.0/8, the outside address among it) to the server. */
static void forward_of_everything(char *text)
{
	strcpy(text, policy);
	replace(text, "  - name: masq\n",
		"  - name: all-in\n"
		"    match: {from: {zone: outside}, to: {network: 10.0.0.0/8}}\n"
		"    dnat: {to: 10.100.0.10}\n"
		"  - name: masq\n");
	replace(text, "  - {prefix: 10.100.0.0/16, interface: lan0}\n",
		"  - {prefix: 10.100.0.0/16, interface: lan0}\n"
		"  - {prefix: 10.101.0.0/16, interface: lan0}\n");
	replace(text, "defaults: {action: drop}",
		"  - {name: ping-in, proto: icmp, to: {network: 10.100.0.10}, action: accept}\n"
		"defaults: {action: drop}");
}

/* An echo reply to a ping through masquerade, or to a routed inside
 * host's ping; a time-exceeded about that host's datagram; a GRE packet
 * answering its GRE: with a forward of every protocol to a whole network
 * (10.0.0.0/8, the outside address among it), each is homed by the
 * forward's translation. None has ports, so none could be told apart by
 * dnat_answer_dports; each must still reach the worker of its flow and
 * come back translated there (it would find no flow and be dropped as
 * invalid, or, the GRE, be forwarded to the server), with four workers
 * and the frames on random queues. A ping to the forward itself still
 * goes to the server. */
static void test_portless_answers_under_forward(void **state)
{
	static const uint8_t host_ip[4] = {10, 101, 0, 7}, hop_ip[4] = {10, 200, 9, 9};
	uint8_t gre_host[4] = {10, 101, 1, 0};
	char text[sizeof(policy) + 512];
	struct lab l;
	struct frame f, sent;
	struct flow_spec s;
	struct pipe_pkt p;
	uint32_t seed = 815, by_req, by_rep, chances = 0;
	(void)state;

	forward_of_everything(text);
	lab_open_text(&l, text, 1, 4, PIPE_ROUTER);
	for (uint32_t k = 0; k < l.nw; k++) {
		assert_int_equal(pipe_neigh_set(l.w[k], 0, 4, host_ip, server_mac), 0);
		for (uint8_t h = 0; h < 32; h++)
			assert_int_equal(pipe_neigh_set(l.w[k], 0, 4, (uint8_t[]){10, 101, 1, h},
							server_mac), 0);
	}
	for (uint16_t i = 0; i < 32; i++) {
		uint16_t id;

		/* a ping through masquerade: the reply to the outside address */
		s = spec(1, client_ip, (uint16_t)(0x4200 + i), remote_ip, 0, 0);
		frame_build(&f, &s);
		forward_anywhere(&l, &f, 0, &seed, &by_req);
		assert_memory_equal(ip(&f) + 12, wan_ip, 4);
		id = frame_get16(ip(&f) + 24);
		s = spec(1, remote_ip, id, wan_ip, 0, 0);
		frame_build_echo_reply(&f, &s);
		forward_anywhere(&l, &f, 1, &seed, &by_rep);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 16, client_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 24), 0x4200 + i);

		/* a routed host's ping */
		s = spec(1, host_ip, (uint16_t)(0x5100 + i), remote_ip, 0, 0);
		frame_build(&f, &s);
		forward_anywhere(&l, &f, 0, &seed, &by_req);
		s = spec(1, remote_ip, (uint16_t)(0x5100 + i), host_ip, 0, 0);
		frame_build_echo_reply(&f, &s);
		forward_anywhere(&l, &f, 1, &seed, &by_rep);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 16, host_ip, 4);

		/* its datagram dies on the way: the error to it */
		s = spec(17, host_ip, (uint16_t)(6000 + i), remote_ip, 53, 0);
		frame_build(&sent, &s);
		forward_anywhere(&l, &sent, 0, &seed, &by_req);
		frame_build_time_exceeded(&f, wan_mac, gw_mac, hop_ip, host_ip, &sent);
		forward_anywhere(&l, &f, 1, &seed, &by_rep);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 16, host_ip, 4);

		/* GRE both ways (no ports: addresses and protocol); each
		 * host has one GRE flow with the remote, so a host a round */
		gre_host[3] = (uint8_t)i;
		s = spec(47, gre_host, 0, remote_ip, 0, 0);
		frame_build(&f, &s);
		forward_anywhere(&l, &f, 0, &seed, &by_req);
		s = spec(47, remote_ip, 0, gre_host, 0, 0);
		frame_build(&f, &s);
		forward_anywhere(&l, &f, 1, &seed, &by_rep);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 16, gre_host, 4);
	}
	for (uint32_t k = 0; k < l.nw; k++) {
		const struct pipe_stats *st = pipe_stats(l.w[k]);

		assert_int_equal(st->drop[PIPE_DROP_CT_INVALID] + st->drop[PIPE_DROP_POLICY], 0);
		chances += (uint32_t)st->second_chance;
	}
	assert_true(chances >= 48);	/* ~3 in 4 of 128 were homed elsewhere */
	for (uint16_t i = 0; i < 8; i++) {	/* a ping to the forward: the server's */
		s = spec(1, remote_ip, (uint16_t)(0x0600 + i), wan_ip, 0, 0);
		frame_build(&f, &s);
		p = deliver(&l, &f, 1, i % l.nw, &by_req);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_memory_equal(ip(&f) + 16, server_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 24), 0x0600 + i);	/* its identifier */
		assert_true(frame_checksums_ok(f.b, f.len));
		s = spec(1, server_ip, (uint16_t)(0x0600 + i), remote_ip, 0, 0);
		frame_build_echo_reply(&f, &s);
		p = deliver(&l, &f, 0, (i + 1) % l.nw, &by_rep);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 12, wan_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 24), 0x0600 + i);
		assert_true(frame_checksums_ok(f.b, f.len));
	}
	lab_close(&l);
}

/* Hairpin: a LAN client reaches the LAN server through the public
 * address's port forward, with the SNAT rule that case needs (docs/
 * architecture.md), so the server answers the firewall's LAN address
 * and the answer goes back through it: the handshake and data both
 * ways, translated twice, checksums right; one worker, then four with
 * the frames on random queues. */
static void hairpin_connections(const char *text, uint32_t nw)
{
	static const uint8_t lan_ip[4] = {10, 100, 0, 1};
	struct lab l;
	uint32_t seed = 99 + nw, by_req, by_rep;

	lab_open_text(&l, text, nw > 1, nw, PIPE_ROUTER);
	for (uint16_t i = 0; i < 16; i++) {
		struct frame f;
		struct flow_spec s;
		uint16_t pub;

		s = spec(6, client_ip, (uint16_t)(30000 + i), wan_ip, 8080, 0x02);
		frame_build(&f, &s);
		assert_int_equal(forward_anywhere(&l, &f, 0, &seed, &by_req).out_port, 0);
		assert_memory_equal(ip(&f) + 12, lan_ip, 4);	/* from the firewall */
		assert_memory_equal(ip(&f) + 16, server_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 22), 80);
		assert_memory_equal(f.b, server_mac, 6);
		assert_true(frame_checksums_ok(f.b, f.len));
		pub = frame_get16(ip(&f) + 20);

		s = spec(6, server_ip, 80, lan_ip, pub, 0x12);
		s.ack = 1001;
		frame_build(&f, &s);
		assert_int_equal(forward_anywhere(&l, &f, 0, &seed, &by_rep).out_port, 0);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 12, wan_ip, 4);	/* as the client asked */
		assert_int_equal(frame_get16(ip(&f) + 20), 8080);
		assert_memory_equal(ip(&f) + 16, client_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 22), 30000 + i);
		assert_memory_equal(f.b, client_mac, 6);
		assert_true(frame_checksums_ok(f.b, f.len));

		s = spec(6, client_ip, (uint16_t)(30000 + i), wan_ip, 8080, 0x18);
		s.seq = 1001;
		s.ack = 1001;
		s.payload = 20;
		frame_build(&f, &s);
		forward_anywhere(&l, &f, 0, &seed, &by_rep);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 12, lan_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 20), pub);
		assert_true(frame_checksums_ok(f.b, f.len));
	}
	lab_close(&l);
}

static void test_hairpin(void **state)
{
	char text[sizeof(policy) + 256];
	(void)state;

	strcpy(text, policy);
	/* the forward from both sides */
	replace(text, "match: {from: {zone: outside}, to: {network: 10.0.1.1,",
		"match: {to: {network: 10.0.1.1,");
	replace(text, "  - name: masq\n",
		"  - name: hairpin\n"
		"    match: {from: {network: 10.100.0.0/16}, to: {network: 10.100.0.10}}\n"
		"    snat: {to: masquerade}\n"
		"  - name: masq\n");
	hairpin_connections(text, 1);
	hairpin_connections(text, 4);
}

/* The lab's policy with its forward (and the rule that lets it in) on
 * protocol proto: public port 8080 to the server's port `to`. */
static void forward_on(char *text, const char *proto, uint16_t pub, uint16_t to)
{
	char into[96];

	strcpy(text, policy);
	snprintf(into, sizeof(into), "service: %s/%u}", proto, pub);
	replace(text, "service: tcp/8080}", into);
	snprintf(into, sizeof(into), "dnat: {to: 10.100.0.10, port: %u}", to);
	replace(text, "dnat: {to: 10.100.0.10, port: 80}", into);
	snprintf(into, sizeof(into), "    proto: %s\n    to: {network: 10.100.0.10, port: %u}", proto,
		 to);
	replace(text, "    proto: tcp\n    to: {network: 10.100.0.10, port: 80}", into);
}

/* The server behind a port forward answers a datagram with port
 * unreachable: the error leaves from the public address and quotes the
 * datagram as the remote sent it (to the public address and the
 * forwarded port), checksums right; one worker, then four. */
static void unreachable_from_server(const char *text, uint32_t nw)
{
	struct lab l;
	uint32_t seed = 7 + nw, by_req, by_rep;

	lab_open_text(&l, text, nw > 1, nw, PIPE_ROUTER);
	for (uint16_t i = 0; i < 16; i++) {
		struct frame f, sent;
		struct flow_spec s = spec(17, remote_ip, (uint16_t)(40000 + i), wan_ip, 8080, 0);
		uint8_t *q = f.b + 14;

		s.payload = 12;
		frame_build(&sent, &s);
		forward_anywhere(&l, &sent, 1, &seed, &by_req);
		assert_memory_equal(ip(&sent) + 16, server_ip, 4);
		assert_int_equal(frame_get16(ip(&sent) + 22), 53);
		sent.b[14 + 8] = 64;	/* as it arrived, for the quote */
		frame_build_time_exceeded(&f, lan_mac, server_mac, server_ip, remote_ip, &sent);
		q[20] = 3;	/* port unreachable */
		q[21] = 3;
		frame_put16(q + 22, 0);
		frame_put16(q + 22, csum_l4(4, q + 12, q + 16, 1, q + 20, 36));
		forward_anywhere(&l, &f, 0, &seed, &by_rep);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(q + 12, wan_ip, 4);		/* from the public address */
		assert_memory_equal(q + 16, remote_ip, 4);
		assert_memory_equal(q + 28 + 12, remote_ip, 4);	/* quoting what was sent */
		assert_memory_equal(q + 28 + 16, wan_ip, 4);
		assert_int_equal(frame_get16(q + 28 + 20), 40000 + i);
		assert_int_equal(frame_get16(q + 28 + 22), 8080);
		assert_true(frame_checksums_ok(f.b, f.len));
	}
	lab_close(&l);
}

static void test_error_from_forwarded_server(void **state)
{
	char text[sizeof(policy) + 256];
	(void)state;

	forward_on(text, "udp", 8080, 53);
	unreachable_from_server(text, 1);
	unreachable_from_server(text, 4);
}

/* SCTP through NAT (Diameter's port, say): an association out through
 * masquerade takes a port of the pool, and one in through a forward has
 * its destination port rewritten; each packet's CRC32c right after
 * (recomputed: it covers the ports), both ways; one worker, then four. */
static void sctp_associations(const char *text, uint32_t nw)
{
	struct lab l;
	uint32_t seed = 3 + nw, by_req, by_rep;

	lab_open_text(&l, text, nw > 1, nw, PIPE_ROUTER);
	for (uint16_t i = 0; i < 16; i++) {
		struct frame f;
		struct flow_spec s = spec(132, client_ip, (uint16_t)(5000 + i), remote_ip, 3868, 0);
		uint16_t pub;

		s.seq = 0x1234;		/* verification tag */
		s.payload = 20;
		frame_build(&f, &s);
		forward_anywhere(&l, &f, 0, &seed, &by_req);
		assert_memory_equal(ip(&f) + 12, wan_ip, 4);
		pub = frame_get16(ip(&f) + 20);
		assert_true(pub >= 20000 && pub <= 29999);
		assert_true(frame_checksums_ok(f.b, f.len));
		s = spec(132, remote_ip, 3868, wan_ip, pub, 0);
		s.payload = 20;
		frame_build(&f, &s);
		forward_anywhere(&l, &f, 1, &seed, &by_rep);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 16, client_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 22), 5000 + i);
		assert_true(frame_checksums_ok(f.b, f.len));

		s = spec(132, remote_ip, (uint16_t)(6000 + i), wan_ip, 13868, 0);
		s.payload = 20;
		frame_build(&f, &s);
		forward_anywhere(&l, &f, 1, &seed, &by_req);
		assert_memory_equal(ip(&f) + 16, server_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 22), 3868);
		assert_true(frame_checksums_ok(f.b, f.len));
		s = spec(132, server_ip, 3868, remote_ip, (uint16_t)(6000 + i), 0);
		s.payload = 20;
		frame_build(&f, &s);
		forward_anywhere(&l, &f, 0, &seed, &by_rep);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 12, wan_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 20), 13868);
		assert_true(frame_checksums_ok(f.b, f.len));
	}
	lab_close(&l);
}

static void test_sctp_through_nat(void **state)
{
	char text[sizeof(policy) + 256];
	(void)state;

	forward_on(text, "sctp", 13868, 3868);
	sctp_associations(text, 1);
	sctp_associations(text, 4);
	{	/* a first fragment to the forward: its CRC is the whole
		 * datagram's, so its port cannot change; dropped, not sent on
		 * untranslated */
		struct lab l;
		struct frame f;
		struct flow_spec s = spec(132, remote_ip, 7000, wan_ip, 13868, 0);
		struct pipe_pkt p;
		uint32_t by;

		lab_open_text(&l, text, 0, 1, PIPE_ROUTER);
		s.payload = 40;
		frame_build(&f, &s);
		frame_set_fragment(&f, 0x77, 0x2000);
		p = deliver(&l, &f, 1, 0, &by);
		assert_int_equal(p.verdict, PIPE_DROP);
		assert_int_equal(p.drop, PIPE_DROP_NAT_FAILED);
		lab_close(&l);
	}
}

/* A UDP datagram in two fragments to a port forward (from outside,
 * public port 8080 to the server's 53): both fragments reach the server
 * from one worker, the first with its port rewritten and its UDP
 * checksum updated for the whole datagram (checked on the datagram put
 * back together), the second with its address; the server's answer, in
 * two fragments too, leaves from the public address and port. One
 * worker, then four. */
/* whole's datagram (IPv4 without options) as fragments with IP id `id`
 * of `piece` L4 bytes each (a multiple of 8; the last has the rest)
 * into parts: how many. */
static uint32_t split_frags(const struct frame *whole, uint16_t id, uint32_t piece,
			    struct frame *parts)
{
	const uint8_t *ip = whole->b + 14;
	uint32_t l4len = frame_get16(ip + 2) - 20, n = 0;

	for (uint32_t at = 0; at < l4len; at += piece, n++) {
		uint32_t len = l4len - at < piece ? l4len - at : piece;
		struct frame *f = &parts[n];

		*f = *whole;
		memmove(f->b + 14 + 20, ip + 20 + at, len);
		frame_put16(f->b + 14 + 2, (uint16_t)(20 + len));
		f->len = 14 + 20 + len;
		frame_set_fragment(f, id, (uint16_t)(at / 8 | (at + len < l4len ? 0x2000 : 0)));
	}
	return n;
}

static void split_in_two(const struct frame *whole, uint16_t id, struct frame *a,
			 struct frame *b)
{
	struct frame parts[2];

	assert_int_equal(split_frags(whole, id, 24, parts), 2);	/* 24: a multiple of 8 */
	*a = parts[0];
	*b = parts[1];
}

/* 1 when the datagram whose n fragments are parts, in order, has a
 * right UDP checksum. */
static int joined_frags_udp_ok(const struct frame *parts, uint32_t n)
{
	uint8_t l4[FRAME_ROOM * 4];
	const uint8_t *first = parts[0].b + 14;
	uint32_t len = 0;

	for (uint32_t k = 0; k < n; k++) {
		const uint8_t *ip = parts[k].b + 14;
		uint32_t l = frame_get16(ip + 2) - 20;

		if (memcmp(ip + 12, first + 12, 8) || len + l > sizeof(l4))
			return 0;
		memcpy(l4 + len, ip + 20, l);
		len += l;
	}
	return csum_l4(4, first + 12, first + 16, 17, l4, len) == frame_get16(l4 + 6);
}

static int joined_udp_ok(const struct frame *a, const struct frame *b)
{
	const struct frame parts[2] = {*a, *b};

	return joined_frags_udp_ok(parts, 2);
}

static void fragments_through(const char *text, uint32_t nw)
{
	struct lab l;
	uint32_t seed = 11 + nw, by_first, by_next;

	lab_open_text(&l, text, nw > 1, nw, PIPE_ROUTER);
	for (uint16_t i = 0; i < 16; i++) {
		struct frame whole, a, b;
		struct flow_spec s = spec(17, remote_ip, (uint16_t)(41000 + i), wan_ip, 8080, 0);
		uint32_t at;

		s.payload = 40;
		frame_build(&whole, &s);
		split_in_two(&whole, (uint16_t)(0x2000 + i), &a, &b);
		seed = seed * 1103515245u + 12345u;
		at = (seed >> 16) % l.nw;	/* one sender: one queue for both */
		assert_int_equal(deliver(&l, &a, 1, at, &by_first).verdict, PIPE_FORWARD);
		assert_int_equal(deliver(&l, &b, 1, at, &by_next).verdict, PIPE_FORWARD);
		assert_int_equal(by_next, by_first);
		assert_memory_equal(ip(&a) + 16, server_ip, 4);
		assert_int_equal(frame_get16(ip(&a) + 22), 53);
		assert_true(joined_udp_ok(&a, &b));

		s = spec(17, server_ip, 53, remote_ip, (uint16_t)(41000 + i), 0);
		s.payload = 40;
		frame_build(&whole, &s);
		split_in_two(&whole, (uint16_t)(0x3000 + i), &a, &b);
		seed = seed * 1103515245u + 12345u;
		at = (seed >> 16) % l.nw;
		assert_int_equal(deliver(&l, &a, 0, at, &by_next).verdict, PIPE_FORWARD);
		assert_int_equal(by_next, by_first);
		assert_int_equal(deliver(&l, &b, 0, at, &by_next).verdict, PIPE_FORWARD);
		assert_int_equal(by_next, by_first);
		assert_memory_equal(ip(&a) + 12, wan_ip, 4);
		assert_int_equal(frame_get16(ip(&a) + 20), 8080);
		assert_true(joined_udp_ok(&a, &b));
	}
	for (uint32_t k = 0; k < l.nw; k++)
		assert_int_equal(pipe_stats(l.w[k])->drop[PIPE_DROP_FRAG_ORPHAN], 0);
	lab_close(&l);
}

static void test_fragments_through_forward(void **state)
{
	char text[sizeof(policy) + 256];
	(void)state;

	forward_on(text, "udp", 8080, 53);
	fragments_through(text, 1);
	fragments_through(text, 4);
}

/* The lab's workers made again with parking of fragments that come
 * before their first, as rampartd runs them. */
static void lab_park_fragments(struct lab *l)
{
	for (uint32_t k = 0; k < l->nw; k++) {
		struct pipe_config c = {.mode = PIPE_ROUTER, .seed = 7,
					.worker_count = (uint16_t)l->nw, .worker_id = (uint16_t)k,
					.handoff = 1, .home_seed = 0x5eed, .max_flows = 4096,
					.park_fragments = 1};

		router_lab_ports(&c);
		pipe_destroy(l->w[k]);
		l->w[k] = pipe_create(&c, &l->view);
		assert_non_null(l->w[k]);
		router_lab_neighbours(l->w[k]);
	}
}

/* lab_open_text with handoff, in router mode, parking fragments. */
static void lab_open_parked(struct lab *l, const char *text, uint32_t nw)
{
	lab_open_text(l, text, 1, nw, PIPE_ROUTER);
	lab_park_fragments(l);
}

/* The fragments a, b of a 40-byte UDP datagram from remote_ip's port
 * sport to the public port forward (wan_ip:8080), IP id `id`. */
static void forwarded_in_two(uint16_t sport, uint16_t id, struct frame *a, struct frame *b)
{
	struct frame whole;
	struct flow_spec s = spec(17, remote_ip, sport, wan_ip, 8080, 0);

	s.payload = 40;
	frame_build(&whole, &s);
	split_in_two(&whole, id, a, b);
}

/* Each datagram's second fragment first, from any queue: parked on its
 * datagram's worker; once the first has been through, that worker runs
 * it again and it goes on to the flow's worker with the first's
 * translation; also when both come in one burst there. */
static void test_fragments_parked_across_workers(void **state)
{
	char text[sizeof(policy) + 256];
	struct lab l;
	uint32_t seed = 5, by_first, by_next, parked_on = 0, resumed = 0, handed_first = 0;
	(void)state;

	forward_on(text, "udp", 8080, 53);
	lab_open_parked(&l, text, 4);
	for (uint16_t i = 0; i < 16; i++) {
		struct frame a, b;
		struct pipe_pkt p[PIPE_BURST];
		uint32_t at, n = 0, on = l.nw;

		forwarded_in_two((uint16_t)(42000 + i), (uint16_t)(0x4400 + i), &a, &b);
		seed = seed * 1103515245u + 12345u;
		at = (seed >> 16) % l.nw;
		assert_int_equal(deliver(&l, &b, 1, at, &by_next).verdict, PIPE_HELD);
		parked_on += pipe_parked_count(l.w[by_next]) == 1;
		assert_int_equal(deliver(&l, &a, 1, at, &by_first).verdict, PIPE_FORWARD);
		assert_memory_equal(ip(&a) + 16, server_ip, 4);
		for (uint32_t k = 0; k < l.nw && !n; k++)
			if ((n = pipe_frag_take(l.w[k], p, PIPE_BURST, 0)))
				on = k;
		assert_int_equal(n, 1);
		assert_int_equal(on, by_next);		/* where it was parked */
		on = follow(&l, p, on);			/* the lent frame */
		assert_int_equal(p[0].verdict, PIPE_FORWARD);
		assert_int_equal(on, by_first);		/* the flow's worker */
		memcpy(b.b, p[0].data, p[0].len);
		b.len = p[0].len;
		assert_true(joined_udp_ok(&a, &b));	/* the first's translation */
		resumed++;
		for (uint32_t k = 0; k < l.nw; k++) {	/* slots back */
			assert_int_equal(pipe_frag_take(l.w[k], p, PIPE_BURST, 0), 0);
			assert_int_equal(pipe_parked_count(l.w[k]), 0);
		}
	}
	assert_int_equal(parked_on, 16);
	assert_int_equal(resumed, 16);
	/* Second and first in one burst on the datagram's worker, the flow
	 * another's: the first only passes through (handed on) before the
	 * second is parked, and must still wake it. */
	for (uint16_t i = 0; i < 16; i++) {
		struct frame a, b;
		uint8_t src16[16] = {0}, dst16[16] = {0};
		struct pipe_pkt p[PIPE_BURST];
		uint32_t d, n, on;
		uint16_t id = (uint16_t)(0x4500 + i);

		forwarded_in_two((uint16_t)(43000 + i), id, &a, &b);
		memcpy(src16, remote_ip, 4);
		memcpy(dst16, wan_ip, 4);
		d = home_worker(home_hash(src16, dst16, id, 0, 17, ~0x5eedull), l.nw);
		p[0] = (struct pipe_pkt){.data = b.b, .len = b.len, .room = sizeof(b.b), .in_port = 1};
		p[1] = (struct pipe_pkt){.data = a.b, .len = a.len, .room = sizeof(a.b), .in_port = 1};
		pipe_process(l.w[d], p, 2, SEC);	/* one burst */
		assert_int_equal(p[0].verdict, PIPE_HELD);
		on = d;
		if (p[1].verdict == PIPE_HANDOFF) {	/* the first, on to its flow's */
			p[1].homed++;
			on = follow(&l, &p[1], p[1].worker);
		}
		assert_int_equal(p[1].verdict, PIPE_FORWARD);
		handed_first += on != d;
		n = pipe_frag_take(l.w[d], p, PIPE_BURST, 0);
		assert_int_equal(n, 1);
		follow(&l, p, d);
		assert_int_equal(p[0].verdict, PIPE_FORWARD);
		memcpy(b.b, p[0].data, p[0].len);
		b.len = p[0].len;
		assert_true(joined_udp_ok(&a, &b));
		for (uint32_t k = 0; k < l.nw; k++)
			(void)pipe_frag_take(l.w[k], p, PIPE_BURST, 0);	/* slots back */
	}
	assert_true(handed_first > 0);	/* some firsts only passed through */
	for (uint32_t k = 0; k < l.nw; k++)
		assert_int_equal(pipe_stats(l.w[k])->drop[PIPE_DROP_FRAG_ORPHAN], 0);
	lab_close(&l);
}

/* A fragment handed to its datagram's worker and parked there is counted
 * handed in once, whether it runs again when its first comes or is
 * dropped when it does not: handed_off - handed_in is the frames lost
 * between workers (operations.md), none here. */
static void test_parked_fragments_handed_in_once(void **state)
{
	char text[sizeof(policy) + 256];
	struct pipe_pkt p[PIPE_BURST];
	struct frame a, b;
	struct lab l;
	uint32_t seed = 9, by, at, parked = 0;
	uint64_t off = 0, in = 0;
	(void)state;

	forward_on(text, "udp", 8080, 53);
	lab_open_parked(&l, text, 4);
	for (uint16_t i = 0; i < 32; i++) {
		forwarded_in_two((uint16_t)(44000 + i), (uint16_t)(0x4600 + i), &a, &b);
		seed = seed * 1103515245u + 12345u;
		at = (seed >> 16) % l.nw;
		assert_int_equal(deliver(&l, &b, 1, at, &by).verdict, PIPE_HELD);
		parked += by != at;
		if (i & 1) {	/* its first comes: the parked one runs again */
			assert_int_equal(deliver(&l, &a, 1, at, &by).verdict, PIPE_FORWARD);
			for (at = 0; at < l.nw; at++)
				if (pipe_frag_take(l.w[at], p, PIPE_BURST, 0) == 1)
					break;
			assert_true(at < l.nw);
			(void)follow(&l, p, at);
			assert_int_equal(p[0].verdict, PIPE_FORWARD);
		}
	}
	for (uint32_t k = 0; k < l.nw; k++) {	/* the rest dropped: no first came */
		(void)pipe_frag_take(l.w[k], p, PIPE_BURST, 5 * SEC);
		assert_int_equal(pipe_parked_count(l.w[k]), 0);
	}
	assert_true(parked > 0);	/* some were handed before they were parked */
	for (uint32_t k = 0; k < l.nw; k++) {
		off += pipe_stats(l.w[k])->handed_off;
		in += pipe_stats(l.w[k])->handed_in;
	}
	assert_int_equal(off, l.handed);
	assert_int_equal(in, l.handed);
	lab_close(&l);
}

/* Two inside hosts masqueraded to one remote server, whose answers to
 * the public address happen to carry the same IP id within the fragment
 * timeout (the id is the sender's, per destination): the second answer's
 * fragments, coming in one burst as a datagram's fragments do, all reach
 * the second host (its non-first fragment was looked up before its first
 * was taken in, and followed the first answer's entry: the first host's
 * translation); a third datagram with that id, refused, is refused
 * whole (its non-first fragment followed the second's entry). One
 * worker, then four. */
static void test_fragments_of_a_reused_id(void **state)
{
	const uint8_t *host[2] = {client_ip, server_ip};
	(void)state;

	for (uint32_t nw = 1; nw <= 4; nw += 3) {
		struct lab l;
		uint16_t pub[2];

		lab_open_text(&l, policy, nw > 1, nw, PIPE_ROUTER);
		for (int h = 0; h < 2; h++) {
			struct flow_spec s = spec(17, host[h], 40000, remote_ip, 53, 0);
			struct frame f;
			uint32_t by;

			frame_build(&f, &s);
			assert_int_equal(deliver(&l, &f, 0, 0, &by).verdict, PIPE_FORWARD);
			pub[h] = frame_get16(ip(&f) + 20);
		}
		for (int h = 0; h < 2; h++) {
			struct flow_spec s = spec(17, remote_ip, 53, wan_ip, pub[h], 0);
			struct frame whole, a, b;
			struct pipe_pkt p[2];
			uint32_t by;

			s.payload = 40;
			frame_build(&whole, &s);
			split_in_two(&whole, 0x5000, &a, &b);
			if (h == 0) {	/* the first answer's, one at a time */
				assert_int_equal(deliver(&l, &a, 1, 0, &by).verdict, PIPE_FORWARD);
				assert_int_equal(deliver(&l, &b, 1, 0, &by).verdict, PIPE_FORWARD);
			} else {	/* the second's in one burst, wherever they go */
				uint32_t at = 0;

				p[0] = (struct pipe_pkt){.data = a.b, .len = a.len, .room = sizeof(a.b),
							 .in_port = 1};
				p[1] = (struct pipe_pkt){.data = b.b, .len = b.len, .room = sizeof(b.b),
							 .in_port = 1};
				pipe_process(l.w[at], p, 2, SEC);
				for (int k = 0; k < 2; k++)
					if (p[k].verdict == PIPE_HANDOFF) {
						p[k].homed++;
						l.handed++;
						(void)follow(&l, &p[k], p[k].worker);
					}
				assert_int_equal(p[0].verdict, PIPE_FORWARD);
				assert_int_equal(p[1].verdict, PIPE_FORWARD);
				a.len = p[0].len;
				b.len = p[1].len;
			}
			assert_memory_equal(ip(&a) + 16, host[h], 4);
			assert_memory_equal(ip(&b) + 16, host[h], 4);
			assert_true(joined_udp_ok(&a, &b));
		}
		{	/* a third with the id, to a port no flow has: refused, and
			 * the rest of it with it (not passed to the second host) */
			struct flow_spec s = spec(17, remote_ip, 53, wan_ip, 33333, 0);
			struct frame whole, a, b;
			uint32_t by;

			s.payload = 40;
			frame_build(&whole, &s);
			split_in_two(&whole, 0x5000, &a, &b);
			assert_int_equal(deliver(&l, &a, 1, 0, &by).verdict, PIPE_DROP);
			assert_int_not_equal(deliver(&l, &b, 1, 0, &by).verdict, PIPE_FORWARD);
		}
		lab_close(&l);
	}
}

/* A bridge (bump in the wire) hands frames over the same way. */
static void test_bridge(void **state)
{
	struct lab l;
	(void)state;

	lab_open_mode(&l, 1, NW, PIPE_BRIDGE);
	handshakes(&l);
	lab_close(&l);
}

/* A ping through masquerade and a time-exceeded about a translated SYN,
 * each delivered to both workers in turn. */
static void test_icmp_finds_its_worker(void **state)
{
	struct lab l;
	struct frame f, syn;
	struct flow_spec s;
	struct pipe_pkt p;
	uint32_t by_req, by_rep;
	uint8_t *q;
	(void)state;

	lab_open(&l, 1);
	for (uint16_t i = 0; i < 8; i++) {
		uint16_t id;

		s = spec(1, client_ip, (uint16_t)(0x4200 + i), remote_ip, 0, 0);
		s.payload = 16;
		frame_build(&f, &s);
		p = deliver(&l, &f, 0, i % NW, &by_req);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		id = frame_get16(ip(&f) + 24);
		s = spec(1, remote_ip, id, wan_ip, 0, 0);
		s.payload = 16;
		frame_build_echo_reply(&f, &s);
		p = deliver(&l, &f, 1, (i / 2) % NW, &by_rep);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 16, client_ip, 4);
		assert_int_equal(frame_get16(ip(&f) + 24), 0x4200 + i);

		s = spec(6, client_ip, (uint16_t)(41000 + i), remote_ip, 22, 0x02);
		frame_build(&syn, &s);
		assert_int_equal(deliver(&l, &syn, 0, i % NW, &by_req).verdict, PIPE_FORWARD);
		frame_build_time_exceeded(&f, wan_mac, gw_mac, (uint8_t[]){10, 200, 9, 9}, wan_ip,
					  &syn);
		q = f.b + 14;
		p = deliver(&l, &f, 1, (i / 2) % NW, &by_rep);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(q + 28 + 12, client_ip, 4);	/* quoted source translated */
		assert_int_equal(frame_get16(q + 28 + 20), 41000 + i);
	}
	assert_int_equal(pipe_stats(l.w[0])->related + pipe_stats(l.w[1])->related, 8);
	assert_true(l.handed > 4);
	lab_close(&l);
}

/* UDP datagrams in two fragments through masquerade, each datagram's
 * fragments on one queue (one sender, one hash): the second fragment,
 * which has no ports, ends on the first's worker with its translation,
 * also when the datagram's worker is not the flow's (two hops). */
static void test_fragments_follow_their_first(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s;
	uint32_t by_first, by_next;
	struct pipe_pkt p;
	(void)state;

	lab_open(&l, 1);
	for (uint16_t i = 0; i < 32; i++) {
		s = spec(17, client_ip, (uint16_t)(7000 + i), remote_ip, 53, 0);
		s.payload = 40;
		frame_build(&f, &s);
		frame_set_fragment(&f, (uint16_t)(0x1000 + i), 0x2000);
		p = deliver(&l, &f, 0, i % NW, &by_first);
		assert_int_equal(p.verdict, PIPE_FORWARD);

		frame_build(&f, &s);
		frame_set_fragment(&f, (uint16_t)(0x1000 + i), 6);
		p = deliver(&l, &f, 0, i % NW, &by_next);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_next, by_first);
		assert_memory_equal(ip(&f) + 12, wan_ip, 4);
		assert_int_equal(csum_ipv4_header(ip(&f)), frame_get16(ip(&f) + 10));
	}
	assert_true(l.hops2 > 0);
	for (int k = 0; k < NW; k++)
		assert_int_equal(pipe_stats(l.w[k])->drop[PIPE_DROP_FRAG_ORPHAN], 0);
	/* a second hop is taken in and handed off again: off = in, as for
	 * any frame that reaches its owner */
	assert_int_equal(pipe_stats(l.w[0])->handed_off + pipe_stats(l.w[1])->handed_off,
			 pipe_stats(l.w[0])->handed_in + pipe_stats(l.w[1])->handed_in);
	lab_close(&l);
}

/* Without handoff (one queue per worker and the NIC's word for it) the
 * same traffic loses the replies that land on the other worker: what the
 * handoff is for. */
static void test_without_handoff_replies_are_lost(void **state)
{
	struct lab l;
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	uint32_t by, answered = 0;
	(void)state;

	lab_open(&l, 0);
	for (uint16_t i = 0; i < 32; i++) {
		s = spec(17, client_ip, (uint16_t)(40000 + i), remote_ip, 53, 0);
		frame_build(&f, &s);
		p = deliver(&l, &f, 0, i % NW, &by);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		s = spec(17, remote_ip, 53, wan_ip, frame_get16(ip(&f) + 20), 0);
		frame_build(&f, &s);
		answered += deliver(&l, &f, 1, (i + 1) % NW, &by).verdict == PIPE_FORWARD;
	}
	assert_int_equal(l.handed, 0);
	assert_int_equal(answered, 0);	/* every reply on the other worker */
	lab_close(&l);
}

/* A NIC with symmetric RSS (the 6d:5a key, Linux's default table of 128
 * entries, i mod nic_queues) in front of as many workers: the queue a frame arrives
 * on, computed from the definition (rss_toeplitz_ref), not rampart's
 * tables. TCP and UDP by their 4-tuple, the rest (fragments too) by the
 * addresses. */
static uint32_t nic_queues = 4;

static uint32_t nic_queue(const struct frame *f)
{
	const uint8_t *q = f->b + 14;
	uint8_t key[40], in[12];
	int ports = (q[9] == 6 || q[9] == 17) && !(frame_get16(q + 6) & 0x3fff);

	rss_key_symmetric(key, sizeof(key));
	memcpy(in, q + 12, 8);
	memcpy(in + 8, q + 20, 4);
	return (rss_toeplitz_ref(key, sizeof(key), in, ports ? 12 : 8) & 127) % nic_queues;
}

/* f on the queue the NIC picks; *handed: whether it was handed over */
static struct pipe_pkt deliver_by_nic(struct lab *l, struct frame *f, uint8_t in_port,
				      uint32_t *by, int *handed)
{
	uint32_t before = l->handed, at = nic_queue(f);
	struct pipe_pkt p = deliver(l, f, in_port, at, by);

	*handed = l->handed != before;
	return p;
}

/* Masqueraded UDP and TCP (handshake, then data: the express path) and
 * port-forwarded TCP, every frame on the queue the NIC's RSS picks. With
 * --home rss no masqueraded frame is handed over (the flow's worker is
 * its queue's, and SNAT picks ports whose replies hash back there), nor
 * a forwarded connection's replies (only its first direction, which DNAT
 * rewrites, is); pings keep the keyed hash and are handed as before.
 * With the keyed hash the same traffic is handed over most of the time. */
static uint32_t rss_traffic(struct lab *l, uint32_t *masq_handed, uint32_t *fwd_reply_handed)
{
	static const uint8_t outside_ip[4] = {10, 200, 5, 5};
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	uint32_t by_req, by_rep, ran[4] = {0}, hits = 0;
	int handed;

	*masq_handed = *fwd_reply_handed = 0;
	for (uint16_t i = 0; i < 64; i++) {
		uint16_t pub;

		s = spec(17, client_ip, (uint16_t)(40000 + i), remote_ip, 53, 0);
		frame_build(&f, &s);
		p = deliver_by_nic(l, &f, 0, &by_req, &handed);
		*masq_handed += handed;
		assert_int_equal(p.verdict, PIPE_FORWARD);
		pub = frame_get16(ip(&f) + 20);
		ran[by_req]++;
		s = spec(17, remote_ip, 53, wan_ip, pub, 0);
		frame_build(&f, &s);
		p = deliver_by_nic(l, &f, 1, &by_rep, &handed);
		*masq_handed += handed;
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		assert_int_equal(frame_get16(ip(&f) + 22), 40000 + i);

		s = spec(6, client_ip, (uint16_t)(42000 + i), remote_ip, 443, 0x02);
		frame_build(&f, &s);
		p = deliver_by_nic(l, &f, 0, &by_req, &handed);
		*masq_handed += handed;
		assert_int_equal(p.verdict, PIPE_FORWARD);
		pub = frame_get16(ip(&f) + 20);
		s = spec(6, remote_ip, 443, wan_ip, pub, 0x12);
		s.ack = 1001;
		frame_build(&f, &s);
		p = deliver_by_nic(l, &f, 1, &by_rep, &handed);
		*masq_handed += handed;
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		for (uint32_t k = 0; k < 3; k++) {
			s = spec(6, client_ip, (uint16_t)(42000 + i), remote_ip, 443, 0x18);
			s.seq = 1001 + 10 * k, s.ack = 1001 + 10 * k, s.payload = 10;
			frame_build(&f, &s);
			p = deliver_by_nic(l, &f, 0, &by_rep, &handed);
			*masq_handed += handed;
			assert_int_equal(p.verdict, PIPE_FORWARD);
			assert_int_equal(by_rep, by_req);
			assert_memory_equal(ip(&f) + 12, wan_ip, 4);
			assert_true(frame_checksums_ok(f.b, f.len));
			s = spec(6, remote_ip, 443, wan_ip, pub, 0x18);
			s.seq = 1001 + 10 * k, s.ack = 1011 + 10 * k, s.payload = 10;
			frame_build(&f, &s);
			p = deliver_by_nic(l, &f, 1, &by_rep, &handed);
			*masq_handed += handed;
			assert_int_equal(p.verdict, PIPE_FORWARD);
			assert_int_equal(by_rep, by_req);
			assert_memory_equal(ip(&f) + 16, client_ip, 4);
			assert_int_equal(frame_get16(ip(&f) + 22), 42000 + i);
			assert_true(frame_checksums_ok(f.b, f.len));
		}

		s = spec(6, outside_ip, (uint16_t)(5000 + i), wan_ip, 8080, 0x02);
		frame_build(&f, &s);
		p = deliver_by_nic(l, &f, 1, &by_req, &handed);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_memory_equal(ip(&f) + 16, server_ip, 4);
		s = spec(6, server_ip, 80, outside_ip, (uint16_t)(5000 + i), 0x12);
		s.ack = 1001;
		frame_build(&f, &s);
		p = deliver_by_nic(l, &f, 0, &by_rep, &handed);
		*fwd_reply_handed += handed;
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		assert_int_equal(frame_get16(ip(&f) + 20), 8080);

		s = spec(1, client_ip, (uint16_t)(0x4200 + i), remote_ip, 0, 0);
		s.payload = 16;
		frame_build(&f, &s);
		p = deliver_by_nic(l, &f, 0, &by_req, &handed);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		s = spec(1, remote_ip, frame_get16(ip(&f) + 24), wan_ip, 0, 0);
		s.payload = 16;
		frame_build_echo_reply(&f, &s);
		p = deliver_by_nic(l, &f, 1, &by_rep, &handed);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		assert_int_equal(frame_get16(ip(&f) + 24), 0x4200 + i);
	}
	for (int k = 0; k < 4; k++) {
		assert_true(ran[k] > 4);	/* the NIC spread the flows */
		hits += (uint32_t)pipe_stats(l->w[k])->flow_cache_hits;
		assert_int_equal(pipe_stats(l->w[k])->drop[PIPE_DROP_CT_INVALID], 0);
	}
	return hits;
}

/* UDP datagrams in two fragments through masquerade, on the queue the
 * NIC gives fragments (by addresses): each fragment ends on the first's
 * worker, translated. Returns the fragments that took two hops. */
static uint32_t rss_fragments(struct lab *l)
{
	uint32_t by_first, by_next, hops2 = l->hops2;
	struct flow_spec s;
	struct pipe_pkt p;
	struct frame f;
	int handed;

	for (uint16_t i = 0; i < 32; i++) {
		s = spec(17, client_ip, (uint16_t)(7000 + i), remote_ip, 53, 0);
		s.payload = 40;
		frame_build(&f, &s);
		frame_set_fragment(&f, (uint16_t)(0x1000 + i), 0x2000);
		p = deliver_by_nic(l, &f, 0, &by_first, &handed);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		frame_build(&f, &s);
		frame_set_fragment(&f, (uint16_t)(0x1000 + i), 6);
		p = deliver_by_nic(l, &f, 0, &by_next, &handed);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_next, by_first);
		assert_memory_equal(ip(&f) + 12, wan_ip, 4);
	}
	return l->hops2 - hops2;
}

/* Sixteen workers homed by the NIC's RSS: the symmetric key's hash is
 * linear in the ports, and a worker's share of the pool (every 16th
 * port) must still hold ports whose replies the NIC sends to its queue:
 * 400 masqueraded flows, none unsteered, none handed over. */
static void test_rss_home_sixteen_workers(void **state)
{
	static struct rss_home rss;
	uint32_t by_req, by_rep;
	uint64_t remote = 0;
	struct flow_spec s;
	struct pipe_pkt p;
	uint8_t key[40];
	char err[200];
	struct frame f;
	struct lab l;
	int handed;
	(void)state;

	rss_key_symmetric(key, sizeof(key));
	assert_int_equal(rss_home_init(&rss, key, sizeof(key), NULL, 128, NW_MAX, err,
				       sizeof(err)), 0);
	lab_rss = &rss;
	lab_open_n(&l, 1, NW_MAX);
	lab_rss = NULL;
	nic_queues = NW_MAX;
	for (uint16_t i = 0; i < 400; i++) {
		s = spec(17, client_ip, (uint16_t)(30000 + i), remote_ip, 53, 0);
		frame_build(&f, &s);
		p = deliver_by_nic(&l, &f, 0, &by_req, &handed);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_false(handed);
		s = spec(17, remote_ip, 53, wan_ip, frame_get16(ip(&f) + 20), 0);
		frame_build(&f, &s);
		p = deliver_by_nic(&l, &f, 1, &by_rep, &handed);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_false(handed);
		assert_int_equal(by_rep, by_req);
	}
	nic_queues = 4;
	for (uint32_t k = 0; k < NW_MAX; k++)
		for (uint32_t i = 0; i < pipe_nat_pool_count(l.w[k]); i++)
			remote += pipe_nat_pool(l.w[k], i)->stats.remote;
	assert_int_equal(remote, 0);
	assert_int_equal(l.handed, 0);
	lab_close(&l);
}

static void test_rss_home_flows_arrive_home(void **state)
{
	static struct rss_home rss;
	uint32_t masq, fwd_reply, handed, hits;
	uint8_t key[40];
	char err[200];
	struct lab l;
	(void)state;

	rss_key_symmetric(key, sizeof(key));
	assert_int_equal(rss_home_init(&rss, key, sizeof(key), NULL, 128, 4, err, sizeof(err)), 0);
	lab_rss = &rss;
	lab_open_n(&l, 1, 4);
	lab_rss = NULL;
	hits = rss_traffic(&l, &masq, &fwd_reply);
	assert_int_equal(masq, 0);
	assert_int_equal(fwd_reply, 0);
	assert_true(hits > 64 * 3);	/* the express path homed by the NIC's hash too */
	handed = l.handed;
	/* only forwards' first frames and pings: at most 3 a round */
	assert_true(handed > 0 && handed <= 3 * 64);
	/* fragments start where the NIC puts them: one hop at most */
	assert_int_equal(rss_fragments(&l), 0);
	lab_close(&l);

	lab_open_n(&l, 1, 4);	/* the keyed hash: 3 in 4 handed over */
	rss_traffic(&l, &masq, &fwd_reply);
	assert_true(masq > 64 * 10 / 2);
	assert_true(fwd_reply > 8);
	assert_true(l.handed > handed + 64 * 10 / 2);
	assert_true(rss_fragments(&l) > 0);	/* to the datagram's worker first */
	lab_close(&l);
}

/* An ICMP error from outside (a router on the way to the client) about
 * a forwarded connection's answer, quoting wan:8080 -> client: homed
 * through the DNAT rule by its quoted ports, it reaches the flow's
 * worker and the server (it went by the untranslated tuple, lost 3 in 4). */
static uint32_t dnat_errors_lost(uint32_t nw)
{
	static const uint8_t outside_ip[4] = {10, 200, 5, 5}, hop_ip[4] = {10, 200, 9, 9};
	struct lab l;
	struct frame f, sent;
	struct flow_spec s;
	struct pipe_pkt p;
	uint32_t seed = 31337, lost = 0, by;

	lab_open_n(&l, nw > 1, nw);
	for (uint16_t i = 0; i < 32; i++) {
		uint32_t owner = dnat_open(&l, &seed, i, server_ip);

		s = spec(6, wan_ip, 8080, outside_ip, (uint16_t)(6000 + i), 0x10);
		frame_build(&sent, &s);
		frame_build_time_exceeded(&f, wan_mac, gw_mac, hop_ip, wan_ip, &sent);
		p = deliver(&l, &f, 1, i % nw, &by);
		if (p.verdict != PIPE_FORWARD || by != owner || memcmp(ip(&f) + 16, server_ip, 4))
			lost++;
	}
	lab_close(&l);
	return lost;
}

static void test_error_from_outside_about_forward(void **state)
{
	(void)state;
	assert_int_equal(dnat_errors_lost(1), 0);
	assert_int_equal(dnat_errors_lost(4), 0);
}

/* test_answers_on_forwarded_ports' policy with a UDP forward of the
 * ports masquerade hands out too, and an accepting rule for it. */
static void forward_of_masquerade_ports(char *text, const char *proto_ports)
{
	char rule[256];

	strcpy(text, policy);
	snprintf(rule, sizeof(rule),
		 "  - name: udp-forward\n"
		 "    match: {from: {zone: outside}, to: {network: 10.0.1.1, service: %s}}\n"
		 "    dnat: {to: 10.100.0.10}\n"
		 "  - name: masq\n", proto_ports);
	replace(text, "  - name: masq\n", rule);
	replace(text, "defaults: {action: drop}",
		"  - {name: fwd-udp-in, proto: udp, to: {network: 10.100.0.8/29}, action: accept}\n"
		"defaults: {action: drop}");
}

/* Masqueraded answers on ports a forward also takes, before and after a
 * reload that replaces `from` with `to` in the policy (a DNAT rule
 * changed, so the rules before are kept): they reach their flow, never
 * the forward's server (after the reload the kept rules were tried and
 * the answer's own tuple's worker never was: 27 of 32 went to the server). */
static void answers_across_dnat_change(const char *from, const char *to)
{
	char text[sizeof(policy) + 512], text_b[sizeof(policy) + 512];
	struct lab l;
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	struct kept kp = {0};
	void *buf_b;
	size_t len_b;
	struct rfw_view vb;
	uint32_t seed = 777, by_req, by_rep;

	forward_of_masquerade_ports(text, "udp/20000-29999");
	strcpy(text_b, text);
	replace(text_b, from, to);
	lab_open_text(&l, text, 1, 4, PIPE_ROUTER);
	router_lab_compile(text_b, &buf_b, &len_b, &vb);
	for (uint32_t k = 0; k < l.nw; k++)
		assert_int_equal(pipe_neigh_set(l.w[k], 0, 4, (uint8_t[]){10, 100, 0, 11}, server_mac), 0);
	kp.running = &l.view;
	for (uint16_t i = 0; i < 64; i++) {
		uint16_t pub;

		if (i == 32) {
			reload_to(&l, &kp, &vb);
			assert_int_equal(kp.n, 1);
		}
		seed = seed * 1103515245u + 12345u;
		s = spec(17, client_ip, (uint16_t)(41000 + i), remote_ip, 53, 0);
		frame_build(&f, &s);
		p = deliver(&l, &f, 0, (seed >> 16) % l.nw, &by_req);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		pub = frame_get16(ip(&f) + 20);
		seed = seed * 1103515245u + 12345u;
		s = spec(17, remote_ip, 53, wan_ip, pub, 0);
		frame_build(&f, &s);
		p = deliver(&l, &f, 1, (seed >> 16) % l.nw, &by_rep);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 16, client_ip, 4);
	}
	lab_close(&l);
	free(buf_b);
}

static void test_answers_after_other_forward_moved(void **state)
{
	(void)state;
	answers_across_dnat_change("dnat: {to: 10.100.0.10, port: 80}",
				   "dnat: {to: 10.100.0.11, port: 80}");
}

static void test_answers_after_their_forward_moved(void **state)
{
	(void)state;
	answers_across_dnat_change("dnat: {to: 10.100.0.10}\n", "dnat: {to: 10.100.0.11}\n");
}

/* An ICMP error from outside about a masqueraded flow whose public port
 * a forward also takes: the forward homes it by its quote, and from
 * there it goes to its own tuple's worker, where the flow is. */
static void test_error_about_masquerade_on_forwarded_port(void **state)
{
	static const uint8_t hop_ip[4] = {10, 200, 9, 9};
	char text[sizeof(policy) + 512];
	struct lab l;
	struct frame f, sent;
	struct flow_spec s;
	struct pipe_pkt p;
	uint32_t seed = 99, by_req, by_rep;
	(void)state;

	forward_of_masquerade_ports(text, "udp/20000-29999");
	lab_open_text(&l, text, 1, 4, PIPE_ROUTER);
	for (uint16_t i = 0; i < 32; i++) {
		s = spec(17, client_ip, (uint16_t)(41000 + i), remote_ip, 53, 0);
		frame_build(&sent, &s);
		forward_anywhere(&l, &sent, 0, &seed, &by_req);
		frame_build_time_exceeded(&f, wan_mac, gw_mac, hop_ip, wan_ip, &sent);
		seed = seed * 1103515245u + 12345u;
		p = deliver(&l, &f, 1, (seed >> 16) % l.nw, &by_rep);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req);
		assert_memory_equal(ip(&f) + 16, client_ip, 4);
	}
	lab_close(&l);
}

/* Masqueraded TCP connections on ports a forward also takes,
 * established before a reload that adds another forward: their inbound
 * segments after it still reach them (26 of 32 were dropped as invalid
 * on the forward's worker). */
static void test_established_across_dnat_change(void **state)
{
	char text[sizeof(policy) + 512], text_b[sizeof(policy) + 512];
	struct lab l;
	struct frame f;
	struct flow_spec s;
	struct pipe_pkt p;
	struct kept kp = {0};
	void *buf_b;
	size_t len_b;
	struct rfw_view vb;
	uint32_t seed = 555, by_req[32], by_rep;
	uint16_t pub[32];
	(void)state;

	strcpy(text, policy);
	replace(text, "service: tcp/8080", "service: tcp/20000-29999");
	strcpy(text_b, text);
	replace(text_b, "  - name: masq\n",
		"  - name: other-forward\n"
		"    match: {from: {zone: outside}, to: {network: 10.0.1.1, service: tcp/2222}}\n"
		"    dnat: {to: 10.100.0.10, port: 22}\n"
		"  - name: masq\n");
	lab_open_text(&l, text, 1, 4, PIPE_ROUTER);
	router_lab_compile(text_b, &buf_b, &len_b, &vb);
	kp.running = &l.view;
	for (uint16_t i = 0; i < 32; i++) {
		s = spec(6, client_ip, (uint16_t)(41000 + i), remote_ip, 443, 0x02);
		frame_build(&f, &s);
		forward_anywhere(&l, &f, 0, &seed, &by_req[i]);
		pub[i] = frame_get16(ip(&f) + 20);
		s = spec(6, remote_ip, 443, wan_ip, pub[i], 0x12);
		s.ack = 1001;
		frame_build(&f, &s);
		forward_anywhere(&l, &f, 1, &seed, &by_rep);
		assert_int_equal(by_rep, by_req[i]);
		s = spec(6, client_ip, (uint16_t)(41000 + i), remote_ip, 443, 0x10);
		s.seq = 1001, s.ack = 1001;
		frame_build(&f, &s);
		forward_anywhere(&l, &f, 0, &seed, &by_rep);
	}
	reload_to(&l, &kp, &vb);
	assert_int_equal(kp.n, 1);
	for (uint16_t i = 0; i < 32; i++) {
		s = spec(6, remote_ip, 443, wan_ip, pub[i], 0x18);
		s.seq = 1001, s.ack = 1001, s.payload = 10;
		frame_build(&f, &s);
		seed = seed * 1103515245u + 12345u;
		p = deliver(&l, &f, 1, (seed >> 16) % l.nw, &by_rep);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(by_rep, by_req[i]);
		assert_memory_equal(ip(&f) + 16, client_ip, 4);
	}
	lab_close(&l);
	free(buf_b);
}

/* A frame that reached its verdict on the way through run_bursts: as
 * it left, and the worker that ran it there. */
struct outcome {
	struct frame f;
	uint32_t by;
	uint8_t verdict;
};

/* The n frames in f as one burst on worker `at`'s queue, each worker
 * taking what others handed it as a burst (in the order they were
 * handed, as its rings give them), and the fragments parked on the way
 * taken again (pipe_frag_take) until nothing is left in flight. Each
 * frame that reaches a verdict other than parked into out[]: how many. */
static uint32_t run_bursts(struct lab *l, const struct frame *f, uint32_t n, uint8_t in_port,
			   uint32_t at, struct outcome *out)
{
	/* the frames as the rings hold them, this round's and the next's */
	static struct frame room[2][NW_MAX][PIPE_BURST];
	static struct pipe_pkt q[2][NW_MAX][PIPE_BURST];
	uint32_t nq[2][NW_MAX] = {{0}}, nout = 0, cur = 0, waiting = n;

	assert_true(n <= PIPE_BURST);
	for (uint32_t k = 0; k < n; k++) {
		room[0][at][k] = f[k];
		q[0][at][k] = (struct pipe_pkt){.data = room[0][at][k].b, .len = f[k].len,
						.room = sizeof(room[0][at][k].b), .in_port = in_port};
	}
	nq[0][at] = n;
	while (waiting) {
		uint32_t next = cur ^ 1;

		waiting = 0;
		for (uint32_t w = 0; w < l->nw; w++) {
			struct pipe_pkt *p = q[cur][w];

			pipe_process(l->w[w], p, nq[cur][w], SEC);
			for (uint32_t k = 0; k < nq[cur][w]; k++) {
				int fragment = (frame_get16(p[k].data + 14 + 6) & 0x3fff) != 0;
				uint32_t to = p[k].worker, j;

				if (p[k].verdict == PIPE_HELD)
					continue;
				if (p[k].verdict != PIPE_HANDOFF) {
					assert_true(nout < 2 * PIPE_BURST);
					memcpy(out[nout].f.b, p[k].data, p[k].len);
					out[nout].f.len = p[k].len;
					out[nout].by = w;
					out[nout++].verdict = p[k].verdict;
					continue;
				}
				assert_true(to < l->nw && to != w);	/* follow's bounds */
				assert_true(p[k].homed < (fragment ? 4 + kept_sets
							  : p[k].second ? 2 + kept_sets : 1));
				l->handed++;
				j = nq[next][to]++;
				assert_true(j < PIPE_BURST);
				q[next][to][j] = p[k];
				q[next][to][j].homed++;
			}
			nq[cur][w] = 0;
		}
		/* copied into the rings (p[].data may be another worker's room
		 * or a parking slot, lent until its next take) */
		for (uint32_t w = 0; w < l->nw; w++)
			for (uint32_t k = 0; k < nq[next][w]; k++) {
				struct pipe_pkt *p = &q[next][w][k];

				memcpy(room[next][w][k].b, p->data, p->len);
				p->data = room[next][w][k].b;
				p->room = sizeof(room[next][w][k].b);
				waiting++;
			}
		for (uint32_t w = 0; w < l->nw && !waiting; w++)	/* then the parked ones */
			waiting += nq[next][w] = pipe_frag_take(l->w[w], q[next][w], PIPE_BURST, 0);
		cur = next;
	}
	return nout;
}

/* out's n fragments in their datagram's order (by their offsets, pieces
 * of `piece` bytes), each FORWARD from worker `by`: 1 when so. */
static int fragments_forwarded(struct outcome *out, uint32_t n, uint32_t piece, uint32_t by,
			       struct frame *parts)
{
	for (uint32_t k = 0; k < n; k++) {
		uint32_t at = (frame_get16(ip(&out[k].f) + 6) & 0x1fff) * 8u / piece;

		if (out[k].verdict != PIPE_FORWARD || out[k].by != by || at >= n)
			return 0;
		parts[at] = out[k].f;
	}
	return 1;
}

/* whole in fragments of 24 bytes with IP id `id`, in one burst on a
 * random queue (the next of *seed): all forwarded by one worker, *by
 * (any when UINT32_MAX, then the one). Into got in their order: how
 * many. */
static uint32_t burst_of_fragments(struct lab *l, const struct frame *whole, uint16_t id,
				   uint8_t in_port, uint32_t *seed, uint32_t *by, struct frame *got)
{
	static struct outcome out[2 * PIPE_BURST];
	struct frame parts[4];
	uint32_t n;

	assert_true(frame_get16(whole->b + 14 + 2) - 20u <= 4 * 24);
	n = split_frags(whole, id, 24, parts);
	*seed = *seed * 1103515245u + 12345u;
	assert_int_equal(run_bursts(l, parts, n, in_port, (*seed >> 16) % l->nw, out), n);
	if (*by == UINT32_MAX)
		*by = out[0].by;
	assert_true(fragments_forwarded(out, n, 24, *by, got));
	return n;
}

/* Masqueraded UDP flows whose public ports a forward also takes (to the
 * server, forward_of_masquerade_ports), answered by datagrams in two to
 * four fragments: every fragment reaches the client, translated by the
 * flow's worker, none the server, whichever queues they come on and in
 * whatever order (one by one on random queues; in one burst, first
 * first or last first; the last alone first, parked). The forward
 * homed the first fragment on its own worker, which found no flow there
 * and started one to the server, the others following (13, 21 and 29 of
 * 32 datagrams with two, four and sixteen workers); from there it goes
 * to its own tuple's worker, as a whole datagram would, and the others
 * follow it. New datagrams to the forward, fragmented too, still reach
 * the server from one worker, and its answers go out from the public
 * address. */
static void fragmented_answers_on_forwarded_ports(uint32_t nw)
{
	static const uint8_t peer_ip[4] = {10, 200, 3, 3};
	char text[sizeof(policy) + 512];
	static struct outcome out[2 * PIPE_BURST];
	struct frame whole, parts[4], got[4];
	struct flow_spec s;
	struct lab l;
	uint32_t seed = 4242 + nw, by_req, by_fwd;
	uint64_t chances = 0, parked = 0, resumed = 0;

	forward_of_masquerade_ports(text, "udp/20000-29999");
	lab_open_parked(&l, text, nw);
	for (uint16_t i = 0; i < 32; i++) {
		const uint32_t piece = 24, order = i % 4;
		uint32_t n, got_n = 0;
		uint16_t pub, id = (uint16_t)(0x5000 + i);

		s = spec(17, client_ip, (uint16_t)(41000 + i), remote_ip, 53, 0);
		frame_build(&whole, &s);
		forward_anywhere(&l, &whole, 0, &seed, &by_req);
		pub = frame_get16(ip(&whole) + 20);

		s = spec(17, remote_ip, 53, wan_ip, pub, 0);
		s.payload = (uint16_t)(40 + 24 * (i % 3));
		frame_build(&whole, &s);
		n = split_frags(&whole, id, piece, parts);
		seed = seed * 1103515245u + 12345u;
		if (order == 0) {		/* one by one, each on any queue */
			for (uint32_t k = 0; k < n; k++) {
				seed = seed * 1103515245u + 12345u;
				got_n += run_bursts(&l, &parts[k], 1, 1, (seed >> 16) % l.nw,
						    out + got_n);
			}
		} else if (order == 1) {	/* in one burst */
			got_n = run_bursts(&l, parts, n, 1, (seed >> 16) % l.nw, out);
		} else {			/* the last first */
			struct frame last_first[4];

			last_first[0] = parts[n - 1];
			memcpy(&last_first[1], parts, (n - 1) * sizeof(parts[0]));
			if (order == 2) {
				got_n = run_bursts(&l, last_first, n, 1, (seed >> 16) % l.nw, out);
			} else {	/* alone: parked, until its first comes */
				assert_int_equal(run_bursts(&l, last_first, 1, 1, (seed >> 16) % l.nw,
							    out), 0);
				got_n = run_bursts(&l, last_first + 1, n - 1, 1, (seed >> 16) % l.nw,
						   out);
			}
		}
		assert_int_equal(got_n, n);
		assert_true(fragments_forwarded(out, n, piece, by_req, got));
		for (uint32_t k = 0; k < n; k++)
			assert_memory_equal(ip(&got[k]) + 16, client_ip, 4);
		assert_int_equal(frame_get16(ip(&got[0]) + 22), 41000 + i);
		assert_true(joined_frags_udp_ok(got, n));

		/* a new datagram to the forward, on a port masquerade has
		 * not given out to this peer */
		s = spec(17, peer_ip, (uint16_t)(7000 + i), wan_ip, (uint16_t)(25000 + i), 0);
		s.payload = (uint16_t)(40 + 24 * (i % 3));
		frame_build(&whole, &s);
		by_fwd = UINT32_MAX;
		n = burst_of_fragments(&l, &whole, (uint16_t)(id + 0x100), 1, &seed, &by_fwd, got);
		for (uint32_t k = 0; k < n; k++)
			assert_memory_equal(ip(&got[k]) + 16, server_ip, 4);
		assert_int_equal(frame_get16(ip(&got[0]) + 22), 25000 + i);
		assert_true(joined_frags_udp_ok(got, n));
		/* and the server's answer, fragmented too */
		s = spec(17, server_ip, (uint16_t)(25000 + i), peer_ip, (uint16_t)(7000 + i), 0);
		s.payload = 40;
		frame_build(&whole, &s);
		n = burst_of_fragments(&l, &whole, (uint16_t)(id + 0x200), 0, &seed, &by_fwd, got);
		assert_memory_equal(ip(&got[0]) + 12, wan_ip, 4);
		assert_int_equal(frame_get16(ip(&got[0]) + 20), 25000 + i);
		assert_true(joined_frags_udp_ok(got, n));
	}
	for (uint32_t k = 0; k < l.nw; k++) {
		const struct pipe_stats *st = pipe_stats(l.w[k]);

		assert_int_equal(st->drop[PIPE_DROP_FRAG_ORPHAN], 0);
		assert_int_equal(pipe_parked_count(l.w[k]), 0);
		chances += st->second_chance;
		parked += st->frag_parked;
		resumed += st->frag_resumed;
	}
	assert_true(chances > 0);
	assert_true(parked >= 8);	/* each last that came alone first */
	assert_int_equal(resumed, parked);
	lab_close(&l);
}

/* How many handoffs a fragmented datagram's first takes at most: to its
 * datagram's worker, to the forward's, to each kept set's, to its own
 * tuple's and back (a new connection to a forward on ports masquerade
 * gives out too, after two changes of the forward: 4 + 2, one more than
 * a whole packet), which follow and fuzz_handoff must allow (they
 * allowed 3 + 2); its other fragment ends on the same worker. */
static void test_fragment_hops_bound(void **state)
{
	char text[3][sizeof(policy) + 512];
	struct lab l;
	struct kept kp = {0};
	void *buf[2];
	size_t len[2];
	struct rfw_view v[2];
	uint32_t most = 0, seed = 3;
	(void)state;

	for (int k = 0; k < 3; k++) {
		char to[48];

		forward_of_masquerade_ports(text[k], "udp/20000-29999");
		snprintf(to, sizeof(to), "dnat: {to: 10.100.0.%d}", 10 + k);
		replace(text[k], "dnat: {to: 10.100.0.10}", to);
	}
	lab_open_parked(&l, text[0], 16);
	for (int k = 0; k < 2; k++)
		router_lab_compile(text[k + 1], &buf[k], &len[k], &v[k]);
	kp.running = &l.view;
	reload_to(&l, &kp, &v[0]);
	reload_to(&l, &kp, &v[1]);
	assert_int_equal(kp.n, 2);
	for (uint16_t i = 0; i < 256; i++) {
		struct flow_spec s = spec(17, remote_ip, (uint16_t)(30000 + i), wan_ip, 25000, 0);
		struct frame whole, a, b;
		struct pipe_pkt p[2];
		uint32_t at[2];

		s.payload = 40;
		frame_build(&whole, &s);
		split_in_two(&whole, (uint16_t)(0x6000 + i), &a, &b);
		seed = seed * 1103515245u + 12345u;
		at[0] = at[1] = (seed >> 16) % l.nw;
		p[0] = (struct pipe_pkt){.data = a.b, .len = a.len, .room = sizeof(a.b), .in_port = 1};
		p[1] = (struct pipe_pkt){.data = b.b, .len = b.len, .room = sizeof(b.b), .in_port = 1};
		for (int k = 0; k < 2; k++)	/* the first, then the other */
			at[k] = follow(&l, &p[k], at[k]);
		assert_int_equal(at[1], at[0]);	/* (in as many hops or fewer) */
		assert_int_equal(p[1].verdict, p[0].verdict);
		most = p[0].homed > most ? p[0].homed : most;
	}
	assert_int_equal(most, 4 + kp.n);	/* one more than a whole packet's */
	lab_close(&l);
	for (int k = 0; k < 2; k++)
		free(buf[k]);
}

static void test_fragmented_answers_on_forwarded_ports(void **state)
{
	(void)state;
	fragmented_answers_on_forwarded_ports(2);
	fragmented_answers_on_forwarded_ports(4);
	fragmented_answers_on_forwarded_ports(16);
}

/* Pings through masquerade under a forward of every protocol
 * (forward_of_everything), answered by echo replies in two to four
 * fragments, each datagram's in one burst on a random queue: every
 * fragment reaches the client from the ping's worker (the forward homed
 * the first by its translation, where it found no flow and was dropped
 * as invalid: 15 and 25 of 32 datagrams lost with two and four
 * workers). Pings in
 * fragments to the forward itself still reach the server. */
static void fragmented_portless_answers(uint32_t nw)
{
	char text[sizeof(policy) + 512];
	struct frame f, got[4];
	struct flow_spec s;
	struct lab l;
	uint32_t seed = 816 + nw, by_req, by_fwd, n;

	forward_of_everything(text);
	lab_open_parked(&l, text, nw);
	for (uint16_t i = 0; i < 32; i++) {
		uint16_t id;

		s = spec(1, client_ip, (uint16_t)(0x4200 + i), remote_ip, 0, 0);
		frame_build(&f, &s);
		forward_anywhere(&l, &f, 0, &seed, &by_req);
		id = frame_get16(ip(&f) + 24);
		s = spec(1, remote_ip, id, wan_ip, 0, 0);
		s.payload = (uint16_t)(40 + 24 * (i % 3));
		frame_build_echo_reply(&f, &s);
		n = burst_of_fragments(&l, &f, (uint16_t)(0x6000 + i), 1, &seed, &by_req, got);
		for (uint32_t k = 0; k < n; k++)
			assert_memory_equal(ip(&got[k]) + 16, client_ip, 4);
		assert_int_equal(frame_get16(ip(&got[0]) + 24), 0x4200 + i);

		s = spec(1, remote_ip, (uint16_t)(0x7100 + i), wan_ip, 0, 0);	/* to the forward */
		s.payload = 40;
		frame_build(&f, &s);
		by_fwd = UINT32_MAX;
		n = burst_of_fragments(&l, &f, (uint16_t)(0x6100 + i), 1, &seed, &by_fwd, got);
		for (uint32_t k = 0; k < n; k++)
			assert_memory_equal(ip(&got[k]) + 16, server_ip, 4);
	}
	for (uint32_t k = 0; k < l.nw; k++)
		assert_int_equal(pipe_stats(l.w[k])->drop[PIPE_DROP_FRAG_ORPHAN], 0);
	lab_close(&l);
}

static void test_fragmented_portless_answers_under_forward(void **state)
{
	(void)state;
	fragmented_portless_answers(2);
	fragmented_portless_answers(4);
}

/* Flows through a UDP forward, then a reload that moves the forward to
 * another server: the flows' datagrams in fragments after it still
 * reach the old server from the flow's worker (the first fragment gets
 * the kept rules' second chance, the others follow it; 22 of 32 went
 * to the new server before). */
static void test_fragments_across_dnat_change(void **state)
{
	static const uint8_t peer_ip[4] = {10, 200, 5, 5};
	char text[sizeof(policy) + 256], text_b[sizeof(policy) + 256];
	struct lab l;
	struct kept kp = {0};
	void *buf_b;
	size_t len_b;
	struct rfw_view vb;
	struct frame f, got[4];
	struct flow_spec s;
	uint32_t seed = 99, owner[32], n;
	(void)state;

	forward_on(text, "udp", 8080, 53);
	strcpy(text_b, text);
	replace(text_b, "dnat: {to: 10.100.0.10, port: 53}", "dnat: {to: 10.100.0.11, port: 53}");
	replace(text_b, "to: {network: 10.100.0.10, port: 53}", "to: {network: 10.100.0.8/29, port: 53}");
	lab_open_parked(&l, text, 4);
	router_lab_compile(text_b, &buf_b, &len_b, &vb);
	for (uint32_t k = 0; k < l.nw; k++)
		assert_int_equal(pipe_neigh_set(l.w[k], 0, 4, (uint8_t[]){10, 100, 0, 11}, server_mac), 0);
	kp.running = &l.view;
	for (uint16_t i = 0; i < 32; i++) {
		s = spec(17, peer_ip, (uint16_t)(6000 + i), wan_ip, 8080, 0);
		frame_build(&f, &s);
		forward_anywhere(&l, &f, 1, &seed, &owner[i]);
	}
	reload_to(&l, &kp, &vb);
	assert_int_equal(kp.n, 1);
	for (uint16_t i = 0; i < 32; i++) {
		s = spec(17, peer_ip, (uint16_t)(6000 + i), wan_ip, 8080, 0);
		s.payload = (uint16_t)(40 + 24 * (i % 3));
		frame_build(&f, &s);
		n = burst_of_fragments(&l, &f, (uint16_t)(0x700 + i), 1, &seed, &owner[i], got);
		for (uint32_t k = 0; k < n; k++)
			assert_memory_equal(ip(&got[k]) + 16, server_ip, 4);
		assert_true(joined_frags_udp_ok(got, n));
	}
	lab_close(&l);
	free(buf_b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_masquerade_replies_find_their_worker),
		cmocka_unit_test(test_dnat_and_plain_replies_find_their_worker),
		cmocka_unit_test(test_dnat_change_keeps_flows),
		cmocka_unit_test(test_two_dnat_changes_keep_flows),
		cmocka_unit_test(test_answers_on_forwarded_ports),
		cmocka_unit_test(test_answers_on_network_forward),
		cmocka_unit_test(test_portless_answers_under_forward),
		cmocka_unit_test(test_hairpin),
		cmocka_unit_test(test_error_from_forwarded_server),
		cmocka_unit_test(test_sctp_through_nat),
		cmocka_unit_test(test_fragments_through_forward),
		cmocka_unit_test(test_fragments_parked_across_workers),
		cmocka_unit_test(test_parked_fragments_handed_in_once),
		cmocka_unit_test(test_fragments_of_a_reused_id),
		cmocka_unit_test(test_icmp_finds_its_worker),
		cmocka_unit_test(test_fragments_follow_their_first),
		cmocka_unit_test(test_sixteen_workers),
		cmocka_unit_test(test_home_hash4_is_home_hash),
		cmocka_unit_test(test_cached_flows_find_their_worker),
		cmocka_unit_test(test_bridge),
		cmocka_unit_test(test_without_handoff_replies_are_lost),
		cmocka_unit_test(test_rss_home_flows_arrive_home),
		cmocka_unit_test(test_rss_home_sixteen_workers),
		cmocka_unit_test(test_error_from_outside_about_forward),
		cmocka_unit_test(test_answers_after_other_forward_moved),
		cmocka_unit_test(test_answers_after_their_forward_moved),
		cmocka_unit_test(test_error_about_masquerade_on_forwarded_port),
		cmocka_unit_test(test_established_across_dnat_change),
		cmocka_unit_test(test_fragment_hops_bound),
		cmocka_unit_test(test_fragmented_answers_on_forwarded_ports),
		cmocka_unit_test(test_fragmented_portless_answers_under_forward),
		cmocka_unit_test(test_fragments_across_dnat_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
