/* Conntrack on frames built here and parsed by pkt_parse, driven as the
 * pipeline drives it: TCP states and windows, UDP/ICMP pseudo-flows,
 * RELATED errors, fragments, expiry, full table, a million flows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "csum.h"
#include "ct.h"
#include "flowcache.h"
#include "pkt.h"

enum { TCP = 6, UDP = 17, ICMP = 1, ICMP6 = 58, GRE = 47 };
enum { FIN = 0x01, SYN = 0x02, RST = 0x04, PSH = 0x08, ACK = 0x10 };

static const uint8_t A4[16] = {10, 0, 0, 1}, B4[16] = {10, 0, 1, 2}, R4[16] = {10, 0, 9, 9};
static const uint8_t N4[16] = {10, 9, 0, 1};	/* a SNAT address */
static const uint8_t A6[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t B6[16] = {0xfd, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
static const uint8_t R6[16] = {0xfd, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};
static const uint8_t N6[16] = {0xfd, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};

/* ---- frame builder ---- */

struct pk {
	uint8_t b[600];
	uint32_t len;
	struct pkt_meta m;
	struct ct_pkt p;
};

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

/* Parsed as the pipeline would; an IPv4 header patched in place gets its
 * checksum right first. */
static void parse(struct pk *x)
{
	if (x->b[12] == 0x08 && x->b[13] == 0x00)
		put16(x->b + 14 + 10, csum_ipv4_header(x->b + 14));
	assert_int_equal(pkt_parse(x->b, x->len, &x->m), PKT_IP);
	x->p.meta = &x->m;
	x->p.frame = x->b;
	x->p.len = x->len;
}

/* Ethernet + IP header around an L4 payload. frag: IPv4 flags+offset
 * field (IPv6: offset in 8-byte units << 3 | M, with a fragment header,
 * when frag6 is set). */
static void ip(struct pk *x, int fam, const uint8_t *src, const uint8_t *dst, uint8_t proto,
	       const uint8_t *l4, uint32_t l4len, uint32_t id, uint16_t frag, int frag6)
{
	uint32_t o = 14;

	memset(x, 0, sizeof(*x));
	put16(x->b + 12, fam == 4 ? 0x0800 : 0x86DD);
	if (fam == 4) {
		x->b[o] = 0x45;
		put16(x->b + o + 2, 20 + l4len);
		put16(x->b + o + 4, id);
		put16(x->b + o + 6, frag);
		x->b[o + 8] = 64;
		x->b[o + 9] = proto;
		memcpy(x->b + o + 12, src, 4);
		memcpy(x->b + o + 16, dst, 4);
		o += 20;
	} else {
		x->b[o] = 0x60;
		put16(x->b + o + 4, l4len + (frag6 ? 8 : 0));
		x->b[o + 6] = frag6 ? 44 : proto;
		x->b[o + 7] = 64;
		memcpy(x->b + o + 8, src, 16);
		memcpy(x->b + o + 24, dst, 16);
		o += 40;
		if (frag6) {
			x->b[o] = proto;
			put16(x->b + o + 2, frag);
			put32(x->b + o + 4, id);
			o += 8;
		}
	}
	memcpy(x->b + o, l4, l4len);
	x->len = o + l4len;
	if (x->len < 60)
		x->len = 60;	/* Ethernet padding: must not count as payload */
	parse(x);
}

/* TCP with `pay` payload bytes; wscale < 0: no option. */
static void tcp(struct pk *x, int fam, const uint8_t *src, const uint8_t *dst, uint16_t sp,
		uint16_t dp, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t win,
		int wscale, uint32_t pay)
{
	uint8_t l4[400] = {0};
	uint32_t hl = wscale >= 0 ? 24 : 20;

	assert_true(pay <= sizeof(l4) - hl);
	put16(l4, sp);
	put16(l4 + 2, dp);
	put32(l4 + 4, seq);
	put32(l4 + 8, ack);
	l4[12] = (uint8_t)(hl / 4 << 4);
	l4[13] = flags;
	put16(l4 + 14, win);
	if (wscale >= 0) {
		l4[20] = 1;	/* NOP */
		l4[21] = 3;
		l4[22] = 3;
		l4[23] = (uint8_t)wscale;
	}
	ip(x, fam, src, dst, TCP, l4, hl + pay, 0, 0, 0);
}

static void udp(struct pk *x, int fam, const uint8_t *src, const uint8_t *dst, uint16_t sp,
		uint16_t dp)
{
	uint8_t l4[16] = {0};

	put16(l4, sp);
	put16(l4 + 2, dp);
	put16(l4 + 4, sizeof(l4));
	ip(x, fam, src, dst, UDP, l4, sizeof(l4), 0, 0, 0);
}

static void echo(struct pk *x, int fam, const uint8_t *src, const uint8_t *dst, int request,
		 uint16_t id)
{
	uint8_t l4[16] = {0};

	l4[0] = fam == 4 ? (request ? 8 : 0) : (request ? 128 : 129);
	put16(l4 + 4, id);
	put16(l4 + 6, 1);
	ip(x, fam, src, dst, fam == 4 ? ICMP : ICMP6, l4, sizeof(l4), 0, 0, 0);
}

/* An ICMP error from src to dst quoting `inner` (its IP header + 8). */
static void icmp_error(struct pk *x, int fam, const uint8_t *src, const uint8_t *dst,
		       uint8_t type, uint8_t code, const struct pk *inner)
{
	uint8_t l4[200] = {0};
	uint32_t iplen = fam == 4 ? 20 : 40;

	l4[0] = type;
	l4[1] = code;
	memcpy(l4 + 8, inner->b + 14, iplen + 8);
	ip(x, fam, src, dst, fam == 4 ? ICMP : ICMP6, l4, 8 + iplen + 8, 0, 0, 0);
}

/* ---- the pipeline's calls ---- */

static struct ct_config cfg(uint32_t max_flows)
{
	struct ct_config c;

	memset(&c, 0, sizeof(c));
	c.max_flows = max_flows;
	c.seed = 0x1234567887654321ull;
	c.timeout[RFW_TIMEOUT_TCP_SYN] = 30;
	c.timeout[RFW_TIMEOUT_TCP_ESTABLISHED] = 86400;
	c.timeout[RFW_TIMEOUT_TCP_CLOSING] = 30;
	c.timeout[RFW_TIMEOUT_UDP] = 30;
	c.timeout[RFW_TIMEOUT_UDP_STREAM] = 180;
	c.timeout[RFW_TIMEOUT_ICMP] = 30;
	c.timeout[RFW_TIMEOUT_OTHER] = 60;
	return c;
}

static struct ct_table *table(uint32_t max_flows)
{
	struct ct_config c = cfg(max_flows);
	struct ct_table *t = ct_create(&c);

	assert_non_null(t);
	return t;
}

static struct ct_result look(struct ct_table *t, const struct pk *x, uint32_t now)
{
	struct ct_result r;

	ct_lookup_batch(t, &x->p, 1, now, &r);
	return r;
}

/* Lookup, then update a known flow; *valid = -1 when not a known flow. */
static struct ct_result step(struct ct_table *t, const struct pk *x, uint32_t now, int *valid)
{
	struct ct_result r = look(t, x, now);

	*valid = -1;
	if (r.kind == CT_FOUND || r.kind == CT_RELATED || (r.kind == CT_FRAG && r.flow != CT_NONE))
		*valid = ct_update(t, r.flow, r.dir, &x->p, now);
	return r;
}

/* A packet expected to be a valid packet of flow in direction dir. */
static void ok(struct ct_table *t, const struct pk *x, uint32_t now, uint32_t flow, unsigned dir)
{
	int valid;
	struct ct_result r = step(t, x, now, &valid);

	assert_int_equal(r.kind, CT_FOUND);
	assert_int_equal(r.flow, flow);
	assert_int_equal(r.dir, dir);
	assert_int_equal(r.state, RFW_STATE_ESTABLISHED);
	assert_int_equal(valid, 1);
}

static uint32_t create(struct ct_table *t, const struct pk *x, uint32_t now)
{
	uint32_t flow;
	struct ct_result r = look(t, x, now);

	assert_int_equal(r.kind, CT_NEW);
	assert_int_equal(r.state, RFW_STATE_NEW);
	assert_int_equal(ct_create_flow(t, &x->p, NULL, 7, now, &flow), CT_CREATED);
	return flow;
}

static const char *tstate(struct ct_table *t, uint32_t flow)
{
	struct ct_flow_info i;

	assert_int_equal(ct_flow_get(t, flow, &i), 0);
	return ct_tcp_state_name(i.tcp_state);
}

static uint64_t invalid_count(struct ct_table *t)
{
	struct ct_stats s;

	ct_get_stats(t, &s);
	return s.invalid;
}

/* ct_track_batch's answer for one packet (as the pipeline asks). */
static uint8_t ct_track_batch_one_kind(struct ct_table *t, const struct pk *x, uint32_t now)
{
	struct ct_result r;

	ct_track_batch(t, &x->p, 1, now, &r);
	return r.kind;
}

/* A handshake A:1234 -> B:80; client ISN 1000, server ISN 5000. */
#define CISN 1000u
#define SISN 5000u
static uint32_t handshake(struct ct_table *t, int fam, const uint8_t *a, const uint8_t *b,
			  int cws, int sws, uint16_t swin, uint32_t now)
{
	struct pk x;
	uint32_t flow;

	tcp(&x, fam, a, b, 1234, 80, SYN, CISN, 0, 65535, cws, 0);
	flow = create(t, &x, now);
	assert_string_equal(tstate(t, flow), "SYN_SENT");
	tcp(&x, fam, b, a, 80, 1234, SYN | ACK, SISN, CISN + 1, swin, sws, 0);
	ok(t, &x, now, flow, CT_DIR_REPLY);
	assert_string_equal(tstate(t, flow), "SYN_RECV");
	tcp(&x, fam, a, b, 1234, 80, ACK, CISN + 1, SISN + 1, 1024, -1, 0);
	ok(t, &x, now, flow, CT_DIR_ORIG);
	assert_string_equal(tstate(t, flow), "ESTABLISHED");
	return flow;
}

/* ---- tests ---- */

static void test_tcp_lifecycle(void **state)
{
	(void)state;
	for (int fam = 4; fam <= 6; fam += 2) {
		struct ct_table *t = table(64);
		const uint8_t *a = fam == 4 ? A4 : A6, *b = fam == 4 ? B4 : B6;
		uint32_t flow = handshake(t, fam, a, b, -1, -1, 65535, 100);
		struct ct_flow_info i;
		struct pk x;

		/* Data both ways, then the client closes first. */
		tcp(&x, fam, a, b, 1234, 80, ACK | PSH, CISN + 1, SISN + 1, 65535, -1, 100);
		ok(t, &x, 101, flow, CT_DIR_ORIG);
		tcp(&x, fam, b, a, 80, 1234, ACK | PSH, SISN + 1, CISN + 101, 65535, -1, 300);
		ok(t, &x, 102, flow, CT_DIR_REPLY);
		assert_string_equal(tstate(t, flow), "ESTABLISHED");
		assert_int_equal(ct_flow_get(t, flow, &i), 0);
		assert_int_equal(i.packets[CT_DIR_ORIG], 3);
		assert_int_equal(i.packets[CT_DIR_REPLY], 2);
		assert_int_equal(i.expire, 102 + 86400);
		assert_int_equal(i.rule, 7);

		tcp(&x, fam, a, b, 1234, 80, FIN | ACK, CISN + 101, SISN + 301, 65535, -1, 0);
		ok(t, &x, 103, flow, CT_DIR_ORIG);
		assert_string_equal(tstate(t, flow), "FIN_WAIT");
		tcp(&x, fam, b, a, 80, 1234, ACK, SISN + 301, CISN + 102, 65535, -1, 0);
		ok(t, &x, 103, flow, CT_DIR_REPLY);
		assert_string_equal(tstate(t, flow), "FIN_WAIT");
		tcp(&x, fam, b, a, 80, 1234, FIN | ACK, SISN + 301, CISN + 102, 65535, -1, 0);
		ok(t, &x, 104, flow, CT_DIR_REPLY);
		assert_string_equal(tstate(t, flow), "CLOSING");
		tcp(&x, fam, a, b, 1234, 80, ACK, CISN + 102, SISN + 302, 65535, -1, 0);
		ok(t, &x, 105, flow, CT_DIR_ORIG);
		assert_string_equal(tstate(t, flow), "TIME_WAIT");
		assert_int_equal(ct_flow_get(t, flow, &i), 0);
		assert_int_equal(i.expire, 105 + 30);	/* tcp_closing, moved earlier */

		/* A new SYN on the same ports reuses the closed flow's tuple
		 * (NEW, but the tuple is not absent from the index). */
		tcp(&x, fam, a, b, 1234, 80, SYN, 90000, 0, 65535, -1, 0);
		assert_int_equal(look(t, &x, 106).kind, CT_NEW);
		assert_int_equal(look(t, &x, 106).flags & CT_RF_ABSENT, 0);
		flow = create(t, &x, 106);
		assert_string_equal(tstate(t, flow), "SYN_SENT");
		/* The new flow is reaped at its tcp_syn timeout, not earlier. */
		assert_int_equal(ct_expire(t, 106 + 29, 1000), 0);
		assert_int_equal(ct_expire(t, 106 + 30, 1000), 1);
		ct_destroy(t);
	}
}

/* Close a handshake()'s connection, client first, to TIME_WAIT. */
static void close_both(struct ct_table *t, int fam, const uint8_t *a, const uint8_t *b,
		       uint32_t flow, uint32_t now)
{
	struct pk x;

	tcp(&x, fam, a, b, 1234, 80, FIN | ACK, CISN + 1, SISN + 1, 65535, -1, 0);
	ok(t, &x, now, flow, CT_DIR_ORIG);
	tcp(&x, fam, b, a, 80, 1234, FIN | ACK, SISN + 1, CISN + 2, 65535, -1, 0);
	ok(t, &x, now, flow, CT_DIR_REPLY);
	tcp(&x, fam, a, b, 1234, 80, ACK, CISN + 2, SISN + 2, 65535, -1, 0);
	ok(t, &x, now, flow, CT_DIR_ORIG);
	assert_string_equal(tstate(t, flow), "TIME_WAIT");
}

/* A SYN from the old responder on a closed connection's ports is a new
 * connection the other way (pf, Linux from TIME_WAIT): NEW, for the rules
 * to judge, and its create takes the entry over. Before, it was the old
 * flow's: an in-window one passed whatever the rules said, one outside
 * was invalid. Over a translated flow it stays invalid (ct.c). */
static void test_tcp_reopen_from_responder(void **state)
{
	(void)state;
	for (int fam = 4; fam <= 6; fam += 2) {
		for (int reset = 0; reset <= 1; reset++) {
			struct ct_table *t = table(64);
			const uint8_t *a = fam == 4 ? A4 : A6, *b = fam == 4 ? B4 : B6;
			uint32_t old = handshake(t, fam, a, b, -1, -1, 65535, 100), flow;
			struct ct_flow_info i;
			struct ct_result r;
			struct ct_stats s;
			struct pk x;

			if (reset) {
				tcp(&x, fam, a, b, 1234, 80, RST, CISN + 1, 0, 0, -1, 0);
				ok(t, &x, 101, old, CT_DIR_ORIG);
				assert_string_equal(tstate(t, old), "CLOSED");
			} else {
				close_both(t, fam, a, b, old, 101);
			}
			/* in the old window: still not the old flow's */
			tcp(&x, fam, b, a, 80, 1234, SYN, SISN + 2, 0, 65535, -1, 0);
			r = look(t, &x, 102);
			assert_int_equal(r.kind, CT_NEW);
			assert_int_equal(r.state, RFW_STATE_NEW);
			assert_int_equal(r.flags & CT_RF_ABSENT, 0);
			assert_int_equal(ct_track_batch_one_kind(t, &x, 102), CT_NEW);
			assert_int_equal(ct_create_flow(t, &x.p, NULL, 9, 102, &flow), CT_CREATED);
			assert_int_equal(ct_flow_get(t, flow, &i), 0);
			assert_memory_equal(i.orig.src, b, fam == 4 ? 4 : 16);
			assert_int_equal(i.orig.sport, 80);
			assert_int_equal(i.rule, 9);
			assert_string_equal(tstate(t, flow), "SYN_SENT");
			ct_get_stats(t, &s);
			assert_int_equal(s.in_use, 1);	/* the old one went */
			assert_int_equal(s.removed, 1);
			/* the handshake the other way round */
			tcp(&x, fam, a, b, 1234, 80, SYN | ACK, 77000, SISN + 3, 65535, -1, 0);
			ok(t, &x, 102, flow, CT_DIR_REPLY);
			tcp(&x, fam, b, a, 80, 1234, ACK, SISN + 3, 77001, 65535, -1, 0);
			ok(t, &x, 102, flow, CT_DIR_ORIG);
			assert_string_equal(tstate(t, flow), "ESTABLISHED");
			ct_destroy(t);
		}
	}
}

/* The reply side of a closed SNAT flow: its tuple is the pool's pair, so
 * a SYN there is invalid (no new flow towards the pool, no way in to the
 * translated host), and the flow keeps its entry and pair. */
static void test_tcp_reopen_over_nat(void **state)
{
	(void)state;
	for (int fam = 4; fam <= 6; fam += 2) {
		struct ct_table *t = table(64);
		const uint8_t *a = fam == 4 ? A4 : A6, *b = fam == 4 ? B4 : B6;
		const uint8_t *n = fam == 4 ? N4 : N6;
		struct pkt_key reply;
		struct ct_stats s;
		struct pk x;
		uint32_t flow, again;
		uint64_t inv;

		tcp(&x, fam, a, b, 1234, 80, SYN, CISN, 0, 65535, -1, 0);
		memset(&reply, 0, sizeof(reply));
		memcpy(reply.src, b, 16);
		memcpy(reply.dst, n, 16);
		reply.family = (uint8_t)fam;
		reply.proto = TCP;
		reply.sport = 80;
		reply.dport = 40000;
		assert_int_equal(ct_create_flow(t, &x.p, &reply, 2, 100, &flow), CT_CREATED);
		tcp(&x, fam, b, n, 80, 40000, SYN | ACK, SISN, CISN + 1, 65535, -1, 0);
		ok(t, &x, 100, flow, CT_DIR_REPLY);
		tcp(&x, fam, b, n, 80, 40000, RST | ACK, SISN + 1, CISN + 1, 0, -1, 0);
		ok(t, &x, 101, flow, CT_DIR_REPLY);
		assert_string_equal(tstate(t, flow), "CLOSED");

		inv = invalid_count(t);
		tcp(&x, fam, b, n, 80, 40000, SYN, SISN + 1, 0, 65535, -1, 0);
		assert_int_equal(look(t, &x, 102).kind, CT_INVALID);
		assert_int_equal(ct_track_batch_one_kind(t, &x, 102), CT_INVALID);
		assert_int_equal(ct_create_flow(t, &x.p, NULL, 9, 102, &again), CT_REFUSED_INVALID);
		assert_int_equal(invalid_count(t), inv + 3);
		ct_get_stats(t, &s);
		assert_int_equal(s.in_use, 1);
		assert_string_equal(tstate(t, flow), "CLOSED");
		/* the translated host may still reuse its own ports */
		tcp(&x, fam, a, b, 1234, 80, SYN, 90000, 0, 65535, -1, 0);
		assert_int_equal(look(t, &x, 102).kind, CT_NEW);
		ct_destroy(t);
	}
}

static void test_tcp_stray_segments(void **state)
{
	struct ct_table *t = table(64);
	struct pk x;
	struct ct_result r;
	uint32_t flow;
	int valid;

	(void)state;
	/* Only a bare SYN may open a flow. */
	tcp(&x, 4, A4, B4, 1234, 80, ACK, 1, 1, 100, -1, 0);
	r = look(t, &x, 10);
	assert_int_equal(r.kind, CT_INVALID);
	assert_int_equal(r.state, RFW_STATE_INVALID);
	assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, 10, &flow), CT_REFUSED_INVALID);
	/* A SYN+ACK must acknowledge the SYN exactly. */
	tcp(&x, 4, A4, B4, 1234, 80, SYN, CISN, 0, 65535, -1, 0);
	flow = create(t, &x, 10);
	tcp(&x, 4, B4, A4, 80, 1234, SYN | ACK, SISN, CISN + 7, 65535, -1, 0);
	step(t, &x, 10, &valid);
	assert_int_equal(valid, 0);
	assert_string_equal(tstate(t, flow), "SYN_SENT");
	/* Data from the client before any answer is not valid. */
	tcp(&x, 4, A4, B4, 1234, 80, ACK, CISN + 1, 1, 100, -1, 10);
	step(t, &x, 10, &valid);
	assert_int_equal(valid, 0);
	/* Its SYN retransmitted is. */
	tcp(&x, 4, A4, B4, 1234, 80, SYN, CISN, 0, 65535, -1, 0);
	ok(t, &x, 11, flow, CT_DIR_ORIG);
	ct_destroy(t);
}

