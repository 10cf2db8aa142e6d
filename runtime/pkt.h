/* Packet parser: Ethernet (+802.1Q/QinQ) / IPv4 / IPv6 / TCP / UDP / SCTP /
 * ICMP / ICMPv6 into the classification key. Reads only inside the frame. */
#ifndef RAMPART_PKT_H
#define RAMPART_PKT_H

#include <stdint.h>

/* What the classifier sees. Addresses in network byte order; IPv4 in the
 * first 4 bytes, the rest zero. Ports in host byte order. */
struct pkt_key {
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport, dport;
	uint8_t family;		/* 4 or 6; 0 for non-IP */
	uint8_t proto;
	uint8_t has_ports;	/* TCP/UDP/SCTP with its ports readable */
	uint8_t icmp_type;	/* valid when proto is ICMP/ICMPv6 */
	uint8_t icmp_code;
	uint8_t tcp_flags;
	uint8_t in_if;		/* interface index the frame came in on */
	uint8_t out_if;		/* egress interface, once known (bridge/route) */
	uint8_t ct_state;	/* enum rfw_state bit, set by conntrack */
	uint8_t reserved;
};

enum pkt_kind {
	PKT_IP = 0,		/* IPv4/IPv6, key valid */
	PKT_NON_IP,		/* ARP, LLDP, ...: key.family = 0 */
	PKT_MALFORMED,		/* counted under reason */
};

enum pkt_reason {
	PKT_OK = 0,
	PKT_ERR_SHORT_L2,
	PKT_ERR_SHORT_L3,
	PKT_ERR_BAD_L3,		/* bad version, IHL, total length */
	PKT_ERR_SHORT_L4,
	PKT_ERR_BAD_EXT,	/* IPv6 extension chain too long, truncated or out of order */
	PKT_ERR_FRAG_OVERLAP,	/* a non-first fragment inside the L4 header (RFC 1858) */
	PKT_ERR_BAD_OPTIONS,	/* IPv4 options that run past the header */
	PKT_ERR_SOURCE_ROUTE,	/* IPv4 LSRR/SSRR, IPv6 routing header type 0 */
	PKT_ERR_BAD_CSUM,	/* IPv4 header checksum wrong (RFC 1812 5.2.2) */
	PKT_ERR_FRAG_OVERSIZE,	/* a fragment that ends past byte 65535 of its datagram */
	PKT_ERR_VLAN_DEPTH,	/* a third VLAN tag: what it hides is not parsed */
	PKT_REASON_COUNT,
};

struct pkt_meta {
	struct pkt_key key;
	uint16_t ethertype;	/* innermost, host order */
	uint16_t l3_off;
	uint16_t l4_off;	/* 0 if the upper-layer header is not reached */
	uint8_t kind;		/* enum pkt_kind */
	uint8_t reason;		/* enum pkt_reason */
	uint8_t fragment;	/* 1 first fragment, 2 non-first fragment */
	uint8_t reserved[3];
};

/* Parse one frame. Always fills m; returns m->kind. */
int pkt_parse(const uint8_t *frame, uint32_t len, struct pkt_meta *m);

/* How many bytes of its upper-layer header a first fragment must carry
 * whole, and a later fragment must not start inside (RFC 1858's
 * overlapping fragments): what the rules and conntrack read of it (TCP's
 * ports, sequence and flags; UDP's and SCTP's ports; ICMP's type, code
 * and echo id). */
static inline uint32_t pkt_l4_judged_len(uint8_t proto)
{
	switch (proto) {
	case 6:			/* TCP */
		return 20;
	case 17:		/* UDP */
	case 132:		/* SCTP */
	case 1:			/* ICMP */
	case 58:		/* ICMPv6 */
		return 8;
	default:
		return 0;
	}
}

/* Where a parsed packet's IP datagram ends in its frame: the IP length's
 * end, or the frame's when that is shorter (a truncated frame); 0 when
 * the length field is not in the frame. What follows it is padding or a
 * trailer, no part of the packet (pkt_parse refuses a datagram longer
 * than its frame). */
