/* libFuzzer target: three workers that hand frames to each other (the
 * flow's worker by its tuple, a DNAT flow's by its translation, the
 * second chances after a DNAT change and for answers on forwarded
 * ports, fragments through their datagram's worker), as rampartd's do,
 * with reloads that move the DNAT rules round three servers. Input: records
 * [ctl:1][time step:1][len:2][bytes:len] as fuzz_pipeline's (its seeds
 * serve): ctl bit 0 the port, bits 1-2 the worker whose queue it
 * arrives on (mod 3), bit 3 which of two sets of three workers takes it:
 * flows homed by the keyed hash, or by the NIC's RSS (--home rss, the
 * 6d:5a key over Linux's default table); 0xff: a reload to the next policy first, then
 * the frame on worker 0 (one record in 256 of random ones: a reload
 * costs as much as a thousand frames). Checks
 * that a frame is never handed on more than its bound, never to itself
 * or past the workers, and stays within its room. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "artifact.h"
#include "fuzz_ports.h"
#include "pipeline.h"
#include "pkt.h"
#include "rss_home.h"
#include "rulec.h"

#define ROOM 2048
#define NW 3

#define NVIEWS 3
static struct rfw_view views[NVIEWS];	/* pipeline.yaml, and its forwards moved twice */
static const struct rfw_view *running, *kept[PIPE_DNAT_KEPT_MAX];
static uint32_t nkept;
static struct pipe_worker *sets[2][NW];	/* homed by the keyed hash, by RSS */
static struct pipe_worker **workers = sets[0];	/* the set of the current record */
static struct rss_home rss;
static uint64_t now_ns = 1000000000ull;

static void compile(const char *text, struct rfw_view *v)
{
	char path[] = "/tmp/rampart-fuzz-handoff-XXXXXX", err[256];
	int fd = mkstemp(path);
	void *buf;
	size_t len;

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
	if (rulec_compile(path, stderr, &buf, &len) || rfw_view_init(v, buf, len, err, sizeof(err)))
		abort();
	unlink(path);
}

static void setup(void)
{
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 9};
	static char text[8192], moved[8192];
	FILE *f = fopen(RAMPART_SOURCE_DIR "/tests/fuzz/pipeline.yaml", "r");
	size_t n;
	char *at;

	if (!f || (n = fread(text, 1, sizeof(text) - 1, f)) == 0)
		abort();
	fclose(f);
	text[n] = 0;
	compile(text, &views[0]);
	for (int v = 1; v < NVIEWS; v++) {	/* every "dnat: {to: 10.1.0.3" to .4, .5 */
		strcpy(moved, text);
		for (at = moved; (at = strstr(at, "dnat: {to: 10.1.0.3")) != NULL; at++)
			at[strlen("dnat: {to: 10.1.0.")] = (char)('3' + v);
		compile(moved, &views[v]);
	}
	running = &views[0];
	{
		uint8_t key[RSS_KEY_MIN];
		char err[200];

		rss_key_symmetric(key, sizeof(key));
		if (rss_home_init(&rss, key, sizeof(key), NULL, RSS_TABLE_DEFAULT, NW, err,
				  sizeof(err)))
			abort();
	}
	for (uint16_t k = 0; k < 2 * NW; k++) {
		struct pipe_config c = {.mode = PIPE_ROUTER, .max_flows = 64, .seed = 9,
					.worker_count = NW, .worker_id = k % NW, .handoff = 1,
					.home_seed = 0x5eed, .rss_home = k < NW ? NULL : &rss};

		fuzz_ports(&c);
		c.port[0].mtu = 1500;
		c.port[1].mtu = 1280;
		c.hold_unresolved = 1;
		c.park_fragments = 1;
		struct pipe_worker *w = pipe_create(&c, running);

		if (!w)
			abort();
		sets[k / NW][k % NW] = w;
		pipe_neigh_set(w, 1, 4, (uint8_t[]){10, 2, 0, 254}, mac);
		pipe_neigh_set(w, 0, 4, (uint8_t[]){10, 1, 0, 3}, mac);
		pipe_neigh_set(w, 0, 4, (uint8_t[]){10, 1, 0, 4}, mac);
		pipe_neigh_set(w, 0, 4, (uint8_t[]){10, 1, 0, 5}, mac);
		pipe_neigh_set(w, 1, 6, (uint8_t[]){0xfd, 0, 0, 2, [15] = 0xfe}, mac);
	}
}

