/* libFuzzer target: rampartd --state-file's reader (runtime/pipe_state.c,
 * ct_flow_restore, NAT pairs claimed again) on arbitrary files. Input:
 * [flags:1][file]; flags bit 0 sets the file's two CRC32Cs right first,
 * so that the fuzzer gets past the checksums to the records. A file
 * that opens is restored into a fresh worker of tests/fuzz/pipeline.yaml
 * (the one fuzz_pipeline runs), a packet is run through it, and the
 * worker is destroyed (every flow freed, its NAT pair given back).
 * Checked: the table holds as many flows as the restore says it put in,
 * the counts add up, and the pools hold one pair per translated flow
 * the restore could claim one for.
 * With RAMPART_FUZZ_WRITE_SEED=PATH it writes a seed instead: flows of
 * every kind (TCP through masquerade, DNAT, UDP, ICMPv6 echo) saved by
 * a worker that made them, the first two before a reload with --flows
 * recheck (so the file has records marked due a re-check and records
 * without; make the corpus' state/ seed with it). The corpus' flows-*
 * and own-port-pair seeds are version 1 files (from before the mark),
 * kept for the version 1 reader; flows-v2-marked is this one's. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "artifact.h"
#include "crc32c.h"
#include "ct.h"
#include "nat.h"
#include "pipe_state.h"
#include "fuzz_ports.h"
#include "pipeline.h"
#include "rulec.h"
#include "../unit/frames.h"

#define SEC 1000000000ull
#define HEADER 72u		/* pipe_state.c's header: CRCs at 64 and 68 */

static struct rfw_view view;
static char path[] = "/tmp/rampart-fuzz-state-XXXXXX";

static struct pipe_worker *make_worker(void)
{
	struct pipe_config c = {.mode = PIPE_ROUTER, .nports = 2, .max_flows = 4096, .seed = 9};
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 9};
	struct pipe_worker *w;

	fuzz_ports(&c);
	w = pipe_create(&c, &view);
	if (!w)
		abort();
	pipe_neigh_set(w, 1, 4, (uint8_t[]){10, 2, 0, 254}, mac);
	pipe_neigh_set(w, 0, 4, (uint8_t[]){10, 1, 0, 3}, mac);
	pipe_neigh_set(w, 0, 4, (uint8_t[]){10, 1, 0, 5}, mac);
	pipe_neigh_set(w, 1, 6, (uint8_t[]){0xfd, 0, 0, 2, [15] = 0xfe}, mac);
	pipe_neigh_set(w, 0, 6, (uint8_t[]){0xfd, 0, 0, 1, [15] = 5}, mac);
	return w;
}

static void run(struct pipe_worker *w, const struct flow_spec *s, uint8_t port, uint64_t now)
{
	struct frame f;
	struct pipe_pkt p;

	frame_build(&f, s);
	p = (struct pipe_pkt){.data = f.b, .len = f.len, .room = sizeof(f.b), .in_port = port};
	pipe_process(w, &p, 1, now);
}

static struct flow_spec v4(uint8_t proto, const uint8_t src[4], uint16_t sport,
			   const uint8_t dst[4], uint16_t dport, uint8_t flags)
{
	struct flow_spec s = {.family = 4, .proto = proto, .sport = sport, .dport = dport,
			      .tcp_flags = flags, .seq = 100};

	memcpy(s.src, src, 4);
	memcpy(s.dst, dst, 4);
	return s;
}

/* w's flows due a re-check on their next packet, as a reload of the
 * same policy with --flows recheck leaves them. */
static void reload_recheck(struct pipe_worker *w)
{
	char err[256];
	struct pipe_policy *p = pipe_policy_build(w, &view, NULL, PIPE_FLOWS_RECHECK, NULL, err,
						  sizeof(err));

	if (!p) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	p = pipe_adopt(w, p);
	while (pipe_sweep(w))
		;
	pipe_policy_free(p);
}

/* Flows of every kind, saved to out: the masqueraded ones marked due a
 * re-check, the forward and the echo made after that reload not. */
