/* Internet checksum arithmetic (RFC 1071, RFC 1624) and the NAT rewrites.
 * The rewrites never sum a payload: they collect the one's-complement
 * difference of the words they change and fold it into each checksum
 * that covers them, so their cost does not depend on packet length. */
#include "csum.h"
#include "crc32c.h"
#include "wire.h"

#include <string.h>

enum {
	IPP_ICMP = 1, IPP_TCP = 6, IPP_UDP = 17, IPP_ICMPV6 = 58, IPP_SCTP = 132,
	IPP_HOPOPTS = 0, IPP_ROUTING = 43, IPP_FRAGMENT = 44, IPP_AH = 51,
	IPP_DSTOPTS = 60,
};

#define ICMP_ECHOREPLY 0
#define ICMP_ECHO 8
#define ICMPV6_ECHO_REQUEST 128
#define ICMPV6_ECHO_REPLY 129
#define IPV6_HLEN 40
#define ICMP_HLEN 8		/* type, code, checksum, 4 bytes before the copy */
#define MAX_IPV6_EXT 8

uint32_t csum_add(uint32_t sum, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t s = sum;

	/* 64-bit accumulator: no carry lost before the final fold for any
	 * buffer shorter than 2^48 bytes; 2^32 == 1 mod 0xFFFF, so folding
	 * the halves keeps the one's-complement value (RFC 1071 2(C)). */
	while (len >= 4) {
		s += (uint32_t)rd16(p) + rd16(p + 2);
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		s += rd16(p);
		p += 2;
		len -= 2;
	}
	if (len)
		s += (uint32_t)p[0] << 8;
	while (s >> 32)
		s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}

uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)~sum;
}

uint16_t csum_buf(const void *buf, size_t len)
{
	return csum_fold(csum_add(0, buf, len));
}

uint16_t csum_ipv4_header(const uint8_t *ip)
{
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
	uint32_t s = csum_add(0, ip, 10);

	return csum_fold(csum_add(s, ip + 12, ihl > 12 ? ihl - 12 : 0));
}

uint32_t csum_pseudo_v4(const uint8_t src[4], const uint8_t dst[4],
			uint8_t proto, uint32_t l4_len)
{
	uint32_t s = csum_add(0, src, 4);

	s = csum_add(s, dst, 4);
	return s + proto + (l4_len >> 16) + (l4_len & 0xffffu);
}

uint32_t csum_pseudo_v6(const uint8_t src[16], const uint8_t dst[16],
			uint8_t proto, uint32_t l4_len)
{
	uint32_t s = csum_add(0, src, 16);

	s = csum_add(s, dst, 16);
	return s + proto + (l4_len >> 16) + (l4_len & 0xffffu);
}

int csum_l4_field(uint8_t proto)
{
	switch (proto) {
	case IPP_TCP:
		return 16;
	case IPP_UDP:
		return 6;
	case IPP_ICMP:
	case IPP_ICMPV6:
		return 2;
	default:
		return -1;
	}
}

uint16_t csum_l4(uint8_t family, const uint8_t *src, const uint8_t *dst,
		 uint8_t proto, const uint8_t *l4, uint32_t l4_len)
{
	int field = csum_l4_field(proto);
	uint32_t s = 0;
	uint16_t c;

	if (field < 0 || l4_len < (uint32_t)field + 2)
		return 0;
	if (family == 6)
		s = csum_pseudo_v6(src, dst, proto, l4_len);
	else if (proto != IPP_ICMP)	/* ICMPv4 has no pseudo-header */
		s = csum_pseudo_v4(src, dst, proto, l4_len);
	/* field is even, so the sum chains across the skipped word. */
	s = csum_add(s, l4, (size_t)field);
	s = csum_add(s, l4 + field + 2, l4_len - (uint32_t)field - 2);
	c = csum_fold(s);
	return proto == IPP_UDP && c == 0 ? 0xffff : c;
}

