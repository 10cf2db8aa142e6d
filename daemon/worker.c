/* The worker loop: receive a burst, run it through the pipeline, hand
 * each frame to the port its verdict names (or back to the backend), then
 * let the backend do its housekeeping; sleep in the backend when idle. */
#define _GNU_SOURCE	/* pthread_setname_np */
#include "worker.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctl_job.h"
#include "flowstate.h"
#include "privilege.h"
#include "reload.h"

#define WORKER_IDLE_MS 100	/* how long the stop flag may go unseen */

void worker_init(struct worker *w, struct backend *be, uint32_t queue, struct pipe_worker *pipe)
{
	memset(w, 0, sizeof(*w));
	w->be = be;
	w->queue = queue;
	w->pipe = pipe;
	atomic_init(&w->stop, 0);
	atomic_init(&w->neigh_head, 0);
	atomic_init(&w->neigh_tail, 0);
	atomic_init(&w->resolve_head, 0);
	atomic_init(&w->resolve_tail, 0);
	atomic_init(&w->mtu_gen, 0);
	for (uint32_t k = 0; k < PIPE_MAX_PORTS; k++)
		atomic_init(&w->mtu[k], 0);
	atomic_init(&w->ctl_job, NULL);
	atomic_init(&w->save_job, NULL);
	atomic_init(&w->quiesced, 0);
	atomic_init(&w->kept_drop_req, 0);
	atomic_init(&w->kept_drop_done, 0);
	atomic_init(&w->redirect_drop_req, 0);
	atomic_init(&w->redirect_drop_done, 0);
}

void worker_follow(struct worker *w, struct reload_gen *_Atomic *published)
{
	w->published = published;
}

/* Once per loop, between bursts: a new generation is adopted whole (so a
 * burst sees one policy), then flows are swept over a slice per loop.
 * Returns 1 while there is reload work, so the worker does not go idle. */
static uint32_t reload_poll(struct worker *w)
{
	struct reload_gen *g;
	uint64_t drop;

	if (!w->published)
		return 0;
	drop = atomic_load_explicit(&w->redirect_drop_req, memory_order_acquire);
	if (drop != atomic_load_explicit(&w->redirect_drop_done, memory_order_relaxed)) {
		/* no flow a restore's redirects point at lives any more */
		pipe_drop_redirects(w->pipe);
		atomic_store_explicit(&w->redirect_drop_done, drop, memory_order_release);
	}
	drop = atomic_load_explicit(&w->kept_drop_req, memory_order_acquire);
	if (drop != atomic_load_explicit(&w->kept_drop_done, memory_order_relaxed)) {
		/* no flow needs the DNAT rules kept any more (reload_release_kept) */
		pipe_drop_kept_dnat(w->pipe);
		atomic_store_explicit(&w->kept_drop_done, drop, memory_order_release);
	}
	g = atomic_load_explicit(w->published, memory_order_acquire);
	if (g != w->gen) {
		w->retired = pipe_adopt(w->pipe, g->pol[w->queue]);
		w->gen = g;
		w->sweeping = 1;
	}
	if (!w->sweeping)
		return 0;
	if (pipe_sweep(w->pipe))
		return 1;
	w->sweeping = 0;
	atomic_store_explicit(&w->quiesced, g->seq, memory_order_release);
	return 1;
}

int worker_neigh_post(struct worker *w, uint32_t port, uint8_t family, const uint8_t *addr,
		      const uint8_t mac[6])
{
	return worker_neigh_cmd(w, WORKER_NEIGH_SET, port, family, addr, mac);
}

