/* The two router ports the fuzz targets over tests/fuzz/pipeline.yaml
 * give their workers: lan0 (10.1.0.1, fd00:0:0:1::1) and wan0 (10.2.0.1,
 * fd00:0:0:2::1). */
#ifndef RAMPART_FUZZ_PORTS_H
#define RAMPART_FUZZ_PORTS_H

#include <string.h>
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

#endif
