/* The top of the policy file: version, defaults, the sections in the order
 * names need them (networks, services, then rules), and each rule's keys.
 * Only shape and values are checked here; what a rule means as a whole
 * (families, protocols against ports) is compile.c's job. */
#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const top_keys[] = {"version", "networks", "services", "rules", "defaults"};
static const char *const top_later[] = {"include", "zones", "nat", "routes", "host"};
static const char *const default_keys[] = {"action"};
static const char *const default_later[] = {"stateful", "conntrack", "timeouts"};
static const char *const rule_keys[] = {"name", "proto", "from", "to", "action"};
static const char *const rule_later[] = {"family", "icmp_type", "tcp_flags", "state",
					 "log", "limit", "counter"};
static const char *const from_keys[] = {"network", "port"};
static const char *const to_keys[] = {"network", "port", "service"};
static const char *const side_later[] = {"zone", "interface"};
static const char *const actions[] = {"drop", "accept", "reject"};	/* enum rfw_action order */

static int parse_action(struct policy *pol, yaml_node_t *n, uint8_t *out)
{
	const char *s = ytree_str(n);
	const char *hint;

	if (!s) {
		ytree_error(pol->d, n, "an action must be accept, drop or reject, not %s", ytree_kind(n));
		return -1;
	}
	for (size_t i = 0; i < N(actions); i++) {
		if (strcmp(s, actions[i]) == 0) {
			*out = (uint8_t)i;
			return 0;
		}
	}
	hint = diag_suggest(s, actions, N(actions));
	if (hint)
		ytree_error(pol->d, n, "unknown action '%s'; expected accept, drop or reject; did you mean '%s'?",
			    s, hint);
	else
		ytree_error(pol->d, n, "unknown action '%s'; expected accept, drop or reject", s);
	return -1;
}

static int want_mapping(struct policy *pol, yaml_node_t *n, const char *what)
{
	if (n->type == YAML_MAPPING_NODE)
		return 0;
	ytree_error(pol->d, n, "%s must be a mapping, not %s", what, ytree_kind(n));
	return -1;
}

static void parse_version(struct policy *pol, yaml_node_t *root)
{
	yaml_node_t *v = ytree_get(&pol->yt, root, "version", NULL);
	const char *s;

	if (!v) {
		ytree_error(pol->d, root, "missing 'version: 1' (the policy language version)");
		return;
	}
	s = ytree_str(v);
	if (!s || strcmp(s, "1") != 0)
		ytree_error(pol->d, v, "unsupported policy version '%s'; this rulec reads version 1",
			    s ? s : ytree_kind(v));
}

static void parse_defaults(struct policy *pol, yaml_node_t *n)
{
	yaml_node_t *a;

	if (want_mapping(pol, n, "'defaults'") < 0)
		return;
	ytree_check_keys(&pol->yt, n, pol->d, "defaults", default_keys, N(default_keys),
			 default_later, N(default_later));
	a = ytree_get(&pol->yt, n, "action", NULL);
	if (a)
		parse_action(pol, a, &pol->default_action);
}

/* from: or to: of a rule. */
static int parse_side(struct policy *pol, struct rule *r, yaml_node_t *n, int to)
{
	const char *where = to ? "'to'" : "'from'";
	yaml_node_t *net, *port, *svc;
	int rc = 0;

	if (want_mapping(pol, n, where) < 0)
		return -1;
	if (ytree_check_keys(&pol->yt, n, pol->d, to ? "to" : "from",
			     to ? to_keys : from_keys, to ? N(to_keys) : N(from_keys),
			     side_later, N(side_later)))
		rc = -1;
	net = ytree_get(&pol->yt, n, "network", NULL);
	if (net) {
		*(to ? &r->has_dst : &r->has_src) = 1;
		if (resolve_network_value(pol, net, to ? &r->dst : &r->src) < 0)
			rc = -1;
		if (to)
			r->dst_node = net;
		else
			r->src_node = net;
	}
	port = ytree_get(&pol->yt, n, "port", NULL);
	if (port) {
		*(to ? &r->has_dport : &r->has_sport) = 1;
		*(to ? &r->dport_node : &r->sport_node) = port;
		if (resolve_ports(pol, port, to ? &r->dport : &r->sport) < 0)
			rc = -1;
	}
	svc = to ? ytree_get(&pol->yt, n, "service", NULL) : NULL;
	if (svc) {
		r->has_svc = 1;
		r->svc_node = svc;
		if (resolve_service_value(pol, svc, &r->svc) < 0)
			rc = -1;
	}
	return rc;
}

static void parse_proto(struct policy *pol, struct rule *r, yaml_node_t *n)
{
	static const char *const names[] = {"tcp", "udp", "icmp", "icmpv6", "sctp", "gre", "esp"};
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
	hint = diag_suggest(s, names, N(names));
	if (hint)
		ytree_error(pol->d, n,
			    "unknown protocol '%s'; expected tcp, udp, icmp, icmpv6, sctp, gre, esp or 0-255; did you mean '%s'?",
			    s, hint);
	else
		ytree_error(pol->d, n,
			    "unknown protocol '%s'; expected tcp, udp, icmp, icmpv6, sctp, gre, esp or 0-255",
			    s);
}

