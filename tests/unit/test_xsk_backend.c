/* The AF_XDP backend's ring work without a kernel: its RX and TX rings are
 * laid out in memory as the kernel shares them (producer and consumer
 * words, descriptors), its UMEM is a mapped area of frames. What the lab
 * cannot aim at: multi-buffer chains (XDP_PKT_CONTD) joined whole into a
 * slot, a chain the burst's peek cuts waiting for the next burst, a
 * chain longer than a slot dropped and counted, and frames longer than
 * a UMEM frame sent as chains (or not at all without multi-buffer), every
 * frame given back to its UMEM. tests/lab/test_jumbo.sh runs the same
 * code against the kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/if_xdp.h>

#include "backend_xsk.h"

#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif

#define RING 64u

struct fake_ring {
	uint32_t producer, consumer, flags;
	struct xdp_desc desc[RING];
	uint64_t addr[RING];
};

static struct xsk_port port[2];
static struct fake_ring rx[2], tx[2], fill[2], comp[2];
static struct xsk_umem_pool pool;
static struct backend_xsk bx;

static void ring_cons(struct xsk_ring_cons *r, struct fake_ring *f, void *slots)
{
	*r = (struct xsk_ring_cons){.cached_prod = f->producer, .cached_cons = f->consumer,
				    .mask = RING - 1, .size = RING, .producer = &f->producer,
				    .consumer = &f->consumer, .ring = slots, .flags = &f->flags};
}

static void ring_prod(struct xsk_ring_prod *r, struct fake_ring *f, void *slots)
{
	*r = (struct xsk_ring_prod){.cached_prod = f->producer, .cached_cons = f->consumer + RING,
				    .mask = RING - 1, .size = RING, .producer = &f->producer,
				    .consumer = &f->consumer, .ring = slots, .flags = &f->flags};
}

/* Two ports, one queue each, both on one UMEM (the worker's), sg as given. */
static int setup(void **state, int sg)
{
	char err[128];

	(void)state;
	memset(port, 0, sizeof(port));
	memset(rx, 0, sizeof(rx));
	memset(tx, 0, sizeof(tx));
	memset(fill, 0, sizeof(fill));
	memset(comp, 0, sizeof(comp));
	if (xsk_pool_create(&pool, 256, err, sizeof(err)))
		return -1;
	pool.sg = sg;
	for (int p = 0; p < 2; p++) {
		struct xsk_queue *q = &port[p].queues[0];

		port[p].nqueues = 1;
		q->pool = &pool;
		q->sg = sg;
		q->fd = -1;
		ring_cons(&q->rx, &rx[p], rx[p].desc);
		ring_prod(&q->tx, &tx[p], tx[p].desc);
		ring_prod(&q->fill, &fill[p], fill[p].addr);
		ring_cons(&q->comp, &comp[p], comp[p].addr);
	}
	return backend_xsk_init(&bx, (struct xsk_port *const[]){&port[0], &port[1]}, 2, 1);
}

static int setup_sg(void **state) { return setup(state, 1); }
static int setup_no_sg(void **state) { return setup(state, 0); }

static int teardown(void **state)
{
	(void)state;
	backend_xsk_fini(&bx);
	xsk_pool_destroy(&pool);
	return 0;
}

/* The kernel's side: a frame of len bytes (byte i = seed + i) received
 * on port p, in frames of at most `part` bytes, as one descriptor or a
 * chain. */
static void kernel_rx(int p, uint32_t len, uint32_t part, uint8_t seed)
{
	uint32_t off = 0;

	while (off < len) {
		uint32_t n = len - off < part ? len - off : part;
		uint64_t a = xsk_pool_get(&pool);
		struct xdp_desc *d = &rx[p].desc[rx[p].producer++ % RING];

		for (uint32_t i = 0; i < n; i++)
			xsk_pool_data(&pool, a)[i] = (uint8_t)(seed + off + i);
		off += n;
		*d = (struct xdp_desc){.addr = a, .len = n, .options = off < len ? XDP_PKT_CONTD : 0};
	}
}

static void assert_frame(const struct pipe_pkt *p, uint32_t len, uint8_t seed)
{
	assert_int_equal(p->len, len);
	for (uint32_t i = 0; i < len; i++)
		if (p->data[i] != (uint8_t)(seed + i))
			fail_msg("byte %u of a %u-byte frame", i, len);
}

static uint32_t rx_burst(struct pipe_pkt *pkts, uint64_t *handle, uint32_t n)
{
	uint64_t now = 0;

	return bx.be.ops->rx_burst(&bx.be, 0, pkts, handle, n, &now);
}

