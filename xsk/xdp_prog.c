/* Loads rampart_xdp.bpf.o with libxdp, its settings (flags, host
 * addresses, pass list) in its maps before it is loaded. libxdp puts it
 * behind its multi-program dispatcher (when bpffs is there and the kernel
 * lets it), which is what lets other XDP programs keep running on the
 * same interface. */
#include "xdp_prog.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/if_link.h>	/* XDP_FLAGS_* */
#include <linux/magic.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <xdp/libxdp.h>
#include "xdp_cfg.h"

#define XSK_XSKMAP_NAME "rampart_xsks"
#define XSK_PROG_NAME "rampart_xdp"	/* the program's function name */
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

static int map_fd(struct xsk_prog *p, const char *name)
{
	return bpf_object__find_map_fd_by_name(xdp_program__bpf_obj(p->prog), name);
}

/* The policy's host addresses into the program's hash maps (fd4, fd6);
 * sets the HOST4/HOST6 flags of the families that have any. */
static int xsk_prog_set_hosts(int fd4, int fd6, const struct xsk_prog_cfg *c,
			      struct rampart_xdp_cfg *v, char *err, size_t errlen)
{
	uint32_t n4 = 0, n6 = 0;
	__u8 one = 1;

	for (uint32_t i = 0; i < c->host_addr_count; i++) {
		const struct rfw_host_addr *a = &c->host_addrs[i];
		int v6 = a->family == 6, fd = v6 ? fd6 : fd4;

		if ((v6 ? ++n6 : ++n4) > RAMPART_XDP_MAX_HOST) {
			snprintf(err, errlen, "more than %d host addresses of one family",
				 RAMPART_XDP_MAX_HOST);
			return -E2BIG;
		}
		if (fd < 0 || bpf_map_update_elem(fd, a->addr, &one, BPF_ANY)) {
			snprintf(err, errlen, "cannot write host address %u to the XDP program: %s",
				 i, fd < 0 ? "no such map" : strerror(errno));
			return fd < 0 ? -ENOENT : -errno;
		}
	}
	v->flags |= (n4 ? RAMPART_XDP_HOST4 : 0) | (n6 ? RAMPART_XDP_HOST6 : 0);
	return 0;
}

/* own (n addresses) into the own6 map fd, without removing any. */
static int add_own6(int fd, const uint8_t (*own)[16], uint32_t n, char *err, size_t errlen)
{
	__u8 one = 1;

	if (n > RAMPART_XDP_MAX_OWN6) {
		snprintf(err, errlen, "more than %d own IPv6 addresses", RAMPART_XDP_MAX_OWN6);
		return -E2BIG;
	}
	for (uint32_t i = 0; i < n; i++)
		if (fd < 0 || bpf_map_update_elem(fd, own[i], &one, BPF_ANY)) {
			snprintf(err, errlen, "cannot write own IPv6 address %u to the XDP "
				 "program: %s", i, fd < 0 ? "no such map" : strerror(errno));
			return fd < 0 ? -ENOENT : -errno;
		}
	return 0;
}

/* The cfg value for c: flags and the pass list (the host addresses go
 * into their maps separately). */
static int build_cfg(const struct xsk_prog_cfg *c, struct rampart_xdp_cfg *v, char *err,
		     size_t errlen)
{
	memset(v, 0, sizeof(*v));
	v->version = RAMPART_XDP_CFG_VERSION;
	v->flags = c->flags;
	if (c->host_pass_count > RAMPART_XDP_MAX_PASS) {
		snprintf(err, errlen, "host.pass has %u entries; the XDP program takes %d",
			 c->host_pass_count, RAMPART_XDP_MAX_PASS);
		return -E2BIG;
	}
	for (uint32_t i = 0; i < c->host_pass_count; i++) {
		const struct rfw_host_pass *h = &c->host_pass[i];

		v->pass[i] = (struct rampart_xdp_pass){ .kind = h->kind, .proto = h->proto,
						       .port_lo = h->port_lo, .port_hi = h->port_hi };
		if (h->kind < 32)
			v->pass_kinds |= 1u << h->kind;
	}
	v->npass = c->host_pass_count;
	return 0;
}

