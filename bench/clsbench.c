/* clsbench: classifier build time, size and batched lookup cost on the
 * ClassBench sets, for rampart's compiled classifier (HyperSplit), a
 * linear first-match scan, and DPDK rte_acl over the same rules and the
 * same trace, in one run. A benchmark, not a test: it asserts nothing,
 * but it prints how often the three disagree (they must not).
 *   clsbench [--dir DIR] [--trace N] [--runs R] [--no-rteacl] [SET ...]
 * Under valgrind/callgrind use a RAMPART_NATIVE=OFF build and --no-rteacl
 * (valgrind does not decode AVX-512). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classbench.h"
#include "cls.h"
#include "cls_hs.h"
#ifdef RAMPART_HAVE_DPDK
#include "rteacl.h"
#endif

#define BURST 64

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct timing {
	double min, median;	/* ns per packet */
};

static struct timing summarize(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return (struct timing){v[0], v[n / 2]};
}

/* ns/packet of classifying keys[0..n) in bursts with table t. */
static double run_cls(const struct cls_table *t, const struct pkt_key *keys, uint32_t n,
		      uint32_t *out)
{
	const struct pkt_key *ptr[BURST];
	double t0 = now();

	for (uint32_t i = 0; i < n; i += BURST) {
		uint32_t b = n - i < BURST ? n - i : BURST;

		for (uint32_t j = 0; j < b; j++)
			ptr[j] = &keys[i + j];
		cls_lookup_batch(t, ptr, b, out + i);
	}
	return (now() - t0) * 1e9 / n;
}

static void usage(void)
{
	fprintf(stderr, "usage: clsbench [--dir CLASSBENCH_DIR] [--trace N] [--runs R] [--no-rteacl] [SET...]\n"
			"default sets: acl1_1k fw1_1k ipc1_1k acl1_10k fw1_10k ipc1_10k\n");
	exit(1);
}

int main(int argc, char **argv)
{
	static const char *default_sets[] = {"acl1_1k", "fw1_1k", "ipc1_1k",
					     "acl1_10k", "fw1_10k", "ipc1_10k"};
	const char *dir = "../shared/data/classbench";
	const char *sets[16];
	uint32_t nsets = 0, trace_n = 1000000, runs = 5;
	int have_rteacl = 0, want_rteacl = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
			trace_n = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--no-rteacl"))	/* e.g. under valgrind */
			want_rteacl = 0;
		else if (argv[i][0] == '-' || nsets == 16)
			usage();
		else
			sets[nsets++] = argv[i];
	}
	if (!nsets)
		for (; nsets < 6; nsets++)
			sets[nsets] = default_sets[nsets];
	if (!trace_n || !runs || runs > 64)
		usage();
#ifndef RAMPART_HAVE_DPDK
	(void)want_rteacl;
#else
	have_rteacl = want_rteacl && rteacl_init(argv[0]) == 0;
	if (want_rteacl && !have_rteacl)
		fprintf(stderr, "clsbench: DPDK EAL did not start; rte_acl columns skipped\n");
#endif

	printf("# trace: %u headers per set (half inside a random rule, half uniform), "
	       "bursts of %d, %u runs; ns/packet min/median\n", trace_n, BURST, runs);
	printf("%-9s %6s | %9s %10s %7s %13s | %13s | %9s %10s %7s %13s | %s\n",
	       "set", "rules", "build_ms", "bytes", "B/rule", "ns/pkt",
	       "linear ns/pkt", "acl_ms", "acl_bytes", "B/rule", "acl ns/pkt", "disagree");

	for (uint32_t s = 0; s < nsets; s++) {
		char path[1024];
		struct rfw_acl_entry *e;
		uint32_t n, lin_n = trace_n < 20000 ? trace_n : 20000, bad = 0;
		struct cls_hs_built built;
		struct cls_table hs = {0}, lin = {0};
		struct pkt_key *keys = malloc((size_t)trace_n * sizeof(*keys));
		uint32_t *a = malloc((size_t)trace_n * sizeof(*a));
		uint32_t *b = malloc((size_t)trace_n * sizeof(*b));
		double v[64], build_ms;
		struct timing t_hs, t_lin, t_acl = {0, 0};
		double acl_ms = 0;
		size_t acl_bytes = 0;

		snprintf(path, sizeof(path), "%s/%s", dir, sets[s]);
		if (!keys || !a || !b || classbench_load(path, &e, &n) < 0) {
			fprintf(stderr, "clsbench: cannot load %s\n", path);
			return 1;
		}
		classbench_trace(e, n, keys, trace_n, 42 + s);

		build_ms = now();
		if (cls_hs_build(&built, e, n, NULL) < 0) {
			fprintf(stderr, "clsbench: build failed for %s\n", sets[s]);
			return 1;
		}
		build_ms = (now() - build_ms) * 1e3;
		hs.entries = lin.entries = e;
		hs.count = lin.count = n;
		hs.compiled = 1;
		hs.hs = built.table;

		for (uint32_t r = 0; r < runs; r++)
			v[r] = run_cls(&hs, keys, trace_n, a);
		t_hs = summarize(v, (int)runs);
		for (uint32_t r = 0; r < runs; r++)
			v[r] = run_cls(&lin, keys, lin_n, b);
		t_lin = summarize(v, (int)runs);
		for (uint32_t i = 0; i < lin_n; i++)
			bad += a[i] != b[i];

#ifdef RAMPART_HAVE_DPDK
		if (have_rteacl) {
			struct rteacl *acl;

			acl_ms = now();
			acl = rteacl_build(e, n, &acl_bytes);
			acl_ms = (now() - acl_ms) * 1e3;
			if (acl && rteacl_prepare(acl, keys, trace_n) == 0) {
				for (uint32_t r = 0; r < runs; r++) {
					double t0 = now();

					for (uint32_t i = 0; i < trace_n; i += BURST)
						rteacl_classify(acl, i, trace_n - i < BURST ? trace_n - i : BURST,
								b + i);
					v[r] = (now() - t0) * 1e9 / trace_n;
				}
				t_acl = summarize(v, (int)runs);
				/* rte_acl has no "packet has ports" notion: compare
				 * where rampart's semantics and its agree. */
				for (uint32_t i = 0; i < trace_n; i++)
					bad += keys[i].has_ports && a[i] != b[i];
			} else {
				fprintf(stderr, "clsbench: rte_acl failed on %s\n", sets[s]);
			}
			rteacl_free(acl);
		}
#endif
		printf("%-9s %6u | %9.1f %10zu %7.1f %6.1f/%6.1f | %6.1f/%6.1f | ",
		       sets[s], n, build_ms, cls_hs_bytes(&built.table) + (size_t)n * sizeof(*e),
		       (double)(cls_hs_bytes(&built.table) + (size_t)n * sizeof(*e)) / n,
		       t_hs.min, t_hs.median, t_lin.min, t_lin.median);
		if (have_rteacl)
			printf("%9.1f %10zu %7.1f %6.1f/%6.1f | %u\n", acl_ms, acl_bytes,
			       (double)acl_bytes / n, t_acl.min, t_acl.median, bad);
		else
			printf("%9s %10s %7s %13s | %u\n", "-", "-", "-", "-", bad);
		fflush(stdout);
		cls_hs_free(&built);
		free(e);
		free(keys);
		free(a);
		free(b);
	}
	return 0;
}
