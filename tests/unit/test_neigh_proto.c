/* ARP and ND for ports without a kernel (daemon/neigh_proto.h): requests
 * for the port's addresses answered as RFC 826 and RFC 4861 say, answers
 * learnt, what is not ours or not well formed left alone, and the
 * solicitations rampartd sends; checksums against a full recomputation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "csum.h"
#include "neigh_cache.h"
#include "neigh_proto.h"

static const struct np_port port = {
	.mac = {2, 0xfa, 0, 0, 0, 1}, .has_v4 = 1, .has_v6 = 1,
	.v4 = {10, 60, 1, 1}, .v6 = {0xfd, 0, 0, 0x60, 0, 1, [15] = 1},
};
static const uint8_t host_mac[6] = {2, 0xcc, 0, 0, 0, 2};
static const uint8_t host4[4] = {10, 60, 1, 2};
static const uint8_t host6[16] = {0xfd, 0, 0, 0x60, 0, 1, [15] = 2};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* An IPv6 frame's ICMPv6 checksum is right. */
static int nd_csum_ok(const uint8_t *f, uint32_t len)
{
	uint32_t plen = get16(f + 18);

	return len >= 54 + plen &&
	       csum_l4(6, f + 22, f + 38, 58, f + 54, plen) == get16(f + 56);
}

/* l says the host (at addr of family) is at host_mac: learnt (NP_LEARN)
 * or news for an entry already known only (NP_MERGE). */
static void assert_told_host(const struct np_learned *l, uint8_t family, const uint8_t *addr,
			     uint8_t how)
{
	assert_int_equal(l->family, family);
	assert_int_equal(l->how, how);
	assert_memory_equal(l->addr, addr, family == 4 ? 4 : 16);
	assert_memory_equal(l->mac, host_mac, 6);
}

static void assert_learnt_host(const struct np_learned *l, uint8_t family, const uint8_t *addr)
{
	assert_told_host(l, family, addr, NP_LEARN);
}

/* An answer to us: learnt if we asked (NP_ANSWER). */
static void assert_answer_of_host(const struct np_learned *l, uint8_t family, const uint8_t *addr)
{
	assert_told_host(l, family, addr, NP_ANSWER);
}

/* An IPv6 frame's ICMPv6 checksum made right again after an edit. */
static void nd_resum(uint8_t *f)
{
	uint16_t c;

	f[56] = f[57] = 0;
	c = csum_l4(6, f + 22, f + 38, 58, f + 54, get16(f + 18));
	f[56] = (uint8_t)(c >> 8);
	f[57] = (uint8_t)c;
}

/* The host's frame asking for `what` (4: ARP, 6: NS), built as the
 * host would: by np_solicit from a port that is the host. */
static uint32_t host_asks(uint8_t family, const uint8_t *what, uint8_t *f)
{
	struct np_port h = {.has_v4 = 1, .has_v6 = 1};

	memcpy(h.mac, host_mac, 6);
	memcpy(h.v4, host4, 4);
	memcpy(h.v6, host6, 16);
	return np_solicit(&h, family, what, f);
}

static void test_arp_request_answered(void **state)
{
	uint8_t f[NP_FRAME_MAX], r[NP_FRAME_MAX];
	struct np_learned l;
	uint32_t len = host_asks(4, port.v4, f), n;
	(void)state;

	assert_int_equal(len, 60);
	assert_true(np_is_neigh(f, len));
	n = np_receive(&port, f, len, &l, r);
	assert_int_equal(n, 60);
	assert_memory_equal(r, host_mac, 6);		/* to the asker */
	assert_memory_equal(r + 6, port.mac, 6);
	assert_int_equal(get16(r + 12), 0x0806);
	assert_int_equal(get16(r + 20), 2);		/* reply */
	assert_memory_equal(r + 22, port.mac, 6);	/* sha: us */
	assert_memory_equal(r + 28, port.v4, 4);
	assert_memory_equal(r + 32, host_mac, 6);
	assert_memory_equal(r + 38, host4, 4);
	assert_learnt_host(&l, 4, host4);			/* and the asker learnt */
}

