/* Named objects: the networks and services sections of every file, names
 * used in rules, and nested names resolved depth-first with cycle
 * detection. Every definition is resolved once, in merged file order, in
 * its own file, so each error is reported once however often the name is
 * used. Negation (!name) and file lists make a network an address set. */
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
static int resolve_svc_def(struct policy *pol, size_t i);

/* "a -> b -> a": the names on the stack from the first use of idx. */
static void report_cycle(struct policy *pol, yaml_node_t *at, size_t idx, int svc)
{
	char path[512] = "";
	size_t used = 0, from = 0;

	while (from < pol->stack.n && pol->stack.v[from] != idx)
		from++;
	for (size_t k = from; k < pol->stack.n; k++) {
		int w = snprintf(path + used, sizeof(path) - used, "%s -> ",
				 svc ? pol->svcs.v[pol->stack.v[k]].name
				     : pol->nets.v[pol->stack.v[k]].name);

		if (w > 0 && (size_t)w < sizeof(path) - used)
			used += (size_t)w;
	}
	ytree_error(pol->d, at, "%s cycle: %s%s", svc ? "service" : "network", path,
		    svc ? pol->svcs.v[idx].name : pol->nets.v[idx].name);
}

static uint64_t prefix_hash(const struct prefix *p)
{
	uint64_t a, b, h;

	memcpy(&a, p->addr, 8);
	memcpy(&b, p->addr + 8, 8);
	h = (a ^ (b * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)p->len << 8 | p->family)) *
	    0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 31);
}

static int same_prefix(const struct prefix *a, const struct prefix *b)
{
	return a->family == b->family && a->len == b->len && !memcmp(a->addr, b->addr, 16);
}

/* A list's entries, each prefix once, in first-seen order. Names used
 * twice (n2: [n1, n1], n3: [n2, n2], ...) would otherwise double the set
 * at every level: 40 levels are a trillion entries. 0, or -1 (memory). */
static int dedup_prefixes(pfx_list *l)
{
	size_t cap = 16, kept = 0;
	uint32_t *slot;

	if (l->n < 2)
		return 0;
	while (cap < 2 * l->n)
		cap <<= 1;
	slot = calloc(cap, sizeof(*slot));	/* entry index + 1, 0 = empty */
	if (!slot)
		return -1;
	for (size_t i = 0; i < l->n; i++) {
		size_t h = (size_t)prefix_hash(&l->v[i]) & (cap - 1);
		int dup = 0;

		for (; slot[h]; h = (h + 1) & (cap - 1))
			if (same_prefix(&l->v[slot[h] - 1], &l->v[i])) {
				dup = 1;
				break;
			}
		if (dup)
			continue;
		l->v[kept] = l->v[i];
		slot[h] = (uint32_t)++kept;
	}
	l->n = kept;
	free(slot);
	return 0;
}

void netval_free(struct netval *v)
{
	free(v->pfx.v);
	memset(v, 0, sizeof(*v));
	v->def = -1;
}

/* Negated or file-backed networks are sets with their own meaning: they
 * can only stand alone, not inside a list with other entries. */
static int network_entry(struct policy *pol, yaml_node_t *n, void *outp)
{
	struct netval *out = outp;
	const char *s = ytree_str(n);
	char why[256];
	struct prefix p;
	int neg;
	long j;

	if (!s) {
		ytree_error(pol->d, n, "a network entry must be an address, a prefix or a name, not %s",
			    ytree_kind(n));
		return -1;
	}
	neg = s[0] == '!';
	if (val_looks_like_addr(s + neg)) {
		if (neg) {
			ytree_error(pol->d, n,
				    "only a named network can be negated: define '%s' under networks and write '!NAME'",
				    s + 1);
			return -1;
		}
		if (val_parse_prefix(s, &p, why, sizeof(why)) < 0) {
			ytree_error(pol->d, n, "%s", why);
			return -1;
		}
		VEC_PUSH(out->pfx, p);
		return 0;
	}
	j = find_net(pol, s + neg);
	if (j < 0) {
		unknown_name(pol, n, "network", s + neg, 1);
		return -1;
	}
	pol->nets.v[j].used = 1;
	if (pol->nets.v[j].state == DEF_BUSY) {
		report_cycle(pol, n, (size_t)j, 0);
		return -1;
	}
	if (resolve_net_def(pol, (size_t)j) < 0)
		return -1;	/* reported where that network is defined */
	{
		const struct netval *v = &pol->nets.v[j].val;
		int whole = neg || v->negated || v->from_file;

		if (whole && out->items > 1) {
			ytree_error(pol->d, n,
				    "'%s' is %s and must be the only entry of its list; give the rest a network of its own",
				    s, neg || v->negated ? "a negation" : "a file list");
			return -1;
		}
		for (size_t k = 0; k < v->pfx.n; k++)
			VEC_PUSH(out->pfx, v->pfx.v[k]);
		if (whole) {
			out->negated = v->negated ^ neg;
			out->from_file = v->from_file;
		}
	}
	return 0;
}

