/* Packet parser and classifier: keys from well-formed frames, malformed
 * frames refused by reason without reading past the end, and the
 * first-match semantics of the ACL entries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cls.h"
#include "pkt.h"

/* Frame builder: Ethernet [+ VLAN tags] + IPv4/IPv6 + L4 header. */
struct frame {
	uint8_t b[256];
	uint32_t len;
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Set an IPv4 header's checksum (RFC 1071, written out here so the
 * parser's own sum is checked against another). */
static void ip4_csum(uint8_t *ip)
{
	uint32_t hl = (uint32_t)(ip[0] & 15) * 4, sum = 0;

	ip[10] = ip[11] = 0;
	for (uint32_t i = 0; i + 1 < hl; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(ip + 10, (uint16_t)~sum);
}

static uint32_t eth(struct frame *f, int vlans, uint16_t type)
{
	uint32_t off = 12;

	memset(f, 0, sizeof(*f));
	for (int i = 0; i < vlans; i++) {
		put16(f->b + off, i == 0 && vlans == 2 ? 0x88A8 : 0x8100);
		put16(f->b + off + 2, 100 + i);
		off += 4;
	}
	put16(f->b + off, type);
	return off + 2;
}

static uint32_t l4(uint8_t *p, uint8_t proto, uint16_t sport, uint16_t dport)
{
	if (proto == 1 || proto == 58) {
		p[0] = 8;
		p[1] = 0;
		return 8;
	}
	put16(p, sport);
	put16(p + 2, dport);
	if (proto == 6) {
		p[12] = 5 << 4;
		p[13] = 0x02;		/* SYN */
		return 20;
	}
	return 8;
}

static void ipv4(struct frame *f, int vlans, uint8_t proto, uint16_t sport,
		 uint16_t dport, uint16_t frag)
{
	uint32_t off = eth(f, vlans, 0x0800);
	uint8_t *ip = f->b + off;
	uint32_t l4len = l4(ip + 20, proto, sport, dport);

	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(20 + l4len));
	put16(ip + 6, frag);
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, (uint8_t[]){10, 1, 0, 5}, 4);
	memcpy(ip + 16, (uint8_t[]){10, 2, 0, 9}, 4);
	ip4_csum(ip);
	f->len = off + 20 + l4len;
}

/* IPv6 with an optional hop-by-hop header before the upper layer. */
static void ipv6(struct frame *f, uint8_t proto, uint16_t sport, uint16_t dport,
		 int hopopts)
{
	uint32_t off = eth(f, 0, 0x86DD);
	uint8_t *ip = f->b + off;
	uint32_t ext = hopopts ? 8 : 0;
	uint32_t l4len = l4(ip + 40 + ext, proto, sport, dport);

	ip[0] = 0x60;
	put16(ip + 4, (uint16_t)(ext + l4len));
	ip[6] = hopopts ? 0 : proto;
	ip[7] = 64;
	ip[8] = 0xfd;
	ip[23] = 1;
	ip[24] = 0xfd;
	ip[39] = 2;
	if (hopopts)
		ip[40] = proto;
	f->len = off + 40 + ext + l4len;
}

static void test_ipv4_tcp(void **state)
{
	struct frame f;
	struct pkt_meta m;
	(void)state;

	ipv4(&f, 0, 6, 40000, 443, 0);
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	assert_int_equal(m.key.family, 4);
	assert_int_equal(m.key.proto, 6);
	assert_int_equal(m.key.has_ports, 1);
	assert_int_equal(m.key.sport, 40000);
	assert_int_equal(m.key.dport, 443);
	assert_int_equal(m.key.tcp_flags, 0x02);
	assert_memory_equal(m.key.src, ((uint8_t[]){10, 1, 0, 5}), 4);
	assert_memory_equal(m.key.dst, ((uint8_t[]){10, 2, 0, 9}), 4);
	assert_int_equal(m.l3_off, 14);
	assert_int_equal(m.l4_off, 34);
}

