/* Building address sets and route tables with the runtime's own LPM
 * builder (runtime/lpm.h), so the artifact holds exactly what lpm_lookup
 * reads. A million-prefix blocklist is one set: one table, one entry. */
#include "sets.h"

#include <stdlib.h>
#include <string.h>

#include "lpm.h"

int lpm_data_add(struct lpm_data *ld, unsigned family, const struct lpm_item *items, size_t n,
		 struct rfw_lpm_ref *ref)
{
	struct lpm_builder b;
	struct lpm t;
	uint64_t words;
	size_t at;

	ref->offset = RFW_LPM_NONE;
	ref->group_count = 0;
	ref->reserved = 0;
	if (n == 0)
		return 0;
	if (lpm_builder_init(&b, family == 6 ? 16 : 4) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (lpm_add(&b, items[i].addr, items[i].len, items[i].value) < 0)
			goto fail;
	if (lpm_build(&b, &t) < 0)
		goto fail;
	words = LPM_WORDS(t.group_count);
	at = ld->words.n;
	ld->words.v = vec_grow(ld->words.v, &ld->words.cap, at + words, sizeof(uint32_t));
	memcpy(ld->words.v + at, t.root, LPM_ROOT_SIZE * sizeof(uint32_t));
	if (t.group_count)
		memcpy(ld->words.v + at + LPM_ROOT_SIZE, t.groups,
		       (size_t)t.group_count * LPM_GROUP_SIZE * sizeof(uint32_t));
	ld->words.n = at + words;
	ref->offset = at;
	ref->group_count = t.group_count;
	lpm_builder_free(&b);
	return 0;
fail:
	lpm_builder_free(&b);
	return -1;
}

long sets_add(struct lpm_data *ld, uint32_t name_off, const pfx_list *pfx)
{
	struct rfw_set set = {.name_off = name_off, .prefix_count = (uint32_t)pfx->n};
	struct lpm_item *items = calloc(pfx->n ? pfx->n : 1, sizeof(*items));
	size_t n4 = 0, n6 = 0;
	int rc;

	if (!items)
		return -1;
	/* IPv4 from the front, IPv6 from the back: one array, two tables. */
	for (size_t i = 0; i < pfx->n; i++) {
		const struct prefix *p = &pfx->v[i];
		struct lpm_item it = {p->addr, p->len, 1};

		if (p->family == 4)
			items[n4++] = it;
		else
			items[pfx->n - ++n6] = it;
	}
	rc = lpm_data_add(ld, 4, items, n4, &set.v4);
	if (rc == 0)
		rc = lpm_data_add(ld, 6, items + pfx->n - n6, n6, &set.v6);
	free(items);
	if (rc < 0)
		return -1;
	VEC_PUSH(ld->sets, set);
	return (long)ld->sets.n - 1;
}

void lpm_data_free(struct lpm_data *ld)
{
	free(ld->words.v);
	free(ld->sets.v);
	memset(ld, 0, sizeof(*ld));
}
