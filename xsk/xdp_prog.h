/* Loader for rampart's XDP program: open the BPF object, attach it to one
 * interface through libxdp (native, else SKB mode) and hand out its XSKMAP. */
#ifndef RAMPART_XSK_XDP_PROG_H
#define RAMPART_XSK_XDP_PROG_H

#include <stddef.h>

struct xdp_program;

struct xsk_prog {
	struct xdp_program *prog;
	int ifindex;
	int mode;		/* enum xdp_attach_mode it is attached in */
	int xskmap_fd;
	int multiprog;		/* 1 behind libxdp's dispatcher, 0 legacy */
};

/* Path of the BPF object: $RAMPART_XDP_OBJ, else the build-time default. */
const char *xsk_prog_default_path(void);

/* Route libxdp/libbpf messages to stderr only when verbose (they report
 * failed attempts we then fall back from, which is noise otherwise). */
void xsk_prog_set_verbose(int verbose);

/* Open obj_path, attach it to ifindex and set its flags (xdp_cfg.h; an
 * object without the flags map is accepted only with flags 0). Returns 0
 * or a negative errno with a message (naming the kernel's reason) in err. */
int xsk_prog_attach(struct xsk_prog *p, const char *obj_path, int ifindex,
		    unsigned flags, char *err, size_t errlen);
/* Detach (if attached) and close. Safe on a zeroed or failed xsk_prog. */
void xsk_prog_detach(struct xsk_prog *p);
const char *xsk_prog_mode_name(const struct xsk_prog *p);

#endif
