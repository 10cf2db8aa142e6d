/* fragment.h: IPv4 fragmentation in a router. */
#include "fragment.h"

#include <string.h>

#include "csum.h"
#include "wire.h"

#define IPV4_MIN_MTU 68	/* RFC 791: every host and router takes this whole */
#define IP_MF 0x2000u
#define IP_DF 0x4000u
#define IP_OFFSET 0x1fffu

/* Payload bytes a fragment carries (all but the last): the most the MTU
 * leaves after the header, down to a multiple of 8. */
static uint32_t piece(uint32_t mtu)
{
	return (mtu - 20) & ~7u;
}

uint32_t fragment_count(const uint8_t *frame, uint32_t len, uint32_t l3, uint32_t mtu)
{
	const uint8_t *ip = frame + l3;
	uint32_t total;

	if (mtu < IPV4_MIN_MTU || len < l3 + 20 || (ip[0] & 0x0f) != 5)
		return 0;
	total = rd16(ip + 2);
	if (total > len - l3 || total <= mtu)
		return 0;
	return (total - 20 + piece(mtu) - 1) / piece(mtu);
}

/* The header of a fragment at byte offset `at` of the datagram's payload,
 * `bytes` long, last or not. */
static void fragment_header(uint8_t *ip, uint16_t frag_word, uint32_t at, uint32_t bytes,
			    int last)
{
	uint16_t off = (uint16_t)((frag_word & IP_OFFSET) + at / 8);
	uint16_t mf = last ? (uint16_t)(frag_word & IP_MF) : (uint16_t)IP_MF;

	wr16(ip + 2, (uint16_t)(20 + bytes));
	wr16(ip + 6, (uint16_t)((frag_word & IP_DF) | mf | off));
	wr16(ip + 10, 0);
	wr16(ip + 10, csum_ipv4_header(ip));
}

uint32_t fragment_ipv4(uint8_t *frame, uint32_t l3, uint32_t mtu, uint8_t *const *out,
		       uint32_t *out_len)
{
	uint8_t *ip = frame + l3;
	const uint32_t step = piece(mtu), payload = rd16(ip + 2) - 20u;
	const uint16_t frag_word = rd16(ip + 6);
	uint32_t at = step, k = 0;

	for (; at < payload; at += step, k++) {
		uint32_t bytes = payload - at < step ? payload - at : step;

		memcpy(out[k], frame, l3 + 20);
		memcpy(out[k] + l3 + 20, ip + 20 + at, bytes);
		fragment_header(out[k] + l3, frag_word, at, bytes, at + bytes == payload);
		out_len[k] = l3 + 20 + bytes;
	}
	fragment_header(ip, frag_word, 0, step, 0);
	return l3 + 20 + step;
}
