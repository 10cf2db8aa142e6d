/* Checksums: RFC 1071/1624 known answers, the UDP zero rule, and random
 * IPv4/IPv6 TCP/UDP/ICMP frames (and ICMP errors embedding them) whose
 * incremental NAT rewrite must equal, byte for byte, the same frame built
 * with the new addresses and checksums recomputed from scratch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "csum.h"
#include "pkt.h"

enum { P_ICMP = 1, P_TCP = 6, P_UDP = 17, P_ICMPV6 = 58 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* One IP packet, described so it can be rebuilt with other addresses. */
struct spec {
	uint8_t family, proto, type, code;
	uint8_t src[16], dst[16];
	uint16_t sport, dport;	/* ICMP echo: sport = identifier */
	uint16_t ipid, seq;
	uint8_t opt_words;	/* IPv4 options, 32-bit words */
	uint8_t udp_none;	/* UDP sent without checksum */
	uint8_t frag_later;	/* IPv4 non-first fragment */
	uint32_t plen;
	uint8_t payload[700];
};

static int is_echo(const struct spec *s)
{
	return (s->proto == P_ICMP && (s->type == 8 || s->type == 0)) ||
	       (s->proto == P_ICMPV6 && (s->type == 128 || s->type == 129));
}

/* Build the packet at p with every checksum computed from scratch.
 * Returns its length. */
static uint32_t build_ip(uint8_t *p, const struct spec *s)
{
	uint32_t hl = s->family == 4 ? 20 + 4u * s->opt_words : 40;
	uint32_t l4h = s->proto == P_TCP ? 20 : 8;
	uint32_t l4len = l4h + s->plen;
	uint8_t *l4 = p + hl;
	int field;

	memset(p, 0, hl + l4len);
	if (s->family == 4) {
		p[0] = (uint8_t)(0x40 | (5 + s->opt_words));
		put16(p + 2, (uint16_t)(hl + l4len));
		put16(p + 4, s->ipid);
		put16(p + 6, s->frag_later ? 0x00b9 : 0x4000);
		p[8] = 64;
		p[9] = s->proto;
		memcpy(p + 12, s->src, 4);
		memcpy(p + 16, s->dst, 4);
		for (uint32_t i = 20; i < hl; i++)
			p[i] = (uint8_t)(s->ipid + i);	/* opaque data in one option */
		if (hl > 20) {	/* an experimental option (RFC 4727) holding the rest */
			p[20] = 158;
			p[21] = (uint8_t)(hl - 20);
		}
	} else {
		p[0] = 0x60;
		put16(p + 4, (uint16_t)l4len);
		p[6] = s->proto;
		p[7] = 64;
		memcpy(p + 8, s->src, 16);
		memcpy(p + 24, s->dst, 16);
	}
	if (s->proto == P_TCP || s->proto == P_UDP) {
		put16(l4, s->sport);
		put16(l4 + 2, s->dport);
		if (s->proto == P_TCP) {
			put16(l4 + 4, s->seq);
			l4[12] = 5 << 4;
			l4[13] = 0x18;
			put16(l4 + 14, 1024);
		} else {
			put16(l4 + 4, (uint16_t)l4len);
		}
	} else {
		l4[0] = s->type;
		l4[1] = s->code;
		if (is_echo(s))
			put16(l4 + 4, s->sport);
		put16(l4 + 6, s->seq);
	}
	memcpy(l4 + l4h, s->payload, s->plen);
	if (s->family == 4)
		put16(p + 10, csum_ipv4_header(p));
	field = csum_l4_field(s->proto);
	if (!(s->proto == P_UDP && s->udp_none) && !s->frag_later)
		put16(l4 + field, csum_l4(s->family, s->family == 4 ? p + 12 : p + 8,
					  s->family == 4 ? p + 16 : p + 24,
					  s->proto, l4, l4len));
	return hl + l4len;
}

static uint32_t build_frame(uint8_t *f, const struct spec *s)
{
	memset(f, 0, 14);
	put16(f + 12, s->family == 4 ? 0x0800 : 0x86DD);
	return 14 + build_ip(f + 14, s);
}

static void random_addr(uint8_t *a, uint8_t family)
{
	memset(a, 0, 16);
	for (int i = 0; i < (family == 4 ? 4 : 16); i++)
		a[i] = (uint8_t)rnd();
}

