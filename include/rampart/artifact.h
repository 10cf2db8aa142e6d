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
#define RFW_VERSION_MINOR 6
#define RFW_ALIGN 64u
#define RFW_MAX_SECTIONS 64u

/* Feature bits: the runtime refuses an artifact that needs a feature it
 * does not know (features & ~RFW_FEATURES_KNOWN). */
enum rfw_feature {
	RFW_FEAT_ACL_LINEAR = 1u << 0,	/* ACL as an ordered entry list */
	RFW_FEAT_ACL_HSPLIT = 1u << 1,	/* + compiled HyperSplit trees */
	RFW_FEAT_TCP_MSS = 1u << 2,	/* rfw_policy.tcp_mss set (1.4): a runtime
					 * that would not clamp must refuse it */
	RFW_FEAT_RPF = 1u << 3,		/* rfw_policy.rpf set (1.4): likewise */
	RFW_FEAT_CLS_IFACE_KEY = 1u << 4,	/* leaf lanes check interfaces (1.5):
						 * the PROTO and IFACES key words
						 * of struct rfw_cls_leaf_block;
						 * required with ACL_HSPLIT */
};
#define RFW_FEATURES_KNOWN \
	((uint64_t)RFW_FEAT_ACL_LINEAR | RFW_FEAT_ACL_HSPLIT | RFW_FEAT_TCP_MSS | RFW_FEAT_RPF | \
	 RFW_FEAT_CLS_IFACE_KEY)

/* rfw_policy.rpf (defaults.rpf): reverse path filtering in router mode. */
enum rfw_rpf {
	RFW_RPF_OFF = 0,
	RFW_RPF_LOOSE = 1,	/* the source must have a route */
	RFW_RPF_STRICT = 2,	/* ... through the port the packet came in on */
};

/* rfw_policy.tcp_mss (defaults.tcp_mss): 0 off; RFW_TCP_MSS_CLAMP to the
 * ports' MTUs; RFW_TCP_MSS_MIN..65535 a fixed ceiling. */
#define RFW_TCP_MSS_CLAMP 1u
#define RFW_TCP_MSS_MIN 536u

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
	RFW_SEC_CLS_LEAVES = 8,	/* struct rfw_cls_leaf_block[] (1.5: with the
				 * interface word; 1.3: 16-bit ranges; 1.2:
				 * 32-bit fields; uint32_t entry indices
				 * before) */
	/* Sections below are written by rulec from version 1.1 of the format
	 * (the whole POLICY.md language); a reader treats a missing one as
	 * empty. */
	RFW_SEC_INTERFACES = 9,	/* struct rfw_interface[]: index = bit in masks */
	RFW_SEC_ZONES = 10,	/* struct rfw_zone[] */
	RFW_SEC_SETS = 11,	/* struct rfw_set[]: address sets as LPM tables */
	RFW_SEC_LPM_DATA = 12,	/* uint32_t[]: every LPM table's root + groups */
	RFW_SEC_LIMITS = 13,	/* struct rfw_limit[]: rule rate limits */
	RFW_SEC_NAT_RULES = 14,	/* struct rfw_nat_rule[nat_count + 1], [0] unused */
	RFW_SEC_NAT_ACL = 15,	/* struct rfw_acl_entry[]: NAT matches, rule = NAT rule */
	RFW_SEC_ROUTES = 16,	/* struct rfw_route[route_count] */
	RFW_SEC_ROUTE_TABLE = 17,	/* one struct rfw_route_table (LPM over ROUTES) */
	RFW_SEC_HOST_ADDRS = 18,	/* struct rfw_host_addr[] */
	RFW_SEC_HOST_PASS = 19,	/* struct rfw_host_pass[] */
	RFW_SEC_RULE_SOURCE = 20,	/* struct rfw_rule_source[rule_count + 1] */
	RFW_SEC_CLS_CHILDREN = 21,	/* uint32_t[]: child node indices of cut nodes */
	RFW_SEC_CLS_LEAF_ENTRIES = 22,	/* uint32_t[RFW_CLS_LANES per leaf block] (1.3) */
	/* A classifier of a NAT kind's own (1.6): for DNAT, and for SNAT with
	 * masquerade, when rulec finds more than RFW_NAT_CLS_MIN - 1 entries
	 * of the kind. ENTRIES are those of RFW_SEC_NAT_ACL of the kind, in
	 * their order there (rule = NAT rule, so in rule order); the other
	 * five are laid out as the ACL's classifier sections and index
	 * ENTRIES. Optional: without them a reader scans or builds its own
	 * (runtime/nat_match.h); a reader before 1.6 ignores them. */
	RFW_SEC_DNAT_ENTRIES = 23,	/* struct rfw_acl_entry[] */
	RFW_SEC_DNAT_TREES = 24,
	RFW_SEC_DNAT_NODES = 25,
	RFW_SEC_DNAT_LEAVES = 26,
	RFW_SEC_DNAT_CHILDREN = 27,
	RFW_SEC_DNAT_LEAF_ENTRIES = 28,
	RFW_SEC_SNAT_ENTRIES = 29,	/* SNAT and masquerade */
	RFW_SEC_SNAT_TREES = 30,
	RFW_SEC_SNAT_NODES = 31,
	RFW_SEC_SNAT_LEAVES = 32,
	RFW_SEC_SNAT_CHILDREN = 33,
	RFW_SEC_SNAT_LEAF_ENTRIES = 34,
};
/* rulec writes a NAT kind's classifier from this many entries on. */
#define RFW_NAT_CLS_MIN 9u

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

