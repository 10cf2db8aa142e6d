/* Flows homed where the NIC's receive-side scaling puts them (rampartd
 * --home rss). With handoff, a frame goes to the worker that owns its
 * flow (home.h); by default that owner is a keyed hash of the tuple,
 * which agrees with the queue the NIC chose for 1 frame in n. A NIC
 * whose RSS uses a symmetric Toeplitz key (the 16-bit pattern 6d:5a
 * repeated, which the DPDK backend sets itself) sends both directions
 * of an untranslated flow to one queue; homing a flow on the worker of
 * that queue (key, hash, indirection table: the NIC's own) means its
 * frames arrive where they belong and are never handed over, and SNAT
 * steering picks ports whose replies the NIC sends there too.
 *
 * Only TCP and UDP whose ports the NIC hashes (4-tuple) are homed so:
 * other protocols, and UDP on a NIC that hashes it by addresses only,
 * keep the keyed hash (their NAT steering needs a hash that sees the
 * identifier or port). The home stays a function of the tuple alone,
 * the same on every worker, which is all the handoff relies on.
 *
 * Toeplitz (Microsoft's "RSS hashing functions"): for each set input bit
 * i, counted from the first byte's most significant bit, the 32 key bits
 * from bit i are xored into the result. It is linear in the input, so
 * the hash is the xor of one table entry per input byte (36 tables of
 * 256 entries: the 36 bytes of an IPv6 4-tuple). */
#ifndef RAMPART_RSS_HOME_H
#define RAMPART_RSS_HOME_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RSS_KEY_MIN 40		/* an IPv6 4-tuple's 36 bytes and 4 more */
#define RSS_KEY_MAX 64
#define RSS_TABLE_MAX 2048	/* the largest indirection table a driver has */
#define RSS_INPUT_MAX 36
#define RSS_TABLE_DEFAULT 128	/* assumed when the NIC does not say */

struct rss_home {
	uint32_t byte[RSS_INPUT_MAX][256];	/* Toeplitz of byte b = v */
	uint32_t table_size;			/* indirection table entries */
	uint32_t table_mask;			/* table_size - 1 when a power of two, else 0 */
	uint8_t ports[2][2];			/* [IPv6][UDP]: the NIC hashes the ports */
	uint8_t table[RSS_TABLE_MAX];		/* hash -> queue (= worker) */
	uint8_t key[RSS_KEY_MAX];
	uint32_t key_len;
};

/* What a port's RSS does, as its driver says (or as rampartd is told). */
struct rss_port_conf {
	uint8_t key[RSS_KEY_MAX];
	uint32_t key_len;
	uint32_t table_size;		/* 0: not said (Linux's default, i mod queues) */
	uint32_t table[RSS_TABLE_MAX];	/* queue numbers */
	uint8_t ports[2][2];		/* [IPv6][UDP]: the ports are hashed */
};

/* The symmetric key of `len` bytes (6d:5a repeated), as the DPDK
 * backend gives its ports. */
void rss_key_symmetric(uint8_t *key, size_t len);

/* Toeplitz of n input bytes, bit by bit: the definition, for tests and
 * for keys not yet in a struct rss_home. */
uint32_t rss_toeplitz_ref(const uint8_t *key, size_t key_len, const uint8_t *in, size_t n);

/* Set up r from a NIC's key and indirection table (queue numbers; NULL:
 * Linux's default, entry i = i mod workers, of table_size entries) for
 * `workers` workers, worker q reading queue q of every port. Ports are
 * taken as hashed for TCP and UDP of both families (rss_home_ports to
 * say otherwise). Refuses (-1, err) a key that is too short or not
 * symmetric (the two directions of a flow would reach different queues
 * and no owner could match both), a table too large, and a table entry
 * that names a queue with no worker. */
int rss_home_init(struct rss_home *r, const uint8_t *key, size_t key_len, const uint32_t *table,
		  uint32_t table_size, uint32_t workers, char *err, size_t errlen);

