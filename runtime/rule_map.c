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

/* Open addressing over the new policy's names, for reordered policies. */
static int map_by_hash(const struct rfw_view *from, const struct rfw_view *to, uint32_t *map,
		       uint32_t start)
{
	uint32_t nto = to->policy->rule_count, cap = 16;
	uint32_t *slot;

	while (cap < 2 * nto)
		cap <<= 1;
	slot = calloc(cap, sizeof(*slot));	/* rule number, 0 = empty */
	if (!slot)
		return -1;
	for (uint32_t r = 1; r <= nto; r++) {
		uint32_t i = (uint32_t)name_hash(rfw_rule_name(to, r)) & (cap - 1);

		while (slot[i])
			i = (i + 1) & (cap - 1);
		slot[i] = r;
	}
	for (uint32_t r = start; r <= from->policy->rule_count; r++) {
		const char *name = rfw_rule_name(from, r);
		uint32_t i = (uint32_t)name_hash(name) & (cap - 1);

		map[r] = RULE_MAP_GONE;
		for (; slot[i]; i = (i + 1) & (cap - 1))
			if (!strcmp(rfw_rule_name(to, slot[i]), name)) {
				map[r] = slot[i];
				break;
			}
	}
	free(slot);
	return 0;
}

uint32_t *rule_map_build(const struct rfw_view *from, const struct rfw_view *to)
{
	uint32_t nfrom = from->policy->rule_count, nto = to->policy->rule_count, r;
	uint32_t *map = malloc(((size_t)nfrom + 1) * sizeof(*map));

	if (!map)
		return NULL;
	map[0] = 0;
	/* Most edits keep the order: walk both while the names agree. */
	for (r = 1; r <= nfrom && r <= nto; r++) {
		if (strcmp(rfw_rule_name(from, r), rfw_rule_name(to, r)))
			break;
		map[r] = r;
	}
	if (r <= nfrom && map_by_hash(from, to, map, r) < 0) {
		free(map);
		return NULL;
	}
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