static void test_chains_joined(void **state)
{
	struct pipe_pkt pkts[8];
	uint64_t handle[8];
	uint32_t free0 = pool.nfree;
	(void)state;

	kernel_rx(0, 100, XSK_FRAME_SIZE, 1);
	kernel_rx(0, 9000, XSK_FRAME_SIZE, 2);		/* 4096 + 4096 + 808 */
	kernel_rx(0, 4097, XSK_FRAME_SIZE, 3);		/* 4096 + 1 */
	kernel_rx(0, 60, XSK_FRAME_SIZE, 4);
	assert_int_equal(pool.nfree, free0 - 7);
	assert_int_equal(rx_burst(pkts, handle, 8), 4);
	assert_frame(&pkts[0], 100, 1);
	assert_false(handle[0] & BACKEND_HANDLE_FOREIGN);	/* in place */
	assert_frame(&pkts[1], 9000, 2);
	assert_int_equal(handle[1], BACKEND_HANDLE_FOREIGN);	/* joined in a slot */
	assert_int_equal(pkts[1].room, XSK_JOINED_ROOM);
	assert_frame(&pkts[2], 4097, 3);
	assert_int_equal(handle[2], BACKEND_HANDLE_FOREIGN);
	assert_ptr_not_equal(pkts[1].data, pkts[2].data);	/* a slot each */
	assert_frame(&pkts[3], 60, 4);
	assert_int_equal(rx[0].consumer, 7);
	/* the chains' frames are back; the two in place are the worker's */
	assert_int_equal(pool.nfree, free0 - 2);
	bx.be.ops->free(&bx.be, 0, 0, (uint64_t[]){handle[0], handle[3]}, 2);
	assert_int_equal(pool.nfree, free0);
}

static void test_chain_cut_by_the_burst_waits(void **state)
{
	struct pipe_pkt pkts[8];
	uint64_t handle[8];
	(void)state;

	kernel_rx(0, 200, XSK_FRAME_SIZE, 5);
	kernel_rx(0, 8192 + 10, XSK_FRAME_SIZE, 6);	/* three descriptors */
	/* room for two descriptors: the frame, and not the chain's start */
	assert_int_equal(rx_burst(pkts, handle, 2), 1);
	assert_frame(&pkts[0], 200, 5);
	assert_int_equal(rx[0].consumer, 1);
	bx.be.ops->free(&bx.be, 0, 0, handle, 1);
	assert_int_equal(rx_burst(pkts, handle, 8), 1);
	assert_frame(&pkts[0], 8202, 6);
	assert_int_equal(rx[0].consumer, 4);
	assert_int_equal(pool.nfree, pool.nframes);
	/* a chain longer than a slot: dropped, counted, its frames back */
	kernel_rx(1, 3 * XSK_FRAME_SIZE, XSK_FRAME_SIZE, 7);
	kernel_rx(1, 64, XSK_FRAME_SIZE, 8);
	assert_int_equal(rx_burst(pkts, handle, 8), 1);
	assert_frame(&pkts[0], 64, 8);
	assert_int_equal(bx.w[0].too_long[1], 1);
	assert_int_equal(bx.w[0].too_long[0], 0);
	bx.be.ops->free(&bx.be, 0, 1, handle, 1);
	assert_int_equal(pool.nfree, pool.nframes);
}

/* What went out of port p since tx[p].consumer: n descriptors, checked
 * against a frame of len bytes from seed, then completed (the kernel
 * gives the frames back through the completion ring). */
static void assert_sent_chain(int p, uint32_t first, uint32_t len, uint8_t seed)
{
	uint32_t off = 0, k = first;

	while (off < len) {
		const struct xdp_desc *d = &tx[p].desc[k++ % RING];
		uint32_t n = len - off < XSK_FRAME_SIZE ? len - off : XSK_FRAME_SIZE;

		assert_int_equal(d->len, n);
		for (uint32_t i = 0; i < n; i++)
			if (xsk_pool_data(&pool, d->addr)[i] != (uint8_t)(seed + off + i))
				fail_msg("byte %u of a sent %u-byte frame", off + i, len);
		off += n;
		assert_int_equal(d->options, off < len ? XDP_PKT_CONTD : 0);
	}
}

/* The kernel sent all port p's TX ring holds: its frames wait in the
 * completion ring, not yet reaped. */
static void kernel_sent_all(int p)
{
	while (tx[p].consumer != tx[p].producer) {
		comp[p].addr[comp[p].producer++ % RING] = tx[p].desc[tx[p].consumer % RING].addr;
		tx[p].consumer++;
	}
}

static void complete_all(int p)
{
	kernel_sent_all(p);
	xsk_queue_reap(&port[p].queues[0]);
}

