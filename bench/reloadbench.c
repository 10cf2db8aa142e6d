/* reloadbench: how long a hot reload takes, through rampartd's own reload
 * (daemon/reload.c) and worker loop (daemon/worker.c), with workers busy
 * on an in-memory source of UDP frames (no NIC: the benchmark is of the
 * swap, not of I/O). A benchmark, not a test.
 *
 *   reloadbench [--workers N] [--reloads N] [--flows keep|recheck] A.rfw B.rfw
 *
 * Alternates A and B `--reloads` times (A first in force) and prints, in
 * microseconds from the request, min / median / p99 / max of:
 *   map      artifact read and verified
 *   build    every worker's view built (rule map, counters, pools)
 *   publish  the pointer published; "publish-map" = publish - map, the
 *            part the < 1 ms target is about
 *   release  every worker quiescent (adopted and swept) and the old
 *            tables freed
 * Workers are pinned to CPUs 1.. (mod the CPU count), the reloader to 0. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "artifact.h"
#include "backend.h"
#include "pipeline.h"
#include "reload.h"
#include "worker.h"
#include "../tests/unit/frames.h"

#define MAX_WORKERS 8
#define NFLOWS 4096		/* distinct UDP flows the source cycles through */

/* The in-memory source: every rx_burst hands out a full burst of frames
 * copied from templates (the pipeline rewrites frames in place), tx and
 * free take them back. */
struct mem_backend {
	struct backend be;
	struct frame tmpl[NFLOWS];
	struct {
		struct frame buf[PIPE_BURST];
		uint32_t next;
		uint64_t clock;
	} q[MAX_WORKERS];
};

static uint32_t mem_rx(struct backend *b, uint32_t queue, struct pipe_pkt *pkts, uint64_t *handle,
		       uint32_t n, uint64_t *now_ns)
{
	struct mem_backend *m = (struct mem_backend *)b;

	for (uint32_t i = 0; i < n; i++) {
		struct frame *f = &m->q[queue].buf[i];

		*f = m->tmpl[m->q[queue].next++ % NFLOWS];
		pkts[i] = (struct pipe_pkt){.data = f->b, .len = f->len, .room = sizeof(f->b),
					    .in_port = 0};
		handle[i] = i;
	}
	m->q[queue].clock += 1000;	/* 1 us a burst */
	*now_ns = m->q[queue].clock;
	return n;
}

static uint32_t mem_tx(struct backend *b, uint32_t queue, uint32_t port,
		       struct pipe_pkt **pkts, uint64_t *handle, uint32_t n,
		       uint32_t *copied)
{
	(void)b, (void)queue, (void)port, (void)pkts, (void)handle;
	*copied = 0;
	return n;
}

static void mem_free(struct backend *b, uint32_t queue, uint32_t port, const uint64_t *handle,
		     uint32_t n)
{
	(void)b, (void)queue, (void)port, (void)handle, (void)n;
}

static uint32_t mem_service(struct backend *b, uint32_t queue)
{
	(void)b, (void)queue;
	return 0;
}

static int mem_idle(struct backend *b, uint32_t queue, int timeout_ms, int wake_fd)
{
	(void)b, (void)queue, (void)timeout_ms, (void)wake_fd;
	return 0;
}

static const struct backend_ops mem_ops = {
	mem_rx, mem_tx, mem_free, mem_service, mem_idle,
	NULL,	/* rx_loss: nothing below the workers to lose frames */
	NULL,	/* solicit: no router neighbours here */
	NULL,	/* probe: nor their probes */
};

static struct mem_backend mem;
static struct worker workers[MAX_WORKERS];
static struct reloader reloader;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *v, uint32_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	printf("  %-12s %8llu %8llu %8llu %8llu\n", what, (unsigned long long)v[0],
	       (unsigned long long)v[n / 2], (unsigned long long)v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1],
	       (unsigned long long)v[n - 1]);
}

static void pin(pthread_t t, int cpu)
{
	cpu_set_t set;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	CPU_SET(cpu % (ncpu > 0 ? ncpu : 1), &set);
	pthread_setaffinity_np(t, sizeof(set), &set);
}

static void make_frames(void)
{
	for (uint32_t i = 0; i < NFLOWS; i++) {
		struct flow_spec s = {.family = 4, .proto = 17, .sport = (uint16_t)(1024 + i),
				      .dport = (uint16_t)(1024 + (i * 7919) % 60000), .payload = 18,
				      .src = {10, (uint8_t)(i >> 8), (uint8_t)i, 1},
				      .dst = {10, 200, (uint8_t)(i >> 4), (uint8_t)(i * 13)}};

		frame_build(&mem.tmpl[i], &s);
	}
}

