/* ARP (RFC 826) and IPv6 neighbour discovery (RFC 4861 sections 4.3,
 * 4.4, 7.2) for ports without a kernel: see neigh_proto.h. */
#include "neigh_proto.h"

#include <string.h>

#include "csum.h"

#define ETH_LEN 14
#define ARP_LEN 28
#define ARP_FRAME_MIN 60	/* Ethernet's minimum, without the FCS */
#define ND_ICMP_LEN 32		/* NS/NA: 24 bytes and one link-layer option */
#define ND_FRAME_LEN (ETH_LEN + 40 + ND_ICMP_LEN)

_Static_assert(ND_FRAME_LEN == NP_FRAME_MAX, "the longest frame written is an NA");

enum { ARP_REQUEST = 1, ARP_REPLY = 2, ND_NS = 135, ND_NA = 136 };
enum { OPT_SOURCE_LL = 1, OPT_TARGET_LL = 2 };
enum { NA_ROUTER = 0x80, NA_SOLICITED = 0x40, NA_OVERRIDE = 0x20 };

static const uint8_t zero16[16];

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void learn(struct np_learned *l, uint8_t family, const uint8_t *addr, const uint8_t *mac,
		  enum np_how how)
{
	l->family = family;
	l->how = (uint8_t)how;
	memset(l->addr, 0, sizeof(l->addr));
	memcpy(l->addr, addr, family == 4 ? 4 : 16);
	memcpy(l->mac, mac, 6);
}

/* The Ethernet header and ARP body (both ends given) of an ARP frame,
 * padded to the Ethernet minimum. */
static uint32_t arp_frame(uint8_t *f, const uint8_t *eth_dst, const uint8_t *smac, uint16_t op,
			  const uint8_t *spa, const uint8_t *tha, const uint8_t *tpa)
{
	memset(f, 0, ARP_FRAME_MIN);
	memcpy(f, eth_dst, 6);
	memcpy(f + 6, smac, 6);
	put16(f + 12, 0x0806);
	put16(f + 14, 1);		/* Ethernet */
	put16(f + 16, 0x0800);		/* IPv4 */
	f[18] = 6;
	f[19] = 4;
	put16(f + 20, op);
	memcpy(f + 22, smac, 6);
	memcpy(f + 28, spa, 4);
	memcpy(f + 32, tha, 6);
	memcpy(f + 38, tpa, 4);
	return ARP_FRAME_MIN;
}

/* addr is one of the port's addresses of the family. */
static int own4(const struct np_port *port, const uint8_t *addr)
{
	return addr_list_has(port->v4, port->has_v4, (const uint8_t *)port->more4, port->nmore4, 4, addr);
}

static int own6(const struct np_port *port, const uint8_t *addr)
{
	return addr_list_has(port->v6, port->has_v6, (const uint8_t *)port->more6, port->nmore6, 16, addr);
}

static uint32_t arp_receive(const struct np_port *port, const uint8_t *f, uint32_t len,
			    struct np_learned *learned, uint8_t *reply)
{
	const uint8_t *sha = f + 22, *spa = f + 28, *tpa = f + 38;
	uint8_t asked[4], to_mac[6], to_ip[4];
	uint16_t op;
	int for_us;

	if (len < ETH_LEN + ARP_LEN || get16(f + 14) != 1 || get16(f + 16) != 0x0800 ||
	    f[18] != 6 || f[19] != 4 || !port->has_v4)
		return 0;
	op = get16(f + 20);
	if (op != ARP_REQUEST && op != ARP_REPLY)
		return 0;
	for_us = own4(port, tpa);
	/* A request for our address teaches its sender, an answer to us
	 * does when we asked (NP_ANSWER); any other ARP only updates a
	 * sender already known (RFC 826's merge: a host that moved, a
	 * gratuitous ARP). A multicast sender, a probe (no sender address)
	 * or one claiming our own address teaches nothing. */
	if (!(sha[0] & 1) && memcmp(spa, zero16, 4) && !own4(port, spa))
		learn(learned, 4, spa, sha,
		      !for_us ? NP_MERGE : op == ARP_REQUEST ? NP_LEARN : NP_ANSWER);
	if (!for_us || op != ARP_REQUEST || (sha[0] & 1))
		return 0;
	/* from the address asked for (a secondary one too); copied first,
	 * as the reply may be written over the request */
	memcpy(asked, tpa, 4);
	memcpy(to_mac, sha, 6);
	memcpy(to_ip, spa, 4);
	return arp_frame(reply, to_mac, port->mac, ARP_REPLY, asked, to_mac, to_ip);
}

