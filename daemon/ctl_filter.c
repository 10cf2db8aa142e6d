/* The flow filter of `rampartctl flows`: a tiny key=value language,
 * parsed once per request so that the workers' per-flow test is a few
 * compares. */
#include "ctl_filter.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name;
	uint8_t proto;
} protos[] = {
	{ "icmp", 1 }, { "tcp", 6 }, { "udp", 17 }, { "gre", 47 }, { "esp", 50 },
	{ "ah", 51 }, { "icmpv6", 58 }, { "sctp", 132 },
};

const char *ctl_proto_name(uint8_t proto)
{
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i].proto == proto)
			return protos[i].name;
	return NULL;
}

/* Decimal in [0, max] taking the whole string. */
static int parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || *end || *v > max ? -1 : 0;
}

static int parse_proto(const char *s, uint8_t *proto)
{
	unsigned long v;

	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (!strcasecmp(s, protos[i].name)) {
			*proto = protos[i].proto;
			return 0;
		}
	if (!strcasecmp(s, "ipv6-icmp")) {
		*proto = 58;
		return 0;
	}
	if (parse_uint(s, 255, &v))
		return -1;
	*proto = (uint8_t)v;
	return 0;
}

/* ADDR or ADDR/LEN, IPv4 or IPv6; host bits past LEN must be zero, as in
 * the policy language, so a typo does not silently widen the match. */
static int parse_prefix(const char *s, struct ctl_prefix *p)
{
	char addr[INET6_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long len;
	unsigned bytes;

	if (n == 0 || n >= sizeof(addr))
		return -1;
	memcpy(addr, s, n);
	addr[n] = '\0';
	memset(p, 0, sizeof(*p));
	if (inet_pton(AF_INET, addr, p->addr) == 1)
		p->family = 4;
	else if (inet_pton(AF_INET6, addr, p->addr) == 1)
		p->family = 6;
	else
		return -1;
	bytes = p->family == 4 ? 4 : 16;
	len = bytes * 8;
	if (slash && parse_uint(slash + 1, bytes * 8, &len))
		return -1;
	p->len = (uint8_t)len;
	for (unsigned bit = p->len; bit < bytes * 8; bit++)
		if (p->addr[bit / 8] & (0x80u >> (bit % 8)))
			return -1;
	return 0;
}

/* State names as ct_tcp_state_name gives them, any case, '-' for '_'. */
static int parse_state(const char *s, uint8_t *state)
{
	for (unsigned st = CT_TCP_SYN_SENT; st < CT_TCP_STATE_COUNT; st++) {
		const char *name = ct_tcp_state_name(st);
		size_t i = 0;

		for (; name[i] && s[i]; i++) {
			char c = s[i] == '-' ? '_' : (char)toupper((unsigned char)s[i]);

			if (c != name[i])
				break;
		}
		if (!name[i] && !s[i]) {
			*state = (uint8_t)st;
			return 0;
		}
	}
	return -1;
}

static int term(struct ctl_filter *f, const char *key, const char *val)
{
	unsigned long v;

	if (!strcmp(key, "proto")) {
		f->terms |= CTL_F_PROTO;
		return parse_proto(val, &f->proto);
	}
	if (!strcmp(key, "src")) {
		f->terms |= CTL_F_SRC;
		return parse_prefix(val, &f->src);
	}
	if (!strcmp(key, "dst")) {
		f->terms |= CTL_F_DST;
		return parse_prefix(val, &f->dst);
	}
	if (!strcmp(key, "sport") || !strcmp(key, "dport")) {
		if (parse_uint(val, 65535, &v))
			return -1;
		if (key[0] == 's') {
			f->terms |= CTL_F_SPORT;
			f->sport = (uint16_t)v;
		} else {
			f->terms |= CTL_F_DPORT;
			f->dport = (uint16_t)v;
		}
		return 0;
	}
	if (!strcmp(key, "rule")) {
		f->terms |= CTL_F_RULE;
		if (!*val || strlen(val) >= sizeof(f->rule_name))
			return -1;
		strcpy(f->rule_name, val);
		return 0;
	}
	if (!strcmp(key, "state")) {
		f->terms |= CTL_F_STATE;
		return parse_state(val, &f->state);
	}
	return -2;
}

int ctl_filter_parse(struct ctl_filter *f, const char *expr, char *err, size_t errlen)
{
	const char *s = expr;

	memset(f, 0, sizeof(*f));
	for (;;) {
		char tok[256], *eq;
		size_t n;
		int r;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return 0;
		n = strcspn(s, " \t");
		if (n >= sizeof(tok)) {
			snprintf(err, errlen, "filter term too long: '%.40s...'", s);
			return -1;
		}
		memcpy(tok, s, n);
		tok[n] = '\0';
		s += n;
		eq = strchr(tok, '=');
		if (!eq) {
			snprintf(err, errlen, "filter term '%s' is not key=value "
				 "(keys: proto src dst sport dport rule state)", tok);
			return -1;
		}
		*eq = '\0';
		r = term(f, tok, eq + 1);
		if (r == -2) {
			snprintf(err, errlen, "unknown filter key '%s' "
				 "(keys: proto src dst sport dport rule state)", tok);
			return -1;
		}
		if (r) {
			snprintf(err, errlen, "bad value in filter term '%s=%s'", tok, eq + 1);
			return -1;
		}
	}
}

int ctl_filter_resolve(struct ctl_filter *f, const struct rfw_view *view, char *err,
		       size_t errlen)
{
	if (!(f->terms & CTL_F_RULE))
		return 0;
	for (uint32_t n = 1; n <= view->policy->rule_count; n++)
		if (!strcmp(rfw_rule_name(view, n), f->rule_name)) {
			f->rule = n;
			return 0;
		}
	if (!strcmp(f->rule_name, "default")) {
		f->rule = 0;
		return 0;
	}
	snprintf(err, errlen, "filter: the policy has no rule '%s'", f->rule_name);
	return -1;
}

static int prefix_match(const struct ctl_prefix *p, uint8_t family, const uint8_t *addr)
{
	unsigned full = p->len / 8, rest = p->len % 8;

	if (family != p->family || memcmp(addr, p->addr, full))
		return 0;
	return !rest || !((addr[full] ^ p->addr[full]) & (0xffu << (8 - rest)));
}

int ctl_filter_match(const struct ctl_filter *f, const struct ct_flow_info *flow)
{
	const struct pkt_key *k = &flow->orig;
	/* ICMP flows keep the echo id where ports would be: not a port */
	int ports = k->proto == 6 || k->proto == 17 || k->proto == 132;

	if ((f->terms & CTL_F_PROTO) && k->proto != f->proto)
		return 0;
	if ((f->terms & CTL_F_SRC) && !prefix_match(&f->src, k->family, k->src))
		return 0;
	if ((f->terms & CTL_F_DST) && !prefix_match(&f->dst, k->family, k->dst))
		return 0;
	if ((f->terms & CTL_F_SPORT) && (!ports || k->sport != f->sport))
		return 0;
	if ((f->terms & CTL_F_DPORT) && (!ports || k->dport != f->dport))
		return 0;
	if ((f->terms & CTL_F_RULE) && flow->rule != f->rule)
		return 0;
	if ((f->terms & CTL_F_STATE) && flow->tcp_state != f->state)
		return 0;
	return 1;
}
