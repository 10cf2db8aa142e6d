/* Named objects: the networks and services sections, names used in rules,
 * and nested network names resolved depth-first with cycle detection.
 * Every definition is resolved once, in file order, so each error is
 * reported once however often the name is used. */
#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *vec_grow(void *v, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 8;

	if (need <= *cap)
		return v;
	while (ncap < need)
		ncap *= 2;
	v = realloc(v, ncap * elem);
	if (!v) {
		/* A policy compiler that cannot allocate has nothing useful to
		 * do; exiting keeps every caller free of OOM paths. */
		fputs("rulec: out of memory\n", stderr);
		exit(2);
	}
	*cap = ncap;
	return v;
}

/* Suggest one of the defined names for an unknown one. */
static const char *suggest_name(const char *word, const char *const *names, size_t n)
{
	return n ? diag_suggest(word, names, n) : NULL;
}

static void unknown_name(struct policy *pol, yaml_node_t *at, const char *kind,
			 const char *word, int nets)
{
	size_t n = nets ? pol->nets.n : pol->svcs.n;
	const char **names = calloc(n ? n : 1, sizeof(*names));
	const char *hint;

	if (!names) {
		fputs("rulec: out of memory\n", stderr);
		exit(2);
	}
	for (size_t i = 0; i < n; i++)
		names[i] = nets ? pol->nets.v[i].name : pol->svcs.v[i].name;
	hint = suggest_name(word, names, n);
	if (hint)
		ytree_error(pol->d, at, "unknown %s '%s'; did you mean '%s'?", kind, word, hint);
	else
		ytree_error(pol->d, at, "unknown %s '%s'", kind, word);
	free(names);
}

static long find_net(const struct policy *pol, const char *name)
{
	for (size_t i = 0; i < pol->nets.n; i++)
		if (strcmp(pol->nets.v[i].name, name) == 0)
			return (long)i;
	return -1;
}

static long find_svc(const struct policy *pol, const char *name)
{
	for (size_t i = 0; i < pol->svcs.n; i++)
		if (strcmp(pol->svcs.v[i].name, name) == 0)
			return (long)i;
	return -1;
}

static int resolve_net_def(struct policy *pol, size_t i);

/* "a -> b -> a": the names on the stack from the first use of idx. */
static void report_cycle(struct policy *pol, yaml_node_t *at, size_t idx)
{
	char path[512] = "";
	size_t used = 0, from = 0;

	while (from < pol->stack.n && pol->stack.v[from] != idx)
		from++;
	for (size_t k = from; k < pol->stack.n; k++) {
		int w = snprintf(path + used, sizeof(path) - used, "%s -> ",
				 pol->nets.v[pol->stack.v[k]].name);

		if (w > 0 && (size_t)w < sizeof(path) - used)
			used += (size_t)w;
	}
	ytree_error(pol->d, at, "network cycle: %s%s", path, pol->nets.v[idx].name);
}

/* A value that is one entry or a list of entries: every entry is checked,
 * so one run reports every bad one. */
static int each_item(struct policy *pol, yaml_node_t *value,
		     int (*entry)(struct policy *, yaml_node_t *, void *), void *out)
{
	int rc = 0;

	if (value->type != YAML_SEQUENCE_NODE)
		return entry(pol, value, out);
	for (yaml_node_item_t *it = value->data.sequence.items.start;
	     it < value->data.sequence.items.top; it++)
		if (entry(pol, ytree_node(&pol->yt, *it), out) < 0)
			rc = -1;
	return rc;
}

static int network_entry(struct policy *pol, yaml_node_t *n, void *outp)
{
	pfx_list *out = outp;

	const char *s = ytree_str(n);
	char why[256];
	struct prefix p;
	long j;

	if (!s) {
		ytree_error(pol->d, n, "a network entry must be an address, a prefix or a name, not %s",
			    ytree_kind(n));
		return -1;
	}
	if (s[0] == '!') {
		ytree_error(pol->d, n, "negation ('%s') is not supported by this version of rulec yet", s);
		return -1;
	}
	if (val_looks_like_addr(s)) {
		if (val_parse_prefix(s, &p, why, sizeof(why)) < 0) {
			ytree_error(pol->d, n, "%s", why);
			return -1;
		}
		VEC_PUSH(*out, p);
		return 0;
	}
	j = find_net(pol, s);
	if (j < 0) {
		unknown_name(pol, n, "network", s, 1);
		return -1;
	}
	if (pol->nets.v[j].state == DEF_BUSY) {
		report_cycle(pol, n, (size_t)j);
		return -1;
	}
	if (resolve_net_def(pol, (size_t)j) < 0)
		return -1;	/* reported where that network is defined */
	for (size_t k = 0; k < pol->nets.v[j].pfx.n; k++)
		VEC_PUSH(*out, pol->nets.v[j].pfx.v[k]);
	return 0;
}

