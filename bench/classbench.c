/* ClassBench loader and trace generator for the benchmarks. */
#include "classbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void clear_host_bits(uint8_t *a, unsigned len)
{
	for (unsigned bit = len; bit < 32; bit++)
		a[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
}

int classbench_load(const char *path, struct rfw_acl_entry **entries, uint32_t *count)
{
	char line[512];
	uint32_t n = 0, cap = 1024;
	struct rfw_acl_entry *e = malloc(cap * sizeof(*e));
	FILE *f = fopen(path, "r");

	if (!f || !e) {
		free(e);
		if (f)
			fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned s[4], d[4], sl, dl, splo, sphi, dplo, dphi, proto, pmask;
		struct rfw_acl_entry *x;

		if (sscanf(line, "@%u.%u.%u.%u/%u %u.%u.%u.%u/%u %u : %u %u : %u %x/%x",
			   &s[0], &s[1], &s[2], &s[3], &sl, &d[0], &d[1], &d[2], &d[3], &dl,
			   &splo, &sphi, &dplo, &dphi, &proto, &pmask) != 16 || sl > 32 || dl > 32)
			continue;
		if (n == cap) {
			struct rfw_acl_entry *grown = realloc(e, (cap *= 2) * sizeof(*e));

			if (!grown) {
				free(e);
				fclose(f);
				return -1;
			}
			e = grown;
		}
		x = &e[n];
		memset(x, 0, sizeof(*x));
		x->family = 4;
		for (int i = 0; i < 4; i++) {
			x->src[i] = (uint8_t)s[i];
			x->dst[i] = (uint8_t)d[i];
		}
		clear_host_bits(x->src, sl);
		clear_host_bits(x->dst, dl);
		x->src_len = (uint8_t)sl;
		x->dst_len = (uint8_t)dl;
		if (pmask == 0xff) {
			x->flags |= RFW_ACL_PROTO;
			x->proto = (uint8_t)proto;
		}
		if (!(splo == 0 && sphi == 65535 && dplo == 0 && dphi == 65535)) {
			x->flags |= RFW_ACL_PORTS;
			x->sport_lo = (uint16_t)splo;
			x->sport_hi = (uint16_t)sphi;
			x->dport_lo = (uint16_t)dplo;
			x->dport_hi = (uint16_t)dphi;
		} else {
			x->sport_hi = x->dport_hi = 65535;
		}
		x->rule = ++n;
	}
	fclose(f);
	*entries = e;
	*count = n;
	return n ? 0 : -1;
}

static uint64_t next(uint64_t *s)	/* xorshift64* */
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static void fill_prefix(uint8_t *a, const uint8_t *p, unsigned len, uint64_t *s)
{
	uint32_t r = (uint32_t)next(s);

	for (int i = 0; i < 4; i++)
		a[i] = (uint8_t)(r >> (8 * i));
	for (unsigned bit = 0; bit < len; bit++) {
		unsigned mask = 0x80u >> (bit % 8);

		a[bit / 8] = (uint8_t)((a[bit / 8] & ~mask) | (p[bit / 8] & mask));
	}
}

void classbench_trace(const struct rfw_acl_entry *e, uint32_t count, struct pkt_key *keys,
		      uint32_t n, uint64_t seed)
{
	static const uint8_t protos[] = {6, 17, 6, 17, 1, 132};
	uint64_t s = seed | 1;

	for (uint32_t i = 0; i < n; i++) {
		struct pkt_key *k = &keys[i];

		memset(k, 0, sizeof(*k));
		k->family = 4;
		if (next(&s) & 1) {
			const struct rfw_acl_entry *x = &e[next(&s) % count];

			fill_prefix(k->src, x->src, x->src_len, &s);
			fill_prefix(k->dst, x->dst, x->dst_len, &s);
			k->proto = (x->flags & RFW_ACL_PROTO) ? x->proto : protos[next(&s) % 6];
			k->sport = (uint16_t)(x->sport_lo + next(&s) % ((uint32_t)x->sport_hi - x->sport_lo + 1));
			k->dport = (uint16_t)(x->dport_lo + next(&s) % ((uint32_t)x->dport_hi - x->dport_lo + 1));
		} else {
			fill_prefix(k->src, k->src, 0, &s);
			fill_prefix(k->dst, k->dst, 0, &s);
			k->proto = protos[next(&s) % 6];
			k->sport = (uint16_t)next(&s);
			k->dport = (uint16_t)next(&s);
		}
		k->has_ports = k->proto == 6 || k->proto == 17 || k->proto == 132;
		if (!k->has_ports)
			k->sport = k->dport = 0;
	}
}
