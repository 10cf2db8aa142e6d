/* The top of the policy: the file and its includes (merged before it,
 * cycles refused, a file included twice read once), version, defaults, and
 * each section in the order names need them: networks, services and zones
 * of every file first, then rules, NAT, routes and host. Only shape and
 * values are checked here; what a rule means as a whole is compile.c's. */
#include "policy.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const top_keys[] = {"version", "include", "networks", "services", "zones",
				       "defaults", "rules", "nat", "routes", "host"};
static const char *const default_keys[] = {"action", "stateful", "conntrack", "timeouts",
					   "tcp_mss", "rpf"};
static const char *const timeout_keys[] = {"tcp_syn", "tcp_established", "tcp_closing", "udp",
					   "udp_stream", "icmp", "other"};	/* enum rfw_timeout */
static const uint32_t timeout_defaults[] = {30, 86400, 30, 30, 180, 30, 60};
static const char *const actions[] = {"drop", "accept", "reject"};	/* enum rfw_action order */

size_t policy_enter(struct policy *pol, size_t f)
{
	size_t prev = pol->cur;

	pol->cur = f;
	pol->yt = &pol->files.v[f].yt;
	pol->d->cur = pol->files.v[f].diag_file;
	return prev;
}

struct pos policy_pos(const struct policy *pol, const yaml_node_t *n)
{
	return (struct pos){pol->d->cur, ytree_line(n), ytree_col(n)};
}

/* A file's name for messages: relative to the main policy's directory
 * when it lies below it, so "objects/common.yaml", not a long path. */
const char *policy_short_path(const struct policy *pol, const char *path)
{
	const char *root = pol->files.n ? pol->files.v[0].path : "";
	const char *slash = strrchr(root, '/');
	size_t dl = slash ? (size_t)(slash - root) + 1 : 0;

	return dl && strncmp(path, root, dl) == 0 ? path + dl : path;
}

void policy_where(const struct policy *pol, struct pos at, char *buf, size_t len)
{
	if (at.file == pol->d->cur)
		snprintf(buf, len, "line %u column %u", at.line, at.col);
	else
		snprintf(buf, len, "%s:%u:%u",
			 policy_short_path(pol, diag_file_name(pol->d, at.file)), at.line, at.col);
}

void policy_where_node(const struct policy *pol, size_t f, const yaml_node_t *n, char *buf,
		       size_t len)
{
	policy_where(pol, (struct pos){pol->files.v[f].diag_file, ytree_line(n), ytree_col(n)},
		     buf, len);
}

char *policy_path(const struct policy *pol, size_t f, const char *rel)
{
	const char *base = pol->files.v[f].path, *slash = strrchr(base, '/');
	size_t dl = slash ? (size_t)(slash - base) + 1 : 0;
	char *out = malloc(dl + strlen(rel) + 1);

	if (!out) {
		fputs("rulec: out of memory\n", stderr);
		exit(2);
	}
	if (rel[0] == '/')
		dl = 0;
	memcpy(out, base, dl);
	strcpy(out + dl, rel);
	return out;
}

int policy_parse_action(struct policy *pol, yaml_node_t *n, uint8_t *out)
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

int policy_want_mapping(struct policy *pol, yaml_node_t *n, const char *what)
{
	if (n->type == YAML_MAPPING_NODE)
		return 0;
	ytree_error(pol->d, n, "%s must be a mapping, not %s", what, ytree_kind(n));
	return -1;
}

int policy_parse_bool(struct policy *pol, yaml_node_t *n, const char *key, int *out)
{
	const char *s = ytree_str(n);

	if (s && strcmp(s, "true") == 0)
		*out = 1;
	else if (s && strcmp(s, "false") == 0)
		*out = 0;
	else {
		ytree_error(pol->d, n, "'%s' must be true or false, not '%s'", key,
			    s ? s : ytree_kind(n));
		return -1;
	}
	return 0;
}

int policy_each(struct policy *pol, yaml_node_t *value,
		int (*entry)(struct policy *, yaml_node_t *, void *), void *out)
{
	int rc = 0;

	if (value->type != YAML_SEQUENCE_NODE)
		return entry(pol, value, out);
	for (yaml_node_item_t *it = value->data.sequence.items.start;
	     it < value->data.sequence.items.top; it++)
		if (entry(pol, ytree_node(pol->yt, *it), out) < 0)
			rc = -1;
	return rc;
}

