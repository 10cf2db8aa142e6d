/* The flow cache changes nothing but speed: two workers on the same
 * policy, one with the cache and one without, get the same random
 * traffic (TCP connections with handshakes, data both ways, out-of-window
 * segments, resets and reused ports, UDP through masquerade and not,
 * IPv6, TTL 1, ICMP echo) in bursts of random size, with a reload, next
 * hop MAC changes and expiry in between; every frame that comes out,
 * every verdict and every counter must be the same, and the cache must
 * have finished a good share of the packets. */
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
#include "flowcache.h"
#include "frames.h"
#include "pipeline.h"
#include "router_lab.h"
#include "rulec.h"

#define SEC 1000000000ull
#define CONVS 48
#define BURSTS 1500

/* The reload's policy puts a rule in front (every rule number moves)
 * that ends the DMZ's UDP flows on their next packet (re-check). */
#define POLICY(first_rule)                                                              \
	"version: 1\n"                                                                  \
	"zones: {inside: [lan0], outside: [wan0], dmz: [dmz0]}\n"                        \
	"rules:\n" first_rule                                                            \
	"  - {name: lan-out, from: {zone: inside}, to: {zone: outside}, action: accept}\n"    \
	"  - {name: lan-dmz, from: {zone: inside}, to: {zone: dmz}, action: accept}\n"       \
	"defaults: {action: drop}\n"                                                     \
	"nat:\n"                                                                         \
	"  - name: masq\n"                                                               \
	"    match: {from: {network: 10.100.0.0/16}, to: {zone: outside}}\n"             \
	"    snat: {to: masquerade, ports: 20000-29999}\n"                               \
	"routes:\n"                                                                      \
	"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"                \
	"  - {prefix: 10.50.0.0/16, via: 10.0.3.254, interface: dmz0}\n"                 \
	"  - {prefix: 10.100.0.0/16, interface: lan0}\n"                                 \
	"  - {prefix: 'fd00:50::/32', via: 'fd00:3::fe', interface: dmz0}\n"             \
	"  - {prefix: 'fd00:100::/32', interface: lan0}\n"

static const char policy[] = POLICY("");
static const char policy_reload[] =
	POLICY("  - {name: no-dmz-udp, proto: udp, to: {zone: dmz}, action: drop}\n");

static const uint8_t gw4_wan[4] = {10, 0, 1, 254}, gw4_dmz[4] = {10, 0, 3, 254};
static const uint8_t gw6_dmz[16] = {0xfd, 0, 0, 3, [15] = 0xfe};

struct worker_pair {
	void *buf, *buf2;
	size_t len, len2;
	struct rfw_view view, view2;
	struct pipe_worker *w[2];	/* [0] with the flow cache, [1] without */
};

static void client_addr(uint8_t family, int i, uint8_t *a)
{
	memset(a, 0, 16);
	if (family == 4)
		memcpy(a, (uint8_t[]){10, 100, 0, (uint8_t)(1 + i % 8)}, 4);
	else
		memcpy(a, (uint8_t[]){0xfd, 0, 1, 0, [15] = (uint8_t)(1 + i % 8)}, 16);
}

static void pair_neigh(struct worker_pair *wp, uint32_t port, uint8_t family, const uint8_t *a,
		       uint8_t mac_last)
{
	const uint8_t mac[6] = {2, 0xbb, 0, 0, (uint8_t)port, mac_last};

	for (int k = 0; k < 2; k++)
		assert_int_equal(pipe_neigh_set(wp->w[k], port, family, a, mac), 0);
}

/* w[0]'s pipe_config.no_flow_cache: 0 the flow cache (and the express
 * path), 2 the express path's conntrack lookup alone, as while the
 * cache rests; w[1] is always the full path (1). */