static void test_arp_reply_learnt(void **state)
{
	uint8_t f[NP_FRAME_MAX], r[NP_FRAME_MAX];
	struct np_learned l;
	uint32_t len = np_solicit(&port, 4, host4, f);
	(void)state;

	assert_int_equal(len, 60);
	for (int i = 0; i < 6; i++)
		assert_int_equal(f[i], 0xff);		/* broadcast */
	assert_int_equal(get16(f + 20), 1);
	assert_memory_equal(f + 38, host4, 4);
	/* the host's answer: our request turned around */
	memcpy(r, f, len);
	memcpy(r, port.mac, 6);
	memcpy(r + 6, host_mac, 6);
	r[21] = 2;
	memcpy(r + 22, host_mac, 6);
	memcpy(r + 28, host4, 4);
	memcpy(r + 32, port.mac, 6);
	memcpy(r + 38, port.v4, 4);
	assert_int_equal(np_receive(&port, r, len, &l, f), 0);	/* nothing to answer */
	assert_answer_of_host(&l, 4, host4);
}

/* Requests for another host: no answer, news of the sender only (RFC
 * 826's merge). Probes, multicast senders, our own address claimed,
 * truncated frames and foreign hardware types: nothing learnt. */
static void test_arp_not_ours(void **state)
{
	uint8_t f[NP_FRAME_MAX], g[NP_FRAME_MAX], r[NP_FRAME_MAX];
	struct np_learned l;
	uint32_t len = host_asks(4, (uint8_t[]){10, 60, 1, 3}, f);
	(void)state;

	assert_int_equal(np_receive(&port, f, len, &l, r), 0);
	assert_told_host(&l, 4, host4, NP_MERGE);
	memcpy(g, f, len);
	memcpy(g + 28, port.v4, 4);			/* claims our address */
	assert_int_equal(np_receive(&port, g, len, &l, r), 0);
	assert_int_equal(l.family, 0);
	len = host_asks(4, port.v4, f);
	memcpy(g, f, len);
	memset(g + 28, 0, 4);				/* a probe: spa 0.0.0.0 */
	assert_int_equal(np_receive(&port, g, len, &l, r), 60);	/* answered, */
	assert_int_equal(l.family, 0);				/* not learnt */
	memcpy(g, f, len);
	g[22] |= 1;					/* multicast sender */
	assert_int_equal(np_receive(&port, g, len, &l, r), 0);
	assert_int_equal(l.family, 0);
	memcpy(g, f, len);
	g[15] = 6;					/* IEEE 802 hardware */
	assert_int_equal(np_receive(&port, g, len, &l, r), 0);
	for (uint32_t cut = 0; cut < 42; cut++) {
		assert_int_equal(np_receive(&port, f, cut, &l, r), 0);
		assert_int_equal(l.family, 0);
	}
	{
		struct np_port no4 = port;

		no4.has_v4 = 0;
		assert_int_equal(np_receive(&no4, f, len, &l, r), 0);
		assert_int_equal(np_solicit(&no4, 4, host4, r), 0);
	}
}

static void test_ns_answered(void **state)
{
	uint8_t f[NP_FRAME_MAX], r[NP_FRAME_MAX];
	struct np_learned l;
	uint32_t len = host_asks(6, port.v6, f), n;
	(void)state;

	assert_int_equal(len, NP_FRAME_MAX);
	assert_true(np_is_neigh(f, len));
	assert_true(nd_csum_ok(f, len));
	/* to the solicited-node group of our address */
	{
		const uint8_t group[6] = {0x33, 0x33, 0xff, port.v6[13], port.v6[14], port.v6[15]};

		assert_memory_equal(f, group, 6);
	}
	assert_int_equal(f[38], 0xff);
	assert_int_equal(f[50], 0xff);
	n = np_receive(&port, f, len, &l, r);
	assert_int_equal(n, NP_FRAME_MAX);
	assert_memory_equal(r, host_mac, 6);
	assert_memory_equal(r + 6, port.mac, 6);
	assert_int_equal(r[21], 255);			/* hop limit */
	assert_memory_equal(r + 22, port.v6, 16);
	assert_memory_equal(r + 38, host6, 16);
	assert_int_equal(r[54], 136);
	assert_int_equal(r[58], 0xe0);			/* router, solicited, override */
	assert_memory_equal(r + 62, port.v6, 16);
	assert_int_equal(r[78], 2);			/* target link-layer option */
	assert_memory_equal(r + 80, port.mac, 6);
	assert_true(nd_csum_ok(r, n));
	assert_learnt_host(&l, 6, host6);
}

