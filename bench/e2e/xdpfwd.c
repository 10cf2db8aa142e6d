/* xdpfwd: the I/O ceiling of the end-to-end lab (bench/e2e/run.sh). A
 * minimal AF_XDP L2 forwarder with no policy: every frame received on port
 * A is sent out of port B by its address and the other way round. It uses
 * the project's own xsk/ code (the XDP program rampartd loads, in bridge
 * mode, and one UMEM shared by both sockets, as a rampartd worker does),
 * so it bounds what any AF_XDP firewall built on it can do on this path.
 *   xdpfwd IF_A IF_B [--cpu N] [--seconds S]
 * Runs until SIGINT/SIGTERM, or S seconds (default 600: the loop stops by
 * itself). Prints frames forwarded and dropped (TX ring full) at exit. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "port.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* One direction: a burst from in's RX ring onto out's TX ring. */
static uint32_t forward(struct xsk_queue *in, struct xsk_queue *out, uint64_t *fwd,
			uint64_t *drop)
{
	uint32_t ridx = 0, tidx = 0, n, room;

	n = xsk_ring_cons__peek(&in->rx, XSK_BATCH, &ridx);
	if (!n)
		return 0;
	room = xsk_prod_nb_free(&out->tx, n);
	if (room < n)
		xsk_queue_reap(out);
	room = xsk_prod_nb_free(&out->tx, n);
	if (room > n)
		room = n;
	if (room && xsk_ring_prod__reserve(&out->tx, room, &tidx) != room)
		room = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&in->rx, ridx + i);

		if (i < room) {
			struct xdp_desc *t = xsk_ring_prod__tx_desc(&out->tx, tidx + i);

			t->addr = d->addr;
			t->len = d->len;
			t->options = 0;
		} else {
			xsk_pool_put(in->pool, d->addr);
		}
	}
	xsk_ring_cons__release(&in->rx, n);
	if (room) {
		xsk_ring_prod__submit(&out->tx, room);
		out->tx_inflight += room;
		xsk_queue_kick_tx(out);
	}
	*fwd += room;
	*drop += n - room;
	return n;
}

int main(int argc, char **argv)
{
	static struct xsk_port ports[2];
	static struct xsk_umem_pool pool;
	struct xsk_prog_cfg cfg = { 0 };	/* bridge mode: every frame to the socket */
	uint64_t fwd[2] = { 0 }, drop[2] = { 0 };
	struct timespec t0, t;
	char err[256];
	int cpu = -1;
	double seconds = 600;

	if (argc < 3) {
		fprintf(stderr, "usage: xdpfwd IF_A IF_B [--cpu N] [--seconds S]\n");
		return 2;
	}
	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--cpu"))
			cpu = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else {
			fprintf(stderr, "xdpfwd: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			perror("xdpfwd: sched_setaffinity");
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (xsk_pool_create(&pool, 2 * XSK_NUM_FRAMES, err, sizeof(err))) {
		fprintf(stderr, "xdpfwd: %s\n", err);
		return 1;
	}
	for (int i = 0; i < 2; i++) {
		if (xsk_port_open(&ports[i], argv[1 + i], xsk_prog_default_path(), &cfg, 1, &pool,
				  err, sizeof(err))) {
			fprintf(stderr, "xdpfwd: %s\n", err);
			if (i)
				xsk_port_close(&ports[0]);
			xsk_pool_destroy(&pool);
			return 1;
		}
	}
	struct xsk_queue *q[2] = { &ports[0].queues[0], &ports[1].queues[0] };

	if (!q[0]->shared && !q[1]->shared)
		fprintf(stderr, "xdpfwd: warning: sockets do not share the UMEM\n");
	if (q[0]->pool != q[1]->pool) {
		fprintf(stderr, "xdpfwd: the kernel refused the shared UMEM; this forwarder "
			"needs it (forwards by address)\n");
		goto out;
	}
	fprintf(stderr, "xdpfwd: forwarding %s <-> %s (%s, %s mode)\n", argv[1], argv[2],
		xsk_prog_mode_name(&ports[0].prog), q[0]->zerocopy ? "zero-copy" : "copy");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t loop = 0; !stop; loop++) {
		uint32_t work = forward(q[0], q[1], &fwd[0], &drop[0]) +
				forward(q[1], q[0], &fwd[1], &drop[1]);

		work += xsk_queue_reap(q[0]) + xsk_queue_reap(q[1]);
		work += xsk_queues_refill(q, 2, (uint32_t)loop & 1);
		if (!work && !q[0]->tx_inflight && !q[1]->tx_inflight) {
			struct pollfd p[2] = { { q[0]->fd, POLLIN, 0 }, { q[1]->fd, POLLIN, 0 } };

			(void)poll(p, 2, 10);
		}
		if ((loop & 1023) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > seconds)
				break;
		}
	}
	printf("xdpfwd: forwarded %llu A->B, %llu B->A; dropped (TX ring full) %llu, %llu\n",
	       (unsigned long long)fwd[0], (unsigned long long)fwd[1],
	       (unsigned long long)drop[0], (unsigned long long)drop[1]);
out:
	xsk_port_close(&ports[0]);
	xsk_port_close(&ports[1]);
	xsk_pool_destroy(&pool);
	return 0;
}