static void pair_open_as(struct worker_pair *wp, uint8_t first)
{
	const char *names[3] = {"lan0", "wan0", "dmz0"};
	struct pipe_config c = {.mode = PIPE_ROUTER, .nports = 3, .seed = 11};

	router_lab_compile(policy, &wp->buf, &wp->len, &wp->view);
	router_lab_compile(policy_reload, &wp->buf2, &wp->len2, &wp->view2);
	for (int p = 0; p < 3; p++) {
		strcpy(c.port[p].name, names[p]);
		memcpy(c.port[p].mac, (uint8_t[]){2, 0xaa, 0, 0, 0, (uint8_t)(p + 1)}, 6);
		c.port[p].has_v4 = 1;
		memcpy(c.port[p].v4, (uint8_t[]){10, 0, (uint8_t)(p + 1), 1}, 4);
	}
	for (int k = 0; k < 2; k++) {
		c.no_flow_cache = k ? 1 : first;
		wp->w[k] = pipe_create(&c, &wp->view);
		assert_non_null(wp->w[k]);
	}
	pair_neigh(wp, 1, 4, gw4_wan, 1);
	pair_neigh(wp, 2, 4, gw4_dmz, 1);
	pair_neigh(wp, 2, 6, gw6_dmz, 1);
	for (int i = 0; i < 8; i++) {
		uint8_t a[16];

		client_addr(4, i, a);
		pair_neigh(wp, 0, 4, a, (uint8_t)(0x10 + i));
		client_addr(6, i, a);
		pair_neigh(wp, 0, 6, a, (uint8_t)(0x20 + i));
	}
}

static void pair_open(struct worker_pair *wp)
{
	pair_open_as(wp, 0);
}

static void pair_close(struct worker_pair *wp)
{
	for (int k = 0; k < 2; k++)
		pipe_destroy(wp->w[k]);
	free(wp->buf);
	free(wp->buf2);
}

/* A conversation between a client on lan0 and a server outside (through
 * masquerade) or in the DMZ; TCP follows its handshake and sequence
 * numbers as hosts would, roughly: what the pipeline makes of it is the
 * point, and both workers must make the same of it. */
struct conv {
	uint8_t family, proto, server_port;
	uint8_t client[16], server[16];
	uint16_t cport, sport;
	int state;		/* TCP: 0 SYN, 1 SYN+ACK, 2 ACK, 3 data */
	uint32_t cseq, sseq;
	int have_wire;
	uint8_t wire[16];	/* the client as the server sees it */
	uint16_t wport;
	int pending_dir;	/* in this burst: -1 none, 0 from client, 1 from server */
	int resetting;		/* 2: reset sent, SYN next; 1: SYN sent, data next */
};

static uint32_t rnd_state = 12345;

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

static void conv_init(struct conv *c, int i)
{
	memset(c, 0, sizeof(*c));
	c->family = i % 4 == 3 ? 6 : 4;
	c->proto = i % 3 == 0 ? 17 : 6;
	client_addr(c->family, i, c->client);
	if (c->family == 6) {
		memcpy(c->server, (uint8_t[]){0xfd, 0, 0, 0x50, [15] = (uint8_t)(1 + i)}, 16);
		c->server_port = 2;
	} else if (i % 2) {
		memcpy(c->server, (uint8_t[]){10, 200, (uint8_t)i, 9}, 4);
		c->server_port = 1;
	} else {
		memcpy(c->server, (uint8_t[]){10, 50, (uint8_t)i, 9}, 4);
		c->server_port = 2;
	}
	c->cport = (uint16_t)(30000 + i);
	c->sport = c->proto == 17 ? 53 : 443;
	c->cseq = rnd();
	c->sseq = rnd();
}