static void test_na_learnt(void **state)
{
	uint8_t f[NP_FRAME_MAX], r[NP_FRAME_MAX];
	struct np_learned l;
	struct np_port h = {.has_v6 = 1};
	uint32_t len = np_solicit(&port, 6, host6, f);
	(void)state;

	assert_int_equal(len, NP_FRAME_MAX);
	assert_true(nd_csum_ok(f, len));
	/* the host answers our solicitation (np_receive as the host) */
	memcpy(h.mac, host_mac, 6);
	memcpy(h.v6, host6, 16);
	assert_int_equal(np_receive(&h, f, len, &l, r), NP_FRAME_MAX);
	assert_int_equal(l.family, 6);			/* the host learnt us */
	assert_memory_equal(l.addr, port.v6, 16);
	assert_int_equal(np_receive(&port, r, NP_FRAME_MAX, &l, f), 0);
	assert_answer_of_host(&l, 6, host6);
}

/* ND that RFC 4861 says to drop: a hop limit below 255 (not on-link), a
 * bad checksum, an option of length 0, a truncated message; and a
 * solicitation for another address (not answered). */
static void test_nd_refused(void **state)
{
	uint8_t f[NP_FRAME_MAX], g[NP_FRAME_MAX], r[NP_FRAME_MAX];
	struct np_learned l;
	uint32_t len = host_asks(6, port.v6, f);
	(void)state;

	memcpy(g, f, len);
	g[21] = 64;
	assert_int_equal(np_receive(&port, g, len, &l, r), 0);
	assert_int_equal(l.family, 0);
	memcpy(g, f, len);
	g[57] ^= 1;
	assert_int_equal(np_receive(&port, g, len, &l, r), 0);
	memcpy(g, f, len);
	g[79] = 0;					/* option length 0 */
	g[56] = g[57] = 0;
	{
		uint16_t c = csum_l4(6, g + 22, g + 38, 58, g + 54, 32);

		g[56] = (uint8_t)(c >> 8);
		g[57] = (uint8_t)c;
	}
	assert_int_equal(np_receive(&port, g, len, &l, r), 0);
	assert_int_equal(l.family, 0);
	for (uint32_t cut = 0; cut < len; cut++)
		assert_int_equal(np_receive(&port, f, cut, &l, r), 0);
	{
		const uint8_t other[16] = {0xfd, 0, 0, 0x60, 0, 1, [15] = 9};

		len = host_asks(6, other, f);
	}
	assert_int_equal(np_receive(&port, f, len, &l, r), 0);	/* not answered, */
	assert_told_host(&l, 6, host6, NP_MERGE);		/* news of the asker only */
	{
		const uint8_t ip4[60] = {[12] = 0x08, [13] = 0x00};

		assert_false(np_is_neigh(ip4, 60));	/* IPv4 */
	}
}

/* What moves a neighbour already known (RFC 826's merge, RFC 4861
 * 7.2.5): a gratuitous ARP, an ARP reply to another host, an
 * unsolicited NA with override, another host's answer with override; an
 * NA with neither solicited-to-us nor override tells nothing. */