static void test_vlan_and_qinq(void **state)
{
	struct frame f;
	struct pkt_meta m;
	(void)state;

	ipv4(&f, 1, 17, 5000, 53, 0);
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	assert_int_equal(m.l3_off, 18);
	assert_int_equal(m.key.dport, 53);
	ipv4(&f, 2, 17, 5000, 53, 0);
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	assert_int_equal(m.l3_off, 22);
	assert_int_equal(m.key.sport, 5000);
	/* a third tag: what it hides is not passed on as non-IP */
	ipv4(&f, 3, 17, 5000, 53, 0);
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_VLAN_DEPTH);
	assert_string_equal(pkt_reason_name(m.reason), "vlan-too-deep");
}

static void test_fragments_have_no_ports(void **state)
{
	struct frame f;
	struct pkt_meta m;
	(void)state;

	ipv4(&f, 0, 17, 5000, 53, 0x2000);	/* first fragment: ports */
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	assert_int_equal(m.fragment, 1);
	assert_int_equal(m.key.has_ports, 1);
	ipv4(&f, 0, 17, 5000, 53, 0x0010);	/* offset 128: no ports */
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	assert_int_equal(m.fragment, 2);
	assert_int_equal(m.key.has_ports, 0);
}

/* RFC 1858: a non-first fragment starting inside the L4 header a first
 * fragment must carry (TCP 20 bytes, UDP 8) is refused; past it, fine. */
static void test_overlapping_fragments(void **state)
{
	struct frame f;
	struct pkt_meta m;
	(void)state;

	ipv4(&f, 0, 6, 5000, 80, 0x0001);	/* TCP, offset 8: over the flags */
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_FRAG_OVERLAP);
	ipv4(&f, 0, 6, 5000, 80, 0x0002);	/* offset 16: still inside */
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_MALFORMED);
	ipv4(&f, 0, 6, 5000, 80, 0x0003);	/* offset 24: past it */
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	ipv4(&f, 0, 17, 5000, 53, 0x0001);	/* UDP, offset 8: past its 8 */
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	ipv4(&f, 0, 1, 0, 0, 0x0001);		/* ICMP: nothing to protect */
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	assert_string_equal(pkt_reason_name(PKT_ERR_FRAG_OVERLAP), "fragment-overlap");
}

/* IPv6 UDP (8 bytes) behind a fragment header with this offset word. */
static int parse_ipv6_fragment(uint16_t offflags, struct pkt_meta *m)
{
	struct frame f;
	uint8_t *ip;

	ipv6(&f, 17, 1234, 7000, 0);
	ip = f.b + 14;
	memmove(ip + 48, ip + 40, 8);
	memset(ip + 40, 0, 8);
	ip[40] = 17;
	put16(ip + 42, offflags);
	ip[6] = 44;
	put16(ip + 4, 16);
	f.len += 8;
	return pkt_parse(f.b, f.len, m);
}

/* A fragment ending past byte 65535 of its datagram is no part of one
 * (cut again for a smaller MTU, its offset would run into the flag
 * bits and make a piece that reads as a first fragment): refused. */
static void test_oversize_fragments(void **state)
{
	struct frame f;
	struct pkt_meta m;
	(void)state;

	ipv4(&f, 0, 17, 5000, 53, 0x1ffe);	/* 8 bytes at 65520: ends at 65527 */
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	assert_int_equal(m.fragment, 2);
	ipv4(&f, 0, 17, 5000, 53, 0x1fff);	/* 8 bytes at 65528: past 65535 */
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_FRAG_OVERSIZE);
	ipv4(&f, 0, 17, 5000, 53, 0x3fff);	/* the same with more to come */
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_FRAG_OVERSIZE);
	assert_string_equal(pkt_reason_name(PKT_ERR_FRAG_OVERSIZE), "fragment-oversize");

	assert_int_equal(parse_ipv6_fragment(0xfff0, &m), PKT_IP);	/* at 65520 */
	assert_int_equal(m.fragment, 2);
	assert_int_equal(parse_ipv6_fragment(0xfff8, &m), PKT_MALFORMED);	/* at 65528 */
	assert_int_equal(m.reason, PKT_ERR_FRAG_OVERSIZE);
	assert_int_equal(parse_ipv6_fragment(0xfff9, &m), PKT_MALFORMED);
	assert_int_equal(parse_ipv6_fragment(0x0001, &m), PKT_IP);	/* a first one */
	assert_int_equal(m.fragment, 1);
	assert_int_equal(m.key.dport, 7000);
}

