/* Reading (map, verify, view) and writing the .rfw container. The policy
 * meaning of sections lives in rulec (writer side) and the stages that use
 * them (reader side); this module only guarantees a well-formed file. */
#ifndef RAMPART_RUNTIME_ARTIFACT_H
#define RAMPART_RUNTIME_ARTIFACT_H

#include <stddef.h>
#include <stdint.h>
#include "rampart/artifact.h"

/* A verified artifact: pointers into the mapped (or caller's) buffer. */
struct rfw_view {
	const void *base;
	size_t size;
	int mapped;			/* 1 when rfw_open mmap'ed it */
	const struct rfw_header *hdr;
	const struct rfw_policy *policy;
	const struct rfw_rule *rules;	/* policy->rule_count + 1 entries */
	const struct rfw_acl_entry *acl;
	uint32_t acl_count;
	const char *strings;
	uint64_t strings_size;
	const char *source;		/* policy file name, may be "" */
	/* Compiled classifier (RFW_FEAT_ACL_HSPLIT), NULL when absent. */
	const struct rfw_cls_trees *cls_trees;
	const struct rfw_cls_node *cls_nodes;
	uint32_t cls_node_count;
	const uint32_t *cls_leaves;
	uint32_t cls_leaf_count;	/* blocks */
	const uint32_t *cls_leaf_entries;	/* RFW_CLS_LANES per block (1.3) */
	const uint32_t *cls_children;
	uint32_t cls_child_count;
	/* Format 1.1 sections; count 0 when absent. */
	const struct rfw_interface *interfaces;
	uint32_t interface_count;
	const struct rfw_zone *zones;
	uint32_t zone_count;
	const struct rfw_set *sets;
	uint32_t set_count;
	const uint32_t *lpm_data;
	uint64_t lpm_words;
	const struct rfw_limit *limits;
	uint32_t limit_count;
	const struct rfw_nat_rule *nat_rules;	/* policy->nat_count + 1, [0] unused */
	const struct rfw_acl_entry *nat_acl;
	uint32_t nat_acl_count;
	const struct rfw_route *routes;		/* policy->route_count */
	const struct rfw_route_table *route_table;	/* NULL without routes */
	const struct rfw_host_addr *host_addrs;
	uint32_t host_addr_count;
	const struct rfw_host_pass *host_pass;
	uint32_t host_pass_count;
	const struct rfw_rule_source *rule_source;	/* NULL when absent */
	/* A NAT kind's classifier (1.6), [0] DNAT, [1] SNAT and masquerade;
	 * trees NULL when the artifact has none for the kind. */
	struct rfw_cls_view {
		const struct rfw_acl_entry *entries;
		uint32_t entry_count;
		const struct rfw_cls_trees *trees;
		const struct rfw_cls_node *nodes;
		uint32_t node_count;
		const struct rfw_cls_leaf_block *leaves;
		uint32_t leaf_count;		/* blocks */
		const uint32_t *leaf_entries;	/* RFW_CLS_LANES per block */
		const uint32_t *children;
		uint32_t child_count;
	} nat_cls[2];
	int rules_see_invalid;		/* a rule names `state: invalid` */
};

/* Verify buf (magic, version, sizes, checksum, every section in bounds,
 * every reference in range) and fill view. Returns 0, or -1 with a
 * human-readable reason in err. Never reads outside [buf, buf+len). */
int rfw_view_init(struct rfw_view *view, const void *buf, size_t len,
		  char *err, size_t errlen);

/* mmap path read-only and rfw_view_init it. -1 with err on failure. */
int rfw_open(struct rfw_view *view, const char *path, char *err, size_t errlen);
void rfw_close(struct rfw_view *view);

/* Name of rule number n (0 = "default"); never NULL. */
const char *rfw_rule_name(const struct rfw_view *view, uint32_t n);
const char *rfw_action_name(uint8_t action);

/* --- writing --- */
struct rfw_section_in {
	uint32_t type;
	uint32_t entry_size;
	const void *data;
	uint64_t size;
	uint64_t count;
};

/* Lay out header, section table and sections, compute the checksum.
 * Returns a malloc'ed buffer (*len bytes) or NULL on allocation failure. */
void *rfw_build(const struct rfw_section_in *secs, uint32_t nsecs,
		uint64_t features, size_t *len);

/* Write buf to path atomically (temp file + rename), so a reader never
 * sees a partial artifact. 0 or -1 with errno. */
int rfw_write_file(const char *path, const void *buf, size_t len);

#endif
