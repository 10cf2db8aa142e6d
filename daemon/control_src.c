/* Fills the control socket's picture of a running rampartd (the AF_XDP
 * ports here; dpdk/dp_daemon.c adds DPDK's). */
#include "control_src.h"

#include <stdio.h>
#include <string.h>

/* A socket shares when its UMEM is the worker's and another socket is on
 * it too (queue.h); the interface says so when all its queues do. */
static void umem_sharing(struct control_iface *f, const struct xsk_port *p,
			 const struct rampartd_opts *o)
{
	uint32_t shared = 0;
	int why = 0;

	for (uint32_t q = 0; q < p->nqueues; q++) {
		const struct xsk_queue *x = &p->queues[q];

		if (x->pool != &x->own && x->pool->nusers > 1)
			shared++;
		else if (x->share_err && !why)
			why = x->share_err;
	}
	snprintf(f->umem, sizeof(f->umem), "%s",
		 shared == p->nqueues ? "shared" : shared ? "mixed" : "own");
	if (shared == p->nqueues)
		f->umem_reason[0] = '\0';
	else if (o->umem_per_interface)
		snprintf(f->umem_reason, sizeof(f->umem_reason), "--umem per-interface");
	else if (why)
		snprintf(f->umem_reason, sizeof(f->umem_reason), "kernel refused: %s", strerror(-why));
	else
		snprintf(f->umem_reason, sizeof(f->umem_reason), "no other port shares it");
}

void control_src_init(struct control_src *s, const char *backend, const struct rampartd_opts *o,
		      const struct rfw_view *view, struct worker *const *workers,
		      uint32_t nworkers, uint32_t max_flows)
{
	memset(s, 0, sizeof(*s));
	s->view = view;
	s->policy_path = o->policy;
	s->mode = o->mode == PIPE_ROUTER ? "router" : "bridge";
	s->backend = backend;
	s->workers = workers;
	s->nworkers = nworkers;
	s->nports = o->nifs;
	s->max_flows = max_flows ? max_flows : view->policy->max_flows;
	s->state_file = o->state_file;
	s->state_interval = o->state_interval;
	s->home = o->home_rss ? "rss" : "hash";
}

void control_src_xsk(struct control_src *s, const struct rampartd_opts *o,
		     const struct rfw_view *view, struct worker *const *workers,
		     uint32_t nworkers, const struct xsk_port *ports, uint32_t max_flows)
{
	control_src_init(s, "xsk", o, view, workers, nworkers, max_flows);
	for (uint32_t i = 0; i < o->nifs; i++) {
		struct control_iface *f = &s->iface[i];
		const struct xsk_port *p = &ports[i];

		snprintf(f->name, sizeof(f->name), "%s", o->ifnames[i]);
		snprintf(f->xdp_mode, sizeof(f->xdp_mode), "%s", xsk_prog_mode_name(&p->prog));
		snprintf(f->xsk_mode, sizeof(f->xsk_mode), "%s",
			 p->nqueues && p->queues[0].zerocopy ? "zero-copy" : "copy");
		f->queues = p->nqueues;
		umem_sharing(f, p, o);
	}
}