int worker_neigh_cmd(struct worker *w, uint8_t op, uint32_t port, uint8_t family,
		     const uint8_t *addr, const uint8_t mac[6])
{
	unsigned head = atomic_load_explicit(&w->neigh_head, memory_order_relaxed);
	unsigned tail = atomic_load_explicit(&w->neigh_tail, memory_order_acquire);
	struct worker_neigh_cmd *c;

	if (head - tail >= WORKER_NEIGH_RING)
		return -1;
	c = &w->neigh[head & (WORKER_NEIGH_RING - 1)];
	memset(c->addr, 0, sizeof(c->addr));
	memcpy(c->addr, addr, family == 4 ? 4 : 16);
	memcpy(c->mac, mac, 6);
	c->port = (uint8_t)port;
	c->family = family;
	c->op = op;
	atomic_store_explicit(&w->neigh_head, head + 1, memory_order_release);
	return 0;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* After a burst: the next hops its pipeline found no MAC for, into the
 * ring the main thread reads (worker_take_unresolved). */
static void post_unresolved(struct worker *w)
{
	struct pipe_nexthop hop[PIPE_UNRESOLVED];
	uint32_t n = pipe_unresolved(w->pipe, hop, PIPE_UNRESOLVED);
	unsigned head, tail;

	if (!n)
		return;
	if (w->be->ops->solicit) {	/* no kernel: the backend asks itself */
		uint64_t now = monotonic_ns();

		for (uint32_t k = 0; k < n; k++)
			w->be->ops->solicit(w->be, w->queue, &hop[k], now);
		return;
	}
	head = atomic_load_explicit(&w->resolve_head, memory_order_relaxed);
	tail = atomic_load_explicit(&w->resolve_tail, memory_order_acquire);
	for (uint32_t k = 0; k < n && head - tail < WORKER_RESOLVE_RING; k++)
		w->resolve[head++ & (WORKER_RESOLVE_RING - 1)] = hop[k];
	atomic_store_explicit(&w->resolve_head, head, memory_order_release);
}

uint32_t worker_take_unresolved(struct worker *w, struct pipe_nexthop *out, uint32_t max)
{
	unsigned tail = atomic_load_explicit(&w->resolve_tail, memory_order_relaxed);
	unsigned head = atomic_load_explicit(&w->resolve_head, memory_order_acquire);
	uint32_t n = 0;

	for (; tail != head && n < max; tail++)
		out[n++] = w->resolve[tail & (WORKER_RESOLVE_RING - 1)];
	atomic_store_explicit(&w->resolve_tail, tail, memory_order_release);
	return n;
}

void worker_post_mtu(struct worker *w, uint32_t port, uint32_t mtu)
{
	if (port >= PIPE_MAX_PORTS)
		return;
	atomic_store_explicit(&w->mtu[port], mtu, memory_order_relaxed);
	atomic_store_explicit(&w->mtu_gen,
			      atomic_load_explicit(&w->mtu_gen, memory_order_relaxed) + 1,
			      memory_order_release);	/* one writer: the main thread */
}

static void drain_mtu(struct worker *w)
{
	uint32_t gen = atomic_load_explicit(&w->mtu_gen, memory_order_acquire);

	if (gen == w->mtu_gen_seen)
		return;
	w->mtu_gen_seen = gen;
	for (uint32_t k = 0; k < w->be->nports; k++) {
		uint32_t mtu = atomic_load_explicit(&w->mtu[k], memory_order_relaxed);

		if (mtu)
			pipe_set_mtu(w->pipe, k, mtu);
	}
}

static void drain_neigh(struct worker *w)
{
	unsigned head = atomic_load_explicit(&w->neigh_head, memory_order_acquire);
	unsigned tail = atomic_load_explicit(&w->neigh_tail, memory_order_relaxed);

	if (head == tail)
		return;
	for (; tail != head; tail++) {
		const struct worker_neigh_cmd *c = &w->neigh[tail & (WORKER_NEIGH_RING - 1)];

		switch (c->op) {
		case WORKER_NEIGH_SET:
			/* -1: the table is half full; the entry waits for a
			 * later refresh, and the packets for it count as
			 * no-neighbour. */
			(void)pipe_neigh_set(w->pipe, c->port, c->family, c->addr, c->mac);
			break;
		case WORKER_NEIGH_FORGET:
			(void)pipe_neigh_forget(w->pipe, c->port, c->family, c->addr);
			break;
		case WORKER_NEIGH_PROBE:
			if (w->be->ops->probe) {
				struct pipe_nexthop hop = {.port = c->port, .family = c->family};

				memcpy(hop.addr, c->addr, sizeof(hop.addr));
				w->be->ops->probe(w->be, w->queue, &hop, c->mac);
			}
			break;
		}
	}
	atomic_store_explicit(&w->neigh_tail, tail, memory_order_release);
}

/* pipe_process over a run of frames from one port, so that the non-IP
 * count (pipe_stats keeps only a total) can be put on that port. */
static void process_run(struct worker *w, struct pipe_pkt *pkts, uint32_t n, uint64_t now)
{
	const struct pipe_stats *st = pipe_stats(w->pipe);
	uint64_t non_ip = st->non_ip;

	pipe_process(w->pipe, pkts, n, now);
	w->port[pkts[0].in_port].non_ip += st->non_ip - non_ip;
}

static void send_port(struct worker *w, uint32_t port)
{
	const struct backend_ops *ops = w->be->ops;
	uint32_t n = w->nout[port], sent, copied = 0;

	sent = ops->tx_burst(w->be, w->queue, port, w->out[port], w->out_handle[port], n,
			     &copied);
	w->port[port].tx_copied += copied;
	w->port[port].tx_by_address += sent - copied;
	for (uint32_t i = sent; i < n; i++) {
		const struct pipe_pkt *p = w->out[port][i];

		w->port[p->in_port].tx_full++;
		w->port[port].tx_lost_packets++;
		w->port[port].tx_lost_bytes += p->len;
	}
	w->nout[port] = 0;
}

/* A frame of another worker's flow that cannot reach it: counted here
 * as received and dropped (the owner never sees it). */
static void handoff_lost(struct worker *w, const struct pipe_pkt *p)
{
	w->port[p->in_port].handoff_lost++;
	w->port[p->in_port].handoff_lost_bytes += p->len;
}

/* The burst's frames of other workers' flows, copied into each owner's
 * ring (their buffers go back with the drops, after this). */
static void hand_off(struct worker *w, uint32_t n)
{
	uint64_t owners = 0;

	for (uint32_t i = 0; i < n; i++)
		owners |= 1ull << w->ho_out[i]->worker;
	while (owners) {
		uint32_t to = (uint32_t)__builtin_ctzll(owners), m = 0, sent;
		struct pipe_pkt *group[PIPE_BURST];

		owners &= owners - 1;
		for (uint32_t i = 0; i < n; i++)
			if (w->ho_out[i]->worker == to)
				group[m++] = w->ho_out[i];
		sent = handoff_send(handoff_ring(w->ho, w->queue, to), group, m);
		if (sent)
			handoff_wake(w->ho, to);
		for (uint32_t i = sent; i < m; i++)
			handoff_lost(w, group[i]);
	}
}

/* Run n frames of w->pkts (received, or handed over) through the
 * pipeline and send, drop or hand each on as it says. */
/* The frames the pipeline made itself (pipe_extra: fragments after the
 * first), after the burst's own, in the pipeline's memory: sent as
 * foreign frames (the backend copies them), then given back. */
static void send_extra(struct worker *w)
{
	struct pipe_pkt *ex;
	uint32_t n = pipe_extra(w->pipe, &ex);

	if (!n)
		return;
	_Static_assert(PIPE_MAX_EXTRA <= PIPE_BURST, "a port's extras fit its out list");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t out = ex[i].out_port < w->be->nports ? ex[i].out_port : 0;

		w->out[out][w->nout[out]] = &ex[i];
		w->out_handle[out][w->nout[out]++] = BACKEND_HANDLE_FOREIGN;
	}
	for (uint32_t port = 0; port < w->be->nports; port++)
		if (w->nout[port])
			send_port(w, port);
	pipe_extra_clear(w->pipe);
}