static uint32_t delta_bytes(const uint8_t *old, const uint8_t *new, size_t n)
{
	uint32_t d = 0;

	for (size_t i = 0; i < n; i += 2)
		d += csum_delta16(rd16(old + i), rd16(new + i));
	return d;
}

uint16_t csum_update32(uint16_t hc, const uint8_t old4[4], const uint8_t new4[4])
{
	return csum_apply(hc, delta_bytes(old4, new4, 4));
}

uint16_t csum_update128(uint16_t hc, const uint8_t old16[16], const uint8_t new16[16])
{
	return csum_apply(hc, delta_bytes(old16, new16, 16));
}

/* Update the checksum field at p by delta; 0 is kept as "no checksum" and
 * a result of 0 becomes 0xFFFF when `udp` (RFC 768). Returns the
 * difference the change makes to any checksum covering the field. */
static uint32_t fix(uint8_t *p, uint32_t delta, int udp)
{
	uint16_t old = rd16(p), new;

	if (udp && old == 0)
		return 0;
	new = csum_apply(old, delta);
	if (udp && new == 0)
		new = 0xffff;
	wr16(p, new);
	return csum_delta16(old, new);
}

static int is_echo(uint8_t proto, uint8_t type)
{
	if (proto == IPP_ICMP)
		return type == ICMP_ECHO || type == ICMP_ECHOREPLY;
	return proto == IPP_ICMPV6 &&
	       (type == ICMPV6_ECHO_REQUEST || type == ICMPV6_ECHO_REPLY);
}

/* Where the rewritten fields of one IP packet are. */
struct layout {
	uint32_t ip;		/* IP header */
	uint32_t l4;		/* upper-layer header, 0 when not reachable */
	uint8_t family, proto;
	uint8_t whole;		/* not a fragment, not a quoted copy */
};

/* Offsets of the fields csum_rewrite touches in the L4 header, checked
 * against len; -1 when a needed field is missing. */
struct l4_plan {
	int32_t port;		/* port / echo id offset, -1 none */
	int32_t sum;		/* checksum offset, -1 none */
	int32_t crc_end;	/* SCTP: end of the packet its CRC32c is
				 * recomputed over, -1 none */
	uint8_t pseudo;		/* checksum covers the addresses */
	uint8_t udp;
};

/* The end of the IP packet at l->ip as its header gives it, or 0 when
 * that is beyond len. */
static uint32_t ip_end(const uint8_t *f, uint32_t len, const struct layout *l)
{
	uint32_t end = l->family == 4 ? l->ip + rd16(f + l->ip + 2)
				      : l->ip + IPV6_HLEN + rd16(f + l->ip + 4);

	return end <= len ? end : 0;
}

static int plan_l4(const uint8_t *f, uint32_t len, const struct layout *l,
		   enum csum_side side, uint16_t port, int need_sum,
		   struct l4_plan *p)
{
	uint32_t o = l->l4;

	p->port = p->sum = p->crc_end = -1;
	p->pseudo = p->udp = 0;
	if (!o)
		return 0;
	switch (l->proto) {
	case IPP_TCP:
	case IPP_UDP:
		if (len < o + 4)
			return -1;
		p->port = (int32_t)(o + (side == CSUM_DST ? 2 : 0));
		p->pseudo = 1;
		p->udp = l->proto == IPP_UDP;
		if (len >= o + (uint32_t)csum_l4_field(l->proto) + 2)
			p->sum = (int32_t)o + csum_l4_field(l->proto);
		else if (need_sum)
			return -1;
		return 0;
	case IPP_SCTP: {
		uint32_t end;

		if (len < o + 4)
			return -1;
		p->port = (int32_t)(o + (side == CSUM_DST ? 2 : 0));
		if (rd16(f + p->port) == port || !need_sum)
			return 0;
		/* the CRC32c covers the ports: recomputed over the packet */
		end = l->whole ? ip_end(f, len, l) : 0;
		if (end < o + 12)
			return -1;
		p->crc_end = (int32_t)end;
		return 0;
	}
	case IPP_ICMP:
	case IPP_ICMPV6:
		p->pseudo = l->proto == IPP_ICMPV6;
		if (len >= o + 4)
			p->sum = (int32_t)o + 2;
		else if (need_sum)
			return -1;
		if (len >= o + 1 && is_echo(l->proto, f[o])) {
			if (len >= o + 6)
				p->port = (int32_t)o + 4;
			else if (need_sum)
				return -1;
		}
		return 0;
	default:
		return 0;
	}
}

