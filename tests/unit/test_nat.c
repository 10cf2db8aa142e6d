/* NAT allocator: exhaustion and reuse, no (address, port) pair ever held
 * twice across workers under random churn, queue steering with a toy RSS
 * hash, IPv4/IPv6 pools (incl. ranges crossing byte boundaries), DNAT
 * with and without a port, and the keys handed to conntrack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nat.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct rfw_nat_rule snat4(uint8_t lo_last, uint8_t hi_last,
				 uint16_t port_lo, uint16_t port_hi)
{
	struct rfw_nat_rule r;

	memset(&r, 0, sizeof(r));
	r.kind = RFW_NAT_SNAT;
	r.family = 4;
	r.addr_lo[0] = r.addr_hi[0] = 198;
	r.addr_lo[1] = r.addr_hi[1] = 51;
	r.addr_lo[2] = r.addr_hi[2] = 100;
	r.addr_lo[3] = lo_last;
	r.addr_hi[3] = hi_last;
	r.port_lo = port_lo;
	r.port_hi = port_hi;
	return r;
}

static struct pkt_key tcp4(uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport)
{
	struct pkt_key k;

	memset(&k, 0, sizeof(k));
	k.family = 4;
	k.proto = 6;
	k.has_ports = 1;
	for (int i = 0; i < 4; i++) {
		k.src[i] = (uint8_t)(src >> (24 - 8 * i));
		k.dst[i] = (uint8_t)(dst >> (24 - 8 * i));
	}
	k.sport = sport;
	k.dport = dport;
	return k;
}

static struct pkt_key random_key(uint8_t family)
{
	struct pkt_key k;

	memset(&k, 0, sizeof(k));
	k.family = family;
	k.proto = rnd() & 1 ? 6 : 17;
	k.has_ports = 1;
	for (int i = 0; i < (family == 4 ? 4 : 16); i++) {
		k.src[i] = (uint8_t)rnd();
		k.dst[i] = (uint8_t)rnd();
	}
	k.sport = (uint16_t)rnd();
	k.dport = (uint16_t)rnd();
	return k;
}

static void init_pool(struct nat_pool *p, const struct rfw_nat_rule *r,
		      uint16_t w, uint16_t n)
{
	struct nat_pool_config c;

	assert_int_equal(nat_pool_config_from_rule(&c, r, NULL, w, n), 0);
	assert_int_equal(nat_pool_init(p, &c), 0);
}

static void test_exhaustion(void **state)
{
	struct rfw_nat_rule r = snat4(10, 11, 1000, 1019);
	struct nat_pool p;
	struct nat_result res[21];
	uint8_t seen[2][1020 - 1000] = { { 0 } };

	(void)state;
	/* Worker 1 of 2: 2 addresses x 10 ports (the odd ones). */
	init_pool(&p, &r, 1, 2);
	assert_int_equal(p.capacity, 20);
	for (int i = 0; i < 20; i++) {
		struct pkt_key k = tcp4(0x0a010000u + (uint32_t)i, 40000, 0x08080808u, 443);
		unsigned a, port;

		assert_int_equal(nat_translate_key(&p, &r, &k, &res[i]), 0);
		a = res[i].wire.src[3] - 10u;
		port = res[i].wire.sport;
		assert_true(a < 2);
		assert_true(port >= 1000 && port <= 1019);
		assert_int_equal((port - 1000) % 2, 1);
		assert_int_equal(seen[a][port - 1000], 0);
		seen[a][port - 1000] = 1;
		/* Reply key is the reverse of the translated one. */
		assert_memory_equal(res[i].reply.dst, res[i].wire.src, 16);
		assert_memory_equal(res[i].reply.src, k.dst, 16);
		assert_int_equal(res[i].reply.dport, port);
		assert_int_equal(res[i].reply.sport, 443);
		assert_int_not_equal(res[i].slot, NAT_SLOT_NONE);
	}
	{
		struct pkt_key k = tcp4(0x0a020000u, 1, 0x08080808u, 443);

		assert_int_equal(nat_translate_key(&p, &r, &k, &res[20]), -1);
		assert_int_equal(p.stats.failures, 1);
		assert_int_equal(p.stats.allocs, 20);
		assert_int_equal(p.stats.in_use, 20);
		/* Freeing makes room, for exactly that pair. */
		nat_release(&p, res[7].slot);
		assert_int_equal(p.stats.frees, 1);
		assert_int_equal(p.stats.in_use, 19);
		assert_int_equal(nat_translate_key(&p, &r, &k, &res[20]), 0);
		assert_memory_equal(res[20].wire.src, res[7].wire.src, 16);
		assert_int_equal(res[20].wire.sport, res[7].wire.sport);
		assert_int_equal(nat_translate_key(&p, &r, &k, &res[20]), -1);
		assert_int_equal(p.stats.failures, 2);
	}
	/* A double free is counted, not applied. */
	nat_release(&p, res[3].slot);
	nat_release(&p, res[3].slot);
	assert_int_equal(p.stats.bad_frees, 1);
	assert_int_equal(p.stats.in_use, 19);
	nat_release(&p, NAT_SLOT_NONE);
	assert_int_equal(p.stats.bad_frees, 1);
	nat_pool_free(&p);
}