static void dispatch(struct worker *w, uint32_t n, uint64_t now)
{
	const struct backend_ops *ops = w->be->ops;
	uint32_t nports = w->be->nports, run = 0, nho = 0;

	for (uint32_t i = 1; i <= n; i++)
		if (i == n || w->pkts[i].in_port != w->pkts[run].in_port) {
			process_run(w, w->pkts + run, i - run, now);
			run = i;
		}
	for (uint32_t i = 0; i < n; i++) {
		struct pipe_pkt *p = &w->pkts[i];
		uint32_t out;

		if (p->verdict == PIPE_HANDOFF) {
			if (w->ho && p->worker < w->ho->n && p->worker != w->queue &&
			    p->len <= HANDOFF_FRAME_MAX)
				w->ho_out[nho++] = p;
			else
				handoff_lost(w, p);
			/* copied (or lost) before the buffer goes back below */
			w->drop_handle[p->in_port][w->ndrop[p->in_port]++] = w->handle[i];
			continue;
		}
		if (p->verdict == PIPE_DROP || p->verdict == PIPE_HELD) {
			if (p->verdict == PIPE_DROP && p->drop == PIPE_DROP_MALFORMED)
				w->port[p->in_port].malformed++;
			/* (held: the pipeline has its copy) */
			w->drop_handle[p->in_port][w->ndrop[p->in_port]++] = w->handle[i];
			continue;
		}
		/* the pipeline sets out_port = in_port for a bounce */
		out = p->verdict == PIPE_BOUNCE ? p->in_port : p->out_port;
		w->out[out][w->nout[out]] = p;
		w->out_handle[out][w->nout[out]++] = w->handle[i];
	}
	if (nho)
		hand_off(w, nho);
	for (uint32_t port = 0; port < nports; port++) {
		if (w->nout[port])
			send_port(w, port);
		if (w->ndrop[port]) {
			ops->free(w->be, w->queue, port, w->drop_handle[port], w->ndrop[port]);
			w->ndrop[port] = 0;
		}
	}
	send_extra(w);
}

