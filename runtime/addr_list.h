/* A port's addresses of one family as the pipeline and the DPDK backend's
 * ARP/ND keep them: a first one (what replies come from) and up to
 * PIPE_PORT_MORE_ADDRS more. */
#ifndef RAMPART_ADDR_LIST_H
#define RAMPART_ADDR_LIST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ADDR_LIST_MORE 8	/* PIPE_PORT_MORE_ADDRS, NP_MORE_ADDRS */

/* addr (len bytes: 4 or 16) is first (when has_first) or one of the n
 * addresses at more, each len bytes. */
static inline int addr_list_has(const uint8_t *first, int has_first, const uint8_t *more,
				unsigned n, size_t len, const uint8_t *addr)
{
	if (has_first && !memcmp(first, addr, len))
		return 1;
	for (unsigned k = 0; k < n && k < ADDR_LIST_MORE; k++)
		if (!memcmp(more + k * len, addr, len))
			return 1;
	return 0;
}

#endif
