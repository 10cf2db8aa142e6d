/* rampartd: command line, set-up and tear-down, signals. Packets are the
 * worker's (worker.c, through runtime/pipeline); this thread waits for
 * signals, prints counters and, in router mode, keeps the workers' next
 * hops in step with the kernel's neighbour table. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "artifact.h"
#include "backend_pcap.h"
#include "backend_xsk.h"
#include "counters.h"
#include "ifaddr.h"
#include "netlink.h"
#include "options.h"
#include "port.h"
#include "worker.h"
#include "xdp_cfg.h"

#define NEIGH_REFRESH_S 1	/* how stale a next hop may be */

/* Large: kept off the stack. */
static struct xsk_port xports[PIPE_MAX_PORTS];
static struct backend_xsk bx;
static struct backend_pcap bp;
static struct worker worker0;

/* Router mode forwards by routes only; without them it would drop all. */
static int policy_fits(const struct rampartd_opts *o, const struct rfw_view *view)
{
	if (o->mode == PIPE_ROUTER && (!view->route_table || !view->policy->route_count)) {
		fprintf(stderr, "rampartd: policy %s has no routes: router mode forwards by the "
				"policy's routes (add routes:, or use --mode bridge)\n", o->policy);
		return -1;
	}
	return 0;
}

/* Port names and, for a router, addresses: the kernel's when from_kernel,
 * else 02:00:00:00:00:<port+1> and none; --port-addr replaces either. */
static int port_config(const struct rampartd_opts *o, struct pipe_config *cfg, int from_kernel)
{
	char err[256];

	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = o->mode;
	cfg->nports = o->nifs;
	for (uint32_t i = 0; i < o->nifs; i++) {
		struct pipe_port_cfg *c = &cfg->port[i];

		snprintf(c->name, sizeof(c->name), "%s", o->ifnames[i]);
		c->mac[0] = 2;
		c->mac[5] = (uint8_t)(i + 1);
		if (o->mode == PIPE_ROUTER && from_kernel &&
		    ifaddr_get(o->ifnames[i], c, err, sizeof(err))) {
			fprintf(stderr, "rampartd: %s\n", err);
			return -1;
		}
	}
	for (uint32_t i = 0; i < o->nport_addr; i++) {
		const struct opt_port_addr *a = &o->port_addr[i];
		struct pipe_port_cfg *c = &cfg->port[options_port(o, a->ifname)];

		memcpy(c->mac, a->mac, 6);
		if (a->has_v4) {
			c->has_v4 = 1;
			memcpy(c->v4, a->v4, 4);
		}
		if (a->has_v6) {
			c->has_v6 = 1;
			memcpy(c->v6, a->v6, 16);
		}
	}
	return 0;
}

/* --neighbor entries, before the worker runs (so set directly). */
static void static_neighbours(const struct rampartd_opts *o, struct pipe_worker *pipe)
{
	for (uint32_t i = 0; i < o->nneigh; i++) {
		const struct opt_neigh *n = &o->neigh[i];

		if (pipe_neigh_set(pipe, (uint32_t)options_port(o, n->ifname), n->family, n->addr,
				   n->mac))
			fprintf(stderr, "rampartd: --neighbor %s: neighbour table full\n", n->ifname);
	}
}

static struct pipe_worker *make_pipe(const struct pipe_config *cfg, const struct rfw_view *view)
{
	struct pipe_worker *pipe = pipe_create(cfg, view);

	if (!pipe)
		fprintf(stderr, "rampartd: cannot create the pipeline: %s\n", strerror(errno));
	return pipe;
}

static void print_all(const struct counters_src *src)
{
	counters_print(stdout, src);
	counters_print_runtime(stdout, src);
}

