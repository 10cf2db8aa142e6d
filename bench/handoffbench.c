/* handoffbench: what handing frames between workers costs (handoff.h),
 * in memory on one core. Two workers' pipelines of one masquerade policy
 * carry the packets of N established UDP flows (64-byte frames, both
 * directions) in bursts of 64; cycles per packet, summed over every
 * pipeline call and ring operation a packet causes:
 *   one-worker   worker_count 1, no handoff (the baseline)
 *   at-owner     handoff on, each burst arrives at its flows' worker:
 *                the cost of choosing the worker alone
 *   spread       handoff on, bursts arrive at either worker as a NIC
 *                (or veth) that hashes the directions apart would bring
 *                them: half the frames are copied into the other
 *                worker's ring, taken from it and run there
 *   dnat-owner   at-owner with 8 port forwards (DNAT rules) in the
 *                policy that the traffic never meets: what they add to
 *                choosing the worker
 *   rss-owner    at-owner with the worker chosen by the NIC's RSS hash
 *                (--home rss: Toeplitz, symmetric key, default table)
 *                instead of the keyed hash
 * Usage: handoffbench [flows] [rounds] [one-worker|at-owner|spread|dnat-owner|rss-owner]
 * (default 1000 flows, 2000 rounds, every variant); built as
 * build/bench/handoffbench. Not a test: no assertion on time. For
 * instruction counts: valgrind --tool=callgrind --toggle-collect=burst
 * handoffbench 1000 100 VARIANT (Ir of burst / packets sent). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csum.h"
#include "handoff.h"
#include "pipeline.h"
#include "rss_home.h"
#include "rulec.h"

#define BURST 64u
#define FRAME 64u

#define POLICY_HEAD							\
	"version: 1\n"							\
	"zones: {inside: [lan0], outside: [wan0]}\n"			\
	"rules:\n"							\
	"  - {name: out, proto: udp, from: {zone: inside}, to: {zone: outside}, action: accept}\n" \
	"defaults: {action: drop}\n"					\
	"routes:\n"							\
	"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n" \
	"  - {prefix: 10.100.0.0/16, interface: lan0}\n"			\
	"nat:\n"
#define MASQ "  - {name: masq, match: {from: {zone: inside}, to: {zone: outside}}, snat: {to: masquerade}}\n"
#define FWD(n) "  - {name: fwd" #n ", match: {from: {zone: outside}, to: {network: 10.0.1.1, service: tcp/800" #n "}}, dnat: {to: 10.100.0." #n ", port: 80}}\n"

static const char policy[] = POLICY_HEAD MASQ;
static const char policy_dnat[] = POLICY_HEAD FWD(1) FWD(2) FWD(3) FWD(4) FWD(5) FWD(6) FWD(7)
	FWD(8) MASQ;

static const uint8_t wan_ip[4] = {10, 0, 1, 1};

static inline uint64_t tsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

struct lab {
	void *buf;
	size_t len;
	struct rfw_view view;
	uint32_t nw;
	struct pipe_worker *w[2];
	struct handoff ho;
};

static int lab_open(struct lab *l, uint32_t nw, int handoff, const char *text,
		    const struct rss_home *rss)
{
	char path[] = "/tmp/rampart-handoffbench-XXXXXX", err[256];
	int fd = mkstemp(path);
	size_t len = strlen(text);
	struct pipe_config c = {.mode = PIPE_ROUTER, .nports = 2, .seed = 7,
				.worker_count = (uint16_t)nw, .handoff = (uint8_t)handoff,
				.home_seed = 0x5eed, .max_flows = 1u << 20, .rss_home = rss};

	memset(l, 0, sizeof(*l));
	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		return -1;
	close(fd);
	if (rulec_compile(path, stderr, &l->buf, &l->len) ||
	    rfw_view_init(&l->view, l->buf, l->len, err, sizeof(err))) {
		unlink(path);
		return -1;
	}
	unlink(path);
	strcpy(c.port[0].name, "lan0");
	c.port[0].has_v4 = 1;
	memcpy(c.port[0].v4, (uint8_t[]){10, 100, 0, 1}, 4);
	strcpy(c.port[1].name, "wan0");
	c.port[1].has_v4 = 1;
	memcpy(c.port[1].v4, wan_ip, 4);
	l->nw = nw;
	for (uint16_t k = 0; k < nw; k++) {
		c.worker_id = k;
		l->w[k] = pipe_create(&c, &l->view);
		if (!l->w[k] ||
		    pipe_neigh_set(l->w[k], 1, 4, (uint8_t[]){10, 0, 1, 254},
				   (uint8_t[]){2, 0xbb, 0, 0, 0, 0xfe}) ||
		    pipe_neigh_set(l->w[k], 0, 4, (uint8_t[]){10, 100, 0, 5},
				   (uint8_t[]){2, 0xcc, 0, 0, 0, 5}))
			return -1;
	}
	return handoff && nw > 1 ? handoff_init(&l->ho, nw) : 0;
}

static void lab_close(struct lab *l)
{
	for (uint32_t k = 0; k < l->nw; k++)
		pipe_destroy(l->w[k]);
	if (l->ho.n)
		handoff_free(&l->ho);
	free(l->buf);
}

/* UDP 10.100.0.5:(10000 + i) -> 10.200.1.1:53, or the reply to the public
 * port pub (headers only; the UDP checksum is not checked on the way in). */
