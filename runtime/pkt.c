/* Frame parser. Every read is bounds-checked against the frame length;
 * a frame that ends early is PKT_MALFORMED with the reason counted by the
 * caller. A non-first IPv4 fragment and an IPv6 packet whose upper-layer
 * header cannot be reached get has_ports = 0 (POLICY.md: they match no
 * port rule). */
#include "pkt.h"

#include <string.h>

#include "wire.h"

#define ETH_HLEN 14
#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define IPV6_HLEN 40
#define MAX_VLAN_TAGS 2
#define MAX_IPV6_EXT 8

enum {
	IPP_HOPOPTS = 0, IPP_ICMP = 1, IPP_TCP = 6, IPP_UDP = 17,
	IPP_ROUTING = 43, IPP_FRAGMENT = 44, IPP_ESP = 50, IPP_AH = 51,
	IPP_ICMPV6 = 58, IPP_NONE = 59, IPP_DSTOPTS = 60, IPP_SCTP = 132,
};

static __attribute__((cold, noinline)) int malformed(struct pkt_meta *m, enum pkt_reason r)
{
	m->kind = PKT_MALFORMED;
	m->reason = (uint8_t)r;
	return PKT_MALFORMED;
}

/* Upper-layer header at off: fill ports / ICMP type. Inlined into both
 * callers: every packet goes through one of them. */
static inline __attribute__((always_inline)) int parse_l4(const uint8_t *f, uint32_t len,
							uint32_t off, struct pkt_meta *m)
{
	struct pkt_key *k = &m->key;

	m->l4_off = (uint16_t)off;
	switch (k->proto) {
	case IPP_TCP:
		if (len < off + 20)
			return malformed(m, PKT_ERR_SHORT_L4);
		k->tcp_flags = f[off + 13];
		/* fall through */
	case IPP_UDP:
	case IPP_SCTP:
		if (len < off + 8)
			return malformed(m, PKT_ERR_SHORT_L4);
		k->sport = rd16(f + off);
		k->dport = rd16(f + off + 2);
		k->has_ports = 1;
		break;
	case IPP_ICMP:
	case IPP_ICMPV6:
		if (len < off + 4)
			return malformed(m, PKT_ERR_SHORT_L4);
		k->icmp_type = f[off];
		k->icmp_code = f[off + 1];
		break;
	default:
		break;
	}
	return PKT_IP;
}

/* IPv4 options (between byte 20 and the header length): source routes
 * are refused, as routers have refused them for decades (Linux's
 * accept_source_route = 0, Cisco's `no ip source-route`): a packet that
 * names its own path can steer around the rules of the hops it lists. A
 * list that runs past the header is refused too, as Linux refuses it
 * before forwarding. Only frames with options come here (never the
 * pipeline's fast path). */
static int check_ipv4_options(const uint8_t *opt, uint32_t n, struct pkt_meta *m)
{
	enum { OPT_EOL = 0, OPT_NOP = 1, OPT_LSRR = 131, OPT_SSRR = 137 };

	for (uint32_t at = 0; at < n;) {
		uint8_t type = opt[at], olen;

		if (type == OPT_EOL)
			break;
		if (type == OPT_NOP) {
			at++;
			continue;
		}
		if (at + 1 >= n || (olen = opt[at + 1]) < 2 || olen > n - at)
			return malformed(m, PKT_ERR_BAD_OPTIONS);
		if (type == OPT_LSRR || type == OPT_SSRR)
			return malformed(m, PKT_ERR_SOURCE_ROUTE);
		at += olen;
	}
	return PKT_IP;
}

/* A non-first fragment that starts inside the upper-layer header the first
 * fragment must carry whole (its ports, TCP's flags) could rewrite them
 * after the rules judged the first: RFC 1858's overlapping fragment
 * attack. The first fragment itself must hold that header (parse_l4).
 * proto is the first header of the fragmentable part: for IPv6 it may be
 * an extension header before the upper layer, which conntrack checks
 * against the first fragment it remembers (ct.c, frag_lookup). */
