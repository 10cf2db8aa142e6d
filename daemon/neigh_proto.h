/* ARP and IPv6 neighbour discovery for a backend that has no kernel
 * behind its ports (DPDK: the af_xdp PMD's program takes every frame of
 * its queues, ARP and ND too). In router mode rampartd then answers for
 * the ports' own addresses, asks for the next hops its pipeline finds no
 * MAC for, and learns them from the answers (docs/dpdk.md). Frames in,
 * frames out: no I/O here, so every case is unit-tested (neigh_cache.h
 * keeps what is learnt and ages it). Untagged frames only; IPv6 ND
 * without options other than the link-layer ones matters. */
#ifndef RAMPART_DAEMON_NEIGH_PROTO_H
#define RAMPART_DAEMON_NEIGH_PROTO_H

#include <stdint.h>
#include "addr_list.h"

/* A port as ARP and ND see it. */
#define NP_MORE_ADDRS ADDR_LIST_MORE

struct np_port {
	uint8_t mac[6];
	uint8_t has_v4, has_v6;
	uint8_t v4[4];		/* what the port's own requests come from */
	uint8_t v6[16];
	/* its other addresses (--port-addr's later ones): answered for,
	 * and never taken from a frame, as the first ones */
	uint8_t nmore4, nmore6;
	uint8_t more4[NP_MORE_ADDRS][4];
	uint8_t more6[NP_MORE_ADDRS][16];
};

/* How far what a frame says reaches (np_learned.how). */
enum np_how {
	NP_LEARN,	/* a request for our address: learnt anyway (its
			 * sender is about to talk to us) */
	NP_MERGE,	/* only news of a neighbour already known (RFC 826's
			 * merge: ARP about another host; an unsolicited NA
			 * with override, an NS for another target) */
	NP_CONFIRM,	/* a solicited NA to us without the target's
			 * link-layer option (Linux's answer to a unicast NS,
			 * our probe; RFC 4861 7.2.4): the entry already
			 * known is still there, at the MAC it has (7.2.5);
			 * mac is all zero */
	NP_ANSWER,	/* an answer to us (ARP reply, solicited NA with the
			 * option): learnt when we asked for that address
			 * lately (nc_asked), else news of one known only, so
			 * that no host plants an entry nobody asked about */
	NP_ANSWER_KEEP,	/* a solicited NA to us with the option but without
			 * override (a proxy's, an anycast address's): as
			 * NP_ANSWER, but an entry known at another MAC keeps
			 * it (RFC 4861 7.2.5) */
	NP_MERGE_KEEP,	/* any other NA without override (unsolicited, or
			 * another host's answer): news of one known only,
			 * and one known at another MAC keeps it; a
			 * reachable one becomes STALE (RFC 4861 7.2.5) */
};

/* A neighbour a frame told us about. */
struct np_learned {
	uint8_t family;		/* 0: none, 4 or 6 */
	uint8_t how;		/* enum np_how */
	uint8_t addr[16];	/* IPv4 in the first 4 bytes */
	uint8_t mac[6];
};

/* Longest frame np_receive writes (an NA with its option). */
#define NP_FRAME_MAX 86u

/* Is this frame ARP or ICMPv6 neighbour solicitation / advertisement?
 * The cheap test a receive path makes on every frame. */
static inline int np_is_neigh(const uint8_t *f, uint32_t len)
{
	if (len < 14)
		return 0;
	if (f[12] == 0x08 && f[13] == 0x06)
		return 1;
	return len >= 14 + 40 + 4 && f[12] == 0x86 && f[13] == 0xdd && f[14 + 6] == 58 &&
	       (f[54] == 135 || f[54] == 136);
}

/* A frame np_is_neigh took, received on `port`: what it teaches
 * (*learned, family 0 when nothing: a malformed or spoofable frame, one
 * claiming the port's own address) and, when it asks for one of port's
 * addresses, the answer written into reply (room NP_FRAME_MAX); returns
 * the answer's length, 0 when none. Checks what RFC 826 and RFC 4861
 * ask (hop limit 255, the ICMPv6 checksum, lengths, no multicast
 * sender). */
uint32_t np_receive(const struct np_port *port, const uint8_t *f, uint32_t len,
		    struct np_learned *learned, uint8_t *reply);

/* The request for next hop addr (family 4: ARP request, broadcast;
 * 6: neighbour solicitation to its solicited-node multicast address)
 * into frame (room NP_FRAME_MAX); its length, 0 when the port has no
 * address of that family to ask from. */
uint32_t np_solicit(const struct np_port *port, uint8_t family, const uint8_t *addr,
		    uint8_t *frame);

/* The same request sent to the MAC addr had (a reachability probe, RFC
 * 4861 7.3.3: unicast NS to addr itself; ARP: a unicast request, as
 * Linux probes). Length, 0 when the port cannot ask. */
uint32_t np_probe(const struct np_port *port, uint8_t family, const uint8_t *addr,
		  const uint8_t mac[6], uint8_t *frame);

#endif
