/* IPv4 fragmentation for router mode (RFC 791 section 3.2, RFC 1812
 * section 5.2.6): a datagram longer than the egress port's MTU and
 * without DF is sent as fragments of at most that many bytes. The first
 * fragment stays in the packet's own frame; the others are written into
 * frames the caller provides. Each fragment carries the datagram's
 * Ethernet header (VLAN tags too) and IP header with its own total
 * length, offset, MF and header checksum; the payload is cut at multiples
 * of 8 bytes. IP options: the first fragment keeps them all, the others
 * only those with the copy flag (RFC 791 3.1: security, source routes),
 * padded to a 4-byte multiple. A datagram that is itself a fragment is
 * cut further (the offsets add up, the last piece keeps its MF). */
#ifndef RAMPART_FRAGMENT_H
#define RAMPART_FRAGMENT_H

#include <stdint.h>

/* How many frames the IPv4 datagram at frame + l3 (len bytes of frame in
 * all) makes at mtu bytes a fragment, or 0 when it cannot be cut: options
 * that cannot be walked, an MTU under 68 (RFC 791's minimum) or too small
 * for the header and 8 bytes, a length past the frame. */
uint32_t fragment_count(const uint8_t *frame, uint32_t len, uint32_t l3, uint32_t mtu);

/* Cut a datagram fragment_count said could be: fragments 2..count into
 * out[0..count-2] (each of room bytes at least mtu + l3; their lengths
 * in out_len), the first in frame itself, whose new length is returned. */
uint32_t fragment_ipv4(uint8_t *frame, uint32_t l3, uint32_t mtu, uint8_t *const *out,
		       uint32_t *out_len);

#endif
