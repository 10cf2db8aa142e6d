/* ctbench: conntrack cost per packet, in memory: N UDP (or TCP) flows created
 * (half with a NAT reply tuple, in batches of 64, with and without
 * ct_create_prefetch), batches of 64 packets of random flows (half
 * replies) through ct_lookup_batch + ct_update, through
 * ct_track_batch and through ct_find4_batch (the express path's lookup
 * from the frame), the last two also in the order the flows were made,
 * creates into a table whose free list removals have
 * shuffled, creates into the full table (early drop), then expiry of
 * them all.
 * TCP flows are opened with a SYN and looked up with ACKs, which TCP
 * tracking refuses (no handshake) after reading the windows: what is
 * measured is the memory a TCP packet touches, not the verdict.
 * Usage: ctbench [flows [tcp]] (default 1000000, UDP); built as
 * build/bench/ctbench. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "csum.h"
#include "ct.h"
#include "pkt.h"

#define FRAME 64u
#define BATCH 64u

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The SNAT tuple of odd flow i: 10.254.x.y:port, spread over the index. */
static void nat_addr(uint32_t i, uint8_t a[4], uint16_t *port)
{
	uint32_t h = i * 2654435761u;

	a[0] = 10;
	a[1] = 254;
	a[2] = (uint8_t)(h >> 24);
	a[3] = (uint8_t)(h >> 16);
	*port = (uint16_t)(1024 + h % 60000);
}

static uint8_t proto = 17;	/* 17 UDP, 6 TCP */
static uint8_t tcp_flags;	/* TCP: the flags of the frames made now */

/* Ethernet + IPv4 + UDP or TCP of flow i, original or reply direction
 * (odd flows' replies come to their SNAT tuple). */
