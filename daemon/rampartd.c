/* rampartd: command line, set-up and tear-down, signals. Packets are the
 * workers' (worker.c, through runtime/pipeline; one per queue, pinned);
 * this thread waits for signals, prints counters and, in router mode,
 * keeps the workers' next hops in step with the kernel's neighbour table. */
#define _GNU_SOURCE	/* pthread_setaffinity_np, CPU_SET */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

#include "artifact.h"
#include "backend_pcap.h"
#include "backend_xsk.h"
#include "control.h"
#include "control_src.h"
#include "counters.h"
#include "flowstate.h"
#include "host_update.h"
#include "ifaddr.h"
#include "logger.h"
#include "nd_check.h"
#include "neigh_cache.h"
#include "neigh_ring.h"
#include "netlink.h"
#include "options.h"
#include "pipe_state.h"
#include "pktcap.h"
#include "port.h"
#include "port_addrs.h"
#include "privilege.h"
#include "reload.h"
#include "rss_nic.h"
#include "worker.h"
#include "xdp_cfg.h"
#ifdef RAMPART_HAVE_DPDK
#include "dp_daemon.h"
#endif

#define NEIGH_REFRESH_MS 1000	/* how stale a next hop may be */
#define NEIGH_TICK_MS 100	/* unresolved next hops asked for within */
#define KEPT_TICK_MS 1000	/* kept DNAT rules and a restore's redirects looked at */
#define NEIGH_WAIT_MS 3000	/* after asking, a dump every tick this long */

/* Large: kept off the stack. */
static struct xsk_port xports[PIPE_MAX_PORTS];
static struct xsk_umem_pool umems[XSK_MAX_QUEUES];	/* worker k's, shared by its sockets */
static struct backend_xsk bx;
static struct backend_pcap bp;
static struct worker workers[XSK_MAX_QUEUES];
static struct pipe_worker *pipes[XSK_MAX_QUEUES];
static struct handoff handoff;	/* between the workers; n = 0: none */
/* --home rss: the NIC's hash, shared by every worker (pipe_config.rss_home) */
static struct rss_home rss_home;
static struct rss_port_conf rss_port;
/* How the backend learns a port's RSS settings: 0 filled, 1 not said,
 * -1 with err (rss_nic.h). Set by the backend's run_ before make_pipes. */
static int (*rss_read)(const struct rampartd_opts *o, uint32_t port, struct rss_port_conf *c,
		       char *err, size_t errlen);
static int worker_cpu[XSK_MAX_QUEUES];
static struct reloader reloader;
static struct logger pktlogger;
static struct pktcap_ring caprings[XSK_MAX_QUEUES];

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

/* Port names, MTUs and, for a router, addresses: the kernel's when from_kernel,
 * else 02:00:00:00:00:<port+1> and none; --port-addr replaces either. */