/* Random allocate/free churn on several workers sharing one pool; a pair
 * must never be held by two flows at once. */
static void test_workers_never_collide(void **state)
{
	enum { WORKERS = 3, ADDRS = 4, LIVE = 8192 };
	struct rfw_nat_rule r = snat4(1, ADDRS, 2000, 5999);
	struct nat_pool p[WORKERS];
	static uint8_t owner[ADDRS][65536];
	static struct nat_result live[WORKERS][LIVE];
	uint32_t nlive[WORKERS] = { 0 };
	uint64_t allocs = 0, fails = 0;

	(void)state;
	memset(owner, 0, sizeof(owner));
	for (int w = 0; w < WORKERS; w++)
		init_pool(&p[w], &r, (uint16_t)w, WORKERS);
	while (allocs < 100000) {
		int w = (int)(rnd() % WORKERS);
		struct nat_result *res;

		/* Slightly more allocations than frees: the pools fill up
		 * half-way through and then run full for a while. */
		if (nlive[w] && (nlive[w] == LIVE || rnd() % 20 < 9)) {
			uint32_t j = (uint32_t)(rnd() % nlive[w]);

			res = &live[w][j];
			owner[res->wire.src[3] - 1][res->wire.sport] = 0;
			nat_release(&p[w], res->slot);
			live[w][j] = live[w][--nlive[w]];
			continue;
		}
		{
			struct pkt_key k = random_key(4);

			res = &live[w][nlive[w]];
			if (nat_translate_key(&p[w], &r, &k, res) < 0) {
				fails++;
				continue;
			}
		}
		allocs++;
		assert_int_equal(owner[res->wire.src[3] - 1][res->wire.sport], 0);
		owner[res->wire.src[3] - 1][res->wire.sport] = (uint8_t)(w + 1);
		nlive[w]++;
	}
	print_message("churn: %llu allocations, %llu refused (pool full)\n",
		      (unsigned long long)allocs, (unsigned long long)fails);
	assert_true(fails > 0);
	for (int w = 0; w < WORKERS; w++) {
		assert_int_equal(p[w].stats.in_use, nlive[w]);
		assert_int_equal(p[w].stats.allocs - p[w].stats.frees, nlive[w]);
		allocs -= p[w].stats.allocs;
		fails -= p[w].stats.failures;
		assert_int_equal(p[w].stats.bad_frees, 0);
		nat_pool_free(&p[w]);
	}
	assert_int_equal(allocs, 0);
	assert_int_equal(fails, 0);
}

/* A toy RSS hash: mixes the whole tuple, not symmetric. */
static uint32_t toy_queue(const struct pkt_key *k, void *ctx)
{
	uint32_t n = *(const uint32_t *)ctx;
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < 16; i++)
		h = (h ^ k->src[i] ^ (uint64_t)k->dst[i] << 8) * 0x100000001b3ull;
	h = (h ^ k->sport ^ (uint64_t)k->dport << 16 ^ k->proto) * 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (uint32_t)(h % n);
}