static void frame(uint8_t *b, uint32_t i, int reply)
{
	uint8_t a[4] = {10, (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i};
	uint8_t s[4] = {10, 255, 0, 1};
	uint16_t sp = (uint16_t)(1024 + i % 60000), dp = 53, cs;

	if (reply && (i & 1))
		nat_addr(i, a, &sp);

	memset(b, 0, FRAME);
	b[12] = 0x08;
	b[14] = 0x45;
	b[17] = 28;
	b[22] = 64;
	b[23] = 17;
	memcpy(b + 26, reply ? s : a, 4);
	memcpy(b + 30, reply ? a : s, 4);
	if (reply) {
		uint16_t t = sp;

		sp = dp;
		dp = t;
	}
	b[34] = (uint8_t)(sp >> 8);
	b[35] = (uint8_t)sp;
	b[36] = (uint8_t)(dp >> 8);
	b[37] = (uint8_t)dp;
	if (proto == 6) {
		b[17] = 40;
		b[23] = 6;
		b[41] = 1;			/* sequence number */
		b[46] = 0x50;			/* 20-byte header */
		b[47] = tcp_flags;
		b[48] = 0xff;			/* window */
	} else {
		b[39] = 8;
	}
	/* the parser refuses an IPv4 header with a wrong checksum: without
	 * it every packet here was malformed and nothing was ever found */
	cs = csum_ipv4_header(b + 14);
	b[24] = (uint8_t)(cs >> 8);
	b[25] = (uint8_t)cs;
}

/* The express path's lookup (ct_find4_batch: the frames alone, as the
 * pipeline hands them over when the flow cache misses), in batches of
 * BATCH over pk's frames. */
static void find4_phase(struct ct_table *t, const struct ct_pkt *pk, uint32_t npk,
			uint32_t rounds, const char *what)
{
	struct ct_hint4 h[BATCH];
	uint32_t found = 0;
	double t0 = now_ns(), t1;

	for (uint32_t r = 0; r < rounds; r++)
		for (uint32_t i = 0; i < npk; i += BATCH) {
			for (uint32_t j = 0; j < BATCH; j++)
				h[j] = (struct ct_hint4){.frame = pk[i + j].frame, .len = pk[i + j].len};
			ct_find4_batch(t, h, BATCH, 101);
			for (uint32_t j = 0; j < BATCH; j++)
				found += h[j].result == CT_HINT_OK || h[j].result == CT_HINT_OK_NAT;
		}
	t1 = now_ns();
	printf("find4_batch, %s: %.1f ns/packet (%u found of %u)\n", what,
	       (t1 - t0) / ((double)npk * rounds), found, npk * rounds);
}

/* Every frame here must parse: a bench of malformed packets measures
 * nothing. */
static void parse_or_die(const uint8_t *f, struct pkt_meta *m)
{
	if (pkt_parse(f, FRAME, m) != PKT_IP) {
		fprintf(stderr, "ctbench: a frame does not parse (reason %u)\n", m->reason);
		exit(1);
	}
}

/* The reply key of flow i as NAT hands it to ct_create_flow. */
static void nat_reply(struct pkt_key *k, uint32_t i, const uint8_t *f)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->src, f + 30, 4);	/* the server */
	nat_addr(i, k->dst, &k->dport);
	k->sport = 53;
	k->family = 4;
	k->proto = proto;
}

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 1000000u;

	if (argc > 2 && !strcmp(argv[2], "tcp")) {
		proto = 6;
		tcp_flags = 0x02;	/* SYN: creates */
	}
	const uint32_t npk = 1u << 18, rounds = 16;
	struct ct_config c;
	struct ct_table *t;
	uint8_t *frames = malloc((size_t)npk * FRAME);
	struct pkt_meta *meta = malloc((size_t)npk * sizeof(*meta));
	struct ct_pkt *pk = malloc((size_t)npk * sizeof(*pk));
	struct ct_result res[BATCH];
	struct ct_stats st;
	struct pkt_key rk[BATCH];
	struct ct_create_hint hint[BATCH];
	uint32_t flow, valid = 0, found = 0, expired = 0;
	double t0, t1;

	memset(&c, 0, sizeof(c));
	c.max_flows = n;
	for (unsigned i = 0; i < RFW_TIMEOUT_COUNT; i++)
		c.timeout[i] = 30;
	t = ct_create(&c);
	if (!t || !frames || !meta || !pk) {
		perror("ctbench");
		return 1;
	}
	/* Creates in batches as the pipeline makes them: packets parsed
	 * first (not timed), odd flows SNATed to a random port of 10.254/16
	 * (a reply bucket nothing has touched); timed: the creates, every
	 * other batch with ct_create_prefetch for the batch before them and
	 * its hashes handed to the creates. */
	{
		double ns[2] = {0, 0};

		for (uint32_t b = 0; b < n; b += BATCH) {
			uint32_t m = n - b < BATCH ? n - b : BATCH, pf = (b / BATCH) & 1;

			for (uint32_t j = 0; j < m; j++) {
				uint8_t *f = frames + (size_t)j * FRAME;
				uint32_t i = b + j;

				frame(f, i, 0);
				parse_or_die(f, &meta[j]);
				pk[j] = (struct ct_pkt){&meta[j], f, FRAME};
				nat_reply(&rk[j], i, f);
			}
			t0 = now_ns();
			if (pf)
				for (uint32_t j = 0; j < m; j++)
					ct_create_prefetch(t, &pk[j], (b + j) & 1 ? &rk[j] : NULL,
							   &hint[j]);
			for (uint32_t j = 0; j < m; j++)
				ct_create_flow_hinted(t, &pk[j], (b + j) & 1 ? &rk[j] : NULL, 1, 100,
						      &flow, pf ? &hint[j] : NULL);
			ns[pf] += now_ns() - t0;
		}
		printf("create, half SNAT: %.1f ns/flow, %.1f with ct_create_prefetch first\n",
		       ns[0] / (n / 2), ns[1] / (n / 2));
	}
	printf("flows %u, %.1f bytes/flow\n", n, ct_bytes_per_flow(t));

	tcp_flags = 0x10;	/* ACK: lookups */
	for (uint32_t i = 0; i < npk; i++) {
		uint8_t *b = frames + (size_t)i * FRAME;

		frame(b, (uint32_t)(rnd() % n), (int)(rnd() & 1));
		parse_or_die(b, &meta[i]);
		pk[i] = (struct ct_pkt){&meta[i], b, FRAME};
	}
	t0 = now_ns();
	for (uint32_t r = 0; r < rounds; r++)
		for (uint32_t i = 0; i < npk; i += BATCH) {
			ct_lookup_batch(t, pk + i, BATCH, 101, res);
			for (uint32_t j = 0; j < BATCH; j++)
				if (res[j].kind == CT_FOUND)
					valid += (uint32_t)ct_update(t, res[j].flow, res[j].dir,
								     &pk[i + j], 101);
		}
	t1 = now_ns();
	printf("lookup+update, random flows: %.1f ns/packet (%u valid of %u)\n",
	       (t1 - t0) / ((double)npk * rounds), valid, npk * rounds);
	valid = 0;
	t0 = now_ns();
	for (uint32_t r = 0; r < rounds; r++)
		for (uint32_t i = 0; i < npk; i += BATCH) {
			ct_track_batch(t, pk + i, BATCH, 101, res);
			for (uint32_t j = 0; j < BATCH; j++) {
				found += res[j].kind == CT_FOUND;
				valid += res[j].kind == CT_FOUND && !(res[j].flags & CT_RF_INVALID);
			}
		}
	t1 = now_ns();
	printf("track_batch, random flows: %.1f ns/packet (%u found, %u valid of %u)\n",
	       (t1 - t0) / ((double)npk * rounds), found, valid, npk * rounds);
	find4_phase(t, pk, npk, rounds, "random flows");

	/* The flow cache's hit path: each packet's flow, direction and rule
	 * known (as its cache slot would say), the entries prefetched while
	 * the hints are gathered, then checked by ct_hint_batch. Prefetched
	 * as the pipeline does (the lines the packet touches) and, to
	 * compare, the entry's first line only. */
	{
		struct ct_hint *hints = malloc((size_t)npk * sizeof(*hints));
		const struct ct_flow *flows = ct_flow_entries(t);

		if (!hints)
			return 1;
		for (uint32_t i = 0; i < npk; i += BATCH) {
			ct_lookup_batch(t, pk + i, BATCH, 101, res);
			for (uint32_t j = 0; j < BATCH; j++)
				hints[i + j] = (struct ct_hint){.pkt = pk[i + j], .flow = res[j].flow,
								.dir = res[j].dir, .rule = res[j].rule};
		}
		for (int lines = 1; lines >= 0; lines--) {
			t0 = now_ns();
			for (uint32_t r = 0; r < rounds; r++)
				for (uint32_t i = 0; i < npk; i += BATCH) {
					for (uint32_t j = 0; j < BATCH; j++) {
						const struct ct_flow *f = flows + hints[i + j].flow;

						if (lines)
							ct_flow_prefetch(f, proto, 4);
						else
							__builtin_prefetch(f);
					}
					ct_hint_batch(t, hints + i, BATCH, 101);
				}
			t1 = now_ns();
			printf("hint_batch, random flows, %s prefetched: %.1f ns/packet\n",
			       lines ? "lines touched" : "first line", (t1 - t0) / ((double)npk * rounds));
		}
		free(hints);
	}

	/* In the order the flows were made (every other one, original
	 * direction): the order fwbench's cached scenarios send them in,
	 * whose entries lie one after another in memory. */
	for (uint32_t i = 0; i < npk; i++) {
		uint8_t *b = frames + (size_t)i * FRAME;

		frame(b, (uint32_t)((uint64_t)i * 2 % n), 0);
		parse_or_die(b, &meta[i]);
		pk[i] = (struct ct_pkt){&meta[i], b, FRAME};
	}
	found = 0;
	t0 = now_ns();
	for (uint32_t r = 0; r < rounds; r++)
		for (uint32_t i = 0; i < npk; i += BATCH) {
			ct_track_batch(t, pk + i, BATCH, 101, res);
			for (uint32_t j = 0; j < BATCH; j++)
				found += res[j].kind == CT_FOUND;
		}
	t1 = now_ns();
	printf("track_batch, flows in order: %.1f ns/packet (%u found of %u)\n",
	       (t1 - t0) / ((double)npk * rounds), found, npk * rounds);
	find4_phase(t, pk, npk, rounds, "flows in order");

	/* Half the flows removed in random order, as expiry leaves a table
	 * that has run a while; new flows then take entries anywhere. */
	{
		uint32_t *perm = malloc((size_t)n * sizeof(*perm));

		if (!perm)
			return 1;
		for (uint32_t i = 0; i < n; i++)
			perm[i] = i;
		for (uint32_t i = n - 1; i > 0; i--) {
			uint32_t j = (uint32_t)(rnd() % (i + 1)), x = perm[i];

			perm[i] = perm[j];
			perm[j] = x;
		}
		for (uint32_t i = 0; i < n / 2; i++)
			ct_remove(t, perm[i]);
		free(perm);
		tcp_flags = 0x02;
		t0 = now_ns();
		for (uint32_t i = 0; i < n / 2; i++) {
			uint8_t *f = frames;

			frame(f, n + i, 0);
			parse_or_die(f, &meta[0]);
			pk[0] = (struct ct_pkt){&meta[0], f, FRAME};
			ct_create_flow(t, &pk[0], NULL, 1, 101, &flow);
		}
		t1 = now_ns();
		printf("create into a shuffled free list (parse included): %.1f ns/flow\n",
		       (t1 - t0) / (n / 2));
	}

	/* The table is full again: a quarter more new flows a second later,
	 * each evicting a flow that is not established from its bucket or
	 * the next (early drop) or refused. With tcp every flow is still
	 * half-open (the ACKs above found no handshake); UDP flows the
	 * lookups answered more than once are kept. */
	{
		struct ct_stats s0;
		uint32_t made = 0;

		ct_get_stats(t, &s0);
		t0 = now_ns();
		for (uint32_t i = 0; i < n / 4; i++) {
			uint8_t *f = frames;

			frame(f, 2 * n + i, 0);
			parse_or_die(f, &meta[0]);
			pk[0] = (struct ct_pkt){&meta[0], f, FRAME};
			made += ct_create_flow(t, &pk[0], NULL, 1, 102, &flow) == CT_CREATED;
		}
		t1 = now_ns();
		ct_get_stats(t, &st);
		printf("create into a full table (parse included): %.1f ns/flow (%u made, %llu "
		       "evicted, %llu refused)\n", (t1 - t0) / (n / 4), made,
		       (unsigned long long)(st.evicted - s0.evicted),
		       (unsigned long long)(st.refused_full - s0.refused_full));
	}

	t0 = now_ns();
	for (uint32_t now = 102; now < 200; now++)
		while (ct_expire(t, now, 256))
			expired++;
	t1 = now_ns();
	ct_get_stats(t, &st);
	printf("expire: %.1f ns/flow (%llu reaped, %llu left)\n", (t1 - t0) / (double)st.expired,
	       (unsigned long long)st.expired, (unsigned long long)st.in_use);
	(void)expired;
	ct_destroy(t);
	free(frames);
	free(meta);
	free(pk);
	return 0;
}
