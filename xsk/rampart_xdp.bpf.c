/* rampart's XDP program: hands every frame of a queue to the AF_XDP socket
 * bound to that queue (bridge mode: all traffic is decided in user space).
 * Loaded through libxdp so it can share an interface with other programs. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <xdp/xdp_helpers.h>

/* One slot per RX queue; user space inserts its socket at its queue id.
 * 64 bounds the queues one interface can serve; raise with --queues. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} rampart_xsks SEC(".maps");

/* libxdp's dispatcher reads this: our run priority, and that a program
 * after us still runs when we return XDP_PASS (no socket on the queue). */
struct {
	__uint(priority, 20);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(rampart_xdp);

SEC("xdp")
int rampart_xdp(struct xdp_md *ctx)
{
	/* XDP_PASS as the fallback: with no socket on this queue (rampartd
	 * not running yet, or gone) the frame goes to the kernel: fail-open. */
	return bpf_redirect_map(&rampart_xsks, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
