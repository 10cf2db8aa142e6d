/* Internet checksums: the full sum (RFC 1071) for IPv4 headers, TCP, UDP,
 * ICMP and ICMPv6 with their pseudo-headers, the incremental update of
 * RFC 1624, and the in-place rewrites the NAT stage applies to a frame. */
#ifndef RAMPART_CSUM_H
#define RAMPART_CSUM_H

#include <stddef.h>
#include <stdint.h>

#include "pkt.h"

/* Checksum values are in host order here, read from and written to the
 * frame big-endian. A "sum" is an unfolded one's-complement accumulator:
 * add with csum_add/csum_pseudo_*, then csum_fold() gives the field value.
 * Sums may be chained across buffers only when every buffer but the last
 * has an even length (RFC 1071 section 2: the odd byte is padded). */
uint32_t csum_add(uint32_t sum, const void *buf, size_t len);
/* Fold a sum to 16 bits with end-around carry and complement it. */
uint16_t csum_fold(uint32_t sum);
/* ~sum of buf: the checksum of a buffer whose checksum field is zero. */
uint16_t csum_buf(const void *buf, size_t len);

/* IPv4 header checksum over IHL*4 bytes, skipping the checksum field. */
uint16_t csum_ipv4_header(const uint8_t *ip);
/* Pseudo-header sums (RFC 793/768 for IPv4, RFC 8200 section 8.1). */
uint32_t csum_pseudo_v4(const uint8_t src[4], const uint8_t dst[4],
			uint8_t proto, uint32_t l4_len);
uint32_t csum_pseudo_v6(const uint8_t src[16], const uint8_t dst[16],
			uint8_t proto, uint32_t l4_len);
/* Checksum of an upper-layer message of l4_len bytes for IPPROTO `proto`
 * (TCP, UDP, ICMP or ICMPv6), skipping its own checksum field, with the
 * pseudo-header of family 4 or 6 (none for ICMPv4). UDP's computed 0 is
 * returned as 0xFFFF (RFC 768: 0 means "no checksum"). */
uint16_t csum_l4(uint8_t family, const uint8_t *src, const uint8_t *dst,
		 uint8_t proto, const uint8_t *l4, uint32_t l4_len);
/* Offset of the checksum field inside the L4 header, -1 for others. */
int csum_l4_field(uint8_t proto);

/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), for a 16-bit, a 32-bit (IPv4
 * address) and a 128-bit (IPv6 address) field. Old and new field bytes
 * are given as they are in the packet. Valid for any checksum whose
 * coverage includes the field, e.g. the L4 checksum for an address in
 * its pseudo-header. */
/* One's-complement difference of a change, to be added to ~HC. */
static inline uint32_t csum_delta16(uint16_t old16, uint16_t new16)
{
	return (uint32_t)(uint16_t)~old16 + new16;
}

/* RFC 1624 eqn. 3 with the differences already summed. The sum of a
 * header that is not all zeros is never +0 (0x0000) in one's-complement
 * arithmetic, so a folded +0 is written as -0 (0xFFFF): the result is
 * then bit-identical to a full recomputation (RFC 1624 section 3). */
static inline uint16_t csum_apply(uint16_t hc, uint32_t delta)
{
	uint32_t s = (uint32_t)(uint16_t)~hc + delta;

	/* two folds reduce any 32-bit sum to 16 bits (the first leaves at
	 * most 0x1fffe), with no loop to predict */
	s = (s & 0xffffu) + (s >> 16);
	s = (s & 0xffffu) + (s >> 16);
	return s ? (uint16_t)~s : 0;
}

/* Inline: every routed packet's TTL decrement uses it. */
static inline uint16_t csum_update16(uint16_t hc, uint16_t old16, uint16_t new16)
{
	return csum_apply(hc, csum_delta16(old16, new16));
}
/* An IPv4 header's TTL one less and its checksum with it: TTL is the high
 * byte of its word, so the word is 0x0100 less and the checksum 0x0100
 * more, with the end-around carry; a sum of 0xffff becomes 0, as RFC
 * 1624 eqn. 3 gives (Linux's ip_decrease_ttl). A third of
 * csum_update16's instructions, on every routed IPv4 packet. */