/* TCP Fast Open (RFC 7413): a SYN with 100 bytes of data. The server
 * may take the data (its SYN+ACK acknowledges SYN and data) or not (no
 * cookie, a stale one: it acknowledges the SYN alone and the client sends
 * the data again after the handshake); both are valid, IPv4 and IPv6. An
 * acknowledgement before the SYN or past its data is not. */
static void test_tcp_fast_open(void **state)
{
	(void)state;
	for (int fam = 4; fam <= 6; fam += 2) {
		const uint8_t *a = fam == 4 ? A4 : A6, *b = fam == 4 ? B4 : B6;
		const uint32_t acks[4] = {CISN + 1, CISN + 101, CISN, CISN + 102};

		for (int k = 0; k < 4; k++) {
			struct ct_table *t = table(64);
			struct pk x;
			uint32_t flow;
			int valid;

			tcp(&x, fam, a, b, 1234, 80, SYN, CISN, 0, 65535, -1, 100);
			flow = create(t, &x, 10);
			tcp(&x, fam, b, a, 80, 1234, SYN | ACK, SISN, acks[k], 65535, -1, 0);
			step(t, &x, 10, &valid);
			assert_int_equal(valid, k < 2);
			if (k >= 2) {
				assert_string_equal(tstate(t, flow), "SYN_SENT");
				ct_destroy(t);
				continue;
			}
			/* the handshake's ACK, with the data when it was not
			 * taken, then the server's answer */
			tcp(&x, fam, a, b, 1234, 80, ACK | PSH, acks[k], SISN + 1, 1024, -1,
			    CISN + 101 - acks[k]);
			ok(t, &x, 11, flow, CT_DIR_ORIG);
			assert_string_equal(tstate(t, flow), "ESTABLISHED");
			tcp(&x, fam, b, a, 80, 1234, ACK | PSH, SISN + 1, CISN + 101, 65535, -1, 50);
			ok(t, &x, 11, flow, CT_DIR_REPLY);
			ct_destroy(t);
		}
	}
}

