/* The rules section: each rule's keys (name, proto, family, from, to,
 * icmp_type, tcp_flags, state, action, log, limit, counter). from/to and
 * proto/family are shared with NAT matches (rules_parse_match). */
#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const rule_keys[] = {"name", "proto", "family", "from", "to", "icmp_type",
					"tcp_flags", "state", "action", "log", "limit", "counter"};
static const char *const from_keys[] = {"zone", "interface", "network", "port"};
static const char *const to_keys[] = {"zone", "interface", "network", "port", "service"};
static const char *const proto_names[] = {"tcp", "udp", "icmp", "icmpv6", "sctp", "gre", "esp"};
static const char *const state_names[] = {"new", "established", "related", "invalid"};

void rule_free(struct rule *r)
{
	netval_free(&r->from.net);
	netval_free(&r->to.net);
	free(r->from.port.v);
	free(r->to.port.v);
	free(r->svc.v);
}

/* from: or to: of a rule or NAT match. */
int rules_parse_side(struct policy *pol, struct rule *r, yaml_node_t *n, int to)
{
	struct side *s = to ? &r->to : &r->from;
	yaml_node_t *net, *port, *svc, *zone, *iface;
	int rc = 0;

	if (policy_want_mapping(pol, n, to ? "'to'" : "'from'") < 0)
		return -1;
	if (ytree_check_keys(pol->yt, n, pol->d, to ? "to" : "from", to ? to_keys : from_keys,
			     to ? N(to_keys) : N(from_keys), NULL, 0))
		rc = -1;
	net = ytree_get(pol->yt, n, "network", NULL);
	if (net) {
		s->has_net = 1;
		s->net_node = net;
		if (resolve_network_value(pol, net, &s->net) < 0)
			rc = -1;
	}
	port = ytree_get(pol->yt, n, "port", NULL);
	if (port) {
		s->has_port = 1;
		s->port_node = port;
		if (resolve_ports(pol, port, &s->port) < 0)
			rc = -1;
	}
	svc = to ? ytree_get(pol->yt, n, "service", NULL) : NULL;
	if (svc) {
		r->has_svc = 1;
		r->svc_node = svc;
		if (resolve_service_value(pol, svc, &r->svc) < 0)
			rc = -1;
	}
	zone = ytree_get(pol->yt, n, "zone", NULL);
	iface = ytree_get(pol->yt, n, "interface", NULL);
	if ((zone || iface) && zones_side(pol, zone, iface, s) < 0)
		rc = -1;
	return rc;
}

static void parse_proto(struct policy *pol, struct rule *r, yaml_node_t *n)
{
	const char *s = ytree_str(n);
	const char *hint;

	r->proto_node = n;
	r->proto = s ? val_parse_proto(s) : -1;
	if (r->proto >= 0)
		return;
	r->bad = 1;
	if (!s) {
		ytree_error(pol->d, n, "proto must be one protocol name or number, not %s", ytree_kind(n));
		return;
	}
	hint = diag_suggest(s, proto_names, N(proto_names));
	if (hint)
		ytree_error(pol->d, n,
			    "unknown protocol '%s'; expected tcp, udp, icmp, icmpv6, sctp, gre, esp or 0-255; did you mean '%s'?",
			    s, hint);
	else
		ytree_error(pol->d, n,
			    "unknown protocol '%s'; expected tcp, udp, icmp, icmpv6, sctp, gre, esp or 0-255",
			    s);
}

static void parse_family(struct policy *pol, struct rule *r, yaml_node_t *n)
{
	const char *s = ytree_str(n);

	r->family_node = n;
	if (s && strcmp(s, "ipv4") == 0)
		r->family = 4;
	else if (s && strcmp(s, "ipv6") == 0)
		r->family = 6;
	else {
		ytree_error(pol->d, n, "family must be ipv4 or ipv6, not '%s'", s ? s : ytree_kind(n));
		r->bad = 1;
	}
}

int rules_parse_match(struct policy *pol, struct rule *r, yaml_node_t *n)
{
	yaml_node_t *v;

	v = ytree_get(pol->yt, n, "proto", NULL);
	if (v)
		parse_proto(pol, r, v);
	v = ytree_get(pol->yt, n, "family", NULL);
	if (v)
		parse_family(pol, r, v);
	v = ytree_get(pol->yt, n, "from", NULL);
	if (v && rules_parse_side(pol, r, v, 0) < 0)
		r->bad = 1;
	v = ytree_get(pol->yt, n, "to", NULL);
	if (v && rules_parse_side(pol, r, v, 1) < 0)
		r->bad = 1;
	return r->bad ? -1 : 0;
}

