/* Frame builders shared by the data-path tests: Ethernet + IPv4/IPv6 +
 * TCP/UDP/SCTP/ICMP with correct checksums, so a test can send what a real
 * host would and check what comes out with a full recomputation. */
#ifndef RAMPART_TEST_FRAMES_H
#define RAMPART_TEST_FRAMES_H

#include <stdint.h>
#include <string.h>

#include "crc32c.h"
#include "csum.h"

#define FRAME_ROOM 2048

struct frame {
	uint8_t b[FRAME_ROOM];
	uint32_t len;
};

struct flow_spec {
	uint8_t family;		/* 4 or 6 */
	uint8_t proto;		/* 6, 17, 132, 1 or 58 */
	uint8_t src[16], dst[16];
	uint16_t sport, dport;	/* ICMP: the echo identifier in sport */
	uint8_t ttl;
	uint8_t tcp_flags;
	uint32_t seq, ack;
	uint8_t icmp_type;	/* ICMP/ICMPv6: 0 = echo request */
	uint32_t payload;	/* bytes of payload (pattern) */
};

static inline void frame_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline uint16_t frame_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void frame_put32(uint8_t *p, uint32_t v)
{
	frame_put16(p, (uint16_t)(v >> 16));
	frame_put16(p + 2, (uint16_t)v);
}

static inline uint32_t frame_get32(const uint8_t *p)
{
	return (uint32_t)frame_get16(p) << 16 | frame_get16(p + 2);
}

/* Build s into f: dst MAC 02:00:00:00:00:02, src MAC 02:00:00:00:00:01. */
static inline void frame_build(struct frame *f, const struct flow_spec *s)
{
	uint32_t hl = s->family == 4 ? 20 : 40, l4len;
	uint8_t *ip = f->b + 14, *l4 = ip + hl;

	memset(f, 0, sizeof(*f));
	memcpy(f->b, (uint8_t[]){2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}, 12);
	frame_put16(f->b + 12, s->family == 4 ? 0x0800 : 0x86DD);
	l4len = (s->proto == 6 ? 20 : s->proto == 132 ? 12 : 8) + s->payload;
	for (uint32_t i = 0; i < s->payload; i++)
		l4[(s->proto == 6 ? 20 : s->proto == 132 ? 12 : 8) + i] = (uint8_t)(i * 7 + 1);
	if (s->proto == 132) {	/* common header; the payload stands for chunks */
		frame_put16(l4, s->sport);
		frame_put16(l4 + 2, s->dport);
		frame_put32(l4 + 4, s->seq);	/* verification tag */
	} else if (s->proto == 6) {
		frame_put16(l4, s->sport);
		frame_put16(l4 + 2, s->dport);
		frame_put32(l4 + 4, s->seq);
		frame_put32(l4 + 8, s->ack);
		l4[12] = 5 << 4;
		l4[13] = s->tcp_flags;
		frame_put16(l4 + 14, 65535);
	} else if (s->proto == 17) {
		frame_put16(l4, s->sport);
		frame_put16(l4 + 2, s->dport);
		frame_put16(l4 + 4, (uint16_t)l4len);
	} else {
		l4[0] = s->icmp_type ? s->icmp_type : (s->proto == 1 ? 8 : 128);
		frame_put16(l4 + 4, s->sport);
		frame_put16(l4 + 6, 1);
	}
	if (s->family == 4) {
		ip[0] = 0x45;
		frame_put16(ip + 2, (uint16_t)(hl + l4len));
		ip[8] = s->ttl ? s->ttl : 64;
		ip[9] = s->proto;
		memcpy(ip + 12, s->src, 4);
		memcpy(ip + 16, s->dst, 4);
		frame_put16(ip + 10, csum_ipv4_header(ip));
	} else {
		ip[0] = 0x60;
		frame_put16(ip + 4, (uint16_t)l4len);
		ip[6] = s->proto;
		ip[7] = s->ttl ? s->ttl : 64;
		memcpy(ip + 8, s->src, 16);
		memcpy(ip + 24, s->dst, 16);
	}
	{
		int at = csum_l4_field(s->proto);

		if (at >= 0)
			frame_put16(l4 + at, csum_l4(s->family, s->src, s->dst, s->proto, l4, l4len));
	}
	if (s->proto == 132) {	/* CRC32c, least significant byte first (RFC 4960) */
		uint32_t c = crc32c(0, l4, l4len);

		for (int k = 0; k < 4; k++)
			l4[8 + k] = (uint8_t)(c >> (8 * k));
	}
	f->len = 14 + hl + l4len;
}

/* An echo reply (ICMP type 0, ICMPv6 129) as frame_build builds the
 * request of s: identifier in s->sport. */
