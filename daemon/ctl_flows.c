/* Formatting of conntrack flows for `rampartctl flows`: one row per flow
 * (original tuple, the NAT reply tuple when it differs, TCP state, rule,
 * packets/bytes each way, seconds left), or the same as JSON. */
#include "ctl_flows.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_filter.h"
#include "ctl_table.h"

int ctl_proto_has_ports(uint8_t proto)
{
	return proto == 6 || proto == 17 || proto == 132;
}

void ctl_endpoint(char *out, size_t len, uint8_t family, const uint8_t *addr, uint16_t port,
		  int ports)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	if (!ports)
		snprintf(out, len, "%s", a);
	else if (family == 6)
		snprintf(out, len, "[%s]:%u", a, port);
	else
		snprintf(out, len, "%s:%u", a, port);
}

int ctl_flow_natted(const struct ct_flow_info *f)
{
	size_t n = f->orig.family == 4 ? 4 : 16;

	return memcmp(f->reply.src, f->orig.dst, n) || memcmp(f->reply.dst, f->orig.src, n) ||
	       f->reply.sport != f->orig.dport || f->reply.dport != f->orig.sport;
}

static void proto_text(char *out, size_t len, uint8_t proto)
{
	const char *name = ctl_proto_name(proto);

	if (name)
		snprintf(out, len, "%s", name);
	else
		snprintf(out, len, "%u", proto);
}

static const char *rule_name(const struct ctl_rule_names *names, uint32_t rule)
{
	if (rule < names->count && names->name[rule] && *names->name[rule])
		return names->name[rule];
	return rule ? "?" : "default";
}

/* "established", or "" for flows that are not TCP. */
static void state_text(char *out, size_t len, const struct ct_flow_info *f)
{
	const char *s = f->orig.proto == 6 ? ct_tcp_state_name(f->tcp_state) : "";
	size_t i = 0;

	for (; s[i] && i + 1 < len; i++)
		out[i] = (char)tolower((unsigned char)s[i]);
	out[i] = '\0';
}

static void tuple_text(char *out, size_t len, const struct pkt_key *k)
{
	char s[64], d[64];
	int ports = ctl_proto_has_ports(k->proto);

	ctl_endpoint(s, sizeof(s), k->family, k->src, k->sport, ports);
	ctl_endpoint(d, sizeof(d), k->family, k->dst, k->dport, ports);
	snprintf(out, len, "%s -> %s", s, d);
}

void ctl_flows_text(struct ctl_buf *out, const struct ctl_flow *flows, uint32_t n,
		    uint64_t matched, const struct ctl_rule_names *names)
{
	static const char *const head[] = {
		"PROTO", "FLOW", "NAT REPLY", "STATE", "RULE", "PKTS>", "BYTES>", "PKTS<",
		"BYTES<", "EXPIRES",
	};
	struct ctl_table t;

	/* numbers right-aligned: packets, bytes, expiry */
	ctl_table_init(&t, head, 10, 0x3e0u);
	for (uint32_t i = 0; i < n; i++) {
		const struct ct_flow_info *f = &flows[i].info;
		char proto[8], orig[160], reply[160], state[16];

		proto_text(proto, sizeof(proto), f->orig.proto);
		tuple_text(orig, sizeof(orig), &f->orig);
		if (ctl_flow_natted(f))
			tuple_text(reply, sizeof(reply), &f->reply);
		else
			snprintf(reply, sizeof(reply), "-");
		state_text(state, sizeof(state), f);
		ctl_table_addf(&t, "%s", proto);
		ctl_table_addf(&t, "%s", orig);
		ctl_table_addf(&t, "%s", reply);
		ctl_table_addf(&t, "%s", *state ? state : "-");
		ctl_table_addf(&t, "%s", rule_name(names, f->rule));
		ctl_table_addu(&t, f->packets[CT_DIR_ORIG]);
		ctl_table_addu(&t, f->bytes[CT_DIR_ORIG]);
		ctl_table_addu(&t, f->packets[CT_DIR_REPLY]);
		ctl_table_addu(&t, f->bytes[CT_DIR_REPLY]);
		ctl_table_addf(&t, "%llds", (long long)(flows[i].expires_in > 0 ? flows[i].expires_in : 0));
	}
	ctl_table_print(&t, out, 0);
	if (matched > n)
		ctl_printf(out, "%u of %llu flows shown (--limit)\n", n, (unsigned long long)matched);
	else
		ctl_printf(out, "%u flow%s\n", n, n == 1 ? "" : "s");
}