static inline void csum_ttl_decrement(uint8_t *ip)
{
	uint32_t c = (uint32_t)(ip[10] << 8 | ip[11]) + 0x0100u;

	c += c >= 0xffffu;
	ip[8]--;
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
}
uint16_t csum_update32(uint16_t hc, const uint8_t old4[4], const uint8_t new4[4]);
uint16_t csum_update128(uint16_t hc, const uint8_t old16[16], const uint8_t new16[16]);

/* --- in-place rewrites for NAT --- */

enum csum_side {
	CSUM_SRC = 0,	/* source address and source port */
	CSUM_DST = 1,	/* destination address and destination port */
};

/* Rewrite the source or destination address (4 or 16 bytes, as
 * m->key.family) and port of the parsed frame in place, updating the IPv4
 * header checksum and the L4 checksum incrementally. `port` (host order)
 * is the TCP/UDP/SCTP port; for ICMP/ICMPv6 echo request/reply it is the
 * identifier, whatever the side (the identifier plays both ports' role);
 * other protocols change the address only. A UDP checksum of 0 ("none",
 * RFC 768) stays 0; an updated UDP checksum of 0 is written as 0xFFFF.
 * SCTP's CRC32c (RFC 4960 section 6.8) covers no pseudo-header, so an
 * address change needs nothing more; a port change recomputes it over
 * the whole SCTP packet (the one rewrite here that reads a payload; SCTP
 * is rare), which must then be whole in the frame: not a fragment, its
 * IP length within len (else -1). In an ICMP error's quoted copy the
 * port is rewritten and the CRC, which the copy cannot be checked
 * against, left as it is.
 * A non-first fragment gets the address only (its L4 header is
 * elsewhere); a first fragment is updated incrementally like a whole
 * packet, which stays right because only deltas are applied.
 * Returns 0, or -1 when the frame does not hold the fields (nothing
 * written). */
int csum_rewrite(uint8_t *frame, uint32_t len, const struct pkt_meta *m,
		 enum csum_side side, const uint8_t *addr, uint16_t port);

/* 1 when the parsed ICMP/ICMPv6 message is an error that embeds the
 * offending packet (v4 types 3, 4, 5, 11, 12; v6 types 1-4). */
int csum_icmp_is_error(const struct pkt_meta *m);
/* The same for a type of family's ICMP (proto 1 or 58), alone. */
int csum_icmp_type_is_error(uint8_t family, uint8_t proto, uint8_t type);

/* Apply a change to a checksum field as it sits in the frame. A
 * one's-complement sum does not depend on byte order (RFC 1071 section
 * 2(B)), so changed addresses and ports are added as the 32- and 16-bit
 * words they are in memory, without swapping; the field comes out bit
 * for bit as csum_apply's (both fold the same sum, and only a zero sum
 * folds to zero). delta < 2^35: three folds bring it to 16 bits. udp: a
 * zero field ("no checksum", RFC 768) stays zero, a computed zero is
 * written as 0xFFFF. */
static inline void csum_fix_raw(uint8_t *field, uint64_t delta, int udp)
{
	uint16_t hc;
	uint64_t s;

	__builtin_memcpy(&hc, field, 2);
	if (udp && hc == 0)
		return;
	s = (uint16_t)~hc + delta;
	s = (s & 0xffffu) + (s >> 16);
	s = (s & 0xffffu) + (s >> 16);
	s = (s & 0xffffu) + (s >> 16);
	hc = s ? (uint16_t)~s : 0;
	if (udp && hc == 0)
		hc = 0xffff;
	__builtin_memcpy(field, &hc, 2);
}

