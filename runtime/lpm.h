/* Longest-prefix match for routes and large address sets: a multibit trie
 * with a 16-bit first stride and 8-bit strides below, leaf-pushed so a
 * lookup is one read per level and no backtracking (IPv4: at most 3
 * reads, the DIR-24-8 idea of Gupta, Lin, McKeown, INFOCOM 1998, with a
 * smaller first table; IPv6: at most 15). Values are 31-bit; 0 = no
 * match. Flat arrays of uint32 so the artifact can hold them as is. */
#ifndef RAMPART_LPM_H
#define RAMPART_LPM_H

#include <stddef.h>
#include <stdint.h>

#define LPM_ROOT_BITS 16
#define LPM_ROOT_SIZE (1u << LPM_ROOT_BITS)
#define LPM_GROUP_SIZE 256u
#define LPM_CHILD 0x80000000u	/* entry is a group index, not a value */
#define LPM_VALUE_MAX 0x7fffffffu
/* uint32 words of a table with g groups (root first). */
#define LPM_WORDS(g) ((uint64_t)LPM_ROOT_SIZE + (uint64_t)(g) * LPM_GROUP_SIZE)

/* Lookup view: root[LPM_ROOT_SIZE] then groups of LPM_GROUP_SIZE. */
struct lpm {
	const uint32_t *root;
	const uint32_t *groups;
	uint32_t group_count;
	uint8_t addr_bytes;	/* 4 or 16 */
};

static inline uint32_t lpm_lookup(const struct lpm *t, const uint8_t *addr)
{
	uint32_t e = t->root[(uint32_t)addr[0] << 8 | addr[1]];

	for (unsigned i = 2; (e & LPM_CHILD) && i < t->addr_bytes; i++)
		e = t->groups[(e & ~LPM_CHILD) * LPM_GROUP_SIZE + addr[i]];
	return e;
}

/* --- build side --- */
struct lpm_builder {
	uint8_t addr_bytes;
	uint32_t *root;		/* LPM_ROOT_SIZE entries */
	uint8_t *root_len;	/* prefix length that set each entry */
	uint32_t *groups;
	uint8_t *group_len;
	uint32_t group_count, group_cap;
	struct lpm_prefix *pending;
	size_t pending_count, pending_cap;
};

struct lpm_prefix {
	uint8_t addr[16];
	uint8_t len;
	uint32_t value;
	uint32_t seq;		/* order added, for ties */
};

int lpm_builder_init(struct lpm_builder *b, unsigned addr_bytes);
/* Queue a prefix (host bits ignored). -1: bad length/value or no memory. */
int lpm_add(struct lpm_builder *b, const uint8_t *addr, unsigned len, uint32_t value);
/* Build the trie from every queued prefix. When one prefix is added twice,
 * the value added last wins. 0, or -1 when memory runs out. */
int lpm_build(struct lpm_builder *b, struct lpm *out);
size_t lpm_bytes(const struct lpm *t);
void lpm_builder_free(struct lpm_builder *b);

#endif
