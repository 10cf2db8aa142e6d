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

/* Written by the loader before the program is loaded (xsk_prog_open),
 * so it is never attached unconfigured. Two slots, the one in force
 * named by rampart_cfg_slot: a reload writes the other one and then
 * switches (the kernel copies a value in place, not at once: a frame
 * read while a slot was rewritten saw part of each pass list). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RAMPART_XDP_CFG_SLOTS);
	__type(key, __u32);
	__type(value, struct rampart_xdp_cfg);
} rampart_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} rampart_cfg_slot SEC(".maps");

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

/* Router mode: the kernel's own IPv6 addresses (not link-local), which
 * rampartd follows; value unused. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * RAMPART_XDP_MAX_OWN6);
	__type(key, struct in6_addr);
	__type(value, __u8);
} rampart_own6 SEC(".maps");

/* A fragmented datagram: addresses (IPv4's in the first 4 bytes, the rest
 * zero), protocol and IP id. */
struct rampart_frag_key {
	__u8 saddr[16], daddr[16];
	__u32 id;
	__u8 proto, family;
	__u16 zero;
};

#define RAMPART_XDP_MAX_FRAG_DATAGRAMS 4096
/* As long as Linux keeps a datagram's fragments (ipfrag_time) and
 * rampart its first fragment's verdict. */
#define RAMPART_XDP_FRAG_TIMEOUT_NS (30ull * 1000000000ull)
#define RAMPART_XDP_MAX_IPV6_EXT 8	/* as runtime/pkt.c */
/* Where the walk stops looking (far past any header a first buffer holds;
 * bounds the verifier's offsets). */
#define RAMPART_XDP_MAX_L4_OFF 0x3fff

/* Datagrams whose first fragment a service entry of host.pass handed to
 * the kernel, and when (ns): their later fragments go there too, until a
 * first fragment of the same key goes to rampart (the id came round: a
 * new datagram). Least recently used ones give way when full. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RAMPART_XDP_MAX_FRAG_DATAGRAMS);
	__type(key, struct rampart_frag_key);
	__type(value, __u64);
} rampart_host_frags SEC(".maps");

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

static __always_inline int own6(const void *addr)
{
	struct in6_addr a;

	__builtin_memcpy(&a, addr, sizeof(a));
	return bpf_map_lookup_elem(&rampart_own6, &a) != NULL;
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

enum frag_kind { NOT_FRAGMENT, FIRST_FRAGMENT, LATER_FRAGMENT };

/* The upper-layer header of a frame: its protocol and where it starts
 * (not to be read in a later fragment, which has none). key names the
 * datagram (filled only for fragments). */
struct l4_view {
	__u8 *l4;
	__u8 proto;
	__u8 frag;		/* enum frag_kind */
	struct rampart_frag_key key;
};

/* A first fragment for rampart under the key of one the kernel took: a
 * new datagram with an id used again (IPv4's 16 bits wrap within the
 * 30 s). Its later fragments are rampart's now; else they would reach the
 * kernel unjudged, and rampart hold a first that never completes. Also
 * for a malformed first fragment (the rules drop it): the datagram it
 * starts is still a new one. Looked up first: a delete takes the bucket's
 * lock, and most keys are in no bucket. */
static __always_inline void forget_host_datagram(struct rampart_frag_key *key)
{
	if (bpf_map_lookup_elem(&rampart_host_frags, key))
		bpf_map_delete_elem(&rampart_host_frags, key);
}

/* A service entry of host.pass for this frame. Only a datagram's first
 * fragment shows its ports: when an entry passes it, its datagram is
 * remembered and the later fragments follow it to the kernel, which
 * reassembles them (before, they went to rampart, which drops what is
 * addressed to the host, and the kernel never had the whole datagram).
 * A port-less entry's first is remembered too: an IPv6 later fragment
 * names the first header after its fragment header (destination
 * options may come before the upper layer), not always the protocol.
 * Fragments that come before their first go to rampart. */
static __always_inline int service_is_host(const struct rampart_xdp_cfg *cfg,
					   struct l4_view *v, void *end)
{
	__u64 now, *first_seen;
	int pass;

	if (!has_kind(cfg, RAMPART_XDP_PASS_SERVICE))
		return 0;
	if (v->frag == LATER_FRAGMENT) {
		if (pass_service(cfg, v->proto, 0, 0))
			return 1;
		first_seen = bpf_map_lookup_elem(&rampart_host_frags, &v->key);
		return first_seen && bpf_ktime_get_ns() - *first_seen < RAMPART_XDP_FRAG_TIMEOUT_NS;
	}
	if (has_ports(v->proto) && (void *)(v->l4 + 4) <= end)
		pass = pass_service(cfg, v->proto, 1, bpf_ntohs(*(__u16 *)(v->l4 + 2)));
	else
		pass = pass_service(cfg, v->proto, 0, 0);
	if (v->frag != FIRST_FRAGMENT)
		return pass;
	if (pass) {
		now = bpf_ktime_get_ns();
		bpf_map_update_elem(&rampart_host_frags, &v->key, &now, BPF_ANY);
	} else {
		forget_host_datagram(&v->key);
	}
	return pass;
}

