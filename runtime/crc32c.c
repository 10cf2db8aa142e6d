/* CRC32C, reflected polynomial 0x82F63B78 (RFC 3720 appendix B.4),
 * byte-wise table. Used off the fast path only (artifact load). */
#include "crc32c.h"

static uint32_t crc_table[256];
static int crc_table_ready;

static void crc_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
	crc_table_ready = 1;
}

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!crc_table_ready)
		crc_table_init();
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
