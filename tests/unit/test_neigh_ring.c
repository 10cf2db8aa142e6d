/* daemon/neigh_ring.c: the DPDK router's ARP/ND news from the queues to
 * the main thread's cache, and its orders back to the workers: bounded
 * per tick however fast a queue pushes, and every worker told. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "neigh_ring.h"
#include "solicit_budget.h"
#include "worker.h"

static const uint8_t mac_a[6] = {2, 0xcc, 0, 0, 0, 0xa};

static struct np_learned host(uint32_t i, uint8_t how)
{
	struct np_learned l = {.family = 4, .how = how, .addr = {10, 60, (uint8_t)(i >> 8), (uint8_t)i}};

	memcpy(l.mac, mac_a, 6);
	return l;
}

/* The commands a worker's ring holds, taken as the worker would. */
static uint32_t worker_cmds(struct worker *w, struct worker_neigh_cmd *out, uint32_t max)
{
	unsigned tail = atomic_load(&w->neigh_tail), head = atomic_load(&w->neigh_head);
	uint32_t n = 0;

	for (; tail != head && n < max; tail++)
		out[n++] = w->neigh[tail & (WORKER_NEIGH_RING - 1)];
	atomic_store(&w->neigh_tail, tail);
	return n;
}

/* What two queues pushed reaches the cache, a full ring refuses more,
 * and a drain empties it. */
static void test_drain(void **state)
{
	static struct neigh_cache c;
	static struct nr_ring r[2];
	struct nr_ring *const rings[2] = {&r[0], &r[1]};
	(void)state;

	nc_init(&c, NULL);
	for (uint32_t i = 0; i < NR_SLOTS; i++) {
		struct np_learned l = host(i, NP_LEARN);

		assert_int_equal(nr_push(&r[0], 1, &l), 1);
	}
	{
		struct np_learned l = host(NR_SLOTS, NP_LEARN);

		assert_int_equal(nr_push(&r[0], 1, &l), 0);	/* full */
		assert_int_equal(nr_push(&r[1], 2, &l), 1);
	}
	assert_int_equal(nr_drain(rings, 2, &c, 0), NR_SLOTS + 1);
	assert_int_equal(c.n, NR_SLOTS + 1);
	assert_int_equal(c.e[NR_SLOTS].port, 2);
	assert_int_equal(nr_drain(rings, 2, &c, 0), 0);
}

/* The same neighbour's request for our address, one a second from two
 * queues for a minute (a host that ARPs for the firewall and finds
 * each answer in another queue): one neighbour learnt, not 120, however
 * many frames the queues counted (the -v summary's "frames telling of
 * a neighbour" is that other count, docs/dpdk.md). */
static void test_same_neighbour_learnt_once(void **state)
{
	static struct neigh_cache c;
	static struct nr_ring r[2];
	struct nr_ring *const rings[2] = {&r[0], &r[1]};
	struct np_learned l = host(7, NP_LEARN);
	(void)state;

	nc_init(&c, NULL);
	for (uint64_t s = 0; s < 60; s++) {
		assert_int_equal(nr_push(&r[0], 1, &l), 1);
		assert_int_equal(nr_push(&r[1], 1, &l), 1);
		assert_int_equal(nr_drain(rings, 2, &c, s * 1000), 2);
	}
	assert_int_equal(c.n, 1);
	assert_int_equal(c.st.learnt, 1);
	assert_int_equal(c.st.moved, 0);
}

struct flood {
	struct nr_ring ring;
	atomic_int stop;
};

static void *flood_ring(void *arg)
{
	struct flood *f = arg;

	for (uint32_t i = 0; !atomic_load(&f->stop); i++) {
		struct np_learned l = host(i, NP_MERGE);

		(void)nr_push(&f->ring, 1, &l);
	}
	return NULL;
}

/* A queue pushing as fast as it can while the main thread drains: one
 * drain takes at most a ring's worth, then returns (it read the ring's
 * head once); the next takes the rest. */
