/* TCP MSS clamping (runtime/tcp_mss.c): the option found wherever it sits
 * among the others, lowered only when above the limit, the checksum right
 * against a full recomputation (also at odd offsets, also for random
 * option layouts), and everything else left as it came: segments that are
 * not a SYN, options that are malformed or cut off, fragments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "frames.h"
#include "pkt.h"
#include "tcp_mss.h"

enum { SYN = 0x02, RST = 0x04, ACK = 0x10 };

static struct flow_spec spec(uint8_t family, uint8_t flags)
{
	struct flow_spec s = {.family = family, .proto = 6, .sport = 40000, .dport = 443,
			      .tcp_flags = flags, .seq = 1000, .ack = flags & ACK ? 77 : 0};

	if (family == 4) {
		memcpy(s.src, (uint8_t[]){10, 1, 0, 2}, 4);
		memcpy(s.dst, (uint8_t[]){10, 2, 0, 2}, 4);
	} else {
		memcpy(s.src, (uint8_t[]){0xfd, 0, 0, 1, [15] = 2}, 16);
		memcpy(s.dst, (uint8_t[]){0xfd, 0, 0, 2, [15] = 2}, 16);
	}
	return s;
}

/* Build, parse, clamp; returns what tcp_mss_clamp said. */
static int clamp(struct frame *f, const struct flow_spec *s, const uint8_t *opts,
		 uint32_t optlen, uint16_t limit)
{
	struct pkt_meta m;

	frame_build_tcp_options(f, s, opts, optlen);
	assert_int_equal(pkt_parse(f->b, f->len, &m), PKT_IP);
	return tcp_mss_clamp(f->b, f->len, &m, limit);
}

static uint32_t tcp_at(const struct flow_spec *s)
{
	return 14 + (s->family == 4 ? 20u : 40u);
}

static void test_mss_for_mtu(void **state)
{
	(void)state;
	assert_int_equal(tcp_mss_for_mtu(1500, 4), 1460);
	assert_int_equal(tcp_mss_for_mtu(1500, 6), 1440);
	assert_int_equal(tcp_mss_for_mtu(1492, 4), 1452);	/* PPPoE */
	assert_int_equal(tcp_mss_for_mtu(1280, 6), 1220);
	assert_int_equal(tcp_mss_for_mtu(0, 4), 0);		/* unknown */
	assert_int_equal(tcp_mss_for_mtu(40, 4), 0);
	assert_int_equal(tcp_mss_for_mtu(60, 6), 0);
	assert_int_equal(tcp_mss_for_mtu(1u << 20, 4), 65535);
}

/* Linux's SYN layout (MSS first, even offset), the same after one NOP
 * (odd offset), and a SYN-ACK; both families; checksums recomputed. */
static void test_clamps_syn_and_syn_ack(void **state)
{
	static const uint8_t linux_syn[20] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1,
					      0, 0, 0, 0, 1, 3, 3, 7};
	static const uint8_t odd[8] = {1, 2, 4, 0x05, 0xb4, 1, 1, 0};
	const uint8_t families[2] = {4, 6};

	(void)state;
	for (int fi = 0; fi < 2; fi++) {
		struct flow_spec syn = spec(families[fi], SYN), synack = spec(families[fi], SYN | ACK);
		struct frame f;
		uint32_t l4 = tcp_at(&syn);

		assert_int_equal(clamp(&f, &syn, linux_syn, sizeof(linux_syn), 1240), 1);
		assert_int_equal(frame_get16(f.b + l4 + 22), 1240);
		assert_true(frame_checksums_ok(f.b, f.len));
		assert_int_equal(f.b[l4 + 24], 4);	/* the rest untouched */

		assert_int_equal(clamp(&f, &synack, odd, sizeof(odd), 1000), 1);
		assert_int_equal(frame_get16(f.b + l4 + 23), 1000);
		assert_true(frame_checksums_ok(f.b, f.len));

		/* at or under the limit: as it came */
		assert_int_equal(clamp(&f, &syn, linux_syn, sizeof(linux_syn), 1460), 0);
		assert_int_equal(frame_get16(f.b + l4 + 22), 1460);
		assert_int_equal(clamp(&f, &syn, linux_syn, sizeof(linux_syn), 1461), 0);
		assert_true(frame_checksums_ok(f.b, f.len));
	}
}

/* Only a SYN or SYN-ACK; never an RST, a plain ACK, a segment without
 * the option, malformed or cut-off options, a non-first fragment. */
