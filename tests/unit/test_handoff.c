/* The rings between workers (daemon/handoff.c): a ring takes as many
 * frames as it has slots and refuses the rest, gives them back in order
 * with their length, port and one more handoff counted, wraps around;
 * frames longer than a slot take two;
 * a worker going to sleep is woken by frames handed to it (and only
 * then), and does not sleep on frames already waiting; between two
 * threads (one producing, one consuming, as two workers
 * do) loses, duplicates or reorders nothing. */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "handoff.h"

static void frame_of(uint8_t *b, uint32_t seq, uint32_t len)
{
	memset(b, (uint8_t)seq, len);
	memcpy(b, &seq, sizeof(seq));
}

static void sizes(void **state)
{
	struct handoff h;
	(void)state;

	assert_int_equal(handoff_init(&h, 1), -1);	/* one worker needs none */
	assert_int_equal(handoff_init(&h, HANDOFF_MAX_WORKERS + 1), -1);
	for (uint32_t n = 2; n <= HANDOFF_MAX_WORKERS; n *= 2) {
		assert_int_equal(handoff_init(&h, n), 0);
		assert_true(h.slots >= 32 && h.slots <= 1024);
		assert_int_equal(h.slots & (h.slots - 1), 0);
		assert_true((uint64_t)h.slots * n * (n - 1) <= 65536u || h.slots == 32);
		handoff_free(&h);
	}
}

static void full_ring_and_order(void **state)
{
	struct handoff h;
	struct handoff_ring *r;
	static uint8_t buf[PIPE_BURST][256];
	struct pipe_pkt p[PIPE_BURST], *pp[PIPE_BURST], in[PIPE_BURST];
	uint32_t sent = 0, got = 0, seq = 0;
	(void)state;

	assert_int_equal(handoff_init(&h, 2), 0);
	r = handoff_ring(&h, 0, 1);
	for (uint32_t round = 0; round < 3 * h.slots / PIPE_BURST + 5; round++) {
		uint32_t k;

		for (k = 0; k < PIPE_BURST; k++) {
			frame_of(buf[k], seq + k, 60 + k);
			p[k] = (struct pipe_pkt){ .data = buf[k], .len = 60 + k, .in_port = (uint8_t)(k & 3),
						  .homed = 0 };
			pp[k] = &p[k];
		}
		k = handoff_send(r, pp, PIPE_BURST);
		seq += k;
		sent += k;
		if (round < h.slots / PIPE_BURST)
			assert_int_equal(k, PIPE_BURST);
		if (sent - got == h.slots) {	/* full: refuses, then drain half */
			assert_int_equal(handoff_send(r, pp, 1), 0);
			for (uint32_t d = 0; d < h.slots / 2; d += PIPE_BURST) {
				uint32_t m = handoff_peek(r, in, PIPE_BURST);

				assert_int_equal(m, PIPE_BURST);
				for (uint32_t i = 0; i < m; i++) {
					uint32_t s;

					memcpy(&s, in[i].data, sizeof(s));
					assert_int_equal(s, got + i);
					assert_int_equal(in[i].len, 60 + (s % PIPE_BURST));
					assert_int_equal(in[i].in_port, (s % PIPE_BURST) & 3);
					assert_int_equal(in[i].homed, 1);
					assert_int_equal(in[i].room, HANDOFF_FRAME);
				}
				handoff_done(r);
				got += m;
			}
		}
	}
	assert_true(sent > 2 * h.slots);	/* it wrapped */
	handoff_free(&h);
}

/* Frames longer than a slot take as many as they need (up to
 * HANDOFF_FRAME_MAX bytes, a DPDK jumbo frame: five): every byte
 * arrives, in order with the short ones around them, also when a long
 * frame starts in one of the ring's last slots (its bytes run into the
 * spill room, and the next frame is at the slot after); a ring counts slots,
 * so a long frame that does not fit is refused and so is what follows;
 * room says how far the frame may grow. */