/* Conntrack timeouts, seconds (POLICY.md defaults.timeouts). */
enum rfw_timeout {
	RFW_TIMEOUT_TCP_SYN, RFW_TIMEOUT_TCP_ESTABLISHED, RFW_TIMEOUT_TCP_CLOSING,
	RFW_TIMEOUT_UDP, RFW_TIMEOUT_UDP_STREAM, RFW_TIMEOUT_ICMP, RFW_TIMEOUT_OTHER,
	RFW_TIMEOUT_COUNT,
};

struct rfw_policy {
	uint32_t rule_count;	/* user rules, numbered 1..rule_count */
	uint8_t default_action;	/* enum rfw_action, for "no rule matched" */
	uint8_t stateful;	/* defaults.stateful (1 when absent) */
	uint16_t tcp_mss;	/* defaults.tcp_mss (1.4; 0 before): RFW_TCP_MSS_* */
	uint32_t max_flows;	/* defaults.conntrack.max_flows */
	uint32_t timeout[RFW_TIMEOUT_COUNT];
	uint32_t nat_count;	/* NAT rules, numbered 1..nat_count */
	uint32_t route_count;
	uint32_t interface_count;
	uint8_t rpf;		/* defaults.rpf (1.4; 0 before): enum rfw_rpf */
	uint8_t reserved1[3];
	uint32_t reserved[2];
};

enum rfw_rule_flags {
	RFW_RULE_LOG = 1u << 0,
};

struct rfw_rule {
	uint32_t name_off;	/* into RFW_SEC_STRINGS */
	uint8_t action;		/* enum rfw_action */
	uint8_t flags;		/* enum rfw_rule_flags */
	uint16_t limit;		/* 1-based index into RFW_SEC_LIMITS, 0 = none */
	uint32_t first_entry;	/* its entries in RFW_SEC_ACL */
	uint32_t entry_count;
};

/* Where a rule was written, for logs and `rulec dump` ([0] = defaults). */
struct rfw_rule_source {
	uint32_t line, column;
};