static uint32_t addr_off(const struct layout *l, enum csum_side side)
{
	if (l->family == 4)
		return l->ip + (side == CSUM_DST ? 16 : 12);
	return l->ip + (side == CSUM_DST ? 24 : 8);
}

/* Apply an address + port change to one packet's headers (outer or
 * embedded). Returns the one's-complement difference of every word it
 * changed, for a checksum that covers the whole packet (the outer ICMP
 * checksum of an error). */
static uint32_t rewrite(uint8_t *f, const struct layout *l,
			const struct l4_plan *p, enum csum_side side,
			const uint8_t *addr, uint16_t port)
{
	uint32_t alen = l->family == 4 ? 4 : 16;
	uint8_t *a = f + addr_off(l, side);
	uint32_t da = delta_bytes(a, addr, alen), dp = 0, covered = da, d4;

	memcpy(a, addr, alen);
	if (l->family == 4)	/* IPv4 header checksum (RFC 791) */
		covered += fix(f + l->ip + 10, da, 0);
	if (p->port >= 0) {
		dp = csum_delta16(rd16(f + p->port), port);
		wr16(f + p->port, port);
		covered += dp;
	}
	d4 = dp + (p->pseudo ? da : 0);
	if (p->sum >= 0 && d4)
		covered += fix(f + p->sum, d4, p->udp);
	if (p->crc_end >= 0) {	/* RFC 4960 appendix B: stored least significant byte first */
		uint32_t crc;

		memset(f + l->l4 + 8, 0, 4);
		crc = crc32c(0, f + l->l4, (uint32_t)p->crc_end - l->l4);
		wr32le(f + l->l4 + 8, crc);
	}
	return covered;
}

int csum_rewrite(uint8_t *f, uint32_t len, const struct pkt_meta *m,
		 enum csum_side side, const uint8_t *addr, uint16_t port)
{
	struct layout l = {
		.ip = m->l3_off, .family = m->key.family, .proto = m->key.proto,
		.l4 = m->fragment == 2 ? 0 : m->l4_off, .whole = !m->fragment,
	};
	struct l4_plan p;

	if (l.family == 4) {
		if (len < l.ip + 20)
			return -1;
	} else if (l.family != 6 || len < l.ip + IPV6_HLEN) {
		return -1;
	}
	/* IPv4 TCP/UDP with its checksum in the frame, nearly every NATed
	 * packet: what plan_l4 and rewrite do for it, without the general
	 * plan (same arithmetic, so the same bytes) */
	if (l.family == 4 && l.l4 && (l.proto == IPP_TCP || l.proto == IPP_UDP) &&
	    len >= l.l4 + (l.proto == IPP_TCP ? 16u : 6u) + 2) {
		uint8_t *a = f + l.ip + (side == CSUM_DST ? 16 : 12);
		uint8_t *pp = f + l.l4 + (side == CSUM_DST ? 2 : 0);
		const uint8_t port_be[2] = {(uint8_t)(port >> 8), (uint8_t)port};
		uint32_t old_a, new_a;
		uint16_t old_p, new_p;
		uint64_t da;

		memcpy(&old_a, a, 4);
		memcpy(&new_a, addr, 4);
		memcpy(&old_p, pp, 2);
		memcpy(&new_p, port_be, 2);
		da = (uint64_t)(uint32_t)~old_a + new_a;
		memcpy(a, addr, 4);
		memcpy(pp, port_be, 2);
		csum_fix_raw(f + l.ip + 10, da, 0);
		/* csum_l4_field's offsets, without its call */
		csum_fix_raw(f + l.l4 + (l.proto == IPP_TCP ? 16 : 6),
			da + (uint16_t)~old_p + new_p, l.proto == IPP_UDP);
		return 0;
	}
	if (plan_l4(f, len, &l, side, port, 1, &p) < 0)
		return -1;
	rewrite(f, &l, &p, side, addr, port);
	return 0;
}

