/* rampart's XDP program: host traffic (the policy's host addresses and
 * pass list, ARP/ND in router mode) goes to the kernel; every other frame
 * goes to the AF_XDP socket of its queue, or, when that queue has no
 * socket (rampartd not running), to the --fail action. Loaded through
 * libxdp so it can share an interface with other programs. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <xdp/xdp_helpers.h>
#include "xdp_cfg.h"

/* One slot per RX queue; user space inserts its socket at its queue id.
 * 64 bounds the queues one interface can serve (XSK_MAX_QUEUES). A socket
 * leaves the map when it is closed, also when rampartd is killed. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} rampart_xsks SEC(".maps");

/* Written by the loader before any socket is in the XSKMAP. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rampart_xdp_cfg);
} rampart_cfg SEC(".maps");

/* The policy's host addresses (network order); value unused. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RAMPART_XDP_MAX_HOST);
	__type(key, __u32);
	__type(value, __u8);
} rampart_host4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RAMPART_XDP_MAX_HOST);
	__type(key, struct in6_addr);
	__type(value, __u8);
} rampart_host6 SEC(".maps");

/* libxdp's dispatcher reads this: our run priority, and that a program
 * after us still runs when we return XDP_PASS. */
struct {
	__uint(priority, 20);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(rampart_xdp);

#define ARP_TPA_OFF 24		/* Ethernet/IPv4 ARP: 8 header + sha, spa, tha */

static __always_inline int has_kind(const struct rampart_xdp_cfg *cfg, __u32 kind)
{
	return cfg->pass_kinds & (1u << kind);
}

/* A pass entry for proto (and port, when the packet shows one). */
static __always_inline int pass_service(const struct rampart_xdp_cfg *cfg, __u8 proto,
					int has_port, __u16 port)
{
	if (!has_kind(cfg, RAMPART_XDP_PASS_SERVICE))
		return 0;
	for (__u32 i = 0; i < RAMPART_XDP_MAX_PASS; i++) {
		const struct rampart_xdp_pass *e = &cfg->pass[i];

		if (i >= cfg->npass)
			break;
		if (e->kind != RAMPART_XDP_PASS_SERVICE || e->proto != proto)
			continue;
		if (has_port ? port >= e->port_lo && port <= e->port_hi
			     : e->port_lo == 0 && e->port_hi == 65535)
			return 1;
	}
	return 0;
}

static __always_inline int has_ports(__u8 proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_SCTP;
}

static __always_inline int host4(const struct rampart_xdp_cfg *cfg, __u32 addr)
{
	return (cfg->flags & RAMPART_XDP_HOST4) && bpf_map_lookup_elem(&rampart_host4, &addr);
}

static __always_inline int host6(const struct rampart_xdp_cfg *cfg, const void *addr)
{
	struct in6_addr a;

	if (!(cfg->flags & RAMPART_XDP_HOST6))
		return 0;
	__builtin_memcpy(&a, addr, sizeof(a));
	return bpf_map_lookup_elem(&rampart_host6, &a) != NULL;
}

static __always_inline int arp_is_host(const struct rampart_xdp_cfg *cfg, __u8 *p, void *end)
{
	__u32 tpa;

	if (cfg->flags & RAMPART_XDP_PASS_NEIGH)
		return 1;
	if (!has_kind(cfg, RAMPART_XDP_PASS_ARP) || (void *)(p + ARP_TPA_OFF + 4) > end)
		return 0;
	__builtin_memcpy(&tpa, p + ARP_TPA_OFF, 4);
	return host4(cfg, tpa);
}

static __always_inline int ip4_is_host(const struct rampart_xdp_cfg *cfg, struct iphdr *ip,
				       void *end)
{
	__u32 hl;
	__u8 *l4;

	if ((void *)(ip + 1) > end)
		return 0;
	if (host4(cfg, ip->daddr))
		return 1;
	hl = ip->ihl * 4u;
	l4 = (__u8 *)ip + hl;
	/* a non-first fragment shows no port: only whole-protocol entries */
	if (hl < sizeof(*ip) || (ip->frag_off & bpf_htons(0x1fff)) || !has_ports(ip->protocol) ||
	    (void *)(l4 + 4) > end)
		return pass_service(cfg, ip->protocol, 0, 0);
	return pass_service(cfg, ip->protocol, 1, bpf_ntohs(*(__u16 *)(l4 + 2)));
}

/* Extension headers are not walked: a pass entry sees the protocol right
 * after the IPv6 header (what nearly all host traffic looks like). */
static __always_inline int ip6_is_host(const struct rampart_xdp_cfg *cfg, struct ipv6hdr *ip6,
				       void *end)
{
	__u8 *l4 = (__u8 *)(ip6 + 1);

	if ((void *)(ip6 + 1) > end)
		return 0;
	if (host6(cfg, &ip6->daddr))
		return 1;
	/* Neighbour discovery has a hop limit of 255 (RFC 4861: a receiver
	 * discards any other), so it comes from this link: a routed packet
	 * that only looks like it goes to the rules. Router solicitations and
	 * advertisements and redirects are addressed to a multicast or
	 * link-local address; NS and NA may be unicast to any of ours. */
	if (ip6->nexthdr == IPPROTO_ICMPV6 && ip6->hop_limit == 255 && (void *)(l4 + 1) <= end) {
		__u8 type = *l4;
		__u8 a0 = ip6->daddr.in6_u.u6_addr8[0], a1 = ip6->daddr.in6_u.u6_addr8[1];
		int local = a0 == 0xff || (a0 == 0xfe && (a1 & 0xc0) == 0x80);

		/* RFC 4861 types 133-137: RS, RA, NS, NA, redirect */
		if ((cfg->flags & RAMPART_XDP_PASS_NEIGH) &&
		    (type == 135 || type == 136 || (type >= 133 && type <= 137 && local)))
			return 1;
		/* NS/NA: the target address follows type, code, csum, flags */
		if ((type == 135 || type == 136) && has_kind(cfg, RAMPART_XDP_PASS_NDP) &&
		    (void *)(l4 + 8 + 16) <= end && host6(cfg, l4 + 8))
			return 1;
	}
	if (!has_ports(ip6->nexthdr) || (void *)(l4 + 4) > end)
		return pass_service(cfg, ip6->nexthdr, 0, 0);
	return pass_service(cfg, ip6->nexthdr, 1, bpf_ntohs(*(__u16 *)(l4 + 2)));
}

/* Host traffic (ARCHITECTURE.md "Coexisting with the Linux stack"), behind
 * up to two VLAN tags. */
static __always_inline int is_host(struct xdp_md *ctx, const struct rampart_xdp_cfg *cfg)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 off = sizeof(*eth);
	__u16 proto;

