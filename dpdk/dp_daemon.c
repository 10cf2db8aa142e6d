/* rampartd's side of the DPDK backend: options in, ports out, and the
 * control socket's and -v's view of them. */
#include "dp_daemon.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "control_src.h"
#include "nd_check.h"

int dp_daemon_open(struct dp_ports *d, const struct rampartd_opts *o,
		   const struct rfw_view *view)
{
	char *argv0[2] = { (char *)"rampartd", NULL };
	struct dp_open_cfg cfg = {
		.names = o->ifnames,
		.nports = o->nifs,
		.queues = o->queues,
		.isolate = o->dpdk_isolate,
		/* router: the routed prefixes; bridge: every IP frame */
		.routes = o->mode == PIPE_ROUTER ? view->routes : NULL,
		.nroutes = o->mode == PIPE_ROUTER ? view->policy->route_count : 0,
		.eal_argc = o->eal_argc ? o->eal_argc : 1,
		.eal_argv = o->eal_argc ? o->eal_argv : argv0,
	};
	char err[512];

	for (uint32_t k = 0; k < o->nport_addr; k++) {	/* mtu=N: the device's */
		int i = options_port(o, o->port_addr[k].ifname);

		if (i >= 0)
			cfg.mtu[i] = o->port_addr[k].mtu;
	}
	if (!dp_open(d, &cfg, err, sizeof(err)))
		return 0;
	fprintf(stderr, "rampartd: %s\n", err);
	return -1;
}

void dp_daemon_macs(const struct dp_ports *d, const struct rampartd_opts *o,
		    struct pipe_config *cfg)
{
	for (uint32_t i = 0; i < d->nports; i++) {
		const struct opt_port_addr *given = NULL;

		for (uint32_t k = 0; k < o->nport_addr; k++)
			if (options_port(o, o->port_addr[k].ifname) == (int)i)
				given = &o->port_addr[k];
		if (!given)
			dp_port_mac(d, i, cfg->port[i].mac);
		cfg->port[i].mtu = given && given->mtu ? given->mtu : dp_port_mtu(d, i);
	}
}

void control_src_dpdk(struct control_src *s, const struct rampartd_opts *o,
		      const struct rfw_view *view, struct worker *const *workers,
		      const struct dp_ports *d, uint32_t max_flows)
{
	control_src_init(s, "dpdk", o, view, workers, d->nqueues, max_flows);
	for (uint32_t i = 0; i < d->nports; i++) {
		struct control_iface *f = &s->iface[i];

		snprintf(f->name, sizeof(f->name), "%s", o->ifnames[i]);
		/* no XDP program of ours: the PMD's name stands in */
		snprintf(f->xdp_mode, sizeof(f->xdp_mode), "%s", d->driver[i]);
		snprintf(f->xsk_mode, sizeof(f->xsk_mode), "%s", d->rss[i] ? "dpdk-rss" : "dpdk");
		f->queues = d->nqueues;
		f->frame_max = d->frame_max;
	}
}

void dp_daemon_report(const struct dp_ports *d, const struct rampartd_opts *o)
{
	for (uint32_t i = 0; i < d->nports; i++)
		fprintf(stderr, "rampartd: %s: DPDK port %u (%s), socket %d, %u queue(s), %s%s\n",
			o->ifnames[i], d->port_id[i], d->driver[i], d->socket[i], d->nqueues,
			d->rss[i] ? "RSS with the symmetric key" :
			d->nqueues > 1 ? "no RSS offload (the PMD spreads the queues)" : "one queue",
			d->rx_ipv4_csum[i] ? ", IPv4 header checksums checked by the NIC" : "");
	fprintf(stderr, "rampartd: mbufs hold frames of up to %u bytes whole\n", d->frame_max);
	for (uint32_t k = 0; k < d->nqueues; k++)
		fprintf(stderr, "rampartd: worker %u: queue %u, lcore %u, CPU %d\n", k, k,
			d->lcore[k], dp_worker_cpu(d, k));
}

static atomic_int lcore_known[DP_MAX_QUEUES];