/* Every worker to the next policy (round the three), keeping DNAT rules
 * as rampartd does: up to two sets of them kept at once. */
static void reload(void)
{
	const struct rfw_view *next = &views[(running - views + 1) % NVIEWS];
	const struct rfw_view *keep[PIPE_DNAT_KEPT_MAX];
	uint32_t dropped, n = pipe_dnat_to_keep(running, kept, nkept, next, keep, &dropped);
	char err[256];

	for (uint32_t k = 0; k < 2 * NW; k++) {
		struct pipe_worker *w = sets[k / NW][k % NW];
		struct pipe_policy *p = pipe_policy_build(w, next, NULL, PIPE_FLOWS_KEEP, NULL, err,
							  sizeof(err));

		if (!p || pipe_policy_keep_dnat(w, p, keep, n) < 0)
			abort();
		p = pipe_adopt(w, p);
		while (pipe_sweep(w))
			;
		pipe_policy_free(p);
	}
	memcpy(kept, keep, sizeof(keep));
	nkept = n;
	running = next;
}

/* What a worker does after each call: take its unresolved hops and
 * extra frames (fragments, replies), which must stay in their room. */
static void after(struct pipe_worker *w)
{
	struct pipe_nexthop hop[PIPE_UNRESOLVED];
	struct pipe_pkt *extra;
	uint32_t m;

	(void)pipe_unresolved(w, hop, PIPE_UNRESOLVED);
	m = pipe_extra(w, &extra);
	for (uint32_t i = 0; i < m; i++)
		if (extra[i].len > extra[i].room || extra[i].out_port >= 2)
			abort();
	pipe_extra_clear(w);
}

/* p, run by worker at, through the workers it is handed to. */
static void run_through(struct pipe_pkt *p, uint32_t at)
{
	struct pkt_meta m;
	uint32_t hops = 0, most;

	/* a frame to its home, on to where each set of kept DNAT rules or
	 * its own tuple (a DNAT rule homed it) homes it, and back: three
	 * hops and one a set at most (pipeline.c second_chance); a fragment
	 * first through its datagram's worker, one more (parsed before the
	 * pipeline rewrites it) */
	most = 3 + nkept + (pkt_parse(p->data, p->len, &m) == PKT_IP && m.fragment);
	pipe_process(workers[at], p, 1, now_ns);
	after(workers[at]);
	while (p->verdict == PIPE_HANDOFF) {
		if (p->worker >= NW || p->worker == at || ++hops > most)
			abort();
		at = p->worker;
		p->homed++;
		pipe_process(workers[at], p, 1, now_ns);
		after(workers[at]);
	}
	if (p->len > p->room)
		abort();
}

/* Fragments parked before their first: run again as rampartd's
 * workers do, between bursts. */
static void resume_parked(void)
{
	for (uint32_t k = 0; k < NW; k++) {
		struct pipe_pkt again[PIPE_BURST];
		uint32_t m;

		if (!pipe_parked_count(workers[k]))
			continue;
		m = pipe_frag_take(workers[k], again, PIPE_BURST, 0);
		for (uint32_t i = 0; i < m; i++)
			run_through(&again[i], k);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[ROOM];

	if (!sets[0][0])
		setup();
	while (size >= 4) {
		uint32_t len = (uint32_t)(data[2] | data[3] << 8) % 1600, at = (data[0] >> 1 & 3) % NW;
		struct pipe_pkt p;

		if (len > size - 4)
			len = (uint32_t)(size - 4);
		if (data[0] == 0xff)
			reload();
		workers = sets[data[0] >> 3 & 1];
		memset(frame, 0, 64);
		memcpy(frame, data + 4, len);
		fuzz_fix_ipv4_checksum(data[0], frame, len);
		p = (struct pipe_pkt){.data = frame, .len = len, .room = ROOM,
				      .in_port = (uint8_t)(data[0] & 1)};
		now_ns += (uint64_t)data[1] * 100000000ull;
		data += 4 + len;
		size -= 4 + len;
		run_through(&p, at);
		resume_parked();
	}
	return 0;
}
