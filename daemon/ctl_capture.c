/* `rampartctl capture`: arm every worker's capture ring, gather the
 * matching frames until the count or the time is reached, disarm, and
 * answer with a pcapng document: one interface block per port, one
 * enhanced packet block per frame with its verdict as a comment
 * ("rule=web verdict=accept in=eth0 out=eth1", "verdict=drop
 * reason=policy ..."), which tshark and Wireshark show (frame.comment). */
#include "ctl_capture.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pipeline.h"

#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_IDB 1u
#define PCAPNG_EPB 6u
#define OPT_END 0
#define OPT_COMMENT 1
#define OPT_IF_NAME 2

static void put32(struct ctl_buf *b, uint32_t v)
{
	ctl_put_bytes(b, &v, 4);	/* host order: the byte-order magic says which */
}

static void put16(struct ctl_buf *b, uint16_t v)
{
	ctl_put_bytes(b, &v, 2);
}

static void pad4(struct ctl_buf *b, size_t n)
{
	static const uint8_t zero[4];

	ctl_put_bytes(b, zero, (4 - n % 4) % 4);
}

static size_t padded(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* An option holding a string (not NUL-terminated in pcapng). */
static void option(struct ctl_buf *b, uint16_t code, const char *s)
{
	size_t n = strlen(s);

	put16(b, code);
	put16(b, (uint16_t)n);
	ctl_put_bytes(b, s, n);
	pad4(b, n);
}

static void header(struct ctl_buf *b, const char *const *ifnames, uint32_t nports)
{
	uint64_t section_len = UINT64_MAX;	/* not given */

	put32(b, PCAPNG_SHB);
	put32(b, 28);
	put32(b, 0x1A2B3C4Du);
	put16(b, 1);
	put16(b, 0);
	ctl_put_bytes(b, &section_len, 8);
	put32(b, 28);
	for (uint32_t p = 0; p < nports; p++) {
		uint32_t len = 20 + 4 + (uint32_t)padded(strlen(ifnames[p])) + 4;

		put32(b, PCAPNG_IDB);
		put32(b, len);
		put16(b, 1);		/* LINKTYPE_ETHERNET */
		put16(b, 0);
		put32(b, PKTCAP_SNAP);
		option(b, OPT_IF_NAME, ifnames[p]);
		put32(b, OPT_END);
		put32(b, len);
	}
}

static void packet(struct ctl_buf *b, const struct pktcap_rec *r, int64_t real_minus_mono,
		   const char *comment)
{
	uint64_t us = (uint64_t)(((int64_t)r->mono_ns + real_minus_mono) / 1000);
	uint32_t len = 28 + (uint32_t)padded(r->caplen) + 4 + (uint32_t)padded(strlen(comment)) +
		       4 + 4;

	put32(b, PCAPNG_EPB);
	put32(b, len);
	put32(b, r->in_port);	/* the interface it came in on */
	put32(b, (uint32_t)(us >> 32));
	put32(b, (uint32_t)us);
	put32(b, r->caplen);
	put32(b, r->len);
	ctl_put_bytes(b, r->data, r->caplen);
	pad4(b, r->caplen);
	option(b, OPT_COMMENT, comment);
	put32(b, OPT_END);
	put32(b, len);
}

static void comment_of(const struct pktcap_rec *r, const struct ctl_capture_req *q, char *out,
		       size_t len)
{
	const char *v = r->verdict == PIPE_FORWARD || r->verdict == PIPE_HELD ? "accept"
		      : r->verdict == PIPE_BOUNCE ? "reject" : "drop";
	size_t n = 0;

	/* each part only where the one before fitted: out stays terminated */
	n += (size_t)snprintf(out, len, "rampart: rule=%s verdict=%s",
			      rfw_rule_name(q->view,
					    r->rule <= q->view->policy->rule_count ? r->rule : 0),
			      v);
	if (n < len && r->verdict == PIPE_DROP)
		n += (size_t)snprintf(out + n, len - n, " reason=%s", pipe_drop_name(r->drop));
	if (n < len)
		n += (size_t)snprintf(out + n, len - n, " in=%s",
				      r->in_port < q->nports ? q->ifnames[r->in_port] : "?");
	if (n < len && r->verdict == PIPE_FORWARD && r->out_port < q->nports)
		snprintf(out + n, len - n, " out=%s", q->ifnames[r->out_port]);
}

static int64_t ns_of(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int ctl_capture(struct ctl_buf *out, const struct ctl_capture_req *q, char *err, size_t errlen)
{
	const struct timespec nap = { 0, 2000000 };	/* 2 ms between looks */
	int64_t offset = ns_of(CLOCK_REALTIME) - ns_of(CLOCK_MONOTONIC);
	int64_t deadline = ns_of(CLOCK_MONOTONIC) + (int64_t)q->timeout_s * 1000000000;
	uint32_t want = q->rule, got = 0;
	static struct pktcap_rec rec;	/* 2 KiB: off the control thread's stack */
	char comment[256];

	for (uint32_t k = 0; k < q->nworkers; k++)
		if (!q->rings[k]) {
			snprintf(err, errlen, "this rampartd has no capture rings");
			return -1;
		}
	header(out, q->ifnames, q->nports);
	for (uint32_t k = 0; k < q->nworkers; k++) {
		struct pktcap_ring *r = q->rings[k];

		while (pktcap_read(r, &rec))	/* nothing stale from an earlier capture */
			;
		atomic_store_explicit(&r->want, want, memory_order_release);
	}
	while (got < q->count && ns_of(CLOCK_MONOTONIC) < deadline) {
		uint32_t before = got;

		for (uint32_t k = 0; k < q->nworkers && got < q->count; k++)
			while (got < q->count && pktcap_read(q->rings[k], &rec)) {
				comment_of(&rec, q, comment, sizeof(comment));
				packet(out, &rec, offset, comment);
				got++;
			}
		if (got == before)
			nanosleep(&nap, NULL);
	}
	for (uint32_t k = 0; k < q->nworkers; k++)
		atomic_store_explicit(&q->rings[k]->want, PKTCAP_OFF, memory_order_release);
	if (out->oom) {
		snprintf(err, errlen, "out of memory for the capture");
		return -1;
	}
	return (int)got;
}