static int worker_main(void *arg)
{
	struct worker *w = arg;

	w->thread = pthread_self();
	/* EAL made this thread before rampartd could drop anything */
	worker_enter(w, 1);
	atomic_store(&lcore_known[w->queue], 1);
	worker_run(w);
	return 0;
}

int dp_daemon_launch(const struct dp_ports *d, struct worker *w)
{
	uint32_t k = w->queue;
	int e;

	atomic_store(&lcore_known[k], 0);
	e = dp_launch(d, k, worker_main, w);
	if (e) {
		fprintf(stderr, "rampartd: cannot start worker %u on lcore %u: %s\n", k,
			d->lcore[k], strerror(-e));
		return -1;
	}
	/* the control socket reads w->thread (CPU affinity) */
	while (!atomic_load(&lcore_known[k]))
		sched_yield();
	return 0;
}

void dp_daemon_stop(const struct dp_ports *d, struct worker *w)
{
	atomic_store(&w->stop, 1);
	dp_wait(d, w->queue);
}

void dp_daemon_final(const struct dp_ports *d, const struct rampartd_opts *o,
		     const struct backend_dpdk *b)
{
	uint64_t multiseg = 0;

	for (uint32_t i = 0; i < d->nports; i++) {
		struct rte_eth_stats st;

		if (!d->started[i] || rte_eth_stats_get(d->port_id[i], &st))
			continue;
		fprintf(stderr, "rampartd: %s: PMD counted %llu in, %llu out, %llu missed, %llu "
				"without mbuf, %llu TX errors\n", o->ifnames[i],
			(unsigned long long)st.ipackets, (unsigned long long)st.opackets,
			(unsigned long long)st.imissed, (unsigned long long)st.rx_nombuf,
			(unsigned long long)st.oerrors);
	}
	uint64_t answered = 0, news = 0, asked = 0, probed = 0, limited = 0;

	for (uint32_t k = 0; k < d->nqueues; k++) {
		multiseg += b->q[k].multiseg;
		answered += b->q[k].neigh_answered;
		news += b->q[k].neigh_news;
		asked += b->q[k].neigh_asked;
		probed += b->q[k].neigh_probed;
		limited += b->q[k].neigh_ask_limited;
	}
	fprintf(stderr, "rampartd: DPDK: %llu chained (multi-mbuf) frames dropped\n",
		(unsigned long long)multiseg);
	if (b->own_neigh)
		fprintf(stderr, "rampartd: DPDK: ARP/ND: %llu requests for the ports' addresses "
				"answered, %llu frames telling of a neighbour, %llu solicitations "
				"sent, %llu probes sent, %llu solicitations over the budget (not "
				"sent)\n",
			(unsigned long long)answered, (unsigned long long)news,
			(unsigned long long)asked, (unsigned long long)probed,
			(unsigned long long)limited);
}

struct dp_reload_ctx {
	const struct rfw_view *started;
	const struct rampartd_opts *o;
	int isolated;
};

void *dp_daemon_reload_ctx(const struct rampartd_opts *o, const struct rfw_view *started)
{
	static struct dp_reload_ctx c;

	c.started = started;
	c.o = o;
	c.isolated = o->dpdk_isolate && o->mode == PIPE_ROUTER;
	return &c;
}

int dp_daemon_reload_check(void *ctx, const struct rfw_view *running,
			   const struct rfw_view *view, char *err, size_t errlen)
{
	const struct dp_reload_ctx *c = ctx;
	uint32_t n = view->policy->route_count;
	struct nd_block b;
	char line[512];

	(void)running;	/* nothing is written before the check: nothing to put back */
	if (c->isolated && (n != c->started->policy->route_count ||
			    (n && memcmp(view->routes, c->started->routes, n * sizeof(*view->routes))))) {
		snprintf(err, errlen, "with --dpdk-isolate the ports' rte_flow rules follow the "
				      "routes rampartd started with; restart it to change routes");
		return -1;
	}
	if (c->o->mode == PIPE_BRIDGE &&	/* as at start (rampartd.c warn_nd) */
	    nd_check_bridge(view, (const char *const *)c->o->ifnames, c->o->nifs, &b)) {
		nd_block_describe(view, (const char *const *)c->o->ifnames, &b, line, sizeof(line));
		fputs(line, stderr);
	}
	return 0;
}