static void test_drain_bounded_under_a_flood(void **state)
{
	static struct neigh_cache c;
	static struct flood f;
	struct nr_ring *const rings[1] = {&f.ring};
	pthread_t t;
	uint32_t most = 0;
	(void)state;

	nc_init(&c, NULL);
	assert_int_equal(pthread_create(&t, NULL, flood_ring, &f), 0);
	for (int k = 0; k < 200; k++) {
		uint32_t n;

		/* the queue is pushing: half a ring held (not "half a ring
		 * more pushed than before": had the queue filled the ring
		 * between the last drain and that count, it could push no
		 * more, and the test waited for ever) */
		while (atomic_load(&f.ring.head) - atomic_load(&f.ring.tail) < NR_SLOTS / 2)
			;
		n = nr_drain(rings, 1, &c, 0);
		if (n > most)
			most = n;
	}
	atomic_store(&f.stop, 1);
	pthread_join(t, NULL);
	assert_true(most <= NR_SLOTS);
	assert_true(most > 0);
}

/* Two queues: their rings, their workers, the main thread's cache. */
struct two_queues {
	struct neigh_cache c;
	struct nr_ring r[2];
	struct worker w[2];
	struct nr_ring *rings[2];
	struct nr_main m;
};

static struct two_queues *two_queues(const struct nc_config *cfg)
{
	static struct two_queues q;

	memset(&q, 0, sizeof(q));
	nc_init(&q.c, cfg);
	q.rings[0] = &q.r[0];
	q.rings[1] = &q.r[1];
	q.m = (struct nr_main){.cache = &q.c, .rings = q.rings, .workers = q.w, .nq = 2};
	return &q;
}

/* A tick: what was learnt posted to every worker; a worker whose ring
 * is full gets it on a later tick. */
static void test_tick_posts_everywhere(void **state)
{
	struct two_queues *q = two_queues(NULL);
	struct nr_ring *r = q->r;
	struct worker *w = q->w;
	struct nr_main *m = &q->m;
	struct worker_neigh_cmd cmd[8];
	struct np_learned l = host(7, NP_LEARN);
	(void)state;

	assert_int_equal(nr_push(&r[1], 1, &l), 1);
	for (uint32_t i = 0; i < WORKER_NEIGH_RING; i++)	/* w[1]'s ring full */
		assert_int_equal(worker_neigh_cmd(&w[1], WORKER_NEIGH_SET, 0, 4, l.addr, mac_a), 0);
	nr_tick(m, 0);
	assert_int_equal(worker_cmds(&w[0], cmd, 8), 1);
	assert_int_equal(cmd[0].op, WORKER_NEIGH_SET);
	assert_int_equal(cmd[0].port, 1);
	assert_memory_equal(cmd[0].addr, l.addr, 4);
	atomic_store(&w[1].neigh_tail, atomic_load(&w[1].neigh_head));	/* w[1] caught up */
	nr_tick(m, 100);
	assert_int_equal(worker_cmds(&w[1], cmd, 8), 1);
	assert_int_equal(cmd[0].op, WORKER_NEIGH_SET);
	assert_int_equal(worker_cmds(&w[0], cmd, 8), 1);	/* told again: a refresh */
}

/* A worker's solicitation reaches the cache before any answer in the
 * same drain, whichever queue the answer came in on: learnt and posted.
 * An answer nobody asked for teaches nothing. */
static void test_answer_on_another_queue(void **state)
{
	struct two_queues *q = two_queues(NULL);
	struct worker_neigh_cmd cmd[8];
	struct np_learned l = host(9, NP_ANSWER), stray = host(10, NP_ANSWER);
	(void)state;

	assert_int_equal(nr_push_asked(&q->r[1], 1, 4, l.addr), 1);
	assert_int_equal(nr_push(&q->r[0], 1, &l), 1);
	assert_int_equal(nr_push(&q->r[0], 1, &stray), 1);
	nr_tick(&q->m, 0);
	assert_int_equal(q->c.n, 1);
	assert_int_equal(q->c.st.unasked, 1);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(worker_cmds(&q->w[k], cmd, 8), 1);
		assert_int_equal(cmd[0].op, WORKER_NEIGH_SET);
		assert_memory_equal(cmd[0].addr, l.addr, 4);
	}
	assert_int_equal(nr_drain(q->rings, 2, &q->c, 0), 0);
}