static void steer_run(uint16_t workers, uint16_t port_lo, uint16_t port_hi,
		      uint32_t flows, uint32_t *remote_seen, uint64_t *remote_counted)
{
	struct rfw_nat_rule r = snat4(1, 2, port_lo, port_hi);
	uint32_t n = workers;

	*remote_seen = 0;
	*remote_counted = 0;
	for (uint16_t w = 0; w < workers; w++) {
		struct nat_pool_config c;
		struct nat_pool p;

		assert_int_equal(nat_pool_config_from_rule(&c, &r, NULL, w, workers), 0);
		c.strategy = NAT_STEER;
		c.queue_of = toy_queue;
		c.queue_ctx = &n;
		c.queue = w;
		assert_int_equal(nat_pool_init(&p, &c), 0);
		for (uint32_t i = 0; i < flows; i++) {
			struct pkt_key k = random_key(4);
			struct nat_result res;

			if (nat_translate_key(&p, &r, &k, &res) < 0)
				break;
			if (toy_queue(&res.reply, &n) != w) {
				(*remote_seen)++;
				assert_int_equal(res.remote, 1);
			} else {
				assert_int_equal(res.remote, 0);
			}
		}
		assert_int_equal(p.stats.steered + p.stats.remote, p.stats.allocs);
		*remote_counted += p.stats.remote;
		nat_pool_free(&p);
	}
}

static void test_steering(void **state)
{
	uint32_t seen;
	uint64_t counted;

	(void)state;
	/* Plenty of room: 4 workers, 2 x ~15k ports each, 10k flows each. */
	steer_run(4, 1024, 65535, 10000, &seen, &counted);
	print_message("steering, roomy: %u of 40000 replies elsewhere\n", seen);
	assert_int_equal(seen, counted);
	assert_true(seen * 100 <= 4 * 10000);	/* >= 99% come home */
	/* Cramped: 8 workers with 2 x 8 ports each, filled to the brim; the
	 * last ports of each worker can rarely be steered: counted. */
	steer_run(8, 1000, 1063, 16, &seen, &counted);
	print_message("steering, cramped: %u of 128 replies elsewhere\n", seen);
	assert_int_equal(seen, counted);
	assert_true(counted > 0);

	/* The partition strategy does not steer or count. */
	{
		struct rfw_nat_rule r = snat4(1, 1, 1024, 65535);
		struct nat_pool p;
		struct pkt_key k = random_key(4);
		struct nat_result res;

		init_pool(&p, &r, 0, 4);
		assert_int_equal(nat_translate_key(&p, &r, &k, &res), 0);
		assert_int_equal(p.stats.steered + p.stats.remote, 0);
		nat_pool_free(&p);
	}
	/* Steering without a hash is a config error. */
	{
		struct rfw_nat_rule r = snat4(1, 1, 1024, 65535);
		struct nat_pool_config c;
		struct nat_pool p;

		assert_int_equal(nat_pool_config_from_rule(&c, &r, NULL, 0, 1), 0);
		c.strategy = NAT_STEER;
		assert_int_equal(nat_pool_init(&p, &c), -1);
	}
}

static void test_ipv6_pool(void **state)
{
	struct rfw_nat_rule r;
	struct nat_pool p;
	static const uint8_t lo[16] = { 0x20, 0x01, 0x0d, 0xb8, [14] = 0x00, [15] = 0xfe };
	uint8_t seen[6][8] = { { 0 } };

	(void)state;
	memset(&r, 0, sizeof(r));
	r.kind = RFW_NAT_SNAT;
	r.family = 6;
	memcpy(r.addr_lo, lo, 16);
	memcpy(r.addr_hi, lo, 16);
	r.addr_hi[14] = 0x01;
	r.addr_hi[15] = 0x03;	/* ::fe .. ::103: 6 addresses over a carry */
	r.port_lo = 5000;
	r.port_hi = 5007;
	init_pool(&p, &r, 0, 1);
	assert_int_equal(p.addr_count, 6);
	for (int i = 0; i < 48; i++) {
		struct pkt_key k = random_key(6);
		struct nat_result res;
		unsigned a;

		assert_int_equal(nat_translate_key(&p, &r, &k, &res), 0);
		assert_memory_equal(res.wire.src, lo, 14);	/* same /112 */
		a = ((unsigned)res.wire.src[14] << 8 | res.wire.src[15]) - 0xfe;
		assert_true(a < 6);
		assert_int_equal(seen[a][res.wire.sport - 5000], 0);
		seen[a][res.wire.sport - 5000] = 1;
		{
			uint8_t addr[16];
			uint16_t port;

			assert_int_equal(nat_slot_pair(&p, res.slot, addr, &port), 0);
			assert_memory_equal(addr, res.wire.src, 16);
			/* and back: the pipeline finds the slot from the pair */
			assert_int_equal(nat_pair_slot(&p, addr, port), res.slot);
			assert_int_equal(port, res.wire.sport);
		}
	}
	{
		struct pkt_key k = random_key(6);
		struct nat_result res;

		assert_int_equal(nat_translate_key(&p, &r, &k, &res), -1);
		/* An IPv4 packet on an IPv6 pool: refused, counted apart. */
		k = random_key(4);
		assert_int_equal(nat_translate_key(&p, &r, &k, &res), -1);
		assert_int_equal(p.stats.refused, 1);
		assert_int_equal(p.stats.failures, 1);
	}
	nat_pool_free(&p);

	/* A /64 pool is capped, and says so. */
	memset(r.addr_hi + 8, 0xff, 8);
	memcpy(r.addr_lo, lo, 16);
	memset(r.addr_lo + 8, 0, 8);
	init_pool(&p, &r, 0, 1);
	assert_int_equal(p.addr_count, NAT_POOL_MAX_ADDRS);
	assert_int_equal(p.truncated, 1);
	nat_pool_free(&p);
}

