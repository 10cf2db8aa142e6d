/* The text rampartd prints on SIGUSR1 and at exit: the counters block
 * (per rule and per interface; tests parse it, so it changes only together
 * with them) and after it the runtime block (per-stage packets and cycles,
 * drop reasons by name), both summed over the workers; then the workers
 * block, one line per worker. */
#ifndef RAMPART_DAEMON_COUNTERS_H
#define RAMPART_DAEMON_COUNTERS_H

#include <stdio.h>
#include "artifact.h"
#include "worker.h"

struct reloader;

struct counters_src {
	const struct rfw_view *view;
	struct reloader *reload;	/* counters of earlier generations; NULL: none */
	struct worker *const *workers;
	uint32_t nworkers;
	const char *const *ifnames;	/* port order */
	uint32_t nports;
	const int *cpus;	/* per worker, the CPU it is pinned to; NULL: none */
};

/* One port's numbers as the counters block (and rampartctl) show them. */
struct counters_port {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	uint64_t dropped, non_ip, malformed, tx_full;
	uint64_t tx_by_address, tx_copied;	/* of tx_packets */
};
/* Add one worker's counters of a port to s. */
void counters_port_add(struct counters_port *s, const struct pipe_port_stats *ps,
		       const struct worker_port_stats *ws);

/* Reads while workers write: see counters.c for why that is fine. */
void counters_print(FILE *out, const struct counters_src *src);
void counters_print_runtime(FILE *out, const struct counters_src *src);
/* rampart workers / worker ID QUEUE CPU RX TX DROPS BY_ADDRESS COPIED
 * HANDED_OFF HANDED_IN / end workers: how the queues spread the load (CPU
 * -1: not pinned), how many sent frames went out by address or were
 * copied (the two add up to TX), and how many frames of other workers'
 * flows this one handed over and took (handoff.h; RX counts a frame on
 * the worker that runs it). */
void counters_print_workers(FILE *out, const struct counters_src *src);

#endif