static void parse_version(struct policy *pol, yaml_node_t *root, int required)
{
	yaml_node_t *v = ytree_get(pol->yt, root, "version", NULL);
	const char *s;

	if (!v) {
		if (required)
			ytree_error(pol->d, root, "missing 'version: 1' (the policy language version)");
		return;
	}
	s = ytree_str(v);
	if (!s || strcmp(s, "1") != 0)
		ytree_error(pol->d, v, "unsupported policy version '%s'; this rulec reads version 1",
			    s ? s : ytree_kind(v));
}

/* A count or number of seconds: a decimal 1..max. */
static int parse_count(struct policy *pol, yaml_node_t *n, const char *key, unsigned long max,
		       uint32_t *out)
{
	const char *s = ytree_str(n);
	unsigned long v;

	if (!s || val_parse_uint(s, max, &v) < 0 || v == 0) {
		ytree_error(pol->d, n, "'%s' must be a whole number from 1 to %lu, not '%s'", key, max,
			    s ? s : ytree_kind(n));
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static void parse_timeouts(struct policy *pol, yaml_node_t *n)
{
	if (policy_want_mapping(pol, n, "'timeouts'") < 0)
		return;
	ytree_check_keys(pol->yt, n, pol->d, "timeouts", timeout_keys, N(timeout_keys), NULL, 0);
	for (size_t i = 0; i < N(timeout_keys); i++) {
		yaml_node_t *v = ytree_get(pol->yt, n, timeout_keys[i], NULL);

		if (v)
			parse_count(pol, v, timeout_keys[i], 30u * 86400, &pol->timeout[i]);
	}
}

/* tcp_mss: clamp (to the ports' MTUs) or a ceiling in bytes. */
static void parse_tcp_mss(struct policy *pol, yaml_node_t *n)
{
	const char *s = ytree_str(n);
	unsigned long v;

	if (s && !strcmp(s, "clamp")) {
		pol->tcp_mss = RFW_TCP_MSS_CLAMP;
		return;
	}
	if (!s || val_parse_uint(s, 65535, &v) < 0 || v < RFW_TCP_MSS_MIN) {
		ytree_error(pol->d, n,
			    "'tcp_mss' must be 'clamp' (to the ports' MTUs) or a whole number of bytes "
			    "from %u to 65535, not '%s'", RFW_TCP_MSS_MIN, s ? s : ytree_kind(n));
		return;
	}
	pol->tcp_mss = (uint16_t)v;
}

/* rpf: off, loose or strict reverse path filtering (router mode). */
static void parse_rpf(struct policy *pol, yaml_node_t *n)
{
	static const char *const names[] = {"off", "loose", "strict"};
	const char *s = ytree_str(n);

	for (uint8_t i = 0; s && i < N(names); i++)
		if (!strcmp(s, names[i])) {
			pol->rpf = i;
			pol->rpf_pos = policy_pos(pol, n);
			return;
		}
	ytree_error(pol->d, n, "'rpf' must be off, loose or strict, not '%s'", s ? s : ytree_kind(n));
}

static void parse_defaults(struct policy *pol, yaml_node_t *n, yaml_node_t *key)
{
	static const char *const ct_keys[] = {"max_flows"};
	yaml_node_t *v;
	char where[256];
	int b;

	if (pol->has_defaults) {
		policy_where(pol, pol->defaults_pos, where, sizeof(where));
		ytree_error(pol->d, key, "'defaults' given twice (first at %s); keep one", where);
		return;
	}
	pol->has_defaults = 1;
	pol->defaults_pos = policy_pos(pol, key);
	if (policy_want_mapping(pol, n, "'defaults'") < 0)
		return;
	ytree_check_keys(pol->yt, n, pol->d, "defaults", default_keys, N(default_keys), NULL, 0);
	v = ytree_get(pol->yt, n, "action", NULL);
	if (v)
		policy_parse_action(pol, v, &pol->default_action);
	v = ytree_get(pol->yt, n, "stateful", NULL);
	if (v && policy_parse_bool(pol, v, "stateful", &b) == 0)
		pol->stateful = (uint8_t)b;
	v = ytree_get(pol->yt, n, "conntrack", NULL);
	if (v && policy_want_mapping(pol, v, "'conntrack'") == 0) {
		yaml_node_t *m;

		ytree_check_keys(pol->yt, v, pol->d, "conntrack", ct_keys, N(ct_keys), NULL, 0);
		m = ytree_get(pol->yt, v, "max_flows", NULL);
		if (m)
			parse_count(pol, m, "max_flows", UINT32_MAX, &pol->max_flows);
	}
	v = ytree_get(pol->yt, n, "timeouts", NULL);
	if (v)
		parse_timeouts(pol, v);
	v = ytree_get(pol->yt, n, "tcp_mss", NULL);
	if (v)
		parse_tcp_mss(pol, v);
	v = ytree_get(pol->yt, n, "rpf", NULL);
	if (v)
		parse_rpf(pol, v);
}

static void load_file(struct policy *pol, const char *path, yaml_node_t *from, size_t parent);

/* include: [paths]: each relative to this file, loaded (recursively)
 * before this file joins the merged order. */
static void parse_include(struct policy *pol, yaml_node_t *n)
{
	size_t me = pol->cur;

	if (n->type != YAML_SEQUENCE_NODE && n->type != YAML_SCALAR_NODE) {
		ytree_error(pol->d, n, "'include' must be a list of file paths, not %s", ytree_kind(n));
		return;
	}
	for (yaml_node_item_t *it = n->type == YAML_SEQUENCE_NODE ? n->data.sequence.items.start : NULL;
	     n->type == YAML_SCALAR_NODE || it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = n->type == YAML_SCALAR_NODE ? n : ytree_node(pol->yt, *it);
		const char *s = ytree_str(e);

		if (!s || !*s) {
			ytree_error(pol->d, e, "an include entry must be a file path, not %s",
				    s ? "empty" : ytree_kind(e));
		} else {
			char *p = policy_path(pol, me, s);

			load_file(pol, p, e, me);
			free(p);
			policy_enter(pol, me);
		}
		if (n->type == YAML_SCALAR_NODE)
			break;
	}
}

static void include_cycle(struct policy *pol, yaml_node_t *from, size_t again)
{
	char path[1024] = "";
	size_t used = 0;

	/* The stack is every file still loading, in order; the cycle starts
	 * at `again`. */
	for (size_t k = 0; k < pol->files.n; k++) {
		if (!pol->files.v[k].loading || k < again)
			continue;
		int w = snprintf(path + used, sizeof(path) - used, "%s -> ",
				 policy_short_path(pol, pol->files.v[k].path));

		if (w > 0 && (size_t)w < sizeof(path) - used)
			used += (size_t)w;
	}
	ytree_error(pol->d, from, "include cycle: %s%s", path,
		    policy_short_path(pol, pol->files.v[again].path));
}

static void load_file(struct policy *pol, const char *path, yaml_node_t *from, size_t parent)
{
	struct src_file sf = {0};
	char real[PATH_MAX];
	yaml_node_t *root, *inc;
	size_t me;

	(void)parent;
	if (realpath(path, real)) {
		for (size_t k = 0; k < pol->files.n; k++) {
			if (!pol->files.v[k].real || strcmp(pol->files.v[k].real, real) != 0)
				continue;
			if (pol->files.v[k].loading)
				include_cycle(pol, from, k);
			/* Included twice without a cycle (a diamond): read once, so
			 * its names are not defined twice. */
			return;
		}
		sf.real = strdup(real);
	}
	if (from) {
		FILE *f = fopen(path, "r");

		if (!f) {
			ytree_error(pol->d, from, "cannot open included file '%s': %s", ytree_str(from),
				    strerror(errno));
			free(sf.real);
			return;
		}
		fclose(f);
	}
	sf.path = strdup(path);
	if (!sf.path) {
		fputs("rulec: out of memory\n", stderr);
		exit(2);
	}
	sf.diag_file = diag_add_file(pol->d, path);
	sf.loading = 1;
	VEC_PUSH(pol->files, sf);
	me = pol->files.n - 1;
	pol->d->cur = sf.diag_file;
	if (ytree_load(&pol->files.v[me].yt, path, pol->d) < 0) {
		pol->files.v[me].loading = 0;
		return;
	}
	policy_enter(pol, me);
	root = ytree_root(pol->yt);
	if (policy_want_mapping(pol, root, from ? "an included policy" : "a policy") == 0) {
		ytree_check_keys(pol->yt, root, pol->d, "the policy", top_keys, N(top_keys), NULL, 0);
		parse_version(pol, root, from == NULL);
		inc = ytree_get(pol->yt, root, "include", NULL);
		if (inc)
			parse_include(pol, inc);
		VEC_PUSH(pol->order, me);
	}
	pol->files.v[me].loading = 0;
}

/* Fixed order whatever the files' order: names exist before rules use
 * them, and every file's definitions before any resolution. */
static const struct {
	const char *key;
	void (*parse)(struct policy *pol, yaml_node_t *n);
} sections[] = {
	{"networks", resolve_add_networks},
	{"services", resolve_add_services},
	{"zones", zones_parse},
	{"rules", rules_parse},
	{"nat", nat_parse},
	{"routes", routes_parse},
	{"host", host_parse},
};

static void each_file(struct policy *pol, size_t s)
{
	for (size_t i = 0; i < pol->order.n; i++) {
		yaml_node_t *v;

		policy_enter(pol, pol->order.v[i]);
		v = ytree_get(pol->yt, ytree_root(pol->yt), sections[s].key, NULL);
		if (v)
			sections[s].parse(pol, v);
	}
}

unsigned policy_load(struct policy *pol, const char *path, struct diag *d)
{
	unsigned before = d->errors;

	memset(pol, 0, sizeof(*pol));
	pol->d = d;
	pol->source = path;
	pol->default_action = RFW_ACTION_DROP;
	pol->stateful = 1;
	pol->max_flows = 1000000;
	memcpy(pol->timeout, timeout_defaults, sizeof(pol->timeout));
	load_file(pol, path, NULL, 0);
	if (pol->order.n == 0)
		return d->errors - before;
	for (size_t i = 0; i < pol->order.n; i++) {
		yaml_node_t *key = NULL, *v;

		policy_enter(pol, pol->order.v[i]);
		v = ytree_get(pol->yt, ytree_root(pol->yt), "defaults", &key);
		if (v)
			parse_defaults(pol, v, key);
	}
	each_file(pol, 0);
	resolve_networks(pol);
	each_file(pol, 1);
	resolve_services(pol);
	for (size_t s = 2; s < N(sections); s++)
		each_file(pol, s);
	warn_unused(pol);
	if (pol->rpf && !pol->routes.n)
		diag_warn_in(d, pol->rpf_pos.file, pol->rpf_pos.line, pol->rpf_pos.col,
			     "'rpf' checks sources against the routes, and this policy has none: "
			     "it does nothing (bridge mode has no routes either)");
	return d->errors - before;
}

void policy_free(struct policy *pol)
{
	for (size_t i = 0; i < pol->nets.n; i++)
		netval_free(&pol->nets.v[i].val);
	for (size_t i = 0; i < pol->svcs.n; i++)
		free(pol->svcs.v[i].items.v);
	for (size_t i = 0; i < pol->rules.n; i++)
		rule_free(&pol->rules.v[i]);
	for (size_t i = 0; i < pol->nats.n; i++)
		rule_free(&pol->nats.v[i].match);
	for (size_t i = 0; i < pol->files.n; i++) {
		ytree_free(&pol->files.v[i].yt);
		free(pol->files.v[i].path);
		free(pol->files.v[i].real);
	}
	free(pol->files.v);
	free(pol->order.v);
	free(pol->nets.v);
	free(pol->svcs.v);
	free(pol->zones.v);
	free(pol->ifaces.v);
	free(pol->rules.v);
	free(pol->nats.v);
	free(pol->rule_names.slot);
	free(pol->nat_names.slot);
	free(pol->routes.v);
	free(pol->host_addrs.v);
	free(pol->host_pass.v);
	free(pol->stack.v);
	memset(pol, 0, sizeof(*pol));
}
