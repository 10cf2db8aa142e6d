/* fwbench: the whole worker pipeline on one pinned core, fed from memory
 * (no I/O), with a 10,000-rule ACL and 1,000,000 tracked flows loaded.
 * Prints cycles/packet and Mpps per scenario and cycles/packet per stage
 * (VPP `show runtime` style). A benchmark, not a test.
 *   fwbench [--classbench FILE] [--flows N] [--packets N] [--cpu N] [--only NAME]
 *           [--repeat N] [--active N] [--no-flow-cache | --express-only] [--shuffle]
 *           [--nic-csum] [--state PATH] [--port-forwards N]
 * --only runs one scenario's timed part (the flows are still loaded), so
 * perf sees mostly it; --repeat runs the scenarios that leave the tables
 * as they found them (cached-*, drop-flood) N times, one line each,
 * and ends with each scenario's minimum, median and maximum (new-snat
 * and worst-case run once a process: run it again for more);
 * --active N sends the cached scenarios' packets (about --packets of
 * them) from their first N flows only, the rest staying loaded: the
 * cost when the active flows fit in cache, next to the default where
 * every packet is another of the 1,000,000 flows; --no-flow-cache
 * sends every packet through the full pipeline, neither the flow cache
 * nor the express path's conntrack lookup (their cost and gain, side
 * by side); --express-only has no flow cache but keeps the express
 * path's conntrack lookup (what a worker does while its cache rests, as
 * it does at a million active flows): with --active, that path on flows
 * that would fit the cache; --shuffle sends the cached scenarios' flows in a
 * random order instead of the order they were made (their conntrack
 * entries in address order): a check that the order does not flatter
 * (measured: it does not, docs/PERFORMANCE.md); --nic-csum marks every
 * frame as one whose IPv4 header checksum the NIC checked (DPDK's offload
 * flag, pipeline.h PIPE_RX_IPV4_CSUM_GOOD), so the parser does not sum
 * it: what a NIC with that offload saves; --state PATH times
 * writing the loaded flows to a state file and reading them back into a
 * new worker (rampartd --state-file's restart), PATH removed after, and
 * the workers' side of a checkpoint (--state-interval) a slice at a time;
 * --port-forwards N puts N DNAT rules (TCP port forwards from outside to
 * an address no packet of the benchmark goes to) before the SNAT rule,
 * so every new packet is ruled out by each of them: what a policy of
 * many forwards costs a new flow and a flood.
 * Instruction counts per scenario: every timed part sits between two
 * calls of bench_mark, so
 *   valgrind --tool=callgrind --toggle-collect=pipe_process \
 *       --dump-before=bench_mark fwbench --flows 100000 --packets 65536
 * writes one profile part per load or scenario (parts 2, 4, 6, ...).
 * Scenarios (64-byte frames, bursts of 64, router mode):
 *   cached-allow   packets of established flows without NAT
 *   cached-snat    packets of established flows through SNAT
 *   cached-allow-hot, cached-snat-hot
 *                  the same from 1,000 of the flows over and over (their
 *                  flows in the flow cache; as --active 1000, which
 *                  leaves these two out)
 *   new-snat       first packets of new flows: rules, SNAT, flow creation
 *   new-udp        the same for UDP flows (DNS-like; their first packets
 *                  take the express path to conntrack): only with --only
 *                  new-udp, as its flows need the table room new-snat's do
 *   drop-flood     TCP SYNs from outside to a closed port (default drop)
 *   ack-flood      bare TCP ACKs of no flow from outside (conntrack's
 *                  invalid, dropped): only with --only ack-flood
 *   worst-case     new flows through 500 never-matching entries placed
 *                  after the ClassBench rules and before the accepting
 *                  rule, routed by 10,000 /32 routes, the million flows
 *                  loaded as for the others (a policy of its own)
 * Two other readings of issue 4's worst case (its target, 100, is under
 * new-flow SNAT's 150, so it may not mean new flows), over the same
 * tables:
 *   worst-cached, worst-cached-hot
 *                  cached SNAT packets (as cached-snat, cached-snat-hot)
 *                  whose routes are among the 10,000 /32s; a known flow
 *                  meets no rule, so the 500 entries are not walked
 *   worst-stateless
 *                  the same policy stateless (no conntrack, no NAT):
 *                  every packet walks the rules, the 500 entries
 *                  included, to the accepting one, and is routed by a /32 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "coreclock.h"
#include "ct.h"
#include "flowcache.h"
#include "pipe_state.h"
#include "pipeline.h"
#include "rulec.h"
#include "../tests/unit/frames.h"

#define BURST PIPE_BURST
#define FRAME_LEN 64
#define HOT_FLOWS 1000	/* cached-*-hot: the active flows */

