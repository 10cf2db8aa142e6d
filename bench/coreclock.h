/* How many core cycles one TSC cycle is, measured (benchmarks only).
 *
 * fwbench and its peers count TSC cycles, as DPDK and VPP do. The TSC
 * ticks at the processor's nominal rate whatever the core's clock, so a
 * core that boosts spends more of its own cycles per TSC cycle; on a VM
 * without a PMU there is no core-cycle counter to ask. */
#ifndef RAMPART_BENCH_CORECLOCK_H
#define RAMPART_BENCH_CORECLOCK_H

/* Core cycles per TSC cycle, from a chain of dependent register adds
 * (one core cycle each on every x86 core of the last decade) timed
 * with the TSC for about `seconds`. A lower bound: an interrupt or a
 * steal by the hypervisor can only make it smaller. 0 where the probe
 * is not built (not x86-64). */
double core_cycles_per_tsc(double seconds);

#endif