static void test_paired_and_masquerade(void **state)
{
	struct rfw_nat_rule r = snat4(1, 8, 1024, 65535);
	struct nat_pool p;
	struct nat_result a, b;
	struct pkt_key k1 = tcp4(0x0a000005u, 1111, 0x01020304u, 80);
	struct pkt_key k2 = tcp4(0x0a000005u, 2222, 0x05060708u, 443);

	(void)state;
	/* One internal host keeps one public address (RFC 4787 REQ-2). */
	init_pool(&p, &r, 0, 1);
	assert_int_equal(nat_translate_key(&p, &r, &k1, &a), 0);
	assert_int_equal(nat_translate_key(&p, &r, &k2, &b), 0);
	assert_memory_equal(a.wire.src, b.wire.src, 16);
	assert_int_not_equal(a.wire.sport, b.wire.sport);
	/* The rest of the key is the original's. */
	assert_memory_equal(a.wire.dst, k1.dst, 16);
	assert_int_equal(a.wire.dport, 80);
	nat_pool_free(&p);

	/* Masquerade: the interface address, known at run time. */
	{
		struct rfw_nat_rule m;
		struct nat_pool_config c;
		const uint8_t ifaddr[4] = { 203, 0, 113, 2 };

		memset(&m, 0, sizeof(m));
		m.kind = RFW_NAT_MASQUERADE;
		m.family = 4;
		assert_int_equal(nat_pool_config_from_rule(&c, &m, NULL, 0, 1), -1);
		assert_int_equal(nat_pool_config_from_rule(&c, &m, ifaddr, 0, 2), 0);
		assert_int_equal(c.port_lo, NAT_DEFAULT_PORT_LO);
		assert_int_equal(c.port_hi, NAT_DEFAULT_PORT_HI);
		assert_int_equal(nat_pool_init(&p, &c), 0);
		assert_int_equal(p.addr_count, 1);
		assert_int_equal(nat_translate_key(&p, &m, &k1, &a), 0);
		assert_memory_equal(a.wire.src, ifaddr, 4);
		assert_int_equal((a.wire.sport - 1024) % 2, 0);
		nat_pool_free(&p);
	}
}

static void test_icmp_and_portless(void **state)
{
	struct rfw_nat_rule r = snat4(1, 1, 1024, 65535);
	struct nat_pool p;
	struct nat_result res;
	struct pkt_key k;

	(void)state;
	init_pool(&p, &r, 0, 1);
	/* Echo request: the identifier (sport = dport) is allocated. */
	memset(&k, 0, sizeof(k));
	k.family = 4;
	k.proto = 1;
	k.icmp_type = 8;
	k.src[0] = 10;
	k.dst[0] = 9;
	k.sport = k.dport = 77;
	assert_int_equal(nat_translate_key(&p, &r, &k, &res), 0);
	assert_int_not_equal(res.slot, NAT_SLOT_NONE);
	assert_int_equal(res.wire.sport, res.wire.dport);
	assert_int_equal(res.reply.sport, res.wire.sport);
	assert_int_equal(res.reply.dport, res.wire.sport);
	assert_int_equal(res.reply.icmp_type, 0);
	assert_int_equal(p.stats.in_use, 1);
	/* GRE: the address only, no slot. */
	k.proto = 47;
	k.icmp_type = 0;
	assert_int_equal(nat_translate_key(&p, &r, &k, &res), 0);
	assert_int_equal(res.slot, NAT_SLOT_NONE);
	assert_int_equal(res.wire.src[0], 198);
	assert_int_equal(res.wire.sport, 77);
	assert_int_equal(p.stats.in_use, 1);
	nat_pool_free(&p);
}

