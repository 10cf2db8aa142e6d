/* The packet log's reader (rampartd --log FILE|-): a thread that drains
 * every worker's ring (runtime/pktlog.h) and writes one JSON object a
 * line. It is the only thread that may block on the output; when it
 * falls behind, the workers' rings fill and records are dropped and
 * counted, never waited for. */
#ifndef RAMPART_DAEMON_LOGGER_H
#define RAMPART_DAEMON_LOGGER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include "pktlog.h"

#define LOGGER_RING 4096	/* records per worker */

struct logger {
	FILE *out;
	int own;		/* out is a file we opened */
	struct pktlog_ring *rings;	/* one per worker */
	uint32_t nrings;
	const char *const *ifnames;
	uint32_t nports;
	int64_t real_minus_mono;	/* ns: turns the workers' clock into wall time */
	uint64_t written;
	atomic_int stop;
	pthread_t thread;
	int running;
};

/* path "-" is stdout. 0, or -1 with err. */
int logger_open(struct logger *l, const char *path, uint32_t nworkers,
		const char *const *ifnames, uint32_t nports, char *err, size_t errlen);
int logger_start(struct logger *l);	/* 0 or errno */
/* Stop the thread after a last drain, close the output. */
void logger_close(struct logger *l);
/* Records lost (rings full) and not made (over the rate), over the workers. */
void logger_losses(const struct logger *l, uint64_t *full, uint64_t *limited);

/* One record as a JSON line (no newline) into buf; the length. */
size_t logger_format(const struct logger *l, const struct pktlog_rec *r, char *buf, size_t len);

#endif
