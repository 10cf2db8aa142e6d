/* `rulec query`: a question in the words of POLICY.md turned into the very
 * pkt_key the runtime's parser would build for such a packet, answered by
 * the runtime's own cls_lookup over the loaded artifact. */
#include "rulec.h"

#include <stdio.h>
#include <string.h>

#include "cls.h"
#include "csum.h"
#include "values.h"

/* "10.0.0.1", "10.0.0.1:80", "fd00::1", "[fd00::1]", "[fd00::1]:80". The
 * text after the address (a port, or an ICMP type) goes to tail. */
static int parse_endpoint(const char *s, uint8_t *family, uint8_t addr[16], char *tail,
			  size_t taillen, char *err, size_t errlen)
{
	char a[64];
	const char *port_s = NULL;

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
	snprintf(tail, taillen, "%s", port_s ? port_s : "");
	if (port_s && !*port_s)
		goto bad;
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not an address (IPv4, IPv4:port, IPv6 or [IPv6]:port)", s);
	return -1;
}

static int find_iface(const struct rfw_view *v, const char *name, uint8_t *out, char *err,
		      size_t errlen)
{
	size_t used = 0;
	char names[256] = "";

	for (uint32_t i = 0; i < v->interface_count; i++) {
		if (strcmp(v->interfaces[i].name, name) == 0) {
			*out = (uint8_t)i;
			return 0;
		}
		int w = snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "",
				 v->interfaces[i].name);

		if (w > 0 && (size_t)w < sizeof(names) - used)
			used += (size_t)w;
	}
	if (v->interface_count)
		snprintf(err, errlen, "unknown interface '%s' (the policy names: %s)", name, names);
	else
		snprintf(err, errlen, "unknown interface '%s' (the policy names no interfaces)", name);
	return -1;
}

static int parse_state(const char *s, uint8_t *out, char *err, size_t errlen)
{
	static const char *const names[] = {"new", "established", "related", "invalid"};

	for (unsigned i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (uint8_t)(1u << i);
			return 0;
		}
	snprintf(err, errlen, "unknown state '%s' (new, established, related or invalid)", s);
	return -1;
}

static int parse_flags(const char *s, uint8_t *out, char *err, size_t errlen)
{
	char buf[64], *save = NULL;

	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	*out = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int bit = val_tcp_flag(t);

		if (bit < 0)
			goto bad;
		*out |= (uint8_t)bit;
	}
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not a list of TCP flags (fin,syn,rst,psh,ack,urg,ece,cwr)", s);
	return -1;
}

/* Options before or among the words: --in, --out, --state, --tcp-flags. */
static int query_option(const struct rfw_view *v, const char *opt, const char *val,
			struct pkt_key *k, int *has_flags, char *err, size_t errlen)
{
	if (!val) {
		snprintf(err, errlen, "%s needs a value", opt);
		return -1;
	}
	if (strcmp(opt, "--in") == 0)
		return find_iface(v, val, &k->in_if, err, errlen);
	if (strcmp(opt, "--out") == 0)
		return find_iface(v, val, &k->out_if, err, errlen);
	if (strcmp(opt, "--state") == 0)
		return parse_state(val, &k->ct_state, err, errlen);
	if (strcmp(opt, "--tcp-flags") == 0) {
		*has_flags = 1;
		return parse_flags(val, &k->tcp_flags, err, errlen);
	}
	snprintf(err, errlen, "unknown option '%s' (--in, --out, --state, --tcp-flags)", opt);
	return -1;
}

/* What an ICMP query named after its destination. */
enum { ICMP_TYPE_GIVEN = 1, ICMP_CODE_GIVEN = 2 };

/* The port or ICMP type after an address. */
static int endpoint_tail(const char *tail, int proto, int dst, struct pkt_key *k, int *given,
			 int *icmp_given, char *err, size_t errlen)
{
	unsigned long p;
	int type, code;

	*given = *tail != 0;
	if (!*tail)
		return 0;
	if ((proto == 1 || proto == 58) && dst) {
		if (val_parse_icmp(tail, proto, &type, &code) < 0) {
			snprintf(err, errlen, "'%s' is not an %s type (a name or 0-255, /CODE optional)",
				 tail, proto == 1 ? "icmp" : "icmpv6");
			return -1;
		}
		k->icmp_type = (uint8_t)type;
		k->icmp_code = (uint8_t)(code < 0 ? 0 : code);
		*icmp_given = ICMP_TYPE_GIVEN | (code < 0 ? 0 : ICMP_CODE_GIVEN);
		return 0;
	}
	if (val_parse_uint(tail, 65535, &p) < 0) {
		snprintf(err, errlen, "'%s': bad port (0-65535)", tail);
		return -1;
	}
	*(dst ? &k->dport : &k->sport) = (uint16_t)p;
	return 0;
}