static void test_tcp_out_of_window(void **state)
{
	struct ct_table *t = table(64);
	uint32_t flow = handshake(t, 4, A4, B4, -1, -1, 65535, 100);
	uint64_t inv = invalid_count(t);
	struct pk x;
	int valid;

	(void)state;
	/* Ends beyond the window the server offered (ack + 65535). */
	tcp(&x, 4, A4, B4, 1234, 80, ACK, CISN + 1 + 70000, SISN + 1, 65535, -1, 100);
	step(t, &x, 101, &valid);
	assert_int_equal(valid, 0);
	/* More than a window behind. */
	tcp(&x, 4, A4, B4, 1234, 80, ACK, CISN + 1 - 200000, SISN + 1, 65535, -1, 100);
	step(t, &x, 101, &valid);
	assert_int_equal(valid, 0);
	/* Acknowledging data the server never sent. */
	tcp(&x, 4, A4, B4, 1234, 80, ACK, CISN + 1, SISN + 1 + 100000, 65535, -1, 0);
	step(t, &x, 101, &valid);
	assert_int_equal(valid, 0);
	assert_int_equal(invalid_count(t), inv + 3);
	/* None of them moved the windows: the in-window edge still passes,
	 * one byte past it still fails. */
	tcp(&x, 4, A4, B4, 1234, 80, ACK, CISN + 1 + 65535 - 100, SISN + 1, 65535, -1, 100);
	ok(t, &x, 102, flow, CT_DIR_ORIG);
	tcp(&x, 4, A4, B4, 1234, 80, ACK, CISN + 1 + 65535, SISN + 1, 65535, -1, 1);
	step(t, &x, 102, &valid);
	assert_int_equal(valid, 0);
	assert_string_equal(tstate(t, flow), "ESTABLISHED");
	ct_destroy(t);
}

static void test_tcp_rst(void **state)
{
	struct ct_table *t = table(64);
	uint32_t flow = handshake(t, 4, A4, B4, -1, -1, 65535, 100);
	struct ct_flow_info i;
	struct pk x;
	int valid;

	(void)state;
	/* A blind reset far outside the window is ignored. */
	tcp(&x, 4, B4, A4, 80, 1234, RST, SISN + 1 + 3000000, 0, 0, -1, 0);
	step(t, &x, 101, &valid);
	assert_int_equal(valid, 0);
	assert_string_equal(tstate(t, flow), "ESTABLISHED");
	/* Let the wheel file the flow under its far tcp_established time. */
	assert_int_equal(ct_expire(t, 130, 1000), 0);
	/* One inside it closes the flow, on the tcp_closing timeout: the
	 * shorter timeout moves it on the wheel, so it goes at 131 + 30. */
	tcp(&x, 4, B4, A4, 80, 1234, RST, SISN + 1 + 10, 0, 0, -1, 0);
	ok(t, &x, 131, flow, CT_DIR_REPLY);
	assert_string_equal(tstate(t, flow), "CLOSED");
	assert_int_equal(ct_flow_get(t, flow, &i), 0);
	assert_int_equal(i.expire, 131 + 30);
	assert_int_equal(ct_expire(t, 131 + 29, 1000), 0);
	assert_int_equal(ct_expire(t, 131 + 30, 1000), 1);
	ct_destroy(t);
}

/* The server offers a 512-byte window scaled by 2^7 = 64 KiB: a segment
 * 30000 bytes ahead is inside it only when scaling is honoured, and only
 * when both SYNs carried the option. */
static void test_tcp_window_scaling(void **state)
{
	(void)state;
	for (int both = 0; both <= 1; both++) {
		struct ct_table *t = table(64);
		uint32_t flow = handshake(t, 4, A4, B4, 7, both ? 7 : -1, 512, 100);
		struct pk x;
		int valid;

		tcp(&x, 4, B4, A4, 80, 1234, ACK, SISN + 1, CISN + 1, 512, -1, 0);
		ok(t, &x, 101, flow, CT_DIR_REPLY);
		tcp(&x, 4, A4, B4, 1234, 80, ACK, CISN + 1 + 30000, SISN + 1, 512, -1, 100);
		step(t, &x, 101, &valid);
		assert_int_equal(valid, both);
		/* The edge: exactly 512 << 7 bytes fit, one more does not. */
		tcp(&x, 4, A4, B4, 1234, 80, ACK, CISN + 1 + 65536 - 10, SISN + 1, 512, -1, 10);
		step(t, &x, 101, &valid);
		assert_int_equal(valid, both);
		tcp(&x, 4, A4, B4, 1234, 80, ACK, CISN + 1 + 65536 - 10, SISN + 1, 512, -1, 11);
		step(t, &x, 101, &valid);
		assert_int_equal(valid, 0);
		ct_destroy(t);
	}
}

/* A SYN's window is in bytes, later windows in scaled units: the SYN's
 * must not be shifted as if scaled. With Linux's defaults (SYN windows
 * of 64240 and 65160, a shift of 7, then windows of ~502 units) a reset
 * may come one window (~64 KiB) back, not 64240 << 7 (8 MB). Without
 * scaling on the other side, the SYN's window stays its bytes. */
static void test_tcp_syn_window_not_scaled(void **state)
{
	(void)state;
	for (int both = 0; both <= 1; both++) {
		struct ct_table *t = table(64);
		struct pk x;
		uint32_t flow;
		int valid;

		tcp(&x, 4, A4, B4, 1234, 80, SYN, CISN, 0, 64240, 7, 0);
		flow = create(t, &x, 100);
		tcp(&x, 4, B4, A4, 80, 1234, SYN | ACK, SISN, CISN + 1, 65160, both ? 7 : -1, 0);
		ok(t, &x, 100, flow, CT_DIR_REPLY);
		tcp(&x, 4, A4, B4, 1234, 80, ACK, CISN + 1, SISN + 1, 502, -1, 0);
		ok(t, &x, 100, flow, CT_DIR_ORIG);
		tcp(&x, 4, B4, A4, 80, 1234, ACK, SISN + 1, CISN + 1, 509, -1, 0);
		ok(t, &x, 100, flow, CT_DIR_REPLY);
		/* a blind reset a megabyte behind the client: refused */
		tcp(&x, 4, A4, B4, 1234, 80, RST, CISN + 1 - 1000000, 0, 0, -1, 0);
		step(t, &x, 101, &valid);
		assert_int_equal(valid, 0);
		tcp(&x, 4, B4, A4, 80, 1234, RST, SISN + 1 - 1000000, 0, 0, -1, 0);
		step(t, &x, 101, &valid);
		assert_int_equal(valid, 0);
		assert_string_equal(tstate(t, flow), "ESTABLISHED");
		/* a retransmission 60,000 bytes back is inside the window */
		tcp(&x, 4, A4, B4, 1234, 80, ACK, CISN + 1 - 60000, SISN + 1, 502, -1, 100);
		step(t, &x, 101, &valid);
		assert_int_equal(valid, 1);
		/* the server's too: without scaling the client's SYN window
		 * (64240 bytes) is that window */
		tcp(&x, 4, B4, A4, 80, 1234, ACK, SISN + 1 - 60000, CISN + 1, 509, -1, 100);
		step(t, &x, 101, &valid);
		assert_int_equal(valid, 1);
		ct_destroy(t);
	}
}

/* Simultaneous open (RFC 9293 3.5, figure 8; TCP hole punching through
 * NATs relies on it): both ends send a bare SYN, then each a SYN+ACK of
 * its own SYN; the flow becomes ESTABLISHED once both are acknowledged. */
static void test_tcp_simultaneous_open(void **state)
{
	struct ct_table *t = table(64);
	struct pk x;
	uint32_t flow;
	int valid;

	(void)state;
	tcp(&x, 4, A4, B4, 1234, 5678, SYN, CISN, 0, 65535, 7, 0);
	flow = create(t, &x, 100);
	tcp(&x, 4, B4, A4, 5678, 1234, SYN, SISN, 0, 64000, 7, 0);
	ok(t, &x, 100, flow, CT_DIR_REPLY);
	assert_string_equal(tstate(t, flow), "SYN_RECV");
	tcp(&x, 4, B4, A4, 5678, 1234, SYN, SISN, 0, 64000, 7, 0);	/* retransmitted */
	ok(t, &x, 100, flow, CT_DIR_REPLY);
	tcp(&x, 4, A4, B4, 1234, 5678, SYN | ACK, CISN, SISN + 1, 65535, 7, 0);
	ok(t, &x, 100, flow, CT_DIR_ORIG);
	assert_string_equal(tstate(t, flow), "SYN_RECV");	/* A's SYN not acked yet */
	tcp(&x, 4, B4, A4, 5678, 1234, SYN | ACK, SISN, CISN + 1, 64000, 7, 0);
	ok(t, &x, 100, flow, CT_DIR_REPLY);
	assert_string_equal(tstate(t, flow), "ESTABLISHED");
	tcp(&x, 4, A4, B4, 1234, 5678, ACK, CISN + 1, SISN + 1, 500, -1, 100);
	ok(t, &x, 101, flow, CT_DIR_ORIG);
	tcp(&x, 4, B4, A4, 5678, 1234, ACK, SISN + 1, CISN + 101, 500, -1, 100);
	ok(t, &x, 101, flow, CT_DIR_REPLY);
	/* still checked: data far outside the window is not taken */
	tcp(&x, 4, A4, B4, 1234, 5678, ACK, CISN + 1 + 10000000, SISN + 101, 500, -1, 100);
	step(t, &x, 101, &valid);
	assert_int_equal(valid, 0);
	ct_destroy(t);
}