enum rfw_acl_flags {
	RFW_ACL_PROTO = 1u << 0,	/* proto must equal entry.proto */
	RFW_ACL_PORTS = 1u << 1,	/* packet must have ports in range */
	RFW_ACL_ICMP_TYPE = 1u << 2,	/* ICMP/ICMPv6 type must equal icmp_type */
	RFW_ACL_ICMP_CODE = 1u << 3,	/* ... and code must equal icmp_code */
	RFW_ACL_TCP_FLAGS = 1u << 4,	/* (tcp flags & tcp_mask) == tcp_value */
	RFW_ACL_STATE = 1u << 5,	/* conntrack state bit in state_mask */
	RFW_ACL_IN_IF = 1u << 6,	/* input interface bit in in_ifaces */
	RFW_ACL_OUT_IF = 1u << 7,	/* output interface bit in out_ifaces */
	RFW_ACL_SRC_SET = 1u << 8,	/* source in address set (see below) */
	RFW_ACL_DST_SET = 1u << 9,
	RFW_ACL_SRC_NOT = 1u << 10,	/* with SRC_SET: source NOT in the set */
	RFW_ACL_DST_NOT = 1u << 11,
};

/* Conntrack states a rule may name (POLICY.md `state`). */
enum rfw_state {
	RFW_STATE_NEW = 1u << 0,
	RFW_STATE_ESTABLISHED = 1u << 1,
	RFW_STATE_RELATED = 1u << 2,
	RFW_STATE_INVALID = 1u << 3,
};

/* One conjunction of a rule: a rule with lists expands to the cross
 * product of its fields. Addresses are in network byte order; an IPv4
 * prefix uses the first 4 bytes. family 0 = either (no address given).
 * With RFW_ACL_SRC_SET the source is matched against address set
 * number le32(src[0..3]) (index into RFW_SEC_SETS) instead of a prefix,
 * and src_len is 0; likewise for the destination. Large and negated
 * networks are sets, so a million-prefix list is one entry, not a
 * million. Interfaces are bits of in_ifaces/out_ifaces by their index in
 * RFW_SEC_INTERFACES (so at most 32 interfaces). */
struct rfw_acl_entry {
	uint8_t src[16];
	uint8_t dst[16];
	uint8_t src_len;
	uint8_t dst_len;
	uint8_t family;		/* 0, 4 or 6 */
	uint8_t proto;
	uint16_t flags;		/* enum rfw_acl_flags */
	uint8_t icmp_type;
	uint8_t icmp_code;
	uint16_t sport_lo, sport_hi;
	uint16_t dport_lo, dport_hi;
	uint32_t rule;		/* rule number, 1-based */
	uint32_t in_ifaces;
	uint32_t out_ifaces;
	uint8_t tcp_mask;
	uint8_t tcp_value;
	uint8_t state_mask;	/* enum rfw_state bits */
	uint8_t reserved;
};
#define RFW_MAX_INTERFACES 32

struct rfw_interface {
	char name[16];		/* IFNAMSIZ, NUL-terminated; DPDK port name for dpdk */
	uint32_t zone;		/* index into RFW_SEC_ZONES, or RFW_NONE */
	uint32_t reserved[3];
};

struct rfw_zone {
	uint32_t name_off;
	uint32_t ifaces;	/* interface bits */
};

#define RFW_NONE 0xffffffffu

/* One LPM table (runtime/lpm.h layout) inside RFW_SEC_LPM_DATA: a root
 * of 65536 uint32 entries at `offset` (in uint32 units), then its groups
 * of 256 entries. offset RFW_LPM_NONE: the table is empty. */
#define RFW_LPM_NONE 0xffffffffffffffffull
struct rfw_lpm_ref {
	uint64_t offset;
	uint32_t group_count;
	uint32_t reserved;
};

/* An address set: LPM per family, value 1 for members. */
struct rfw_set {
	uint32_t name_off;	/* the network's name, or "" for a literal list */
	uint32_t prefix_count;
	struct rfw_lpm_ref v4, v6;
};

enum rfw_limit_per {
	RFW_LIMIT_PER_RULE = 0,
	RFW_LIMIT_PER_SOURCE = 1,
};

