/* memfloor: what this machine's memory alone costs a packet that must
 * touch k random cache lines of a big table, batched as the pipeline
 * batches them. A floor for the fwbench scenarios whose flows do not fit
 * in cache (a cached packet of 500,000 flows touches at least its index
 * bucket and its flow entry; a new flow its bucket, the reply tuple's
 * bucket and the new entry): no pipeline built on those tables can cost
 * less than the floor of its lines, whatever its instructions.
 *
 * Three measurements over one table (default 256 MiB, transparent huge
 * pages as the conntrack table's):
 *   - latency: a dependent pointer chase through every line in random
 *     order, one load at a time (nothing overlaps);
 *   - k-line packets, pipelined as lookup_batch is: bursts of 64
 *     "packets", pass 1 prefetches each packet's first line, pass j reads
 *     line j-1 (which holds the index of line j) and prefetches line j,
 *     a last pass reads line k; k = 1, 2, 3. The lines of one packet are
 *     dependent (a bucket names its entry), those of different packets
 *     are not, so the core may overlap up to 64 misses a pass;
 *   - the same with the k lines independent (all prefetched in pass 1).
 * Every figure is TSC cycles per packet (or per load), the fwbench unit,
 * with core cycles beside it (bench/coreclock.c).
 *
 * Usage: memfloor [--mib N] [--cpu C] [--packets N]
 * Not a test: nothing here is asserted. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <x86intrin.h>

#include "coreclock.h"

#define LINE 64u
#define BURST 64u
#define MAX_K 3u

struct line {
	uint64_t next;		/* a line's index: the chase's, or a packet's next line */
	uint64_t pad[LINE / 8 - 1];
};

/* the loads' results go here, so the compiler keeps the loads */
volatile uint64_t memfloor_sink;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)	/* xorshift64*: fast, good enough to scatter */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static struct line *table_alloc(size_t lines)
{
	size_t bytes = lines * sizeof(struct line);
	struct line *t = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (t == MAP_FAILED)
		return NULL;
	(void)madvise(t, bytes, MADV_HUGEPAGE);	/* a hint, as hugemem.c gives it */
	memset(t, 0, bytes);
	return t;
}

/* One random cycle through every line (Sattolo's shuffle). */
static void chase_links(struct line *t, size_t lines)
{
	uint64_t *order = malloc(lines * sizeof(*order));

	if (!order) {
		perror("memfloor");
		exit(1);
	}
	for (size_t i = 0; i < lines; i++)
		order[i] = i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = rng() % i;
		uint64_t x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	for (size_t i = 0; i < lines; i++)
		t[order[i]].next = order[(i + 1) % lines];
	free(order);
}

static double chase(const struct line *t, size_t loads)
{
	uint64_t at = 0, t0 = __rdtsc();

	for (size_t i = 0; i < loads; i++)
		at = t[at].next;
	memfloor_sink = at;
	return (double)(__rdtsc() - t0) / (double)loads;
}

/* Packets of k dependent lines: line j of packet p is first[p]'s chain.
 * The chain's links are set on the fly (each packet's first line names a
 * random second, and so on), so every line read is a fresh random one. */
static double packets(struct line *t, size_t lines, const uint64_t *first, size_t n, unsigned k,
		      int dependent)
{
	uint64_t at[MAX_K][BURST];
	uint64_t sum = 0, t0;

	/* the links: line j's `next` names line j+1 of the same packet */
	for (size_t p = 0; p < n; p++) {
		uint64_t a = first[p];

		for (unsigned j = 1; j < k; j++) {
			uint64_t b = rng() % lines;

			t[a].next = b;
			a = b;
		}
	}
	t0 = __rdtsc();
	for (size_t base = 0; base + BURST <= n; base += BURST) {
		for (unsigned i = 0; i < BURST; i++) {
			at[0][i] = first[base + i];
			__builtin_prefetch(&t[at[0][i]]);
		}
		if (!dependent) {	/* every line's index known up front */
			for (unsigned j = 1; j < k; j++)
				for (unsigned i = 0; i < BURST; i++) {
					at[j][i] = t[at[j - 1][i]].next;	/* (warm: set above) */
					__builtin_prefetch(&t[at[j][i]]);
				}
		}
		for (unsigned j = 1; j < k; j++)
			for (unsigned i = 0; i < BURST; i++) {
				if (dependent) {
					at[j][i] = t[at[j - 1][i]].next;
					__builtin_prefetch(&t[at[j][i]]);
				} else {
					sum += t[at[j - 1][i]].pad[0];
				}
			}
		for (unsigned i = 0; i < BURST; i++)
			sum += t[at[k - 1][i]].pad[0] + t[at[k - 1][i]].next;
	}
	uint64_t dt = __rdtsc() - t0;

	memfloor_sink = sum;	/* keep the loads */
	return (double)dt / (double)(n - n % BURST);
}

int main(int argc, char **argv)
{
	size_t mib = 256, n = 1u << 20;
	int cpu = -1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mib") && i + 1 < argc)
			mib = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--packets") && i + 1 < argc)
			n = strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: memfloor [--mib N] [--cpu C] [--packets N]\n");
			return 2;
		}
	}
	if (mib < 1 || n < BURST) {
		fprintf(stderr, "memfloor: --mib at least 1, --packets at least %u\n", BURST);
		return 2;
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			fprintf(stderr, "memfloor: cpu %d: %s\n", cpu, strerror(errno));
	}

	size_t lines = mib * 1024 * 1024 / LINE;
	struct line *t = table_alloc(lines);
	uint64_t *first = malloc(n * sizeof(*first));

	if (!t || !first) {
		perror("memfloor");
		return 1;
	}
	double ratio = core_cycles_per_tsc(0.1);

	printf("# memfloor: a %zu MiB table (%zu lines of 64 B), %zu packets in bursts of %u, "
	       "cpu %d; TSC cycles (core cycles at %.2f a TSC cycle)\n",
	       mib, lines, n, BURST, cpu, ratio);
	chase_links(t, lines);
	(void)chase(t, lines / 4);	/* fault in, warm the page tables */
	double lat = chase(t, n < lines ? n : lines);

	printf("dependent load (pointer chase)     %7.1f per load     (core %7.1f)\n", lat, lat * ratio);
	for (size_t p = 0; p < n; p++)
		first[p] = rng() % lines;
	for (int dep = 1; dep >= 0; dep--)
		for (unsigned k = dep ? 1 : 2; k <= MAX_K; k++) {
			double c = packets(t, lines, first, n, k, dep);

			printf("%u %-11s line%s a packet, bursts of %u %7.1f per packet   (core %7.1f)\n",
			       k, k == 1 ? "random" : dep ? "dependent" : "independent", k == 1 ? " " : "s",
			       BURST, c, c * ratio);
		}
	munmap(t, lines * sizeof(struct line));
	free(first);
	return 0;
}