static void test_udp_timeouts(void **state)
{
	struct ct_table *t = table(64);
	struct pk out, back;
	uint32_t flow;
	struct ct_result r;

	(void)state;
	udp(&out, 4, A4, B4, 5000, 53);
	udp(&back, 4, B4, A4, 53, 5000);
	/* One way: udp (30 s) after its last packet. */
	flow = create(t, &out, 1000);
	ok(t, &out, 1010, flow, CT_DIR_ORIG);
	assert_int_equal(look(t, &out, 1039).kind, CT_FOUND);
	assert_int_equal(ct_expire(t, 1039, 100), 0);
	r = look(t, &out, 1040);
	assert_int_equal(r.kind, CT_NEW);
	/* past its timeout but not reaped: the index still holds it, so a
	 * create must not skip its probe (it recycles the entry) */
	assert_int_equal(r.flags & CT_RF_ABSENT, 0);
	assert_int_equal(ct_expire(t, 1040, 100), 1);
	assert_int_equal(look(t, &out, 1040).flags, CT_RF_ABSENT);
	/* Both ways: udp_stream (180 s). */
	flow = create(t, &out, 2000);
	ok(t, &back, 2001, flow, CT_DIR_REPLY);
	assert_int_equal(look(t, &out, 2001 + 179).kind, CT_FOUND);
	assert_int_equal(ct_expire(t, 2001 + 179, 10000), 0);
	assert_int_equal(look(t, &back, 2001 + 180).kind, CT_NEW);
	assert_int_equal(ct_expire(t, 2001 + 180, 10000), 1);
	ct_destroy(t);
}

static void test_icmp_echo(void **state)
{
	(void)state;
	for (int fam = 4; fam <= 6; fam += 2) {
		struct ct_table *t = table(64);
		const uint8_t *a = fam == 4 ? A4 : A6, *b = fam == 4 ? B4 : B6;
		struct pk req, rep, other;
		uint32_t flow;
		struct ct_result r;

		echo(&rep, fam, b, a, 0, 77);
		r = look(t, &rep, 10);	/* a reply nobody asked for */
		assert_int_equal(r.kind, CT_INVALID);
		echo(&req, fam, a, b, 1, 77);
		flow = create(t, &req, 10);
		ok(t, &rep, 10, flow, CT_DIR_REPLY);
		assert_false(ct_flow_nat(t, flow));
		echo(&other, fam, b, a, 0, 78);	/* another identifier */
		assert_int_equal(look(t, &other, 10).kind, CT_INVALID);
		ct_destroy(t);
	}
}

static void test_icmp_related(void **state)
{
	(void)state;
	for (int fam = 4; fam <= 6; fam += 2) {
		struct ct_table *t = table(64);
		const uint8_t *a = fam == 4 ? A4 : A6, *b = fam == 4 ? B4 : B6;
		const uint8_t *rt = fam == 4 ? R4 : R6;
		uint8_t unreach = fam == 4 ? 3 : 1, toobig = fam == 4 ? 3 : 2;
		uint32_t flow = handshake(t, fam, a, b, -1, -1, 65535, 100), uflow;
		struct pk data, err, stranger, u, back;
		struct ct_result r;
		int valid;

		/* A router on the way reports the client's segment. */
		tcp(&data, fam, a, b, 1234, 80, ACK, CISN + 1, SISN + 1, 100, -1, 0);
		icmp_error(&err, fam, rt, a, toobig, fam == 4 ? 4 : 0, &data);
		r = step(t, &err, 101, &valid);
		assert_int_equal(r.kind, CT_RELATED);
		assert_int_equal(r.state, RFW_STATE_RELATED);
		assert_int_equal(r.flow, flow);
		assert_int_equal(r.dir, CT_DIR_REPLY);
		assert_int_equal(valid, 1);
		assert_string_equal(tstate(t, flow), "ESTABLISHED");
		/* A quoted segment outside the client's window: forged. */
		tcp(&data, fam, a, b, 1234, 80, ACK, CISN + 1 + 4000000, SISN + 1, 100, -1, 0);
		icmp_error(&stranger, fam, rt, a, toobig, fam == 4 ? 4 : 0, &data);
		assert_int_equal(look(t, &stranger, 101).kind, CT_INVALID);
		/* The same about a segment of another connection: not related. */
		tcp(&data, fam, a, b, 1235, 80, ACK, CISN + 1, SISN + 1, 100, -1, 0);
		icmp_error(&stranger, fam, rt, a, unreach, 1, &data);
		r = look(t, &stranger, 101);
		assert_int_equal(r.kind, CT_INVALID);
		assert_int_equal(r.state, RFW_STATE_INVALID);
		/* An error sent to the wrong host: not related either. */
		tcp(&data, fam, a, b, 1234, 80, ACK, CISN + 1, SISN + 1, 100, -1, 0);
		icmp_error(&stranger, fam, rt, b, unreach, 1, &data);
		assert_int_equal(look(t, &stranger, 101).kind, CT_INVALID);
		/* UDP: the server's port is closed, reported by the server. */
		udp(&u, fam, a, b, 4000, 9999);
		uflow = create(t, &u, 101);
		icmp_error(&err, fam, b, a, unreach, fam == 4 ? 3 : 4, &u);
		r = look(t, &err, 101);
		assert_int_equal(r.kind, CT_RELATED);
		assert_int_equal(r.flow, uflow);
		/* ...and an error about a reply goes the original way. */
		udp(&back, fam, b, a, 9999, 4000);
		icmp_error(&err, fam, rt, b, unreach, 1, &back);
		r = look(t, &err, 101);
		assert_int_equal(r.kind, CT_RELATED);
		assert_int_equal(r.dir, CT_DIR_ORIG);
		/* A truncated quote is not parsed past its end. */
		err.m.l4_off = (uint16_t)(err.len - 6);
		assert_int_equal(look(t, &err, 101).kind, CT_INVALID);
		/* A quote of the segment's ports only (4 bytes, not RFC 792's
		 * 8): its sequence number cannot be checked, so not related,
		 * whatever lies past the packet (here the number that would
		 * pass). */
		tcp(&data, fam, a, b, 1234, 80, ACK, CISN + 1, SISN + 1, 100, -1, 0);
		{
			uint8_t l4[100] = {0};
			uint32_t iplen = fam == 4 ? 20 : 40;

			l4[0] = toobig;
			l4[1] = fam == 4 ? 4 : 0;
			memcpy(l4 + 8, data.b + 14, iplen + 4);
			ip(&err, fam, rt, a, fam == 4 ? ICMP : ICMP6, l4, 8 + iplen + 4, 0, 0, 0);
			put32(err.b + err.len, CISN + 1);
			parse(&err);
			assert_int_equal(look(t, &err, 101).kind, CT_INVALID);
		}
		ct_destroy(t);
	}
}

static void frag4(struct pk *x, uint16_t id, uint16_t fragfield, uint16_t sp, uint16_t dp)
{
	uint8_t l4[24] = {0};

	put16(l4, sp);
	put16(l4 + 2, dp);
	put16(l4 + 4, 200);
	ip(x, 4, A4, B4, UDP, l4, sizeof(l4), id, fragfield, 0);
}

