/* Loads rampart_xdp.bpf.o with libxdp. libxdp puts it behind its
 * multi-program dispatcher (when bpffs is there), which is what lets other
 * XDP programs keep running on the same interface. */
#include "xdp_prog.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <xdp/libxdp.h>
#include "xdp_cfg.h"

#define XSK_XSKMAP_NAME "rampart_xsks"
#define XSK_BPFFS "/sys/fs/bpf"

static int xsk_verbose;

static int xsk_libxdp_print(enum libxdp_print_level level, const char *fmt,
			    va_list ap)
{
	(void)level;
	if (!xsk_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int xsk_libbpf_print(enum libbpf_print_level level, const char *fmt,
			    va_list ap)
{
	if (!xsk_verbose || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void xsk_prog_set_verbose(int verbose)
{
	xsk_verbose = verbose;
	libxdp_set_print(xsk_libxdp_print);
	libbpf_set_print(xsk_libbpf_print);
}

const char *xsk_prog_default_path(void)
{
	const char *env = getenv("RAMPART_XDP_OBJ");

	return env && *env ? env : XSK_XDP_OBJ_DEFAULT;
}

/* `ip netns exec` gives the command a fresh /sys without bpffs; libxdp
 * then cannot pin its dispatcher and falls back to a legacy attach that
 * shuts out other programs. Asking it to mount one keeps the dispatcher. */
static void xsk_want_bpffs(void)
{
	struct statfs st;

	if (statfs(XSK_BPFFS, &st) == 0 && st.f_type == BPF_FS_MAGIC)
		return;
	setenv("LIBXDP_BPFFS_AUTOMOUNT", "1", 0);
}

static void xsk_errstr(int e, char *buf, size_t len)
{
	if (libxdp_strerror(e, buf, len) < 0)
		snprintf(buf, len, "%s", strerror(-e));
}

/* Before any socket is in the XSKMAP, so no frame is handed over under
 * the wrong flags. */
static int xsk_prog_set_flags(struct xsk_prog *p, const char *obj_path, unsigned flags,
			      char *err, size_t errlen)
{
	int fd = bpf_object__find_map_fd_by_name(xdp_program__bpf_obj(p->prog),
						 RAMPART_XDP_CFG_MAP);
	__u32 key = 0, val = flags;

	if (fd < 0) {
		if (!flags)
			return 0;
		snprintf(err, errlen, "XDP object %s has no map %s (too old for router mode)",
			 obj_path, RAMPART_XDP_CFG_MAP);
		return -ENOENT;
	}
	if (bpf_map_update_elem(fd, &key, &val, BPF_ANY)) {
		int e = -errno;

		snprintf(err, errlen, "cannot set XDP program flags: %s", strerror(errno));
		return e;
	}
	return 0;
}

int xsk_prog_attach(struct xsk_prog *p, const char *obj_path, int ifindex,
		    unsigned flags, char *err, size_t errlen)
{
	static const enum xdp_attach_mode modes[] = { XDP_MODE_NATIVE, XDP_MODE_SKB };
	struct xdp_multiprog *mp;
	char why[128];
	int e = 0;

	memset(p, 0, sizeof(*p));
	p->xskmap_fd = -1;
	xsk_want_bpffs();

	p->prog = xdp_program__open_file(obj_path, "xdp", NULL);
	e = (int)libxdp_get_error(p->prog);
	if (e) {
		p->prog = NULL;
		xsk_errstr(e, why, sizeof(why));
		snprintf(err, errlen, "cannot open XDP object %s: %s", obj_path, why);
		return e;
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		e = xdp_program__attach(p->prog, ifindex, modes[i], 0);
		if (!e) {
			p->mode = modes[i];
			break;
		}
	}
	if (e) {
		xsk_errstr(e, why, sizeof(why));
		snprintf(err, errlen, "cannot attach XDP program: %s", why);
		xdp_program__close(p->prog);
		p->prog = NULL;
		return e;
	}
	p->ifindex = ifindex;

	mp = xdp_multiprog__get_from_ifindex(ifindex);
	if (!libxdp_get_error(mp) && mp) {
		p->multiprog = !xdp_multiprog__is_legacy(mp);
		xdp_multiprog__close(mp);
	}

	p->xskmap_fd = bpf_object__find_map_fd_by_name(xdp_program__bpf_obj(p->prog),
						       XSK_XSKMAP_NAME);
	if (p->xskmap_fd < 0) {
		e = p->xskmap_fd;
		snprintf(err, errlen, "XDP object %s has no map %s", obj_path,
			 XSK_XSKMAP_NAME);
		xsk_prog_detach(p);
		return e < 0 ? e : -ENOENT;
	}
	e = xsk_prog_set_flags(p, obj_path, flags, err, errlen);
	if (e)
		xsk_prog_detach(p);
	return e;
}

void xsk_prog_detach(struct xsk_prog *p)
{
	if (!p->prog)
		return;
	if (p->ifindex)
		xdp_program__detach(p->prog, p->ifindex, (enum xdp_attach_mode)p->mode, 0);
	xdp_program__close(p->prog);
	p->prog = NULL;
	p->ifindex = 0;
	p->xskmap_fd = -1;
}

const char *xsk_prog_mode_name(const struct xsk_prog *p)
{
	switch (p->mode) {
	case XDP_MODE_NATIVE: return "native";
	case XDP_MODE_SKB: return "skb";
	case XDP_MODE_HW: return "hw";
	}
	return "none";
}