int resolve_network_value(struct policy *pol, yaml_node_t *value, struct netval *out)
{
	yaml_node_t *one = value;
	const char *name;

	memset(out, 0, sizeof(*out));
	out->def = -1;
	if (value->type == YAML_MAPPING_NODE) {
		yaml_node_t *f = ytree_get(pol->yt, value, "file", NULL);
		static const char *const keys[] = {"file"};

		if (!f) {
			ytree_error(pol->d, value,
				    "a network is an address, a prefix, a name, a list of them, or {file: PATH}; not this mapping");
			return -1;
		}
		if (ytree_check_keys(pol->yt, value, pol->d, "a file network", keys, 1, NULL, 0))
			return -1;
		if (!ytree_str(f) || !*ytree_str(f)) {
			ytree_error(pol->d, f, "'file' must be a path to a prefix list, not %s",
				    ytree_str(f) ? "empty" : ytree_kind(f));
			return -1;
		}
		out->from_file = 1;
		return netfile_read(pol, f, ytree_str(f), &out->pfx);
	}
	out->items = 1;
	if (value->type == YAML_SEQUENCE_NODE) {
		out->items = (size_t)(value->data.sequence.items.top - value->data.sequence.items.start);
		one = out->items == 1 ? ytree_node(pol->yt, *value->data.sequence.items.start) : NULL;
	}
	/* One name alone shares that network's set with every other use. */
	name = one ? ytree_str(one) : NULL;
	if (name && !val_looks_like_addr(name))
		out->def = find_net(pol, name);
	if (policy_each(pol, value, network_entry, out) < 0)
		return -1;
	if (out->items > 1 && dedup_prefixes(&out->pfx) < 0) {
		ytree_error(pol->d, value, "out of memory merging this network's entries");
		return -1;
	}
	if (out->pfx.n > RULEC_MAX_NETWORK_PREFIXES) {
		ytree_error(pol->d, value, "this network has %zu distinct prefixes; the limit is %u "
			    "(a set that large belongs in a {file: PATH} list)", out->pfx.n,
			    RULEC_MAX_NETWORK_PREFIXES);
		return -1;
	}
	return 0;
}

/* Resolve definition i's value in its own file, with i on the stack that
 * cycle messages are made from. */
static int resolve_def_value(struct policy *pol, size_t i, size_t file, yaml_node_t *value,
			     int (*resolve)(struct policy *, yaml_node_t *, void *), void *out)
{
	size_t prev;
	int rc;

	/* names within names are resolved by recursion: bounded, so a
	 * chain of 32,000 cannot run the stack out */
	if (pol->stack.n >= RULEC_MAX_NAME_DEPTH) {
		ytree_error(pol->d, value, "names nested more than %d deep (a name whose value "
			    "names another, and so on): flatten the chain", RULEC_MAX_NAME_DEPTH);
		return -1;
	}
	VEC_PUSH(pol->stack, i);
	prev = policy_enter(pol, file);
	rc = resolve(pol, value, out);
	policy_enter(pol, prev);
	pol->stack.n--;
	return rc;
}

static int net_value(struct policy *pol, yaml_node_t *value, void *out)
{
	return resolve_network_value(pol, value, out);
}

static int resolve_net_def(struct policy *pol, size_t i)
{
	struct net_def *def = &pol->nets.v[i];
	struct netval got;
	int rc;

	if (def->state == DEF_DONE)
		return def->bad ? -1 : 0;
	def->state = DEF_BUSY;
	rc = resolve_def_value(pol, i, def->file, def->value, net_value, &got);
	def = &pol->nets.v[i];
	/* A network is its own set, named after it. */
	got.def = (long)i;
	def->val = got;
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
	if (prev >= 0) {
		size_t f = service ? pol->svcs.v[prev].file : pol->nets.v[prev].file;
		char where[512];

		first = service ? pol->svcs.v[prev].key : pol->nets.v[prev].key;
		policy_where_node(pol, f, first, where, sizeof(where));
		ytree_error(pol->d, k, "%s '%s' is defined twice (first at %s)", what, name, where);
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
		yaml_node_t *k = ytree_node(pol->yt, p->key);
		const char *name = definition_name(pol, k, service);

		if (name)
			add(pol, name, k, ytree_node(pol->yt, p->value));
	}
}