static void test_leaves_the_rest(void **state)
{
	static const uint8_t mss[4] = {2, 4, 0x05, 0xb4};
	static const uint8_t none[4] = {1, 1, 4, 2};			/* NOPs, SACK ok */
	static const uint8_t eol_first[8] = {0, 0, 0, 0, 2, 4, 0x05, 0xb4};
	static const uint8_t zero_len[8] = {8, 0, 2, 4, 0x05, 0xb4, 0, 0};
	static const uint8_t overrun[8] = {1, 1, 1, 8, 20, 0, 0, 0};	/* past the options */
	static const uint8_t short_mss[8] = {2, 3, 0x05, 1, 2, 4, 0x05, 0xb4};	/* len 3 */
	static const uint8_t mss_at_end[4] = {1, 1, 1, 2};		/* kind, no length */
	static const uint8_t straddle[4] = {1, 1, 2, 4};	/* its value in the payload */
	struct flow_spec syn = spec(4, SYN), syn_data = spec(4, SYN);
	struct flow_spec ack = spec(4, ACK), rst = spec(4, SYN | RST);
	struct frame f, before;
	struct pkt_meta m;

	(void)state;
	assert_int_equal(clamp(&f, &ack, mss, 4, 1000), 0);
	assert_int_equal(clamp(&f, &rst, mss, 4, 1000), 0);
	assert_int_equal(clamp(&f, &syn, none, 4, 1000), 0);
	assert_int_equal(clamp(&f, &syn, eol_first, 8, 1000), 0);
	assert_int_equal(clamp(&f, &syn, zero_len, 8, 1000), 0);
	assert_int_equal(clamp(&f, &syn, overrun, 8, 1000), 0);
	assert_int_equal(clamp(&f, &syn, mss_at_end, 4, 1000), 0);
	syn_data.payload = 8;	/* its first two bytes (29, 36) read as an MSS: 7460 */
	assert_int_equal(clamp(&f, &syn_data, straddle, 4, 200), 0);
	assert_int_equal(frame_get16(f.b + 34 + 24), 29 << 8 | 36);
	/* a length-3 "MSS" is skipped as an unknown option; the real one after it is taken */
	assert_int_equal(clamp(&f, &syn, short_mss, 8, 1000), 1);
	assert_int_equal(frame_get16(f.b + 34 + 26), 1000);
	assert_int_equal(frame_get16(f.b + 34 + 22), 0x0501);
	assert_true(frame_checksums_ok(f.b, f.len));

	/* the frame cut inside the options: nothing read past it, nothing written */
	frame_build_tcp_options(&f, &syn, mss, 4);
	before = f;
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	for (uint32_t cut = 34 + 20; cut < f.len; cut++)
		assert_int_equal(tcp_mss_clamp(f.b, cut, &m, 1000), 0);
	assert_memory_equal(f.b, before.b, f.len);
	/* the IP length ends before the options (the rest is padding) */
	frame_put16(f.b + 14 + 2, 40);
	assert_int_equal(tcp_mss_clamp(f.b, f.len, &m, 1000), 0);
	/* the data offset claims more than the segment holds */
	f = before;
	f.b[34 + 12] = 15 << 4;
	assert_int_equal(tcp_mss_clamp(f.b, f.len, &m, 1000), 0);
	f = before;
	f.b[34 + 12] = 4 << 4;	/* under 20 bytes */
	assert_int_equal(tcp_mss_clamp(f.b, f.len, &m, 1000), 0);
	/* a non-first fragment has no TCP header of its own */
	f = before;
	m.fragment = 2;
	assert_int_equal(tcp_mss_clamp(f.b, f.len, &m, 1000), 0);
	assert_memory_equal(f.b, before.b, f.len);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* Random option layouts (NOPs, SACK-permitted, timestamps, window scale,
 * unknown options, the MSS anywhere), random MSS values, limits, ports and
 * payloads: the result is min(MSS, limit) and the checksum is right. */
static void test_random_layouts(void **state)
{
	(void)state;
	for (int round = 0; round < 20000; round++) {
		struct flow_spec s = spec(rnd(2) ? 4 : 6, rnd(2) ? SYN : SYN | ACK);
		uint8_t opts[40] = {0};
		uint32_t n = 0, at = 0, want_len;
		uint16_t mss = (uint16_t)(rnd(65536)), limit = (uint16_t)(536 + rnd(65000));
		int placed = 0;
		struct frame f;
		uint32_t l4;

		s.sport = (uint16_t)rnd(65536);
		s.seq = (uint32_t)rnd(0xffffffffu);
		s.payload = rnd(3) ? 0 : rnd(64);
		want_len = 4 + 4 * rnd(10);	/* 4..40 */
		while (n < want_len) {
			uint32_t room = want_len - n, kind = rnd(6);

			if (!placed && room >= 4 && (kind == 0 || room < 8)) {
				at = n;
				opts[n++] = 2;
				opts[n++] = 4;
				opts[n++] = (uint8_t)(mss >> 8);
				opts[n++] = (uint8_t)mss;
				placed = 1;
			} else if (kind == 1 && room >= 10) {	/* timestamps */
				opts[n++] = 8;
				opts[n++] = 10;
				for (int k = 0; k < 8; k++)
					opts[n++] = (uint8_t)rnd(256);
			} else if (kind == 2 && room >= 3) {	/* window scale */
				opts[n++] = 3;
				opts[n++] = 3;
				opts[n++] = (uint8_t)rnd(15);
			} else if (kind == 3 && room >= 2) {	/* SACK permitted */
				opts[n++] = 4;
				opts[n++] = 2;
			} else if (kind == 4 && room >= 6) {	/* unknown, 6 bytes */
				opts[n++] = (uint8_t)(30 + rnd(200));
				opts[n++] = 6;
				for (int k = 0; k < 4; k++)
					opts[n++] = (uint8_t)rnd(256);
			} else {
				opts[n++] = 1;			/* NOP */
			}
		}
		l4 = tcp_at(&s);
		assert_int_equal(clamp(&f, &s, opts, want_len, limit), placed && mss > limit);
		assert_true(frame_checksums_ok(f.b, f.len));
		if (placed)
			assert_int_equal(frame_get16(f.b + l4 + 20 + at + 2), mss > limit ? limit : mss);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mss_for_mtu),
		cmocka_unit_test(test_clamps_syn_and_syn_ack),
		cmocka_unit_test(test_leaves_the_rest),
		cmocka_unit_test(test_random_layouts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