static const uint8_t gw_mac[6] = {2, 0xbb, 0, 0, 0, 0xfe};

struct opts {
	const char *classbench;
	const char *only;	/* NULL: every scenario */
	uint32_t flows;
	uint32_t packets;
	uint32_t repeat;
	uint32_t active;	/* cached-*: packets of the first N flows only; 0: all */
	int no_flow_cache;	/* pipe_config.no_flow_cache */
	int shuffle;		/* cached-*: the flows in random order */
	int nic_csum;		/* frames come as a NIC that checked their IPv4 header says */
	int cpu;
	const char *state;	/* --state PATH: time writing and reading the flows */
	uint32_t port_forwards;	/* --port-forwards N: DNAT rules no packet meets */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline uint64_t tsc(void)
{
	return __builtin_ia32_rdtsc();
}

/* The ClassBench rules as policy YAML, minus rules that could match the
 * benchmark's own 10.x traffic (short prefixes, 10/8), so the traffic
 * meets all of them and then the rules written for it. */
static int classbench_yaml(FILE *out, const char *path, uint32_t max)
{
	char line[512];
	FILE *f = fopen(path, "r");
	uint32_t n = 0;

	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned s[4], d[4], sl, dl, splo, sphi, dplo, dphi, proto, pmask;

		if (sscanf(line, "@%u.%u.%u.%u/%u %u.%u.%u.%u/%u %u : %u %u : %u %x/%x",
			   &s[0], &s[1], &s[2], &s[3], &sl, &d[0], &d[1], &d[2], &d[3], &dl,
			   &splo, &sphi, &dplo, &dphi, &proto, &pmask) != 16)
			continue;
		if (sl < 8 || dl < 8 || s[0] == 10 || d[0] == 10)
			continue;
		/* host bits cleared by masking to the prefix */
		uint32_t sa = s[0] << 24 | s[1] << 16 | s[2] << 8 | s[3];
		uint32_t da = d[0] << 24 | d[1] << 16 | d[2] << 8 | d[3];

		sa &= sl == 32 ? ~0u : ~(~0u >> sl);
		da &= dl == 32 ? ~0u : ~(~0u >> dl);
		fprintf(out, "  - name: cb%u\n    action: drop\n", n);
		if (pmask == 0xff && (proto == 6 || proto == 17)) {
			fprintf(out, "    proto: %u\n", proto);
			fprintf(out, "    from: {network: %u.%u.%u.%u/%u, port: %u-%u}\n", sa >> 24,
				sa >> 16 & 255, sa >> 8 & 255, sa & 255, sl, splo, sphi);
			fprintf(out, "    to: {network: %u.%u.%u.%u/%u, port: %u-%u}\n", da >> 24,
				da >> 16 & 255, da >> 8 & 255, da & 255, dl, dplo, dphi);
		} else {
			if (pmask == 0xff)
				fprintf(out, "    proto: %u\n", proto);
			fprintf(out, "    from: {network: %u.%u.%u.%u/%u}\n", sa >> 24, sa >> 16 & 255,
				sa >> 8 & 255, sa & 255, sl);
			fprintf(out, "    to: {network: %u.%u.%u.%u/%u}\n", da >> 24, da >> 16 & 255,
				da >> 8 & 255, da & 255, dl);
		}
		n++;
	}
	fclose(f);
	return (int)n;
}

/* The benchmark policy: ClassBench rules (for the worst case followed by
 * 500 never-matching ones), then the rules the traffic hits, SNAT,
 * routes (for the worst case 10,000 /32s more). */
enum policy_kind { POLICY_PLAIN, POLICY_WORST, POLICY_WORST_STATELESS };