static void long_frames(void **state)
{
	struct handoff h;
	struct handoff_ring *r;
	static uint8_t buf[4][HANDOFF_FRAME_MAX];
	struct pipe_pkt p[4], *pp[4], in[PIPE_BURST];
	const uint32_t lens[4] = { 60, HANDOFF_FRAME_MAX, HANDOFF_FRAME + 1, handoff_span_room(3) };
	uint32_t seq = 0, got = 0;
	(void)state;

	assert_int_equal(handoff_init(&h, 2), 0);
	/* (got: frames taken, checked against what the ring counted below) */
	r = handoff_ring(&h, 0, 1);
	/* a frame waiting in the ring after r in memory, which r's spill
	 * room keeps apart */
	frame_of(buf[0], 0xabcdef, 60);
	p[0] = (struct pipe_pkt){ .data = buf[0], .len = 60 };
	pp[0] = &p[0];
	assert_true(handoff_ring(&h, 1, 0) == r + 1);
	assert_int_equal(handoff_send(r + 1, pp, 1), 1);
	/* rounds of short, longest, just-too-long-for-one, three slots' worth:
	 * 1 + 5 + 2 + 3 = 11 slots a round; over 3 ring lengths, so long
	 * frames start at every slot, the last ones among them (11 and the
	 * slot count are coprime) */
	assert_int_equal(handoff_span(lens[1]), HANDOFF_SPAN_MAX);
	assert_int_equal(handoff_span(lens[3]), 3);
	for (uint32_t round = 0; round < 3 * h.slots; round++) {
		uint32_t m;

		for (uint32_t k = 0; k < 4; k++) {
			for (uint32_t b = 0; b < lens[k]; b++)
				buf[k][b] = (uint8_t)(seq + k + b * 7);
			p[k] = (struct pipe_pkt){ .data = buf[k], .len = lens[k], .in_port = (uint8_t)k };
			pp[k] = &p[k];
		}
		assert_int_equal(handoff_send(r, pp, 4), 4);
		m = handoff_peek(r, in, PIPE_BURST);
		assert_int_equal(m, 4);
		for (uint32_t k = 0; k < 4; k++) {
			uint32_t bad = 0;

			assert_int_equal(in[k].len, lens[k]);
			assert_int_equal(in[k].in_port, k);
			assert_int_equal(in[k].room, handoff_span_room(handoff_span(lens[k])));
			assert_true(in[k].room >= lens[k]);
			for (uint32_t b = 0; b < lens[k]; b++)
				bad += in[k].data[b] != (uint8_t)(seq + k + b * 7);
			assert_int_equal(bad, 0);
		}
		handoff_done(r);
		seq += 4;
		got += 4;
	}
	assert_int_equal(atomic_load(&r->head), 11 * 3 * h.slots);
	assert_int_equal(got, 4 * 3 * h.slots);	/* four frames a round, all taken */
	/* full: slots - 1 short frames leave one slot, too few for a long one,
	 * which is refused with the short one behind it */
	{
		struct pipe_pkt shortp = { .data = buf[0], .len = 60 }, longp = { .data = buf[1],
										   .len = 3000 };
		struct pipe_pkt *mixed[2] = { &longp, &shortp };

		for (uint32_t k = 0; k + 1 < h.slots; k++)
			assert_int_equal(handoff_send(r, (struct pipe_pkt *const[]){ &shortp }, 1), 1);
		assert_int_equal(handoff_send(r, mixed, 2), 0);
		assert_int_equal(handoff_send(r, mixed + 1, 1), 1);	/* one short still fits */
		assert_int_equal(handoff_peek(r, in, PIPE_BURST), PIPE_BURST);
		handoff_done(r);
		assert_int_equal(handoff_send(r, mixed, 2), 2);
	}
	assert_int_equal(handoff_peek(r + 1, in, PIPE_BURST), 1);
	frame_of(buf[0], 0xabcdef, 60);
	assert_memory_equal(in[0].data, buf[0], 60);
	handoff_free(&h);
}

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

static void wake_only_a_sleeper(void **state)
{
	struct handoff h;
	static uint8_t buf[64];
	struct pipe_pkt p = { .data = buf, .len = 64 }, *pp = &p, in[4];
	int fd = -1;
	(void)state;

	assert_int_equal(handoff_init(&h, 2), 0);
	handoff_wake(&h, 1);			/* awake: no system call, no wake */
	assert_false(readable(h.wake[1].fd));
	assert_int_equal(handoff_sleep(&h, 1, &fd), 0);
	assert_int_equal(fd, h.wake[1].fd);
	assert_false(readable(fd));
	assert_int_equal(handoff_send(handoff_ring(&h, 0, 1), &pp, 1), 1);
	handoff_wake(&h, 1);
	assert_true(readable(fd));		/* the sleeper's poll returns */
	handoff_awake(&h, 1);
	assert_false(readable(fd));		/* emptied */
	/* a frame is waiting: no sleep, and the worker counts as awake */
	assert_int_equal(handoff_sleep(&h, 1, &fd), 1);
	handoff_wake(&h, 1);
	assert_false(readable(h.wake[1].fd));
	assert_int_equal(handoff_peek(handoff_ring(&h, 0, 1), in, 4), 1);
	handoff_done(handoff_ring(&h, 0, 1));
	assert_int_equal(handoff_sleep(&h, 1, &fd), 0);
	handoff_awake(&h, 1);
	handoff_free(&h);
}

#define STRESS_FRAMES 2000000u

struct stress {
	struct handoff_ring *r;
	uint32_t bad;
};

static void *producer(void *arg)
{
	struct stress *st = arg;
	static uint8_t buf[PIPE_BURST][64];
	struct pipe_pkt p[PIPE_BURST], *pp[PIPE_BURST];
	uint32_t seq = 0;

	while (seq < STRESS_FRAMES) {
		uint32_t m = STRESS_FRAMES - seq < PIPE_BURST ? STRESS_FRAMES - seq : PIPE_BURST, k;

		for (k = 0; k < m; k++) {
			frame_of(buf[k], seq + k, 64);
			p[k] = (struct pipe_pkt){ .data = buf[k], .len = 64 };
			pp[k] = &p[k];
		}
		seq += handoff_send(st->r, pp, m);	/* a full ring: the rest again */
	}
	return NULL;
}

static void two_threads(void **state)
{
	struct handoff h;
	struct stress st = { 0 };
	struct pipe_pkt in[PIPE_BURST];
	pthread_t t;
	uint32_t next = 0;
	(void)state;

	assert_int_equal(handoff_init(&h, 2), 0);
	st.r = handoff_ring(&h, 1, 0);
	assert_int_equal(pthread_create(&t, NULL, producer, &st), 0);
	while (next < STRESS_FRAMES) {
		uint32_t m = handoff_peek(st.r, in, PIPE_BURST);

		for (uint32_t i = 0; i < m; i++) {
			uint32_t s;

			memcpy(&s, in[i].data, sizeof(s));
			st.bad += s != next + i || in[i].data[63] != (uint8_t)s;
		}
		handoff_done(st.r);
		next += m;
	}
	pthread_join(t, NULL);
	assert_int_equal(st.bad, 0);
	assert_int_equal(handoff_peek(st.r, in, PIPE_BURST), 0);
	handoff_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sizes),
		cmocka_unit_test(full_ring_and_order),
		cmocka_unit_test(long_frames),
		cmocka_unit_test(wake_only_a_sleeper),
		cmocka_unit_test(two_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