static void write_seed(const char *out)
{
	static const uint8_t lan[4] = {10, 1, 0, 5}, far[4] = {10, 9, 9, 9}, wan[4] = {10, 2, 0, 1};
	struct flow_spec s6 = {.family = 6, .proto = 58, .sport = 77, .icmp_type = 0};
	struct pipe_worker *w = make_worker();
	struct pipe_state_counts c;
	char err[256];

	struct flow_spec tcp = v4(6, lan, 40000, far, 443, 0x02);	/* masquerade */
	struct flow_spec udp = v4(17, lan, 5353, far, 53, 0);		/* UDP, masquerade */
	struct flow_spec dnat = v4(6, far, 5555, wan, 8080, 0x02);	/* port forward */

	run(w, &tcp, 0, SEC);
	run(w, &udp, 0, SEC);
	reload_recheck(w);
	run(w, &dnat, 1, SEC);
	memcpy(s6.src, (uint8_t[]){0xfd, 0, 0, 1, [15] = 5}, 16);
	memcpy(s6.dst, (uint8_t[]){0xfd, 0, 0, 2, [15] = 9}, 16);
	run(w, &s6, 0, SEC);						/* ICMPv6 echo */
	if (pipe_state_save(out, &w, 1, 2 * SEC, 1700000000 * SEC, &c, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	fprintf(stderr, "fuzz_state: %llu flows written to %s\n", (unsigned long long)c.flows, out);
	pipe_destroy(w);
	_exit(0);	/* not exit(): libFuzzer takes that for a failure */
}

static void setup(void)
{
	void *buf;
	size_t len;
	char err[256];
	int fd;

	if (rulec_compile(RAMPART_SOURCE_DIR "/tests/fuzz/pipeline.yaml", stderr, &buf, &len) ||
	    rfw_view_init(&view, buf, len, err, sizeof(err)))
		abort();
	if (getenv("RAMPART_FUZZ_WRITE_SEED"))
		write_seed(getenv("RAMPART_FUZZ_WRITE_SEED"));
	fd = mkstemp(path);
	if (fd < 0)
		abort();
	close(fd);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* A flow whose source pair was translated (its reply goes back to
 * another address or port: pipe_state.c's snat_flow), so the restore
 * claims its pair in a pool; one SNAT gave its own address and port
 * cannot be told from a flow never translated and is not counted. */
static int count_translated(const struct ct_flow_info *fi, void *arg)
{
	if (memcmp(fi->reply.dst, fi->orig.src, 16) || fi->reply.dport != fi->orig.sport)
		(*(uint64_t *)arg)++;
	return 0;
}

static uint64_t pairs_in_use(const struct pipe_worker *w)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < pipe_nat_pool_count(w); i++)
		n += pipe_nat_pool(w, i)->stats.in_use;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t file[1 << 16];
	struct pipe_state_counts c;
	struct pipe_state *st;
	struct pipe_worker *w;
	struct ct_stats cs;
	char err[512];
	FILE *f;

	static int ready;

	if (!ready++)
		setup();
	if (size < 1 || size - 1 > sizeof(file))
		return 0;
	memcpy(file, data + 1, size - 1);
	size--;
	if ((data[0] & 1) && size >= HEADER) {
		put32(file + 64, crc32c(0, file + HEADER, size - HEADER));
		put32(file + 68, crc32c(0, file, 68));
	}
	f = fopen(path, "wb");
	if (!f || fwrite(file, 1, size, f) != size || fclose(f))
		abort();
	st = pipe_state_open(path, err, sizeof(err));
	if (!st)
		return 0;
	w = make_worker();
	if (pipe_state_restore(st, &w, 1, 5 * SEC, 1700000000 * SEC + 3 * SEC, data[0] & 2, &c,
			       err, sizeof(err)) == 0) {
		struct flow_spec ack = v4(6, (uint8_t[]){10, 1, 0, 5}, 40000,
					  (uint8_t[]){10, 9, 9, 9}, 443, 0x10);
		uint64_t translated = 0;

		ct_get_stats(pipe_conntrack(w), &cs);
		if (cs.in_use != c.restored || c.restored + c.expired + c.duplicate + c.full +
		    c.invalid + c.unplaced != c.flows)
			abort();
		ct_foreach(pipe_conntrack(w), count_translated, &translated);
		if (pairs_in_use(w) != translated - c.nat_unclaimed)
			abort();
		run(w, &ack, 0, 6 * SEC);	/* a packet that may meet a restored flow */
	}
	pipe_state_close(st);
	pipe_destroy(w);
	return 0;
}
