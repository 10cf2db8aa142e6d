/* libFuzzer target: the artifact loader. Any bytes given to rfw_view_init
 * must be refused or yield tables that every lookup can use safely.
 * Inputs whose first byte is odd get their checksum fixed first, so the
 * fuzzer reaches the structure checks behind the CRC. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "artifact.h"
#include "cls.h"
#include "crc32c.h"
#include "pipeline.h"

static void use_tables(const struct rfw_view *v)
{
	struct cls_table t;
	struct pkt_key k = {.family = 4, .proto = 6, .has_ports = 1, .sport = 1000, .dport = 80,
			    .src = {10, 0, 0, 1}, .dst = {10, 0, 0, 2}};
	struct pipe_config c = {.mode = PIPE_BRIDGE, .nports = 2, .max_flows = 64, .seed = 1};
	const struct pkt_key *one[1] = {&k};
	uint32_t r;

	cls_table_init(&t, v);
	cls_lookup(&t, &k);
	k.family = 6;
	k.src[0] = 0xfd;
	cls_lookup_batch(&t, one, 1, &r);
	for (uint32_t i = 0; i <= v->policy->rule_count; i++)
		(void)rfw_rule_name(v, i);
	{	/* a worker over it (routes, sets, NAT pools are built here) */
		struct pipe_worker *w = pipe_create(&c, v);

		if (w) {
			uint8_t frame[64] = {0};
			struct pipe_pkt p = {.data = frame, .len = sizeof(frame), .room = sizeof(frame)};

			frame[12] = 0x08;
			frame[14] = 0x45;
			frame[17] = 50;
			frame[22] = 64;
			frame[23] = 17;
			pipe_process(w, &p, 1, 1);
			pipe_destroy(w);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf;
	struct rfw_view v;
	char err[256];

	if (size < 1)
		return 0;
	/* rfw_view_init expects the buffer aligned like an mmap'ed file */
	buf = aligned_alloc(64, (size + 63) & ~(size_t)63);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	if ((data[0] & 1) && size - 1 >= sizeof(struct rfw_header)) {
		struct rfw_header *h = (struct rfw_header *)buf;

		h->file_size = size - 1;
		h->checksum = 0;
		h->checksum = crc32c(0, buf, size - 1);
	}
	if (rfw_view_init(&v, buf, size - 1, err, sizeof(err)) == 0)
		use_tables(&v);
	free(buf);
	return 0;
}