static void test_fragments(void **state)
{
	struct ct_table *t = table(64);
	struct pk first, rest, other, early;
	struct ct_result r;
	struct ct_stats s;
	uint32_t flow;
	int valid;

	(void)state;
	frag4(&first, 77, 0x2000, 5000, 6000);		/* MF, offset 0 */
	assert_int_equal(first.m.fragment, 1);
	frag4(&rest, 77, 3, 0, 0);			/* offset 24 bytes, last */
	assert_int_equal(rest.m.fragment, 2);
	/* A non-first fragment before its first: dropped, counted. */
	r = look(t, &rest, 10);
	assert_int_equal(r.kind, CT_FRAG_ORPHAN);
	assert_int_equal(r.state, RFW_STATE_INVALID);
	/* The first is accepted: the rest follow its flow and rule. */
	flow = create(t, &first, 10);
	ct_frag_accept(t, &first.p, flow, CT_DIR_ORIG, 7, 10);
	r = step(t, &rest, 11, &valid);
	assert_int_equal(r.kind, CT_FRAG);
	assert_int_equal(r.flow, flow);
	assert_int_equal(r.dir, CT_DIR_ORIG);
	assert_int_equal(r.rule, 7);
	assert_int_equal(valid, 1);
	/* Another datagram's fragment does not. */
	frag4(&other, 78, 3, 0, 0);
	assert_int_equal(look(t, &other, 11).kind, CT_FRAG_ORPHAN);
	/* Nor does this one once the fragment timeout has passed. */
	assert_int_equal(look(t, &rest, 10 + CT_FRAG_TIMEOUT).kind, CT_FRAG_ORPHAN);
	/* A first fragment accepted by a stateless rule: no flow, its rule. */
	frag4(&early, 90, 0x2000, 1, 2);
	ct_frag_accept(t, &early.p, CT_NONE, CT_DIR_ORIG, 3, 20);
	frag4(&early, 90, 3, 0, 0);
	r = look(t, &early, 20);
	assert_int_equal(r.kind, CT_FRAG);
	assert_int_equal(r.flow, CT_NONE);
	assert_int_equal(r.rule, 3);
	ct_get_stats(t, &s);
	assert_int_equal(s.frag_orphan, 3);
	assert_int_equal(s.frag_hit, 2);

	/* IPv6: the id comes from the fragment header. */
	{
		uint8_t l4[16] = {0};
		struct pk f6, r6;

		put16(l4, 7000);
		put16(l4 + 2, 8000);
		ip(&f6, 6, A6, B6, UDP, l4, sizeof(l4), 0xabcdef, 1, 1);
		assert_int_equal(f6.m.fragment, 1);
		flow = create(t, &f6, 30);
		ct_frag_accept(t, &f6.p, flow, CT_DIR_ORIG, 7, 30);
		ip(&r6, 6, A6, B6, UDP, l4, sizeof(l4), 0xabcdef, 2 << 3, 1);
		assert_int_equal(r6.m.fragment, 2);
		r = look(t, &r6, 30);
		assert_int_equal(r.kind, CT_FRAG);
		assert_int_equal(r.flow, flow);
		ip(&r6, 6, A6, B6, UDP, l4, sizeof(l4), 0xabcdee, 2 << 3, 1);
		assert_int_equal(look(t, &r6, 30).kind, CT_FRAG_ORPHAN);
		/* Once the flow is gone its fragments do not follow it, even
		 * when another flow took its entry. */
		ct_remove(t, flow);
		udp(&f6, 4, B4, A4, 1, 2);
		assert_int_equal(ct_create_flow(t, &f6.p, NULL, 1, 30, &r.flow), CT_CREATED);
		assert_int_equal(r.flow, flow);
		ip(&r6, 6, A6, B6, UDP, l4, sizeof(l4), 0xabcdef, 2 << 3, 1);
		assert_int_equal(look(t, &r6, 30).kind, CT_FRAG_ORPHAN);
	}
	{	/* IPv6 with a destination options header in the fragmentable
		 * part (RFC 8200 4.1): the first fragment's upper layer is UDP,
		 * the others' fragment headers name the options header; they
		 * are one datagram all the same */
		uint8_t l4[24] = {UDP, 0, 1, 4}, rest6[16] = {0};	/* PadN */
		struct pk f6, r6;

		put16(l4 + 8, 7001);
		put16(l4 + 10, 8001);
		ip(&f6, 6, A6, B6, 60, l4, sizeof(l4), 0x5151, 1, 1);
		assert_int_equal(f6.m.fragment, 1);
		assert_int_equal(f6.m.key.proto, UDP);
		flow = create(t, &f6, 30);
		ct_frag_accept(t, &f6.p, flow, CT_DIR_ORIG, 7, 30);
		ip(&r6, 6, A6, B6, 60, rest6, sizeof(rest6), 0x5151, 3 << 3, 1);
		assert_int_equal(r6.m.fragment, 2);
		r = look(t, &r6, 30);
		assert_int_equal(r.kind, CT_FRAG);
		assert_int_equal(r.flow, flow);
		ct_frag_forget(t, &f6.p);
		assert_int_equal(look(t, &r6, 30).kind, CT_FRAG_ORPHAN);
	}
	{	/* ... and a later fragment must not start inside the first's
		 * TCP header behind that options header (RFC 1858: it would
		 * rewrite the ports or flags the rules judged): the parser
		 * sees only the options header named, so conntrack checks it
		 * against where the first's header was (bytes 8-27 of the
		 * fragmentable part) */
		uint8_t l4[32] = {UDP, 0, 1, 4}, rest6[16] = {0};
		struct pk f6, r6;
		struct ct_stats before, after;

		l4[0] = TCP;
		put16(l4 + 8, 7002);
		put16(l4 + 10, 22);
		l4[8 + 12] = 5 << 4;
		l4[8 + 13] = 0x02;	/* SYN */
		ip(&f6, 6, A6, B6, 60, l4, sizeof(l4), 0x5252, 1, 1);
		assert_int_equal(f6.m.key.proto, TCP);
		flow = create(t, &f6, 30);
		ct_frag_accept(t, &f6.p, flow, CT_DIR_ORIG, 7, 30);
		ct_get_stats(t, &before);
		for (uint16_t at = 1; at <= 3; at++) {	/* bytes 8, 16, 24 */
			ip(&r6, 6, A6, B6, 60, rest6, sizeof(rest6), 0x5252, (uint16_t)(at << 3), 1);
			assert_int_equal(r6.m.fragment, 2);
			r = look(t, &r6, 30);
			assert_int_equal(r.kind, CT_FRAG_OVERLAP);
			assert_int_equal(r.state, RFW_STATE_INVALID);
		}
		ct_get_stats(t, &after);
		assert_int_equal(after.frag_overlap - before.frag_overlap, 3);
		ip(&r6, 6, A6, B6, 60, rest6, sizeof(rest6), 0x5252, 4 << 3, 1);
		r = look(t, &r6, 30);
		assert_int_equal(r.kind, CT_FRAG);
		assert_int_equal(r.flow, flow);
		/* without the options header the parser itself refuses such
		 * a fragment: an IPv4 one at byte 8 of a TCP datagram */
		frag4(&r6, 1, 1, 0, 0);
		r6.b[14 + 9] = TCP;
		put16(r6.b + 14 + 10, 0);
		put16(r6.b + 14 + 10, csum_ipv4_header(r6.b + 14));
		assert_int_equal(pkt_parse(r6.b, r6.len, &r6.m), PKT_MALFORMED);
		assert_int_equal(r6.m.reason, PKT_ERR_FRAG_OVERLAP);
	}
	{	/* ... nor when a flow between the same two hosts took it (an
		 * evicted query's entry, the next query's: its translation is
		 * not this datagram's) */
		struct pk first, rest, b;
		uint32_t fa, fb;

		frag4(&first, 77, 0x2000, 5000, 6000);
		fa = create(t, &first, 40);
		ct_frag_accept(t, &first.p, fa, CT_DIR_ORIG, 7, 40);
		frag4(&rest, 77, 3, 0, 0);
		assert_int_equal(look(t, &rest, 41).kind, CT_FRAG);
		ct_remove(t, fa);
		udp(&b, 4, A4, B4, 1111, 2222);
		assert_int_equal(ct_create_flow(t, &b.p, NULL, 9, 40, &fb), CT_CREATED);
		assert_int_equal(fb, fa);
		assert_int_equal(look(t, &rest, 41).kind, CT_FRAG_ORPHAN);
	}
	{	/* a large ping: its flow is keyed by the echo's identifier */
		uint8_t l4[24] = {8, 0, 0, 0, 0x42, 0x42, 0, 1};
		struct pk first, rest;
		uint32_t fp;
		struct ct_result r;

		ip(&first, 4, A4, B4, ICMP, l4, sizeof(l4), 91, 0x2000, 0);
		fp = create(t, &first, 50);
		ct_frag_accept(t, &first.p, fp, CT_DIR_ORIG, 7, 50);
		ip(&rest, 4, A4, B4, ICMP, l4, sizeof(l4), 91, 3, 0);
		r = look(t, &rest, 51);
		assert_int_equal(r.kind, CT_FRAG);
		assert_int_equal(r.flow, fp);
		/* another first with its id (the sender's ids came round):
		 * the entry is forgotten, the rest follow that first or none */
		ip(&first, 4, A4, B4, ICMP, l4, sizeof(l4), 91, 0x2000, 0);
		ct_frag_forget(t, &rest.p);	/* not a first: nothing */
		assert_int_equal(look(t, &rest, 51).kind, CT_FRAG);
		ct_frag_forget(t, &first.p);
		assert_int_equal(look(t, &rest, 51).kind, CT_FRAG_ORPHAN);
	}
	ct_destroy(t);
}

/* Flow i of a synthetic population: distinct (src, sport). */
static void flow_pkt(struct pk *x, uint32_t i, int reply)
{
	uint8_t s[16] = {10, (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i};
	uint16_t sp = (uint16_t)(1024 + (i % 50000));

	if (reply)
		udp(x, 4, B4, s, 53, sp);
	else
		udp(x, 4, s, B4, sp, 53);
}

static void test_expiry_bounded(void **state)
{
	const uint32_t n = 100000, budget = 64;
	struct ct_table *t = table(n);
	struct ct_stats s;
	struct pk x;
	uint32_t flow, calls = 0, total = 0;

	(void)state;
	/* Half created at 1000, half at 1010: two expiry times. */
	for (uint32_t i = 0; i < n; i++) {
		flow_pkt(&x, i, 0);
		assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, i < n / 2 ? 1000 : 1010, &flow),
				 CT_CREATED);
	}
	/* Not before: one second early nothing goes, however much work. */
	assert_int_equal(ct_expire(t, 1029, 1u << 30), 0);
	ct_get_stats(t, &s);
	assert_int_equal(s.in_use, n);
	/* At 1030 exactly the first half goes, budget by budget. */
	for (;;) {
		uint32_t got = ct_expire(t, 1030, budget);

		assert_true(got <= budget);
		total += got;
		calls++;
		if (!got && total >= n / 2)
			break;
		assert_true(calls < 10 * n);
	}
	assert_int_equal(total, n / 2);
	assert_true(calls >= n / 2 / budget);
	flow_pkt(&x, 0, 0);
	assert_int_equal(look(t, &x, 1030).kind, CT_NEW);
	flow_pkt(&x, n - 1, 0);
	assert_int_equal(look(t, &x, 1030).kind, CT_FOUND);
	assert_int_equal(ct_expire(t, 1039, 1u << 30), 0);
	while (ct_expire(t, 1040, budget))
		;
	ct_get_stats(t, &s);
	assert_int_equal(s.in_use, 0);
	assert_int_equal(s.expired, n);
	/* All entries are back: the table fills again completely. */
	for (uint32_t i = 0; i < n; i++) {
		flow_pkt(&x, i, 1);
		assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, 2000, &flow), CT_CREATED);
	}
	ct_destroy(t);
}

static void test_long_timeout_wraps_wheel(void **state)
{
	struct ct_table *t = table(8);
	struct pk x;
	uint32_t flow;

	(void)state;
	/* tcp_established (86400 s) is longer than the wheel: the flow goes
	 * round many times and is reaped only at its time. */
	flow = handshake(t, 4, A4, B4, -1, -1, 65535, 0);
	for (uint32_t now = 0; now < 86400; now += 97)
		assert_int_equal(ct_expire(t, now, 100000), 0);
	assert_int_equal(ct_expire(t, 86399, 100000), 0);
	tcp(&x, 4, A4, B4, 1234, 80, ACK, CISN + 1, SISN + 1, 100, -1, 0);
	assert_int_equal(look(t, &x, 86399).flow, flow);
	assert_int_equal(ct_expire(t, 86400, 100000), 1);
	ct_destroy(t);
}

/* A table full of flows that are not done refuses a new one (all touched
 * this second); one past its timeout makes room before ct_expire reached
 * it. */
static void test_full_table(void **state)
{
	struct ct_table *t = table(8);
	struct ct_stats s;
	struct pk x;
	uint32_t flow, f3 = CT_NONE;

	(void)state;
	for (uint32_t i = 0; i < 8; i++) {
		flow_pkt(&x, i, 0);
		assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, 100, &flow), CT_CREATED);
		flow_pkt(&x, i, 1);	/* answered, and touched this second */
		ok(t, &x, 100, flow, CT_DIR_REPLY);
		f3 = i == 3 ? flow : f3;
	}
	flow_pkt(&x, 8, 0);
	assert_int_equal(look(t, &x, 100).kind, CT_NEW);
	assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, 100, &flow), CT_REFUSED_FULL);
	assert_int_equal(flow, CT_NONE);
	/* A packet of a flow already there is still fine. */
	flow_pkt(&x, 3, 0);
	assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, 100, &flow), CT_EXISTS);
	ct_get_stats(t, &s);
	assert_int_equal(s.refused_full, 1);
	assert_int_equal(s.evicted, 0);
	assert_int_equal(s.in_use, 8);
	/* Flows past their timeout (udp_stream, 180 s) make room even before
	 * ct_expire reached them: a full table reaps a little first. */
	flow_pkt(&x, 3, 0);
	ok(t, &x, 200, f3, CT_DIR_ORIG);
	assert_int_equal(ct_expire(t, 279, 1000), 0);
	flow_pkt(&x, 8, 0);
	assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, 280, &flow), CT_CREATED);
	flow_pkt(&x, 3, 0);
	assert_int_equal(look(t, &x, 280).kind, CT_FOUND);	/* still live */
	ct_get_stats(t, &s);
	assert_int_equal(s.refused_full, 1);
	assert_true(s.expired >= 1);
	ct_destroy(t);
}