static void test_merges(void **state)
{
	uint8_t f[NP_FRAME_MAX], r[NP_FRAME_MAX], g[NP_FRAME_MAX];
	struct np_learned l;
	struct np_port h = {.has_v4 = 1, .has_v6 = 1};
	uint32_t len;
	(void)state;

	len = host_asks(4, host4, f);			/* gratuitous: its own */
	assert_int_equal(np_receive(&port, f, len, &l, r), 0);
	assert_told_host(&l, 4, host4, NP_MERGE);
	memcpy(g, f, len);				/* a reply to another host */
	g[21] = 2;
	memcpy(g + 38, (uint8_t[]){10, 60, 1, 3}, 4);
	assert_int_equal(np_receive(&port, g, len, &l, r), 0);
	assert_told_host(&l, 4, host4, NP_MERGE);

	/* the host's solicited answer to us, then edited */
	memcpy(h.mac, host_mac, 6);
	memcpy(h.v4, host4, 4);
	memcpy(h.v6, host6, 16);
	len = np_solicit(&port, 6, host6, f);
	assert_int_equal(np_receive(&h, f, len, &l, r), NP_FRAME_MAX);
	assert_int_equal(r[58], 0xe0);
	assert_int_equal(np_receive(&port, r, NP_FRAME_MAX, &l, f), 0);
	assert_answer_of_host(&l, 6, host6);
	memcpy(g, r, NP_FRAME_MAX);
	g[58] = 0x20;					/* unsolicited, override */
	nd_resum(g);
	assert_int_equal(np_receive(&port, g, NP_FRAME_MAX, &l, f), 0);
	assert_told_host(&l, 6, host6, NP_MERGE);
	g[58] = 0x00;					/* unsolicited, no override */
	nd_resum(g);
	assert_int_equal(np_receive(&port, g, NP_FRAME_MAX, &l, f), 0);
	assert_told_host(&l, 6, host6, NP_MERGE_KEEP);
	memcpy(g, r, NP_FRAME_MAX);			/* solicited, to another */
	g[53] = 9;
	nd_resum(g);
	assert_int_equal(np_receive(&port, g, NP_FRAME_MAX, &l, f), 0);
	assert_told_host(&l, 6, host6, NP_MERGE);
	g[58] = 0x40;					/* ... without override */
	nd_resum(g);
	assert_int_equal(np_receive(&port, g, NP_FRAME_MAX, &l, f), 0);
	assert_told_host(&l, 6, host6, NP_MERGE_KEEP);
}

/* Reachability probes: to the MAC the neighbour had, asking for its
 * address; its answer teaches as any answer to us. */
static void test_probe(void **state)
{
	uint8_t f[NP_FRAME_MAX], r[NP_FRAME_MAX];
	struct np_learned l;
	struct np_port h = {.has_v4 = 1, .has_v6 = 1};
	uint32_t len;
	(void)state;

	memcpy(h.mac, host_mac, 6);
	memcpy(h.v4, host4, 4);
	memcpy(h.v6, host6, 16);
	len = np_probe(&port, 4, host4, host_mac, f);
	assert_int_equal(len, 60);
	assert_memory_equal(f, host_mac, 6);		/* unicast */
	assert_memory_equal(f + 6, port.mac, 6);
	assert_int_equal(get16(f + 20), 1);
	assert_memory_equal(f + 22, port.mac, 6);
	assert_memory_equal(f + 28, port.v4, 4);
	assert_memory_equal(f + 38, host4, 4);
	assert_int_equal(np_receive(&h, f, len, &l, r), 60);	/* the host answers */
	assert_int_equal(np_receive(&port, r, 60, &l, f), 0);
	assert_answer_of_host(&l, 4, host4);

	len = np_probe(&port, 6, host6, host_mac, f);
	assert_int_equal(len, NP_FRAME_MAX);
	assert_true(nd_csum_ok(f, len));
	assert_memory_equal(f, host_mac, 6);
	assert_memory_equal(f + 22, port.v6, 16);
	assert_memory_equal(f + 38, host6, 16);		/* unicast to it */
	assert_int_equal(f[54], 135);
	assert_memory_equal(f + 62, host6, 16);
	assert_int_equal(np_receive(&h, f, len, &l, r), NP_FRAME_MAX);
	assert_int_equal(np_receive(&port, r, NP_FRAME_MAX, &l, f), 0);
	assert_answer_of_host(&l, 6, host6);
	{
		struct np_port none = port;

		none.has_v4 = none.has_v6 = 0;
		assert_int_equal(np_probe(&none, 4, host4, host_mac, f), 0);
		assert_int_equal(np_probe(&none, 6, host6, host_mac, f), 0);
	}
}