int main(int argc, char **argv)
{
	uint32_t nworkers = 1, nreloads = 50;
	enum pipe_flow_policy flows = PIPE_FLOWS_KEEP;
	const char *file[2] = {NULL, NULL};
	struct rfw_view first;
	struct pipe_worker *pipes[MAX_WORKERS];
	struct worker *wp[MAX_WORKERS];
	const char *ifnames[2] = {"bench0", "bench1"};
	uint64_t *mapv, *buildv, *pubv, *pubmapv, *relv;
	char err[640];
	uint32_t nf = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--workers") && i + 1 < argc)
			nworkers = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reloads") && i + 1 < argc)
			nreloads = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--flows") && i + 1 < argc)
			flows = !strcmp(argv[++i], "recheck") ? PIPE_FLOWS_RECHECK : PIPE_FLOWS_KEEP;
		else if (argv[i][0] != '-' && nf < 2)
			file[nf++] = argv[i];
		else {
			fprintf(stderr, "usage: reloadbench [--workers N] [--reloads N] "
					"[--flows keep|recheck] A.rfw B.rfw\n");
			return 1;
		}
	}
	if (nf != 2 || !nworkers || nworkers > MAX_WORKERS || !nreloads) {
		fprintf(stderr, "usage: reloadbench [--workers 1..%d] [--reloads N] A.rfw B.rfw\n",
			MAX_WORKERS);
		return 1;
	}
	if (rfw_open(&first, file[0], err, sizeof(err))) {
		fprintf(stderr, "reloadbench: %s\n", err);
		return 1;
	}
	make_frames();
	mem.be = (struct backend){.ops = &mem_ops, .nports = 2, .nqueues = nworkers};
	for (uint32_t k = 0; k < nworkers; k++) {
		struct pipe_config c = {.mode = PIPE_BRIDGE, .nports = 2, .worker_id = (uint16_t)k,
					.worker_count = (uint16_t)nworkers, .seed = 1};

		strcpy(c.port[0].name, ifnames[0]);
		strcpy(c.port[1].name, ifnames[1]);
		pipes[k] = pipe_create(&c, &first);
		if (!pipes[k]) {
			fprintf(stderr, "reloadbench: pipe_create: %s\n", strerror(errno));
			return 1;
		}
		worker_init(&workers[k], &mem.be, k, pipes[k]);
		wp[k] = &workers[k];
	}
	if (reload_init(&reloader, &first, file[0], wp, nworkers, ifnames, 2, flows)) {
		fprintf(stderr, "reloadbench: out of memory\n");
		return 1;
	}
	for (uint32_t k = 0; k < nworkers; k++) {
		if (worker_start(&workers[k])) {
			fprintf(stderr, "reloadbench: cannot start worker %u\n", k);
			return 1;
		}
		pin(workers[k].thread, (int)k + 1);
	}
	pin(pthread_self(), 0);
	printf("reloadbench: %s (%u rules) <-> %s, %u worker(s), %u reloads, flows %s\n",
	       file[0], first.policy->rule_count, file[1], nworkers, nreloads,
	       reload_flows_name(flows));
	mapv = calloc(nreloads, sizeof(*mapv));
	buildv = calloc(nreloads, sizeof(*buildv));
	pubv = calloc(nreloads, sizeof(*pubv));
	pubmapv = calloc(nreloads, sizeof(*pubmapv));
	relv = calloc(nreloads, sizeof(*relv));
	if (!mapv || !buildv || !pubv || !pubmapv || !relv)
		return 1;
	for (uint32_t i = 0; i < nreloads; i++) {
		struct reload_timing t;
		const struct timespec gap = {0, 2000000};	/* 2 ms of traffic between */

		nanosleep(&gap, NULL);
		reload_lock(&reloader);
		if (reload_run(&reloader, file[(i + 1) % 2], flows, &t, err, sizeof(err))) {
			fprintf(stderr, "reloadbench: reload %u: %s\n", i, err);
			return 1;
		}
		reload_unlock(&reloader);
		mapv[i] = t.mapped;
		buildv[i] = t.built;
		pubv[i] = t.published;
		pubmapv[i] = t.published - t.mapped;
		relv[i] = t.released;
	}
	for (uint32_t k = 0; k < nworkers; k++)
		worker_stop(&workers[k]);
	printf("  us from request    min   median      p99      max\n");
	report("map", mapv, nreloads);
	report("build", buildv, nreloads);
	report("publish", pubv, nreloads);
	report("publish-map", pubmapv, nreloads);
	report("release", relv, nreloads);
	{
		uint64_t pkts = 0;

		for (uint32_t k = 0; k < nworkers; k++)
			pkts += pipe_stats(pipes[k])->stage[PIPE_ST_PARSE].packets;
		printf("  workers processed %llu packets meanwhile\n", (unsigned long long)pkts);
	}
	for (uint32_t k = 0; k < nworkers; k++)
		pipe_destroy(pipes[k]);
	reload_free(&reloader);
	rfw_close(&first);
	return 0;
}