/* A token bucket: `rate` tokens per `interval_ms`, at most `burst`. */
struct rfw_limit {
	uint32_t rule;
	uint32_t per;		/* enum rfw_limit_per */
	uint64_t rate;
	uint64_t interval_ms;	/* 1000 for "/s", 60000 for "/m", ... */
	uint64_t burst;
};

enum rfw_nat_kind {
	RFW_NAT_SNAT = 1,	/* to the pool addr_lo..addr_hi */
	RFW_NAT_MASQUERADE = 2,	/* to the egress interface's address */
	RFW_NAT_DNAT = 3,	/* to addr_lo, port_lo (0 = keep port) */
};

struct rfw_nat_rule {
	uint32_t name_off;
	uint8_t kind;		/* enum rfw_nat_kind */
	uint8_t family;		/* 4 or 6 */
	uint16_t reserved;
	uint32_t first_entry;	/* its matches in RFW_SEC_NAT_ACL */
	uint32_t entry_count;
	uint8_t addr_lo[16];
	uint8_t addr_hi[16];
	uint16_t port_lo, port_hi;	/* SNAT: source port range; DNAT: lo */
	uint32_t reserved2[3];
};

struct rfw_route {
	uint8_t prefix[16];
	uint8_t len;
	uint8_t family;		/* 4 or 6 */
	uint8_t has_via;	/* 0: on-link, neighbour = destination */
	uint8_t reserved;
	uint32_t interface;	/* index into RFW_SEC_INTERFACES */
	uint8_t via[16];
	uint32_t reserved2[2];
};

/* LPM values are route index + 1. */
struct rfw_route_table {
	struct rfw_lpm_ref v4, v6;
};

struct rfw_host_addr {
	uint8_t addr[16];
	uint8_t family;
	uint8_t reserved[3];
};

enum rfw_host_pass_kind {
	RFW_HOST_PASS_ARP = 1,
	RFW_HOST_PASS_NDP = 2,
	RFW_HOST_PASS_SERVICE = 3,	/* proto (+ port range) */
};

struct rfw_host_pass {
	uint8_t kind;		/* enum rfw_host_pass_kind */
	uint8_t proto;
	uint16_t port_lo, port_hi;
	uint16_t reserved;
};

/* The compiled classifier (runtime/cls_hs.h): decision-tree nodes over
 * 32-bit packet fields (enum cls_dim). Children always have a larger
 * index than their parent, which the loader checks, so no file can make
 * a lookup loop. */
#define RFW_CLS_LEAF 0xffu
#define RFW_CLS_DIMS 11u
#define RFW_CLS_PARTS 4u
#define RFW_CLS_NONE 0xffffffffu

enum rfw_cls_kind {
	RFW_CLS_SPLIT = 0,	/* field <= threshold ? left : right */
	RFW_CLS_CUT = 1,	/* children[left + min((field - threshold) >> shift, right)] */
};

struct rfw_cls_node {
	uint32_t threshold;	/* split: threshold; cut: low end of the node's range */
	uint8_t dim;		/* field index < RFW_CLS_DIMS, or RFW_CLS_LEAF */
	uint8_t kind;		/* enum rfw_cls_kind */
	uint8_t shift;		/* cut: each child spans 2^shift values */
	uint8_t reserved;	/* must be zero */
	uint32_t left;		/* split: node; cut: first in CLS_CHILDREN; leaf: first leaf entry */
	uint32_t right;		/* split: node; cut: number of children - 1 (1.2: up to
				 * 2^16 children, was a byte); leaf: entry count */
};