/* --backend pcap: replay every input, write the outputs, print, exit. */
static int run_pcap(const struct rampartd_opts *o, const struct rfw_view *view)
{
	struct worker *workers[1] = { &worker0 };
	struct counters_src src = { view, workers, 1, o->ifnames, o->nifs };
	struct pipe_config cfg;
	struct pipe_worker *pipe;
	char err[512];
	int rc = EXIT_SETUP;

	if (port_config(o, &cfg, 0))
		return EXIT_USAGE;
	/* A fixed hash key: the same captures give the same outputs (flow
	 * order, NAT ports) on every run. */
	cfg.seed = 0x72616d70617274;
	pipe = make_pipe(&cfg, view);
	if (!pipe)
		return EXIT_SETUP;
	backend_pcap_init(&bp, o->nifs);
	for (uint32_t i = 0; i < o->npcap_in; i++)
		if (backend_pcap_add_input(&bp, (uint32_t)options_port(o, o->pcap_in[i].ifname),
					   o->pcap_in[i].path, err, sizeof(err)))
			goto out;
	for (uint32_t i = 0; i < o->npcap_out; i++)
		if (backend_pcap_set_output(&bp, (uint32_t)options_port(o, o->pcap_out[i].ifname),
					    o->pcap_out[i].path, err, sizeof(err)))
			goto out;
	worker_init(&worker0, &bp.be, 0, pipe);
	static_neighbours(o, pipe);
	worker_run(&worker0);
	rc = 0;
out:
	backend_pcap_close(&bp);
	if (rc)
		fprintf(stderr, "rampartd: %s\n", err);
	else {
		print_all(&src);
		if (o->verbose)
			fprintf(stderr, "rampartd: pcap: %llu frames cut to %u bytes, %llu sent out of "
					"ports without --pcap-out\n",
				(unsigned long long)bp.truncated, PCAP_SLOT_SIZE,
				(unsigned long long)bp.discarded);
	}
	pipe_destroy(pipe);
	return rc;
}

static int open_port(struct xsk_port *p, const char *ifname, const struct rampartd_opts *o)
{
	unsigned flags = o->mode == PIPE_ROUTER ? RAMPART_XDP_PASS_NEIGH : 0;
	char err[512];

	if (xsk_port_open(p, ifname, o->xdp_object, flags, 1, err, sizeof(err))) {
		fprintf(stderr, "rampartd: %s: %s\n", ifname, err);
		return -1;
	}
	if (o->verbose)
		fprintf(stderr, "rampartd: %s: XDP %s mode%s, AF_XDP %s mode, %u queue(s)\n",
			ifname, xsk_prog_mode_name(&p->prog),
			p->prog.multiprog ? " (libxdp dispatcher)" : " (legacy attach)",
			p->queues[0].zerocopy ? "zero-copy" : "copy", p->nqueues);
	return 0;
}

/* A leak check for the tests: every UMEM frame is somewhere known. */
static void report_frames(uint32_t nports)
{
	for (uint32_t i = 0; i < nports; i++)
		for (uint32_t q = 0; q < xports[i].nqueues; q++)
			fprintf(stderr, "rampartd: %s queue %u: %lld frames unaccounted\n",
				xports[i].ifname, q,
				(long long)xsk_queue_frames_unaccounted(&xports[i].queues[q]));
}

static void announce(const struct rampartd_opts *o, const struct rfw_view *view)
{
	if (o->mode == PIPE_BRIDGE) {
		fprintf(stderr, "rampartd: bridging %s <-> %s", o->ifnames[0], o->ifnames[1]);
		for (uint32_t i = 2; i < o->nifs; i += 2)
			fprintf(stderr, ", %s <-> %s", o->ifnames[i], o->ifnames[i + 1]);
	} else {
		fprintf(stderr, "rampartd: routing between %s", o->ifnames[0]);
		for (uint32_t i = 1; i < o->nifs; i++)
			fprintf(stderr, ", %s", o->ifnames[i]);
	}
	fprintf(stderr, " with %s (%u rules", o->policy, view->policy->rule_count);
	if (o->mode == PIPE_ROUTER)
		fprintf(stderr, ", %u routes", view->policy->route_count);
	fprintf(stderr, ")\n");
}

/* Signals are blocked in every thread and taken here with sigtimedwait:
 * nothing runs in signal context, so printing is safe. A router wakes
 * every NEIGH_REFRESH_S to read the kernel's neighbours. */
