/* What user space tells rampart's XDP program, shared by the BPF C and its
 * loader: the layout of the rampart_cfg map's value (versioned, as it
 * crosses the kernel/user boundary; two slots) and the host-address maps. */
#ifndef RAMPART_XSK_XDP_CFG_H
#define RAMPART_XSK_XDP_CFG_H

#include <linux/types.h>

#define RAMPART_XDP_CFG_MAP "rampart_cfg"
#define RAMPART_XDP_CFG_SLOT_MAP "rampart_cfg_slot"
/* rampart_cfg's slots: the one rampart_cfg_slot names is in force, the
 * other is where the next settings are written (a power of two). */
#define RAMPART_XDP_CFG_SLOTS 2
#define RAMPART_XDP_HOST4_MAP "rampart_host4"
#define RAMPART_XDP_HOST6_MAP "rampart_host6"
/* Router mode: the kernel's own IPv6 addresses, which a unicast NS or NA
 * must be addressed to for the kernel to get it. */
#define RAMPART_XDP_OWN6_MAP "rampart_own6"

/* Layout version of struct rampart_xdp_cfg. Version 1 was a bare u32 of
 * flags. A program that finds another version in its map (an unwritten,
 * zeroed map reads as 0) hands every frame to the queue's socket, else to
 * the kernel: the behaviour before any of this was configurable. The
 * loader refuses an object whose value size is not this layout's. */
#define RAMPART_XDP_CFG_VERSION 2

/* Router mode: ARP and IPv6 neighbour discovery go to the kernel, which
 * answers for the port's addresses and keeps the neighbour table that
 * rampartd reads next hops from. Bridge mode forwards them instead. */
#define RAMPART_XDP_PASS_NEIGH (1u << 0)
/* --fail closed: transit frames of a queue with no socket (rampartd gone)
 * are dropped instead of passed to the kernel. Host traffic still passes. */
#define RAMPART_XDP_FAIL_CLOSED (1u << 1)
/* The host maps hold addresses (saves a lookup per frame when empty). */
#define RAMPART_XDP_HOST4 (1u << 2)
#define RAMPART_XDP_HOST6 (1u << 3)

/* host.pass entries, as in the artifact (enum rfw_host_pass_kind). */
#define RAMPART_XDP_PASS_ARP 1		/* ARP whose target is a host address */
#define RAMPART_XDP_PASS_NDP 2		/* NS/NA whose target is a host address */
#define RAMPART_XDP_PASS_SERVICE 3	/* proto, destination port range */

#define RAMPART_XDP_MAX_PASS 16
#define RAMPART_XDP_MAX_HOST 256	/* addresses per family */
/* Kernel IPv6 addresses router mode follows; the map holds twice as many,
 * so a change can add the new ones before the stale ones leave. */
#define RAMPART_XDP_MAX_OWN6 256

struct rampart_xdp_pass {
	__u8 kind;
	__u8 proto;
	__u16 port_lo, port_hi;	/* 0-65535 also matches port-less protocols */
	__u16 reserved;
};

struct rampart_xdp_cfg {
	__u32 version;		/* RAMPART_XDP_CFG_VERSION */
	__u32 flags;
	__u32 npass;		/* used entries of pass[] */
	__u32 pass_kinds;	/* bit (1 << kind) for every kind in pass[] */
	struct rampart_xdp_pass pass[RAMPART_XDP_MAX_PASS];
};

#endif