/* csum_rewrite4's rewrite, the frame already known to hold an IPv4
 * header at ip and a TCP (proto 6) or UDP header at l4 through its
 * checksum (l4 + 18 <= the frame's length). */
static inline void csum_rewrite4_at(uint8_t *f, uint32_t ip, uint32_t l4, uint8_t proto,
				    const uint8_t src[4], uint16_t sport, const uint8_t dst[4],
				    uint16_t dport, int ttl_dec)
{
	uint32_t old_s, old_d, new_s, new_d, old_p, new_p;
	uint64_t da, dp;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	new_p = (uint32_t)__builtin_bswap16(sport) | (uint32_t)__builtin_bswap16(dport) << 16;
#else
	new_p = (uint32_t)sport << 16 | dport;
#endif
	__builtin_memcpy(&old_s, f + ip + 12, 4);
	__builtin_memcpy(&old_d, f + ip + 16, 4);
	__builtin_memcpy(&new_s, src, 4);
	__builtin_memcpy(&new_d, dst, 4);
	__builtin_memcpy(&old_p, f + l4, 4);
	da = (uint64_t)(uint32_t)~old_s + new_s + (uint32_t)~old_d + new_d;
	dp = (uint64_t)(uint32_t)~old_p + new_p;
	__builtin_memcpy(f + ip + 12, &new_s, 4);
	__builtin_memcpy(f + ip + 16, &new_d, 4);
	__builtin_memcpy(f + l4, &new_p, 4);
	csum_fix_raw(f + l4 + (proto == 6 ? 16 : 6), da + dp, proto == 17);
	if (ttl_dec) {	/* TTL, its word's first byte: the word as in memory is
			 * 1 less (little-endian) or 0x100 less, ~1 or ~0x100
			 * added in one's complement; never a borrow, TTL > 0 */
		f[ip + 8]--;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		da += 0xfffeu;
#else
		da += 0xfeffu;
#endif
	}
	csum_fix_raw(f + ip + 10, da, 0);
}

/* Both sides' csum_rewrite at once, inline, for the packets NAT mostly
 * sees: IPv4 TCP or UDP, not a later fragment, with the L4 checksum in
 * the frame. Every address and port is replaced (unchanged ones add
 * nothing to the sum), and each checksum is updated once. The bytes are
 * those of csum_rewrite for each side in turn (test_csum). ttl_dec: a
 * router's TTL decrement too, in the same IP checksum update (the caller
 * has checked TTL > 1). Returns -1, the frame untouched, for any other
 * packet. */
static inline int csum_rewrite4(uint8_t *f, uint32_t len, const struct pkt_meta *m,
				const uint8_t src[4], uint16_t sport, const uint8_t dst[4],
				uint16_t dport, int ttl_dec)
{
	const uint32_t ip = m->l3_off, l4 = m->l4_off;
	const uint8_t proto = m->key.proto;

	/* m is pkt_parse's: the IPv4 header lies before l4, and the L4
	 * header through a TCP checksum is in the frame when len allows it
	 * (shorter UDP frames take csum_rewrite) */
	if (m->key.family != 4 || !l4 || m->fragment == 2 || (proto != 6 && proto != 17) ||
	    len < l4 + 18)
		return -1;
	csum_rewrite4_at(f, ip, l4, proto, src, sport, dst, dport, ttl_dec);
	return 0;
}

/* Rewrite the packet embedded in an ICMP/ICMPv6 error (RFC 792, RFC 4443
 * section 2.4): its source or destination address and port (or echo
 * identifier), its IPv4 header checksum, its L4 checksum when the
 * truncated copy still holds it (updated incrementally, as Linux does: it
 * cannot be recomputed over a truncated payload), and the outer ICMP
 * checksum for every word changed inside the message. The outer header
 * is the caller's: rewrite it with csum_rewrite. Returns 0 or -1. */
int csum_rewrite_icmp_inner(uint8_t *frame, uint32_t len,
			    const struct pkt_meta *m, enum csum_side side,
			    const uint8_t *addr, uint16_t port);

#endif
