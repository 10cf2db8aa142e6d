/* TCP MSS clamping (defaults.tcp_mss): the maximum segment size option
 * of a SYN or SYN-ACK lowered to what the path through this firewall
 * carries, so that neither end sends segments a smaller link on the way
 * would have to refuse. For when path MTU discovery fails (its ICMP
 * dropped elsewhere): PPPoE and tunnel uplinks above all. */
#ifndef RAMPART_TCP_MSS_H
#define RAMPART_TCP_MSS_H

#include <stdint.h>

#include "pkt.h"

/* The MSS a port MTU allows: the MTU less the IP and TCP headers without
 * options (40 bytes for IPv4, 60 for IPv6, as Linux computes it); 0 when
 * the MTU is unknown (0) or too small to carry any. */
uint16_t tcp_mss_for_mtu(uint32_t mtu, uint8_t family);

/* For a parsed TCP segment with SYN set and RST clear (a SYN or a
 * SYN-ACK), not a non-first fragment: when its MSS option is above
 * `limit`, write `limit` into it and update the TCP checksum
 * incrementally (RFC 1624; the option may sit at an odd offset). A
 * segment without the option is left alone (its peer assumes 536 or
 * 1220, below any limit), as is one whose options are malformed or not
 * all in the frame. Returns 1 when it rewrote the option, else 0. */
int tcp_mss_clamp(uint8_t *frame, uint32_t len, const struct pkt_meta *m, uint16_t limit);

#endif