/* The answer Linux gives to a unicast NS (our probe): solicited, no
 * override, no target link-layer option (RFC 4861 7.2.4). It confirms
 * the neighbour already known, MAC unknown from the frame (7.2.5); with
 * override too; unsolicited, it tells nothing; a bad option still
 * drops it. */
static void test_na_without_option(void **state)
{
	uint8_t f[NP_FRAME_MAX], r[NP_FRAME_MAX], g[NP_FRAME_MAX];
	struct np_learned l;
	struct np_port h = {.has_v6 = 1};
	uint32_t len = np_probe(&port, 6, host6, host_mac, f);
	(void)state;

	memcpy(h.mac, host_mac, 6);
	memcpy(h.v6, host6, 16);
	assert_int_equal(np_receive(&h, f, len, &l, r), NP_FRAME_MAX);
	memcpy(g, r, NP_FRAME_MAX);
	g[19] = 24;					/* no option */
	g[58] = 0x40;					/* solicited only */
	nd_resum(g);
	assert_int_equal(np_receive(&port, g, 78, &l, f), 0);
	assert_int_equal(l.family, 6);
	assert_int_equal(l.how, NP_CONFIRM);
	assert_memory_equal(l.addr, host6, 16);
	g[58] = 0x60;					/* solicited, override */
	nd_resum(g);
	assert_int_equal(np_receive(&port, g, 78, &l, f), 0);
	assert_int_equal(l.how, NP_CONFIRM);
	g[58] = 0x20;					/* unsolicited */
	nd_resum(g);
	assert_int_equal(np_receive(&port, g, 78, &l, f), 0);
	assert_int_equal(l.family, 0);
	g[58] = 0x40;					/* to another address */
	g[53] = 9;
	nd_resum(g);
	assert_int_equal(np_receive(&port, g, 78, &l, f), 0);
	assert_int_equal(l.family, 0);
	memcpy(g, r, NP_FRAME_MAX);			/* an option of length 0 */
	g[58] = 0x40;
	g[79] = 0;
	nd_resum(g);
	assert_int_equal(np_receive(&port, g, NP_FRAME_MAX, &l, f), 0);
	assert_int_equal(l.family, 0);
}

/* A port with secondary addresses (--port-addr's later ones): each
 * answered for, from the address asked about, and none taken from a
 * frame that claims it; an address beside them is not ours. */
static void test_secondary_addresses(void **state)
{
	static const uint8_t sec4[4] = {10, 60, 1, 7}, sec6[16] = {0xfd, 0, 0, 0x60, 0, 1, [15] = 7};
	uint8_t f[NP_FRAME_MAX], g[NP_FRAME_MAX], r[NP_FRAME_MAX];
	struct np_port p2 = port;
	struct np_learned l;
	uint32_t len, n;
	(void)state;

	p2.nmore4 = 2;
	memcpy(p2.more4[0], (uint8_t[]){10, 60, 9, 9}, 4);
	memcpy(p2.more4[1], sec4, 4);
	p2.nmore6 = 1;
	memcpy(p2.more6[0], sec6, 16);

	len = host_asks(4, sec4, f);
	n = np_receive(&p2, f, len, &l, r);
	assert_int_equal(n, 60);
	assert_int_equal(get16(r + 20), 2);		/* reply */
	assert_memory_equal(r + 22, port.mac, 6);
	assert_memory_equal(r + 28, sec4, 4);		/* the address asked about */
	assert_memory_equal(r + 38, host4, 4);
	assert_learnt_host(&l, 4, host4);
	assert_int_equal(np_receive(&port, f, len, &l, r), 0);	/* not the first's port's */
	assert_told_host(&l, 4, host4, NP_MERGE);
	memcpy(g, f, len);				/* a frame claiming it */
	memcpy(g + 28, sec4, 4);
	memcpy(g + 38, (uint8_t[]){10, 60, 1, 3}, 4);
	assert_int_equal(np_receive(&p2, g, len, &l, r), 0);
	assert_int_equal(l.family, 0);
	len = host_asks(4, (uint8_t[]){10, 60, 1, 8}, f);	/* next to it */
	assert_int_equal(np_receive(&p2, f, len, &l, r), 0);

	len = host_asks(6, sec6, f);
	n = np_receive(&p2, f, len, &l, r);
	assert_int_equal(n, NP_FRAME_MAX);
	assert_int_equal(r[54], 136);
	assert_memory_equal(r + 38, host6, 16);
	assert_memory_equal(r + 62, sec6, 16);		/* target: the address asked */
	assert_true(nd_csum_ok(r, n));
	assert_learnt_host(&l, 6, host6);
	assert_int_equal(np_receive(&port, f, len, &l, r), 0);
	/* and the answer written over the request itself */
	memcpy(g, f, len);
	n = np_receive(&p2, g, len, &l, g);
	assert_int_equal(n, NP_FRAME_MAX);
	assert_memory_equal(g, host_mac, 6);
	assert_memory_equal(g + 38, host6, 16);
	assert_memory_equal(g + 62, sec6, 16);
	assert_true(nd_csum_ok(g, n));
	len = host_asks(4, sec4, f);
	n = np_receive(&p2, f, len, &l, f);
	assert_int_equal(n, 60);
	assert_memory_equal(f, host_mac, 6);
	assert_memory_equal(f + 28, sec4, 4);
	assert_memory_equal(f + 32, host_mac, 6);
	assert_memory_equal(f + 38, host4, 4);
}

