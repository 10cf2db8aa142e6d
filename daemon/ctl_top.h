/* `rampartctl top`: two raw samples of the daemon's counters (the
 * control request `top-sample`, ctl_top_sample) turned into rates per
 * interface (RX missed too), per worker, the busiest rules and the drops
 * by reason, as a plain-text screen (ANSI clear when on a terminal, so
 * it works over SSH without curses). Apart from rampartctl so it is
 * unit-tested (tests/unit/test_ctl_top.c). */
#ifndef RAMPART_DAEMON_CTL_TOP_H
#define RAMPART_DAEMON_CTL_TOP_H

#include <stdint.h>
#include <stdio.h>

struct top_row {
	char name[64];
	uint64_t v[6];		/* iface: rx, rx bytes, tx, tx bytes, drops, RX missed (lost
				 * before a worker saw them); worker: rx, tx, drops; rule:
				 * packets, bytes; drop: count */
};

struct top_sample {
	uint64_t t_ns;
	struct top_row *iface, *worker, *rule, *drop;
	uint32_t niface, nworker, nrule, ndrop;
	uint64_t flows, flows_max;
};

/* Parse a top-sample answer. 0, or -1 (malformed or out of memory;
 * nothing is left to free then). */
int top_parse(const char *text, struct top_sample *s);
void top_free(struct top_sample *s);

/* One screen of rates between prev and cur; at most `rules` rules. */
void top_render(FILE *out, const struct top_sample *prev, const struct top_sample *cur,
		uint32_t rules);

#endif