/* The next packet of c into f; returns its input port. */
static uint8_t conv_next(struct conv *c, struct frame *f)
{
	struct flow_spec s = {.family = c->family, .proto = c->proto};
	int from_server = c->have_wire && rnd() % 2;
	uint32_t payload = rnd() % 3 ? rnd() % 200 : 0;
	uint32_t r = rnd() % 100;

	if (c->proto == 6) {
		from_server = c->state == 1 || (c->state == 3 && from_server);
		if (c->state == 1 && !c->have_wire)
			from_server = 0, c->state = 0;
		if (c->resetting == 1)	/* data right behind the SYN, same burst */
			from_server = 0, c->state = 3, c->resetting = 0;
		else if (c->resetting == 2)
			c->resetting = 1;
	}
	if (from_server) {
		memcpy(s.src, c->server, 16);
		memcpy(s.dst, c->wire, 16);
		s.sport = c->sport;
		s.dport = c->wport;
	} else {
		memcpy(s.src, c->client, 16);
		memcpy(s.dst, c->server, 16);
		s.sport = c->cport;
		s.dport = c->sport;
	}
	if (c->proto == 6) {
		switch (c->state) {
		case 0:
			s.tcp_flags = 0x02;
			payload = 0;
			break;
		case 1:
			s.tcp_flags = 0x12;
			payload = 0;
			break;
		default:
			s.tcp_flags = 0x10 | (payload ? 0x08 : 0);
			break;
		}
		s.seq = from_server ? c->sseq : c->cseq;
		s.ack = from_server ? c->cseq : c->sseq;
		if (c->state == 3 && r < 3)
			s.seq += 0x40000000u;		/* out of window */
		else if (c->state == 3 && r < 6)
			s.tcp_flags = 0x04, payload = 0, c->resetting = 2;	/* ports reused */
	} else if (r < 2) {
		s.proto = c->family == 4 ? 1 : 58;	/* an echo beside the flow */
	}
	if (r >= 97)
		s.ttl = 1;				/* time exceeded */
	s.payload = payload;
	frame_build(f, &s);
	c->pending_dir = from_server;
	if (c->proto == 6 && s.ttl != 1 && !(s.seq != (from_server ? c->sseq : c->cseq))) {
		uint32_t adv = payload + ((s.tcp_flags & 0x02) ? 1 : 0);

		if (from_server)
			c->sseq += adv;
		else
			c->cseq += adv;
		if (s.tcp_flags & 0x04)
			c->state = 0, c->cseq = rnd(), c->have_wire = 0;
		else if (c->state < 3)
			c->state++;
	}
	return from_server ? c->server_port : 0;
}

/* What the server saw of a client packet: where its replies go. */
static void conv_learn(struct conv *c, const struct pipe_pkt *p)
{
	const uint8_t *ip = p->data + 14;

	if (c->pending_dir != 0 || p->verdict != PIPE_FORWARD || p->out_port != c->server_port ||
	    (ip[c->family == 4 ? 9 : 6] != c->proto))
		return;
	if (c->family == 4) {
		memset(c->wire, 0, 16);
		memcpy(c->wire, ip + 12, 4);
		c->wport = frame_get16(ip + 20);
	} else {
		memcpy(c->wire, ip + 8, 16);
		c->wport = frame_get16(ip + 40);
	}
	c->have_wire = 1;
}

static void same_pipe_stats(const struct pipe_stats *a, const struct pipe_stats *b)
{
	for (unsigned d = 0; d < PIPE_DROP_COUNT; d++)
		if (a->drop[d] != b->drop[d])
			fail_msg("drop %s: %llu with the cache, %llu without", pipe_drop_name(d),
				 (unsigned long long)a->drop[d], (unsigned long long)b->drop[d]);
	assert_int_equal(a->flows_hit, b->flows_hit);
	assert_int_equal(a->related, b->related);
	assert_int_equal(a->nat_rewrites, b->nat_rewrites);
	assert_int_equal(a->replies, b->replies);
	for (unsigned p = 0; p < 3; p++) {
		assert_int_equal(a->port[p].rx_packets, b->port[p].rx_packets);
		assert_int_equal(a->port[p].tx_packets, b->port[p].tx_packets);
		assert_int_equal(a->port[p].tx_bytes, b->port[p].tx_bytes);
		assert_int_equal(a->port[p].dropped, b->port[p].dropped);
	}
}