static int write_cfg(int fd, __u32 slot, const struct rampart_xdp_cfg *v, char *err,
		     size_t errlen)
{
	if (bpf_map_update_elem(fd, &slot, v, BPF_ANY)) {
		int e = -errno;

		snprintf(err, errlen, "cannot configure the XDP program: %s", strerror(errno));
		return e;
	}
	return 0;
}

/* A reload's settings: v into the slot of rampart_cfg not in force, then
 * that slot in force. The kernel copies a value into its slot in place,
 * so a frame that read the slot while it was written saw part of the
 * old pass list and part of the new (a udp/53 that both pass dropped). */
static int switch_cfg(struct xsk_prog *p, const struct rampart_xdp_cfg *v, char *err,
		      size_t errlen)
{
	int fd = map_fd(p, RAMPART_XDP_CFG_SLOT_MAP), e;
	__u32 key = 0, slot;

	if (bpf_map_lookup_elem(fd, &key, &slot)) {
		e = -errno;
		snprintf(err, errlen, "cannot read the XDP program's settings slot: %s",
			 strerror(errno));
		return e;
	}
	slot = (slot + 1) & (RAMPART_XDP_CFG_SLOTS - 1);
	e = write_cfg(map_fd(p, RAMPART_XDP_CFG_MAP), slot, v, err, errlen);
	if (!e && bpf_map_update_elem(fd, &key, &slot, BPF_ANY)) {
		e = -errno;
		snprintf(err, errlen, "cannot switch the XDP program's settings: %s",
			 strerror(errno));
	}
	return e;
}

/* The maps that hold the program's settings, in the order filled: the
 * host maps first, then the cfg value whose version turns them on (slot
 * 0: the slot map is made zeroed). */
enum { SETTINGS_HOST4, SETTINGS_HOST6, SETTINGS_OWN6, SETTINGS_CFG, SETTINGS_SLOT,
       XSK_SETTINGS_MAPS };
static const char *const settings_map_names[XSK_SETTINGS_MAPS] = {
	[SETTINGS_HOST4] = RAMPART_XDP_HOST4_MAP,
	[SETTINGS_HOST6] = RAMPART_XDP_HOST6_MAP,
	[SETTINGS_OWN6] = RAMPART_XDP_OWN6_MAP,
	[SETTINGS_CFG] = RAMPART_XDP_CFG_MAP,
	[SETTINGS_SLOT] = RAMPART_XDP_CFG_SLOT_MAP,
};

/* c written into new maps made to the object's own definitions, which
 * libbpf then loads the program with (bpf_map__reuse_fd), whichever way
 * libxdp loads it (alone, or behind its dispatcher): attached before it
 * was configured, the program passed every frame for a moment. */
