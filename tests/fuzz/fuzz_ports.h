/* The two router ports the fuzz targets over tests/fuzz/pipeline.yaml
 * give their workers: lan0 (10.1.0.1, fd00:0:0:1::1) and wan0 (10.2.0.1,
 * fd00:0:0:2::1). */
#ifndef RAMPART_FUZZ_PORTS_H
#define RAMPART_FUZZ_PORTS_H

#include <string.h>
#include "csum.h"
#include "pipeline.h"

static inline void fuzz_ports(struct pipe_config *c)
{
	c->nports = 2;
	strcpy(c->port[0].name, "lan0");
	strcpy(c->port[1].name, "wan0");
	c->port[0].has_v4 = c->port[1].has_v4 = 1;
	memcpy(c->port[0].v4, (uint8_t[]){10, 1, 0, 1}, 4);
	memcpy(c->port[1].v4, (uint8_t[]){10, 2, 0, 1}, 4);
	c->port[0].has_v6 = c->port[1].has_v6 = 1;
	memcpy(c->port[0].v6, (uint8_t[]){0xfd, 0, 0, 1, [15] = 1}, 16);
	memcpy(c->port[1].v6, (uint8_t[]){0xfd, 0, 0, 2, [15] = 1}, 16);
}

/* A record's frame with its IPv4 header checksum made right, unless the
 * record's first byte has bit 7 set: random headers would otherwise
 * nearly all stop at the parser's checksum test, and so would every
 * mutation of a seed's addresses. Untagged or tagged once or twice. */
static inline void fuzz_fix_ipv4_checksum(uint8_t flags, uint8_t *f, uint32_t len)
{
	uint32_t off = 12, ihl;

	if (flags & 0x80)
		return;
	while (off + 2 <= len && off < 20 && ((f[off] == 0x81 && f[off + 1] == 0) ||
					      (f[off] == 0x88 && f[off + 1] == 0xa8)))
		off += 4;
	if (off + 2 > len || f[off] != 0x08 || f[off + 1] != 0 || off + 3 > len)
		return;
	off += 2;
	ihl = (uint32_t)(f[off] & 15) * 4;
	if (ihl < 20 || off + ihl > len)
		return;
	f[off + 10] = f[off + 11] = 0;
	uint16_t c = csum_ipv4_header(f + off);
	f[off + 10] = (uint8_t)(c >> 8);
	f[off + 11] = (uint8_t)c;
}

#endif