static void same_as_without(uint8_t first)
{
	static struct frame in[64], out[2][64];
	struct worker_pair wp;
	struct conv conv[CONVS];
	uint64_t now = 10 * SEC, packets = 0;
	struct ct_stats cs[2];
	const struct pipe_stats *st[2];
	char err[256];

	rnd_state = 12345;
	pair_open_as(&wp, first);
	for (int k = 0; k < 2; k++)
		st[k] = pipe_stats(wp.w[k]);
	for (int i = 0; i < CONVS; i++)
		conv_init(&conv[i], i);
	for (int burst = 0; burst < BURSTS; burst++) {
		struct pipe_pkt pk[2][64];
		int who[64];
		uint32_t n = 1 + rnd() % 64;

		for (int i = 0; i < CONVS; i++)
			conv[i].pending_dir = -1;
		for (uint32_t j = 0; j < n; j++) {
			/* one packet a conversation a burst, but a reset, the
			 * SYN that reuses its ports and data right behind it
			 * share one */
			int i = (int)(rnd() % CONVS);
			uint8_t port;

			for (int x = 0; x < CONVS && conv[x].resetting && j < n; x++)
				if (conv[x].pending_dir >= 0)
					i = x;
			if (conv[i].pending_dir >= 0 && !conv[i].resetting) {
				n = j;
				break;
			}
			port = conv_next(&conv[i], &in[j]);
			who[j] = i;
			for (int k = 0; k < 2; k++) {
				out[k][j] = in[j];
				pk[k][j] = (struct pipe_pkt){.data = out[k][j].b, .len = in[j].len,
							     .room = sizeof(out[k][j].b),
							     .in_port = port};
			}
		}
		for (int k = 0; k < 2; k++)
			pipe_process(wp.w[k], pk[k], n, now);
		for (uint32_t j = 0; j < n; j++) {
			if (pk[0][j].verdict != pk[1][j].verdict || pk[0][j].drop != pk[1][j].drop ||
			    pk[0][j].out_port != pk[1][j].out_port || pk[0][j].len != pk[1][j].len ||
			    memcmp(pk[0][j].data, pk[1][j].data, pk[0][j].len))
				fail_msg("burst %d packet %u (conversation %d): verdict %u/%u drop "
					 "%u/%u port %u/%u len %u/%u",
					 burst, j, who[j], pk[0][j].verdict, pk[1][j].verdict,
					 pk[0][j].drop, pk[1][j].drop, pk[0][j].out_port,
					 pk[1][j].out_port, pk[0][j].len, pk[1][j].len);
			conv_learn(&conv[who[j]], &pk[0][j]);
		}
		packets += n;
		now += (rnd() % 200) * 1000000ull;
		if (burst % 400 == 399)
			now += 400 * SEC;	/* UDP flows expire */
		if (burst % 97 == 96)		/* the gateways move */
			pair_neigh(&wp, 1, 4, gw4_wan, (uint8_t)(burst % 5));
		if (burst % 131 == 130)
			pair_neigh(&wp, 2, 6, gw6_dmz, (uint8_t)(burst % 7));
		if (burst % 89 == 87)		/* ... or stop answering a while */
			for (int k = 0; k < 2; k++)
				assert_int_equal(pipe_neigh_forget(wp.w[k], 1, 4, gw4_wan), 0);
		if (burst % 89 == 88)
			pair_neigh(&wp, 1, 4, gw4_wan, (uint8_t)(burst % 5));
		if (burst == BURSTS / 2) {	/* a reload: flows re-checked */
			for (int k = 0; k < 2; k++) {
				struct pipe_policy *p = pipe_policy_build(wp.w[k], &wp.view2, NULL,
									  PIPE_FLOWS_RECHECK, NULL,
									  err, sizeof(err));

				assert_non_null(p);
				p = pipe_adopt(wp.w[k], p);
				while (pipe_sweep(wp.w[k]))
					;
				pipe_policy_free(p);
			}
		}
	}
	same_pipe_stats(pipe_stats(wp.w[0]), pipe_stats(wp.w[1]));
	for (uint32_t r = 0; r <= pipe_rule_count(wp.w[0]); r++) {
		assert_int_equal(pipe_rule_stats(wp.w[0])[r].packets,
				 pipe_rule_stats(wp.w[1])[r].packets);
		assert_int_equal(pipe_rule_stats(wp.w[0])[r].bytes,
				 pipe_rule_stats(wp.w[1])[r].bytes);
	}
	ct_get_stats(pipe_conntrack(wp.w[0]), &cs[0]);
	ct_get_stats(pipe_conntrack(wp.w[1]), &cs[1]);
	assert_memory_equal(&cs[0], &cs[1], sizeof(cs[0]));
	/* the cache (or the express lookup) did the work it is for, and
	 * only with it: known-flow packets sent without the route stage */
	print_message("%llu packets, %llu finished by the flow cache, %llu known-flow packets, "
		      "%llu routed by the route stage (%llu without)\n",
		      (unsigned long long)packets, (unsigned long long)st[0]->flow_cache_hits,
		      (unsigned long long)st[0]->flows_hit,
		      (unsigned long long)st[0]->stage[PIPE_ST_ROUTE].packets,
		      (unsigned long long)st[1]->stage[PIPE_ST_ROUTE].packets);
	if (first == 0)
		assert_true(st[0]->flow_cache_hits * 4 > st[0]->flows_hit);
	else
		assert_int_equal(st[0]->flow_cache_hits, 0);
	/* express_known's sends counted as such, only where it runs (w[1]
	 * is no_flow_cache 1: no express path) */
	if (first == 2)
		assert_true(st[0]->express_sent * 4 > st[0]->flows_hit);
	assert_true(st[0]->express_sent + st[0]->flow_cache_hits <= st[0]->flows_hit);
	assert_int_equal(st[1]->express_sent, 0);
	assert_true((st[1]->stage[PIPE_ST_ROUTE].packets - st[0]->stage[PIPE_ST_ROUTE].packets) * 4 >
		    st[0]->flows_hit);
	assert_int_equal(st[1]->flow_cache_hits, 0);
	pair_close(&wp);
}