/* The ICMP types (codes) the rules name, and one they do not: every
 * type outside the list meets the same rules as that one. Returns how
 * many went to out (at most 257). */
static unsigned icmp_values(const struct rfw_view *v, uint16_t flag, int code, uint16_t *out)
{
	uint8_t named[256] = {0};
	unsigned n = 0;

	for (uint64_t i = 0; i < v->acl_count; i++)
		if (v->acl[i].flags & flag)
			named[code ? v->acl[i].icmp_code : v->acl[i].icmp_type] = 1;
	for (unsigned x = 0; x < 256; x++)
		if (named[x])
			out[n++] = (uint16_t)x;
	for (unsigned x = 0; x < 256; x++)
		if (!named[x]) {
			out[n++] = (uint16_t)x;
			break;
		}
	return n;
}

/* The address of a destination word as it is written before a type:
 * "10.0.0.2", "[fd00::2]" (brackets added to a bare IPv6 address). */
static void dst_address(const char *dst, char *out, size_t len)
{
	const char *colon = strchr(dst, ':');

	if (dst[0] == '[')
		snprintf(out, len, "%.*s", (int)strcspn(dst, "]") + 1, dst);
	else if (!colon)
		snprintf(out, len, "%s", dst);
	else if (!strchr(colon + 1, ':'))
		snprintf(out, len, "%.*s", (int)(colon - dst), dst);
	else
		snprintf(out, len, "[%s]", dst);
}

/* An ICMP query that left out the type (or the code): the answer when
 * every type (code) it could be gets the same one. When they differ the
 * query is refused, naming two that differ, rather than guessing type 0
 * (echo-reply), which the user almost never means. */
static int icmp_lookup_any(const struct rfw_view *v, const struct cls_table *t,
			   struct pkt_key *k, int given, const char *dst, uint32_t *rule,
			   char *err, size_t errlen)
{
	uint16_t types[257], codes[257];
	unsigned nt = 1, nc = icmp_values(v, RFW_ACL_ICMP_CODE, 1, codes);
	uint8_t first_type = 0, first_code = 0;
	int have = 0;
	char where[80];

	types[0] = k->icmp_type;
	if (!(given & ICMP_TYPE_GIVEN))
		nt = icmp_values(v, RFW_ACL_ICMP_TYPE, 0, types);
	dst_address(dst, where, sizeof(where));
	for (unsigned a = 0; a < nt; a++)
		for (unsigned b = 0; b < nc; b++) {
			uint32_t r;

			k->icmp_type = (uint8_t)types[a];
			k->icmp_code = (uint8_t)codes[b];
			r = cls_lookup(t, k);
			if (!have) {
				*rule = r;
				first_type = k->icmp_type;
				first_code = k->icmp_code;
				have = 1;
				continue;
			}
			if (r == *rule)
				continue;
			if (given & ICMP_TYPE_GIVEN)
				snprintf(err, errlen, "the answer depends on the ICMP code: %u/%u meets "
					 "rule %u '%s', %u/%u rule %u '%s'; give the code after the "
					 "type (%s:%u/%u)", first_type, first_code, *rule,
					 rfw_rule_name(v, *rule), k->icmp_type, k->icmp_code, r,
					 rfw_rule_name(v, r), where, first_type, first_code);
			else
				snprintf(err, errlen, "the answer depends on the ICMP type: %u/%u meets "
					 "rule %u '%s', %u/%u rule %u '%s'; give the type after the "
					 "destination (%s:TYPE[/CODE], e.g. %s:echo-request)", first_type,
					 first_code, *rule, rfw_rule_name(v, *rule), k->icmp_type,
					 k->icmp_code, r, rfw_rule_name(v, r), where, where);
			return -1;
		}
	return 0;
}

