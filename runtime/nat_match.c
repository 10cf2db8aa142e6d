/* See nat_match.h. */
#include "nat_match.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int nat_match_init(struct nat_match *m, const struct rfw_acl_entry *nat_acl,
		   const struct cls_sets *sets, const uint32_t *order, uint32_t count)
{
	memset(m, 0, sizeof(*m));
	m->nat_acl = nat_acl;
	m->order = order;
	m->count = count;
	m->sets = *sets;
	if (count <= NAT_MATCH_SCAN_MAX)
		return 0;
	m->copy = malloc((size_t)count * sizeof(*m->copy));
	m->rule_of = malloc((size_t)count * sizeof(*m->rule_of));
	if (!m->copy || !m->rule_of)
		goto fail;
	for (uint32_t e = 0; e < count; e++) {
		m->copy[e] = nat_acl[order[e]];
		m->copy[e].rule = e + 1;
		m->rule_of[e] = nat_acl[order[e]].rule;
	}
	if (cls_hs_build(&m->hs, m->copy, count, NULL) < 0)
		goto fail;
	m->hs.table.sets = *sets;
	m->compiled = 1;
	return 0;
fail:
	nat_match_free(m);
	errno = ENOMEM;
	return -1;
}

void nat_match_free(struct nat_match *m)
{
	if (m->compiled)
		cls_hs_free(&m->hs);
	free(m->copy);
	free(m->rule_of);
	m->copy = NULL;
	m->rule_of = NULL;
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
	cls_hs_lookup_batch(&m->hs.table, keys, n, rules);
	for (uint32_t i = 0; i < n; i++)
		rules[i] = rules[i] ? m->rule_of[rules[i] - 1] : 0;
}
