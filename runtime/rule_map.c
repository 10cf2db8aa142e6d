/* Rule continuity across a reload, by name. */
#include "rule_map.h"

#include <stdlib.h>
#include <string.h>

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h;
}

/* A second, unrelated hash: a multiply-xorshift over the bytes. */
static uint64_t name_hash2(const char *s)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	while (*s) {
		h = (h + (uint8_t)*s++) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	return h * 0x94d049bb133111ebull ^ (h >> 29);
}

int rule_index_build(struct rule_index *ix, const struct rfw_view *v)
{
	uint32_t n = v->policy->rule_count, cap = 16;

	while (cap < 2 * n)
		cap <<= 1;
	ix->count = n;
	ix->mask = cap - 1;
	ix->slot = calloc(cap, sizeof(*ix->slot));
	ix->hash = malloc(((size_t)n + 1) * sizeof(*ix->hash));
	if (!ix->slot || !ix->hash) {
		rule_index_free(ix);
		return -1;
	}
	for (uint32_t r = 1; r <= n; r++) {
		const char *name = rfw_rule_name(v, r);
		uint32_t i;

		ix->hash[r][0] = name_hash(name);
		ix->hash[r][1] = name_hash2(name);
		for (i = (uint32_t)ix->hash[r][0] & ix->mask; ix->slot[i]; i = (i + 1) & ix->mask)
			;
		ix->slot[i] = r;
	}
	return 0;
}

void rule_index_free(struct rule_index *ix)
{
	free(ix->slot);
	free(ix->hash);
	ix->slot = NULL;
	ix->hash = NULL;
}

uint32_t rule_index_lookup(const struct rule_index *ix, const char *name)
{
	uint64_t h0 = name_hash(name), h1 = name_hash2(name);

	for (uint32_t i = (uint32_t)h0 & ix->mask; ix->slot[i]; i = (i + 1) & ix->mask)
		if (ix->hash[ix->slot[i]][0] == h0 && ix->hash[ix->slot[i]][1] == h1)
			return ix->slot[i];
	return RULE_MAP_GONE;
}

static int same(const struct rule_index *a, uint32_t i, const struct rule_index *b, uint32_t j)
{
	return a->hash[i][0] == b->hash[j][0] && a->hash[i][1] == b->hash[j][1];
}

static uint32_t index_find(const struct rule_index *ix, const struct rule_index *from,
			   uint32_t r)
{
	for (uint32_t i = (uint32_t)from->hash[r][0] & ix->mask; ix->slot[i];
	     i = (i + 1) & ix->mask)
		if (same(from, r, ix, ix->slot[i]))
			return ix->slot[i];
	return RULE_MAP_GONE;
}

#define LOOKAHEAD 8	/* rules inserted or removed in one place, found by the pass */
#define UNPLACED (RULE_MAP_GONE - 1)

/* Walk both lists in order, re-aligning over short insertions and
 * removals; returns how many rules it left UNPLACED. */
static uint32_t align(const struct rule_index *from, const struct rule_index *to, uint32_t *map)
{
	uint32_t nfrom = from->count, nto = to->count, i = 1, j = 1, unplaced = 0;

	while (i <= nfrom) {
		uint32_t d;

		if (j <= nto && same(from, i, to, j)) {
			map[i++] = j++;
			continue;
		}
		for (d = 1; d <= LOOKAHEAD && j + d <= nto; d++)	/* inserted in `to` */
			if (same(from, i, to, j + d))
				break;
		if (d <= LOOKAHEAD && j + d <= nto) {
			j += d;
			continue;
		}
		for (d = 1; d <= LOOKAHEAD && i + d <= nfrom && j <= nto; d++)	/* removed */
			if (same(from, i + d, to, j))
				break;
		if (d <= LOOKAHEAD && i + d <= nfrom && j <= nto) {
			for (uint32_t k = 0; k < d; k++)
				map[i + k] = UNPLACED;
			unplaced += d;
			i += d;
			continue;
		}
		map[i++] = UNPLACED;	/* changed in place, or moved far */
		unplaced++;
		j++;
	}
	return unplaced;
}

uint32_t *rule_map_build(const struct rfw_view *from, const struct rule_index *from_ix,
			 const struct rfw_view *to, const struct rule_index *to_ix)
{
	uint32_t nfrom = from->policy->rule_count;
	uint32_t *map = malloc(((size_t)nfrom + 1) * sizeof(*map));
	struct rule_index own_from = {0}, own_to = {0};

	if (!map)
		return NULL;
	if ((!from_ix && rule_index_build(&own_from, from) < 0) ||
	    (!to_ix && rule_index_build(&own_to, to) < 0)) {
		free(map);
		map = NULL;
		goto out;
	}
	from_ix = from_ix ? from_ix : &own_from;
	to_ix = to_ix ? to_ix : &own_to;
	map[0] = 0;
	if (align(from_ix, to_ix, map))
		for (uint32_t r = 1; r <= nfrom; r++)
			if (map[r] == UNPLACED)
				map[r] = index_find(to_ix, from_ix, r);
out:
	rule_index_free(&own_from);
	rule_index_free(&own_to);
	return map;
}

static int same_limit(const struct rfw_limit *a, const struct rfw_limit *b)
{
	return a->per == b->per && a->rate == b->rate && a->interval_ms == b->interval_ms &&
	       a->burst == b->burst;
}

uint32_t *rule_map_limits(const struct rfw_view *from, const struct rfw_view *to,
			  const uint32_t *map)
{
	uint32_t *fwd = calloc((size_t)from->limit_count + 1, sizeof(*fwd));

	if (!fwd)
		return NULL;
	for (uint32_t r = 1; r <= from->policy->rule_count; r++) {
		uint32_t lo = from->rules[r].limit, rn = map[r], ln;

		if (!lo || lo > from->limit_count || rn == RULE_MAP_GONE)
			continue;
		ln = to->rules[rn].limit;
		if (ln && ln <= to->limit_count &&
		    same_limit(&from->limits[lo - 1], &to->limits[ln - 1]))
			fwd[lo] = ln;
	}
	return fwd;
}