static void addr_json(struct ctl_buf *out, const char *key, const struct pkt_key *k,
		      const uint8_t *addr)
{
	char a[INET6_ADDRSTRLEN];

	ctl_endpoint(a, sizeof(a), k->family, addr, 0, 0);
	ctl_printf(out, "\"%s\": \"%s\"", key, a);
}

static void tuple_json(struct ctl_buf *out, const struct pkt_key *k)
{
	addr_json(out, "src", k, k->src);
	ctl_puts(out, ", ");
	addr_json(out, "dst", k, k->dst);
	if (ctl_proto_has_ports(k->proto))
		ctl_printf(out, ", \"sport\": %u, \"dport\": %u", k->sport, k->dport);
	else if (k->proto == 1 || k->proto == 58)
		ctl_printf(out, ", \"icmp_id\": %u", k->sport);
}

void ctl_flows_json(struct ctl_buf *out, const struct ctl_flow *flows, uint32_t n,
		    uint64_t matched, int64_t deleted, const struct ctl_rule_names *names)
{
	ctl_puts(out, "{\"version\": 1, \"flows\": [");
	for (uint32_t i = 0; i < n; i++) {
		const struct ct_flow_info *f = &flows[i].info;
		char proto[8], state[16];

		proto_text(proto, sizeof(proto), f->orig.proto);
		state_text(state, sizeof(state), f);
		ctl_printf(out, "%s\n  {\"proto\": \"%s\", \"family\": %u, ", i ? "," : "", proto,
			   f->orig.family);
		tuple_json(out, &f->orig);
		ctl_puts(out, ", \"nat_reply\": ");
		if (ctl_flow_natted(f)) {
			ctl_puts(out, "{");
			tuple_json(out, &f->reply);
			ctl_puts(out, "}");
		} else {
			ctl_puts(out, "null");
		}
		ctl_puts(out, ", \"state\": ");
		if (*state)
			ctl_json_str(out, state);
		else
			ctl_puts(out, "null");
		ctl_puts(out, ", \"rule\": ");
		ctl_json_str(out, rule_name(names, f->rule));
		ctl_printf(out, ", \"rule_number\": %u, \"orig_packets\": %llu, \"orig_bytes\": %llu, "
				"\"reply_packets\": %llu, \"reply_bytes\": %llu, \"expires_in\": %lld, "
				"\"worker\": %u}",
			   f->rule, (unsigned long long)f->packets[0], (unsigned long long)f->bytes[0],
			   (unsigned long long)f->packets[1], (unsigned long long)f->bytes[1],
			   (long long)(flows[i].expires_in > 0 ? flows[i].expires_in : 0),
			   flows[i].worker);
	}
	ctl_printf(out, "%s], \"shown\": %u, \"matched\": %llu", n ? "\n" : "", n,
		   (unsigned long long)matched);
	if (deleted >= 0)
		ctl_printf(out, ", \"deleted\": %lld", (long long)deleted);
	ctl_puts(out, "}\n");
}

int ctl_flow_room_reserve(struct ctl_flow_room *r, size_t n)
{
	struct ctl_flow *f;

	if (n <= r->room)
		return 0;
	if (n > SIZE_MAX / sizeof(*f))
		return -1;
	f = realloc(r->flows, n * sizeof(*f));
	if (!f)
		return -1;
	r->flows = f;
	r->room = n;
	return 0;
}

void ctl_flow_room_trim(struct ctl_flow_room *r)
{
	if (r->room > CTL_FLOWS_KEPT)
		ctl_flow_room_free(r);
}

void ctl_flow_room_free(struct ctl_flow_room *r)
{
	free(r->flows);
	r->flows = NULL;
	r->room = 0;
}