/* The ICMPv6 checksum of an IPv6 frame's message (plen bytes at 54). */
static uint16_t nd_csum(const uint8_t *f, uint32_t plen)
{
	return csum_l4(6, f + 22, f + 38, 58, f + 54, plen);
}

/* The link-layer address option of `type` in the message's options
 * (from byte 78 to 54 + plen): its MAC, or NULL. -1 in *bad for an
 * option of length 0 (the message must then be dropped). */
static const uint8_t *nd_option(const uint8_t *f, uint32_t plen, uint8_t type, int *bad)
{
	const uint8_t *mac = NULL;

	for (uint32_t o = ETH_LEN + 40 + 24; o + 2 <= ETH_LEN + 40 + plen;) {
		uint32_t olen = (uint32_t)f[o + 1] * 8;

		if (!olen || o + olen > ETH_LEN + 40 + plen) {
			*bad = 1;
			return NULL;
		}
		if (f[o] == type && olen >= 8 && !mac)
			mac = f + o + 2;
		o += olen;
	}
	return mac;
}

/* An ND message of port's: Ethernet and IPv6 headers (hop limit 255),
 * ICMPv6 type, flags, target and one link-layer option of port's MAC,
 * checksummed. */
static uint32_t nd_frame(const struct np_port *port, uint8_t *f, const uint8_t *eth_dst,
			 const uint8_t *dst, uint8_t type, uint8_t flags, const uint8_t *target,
			 uint8_t option)
{
	uint8_t *icmp = f + ETH_LEN + 40;

	memset(f, 0, ND_FRAME_LEN);
	memcpy(f, eth_dst, 6);
	memcpy(f + 6, port->mac, 6);
	put16(f + 12, 0x86dd);
	f[14] = 0x60;
	put16(f + 18, ND_ICMP_LEN);
	f[20] = 58;
	f[21] = 255;
	memcpy(f + 22, port->v6, 16);
	memcpy(f + 38, dst, 16);
	icmp[0] = type;
	icmp[4] = flags;
	memcpy(icmp + 8, target, 16);
	icmp[24] = option;
	icmp[25] = 1;
	memcpy(icmp + 26, port->mac, 6);
	put16(icmp + 2, nd_csum(f, ND_ICMP_LEN));
	return ND_FRAME_LEN;
}

/* A neighbour advertisement for target, one of port's own addresses, to
 * `dst` (the solicitation's source; all-nodes when it had none, then
 * unsolicited). */
static uint32_t nd_advert(const struct np_port *port, const uint8_t *dst, const uint8_t *eth_dst,
			  const uint8_t *target, uint8_t *f)
{
	static const uint8_t all_nodes[16] = {0xff, 2, [15] = 1};
	static const uint8_t all_nodes_mac[6] = {0x33, 0x33, 0, 0, 0, 1};
	uint8_t to[16], to_mac[6], what[16];
	int dad = !memcmp(dst, zero16, 16);

	/* copied first: the advertisement may be written over the request */
	memcpy(to, dad ? all_nodes : dst, 16);
	memcpy(to_mac, dad ? all_nodes_mac : eth_dst, 6);
	memcpy(what, target, 16);
	return nd_frame(port, f, to_mac, to, ND_NA,
			NA_ROUTER | NA_OVERRIDE | (dad ? 0 : NA_SOLICITED), what, OPT_TARGET_LL);
}

static uint32_t nd_receive(const struct np_port *port, const uint8_t *f, uint32_t len,
			   struct np_learned *learned, uint8_t *reply)
{
	const uint8_t *src = f + 22, *target = f + 62, *mac;
	uint32_t plen;
	int bad = 0;