static void test_same_as_without(void **state)
{
	(void)state;
	same_as_without(0);
}

/* The same with the flow cache resting (its slots thrashed by many more
 * active flows): express frames of known flows are found in conntrack
 * and sent from there (express_known), routed and their next hop looked
 * up there, or left to the full path when that needs more. */
static void test_same_as_without_cache_resting(void **state)
{
	(void)state;
	same_as_without(2);
}

/* One burst through both workers; they must agree on every packet. */
static void pair_burst(struct worker_pair *wp, const struct frame *in, const uint8_t *ports,
		       uint32_t n, uint64_t now, struct pipe_pkt *res, struct frame *out)
{
	static struct frame copy[2][8];
	struct pipe_pkt pk[2][8];

	assert_true(n <= 8);
	for (int k = 0; k < 2; k++) {
		for (uint32_t j = 0; j < n; j++) {
			copy[k][j] = in[j];
			pk[k][j] = (struct pipe_pkt){.data = copy[k][j].b, .len = in[j].len,
						     .room = sizeof(copy[k][j].b), .in_port = ports[j]};
		}
		pipe_process(wp->w[k], pk[k], n, now);
	}
	for (uint32_t j = 0; j < n; j++) {
		assert_int_equal(pk[0][j].verdict, pk[1][j].verdict);
		assert_int_equal(pk[0][j].drop, pk[1][j].drop);
		assert_int_equal(pk[0][j].len, pk[1][j].len);
		assert_memory_equal(pk[0][j].data, pk[1][j].data, pk[0][j].len);
		res[j] = pk[0][j];
		out[j] = copy[0][j];
	}
}

/* A TCP connection from client c (source and destination set) through
 * masquerade to the server: its handshake, then data until the flow is
 * cached; c is left ready for its next data segment. The cache's hits
 * so far (at least one). */