static void fill_ring(struct worker *w)
{
	static const uint8_t addr[4] = {10, 60, 9, 9};

	while (!worker_neigh_cmd(w, WORKER_NEIGH_SET, 0, 4, addr, mac_a))
		;
}

/* A probe no worker's ring takes is not sent, so it does not count
 * against the neighbour: however long the rings stay full, the entry is
 * not forgotten; once one takes it, the probe goes out. */
static void test_probe_lost_not_counted(void **state)
{
	struct two_queues *q =
		two_queues(&(struct nc_config){.reachable_ms = 1000, .probe_ms = 100, .probes = 3});
	struct nr_ring *r = q->r;
	struct worker *w = q->w;
	struct nr_main *m = &q->m;
	struct neigh_cache *c = &q->c;
	struct worker_neigh_cmd cmd[8];
	struct np_learned l = host(8, NP_LEARN);
	(void)state;

	assert_int_equal(nr_push(&r[0], 1, &l), 1);
	nr_tick(m, 0);
	assert_int_equal(worker_cmds(&w[0], cmd, 8), 1);
	assert_int_equal(worker_cmds(&w[1], cmd, 8), 1);
	fill_ring(&w[0]);
	fill_ring(&w[1]);
	for (uint64_t now = 1000; now <= 3000; now += 100)
		nr_tick(m, now);
	assert_int_equal(c->n, 1);
	assert_int_equal(c->st.probes, 0);
	assert_int_equal(c->st.forgotten, 0);
	assert_int_equal(c->e[0].probes, 0);
	atomic_store(&w[1].neigh_tail, atomic_load(&w[1].neigh_head));	/* w[1] caught up */
	nr_tick(m, 3100);
	assert_int_equal(worker_cmds(&w[1], cmd, 8), 1);
	assert_int_equal(cmd[0].op, WORKER_NEIGH_PROBE);
	assert_memory_equal(cmd[0].addr, l.addr, 4);
	assert_memory_equal(cmd[0].mac, mac_a, 6);
	assert_int_equal(c->st.probes, 1);
	nr_tick(m, 3150);				/* the next one a probe_ms later */
	assert_int_equal(worker_cmds(&w[1], cmd, 8), 0);
	nr_tick(m, 3200);
	assert_int_equal(worker_cmds(&w[1], cmd, 8), 1);
	assert_int_equal(c->st.probes, 2);
}

/* A forget a worker's full ring refused is sent again on the next ticks
 * until every worker has it, but the neighbour was forgotten once: so
 * it counts once, however many ticks the ring stays full. */
static void test_forget_retried_counted_once(void **state)
{
	struct two_queues *q =
		two_queues(&(struct nc_config){.reachable_ms = 1000, .probe_ms = 100, .probes = 1});
	struct worker *w = q->w;
	struct neigh_cache *c = &q->c;
	struct worker_neigh_cmd cmd[8];
	struct np_learned l = host(11, NP_LEARN);
	(void)state;

	assert_int_equal(nr_push(&q->r[0], 1, &l), 1);
	nr_tick(&q->m, 0);
	assert_int_equal(worker_cmds(&w[0], cmd, 8), 1);
	assert_int_equal(worker_cmds(&w[1], cmd, 8), 1);
	nr_tick(&q->m, 1000);				/* its one probe */
	assert_int_equal(worker_cmds(&w[0], cmd, 8) + worker_cmds(&w[1], cmd, 8), 1);
	fill_ring(&w[1]);
	for (uint64_t now = 1100; now <= 1500; now += 100)
		nr_tick(&q->m, now);			/* w[1] cannot take the forget */
	atomic_store(&w[1].neigh_tail, atomic_load(&w[1].neigh_head));	/* w[1] caught up */
	nr_tick(&q->m, 1600);
	assert_int_equal(worker_cmds(&w[1], cmd, 8), 1);
	assert_int_equal(cmd[0].op, WORKER_NEIGH_FORGET);
	assert_memory_equal(cmd[0].addr, l.addr, 4);
	nr_tick(&q->m, 1700);
	assert_int_equal(worker_cmds(&w[1], cmd, 8), 0);
	assert_int_equal(c->n, 0);
	assert_int_equal(c->st.forgotten, 1);
}