static void frame(uint8_t *b, uint32_t i, uint16_t pub, int reply)
{
	static const uint8_t cli[4] = {10, 100, 0, 5}, srv[4] = {10, 200, 1, 1};
	uint16_t sp = reply ? 53 : (uint16_t)(10000 + i), dp = reply ? pub : 53;

	memset(b, 0, FRAME);
	memcpy(b, (uint8_t[]){2, 0xaa, 0, 0, 0, 1, 2, 0xcc, 0, 0, 0, 5}, 12);
	b[12] = 0x08;
	b[14] = 0x45;
	b[17] = 46;
	b[22] = 64;
	b[23] = 17;
	memcpy(b + 26, reply ? srv : cli, 4);
	memcpy(b + 30, reply ? wan_ip : srv, 4);
	b[34] = (uint8_t)(sp >> 8);
	b[35] = (uint8_t)sp;
	b[36] = (uint8_t)(dp >> 8);
	b[37] = (uint8_t)dp;
	b[39] = 26;
	{	/* the IPv4 header checksum, which the parser verifies */
		uint16_t c = csum_ipv4_header(b + 14);

		b[24] = (uint8_t)(c >> 8);
		b[25] = (uint8_t)c;
	}
}

struct traffic {
	uint32_t n;		/* frames: flow i's request at 2i, its reply at 2i + 1 */
	uint8_t *tmpl;		/* FRAME bytes each */
	uint8_t *owner;		/* the worker each frame's flow is on */
};

/* One burst of frames [first, first + m) arriving at worker `at` (the
 * owner's when at < 0), handed on as it says; returns TSC cycles and
 * adds the frames forwarded to *fwd. */
__attribute__((noinline)) static uint64_t burst(struct lab *l, const struct traffic *t, const uint32_t *idx, uint32_t m,
		      uint32_t at, uint64_t now, uint64_t *fwd)
{
	static uint8_t buf[BURST][FRAME];
	struct pipe_pkt p[BURST], in[BURST], *out[BURST];
	uint64_t t0;
	uint32_t nout = 0;

	for (uint32_t k = 0; k < m; k++) {
		memcpy(buf[k], t->tmpl + (size_t)idx[k] * FRAME, FRAME);
		p[k] = (struct pipe_pkt){.data = buf[k], .len = FRAME, .room = FRAME,
					 .in_port = (uint8_t)(idx[k] & 1)};
	}
	t0 = tsc();
	pipe_process(l->w[at], p, m, now);
	for (uint32_t k = 0; k < m; k++)
		if (p[k].verdict == PIPE_HANDOFF)
			out[nout++] = &p[k];
		else
			*fwd += p[k].verdict == PIPE_FORWARD;
	if (nout) {
		struct handoff_ring *r = handoff_ring(&l->ho, at, at ^ 1);
		uint32_t got;

		handoff_send(r, out, nout);
		got = handoff_peek(r, in, BURST);
		pipe_process(l->w[at ^ 1], in, got, now);
		for (uint32_t k = 0; k < got; k++)
			*fwd += in[k].verdict == PIPE_FORWARD;
		handoff_done(r);
	}
	return tsc() - t0;
}