/* A rule without a name is called "rule-N" after its number, so every rule
 * has a stable name in query output and counters. */
static void parse_name(struct policy *pol, struct rule *r, yaml_node_t *n, size_t num)
{
	const char *s = n ? ytree_str(n) : NULL;

	snprintf(r->name, sizeof(r->name), "rule-%zu", num);
	if (!n)
		return;
	if (!s || !val_is_name(s) || strlen(s) >= sizeof(r->name)) {
		ytree_error(pol->d, n,
			    "rule name must be a letter or '_', then letters, digits, '_', '-', '.' (under 128 bytes)");
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

static void parse_rule(struct policy *pol, yaml_node_t *n, size_t num)
{
	struct rule r = {0};
	yaml_node_t *v, *name_node = NULL;

	r.node = n;
	r.proto = -1;
	if (want_mapping(pol, n, "a rule") < 0) {
		r.bad = 1;
		snprintf(r.name, sizeof(r.name), "rule-%zu", num);
		VEC_PUSH(pol->rules, r);
		return;
	}
	unsigned key_errors = ytree_check_keys(&pol->yt, n, pol->d, "rule", rule_keys,
					       N(rule_keys), rule_later, N(rule_later));

	r.bad = key_errors != 0;
	v = ytree_get(&pol->yt, n, "name", &name_node);
	parse_name(pol, &r, v, num);
	for (size_t i = 0; i < pol->rules.n; i++) {
		if (strcmp(pol->rules.v[i].name, r.name) == 0) {
			yaml_node_t *at = v ? v : n;

			ytree_error(pol->d, at, "duplicate rule name '%s' (rule %zu at line %u)", r.name,
				    i + 1, ytree_line(pol->rules.v[i].node));
			r.bad = 1;
			break;
		}
	}
	v = ytree_get(&pol->yt, n, "proto", NULL);
	if (v)
		parse_proto(pol, &r, v);
	v = ytree_get(&pol->yt, n, "from", NULL);
	if (v && parse_side(pol, &r, v, 0) < 0)
		r.bad = 1;
	v = ytree_get(&pol->yt, n, "to", NULL);
	if (v && parse_side(pol, &r, v, 1) < 0)
		r.bad = 1;
	v = ytree_get(&pol->yt, n, "action", NULL);
	if (!v) {
		/* With a bad key in the rule, that key is most likely the action
		 * misspelt: one message about it is enough. */
		if (!key_errors)
			ytree_error(pol->d, n, "rule '%s' has no action; expected accept, drop or reject",
				    r.name);
		r.bad = 1;
	} else if (parse_action(pol, v, &r.action) < 0) {
		r.bad = 1;
	}
	VEC_PUSH(pol->rules, r);
}

static void parse_rules(struct policy *pol, yaml_node_t *n)
{
	if (n->type != YAML_SEQUENCE_NODE) {
		ytree_error(pol->d, n, "'rules' must be a list of rules, not %s", ytree_kind(n));
		return;
	}
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++)
		parse_rule(pol, ytree_node(&pol->yt, *it), pol->rules.n + 1);
}

/* Fixed order whatever the file's order: names exist before rules use them. */
static const struct {
	const char *key;
	void (*parse)(struct policy *pol, yaml_node_t *n);
} sections[] = {
	{"defaults", parse_defaults},
	{"networks", resolve_networks},
	{"services", resolve_services},
	{"rules", parse_rules},
};

unsigned policy_load(struct policy *pol, const char *path, struct diag *d)
{
	yaml_node_t *root, *v;
	unsigned before = d->errors;

	memset(pol, 0, sizeof(*pol));
	pol->d = d;
	pol->source = path;
	pol->default_action = RFW_ACTION_DROP;
	if (ytree_load(&pol->yt, path, d) < 0)
		return d->errors - before;
	root = ytree_root(&pol->yt);
	if (want_mapping(pol, root, "a policy") < 0)
		return d->errors - before;
	ytree_check_keys(&pol->yt, root, d, "the policy", top_keys, N(top_keys),
			 top_later, N(top_later));
	parse_version(pol, root);
	for (size_t i = 0; i < N(sections); i++) {
		v = ytree_get(&pol->yt, root, sections[i].key, NULL);
		if (v)
			sections[i].parse(pol, v);
	}
	return d->errors - before;
}

void policy_free(struct policy *pol)
{
	for (size_t i = 0; i < pol->nets.n; i++)
		free(pol->nets.v[i].pfx.v);
	for (size_t i = 0; i < pol->svcs.n; i++)
		free(pol->svcs.v[i].items.v);
	for (size_t i = 0; i < pol->rules.n; i++) {
		struct rule *r = &pol->rules.v[i];

		free(r->src.v);
		free(r->dst.v);
		free(r->sport.v);
		free(r->dport.v);
		free(r->svc.v);
	}
	free(pol->nets.v);
	free(pol->svcs.v);
	free(pol->rules.v);
	free(pol->stack.v);
	ytree_free(&pol->yt);
	memset(pol, 0, sizeof(*pol));
}
