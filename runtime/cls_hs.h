/* Compiled ACL classifier: a HyperSplit decision tree (Qi, Xu, Yang, Li,
 * "Packet Classification Algorithms: From Theory to Practice", INFOCOM
 * 2009) over the ACL entries, one tree per address family. Each inner node
 * compares one packet field with a threshold; each leaf holds at most a
 * few entries (in rule order) that are checked in full, so the tree only
 * has to be a correct filter and the first match stays exact.
 * Wildcard-heavy sets (ClassBench fw1) replicate rules badly in one tree,
 * so, as CutSplit (Li et al., INFOCOM 2018) does, rules are first split by
 * which address fields are "small" (long prefixes) and each group gets its
 * own tree; lookup walks the trees and keeps the lowest rule number,
 * skipping a tree whose first rule cannot beat the match in hand.
 * Flat arrays, indices only: the same bytes can live in the artifact. */
#ifndef RAMPART_CLS_HS_H
#define RAMPART_CLS_HS_H

#include <stddef.h>
#include <stdint.h>
#include "rampart/artifact.h"
#include "pkt.h"

/* Fields the tree can split on, each as an unsigned 32-bit value. IPv4
 * uses word 0 of the addresses; IPv6 all four, most significant first. */
enum cls_dim {
	CLS_DIM_SRC0, CLS_DIM_SRC1, CLS_DIM_SRC2, CLS_DIM_SRC3,
	CLS_DIM_DST0, CLS_DIM_DST1, CLS_DIM_DST2, CLS_DIM_DST3,
	CLS_DIM_SPORT, CLS_DIM_DPORT, CLS_DIM_PROTO,
	CLS_DIM_COUNT,
};

#define CLS_HS_LEAF 0xffu

struct cls_hs_node {
	uint32_t threshold;	/* inner: field <= threshold goes left */
	uint8_t dim;		/* enum cls_dim, or CLS_HS_LEAF */
	uint8_t reserved[3];
	uint32_t left;		/* inner: node index; leaf: first in leaf list */
	uint32_t right;		/* inner: node index; leaf: entry count */
};

#define CLS_HS_PARTS 4		/* per family: src small? x dst small? */
#define CLS_HS_NONE UINT32_MAX

struct cls_hs_tree {
	uint32_t root;		/* node index, or CLS_HS_NONE when empty */
	uint32_t first_rule;	/* lowest rule number in the tree */
};

struct cls_hs {
	const struct cls_hs_node *nodes;
	const uint32_t *leaf_entries;	/* indices into entries, rule order */
	const struct rfw_acl_entry *entries;
	/* [0] IPv4, [1] IPv6; each family's trees by ascending first_rule. */
	struct cls_hs_tree trees[2][CLS_HS_PARTS];
	uint32_t node_count;
	uint32_t leaf_entry_count;
};

/* Build knobs; zero fields take the defaults. */
struct cls_hs_params {
	uint32_t leaf_size;	/* entries a leaf may hold (default 8) */
	uint32_t max_depth;	/* a deeper node becomes a leaf (default 64) */
};

/* Owned result of a build: the arrays the table points into. */
struct cls_hs_built {
	struct cls_hs table;
	struct cls_hs_node *nodes;
	uint32_t *leaf_entries;
	uint32_t max_depth_seen;
	uint32_t max_leaf_seen;
};

/* Build the trees over entries[0..count) (sorted by rule number).
 * 0, or -1 when memory runs out. */
int cls_hs_build(struct cls_hs_built *out, const struct rfw_acl_entry *entries,
		 uint32_t count, const struct cls_hs_params *params);
void cls_hs_free(struct cls_hs_built *b);
size_t cls_hs_bytes(const struct cls_hs *t);

uint32_t cls_hs_lookup(const struct cls_hs *t, const struct pkt_key *k);
void cls_hs_lookup_batch(const struct cls_hs *t, const struct pkt_key *const *keys,
			 uint32_t n, uint32_t *rules);

#endif
