/* Port addresses from the kernel: SIOCGIFHWADDR for the MAC, getifaddrs
 * for the IP addresses, read once at start (a change needs a restart);
 * SIOCGIFMTU for the MTU, at start and again every second (ifaddr_mtu). */
#include "ifaddr.h"

#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int get_mac(const char *ifname, uint8_t mac[6], char *err, size_t errlen)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	r = ioctl(fd, SIOCGIFHWADDR, &ifr);
	if (r)
		snprintf(err, errlen, "%s: cannot read its MAC address: %s", ifname, strerror(errno));
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return r ? -1 : 0;
}

int ifaddr_mtu(const char *ifname)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	r = ioctl(fd, SIOCGIFMTU, &ifr);
	close(fd);
	return r || ifr.ifr_mtu <= 0 ? -1 : ifr.ifr_mtu;
}

int ifaddr_addrs(const char *ifname, struct pipe_port_addrs *c)
{
	struct ifaddrs *all, *a;
	int v6_global = 0;

	memset(c, 0, sizeof(*c));
	if (getifaddrs(&all))
		return -1;
	for (a = all; a; a = a->ifa_next) {
		if (!a->ifa_addr || strcmp(a->ifa_name, ifname))
			continue;
		if (a->ifa_addr->sa_family == AF_INET && !c->has_v4) {
			memcpy(c->v4, &((struct sockaddr_in *)(void *)a->ifa_addr)->sin_addr, 4);
			c->has_v4 = 1;
		} else if (a->ifa_addr->sa_family == AF_INET6 && !v6_global) {
			const struct in6_addr *in6 = &((struct sockaddr_in6 *)(void *)a->ifa_addr)->sin6_addr;

			/* a time-exceeded from a link-local address would not
			 * reach a sender beyond the link */
			if (c->has_v6 && IN6_IS_ADDR_LINKLOCAL(in6))
				continue;
			memcpy(c->v6, in6, 16);
			c->has_v6 = 1;
			v6_global = !IN6_IS_ADDR_LINKLOCAL(in6);
		}
	}
	/* the others: secondary IPv4 and further global IPv6, for local */
	for (a = all; a; a = a->ifa_next) {
		if (!a->ifa_addr || strcmp(a->ifa_name, ifname))
			continue;
		if (a->ifa_addr->sa_family == AF_INET) {
			const void *in = &((struct sockaddr_in *)(void *)a->ifa_addr)->sin_addr;

			if (memcmp(in, c->v4, 4) && c->nmore4 < PIPE_PORT_MORE_ADDRS)
				memcpy(c->more4[c->nmore4++], in, 4);
		} else if (a->ifa_addr->sa_family == AF_INET6) {
			const struct in6_addr *in6 = &((struct sockaddr_in6 *)(void *)a->ifa_addr)->sin6_addr;

			if (!IN6_IS_ADDR_LINKLOCAL(in6) && memcmp(in6, c->v6, 16) &&
			    c->nmore6 < PIPE_PORT_MORE_ADDRS)
				memcpy(c->more6[c->nmore6++], in6, 16);
		}
	}
	freeifaddrs(all);
	return 0;
}

int ifaddr_get(const char *ifname, struct pipe_port_cfg *c, char *err, size_t errlen)
{
	struct pipe_port_addrs a;
	int mtu;

	if (get_mac(ifname, c->mac, err, errlen))
		return -1;
	mtu = ifaddr_mtu(ifname);
	if (mtu < 0) {
		snprintf(err, errlen, "%s: cannot read its MTU: %s", ifname, strerror(errno));
		return -1;
	}
	c->mtu = (uint32_t)mtu;
	if (ifaddr_addrs(ifname, &a)) {
		snprintf(err, errlen, "getifaddrs: %s", strerror(errno));
		return -1;
	}
	pipe_port_addrs_put(c, &a);
	return 0;
}