static void random_spec(struct spec *s, uint8_t family, uint32_t max_payload)
{
	static const uint8_t protos[] = { P_TCP, P_UDP, 0 };

	memset(s, 0, sizeof(*s));
	s->family = family;
	s->proto = protos[rnd() % 3];
	if (!s->proto) {
		s->proto = family == 4 ? P_ICMP : P_ICMPV6;
		s->type = family == 4 ? (rnd() & 1 ? 8 : 0) : (rnd() & 1 ? 128 : 129);
	}
	random_addr(s->src, family);
	random_addr(s->dst, family);
	s->sport = (uint16_t)rnd();
	s->dport = (uint16_t)rnd();
	s->ipid = (uint16_t)rnd();
	s->seq = (uint16_t)rnd();
	s->opt_words = family == 4 && rnd() % 4 == 0 ? (uint8_t)(rnd() % 11) : 0;
	s->udp_none = s->proto == P_UDP && family == 4 && rnd() % 8 == 0;
	s->plen = (uint32_t)(rnd() % (max_payload + 1));	/* odd lengths too */
	for (uint32_t i = 0; i < s->plen; i++)
		s->payload[i] = (uint8_t)rnd();
}

/* Change one side of a spec as NAT would. */
static void change(struct spec *s, enum csum_side side, const uint8_t *addr,
		   uint16_t port)
{
	memcpy(side == CSUM_SRC ? s->src : s->dst, addr, 16);
	if (is_echo(s))
		s->sport = port;
	else if (s->proto == P_TCP || s->proto == P_UDP)
		*(side == CSUM_SRC ? &s->sport : &s->dport) = port;
}

static void test_rfc1071_example(void **state)
{
	/* RFC 1071 section 3: the one's-complement sum of these bytes is
	 * ddf2, so the checksum is its complement. */
	const uint8_t b[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };

	(void)state;
	assert_int_equal(csum_add(0, b, sizeof(b)) % 0xffff, 0xddf2);
	assert_int_equal(csum_buf(b, sizeof(b)), 0x220d);
	/* Byte-order independence (RFC 1071 2(B)) and odd-length padding. */
	assert_int_equal(csum_buf(b, 7), csum_fold(csum_add(0, b, 6) + 0xf600));
	/* A buffer with its checksum appended sums to -0. */
	{
		uint8_t c[10];

		memcpy(c, b, 8);
		put16(c + 8, 0x220d);
		assert_int_equal(csum_buf(c, 10), 0);
	}
}

static void test_rfc1624_example(void **state)
{
	(void)state;
	/* RFC 1624 section 4: HC = DD2F, m = 5555, m' = 3285; eqn. 3 gives
	 * 0000 (eqn. 2's FFFF was the error the RFC corrects). */
	assert_int_equal(csum_update16(0xdd2f, 0x5555, 0x3285), 0x0000);
	/* Changing a field back restores the checksum. */
	assert_int_equal(csum_update16(csum_update16(0x1234, 0xabcd, 0x0001),
				       0x0001, 0xabcd), 0x1234);
}

static void test_ipv4_header_known(void **state)
{
	/* A textbook UDP/IPv4 header (192.168.0.1 -> 192.168.0.199). */
	uint8_t h[20] = {
		0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
		0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
	};
	const uint8_t na[4] = { 10, 9, 8, 7 };
	uint16_t hc;

	(void)state;
	assert_int_equal(csum_ipv4_header(h), 0xb861);
	/* The checksum field itself is skipped. */
	put16(h + 10, 0xb861);
	assert_int_equal(csum_ipv4_header(h), 0xb861);
	assert_int_equal(csum_buf(h, 20), 0);
	hc = csum_update32(0xb861, h + 12, na);
	memcpy(h + 12, na, 4);
	assert_int_equal(hc, csum_ipv4_header(h));
}

static void test_update128(void **state)
{
	(void)state;
	for (int i = 0; i < 2000; i++) {
		uint8_t buf[64], old[16];
		uint16_t hc;
		uint32_t n = 16 + (uint32_t)(rnd() % 48);

		for (uint32_t k = 0; k < n; k++)
			buf[k] = (uint8_t)rnd();
		hc = csum_buf(buf, n);
		memcpy(old, buf, 16);
		for (int k = 0; k < 16; k++)
			buf[k] = (uint8_t)rnd();
		assert_int_equal(csum_update128(hc, old, buf), csum_buf(buf, n));
	}
}

