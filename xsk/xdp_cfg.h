/* The one setting user space gives rampart's XDP program (an ARRAY map
 * with a single u32 of flags), shared by the BPF C and its loader. */
#ifndef RAMPART_XSK_XDP_CFG_H
#define RAMPART_XSK_XDP_CFG_H

#define RAMPART_XDP_CFG_MAP "rampart_cfg"

/* Router mode: ARP and IPv6 neighbour discovery go to the kernel, which
 * answers for the port's addresses and keeps the neighbour table that
 * rampartd reads next hops from. Bridge mode forwards them instead. */
#define RAMPART_XDP_PASS_NEIGH (1u << 0)

#endif
