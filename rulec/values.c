/* Parsing of the policy language's scalar values. Every error message is
 * complete here so the caller only adds the position. */
#include "values.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int val_parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (!*s || strlen(s) > 10)
		return -1;
	for (const char *c = s; *c; c++) {
		if (!isdigit((unsigned char)*c))
			return -1;
		v = v * 10 + (unsigned long)(*c - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

int val_parse_addr(const char *s, uint8_t *family, uint8_t addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1) {
		*family = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*family = 6;
		return 0;
	}
	return -1;
}

void val_format_prefix(const struct prefix *p, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(p->family == 4 ? AF_INET : AF_INET6, p->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, p->len);
}

int val_parse_prefix(const char *s, struct prefix *p, char *why, size_t whylen)
{
	char addr[64];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long len, max;
	struct prefix net;
	char fixed[80];

	memset(p, 0, sizeof(*p));
	if (alen >= sizeof(addr))
		goto bad;
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	if (val_parse_addr(addr, &p->family, p->addr) < 0)
		goto bad;
	max = p->family == 4 ? 32 : 128;
	if (!slash) {
		p->len = (uint8_t)max;
		return 0;
	}
	if (val_parse_uint(slash + 1, max, &len) < 0) {
		snprintf(why, whylen, "'%s': prefix length must be 0-%lu for IPv%u", s, max,
			 p->family);
		return -1;
	}
	p->len = (uint8_t)len;
	/* Host bits are refused, not masked: "10.1.2.3/16" is usually a typo for
	 * a host or for a different network, and silently widening it is how
	 * firewalls end up accepting more than the operator meant. */
	net = *p;
	for (unsigned bit = p->len; bit < max; bit++)
		net.addr[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
	if (memcmp(net.addr, p->addr, 16) != 0) {
		val_format_prefix(&net, fixed, sizeof(fixed));
		snprintf(why, whylen, "%s has host bits set; write %s", s, fixed);
		return -1;
	}
	return 0;
bad:
	snprintf(why, whylen, "'%s' is not a valid IPv4 or IPv6 address or prefix", s);
	return -1;
}

int val_looks_like_addr(const char *s)
{
	return isdigit((unsigned char)s[0]) || strpbrk(s, ".:/") != NULL;
}

int val_is_name(const char *s)
{
	if (!isalpha((unsigned char)s[0]) && s[0] != '_')
		return 0;
	for (const char *c = s; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_-.", *c))
			return 0;
	return 1;
}

static const struct {
	const char *name;
	int num;
} protos[] = {
	{"icmp", 1}, {"tcp", 6}, {"udp", 17}, {"gre", 47}, {"esp", 50},
	{"icmpv6", 58}, {"sctp", 132},
};

int val_parse_proto(const char *s)
{
	unsigned long n;

	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (strcmp(s, protos[i].name) == 0)
			return protos[i].num;
	if (val_parse_uint(s, 255, &n) == 0)
		return (int)n;
	return -1;
}

const char *val_proto_name(int proto, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i].num == proto)
			return protos[i].name;
	snprintf(buf, len, "%d", proto);
	return buf;
}

int val_proto_has_ports(int proto)
{
	return proto == 6 || proto == 17 || proto == 132;
}

int val_parse_port_range(const char *s, uint16_t *lo, uint16_t *hi, char *why, size_t whylen)
{
	char a[16];
	const char *dash = strchr(s, '-');
	unsigned long l, h;

	if (!dash) {
		if (val_parse_uint(s, 65535, &l) < 0)
			goto bad;
		*lo = *hi = (uint16_t)l;
		return 0;
	}
	if ((size_t)(dash - s) >= sizeof(a))
		goto bad;
	memcpy(a, s, (size_t)(dash - s));
	a[dash - s] = '\0';
	if (val_parse_uint(a, 65535, &l) < 0 || val_parse_uint(dash + 1, 65535, &h) < 0)
		goto bad;
	if (l > h) {
		snprintf(why, whylen, "port range '%s' is reversed; write '%lu-%lu'", s, h, l);
		return -1;
	}
	*lo = (uint16_t)l;
	*hi = (uint16_t)h;
	return 0;
bad:
	snprintf(why, whylen, "'%s' is not a port or port range (0-65535, or a-b)", s);
	return -1;
}

/* ICMP type names as iptables/nftables spell them (RFC 792, RFC 4443,
 * RFC 4861); -1 where the type does not exist in that family. */
static const struct {
	const char *name;
	int v4, v6;
} icmp_types[] = {
	{"echo-reply", 0, 129}, {"destination-unreachable", 3, 1},
	{"source-quench", 4, -1}, {"redirect", 5, 137}, {"echo-request", 8, 128},
	{"router-advertisement", 9, 134}, {"router-solicitation", 10, 133},
	{"time-exceeded", 11, 3}, {"parameter-problem", 12, 4},
	{"timestamp-request", 13, -1}, {"timestamp-reply", 14, -1},
	{"packet-too-big", -1, 2}, {"neighbor-solicitation", -1, 135},
	{"neighbor-advertisement", -1, 136},
};

int val_parse_icmp(const char *s, int proto, int *type, int *code)
{
	char t[40];
	const char *slash = strchr(s, '/');
	size_t tl = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long n;

	*type = -1;
	*code = -1;
	if (tl >= sizeof(t) || (proto != 1 && proto != 58))
		return -1;
	memcpy(t, s, tl);
	t[tl] = '\0';
	for (size_t i = 0; i < sizeof(icmp_types) / sizeof(icmp_types[0]); i++)
		if (strcmp(t, icmp_types[i].name) == 0)
			*type = proto == 1 ? icmp_types[i].v4 : icmp_types[i].v6;
	if (*type < 0 && val_parse_uint(t, 255, &n) == 0)
		*type = (int)n;
	if (*type < 0)
		return -1;
	if (slash) {
		if (val_parse_uint(slash + 1, 255, &n) < 0)
			return -1;
		*code = (int)n;
	}
	return 0;
}

const char *val_icmp_names(int proto)
{
	return proto == 1 ? "echo-reply, destination-unreachable, source-quench, redirect, "
			    "echo-request, router-advertisement, router-solicitation, "
			    "time-exceeded, parameter-problem, timestamp-request, timestamp-reply"
			  : "destination-unreachable, packet-too-big, time-exceeded, "
			    "parameter-problem, echo-request, echo-reply, router-solicitation, "
			    "router-advertisement, neighbor-solicitation, neighbor-advertisement, "
			    "redirect";
}

int val_tcp_flag(const char *s)
{
	static const char *const names[] = {"fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr"};

	for (int i = 0; i < 8; i++)
		if (strcmp(s, names[i]) == 0)
			return 1 << i;
	return -1;
}