static void test_ipv6_and_extension(void **state)
{
	struct frame f;
	struct pkt_meta m;
	(void)state;

	ipv6(&f, 17, 1234, 7000, 0);
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	assert_int_equal(m.key.family, 6);
	assert_int_equal(m.key.dport, 7000);
	assert_int_equal(m.key.src[0], 0xfd);
	assert_int_equal(m.key.dst[15], 2);
	ipv6(&f, 6, 1234, 22, 1);
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	assert_int_equal(m.key.proto, 6);
	assert_int_equal(m.key.dport, 22);
	assert_int_equal(m.l4_off, 14 + 48);
	ipv6(&f, 58, 0, 0, 0);
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	assert_int_equal(m.key.icmp_type, 8);
	assert_int_equal(m.key.has_ports, 0);
}

/* IPv4 UDP with the given options (n a multiple of 4, up to 40 bytes). */
static int parse_with_options(const uint8_t *opt, uint32_t n, struct pkt_meta *m)
{
	struct frame f;
	uint8_t *ip;

	ipv4(&f, 0, 17, 1234, 7000, 0);
	ip = f.b + 14;
	memmove(ip + 20 + n, ip + 20, 8);
	memcpy(ip + 20, opt, n);
	ip[0] = (uint8_t)(0x40 | (5 + n / 4));
	put16(ip + 2, (uint16_t)(20 + n + 8));
	ip4_csum(ip);
	f.len += n;
	return pkt_parse(f.b, f.len, m);
}

static void test_ipv4_options(void **state)
{
	struct pkt_meta m;
	(void)state;

	/* record route, timestamp, router alert, NOPs and EOL: forwarded */
	assert_int_equal(parse_with_options((const uint8_t[]){7, 7, 4, 0, 0, 0, 0, 1}, 8, &m), PKT_IP);
	assert_int_equal(m.key.dport, 7000);
	assert_int_equal(m.l4_off, 14 + 28);
	assert_int_equal(parse_with_options((const uint8_t[]){68, 8, 5, 0, 0, 0, 0, 0}, 8, &m), PKT_IP);
	assert_int_equal(parse_with_options((const uint8_t[]){148, 4, 0, 0}, 4, &m), PKT_IP);
	assert_int_equal(parse_with_options((const uint8_t[]){1, 1, 1, 0}, 4, &m), PKT_IP);
	/* after EOL nothing is read */
	assert_int_equal(parse_with_options((const uint8_t[]){0, 131, 0, 0}, 4, &m), PKT_IP);

	/* loose and strict source routes, also behind other options */
	assert_int_equal(parse_with_options((const uint8_t[]){131, 7, 4, 10, 9, 9, 9, 0}, 8, &m),
			 PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_SOURCE_ROUTE);
	assert_int_equal(parse_with_options((const uint8_t[]){1, 148, 4, 0, 0, 137, 7, 4,
							      10, 9, 9, 9}, 12, &m),
			 PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_SOURCE_ROUTE);
	assert_string_equal(pkt_reason_name(m.reason), "source-route");

	/* lengths of 0 or 1, past the header, or a length byte outside it */
	assert_int_equal(parse_with_options((const uint8_t[]){7, 0, 4, 0}, 4, &m), PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_BAD_OPTIONS);
	assert_int_equal(parse_with_options((const uint8_t[]){7, 1, 4, 0}, 4, &m), PKT_MALFORMED);
	assert_int_equal(parse_with_options((const uint8_t[]){7, 9, 4, 0, 0, 0, 0, 0}, 8, &m),
			 PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_BAD_OPTIONS);
	assert_int_equal(parse_with_options((const uint8_t[]){1, 1, 1, 7}, 4, &m), PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_BAD_OPTIONS);
	assert_string_equal(pkt_reason_name(m.reason), "bad-ipv4-options");
}