/* "syn,!ack" or [syn, "!ack"]: mask = flags named, value = those without '!'. */
static int tcp_flag_entry(struct policy *pol, yaml_node_t *n, void *out)
{
	struct rule *r = out;
	const char *s = ytree_str(n);
	char buf[128], *save = NULL;

	if (!s || strlen(s) >= sizeof(buf) || !*s) {
		ytree_error(pol->d, n, "tcp_flags must be flag names like 'syn,!ack', not %s",
			    s ? "that" : ytree_kind(n));
		return -1;
	}
	strcpy(buf, s);
	for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
		int neg = t[0] == '!';
		int bit = val_tcp_flag(t + neg);

		if (bit < 0) {
			ytree_error(pol->d, n,
				    "unknown TCP flag '%s'; expected fin, syn, rst, psh, ack, urg, ece or cwr, '!' in front for 'not set'",
				    t + neg);
			return -1;
		}
		if (r->tcp_mask & bit) {
			ytree_error(pol->d, n, "TCP flag '%s' is named twice in tcp_flags", t + neg);
			return -1;
		}
		r->tcp_mask |= (uint8_t)bit;
		if (!neg)
			r->tcp_value |= (uint8_t)bit;
	}
	return 0;
}

static int state_entry(struct policy *pol, yaml_node_t *n, void *out)
{
	struct rule *r = out;
	const char *s = ytree_str(n);

	for (size_t i = 0; s && i < N(state_names); i++) {
		if (strcmp(s, state_names[i]) == 0) {
			r->state_mask |= (uint8_t)(1u << i);	/* enum rfw_state order */
			return 0;
		}
	}
	ytree_error(pol->d, n, "unknown state '%s'; expected new, established, related or invalid",
		    s ? s : ytree_kind(n));
	return -1;
}

/* A rule without a name is called "rule-N" after its number, so every rule
 * has a stable name in query output and counters. */