static int write_policy(const char *path, const struct opts *o, enum policy_kind kind,
			uint32_t *nrules)
{
	FILE *f = fopen(path, "w");
	int n = 0, worst = kind != POLICY_PLAIN;

	if (!f)
		return -1;
	fprintf(f, "version: 1\nzones: {inside: [lan0], outside: [wan0], dmz: [dmz0]}\n");
	if (kind == POLICY_WORST_STATELESS)
		fprintf(f, "defaults: {action: drop, stateful: false}\nrules:\n");
	else
		fprintf(f, "defaults: {action: drop, conntrack: {max_flows: %u}}\nrules:\n",
			o->flows + o->packets + 1024);
	n = classbench_yaml(f, o->classbench, 10000);
	if (n < 0) {
		fclose(f);
		return -1;
	}
	if (worst) {
		/* like the traffic in everything but the source, which never
		 * appears (192.168/16): each must be ruled out on its source */
		for (int i = 0; i < 500; i++)
			fprintf(f, "  - {name: never%d, proto: tcp, from: {network: 192.168.%d.%d},"
				   " to: {port: 443}, action: drop}\n", i, i / 256, i % 256);
		n += 500;
	}
	fprintf(f, "  - {name: lan-out, from: {zone: inside}, to: {zone: outside}, action: accept}\n"
		   "  - {name: lan-dmz, from: {zone: inside}, to: {zone: dmz}, action: accept}\n");
	if (kind != POLICY_WORST_STATELESS) {	/* NAT needs conntrack */
		fprintf(f, "nat:\n");
		/* port forwards from outside to DMZ servers, on an address
		 * none of the traffic goes to: every new packet is ruled out
		 * by each of them */
		for (uint32_t i = 0; i < o->port_forwards; i++)
			fprintf(f, "  - name: fwd%u\n    match: {from: {zone: outside},"
				   " to: {network: 10.0.1.%u, service: tcp/%u}}\n"
				   "    dnat: {to: 10.50.%u.%u, port: 22}\n",
				i, 100 + i / 40000, 20000 + i % 40000, i / 250 % 250, i % 250 + 1);
		fprintf(f, "  - name: snat\n    match: {from: {network: 10.1.0.0/16},"
			   " to: {zone: outside}}\n"
			   "    snat: {to: [10.0.2.0-10.0.2.63], ports: 1024-65535}\n");
	}
	fprintf(f, "routes:\n  - {prefix: 10.1.0.0/16, interface: lan0}\n"
		   "  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"
		   "  - {prefix: 10.50.0.0/16, via: 10.0.3.254, interface: dmz0}\n");
	if (worst)	/* 10,000 host routes inside the outside /16 */
		for (int i = 0; i < 10000; i++)
			fprintf(f, "  - {prefix: 10.200.%d.%d/32, via: 10.0.1.254, interface: wan0}\n",
				i / 250, i % 250 + 1);
	fclose(f);
	*nrules = (uint32_t)n + 2;
	return 0;
}

struct bench {
	void *art;
	size_t art_len;
	struct rfw_view view;
	struct pipe_worker *w;
	uint8_t *frames;	/* pristine copies */
	uint8_t *work;		/* what the pipeline rewrites */
	struct pipe_pkt *pkts;
	uint32_t n;
	uint8_t rx_flags;	/* each frame's pipe_pkt.rx_flags (--nic-csum) */
};

/* A worker over b's policy: three ports, MTU 1500 as rampartd gives
 * them, the gateways known. */
static struct pipe_worker *bench_pipe(struct bench *b, const struct opts *o)
{
	struct pipe_config c = {.mode = PIPE_ROUTER, .nports = 3, .seed = 42,
				.no_flow_cache = (uint8_t)o->no_flow_cache,
				.rx_csum_flags = (uint8_t)o->nic_csum};
	const char *names[3] = {"lan0", "wan0", "dmz0"};
	struct pipe_worker *w;

	for (int p = 0; p < 3; p++) {
		strcpy(c.port[p].name, names[p]);
		memcpy(c.port[p].mac, (uint8_t[]){2, 0xaa, 0, 0, 0, (uint8_t)(p + 1)}, 6);
		c.port[p].has_v4 = 1;
		memcpy(c.port[p].v4, (uint8_t[]){10, 0, (uint8_t)(p + 1), 1}, 4);
		c.port[p].mtu = 1500;	/* as rampartd gives every port (its MTU check) */
	}
	w = pipe_create(&c, &b->view);
	if (!w) {
		fprintf(stderr, "fwbench: pipe_create: %s\n", strerror(errno));
		return NULL;
	}
	pipe_neigh_set(w, 1, 4, (uint8_t[]){10, 0, 1, 254}, gw_mac);
	pipe_neigh_set(w, 2, 4, (uint8_t[]){10, 0, 3, 254}, gw_mac);
	return w;
}