static inline void frame_build_echo_reply(struct frame *f, const struct flow_spec *s)
{
	uint32_t l4 = 14 + (s->family == 4 ? 20 : 40);

	frame_build(f, s);
	f->b[l4] = s->family == 4 ? 0 : 129;
	frame_put16(f->b + l4 + 2, 0);
	frame_put16(f->b + l4 + 2, csum_l4(s->family, s->src, s->dst, s->proto, f->b + l4,
					   f->len - l4));
}

/* A TCP segment of s with `optlen` bytes of options (a multiple of 4, at
 * most 40) after its header, then s->payload bytes. */
static inline void frame_build_tcp_options(struct frame *f, const struct flow_spec *s,
					   const uint8_t *opts, uint32_t optlen)
{
	struct flow_spec t = *s;
	uint32_t l4 = 14 + (s->family == 4 ? 20 : 40);
	uint8_t *ip = f->b + 14;

	t.proto = 6;
	t.payload += optlen;
	frame_build(f, &t);
	memcpy(f->b + l4 + 20, opts, optlen);
	f->b[l4 + 12] = (uint8_t)((5 + optlen / 4) << 4);
	frame_put16(f->b + l4 + 16, 0);
	frame_put16(f->b + l4 + 16, csum_l4(s->family, s->family == 4 ? ip + 12 : ip + 8,
					    s->family == 4 ? ip + 16 : ip + 24, 6, f->b + l4,
					    f->len - l4));
}

/* 1 when every checksum of the IP frame at l3 offset 14 is right. */
static inline int frame_checksums_ok(const uint8_t *b, uint32_t len)
{
	const uint8_t *ip = b + 14;
	uint8_t family = ip[0] >> 4, proto;
	uint32_t hl, l4len;
	int at;

	if (family == 4) {
		hl = (ip[0] & 15) * 4u;
		if (csum_ipv4_header(ip) != frame_get16(ip + 10))
			return 0;
		proto = ip[9];
		l4len = frame_get16(ip + 2) - hl;
	} else {
		hl = 40;
		proto = ip[6];
		l4len = frame_get16(ip + 4);
	}
	if (14 + hl + l4len > len)
		return 0;
	if (proto == 132) {
		uint8_t copy[FRAME_ROOM];
		uint32_t c;

		if (l4len < 12)
			return 0;
		memcpy(copy, ip + hl, l4len);
		memset(copy + 8, 0, 4);
		c = crc32c(0, copy, l4len);
		return ip[hl + 8] == (uint8_t)c && ip[hl + 9] == (uint8_t)(c >> 8) &&
		       ip[hl + 10] == (uint8_t)(c >> 16) && ip[hl + 11] == (uint8_t)(c >> 24);
	}
	at = csum_l4_field(proto);
	if (at < 0)
		return 1;
	return csum_l4(family, family == 4 ? ip + 12 : ip + 8, family == 4 ? ip + 16 : ip + 24,
		       proto, ip + hl, l4len) == frame_get16(ip + hl + at);
}

/* Make the IPv4 frame f a fragment: IP id, flags and offset (in 8-byte
 * units, 0x2000 = more fragments), header checksum again. */
static inline void frame_set_fragment(struct frame *f, uint16_t id, uint16_t flags_offset)
{
	uint8_t *ip = f->b + 14;

	frame_put16(ip + 4, id);
	frame_put16(ip + 6, flags_offset);
	frame_put16(ip + 10, 0);
	frame_put16(ip + 10, csum_ipv4_header(ip));
}

/* An ICMPv4 time-exceeded from router `from` to `to` quoting the first 28
 * bytes (IP header + 8) of the IPv4 frame `quoted` as it died (TTL 1). */
static inline void frame_build_time_exceeded(struct frame *f, const uint8_t dst_mac[6],
					     const uint8_t src_mac[6], const uint8_t from[4],
					     const uint8_t to[4], const struct frame *quoted)
{
	uint8_t *q = f->b + 14;

	memset(f, 0, sizeof(*f));
	memcpy(f->b, dst_mac, 6);
	memcpy(f->b + 6, src_mac, 6);
	frame_put16(f->b + 12, 0x0800);
	q[0] = 0x45;
	frame_put16(q + 2, (uint16_t)(20 + 8 + 28));
	q[8] = 64;
	q[9] = 1;
	memcpy(q + 12, from, 4);
	memcpy(q + 16, to, 4);
	frame_put16(q + 10, csum_ipv4_header(q));
	q[20] = 11;
	memcpy(q + 28, quoted->b + 14, 28);
	q[28 + 8] = 1;
	frame_put16(q + 28 + 10, 0);
	frame_put16(q + 28 + 10, csum_ipv4_header(q + 28));
	frame_put16(q + 22, csum_l4(4, q + 12, q + 16, 1, q + 20, 36));
	f->len = 14 + 56;
}

#endif