/* Whether the NIC hashes the ports of TCP (udp = 0) or UDP (udp = 1) of
 * a family (4 or 6); 0 leaves those flows to the keyed hash. */
void rss_home_ports(struct rss_home *r, uint8_t family, int udp, int hashed);

/* "6d:5a:56:..." (at most 3 * len bytes with its NUL) */
void rss_key_format(const uint8_t *key, size_t len, char *out, size_t outlen);

/* Parse "symmetric" (the 40-byte symmetric key) or hex bytes, with or
 * without ':' between them; the byte count in *len. -1 if malformed. */
int rss_key_parse(const char *s, uint8_t *key, size_t max, size_t *len);

static inline uint32_t rss_hash(const struct rss_home *r, const uint8_t *in, uint32_t n)
{
	uint32_t h = 0;

	for (uint32_t i = 0; i < n; i++)
		h ^= r->byte[i][in[i]];
	return h;
}

/* The NIC's input for a 4-tuple: source and destination addresses
 * (alen bytes each), then the ports in network order; its length. */
static inline uint32_t rss_input(uint8_t *in, const uint8_t *src, const uint8_t *dst, uint32_t alen,
				 uint16_t sport, uint16_t dport)
{
	memcpy(in, src, alen);
	memcpy(in + alen, dst, alen);
	in[2 * alen] = (uint8_t)(sport >> 8);
	in[2 * alen + 1] = (uint8_t)sport;
	in[2 * alen + 2] = (uint8_t)(dport >> 8);
	in[2 * alen + 3] = (uint8_t)dport;
	return 2 * alen + 4;
}

/* Whether the tuple's flow is homed by the NIC (TCP or UDP whose ports
 * it hashes); if so, its worker in *worker. Addresses as pkt_key keeps
 * them (IPv4 in the first 4 bytes), ports in host order. */
static inline int rss_home_worker(const struct rss_home *r, const uint8_t src[16],
				  const uint8_t dst[16], uint16_t sport, uint16_t dport,
				  uint8_t proto, uint8_t family, uint32_t *worker)
{
	uint8_t in[RSS_INPUT_MAX];
	uint32_t alen = family == 6 ? 16 : 4, h;

	if ((proto != 6 && proto != 17) || (family != 4 && family != 6) ||
	    !r->ports[family == 6][proto == 17])
		return 0;
	h = rss_hash(r, in, rss_input(in, src, dst, alen, sport, dport));
	*worker = r->table[r->table_mask ? h & r->table_mask : h % r->table_size];
	return 1;
}

/* The queue the NIC gives a fragment: by its addresses alone (NICs hash
 * fragments, which may have no ports, by source and destination). */
static inline uint32_t rss_home_addr_worker(const struct rss_home *r, const uint8_t src[16],
					    const uint8_t dst[16], uint8_t family)
{
	uint8_t in[32];
	uint32_t alen = family == 6 ? 16 : 4, h;

	memcpy(in, src, alen);
	memcpy(in + alen, dst, alen);
	h = rss_hash(r, in, 2 * alen);
	return r->table[r->table_mask ? h & r->table_mask : h % r->table_size];
}

/* rss_home_worker of an IPv4 tuple as a frame holds it: source,
 * destination, source port, destination port in a row (`in`, 12 bytes:
 * an IPv4 header without options and its L4 header), which is the
 * NIC's input as it stands. */
static inline int rss_home_worker4(const struct rss_home *r, const uint8_t in[12], uint8_t proto,
				   uint32_t *worker)
{
	uint32_t h;

	if ((proto != 6 && proto != 17) || !r->ports[0][proto == 17])
		return 0;
	h = rss_hash(r, in, 12);
	*worker = r->table[r->table_mask ? h & r->table_mask : h % r->table_size];
	return 1;
}

#endif
