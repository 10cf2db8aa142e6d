/* Linear first-match classifier over the compiled entry list. */
#include "cls.h"

#include <string.h>

#include "lpm.h"

int cls_set_member(const struct cls_sets *s, uint32_t idx, uint8_t family,
		   const uint8_t *addr)
{
	const struct rfw_set *set;
	const struct rfw_lpm_ref *ref;
	struct lpm t;

	if (idx >= s->count)
		return 0;
	set = &s->sets[idx];
	ref = family == 6 ? &set->v6 : &set->v4;
	if (ref->offset == RFW_LPM_NONE)
		return 0;
	t.root = s->lpm_data + ref->offset;
	t.groups = t.root + LPM_ROOT_SIZE;
	t.group_count = ref->group_count;
	t.addr_bytes = family == 6 ? 16 : 4;
	return lpm_lookup(&t, addr) != 0;
}

static inline uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The rarer conditions, kept out of the common path (zones: checked
 * before, cls_entry_rest_matches). */
int cls_entry_extra_matches(const struct cls_sets *s, const struct rfw_acl_entry *e,
			 const struct pkt_key *k)
{
	uint16_t f = e->flags;

	if ((f & RFW_ACL_ICMP_TYPE) && k->icmp_type != e->icmp_type)
		return 0;
	if ((f & RFW_ACL_ICMP_CODE) && k->icmp_code != e->icmp_code)
		return 0;
	if ((f & RFW_ACL_TCP_FLAGS) && (k->proto != 6 || (k->tcp_flags & e->tcp_mask) != e->tcp_value))
		return 0;
	if ((f & RFW_ACL_STATE) && !(k->ct_state & e->state_mask))
		return 0;
	if ((f & RFW_ACL_SRC_SET) &&
	    cls_set_member(s, le32(e->src), k->family, k->src) == !!(f & RFW_ACL_SRC_NOT))
		return 0;
	if ((f & RFW_ACL_DST_SET) &&
	    cls_set_member(s, le32(e->dst), k->family, k->dst) == !!(f & RFW_ACL_DST_NOT))
		return 0;
	return 1;
}

int cls_entry_matches(const struct cls_sets *s, const struct rfw_acl_entry *e,
		      const struct pkt_key *k)
{
	return cls_entry_matches_inline(s, e, k);
}

void cls_hs_of_view(struct cls_hs *t, const struct rfw_cls_view *c, const struct cls_sets *sets)
{
	*t = (struct cls_hs){
		.nodes = c->nodes,
		.leaves = c->leaves,
		.leaf_entries = c->leaf_entries,
		.entries = c->entries,
		.sets = *sets,
		.trees = *c->trees,
		.node_count = c->node_count,
		.leaf_entry_count = c->leaf_count,
		.children = c->children,
		.child_count = c->child_count,
	};
	cls_hs_first_entries(t, c->entry_count);
}

void cls_table_init(struct cls_table *t, const struct rfw_view *v)
{
	memset(t, 0, sizeof(*t));
	t->entries = v->acl;
	t->count = v->acl_count;
	t->sets = (struct cls_sets){v->sets, v->set_count, v->lpm_data};
	if (v->cls_trees) {
		const struct rfw_cls_view c = {
			.entries = v->acl,
			.entry_count = v->acl_count,
			.trees = v->cls_trees,
			.nodes = v->cls_nodes,
			.node_count = v->cls_node_count,
			/* records since format 1.2; the view types them as words */
			.leaves = (const struct rfw_cls_leaf_block *)(const void *)v->cls_leaves,
			.leaf_count = v->cls_leaf_count,
			.leaf_entries = v->cls_leaf_entries,
			.children = v->cls_children,
			.child_count = v->cls_child_count,
		};

		cls_hs_of_view(&t->hs, &c, &t->sets);
		t->compiled = 1;
	}
}

uint32_t cls_lookup(const struct cls_table *t, const struct pkt_key *k)
{
	if (t->compiled)
		return cls_hs_lookup(&t->hs, k);
	if (k->family == 0)
		return 0;
	for (uint32_t i = 0; i < t->count; i++)
		if (cls_entry_matches_inline(&t->sets, &t->entries[i], k))
			return t->entries[i].rule;
	return 0;
}

void cls_lookup_batch(const struct cls_table *t, const struct pkt_key *const *keys,
		      uint32_t n, uint32_t *rules)
{
	if (t->compiled) {
		cls_hs_lookup_batch(&t->hs, keys, n, rules);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		rules[i] = cls_lookup(t, keys[i]);
}