/* IPv6 UDP behind a chain of 8-byte extension headers, each given as
 * its next-header number and its third byte (a routing header's type). */
static int parse_chain(const uint8_t (*chain)[2], unsigned n, struct pkt_meta *m)
{
	struct frame f;
	uint8_t *ip;

	ipv6(&f, 17, 1234, 7000, 0);
	ip = f.b + 14;
	memmove(ip + 40 + 8 * n, ip + 40, 8);
	for (unsigned i = 0; i < n; i++) {
		uint8_t *h = ip + 40 + 8 * i;

		memset(h, 0, 8);
		h[0] = i + 1 < n ? chain[i + 1][0] : 17;
		h[2] = chain[i][1];
		if (chain[i][0] == 44)
			h[3] = 0;	/* fragment: offset 0, no more: atomic */
	}
	ip[6] = n ? chain[0][0] : 17;
	put16(ip + 4, (uint16_t)(8 * n + 8));
	f.len += 8 * n;
	return pkt_parse(f.b, f.len, m);
}

static void test_ipv6_header_order(void **state)
{
	struct pkt_meta m;
	(void)state;

	/* hop-by-hop first, destination options, a type 2 routing header
	 * (mobile IPv6), a fragment header, destination options again */
	assert_int_equal(parse_chain((const uint8_t[][2]){{0, 0}, {60, 0}, {43, 2}, {44, 0}, {60, 0}},
				     5, &m),
			 PKT_IP);
	assert_int_equal(m.key.dport, 7000);
	assert_int_equal(m.l4_off, 14 + 40 + 40);
	/* a segment routing header (type 4) is not a source route to refuse */
	assert_int_equal(parse_chain((const uint8_t[][2]){{43, 4}}, 1, &m), PKT_IP);

	/* routing header type 0, whatever its segments left (byte 3: 0 here) */
	assert_int_equal(parse_chain((const uint8_t[][2]){{43, 0}}, 1, &m), PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_SOURCE_ROUTE);
	assert_int_equal(parse_chain((const uint8_t[][2]){{0, 0}, {60, 0}, {43, 0}}, 3, &m),
			 PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_SOURCE_ROUTE);

	/* hop-by-hop after another header; two routing or fragment headers */
	assert_int_equal(parse_chain((const uint8_t[][2]){{60, 0}, {0, 0}}, 2, &m), PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_BAD_EXT);
	assert_int_equal(parse_chain((const uint8_t[][2]){{0, 0}, {0, 0}}, 2, &m), PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_BAD_EXT);
	assert_int_equal(parse_chain((const uint8_t[][2]){{43, 2}, {60, 0}, {43, 2}}, 3, &m),
			 PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_BAD_EXT);
	assert_int_equal(parse_chain((const uint8_t[][2]){{44, 0}, {44, 0}}, 2, &m), PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_BAD_EXT);
}

static void test_non_ip(void **state)
{
	struct frame f;
	struct pkt_meta m;
	(void)state;

	eth(&f, 0, 0x0806);
	f.len = 42;
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_NON_IP);
	assert_int_equal(m.ethertype, 0x0806);
	assert_int_equal(m.key.family, 0);
}

/* Every prefix of a valid frame that cuts a header is malformed, and the
 * parser reads nothing past the cut (ASan sees the exact-size copy). */
static void test_truncations(void **state)
{
	struct frame f;
	struct pkt_meta m;
	(void)state;

	ipv4(&f, 1, 6, 1, 2, 0);
	for (uint32_t cut = 0; cut < f.len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);

		memcpy(copy, f.b, cut);
		assert_int_equal(pkt_parse(copy, cut, &m), PKT_MALFORMED);
		assert_int_not_equal(m.reason, PKT_OK);
		free(copy);
	}
	ipv6(&f, 17, 1, 2, 1);
	for (uint32_t cut = 14; cut < f.len; cut++) {
		uint8_t *copy = malloc(cut);

		memcpy(copy, f.b, cut);
		assert_int_equal(pkt_parse(copy, cut, &m), PKT_MALFORMED);
		free(copy);
	}
	ipv4(&f, 0, 6, 1, 2, 0);
	f.b[14] = 0x44;			/* IHL 16 bytes */
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_BAD_L3);
	assert_string_equal(pkt_reason_name(m.reason), "bad-l3");
}

