/* See nat_match.h. */
#include "nat_match.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int nat_match_init(struct nat_match *m, const struct rfw_acl_entry *nat_acl,
		   const struct cls_sets *sets, const uint32_t *order, uint32_t count,
		   const struct rfw_cls_view *pre)
{
	memset(m, 0, sizeof(*m));
	m->nat_acl = nat_acl;
	m->order = order;
	m->count = count;
	m->sets = *sets;
	/* the loader checked its entries are the kind's, in this order */
	if (pre && pre->trees && pre->entry_count == count) {
		cls_hs_of_view(&m->table, pre, sets);
		m->compiled = 1;
		return 0;
	}
	if (count <= NAT_MATCH_SCAN_MAX)
		return 0;
	m->copy = malloc((size_t)count * sizeof(*m->copy));
	if (!m->copy)
		goto fail;
	for (uint32_t e = 0; e < count; e++)
		m->copy[e] = nat_acl[order[e]];
	if (cls_hs_build(&m->built, m->copy, count, NULL) < 0)
		goto fail;
	m->own = 1;
	m->table = m->built.table;
	m->table.sets = *sets;
	m->compiled = 1;
	return 0;
fail:
	nat_match_free(m);
	errno = ENOMEM;
	return -1;
}

void nat_match_free(struct nat_match *m)
{
	if (m->own)
		cls_hs_free(&m->built);
	free(m->copy);
	m->copy = NULL;
	m->own = 0;
	m->compiled = 0;
}

void nat_match_batch(const struct nat_match *m, const struct pkt_key *const *keys, uint32_t n,
		     uint32_t *rules)
{
	if (!m->compiled) {
		for (uint32_t i = 0; i < n; i++)
			rules[i] = nat_match_first(m, keys[i]);
		return;
	}
	cls_hs_lookup_batch(&m->table, keys, n, rules);
}
