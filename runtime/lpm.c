/* LPM trie builder. Prefixes are inserted shortest first, so a longer
 * prefix always overwrites a shorter one, and a new group inherits its
 * parent entry's value (leaf pushing): lookups never backtrack. */
#include "lpm.h"

#include <stdlib.h>
#include <string.h>

int lpm_builder_init(struct lpm_builder *b, unsigned addr_bytes)
{
	memset(b, 0, sizeof(*b));
	if (addr_bytes != 4 && addr_bytes != 16)
		return -1;
	b->addr_bytes = (uint8_t)addr_bytes;
	b->root = calloc(LPM_ROOT_SIZE, sizeof(*b->root));
	b->root_len = calloc(LPM_ROOT_SIZE, 1);
	if (!b->root || !b->root_len) {
		lpm_builder_free(b);
		return -1;
	}
	return 0;
}

int lpm_add(struct lpm_builder *b, const uint8_t *addr, unsigned len, uint32_t value)
{
	struct lpm_prefix *p;

	if (len > 8u * b->addr_bytes || value == 0 || value > LPM_VALUE_MAX)
		return -1;
	if (b->pending_count == b->pending_cap) {
		size_t cap = b->pending_cap ? b->pending_cap * 2 : 64;
		struct lpm_prefix *np = realloc(b->pending, cap * sizeof(*np));

		if (!np)
			return -1;
		b->pending = np;
		b->pending_cap = cap;
	}
	p = &b->pending[b->pending_count++];
	memset(p, 0, sizeof(*p));
	memcpy(p->addr, addr, b->addr_bytes);
	for (unsigned bit = len; bit < 8u * b->addr_bytes; bit++)
		p->addr[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
	p->len = (uint8_t)len;
	p->value = value;
	p->seq = (uint32_t)b->pending_count;
	return 0;
}

/* A new group whose every entry carries what its parent entry had. */
static int64_t new_group(struct lpm_builder *b, uint32_t value, uint8_t len)
{
	uint32_t g;

	if (b->group_count == b->group_cap) {
		uint32_t cap = b->group_cap ? b->group_cap * 2 : 64;
		uint32_t *ng = realloc(b->groups, (size_t)cap * LPM_GROUP_SIZE * sizeof(*ng));
		uint8_t *nl;

		if (!ng)
			return -1;
		b->groups = ng;
		nl = realloc(b->group_len, (size_t)cap * LPM_GROUP_SIZE);
		if (!nl)
			return -1;
		b->group_len = nl;
		b->group_cap = cap;
	}
	g = b->group_count++;
	for (uint32_t i = 0; i < LPM_GROUP_SIZE; i++) {
		b->groups[(size_t)g * LPM_GROUP_SIZE + i] = value;
		b->group_len[(size_t)g * LPM_GROUP_SIZE + i] = len;
	}
	return g;
}

/* Set value on entries [first, first+n) of a table, descending into child
 * groups so entries below keep any longer prefix they already carry. */
static void fill(struct lpm_builder *b, uint32_t *tab, uint8_t *lens, uint32_t first,
		 uint32_t n, uint32_t value, uint8_t len)
{
	for (uint32_t i = first; i < first + n; i++) {
		if (tab[i] & LPM_CHILD) {
			uint32_t g = tab[i] & ~LPM_CHILD;

			fill(b, b->groups + (size_t)g * LPM_GROUP_SIZE,
			     b->group_len + (size_t)g * LPM_GROUP_SIZE, 0, LPM_GROUP_SIZE,
			     value, len);
		} else if (lens[i] <= len) {
			tab[i] = value;
			lens[i] = len;
		}
	}
}

static int insert(struct lpm_builder *b, const struct lpm_prefix *p)
{
	int64_t group = -1;			/* -1: the root table */
	uint32_t idx = (uint32_t)p->addr[0] << 8 | p->addr[1];
	unsigned covered = LPM_ROOT_BITS;	/* bits resolved by this level */
	uint32_t *tab = b->root;
	uint8_t *lens = b->root_len;

	for (unsigned byte = 2; p->len > covered; byte++) {
		if (!(tab[idx] & LPM_CHILD)) {
			int64_t g = new_group(b, tab[idx], lens[idx]);

			if (g < 0)
				return -1;
			if (group >= 0) {	/* new_group may have moved the groups */
				tab = b->groups + (size_t)group * LPM_GROUP_SIZE;
				lens = b->group_len + (size_t)group * LPM_GROUP_SIZE;
			}
			tab[idx] = LPM_CHILD | (uint32_t)g;
		}
		group = tab[idx] & ~LPM_CHILD;
		tab = b->groups + (size_t)group * LPM_GROUP_SIZE;
		lens = b->group_len + (size_t)group * LPM_GROUP_SIZE;
		idx = p->addr[byte];
		covered += 8;
	}
	/* The prefix ends inside this level: it spans 2^(covered-len) entries. */
	{
		unsigned span_bits = covered - p->len;
		uint32_t first = idx & ~((1u << span_bits) - 1);

		fill(b, tab, lens, first, 1u << span_bits, p->value, p->len);
	}
	return 0;
}

/* Shortest first; equal lengths in the order added, so the later wins. */
static int by_length(const void *x, const void *y)
{
	const struct lpm_prefix *a = x, *b = y;

	if (a->len != b->len)
		return (a->len > b->len) - (a->len < b->len);
	return (a->seq > b->seq) - (a->seq < b->seq);
}

int lpm_build(struct lpm_builder *b, struct lpm *out)
{
	if (b->pending_count)
		qsort(b->pending, b->pending_count, sizeof(*b->pending), by_length);
	for (size_t i = 0; i < b->pending_count; i++)
		if (insert(b, &b->pending[i]) < 0)
			return -1;
	out->root = b->root;
	out->groups = b->groups;
	out->group_count = b->group_count;
	out->addr_bytes = b->addr_bytes;
	return 0;
}

size_t lpm_bytes(const struct lpm *t)
{
	return ((size_t)LPM_ROOT_SIZE + (size_t)t->group_count * LPM_GROUP_SIZE) * sizeof(uint32_t);
}

void lpm_builder_free(struct lpm_builder *b)
{
	free(b->root);
	free(b->root_len);
	free(b->groups);
	free(b->group_len);
	free(b->pending);
	memset(b, 0, sizeof(*b));
}
