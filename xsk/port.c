/* Brings an interface up as an AF_XDP port and takes it down again:
 * sockets bound, then the program attached and configured, then the
 * sockets put into its map; down: sockets before their UMEMs, program
 * last. */
#include "port.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

int xsk_port_open(struct xsk_port *p, const char *ifname, const char *obj_path,
		  const struct xsk_prog_cfg *cfg, uint32_t nqueues, struct xsk_umem_pool *shared,
		  char *err, size_t errlen)
{
	int e;

	memset(p, 0, sizeof(*p));
	if (nqueues == 0 || nqueues > XSK_MAX_QUEUES) {
		snprintf(err, errlen, "%s: queue count %u out of range 1..%u",
			 ifname, nqueues, XSK_MAX_QUEUES);
		return -EINVAL;
	}
	if (strlen(ifname) >= sizeof(p->ifname)) {
		snprintf(err, errlen, "%s: interface name too long", ifname);
		return -ENAMETOOLONG;
	}
	strcpy(p->ifname, ifname);
	p->ifindex = (int)if_nametoindex(ifname);
	if (!p->ifindex) {
		e = -errno;
		snprintf(err, errlen, "interface %s: %s", ifname, strerror(errno));
		return e;
	}
	/* Sockets first: binding fails (EBUSY) on a queue a running rampartd
	 * holds, before we touch the program it depends on (attaching ours
	 * replaces one a dead rampartd left, see xdp_prog.c). */
	for (uint32_t i = 0; i < nqueues; i++) {
		e = xsk_queue_open(&p->queues[i], ifname, i, shared ? &shared[i] : NULL, err,
				   errlen);
		if (e) {
			xsk_port_close(p);
			return e;
		}
		p->nqueues = i + 1;
	}
	e = xsk_prog_attach(&p->prog, obj_path, p->ifindex, cfg, err, errlen);
	for (uint32_t i = 0; !e && i < nqueues; i++)
		e = xsk_queue_join(&p->queues[i], ifname, p->prog.xskmap_fd, err, errlen);
	if (e)
		xsk_port_undo(p);
	return e;
}

static void close_queues(struct xsk_port *p)
{
	for (uint32_t i = 0; i < p->nqueues; i++)
		xsk_queue_close(&p->queues[i]);
	p->nqueues = 0;
}

void xsk_port_close(struct xsk_port *p)
{
	close_queues(p);
	xsk_prog_detach(&p->prog);
}

void xsk_port_leave(struct xsk_port *p)
{
	close_queues(p);
	xsk_prog_leave(&p->prog);
}

void xsk_port_undo(struct xsk_port *p)
{
	/* Closed, the port would have no program at all (the old one is
	 * off): under --fail closed its transit traffic would reach the
	 * kernel until a start succeeded. */
	if (p->prog.replaced_stale)
		xsk_port_leave(p);
	else
		xsk_port_close(p);
}

uint32_t xsk_port_rx_queues(const char *ifname)
{
	char path[64 + IF_NAMESIZE];
	struct dirent *d;
	uint32_t n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir)) != NULL)
		n += !strncmp(d->d_name, "rx-", 3);
	closedir(dir);
	return n;
}