/* The pipeline's inline parser must give exactly pkt_parse's meta for
 * every frame it takes, and leave every other frame to it. Frames: valid
 * IPv4 TCP/UDP ones with random bytes of their headers changed (type,
 * version and IHL, lengths, fragment bits, protocol, flags) and random
 * lengths, cut short or padded. */
static void test_fast_parse_agrees(void **state)
{
	static const uint8_t hot[] = {12, 13, 14, 16, 17, 20, 21, 23, 47};
	struct frame f;
	struct pkt_meta fast, full;
	uint32_t taken = 0, left = 0, seed = 12345;
	(void)state;

	for (uint32_t round = 0; round < 200000; round++) {
		uint32_t len;
		int kind;

		seed = seed * 1103515245u + 12345u;
		ipv4(&f, 0, (seed >> 16) & 1 ? 6 : 17, (uint16_t)seed, (uint16_t)(seed >> 8), 0);
		for (uint32_t k = (seed >> 20) % 3; k > 0; k--) {
			seed = seed * 1103515245u + 12345u;
			f.b[hot[(seed >> 16) % sizeof(hot)]] = (uint8_t)(seed >> 8);
		}
		if ((seed >> 24) % 8)	/* mostly with the checksum made right again */
			ip4_csum(f.b + 14);
		seed = seed * 1103515245u + 12345u;
		len = (seed >> 16) % 4 ? f.len + (seed >> 8) % 24 : (seed >> 8) % (f.len + 1);
		if (len > sizeof(f.b))
			len = sizeof(f.b);
		memset(&fast, 0xa5, sizeof(fast));
		memset(&full, 0x5a, sizeof(full));
		kind = pkt_parse_fast(f.b, len, &fast);
		if (kind < 0) {
			left++;
			continue;
		}
		taken++;
		assert_int_equal(kind, PKT_IP);
		assert_int_equal(pkt_parse(f.b, len, &full), PKT_IP);
		assert_memory_equal(&fast, &full, sizeof(fast));
	}
	/* both sides exercised */
	assert_true(taken > 50000);
	assert_true(left > 50000);
	/* and what it must leave */
	ipv4(&f, 1, 6, 1, 2, 0);
	assert_int_equal(pkt_parse_fast(f.b, f.len, &fast), -1);	/* VLAN */
	ipv4(&f, 0, 6, 1, 2, 0x2000);
	assert_int_equal(pkt_parse_fast(f.b, f.len, &fast), -1);	/* first fragment */
	ipv4(&f, 0, 17, 1, 2, 0x0001);
	assert_int_equal(pkt_parse_fast(f.b, f.len, &fast), -1);	/* later fragment */
	ipv4(&f, 0, 1, 0, 0, 0);
	assert_int_equal(pkt_parse_fast(f.b, f.len, &fast), -1);	/* ICMP */
	ipv6(&f, 6, 1, 2, 0);
	assert_int_equal(pkt_parse_fast(f.b, f.len, &fast), -1);
	ipv4(&f, 0, 6, 1, 2, 0);
	assert_int_equal(pkt_parse_fast(f.b, f.len - 1, &fast), -1);	/* cut */
	assert_int_equal(pkt_parse_fast(f.b, f.len, &fast), PKT_IP);
	f.b[14 + 11] ^= 1;
	assert_int_equal(pkt_parse_fast(f.b, f.len, &fast), -1);	/* checksum */
}

/* RFC 1812 5.2.2: a header whose checksum is wrong is dropped, whatever
 * field is damaged. */