static inline uint32_t pkt_ip_end(const uint8_t *f, uint32_t len, const struct pkt_meta *m)
{
	uint32_t l3 = m->l3_off, end;

	if (m->key.family == 4) {
		if (l3 + 4 > len)
			return 0;
		end = l3 + ((uint32_t)f[l3 + 2] << 8 | f[l3 + 3]);
	} else {
		if (l3 + 6 > len)
			return 0;
		end = l3 + 40 + ((uint32_t)f[l3 + 4] << 8 | f[l3 + 5]);
	}
	return end < len ? end : len;
}

/* The IPv4 header's checksum is right: its one's complement sum over len
 * bytes (a multiple of 4), checksum field included, is all ones. As
 * 2^16 = 1 (mod 0xffff), that is the plain sum of its 32-bit words being
 * a multiple of 0xffff (never 0: callers have seen version 4), whatever
 * the host's byte order (RFC 1071); a multiply, not three folds. */
static inline int pkt_ipv4_header_ok(const uint8_t *ip, uint32_t len)
{
	uint64_t sum = 0;
	uint32_t w;

	for (uint32_t i = 0; i < len; i += 4) {
		__builtin_memcpy(&w, ip + i, 4);
		sum += w;
	}
	return sum % 0xffff == 0;
}

/* pkt_parse's answer for the frames most traffic is made of (untagged
 * IPv4 without options, its header checksum right, not a fragment, TCP
 * or UDP whose header fits the IP length), inline for the pipeline's hot loop: the same meta, without
 * the call, the VLAN and IPv6 branches and the L4 switch. Returns PKT_IP,
 * or -1 (m untouched) for any other frame, which pkt_parse then takes.
 * pkt_fast_frame says whether a frame is one of those without parsing it:
 * IPv4 at offset 14, TCP or UDP at 34; pkt_fast_shape, all but the
 * checksum (for a caller that knows it right: the NIC checked it). */
static inline int pkt_fast_shape(const uint8_t *f, uint32_t len)
{
	/* bytes 12-14 (ethertype, version and IHL) and 20-21 (MF and the
	 * offset) as words, masked, whatever the host's byte order */
	static const uint8_t type_want[4] = {0x08, 0x00, 0x45, 0}, type_mask[4] = {0xff, 0xff, 0xff, 0};
	static const uint8_t frag_mask[2] = {0x3f, 0xff};
	uint32_t type, tw, tm, tot;
	uint16_t frag, fm;
	uint8_t proto;

	if (len < 14 + 20 + 8)
		return 0;
	__builtin_memcpy(&type, f + 12, 4);
	__builtin_memcpy(&tw, type_want, 4);
	__builtin_memcpy(&tm, type_mask, 4);
	__builtin_memcpy(&frag, f + 20, 2);
	__builtin_memcpy(&fm, frag_mask, 2);
	if ((type & tm) != tw || (frag & fm))
		return 0;	/* not IPv4, options, or a fragment (MF or offset) */
	tot = (uint32_t)(f[16] << 8 | f[17]);
	proto = f[23];
	if (proto == 6 ? tot < 40 : proto != 17 || tot < 28)
		return 0;
	return len >= 14 + tot;
}

static inline int pkt_fast_frame(const uint8_t *f, uint32_t len)
{
	return pkt_fast_shape(f, len) && pkt_ipv4_header_ok(f + 14, 20);
}

/* pkt_parse_fast's meta of a frame pkt_fast_frame accepted. */
static inline void pkt_fill_fast(const uint8_t *f, struct pkt_meta *m)
{
	uint8_t proto = f[23];

	__builtin_memset(m, 0, sizeof(*m));
	__builtin_memcpy(m->key.src, f + 26, 4);
	__builtin_memcpy(m->key.dst, f + 30, 4);
	m->key.sport = (uint16_t)(f[34] << 8 | f[35]);
	m->key.dport = (uint16_t)(f[36] << 8 | f[37]);
	m->key.family = 4;
	m->key.proto = proto;
	m->key.has_ports = 1;
	if (proto == 6)
		m->key.tcp_flags = f[34 + 13];
	m->ethertype = 0x0800;
	m->l3_off = 14;
	m->l4_off = 34;
}

static inline int pkt_parse_fast(const uint8_t *f, uint32_t len, struct pkt_meta *m)
{
	if (!pkt_fast_frame(f, len))
		return -1;
	pkt_fill_fast(f, m);
	return PKT_IP;
}
const char *pkt_reason_name(unsigned reason);

#endif