static int fill_settings_maps(struct bpf_object *obj, const char *obj_path,
			      const struct xsk_prog_cfg *c, char *err, size_t errlen)
{
	struct bpf_map *map[XSK_SETTINGS_MAPS];
	int fd[XSK_SETTINGS_MAPS], e = 0;
	struct rampart_xdp_cfg v;
	int i, made = 0;

	for (i = 0; i < XSK_SETTINGS_MAPS; i++) {
		map[i] = bpf_object__find_map_by_name(obj, settings_map_names[i]);
		if (!map[i]) {
			snprintf(err, errlen, "XDP object %s has no map %s (this rampartd writes "
				 "layout version %d): use the object built with it", obj_path,
				 settings_map_names[i], RAMPART_XDP_CFG_VERSION);
			return -EPROTO;
		}
	}
	if (bpf_map__value_size(map[SETTINGS_CFG]) != sizeof(v) ||
	    bpf_map__max_entries(map[SETTINGS_CFG]) != RAMPART_XDP_CFG_SLOTS) {
		snprintf(err, errlen, "XDP object %s: map %s has another layout (this rampartd "
			 "writes layout version %d): use the object built with it", obj_path,
			 RAMPART_XDP_CFG_MAP, RAMPART_XDP_CFG_VERSION);
		return -EPROTO;
	}
	e = build_cfg(c, &v, err, errlen);
	for (; !e && made < XSK_SETTINGS_MAPS; made++) {
		LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = bpf_map__map_flags(map[made]));

		fd[made] = bpf_map_create(bpf_map__type(map[made]), settings_map_names[made],
					  bpf_map__key_size(map[made]),
					  bpf_map__value_size(map[made]),
					  bpf_map__max_entries(map[made]), &opts);
		if (fd[made] < 0) {
			e = -errno;
			snprintf(err, errlen, "cannot create the XDP program's map %s: %s",
				 settings_map_names[made], strerror(errno));
		}
	}
	if (!e)
		e = xsk_prog_set_hosts(fd[SETTINGS_HOST4], fd[SETTINGS_HOST6], c, &v, err, errlen);
	if (!e)
		e = add_own6(fd[SETTINGS_OWN6], c->own6, c->own6_count, err, errlen);
	if (!e)
		e = write_cfg(fd[SETTINGS_CFG], 0, &v, err, errlen);
	for (i = 0; !e && i < XSK_SETTINGS_MAPS; i++)
		if (bpf_map__reuse_fd(map[i], fd[i])) {
			e = -errno;
			snprintf(err, errlen, "cannot give the XDP program its map %s: %s",
				 settings_map_names[i], strerror(errno));
		}
	for (i = 0; i < made; i++)
		if (fd[i] >= 0)
			close(fd[i]);	/* the object holds its own copies */
	return e;
}

int xsk_prog_open(struct xsk_prog *p, const char *obj_path, const struct xsk_prog_cfg *cfg,
		  char *err, size_t errlen)
{
	char why[128];
	int e;

	p->prog = xdp_program__open_file(obj_path, "xdp", NULL);
	e = (int)libxdp_get_error(p->prog);
	if (e) {
		p->prog = NULL;
		xsk_errstr(e, why, sizeof(why));
		snprintf(err, errlen, "cannot open XDP object %s: %s", obj_path, why);
		return e;
	}
	e = fill_settings_maps(xdp_program__bpf_obj(p->prog), obj_path, cfg, err, errlen);
	if (e) {
		xdp_program__close(p->prog);
		p->prog = NULL;
	}
	return e;
}

static int host_listed(const struct xsk_prog_cfg *c, uint8_t family, const uint8_t *addr)
{
	for (uint32_t i = 0; i < c->host_addr_count; i++)
		if (c->host_addrs[i].family == family &&
		    !memcmp(c->host_addrs[i].addr, addr, family == 6 ? 16 : 4))
			return 1;
	return 0;
}

/* Every key of the hash map fd (keylen bytes, at most 16) that listed
 * says is not in list leaves it. */
static void drop_unlisted(int fd, size_t keylen, const void *list,
			  int (*listed)(const void *list, const uint8_t *key))
{
	uint8_t key[16], next[16];
	void *prev = NULL;

	if (fd < 0 || keylen > sizeof(key))
		return;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		if (!listed(list, next)) {
			bpf_map_delete_elem(fd, next);
			prev = NULL;	/* start over: the walk lost its place */
			continue;
		}
		memcpy(key, next, keylen);
		prev = key;
	}
}

static int host4_listed(const void *c, const uint8_t *key)
{
	return host_listed(c, 4, key);
}

static int host6_listed(const void *c, const uint8_t *key)
{
	return host_listed(c, 6, key);
}

/* Host addresses no longer in c leave the maps. */
static void drop_stale_hosts(struct xsk_prog *p, const struct xsk_prog_cfg *c)
{
	drop_unlisted(map_fd(p, RAMPART_XDP_HOST4_MAP), 4, c, host4_listed);
	drop_unlisted(map_fd(p, RAMPART_XDP_HOST6_MAP), 16, c, host6_listed);
}

