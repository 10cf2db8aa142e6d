/* `rulec query`: a question in the words of POLICY.md turned into the very
 * pkt_key the runtime's parser would build for such a packet, answered by
 * the runtime's own cls_lookup over the loaded artifact. */
#include "rulec.h"

#include <stdio.h>
#include <string.h>

#include "cls.h"
#include "values.h"

/* "10.0.0.1", "10.0.0.1:80", "fd00::1", "[fd00::1]", "[fd00::1]:80". */
static int parse_endpoint(const char *s, uint8_t *family, uint8_t addr[16],
			  int *has_port, uint16_t *port, char *err, size_t errlen)
{
	char a[64];
	const char *port_s = NULL;
	unsigned long p;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end || (size_t)(end - s - 1) >= sizeof(a))
			goto bad;
		memcpy(a, s + 1, (size_t)(end - s - 1));
		a[end - s - 1] = '\0';
		if (end[1] == ':')
			port_s = end + 2;
		else if (end[1])
			goto bad;
	} else {
		const char *colon = strchr(s, ':');

		if (strlen(s) >= sizeof(a))
			goto bad;
		/* One colon is IPv4:port; more is a bare IPv6 address. */
		if (colon && !strchr(colon + 1, ':')) {
			memcpy(a, s, (size_t)(colon - s));
			a[colon - s] = '\0';
			port_s = colon + 1;
		} else {
			strcpy(a, s);
		}
	}
	if (val_parse_addr(a, family, addr) < 0)
		goto bad;
	if (s[0] == '[' && *family != 6)
		goto bad;
	*has_port = port_s != NULL;
	if (port_s) {
		if (val_parse_uint(port_s, 65535, &p) < 0) {
			snprintf(err, errlen, "'%s': bad port (0-65535)", s);
			return -1;
		}
		*port = (uint16_t)p;
	}
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not an address (IPv4, IPv4:port, IPv6 or [IPv6]:port)", s);
	return -1;
}

int rulec_query_line(const struct rfw_view *v, const char *line,
		     char *ans, size_t anslen, char *err, size_t errlen)
{
	char proto_s[32], src_s[80], dst_s[80], extra[2];
	struct pkt_key k;
	struct cls_table t;
	uint8_t sfam, dfam;
	int proto, sp, dp;
	uint32_t rule;

	if (sscanf(line, "%31s %79s %79s %1s", proto_s, src_s, dst_s, extra) != 3) {
		snprintf(err, errlen, "expected 'PROTO SRC[:SPORT] DST[:DPORT]'");
		return -1;
	}
	proto = val_parse_proto(proto_s);
	if (proto < 0) {
		snprintf(err, errlen, "unknown protocol '%s'", proto_s);
		return -1;
	}
	memset(&k, 0, sizeof(k));
	if (parse_endpoint(src_s, &sfam, k.src, &sp, &k.sport, err, errlen) < 0 ||
	    parse_endpoint(dst_s, &dfam, k.dst, &dp, &k.dport, err, errlen) < 0)
		return -1;
	if (sfam != dfam) {
		snprintf(err, errlen, "source and destination must both be IPv4 or both IPv6");
		return -1;
	}
	k.family = sfam;
	k.proto = (uint8_t)proto;
	/* As pkt_parse does: only TCP, UDP and SCTP have ports; an unnamed
	 * port is 0. */
	k.has_ports = (uint8_t)val_proto_has_ports(proto);
	if (!k.has_ports && (sp || dp)) {
		snprintf(err, errlen, "protocol '%s' has no ports", proto_s);
		return -1;
	}
	/* The workers' table: the compiled trees when the artifact has them. */
	cls_table_init(&t, v);
	rule = cls_lookup(&t, &k);
	snprintf(ans, anslen, "%u %s %s", rule, rfw_rule_name(v, rule),
		 rfw_action_name(v->rules[rule].action));
	return 0;
}

int rulec_query_batch(const struct rfw_view *v, FILE *in, const char *name,
		      FILE *out, FILE *errs)
{
	char line[512], ans[256], err[256];
	unsigned long n = 0;
	int rc = 0;

	while (fgets(line, sizeof(line), in)) {
		char *s = line;

		n++;
		if (!strchr(line, '\n') && !feof(in)) {
			int c;

			while ((c = fgetc(in)) != EOF && c != '\n')
				;
			fprintf(errs, "%s:%lu: error: line too long\n", name, n);
			rc = 1;
			continue;
		}
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '#' || *s == '\n' || *s == '\r' || *s == '\0')
			continue;
		if (rulec_query_line(v, s, ans, sizeof(ans), err, sizeof(err)) < 0) {
			fprintf(errs, "%s:%lu: error: %s\n", name, n, err);
			rc = 1;
			continue;
		}
		fprintf(out, "%s\n", ans);
	}
	return rc;
}
