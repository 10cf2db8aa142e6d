/* See tcp_mss.h. */
#include "tcp_mss.h"

#include "csum.h"
#include "wire.h"

enum {
	TCPOPT_EOL = 0,
	TCPOPT_NOP = 1,
	TCPOPT_MSS = 2,
	TCPOLEN_MSS = 4,
	TCP_FLAG_SYN = 0x02,
	TCP_FLAG_RST = 0x04,
};

uint16_t tcp_mss_for_mtu(uint32_t mtu, uint8_t family)
{
	uint32_t headers = family == 4 ? 40 : 60;

	if (mtu <= headers)
		return 0;
	return mtu - headers > 0xffff ? 0xffff : (uint16_t)(mtu - headers);
}

int tcp_mss_clamp(uint8_t *f, uint32_t len, const struct pkt_meta *m, uint16_t limit)
{
	uint32_t l4 = m->l4_off, end, doff;
	uint16_t old, hc;

	if (m->key.proto != 6 || !l4 || m->fragment == 2 ||
	    (m->key.tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_RST)) != TCP_FLAG_SYN)
		return 0;
	end = pkt_ip_end(f, len, m);
	if (l4 + 20 > end)
		return 0;
	doff = (uint32_t)(f[l4 + 12] >> 4) * 4;
	if (doff < 20 || l4 + doff > end)
		return 0;
	for (uint32_t o = l4 + 20; o < l4 + doff;) {
		uint8_t kind = f[o], olen;

		if (kind == TCPOPT_EOL)
			return 0;
		if (kind == TCPOPT_NOP) {
			o++;
			continue;
		}
		if (o + 2 > l4 + doff)
			return 0;
		olen = f[o + 1];
		if (olen < 2 || o + olen > l4 + doff)
			return 0;	/* malformed: leave the segment as it came */
		if (kind == TCPOPT_MSS && olen == TCPOLEN_MSS) {
			old = rd16(f + o + 2);
			if (old <= limit)
				return 0;
			/* A 16-bit value at an odd offset adds its bytes swapped
			 * to the one's-complement sum (RFC 1071 2(B)). */
			hc = rd16(f + l4 + 16);
			hc = (o - l4) & 1 ? csum_update16(hc, __builtin_bswap16(old),
							  __builtin_bswap16(limit))
					  : csum_update16(hc, old, limit);
			wr16(f + o + 2, limit);
			wr16(f + l4 + 16, hc);
			return 1;
		}
		o += olen;
	}
	return 0;
}
