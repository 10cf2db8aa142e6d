/* What rampartd's worker needs from a packet source: bursts of frames in,
 * bursts out of a port, frames given back. The AF_XDP backend
 * (backend_xsk.c) and the capture replay (backend_pcap.c) sit behind it;
 * the worker and the pipeline never see sockets, UMEMs or files. */
#ifndef RAMPART_DAEMON_BACKEND_H
#define RAMPART_DAEMON_BACKEND_H

#include <stdint.h>
#include "pipeline.h"

struct backend;

/* Every frame a backend hands out comes with a handle (a UMEM address, a
 * slot number) and stays the worker's until it goes back through
 * tx_burst or free; nothing is lost or handed back twice. */
struct backend_ops {
	/* Up to n frames from queue `queue` of any port: fills data, len,
	 * room, in_port of pkts[i] and handle[i]; *now_ns gets the burst's
	 * clock (read once). Returns how many. */
	uint32_t (*rx_burst)(struct backend *b, uint32_t queue, struct pipe_pkt *pkts,
			     uint64_t *handle, uint32_t n, uint64_t *now_ns);
	/* Send n frames out of `port`, in order. Takes every handle: sends
	 * a prefix and frees the rest (no ring room or buffers). Returns
	 * the length of the prefix sent; *copied gets how many of those
	 * were copied into a buffer of the egress port (the rest went out
	 * as the very buffer they came in, by address). */
	uint32_t (*tx_burst)(struct backend *b, uint32_t queue, uint32_t port,
			     struct pipe_pkt *const *pkts, const uint64_t *handle, uint32_t n,
			     uint32_t *copied);
	/* Give back n frames received on `port`. */
	void (*free)(struct backend *b, uint32_t queue, uint32_t port, const uint64_t *handle,
		     uint32_t n);
	/* Housekeeping between bursts (completions, refills). Returns work
	 * done, 0 when there was none. */
	uint32_t (*service)(struct backend *b, uint32_t queue);
	/* Nothing to do: wait up to timeout_ms for frames. -1 when no frame
	 * will ever come again (a replay is over). */
	int (*idle)(struct backend *b, uint32_t queue, int timeout_ms);
};

struct backend {
	const struct backend_ops *ops;
	uint32_t nports;
	uint32_t nqueues;
};

#endif