static void test_long_frames_sent_as_chains(void **state)
{
	static uint8_t big[9600];
	struct pipe_pkt pkts[8], *out[3];
	uint64_t handle[8];
	uint32_t copied = 0;
	(void)state;

	kernel_rx(0, 300, XSK_FRAME_SIZE, 9);
	assert_int_equal(rx_burst(pkts, handle, 8), 1);
	for (uint32_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(10 + i);
	struct pipe_pkt made = {.data = big, .len = sizeof(big), .room = sizeof(big)};
	struct pipe_pkt made2 = {.data = big, .len = XSK_FRAME_SIZE, .room = sizeof(big)};

	out[0] = &pkts[0];	/* in place: by its address */
	out[1] = &made;		/* foreign, 9600 bytes: a chain of three */
	out[2] = &made2;	/* foreign, exactly a frame: one */
	assert_int_equal(bx.be.ops->tx_burst(&bx.be, 0, 1, out,
					      (uint64_t[]){handle[0], BACKEND_HANDLE_FOREIGN,
							   BACKEND_HANDLE_FOREIGN}, 3, &copied), 3);
	assert_int_equal(copied, 2);
	assert_int_equal(tx[1].producer, 5);
	assert_int_equal(tx[1].desc[0].addr, handle[0]);
	assert_int_equal(tx[1].desc[0].options, 0);
	assert_sent_chain(1, 1, sizeof(big), 10);
	assert_sent_chain(1, 4, XSK_FRAME_SIZE, 10);
	assert_int_equal(port[1].queues[0].tx_inflight, 5);
	complete_all(1);
	assert_int_equal(pool.nfree, pool.nframes);
}

static void test_ring_room_counts_a_chain(void **state)
{
	static uint8_t big[9000];
	struct pipe_pkt made = {.data = big, .len = sizeof(big), .room = sizeof(big)};
	struct pipe_pkt *out[RING];
	uint64_t handle[RING];
	uint32_t copied = 0, sent;
	(void)state;

	/* 62 slots taken: a chain of three does not fit, nor what follows */
	tx[1].producer = tx[1].consumer = 0;
	port[1].queues[0].tx.cached_prod = 0;
	port[1].queues[0].tx.cached_cons = RING;
	for (uint32_t i = 0; i < RING; i++) {
		out[i] = &made;
		handle[i] = BACKEND_HANDLE_FOREIGN;
	}
	made.len = 100;
	sent = bx.be.ops->tx_burst(&bx.be, 0, 1, out, handle, 62, &copied);
	assert_int_equal(sent, 62);
	made.len = sizeof(big);
	sent = bx.be.ops->tx_burst(&bx.be, 0, 1, out, handle, 1, &copied);
	assert_int_equal(sent, 0);
	assert_int_equal(tx[1].producer, 62);
	complete_all(1);	/* room again: it goes */
	sent = bx.be.ops->tx_burst(&bx.be, 0, 1, out, handle, 1, &copied);
	assert_int_equal(sent, 1);
	assert_int_equal(tx[1].producer, 65);
	complete_all(1);
	/* five slots free: the first chain of three goes, the second not */
	made.len = 100;
	assert_int_equal(bx.be.ops->tx_burst(&bx.be, 0, 1, out, handle, 59, &copied), 59);
	made.len = sizeof(big);
	assert_int_equal(bx.be.ops->tx_burst(&bx.be, 0, 1, out, handle, 2, &copied), 1);
	assert_int_equal(tx[1].producer, 65 + 59 + 3);
	complete_all(1);
	assert_int_equal(pool.nfree, pool.nframes);
}

static void test_no_multi_buffer(void **state)
{
	static uint8_t big[5000];
	struct pipe_pkt made = {.data = big, .len = sizeof(big), .room = sizeof(big)};
	struct pipe_pkt *out[1] = {&made};
	uint32_t copied = 0;
	(void)state;

	assert_null(bx.w[0].joined);	/* no slots without multi-buffer */
	assert_int_equal(backend_xsk_frame_max(&bx, 0), XSK_FRAME_SIZE);
	/* longer than a frame: not sent (the MTU keeps such frames away) */
	assert_int_equal(bx.be.ops->tx_burst(&bx.be, 0, 1, out,
					      (uint64_t[]){BACKEND_HANDLE_FOREIGN}, 1, &copied), 0);
	assert_int_equal(tx[1].producer, 0);
	made.len = XSK_FRAME_SIZE;
	assert_int_equal(bx.be.ops->tx_burst(&bx.be, 0, 1, out,
					      (uint64_t[]){BACKEND_HANDLE_FOREIGN}, 1, &copied), 1);
	complete_all(1);
	assert_int_equal(pool.nfree, pool.nframes);
}

/* A frame that can never go out of the port (longer than a UMEM frame,
 * no multi-buffer: bridged from a port with it) does not stop the
 * frames behind it: it is moved behind them and not sent. */
static void test_unsendable_does_not_stop_the_rest(void **state)
{
	static uint8_t big[5000];
	struct pipe_pkt pkts[8], made = {.data = big, .len = sizeof(big), .room = sizeof(big)};
	struct pipe_pkt *out[2];
	uint64_t handle[8], out_handle[2];
	uint32_t copied = 0;
	(void)state;

	kernel_rx(0, 100, XSK_FRAME_SIZE, 7);
	assert_int_equal(rx_burst(pkts, handle, 8), 1);
	out[0] = &made;
	out[1] = &pkts[0];
	out_handle[0] = BACKEND_HANDLE_FOREIGN;
	out_handle[1] = handle[0];
	assert_int_equal(bx.be.ops->tx_burst(&bx.be, 0, 1, out, out_handle, 2, &copied), 1);
	assert_int_equal(copied, 0);		/* by its address */
	assert_ptr_equal(out[0], &pkts[0]);	/* what was not sent, after */
	assert_int_equal(out_handle[0], handle[0]);
	assert_ptr_equal(out[1], &made);
	assert_int_equal(out_handle[1], BACKEND_HANDLE_FOREIGN);
	assert_int_equal(tx[1].producer, 1);
	assert_int_equal(tx[1].desc[0].len, 100);
	complete_all(1);
	assert_int_equal(pool.nfree, pool.nframes);
}

/* The same when the UMEM has no free frame for the copies until the
 * completions are reaped: the second look, after the reap, meets the
 * unsendable frame and still moves it behind the frames after it. */
static void test_unsendable_after_a_reap(void **state)
{
	static uint8_t big[5000], small[100];
	struct pipe_pkt made = {.data = big, .len = sizeof(big), .room = sizeof(big)};
	struct pipe_pkt a = {.data = small, .len = sizeof(small), .room = sizeof(small)};
	struct pipe_pkt b = a, *out[3];
	uint64_t held[256], out_handle[3];
	uint32_t nheld = 0, copied = 0;
	(void)state;

	while (pool.nfree > 2)	/* the rest elsewhere (fill rings, other ports) */
		held[nheld++] = xsk_pool_get(&pool);
	out[0] = &a;
	out[1] = &b;
	out_handle[0] = out_handle[1] = BACKEND_HANDLE_FOREIGN;
	assert_int_equal(bx.be.ops->tx_burst(&bx.be, 0, 1, out, out_handle, 2, &copied), 2);
	kernel_sent_all(1);	/* both frames wait in the completion ring */
	assert_int_equal(pool.nfree, 0);
	out[0] = &a;
	out[1] = &made;
	out[2] = &b;
	out_handle[2] = BACKEND_HANDLE_FOREIGN;
	assert_int_equal(bx.be.ops->tx_burst(&bx.be, 0, 1, out, out_handle, 3, &copied), 2);
	assert_int_equal(copied, 2);
	assert_ptr_equal(out[0], &a);
	assert_ptr_equal(out[1], &b);
	assert_ptr_equal(out[2], &made);	/* not sent, after */
	assert_int_equal(tx[1].producer, 4);
	complete_all(1);
	while (nheld)
		xsk_pool_put(&pool, held[--nheld]);
	assert_int_equal(pool.nfree, pool.nframes);
}

static void test_frame_max(void **state)
{
	(void)state;
	assert_int_equal(backend_xsk_frame_max(&bx, 0), XSK_JOINED_ROOM);
	assert_non_null(bx.w[0].joined);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_frame_max, setup_sg, teardown),
		cmocka_unit_test_setup_teardown(test_chains_joined, setup_sg, teardown),
		cmocka_unit_test_setup_teardown(test_chain_cut_by_the_burst_waits, setup_sg, teardown),
		cmocka_unit_test_setup_teardown(test_long_frames_sent_as_chains, setup_sg, teardown),
		cmocka_unit_test_setup_teardown(test_ring_room_counts_a_chain, setup_sg, teardown),
		cmocka_unit_test_setup_teardown(test_no_multi_buffer, setup_no_sg, teardown),
		cmocka_unit_test_setup_teardown(test_unsendable_does_not_stop_the_rest, setup_no_sg,
						teardown),
		cmocka_unit_test_setup_teardown(test_unsendable_after_a_reap, setup_no_sg, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
