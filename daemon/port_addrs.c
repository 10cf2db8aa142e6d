/* See port_addrs.h. */
#include "port_addrs.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "artifact.h"
#include "ifaddr.h"
#include "reload.h"
#include "worker.h"

void port_addrs_init(struct port_addr_watch *pw, const struct pipe_config *cfg,
		     const char *const *ifnames, const uint8_t *fixed,
		     struct worker *const *workers, uint32_t nworkers)
{
	memset(pw, 0, sizeof(*pw));
	pw->nports = cfg->nports;
	pw->ifnames = ifnames;
	pw->workers = workers;
	pw->nworkers = nworkers;
	for (uint32_t p = 0; p < cfg->nports && p < PIPE_MAX_PORTS; p++) {
		struct pipe_port_addrs *a = &pw->applied[p];

		pw->fixed[p] = fixed[p];
		a->has_v4 = cfg->port[p].has_v4;
		a->has_v6 = cfg->port[p].has_v6;
		memcpy(a->v4, cfg->port[p].v4, 4);
		memcpy(a->v6, cfg->port[p].v6, 16);
	}
}

static int same(const struct pipe_port_addrs *a, const struct pipe_port_addrs *b)
{
	return a->has_v4 == b->has_v4 && a->has_v6 == b->has_v6 &&
	       (!a->has_v4 || !memcmp(a->v4, b->v4, 4)) && (!a->has_v6 || !memcmp(a->v6, b->v6, 16));
}

const char *port_addrs_text(const struct pipe_port_addrs *a, char *buf, size_t len)
{
	char v4[INET_ADDRSTRLEN] = "", v6[INET6_ADDRSTRLEN] = "";

	if (a->has_v4)
		inet_ntop(AF_INET, a->v4, v4, sizeof(v4));
	if (a->has_v6)
		inet_ntop(AF_INET6, a->v6, v6, sizeof(v6));
	snprintf(buf, len, "%s%s%s", v4, *v4 && *v6 ? " " : "", *v4 || *v6 ? v6 : "none");
	return buf;
}

int port_addrs_changed(const struct port_addr_watch *pw)
{
	for (uint32_t p = 0; p < pw->nports; p++) {
		struct pipe_port_addrs now;

		if (!pw->fixed[p] && !ifaddr_addrs(pw->ifnames[p], &now) &&
		    !same(&now, &pw->applied[p]))
			return 1;
	}
	return 0;
}

void port_addrs_prepare(void *ctx)
{
	struct port_addr_watch *pw = ctx;

	for (uint32_t p = 0; p < pw->nports; p++) {
		struct pipe_port_addrs now;
		char was[80], is[80];

		if (pw->fixed[p] || ifaddr_addrs(pw->ifnames[p], &now) || same(&now, &pw->applied[p]))
			continue;
		fprintf(stderr, "rampartd: %s: addresses %s -> %s: masquerade, replies and local "
				"follow from this policy build\n", pw->ifnames[p],
			port_addrs_text(&pw->applied[p], was, sizeof(was)),
			port_addrs_text(&now, is, sizeof(is)));
		pw->applied[p] = now;
		for (uint32_t k = 0; k < pw->nworkers; k++)
			pipe_set_port_addrs(pw->workers[k]->pipe, p, &now);
	}
	pw->told = 0;
}

/* 1 when path holds the artifact in force (same size and checksum). */
static int file_in_force(const char *path, const struct rfw_view *v)
{
	struct rfw_header h;
	FILE *f = fopen(path, "rb");
	int same = f && fread(&h, sizeof(h), 1, f) == 1 && h.checksum == v->hdr->checksum &&
		   h.file_size == v->hdr->file_size;

	if (f)
		fclose(f);
	return same;
}

void port_addrs_tick(struct port_addr_watch *pw, struct reloader *r)
{
	struct reload_timing t;
	char err[640];

	if (!port_addrs_changed(pw))
		return;
	reload_lock(r);
	if (!file_in_force(r->path, r->view)) {
		if (!pw->told)
			fprintf(stderr, "rampartd: a port's addresses changed, but %s is not the policy "
					"in force any more: masquerade keeps the old addresses until "
					"a reload\n", r->path);
		pw->told = 1;
	} else if (reload_run(r, r->path, PIPE_FLOWS_KEEP, &t, err, sizeof(err))) {
		if (!pw->told)
			fprintf(stderr, "rampartd: a port's addresses changed; building the policy "
					"for them was refused: %s\n", err);
		pw->told = 1;
	} else {
		fprintf(stderr, "rampartd: policy built again for the ports' addresses "
				"(generation %llu, in force %llu us after)\n",
			(unsigned long long)r->seq, (unsigned long long)t.released);
	}
	reload_unlock(r);
}