static void test_dnat(void **state)
{
	struct rfw_nat_rule r;
	struct nat_result res;
	struct pkt_key k = tcp4(0x01020304u, 50000, 0xcb00710au, 8080);

	(void)state;
	memset(&r, 0, sizeof(r));
	r.kind = RFW_NAT_DNAT;
	r.family = 4;
	r.addr_lo[0] = 10;
	r.addr_lo[1] = 1;
	r.addr_lo[3] = 10;
	r.port_lo = 80;
	/* With a port. */
	assert_int_equal(nat_translate_key(NULL, &r, &k, &res), 0);
	assert_memory_equal(res.wire.dst, r.addr_lo, 16);
	assert_int_equal(res.wire.dport, 80);
	assert_memory_equal(res.wire.src, k.src, 16);
	assert_int_equal(res.wire.sport, 50000);
	assert_memory_equal(res.reply.src, r.addr_lo, 16);
	assert_int_equal(res.reply.sport, 80);
	assert_memory_equal(res.reply.dst, k.src, 16);
	assert_int_equal(res.reply.dport, 50000);
	assert_int_equal(res.slot, NAT_SLOT_NONE);
	/* Without: the port is kept. */
	r.port_lo = 0;
	assert_int_equal(nat_translate_key(NULL, &r, &k, &res), 0);
	assert_int_equal(res.wire.dport, 8080);
	assert_int_equal(res.reply.sport, 8080);
	/* IPv6. */
	{
		struct pkt_key k6 = random_key(6);

		r.family = 6;
		memset(r.addr_lo, 0, 16);
		r.addr_lo[0] = 0xfd;
		r.addr_lo[15] = 0x10;
		r.port_lo = 8443;
		k6.proto = 6;
		assert_int_equal(nat_translate_key(NULL, &r, &k6, &res), 0);
		assert_memory_equal(res.wire.dst, r.addr_lo, 16);
		assert_int_equal(res.wire.dport, 8443);
		/* Family mismatch. */
		assert_int_equal(nat_translate_key(NULL, &r, &k, &res), -1);
	}
	/* DNAT then SNAT: the reply goes from the real server to the pool. */
	{
		struct rfw_nat_rule s = snat4(1, 1, 1024, 65535);
		struct nat_pool p;
		struct nat_result d, sn;

		r.family = 4;
		memset(r.addr_lo, 0, 16);
		r.addr_lo[0] = 10;
		r.addr_lo[3] = 10;
		r.port_lo = 80;
		init_pool(&p, &s, 0, 1);
		assert_int_equal(nat_translate_key(NULL, &r, &k, &d), 0);
		assert_int_equal(nat_translate_key(&p, &s, &d.wire, &sn), 0);
		assert_memory_equal(sn.reply.src, r.addr_lo, 16);
		assert_int_equal(sn.reply.sport, 80);
		assert_int_equal(sn.reply.dst[0], 198);
		assert_int_equal(sn.reply.dport, sn.wire.sport);
		nat_pool_free(&p);
	}
}

/* nat_pair_slot is nat_slot_pair's inverse for every slot of a worker's
 * share, and refuses pairs that are not the worker's. */