static int port_config(const struct rampartd_opts *o, struct pipe_config *cfg, int from_kernel)
{
	char err[256];

	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = o->mode;
	cfg->nports = o->nifs;
	cfg->reply_rate = o->reply_rate;
	cfg->park_fragments = 1;	/* worker_run runs them again */
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
		if (o->mode != PIPE_ROUTER && from_kernel) {	/* for tcp_mss: clamp */
			int mtu = ifaddr_mtu(o->ifnames[i]);

			c->mtu = mtu > 0 ? (uint32_t)mtu : 0;
		}
	}
	for (uint32_t i = 0; i < o->nport_addr; i++) {
		const struct opt_port_addr *a = &o->port_addr[i];
		struct pipe_port_cfg *c = &cfg->port[options_port(o, a->ifname)];

		memcpy(c->mac, a->mac, 6);
		if (a->addrs.has_v4) {	/* the kernel's of a family, or all given */
			c->has_v4 = 1;
			memcpy(c->v4, a->addrs.v4, 4);
			c->nmore4 = a->addrs.nmore4;
			memcpy(c->more4, a->addrs.more4, sizeof(c->more4));
		}
		if (a->addrs.has_v6) {
			c->has_v6 = 1;
			memcpy(c->v6, a->addrs.v6, 16);
			c->nmore6 = a->addrs.nmore6;
			memcpy(c->more6, a->addrs.more6, sizeof(c->more6));
		}
		if (a->mtu)
			c->mtu = a->mtu;
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

/* The --neighbor entries the workers start with, pinned against the
 * kernel's (an ARP spoofer's entry for a pinned gateway is never
 * posted). 0, or -1 with err. */
static int pin_static_neighbours(const struct rampartd_opts *o, struct nl_neigh_sync *nl,
				 char *err, size_t errlen)
{
	for (uint32_t i = 0; i < o->nneigh; i++) {
		const struct opt_neigh *n = &o->neigh[i];

		if (nl_neigh_pin(nl, (uint32_t)options_port(o, n->ifname), n->family, n->addr,
				 n->mac)) {
			snprintf(err, errlen, "--neighbor %s: too many", n->ifname);
			return -1;
		}
	}
	return 0;
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
	counters_print_workers(stdout, src);
}

/* Bridge mode: a policy that carries IPv6 but drops neighbour discovery
 * (nd_check.h) is said once, at start and at each reload that brings it. */
static void warn_nd(const struct rampartd_opts *o, const struct rfw_view *view)
{
	struct nd_block b;
	char line[512];

	if (o->mode != PIPE_BRIDGE ||
	    !nd_check_bridge(view, (const char *const *)o->ifnames, o->nifs, &b))
		return;
	nd_block_describe(view, (const char *const *)o->ifnames, &b, line, sizeof(line));
	fputs(line, stderr);
}

/* --backend pcap: replay every input, write the outputs, print, exit. */
static int run_pcap(const struct rampartd_opts *o, const struct rfw_view *view)
{
	struct worker *wp[1] = { &workers[0] };
	struct counters_src src = {
		.view = view, .workers = wp, .nworkers = 1, .ifnames = o->ifnames, .nports = o->nifs,
	};
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
	warn_nd(o, view);
	backend_pcap_init(&bp, o->nifs);
	for (uint32_t i = 0; i < o->npcap_in; i++)
		if (backend_pcap_add_input(&bp, (uint32_t)options_port(o, o->pcap_in[i].ifname),
					   o->pcap_in[i].path, err, sizeof(err)))
			goto out;
	for (uint32_t i = 0; i < o->npcap_out; i++)
		if (backend_pcap_set_output(&bp, (uint32_t)options_port(o, o->pcap_out[i].ifname),
					    o->pcap_out[i].path, err, sizeof(err)))
			goto out;
	worker_init(&workers[0], &bp.be, 0, pipe);
	static_neighbours(o, pipe);
	worker_run(&workers[0]);
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

/* Router mode: the kernel's own IPv6 addresses as last written into the
 * ports' XDP programs (a unicast NS or NA to one of them is the kernel's),
 * followed each NEIGH_REFRESH_MS (follow_own6); own6_left_out more were
 * not written (they go to the rules). */
static uint8_t own6[RAMPART_XDP_MAX_OWN6][16];
static uint32_t own6_count, own6_left_out;

/* What the XDP program is told: the options' flags, the policy's host
 * section, router mode's own IPv6 addresses. */
static struct xsk_prog_cfg prog_cfg(const struct rampartd_opts *o, const struct rfw_view *view)
{
	return (struct xsk_prog_cfg){
		.own6 = o->mode == PIPE_ROUTER ? (const uint8_t (*)[16])own6 : NULL,
		.own6_count = o->mode == PIPE_ROUTER ? own6_count : 0,
		.flags = (o->mode == PIPE_ROUTER ? RAMPART_XDP_PASS_NEIGH : 0) |
			 (o->fail_closed ? RAMPART_XDP_FAIL_CLOSED : 0),
		.host_addrs = view->host_addrs,
		.host_addr_count = view->host_addr_count,
		.host_pass = view->host_pass,
		.host_pass_count = view->host_pass_count,
	};
}

static int update_port_host(void *ctx, uint32_t i, const struct xsk_prog_cfg *cfg, char *err,
			    size_t errlen)
{
	(void)ctx;
	return xsk_prog_update_host(&xports[i].prog, cfg, err, errlen);
}

/* Reload hook: the new policy's host section into every port's program,
 * after checking it fits (so no port is half updated by a refusal); a
 * port that refuses it all the same has every port put back to the
 * running policy's, which the refused reload leaves in force. */
static int reload_host_section(void *ctx, const struct rfw_view *running,
			       const struct rfw_view *view, char *err, size_t errlen)
{
	const struct rampartd_opts *o = ctx;
	struct xsk_prog_cfg cfg = prog_cfg(o, view), old_cfg = prog_cfg(o, running);
	uint32_t n4 = 0, n6 = 0;
	int rc;

	for (uint32_t i = 0; i < view->host_addr_count; i++)
		view->host_addrs[i].family == 6 ? n6++ : n4++;
	if (n4 > RAMPART_XDP_MAX_HOST || n6 > RAMPART_XDP_MAX_HOST ||
	    view->host_pass_count > RAMPART_XDP_MAX_PASS) {
		snprintf(err, errlen, "host section too large for the XDP program (at most %d "
			 "addresses of a family and %d pass entries)", RAMPART_XDP_MAX_HOST,
			 RAMPART_XDP_MAX_PASS);
		return -1;
	}
	rc = xsk_update_ports_host(o->nifs, o->ifnames, &cfg, &old_cfg, update_port_host, NULL,
				   err, errlen);
	if (rc == -2)	/* the reload's refusal says it too, but it outlives the reload */
		fprintf(stderr, "rampartd: reload refused, and a port keeps the refused policy's "
				"host section: %s\n", err);
	if (rc)
		return -1;
	warn_nd(o, view);
	return 0;
}

static int open_port(struct xsk_port *p, const char *ifname, const struct rampartd_opts *o,
		     const struct rfw_view *view, uint32_t nqueues)
{
	struct xsk_prog_cfg cfg = prog_cfg(o, view);
	char err[512];

	if (xsk_port_open(p, ifname, o->xdp_object, &cfg, nqueues,
			  o->umem_per_interface ? NULL : umems, err, sizeof(err))) {
		fprintf(stderr, "rampartd: %s: %s\n", ifname, err);
		return -1;
	}
	if (xsk_prog_stale_note(&p->prog, ifname, o->fail_closed, err, sizeof(err)))
		fprintf(stderr, "rampartd: %s: %s\n", ifname, err);
	if (o->verbose) {
		fprintf(stderr, "rampartd: %s: XDP %s mode%s%s, %u queue(s), fail %s, %u host "
				"address(es), %u pass entr%s\n",
			ifname, xsk_prog_mode_name(&p->prog),
			p->prog.multiprog ? " (libxdp dispatcher)" : " (legacy attach)",
			p->prog.frags ? ", frags-aware" : "", p->nqueues,
			o->fail_closed ? "closed" : "open", view->host_addr_count,
			view->host_pass_count, view->host_pass_count == 1 ? "y" : "ies");
		for (uint32_t q = 0; q < p->nqueues; q++)
			fprintf(stderr, "rampartd: %s queue %u: AF_XDP %s mode%s\n", ifname, q,
				p->queues[q].zerocopy ? "zero-copy" : "copy",
				p->queues[q].sg ? ", multi-buffer" : "");
	}
	return 0;
}

/* --queues, or every RX queue the interfaces have in common. Queues
 * without a worker keep the program but no socket: their transit traffic
 * gets the --fail action, so say so. */
static int pick_queues(const struct rampartd_opts *o, uint32_t *nq)
{
	uint32_t have[PIPE_MAX_PORTS], min = 0;

	for (uint32_t i = 0; i < o->nifs; i++) {
		have[i] = xsk_port_rx_queues(o->ifnames[i]);
		if (!have[i])
			have[i] = 1;	/* no sysfs: queue 0 exists on any device */
		if (!min || have[i] < min)
			min = have[i];
	}
	if (o->queues > min) {
		fprintf(stderr, "rampartd: --queues %u: an interface has only %u RX queue(s)\n",
			o->queues, min);
		return -1;
	}
	*nq = o->queues ? o->queues : min < XSK_MAX_QUEUES ? min : XSK_MAX_QUEUES;
	for (uint32_t i = 0; i < o->nifs; i++)
		if (have[i] > *nq)
			fprintf(stderr, "rampartd: %s: RX queues %u-%u have no worker; their transit "
					"traffic is %s (--fail %s)\n", o->ifnames[i], *nq, have[i] - 1,
				o->fail_closed ? "dropped" : "passed to the kernel",
				o->fail_closed ? "closed" : "open");
	return 0;
}

/* --cores in worker order, else round-robin over the CPUs we may run on. */
static void pick_cpus(const struct rampartd_opts *o, uint32_t n)
{
	int list[CPU_SETSIZE], m = 0;
	cpu_set_t set;

	if (o->ncores) {
		for (uint32_t k = 0; k < n; k++)
			worker_cpu[k] = o->cores[k % o->ncores];
		return;
	}
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				list[m++] = c;
	for (uint32_t k = 0; k < n; k++)
		worker_cpu[k] = m ? list[k % m] : -1;
}

static int pin_worker(uint32_t k)
{
	cpu_set_t set;
	int e;

	if (worker_cpu[k] < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(worker_cpu[k], &set);
	e = pthread_setaffinity_np(workers[k].thread, sizeof(set), &set);
	if (e)
		fprintf(stderr, "rampartd: cannot pin worker %u to CPU %d: %s\n", k, worker_cpu[k],
			strerror(e));
	return e;
}

static int rss_read_kernel(const struct rampartd_opts *o, uint32_t port, struct rss_port_conf *c,
			   char *err, size_t errlen)
{
	return rss_nic_read(o->ifnames[port], c, err, errlen);
}

static int same_rss(const struct rss_port_conf *a, const struct rss_port_conf *b)
{
	return a->key_len == b->key_len && !memcmp(a->key, b->key, a->key_len) &&
	       a->table_size == b->table_size &&
	       !memcmp(a->table, b->table, a->table_size * sizeof(a->table[0])) &&
	       !memcmp(a->ports, b->ports, sizeof(a->ports));
}

/* --home rss: every port's key and table (the same on all: a flow's two
 * directions arrive on two ports), or --rss-key for ports that do not
 * say; refused (exit 2) when the NIC's hash cannot be followed. */
static int make_rss_home(const struct rampartd_opts *o, uint32_t n, struct pipe_config *cfg)
{
	static struct rss_port_conf c;
	char err[512], key[3 * RSS_KEY_MAX];
	static const char *const names[2][2] = {{"tcp4", "udp4"}, {"tcp6", "udp6"}};

	for (uint32_t i = 0; i < o->nifs; i++) {
		int r = rss_read ? rss_read(o, i, &c, err, sizeof(err)) : 1;

		if (r < 0)
			goto refused;
		if (r > 0) {	/* not said: --rss-key and Linux's default table */
			if (!o->rss_key_len) {
				snprintf(err, sizeof(err), "%s does not report its RSS key (a veth, or "
						"a driver without RSS): give it with --rss-key",
					 o->ifnames[i]);
				goto refused;
			}
			memset(&c, 0, sizeof(c));
			memcpy(c.key, o->rss_key, o->rss_key_len);
			c.key_len = (uint32_t)o->rss_key_len;
			c.table_size = RSS_TABLE_DEFAULT;
			for (uint32_t e = 0; e < RSS_TABLE_DEFAULT; e++)
				c.table[e] = e % n;
			memset(c.ports, 1, sizeof(c.ports));
		}
		if (i == 0) {
			rss_port = c;
		} else if (!same_rss(&rss_port, &c)) {
			snprintf(err, sizeof(err), "%s and %s hash differently (key, indirection "
					"table or fields): give them the same (ethtool -X IF hkey ... "
					"equal)", o->ifnames[0], o->ifnames[i]);
			goto refused;
		}
	}
	if (rss_home_init(&rss_home, rss_port.key, rss_port.key_len, rss_port.table,
			  rss_port.table_size, n, err, sizeof(err)))
		goto refused;
	for (int f = 0; f < 2; f++)
		for (int u = 0; u < 2; u++) {
			rss_home_ports(&rss_home, f ? 6 : 4, u, rss_port.ports[f][u]);
			if (!rss_port.ports[f][u])
				fprintf(stderr, "rampartd: --home rss: %s hashes %s by addresses only: "
						"those flows keep the keyed hash (ethtool -N IF "
						"rx-flow-hash %s sdfn hashes their ports too)\n",
					o->ifnames[0], names[f][u], names[f][u]);
		}
	cfg->rss_home = &rss_home;
	if (o->verbose) {
		rss_key_format(rss_port.key, rss_port.key_len, key, sizeof(key));
		fprintf(stderr, "rampartd: handoff: TCP and UDP flows homed by the NIC's RSS "
				"(Toeplitz, key %s, a table of %u entries over %u queues)\n",
			key, rss_port.table_size, n);
	}
	return 0;
refused:
	fprintf(stderr, "rampartd: --home rss: %s\n", err);
	return -1;
}

/* Several workers of a stateful policy: each frame to the worker of its
 * flow (handoff.h), unless --handoff off. One random key for all, so an
 * outsider cannot aim every flow at one worker. */
static int make_handoff(const struct rampartd_opts *o, const struct rfw_view *view, uint32_t n,
			struct pipe_config *cfg, const struct pipe_state *st)
{
	if (n < 2 || !view->policy->stateful || o->no_handoff) {
		if (o->home_rss && o->verbose)
			fprintf(stderr, "rampartd: --home rss: no handoff (%s), nothing to home\n",
				n < 2 ? "one worker" : "stateless policy");
		return 0;
	}
	if (o->home_rss && make_rss_home(o, n, cfg))
		return -1;
	if (handoff_init(&handoff, n) < 0) {
		fprintf(stderr, "rampartd: rings between the workers: %s\n", strerror(errno));
		return -1;
	}
	if (getrandom(&cfg->home_seed, sizeof(cfg->home_seed), 0) != sizeof(cfg->home_seed))
		cfg->home_seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull;
	flowstate_seed(st, n, 1, &cfg->home_seed);	/* the saved flows' workers */
	cfg->handoff = 1;
	if (o->verbose)
		fprintf(stderr, "rampartd: handoff: %u workers, rings of %u frames between each "
				"pair\n", n, handoff.slots);
	return 0;
}

/* One pipeline per worker: its own flows, NAT port share and limit share
 * (worker_id of worker_count); the policy's max_flows is the total. The
 * flows of --state-file go back in before any worker runs. */
static int make_pipes(const struct rampartd_opts *o, const struct rfw_view *view, uint32_t n,
		      struct pipe_config *cfg, struct backend *be)
{
	struct pipe_state *st = flowstate_open(o);

	cfg->worker_count = (uint16_t)n;
	if (n > 1 && view->policy->max_flows)
		cfg->max_flows = view->policy->max_flows / n ? view->policy->max_flows / n : 1;
	if (make_handoff(o, view, n, cfg, st))
		goto fail;
	for (uint32_t k = 0; k < n; k++) {
		cfg->worker_id = (uint16_t)k;
		pipes[k] = make_pipe(cfg, view);
		if (!pipes[k])
			goto fail;
		worker_init(&workers[k], be, k, pipes[k]);
		if (cfg->handoff)
			workers[k].ho = &handoff;
		static_neighbours(o, pipes[k]);
	}
	flowstate_restore(o, st, pipes, n);
	return 0;
fail:
	pipe_state_close(st);
	return -1;
}

/* Worker k's UMEMs: its shared one (if a socket is bound to it), then
 * each socket with one of its own. name gets "worker K UMEM (A, B queue
 * K)" or "A queue K UMEM"; returns the UMEM, NULL past the last. */
static struct xsk_umem_pool *worker_umem(uint32_t k, uint32_t nports, uint32_t i, char *name,
					 size_t len)
{
	size_t at;

	if (umems[k].nusers && i-- == 0) {
		at = (size_t)snprintf(name, len, "worker %u UMEM (", k);
		for (uint32_t p = 0, n = 0; p < nports; p++)
			if (xports[p].queues[k].pool == &umems[k] && at < len)
				at += (size_t)snprintf(name + at, len - at, "%s%s", n++ ? ", " : "",
						       xports[p].ifname);
		if (at < len)
			snprintf(name + at, len - at, " queue %u)", k);
		return &umems[k];
	}
	for (uint32_t p = 0; p < nports; p++) {
		struct xsk_queue *q = &xports[p].queues[k];

		if (q->pool == &q->own && i-- == 0) {
			snprintf(name, len, "%s queue %u UMEM", xports[p].ifname, k);
			return q->pool;
		}
	}
	return NULL;
}

/* -v: how the worker's frames are laid out, and whether forwarding
 * copies. The tests count these lines against the stop lines below. */
static void report_umems(const struct rampartd_opts *o, uint32_t nq)
{
	char name[160];

	for (uint32_t k = 0; k < nq; k++) {
		struct xsk_umem_pool *p;

		for (uint32_t i = 0; (p = worker_umem(k, o->nifs, i, name, sizeof(name))); i++) {
			const struct xsk_queue *q = NULL;

			for (uint32_t j = 0; j < o->nifs && !q; j++)
				if (xports[j].queues[k].pool == p)
					q = &xports[j].queues[k];
			if (p->sg)
				fprintf(stderr, "rampartd: %s: multi-buffer: frames longer than %u B "
						"come and go as chains\n", name, XSK_FRAME_SIZE);
			fprintf(stderr, "rampartd: %s: %u frames of %u B, ", name, p->nframes,
				XSK_FRAME_SIZE);
			if (p == &umems[k] && p->nusers == o->nifs)
				fprintf(stderr, "shared by every port: forwarding passes frame "
						"addresses, no copy\n");
			else if (p == &umems[k] && p->nusers == 1)
				fprintf(stderr, "no other port's socket could share it: forwarding "
						"to or from the other ports copies once\n");
			else if (p == &umems[k])
				fprintf(stderr, "shared: forwarding among these ports passes frame "
						"addresses, to or from the others copies once\n");
			else if (q->share_err)
				fprintf(stderr, "its own: the kernel refused the shared UMEM (%s); "
						"forwarding to or from it copies once\n",
					strerror(-q->share_err));
			else
				fprintf(stderr, "its own (--umem per-interface): forwarding to or "
						"from it copies once\n");
		}
	}
}

/* A leak check for the tests: every frame of every UMEM is somewhere
 * known (free, or held by one of its sockets). */
static void report_frames(uint32_t nports, uint32_t nq)
{
	const struct xsk_queue *qs[PIPE_MAX_PORTS];
	char name[160];

	for (uint32_t k = 0; k < nq; k++) {
		struct xsk_umem_pool *p;

		for (uint32_t i = 0; i < nports; i++)
			qs[i] = &xports[i].queues[k];
		for (uint32_t i = 0; (p = worker_umem(k, nports, i, name, sizeof(name))); i++)
			fprintf(stderr, "rampartd: %s: %lld frames unaccounted\n", name,
				(long long)xsk_pool_frames_unaccounted(p, qs, nports));
	}
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

/* First: a second rampartd must stop before touching the interfaces.
 * Then block signals before the workers exist so they inherit the mask. */
static struct control *open_control(const struct rampartd_opts *o, sigset_t *set)
{
	char err[256];
	struct control *ctl = control_open(o->control, err, sizeof(err));

	if (!ctl) {
		fprintf(stderr, "rampartd: %s\n", err);
		return NULL;
	}
	/* bound now, before any interface is touched and any privilege dropped */
	if (o->metrics && control_metrics_listen(ctl, o->metrics, err, sizeof(err))) {
		fprintf(stderr, "rampartd: %s\n", err);
		control_free(ctl);
		return NULL;
	}
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGUSR2);
	sigaddset(set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	return ctl;
}

/* Reload takes over the policy and the workers (not yet started); the
 * counters follow its view. hook: checks and updates before a publish. */
static int start_reload(const struct rampartd_opts *o, const struct rfw_view *view,
			struct worker *const *wp, uint32_t n, struct counters_src *src,
			reload_hook hook, void *hook_ctx)
{
	if (reload_init(&reloader, view, o->policy, wp, n, o->ifnames, o->nifs,
			o->reload_flows)) {
		fprintf(stderr, "rampartd: out of memory indexing the policy's rule names\n");
		reload_free(&reloader);
		return -1;
	}
	reloader.hook = hook;
	reloader.hook_ctx = hook_ctx;
	reload_track_view(&reloader, &src->view);
	src->reload = &reloader;
	return 0;
}

/* The control socket serves (reloads too, its view following them), then
 * the start is announced (scripts wait for that line). */
static int go_live(struct control *ctl, struct control_src *csrc,
		   const struct rampartd_opts *o, const struct rfw_view *view)
{
	csrc->reload = &reloader;
	reload_track_view(&reloader, &csrc->view);
	errno = control_start(ctl, csrc);
	if (errno) {
		fprintf(stderr, "rampartd: control socket: %s\n", strerror(errno));
		return -1;
	}
	warn_nd(o, view);
	announce(o, view);
	return 0;
}

/* SIGHUP: the policy file again (CLI.md), as `rampartctl reload` does. */
static void sighup_reload(void)
{
	struct reload_timing t;
	char err[640];

	reload_lock(&reloader);
	if (reload_run(&reloader, NULL, reloader.flows, &t, err, sizeof(err)))
		fprintf(stderr, "rampartd: SIGHUP: reload refused, the running policy stays: %s\n",
			err);
	else
		fprintf(stderr, "rampartd: SIGHUP: reloaded %s (%u rules, generation %llu): "
				"published %llu us, released %llu us after the signal\n",
			reloader.path, reloader.view->policy->rule_count,
			(unsigned long long)reloader.seq, (unsigned long long)t.published,
			(unsigned long long)t.released);
	reload_unlock(&reloader);
}

static uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The kernel's own IPv6 addresses now into own6; 1 when they changed.
 * A new excess is told once. */
static int read_own6(void)
{
	static uint8_t now[RAMPART_XDP_MAX_OWN6][16];
	uint32_t left_out;
	int n = xsk_own6_read(now, RAMPART_XDP_MAX_OWN6, &left_out);

	if (n < 0) {
		fprintf(stderr, "rampartd: cannot read the kernel's IPv6 addresses: %s\n",
			strerror(errno));
		return 0;
	}
	if (left_out && left_out != own6_left_out)
		fprintf(stderr, "rampartd: the kernel has %u IPv6 addresses more than the %d the "
				"XDP program follows: unicast neighbour discovery to those goes to "
				"the rules\n", left_out, RAMPART_XDP_MAX_OWN6);
	own6_left_out = left_out;
	if ((uint32_t)n == own6_count && !memcmp(now, own6, (size_t)n * 16))
		return 0;
	memcpy(own6, now, (size_t)n * 16);
	own6_count = (uint32_t)n;
	return 1;
}

/* Router mode, each NEIGH_REFRESH_MS: an address added to or removed from
 * the kernel reaches every port's XDP program. */
static void follow_own6(const struct rampartd_opts *o)
{
	char err[256];

	if (!read_own6())
		return;
	if (o->verbose)
		fprintf(stderr, "rampartd: the kernel has %u IPv6 address(es) of its own: unicast "
				"NS and NA to them go to it\n", own6_count);
	for (uint32_t i = 0; i < o->nifs; i++)
		if (xsk_prog_set_own6(&xports[i].prog, (const uint8_t (*)[16])own6, own6_count,
				      err, sizeof(err)))
			fprintf(stderr, "rampartd: %s: %s\n", o->ifnames[i], err);
}

/* Router mode on kernel ports: their addresses, followed (port_addrs.h). */
static struct port_addr_watch addr_watch;
static int addr_watching;

/* Router mode, each tick: ask the kernel to resolve the next hops the
 * workers found no MAC for, and read its neighbours (and the ports' MTUs
 * and addresses, port_addrs_tick) every NEIGH_REFRESH_MS, or every tick for NEIGH_WAIT_MS after
 * asking (so an answer reaches the workers within a tick of the
 * kernel's). */
static void neigh_tick(const struct rampartd_opts *o, struct nl_neigh_sync *nl,
		       uint64_t *last_refresh)
{
	uint64_t now = monotonic_ms();
	char err[256];

	nl_neigh_ask(nl, now);
	if (now - *last_refresh < NEIGH_REFRESH_MS &&
	    !(nl->last_ask_ms && now - nl->last_ask_ms < NEIGH_WAIT_MS))
		return;
	*last_refresh = now;
	if (nl_neigh_refresh(nl, err, sizeof(err)) < 0)
		fprintf(stderr, "rampartd: neighbours: %s\n", err);
	nl_mtu_refresh(nl);
	if (addr_watching)
		port_addrs_tick(&addr_watch, &reloader);
	follow_own6(o);
}

/* --state-interval: the flows to the state file while the workers run
 * (the file names rules by the policy the reloader has in force). */
static void checkpoint(const struct rampartd_opts *o, const struct counters_src *src)
{
	flowstate_checkpoint(o, src->workers, pipes, src->nworkers, &reloader, NULL);
}

/* Signals are blocked in every thread and taken here with sigtimedwait:
 * nothing runs in signal context, so printing is safe. A router wakes
 * every NEIGH_TICK_MS for its next hops (neigh_tick with the kernel's,
 * neigh_own, when given, for the ones the backend learns itself), and with
 * --state-interval every so many seconds for a checkpoint. Returns the
 * signal that stops rampartd: SIGINT, SIGTERM, or SIGUSR2 (a stop for a
 * restart: the XDP programs stay attached). */
static int wait_signals(const struct rampartd_opts *o, const sigset_t *set,
			const struct counters_src *src, struct nl_neigh_sync *nl,
			void (*neigh_own)(void))
{
	uint64_t last_refresh = monotonic_ms(), every = (uint64_t)o->state_interval * 1000u;
	uint64_t next_save = every ? monotonic_ms() + every : UINT64_MAX;
	uint64_t next_kept = monotonic_ms() + KEPT_TICK_MS, redirects_asked = 0;

	for (;;) {
		uint64_t now = monotonic_ms(), wait_ms = nl || neigh_own ? NEIGH_TICK_MS : UINT64_MAX;
		struct timespec tick;
		int sig;

		if (now >= next_save) {
			checkpoint(o, src);
			next_save = monotonic_ms() + every;
			continue;
		}
		if (now >= next_kept) {
			/* DNAT rules kept over a reload, once no flow needs them */
			if (reload_release_kept(&reloader))
				fprintf(stderr, "rampartd: the DNAT rules kept since the last change of "
						"them released: no flow from before needs them\n");
			/* a restore's redirects, once the flows they lead to end */
			if (reloader.workers && workers_release_redirects(reloader.workers,
									  reloader.nworkers,
									  &redirects_asked))
				fprintf(stderr, "rampartd: the redirects of the flows restored from "
						"the state file dropped: none of those flows is left\n");
			next_kept = monotonic_ms() + KEPT_TICK_MS;
			continue;
		}
		if (next_save - now < wait_ms)
			wait_ms = next_save - now;
		if (next_kept - now < wait_ms)
			wait_ms = next_kept - now;
		tick.tv_sec = (time_t)(wait_ms / 1000u);
		tick.tv_nsec = (long)(wait_ms % 1000u) * 1000000L;
		sig = wait_ms == UINT64_MAX ? sigwaitinfo(set, NULL) : sigtimedwait(set, NULL, &tick);
		if (sig < 0) {
			/* timeout (or EINTR): the neighbours' tick, or a checkpoint's */
			if (nl)
				neigh_tick(o, nl, &last_refresh);
			if (neigh_own)
				neigh_own();
			continue;
		}
		if (sig == SIGUSR1) {
			reload_lock(&reloader);
			print_all(src);
			reload_unlock(&reloader);
		} else if (sig == SIGHUP) {
			sighup_reload();
		} else {
			return sig;
		}
	}
}

/* rampartctl capture: a ring per worker, idle until armed. */
static int make_capture(uint32_t nworkers)
{
	for (uint32_t k = 0; k < nworkers; k++) {
		if (pktcap_ring_init(&caprings[k], 256) < 0) {
			fprintf(stderr, "rampartd: out of memory for the capture rings\n");
			return -1;
		}
		pipe_set_capture(pipes[k], &caprings[k]);
		workers[k].cap = &caprings[k];
	}
	return 0;
}

static void free_capture(uint32_t nworkers)
{
	for (uint32_t k = 0; k < nworkers; k++)
		pktcap_ring_free(&caprings[k]);
}

/* --log: a ring per worker's pipeline and the thread that writes them
 * (opened before privileges are dropped). 0, or -1 after saying why. */
static int start_log(const struct rampartd_opts *o, uint32_t nworkers)
{
	char err[256];

	if (!o->log)
		return 0;
	if (logger_open(&pktlogger, o->log, nworkers, o->ifnames, o->nifs, err, sizeof(err))) {
		fprintf(stderr, "rampartd: %s\n", err);
		return -1;
	}
	for (uint32_t k = 0; k < nworkers; k++)
		pipe_set_log(pipes[k], &pktlogger.rings[k], o->log_rate);
	return 0;
}

/* Its thread, once privileges are dropped (threads inherit them). */
static int run_log(const struct rampartd_opts *o)
{
	if (!o->log)
		return 0;
	errno = logger_start(&pktlogger);
	if (errno)
		fprintf(stderr, "rampartd: cannot start the log thread: %s\n", strerror(errno));
	return errno ? -1 : 0;
}

/* After the workers stopped: the last records out, the losses said. */
static void stop_log(const struct rampartd_opts *o)
{
	uint64_t full, limited;

	if (!o->log || !pktlogger.rings)
		return;
	logger_losses(&pktlogger, &full, &limited);
	logger_close(&pktlogger);
	if (o->verbose)
		fprintf(stderr, "rampartd: packet log: %llu records written, %llu over the rate, %llu "
				"lost (ring full)\n", (unsigned long long)pktlogger.written,
			(unsigned long long)limited, (unsigned long long)full);
}

/* Set-up done (programs attached, sockets open): keep only what the
 * rest of the run needs, before any other thread exists so that all
 * inherit it; workers also get their system call filter. */
static void sandbox(const struct rampartd_opts *o, uint32_t nworkers, int dispatcher)
{
	uint64_t keep = priv_needed_caps(dispatcher);
	char err[200];

	if (o->no_sandbox)
		return;
	if (priv_drop(keep, err, sizeof(err)) < 0)
		fprintf(stderr, "rampartd: running with all capabilities: %s\n", err);
	else if (o->verbose)
		fprintf(stderr, "rampartd: capabilities kept: %#llx\n", (unsigned long long)keep);
	for (uint32_t k = 0; k < nworkers; k++)
		workers[k].sandbox = 1;
}

/* The end every backend shares once its ports are closed: the final
 * counters after a clean run, then the pipelines, capture rings and the
 * reloader's tables, in that order (pipes point into its view). */
static int finish(int rc, const struct counters_src *src, uint32_t nq)
{
	if (!rc)
		print_all(src);
	for (uint32_t k = 0; k < nq; k++)
		pipe_destroy(pipes[k]);
	if (handoff.n)
		handoff_free(&handoff);
	flowstate_free();
	free_capture(nq);
	if (src->reload)
		reload_free(&reloader);
	return rc;
}

/* Ethernet header and two VLAN tags: what a frame holds besides its
 * IP packet, at most. */
#define XSK_L2_MAX 22u

_Static_assert(XSK_JOINED_ROOM == 9728u, "xsk_mtu_limits' message says 9,728");

/* The largest MTU port i's AF_XDP sockets carry. */
static uint32_t xsk_mtu_max(uint32_t i)
{
	return backend_xsk_frame_max(&bx, i) - XSK_L2_MAX;
}

/* A port whose sockets cannot take chains (no multi-buffer: a kernel
 * before 6.6, or a zero-copy driver without it) carries frames of one
 * UMEM frame at most: the pipeline is told an MTU that fits, so what it
 * makes itself (fragments, ICMP errors, frames other workers hand over)
 * fits too, and longer packets are answered with fragmentation needed
 * or fragmented. The kernel drops longer frames before they reach us. */
static void xsk_mtu_limits(const struct rampartd_opts *o, struct pipe_config *cfg)
{
	for (uint32_t i = 0; i < o->nifs; i++) {
		uint32_t max = xsk_mtu_max(i);

		if (cfg->port[i].mtu > max) {
			fprintf(stderr, "rampartd: %s: MTU %u is more than its AF_XDP sockets carry "
					"(%s); frames up to an MTU of %u: lower the interface's MTU to "
					"that (the kernel drops longer frames before rampart sees "
					"them: TCP between hosts at the higher MTU stalls)\n",
				o->ifnames[i], cfg->port[i].mtu,
				max + XSK_L2_MAX == XSK_FRAME_SIZE ? "without multi-buffer"
								   : "a joined frame is at most 9,728 bytes",
				max);
			cfg->port[i].mtu = max;
		}
	}
}

/* --backend xsk: AF_XDP on every interface, one worker thread per queue. */

static int run_xsk(const struct rampartd_opts *o, const struct rfw_view *view)
{
	struct worker *wp[XSK_MAX_QUEUES];
	struct xsk_port *ports[PIPE_MAX_PORTS];
	struct counters_src src = {
		.view = view, .workers = wp, .ifnames = o->ifnames, .nports = o->nifs,
		.cpus = worker_cpu,
	};
	struct nl_neigh_sync nl, *nlp = NULL;
	struct control *ctl;
	struct control_src csrc;
	struct pipe_config cfg;
	int ifindex[PIPE_MAX_PORTS], stop_sig = 0;
	uint32_t opened = 0, nq = 0, started = 0;
	sigset_t set;
	char err[256];
	int rc = EXIT_SETUP;

	ctl = open_control(o, &set);
	if (!ctl)
		return EXIT_SETUP;

	xsk_prog_set_verbose(o->verbose);
	if (pick_queues(o, &nq))
		goto out;
	pick_cpus(o, nq);
	/* Worker k's UMEM, frames enough for a socket on every interface;
	 * the sockets bind to it as the ports open. */
	for (uint32_t k = 0; !o->umem_per_interface && k < nq; k++)
		if (xsk_pool_create(&umems[k], o->nifs * XSK_NUM_FRAMES, err, sizeof(err))) {
			fprintf(stderr, "rampartd: worker %u: %s\n", k, err);
			goto out;
		}
	if (o->mode == PIPE_ROUTER)
		read_own6();	/* in the programs from their first frame on */
	for (; opened < o->nifs; opened++) {
		if (open_port(&xports[opened], o->ifnames[opened], o, view, nq))
			goto out;
		ports[opened] = &xports[opened];
		ifindex[opened] = xports[opened].ifindex;
	}
	if (o->verbose)
		report_umems(o, nq);
	if (port_config(o, &cfg, 1))
		goto out;
	cfg.hold_unresolved = 1;	/* the main thread has the kernel resolve them */
	if (backend_xsk_init(&bx, ports, o->nifs, nq)) {
		fprintf(stderr, "rampartd: frames joined from chains: %s\n", strerror(errno));
		goto out;
	}
	xsk_mtu_limits(o, &cfg);
	for (uint32_t k = 0; k < nq; k++)
		wp[k] = &workers[k];
	rss_read = rss_read_kernel;
	if (make_pipes(o, view, nq, &cfg, &bx.be))
		goto out;
	if (start_log(o, nq) || make_capture(nq))
		goto out;
	src.nworkers = nq;
	if (start_reload(o, view, wp, nq, &src, reload_host_section, (void *)o))
		goto out;
	if (o->mode == PIPE_ROUTER) {
		if (nl_neigh_open(&nl, ifindex, o->nifs, wp, nq, err, sizeof(err)) ||
		    pin_static_neighbours(o, &nl, err, sizeof(err)) ||
		    nl_neigh_refresh(&nl, err, sizeof(err)) < 0) {
			fprintf(stderr, "rampartd: neighbours: %s\n", err);
			goto out;
		}
		uint8_t given[PIPE_MAX_PORTS] = {0};

		for (uint32_t i = 0; i < o->nport_addr; i++) {	/* mtu=: not the kernel's */
			if (o->port_addr[i].mtu)
				nl.mtu_fixed[options_port(o, o->port_addr[i].ifname)] = 1;
			given[options_port(o, o->port_addr[i].ifname)] = 1;
		}
		for (uint32_t i = 0; i < o->nifs; i++)
			nl.mtu_max[i] = xsk_mtu_max(i);
		nlp = &nl;
		/* masquerade and replies follow the kernel's addresses */
		port_addrs_init(&addr_watch, &cfg, (const char *const *)o->ifnames, given, wp, nq);
		reloader.prepare = port_addrs_prepare;
		reloader.prepare_ctx = &addr_watch;
		addr_watching = 1;
	}
	{
		int dispatcher = 0;

		for (uint32_t i = 0; i < o->nifs; i++)
			dispatcher |= xports[i].prog.multiprog;
		sandbox(o, nq, dispatcher);
	}
	if (run_log(o))
		goto out;
	for (; started < nq; started++) {
		errno = worker_start(&workers[started]);
		if (errno) {
			fprintf(stderr, "rampartd: cannot start worker %u: %s\n", started,
				strerror(errno));
			goto out;
		}
		if (pin_worker(started)) {
			started++;	/* running: stopped below */
			goto out;
		}
	}
	control_src_xsk(&csrc, o, view, wp, nq, xports, cfg.max_flows);
	for (uint32_t i = 0; i < o->nifs; i++)
		csrc.iface[i].frame_max = backend_xsk_frame_max(&bx, i);
	csrc.be = &bx.be;
	if (addr_watching)
		csrc.addrs = &addr_watch;
	if (go_live(ctl, &csrc, o, view))
		goto out;
	if (o->verbose)
		for (uint32_t k = 0; k < nq; k++)
			fprintf(stderr, "rampartd: worker %u: queue %u, CPU %d\n", k, k, worker_cpu[k]);

	stop_sig = wait_signals(o, &set, &src, nlp, NULL);
	rc = 0;
out:
	control_stop(ctl);
	while (started)
		worker_stop(&workers[--started]);
	stop_log(o);
	control_free(ctl);	/* a timed-out request's buffers: workers gone now */
	if (!rc && o->verbose) {
		report_frames(o->nifs, nq);
		if (nlp)
			fprintf(stderr, "rampartd: neighbours: %llu updates posted, %llu forgotten, "
					"%llu waited for ring room, %llu resolutions asked (%llu "
					"again after the kernel dropped them; %llu refused)\n",
				(unsigned long long)nl.posted, (unsigned long long)nl.forgotten,
				(unsigned long long)nl.ring_full,
				(unsigned long long)(nl.asks + nl.sweep_asks),
				(unsigned long long)nl.sweep_asks, (unsigned long long)nl.ask_errors);
	}
	if (nlp)
		nl_neigh_close(nlp);
	if (!rc)
		flowstate_save(o, pipes, nq);
	/* SIGUSR2, a stop for a restart: the programs stay, so --fail
	 * covers the time until the next rampartd replaces them. */
	if (!rc && stop_sig == SIGUSR2) {
		fprintf(stderr, "rampartd: SIGUSR2: XDP programs left attached for the next "
				"rampartd (--fail %s meanwhile)\n", o->fail_closed ? "closed" : "open");
		for (; opened; opened--)
			xsk_port_leave(&xports[opened - 1]);
	}
	while (opened--)
		if (rc)		/* a start that failed: the ports as they were */
			xsk_port_undo(&xports[opened]);
		else
			xsk_port_close(&xports[opened]);
	for (uint32_t k = 0; k < nq; k++)
		xsk_pool_destroy(&umems[k]);	/* after every socket on it */
	backend_xsk_fini(&bx);
	rc = finish(rc, &src, nq);
	return !rc && stop_sig == SIGUSR2 ? EXIT_RESTART : rc;
}

#ifdef RAMPART_HAVE_DPDK
static struct dp_ports dports;

static int rss_read_dpdk(const struct rampartd_opts *o, uint32_t port, struct rss_port_conf *c,
			 char *err, size_t errlen)
{
	(void)o;
	return dp_port_rss(&dports, port, c, err, errlen);
}
static struct backend_dpdk bd;

/* Router mode, every NEIGH_TICK_MS: what the queues' ARP/ND learnt
 * goes into the main thread's cache, which says what every worker's
 * table must change and when a neighbour must be probed (nr_tick,
 * daemon/neigh_ring.h); probes go to the workers in turn, each sends
 * from its own queue. */
static struct neigh_cache dp_neigh;
/* its summary for the control thread (rampartctl status), as of the
 * last tick */
static pthread_mutex_t dp_neigh_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nc_summary dp_neigh_summary;

static void dp_neighbours(struct nc_summary *out)
{
	pthread_mutex_lock(&dp_neigh_lock);
	*out = dp_neigh_summary;
	pthread_mutex_unlock(&dp_neigh_lock);
}

static void dp_neigh_tick(void)
{
	static struct nr_ring *rings[DP_MAX_QUEUES];
	static struct nr_main m = {.cache = &dp_neigh, .rings = rings, .workers = workers};

	if (!m.nq) {
		m.nq = dports.nqueues;
		for (uint32_t q = 0; q < m.nq; q++)
			rings[q] = &bd.q[q].learnt;
	}
	nr_tick(&m, monotonic_ms());
	pthread_mutex_lock(&dp_neigh_lock);
	nc_summarize(&dp_neigh, &dp_neigh_summary);
	pthread_mutex_unlock(&dp_neigh_lock);
}

/* --backend dpdk: EAL and the ports (dpdk/), one worker per RX queue,
 * each on an EAL worker lcore; this (main) lcore waits for signals. */
static int run_dpdk(const struct rampartd_opts *o, const struct rfw_view *view)
{
	struct worker *wp[DP_MAX_QUEUES];
	struct counters_src src = {
		.view = view, .workers = wp, .ifnames = o->ifnames, .nports = o->nifs,
		.cpus = worker_cpu,
	};
	struct control_src csrc;
	struct pipe_config cfg;
	struct control *ctl;
	uint32_t nq = 0, started = 0;
	sigset_t set;
	int rc = EXIT_SETUP, stop_sig = 0;

	ctl = open_control(o, &set);	/* before EAL makes its lcore threads */
	if (!ctl)
		return EXIT_SETUP;
	if (dp_daemon_open(&dports, o, view) || port_config(o, &cfg, 0))
		goto out;
	dp_daemon_macs(&dports, o, &cfg);
	for (uint32_t i = 0; i < dports.nports; i++)	/* the NIC checks IPv4 headers */
		cfg.rx_csum_flags |= dports.rx_ipv4_csum[i];
	backend_dpdk_init(&bd, &dports);
	if (o->mode == PIPE_ROUTER && !o->dpdk_static_neigh) {
		/* no kernel behind the queues: rampartd answers ARP and ND for
		 * the ports and asks for the next hops (docs/dpdk.md); packets
		 * wait for theirs as with the xsk backend */
		backend_dpdk_own_neighbours(&bd, &cfg);
		cfg.hold_unresolved = 1;
		nc_init(&dp_neigh, &(struct nc_config){
			.reachable_ms = (o->dpdk_reachable ? o->dpdk_reachable : 30) * 1000u,
			.probe_ms = 1000, .probes = 3});
		for (uint32_t i = 0; i < o->nneigh; i++)	/* --neighbor: permanent */
			(void)nc_permanent(&dp_neigh, (uint8_t)options_port(o, o->neigh[i].ifname),
					   o->neigh[i].family, o->neigh[i].addr, o->neigh[i].mac);
	}
	nq = dports.nqueues;
	for (uint32_t k = 0; k < nq; k++) {
		wp[k] = &workers[k];
		worker_cpu[k] = dp_worker_cpu(&dports, k);
	}
	rss_read = rss_read_dpdk;
	if (make_pipes(o, view, nq, &cfg, &bd.be))
		goto out;
	if (start_log(o, nq) || make_capture(nq))
		goto out;
	src.nworkers = nq;
	if (start_reload(o, view, wp, nq, &src, dp_daemon_reload_check,
			 dp_daemon_reload_ctx(o, view)))
		goto out;
	/* Workers drop their own capabilities and take the filter on their
	 * lcores (worker_enter); the main thread keeps what the PMDs need at
	 * stop (docs/security.md). */
	for (uint32_t q = 0; q < nq && !o->no_sandbox; q++)
		workers[q].sandbox = 1;
	if (run_log(o))
		goto out;
	for (; started < nq; started++)
		if (dp_daemon_launch(&dports, &workers[started]))
			goto out;
	control_src_dpdk(&csrc, o, view, wp, &dports, cfg.max_flows);
	csrc.be = &bd.be;
	if (bd.own_neigh)
		csrc.neighbours = dp_neighbours;
	if (go_live(ctl, &csrc, o, view))
		goto out;
	if (o->verbose)
		dp_daemon_report(&dports, o);
	/* SIGUSR2: no program to leave */
	stop_sig = wait_signals(o, &set, &src, NULL, bd.own_neigh ? dp_neigh_tick : NULL);
	rc = 0;
out:
	control_stop(ctl);
	while (started)
		dp_daemon_stop(&dports, &workers[--started]);
	stop_log(o);
	control_free(ctl);
	if (!rc && o->verbose)
		dp_daemon_final(&dports, o, &bd);
	if (!rc && o->verbose && bd.own_neigh)
		fprintf(stderr, "rampartd: DPDK: neighbours: %llu learnt, %llu moved, %llu probed, "
				"%llu forgotten, %llu refused (cache full), %llu answers not asked for\n",
			(unsigned long long)dp_neigh.st.learnt, (unsigned long long)dp_neigh.st.moved,
			(unsigned long long)dp_neigh.st.probes,
			(unsigned long long)dp_neigh.st.forgotten, (unsigned long long)dp_neigh.st.full,
			(unsigned long long)dp_neigh.st.unasked);
	if (!rc)
		flowstate_save(o, pipes, nq);
	dp_close(&dports);
	rc = finish(rc, &src, nq);
	return !rc && stop_sig == SIGUSR2 ? EXIT_RESTART : rc;
}
#endif

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
#ifdef RAMPART_HAVE_DPDK
	else if (o.backend == OPT_BACKEND_DPDK)
		rc = run_dpdk(&o, &view);
#endif
	else
		rc = run_xsk(&o, &view);
	rfw_close(&view);
	return rc;
}