/* A leaf's entries, compacted so the lookup checks four of them at once
 * (SIMD) instead of reading 64-byte ACL entries. An entry is eight 16-bit
 * ranges over the packet's leaf key (enum rfw_cls_key_word): the halves
 * of address word 0 (a prefix is exactly a range on each half), the
 * ports, the protocol with whether the packet has ports, and the in and
 * out interfaces. The packet passes an entry when lo <= key <= hi on
 * every word: two unsigned compares per word, no per-field cases.
 * Word-major (lo[word][lane]) so one 64-byte vector holds all of a
 * block's lower bounds.
 * Two fields share a word, the first in the high bits, so a pair of
 * ranges is one range of the word only when the first is one value or
 * the second spans every value: proto with "needs ports", and the in
 * with the out interface (zones). Where an entry asks for more than its
 * lane says exactly (a prefix longer than 32 bits, ICMP, TCP flags,
 * state, sets, interface sets that are no such range:
 * RFW_CLS_LEAF_FULL, bit 15 of hi[RFW_CLS_KW_IFACES]) a pass here is
 * only a filter and the full entry decides. A leaf of n entries takes
 * ceil(n / 4) consecutive blocks, in rule order; lane j of block b is
 * entry leaf_entries[4 * b + j] (RFW_SEC_CLS_LEAF_ENTRIES), and an
 * unused lane (entry RFW_CLS_NONE) can never pass: lo[RFW_CLS_KW_IFACES]
 * above RFW_CLS_IFACES_KEY_MAX. 128 bytes, two cache lines; format 1.2
 * took 160 with the entry indices inside, 1.3 and 1.4 had no interface
 * word (zone rules always asked for the full entry). */
enum rfw_cls_key_word {
	RFW_CLS_KW_SRC_HI, RFW_CLS_KW_SRC_LO,	/* address word 0, host order */
	RFW_CLS_KW_DST_HI, RFW_CLS_KW_DST_LO,
	RFW_CLS_KW_SPORT, RFW_CLS_KW_DPORT,
	RFW_CLS_KW_PROTO,	/* key: proto << 1 | 1 when the packet has ports */
	RFW_CLS_KW_IFACES,	/* key: in << 8 | out, each interface index
				 * or RFW_CLS_IF_NONE (none, unknown, >= 32) */
	RFW_CLS_KEY_WORDS,
};
#define RFW_CLS_IF_NONE 32u
#define RFW_CLS_IFACES_KEY_MAX (RFW_CLS_IF_NONE << 8 | RFW_CLS_IF_NONE)
#define RFW_CLS_LEAF_FULL 0x8000u	/* in hi[IFACES]: confirm with the ACL entry */
/* Bits of hi[IFACES] that are neither FULL nor inside the ranges' bytes
 * (each interface bound is at most RFW_CLS_IF_NONE): zero. */
#define RFW_CLS_IFACES_RESERVED 0x40c0u
#define RFW_CLS_LANES 4u

struct rfw_cls_leaf_block {
	uint16_t lo[RFW_CLS_KEY_WORDS][RFW_CLS_LANES];
	uint16_t hi[RFW_CLS_KEY_WORDS][RFW_CLS_LANES];	/* [PORTS]: 0xff | flags << 8 */
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
_Static_assert(sizeof(struct rfw_policy) == 64, "rfw_policy layout");
_Static_assert(sizeof(struct rfw_interface) == 32, "rfw_interface layout");
_Static_assert(sizeof(struct rfw_set) == 40, "rfw_set layout");
_Static_assert(sizeof(struct rfw_limit) == 32, "rfw_limit layout");
_Static_assert(sizeof(struct rfw_nat_rule) == 64, "rfw_nat_rule layout");
_Static_assert(sizeof(struct rfw_route) == 48, "rfw_route layout");
_Static_assert(sizeof(struct rfw_host_pass) == 8, "rfw_host_pass layout");
_Static_assert(sizeof(struct rfw_rule) == 16, "rfw_rule layout");
_Static_assert(sizeof(struct rfw_acl_entry) == 64, "rfw_acl_entry layout");
_Static_assert(sizeof(struct rfw_cls_node) == 16, "rfw_cls_node layout");
_Static_assert(sizeof(struct rfw_cls_trees) == 64, "rfw_cls_trees layout");
_Static_assert(sizeof(struct rfw_cls_leaf_block) == 128, "rfw_cls_leaf_block layout");

#endif