/* Whether the maps can hold their addresses and c's at once (each holds
 * RAMPART_XDP_MAX_HOST of a family). */
static int old_and_new_fit(struct xsk_prog *p, const struct xsk_prog_cfg *c)
{
	static const struct { const char *map; uint8_t family; } fam[] = {
		{ RAMPART_XDP_HOST4_MAP, 4 }, { RAMPART_XDP_HOST6_MAP, 6 },
	};

	for (unsigned f = 0; f < 2; f++) {
		int fd = map_fd(p, fam[f].map);
		uint8_t key[16], next[16], one;
		void *prev = NULL;
		uint32_t n = 0;

		if (fd < 0)
			continue;
		for (; !bpf_map_get_next_key(fd, prev, next); prev = key) {
			memcpy(key, next, sizeof(key));
			n++;
		}
		for (uint32_t i = 0; i < c->host_addr_count; i++)
			if (c->host_addrs[i].family == fam[f].family &&
			    bpf_map_lookup_elem(fd, c->host_addrs[i].addr, &one))
				n++;	/* one more to add */
		if (n > RAMPART_XDP_MAX_HOST)
			return 0;
	}
	return 1;
}

int xsk_prog_update_host(struct xsk_prog *p, const struct xsk_prog_cfg *c, char *err,
			 size_t errlen)
{
	struct rampart_xdp_cfg v;
	int e = build_cfg(c, &v, err, errlen);

	if (e)
		return e;
	/* New addresses in, then the pass list, then the stale ones out, so
	 * an address in both lists never leaves; when the two lists do not
	 * fit the map together, the stale ones go first (they are going
	 * anyway), so the update cannot stop half done on a full map with
	 * some new addresses already passing. */
	if (!old_and_new_fit(p, c))
		drop_stale_hosts(p, c);
	e = xsk_prog_set_hosts(map_fd(p, RAMPART_XDP_HOST4_MAP), map_fd(p, RAMPART_XDP_HOST6_MAP),
			       c, &v, err, errlen);
	if (!e)
		e = switch_cfg(p, &v, err, errlen);
	if (!e)
		drop_stale_hosts(p, c);
	return e;
}

struct own6_list {
	const uint8_t (*own)[16];
	uint32_t n;
};

static int own6_listed(const void *list, const uint8_t *key)
{
	const struct own6_list *l = list;

	for (uint32_t i = 0; i < l->n; i++)
		if (!memcmp(l->own[i], key, 16))
			return 1;
	return 0;
}

int xsk_prog_set_own6(struct xsk_prog *p, const uint8_t (*own)[16], uint32_t n, char *err,
		      size_t errlen)
{
	struct own6_list l = { own, n };
	int fd = map_fd(p, RAMPART_XDP_OWN6_MAP);
	int e = add_own6(fd, own, n, err, errlen);

	/* new in first: the map holds twice RAMPART_XDP_MAX_OWN6 for that */
	if (!e)
		drop_unlisted(fd, 16, &l, own6_listed);
	return e;
}

/* A rampart program already on the interface, left by a rampartd that
 * died (SIGKILL leaves it attached, by design: the --fail action needs
 * it) or stopped for a restart (SIGUSR2). Only its mode and how it is
 * attached are read here: it stays on until ours takes its place. */
struct stale_prog {
	struct xdp_multiprog *mp;	/* the interface's programs, held open */
	struct xdp_program *prog;	/* ours among them, or NULL */
	int legacy;			/* alone on the interface, no dispatcher */
	enum xdp_attach_mode mode;
};

static void stale_find(int ifindex, struct stale_prog *s)
{
	struct xdp_program *prog;

	memset(s, 0, sizeof(*s));
	s->mp = xdp_multiprog__get_from_ifindex(ifindex);
	if (!s->mp || libxdp_get_error(s->mp)) {
		s->mp = NULL;
		return;
	}
	s->mode = xdp_multiprog__attach_mode(s->mp);
	s->legacy = xdp_multiprog__is_legacy(s->mp);
	if (s->legacy) {
		prog = xdp_multiprog__main_prog(s->mp);
		if (prog && !strcmp(xdp_program__name(prog), XSK_PROG_NAME))
			s->prog = prog;
		return;
	}
	for (prog = xdp_multiprog__next_prog(NULL, s->mp); prog;
	     prog = xdp_multiprog__next_prog(prog, s->mp))
		if (!strcmp(xdp_program__name(prog), XSK_PROG_NAME)) {
			s->prog = prog;
			return;
		}
}

