/* The compiled policy artifact (.rfw): the one place where rulec and the
 * runtime meet. Position-independent (offsets only), little-endian, every
 * section 64-byte aligned so it can be mmap'ed and used in place. */
#ifndef RAMPART_ARTIFACT_H
#define RAMPART_ARTIFACT_H

#include <stdint.h>

#define RFW_MAGIC "RAMPRFW\0"
#define RFW_MAGIC_LEN 8
/* Bump MAJOR when a reader of the old version would misread the file;
 * MINOR when sections or fields are only appended. */
#define RFW_VERSION_MAJOR 1
#define RFW_VERSION_MINOR 0
#define RFW_ALIGN 64u
#define RFW_MAX_SECTIONS 64u

/* Feature bits: the runtime refuses an artifact that needs a feature it
 * does not know (features & ~RFW_FEATURES_KNOWN). */
enum rfw_feature {
	RFW_FEAT_ACL_LINEAR = 1u << 0,	/* ACL as an ordered entry list */
	RFW_FEAT_ACL_HSPLIT = 1u << 1,	/* + compiled HyperSplit trees */
};
#define RFW_FEATURES_KNOWN ((uint64_t)RFW_FEAT_ACL_LINEAR | RFW_FEAT_ACL_HSPLIT)

struct rfw_header {
	char magic[RFW_MAGIC_LEN];
	uint16_t version_major;
	uint16_t version_minor;
	uint32_t header_size;	/* sizeof(struct rfw_header) of the writer */
	uint64_t file_size;
	uint64_t features;
	uint32_t section_count;
	uint32_t checksum;	/* CRC32C of the whole file, this field as 0 */
	uint64_t reserved[2];	/* must be zero */
};

enum rfw_section_type {
	RFW_SEC_STRINGS = 1,	/* NUL-terminated names, referenced by offset */
	RFW_SEC_POLICY = 2,	/* one struct rfw_policy */
	RFW_SEC_RULES = 3,	/* struct rfw_rule[rule_count + 1], [0] = default */
	RFW_SEC_ACL = 4,	/* struct rfw_acl_entry[], in rule order */
	RFW_SEC_SOURCE = 5,	/* NUL-terminated name of the policy file */
	RFW_SEC_CLS_TREES = 6,	/* one struct rfw_cls_trees */
	RFW_SEC_CLS_NODES = 7,	/* struct rfw_cls_node[] */
	RFW_SEC_CLS_LEAVES = 8,	/* uint32_t[]: ACL entry indices, per leaf in rule order */
};

struct rfw_section {
	uint32_t type;
	uint32_t entry_size;	/* size of one entry, checked by the reader */
	uint64_t offset;	/* from the start of the file, RFW_ALIGN-aligned */
	uint64_t size;		/* bytes */
	uint64_t count;		/* entries */
};

enum rfw_action {
	RFW_ACTION_DROP = 0,
	RFW_ACTION_ACCEPT = 1,
	RFW_ACTION_REJECT = 2,
};
#define RFW_ACTION_COUNT 3

struct rfw_policy {
	uint32_t rule_count;	/* user rules, numbered 1..rule_count */
	uint8_t default_action;	/* enum rfw_action, for "no rule matched" */
	uint8_t reserved[27];
};

enum rfw_rule_flags {
	RFW_RULE_LOG = 1u << 0,
};

struct rfw_rule {
	uint32_t name_off;	/* into RFW_SEC_STRINGS */
	uint8_t action;		/* enum rfw_action */
	uint8_t flags;		/* enum rfw_rule_flags */
	uint16_t reserved;
	uint32_t first_entry;	/* its entries in RFW_SEC_ACL */
	uint32_t entry_count;
};

enum rfw_acl_flags {
	RFW_ACL_PROTO = 1u << 0,	/* proto must equal entry.proto */
	RFW_ACL_PORTS = 1u << 1,	/* packet must have ports in range */
};

/* One conjunction of a rule: a rule with lists expands to the cross
 * product of its fields. Addresses are in network byte order; an IPv4
 * prefix uses the first 4 bytes. family 0 = either (no address given). */
struct rfw_acl_entry {
	uint8_t src[16];
	uint8_t dst[16];
	uint8_t src_len;
	uint8_t dst_len;
	uint8_t family;		/* 0, 4 or 6 */
	uint8_t proto;
	uint8_t flags;		/* enum rfw_acl_flags */
	uint8_t reserved[3];
	uint16_t sport_lo, sport_hi;
	uint16_t dport_lo, dport_hi;
	uint32_t rule;		/* rule number, 1-based */
	uint32_t reserved2[3];
};

/* The compiled classifier (runtime/cls_hs.h): decision-tree nodes over
 * 32-bit packet fields (enum cls_dim). Children always have a larger
 * index than their parent, which the loader checks, so no file can make
 * a lookup loop. */
#define RFW_CLS_LEAF 0xffu
#define RFW_CLS_DIMS 11u
#define RFW_CLS_PARTS 4u
#define RFW_CLS_NONE 0xffffffffu

struct rfw_cls_node {
	uint32_t threshold;	/* inner: field <= threshold goes left */
	uint8_t dim;		/* field index < RFW_CLS_DIMS, or RFW_CLS_LEAF */
	uint8_t reserved[3];
	uint32_t left;		/* inner: node index; leaf: first in leaf list */
	uint32_t right;		/* inner: node index; leaf: entry count */
};

struct rfw_cls_tree {
	uint32_t root;		/* node index, or RFW_CLS_NONE when empty */
	uint32_t first_rule;	/* lowest rule number in the tree */
};

struct rfw_cls_trees {
	struct rfw_cls_tree tree[2][RFW_CLS_PARTS];	/* [0] IPv4, [1] IPv6 */
};

_Static_assert(sizeof(struct rfw_header) == 56, "rfw_header layout");
_Static_assert(sizeof(struct rfw_section) == 32, "rfw_section layout");
_Static_assert(sizeof(struct rfw_policy) == 32, "rfw_policy layout");
_Static_assert(sizeof(struct rfw_rule) == 16, "rfw_rule layout");
_Static_assert(sizeof(struct rfw_acl_entry) == 64, "rfw_acl_entry layout");
_Static_assert(sizeof(struct rfw_cls_node) == 16, "rfw_cls_node layout");
_Static_assert(sizeof(struct rfw_cls_trees) == 64, "rfw_cls_trees layout");

#endif
