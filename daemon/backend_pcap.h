/* The capture backend (--backend pcap): frames come from capture files,
 * merged in timestamp order, and what the pipeline sends out of a port is
 * written to that port's output capture with the input frame's timestamp.
 * Offline and deterministic: the burst clock is the capture's. */
#ifndef RAMPART_DAEMON_BACKEND_PCAP_H
#define RAMPART_DAEMON_BACKEND_PCAP_H

#include <stddef.h>
#include <sys/time.h>
#include "backend.h"

#define PCAP_SLOT_SIZE 16384	/* a frame and the reply that may replace it */

struct pcap;
struct pcap_dumper;

struct pcap_input {
	struct pcap *pc;
	uint32_t port;
	int have;			/* a frame is waiting in hdr/data */
	struct timeval ts;
	uint32_t caplen;
	const uint8_t *data;		/* libpcap's, valid until the next read */
};

struct backend_pcap {
	struct backend be;		/* first: the worker sees only this */
	struct pcap_input in[32];
	uint32_t nin;
	struct pcap *dead[PIPE_MAX_PORTS];	/* the output files' link type */
	struct pcap_dumper *out[PIPE_MAX_PORTS];
	uint64_t last_ns;
	uint64_t truncated;		/* frames longer than a slot, cut */
	uint64_t discarded;		/* sent out of a port without --pcap-out */
	struct timeval slot_ts[PIPE_BURST];
	uint8_t slot[PIPE_BURST][PCAP_SLOT_SIZE];
};

/* Set up for nports ports, then add inputs and outputs (0, or -1 with
 * err: the caller closes what was opened). */
int backend_pcap_init(struct backend_pcap *b, uint32_t nports);
int backend_pcap_add_input(struct backend_pcap *b, uint32_t port, const char *path, char *err,
			   size_t errlen);
int backend_pcap_set_output(struct backend_pcap *b, uint32_t port, const char *path, char *err,
			    size_t errlen);
/* Flush and close every file. */
void backend_pcap_close(struct backend_pcap *b);

#endif