static uint64_t connect_cached(struct worker_pair *wp, struct flow_spec *c, uint64_t now)
{
	struct flow_spec sv = {.family = 4, .proto = 6, .sport = c->dport};
	struct frame in[1], out[1];
	struct pipe_pkt res[1];
	uint8_t lan = 0, wan = 1;
	uint64_t hits;

	memcpy(sv.src, c->dst, 4);
	c->tcp_flags = 0x02, c->seq = 1000;
	frame_build(&in[0], c);
	pair_burst(wp, in, &lan, 1, now, res, out);
	assert_int_equal(res[0].verdict, PIPE_FORWARD);
	memcpy(sv.dst, out[0].b + 14 + 12, 4);	/* the masquerade's address and port */
	sv.dport = frame_get16(out[0].b + 14 + 20);
	sv.tcp_flags = 0x12, sv.seq = 5000, sv.ack = 1001;
	frame_build(&in[0], &sv);
	pair_burst(wp, in, &wan, 1, now, res, out);
	assert_int_equal(res[0].verdict, PIPE_FORWARD);
	c->tcp_flags = 0x10, c->seq = 1001, c->ack = 5001;
	for (int i = 0; i < 3; i++) {	/* the handshake's ACK, then data: cached */
		frame_build(&in[0], c);
		pair_burst(wp, in, &lan, 1, now, res, out);
		assert_int_equal(res[0].verdict, PIPE_FORWARD);
		c->seq += c->payload;
		c->tcp_flags = 0x18, c->payload = 10;
	}
	hits = pipe_stats(wp->w[0])->flow_cache_hits;
	assert_true(hits >= 1);
	return hits;
}

/* A SYN that reuses the ports of a reset connection, and a segment of
 * the old connection right behind it in the same burst (its sequence
 * number inside the old window). The full path looks the whole burst up
 * before it creates the SYN's flow, so the segment is the old flow's and
 * is forwarded. With the cache, packets behind a SYN in the SYN's slot
 * take the full path too (stage_cache, stage_express), so they meet
 * conntrack in the order the full path gives them: the same answer,
 * and the segment is not a cache hit. */
static void test_syn_then_old_segment(void **state)
{
	struct worker_pair wp;
	struct flow_spec c = {.family = 4, .proto = 6, .sport = 40000, .dport = 443};
	struct frame in[2], out[2];
	struct pipe_pkt res[2];
	uint8_t lan[2] = {0, 0};
	uint64_t now = 10 * SEC;
	uint64_t hits;

	(void)state;
	pair_open(&wp);
	client_addr(4, 0, c.src);
	memcpy(c.dst, (uint8_t[]){10, 200, 7, 9}, 4);
	hits = connect_cached(&wp, &c, now);
	c.tcp_flags = 0x04, c.payload = 0;	/* reset */
	frame_build(&in[0], &c);
	pair_burst(&wp, in, lan, 1, now, res, out);
	assert_int_equal(res[0].verdict, PIPE_FORWARD);
	{
		struct flow_spec syn = c;

		syn.tcp_flags = 0x02, syn.seq = 900000, syn.ack = 0;
		frame_build(&in[0], &syn);
	}
	c.tcp_flags = 0x18, c.payload = 10;	/* the old connection's next segment */
	frame_build(&in[1], &c);
	pair_burst(&wp, in, lan, 2, now + SEC / 10, res, out);
	assert_int_equal(res[0].verdict, PIPE_FORWARD);
	assert_int_equal(res[1].verdict, PIPE_FORWARD);
	/* the reset was a hit, the segment behind the SYN was not */
	assert_int_equal(pipe_stats(wp.w[0])->flow_cache_hits, hits + 1);
	pair_close(&wp);
}

/* A SYN that would reuse the ports of a closing connection, right in
 * front of the old connection's last ACK in the same burst. In the full
 * path's order the SYN meets the connection before that ACK ends it, so
 * it is the old connection's (out of its window: invalid), and the ACK
 * then completes the close. The flow cache holds the connection, but
 * leaves the ACK (behind the SYN in its slot); the express path's
 * conntrack lookup (express_conntrack) must leave it for after the SYN
 * too: taken first, it would close the connection and let the SYN open
 * a new one. pair_burst checks the worker with the express path against
 * the one without (no_flow_cache). */