	if ((void *)(eth + 1) > end)
		return 0;
	proto = eth->h_proto;
#pragma unroll
	for (int i = 0; i < 2; i++) {
		if (proto != bpf_htons(ETH_P_8021Q) && proto != bpf_htons(ETH_P_8021AD))
			break;
		if (data + off + 4 > end)
			return 0;
		proto = *(__u16 *)(data + off + 2);
		off += 4;
	}
	if (proto == bpf_htons(ETH_P_ARP))
		return arp_is_host(cfg, data + off, end);
	if (proto == bpf_htons(ETH_P_IP))
		return ip4_is_host(cfg, data + off, end);
	if (proto == bpf_htons(ETH_P_IPV6))
		return ip6_is_host(cfg, data + off, end);
	return 0;
}

SEC("xdp")
int rampart_xdp(struct xdp_md *ctx)
{
	__u32 key = 0;
	struct rampart_xdp_cfg *cfg = bpf_map_lookup_elem(&rampart_cfg, &key);
	__u64 fail = XDP_PASS;

	if (cfg && cfg->version == RAMPART_XDP_CFG_VERSION) {
		if (is_host(ctx, cfg))
			return XDP_PASS;
		if (cfg->flags & RAMPART_XDP_FAIL_CLOSED)
			fail = XDP_DROP;
	}
	/* The flags argument is what we return when the queue's slot in the
	 * XSKMAP is empty: that lookup is how we learn that rampartd is gone
	 * (its sockets closed and left the map), without a second lookup. */
	return bpf_redirect_map(&rampart_xsks, ctx->rx_queue_index, fail);
}

char _license[] SEC("license") = "GPL";