static void parse_name(struct policy *pol, struct rule *r, yaml_node_t *n, size_t num,
		       const char *what)
{
	const char *s = n ? ytree_str(n) : NULL;

	snprintf(r->name, sizeof(r->name), "%s-%zu", what, num);
	if (!n)
		return;
	if (!s || !val_is_name(s) || strlen(s) >= sizeof(r->name)) {
		ytree_error(pol->d, n,
			    "%s name must be a letter or '_', then letters, digits, '_', '-', '.' (under 128 bytes)",
			    what);
		r->bad = 1;
		return;
	}
	if (strcmp(s, "default") == 0) {
		ytree_error(pol->d, n, "rule name 'default' is reserved for rule 0 (no rule matched)");
		r->bad = 1;
		return;
	}
	snprintf(r->name, sizeof(r->name), "%s", s);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

static const char *entry_name(const struct policy *pol, int nat, uint32_t i)
{
	return nat ? pol->nats.v[i].match.name : pol->rules.v[i].name;
}

/* Index of an earlier rule (or NAT rule) called name, or -1. */
static long name_find(const struct policy *pol, const struct name_index *x, int nat,
		      const char *name)
{
	if (!x->cap)
		return -1;
	for (size_t i = name_hash(name) & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
		if (!x->slot[i])
			return -1;
		if (!strcmp(entry_name(pol, nat, x->slot[i] - 1), name))
			return (long)x->slot[i] - 1;
	}
}

/* Remember rule `idx` by its name; the table stays at most half full.
 * Out of memory only loses the duplicate check (and is reported). */
static void name_add(struct policy *pol, struct name_index *x, int nat, uint32_t idx)
{
	if (2 * (x->used + 1) > x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 64;
		uint32_t *slot = calloc(cap, sizeof(*slot));

		if (!slot) {
			diag_error(pol->d, 0, 0, "out of memory indexing rule names");
			return;
		}
		for (size_t i = 0; i < x->cap; i++)
			if (x->slot[i]) {
				size_t j = name_hash(entry_name(pol, nat, x->slot[i] - 1)) & (cap - 1);

				while (slot[j])
					j = (j + 1) & (cap - 1);
				slot[j] = x->slot[i];
			}
		free(x->slot);
		x->slot = slot;
		x->cap = cap;
	}
	for (size_t i = name_hash(entry_name(pol, nat, idx)) & (x->cap - 1);;
	     i = (i + 1) & (x->cap - 1))
		if (!x->slot[i]) {
			x->slot[i] = idx + 1;
			x->used++;
			return;
		}
}

/* Shared by rules and NAT rules: the name, unique in its list. The rule
 * is stored (by the caller) at index `n` of its list right after this,
 * and named there by rules_name_commit. */
void rules_name(struct policy *pol, struct rule *r, yaml_node_t *map, size_t num, int nat)
{
	yaml_node_t *v = ytree_get(pol->yt, map, "name", NULL);
	long i;

	parse_name(pol, r, v, num, nat ? "nat" : "rule");
	i = name_find(pol, nat ? &pol->nat_names : &pol->rule_names, nat, r->name);
	if (i >= 0) {
		const struct rule *o = nat ? &pol->nats.v[i].match : &pol->rules.v[i];
		char where[256];

		if (pol->files.v[o->file].diag_file == pol->d->cur)
			snprintf(where, sizeof(where), "line %u", ytree_line(o->node));
		else
			snprintf(where, sizeof(where), "%s:%u",
				 policy_short_path(pol, pol->files.v[o->file].path), ytree_line(o->node));
		ytree_error(pol->d, v ? v : map, "duplicate %s name '%s' (%s %ld at %s)",
			    nat ? "NAT rule" : "rule", r->name, nat ? "NAT rule" : "rule", i + 1, where);
		r->bad = 1;
	}
}

/* Index the rule just appended at position idx of its list. */
void rules_name_commit(struct policy *pol, uint32_t idx, int nat)
{
	name_add(pol, nat ? &pol->nat_names : &pol->rule_names, nat, idx);
}

static void parse_rule(struct policy *pol, yaml_node_t *n, size_t num)
{
	struct rule r = {0};
	yaml_node_t *v;
	int b;

	r.node = n;
	r.file = pol->cur;
	r.proto = -1;
	if (policy_want_mapping(pol, n, "a rule") < 0) {
		r.bad = 1;
		snprintf(r.name, sizeof(r.name), "rule-%zu", num);
		VEC_PUSH(pol->rules, r);
		rules_name_commit(pol, (uint32_t)pol->rules.n - 1, 0);
		return;
	}
	unsigned key_errors = ytree_check_keys(pol->yt, n, pol->d, "rule", rule_keys,
					       N(rule_keys), NULL, 0);

	r.bad = key_errors != 0;
	rules_name(pol, &r, n, num, 0);
	rules_parse_match(pol, &r, n);
	v = ytree_get(pol->yt, n, "icmp_type", NULL);
	if (v) {
		r.icmp_node = v;
		r.icmp_type = ytree_str(v);
		if (!r.icmp_type) {
			ytree_error(pol->d, v, "icmp_type must be a type name or number, not %s",
				    ytree_kind(v));
			r.bad = 1;
		}
	}
	v = ytree_get(pol->yt, n, "tcp_flags", NULL);
	if (v) {
		r.has_tcp = 1;
		r.tcp_node = v;
		if (policy_each(pol, v, tcp_flag_entry, &r) < 0) {
			r.bad = 1;
		} else if (!r.tcp_mask) {	/* tcp_flags: [] */
			ytree_error(pol->d, v, "tcp_flags names no flag: name some (like 'syn,!ack') "
				    "or leave it out");
			r.bad = 1;
		}
	}
	v = ytree_get(pol->yt, n, "state", NULL);
	if (v && policy_each(pol, v, state_entry, &r) < 0) {
		r.bad = 1;
	} else if (v && !r.state_mask) {	/* state: [] (as port: [] and the rest) */
		ytree_error(pol->d, v, "rule '%s' can never match: the state list is empty",
			    r.name);
		r.bad = 1;
	}
	v = ytree_get(pol->yt, n, "log", NULL);
	if (v && policy_parse_bool(pol, v, "log", &r.log) < 0)
		r.bad = 1;
	/* Every rule counts packets and bytes; `counter` is accepted for
	 * those who write it anyway. */
	v = ytree_get(pol->yt, n, "counter", NULL);
	if (v && policy_parse_bool(pol, v, "counter", &b) < 0)
		r.bad = 1;
	v = ytree_get(pol->yt, n, "limit", NULL);
	if (v) {
		r.has_limit = 1;
		if (limits_parse(pol, v, &r.limit) < 0)
			r.bad = 1;
	}
	v = ytree_get(pol->yt, n, "action", NULL);
	if (!v) {
		/* With a bad key in the rule, that key is most likely the action
		 * misspelt: one message about it is enough. */
		if (!key_errors)
			ytree_error(pol->d, n, "rule '%s' has no action; expected accept, drop or reject",
				    r.name);
		r.bad = 1;
	} else if (policy_parse_action(pol, v, &r.action) < 0) {
		r.bad = 1;
	}
	VEC_PUSH(pol->rules, r);
	rules_name_commit(pol, (uint32_t)pol->rules.n - 1, 0);
}

void rules_parse(struct policy *pol, yaml_node_t *n)
{
	if (n->type != YAML_SEQUENCE_NODE) {
		ytree_error(pol->d, n, "'rules' must be a list of rules, not %s", ytree_kind(n));
		return;
	}
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++)
		parse_rule(pol, ytree_node(pol->yt, *it), pol->rules.n + 1);
}
