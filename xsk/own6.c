/* The kernel's own IPv6 addresses, for router mode's XDP program: a
 * unicast NS or NA to one of them is the kernel's neighbour discovery,
 * one to any other address is a packet to route (xdp_prog.h). */
#define _GNU_SOURCE	/* getifaddrs */
#include "xdp_prog.h"

#include <ifaddrs.h>
#include <string.h>
#include <netinet/in.h>

/* Link-local and loopback: an NS or NA to a link-local address always
 * passes (the program checks the prefix), ::1 never comes from a link. */
static int own6_wanted(const struct in6_addr *a)
{
	return !IN6_IS_ADDR_LINKLOCAL(a) && !IN6_IS_ADDR_LOOPBACK(a) && !IN6_IS_ADDR_MULTICAST(a);
}

int xsk_own6_read(uint8_t (*out)[16], uint32_t max, uint32_t *left_out)
{
	struct ifaddrs *all, *i;
	uint32_t n = 0;

	*left_out = 0;
	if (getifaddrs(&all))
		return -1;
	for (i = all; i; i = i->ifa_next) {
		const struct in6_addr *a;
		uint32_t k;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET6)
			continue;
		a = &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr;
		if (!own6_wanted(a))
			continue;
		for (k = 0; k < n && memcmp(out[k], a, 16); k++)
			;
		if (k < n)
			continue;	/* the same address on another interface */
		if (n < max)
			memcpy(out[n++], a, 16);
		else
			++*left_out;
	}
	freeifaddrs(all);
	return (int)n;
}
