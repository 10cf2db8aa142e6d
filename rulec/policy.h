/* The policy as rulec understands it after parsing and name resolution:
 * rules with their address, protocol and port sets spelled out, ready to be
 * expanded into classifier entries. */
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

struct range {
	uint16_t lo, hi;
};

struct svc_item {
	uint8_t proto;
	uint8_t has_ports;
	uint16_t lo, hi;
};

typedef VEC(struct prefix) pfx_list;
typedef VEC(struct range) range_list;
typedef VEC(struct svc_item) svc_list;

enum def_state { DEF_NEW = 0, DEF_BUSY, DEF_DONE };

struct net_def {
	const char *name;
	yaml_node_t *key, *value;
	int state;		/* enum def_state: BUSY while resolving finds cycles */
	int bad;		/* errors already reported: users stay quiet */
	pfx_list pfx;
};

struct svc_def {
	const char *name;
	yaml_node_t *key, *value;
	int bad;
	svc_list items;
};

struct rule {
	char name[128];
	yaml_node_t *node;
	int bad;
	uint8_t action;
	int proto;			/* -1: not given */
	yaml_node_t *proto_node;
	int has_src, has_dst;		/* a network was given */
	pfx_list src, dst;
	int has_sport, has_dport;
	range_list sport, dport;
	yaml_node_t *src_node, *dst_node;	/* the network values, for messages */
	yaml_node_t *sport_node, *dport_node;
	int has_svc;
	svc_list svc;
	yaml_node_t *svc_node;
};

struct policy {
	struct ytree yt;
	struct diag *d;
	const char *source;
	uint8_t default_action;
	VEC(struct net_def) nets;
	VEC(struct svc_def) svcs;
	VEC(struct rule) rules;
	VEC(size_t) stack;		/* networks being resolved, for cycle messages */
};

/* Parse and resolve path into pol, reporting every error to d. Returns the
 * number of errors; pol must be freed with policy_free either way. */
unsigned policy_load(struct policy *pol, const char *path, struct diag *d);
void policy_free(struct policy *pol);

/* resolve.c: the networks and services sections, and their use in rules.
 * Each returns 0, or -1 when something was wrong (already reported). */
void resolve_networks(struct policy *pol, yaml_node_t *section);
void resolve_services(struct policy *pol, yaml_node_t *section);
int resolve_network_value(struct policy *pol, yaml_node_t *value, pfx_list *out);
int resolve_service_value(struct policy *pol, yaml_node_t *value, svc_list *out);
int resolve_ports(struct policy *pol, yaml_node_t *value, range_list *out);

#endif