/* Early drop: a table full of flows that were never answered (a SYN or
 * UDP flood to an open port) takes a new flow by evicting one of them;
 * established TCP connections and answered flows are never the one. */
static void test_full_table_early_drop(void **state)
{
	struct ct_table *t = table(8);
	struct ct_stats s;
	struct pk x;
	uint32_t flow, est, answered;

	(void)state;
	est = handshake(t, 4, A4, B4, -1, -1, 65535, 100);
	flow_pkt(&x, 1000, 0);	/* a UDP exchange: two packets each way */
	answered = create(t, &x, 100);
	flow_pkt(&x, 1000, 1);
	ok(t, &x, 100, answered, CT_DIR_REPLY);
	flow_pkt(&x, 1000, 0);
	ok(t, &x, 100, answered, CT_DIR_ORIG);
	flow_pkt(&x, 1000, 1);
	ok(t, &x, 100, answered, CT_DIR_REPLY);
	for (uint32_t i = 0; i < 6; i++) {	/* half-open: SYN, no answer */
		tcp(&x, 4, A4, B4, (uint16_t)(2000 + i), 443, SYN, CISN, 0, 65535, -1, 0);
		create(t, &x, 100);
	}
	ct_get_stats(t, &s);
	assert_int_equal(s.in_use, 8);
	/* 40 more SYNs and UDP flows, two a second (all within their 30 s):
	 * each evicts one made in an earlier second */
	for (uint32_t i = 0; i < 40; i++) {
		if (i & 1)
			tcp(&x, 4, A4, B4, (uint16_t)(3000 + i), 443, SYN, CISN, 0, 65535, -1, 0);
		else
			flow_pkt(&x, 2000 + i, 0);
		assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, 101 + i / 2, &flow), CT_CREATED);
	}
	ct_get_stats(t, &s);
	assert_int_equal(s.in_use, 8);
	assert_int_equal(s.evicted, 40);
	assert_int_equal(s.refused_full, 0);
	/* In one second (one burst's `now`): the 6 older half-open flows
	 * go, then the ones made this second are not evicted (the pipeline
	 * may still hold them): refused. */
	for (uint32_t i = 0; i < 6; i++) {
		tcp(&x, 4, A4, B4, (uint16_t)(5000 + i), 443, SYN, CISN, 0, 65535, -1, 0);
		assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, 121, &flow), CT_CREATED);
	}
	tcp(&x, 4, A4, B4, 5006, 443, SYN, CISN, 0, 65535, -1, 0);
	assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, 121, &flow), CT_REFUSED_FULL);
	ct_get_stats(t, &s);
	assert_int_equal(s.evicted, 46);
	assert_int_equal(s.refused_full, 1);
	/* the established connection and the answered flow are still there */
	tcp(&x, 4, A4, B4, 1234, 80, ACK, CISN + 1, SISN + 1, 1024, -1, 0);
	ok(t, &x, 122, est, CT_DIR_ORIG);
	flow_pkt(&x, 1000, 0);
	ok(t, &x, 122, answered, CT_DIR_ORIG);
	ct_destroy(t);

	/* A request and its one answer (a spoofed flood a server answers)
	 * is done: evicted like an unanswered one. */
	t = table(8);
	for (uint32_t i = 0; i < 8; i++) {
		flow_pkt(&x, i, 0);
		flow = create(t, &x, 100);
		flow_pkt(&x, i, 1);
		ok(t, &x, 100, flow, CT_DIR_REPLY);
	}
	flow_pkt(&x, 8, 0);
	assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, 101, &flow), CT_CREATED);
	ct_get_stats(t, &s);
	assert_int_equal(s.evicted, 1);
	ct_destroy(t);
}

/* A reload's new timeouts (ct_set_timeouts) between two bursts of one
 * second: a flow made by the first burst was made this second all the
 * same, and a full table must not evict it for a new flow of the
 * second burst. Early drop told a flow made this second by its expiry
 * minus its timeout, which after the change is not when it was made: the
 * flow went. In a later second it may go, and with a timeout changed more
 * than once in a second, none goes in that second. */
static void test_early_drop_after_timeout_change(void **state)
{
	struct ct_config c = cfg(1);
	uint32_t to[RFW_TIMEOUT_COUNT], flow, first;
	struct ct_table *t;
	struct ct_stats s;
	struct pk x;

	(void)state;
	for (int change = 0; change < 3; change++) {
		t = table(1);		/* two buckets: early drop looks at both */
		flow_pkt(&x, 0, 0);
		first = create(t, &x, 100);
		memcpy(to, c.timeout, sizeof(to));
		to[RFW_TIMEOUT_UDP] = change == 1 ? 10 : 60;	/* longer, shorter */
		ct_set_timeouts(t, to, 100);
		if (change == 2) {	/* twice in the second */
			to[RFW_TIMEOUT_UDP] = 45;
			ct_set_timeouts(t, to, 100);
		}
		flow_pkt(&x, 1, 0);
		assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, 100, &flow), CT_REFUSED_FULL);
		ct_get_stats(t, &s);
		assert_int_equal(s.evicted, 0);
		/* the next second it may go; the new flow's own second protects it */
		assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, 101, &flow), CT_CREATED);
		assert_int_equal(flow, first);	/* its entry, the only one */
		flow_pkt(&x, 2, 0);
		assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, 101, &flow), CT_REFUSED_FULL);
		ct_get_stats(t, &s);
		assert_int_equal(s.evicted, 1);
		ct_destroy(t);
	}
}

static void test_nat_reply_tuple(void **state)
{
	(void)state;
	for (int fam = 4; fam <= 6; fam += 2) {
		struct ct_table *t = table(4);
		const uint8_t *a = fam == 4 ? A4 : A6, *b = fam == 4 ? B4 : B6;
		const uint8_t *n = fam == 4 ? N4 : N6;
		struct pk out, back, plain;
		struct pkt_key reply;
		struct ct_flow_info i;
		struct ct_stats s;
		uint32_t flow, f2;

		/* SNAT: a:5000 leaves as n:40000, replies come to n:40000. */
		udp(&out, fam, a, b, 5000, 53);
		memset(&reply, 0, sizeof(reply));
		memcpy(reply.src, b, 16);
		memcpy(reply.dst, n, 16);
		if (fam == 4) {	/* past an IPv4 address a caller's key may hold anything */
			memset(reply.src + 4, 0xee, 12);
			memset(reply.dst + 4, 0x77, 12);
		}
		reply.family = (uint8_t)fam;
		reply.proto = UDP;
		reply.sport = 53;
		reply.dport = 40000;
		assert_int_equal(ct_create_flow(t, &out.p, &reply, 2, 10, &flow), CT_CREATED);
		udp(&back, fam, b, n, 53, 40000);
		ok(t, &back, 11, flow, CT_DIR_REPLY);
		udp(&plain, fam, b, a, 53, 5000);	/* the untranslated reverse */
		assert_int_equal(look(t, &plain, 11).kind, CT_NEW);
		assert_int_equal(ct_flow_get(t, flow, &i), 0);
		assert_memory_equal(i.reply.dst, n, fam == 4 ? 4 : 16);
		assert_int_equal(i.reply.dport, 40000);
		assert_true(ct_flow_nat(t, flow));
		ct_flow_tuple(t, flow, CT_DIR_REPLY, &reply);
		assert_memory_equal(reply.dst, n, 16);
		assert_memory_equal(reply.src, b, 16);
		assert_int_equal(reply.sport, 53);
		ct_flow_tuple(t, flow, CT_DIR_ORIG, &reply);
		assert_memory_equal(reply.src, a, 16);
		assert_int_equal(reply.sport, 5000);
		/* IPv6 NAT uses a second entry; removal returns both. */
		ct_remove(t, flow);
		for (uint32_t k = 0; k < 4; k++) {
			flow_pkt(&out, k, 0);
			assert_int_equal(ct_create_flow(t, &out.p, NULL, 1, 12, &f2), CT_CREATED);
		}
		ct_get_stats(t, &s);
		assert_int_equal(s.in_use, 4);
		ct_destroy(t);
	}
}

struct listing {
	uint32_t count;
	uint64_t packets;
};

static int count_flow(const struct ct_flow_info *i, void *arg)
{
	struct listing *l = arg;

	l->count++;
	l->packets += i->packets[0] + i->packets[1];
	return 0;
}

static void test_foreach_and_other(void **state)
{
	struct ct_table *t = table(16);
	struct listing l = {0};
	uint8_t body[8] = {0};
	struct pk gre, back;
	uint32_t flow;
	struct ct_flow_info i;

	(void)state;
	ip(&gre, 4, A4, B4, GRE, body, sizeof(body), 0, 0, 0);
	flow = create(t, &gre, 50);
	ip(&back, 4, B4, A4, GRE, body, sizeof(body), 0, 0, 0);
	ok(t, &back, 51, flow, CT_DIR_REPLY);
	assert_int_equal(ct_flow_get(t, flow, &i), 0);
	assert_int_equal(i.expire, 51 + 60);		/* other */
	assert_int_equal(i.bytes[CT_DIR_REPLY], back.len);
	handshake(t, 4, A4, B4, -1, -1, 65535, 50);
	ct_foreach(t, count_flow, &l);
	assert_int_equal(l.count, 2);
	assert_int_equal(l.packets, 2 + 3);
	ct_destroy(t);
}

static void test_batch_lookup(void **state)
{
	const uint32_t n = 200;
	struct ct_table *t = table(1000);
	struct pk *x = calloc(n, sizeof(*x));
	struct ct_pkt *p = calloc(n, sizeof(*p));
	struct ct_result *r = calloc(n, sizeof(*r));
	uint32_t flow;

	(void)state;
	for (uint32_t i = 0; i < n; i++) {
		flow_pkt(&x[i], i, 0);
		if (i % 2 == 0)
			assert_int_equal(ct_create_flow(t, &x[i].p, NULL, 1, 5, &flow), CT_CREATED);
		if (i % 4 == 0)
			flow_pkt(&x[i], i, 1);	/* replies */
		p[i] = x[i].p;
	}
	ct_lookup_batch(t, p, n, 6, r);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(r[i].kind, i % 2 == 0 ? CT_FOUND : CT_NEW);
		if (i % 2 == 0)
			assert_int_equal(r[i].dir, i % 4 == 0 ? CT_DIR_REPLY : CT_DIR_ORIG);
	}
	free(x);
	free(p);
	free(r);
	ct_destroy(t);
}