static void rewrite_and_compare(struct spec *s, enum csum_side side,
				const uint8_t *addr, uint16_t port)
{
	uint8_t got[1024], want[1024];
	uint32_t len = build_frame(got, s), wlen;
	struct pkt_meta m;

	assert_int_equal(pkt_parse(got, len, &m), PKT_IP);
	assert_int_equal(csum_rewrite(got, len, &m, side, addr, port), 0);
	change(s, side, addr, port);
	wlen = build_frame(want, s);
	assert_int_equal(len, wlen);
	assert_memory_equal(got, want, len);
}

static void random_rewrites(uint8_t family)
{
	for (int i = 0; i < 5000; i++) {
		struct spec s;
		uint8_t addr[16];
		enum csum_side side = rnd() & 1 ? CSUM_DST : CSUM_SRC;
		uint16_t port = (uint16_t)rnd();

		random_spec(&s, family, 600);
		random_addr(addr, family);
		if (rnd() % 16 == 0)	/* address only, port kept */
			port = side == CSUM_SRC || is_echo(&s) ? s.sport : s.dport;
		rewrite_and_compare(&s, side, addr, port);
	}
}

/* csum_rewrite4 (both sides at once, inline) against a frame built from
 * scratch with the new addresses and ports; -1 and the frame untouched
 * for what it does not take. */
static void rewrite4_and_compare(struct spec *s, const uint8_t *src, uint16_t sport,
				 const uint8_t *dst, uint16_t dport, int ttl_dec)
{
	uint8_t got[1024], want[1024];
	uint32_t len = build_frame(got, s), wlen;
	struct pkt_meta m;

	assert_int_equal(pkt_parse(got, len, &m), PKT_IP);
	/* it leaves short UDP frames (less than a TCP header) to csum_rewrite */
	if (s->family != 4 || (s->proto != P_TCP && s->proto != P_UDP) || len < m.l4_off + 18u) {
		memcpy(want, got, len);
		assert_int_equal(csum_rewrite4(got, len, &m, src, sport, dst, dport, ttl_dec), -1);
		assert_memory_equal(got, want, len);
		return;
	}
	assert_int_equal(csum_rewrite4(got, len, &m, src, sport, dst, dport, ttl_dec), 0);
	change(s, CSUM_SRC, src, sport);
	change(s, CSUM_DST, dst, dport);
	wlen = build_frame(want, s);
	assert_int_equal(len, wlen);
	if (ttl_dec) {	/* the header checksum recomputed in full */
		want[14 + 8]--;
		put16(want + 14 + 10, csum_ipv4_header(want + 14));
	}
	assert_memory_equal(got, want, len);
}

/* A routed packet's TTL decrement with its checksum: against a full
 * recomputation for every checksum a header can have (its ID swept over
 * all 65,536 values), TTLs 255, 64 and 1. */
static void test_ttl_decrement(void **state)
{
	static const uint8_t ttls[] = {255, 64, 1};
	uint8_t ip[20] = {0x45, 0, 0, 60, 0, 0, 0x40, 0, 0, 6, 0, 0, 10, 1, 0, 2, 10, 200, 3, 4};
	(void)state;

	for (unsigned t = 0; t < sizeof(ttls); t++) {
		for (uint32_t id = 0; id < 65536; id++) {
			uint16_t c;

			ip[4] = (uint8_t)(id >> 8);
			ip[5] = (uint8_t)id;
			ip[8] = ttls[t];
			c = csum_ipv4_header(ip);
			ip[10] = (uint8_t)(c >> 8);
			ip[11] = (uint8_t)c;
			csum_ttl_decrement(ip);
			assert_int_equal(ip[8], ttls[t] - 1);
			c = csum_ipv4_header(ip);
			if ((ip[10] << 8 | ip[11]) != c)
				fail_msg("id %u ttl %u: %02x%02x, recomputed %04x", id, ttls[t], ip[10],
					 ip[11], c);
		}
	}
}

