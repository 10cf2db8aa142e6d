/* libFuzzer target: the packet parser and the whole stateful pipeline
 * (conntrack and its full table, NAT, router, replies, port MTUs and
 * fragmentation, the reply limit, packets held for their next hop,
 * fragments parked before their first and run again as rampartd does) on
 * arbitrary frames. Input: a series
 * of records [port:1][time step:1][len:2][bytes:len]. The policy is
 * compiled once from tests/fuzz/pipeline.yaml. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact.h"
#include "fuzz_ports.h"
#include "pipeline.h"
#include "rulec.h"

#define ROOM 2048

static struct rfw_view view;
static struct pipe_worker *worker;
static uint64_t now_ns = 1000000000ull;

static void setup(void)
{
	void *buf;
	size_t len;
	char err[256];
	/* a small table: the worker lives across inputs, so it fills, and
	 * a full table's paths (reaping, early drop, refusal) are fuzzed */
	struct pipe_config c = {.mode = PIPE_ROUTER, .nports = 2, .max_flows = 64, .seed = 9};
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 9};

	if (rulec_compile(RAMPART_SOURCE_DIR "/tests/fuzz/pipeline.yaml", stderr, &buf, &len) ||
	    rfw_view_init(&view, buf, len, err, sizeof(err)))
		abort();
	fuzz_ports(&c);
	c.port[0].mtu = 1500;	/* frames are up to 1600 bytes: too-big replies */
	c.port[1].mtu = 1280;
	c.reply_rate = 100;	/* and the reply limit */
	c.hold_unresolved = 1;	/* lan hosts but two have no MAC: held packets */
	c.park_fragments = 1;
	worker = pipe_create(&c, &view);
	if (!worker)
		abort();
	pipe_neigh_set(worker, 1, 4, (uint8_t[]){10, 2, 0, 254}, mac);
	pipe_neigh_set(worker, 0, 4, (uint8_t[]){10, 1, 0, 2}, mac);
	pipe_neigh_set(worker, 1, 6, (uint8_t[]){0xfd, 0, 0, 2, [15] = 0xfe}, mac);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frames[PIPE_BURST][ROOM];
	struct pipe_pkt pkts[PIPE_BURST];
	uint32_t n = 0;

	if (!worker)
		setup();
	while (size >= 4 && n < PIPE_BURST) {
		uint32_t len = (uint32_t)(data[2] | data[3] << 8) % 1600;

		if (len > size - 4)
			len = (uint32_t)(size - 4);
		memset(frames[n], 0, 64);
		memcpy(frames[n], data + 4, len);
		fuzz_fix_ipv4_checksum(data[0], frames[n], len);
		pkts[n] = (struct pipe_pkt){.data = frames[n], .len = len, .room = ROOM,
					    .in_port = (uint8_t)(data[0] & 1)};
		now_ns += (uint64_t)data[1] * 100000000ull;	/* up to 25 s a step */
		n++;
		data += 4 + len;
		size -= 4 + len;
	}
	if (n) {
		struct pipe_nexthop hop[PIPE_UNRESOLVED];
		struct pipe_pkt *extra;
		uint32_t m;

		pipe_process(worker, pkts, n, now_ns);
		(void)pipe_unresolved(worker, hop, PIPE_UNRESOLVED);	/* as a worker does */
		m = pipe_extra(worker, &extra);		/* fragments: within their room */
		for (uint32_t i = 0; i < m; i++)
			if (extra[i].len > extra[i].room || extra[i].out_port >= 2)
				abort();
		pipe_extra_clear(worker);
		if (pipe_parked_count(worker)) {	/* as rampartd's worker loop */
			struct pipe_pkt again[PIPE_BURST];

			m = pipe_frag_take(worker, again, PIPE_BURST, 0);
			for (uint32_t i = 0; i < m; i++)
				if (again[i].len > again[i].room || again[i].in_port >= 2)
					abort();
			pipe_process(worker, again, m, now_ns);
			pipe_extra_clear(worker);
		}
	}
	for (uint32_t i = 0; i < n; i++)	/* whatever comes out stays in its room */
		if (pkts[i].len > ROOM)
			abort();
	return 0;
}