static void test_pair_slot(void **state)
{
	struct rfw_nat_rule r;
	struct nat_pool p;
	uint8_t addr[16];
	uint16_t port;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.kind = RFW_NAT_SNAT;
	r.family = 4;
	memcpy(r.addr_lo, (uint8_t[]){10, 9, 0, 250}, 4);
	memcpy(r.addr_hi, (uint8_t[]){10, 9, 1, 5}, 4);	/* 12 addresses over a carry */
	r.port_lo = 2000;
	r.port_hi = 2099;
	init_pool(&p, &r, 1, 3);
	for (uint32_t slot = 0; slot < p.capacity; slot++) {
		assert_int_equal(nat_slot_pair(&p, slot, addr, &port), 0);
		assert_int_equal(nat_pair_slot(&p, addr, port), slot);
		assert_int_equal((port - 2000) % 3, 1);
		assert_int_equal(nat_pair_slot(&p, addr, (uint16_t)(port + 1)), NAT_SLOT_NONE);
	}
	assert_int_equal(nat_pair_slot(&p, (uint8_t[]){10, 9, 0, 249}, 2001), NAT_SLOT_NONE);
	assert_int_equal(nat_pair_slot(&p, (uint8_t[]){10, 9, 1, 6}, 2001), NAT_SLOT_NONE);
	assert_int_equal(nat_pair_slot(&p, (uint8_t[]){11, 9, 0, 250}, 2001), NAT_SLOT_NONE);
	assert_int_equal(nat_pair_slot(&p, (uint8_t[]){10, 9, 0, 250}, 2100), NAT_SLOT_NONE);
	nat_pool_free(&p);
}

/* start_seed: 0 hands out the first port first; a seed starts
 * elsewhere (a new rampartd does not reuse its predecessor's ports
 * first), each seed somewhere else, and nat_claim takes a given slot
 * once. */
static void test_start_and_claim(void **state)
{
	struct rfw_nat_rule r = snat4(10, 10, 1024, 65535);
	struct pkt_key k = random_key(4);
	uint16_t first[3];
	struct nat_result res;

	(void)state;
	for (uint64_t seed = 0; seed < 3; seed++) {
		struct nat_pool_config c;
		struct nat_pool p;

		assert_int_equal(nat_pool_config_from_rule(&c, &r, NULL, 0, 1), 0);
		c.start_seed = seed;
		assert_int_equal(nat_pool_init(&p, &c), 0);
		assert_int_equal(nat_translate_key(&p, &r, &k, &res), 0);
		first[seed] = res.wire.sport;
		if (seed == 0) {
			assert_int_equal(nat_claim(&p, res.slot), -1);	/* taken */
			assert_int_equal(nat_claim(&p, res.slot + 1), 0);
			assert_int_equal(nat_claim(&p, res.slot + 1), -1);
			assert_int_equal(nat_claim(&p, p.capacity), -1);
			assert_int_equal(p.stats.in_use, 2);
			/* the next port handed out skips the claimed one */
			assert_int_equal(nat_translate_key(&p, &r, &k, &res), 0);
			assert_int_equal(res.wire.sport, 1026);
		}
		nat_pool_free(&p);
	}
	assert_int_equal(first[0], 1024);
	assert_int_not_equal(first[1], 1024);
	assert_int_not_equal(first[2], 1024);
	assert_int_not_equal(first[1], first[2]);
}

static void test_bad_configs(void **state)
{
	struct rfw_nat_rule r = snat4(5, 4, 1024, 2000);	/* hi < lo */
	struct nat_pool_config c;
	struct nat_pool p;

	(void)state;
	assert_int_equal(nat_pool_config_from_rule(&c, &r, NULL, 0, 1), 0);
	assert_int_equal(nat_pool_init(&p, &c), -1);
	r = snat4(1, 1, 1000, 1002);
	/* Worker 3 of 4 has no port of a 3-port range. */
	assert_int_equal(nat_pool_config_from_rule(&c, &r, NULL, 3, 4), 0);
	assert_int_equal(nat_pool_init(&p, &c), -1);
	assert_int_equal(nat_pool_config_from_rule(&c, &r, NULL, 4, 4), -1);
	r.kind = RFW_NAT_DNAT;
	assert_int_equal(nat_pool_config_from_rule(&c, &r, NULL, 0, 1), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exhaustion),
		cmocka_unit_test(test_workers_never_collide),
		cmocka_unit_test(test_steering),
		cmocka_unit_test(test_ipv6_pool),
		cmocka_unit_test(test_paired_and_masquerade),
		cmocka_unit_test(test_icmp_and_portless),
		cmocka_unit_test(test_dnat),
		cmocka_unit_test(test_pair_slot),
		cmocka_unit_test(test_start_and_claim),
		cmocka_unit_test(test_bad_configs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