static void test_rewrite4(void **state)
{
	(void)state;
	for (int i = 0; i < 20000; i++) {
		struct spec s;
		uint8_t src[16], dst[16];
		uint16_t sport, dport;

		random_spec(&s, i % 8 ? 4 : 6, 600);
		random_addr(src, s.family);
		random_addr(dst, s.family);
		sport = (uint16_t)rnd();
		dport = (uint16_t)rnd();
		switch (rnd() % 4) {	/* SNAT, DNAT, both, ports only */
		case 0:
			memcpy(dst, s.dst, 16);
			dport = s.dport;
			break;
		case 1:
			memcpy(src, s.src, 16);
			sport = s.sport;
			break;
		case 3:
			memcpy(src, s.src, 16);
			memcpy(dst, s.dst, 16);
			break;
		}
		rewrite4_and_compare(&s, src, sport, dst, dport, (int)(rnd() & 1));
	}
}

static void test_random_v4(void **state)
{
	(void)state;
	random_rewrites(4);
}

static void test_random_v6(void **state)
{
	(void)state;
	random_rewrites(6);
}

static void test_udp_zero_rule(void **state)
{
	struct spec s;
	uint8_t f[1024], addr[16] = { 10, 1, 2, 3 };
	struct pkt_meta m;
	uint32_t len, l4 = 14 + 20;

	(void)state;
	/* "No checksum" stays 0 through a rewrite. */
	random_spec(&s, 4, 40);
	s.proto = P_UDP;
	s.opt_words = 0;
	s.udp_none = 1;
	len = build_frame(f, &s);
	assert_int_equal(get16(f + l4 + 6), 0);
	assert_int_equal(pkt_parse(f, len, &m), PKT_IP);
	assert_int_equal(csum_rewrite(f, len, &m, CSUM_SRC, addr, 4000), 0);
	assert_int_equal(get16(f + l4 + 6), 0);
	assert_int_equal(csum_ipv4_header(f + 14), get16(f + 24));

	/* A rewrite whose result computes to 0 is sent as 0xFFFF: make the
	 * translated packet sum to -0 with a payload word, then build the
	 * untranslated one and rewrite it. */
	for (int fam = 4; fam <= 6; fam += 2) {
		uint8_t a[16];
		uint16_t c;

		random_spec(&s, (uint8_t)fam, 0);
		s.proto = P_UDP;
		s.opt_words = 0;
		s.type = 0;
		s.udp_none = 0;
		s.plen = 12;	/* past a TCP header's length: csum_rewrite4 takes it */
		memset(s.payload, 0, s.plen);
		random_addr(a, (uint8_t)fam);
		{
			struct spec t = s;

			change(&t, CSUM_DST, a, 5353);
			len = build_frame(f, &t);
			l4 = 14 + (fam == 4 ? 20 : 40);
			/* payload 0 -> checksum c = ~S; payload c -> sum -0. */
			c = get16(f + l4 + 6);
			put16(s.payload, c);
		}
		{
			struct spec t = s;

			change(&t, CSUM_DST, a, 5353);
			len = build_frame(f, &t);
			assert_int_equal(get16(f + l4 + 6), 0xffff);
		}
		{
			struct spec t = s;

			rewrite4_and_compare(&t, t.src, t.sport, a, 5353, 0);
		}
		rewrite_and_compare(&s, CSUM_DST, a, 5353);
	}
}

static void test_fragments_and_refusals(void **state)
{
	struct spec s;
	uint8_t f[1024], want[1024], addr[16] = { 172, 16, 0, 9 };
	struct pkt_meta m;
	uint32_t len;

	(void)state;
	/* A non-first IPv4 fragment: address and header checksum only. */
	random_spec(&s, 4, 100);
	s.proto = P_UDP;
	s.opt_words = 0;
	s.frag_later = 1;
	len = build_frame(f, &s);
	assert_int_equal(pkt_parse(f, len, &m), PKT_IP);
	assert_int_equal(m.fragment, 2);
	assert_int_equal(csum_rewrite(f, len, &m, CSUM_SRC, addr, 1), 0);
	memcpy(s.src, addr, 16);
	build_frame(want, &s);
	assert_memory_equal(f, want, len);

	/* A frame shorter than the meta claims is refused, untouched. */
	random_spec(&s, 6, 0);
	s.proto = P_TCP;
	len = build_frame(f, &s);
	assert_int_equal(pkt_parse(f, len, &m), PKT_IP);
	memcpy(want, f, len);
	assert_int_equal(csum_rewrite(f, 14 + 40 + 10, &m, CSUM_SRC, addr, 1), -1);
	assert_memory_equal(f, want, len);
	m.key.family = 0;
	assert_int_equal(csum_rewrite(f, len, &m, CSUM_SRC, addr, 1), -1);
}