static void test_syn_before_last_ack(void **state)
{
	struct worker_pair wp;
	struct flow_spec c = {.family = 4, .proto = 6, .sport = 40002, .dport = 443};
	struct flow_spec sv = {.family = 4, .proto = 6, .dport = 0};
	struct frame in[2], out[2];
	struct pipe_pkt res[2];
	uint8_t lan[2] = {0, 0}, wan = 1;
	uint64_t now = 10 * SEC;

	(void)state;
	pair_open(&wp);
	client_addr(4, 2, c.src);
	memcpy(c.dst, (uint8_t[]){10, 200, 7, 11}, 4);
	connect_cached(&wp, &c, now);
	c.tcp_flags = 0x11, c.payload = 0;	/* the client's FIN */
	frame_build(&in[0], &c);
	pair_burst(&wp, in, lan, 1, now, res, out);
	assert_int_equal(res[0].verdict, PIPE_FORWARD);
	c.seq += 1;
	memcpy(sv.src, c.dst, 4);
	sv.sport = c.dport;
	memcpy(sv.dst, out[0].b + 14 + 12, 4);	/* the masquerade's address and port */
	sv.dport = frame_get16(out[0].b + 14 + 20);
	sv.tcp_flags = 0x11, sv.seq = 5001, sv.ack = c.seq;	/* the server's FIN */
	frame_build(&in[0], &sv);
	pair_burst(&wp, in, &wan, 1, now, res, out);
	assert_int_equal(res[0].verdict, PIPE_FORWARD);
	{
		struct flow_spec syn = c;

		syn.tcp_flags = 0x02, syn.seq = 900000, syn.ack = 0;
		frame_build(&in[0], &syn);
	}
	c.tcp_flags = 0x10, c.ack = 5002;	/* the last ACK */
	frame_build(&in[1], &c);
	pair_burst(&wp, in, lan, 2, now + SEC / 10, res, out);
	assert_int_not_equal(res[0].verdict, PIPE_FORWARD);
	assert_int_equal(res[1].verdict, PIPE_FORWARD);
	pair_close(&wp);
}

/* A neighbour never known before leaves the cached flows cached (none
 * can be cached towards it); a known one's MAC moving ends them, and the
 * next packet goes to the new MAC; a neighbour forgotten ends them too. */
static void test_new_neighbour_keeps_cache(void **state)
{
	struct worker_pair wp;
	struct flow_spec c = {.family = 4, .proto = 6, .sport = 40001, .dport = 443};
	const uint8_t stranger[4] = {10, 0, 1, 77};
	struct frame in[1], out[1];
	struct pipe_pkt res[1];
	uint8_t lan = 0;
	uint64_t now = 10 * SEC, hits;

	(void)state;
	pair_open(&wp);
	client_addr(4, 1, c.src);
	memcpy(c.dst, (uint8_t[]){10, 200, 7, 10}, 4);
	hits = connect_cached(&wp, &c, now);

	pair_neigh(&wp, 1, 4, stranger, 0x77);	/* new: the flow stays cached */
	frame_build(&in[0], &c);
	pair_burst(&wp, in, &lan, 1, now, res, out);
	assert_int_equal(res[0].verdict, PIPE_FORWARD);
	assert_int_equal(pipe_stats(wp.w[0])->flow_cache_hits, hits + 1);
	c.seq += c.payload;

	pair_neigh(&wp, 1, 4, gw4_wan, 0x42);	/* the gateway moved */
	frame_build(&in[0], &c);
	pair_burst(&wp, in, &lan, 1, now, res, out);
	assert_int_equal(res[0].verdict, PIPE_FORWARD);
	assert_int_equal(pipe_stats(wp.w[0])->flow_cache_hits, hits + 1);
	assert_int_equal(out[0].b[5], 0x42);
	c.seq += c.payload;
	frame_build(&in[0], &c);		/* cached again, at the new MAC */
	pair_burst(&wp, in, &lan, 1, now, res, out);
	assert_int_equal(pipe_stats(wp.w[0])->flow_cache_hits, hits + 2);
	assert_int_equal(out[0].b[5], 0x42);
	c.seq += c.payload;

	for (int k = 0; k < 2; k++)		/* forgotten: a miss */
		assert_int_equal(pipe_neigh_forget(wp.w[k], 1, 4, stranger), 0);
	frame_build(&in[0], &c);
	pair_burst(&wp, in, &lan, 1, now, res, out);
	assert_int_equal(res[0].verdict, PIPE_FORWARD);
	assert_int_equal(pipe_stats(wp.w[0])->flow_cache_hits, hits + 2);
	pair_close(&wp);
}