int csum_icmp_type_is_error(uint8_t family, uint8_t proto, uint8_t type)
{
	if (family == 4 && proto == IPP_ICMP)
		return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
	if (family == 6 && proto == IPP_ICMPV6)
		return type >= 1 && type <= 4;
	return 0;
}

int csum_icmp_is_error(const struct pkt_meta *m)
{
	if (!m->l4_off || m->fragment == 2)
		return 0;
	return csum_icmp_type_is_error(m->key.family, m->key.proto, m->key.icmp_type);
}

/* Find the embedded packet's headers inside the error's copy. */
static int inner_layout(const uint8_t *f, uint32_t len, uint32_t at,
			uint8_t family, struct layout *l)
{
	l->ip = at;
	l->family = family;
	l->l4 = 0;
	l->whole = 0;	/* a copy, truncated */
	if (family == 4) {
		uint32_t ihl;

		if (len < at + 20 || (f[at] >> 4) != 4)
			return -1;
		ihl = (uint32_t)(f[at] & 0x0f) * 4;
		if (ihl < 20 || len < at + ihl)
			return -1;
		l->proto = f[at + 9];
		if (!(rd16(f + at + 6) & 0x1fff))	/* not a later fragment */
			l->l4 = at + ihl;
		return 0;
	}
	if (len < at + IPV6_HLEN || (f[at] >> 4) != 6)
		return -1;
	l->proto = f[at + 6];
	at += IPV6_HLEN;
	for (int i = 0; i < MAX_IPV6_EXT; i++) {
		uint8_t nh = l->proto;
		uint32_t hlen;

		if (nh != IPP_HOPOPTS && nh != IPP_ROUTING && nh != IPP_DSTOPTS &&
		    nh != IPP_FRAGMENT && nh != IPP_AH) {
			l->l4 = at;
			return 0;
		}
		if (len < at + 8)
			return 0;	/* truncated copy: addresses only */
		if (nh == IPP_FRAGMENT) {
			if (rd16(f + at + 2) & 0xfff8)
				return 0;	/* later fragment: no L4 header */
			hlen = 8;
		} else if (nh == IPP_AH) {
			hlen = ((uint32_t)f[at + 1] + 2) * 4;
		} else {
			hlen = ((uint32_t)f[at + 1] + 1) * 8;
		}
		l->proto = f[at];
		at += hlen;
	}
	return 0;
}

int csum_rewrite_icmp_inner(uint8_t *f, uint32_t len, const struct pkt_meta *m,
			    enum csum_side side, const uint8_t *addr, uint16_t port)
{
	uint32_t o = m->l4_off;
	struct layout in;
	struct l4_plan p;
	uint32_t covered;

	if (!csum_icmp_is_error(m) || len < o + ICMP_HLEN)
		return -1;
	/* The error ends where its IP packet does: bytes after it (a
	 * trailer) are not the quote's, and the outer sum does not cover
	 * them. (pkt_parse put that end within the frame.) */
	len = pkt_ip_end(f, len, m);
	if (len < o + ICMP_HLEN)
		return -1;
	if (inner_layout(f, len, o + ICMP_HLEN, m->key.family, &in) < 0)
		return -1;
	/* The copy is truncated (RFC 792: 8 bytes of data; RFC 1812/4443:
	 * as much as fits): a checksum beyond its end is not there to fix,
	 * but the ports must be. */
	if (plan_l4(f, len, &in, side, port, 0, &p) < 0)
		return -1;
	covered = rewrite(f, &in, &p, side, addr, port);
	/* Every changed word lies inside the ICMP message, at an even offset
	 * from its start, so the outer checksum takes the same difference. */
	fix(f + o + 2, covered, 0);
	return 0;
}