static void add_network(struct policy *pol, const char *name, yaml_node_t *k, yaml_node_t *v)
{
	struct net_def def = {.name = name, .key = k, .value = v, .file = pol->cur};

	def.val.def = -1;
	VEC_PUSH(pol->nets, def);
}

void resolve_add_networks(struct policy *pol, yaml_node_t *section)
{
	each_definition(pol, section, 0, add_network);
}

/* All names of every file first, then resolution: a network may use a
 * later one, or one from another file. */
void resolve_networks(struct policy *pol)
{
	for (size_t i = 0; i < pol->nets.n; i++)
		resolve_net_def(pol, i);
}

/* "tcp", "tcp/80", "udp/1024-65535", "47", "icmp/echo-request",
 * "icmpv6/128", "icmp/3/4" (type 3, code 4). */
static int service_literal(struct policy *pol, yaml_node_t *n, const char *s, svc_list *out)
{
	char proto_s[32], why[256], pbuf[8];
	const char *slash = strchr(s, '/');
	size_t plen = slash ? (size_t)(slash - s) : strlen(s);
	struct svc_item item = {.icmp_type = -1, .icmp_code = -1};
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
	if (slash && (proto == 1 || proto == 58)) {
		int type, code;

		if (val_parse_icmp(slash + 1, proto, &type, &code) < 0) {
			ytree_error(pol->d, n, "unknown %s type '%s'; expected a number 0-255[/CODE] or one of: %s",
				    proto_s, slash + 1, val_icmp_names(proto));
			return -1;
		}
		item.icmp_type = (int16_t)type;
		item.icmp_code = (int16_t)code;
	} else if (slash) {
		if (!val_proto_has_ports(proto)) {
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

/* A service entry: a literal, or the name of a service (resolved
 * depth-first, cycles refused). */
static int service_entry(struct policy *pol, yaml_node_t *n, void *outp)
{
	svc_list *out = outp;
	const char *s = ytree_str(n);
	long j;

	if (!s) {
		ytree_error(pol->d, n, "a service entry must be a scalar like tcp/443, not %s",
			    ytree_kind(n));
		return -1;
	}
	if (strchr(s, '/') || val_parse_proto(s) >= 0 || !val_is_name(s))
		return service_literal(pol, n, s, out);
	j = find_svc(pol, s);
	if (j < 0) {
		unknown_name(pol, n, "service", s, 0);
		return -1;
	}
	pol->svcs.v[j].used = 1;
	if (pol->svcs.v[j].state == DEF_BUSY) {
		report_cycle(pol, n, (size_t)j, 1);
		return -1;
	}
	if (resolve_svc_def(pol, (size_t)j) < 0)
		return -1;
	for (size_t k = 0; k < pol->svcs.v[j].items.n; k++)
		VEC_PUSH(*out, pol->svcs.v[j].items.v[k]);
	return 0;
}

int resolve_service_value(struct policy *pol, yaml_node_t *value, svc_list *out)
{
	return policy_each(pol, value, service_entry, out);
}

static int svc_value(struct policy *pol, yaml_node_t *value, void *out)
{
	return resolve_service_value(pol, value, out);
}

static int resolve_svc_def(struct policy *pol, size_t i)
{
	struct svc_def *def = &pol->svcs.v[i];
	svc_list got = {0};
	int rc;

	if (def->state == DEF_DONE)
		return def->bad ? -1 : 0;
	def->state = DEF_BUSY;
	rc = resolve_def_value(pol, i, def->file, def->value, svc_value, &got);
	def = &pol->svcs.v[i];
	def->items = got;
	def->bad = rc < 0;
	def->state = DEF_DONE;
	return rc;
}

static void add_service(struct policy *pol, const char *name, yaml_node_t *k, yaml_node_t *v)
{
	struct svc_def def = {.name = name, .key = k, .value = v, .file = pol->cur};

	VEC_PUSH(pol->svcs, def);
}

void resolve_add_services(struct policy *pol, yaml_node_t *section)
{
	each_definition(pol, section, 1, add_service);
}

void resolve_services(struct policy *pol)
{
	for (size_t i = 0; i < pol->svcs.n; i++)
		resolve_svc_def(pol, i);
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
	return policy_each(pol, value, port_entry, out);
}
