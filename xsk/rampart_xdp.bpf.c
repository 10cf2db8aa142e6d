/* rampart's XDP program: hands every frame of a queue to the AF_XDP socket
 * bound to that queue, except (router mode) ARP and neighbour discovery,
 * which the kernel answers. Loaded through libxdp so it can share an
 * interface with other programs. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <xdp/xdp_helpers.h>
#include "xdp_cfg.h"

/* One slot per RX queue; user space inserts its socket at its queue id.
 * 64 bounds the queues one interface can serve; raise with --queues. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} rampart_xsks SEC(".maps");

/* Flags (xdp_cfg.h), written by the loader before any socket is in the
 * XSKMAP; 0 = hand over everything. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} rampart_cfg SEC(".maps");

/* libxdp's dispatcher reads this: our run priority, and that a program
 * after us still runs when we return XDP_PASS (no socket on the queue). */
struct {
	__uint(priority, 20);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(rampart_xdp);

/* ARP, or ICMPv6 router/neighbour solicitation/advertisement or redirect
 * (RFC 4861 types 133-137) right after the IPv6 header, behind up to two
 * VLAN tags. */
static __always_inline int is_neigh(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6;
	__u8 *icmp6;
	__u16 proto;
	__u32 off = sizeof(*eth);

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
		return 1;
	if (proto != bpf_htons(ETH_P_IPV6))
		return 0;
	ip6 = data + off;
	if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_ICMPV6)
		return 0;
	icmp6 = (__u8 *)(ip6 + 1);
	if ((void *)(icmp6 + 1) > end)
		return 0;
	return *icmp6 >= 133 && *icmp6 <= 137;
}

SEC("xdp")
int rampart_xdp(struct xdp_md *ctx)
{
	__u32 key = 0, *flags = bpf_map_lookup_elem(&rampart_cfg, &key);

	if (flags && (*flags & RAMPART_XDP_PASS_NEIGH) && is_neigh(ctx))
		return XDP_PASS;
	/* XDP_PASS as the fallback: with no socket on this queue (rampartd
	 * not running yet, or gone) the frame goes to the kernel: fail-open. */
	return bpf_redirect_map(&rampart_xsks, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