/* The reply tuple of a flow to B4:53 SNATed to N4:port. */
static void snat_reply(struct pkt_key *rk, uint16_t port)
{
	memset(rk, 0, sizeof(*rk));
	memcpy(rk->src, B4, 4);
	memcpy(rk->dst, N4, 4);
	rk->family = 4;
	rk->proto = UDP;
	rk->sport = 53;
	rk->dport = port;
}

/* Flow id i's packet in one direction; odd ids are SNATed to N4:2000+i,
 * so their replies come to that tuple. */
static void churn_pkt(struct pk *x, uint32_t i, int reply)
{
	if (reply && (i & 1))
		udp(x, 4, B4, N4, 53, (uint16_t)(2000 + i));
	else
		flow_pkt(x, i, reply);
}

/* Ten flows in a table of two buckets: nearly every insert, lookup and
 * removal walks past its home bucket, and removals must keep the
 * overflow counts right or later lookups stop early. Each step is
 * checked against a model, in both directions, by batch lookups. */
static void test_index_churn(void **state)
{
	enum { N = 10, IDS = 24 };
	struct ct_table *t = table(N);
	struct pk *x = calloc(2 * IDS, sizeof(*x));
	struct ct_pkt p[2 * IDS];
	struct ct_result r[2 * IDS];
	uint32_t flow_of[IDS], live = 0;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	struct ct_stats s;

	(void)state;
	for (uint32_t i = 0; i < IDS; i++) {
		flow_of[i] = CT_NONE;
		churn_pkt(&x[2 * i], i, 0);
		churn_pkt(&x[2 * i + 1], i, 1);
		p[2 * i] = x[2 * i].p;
		p[2 * i + 1] = x[2 * i + 1].p;
	}
	for (uint32_t round = 0; round < 3000; round++) {
		uint32_t i, flow;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		i = (uint32_t)(rng % IDS);
		if (flow_of[i] != CT_NONE) {
			ct_remove(t, flow_of[i]);
			flow_of[i] = CT_NONE;
			live--;
		} else if (live < N) {
			struct pkt_key rk;
			struct ct_create_hint hint;

			snat_reply(&rk, (uint16_t)(2000 + i));
			/* half the creates take the prefetch's hashes: the
			 * lookups below find them only if those are right */
			ct_create_prefetch(t, &x[2 * i].p, (i & 1) ? &rk : NULL, &hint);
			assert_int_equal(hint.valid, 1);
			assert_int_equal(ct_create_flow_hinted(t, &x[2 * i].p, (i & 1) ? &rk : NULL,
							       1, 10, &flow, (i & 2) ? &hint : NULL),
					 CT_CREATED);
			flow_of[i] = flow;
			live++;
		}
		ct_lookup_batch(t, p, 2 * IDS, 11, r);
		for (uint32_t j = 0; j < 2 * IDS; j++) {
			uint32_t id = j / 2;

			assert_int_equal(r[j].kind, flow_of[id] != CT_NONE ? CT_FOUND : CT_NEW);
			assert_int_equal(r[j].flow, flow_of[id]);
			if (flow_of[id] != CT_NONE)
				assert_int_equal(r[j].dir, j & 1);
		}
	}
	ct_get_stats(t, &s);
	assert_int_equal(s.in_use, live);
	assert_true(s.created > 500);
	free(x);
	ct_destroy(t);
}

/* The per-packet key shortcut (one copy of the parsed key) leaves no
 * stale ports where a protocol has none: ICMP echo takes its id, other
 * protocols and non-first fragments none, whatever pkt_key held. */
static void test_key_ports_cleared(void **state)
{
	struct ct_table *t = table(16);
	struct pk a, b;
	uint32_t flow;

	(void)state;
	ip(&a, 4, A4, B4, GRE, (const uint8_t[8]){0}, 8, 1, 0, 0);
	parse(&a);
	a.m.key.sport = 1111;	/* whatever a parser left there */
	a.m.key.dport = 2222;
	assert_int_equal(ct_create_flow(t, &a.p, NULL, 1, 10, &flow), CT_CREATED);
	ip(&b, 4, A4, B4, GRE, (const uint8_t[8]){0}, 8, 2, 0, 0);
	parse(&b);
	assert_int_equal(look(t, &b, 11).kind, CT_FOUND);
	assert_int_equal(look(t, &b, 11).flow, flow);
	echo(&a, 4, A4, B4, 1, 77);
	a.m.key.sport = 3333;
	assert_int_equal(ct_create_flow(t, &a.p, NULL, 1, 10, &flow), CT_CREATED);
	echo(&b, 4, B4, A4, 0, 77);
	assert_int_equal(look(t, &b, 11).flow, flow);
	ct_destroy(t);
}

/* test_track_batch's and test_find4_batch's table and packets: a plain
 * UDP flow (rule 3), a SNATed one (rule 4) and a TCP connection; then
 * plain orig, NAT reply, a new flow, an in-window and an out-of-window
 * segment of the TCP flow, a stray segment. */
struct batch_case {
	struct pk x[6];
	uint32_t plain, nat, tflow;
	struct ct_table *t;
};

static struct ct_table *batch_case_make(struct batch_case *c)
{
	struct pkt_key rk;
	struct pk *x = c->x;

	c->t = table(64);
	flow_pkt(&x[0], 1, 0);
	assert_int_equal(ct_create_flow(c->t, &x[0].p, NULL, 3, 10, &c->plain), CT_CREATED);
	flow_pkt(&x[1], 2, 0);
	snat_reply(&rk, 40000);
	assert_int_equal(ct_create_flow(c->t, &x[1].p, &rk, 4, 10, &c->nat), CT_CREATED);
	c->tflow = handshake(c->t, 4, A4, B4, -1, -1, 65535, 10);
	flow_pkt(&x[0], 1, 0);
	udp(&x[1], 4, B4, N4, 53, 40000);
	flow_pkt(&x[2], 3, 0);
	tcp(&x[3], 4, A4, B4, 1234, 80, ACK, CISN + 1, SISN + 1, 100, -1, 0);
	tcp(&x[4], 4, A4, B4, 1234, 80, ACK, CISN + 900000000u, SISN + 1, 100, -1, 0);
	tcp(&x[5], 4, A4, R4, 1, 2, ACK, 5, 5, 100, -1, 0);
	return c->t;
}

/* accounted at 11 as ct_update would: counters, reply seen, timeouts */
static void batch_case_accounted(const struct batch_case *c)
{
	struct ct_flow_info fi;

	assert_int_equal(ct_flow_get(c->t, c->plain, &fi), 0);
	assert_int_equal(fi.packets[CT_DIR_ORIG], 2);
	assert_int_equal(ct_flow_get(c->t, c->nat, &fi), 0);
	assert_int_equal(fi.packets[CT_DIR_REPLY], 1);
	assert_true(fi.reply_seen);
	assert_int_equal(fi.expire, 11 + 180);	/* udp_stream once answered */
}

/* ct_track_batch does what ct_lookup_batch and then ct_update of each
 * found packet do, and says which flows translate. */
static void test_track_batch(void **state)
{
	struct batch_case c;
	struct ct_table *t;
	struct ct_pkt p[6];
	struct ct_result r[6];
	struct ct_stats s0, s1;
	uint32_t plain, nat, tflow;

	(void)state;
	t = batch_case_make(&c);
	plain = c.plain, nat = c.nat, tflow = c.tflow;
	for (unsigned i = 0; i < 6; i++)
		p[i] = c.x[i].p;
	ct_get_stats(t, &s0);
	ct_track_batch(t, p, 6, 11, r);
	ct_get_stats(t, &s1);
	assert_int_equal(r[0].kind, CT_FOUND);
	assert_int_equal(r[0].flow, plain);
	assert_int_equal(r[0].rule, 3);
	assert_int_equal(r[0].flags, 0);
	assert_int_equal(r[1].kind, CT_FOUND);
	assert_int_equal(r[1].flow, nat);
	assert_int_equal(r[1].dir, CT_DIR_REPLY);
	assert_int_equal(r[1].flags, CT_RF_NAT);
	assert_int_equal(r[2].kind, CT_NEW);
	assert_int_equal(r[2].flags, CT_RF_ABSENT);	/* no entry on the tuple at all */
	assert_int_equal(r[3].kind, CT_FOUND);
	assert_int_equal(r[3].flow, tflow);
	assert_int_equal(r[3].flags, 0);
	assert_int_equal(r[4].kind, CT_FOUND);
	assert_int_equal(r[4].flags, CT_RF_INVALID);
	assert_int_equal(r[5].kind, CT_INVALID);
	assert_int_equal(s1.invalid - s0.invalid, 2);	/* the out-of-window and the stray */
	batch_case_accounted(&c);
	ct_destroy(t);
}

/* ct_find4_batch: ct_track_batch's answers and accounting for express
 * frames (unparsed IPv4 TCP/UDP), found in the index from the frame's
 * bytes; a UDP frame of no entry is NEW, of an expired one NEW_EXPIRED,
 * a TCP segment of no live flow (stray, or its flow expired) NOFLOW,
 * where ct_lookup_batch says CT_NEW (without ABSENT) and CT_INVALID;
 * none of those changes or counts anything (ct_count_invalid counts a
 * NOFLOW the caller takes). */
