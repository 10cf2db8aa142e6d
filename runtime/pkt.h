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
	PKT_ERR_BAD_EXT,	/* IPv6 extension chain too long or truncated */
	PKT_ERR_FRAG_OVERLAP,	/* a non-first fragment inside the L4 header (RFC 1858) */
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
const char *pkt_reason_name(unsigned reason);

#endif