int resolve_network_value(struct policy *pol, yaml_node_t *value, pfx_list *out)
{
	if (value->type == YAML_MAPPING_NODE) {
		if (ytree_get(&pol->yt, value, "file", NULL))
			ytree_error(pol->d, value, "'file' is not supported by this version of rulec yet");
		else
			ytree_error(pol->d, value,
				    "a network is an address, a prefix, a name or a list of them, not a mapping");
		return -1;
	}
	return each_item(pol, value, network_entry, out);
}

static int resolve_net_def(struct policy *pol, size_t i)
{
	struct net_def *def = &pol->nets.v[i];
	pfx_list got = {0};
	int rc;

	if (def->state == DEF_DONE)
		return def->bad ? -1 : 0;
	def->state = DEF_BUSY;
	VEC_PUSH(pol->stack, i);
	rc = resolve_network_value(pol, def->value, &got);
	pol->stack.n--;
	/* pol->nets may not move (no definitions are added now), but re-fetch
	 * def for clarity after the recursion. */
	def = &pol->nets.v[i];
	def->pfx = got;
	def->bad = rc < 0;
	def->state = DEF_DONE;
	return rc;
}

/* A name defined in networks or services: well formed, and defined once.
 * Service names may not be protocol names, so "service: tcp" keeps meaning
 * the protocol. Returns the name, or NULL after reporting. */
static const char *definition_name(struct policy *pol, yaml_node_t *k, int service)
{
	const char *what = service ? "service" : "network";
	const char *name = ytree_str(k);
	yaml_node_t *first = NULL;
	long prev;

	if (!name) {
		ytree_error(pol->d, k, "a %s name must be a scalar, not %s", what, ytree_kind(k));
		return NULL;
	}
	if (!val_is_name(name) || val_looks_like_addr(name)) {
		ytree_error(pol->d, k,
			    "'%s' is not a valid %s name (a letter or '_', then letters, digits, '_', '-', '.')",
			    name, what);
		return NULL;
	}
	if (service && val_parse_proto(name) >= 0) {
		ytree_error(pol->d, k, "service name '%s' is a protocol name; choose another", name);
		return NULL;
	}
	prev = service ? find_svc(pol, name) : find_net(pol, name);
	if (prev >= 0)
		first = service ? pol->svcs.v[prev].key : pol->nets.v[prev].key;
	if (first) {
		ytree_error(pol->d, k, "%s '%s' is defined twice (first at line %u column %u)", what,
			    name, ytree_line(first), ytree_col(first));
		return NULL;
	}
	return name;
}

/* The networks: or services: mapping; add() records one definition. */
static void each_definition(struct policy *pol, yaml_node_t *section, int service,
			    void (*add)(struct policy *, const char *, yaml_node_t *, yaml_node_t *))
{
	if (section->type != YAML_MAPPING_NODE) {
		ytree_error(pol->d, section, "'%s' must be a mapping of name: %s, not %s",
			    service ? "services" : "networks",
			    service ? "[proto/ports]" : "[addresses]", ytree_kind(section));
		return;
	}
	for (yaml_node_pair_t *p = section->data.mapping.pairs.start;
	     p < section->data.mapping.pairs.top; p++) {
		yaml_node_t *k = ytree_node(&pol->yt, p->key);
		const char *name = definition_name(pol, k, service);

		if (name)
			add(pol, name, k, ytree_node(&pol->yt, p->value));
	}
}

static void add_network(struct policy *pol, const char *name, yaml_node_t *k, yaml_node_t *v)
{
	struct net_def def = {.name = name, .key = k, .value = v};

	VEC_PUSH(pol->nets, def);
}

