/* In-place replies: reuse the frame's buffer, keep its L2 header (VLAN
 * tags included) with the MACs swapped, and build fresh L3/L4 headers
 * with full checksums (the packet is new, nothing to update). */
#include "reply.h"

#include <string.h>

#include "csum.h"
#include "wire.h"

#define IPV4_HLEN 20
#define IPV6_HLEN 40
#define ICMP_HLEN 8
#define TCP_HLEN 20
#define REPLY_TTL 64
#define IPV4_ERROR_MAX 576	/* RFC 1812 4.3.2.3 */
#define IPV6_ERROR_MAX 1280	/* RFC 4443 2.4(c) */

static void swap_macs(uint8_t *frame)
{
	uint8_t tmp[6];

	memcpy(tmp, frame, 6);
	memcpy(frame, frame + 6, 6);
	memcpy(frame + 6, tmp, 6);
}

/* A fresh IP header at l3 for `payload` bytes of `proto`. */
static void ip_header(uint8_t *l3, uint8_t family, const uint8_t *src, const uint8_t *dst,
		      uint8_t proto, uint32_t payload)
{
	if (family == 4) {
		memset(l3, 0, IPV4_HLEN);
		l3[0] = 0x45;
		wr16(l3 + 2, (uint16_t)(IPV4_HLEN + payload));
		wr16(l3 + 6, 0x4000);		/* DF */
		l3[8] = REPLY_TTL;
		l3[9] = proto;
		memcpy(l3 + 12, src, 4);
		memcpy(l3 + 16, dst, 4);
		wr16(l3 + 10, csum_ipv4_header(l3));
	} else {
		memset(l3, 0, IPV6_HLEN);
		l3[0] = 0x60;
		wr16(l3 + 4, (uint16_t)payload);
		l3[6] = proto;
		l3[7] = REPLY_TTL;
		memcpy(l3 + 8, src, 16);
		memcpy(l3 + 24, dst, 16);
	}
}

/* RFC 1812 4.3.2.7, RFC 1122 3.2.2, RFC 4443 2.4(e.6): no error (and no
 * RST) to a source that names no single host: this network (0/8),
 * loopback, multicast, class E and the limited broadcast; IPv6's
 * unspecified, loopback and multicast addresses. */
static int single_host_source(const struct pkt_key *k)
{
	if (k->family == 4)
		return k->src[0] != 0 && k->src[0] != 127 && k->src[0] < 224;
	if (k->src[0] == 0xff)
		return 0;
	for (int i = 0; i < 15; i++)
		if (k->src[i])
			return 1;
	return k->src[15] > 1;
}

uint32_t reply_tcp_rst(uint8_t *frame, uint32_t len, uint32_t room, const struct pkt_meta *m)
{
	const struct pkt_key *k = &m->key;
	uint32_t hl = k->family == 4 ? IPV4_HLEN : IPV6_HLEN;
	uint32_t l3 = m->l3_off, l4 = m->l4_off, seg_len, seq, ack;
	uint8_t src[16], dst[16], *t, flags;
	uint16_t sport, dport;

	if (k->proto != 6 || !m->l4_off || m->fragment == 2 || (k->tcp_flags & 0x04) ||
	    l4 + TCP_HLEN > len || l3 + hl + TCP_HLEN > room || !single_host_source(k))
		return 0;
	/* Segment length: IP payload after the TCP header, plus SYN/FIN; a
	 * header longer than its segment is answered with nothing. */
	seg_len = pkt_ip_end(frame, len, m) - l4;
	if ((uint32_t)(frame[l4 + 12] >> 4) * 4 > seg_len)
		return 0;
	seg_len -= (uint32_t)(frame[l4 + 12] >> 4) * 4;
	seg_len += !!(k->tcp_flags & 0x02) + !!(k->tcp_flags & 0x01);
	if (k->tcp_flags & 0x10) {		/* ACK set: RST takes its ack as seq */
		seq = rd32(frame + l4 + 8);
		ack = 0;
		flags = 0x04;
	} else {
		seq = 0;
		ack = rd32(frame + l4 + 4) + seg_len;
		flags = 0x14;
	}
	memcpy(src, k->dst, 16);
	memcpy(dst, k->src, 16);
	sport = k->dport;
	dport = k->sport;

	swap_macs(frame);
	ip_header(frame + l3, k->family, src, dst, 6, TCP_HLEN);
	t = frame + l3 + hl;
	memset(t, 0, TCP_HLEN);
	wr16(t, sport);
	wr16(t + 2, dport);
	wr32(t + 4, seq);
	wr32(t + 8, ack);
	t[12] = 5 << 4;
	t[13] = flags;
	wr16(t + 16, csum_l4(k->family, src, dst, 6, t, TCP_HLEN));
	return l3 + hl + TCP_HLEN;
}