/* The interleaving test_ask_between_head_reads needs: queue 1's ring
 * sits alone on pages it cannot read, so the drain's first look at it
 * (its head) faults; the handler lets it be read and does what the
 * queues would do at that moment. */
static struct {
	struct nr_ring *asking, *answering;
	size_t len;
	struct np_learned answer;
} between;

static void queues_meanwhile(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	if ((char *)si->si_addr < (char *)between.answering ||
	    (char *)si->si_addr >= (char *)between.answering + between.len)
		abort();
	mprotect(between.answering, between.len, PROT_READ | PROT_WRITE);
	/* queue 0 solicits (its ask first), the answer comes in on queue 1 */
	(void)nr_push_asked(between.asking, 1, 4, between.answer.addr);
	(void)nr_push(between.answering, 1, &between.answer);
}

/* A drain reads the rings' heads one after the other. Queue 0 may ask,
 * and its answer come in on queue 1, after the drain read queue 0's head
 * and before it read queue 1's: the answer must still find its ask (the
 * asks are read up to a head taken after every ring's news head). */
static void test_ask_between_head_reads(void **state)
{
	static struct neigh_cache c;
	static struct nr_ring r0;
	struct sigaction sa = {.sa_sigaction = queues_meanwhile, .sa_flags = SA_SIGINFO}, old;
	struct nr_ring *rings[2] = {&r0, NULL};
	(void)state;

	between.len = (sizeof(struct nr_ring) + 4095) & ~(size_t)4095;
	between.answering = mmap(NULL, between.len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(between.answering != MAP_FAILED);
	between.asking = &r0;
	between.answer = host(12, NP_ANSWER);
	rings[1] = between.answering;
	nc_init(&c, NULL);
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
	mprotect(between.answering, between.len, PROT_NONE);
	nr_drain(rings, 2, &c, 0);
	sigaction(SIGSEGV, &old, NULL);
	assert_int_equal(c.st.unasked, 0);
	assert_int_equal(c.n, 1);
	assert_memory_equal(c.e[0].addr, between.answer.addr, 4);
	munmap(between.answering, between.len);
}

/* One worker whose ring stays full (a worker busy elsewhere) holds up
 * none of the others: in the tick, the healthy one is told every entry
 * once (before, it was told the first 64 over and over, 1,024 commands
 * that filled its ring, and never the rest); the stuck one gets them all
 * on the tick after it caught up. */
static void test_stuck_worker_holds_up_none(void **state)
{
	struct two_queues *q = two_queues(NULL);
	struct worker *w = q->w;
	static struct worker_neigh_cmd cmd[WORKER_NEIGH_RING];
	uint8_t seen[100] = {0};
	(void)state;

	for (uint32_t i = 0; i < 100; i++) {
		struct np_learned l = host(i, NP_LEARN);

		assert_int_equal(nr_push(&q->r[0], 1, &l), 1);
	}
	fill_ring(&w[1]);
	nr_tick(&q->m, 0);
	assert_int_equal(worker_cmds(&w[0], cmd, WORKER_NEIGH_RING), 100);
	for (uint32_t i = 0; i < 100; i++) {
		assert_int_equal(cmd[i].op, WORKER_NEIGH_SET);
		seen[cmd[i].addr[3]]++;
	}
	for (uint32_t i = 0; i < 100; i++)
		assert_int_equal(seen[i], 1);
	atomic_store(&w[1].neigh_tail, atomic_load(&w[1].neigh_head));	/* w[1] caught up */
	nr_tick(&q->m, 100);
	assert_int_equal(worker_cmds(&w[1], cmd, WORKER_NEIGH_RING), 100);
	nr_tick(&q->m, 200);
	assert_int_equal(worker_cmds(&w[1], cmd, WORKER_NEIGH_RING), 0);
}

/* Solicitations for next hops that never answer (transit packets to
 * unused addresses of a connected subnet: a remote sender's flood of
 * them asks as fast as it sends) cannot crowd the news out of a
 * queue's ring: the answer to a known neighbour's probe still gets in,
 * and the neighbour stays (before, the ring full of asks refused it and
 * every neighbour was forgotten after its probes). */
static void test_asks_leave_room_for_news(void **state)
{
	struct two_queues *q =
		two_queues(&(struct nc_config){.reachable_ms = 1000, .probe_ms = 100, .probes = 3});
	struct worker *w = q->w;
	struct worker_neigh_cmd cmd[8];
	struct np_learned l = host(13, NP_LEARN), answer = host(13, NP_ANSWER);
	uint32_t unused = 0;
	(void)state;

	assert_int_equal(nr_push(&q->r[0], 1, &l), 1);
	nr_tick(&q->m, 0);
	for (uint64_t now = 1000; now <= 1400; now += 100) {
		struct np_learned stray = host(0x100 + unused, NP_LEARN);

		while (nr_push_asked(&q->r[0], 1, 4, stray.addr))	/* the flood */
			stray = host(0x100 + ++unused, NP_LEARN);
		if (now == 1100)					/* the probe answered */
			assert_int_equal(nr_push(&q->r[0], 1, &answer), 1);
		nr_tick(&q->m, now);
		worker_cmds(&w[0], cmd, 8);
		worker_cmds(&w[1], cmd, 8);
	}
	assert_int_equal(q->c.n, 1);
	assert_int_equal(q->c.e[0].state, NC_REACHABLE);
	assert_int_equal(q->c.st.forgotten, 0);
}

/* The solicitations of a flood to unused addresses are bounded as a
 * whole: SOLICIT_BURST at once, then SOLICIT_PER_S a second, whatever
 * the addresses (the per-hop gap remembers only 64 of them). */
static void test_solicit_budget(void **state)
{
	struct solicit_budget b = {0};
	const uint64_t t0 = 5000000000ull;
	uint32_t sent = 0;

	(void)state;
	for (uint32_t i = 0; i < 10000; i++)	/* 10,000 asks in one instant */
		sent += (uint32_t)solicit_budget_take(&b, t0);
	assert_int_equal(sent, SOLICIT_BURST);
	/* a tenth of a second later: a tenth of a second's worth more (the
	 * burst takes SOLICIT_BURST / SOLICIT_PER_S s to come back) */
	sent = 0;
	for (uint32_t i = 0; i < 10000; i++)
		sent += (uint32_t)solicit_budget_take(&b, t0 + 100000000ull);
	assert_int_equal(sent, SOLICIT_PER_S / 10);
	/* a flood spread out: one ask every 100 us for 10 s passes the rate,
	 * the burst once */
	sent = 0;
	for (uint64_t t = 0; t < 10000000000ull; t += 100000)
		sent += (uint32_t)solicit_budget_take(&b, t0 + 1000000000ull + t);
	assert_in_range(sent, 10 * SOLICIT_PER_S, 10 * SOLICIT_PER_S + SOLICIT_BURST);
	/* quiet for longer than the burst takes to come back: full again,
	 * not more (no credit saved past the burst) */
	sent = 0;
	for (uint32_t i = 0; i < 10000; i++)
		sent += (uint32_t)solicit_budget_take(&b, t0 + 60000000000ull);
	assert_int_equal(sent, SOLICIT_BURST);
	/* the clock's start (0) is a time like another */
	b = (struct solicit_budget){0};
	assert_true(solicit_budget_take(&b, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drain),
		cmocka_unit_test(test_same_neighbour_learnt_once),
		cmocka_unit_test(test_drain_bounded_under_a_flood),
		cmocka_unit_test(test_tick_posts_everywhere),
		cmocka_unit_test(test_probe_lost_not_counted),
		cmocka_unit_test(test_answer_on_another_queue),
		cmocka_unit_test(test_forget_retried_counted_once),
		cmocka_unit_test(test_ask_between_head_reads),
		cmocka_unit_test(test_stuck_worker_holds_up_none),
		cmocka_unit_test(test_asks_leave_room_for_news),
		cmocka_unit_test(test_solicit_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