static int overlaps_l4(uint8_t proto, uint32_t byte_offset)
{
	return byte_offset < pkt_l4_judged_len(proto);
}

static int parse_ipv4(const uint8_t *f, uint32_t len, uint32_t off,
		      struct pkt_meta *m)
{
	struct pkt_key *k = &m->key;
	uint32_t ihl, tot;
	uint16_t frag;

	if (len < off + 20)
		return malformed(m, PKT_ERR_SHORT_L3);
	ihl = (uint32_t)(f[off] & 0x0f) * 4;
	tot = rd16(f + off + 2);
	if ((f[off] >> 4) != 4 || ihl < 20 || tot < ihl)
		return malformed(m, PKT_ERR_BAD_L3);
	if (len < off + tot)
		return malformed(m, PKT_ERR_SHORT_L3);
	if (!pkt_ipv4_header_ok(f + off, ihl))
		return malformed(m, PKT_ERR_BAD_CSUM);
	if (ihl > 20 && check_ipv4_options(f + off + 20, ihl - 20, m) != PKT_IP)
		return PKT_MALFORMED;
	k->family = 4;
	k->proto = f[off + 9];
	memcpy(k->src, f + off + 12, 4);
	memcpy(k->dst, f + off + 16, 4);
	frag = rd16(f + off + 6);
	/* A datagram ends by byte 65535: a fragment past that (RFC 791's
	 * 13-bit offset allows 65528 + 1480) is no part of one, and cutting
	 * it again for a smaller MTU would carry its offset into the flag
	 * bits, making a piece that reads as a first fragment (Linux's
	 * reassembly drops them too). */
	if ((frag & 0x3fff) && (uint32_t)(frag & 0x1fff) * 8 + tot - ihl > 65535)
		return malformed(m, PKT_ERR_FRAG_OVERSIZE);
	if (frag & 0x1fff) {		/* non-first fragment: no L4 header */
		m->fragment = 2;
		if (overlaps_l4(k->proto, (uint32_t)(frag & 0x1fff) * 8))
			return malformed(m, PKT_ERR_FRAG_OVERLAP);
		return PKT_IP;
	}
	if (frag & 0x2000)
		m->fragment = 1;
	/* Parse L4 within the IP total length, not the frame (padding). */
	return parse_l4(f, off + tot, off + ihl, m);
}

static int is_ipv6_ext(uint8_t nh)
{
	return nh == IPP_HOPOPTS || nh == IPP_ROUTING || nh == IPP_FRAGMENT ||
	       nh == IPP_DSTOPTS || nh == IPP_AH;
}

static int parse_ipv6(const uint8_t *f, uint32_t len, uint32_t off,
		      struct pkt_meta *m)
{
	struct pkt_key *k = &m->key;
	uint32_t end, at = off + IPV6_HLEN;
	uint8_t nh;

	if (len < off + IPV6_HLEN)
		return malformed(m, PKT_ERR_SHORT_L3);
	if ((f[off] >> 4) != 6)
		return malformed(m, PKT_ERR_BAD_L3);
	end = off + IPV6_HLEN + rd16(f + off + 4);
	if (len < end)
		return malformed(m, PKT_ERR_SHORT_L3);
	k->family = 6;
	memcpy(k->src, f + off + 8, 16);
	memcpy(k->dst, f + off + 24, 16);
	nh = f[off + 6];