/* Fragments that came before their first, parked by the pipeline: run
 * again once it has seen their first (dropped once their time is up),
 * as frames of a burst of their own. Returns how many ran. */
static uint32_t resume_fragments(struct worker *w)
{
	uint32_t n = pipe_frag_take(w->pipe, w->pkts, PIPE_BURST, 0);

	for (uint32_t i = 0; i < n; i++)
		w->handle[i] = BACKEND_HANDLE_FOREIGN;
	if (n)
		dispatch(w, n, pipe_clock_ns(w->pipe));
	return n;
}

/* One burst; returns frames received. */
static uint32_t worker_burst(struct worker *w)
{
	uint64_t now = 0;
	uint32_t n = w->be->ops->rx_burst(w->be, w->queue, w->pkts, w->handle, PIPE_BURST, &now);

	if (n)
		dispatch(w, n, now);
	return n;
}

/* The frames other workers handed over, a burst per ring at most, the
 * first ring taken in turn; sent on this worker's queues. */
static uint32_t take_handed(struct worker *w)
{
	uint32_t n = w->ho->n, total = 0;
	uint64_t now = 0;

	for (uint32_t j = 0; j < n; j++) {
		uint32_t from = (w->ho_next + j) % n, m;
		struct handoff_ring *r;

		if (from == w->queue)
			continue;
		r = handoff_ring(w->ho, from, w->queue);
		m = handoff_peek(r, w->pkts, PIPE_BURST);
		if (!m)
			continue;
		if (!now)	/* the backends' clock, once */
			now = monotonic_ns();
		for (uint32_t i = 0; i < m; i++)
			w->handle[i] = BACKEND_HANDLE_FOREIGN;
		dispatch(w, m, now);
		handoff_done(r);
		total += m;
	}
	w->ho_next = (w->ho_next + 1) % n;
	return total;
}