static void test_find4_batch(void **state)
{
	struct batch_case c;
	struct ct_table *t;
	struct pk *x = c.x;
	struct ct_hint4 h[6];
	struct ct_flow_info fi;
	struct ct_stats s0, s1;
	uint32_t plain, nat, tflow;

	(void)state;
	t = batch_case_make(&c);
	plain = c.plain, nat = c.nat, tflow = c.tflow;
	tcp(&x[3], 4, B4, A4, 80, 1234, ACK, SISN + 1, CISN + 1, 100, -1, 0);	/* the reply's */
	for (unsigned i = 0; i < 6; i++)
		h[i] = (struct ct_hint4){.frame = x[i].b, .len = x[i].len};
	ct_get_stats(t, &s0);
	ct_find4_batch(t, h, 6, 11);
	ct_get_stats(t, &s1);
	assert_int_equal(h[0].result, CT_HINT_OK);
	assert_int_equal(h[0].flow, plain);
	assert_int_equal(h[0].dir, CT_DIR_ORIG);
	assert_int_equal(h[0].rule, 3);
	assert_int_equal(h[1].result, CT_HINT_OK_NAT);
	assert_int_equal(h[1].flow, nat);
	assert_int_equal(h[1].dir, CT_DIR_REPLY);
	assert_int_equal(h[1].rule, 4);
	assert_int_equal(h[2].result, CT_HINT_NEW);	/* UDP, no entry: track's NEW + ABSENT */
	assert_int_equal(h[3].result, CT_HINT_OK);
	assert_int_equal(h[3].flow, tflow);
	assert_int_equal(h[3].dir, CT_DIR_REPLY);
	assert_int_equal(h[4].result, CT_HINT_INVALID);
	assert_int_equal(h[4].flow, tflow);
	assert_int_equal(h[5].result, CT_HINT_NOFLOW);	/* stray: track's CT_INVALID */
	assert_int_equal(s1.invalid - s0.invalid, 1);	/* the out-of-window one only */
	assert_int_equal(s1.in_use, 3);
	assert_int_equal(s1.created, s0.created);
	batch_case_accounted(&c);
	assert_int_equal(ct_flow_get(t, tflow, &fi), 0);
	assert_int_equal(fi.packets[CT_DIR_REPLY], 2);	/* SYN+ACK and this one */
	ct_count_invalid(t, 2);
	ct_get_stats(t, &s0);
	assert_int_equal(s0.invalid - s1.invalid, 2);
	/* past its timeout a flow is not found, reaped or not: what
	 * ct_lookup_batch answers for its frames */
	{
		static const unsigned pick[3] = {0, 3, 5};	/* UDP, TCP, stray TCP */
		struct ct_result r[3];
		struct ct_pkt p[3];

		for (unsigned i = 0; i < 3; i++) {
			h[i] = (struct ct_hint4){.frame = x[pick[i]].b, .len = x[pick[i]].len};
			p[i] = x[pick[i]].p;
		}
		ct_get_stats(t, &s0);
		ct_find4_batch(t, h, 3, 11 + 100000);
		ct_get_stats(t, &s1);
		assert_int_equal(s1.invalid, s0.invalid);
		ct_lookup_batch(t, p, 3, 11 + 100000, r);
		assert_int_equal(r[0].kind, CT_NEW);		/* UDP over an expired entry */
		assert_int_equal(r[0].flags, 0);
		assert_int_equal(h[0].result, CT_HINT_NEW_EXPIRED);
		assert_int_equal(r[1].kind, CT_INVALID);	/* its TCP flow expired */
		assert_int_equal(h[1].result, CT_HINT_NOFLOW);
		assert_int_equal(r[2].kind, CT_INVALID);
		assert_int_equal(h[2].result, CT_HINT_NOFLOW);
	}
	ct_destroy(t);
}

/* A full table (buckets that overflow, tags that collide): for every
 * flow, either direction, ct_find4_batch finds what ct_lookup_batch
 * finds, in batches of every size up to 64 and more. */
static void test_find4_batch_full(void **state)
{
	const uint32_t n = 4096;
	struct ct_table *t = table(n);
	struct pk *x = malloc(100 * sizeof(*x));
	struct ct_pkt p[100];
	struct ct_result r[100];
	struct ct_hint4 h[100];
	uint32_t flow, done = 0, size = 1;

	(void)state;
	assert_non_null(x);
	for (uint32_t i = 0; i < n; i++) {
		flow_pkt(&x[0], i, 0);
		assert_int_equal(ct_create_flow(t, &x[0].p, NULL, i, 10, &flow), CT_CREATED);
	}
	while (done < 2 * n) {
		uint32_t m = size < 2 * n - done ? size : 2 * n - done;

		for (uint32_t k = 0; k < m; k++) {
			flow_pkt(&x[k], (done + k) / 2, (done + k) & 1);
			p[k] = x[k].p;
			h[k] = (struct ct_hint4){.frame = x[k].b, .len = x[k].len};
		}
		ct_lookup_batch(t, p, m, 11, r);
		ct_find4_batch(t, h, m, 11);
		for (uint32_t k = 0; k < m; k++) {
			assert_int_equal(r[k].kind, CT_FOUND);
			assert_int_equal(h[k].result, CT_HINT_OK);
			assert_int_equal(h[k].flow, r[k].flow);
			assert_int_equal(h[k].dir, r[k].dir);
			assert_int_equal(h[k].rule, (done + k) / 2);
		}
		done += m;
		size = size % 100 + 1;
	}
	/* tuples of no flow, in the same overflowing buckets: NEW exactly
	 * where the lookup says CT_NEW with CT_RF_ABSENT */
	for (uint32_t k = 0; k < 100; k++) {
		flow_pkt(&x[k], n + k, k & 1);
		p[k] = x[k].p;
		h[k] = (struct ct_hint4){.frame = x[k].b, .len = x[k].len};
	}
	ct_lookup_batch(t, p, 100, 11, r);
	ct_find4_batch(t, h, 100, 11);
	for (uint32_t k = 0; k < 100; k++) {
		assert_int_equal(r[k].kind, CT_NEW);
		assert_int_equal(r[k].flags, CT_RF_ABSENT);
		assert_int_equal(h[k].result, CT_HINT_NEW);
	}
	free(x);
	ct_destroy(t);
}

static void test_million_flows(void **state)
{
	const uint32_t n = 1000000;
	struct ct_table *t = table(n);
	struct pk *x = malloc(2 * sizeof(*x));
	struct ct_result r[64];
	struct ct_pkt p[64];
	struct ct_stats s;
	uint32_t flow;
	double bpf;

	(void)state;
	bpf = ct_bytes_per_flow(t);
	printf("conntrack: %.2f bytes per flow at %u flows (flow entry %zu B)\n", bpf, n,
	       sizeof(struct ct_flow));
	assert_true(bpf <= 128.0);
	/* with the worker's flow cache, sized for this table, still inside */
	printf("with the flow cache (%u slots): %.2f bytes per flow\n", flowcache_slots_for(n),
	       bpf + (double)flowcache_slots_for(n) * sizeof(struct flowcache_entry) / n);
	assert_true(bpf + (double)flowcache_slots_for(n) * sizeof(struct flowcache_entry) / n <= 128.0);
	/* The packet is patched in place: addresses and port per flow. */
	udp(&x[0], 4, A4, B4, 1, 53);
	udp(&x[1], 4, B4, A4, 53, 1);
	for (uint32_t i = 0; i < n; i++) {
		x[0].b[14 + 12 + 1] = (uint8_t)(i >> 16);
		x[0].b[14 + 12 + 2] = (uint8_t)(i >> 8);
		x[0].b[14 + 12 + 3] = (uint8_t)i;
		put16(x[0].b + 34, 1024 + i % 60000);
		parse(&x[0]);
		assert_int_equal(ct_create_flow(t, &x[0].p, NULL, 1, 100, &flow), CT_CREATED);
	}
	ct_get_stats(t, &s);
	assert_int_equal(s.in_use, n);
	/* Found again, in batches, half of them from the reply side. */
	for (uint32_t base = 0; base < n; base += 64) {
		static struct pk q[64];

		for (uint32_t j = 0; j < 64; j++) {
			uint32_t i = (base + j) % n;
			int rep = (int)(i & 1);
			struct pk *y = &q[j];

			*y = x[rep];
			y->b[14 + (rep ? 16 : 12) + 1] = (uint8_t)(i >> 16);
			y->b[14 + (rep ? 16 : 12) + 2] = (uint8_t)(i >> 8);
			y->b[14 + (rep ? 16 : 12) + 3] = (uint8_t)i;
			put16(y->b + (rep ? 36 : 34), 1024 + i % 60000);
			parse(y);
			p[j] = y->p;
		}
		ct_lookup_batch(t, p, 64, 101, r);
		for (uint32_t j = 0; j < 64; j++) {
			assert_int_equal(r[j].kind, CT_FOUND);
			assert_int_equal(r[j].dir, ((base + j) % n) & 1);
		}
	}
	free(x);
	ct_destroy(t);
}

struct removals {
	uint32_t calls;
	uint16_t last_sport;
};

static void on_remove(void *ctx, const struct ct_table *t, uint32_t flow)
{
	struct removals *r = ctx;
	struct ct_flow_info i;

	assert_int_equal(ct_flow_get(t, flow, &i), 0);	/* still readable */
	r->calls++;
	r->last_sport = i.orig.sport;
}

/* NAT frees a flow's port from this callback: every way a flow goes. */
static void test_on_remove(void **state)
{
	struct ct_config c = cfg(8);
	struct removals rm = {0};
	struct ct_table *t;
	struct pk x;
	uint32_t flow;

	(void)state;
	c.on_remove = on_remove;
	c.on_remove_ctx = &rm;
	t = ct_create(&c);
	assert_non_null(t);
	for (uint32_t i = 0; i < 3; i++) {
		flow_pkt(&x, i, 0);
		assert_int_equal(ct_create_flow(t, &x.p, NULL, 1, i == 2 ? 50 : 10, &flow), CT_CREATED);
	}
	ct_remove(t, flow);
	assert_int_equal(rm.calls, 1);
	assert_int_equal(rm.last_sport, 1024 + 2);
	assert_int_equal(ct_expire(t, 40, 1000), 2);
	assert_int_equal(rm.calls, 3);
	ct_destroy(t);
}

static void test_config(void **state)
{
	struct ct_config c = cfg(0);
	struct rfw_policy pol;

	(void)state;
	assert_null(ct_create(&c));
	c.max_flows = CT_MAX_FLOWS + 1;
	assert_null(ct_create(&c));
	memset(&pol, 0, sizeof(pol));
	pol.max_flows = 10;
	pol.timeout[RFW_TIMEOUT_UDP] = 5;
	ct_config_from_policy(&c, &pol);
	assert_int_equal(c.max_flows, 10);
	assert_int_equal(c.timeout[RFW_TIMEOUT_UDP], 5);
	ct_destroy(ct_create(&c));	/* seed drawn from getrandom */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_lifecycle),
		cmocka_unit_test(test_tcp_reopen_from_responder),
		cmocka_unit_test(test_tcp_reopen_over_nat),
		cmocka_unit_test(test_tcp_stray_segments),
		cmocka_unit_test(test_tcp_fast_open),
		cmocka_unit_test(test_tcp_out_of_window),
		cmocka_unit_test(test_tcp_rst),
		cmocka_unit_test(test_tcp_window_scaling),
		cmocka_unit_test(test_tcp_syn_window_not_scaled),
		cmocka_unit_test(test_tcp_simultaneous_open),
		cmocka_unit_test(test_udp_timeouts),
		cmocka_unit_test(test_icmp_echo),
		cmocka_unit_test(test_icmp_related),
		cmocka_unit_test(test_fragments),
		cmocka_unit_test(test_expiry_bounded),
		cmocka_unit_test(test_long_timeout_wraps_wheel),
		cmocka_unit_test(test_full_table),
		cmocka_unit_test(test_full_table_early_drop),
		cmocka_unit_test(test_early_drop_after_timeout_change),
		cmocka_unit_test(test_nat_reply_tuple),
		cmocka_unit_test(test_foreach_and_other),
		cmocka_unit_test(test_batch_lookup),
		cmocka_unit_test(test_index_churn),
		cmocka_unit_test(test_track_batch),
		cmocka_unit_test(test_find4_batch),
		cmocka_unit_test(test_find4_batch_full),
		cmocka_unit_test(test_key_ports_cleared),
		cmocka_unit_test(test_million_flows),
		cmocka_unit_test(test_on_remove),
		cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