static int bench_open(struct bench *b, const struct opts *o, enum policy_kind worst)
{
	char path[] = "/tmp/fwbench-policy-XXXXXX";
	int fd = mkstemp(path);
	char err[256];
	uint32_t nrules;
	double t0;
	char *diag_text = NULL;
	size_t diag_len = 0;
	unsigned warnings = 0, failed;
	struct rulec_opts copts = {.warnings = &warnings};
	FILE *diag;

	if (fd < 0)
		return -1;
	close(fd);
	if (write_policy(path, o, worst, &nrules) < 0)
		return -1;
	t0 = now_s();
	/* ClassBench sets carry hundreds of shadowed and redundant rules:
	 * their warnings are counted, and printed only with an error. */
	diag = open_memstream(&diag_text, &diag_len);
	if (!diag)
		return -1;
	failed = rulec_compile_opts(path, diag, &copts, &b->art, &b->art_len);
	fclose(diag);
	if (failed) {
		fprintf(stderr, "%sfwbench: the generated policy %s does not compile\n",
			diag_text, path);
		free(diag_text);
		return -1;
	}
	free(diag_text);
	unlink(path);
	if (rfw_view_init(&b->view, b->art, b->art_len, err, sizeof(err)) < 0) {
		fprintf(stderr, "fwbench: %s\n", err);
		return -1;
	}
	printf("# policy: %u rules (%u ACL entries), %u routes, compiled in %.2f s, artifact %zu bytes,"
	       " %u rulec warnings\n", b->view.policy->rule_count, b->view.acl_count,
	       b->view.policy->route_count, now_s() - t0, b->art_len, warnings);
	b->w = bench_pipe(b, o);
	b->rx_flags = o->nic_csum ? PIPE_RX_IPV4_CSUM_GOOD : 0;
	return b->w ? 0 : -1;
}

static void bench_close(struct bench *b)
{
	pipe_destroy(b->w);
	free(b->art);
	free(b->frames);
	free(b->work);
	free(b->pkts);
	memset(b, 0, sizeof(*b));
}

/* Frames for flow i of a family of flows (distinct 5-tuples). */
static void flow_frame(uint8_t *out, uint32_t i, const uint8_t dst_net[2], uint8_t proto,
		       uint16_t dport, uint8_t flags, int from_outside)
{
	struct frame f;
	struct flow_spec s = {.family = 4, .proto = proto, .tcp_flags = flags, .seq = 1};

	if (from_outside) {
		memcpy(s.src, (uint8_t[]){10, 200, (uint8_t)(i >> 8), (uint8_t)i}, 4);
		memcpy(s.dst, (uint8_t[]){10, 1, (uint8_t)(i >> 16), 9}, 4);
		s.sport = (uint16_t)(1024 + (i >> 16));
	} else {
		memcpy(s.src, (uint8_t[]){10, 1, (uint8_t)(i >> 8), (uint8_t)i}, 4);
		memcpy(s.dst, (uint8_t[]){dst_net[0], dst_net[1], (uint8_t)(i >> 16 & 0x3f), 1}, 4);
		s.sport = (uint16_t)(1024 + (i >> 22));
	}
	s.dport = dport;
	frame_build(&f, &s);
	memset(out, 0, FRAME_LEN);
	memcpy(out, f.b, f.len);	/* UDP with payload 0 is 42 bytes: padded to 64 */
}

/* worst-stateless's packet i: from an inside host to one of the 10,000
 * /32s, TCP to port 443 (so each never-matching entry is ruled out on its
 * source alone), an ACK of a connection under way. */
static void worst_frame(uint8_t *out, uint32_t i)
{
	struct frame f;
	struct flow_spec s = {.family = 4, .proto = 6, .tcp_flags = 0x10, .seq = 1, .dport = 443};
	uint32_t r = i % 10000;

	memcpy(s.src, (uint8_t[]){10, 1, (uint8_t)(i >> 8), (uint8_t)i}, 4);
	memcpy(s.dst, (uint8_t[]){10, 200, (uint8_t)(r / 250), (uint8_t)(r % 250 + 1)}, 4);
	s.sport = (uint16_t)(1024 + (i >> 16));
	frame_build(&f, &s);
	memset(out, 0, FRAME_LEN);
	memcpy(out, f.b, f.len);
}

static int bench_frames(struct bench *b, uint32_t n)
{
	b->n = n;
	b->frames = malloc((size_t)n * FRAME_LEN);
	b->work = malloc((size_t)n * FRAME_LEN);
	b->pkts = calloc(n, sizeof(*b->pkts));
	return b->frames && b->work && b->pkts ? 0 : -1;
}

/* Run frames [0, n) through the pipeline in bursts; the pristine frames
 * are copied in before each burst (outside the timed part). Returns the
 * TSC cycles spent inside pipe_process. */
static uint64_t run(struct bench *b, uint32_t first, uint32_t n, uint8_t in_port,
		    uint64_t now_ns, uint64_t *forwarded)
{
	uint64_t cyc = 0;

	for (uint32_t at = first; at < first + n; at += BURST) {
		uint32_t m = first + n - at < BURST ? first + n - at : BURST;
		uint64_t t;

		memcpy(b->work + (size_t)at * FRAME_LEN, b->frames + (size_t)at * FRAME_LEN,
		       (size_t)m * FRAME_LEN);
		for (uint32_t i = 0; i < m; i++)
			b->pkts[at + i] = (struct pipe_pkt){
				.data = b->work + (size_t)(at + i) * FRAME_LEN, .len = FRAME_LEN,
				.room = FRAME_LEN, .in_port = in_port, .rx_flags = b->rx_flags};
		t = tsc();
		pipe_process(b->w, b->pkts + at, m, now_ns);
		cyc += tsc() - t;
		for (uint32_t i = 0; i < m; i++)
			*forwarded += b->pkts[at + i].verdict == PIPE_FORWARD;
	}
	return cyc;
}