static __always_inline int ip4_is_host(const struct rampart_xdp_cfg *cfg, struct iphdr *ip,
				       void *end)
{
	struct l4_view v;
	__u32 hl;

	/* shorter than a header: no key to read (and no datagram the
	 * kernel could reassemble with it) */
	if ((void *)(ip + 1) > end)
		return 0;
	if (host4(cfg, ip->daddr))
		return 1;
	v.proto = ip->protocol;
	v.frag = ip->frag_off & bpf_htons(0x1fff) ? LATER_FRAGMENT
	       : ip->frag_off & bpf_htons(0x2000) ? FIRST_FRAGMENT : NOT_FRAGMENT;
	if (v.frag != NOT_FRAGMENT) {
		__builtin_memset(&v.key, 0, sizeof(v.key));
		__builtin_memcpy(v.key.saddr, &ip->saddr, 4);
		__builtin_memcpy(v.key.daddr, &ip->daddr, 4);
		v.key.id = ip->id;
		v.key.proto = ip->protocol;
		v.key.family = 4;
	}
	hl = ip->ihl * 4u;
	if (hl < sizeof(*ip)) {
		/* malformed: the rules drop it; a first fragment still ends
		 * what the kernel took under its key */
		if (v.frag == FIRST_FRAGMENT)
			forget_host_datagram(&v.key);
		return 0;
	}
	v.l4 = (__u8 *)ip + hl;
	return service_is_host(cfg, &v, end);
}

static __always_inline int ipv6_ext(__u8 nh)
{
	return nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING || nh == IPPROTO_FRAGMENT ||
	       nh == IPPROTO_DSTOPTS || nh == IPPROTO_AH;
}

/* What rampart_ip6_ext found, packed in the one number it returns. */
#define EXT_NEXT(r) ((__u8)(r))				/* next header */
#define EXT_END(r) ((__u32)((r) >> 8) & 0xffff)		/* where it ends */
#define EXT_FRAG(r) ((__u8)((r) >> 24) & 3)		/* enum frag_kind */

/* The IPv6 extension header nh at offset off of the frame: -1 when it
 * leaves the frame's first buffer or is a type 0 routing header (a source
 * route, RFC 5095). A global function, so the verifier checks it once,
 * and its callers see a number it cannot predict: the ways through the
 * walk's loop do not each have the rest checked again (inlined, the
 * verifier went through over 20 times the instructions it did before the
 * walk; so, 2 to 3 times). */
__attribute__((noinline)) __s64 rampart_ip6_ext(struct xdp_md *ctx, __u32 off, __u32 nh)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u64 frag = NOT_FRAGMENT;
	__u32 len;
	__u8 *at;

	if (off > RAMPART_XDP_MAX_L4_OFF)
		return -1;
	at = data + off;
	if ((void *)(at + 8) > end || (nh == IPPROTO_ROUTING && at[2] == 0))
		return -1;
	len = ((__u32)at[1] + 1) * 8;
	if (nh == IPPROTO_AH) {
		len = ((__u32)at[1] + 2) * 4;
	} else if (nh == IPPROTO_FRAGMENT) {
		__u16 offflags = bpf_ntohs(*(__u16 *)(at + 2));

		len = 8;
		frag = offflags & 0xfff8 ? LATER_FRAGMENT : offflags & 1 ? FIRST_FRAGMENT
									   : NOT_FRAGMENT;
	}
	return (__s64)(at[0] | (__u64)(off + len) << 8 | frag << 24);
}

/* Walks the extension headers to the upper-layer header as runtime/pkt.c
 * does (up to 8, hop-by-hop options only first, one routing header, one
 * fragment header). 0, or -1 for a chain the rules drop or one that
 * leaves the frame's first buffer: such frames go to rampart. frag_off
 * is where the fragment header is (an atomic fragment's too), 0 without. */
static __always_inline int ip6_walk(struct xdp_md *ctx, struct ipv6hdr *ip6, __u32 l3_off,
				    struct l4_view *v, __u32 *frag_off)
{
	__u32 off = l3_off + sizeof(*ip6), nh = ip6->nexthdr, routing = 0;

	v->frag = NOT_FRAGMENT;
	*frag_off = 0;
#pragma unroll
	for (int i = 0; i < RAMPART_XDP_MAX_IPV6_EXT; i++) {
		__s64 r;

		if (!ipv6_ext(nh))
			break;
		if ((nh == IPPROTO_HOPOPTS && i > 0) || (nh == IPPROTO_ROUTING && routing++) ||
		    (nh == IPPROTO_FRAGMENT && *frag_off))
			return -1;
		r = rampart_ip6_ext(ctx, off, nh);
		if (r < 0)
			return -1;
		if (nh == IPPROTO_FRAGMENT) {
			*frag_off = off;
			v->frag = EXT_FRAG(r);
		}
		nh = EXT_NEXT(r);
		off = EXT_END(r);
		/* RFC 8200 4.5: a later fragment holds no header of the
		 * upper layer, only its bytes (not to be read as one) */
		if (v->frag == LATER_FRAGMENT)
			break;
	}
	if (v->frag != LATER_FRAGMENT && ipv6_ext(nh))
		return -1;	/* more than RAMPART_XDP_MAX_IPV6_EXT */
	if (off > RAMPART_XDP_MAX_L4_OFF)
		return -1;
	v->proto = nh;
	v->l4 = (__u8 *)(long)ctx->data + off;
	return 0;
}

