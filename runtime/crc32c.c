/* CRC32C, reflected polynomial 0x82F63B78 (RFC 3720 appendix B.4). Used
 * off the fast path only (artifact load), but a reload reads the whole
 * artifact: with SSE4.2 (every x86-64-v2 CPU) the CRC32 instruction does
 * 8 bytes at a time, about 20x the byte-wise table, which stays as the
 * portable fallback. */
#include "crc32c.h"

#include <string.h>

#if defined(__SSE4_2__)
#include <nmmintrin.h>

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t c = ~crc;

	for (; len && ((uintptr_t)p & 7); len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	for (; len >= 8; len -= 8, p += 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = _mm_crc32_u64(c, w);
	}
	for (; len; len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return ~(uint32_t)c;
}

#else

static uint32_t crc_table[256];

/* Before main: no thread can see the table half made. */
__attribute__((constructor)) static void crc_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

#endif