/* Take the stale program off (the last resort: the interface has no
 * program of ours until the attach that follows). 1 when it came off. */
static int stale_remove(struct stale_prog *s, int ifindex)
{
	if (!s->prog)
		return 0;
	if (s->legacy)
		return !xdp_multiprog__detach(s->mp);
	return !xdp_program__detach(s->prog, ifindex, s->mode, 0);
}

static void stale_close(struct stale_prog *s)
{
	xdp_multiprog__close(s->mp);
	memset(s, 0, sizeof(*s));
}

/* Ours joined the dispatcher the stale program is in: the stale one out
 * now. When it will not go, ours stays in: the last resort would take the
 * stale one off the same way, which just failed, and taking ours out
 * again changes nothing the stale one does. It is the one libxdp runs
 * first (same priority and name: a loaded program before one it loads),
 * and with no sockets of its own it gives every frame its host verdict or
 * its --fail action: under closed it drops the transit traffic ours
 * should get. p->stale_kept_id names it, for xsk_prog_stale_note. */
static void remove_joined_stale(struct xsk_prog *p, struct stale_prog *s, int ifindex)
{
	p->replaced_stale = stale_remove(s, ifindex);
	p->stale_kept_id = p->replaced_stale ? 0 : xdp_program__id(s->prog);
}

/* An attach refused beside a stale program, which stays on (and with it
 * the --fail action): e with err saying so; obj_path when the kernel
 * refused to load the object, NULL when it refused the attach. */
static int refused_beside_stale(struct stale_prog *s, int e, const char *obj_path, char *err,
				size_t errlen)
{
	char why[128];

	stale_close(s);
	xsk_errstr(e, why, sizeof(why));
	snprintf(err, errlen, "cannot %s XDP program%s%s: %s (the program a previous rampartd "
		 "left stays attached)", obj_path ? "load" : "attach", obj_path ? " " : "",
		 obj_path ? obj_path : "", why);
	return e;
}

int xsk_prog_stale_note(const struct xsk_prog *p, const char *ifname, int fail_closed,
			char *buf, size_t len)
{
	if (p->stale_kept_id) {
		snprintf(buf, len, "warning: could not remove the XDP program (id %u) a previous "
			 "rampartd left attached: it stays in libxdp's dispatcher, run before ours, "
			 "and %s (remove it: xdp-loader unload %s --id %u)", p->stale_kept_id,
			 fail_closed ? "drops this port's transit traffic before ours sees it "
				       "(--fail closed)"
				     : "passes every frame on to ours (--fail open)",
			 ifname, p->stale_kept_id);
		return 1;
	}
	if (p->replaced_stale) {
		snprintf(buf, len, "replaced the XDP program a previous rampartd left attached");
		return 1;
	}
	return 0;
}

static __u32 mode_flags(enum xdp_attach_mode mode)
{
	return mode == XDP_MODE_SKB ? XDP_FLAGS_SKB_MODE
	     : mode == XDP_MODE_NATIVE ? XDP_FLAGS_DRV_MODE : 0;
}

/* Ours in the place of a stale legacy program in one step: the kernel
 * swaps the two (XDP_FLAGS_REPLACE, only if the stale one is still
 * there). Taken off first, the interface had no program for the tens of
 * milliseconds the attach takes, and the kernel took transit meanwhile:
 * routed it unfiltered past --fail closed, answered a masqueraded
 * flow's packets with resets. libxdp cannot replace a legacy program and
 * has no load without an attach, so libbpf loads and swaps it; its mode
 * is the stale one's (a swap cannot change it). 0, or a negative errno
 * with p->prog closed; *loaded says whether the kernel took the program
 * at all (when it refused it, its verifier did, and no other way of
 * attaching it can work). */
