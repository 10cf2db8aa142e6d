/* Brings an interface up as an AF_XDP port and takes it down again, in
 * the order the kernel needs: program before sockets (the sockets go into
 * its map), sockets before the UMEM, program detached last. */
#include "port.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

int xsk_port_open(struct xsk_port *p, const char *ifname, const char *obj_path,
		  const struct xsk_prog_cfg *cfg, uint32_t nqueues, char *err, size_t errlen)
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
	e = xsk_prog_attach(&p->prog, obj_path, p->ifindex, cfg, err, errlen);
	if (e)
		return e;
	for (uint32_t i = 0; i < nqueues; i++) {
		char why[256];

		e = xsk_queue_open(&p->queues[i], ifname, i, p->prog.xskmap_fd,
				   why, sizeof(why));
		if (e) {
			snprintf(err, errlen, "%s", why);
			xsk_port_close(p);
			return e;
		}
		p->nqueues = i + 1;
	}
	return 0;
}

void xsk_port_close(struct xsk_port *p)
{
	for (uint32_t i = 0; i < p->nqueues; i++)
		xsk_queue_close(&p->queues[i]);
	p->nqueues = 0;
	xsk_prog_detach(&p->prog);
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