static void test_ipv4_header_checksum(void **state)
{
	struct frame f;
	struct pkt_meta m;
	uint32_t sum;
	(void)state;

	for (uint32_t byte = 0; byte < 20; byte++) {
		if (byte == 0 || byte == 2 || byte == 3)
			continue;	/* version/IHL and length: other reasons */
		ipv4(&f, 0, 17, 5000, 53, 0);
		f.b[14 + byte] ^= 0x10;
		assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_MALFORMED);
		assert_int_equal(m.reason, PKT_ERR_BAD_CSUM);
	}
	assert_string_equal(pkt_reason_name(PKT_ERR_BAD_CSUM), "bad-ipv4-checksum");
	/* with options too */
	assert_int_equal(parse_with_options((const uint8_t[]){1, 1, 1, 0}, 4, &m), PKT_IP);
	/* a TTL and checksum changed together as a router does (RFC 1624) */
	ipv4(&f, 0, 17, 5000, 53, 0);
	f.b[14 + 8]--;
	sum = (uint32_t)(f.b[14 + 10] << 8 | f.b[14 + 11]) + 0x100;
	put16(f.b + 14 + 10, (uint16_t)((sum & 0xffff) + (sum >> 16)));
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	/* ... and a TTL changed alone */
	f.b[14 + 8]--;
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_MALFORMED);
	assert_int_equal(m.reason, PKT_ERR_BAD_CSUM);
}

static void test_first_match(void **state)
{
	struct rfw_acl_entry e[3] = {
		/* 1: tcp to 10.2.0.0/16 port 443 */
		{.family = 4, .dst = {10, 2}, .dst_len = 16, .proto = 6,
		 .flags = RFW_ACL_PROTO | RFW_ACL_PORTS, .sport_hi = 65535,
		 .dport_lo = 443, .dport_hi = 443, .rule = 1},
		/* 2: anything from 10.1.0.0/17 */
		{.family = 4, .src = {10, 1}, .src_len = 17, .rule = 2},
		/* 3: any port 1-1024 (port rule) */
		{.flags = RFW_ACL_PORTS, .sport_hi = 65535, .dport_lo = 1,
		 .dport_hi = 1024, .rule = 3},
	};
	struct cls_table t = {.entries = e, .count = 3};
	struct frame f;
	struct pkt_meta m;
	const struct pkt_key *keys[1] = {&m.key};
	uint32_t rule;
	(void)state;

	ipv4(&f, 0, 6, 40000, 443, 0);
	pkt_parse(f.b, f.len, &m);
	assert_int_equal(cls_lookup(&t, &m.key), 1);
	cls_lookup_batch(&t, keys, 1, &rule);
	assert_int_equal(rule, 1);

	m.key.dport = 80;		/* misses 1, source in 10.1.0.0/17 */
	assert_int_equal(cls_lookup(&t, &m.key), 2);
	m.key.src[2] = 128;		/* 10.1.128.5: outside /17 */
	assert_int_equal(cls_lookup(&t, &m.key), 3);
	m.key.dport = 2000;
	assert_int_equal(cls_lookup(&t, &m.key), 0);
	m.key.dport = 80;
	m.key.has_ports = 0;		/* a fragment matches no port rule */
	assert_int_equal(cls_lookup(&t, &m.key), 0);

	ipv6(&f, 17, 1, 80, 0);		/* IPv6: only the family-free rule 3 */
	pkt_parse(f.b, f.len, &m);
	assert_int_equal(cls_lookup(&t, &m.key), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_tcp),
		cmocka_unit_test(test_vlan_and_qinq),
		cmocka_unit_test(test_fragments_have_no_ports),
		cmocka_unit_test(test_overlapping_fragments),
		cmocka_unit_test(test_oversize_fragments),
		cmocka_unit_test(test_ipv6_and_extension),
		cmocka_unit_test(test_ipv4_options),
		cmocka_unit_test(test_ipv4_header_checksum),
		cmocka_unit_test(test_ipv6_header_order),
		cmocka_unit_test(test_non_ip),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_fast_parse_agrees),
		cmocka_unit_test(test_first_match),
	};
	return cmocka_run_group_tests_name("pkt", tests, NULL, NULL);
}