void worker_run(struct worker *w)
{
	const struct backend_ops *ops = w->be->ops;

	while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
		uint32_t work;

		drain_neigh(w);
		/* held packets whose next hop came, or whose time is up (the
		 * clock only while some are held) */
		if (pipe_held_count(w->pipe) && pipe_held_poll(w->pipe, monotonic_ns()))
			send_extra(w);
		drain_mtu(w);
		work = reload_poll(w);
		if (pipe_parked_count(w->pipe))
			work += resume_fragments(w);
		work += worker_burst(w);
		if (w->ho)
			work += take_handed(w);
		post_unresolved(w);
		work += ops->service(w->be, w->queue);
		work += ctl_job_poll(w);
		work += flowstate_poll(w);
		if (work)
			continue;
		if (w->be->monotonic_clock) {	/* idle: flows still expire */
			uint64_t t = monotonic_ns();

			if (t - w->last_tick_ns >= WORKER_TICK_NS) {
				pipe_tick(w->pipe, t);
				w->last_tick_ns = t;
			}
		}
		/* Idle: sleep in the backend until a frame arrives (it wakes
		 * sooner while its own TX frames are still out), or another
		 * worker hands this one frames (handoff.h). */
		if (w->ho && w->be->idle_waits_fd) {
			int fd, rc;

			if (handoff_sleep(w->ho, w->queue, &fd))
				continue;	/* frames came meanwhile */
			rc = ops->idle(w->be, w->queue, WORKER_IDLE_MS, fd);
			handoff_awake(w->ho, w->queue);
			if (rc < 0)
				break;
		} else if (ops->idle(w->be, w->queue, WORKER_IDLE_MS, -1) < 0) {
			break;
		}
	}
	drain_neigh(w);
	if (pipe_parked_count(w->pipe))	/* the last burst's firsts' */
		resume_fragments(w);
	pipe_frag_take(w->pipe, w->pkts, 0, UINT64_MAX);	/* the rest dropped */
	if (pipe_held_poll(w->pipe, UINT64_MAX))	/* the rest are dropped: stopping */
		send_extra(w);
}

void worker_enter(struct worker *w, int drop_caps)
{
	char name[16], err[160];

	snprintf(name, sizeof(name), "rampart-w%u", w->queue);
	pthread_setname_np(pthread_self(), name);
	if (!w->sandbox)
		return;
	/* A worker without its filter still forwards; it says so, once. */
	if (drop_caps && priv_drop(0, err, sizeof(err)) < 0)
		fprintf(stderr, "rampartd: worker %u keeps its capabilities: %s\n", w->queue, err);
	if (priv_worker_filter(err, sizeof(err)) < 0)
		fprintf(stderr, "rampartd: worker %u runs without its system call filter: %s\n",
			w->queue, err);
}

static void *worker_main(void *arg)
{
	worker_enter(arg, 0);	/* the thread inherited the dropped capabilities */
	worker_run(arg);
	return NULL;
}

int worker_start(struct worker *w)
{
	return pthread_create(&w->thread, NULL, worker_main, w);
}

void worker_stop(struct worker *w)
{
	atomic_store(&w->stop, 1);
	pthread_join(w->thread, NULL);
}

int workers_release_redirects(struct worker *const *w, uint32_t n, uint64_t *asked)
{
	uint32_t have = 0;

	if (*asked) {
		for (uint32_t k = 0; k < n; k++)
			if (atomic_load_explicit(&w[k]->redirect_drop_done, memory_order_acquire) !=
			    *asked)
				return 0;	/* looked at again on the next call */
		*asked = 0;
		return 1;
	}
	/* the flows counted only end (restores happen before the workers
	 * run), so none needed now is none needed for good */
	for (uint32_t k = 0; k < n; k++) {
		if (pipe_redirects_needed(w[k]->pipe))
			return 0;
		have += pipe_redirect_count(w[k]->pipe) != 0;
	}
	if (!have)
		return 0;
	*asked = atomic_load_explicit(&w[0]->redirect_drop_req, memory_order_relaxed) + 1;
	for (uint32_t k = 0; k < n; k++)
		atomic_store_explicit(&w[k]->redirect_drop_req, *asked, memory_order_release);
	return 0;
}