	/* RFC 8200 4.1: hop-by-hop options only right after the IPv6 header,
	 * at most one routing and one fragment header (a second one is how
	 * evasions nest fragments or routes; pf refuses them too). A routing
	 * header of type 0 is a source route (deprecated by RFC 5095):
	 * refused whatever its segments left, as pf does. */
	for (int i = 0, routing = 0, fragment = 0; is_ipv6_ext(nh); i++) {
		uint32_t hlen;

		if (i == MAX_IPV6_EXT || end < at + 8 || (nh == IPP_HOPOPTS && i > 0) ||
		    (nh == IPP_ROUTING && routing++) || (nh == IPP_FRAGMENT && fragment++))
			return malformed(m, PKT_ERR_BAD_EXT);
		if (nh == IPP_ROUTING && f[at + 2] == 0)
			return malformed(m, PKT_ERR_SOURCE_ROUTE);
		if (nh == IPP_FRAGMENT) {
			uint16_t offflags = rd16(f + at + 2);

			hlen = 8;
			/* the fragmentable part ends by byte 65535 (RFC 8200
			 * 4.5: a parameter problem; dropped here) */
			if ((offflags & 0xfff9) &&
			    (uint32_t)(offflags & 0xfff8) + end - (at + 8) > 65535)
				return malformed(m, PKT_ERR_FRAG_OVERSIZE);
			if (offflags & 0xfff8) {	/* non-first fragment */
				k->proto = f[at];
				m->fragment = 2;
				if (overlaps_l4(k->proto, offflags & 0xfff8))
					return malformed(m, PKT_ERR_FRAG_OVERLAP);
				return PKT_IP;
			}
			if (offflags & 1)
				m->fragment = 1;
		} else if (nh == IPP_AH) {
			hlen = ((uint32_t)f[at + 1] + 2) * 4;
		} else {
			hlen = ((uint32_t)f[at + 1] + 1) * 8;
		}
		nh = f[at];
		at += hlen;
	}
	k->proto = nh;
	if (at > end)
		return malformed(m, PKT_ERR_BAD_EXT);
	return parse_l4(f, end, at, m);
}

int pkt_parse(const uint8_t *f, uint32_t len, struct pkt_meta *m)
{
	uint32_t off = ETH_HLEN;
	uint16_t type;

	memset(m, 0, sizeof(*m));
	if (len < ETH_HLEN)
		return malformed(m, PKT_ERR_SHORT_L2);
	type = rd16(f + 12);
	if (__builtin_expect(type == ETH_P_8021Q || type == ETH_P_8021AD, 0)) {
		for (int i = 0; i < MAX_VLAN_TAGS &&
		     (type == ETH_P_8021Q || type == ETH_P_8021AD); i++) {
			if (len < off + 4)
				return malformed(m, PKT_ERR_SHORT_L2);
			type = rd16(f + off + 2);
			off += 4;
		}
		/* Under a third tag may be IP the rules never see: refused,
		 * not passed on as non-IP (Linux's bridge filter does not
		 * look under two either; a firewall must not pass it). */
		if (type == ETH_P_8021Q || type == ETH_P_8021AD)
			return malformed(m, PKT_ERR_VLAN_DEPTH);
	}
	m->ethertype = type;
	m->l3_off = (uint16_t)off;
	if (type == ETH_P_IPV4)
		return parse_ipv4(f, len, off, m);
	if (type == ETH_P_IPV6)
		return parse_ipv6(f, len, off, m);
	m->kind = PKT_NON_IP;
	return PKT_NON_IP;
}

const char *pkt_reason_name(unsigned reason)
{
	static const char *const names[PKT_REASON_COUNT] = {
		[PKT_OK] = "ok",
		[PKT_ERR_SHORT_L2] = "short-l2",
		[PKT_ERR_SHORT_L3] = "short-l3",
		[PKT_ERR_BAD_L3] = "bad-l3",
		[PKT_ERR_SHORT_L4] = "short-l4",
		[PKT_ERR_BAD_EXT] = "bad-ipv6-ext",
		[PKT_ERR_FRAG_OVERLAP] = "fragment-overlap",
		[PKT_ERR_BAD_OPTIONS] = "bad-ipv4-options",
		[PKT_ERR_SOURCE_ROUTE] = "source-route",
		[PKT_ERR_BAD_CSUM] = "bad-ipv4-checksum",
		[PKT_ERR_FRAG_OVERSIZE] = "fragment-oversize",
		[PKT_ERR_VLAN_DEPTH] = "vlan-too-deep",
	};
	return reason < PKT_REASON_COUNT ? names[reason] : "?";
}
