/* A reload's host section written into every port's XDP program, all of
 * them or none: a port that refuses it has the ports before it (and its
 * own half-written maps) put back to the running policy's section. */
#ifndef RAMPART_XSK_HOST_UPDATE_H
#define RAMPART_XSK_HOST_UPDATE_H

#include <stddef.h>
#include <stdint.h>
#include "xdp_prog.h"

/* cfg into port i's program (xsk_prog_update_host for a real port): 0,
 * or non-zero with err. */
typedef int (*xsk_port_host_update)(void *ctx, uint32_t i, const struct xsk_prog_cfg *cfg,
				    char *err, size_t errlen);

/* new_cfg into ports 0..n-1 in turn (names[i] for messages). When port i
 * refuses it, old_cfg (the policy still in force) goes back into ports
 * 0..i, so that every port agrees with the running tables. 0; -1 with
 * err ("IF: why") when refused and put back; -2 when a port also refused
 * old_cfg back: err names it too, and it keeps the new section (or part
 * of it) while the old policy runs. */
int xsk_update_ports_host(uint32_t n, const char *const *names, const struct xsk_prog_cfg *new_cfg,
			  const struct xsk_prog_cfg *old_cfg, xsk_port_host_update update,
			  void *ctx, char *err, size_t errlen);

#endif
