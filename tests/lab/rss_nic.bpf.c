/* A NIC's receive-side scaling, played by the sender of a veth pair (a tc
 * egress program on the host's side of the link to rampart): veth
 * delivers a frame on the RX queue of the sender's TX queue, so choosing
 * the TX queue here chooses the queue rampart's worker reads it from.
 * The choice is what a NIC with symmetric RSS makes: Toeplitz with the
 * 6d:5a key over source, destination and, for TCP and UDP that are not
 * fragments, the ports (Microsoft's "RSS hashing functions", computed bit
 * by bit as defined there, not as rampart does), then Linux's default
 * indirection table of 128 entries (entry i = i mod NQ). Frames that are
 * not IP keep the queue the stack picked.
 *
 * Built by tests/lab/test_rss.sh with clang -target bpf -DNQ=N. The
 * queue goes in as queue_mapping + 1: with no XPS, the kernel takes a
 * recorded queue_mapping (rx queue + 1) as the TX queue less one. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef NQ
#define NQ 4
#endif

static __always_inline __u32 key_window(__u32 bit)
{
	/* the symmetric key: byte i is 0x6d when i is even, 0x5a when odd */
	__u32 byte = bit / 8, shift = bit % 8, w = 0;

	for (__u32 i = 0; i < 5; i++) {
		__u32 b = (byte + i) % 2 ? 0x5a : 0x6d;

		if (i < 4)
			w |= b << (24 - 8 * i);
		else if (shift)
			w = w << shift | b >> (8 - shift);
	}
	return w;
}

static __always_inline __u32 toeplitz(const __u8 *in, __u32 n)
{
	__u32 h = 0;

	for (__u32 i = 0; i < 36 * 8; i++) {
		if (i >= n * 8)
			break;
		if ((in[i / 8] >> (7 - i % 8)) & 1)
			h ^= key_window(i);
	}
	return h;
}

SEC("tc")
int rss_queue(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	__u8 in[36] = {0};
	__u32 n = 0;
	__u8 proto;

	if ((void *)(eth + 1) > end)
		return TC_ACT_OK;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end)
			return TC_ACT_OK;
		__builtin_memcpy(in, &ip->saddr, 4);
		__builtin_memcpy(in + 4, &ip->daddr, 4);
		n = 8;
		proto = ip->protocol;
		if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP) && ip->ihl == 5 &&
		    !(ip->frag_off & bpf_htons(0x3fff))) {
			__u8 *l4 = (void *)(ip + 1);

			if ((void *)(l4 + 4) > end)
				return TC_ACT_OK;
			__builtin_memcpy(in + 8, l4, 4);
			n = 12;
		}
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return TC_ACT_OK;
		__builtin_memcpy(in, &ip6->saddr, 16);
		__builtin_memcpy(in + 16, &ip6->daddr, 16);
		n = 32;
		proto = ip6->nexthdr;
		if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
			__u8 *l4 = (void *)(ip6 + 1);

			if ((void *)(l4 + 4) > end)
				return TC_ACT_OK;
			__builtin_memcpy(in + 32, l4, 4);
			n = 36;
		}
	} else {
		return TC_ACT_OK;
	}
	skb->queue_mapping = (toeplitz(in, n) & 127) % NQ + 1;
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
