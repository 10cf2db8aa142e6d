/* Toeplitz tables and the NIC's indirection table for --home rss
 * (rss_home.h). Built once by rampartd, read by every worker. */
#include "rss_home.h"

#include <stdio.h>

void rss_key_symmetric(uint8_t *key, size_t len)
{
	for (size_t i = 0; i < len; i++)
		key[i] = i % 2 ? 0x5a : 0x6d;
}

static int key_bit(const uint8_t *key, size_t key_len, size_t bit)
{
	return bit / 8 < key_len ? (key[bit / 8] >> (7 - bit % 8)) & 1 : 0;
}

/* The 32 key bits from bit `from` on. */
static uint32_t key_window(const uint8_t *key, size_t key_len, size_t from)
{
	uint32_t w = 0;

	for (size_t i = 0; i < 32; i++)
		w = w << 1 | (uint32_t)key_bit(key, key_len, from + i);
	return w;
}

uint32_t rss_toeplitz_ref(const uint8_t *key, size_t key_len, const uint8_t *in, size_t n)
{
	uint32_t h = 0;

	for (size_t i = 0; i < 8 * n; i++)
		if ((in[i / 8] >> (7 - i % 8)) & 1)
			h ^= key_window(key, key_len, i);
	return h;
}

/* Symmetric for swapped endpoints: the window at bit i equals the one at
 * i + 16 wherever a swap moves an input bit (addresses by 32 or 128
 * bits, ports by 16), which a key of one repeated 16-bit pattern is. */
static int key_symmetric(const uint8_t *key, size_t key_len)
{
	for (size_t i = 0; i + 2 < RSS_KEY_MIN && i + 2 < key_len; i++)
		if (key[i] != key[i + 2])
			return 0;
	return 1;
}

int rss_home_init(struct rss_home *r, const uint8_t *key, size_t key_len, const uint32_t *table,
		  uint32_t table_size, uint32_t workers, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	if (key_len < RSS_KEY_MIN || key_len > RSS_KEY_MAX) {
		snprintf(err, errlen, "an RSS key of %zu bytes (%d to %d are usable)", key_len,
			 RSS_KEY_MIN, RSS_KEY_MAX);
		return -1;
	}
	if (!key_symmetric(key, key_len)) {
		snprintf(err, errlen, "the RSS key is not symmetric (one 16-bit pattern repeated, "
				      "such as 6d:5a): the two directions of a flow reach different "
				      "queues");
		return -1;
	}
	if (!table_size || table_size > RSS_TABLE_MAX) {
		snprintf(err, errlen, "an RSS indirection table of %u entries (1 to %d are usable)",
			 table_size, RSS_TABLE_MAX);
		return -1;
	}
	if (!workers || workers > 256) {
		snprintf(err, errlen, "%u workers", workers);
		return -1;
	}
	for (uint32_t i = 0; i < table_size; i++) {
		uint32_t q = table ? table[i] : i % workers;

		if (q >= workers) {
			snprintf(err, errlen, "RSS indirection table entry %u sends to queue %u, "
					      "which no worker reads (%u workers: ethtool -X IF equal %u "
					      "spreads over their queues)", i, q, workers, workers);
			return -1;
		}
		r->table[i] = (uint8_t)q;
	}
	r->table_size = table_size;
	r->table_mask = (table_size & (table_size - 1)) ? 0 : table_size - 1;
	memcpy(r->key, key, key_len);
	r->key_len = (uint32_t)key_len;
	for (uint32_t b = 0; b < RSS_INPUT_MAX; b++)
		for (uint32_t v = 0; v < 256; v++) {
			uint32_t h = 0;

			for (uint32_t bit = 0; bit < 8; bit++)
				if ((v >> (7 - bit)) & 1)
					h ^= key_window(key, key_len, 8 * b + bit);
			r->byte[b][v] = h;
		}
	for (int f = 0; f < 2; f++)
		r->ports[f][0] = r->ports[f][1] = 1;
	return 0;
}

void rss_home_ports(struct rss_home *r, uint8_t family, int udp, int hashed)
{
	r->ports[family == 6][udp != 0] = hashed != 0;
}

void rss_key_format(const uint8_t *key, size_t len, char *out, size_t outlen)
{
	size_t at = 0;

	if (outlen)
		out[0] = 0;
	for (size_t i = 0; i < len && at + 3 < outlen; i++)
		at += (size_t)snprintf(out + at, outlen - at, i ? ":%02x" : "%02x", key[i]);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int rss_key_parse(const char *s, uint8_t *key, size_t max, size_t *len)
{
	size_t n = 0;

	if (!strcmp(s, "symmetric")) {
		if (max < RSS_KEY_MIN)
			return -1;
		rss_key_symmetric(key, RSS_KEY_MIN);
		*len = RSS_KEY_MIN;
		return 0;
	}
	while (*s) {
		int hi = hex_digit(s[0]), lo = hi < 0 ? -1 : hex_digit(s[1]);

		if (hi < 0 || lo < 0 || n == max)
			return -1;
		key[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (*s == ':' && s[1])
			s++;
	}
	*len = n;
	return n ? 0 : -1;
}
