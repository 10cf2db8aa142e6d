/* Addresses a router never forwards ("martians", as Linux calls them):
 * a packet whose source or destination is one of these is dropped in
 * router mode before its route is looked up, whatever the policy's
 * routes (a default route would otherwise carry a LAN's mDNS, SSDP and
 * broadcasts to the uplink). Bridge mode forwards them: it is not a
 * router, and the links on either side are one.
 *
 * IPv4 (RFC 1812 5.3.7 and 4.2.2.11, RFC 3927 7): 0.0.0.0/8 and
 * 127.0.0.0/8 either way, 169.254.0.0/16 (link-local) either way,
 * 224.0.0.0/4 (multicast: rampart routes no multicast) either way,
 * 255.255.255.255 (limited broadcast) either way.
 * IPv6 (RFC 4291 2.5.2, 2.5.3, 2.5.5.2, 2.5.6, 2.7): the unspecified
 * address and ::1 either way, ::ffff:0:0/96 (IPv4-mapped) either way,
 * fe80::/10 (link-local) either way, ff00::/8 (multicast) either way.
 * Other reserved space (240.0.0.0/4, documentation prefixes) is left to
 * the policy: some networks route it. */
#ifndef RAMPART_MARTIAN_H
#define RAMPART_MARTIAN_H

#include <stdint.h>
#include <string.h>

/* Every new routed packet asks, twice: the common first bytes (1-126,
 * 128-223 but 169) answer with one or two compares. */
static inline int martian4(const uint8_t *a)
{
	uint8_t x = a[0];

	if (__builtin_expect((uint8_t)(x - 1) < 126 || ((uint8_t)(x - 128) < 96 && x != 169), 1))
		return 0;
	return x == 0 || x == 127 || (x == 169 && a[1] == 254) || (x & 0xf0) == 224 ||
	       (x == 255 && a[1] == 255 && a[2] == 255 && a[3] == 255);
}

/* fe80::/10 */
static inline int link_local6(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

static inline int martian6(const uint8_t *a)
{
	static const uint8_t zero[15];

	if (a[0] == 0xff || link_local6(a))
		return 1;	/* multicast, link-local */
	if (a[0] != 0)
		return 0;	/* the common case: global and unique local */
	if (!memcmp(a, zero, 10) && a[10] == 0xff && a[11] == 0xff)
		return 1;	/* IPv4-mapped */
	return !memcmp(a, zero, 15) && a[15] <= 1;	/* ::, ::1 */
}

/* 1 when a router must not forward a packet from src to dst of family 4
 * (addresses in the first 4 bytes) or 6. */
static inline int martian(uint8_t family, const uint8_t *src, const uint8_t *dst)
{
	return family == 4 ? martian4(src) || martian4(dst) : martian6(src) || martian6(dst);
}

#endif
