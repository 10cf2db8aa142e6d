/* Bridge mode and IPv6: a bump in the wire forwards ARP as it comes, but
 * IPv6 neighbour discovery is ICMPv6 and meets the rules like any other
 * packet (as in nftables' bridge family and pf). A policy that lets IPv6
 * through (an accepting rule that names an IPv6 address) while it drops
 * neighbour solicitations or advertisements between two bridged ports
 * leaves the IPv6 hosts on either side unable to find each other, a
 * mistake that shows only as IPv6 not working; rampartd says so when it
 * starts and when a reload brings such a policy. */
#ifndef RAMPART_ND_CHECK_H
#define RAMPART_ND_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "artifact.h"

/* Where the policy drops neighbour discovery. */
struct nd_block {
	uint32_t from, to;	/* ports (indices into ifnames) */
	uint8_t icmp_type;	/* 135 solicitation, 136 advertisement */
	uint32_t rule;		/* the rule that drops it, 0 the default */
};

/* The bridged pairs are ports 2k and 2k + 1 (rampartd's --interface
 * order). 1 and *out when some pair drops a solicitation or an
 * advertisement either way while the policy accepts some IPv6 traffic;
 * 0 otherwise. */
int nd_check_bridge(const struct rfw_view *v, const char *const *ifnames, uint32_t nifs,
		    struct nd_block *out);

/* The warning for b, one line with its newline. */
void nd_block_describe(const struct rfw_view *v, const char *const *ifnames,
		       const struct nd_block *b, char *buf, size_t len);

#endif