/* Neighbour discovery for the kernel (router mode, or ndp in host.pass).
 * It has a hop limit of 255 (RFC 4861: a receiver discards any other), so
 * it comes from this link: a routed packet that only looks like it goes
 * to the rules. Router solicitations and advertisements and redirects are
 * addressed to a multicast or link-local address; NS and NA may be
 * unicast to any of ours. Extension headers may come before it (v walked
 * them); a packet with a fragment header never holds it, an atomic
 * fragment (offset 0, no more) neither (RFC 6980 5: receivers ignore ND
 * under a fragment header, Linux too). */
static __always_inline int nd_is_host(const struct rampart_xdp_cfg *cfg, struct ipv6hdr *ip6,
				      const struct l4_view *v, int frag_hdr, void *end)
{
	__u8 *l4 = v->l4, type;
	__u8 a0 = ip6->daddr.in6_u.u6_addr8[0], a1 = ip6->daddr.in6_u.u6_addr8[1];
	int local = a0 == 0xff || (a0 == 0xfe && (a1 & 0xc0) == 0x80);

	if (v->proto != IPPROTO_ICMPV6 || frag_hdr || ip6->hop_limit != 255 ||
	    (void *)(l4 + 1) > end)
		return 0;
	type = *l4;
	/* RFC 4861 types 133-137: RS, RA, NS, NA, redirect; a unicast NS or
	 * NA only to one of the kernel's addresses (before, to any: one to a
	 * host behind the router passed unjudged, and with the kernel
	 * forwarding for --fail open it went on to that host) */
	if ((cfg->flags & RAMPART_XDP_PASS_NEIGH) && type >= 133 && type <= 137 &&
	    (local || ((type == 135 || type == 136) &&
		       own6(&ip6->daddr))))
		return 1;
	/* NS/NA: the target address follows type, code, csum, flags */
	return (type == 135 || type == 136) && has_kind(cfg, RAMPART_XDP_PASS_NDP) &&
	       (void *)(l4 + 8 + 16) <= end && host6(cfg, l4 + 8);
}

static __always_inline int ip6_is_host(struct xdp_md *ctx, const struct rampart_xdp_cfg *cfg,
				       __u32 l3_off)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ipv6hdr *ip6 = data + l3_off;
	struct l4_view v;
	__u8 *frag_hdr;
	__u32 frag_off;
	int walked;

	if ((void *)(ip6 + 1) > end)
		return 0;
	if (host6(cfg, &ip6->daddr))
		return 1;
	walked = ip6_walk(ctx, ip6, l3_off, &v, &frag_off);
	/* The key is read also when the walk failed behind the fragment
	 * header (a header of the fragmentable part malformed or past the
	 * first buffer, a second fragment header, too many headers): such a
	 * first fragment goes to rampart, whose rules drop it, and so must
	 * its later fragments. A walk that failed before any fragment header
	 * (v.frag stays NOT_FRAGMENT) has no key to clear: where a fragment
	 * header would be is past a header it cannot read or trust (the
	 * parser refuses the chain there too), or past the eighth. */
	if (v.frag != NOT_FRAGMENT) {
		frag_hdr = data + (frag_off & RAMPART_XDP_MAX_L4_OFF);
		if ((void *)(frag_hdr + 8) > end)
			return 0;	/* never: the walk read it whole */
		__builtin_memset(&v.key, 0, sizeof(v.key));
		__builtin_memcpy(v.key.saddr, &ip6->saddr, 16);
		__builtin_memcpy(v.key.daddr, &ip6->daddr, 16);
		__builtin_memcpy(&v.key.id, frag_hdr + 4, 4);
		v.key.proto = frag_hdr[0];
		v.key.family = 6;
	}
	if (walked) {
		if (v.frag == FIRST_FRAGMENT)
			forget_host_datagram(&v.key);
		return 0;
	}
	return nd_is_host(cfg, ip6, &v, frag_off != 0, end) || service_is_host(cfg, &v, end);
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
		return ip6_is_host(ctx, cfg, off);
	return 0;
}

SEC("xdp")
int rampart_xdp(struct xdp_md *ctx)
{
	__u32 key = 0, *slot = bpf_map_lookup_elem(&rampart_cfg_slot, &key);
	struct rampart_xdp_cfg *cfg;
	__u64 fail = XDP_PASS;

	key = slot ? *slot & (RAMPART_XDP_CFG_SLOTS - 1) : 0;
	cfg = bpf_map_lookup_elem(&rampart_cfg, &key);

#ifdef RAMPART_XDP_UNVERIFIABLE
	/* tests only (lab test_failmode): an object the kernel's verifier
	 * refuses, a packet byte read with no bounds check */
	if (*(volatile __u8 *)(long)ctx->data == 0xff)
		return XDP_DROP;
#endif
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