/* A solicited advertisement without the override flag (a proxy's, or
 * for an anycast address: Linux leaves override off for an address not
 * its own) does not move a neighbour known at another MAC: RFC 4861
 * 7.2.5 keeps the entry's address (the owner's answer, with override,
 * must win over a proxy's whatever their order); it still teaches a
 * neighbour asked for, and confirms one at the MAC it gives. */
static void test_na_without_override(void **state)
{
	static const uint8_t proxy_mac[6] = {2, 0xcc, 0, 0, 0, 9};
	static struct neigh_cache c;
	uint8_t f[NP_FRAME_MAX], r[NP_FRAME_MAX], g[NP_FRAME_MAX];
	struct np_learned l;
	struct np_port h = {.has_v6 = 1};
	uint32_t len = np_solicit(&port, 6, host6, f);
	(void)state;

	memcpy(h.mac, host_mac, 6);
	memcpy(h.v6, host6, 16);
	assert_int_equal(np_receive(&h, f, len, &l, r), NP_FRAME_MAX);
	memcpy(g, r, NP_FRAME_MAX);
	g[58] = 0x40;					/* solicited, no override */
	memcpy(g + 80, proxy_mac, 6);			/* the proxy's answer */
	nd_resum(g);

	nc_init(&c, NULL);
	assert_int_equal(np_receive(&port, r, NP_FRAME_MAX, &l, f), 0);	/* the owner's */
	nc_asked(&c, 1, 6, host6, 0);
	nc_learn(&c, 1, &l, 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(np_receive(&port, g, NP_FRAME_MAX, &l, f), 0);	/* then the proxy's */
	assert_int_equal(l.family, 6);
	nc_learn(&c, 1, &l, 10);
	assert_memory_equal(c.e[0].mac, host_mac, 6);
	assert_int_equal(c.st.moved, 0);
	assert_int_equal(c.e[0].confirmed_ms, 0);	/* nor confirmed */

	nc_init(&c, NULL);				/* the proxy's alone: learnt */
	nc_asked(&c, 1, 6, host6, 0);
	nc_learn(&c, 1, &l, 0);
	assert_int_equal(c.n, 1);
	assert_memory_equal(c.e[0].mac, proxy_mac, 6);
	nc_learn(&c, 1, &l, 20);			/* and confirmed by it */
	assert_int_equal(c.e[0].confirmed_ms, 20);
	assert_int_equal(c.st.moved, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arp_request_answered),
		cmocka_unit_test(test_arp_reply_learnt),
		cmocka_unit_test(test_arp_not_ours),
		cmocka_unit_test(test_ns_answered),
		cmocka_unit_test(test_na_learnt),
		cmocka_unit_test(test_nd_refused),
		cmocka_unit_test(test_merges),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_na_without_option),
		cmocka_unit_test(test_na_without_override),
		cmocka_unit_test(test_secondary_addresses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