static int no_error_allowed(const struct pkt_meta *m, const uint8_t *frame,
			    enum reply_kind kind)
{
	const struct pkt_key *k = &m->key;

	/* Not for a non-first fragment (RFC 1812 4.3.2.7), but IPv6's
	 * packet too big is (RFC 4443 makes no such exception; a sender's
	 * path MTU needs it whichever piece was too big). */
	if ((m->fragment == 2 && !(kind == REPLY_TOO_BIG && k->family == 6)) ||
	    csum_icmp_is_error(m) || !single_host_source(k))
		return 1;
	if (k->proto == (k->family == 4 ? 1 : 58) && !m->l4_off)
		return 1;			/* ICMP we could not read: could be an error */
	if (k->family == 4)
		return k->dst[0] >= 224 || (k->dst[0] == 255 && k->dst[3] == 255) ||
		       (frame[0] & 1);	/* multicast, broadcast, L2 multicast */
	return k->dst[0] == 0xff || (frame[0] & 1);
}

/* ICMPv4 type/code and ICMPv6 type/code of each kind. */
static const uint8_t icmp_code[][2][2] = {
	[REPLY_UNREACHABLE] = {{3, 13}, {1, 1}},
	[REPLY_TIME_EXCEEDED] = {{11, 0}, {3, 0}},
	[REPLY_TOO_BIG] = {{3, 4}, {2, 0}},
	[REPLY_HOST_UNREACHABLE] = {{3, 1}, {1, 3}},
};

static uint32_t icmp_error(uint8_t *frame, uint32_t len, uint32_t room, const struct pkt_meta *m,
			   enum reply_kind kind, const uint8_t *from, uint32_t mtu)
{
	const struct pkt_key *k = &m->key;
	uint32_t l3 = m->l3_off, hl = k->family == 4 ? IPV4_HLEN : IPV6_HLEN;
	uint32_t max = (k->family == 4 ? IPV4_ERROR_MAX : IPV6_ERROR_MAX) - hl - ICMP_HLEN;
	uint32_t quote, total;
	uint8_t dst[16], *icmp, proto = k->family == 4 ? 1 : 58;

	if (no_error_allowed(m, frame, kind) || l3 + hl + ICMP_HLEN >= room)
		return 0;
	quote = pkt_ip_end(frame, len, m) - l3;
	/* path MTU replies are not rate limited: never larger than the
	 * packet (docs/security.md); with an MTU of 68 that still quotes
	 * its header and 20 bytes */
	if (kind == REPLY_TOO_BIG && quote > hl + ICMP_HLEN && max > quote - hl - ICMP_HLEN)
		max = quote - hl - ICMP_HLEN;
	if (quote > max)
		quote = max;
	if (l3 + hl + ICMP_HLEN + quote > room)
		quote = room - l3 - hl - ICMP_HLEN;
	memcpy(dst, k->src, 16);

	/* The quoted packet moves back by the new headers (overlapping). */
	memmove(frame + l3 + hl + ICMP_HLEN, frame + l3, quote);
	swap_macs(frame);
	ip_header(frame + l3, k->family, from, dst, proto, ICMP_HLEN + quote);
	icmp = frame + l3 + hl;
	memset(icmp, 0, ICMP_HLEN);
	icmp[0] = icmp_code[kind][k->family == 6][0];
	icmp[1] = icmp_code[kind][k->family == 6][1];
	if (kind == REPLY_TOO_BIG) {
		if (k->family == 4)
			wr16(icmp + 6, (uint16_t)(mtu > 0xffff ? 0xffff : mtu));	/* next-hop MTU */
		else
			wr32(icmp + 4, mtu);
	}
	total = ICMP_HLEN + quote;
	wr16(icmp + 2, csum_l4(k->family, from, dst, proto, icmp, total));
	return l3 + hl + total;
}

uint32_t reply_icmp_error(uint8_t *frame, uint32_t len, uint32_t room, const struct pkt_meta *m,
			  enum reply_kind kind, const uint8_t *from)
{
	return icmp_error(frame, len, room, m, kind, from, 0);
}

uint32_t reply_icmp_too_big(uint8_t *frame, uint32_t len, uint32_t room,
			    const struct pkt_meta *m, const uint8_t *from, uint32_t mtu)
{
	return icmp_error(frame, len, room, m, REPLY_TOO_BIG, from, mtu);
}
