/* Loader for rampart's XDP program: open the BPF object, attach it to one
 * interface through libxdp (native, else SKB mode) and hand out its XSKMAP. */
#ifndef RAMPART_XSK_XDP_PROG_H
#define RAMPART_XSK_XDP_PROG_H

#include <stddef.h>
#include <stdint.h>
#include "rampart/artifact.h"

struct xdp_program;

/* What the program is told before it is loaded: flags
 * (xdp_cfg.h: router-mode ARP/ND, fail closed) and the policy's host
 * section (addresses and pass list, as the artifact holds them). */
struct xsk_prog_cfg {
	unsigned flags;
	const struct rfw_host_addr *host_addrs;
	uint32_t host_addr_count;
	const struct rfw_host_pass *host_pass;
	uint32_t host_pass_count;
	/* router mode: the kernel's own IPv6 addresses (xsk_own6_read), at
	 * most RAMPART_XDP_MAX_OWN6, that a unicast NS or NA is passed for */
	const uint8_t (*own6)[16];
	uint32_t own6_count;
};

struct xsk_prog {
	struct xdp_program *prog;
	int ifindex;
	int mode;		/* enum xdp_attach_mode it is attached in */
	int frags;		/* 1 loaded frags-aware: frames of any length */
	int xskmap_fd;
	int prog_fd;		/* the loaded program (libxdp's, or libbpf's for a swap) */
	int multiprog;		/* 1 behind libxdp's dispatcher, 0 legacy */
	int replaced_stale;	/* a dead or stopped rampartd's program was replaced */
	uint32_t stale_kept_id;	/* such a program ours joined in libxdp's dispatcher
				 * but could not remove (its id), else 0 */
};

/* Path of the BPF object: $RAMPART_XDP_OBJ, else the build-time default. */
const char *xsk_prog_default_path(void);

/* Route libxdp/libbpf messages to stderr only when verbose (they report
 * failed attempts we then fall back from, which is noise otherwise). */
void xsk_prog_set_verbose(int verbose);

/* Open obj_path (not loaded) with cfg already in the maps it will be
 * loaded with, so the program follows cfg from its first frame on (an
 * object whose rampart_cfg map has another layout is refused). 0 or a
 * negative errno with err; p->prog is NULL on failure. */
int xsk_prog_open(struct xsk_prog *p, const char *obj_path, const struct xsk_prog_cfg *cfg,
		  char *err, size_t errlen);
/* xsk_prog_open obj_path and attach it to ifindex. Returns 0 or a
 * negative errno with a message (naming the kernel's reason) in err. */
int xsk_prog_attach(struct xsk_prog *p, const char *obj_path, int ifindex,
		    const struct xsk_prog_cfg *cfg, char *err, size_t errlen);
/* A reload's host section: cfg (the same flags as at attach) replaces
 * the host addresses and pass list of an attached program. 0 or a
 * negative errno with err. */
int xsk_prog_update_host(struct xsk_prog *p, const struct xsk_prog_cfg *cfg, char *err,
			 size_t errlen);
/* Router mode: the kernel's IPv6 addresses now (own, n of them, at most
 * RAMPART_XDP_MAX_OWN6) replace those the program passes unicast NS and
 * NA for; the new ones go in before the stale ones leave, so an address
 * in both never stops passing. 0 or a negative errno with err. */
int xsk_prog_set_own6(struct xsk_prog *p, const uint8_t (*own)[16], uint32_t n, char *err,
		      size_t errlen);
/* The kernel's IPv6 addresses on every interface, link-local and
 * loopback left out (NS and NA to a link-local address always pass), no
 * address twice: up to max into out, the count returned; *left_out says
 * how many more there were (one on two interfaces counted twice). -1
 * (errno) when they cannot be read. */
int xsk_own6_read(uint8_t (*out)[16], uint32_t max, uint32_t *left_out);
/* Detach (if attached) and close. Safe on a zeroed or failed xsk_prog. */
void xsk_prog_detach(struct xsk_prog *p);
/* Let go of the program without detaching it (it stays on the interface
 * until a later xsk_prog_attach there replaces it). */
void xsk_prog_leave(struct xsk_prog *p);
const char *xsk_prog_mode_name(const struct xsk_prog *p);
/* What an attach did to the program a previous rampartd left on ifname,
 * for the operator: 1 with a line in buf (a warning when it could not be
 * removed: what it does to traffic under fail_closed, how to remove it),
 * 0 when there was none. */
int xsk_prog_stale_note(const struct xsk_prog *p, const char *ifname, int fail_closed,
			char *buf, size_t len);

#endif
