/* The policy as rulec understands it after parsing and name resolution:
 * every file (the policy and its includes), named objects, rules with their
 * address, protocol, port and interface sets spelled out, NAT, routes and
 * host bypass, ready to be expanded into classifier entries. */
#ifndef RULEC_POLICY_H
#define RULEC_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "rampart/artifact.h"
#include "diag.h"
#include "values.h"
#include "yaml_tree.h"

/* A growable array; the compiler exits on allocation failure (see
 * vec_grow), so callers need no out-of-memory paths. */
#define VEC(T) struct { T *v; size_t n, cap; }
void *vec_grow(void *v, size_t *cap, size_t need, size_t elem);
#define VEC_PUSH(vec, x) do { \
	(vec).v = vec_grow((vec).v, &(vec).cap, (vec).n + 1, sizeof(*(vec).v)); \
	(vec).v[(vec).n++] = (x); \
} while (0)

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Limits on hostile or mistaken input (docs/security.md): refused with a
 * message, never a crash or an unbounded run. */
#define RULEC_MAX_NETWORK_PREFIXES (1u << 24)	/* distinct prefixes of one inline network */
#define RULEC_MAX_FILE_PREFIXES (1u << 24)	/* lines of one {file: PATH} list */
#define RULEC_MAX_NAME_DEPTH 256	/* networks or services naming each other, nested */

struct range {
	uint16_t lo, hi;
};

/* One service alternative: a protocol, maybe ports, maybe an ICMP type. */
struct svc_item {
	uint8_t proto;
	uint8_t has_ports;
	uint16_t lo, hi;
	int16_t icmp_type;	/* -1: any */
	int16_t icmp_code;	/* -1: any */
};

typedef VEC(struct prefix) pfx_list;
typedef VEC(struct range) range_list;
typedef VEC(struct svc_item) svc_list;

/* A position in one of the policy's files (diag file number). */
struct pos {
	size_t file;
	unsigned line, col;
};

enum def_state { DEF_NEW = 0, DEF_BUSY, DEF_DONE };

/* A resolved network value: prefixes, possibly negated, possibly forced
 * into an address set (file lists). def >= 0 when the value is exactly one
 * named network, so rules naming it share one set. */
struct netval {
	pfx_list pfx;
	int negated;
	int from_file;
	long def;
	size_t items;		/* entries of the list being resolved */
};

struct net_def {
	const char *name;
	yaml_node_t *key, *value;
	size_t file;		/* policy file index (pol->files) */
	int state;		/* enum def_state: BUSY while resolving finds cycles */
	int bad;		/* errors already reported: users stay quiet */
	int used;
	struct netval val;
	uint32_t set;		/* address set number + 1, 0 = none yet */
};

struct svc_def {
	const char *name;
	yaml_node_t *key, *value;
	size_t file;
	int state, bad, used;
	svc_list items;
};

struct zone_def {
	const char *name;
	yaml_node_t *key;
	size_t file;
	int used;
	uint32_t ifaces;	/* interface bits */
};

struct iface {
	char name[16];
	uint32_t zone;		/* RFW_NONE or zone index */
};

/* from: or to: of a rule or NAT match. */
struct side {
	int has_net;
	struct netval net;
	yaml_node_t *net_node;
	int has_port;
	range_list port;
	yaml_node_t *port_node;
	int has_if;		/* zone or interface given */
	uint32_t ifaces;
	yaml_node_t *if_node;
};

struct rule {
	char name[128];
	yaml_node_t *node;
	size_t file;		/* policy file index */
	int bad;
	uint8_t action;
	int proto;			/* -1: not given */
	yaml_node_t *proto_node;
	struct side from, to;
	int has_svc;
	svc_list svc;
	yaml_node_t *svc_node;
	uint8_t family;			/* 0, 4 or 6 */
	yaml_node_t *family_node;
	const char *icmp_type;		/* as written, resolved per protocol */
	yaml_node_t *icmp_node;
	int has_tcp;
	uint8_t tcp_mask, tcp_value;
	yaml_node_t *tcp_node;
	uint8_t state_mask;
	int log;
	int has_limit;
	struct rfw_limit limit;
};

struct nat_def {
	char name[128];
	yaml_node_t *node;
	size_t file;
	int bad;
	struct rule match;
	uint8_t kind, family;
	uint8_t lo[16], hi[16];
	uint16_t port_lo, port_hi;
	yaml_node_t *port_node;
};

struct route_def {
	struct rfw_route r;
	yaml_node_t *node;
	size_t file;
};

/* One YAML file of the policy. */
struct src_file {
	struct ytree yt;
	char *path;		/* as opened (relative to the cwd) */
	char *real;		/* realpath, for cycles and repeats */
	size_t diag_file;
	int loading;		/* on the include stack */
};