static int replace_legacy(struct xsk_prog *p, const char *obj_path,
			  const struct xsk_prog_cfg *cfg, int ifindex,
			  const struct stale_prog *s, int *loaded, char *err, size_t errlen)
{
	int e = -EINVAL;

	*loaded = 0;

	for (int frags = 1; frags >= 0; frags--) {
		struct bpf_program *bp;
		int fd;

		if (frags && getenv("RAMPART_XSK_NO_SG"))
			continue;
		if (!p->prog) {
			e = xsk_prog_open(p, obj_path, cfg, err, errlen);
			if (e)
				return e;
		}
		bp = bpf_object__find_program_by_name(xdp_program__bpf_obj(p->prog),
						      XSK_PROG_NAME);
		e = bp ? xdp_program__set_xdp_frags_support(p->prog, frags) : -ENOENT;
		if (!e)
			e = bpf_object__load(xdp_program__bpf_obj(p->prog));
		fd = e ? -1 : bpf_program__fd(bp);
		if (fd >= 0) {
			*loaded = 1;
			LIBBPF_OPTS(bpf_xdp_attach_opts, opts,
				    .old_prog_fd = xdp_program__fd(s->prog));

			e = bpf_xdp_attach(ifindex, fd, XDP_FLAGS_REPLACE | mode_flags(s->mode),
					   &opts);
			if (!e) {
				p->prog_fd = fd;
				p->mode = s->mode;
				p->frags = frags;
				p->multiprog = 0;
				return 0;
			}
		}
		xdp_program__close(p->prog);	/* loaded: each try opens it anew */
		p->prog = NULL;
	}
	return e;
}

/* libxdp's attach, native mode first, each with frags support and then
 * without (a driver, or a kernel before 5.18, may refuse it: native
 * without frags beats skb mode with them), then skb mode the same. */
static int attach_with_libxdp(struct xsk_prog *p, const char *obj_path,
			      const struct xsk_prog_cfg *cfg, int ifindex, char *err,
			      size_t errlen)
{
	static const enum xdp_attach_mode modes[] = { XDP_MODE_NATIVE, XDP_MODE_SKB };
	int e = -EINVAL;

	for (size_t i = 0; i < 2 * sizeof(modes) / sizeof(modes[0]); i++) {
		int frags = !(i & 1);

		if (frags && getenv("RAMPART_XSK_NO_SG"))
			continue;
		if (!p->prog) {		/* the try before closed it */
			e = xsk_prog_open(p, obj_path, cfg, err, errlen);
			if (e)
				return e;
		}
		e = xdp_program__set_xdp_frags_support(p->prog, frags);
		if (!e)
			e = xdp_program__attach(p->prog, ifindex, modes[i / 2], 0);
		if (!e) {
			struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);

			p->mode = modes[i / 2];
			p->frags = frags;
			p->prog_fd = xdp_program__fd(p->prog);
			if (!libxdp_get_error(mp) && mp) {
				p->multiprog = !xdp_multiprog__is_legacy(mp);
				xdp_multiprog__close(mp);
			}
			return 0;
		}
		xdp_program__close(p->prog);
		p->prog = NULL;
	}
	return e;
}

