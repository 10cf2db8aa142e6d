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
		pw->fixed[p] = fixed[p];
		pipe_port_addrs_get(&cfg->port[p], &pw->applied[p]);
	}
}

static int same(const struct pipe_port_addrs *a, const struct pipe_port_addrs *b)
{
	return a->has_v4 == b->has_v4 && a->has_v6 == b->has_v6 &&
	       (!a->has_v4 || !memcmp(a->v4, b->v4, 4)) && (!a->has_v6 || !memcmp(a->v6, b->v6, 16)) &&
	       a->nmore4 == b->nmore4 && a->nmore6 == b->nmore6 &&
	       !memcmp(a->more4, b->more4, (size_t)a->nmore4 * 4) &&
	       !memcmp(a->more6, b->more6, (size_t)a->nmore6 * 16);
}

static void add_text(char *buf, size_t len, size_t *at, int family, const void *addr)
{
	char s[INET6_ADDRSTRLEN];
	int n;

	if (*at >= len || !inet_ntop(family, addr, s, sizeof(s)))
		return;
	n = snprintf(buf + *at, len - *at, "%s%s", *at ? " " : "", s);
	if (n > 0)
		*at += (size_t)n;
}

/* The first of each family first (what masquerade and replies use),
 * then the others. */
const char *port_addrs_text(const struct pipe_port_addrs *a, char *buf, size_t len)
{
	size_t at = 0;

	if (!len)
		return buf;
	*buf = 0;
	if (a->has_v4)
		add_text(buf, len, &at, AF_INET, a->v4);
	for (unsigned k = 0; k < a->nmore4 && k < PIPE_PORT_MORE_ADDRS; k++)
		add_text(buf, len, &at, AF_INET, a->more4[k]);
	if (a->has_v6)
		add_text(buf, len, &at, AF_INET6, a->v6);
	for (unsigned k = 0; k < a->nmore6 && k < PIPE_PORT_MORE_ADDRS; k++)
		add_text(buf, len, &at, AF_INET6, a->more6[k]);
	if (!at)
		snprintf(buf, len, "none");
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
		char was[PORT_ADDRS_TEXT], is[PORT_ADDRS_TEXT];

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