void resolve_networks(struct policy *pol, yaml_node_t *section)
{
	/* All names first, then resolution: a network may use a later one. */
	each_definition(pol, section, 0, add_network);
	for (size_t i = 0; i < pol->nets.n; i++)
		resolve_net_def(pol, i);
}

/* "tcp", "tcp/80", "udp/1024-65535", "47". */
static int service_literal(struct policy *pol, yaml_node_t *n, const char *s, svc_list *out)
{
	char proto_s[32], why[256], pbuf[8];
	const char *slash = strchr(s, '/');
	size_t plen = slash ? (size_t)(slash - s) : strlen(s);
	struct svc_item item = {0};
	int proto = -1;

	if (plen < sizeof(proto_s)) {
		memcpy(proto_s, s, plen);
		proto_s[plen] = '\0';
		proto = val_parse_proto(proto_s);
	}
	if (proto < 0) {
		ytree_error(pol->d, n,
			    "unknown protocol in '%s'; expected tcp, udp, icmp, icmpv6, sctp, gre, esp or 0-255",
			    s);
		return -1;
	}
	item.proto = (uint8_t)proto;
	if (slash) {
		if (!val_proto_has_ports(proto)) {
			if (proto == 1 || proto == 58)
				ytree_error(pol->d, n,
					    "icmp types in services ('%s') are not supported by this version of rulec yet",
					    s);
			else
				ytree_error(pol->d, n, "protocol '%s' has no ports; write '%s' alone",
					    val_proto_name(proto, pbuf, sizeof(pbuf)), proto_s);
			return -1;
		}
		if (val_parse_port_range(slash + 1, &item.lo, &item.hi, why, sizeof(why)) < 0) {
			ytree_error(pol->d, n, "%s", why);
			return -1;
		}
		item.has_ports = 1;
	}
	VEC_PUSH(*out, item);
	return 0;
}

/* A service entry: a literal, or (in rules) the name of a service. */
static int service_entry(struct policy *pol, yaml_node_t *n, int names, svc_list *out)
{
	const char *s = ytree_str(n);
	long j;

	if (!s) {
		ytree_error(pol->d, n, "a service entry must be a scalar like tcp/443, not %s",
			    ytree_kind(n));
		return -1;
	}
	if (!names || strchr(s, '/') || val_parse_proto(s) >= 0 || !val_is_name(s))
		return service_literal(pol, n, s, out);
	j = find_svc(pol, s);
	if (j < 0) {
		unknown_name(pol, n, "service", s, 0);
		return -1;
	}
	if (pol->svcs.v[j].bad)
		return -1;
	for (size_t k = 0; k < pol->svcs.v[j].items.n; k++)
		VEC_PUSH(*out, pol->svcs.v[j].items.v[k]);
	return 0;
}

static int service_def_entry(struct policy *pol, yaml_node_t *n, void *out)
{
	return service_entry(pol, n, 0, out);
}

static int service_use_entry(struct policy *pol, yaml_node_t *n, void *out)
{
	return service_entry(pol, n, 1, out);
}

int resolve_service_value(struct policy *pol, yaml_node_t *value, svc_list *out)
{
	return each_item(pol, value, service_use_entry, out);
}

static void add_service(struct policy *pol, const char *name, yaml_node_t *k, yaml_node_t *v)
{
	struct svc_def def = {.name = name, .key = k, .value = v};

	def.bad = each_item(pol, v, service_def_entry, &def.items) < 0;
	VEC_PUSH(pol->svcs, def);
}

void resolve_services(struct policy *pol, yaml_node_t *section)
{
	each_definition(pol, section, 1, add_service);
}

static int port_entry(struct policy *pol, yaml_node_t *n, void *outp)
{
	range_list *out = outp;
	const char *s = ytree_str(n);
	char why[256];
	struct range r;

	if (!s) {
		ytree_error(pol->d, n, "a port must be a number or a range a-b, not %s", ytree_kind(n));
		return -1;
	}
	if (val_parse_port_range(s, &r.lo, &r.hi, why, sizeof(why)) < 0) {
		ytree_error(pol->d, n, "%s", why);
		return -1;
	}
	VEC_PUSH(*out, r);
	return 0;
}

int resolve_ports(struct policy *pol, yaml_node_t *value, range_list *out)
{
	return each_item(pol, value, port_entry, out);
}
