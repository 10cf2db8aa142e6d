#include "coreclock.h"

#include <stdint.h>

#if defined(__x86_64__)
#include <x86intrin.h>

static volatile uint64_t chain_sink;	/* keeps the chain from being optimised away */

/* 4,096 dependent adds: the loop's own counter runs beside them, so the
 * chain's latency is all the loop costs. */
static uint64_t add_chain(uint64_t x)
{
	for (int i = 0; i < 1024; i++)
		__asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
	return x;
}

double core_cycles_per_tsc(double seconds)
{
	double best = 0;
	uint64_t x = 0;

	/* ten slices, the best kept: a slice an interrupt hit reads low */
	for (int slice = 0; slice < 10; slice++) {
		uint64_t budget = (uint64_t)(seconds / 10 * 1e9), t0 = __rdtsc(), adds = 0;

		/* the TSC runs at ~1-4 GHz: 1e9 a second is a rough bound
		 * that only sets how long a slice lasts */
		while (__rdtsc() - t0 < budget) {
			x = add_chain(x);
			adds += 4096;
		}
		double r = (double)adds / (double)(__rdtsc() - t0);

		if (r > best)
			best = r;
	}
	chain_sink = x;
	return best;
}
#else
double core_cycles_per_tsc(double seconds)
{
	(void)seconds;
	return 0;
}
#endif