int xsk_prog_attach(struct xsk_prog *p, const char *obj_path, int ifindex,
		    const struct xsk_prog_cfg *cfg, char *err, size_t errlen)
{
	struct stale_prog stale;
	char why[128];
	int e = 0;

	memset(p, 0, sizeof(*p));
	p->xskmap_fd = -1;
	p->prog_fd = -1;
	xsk_want_bpffs();
	/* Opened and configured before a dead rampartd's program is looked
	 * at: an object or a policy ours cannot take (too many host
	 * entries) leaves that program on, so --fail closed still holds,
	 * instead of an interface without a program until someone fixes it. */
	e = xsk_prog_open(p, obj_path, cfg, err, errlen);
	if (e)
		return e;

	/* Frags-aware (BPF_F_XDP_HAS_FRAGS): the program reads only the
	 * headers in the first buffer, so it takes frames of any length,
	 * and a driver (veth too) lets it on in native mode on a port whose
	 * MTU is over a page, for AF_XDP multi-buffer (queue.c). The flag is
	 * fixed once the program is loaded: each try after the first opens
	 * it anew.
	 *
	 * A stale program is never taken off before ours is on: alone on the
	 * interface it is swapped for ours in one step; behind libxdp's
	 * dispatcher ours joins it there first (the dispatcher is replaced
	 * whole, in one step too) and it leaves after. Taking it off first
	 * is the last resort, when neither works. */
	stale_find(ifindex, &stale);
	if (stale.prog && stale.legacy) {
		int loaded;

		e = replace_legacy(p, obj_path, cfg, ifindex, &stale, &loaded, err, errlen);
		p->replaced_stale = !e;
		/* the kernel refused the object: the old program stays on,
		 * and with it the --fail action, until one loads */
		if (e && !loaded)
			return refused_beside_stale(&stale, e, obj_path, err, errlen);
	} else if (stale.prog) {
		/* (libxdp cannot put ours beside a dispatcher but in it) */
		e = attach_with_libxdp(p, obj_path, cfg, ifindex, err, errlen);
		if (!e)
			remove_joined_stale(p, &stale, ifindex);
		/* Only libxdp's refusal to join that dispatcher (an older
		 * version, a mode it cannot rebuild it in: EBUSY, EEXIST,
		 * EOPNOTSUPP) is worth the last resort; a program the kernel
		 * refuses would be refused again, and the port left with none. */
		if (e && e != -EBUSY && e != -EEXIST && e != -EOPNOTSUPP)
			return refused_beside_stale(&stale, e, NULL, err, errlen);
	}
	if (stale.prog && e) {	/* the last resort: off with it, then ours */
		p->replaced_stale = stale_remove(&stale, ifindex);
		e = attach_with_libxdp(p, obj_path, cfg, ifindex, err, errlen);
	} else if (!stale.prog) {
		e = attach_with_libxdp(p, obj_path, cfg, ifindex, err, errlen);
	}
	stale_close(&stale);
	if (e) {
		xsk_errstr(e, why, sizeof(why));
		snprintf(err, errlen, "cannot attach XDP program: %s", why);
		xdp_program__close(p->prog);
		p->prog = NULL;
		return e;
	}
	p->ifindex = ifindex;

	p->xskmap_fd = bpf_object__find_map_fd_by_name(xdp_program__bpf_obj(p->prog),
						       XSK_XSKMAP_NAME);
	if (p->xskmap_fd < 0) {
		e = p->xskmap_fd;
		snprintf(err, errlen, "XDP object %s has no map %s", obj_path,
			 XSK_XSKMAP_NAME);
		xsk_prog_detach(p);
		return e < 0 ? e : -ENOENT;
	}
	return 0;
}

void xsk_prog_detach(struct xsk_prog *p)
{
	if (!p->prog)
		return;
	if (p->ifindex && p->multiprog) {
		xdp_program__detach(p->prog, p->ifindex, (enum xdp_attach_mode)p->mode, 0);
	} else if (p->ifindex) {
		/* Alone on the interface: take it off only if it is still ours
		 * (old_prog_fd), with nothing but CAP_NET_ADMIN, which is all
		 * rampartd keeps after set-up (libxdp's detach also looks the
		 * program up by id, which needs more). */
		LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = p->prog_fd);

		bpf_xdp_detach(p->ifindex, mode_flags((enum xdp_attach_mode)p->mode), &opts);
	}
	xdp_program__close(p->prog);
	p->prog = NULL;
	p->ifindex = 0;
	p->xskmap_fd = -1;
}

void xsk_prog_leave(struct xsk_prog *p)
{
	p->ifindex = 0;		/* xsk_prog_detach then only closes */
	xsk_prog_detach(p);
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
