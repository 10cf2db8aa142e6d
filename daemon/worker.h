/* One rampartd worker: drives one queue of a backend through its own
 * pipe_worker (one per queue, so --queues only adds workers), and takes
 * next-hop updates from the main thread through a single-producer ring. */
#ifndef RAMPART_DAEMON_WORKER_H
#define RAMPART_DAEMON_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include "backend.h"
#include "handoff.h"
#include "pipeline.h"

#define WORKER_NEIGH_RING 1024	/* power of two */
#define WORKER_TICK_NS 100000000ull	/* an idle worker expires flows this often */
#define WORKER_RESOLVE_RING 64	/* power of two */

struct ctl_job;
struct flow_save_job;
struct reload_gen;
struct pipe_policy;
struct pktcap_ring;

/* What the interface counters need beyond pipe_stats: written by the
 * worker only, read by the main thread like pipe_stats (see counters.c). */
struct worker_port_stats {
	uint64_t non_ip;	/* non-IP frames received on the port */
	uint64_t malformed;	/* received on the port, refused by the parser */
	uint64_t tx_full;	/* received here, lost for lack of TX room */
	uint64_t tx_lost_packets, tx_lost_bytes;	/* meant for this port, not sent */
	/* Sent out of this port as the frame received (by address: a
	 * bounce, or a forward within one UMEM) or as a copy (the ports'
	 * buffers are apart: backend_xsk.h). */
	uint64_t tx_by_address, tx_copied;
	/* received here for another worker's flow and lost on the way: its
	 * ring was full, or the frame longer than HANDOFF_FRAME_MAX (counted
	 * received and dropped here, as the owner never saw it) */
	uint64_t handoff_lost, handoff_lost_bytes;
};

enum worker_neigh_op {
	WORKER_NEIGH_SET,	/* addr is at mac */
	WORKER_NEIGH_FORGET,	/* addr went away */
	WORKER_NEIGH_PROBE,	/* ask addr, last at mac, if it is still there
				 * (backend_ops.probe: DPDK's own ARP/ND) */
};

struct worker_neigh_cmd {
	uint8_t addr[16];
	uint8_t mac[6];
	uint8_t port;
	uint8_t family;
	uint8_t op;		/* enum worker_neigh_op */
};

