/* Compiled ACL classifier: a HyperSplit decision tree (Qi, Xu, Yang, Li,
 * "Packet Classification Algorithms: From Theory to Practice", INFOCOM
 * 2009) over the ACL entries, one tree per address family. Each inner node
 * compares one packet field with a threshold; each leaf holds at most a
 * few entries (in rule order) that are checked in full, so the tree only
 * has to be a correct filter and the first match stays exact. Leaf
 * entries are compact blocks of 16-bit ranges (struct
 * rfw_cls_leaf_block) checked four at a time with SIMD; only entries with
 * rarer conditions read the full ACL entry.
 * Where one field divides the rules well, a node cuts it into up to 256
 * equal children at once (HiCuts) instead of splitting in two, so a walk
 * reads fewer nodes; a root may cut up to 2^16 ways.
 * Wildcard-heavy sets (ClassBench fw1) replicate rules badly in one tree,
 * so, as CutSplit (Li et al., INFOCOM 2018) does, rules are first split by
 * which address fields are "small" (long prefixes); groups are merged
 * again while a merged tree stays small, and each group gets its own
 * tree; lookup walks the trees and keeps the lowest rule number,
 * skipping a tree whose first rule cannot beat the match in hand.
 * Flat arrays, indices only: the same bytes can live in the artifact. */
#ifndef RAMPART_CLS_HS_H
#define RAMPART_CLS_HS_H

#include <stddef.h>
#include <stdint.h>
#include "rampart/artifact.h"
#include "artifact.h"
#include "pkt.h"

struct cls_sets {
	const struct rfw_set *sets;
	uint32_t count;
	const uint32_t *lpm_data;
};

/* Fields the tree can split on, each as an unsigned 32-bit value. IPv4
 * uses word 0 of the addresses; IPv6 all four, most significant first. */
enum cls_dim {
	CLS_DIM_SRC0, CLS_DIM_SRC1, CLS_DIM_SRC2, CLS_DIM_SRC3,
	CLS_DIM_DST0, CLS_DIM_DST1, CLS_DIM_DST2, CLS_DIM_DST3,
	CLS_DIM_SPORT, CLS_DIM_DPORT, CLS_DIM_PROTO,
	CLS_DIM_COUNT,
};
_Static_assert(CLS_DIM_COUNT == RFW_CLS_DIMS, "artifact and classifier agree on fields");

/* Node and tree layouts are the artifact's (include/rampart/artifact.h). */
#define CLS_HS_LEAF RFW_CLS_LEAF
#define CLS_HS_PARTS RFW_CLS_PARTS
#define CLS_HS_NONE RFW_CLS_NONE

struct cls_hs {
	const struct rfw_cls_node *nodes;
	const struct rfw_cls_leaf_block *leaves;	/* leaf entries, rule order */
	const uint32_t *leaf_entries;	/* entry index of each block lane */
	const struct rfw_acl_entry *entries;
	struct cls_sets sets;		/* for entries that name address sets */
	/* [0] IPv4, [1] IPv6; each family's trees by ascending first_rule. */
	struct rfw_cls_trees trees;
	/* Per tree, a lower bound of the entry indices it can answer
	 * (CLS_HS_NONE when empty; cls_hs_first_entries): lookups keep the
	 * best match as an entry index, so a tree is walked only when its
	 * bound is below the match in hand. */
	uint32_t first_entry[2][CLS_HS_PARTS];
	uint32_t node_count;
	uint32_t leaf_entry_count;	/* blocks in leaves */
	const uint32_t *children;	/* of RFW_CLS_CUT nodes */
	uint32_t child_count;
};

/* Build knobs; zero fields take the defaults. */
struct cls_hs_params {
	uint32_t leaf_size;	/* entries a leaf may hold (default 8) */
	uint32_t max_depth;	/* a deeper node becomes a leaf (default 64) */
	uint32_t small_v4;	/* an IPv4 prefix this long is "small" for the
				 * partition into trees (default 8) */
};

/* Owned result of a build: the arrays the table points into. */
struct cls_hs_built {
	struct cls_hs table;
	struct rfw_cls_node *nodes;
	struct rfw_cls_leaf_block *leaves;	/* 64-byte aligned, as in an artifact */
	uint32_t *leaf_entries;
	uint32_t *children;
	uint32_t max_depth_seen;
	uint32_t max_leaf_seen;
};

/* Build the trees over entries[0..count) (sorted by rule number).
 * 0, or -1 when memory runs out. */
int cls_hs_build(struct cls_hs_built *out, const struct rfw_acl_entry *entries,
		 uint32_t count, const struct cls_hs_params *params);
void cls_hs_free(struct cls_hs_built *b);
size_t cls_hs_bytes(const struct cls_hs *t);

/* The artifact sections (TREES, NODES, LEAVES, CHILDREN, LEAF_ENTRIES)
 * of a built table; they point into b. */
#define CLS_HS_SECTIONS 5
void cls_hs_sections(const struct cls_hs_built *b, struct rfw_section_in out[CLS_HS_SECTIONS]);

/* Fill t->first_entry from the trees' first rules; entries[0..count) are
 * in rule order (the loader checks it). */
void cls_hs_first_entries(struct cls_hs *t, uint32_t count);

uint32_t cls_hs_lookup(const struct cls_hs *t, const struct pkt_key *k);
void cls_hs_lookup_batch(const struct cls_hs *t, const struct pkt_key *const *keys,
			 uint32_t n, uint32_t *rules);

#endif