static double tsc_hz;
static double core_per_tsc;	/* core cycles a TSC cycle (coreclock.h), 0 unknown */

/* Called before and after every timed part; does nothing, kept out of
 * line so callgrind can cut its profile there (--dump-before). */
__attribute__((noinline)) static void bench_mark(const char *what)
{
	__asm__ volatile("" : : "r"(what) : "memory");
}

static int wanted(const struct opts *o, const char *name)
{
	return !o->only || !strcmp(o->only, name);
}

static void calibrate(void)
{
	double t0 = now_s();
	uint64_t c0 = tsc();

	while (now_s() - t0 < 0.2)
		;
	tsc_hz = (double)(tsc() - c0) / (now_s() - t0);
}

/* Every run's cycles/packet by scenario, for the summary at the end: on
 * a shared machine one run says little, the minimum and median of
 * several say more. */
#define MAX_RUNS 256
static struct {
	const char *name;
	double cpp[MAX_RUNS];
	uint32_t n;
} runs[12];

static void remember(const char *name, double cpp)
{
	for (unsigned i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		if (runs[i].name && strcmp(runs[i].name, name))
			continue;
		runs[i].name = name;
		if (runs[i].n < MAX_RUNS)
			runs[i].cpp[runs[i].n++] = cpp;
		return;
	}
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void summary(void)
{
	printf("# cycles/pkt over the runs of each scenario: runs, min, median, max (TSC cycles);"
	       " min and median in core cycles at %.2f a TSC cycle\n", core_per_tsc);
	for (unsigned i = 0; i < sizeof(runs) / sizeof(runs[0]) && runs[i].name; i++) {
		uint32_t n = runs[i].n;
		double median;

		qsort(runs[i].cpp, n, sizeof(double), by_value);
		median = n % 2 ? runs[i].cpp[n / 2] : (runs[i].cpp[n / 2 - 1] + runs[i].cpp[n / 2]) / 2;
		printf("# %-16s %3u %8.1f %8.1f %8.1f | core %8.1f %8.1f\n", runs[i].name, n,
		       runs[i].cpp[0], median, runs[i].cpp[n - 1], runs[i].cpp[0] * core_per_tsc,
		       median * core_per_tsc);
	}
}

/* The core's clock against the TSC, said next to the TSC's: targets in
 * cycles read differently in the two (coreclock.h). */
static void print_core_clock(const char *when)
{
	double r = core_cycles_per_tsc(0.1);

	if (r > core_per_tsc)	/* a lower bound: the larger reading is the better */
		core_per_tsc = r;
	if (r > 0)
		printf("# core clock %s: %.2f core cycles a TSC cycle (at least %.2f GHz; a dependent-add"
		       " chain); the cycles below are TSC cycles\n", when, r, r * tsc_hz / 1e9);
	else
		printf("# core clock %s: not measured on this architecture; cycles are TSC cycles\n", when);
}

static void report(const char *name, struct bench *b, const struct pipe_stats *before,
		   uint64_t cyc, uint32_t packets, uint64_t fwd)
{
	const struct pipe_stats *st = pipe_stats(b->w);

	remember(name, (double)cyc / packets);

	printf("%-16s %8.1f cycles/pkt %7.2f Mpps  forwarded %5.1f%% |", name,
	       (double)cyc / packets, packets / ((double)cyc / tsc_hz) / 1e6,
	       100.0 * (double)fwd / packets);
	for (unsigned s = 0; s < PIPE_ST_COUNT; s++) {
		uint64_t p = st->stage[s].packets - before->stage[s].packets;
		uint64_t c = st->stage[s].cycles - before->stage[s].cycles;

		if (p)
			printf(" %s %.1f", pipe_stage_name(s), (double)c / packets);
	}
	printf("\n");
	fflush(stdout);
}

/* One timed scenario: frames [first, first + n) arriving on in_port,
 * `rounds` times over. */
static void scenario(struct bench *b, const char *name, uint32_t first, uint32_t n,
		     uint32_t rounds, uint8_t in_port, uint64_t now_ns)
{
	struct pipe_stats before = *pipe_stats(b->w);
	uint64_t fwd = 0, cyc = 0;

	bench_mark(name);
	for (uint32_t r = 0; r < rounds; r++)
		cyc += run(b, first, n, in_port, now_ns, &fwd);
	bench_mark(name);
	report(name, b, &before, cyc, n * rounds, fwd);
}

/* A cached scenario over the flows [first, first + n): each once, or,
 * with --active N, the first N of them over and over (about --packets
 * packets): a working set that stays in cache while the table holds the
 * rest. */
static void cached_n(struct bench *b, const struct opts *o, const char *name, uint32_t first,
		     uint32_t n, uint32_t want_active)
{
	uint32_t active = want_active && want_active < n ? want_active : n;
	uint32_t rounds = want_active ? (o->packets + active - 1) / active : 1;

	if (want_active) {
		/* Untimed first: a run of misses before (the load, a scenario
		 * over all the flows) may have left the flow cache resting
		 * for up to its longest rest (flowcache_judge); two fills'
		 * worth of packets more gets it probing and warm. */
		uint64_t fwd = 0, warm = (uint64_t)((FLOWCACHE_REST_FILLS << FLOWCACHE_REST_DOUBLINGS) + 2) *
					 pipe_flow_cache_slots(b->w);

		for (uint64_t done = 0; done < warm; done += active)
			run(b, first, active, 0, 2000000000ull, &fwd);
	}
	scenario(b, name, first, active, rounds, 0, 2000000000ull);
}

static void cached(struct bench *b, const struct opts *o, const char *name, uint32_t first,
		   uint32_t n)
{
	cached_n(b, o, name, first, n, o->active);
}

/* The million tracked flows every scenario runs with: half to the DMZ
 * (no NAT), half out through SNAT; their frames are [0, flows). */
static void load_flows(struct bench *b, const struct opts *o)
{
	const uint8_t outside[2] = {10, 200}, dmz[2] = {10, 50};
	uint32_t half = o->flows / 2;
	uint64_t fwd = 0;
	double t0;

	for (uint32_t i = 0; i < o->flows; i++)
		flow_frame(b->frames + (size_t)i * FRAME_LEN, i, i < half ? dmz : outside, 17, 53,
			   0, 0);
	t0 = now_s();
	bench_mark("load");
	run(b, 0, o->flows, 0, 1000000000ull, &fwd);
	bench_mark("load");
	{
		const struct ct_table *ct = pipe_conntrack(b->w);
		uint32_t slots = pipe_flow_cache_slots(b->w);

		printf("# loaded %u flows (%.0f%% accepted) in %.2f s; conntrack %.1f bytes/flow"
		       " (table of %u); flow cache %u slots, %.1f bytes/flow\n",
		       o->flows, 100.0 * (double)fwd / o->flows, now_s() - t0, ct_bytes_per_flow(ct),
		       ct_max_flows(ct), slots, 32.0 * slots / ct_max_flows(ct));
	}
}

/* The workers' side of a checkpoint (rampartd --state-interval): the
 * table copied into records a slice of 1,024 slots at a time, as each
 * worker does between two bursts (FLOWSTATE_SLOTS_PER_LOOP, daemon/
 * flowstate.h); the longest slice is the longest a burst waits. */
static void checkpoint_slices(struct bench *b, uint64_t now)
{
	enum { SLICE = 1024 };
	static uint8_t out[SLICE * PIPE_STATE_RECORD_SIZE];
	uint32_t cursor = 0, got, slices = 0;
	uint64_t records = 0;
	double t0 = now_s(), worst = 0, total;
	int done;

	do {
		double s = now_s();

		done = pipe_state_collect(b->w, 0, &b->view, (uint32_t)(now / 1000000000u), &cursor,
					  SLICE, out, SLICE, &got);
		s = now_s() - s;
		worst = s > worst ? s : worst;
		records += got;
		slices++;
	} while (!done);
	total = now_s() - t0;
	printf("# checkpoint, worker side: %llu flows copied in %u slices of %u slots, %.3f s, "
	       "%.1f us a slice on average, the longest %.1f us\n", (unsigned long long)records,
	       slices, SLICE, total, total / slices * 1e6, worst * 1e6);
}

/* --state PATH: the loaded flows written as rampartd --state-file does
 * at a clean stop, then read back into a new worker as it does at
 * start: how long a restart's two ends take with this many flows. */
static int state_times(struct bench *b, const struct opts *o)
{
	struct pipe_state_counts c;
	struct pipe_worker *w2;
	struct pipe_state *st;
	struct stat sb;
	char err[512];
	double t0, t_save, t_open, t_restore;
	uint64_t now = 2000000000ull;	/* the load's clock, a second on */

	t0 = now_s();
	if (pipe_state_save(o->state, &b->w, 1, now, 0, &c, err, sizeof(err))) {
		fprintf(stderr, "fwbench: %s\n", err);
		return -1;
	}
	t_save = now_s() - t0;
	w2 = bench_pipe(b, o);
	if (!w2 || stat(o->state, &sb))
		return -1;
	t0 = now_s();
	st = pipe_state_open(o->state, err, sizeof(err));
	if (!st) {
		fprintf(stderr, "fwbench: %s\n", err);
		return -1;
	}
	t_open = now_s() - t0;
	if (pipe_state_restore(st, &w2, 1, now, 0, 0, &c, err, sizeof(err))) {
		fprintf(stderr, "fwbench: %s\n", err);
		return -1;
	}
	t_restore = now_s() - t0 - t_open;
	pipe_state_close(st);
	printf("# state file: %llu flows written in %.2f s (%.1f MB, flushed to disk); read and "
	       "checked in %.2f s, %llu restored in %.2f s\n", (unsigned long long)c.flows, t_save,
	       (double)sb.st_size / 1e6, t_open, (unsigned long long)c.restored, t_restore);
	checkpoint_slices(b, now);
	pipe_destroy(w2);
	unlink(o->state);
	return 0;
}

/* Frames [first, first + n) in a random order (a fixed seed): the
 * cached scenarios then visit their flows as traffic would, not in the
 * order the flows were made. */
static void shuffle_frames(struct bench *b, uint32_t first, uint32_t n)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;
	uint8_t tmp[FRAME_LEN];

	for (uint32_t i = n ? n - 1 : 0; i > 0; i--) {
		uint8_t *x = b->frames + (size_t)(first + i) * FRAME_LEN, *y;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		y = b->frames + (size_t)(first + s % (i + 1)) * FRAME_LEN;
		memcpy(tmp, x, FRAME_LEN);
		memcpy(x, y, FRAME_LEN);
		memcpy(y, tmp, FRAME_LEN);
	}
}