/* The cache grows with the conntrack table, under 2.7 bytes a flow
 * once past its smallest size, within its bounds, a power of two. */
static void test_sizing(void **state)
{
	static const uint32_t flows[] = {0, 1, 64, 131071, 262144, 300000, 1000000, 2049600,
					 4194304, CT_MAX_FLOWS};
	uint32_t last = 0;

	(void)state;
	for (unsigned i = 0; i < sizeof(flows) / sizeof(flows[0]); i++) {
		uint32_t s = flowcache_slots_for(flows[i]);

		assert_true(s >= FLOWCACHE_MIN_SLOTS && s <= FLOWCACHE_MAX_SLOTS);
		assert_int_equal(s & (s - 1), 0);
		assert_true(s >= last);
		if (s > FLOWCACHE_MIN_SLOTS)
			assert_true((uint64_t)s * 12 < flows[i]);
		last = s;
	}
	assert_int_equal(flowcache_slots_for(64), FLOWCACHE_MIN_SLOTS);
	assert_int_equal(flowcache_slots_for(1000000), 65536);
	assert_int_equal(flowcache_slots_for(CT_MAX_FLOWS), FLOWCACHE_MAX_SLOTS);
	{
		struct flowcache c;

		assert_int_equal(flowcache_init(&c, 3 * FLOWCACHE_MIN_SLOTS, 1), -1);
		assert_int_equal(flowcache_init(&c, FLOWCACHE_MIN_SLOTS / 2, 1), -1);
		assert_int_equal(flowcache_init(&c, 65536, 1), 0);
		assert_int_equal(c.mask, 65535);
		assert_int_equal(c.fill_bursts, 1024);
		flowcache_free(&c);
	}
}

/* Bursts a rest lasts: probing() answers 0 that many times, then 1. */
static uint32_t rest_length(struct flowcache_rest *r)
{
	uint32_t n = 0;

	while (!flowcache_probing(r)) {
		n++;
		assert_true(n <= 1000);
	}
	return n;
}

/* fill bad bursts in a row start a rest of 3 fills; each rest after
 * another without a good burst is twice as long, up to 24 fills; a good
 * burst brings the shortest back, small or middling bursts do not. */
static void test_rest_backs_off(void **state)
{
	const uint32_t fill = 4;
	struct flowcache_rest r = {0};

	(void)state;
	assert_true(flowcache_probing(&r));
	for (uint32_t round = 0; round < 6; round++) {
		for (uint32_t k = 0; k < fill - 1; k++) {
			flowcache_judge(&r, fill, 64, 7);	/* 7 of 64 found: bad */
			assert_true(flowcache_probing(&r));
		}
		flowcache_judge(&r, fill, 64, 0);
		assert_int_equal(rest_length(&r), (3 * fill) << (round < 3 ? round : 3));
		assert_true(flowcache_probing(&r));
	}
	/* small bursts are not judged, and break a run of bad ones */
	flowcache_judge(&r, fill, 64, 0);
	flowcache_judge(&r, fill, 8, 0);
	for (uint32_t k = 0; k < fill - 1; k++)
		flowcache_judge(&r, fill, 64, 0);
	assert_true(flowcache_probing(&r));
	flowcache_judge(&r, fill, 64, 0);
	assert_int_equal(rest_length(&r), 24 * fill);	/* still the longest */
	/* one good burst (8 of 64: not under an eighth) */
	flowcache_judge(&r, fill, 64, 8);
	for (uint32_t k = 0; k < fill; k++)
		flowcache_judge(&r, fill, 64, 0);
	assert_int_equal(rest_length(&r), 3 * fill);
	for (uint32_t k = 0; k < fill; k++)
		flowcache_judge(&r, fill, 64, 0);
	assert_int_equal(rest_length(&r), 6 * fill);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizing),
		cmocka_unit_test(test_same_as_without),
		cmocka_unit_test(test_same_as_without_cache_resting),
		cmocka_unit_test(test_rest_backs_off),
		cmocka_unit_test(test_syn_then_old_segment),
		cmocka_unit_test(test_syn_before_last_ack),
		cmocka_unit_test(test_new_neighbour_keeps_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
