/* Replies the firewall writes itself, in place over the offending frame:
 * TCP RST and ICMP/ICMPv6 destination-unreachable for `reject`, ICMP/
 * ICMPv6 time-exceeded for an expired TTL in router mode. The frame is
 * turned around (MACs swapped, addressed to the sender) so it can go back
 * out of the port it came in on. */
#ifndef RAMPART_REPLY_H
#define RAMPART_REPLY_H

#include <stdint.h>
#include "pkt.h"

enum reply_kind {
	REPLY_UNREACHABLE,	/* v4 3/13 "administratively prohibited", v6 1/1 */
	REPLY_TIME_EXCEEDED,	/* v4 11/0, v6 3/0 */
	REPLY_TOO_BIG,		/* v4 3/4 "fragmentation needed", v6 2/0; with the MTU */
	REPLY_HOST_UNREACHABLE,	/* v4 3/1, v6 1/3 "address unreachable": the
				 * next hop never answered ARP/ND */
};

/* Rewrite frame (len bytes of room `room`, parsed as m) into a TCP RST
 * answering it (RFC 9293 section 3.10.7.1: seq from the segment's ACK,
 * else seq 0 and ACK of everything it occupied). Returns the new length,
 * or 0 when no reply may be sent (the segment is itself a RST). */
uint32_t reply_tcp_rst(uint8_t *frame, uint32_t len, uint32_t room,
		       const struct pkt_meta *m);

/* Rewrite frame into an ICMP (RFC 792, RFC 1812 4.3.2.3) or ICMPv6
 * (RFC 4443) error about it, sent from `from` (4 or 16 bytes, the
 * family of m), quoting as much of the offending packet as fits in 576
 * (IPv4) or 1280 (IPv6) bytes. Returns the new length, or 0 when RFC 1812
 * 4.3.2.7 / RFC 4443 2.4(e) forbid an error about this packet (an ICMP
 * error, a non-first fragment, a multicast or broadcast destination). */
uint32_t reply_icmp_error(uint8_t *frame, uint32_t len, uint32_t room,
			  const struct pkt_meta *m, enum reply_kind kind,
			  const uint8_t *from);

/* reply_icmp_error's REPLY_TOO_BIG: the next hop's MTU goes in the
 * message (RFC 1191 section 4, RFC 4443 section 3.2), so the sender's
 * path MTU discovery can use it. */
uint32_t reply_icmp_too_big(uint8_t *frame, uint32_t len, uint32_t room,
			    const struct pkt_meta *m, const uint8_t *from, uint32_t mtu);

#endif