int main(int argc, char **argv)
{
	struct opts o = {.classbench = "../shared/data/classbench/acl1_10k", .flows = 1000000,
			 .packets = 1 << 20, .repeat = 1, .cpu = 1};
	struct bench b;
	uint32_t half;
	cpu_set_t set;
	const uint8_t outside[2] = {10, 200};

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--classbench") && i + 1 < argc)
			o.classbench = argv[++i];
		else if (!strcmp(argv[i], "--flows") && i + 1 < argc)
			o.flows = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--packets") && i + 1 < argc)
			o.packets = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			o.cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			o.only = argv[++i];
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			o.repeat = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--active") && i + 1 < argc)
			o.active = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--no-flow-cache"))
			o.no_flow_cache = 1;
		else if (!strcmp(argv[i], "--express-only"))
			o.no_flow_cache = 2;
		else if (!strcmp(argv[i], "--shuffle"))
			o.shuffle = 1;
		else if (!strcmp(argv[i], "--nic-csum"))
			o.nic_csum = 1;
		else if (!strcmp(argv[i], "--state") && i + 1 < argc)
			o.state = argv[++i];
		else if (!strcmp(argv[i], "--port-forwards") && i + 1 < argc)
			o.port_forwards = (uint32_t)strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: fwbench [--classbench FILE] [--flows N] [--packets N] [--cpu N]"
					" [--only cached-allow|cached-snat|cached-allow-hot|cached-snat-hot|new-snat|new-udp|drop-flood|ack-flood|worst-case|worst-cached|worst-cached-hot|worst-stateless] [--repeat N]"
					" [--active N] [--no-flow-cache | --express-only] [--shuffle] [--nic-csum]"
					" [--state PATH] [--port-forwards N]\n");
			return 1;
		}
	}
	CPU_ZERO(&set);
	CPU_SET(o.cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		fprintf(stderr, "fwbench: cannot pin to cpu %d: %s\n", o.cpu, strerror(errno));
	calibrate();
	printf("# fwbench: 1 worker pinned to cpu %d, TSC %.2f GHz, %u-byte frames, bursts of %d\n",
	       o.cpu, tsc_hz / 1e9, FRAME_LEN, BURST);
	print_core_clock("at the start");

	if (bench_open(&b, &o, POLICY_PLAIN) < 0 || bench_frames(&b, o.flows + o.packets) < 0)
		return 1;
	load_flows(&b, &o);
	if (o.state && state_times(&b, &o) < 0)
		return 1;
	half = o.flows / 2;
	if (o.shuffle) {
		shuffle_frames(&b, 0, half);
		shuffle_frames(&b, half, o.flows - half);
	}
	/* cached-allow: the DMZ flows again, in the order they were made */
	for (uint32_t r = 0; r < o.repeat && wanted(&o, "cached-allow"); r++)
		cached(&b, &o, "cached-allow", 0, half);
	for (uint32_t r = 0; r < o.repeat && wanted(&o, "cached-snat"); r++)
		cached(&b, &o, "cached-snat", half, o.flows - half);
	/* the same with 1,000 active flows (what --active 1000 does to the
	 * two above): packets whose flows are in the flow cache */
	for (uint32_t r = 0; !o.active && r < o.repeat && wanted(&o, "cached-allow-hot"); r++)
		cached_n(&b, &o, "cached-allow-hot", 0, half, HOT_FLOWS);
	for (uint32_t r = 0; !o.active && r < o.repeat && wanted(&o, "cached-snat-hot"); r++)
		cached_n(&b, &o, "cached-snat-hot", half, o.flows - half, HOT_FLOWS);

	if (wanted(&o, "new-snat")) {
		for (uint32_t i = 0; i < o.packets; i++)	/* flows never seen before */
			flow_frame(b.frames + (size_t)(o.flows + i) * FRAME_LEN, o.flows + i,
				   outside, 6, 443, 0x02, 0);
		scenario(&b, "new-snat", o.flows, o.packets, 1, 0, 3000000000ull);
	}
	if (o.only && !strcmp(o.only, "new-udp")) {	/* not in the default run */
		for (uint32_t i = 0; i < o.packets; i++)	/* flows never seen before */
			flow_frame(b.frames + (size_t)(o.flows + i) * FRAME_LEN, o.flows + i,
				   outside, 17, 53, 0, 0);
		scenario(&b, "new-udp", o.flows, o.packets, 1, 0, 3000000000ull);
	}
	if (wanted(&o, "drop-flood")) {
		for (uint32_t i = 0; i < o.packets; i++)	/* SYN flood from outside */
			flow_frame(b.frames + (size_t)(o.flows + i) * FRAME_LEN, i, outside, 6, 9,
				   0x02, 1);
		for (uint32_t r = 0; r < o.repeat; r++)
			scenario(&b, "drop-flood", o.flows, o.packets, 1, 1, 4000000000ull);
	}
	if (o.only && !strcmp(o.only, "ack-flood")) {	/* not in the default run */
		for (uint32_t i = 0; i < o.packets; i++)	/* ACKs of no flow from outside */
			flow_frame(b.frames + (size_t)(o.flows + i) * FRAME_LEN, i, outside, 6, 9,
				   0x10, 1);
		for (uint32_t r = 0; r < o.repeat; r++)
			scenario(&b, "ack-flood", o.flows, o.packets, 1, 1, 4000000000ull);
	}
	bench_close(&b);

	if (wanted(&o, "worst-case") || wanted(&o, "worst-cached") || wanted(&o, "worst-cached-hot")) {
		if (bench_open(&b, &o, POLICY_WORST) < 0 || bench_frames(&b, o.flows + o.packets) < 0)
			return 1;
		load_flows(&b, &o);
		/* the SNAT half goes to 10.200.7-15.1: each among the /32s */
		for (uint32_t r = 0; r < o.repeat && wanted(&o, "worst-cached"); r++)
			cached(&b, &o, "worst-cached", half, o.flows - half);
		for (uint32_t r = 0; !o.active && r < o.repeat && wanted(&o, "worst-cached-hot"); r++)
			cached_n(&b, &o, "worst-cached-hot", half, o.flows - half, HOT_FLOWS);
		for (uint32_t i = 0; wanted(&o, "worst-case") && i < o.packets; i++)	/* to the /32s */
			flow_frame(b.frames + (size_t)(o.flows + i) * FRAME_LEN, o.flows + i, outside,
				   6, 443, 0x02, 0);
		if (wanted(&o, "worst-case"))
			scenario(&b, "worst-case", o.flows, o.packets, 1, 0, 3000000000ull);
		bench_close(&b);
	}
	if (wanted(&o, "worst-stateless")) {
		if (bench_open(&b, &o, POLICY_WORST_STATELESS) < 0 || bench_frames(&b, o.packets) < 0)
			return 1;
		for (uint32_t i = 0; i < o.packets; i++)	/* TCP to 443, ACK: mid-stream */
			worst_frame(b.frames + (size_t)i * FRAME_LEN, i);
		for (uint32_t r = 0; r < o.repeat; r++)
			scenario(&b, "worst-stateless", 0, o.packets, 1, 0, 3000000000ull);
		bench_close(&b);
	}
	print_core_clock("at the end");
	if (o.repeat > 1)
		summary();
	return 0;
}
