/* What rampartd's worker needs from a packet source: bursts of frames in,
 * bursts out of a port, frames given back. The AF_XDP backend
 * (backend_xsk.c) and the capture replay (backend_pcap.c) sit behind it;
 * the worker and the pipeline never see sockets, UMEMs or files. */
#ifndef RAMPART_DAEMON_BACKEND_H
#define RAMPART_DAEMON_BACKEND_H

#include <stdint.h>
#include "pipeline.h"

struct backend;

/* Frames of one port the kernel or the NIC dropped before a worker saw
 * them, since start, summed over the port's queues. What each backend
 * maps here is in docs/operations.md ("Frames lost before the workers"). */
struct backend_rx_loss {
	uint64_t ring_full;	/* RX ring full: the worker did not keep up */
	/* no free buffer to receive into (fill ring, mempool): too few, or
	 * (AF_XDP copy mode, which takes the buffer first) a stalled worker */
	uint64_t no_buffer;
	uint64_t invalid;	/* descriptors the kernel refused: a bug of ours */
	uint64_t other;		/* anything else the backend counts */
};

static inline uint64_t backend_rx_loss_total(const struct backend_rx_loss *l)
{
	return l->ring_full + l->no_buffer + l->invalid + l->other;
}

/* Every frame a backend hands out comes with a handle (a UMEM address, a
 * slot number) and stays the worker's until it goes back through
 * tx_burst or free; nothing is lost or handed back twice. */

/* The handle of a frame that is none of the backend's buffers (one
 * another worker handed over, in a handoff ring): tx_burst copies it
 * into a buffer of its own, free ignores it. No backend's own handle
 * has this bit (UMEM offsets, user-space pointers, slot numbers). */
#define BACKEND_HANDLE_FOREIGN (1ull << 63)
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
	 * as the very buffer they came in, by address). A frame that can
	 * never go out of this port (longer than it can send) is moved
	 * behind the others, which keep their order, so that it does not
	 * stop them: pkts and handle are then reordered, and what follows
	 * the prefix is what was not sent. */
	uint32_t (*tx_burst)(struct backend *b, uint32_t queue, uint32_t port,
			     struct pipe_pkt **pkts, uint64_t *handle, uint32_t n,
			     uint32_t *copied);
	/* Give back n frames received on `port`. */
	void (*free)(struct backend *b, uint32_t queue, uint32_t port, const uint64_t *handle,
		     uint32_t n);
	/* Housekeeping between bursts (completions, refills). Returns work
	 * done, 0 when there was none. */
	uint32_t (*service)(struct backend *b, uint32_t queue);
	/* Nothing to do: wait up to timeout_ms for frames, or until wake_fd
	 * (an eventfd another worker writes when it hands this one frames;
	 * -1: none) is readable. A backend that sleeps only in short steps
	 * may ignore it. -1 when no frame will ever come again (a replay is
	 * over). */
	int (*idle)(struct backend *b, uint32_t queue, int timeout_ms, int wake_fd);
	/* Optional (NULL: the backend counts no such loss, e.g. pcap).
	 * Port `port`'s losses into *out; 0, or a negative errno with *out
	 * zeroed. Called by the control thread, never by a worker: it may
	 * make system calls the workers' filter refuses. */
	int (*rx_loss)(struct backend *b, uint32_t port, struct backend_rx_loss *out);
	/* Optional (NULL: the main thread has the kernel resolve next hops,
	 * worker_take_unresolved). Router mode without a kernel behind the
	 * ports (DPDK): ask for a next hop the pipeline has no MAC for, from
	 * the worker's own queue; the backend learns the answer. */
	void (*solicit)(struct backend *b, uint32_t queue, const struct pipe_nexthop *hop,
			uint64_t now_ns);
	/* Optional, with solicit: ask a known next hop, at the MAC it had,
	 * whether it is still there (the main thread's neighbour cache
	 * decides when, daemon/neigh_cache.h). */
	void (*probe)(struct backend *b, uint32_t queue, const struct pipe_nexthop *hop,
		      const uint8_t mac[6]);
};

struct backend {
	const struct backend_ops *ops;
	uint32_t nports;
	uint32_t nqueues;
	/* idle sleeps until wake_fd is readable (AF_XDP's poll); 0: it
	 * sleeps in short steps and ignores it (DPDK), so the worker need
	 * not be woken */
	uint8_t idle_waits_fd;
	/* rx_burst's clock is CLOCK_MONOTONIC (AF_XDP, DPDK), so an idle
	 * worker may expire its flows by it (pipe_tick); 0: a replay's
	 * capture times, which only its frames move */
	uint8_t monotonic_clock;
};

#endif