/* An ICMP error from a router about `inner` (already translated on its
 * way out), cut to `keep` bytes of the inner packet. */
static uint32_t build_error(uint8_t *f, const struct spec *outer,
			    const struct spec *inner, uint32_t keep)
{
	uint8_t in[1024];
	uint32_t ilen = build_ip(in, inner);
	struct spec o = *outer;

	if (keep > ilen)
		keep = ilen;
	memcpy(o.payload, in, keep);
	o.plen = keep;
	return build_frame(f, &o);
}

static void random_errors(uint8_t family)
{
	for (int i = 0; i < 3000; i++) {
		struct spec outer, inner;
		uint8_t got[1024], want[1024], addr[16], oaddr[16];
		uint32_t hl, len, keep;
		uint16_t port = (uint16_t)rnd();
		struct pkt_meta m;
		enum csum_side side = rnd() & 1 ? CSUM_DST : CSUM_SRC;

		random_spec(&inner, family, 200);
		random_spec(&outer, family, 0);
		outer.proto = family == 4 ? P_ICMP : P_ICMPV6;
		outer.type = family == 4 ? (rnd() & 1 ? 3 : 11) : (uint8_t)(1 + rnd() % 4);
		outer.code = (uint8_t)(rnd() % 4);
		hl = family == 4 ? 20u + 4u * inner.opt_words : 40u;
		/* RFC 792's minimum (header + 8) up to the whole packet. */
		keep = hl + 8 + (uint32_t)(rnd() % 240);
		/* A cut through the middle of the inner L4 checksum leaves half
		 * a field nobody can update; the from-scratch build would. */
		if (keep == hl + (uint32_t)csum_l4_field(inner.proto) + 1)
			keep++;
		random_addr(addr, family);
		random_addr(oaddr, family);

		len = build_error(got, &outer, &inner, keep);
		assert_int_equal(pkt_parse(got, len, &m), PKT_IP);
		assert_true(csum_icmp_is_error(&m));
		assert_int_equal(csum_rewrite(got, len, &m, CSUM_DST, oaddr, 0), 0);
		assert_int_equal(csum_rewrite_icmp_inner(got, len, &m, side, addr, port), 0);

		change(&inner, side, addr, port);
		memcpy(outer.dst, oaddr, 16);
		assert_int_equal(build_error(want, &outer, &inner, keep), len);
		assert_memory_equal(got, want, len);
	}
}

/* SCTP's CRC32c (RFC 3309), bit by bit: independent of runtime/crc32c.c. */
static uint32_t crc32c_bitwise(const uint8_t *p, uint32_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
	}
	return ~c;
}

/* 1 when the SCTP packet at l4 (n bytes) carries its right checksum,
 * least significant byte first (RFC 4960 appendix B; what Linux and
 * scapy write). */
static int sctp_crc_ok(const uint8_t *l4, uint32_t n)
{
	uint8_t copy[128];
	uint32_t c;

	assert_true(n <= sizeof(copy));
	memcpy(copy, l4, n);
	memset(copy + 8, 0, 4);
	c = crc32c_bitwise(copy, n);
	return l4[8] == (uint8_t)c && l4[9] == (uint8_t)(c >> 8) && l4[10] == (uint8_t)(c >> 16) &&
	       l4[11] == (uint8_t)(c >> 24);
}

/* An SCTP packet (common header, one 16-byte chunk) of family 4 or 6
 * from port 5000 to 3868, CRC right; returns the frame's length. */
static uint32_t build_sctp(uint8_t *f, uint8_t family)
{
	uint32_t hl = family == 4 ? 20 : 40, n = 12 + 16;
	uint8_t *ip = f + 14, *l4 = ip + hl;
	uint32_t c;

	memset(f, 0, 14 + hl + n);
	put16(f + 12, family == 4 ? 0x0800 : 0x86DD);
	if (family == 4) {
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(hl + n));
		put16(ip + 6, 0x4000);
		ip[8] = 64;
		ip[9] = 132;
		random_addr(ip + 12, 4);
		random_addr(ip + 16, 4);
		put16(ip + 10, csum_ipv4_header(ip));
	} else {
		ip[0] = 0x60;
		put16(ip + 4, (uint16_t)n);
		ip[6] = 132;
		ip[7] = 64;
		random_addr(ip + 8, 16);
		random_addr(ip + 24, 16);
	}
	put16(l4, 5000);
	put16(l4 + 2, 3868);
	for (uint32_t i = 4; i < n; i++)	/* verification tag, a chunk */
		l4[i] = (uint8_t)rnd();
	put16(l4 + 14, 16);	/* the chunk's length */
	memset(l4 + 8, 0, 4);
	c = crc32c_bitwise(l4, n);
	for (int k = 0; k < 4; k++)
		l4[8 + k] = (uint8_t)(c >> (8 * k));
	return 14 + hl + n;
}