static void wait_signals(const sigset_t *set, const struct counters_src *src,
			 struct nl_neigh_sync *nl)
{
	const struct timespec tick = { NEIGH_REFRESH_S, 0 };
	char err[256];

	for (;;) {
		int sig = nl ? sigtimedwait(set, NULL, &tick) : sigwaitinfo(set, NULL);

		if (sig < 0) {
			/* timeout (or EINTR): time for a refresh */
			if (nl && nl_neigh_refresh(nl, err, sizeof(err)) < 0)
				fprintf(stderr, "rampartd: neighbours: %s\n", err);
			continue;
		}
		if (sig == SIGUSR1)
			print_all(src);
		else if (sig == SIGHUP)
			fprintf(stderr, "rampartd: SIGHUP: reload is not implemented yet; policy unchanged\n");
		else
			return;
	}
}

/* --backend xsk: AF_XDP on every interface, one worker thread. */
static int run_xsk(const struct rampartd_opts *o, const struct rfw_view *view)
{
	struct worker *workers[1] = { &worker0 };
	struct xsk_port *ports[PIPE_MAX_PORTS];
	struct counters_src src = { view, workers, 1, o->ifnames, o->nifs };
	struct nl_neigh_sync nl, *nlp = NULL;
	struct pipe_worker *pipe = NULL;
	struct pipe_config cfg;
	int ifindex[PIPE_MAX_PORTS];
	uint32_t opened = 0;
	sigset_t set;
	char err[256];
	int rc = EXIT_SETUP;

	/* Block before the worker exists so it inherits the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	xsk_prog_set_verbose(o->verbose);
	for (; opened < o->nifs; opened++) {
		if (open_port(&xports[opened], o->ifnames[opened], o))
			goto out;
		ports[opened] = &xports[opened];
		ifindex[opened] = xports[opened].ifindex;
	}
	if (port_config(o, &cfg, 1))
		goto out;
	pipe = make_pipe(&cfg, view);
	if (!pipe)
		goto out;
	backend_xsk_init(&bx, ports, o->nifs, 1);
	worker_init(&worker0, &bx.be, 0, pipe);
	static_neighbours(o, pipe);
	if (o->mode == PIPE_ROUTER) {
		if (nl_neigh_open(&nl, ifindex, o->nifs, workers, 1, err, sizeof(err)) ||
		    nl_neigh_refresh(&nl, err, sizeof(err)) < 0) {
			fprintf(stderr, "rampartd: neighbours: %s\n", err);
			goto out;
		}
		nlp = &nl;
	}
	errno = worker_start(&worker0);
	if (errno) {
		fprintf(stderr, "rampartd: cannot start worker: %s\n", strerror(errno));
		goto out;
	}
	announce(o, view);

	wait_signals(&set, &src, nlp);

	worker_stop(&worker0);
	rc = 0;
	if (o->verbose) {
		report_frames(o->nifs);
		if (nlp)
			fprintf(stderr, "rampartd: neighbours: %llu updates posted, %llu waited for "
					"ring room\n", (unsigned long long)nl.posted,
				(unsigned long long)nl.ring_full);
	}
out:
	if (nlp)
		nl_neigh_close(nlp);
	while (opened--)
		xsk_port_close(&xports[opened]);
	if (!rc)
		print_all(&src);
	pipe_destroy(pipe);
	return rc;
}

int main(int argc, char **argv)
{
	struct rampartd_opts o;
	struct rfw_view view;
	char err[256];
	int rc;

	rc = options_parse(argc, argv, &o);
	if (rc)
		return rc;
	if (rfw_open(&view, o.policy, err, sizeof(err))) {
		fprintf(stderr, "rampartd: policy %s: %s\n", o.policy, err);
		return EXIT_USAGE;
	}
	if (policy_fits(&o, &view))
		rc = EXIT_USAGE;
	else if (o.backend == OPT_BACKEND_PCAP)
		rc = run_pcap(&o, &view);
	else
		rc = run_xsk(&o, &view);
	rfw_close(&view);
	return rc;
}