int main(int argc, char **argv)
{
	uint32_t flows = argc > 1 ? (uint32_t)atoi(argv[1]) : 1000;
	uint32_t rounds = argc > 2 ? (uint32_t)atoi(argv[2]) : 2000;
	static const char *const names[] = {"one-worker", "at-owner", "spread", "dnat-owner",
					    "rss-owner"};
	static struct rss_home rss;
	uint8_t key[RSS_KEY_MIN];
	char err[200];
	const char *only = argc > 3 ? argv[3] : NULL;

	if (!flows || flows > 50000 || !rounds) {
		fprintf(stderr, "usage: handoffbench [flows 1..50000] [rounds]\n");
		return 2;
	}
	rss_key_symmetric(key, sizeof(key));
	if (rss_home_init(&rss, key, sizeof(key), NULL, RSS_TABLE_DEFAULT, 2, err, sizeof(err))) {
		fprintf(stderr, "handoffbench: %s\n", err);
		return 1;
	}
	printf("# handoffbench: %u UDP flows through masquerade, both directions, %u-byte frames, "
	       "bursts of %u, %u rounds; TSC cycles/packet\n", flows, FRAME, BURST, rounds);
	for (int v = 0; v < 5; v++) {
		if (only && strcmp(only, names[v]))
			continue;
		struct lab l;
		struct traffic t = {.n = 2 * flows};
		uint32_t *idx = malloc(sizeof(*idx) * t.n), *order = malloc(sizeof(*order) * t.n);
		uint64_t cycles = 0, fwd = 0, sent = 0, now = 1000000000ull;
		uint32_t nw = v ? 2 : 1;

		t.tmpl = calloc(t.n, FRAME);
		t.owner = calloc(t.n, 1);
		if (!idx || !order || !t.tmpl || !t.owner ||
		    lab_open(&l, nw, v != 0, v == 3 ? policy_dnat : policy, v == 4 ? &rss : NULL)) {
			fprintf(stderr, "handoffbench: set-up failed\n");
			return 1;
		}
		/* Open the flows (a request each, on its owner), then the
		 * replies' templates from the public ports they got. */
		for (uint32_t i = 0; i < flows; i++) {
			uint8_t b[FRAME];
			struct pipe_pkt p = {.data = b, .len = FRAME, .room = FRAME, .in_port = 0};
			uint32_t at = 0;

			frame(b, i, 0, 0);
			memcpy(t.tmpl + (size_t)2 * i * FRAME, b, FRAME);
			pipe_process(l.w[0], &p, 1, now);
			if (p.verdict == PIPE_HANDOFF) {
				at = p.worker;
				p.homed = 1;
				pipe_process(l.w[at], &p, 1, now);
			}
			if (p.verdict != PIPE_FORWARD) {
				fprintf(stderr, "handoffbench: flow %u not opened (drop reason %d)\n", i,
					p.drop);
				return 1;
			}
			frame(t.tmpl + (size_t)(2 * i + 1) * FRAME, i, (uint16_t)(b[34] << 8 | b[35]),
			      1);
			t.owner[2 * i] = t.owner[2 * i + 1] = (uint8_t)at;
		}
		/* at-owner: frames grouped by owner so a burst is all one's */
		int by_owner = v == 1 || v == 3 || v == 4;

		for (uint32_t j = 0, n = 0; j < (by_owner ? nw : 1); j++)
			for (uint32_t i = 0; i < t.n; i++)
				if (!by_owner || t.owner[i] == j)
					order[n++] = i;
		for (uint32_t r = 0; r < rounds; r++) {
			for (uint32_t s = 0; s < t.n; s += BURST) {
				uint32_t m = t.n - s < BURST ? t.n - s : BURST, at;

				for (uint32_t k = 0; k < m; k++)
					idx[k] = order[s + k];
				at = v == 0 ? 0 : by_owner ? t.owner[idx[0]] : (s / BURST + r) & 1;
				if (by_owner)	/* a burst must not straddle two owners */
					while (m > 1 && t.owner[idx[m - 1]] != at)
						m--;
				cycles += burst(&l, &t, idx, m, at, now, &fwd);
				sent += m;
				s -= BURST - m;
			}
			now += 1000000;	/* 1 ms a round: no flow expires */
		}
		printf("%-11s %7.1f cycles/pkt  forwarded %.1f%%  handed %llu of %llu\n", names[v],
		       (double)cycles / (double)sent, 100.0 * (double)fwd / (double)sent,
		       (unsigned long long)(nw > 1 ? pipe_stats(l.w[0])->handed_off +
							     pipe_stats(l.w[1])->handed_off
						   : 0),
		       (unsigned long long)sent);
		lab_close(&l);
		free(idx);
		free(order);
		free(t.tmpl);
		free(t.owner);
	}
	return 0;
}