/* SCTP through NAT: an address change leaves the CRC as it is (it
 * covers no pseudo-header); a port change recomputes it over the packet,
 * IPv4 and IPv6, both sides; refused, untouched, when the packet is a
 * fragment or longer than the frame; in an ICMP error's quoted copy the
 * port is rewritten and the outer checksum kept right. */
static void test_sctp_ports(void **state)
{
	uint8_t f[256], before[256], addr[16] = {10, 9, 8, 7};
	struct pkt_meta m;
	uint32_t len;
	(void)state;

	for (uint8_t family = 4; family <= 6; family += 2) {
		uint32_t l4 = 14 + (family == 4 ? 20 : 40);

		len = build_sctp(f, family);
		assert_int_equal(pkt_parse(f, len, &m), PKT_IP);
		memcpy(before, f, len);
		assert_int_equal(csum_rewrite(f, len, &m, CSUM_SRC, addr, 5000), 0);
		assert_memory_equal(f + l4 + 8, before + l4 + 8, 4);	/* same CRC */
		assert_true(sctp_crc_ok(f + l4, len - l4));
		assert_int_equal(csum_rewrite(f, len, &m, CSUM_DST, addr, 13868), 0);
		assert_int_equal(get16(f + l4 + 2), 13868);
		assert_true(sctp_crc_ok(f + l4, len - l4));
		assert_int_equal(csum_rewrite(f, len, &m, CSUM_SRC, addr, 40000), 0);
		assert_int_equal(get16(f + l4), 40000);
		assert_true(sctp_crc_ok(f + l4, len - l4));
		if (family == 4)
			assert_int_equal(csum_ipv4_header(f + 14), get16(f + 24));

		memcpy(before, f, len);		/* the IP length beyond the frame */
		assert_int_equal(csum_rewrite(f, len - 1, &m, CSUM_DST, addr, 3868), -1);
		assert_memory_equal(f, before, len);
	}
	len = build_sctp(f, 4);			/* a first fragment: the CRC is of */
	put16(f + 14 + 6, 0x2000);		/* the whole datagram */
	put16(f + 24, 0);
	put16(f + 24, csum_ipv4_header(f + 14));
	assert_int_equal(pkt_parse(f, len, &m), PKT_IP);
	assert_int_equal(m.fragment, 1);
	memcpy(before, f, len);
	assert_int_equal(csum_rewrite(f, len, &m, CSUM_DST, addr, 13868), -1);
	assert_memory_equal(f, before, len);

	{	/* port unreachable quoting the IPv4 packet's first 8 bytes */
		uint8_t e[128] = {0}, *ip = e + 14, *q = ip + 28;

		len = build_sctp(f, 4);
		put16(e + 12, 0x0800);
		ip[0] = 0x45;
		put16(ip + 2, 20 + 8 + 28);
		ip[8] = 64;
		ip[9] = P_ICMP;
		memcpy(ip + 12, f + 14 + 16, 4);
		memcpy(ip + 16, f + 14 + 12, 4);
		put16(ip + 10, csum_ipv4_header(ip));
		ip[20] = 3;
		ip[21] = 3;
		memcpy(q, f + 14, 28);
		put16(ip + 22, csum_buf(ip + 20, 36));
		assert_int_equal(pkt_parse(e, 14 + 56, &m), PKT_IP);
		assert_int_equal(csum_rewrite_icmp_inner(e, 14 + 56, &m, CSUM_DST, addr, 13868), 0);
		assert_int_equal(get16(q + 20 + 2), 13868);
		assert_memory_equal(q + 16, addr, 4);
		assert_memory_equal(q + 20 + 4, f + 14 + 20 + 4, 4);	/* its tag, as it was */
		assert_int_equal(csum_buf(ip + 20, 36), 0);	/* the outer ICMP sum */
		assert_int_equal(csum_ipv4_header(q), get16(q + 10));
	}
}

