/* A port's own Ethernet and IP addresses as the kernel knows them: the
 * MAC router mode writes as source, and the addresses its ICMP errors
 * (time-exceeded) are sent from. */
#ifndef RAMPART_DAEMON_IFADDR_H
#define RAMPART_DAEMON_IFADDR_H

#include <stddef.h>
#include "pipeline.h"

/* Fill c->mac, c->mtu, and v4/v6 when the interface has them (the first
 * IPv4, the first global IPv6, else a link-local one; the others, up to
 * PIPE_PORT_MORE_ADDRS of each family, in more4/more6: secondary IPv4
 * and further global IPv6, link-local ones left out). 0, or -1 with err. */
int ifaddr_get(const char *ifname, struct pipe_port_cfg *c, char *err, size_t errlen);

/* The interface's addresses now, as ifaddr_get picks them. 0, or -1
 * (getifaddrs failed: errno). */
int ifaddr_addrs(const char *ifname, struct pipe_port_addrs *a);

/* The interface's MTU now, or -1. */
int ifaddr_mtu(const char *ifname);

#endif
