/* Packet counters a worker owns: per rule (index = rule number, 0 = the
 * default) and per interface; and the one text format they are printed in
 * (tests parse it, so it changes only together with them). */
#ifndef RAMPART_DAEMON_COUNTERS_H
#define RAMPART_DAEMON_COUNTERS_H

#include <stdint.h>
#include <stdio.h>
#include "artifact.h"
#include "pkt.h"

struct counters_rule {
	uint64_t packets;
	uint64_t bytes;
};

/* Per interface, for frames received on it (rx, dropped, non_ip,
 * malformed) or sent out of it (tx). dropped includes malformed ones and
 * tx_full (no TX room on the other side). */
struct counters_if {
	uint64_t rx_packets, rx_bytes;
	uint64_t tx_packets, tx_bytes;
	uint64_t dropped;
	uint64_t non_ip;
	uint64_t malformed;
	uint64_t tx_full;
	uint64_t reason[PKT_REASON_COUNT];
};

struct counters {
	struct counters_rule *rules;	/* rule_count + 1 */
	uint32_t nrules;
	uint32_t nifs;
	struct counters_if ifs[2];
	const char *ifnames[2];
};

/* Allocate for view's rules (before the worker starts: the worker never
 * allocates). 0 or -1 (ENOMEM). */
int counters_init(struct counters *c, const struct rfw_view *view);
void counters_free(struct counters *c);

/* The block tests parse; flushed. Reads while the worker writes: see
 * counters.c for why that is acceptable. */
void counters_print(FILE *out, const struct counters *c, const struct rfw_view *view);
/* Detail that the fixed format leaves out (drop reasons), for -v. */
void counters_print_detail(FILE *out, const struct counters *c);

#endif