static void test_icmp_errors_v4(void **state)
{
	(void)state;
	random_errors(4);
}

static void test_icmp_errors_v6(void **state)
{
	(void)state;
	random_errors(6);
}

/* Bytes after the IP packet (a trailer) are no part of the ICMP error:
 * the quoted segment's checksum field lies past the copy's 8 bytes, in
 * the trailer, and must be left alone there (the outer sum, which does
 * not cover it, would take the change and go wrong). */
static void test_icmp_error_trailer(void **state)
{
	uint8_t e[128] = {0}, addr[4] = {10, 7, 7, 7}, *ip = e + 14, *icmp = ip + 20, *q = icmp + 8;
	uint8_t trailer[12];
	struct pkt_meta m;
	uint32_t len = 14 + 56 + sizeof(trailer);

	(void)state;
	put16(e + 12, 0x0800);
	ip[0] = 0x45;
	put16(ip + 2, 20 + 8 + 28);
	ip[8] = 64;
	ip[9] = P_ICMP;
	memcpy(ip + 12, (uint8_t[]){10, 0, 9, 9}, 4);
	memcpy(ip + 16, (uint8_t[]){10, 9, 0, 1}, 4);
	put16(ip + 10, csum_ipv4_header(ip));
	icmp[0] = 3;
	icmp[1] = 3;
	q[0] = 0x45;		/* the quoted TCP segment: header + 8 bytes */
	put16(q + 2, 60);
	q[8] = 64;
	q[9] = P_TCP;
	memcpy(q + 12, (uint8_t[]){10, 9, 0, 1}, 4);
	memcpy(q + 16, (uint8_t[]){10, 0, 9, 9}, 4);
	put16(q + 10, csum_ipv4_header(q));
	put16(q + 20, 30000);
	put16(q + 22, 80);
	for (uint32_t k = 0; k < sizeof(trailer); k++)
		trailer[k] = q[28 + k] = (uint8_t)(0x11 * (k + 1));
	put16(icmp + 2, csum_buf(icmp, 36));
	assert_int_equal(pkt_parse(e, len, &m), PKT_IP);
	assert_int_equal(csum_rewrite_icmp_inner(e, len, &m, CSUM_SRC, addr, 1234), 0);
	assert_int_equal(get16(q + 20), 1234);
	assert_memory_equal(q + 12, addr, 4);
	assert_int_equal(csum_buf(icmp, 36), 0);	/* the outer ICMP sum */
	assert_int_equal(csum_ipv4_header(q), get16(q + 10));
	assert_memory_equal(q + 28, trailer, sizeof(trailer));
}

static void test_icmp_error_refusals(void **state)
{
	struct spec s;
	uint8_t f[1024], addr[16] = { 1 };
	struct pkt_meta m;
	uint32_t len;

	(void)state;
	random_spec(&s, 4, 20);
	s.proto = P_ICMP;
	s.type = 8;	/* an echo is not an error */
	len = build_frame(f, &s);
	assert_int_equal(pkt_parse(f, len, &m), PKT_IP);
	assert_false(csum_icmp_is_error(&m));
	assert_int_equal(csum_rewrite_icmp_inner(f, len, &m, CSUM_SRC, addr, 1), -1);
	/* An error whose copy is too short for an IP header. */
	s.type = 3;
	s.plen = 12;
	len = build_frame(f, &s);
	assert_int_equal(pkt_parse(f, len, &m), PKT_IP);
	assert_true(csum_icmp_is_error(&m));
	assert_int_equal(csum_rewrite_icmp_inner(f, len, &m, CSUM_SRC, addr, 1), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc1071_example),
		cmocka_unit_test(test_rfc1624_example),
		cmocka_unit_test(test_ipv4_header_known),
		cmocka_unit_test(test_update128),
		cmocka_unit_test(test_ttl_decrement),
		cmocka_unit_test(test_random_v4),
		cmocka_unit_test(test_random_v6),
		cmocka_unit_test(test_rewrite4),
		cmocka_unit_test(test_udp_zero_rule),
		cmocka_unit_test(test_fragments_and_refusals),
		cmocka_unit_test(test_sctp_ports),
		cmocka_unit_test(test_icmp_errors_v4),
		cmocka_unit_test(test_icmp_errors_v6),
		cmocka_unit_test(test_icmp_error_refusals),
		cmocka_unit_test(test_icmp_error_trailer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