int rulec_query_line(const struct rfw_view *v, const char *line,
		     char *ans, size_t anslen, char *err, size_t errlen)
{
	char buf[1200], *tok[16], *save = NULL, stail[80], dtail[80];
	const char *words[3];
	struct pkt_key k;
	struct cls_table t;
	uint8_t sfam, dfam;
	int proto, sp, dp, ntok = 0, nwords = 0, has_flags = 0, icmp_given = 0, state_given;
	uint32_t rule = 0;

	memset(&k, 0, sizeof(k));
	if (errlen)
		err[0] = '\0';		/* no note */
	/* No --in/--out: no interface, so rules naming one do not match;
	 * no --state: the first packet of a flow (set after the options). */
	k.in_if = k.out_if = 0xff;
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *w = strtok_r(buf, " \t\r\n", &save); w && ntok < 16; w = strtok_r(NULL, " \t\r\n", &save))
		tok[ntok++] = w;
	for (int i = 0; i < ntok; i++) {
		if (strncmp(tok[i], "--", 2) == 0) {
			if (query_option(v, tok[i], i + 1 < ntok ? tok[i + 1] : NULL, &k, &has_flags,
					 err, errlen) < 0)
				return -1;
			i++;
		} else if (nwords < 3) {
			words[nwords++] = tok[i];
		} else {
			nwords = 4;
			break;
		}
	}
	if (nwords != 3) {
		snprintf(err, errlen, "expected 'PROTO SRC[:SPORT] DST[:DPORT]'");
		return -1;
	}
	state_given = k.ct_state != 0;
	if (!state_given)
		k.ct_state = RFW_STATE_NEW;
	proto = val_parse_proto(words[0]);
	if (proto < 0) {
		snprintf(err, errlen, "unknown protocol '%s'", words[0]);
		return -1;
	}
	if (parse_endpoint(words[1], &sfam, k.src, stail, sizeof(stail), err, errlen) < 0 ||
	    parse_endpoint(words[2], &dfam, k.dst, dtail, sizeof(dtail), err, errlen) < 0)
		return -1;
	if (sfam != dfam) {
		snprintf(err, errlen, "source and destination must both be IPv4 or both IPv6");
		return -1;
	}
	k.family = sfam;
	k.proto = (uint8_t)proto;
	/* As pkt_parse does: only TCP, UDP and SCTP have ports; an unnamed
	 * port is 0. ICMP's type and code go where the destination port would. */
	k.has_ports = (uint8_t)val_proto_has_ports(proto);
	if (endpoint_tail(stail, proto, 0, &k, &sp, &icmp_given, err, errlen) < 0 ||
	    endpoint_tail(dtail, proto, 1, &k, &dp, &icmp_given, err, errlen) < 0)
		return -1;
	if (!k.has_ports && (sp || (dp && proto != 1 && proto != 58))) {
		snprintf(err, errlen, "protocol '%s' has no ports", words[0]);
		return -1;
	}
	if (has_flags && proto != 6) {
		snprintf(err, errlen, "--tcp-flags needs protocol tcp");
		return -1;
	}
	/* The workers' table: the compiled trees when the artifact has them. */
	cls_table_init(&t, v);
	if ((proto == 1 || proto == 58) && icmp_given != (ICMP_TYPE_GIVEN | ICMP_CODE_GIVEN)) {
		if (icmp_lookup_any(v, &t, &k, icmp_given, words[2], &rule, err, errlen) < 0)
			return -1;
	} else {
		rule = cls_lookup(&t, &k);
	}
	snprintf(ans, anslen, "%u %s %s", rule, rfw_rule_name(v, rule),
		 rfw_action_name(v->rules[rule].action));
	if (!state_given && (icmp_given & ICMP_TYPE_GIVEN) && v->policy->stateful &&
	    csum_icmp_type_is_error(k.family, k.proto, k.icmp_type))
		snprintf(err, errlen, "the answer is for state new, but a stateful firewall never "
			 "judges an ICMP error (type %u) as new: one that quotes a tracked flow "
			 "follows that flow, one that quotes none is invalid (ask with --state "
			 "invalid)", k.icmp_type);
	return 0;
}

int rulec_query_batch(const struct rfw_view *v, FILE *in, const char *name,
		      FILE *out, FILE *errs)
{
	return rulec_query_batch_opts(v, in, name, "", out, errs);
}

int rulec_query_batch_opts(const struct rfw_view *v, FILE *in, const char *name,
			   const char *opts, FILE *out, FILE *errs)
{
	char line[512], full[1100], ans[256], err[256];
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
		snprintf(full, sizeof(full), "%s %s", opts, s);
		if (rulec_query_line(v, full, ans, sizeof(ans), err, sizeof(err)) < 0) {
			fprintf(errs, "%s:%lu: error: %s\n", name, n, err);
			rc = 1;
			continue;
		}
		if (err[0])
			fprintf(errs, "%s:%lu: note: %s\n", name, n, err);
		fprintf(out, "%s\n", ans);
	}
	return rc;
}
