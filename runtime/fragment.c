/* fragment.h: IPv4 fragmentation in a router. */
#include "fragment.h"

#include <string.h>

#include "csum.h"
#include "wire.h"

#define IPV4_MIN_MTU 68	/* RFC 791: every host and router takes this whole */
#define IP_MF 0x2000u
#define IP_DF 0x4000u
#define IP_OFFSET 0x1fffu
#define OPT_EOL 0
#define OPT_NOP 1
#define OPT_COPIED 0x80u	/* the option's copy flag: in every fragment */

/* Payload bytes a fragment with a header of hl bytes carries (all but the
 * last): the most the MTU leaves, down to a multiple of 8. */
static uint32_t piece(uint32_t mtu, uint32_t hl)
{
	return (mtu - hl) & ~7u;
}

/* The options of the header at ip (hl bytes) that every fragment carries
 * (RFC 791 3.1: those with the copy flag), into opts, padded with EOL to
 * a multiple of 4; their length, or -1 when the options cannot be walked
 * (a length running past the header or under 2). */
static int copied_options(const uint8_t *ip, uint32_t hl, uint8_t opts[40])
{
	uint32_t i = 20, n = 0;

	while (i < hl) {
		uint8_t type = ip[i];
		uint32_t olen;

		if (type == OPT_EOL)
			break;
		if (type == OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= hl || ip[i + 1] < 2 || i + ip[i + 1] > hl)
			return -1;
		olen = ip[i + 1];
		if (type & OPT_COPIED) {
			memcpy(opts + n, ip + i, olen);
			n += olen;
		}
		i += olen;
	}
	while (n % 4)
		opts[n++] = OPT_EOL;
	return (int)n;
}

uint32_t fragment_count(const uint8_t *frame, uint32_t len, uint32_t l3, uint32_t mtu)
{
	const uint8_t *ip = frame + l3;
	uint32_t total, hl, hl2, first;
	uint8_t opts[40];
	int n;

	if (len < l3 + 20)
		return 0;
	hl = (uint32_t)(ip[0] & 0x0f) * 4;
	if (hl < 20 || len < l3 + hl || mtu < IPV4_MIN_MTU || mtu < hl + 8)
		return 0;
	total = rd16(ip + 2);
	if (total > len - l3 || total <= mtu || total < hl)
		return 0;
	n = copied_options(ip, hl, opts);
	if (n < 0)
		return 0;
	hl2 = 20 + (uint32_t)n;
	first = piece(mtu, hl);
	return 1 + (total - hl - first + piece(mtu, hl2) - 1) / piece(mtu, hl2);
}

/* The header of a fragment (hl bytes) at byte offset `at` of the
 * datagram's payload, `bytes` long, last or not. */
static void fragment_header(uint8_t *ip, uint32_t hl, uint16_t frag_word, uint32_t at,
			    uint32_t bytes, int last)
{
	uint16_t off = (uint16_t)((frag_word & IP_OFFSET) + at / 8);
	uint16_t mf = last ? (uint16_t)(frag_word & IP_MF) : (uint16_t)IP_MF;

	ip[0] = (uint8_t)(0x40 | hl / 4);
	wr16(ip + 2, (uint16_t)(hl + bytes));
	wr16(ip + 6, (uint16_t)((frag_word & IP_DF) | mf | off));
	wr16(ip + 10, 0);
	wr16(ip + 10, csum_ipv4_header(ip));
}

uint32_t fragment_ipv4(uint8_t *frame, uint32_t l3, uint32_t mtu, uint8_t *const *out,
		       uint32_t *out_len)
{
	uint8_t *ip = frame + l3, opts[40];
	const uint32_t hl = (uint32_t)(ip[0] & 0x0f) * 4, payload = rd16(ip + 2) - hl;
	const uint16_t frag_word = rd16(ip + 6);
	const uint32_t hl2 = 20 + (uint32_t)copied_options(ip, hl, opts);
	const uint32_t first = piece(mtu, hl), step = piece(mtu, hl2);
	uint32_t at = first, k = 0;

	for (; at < payload; at += step, k++) {
		uint32_t bytes = payload - at < step ? payload - at : step;
		uint8_t *f = out[k];

		memcpy(f, frame, l3 + 20);
		memcpy(f + l3 + 20, opts, hl2 - 20);
		memcpy(f + l3 + hl2, ip + hl + at, bytes);
		fragment_header(f + l3, hl2, frag_word, at, bytes, at + bytes == payload);
		out_len[k] = l3 + hl2 + bytes;
	}
	fragment_header(ip, hl, frag_word, 0, first, 0);
	return l3 + hl + first;
}