struct policy {
	VEC(struct src_file) files;
	VEC(size_t) order;		/* files in merged order: includes first */
	size_t cur;			/* file being read (index into files) */
	struct ytree *yt;		/* its tree */
	struct diag *d;
	const char *source;
	/* defaults */
	uint8_t default_action;
	uint8_t stateful;
	uint16_t tcp_mss;	/* defaults.tcp_mss: RFW_TCP_MSS_* (0 off) */
	uint8_t rpf;		/* defaults.rpf: enum rfw_rpf */
	struct pos rpf_pos;	/* where it was set (the no-routes warning) */
	uint32_t max_flows;
	uint32_t timeout[RFW_TIMEOUT_COUNT];
	int has_defaults;
	struct pos defaults_pos;
	VEC(struct net_def) nets;
	VEC(struct svc_def) svcs;
	VEC(struct zone_def) zones;
	VEC(struct iface) ifaces;
	VEC(struct rule) rules;
	VEC(struct nat_def) nats;
	VEC(struct route_def) routes;
	VEC(struct rfw_host_addr) host_addrs;
	VEC(struct rfw_host_pass) host_pass;
	VEC(size_t) stack;		/* definitions being resolved, for cycle messages */
	/* Rule and NAT rule names already seen, so a duplicate is found in
	 * constant time (10,000-rule policies): open addressing over
	 * index + 1 into rules / nats, 0 = empty. */
	struct name_index {
		uint32_t *slot;
		size_t cap, used;
	} rule_names, nat_names;
};

/* Parse and resolve path into pol, reporting every problem to d. Returns
 * the number of errors; pol must be freed with policy_free either way. */
unsigned policy_load(struct policy *pol, const char *path, struct diag *d);
void policy_free(struct policy *pol);

/* Read nodes of file f from now on (its tree, its diag file); returns the
 * file read before, for policy_enter to go back to. */
size_t policy_enter(struct policy *pol, size_t f);
struct pos policy_pos(const struct policy *pol, const yaml_node_t *n);
const char *policy_short_path(const struct policy *pol, const char *path);
/* "line L column C" in the same file, "FILE:L:C" in another. */
void policy_where(const struct policy *pol, struct pos at, char *buf, size_t len);
/* policy_where for node n of policy file f. */
void policy_where_node(const struct policy *pol, size_t f, const yaml_node_t *n, char *buf,
		       size_t len);
/* A path named in file f, relative to that file's directory (malloc'ed). */
char *policy_path(const struct policy *pol, size_t f, const char *rel);

int policy_want_mapping(struct policy *pol, yaml_node_t *n, const char *what);
int policy_parse_bool(struct policy *pol, yaml_node_t *n, const char *key, int *out);
int policy_parse_action(struct policy *pol, yaml_node_t *n, uint8_t *out);
/* A value that is one entry or a list: entry() on each; -1 if any failed. */
int policy_each(struct policy *pol, yaml_node_t *value,
		int (*entry)(struct policy *, yaml_node_t *, void *), void *out);

/* resolve.c: the networks and services sections, and their use in rules. */
void resolve_networks(struct policy *pol);
void resolve_services(struct policy *pol);
void resolve_add_networks(struct policy *pol, yaml_node_t *section);
void resolve_add_services(struct policy *pol, yaml_node_t *section);
int resolve_network_value(struct policy *pol, yaml_node_t *value, struct netval *out);
int resolve_service_value(struct policy *pol, yaml_node_t *value, svc_list *out);
int resolve_ports(struct policy *pol, yaml_node_t *value, range_list *out);
void netval_free(struct netval *v);
/* A negated network whose prefixes hold every address of both families
 * (0.0.0.0/0 and ::/0): the set it names is empty. */
int netval_negates_everything(const struct netval *v);

/* netfile.c: a {file: PATH} network, one prefix a line. */
int netfile_read(struct policy *pol, yaml_node_t *at, const char *rel, pfx_list *out);

/* zones.c: interfaces (index = bit) and zones. */
void zones_parse(struct policy *pol, yaml_node_t *section);
/* The interface's index, added when new; -1 after reporting. */
long zones_iface(struct policy *pol, yaml_node_t *at, const char *name);
int zones_side(struct policy *pol, yaml_node_t *zone, yaml_node_t *iface, struct side *s);

/* rules.c */
void rules_parse(struct policy *pol, yaml_node_t *section);
/* Keys shared by rules and NAT matches: proto, family, from, to. */
int rules_parse_match(struct policy *pol, struct rule *r, yaml_node_t *n);
void rules_name(struct policy *pol, struct rule *r, yaml_node_t *map, size_t num, int nat);
void rules_name_commit(struct policy *pol, uint32_t idx, int nat);
int rules_parse_side(struct policy *pol, struct rule *r, yaml_node_t *n, int to);
void rule_free(struct rule *r);

/* limits.c: limit: {rate: N/s, burst: N, per: source|rule}. */
int limits_parse(struct policy *pol, yaml_node_t *n, struct rfw_limit *out);

/* nat.c, routes.c, host.c: those sections. */
void nat_parse(struct policy *pol, yaml_node_t *section);
void routes_parse(struct policy *pol, yaml_node_t *section);
void host_parse(struct policy *pol, yaml_node_t *section);
/* Warn of host addresses that are also NAT addresses (after both parsed). */
void host_check_nat(struct policy *pol);

/* warn.c: unused objects and empty sets, after everything is parsed. */
void warn_unused(struct policy *pol);
/* A warning positioned at rule number `rule` (1-based, merged order): for
 * analysers such as rule shadowing (analyze.c). */
void diag_warn_at_rule(struct policy *pol, uint32_t rule, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same at NAT rule number `nat` (1-based). */
void diag_warn_at_nat(struct policy *pol, uint32_t nat, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_warn_at(struct policy *pol, yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