struct worker {
	/* hot */
	struct backend *be;
	struct pipe_worker *pipe;
	uint32_t queue;
	atomic_int stop;
	struct worker_port_stats port[PIPE_MAX_PORTS];
	struct pipe_pkt pkts[PIPE_BURST];
	uint64_t handle[PIPE_BURST];
	struct pipe_pkt *out[PIPE_MAX_PORTS][PIPE_BURST];
	uint64_t out_handle[PIPE_MAX_PORTS][PIPE_BURST];
	uint32_t nout[PIPE_MAX_PORTS];
	uint64_t drop_handle[PIPE_MAX_PORTS][PIPE_BURST];
	uint32_t ndrop[PIPE_MAX_PORTS];
	/* Frames to and from the other workers (handoff.h); NULL: none. */
	struct handoff *ho;
	struct pipe_pkt *ho_out[PIPE_BURST];	/* a burst's, by owner */
	uint16_t ho_count[HANDOFF_MAX_WORKERS + 1];
	uint32_t ho_next;	/* the ring drained first next time */
	/* Next-hop updates: the main thread writes entries and then head
	 * (release), the worker reads them up to head and then moves tail.
	 * pipe_neigh_set writes the worker's own table, so only the worker
	 * may call it once the thread runs; this ring is how it is asked to,
	 * drained once per loop, without locks or pausing the worker. */
	_Alignas(64) atomic_uint neigh_head;
	_Alignas(64) atomic_uint neigh_tail;
	struct worker_neigh_cmd neigh[WORKER_NEIGH_RING];
	/* Next hops to resolve, the other way (pipe_unresolved): the worker
	 * writes entries and then head (release) after a burst that found
	 * some; the main thread reads them up to head and moves tail. A full
	 * ring drops the request (a later packet to the hop asks again). */
	_Alignas(64) atomic_uint resolve_head;
	_Alignas(64) atomic_uint resolve_tail;
	struct pipe_nexthop resolve[WORKER_RESOLVE_RING];
	/* Port MTUs (router mode, pipe_set_mtu): the main thread writes a
	 * port's and then moves mtu_gen (release); the worker, once per
	 * loop, applies them all when mtu_gen moved. */
	_Alignas(64) atomic_uint mtu_gen;
	_Atomic uint32_t mtu[PIPE_MAX_PORTS];
	uint32_t mtu_gen_seen;
	/* Control-socket requests (ctl_job.h), checked once per loop. */
	_Alignas(64) struct ctl_job *_Atomic ctl_job;
	/* Flow checkpoints (--state-interval, flowstate.h), checked once
	 * per loop: its own slot, so a checkpoint never keeps rampartctl
	 * waiting. */
	struct flow_save_job *_Atomic save_job;
	/* Reload (reload.h): the generation the reloader publishes, checked
	 * once per loop; the worker adopts its policy between bursts, sweeps
	 * its flows over, then reports the generation's seq in quiesced
	 * (release), after which the reloader frees `retired`. */
	struct reload_gen *_Atomic *published;	/* NULL: no reloads (pcap) */
	struct reload_gen *gen;			/* adopted */
	struct pipe_policy *retired;		/* replaced by the adopt */
	int sweeping;
	int sandbox;		/* worker_start: run under the seccomp filter (privilege.h) */
	struct pktcap_ring *cap;	/* its pipeline's capture ring (rampartctl capture) */
	_Alignas(64) _Atomic uint64_t quiesced;
	/* reload_release_kept asks (req, a new value) and the worker, having
	 * dropped the kept DNAT rules, answers (done = req) */
	_Atomic uint64_t kept_drop_req, kept_drop_done;
	/* the same for a restore's redirects (workers_release_redirects) */
	_Atomic uint64_t redirect_drop_req, redirect_drop_done;
	uint64_t last_tick_ns;	/* pipe_tick while idle */
	/* cold */
	pthread_t thread;
};

void worker_init(struct worker *w, struct backend *be, uint32_t queue, struct pipe_worker *pipe);

/* Before the thread starts: take reloads from *published. */
void worker_follow(struct worker *w, struct reload_gen *_Atomic *published);

/* On the worker's own thread, first: its name (rampart-wN) and, when
 * w->sandbox, the seccomp filter; drop_caps also drops every capability
 * of the thread (threads a library made before rampartd could drop). */
void worker_enter(struct worker *w, int drop_caps);

/* Run bursts until stopped or the backend has no more input. */
void worker_run(struct worker *w);
/* worker_run on a thread of its own. 0 or an errno. */
int worker_start(struct worker *w);
/* Ask the thread to stop and join it (at most one idle timeout). */
void worker_stop(struct worker *w);

/* Main thread: queue a next-hop update for the worker. 0, or -1 when the
 * ring is full (the caller retries on its next refresh). */
int worker_neigh_post(struct worker *w, uint32_t port, uint8_t family, const uint8_t *addr,
		      const uint8_t mac[6]);
/* The same for any enum worker_neigh_op (FORGET: mac unused). */
int worker_neigh_cmd(struct worker *w, uint8_t op, uint32_t port, uint8_t family,
		     const uint8_t *addr, const uint8_t mac[6]);

/* Main thread: port's MTU changed to mtu (the worker applies it between
 * bursts). */
void worker_post_mtu(struct worker *w, uint32_t port, uint32_t mtu);
/* Main thread, now and then: once no flow a state file's restore left
 * redirects to lives on any of the n workers (pipe_redirects_needed),
 * ask each to drop its redirects; a later call sees them done. *asked:
 * the caller's state, 0 at first. Never waits. 1 when every worker has
 * dropped them (once), else 0. */
int workers_release_redirects(struct worker *const *w, uint32_t n, uint64_t *asked);

/* Main thread: up to max next hops the worker found no MAC for. */
uint32_t worker_take_unresolved(struct worker *w, struct pipe_nexthop *out, uint32_t max);

#endif