	if (len < ETH_LEN + 40 + 24 || (f[14] >> 4) != 6 || f[21] != 255 || f[55] != 0 ||
	    !port->has_v6)
		return 0;
	plen = get16(f + 18);
	if (plen < 24 || ETH_LEN + 40 + plen > len || nd_csum(f, plen) != get16(f + 56) ||
	    target[0] == 0xff)
		return 0;
	if (f[54] == ND_NA) {
		uint8_t flags = f[58];
		int answer = (flags & NA_SOLICITED) && own6(port, f + 38);

		/* RFC 4861 7.2.5: a solicited advertisement to our address is
		 * the answer to ours; one with override (unsolicited, or
		 * another host's answer a promiscuous port saw) updates a
		 * known entry; without override none moves one (NP_ANSWER_KEEP,
		 * NP_MERGE_KEEP: a reachable one at another MAC becomes STALE;
		 * before, an unsolicited one was ignored). An answer without the
		 * target's link-layer option (7.2.4 lets a host leave it out
		 * of its answer to a unicast NS: Linux does, to our probes)
		 * confirms the entry as it is. */
		mac = nd_option(f, plen, OPT_TARGET_LL, &bad);
		if (bad || own6(port, target))
			return 0;
		if (!mac) {
			if (answer)
				learn(learned, 6, target, zero16, NP_CONFIRM);
		} else if (!(mac[0] & 1)) {
			int override = flags & NA_OVERRIDE;

			learn(learned, 6, target, mac,
			      answer ? (override ? NP_ANSWER : NP_ANSWER_KEEP)
				     : (override ? NP_MERGE : NP_MERGE_KEEP));
		}
		return 0;
	}
	mac = nd_option(f, plen, OPT_SOURCE_LL, &bad);
	if (bad || (mac && !memcmp(src, zero16, 16)))
		return 0;	/* RFC 4861 7.1.1: no option from the unspecified address */
	if (mac && !(mac[0] & 1) && !own6(port, src))
		learn(learned, 6, src, mac, own6(port, target) ? NP_LEARN : NP_MERGE);
	/* answered when for our address, from a unicast Ethernet source
	 * (a multicast one: nowhere to answer) */
	if (!own6(port, target) || (f[6] & 1))
		return 0;
	return nd_advert(port, src, mac && !(mac[0] & 1) ? mac : f + 6, target, reply);
}

uint32_t np_receive(const struct np_port *port, const uint8_t *f, uint32_t len,
		    struct np_learned *learned, uint8_t *reply)
{
	learned->family = 0;
	if (!np_is_neigh(f, len))
		return 0;
	if (f[12] == 0x08)
		return arp_receive(port, f, len, learned, reply);
	return nd_receive(port, f, len, learned, reply);
}

uint32_t np_probe(const struct np_port *port, uint8_t family, const uint8_t *addr,
		  const uint8_t mac[6], uint8_t *frame)
{
	if (family == 4)
		return port->has_v4 ? arp_frame(frame, mac, port->mac, ARP_REQUEST, port->v4, mac, addr)
				    : 0;
	if (family != 6 || !port->has_v6)
		return 0;
	return nd_frame(port, frame, mac, addr, ND_NS, 0, addr, OPT_SOURCE_LL);
}

uint32_t np_solicit(const struct np_port *port, uint8_t family, const uint8_t *addr,
		    uint8_t *frame)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	if (family == 4) {
		if (!port->has_v4)
			return 0;
		return arp_frame(frame, bcast, port->mac, ARP_REQUEST, port->v4, zero16, addr);
	}
	if (family != 6 || !port->has_v6)
		return 0;
	/* to the solicited-node group of addr, ff02::1:ffXX:XXXX, and its MAC */
	{
		uint8_t group[16] = {0xff, 0x02, [11] = 0x01, [12] = 0xff};
		uint8_t group_mac[6] = {0x33, 0x33, 0xff};

		memcpy(group + 13, addr + 13, 3);
		memcpy(group_mac + 3, addr + 13, 3);
		return nd_frame(port, frame, group_mac, group, ND_NS, 0, addr, OPT_SOURCE_LL);
	}
}
