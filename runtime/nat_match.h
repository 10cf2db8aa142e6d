/* The first NAT rule of one kind (DNAT, or SNAT and masquerade) that
 * takes a packet: every new flow asks it, so does a flood's every packet
 * (DNAT comes before the rules). A policy of a few NAT rules is scanned
 * in order; one of many (port forwards by the hundred) is looked up by a
 * HyperSplit classifier over the kind's entries: the one rulec wrote into
 * the artifact (format 1.6), or, for an older artifact, one built here
 * with the policy. A new packet then costs about the same whatever their
 * number (fwbench --port-forwards: docs/PERFORMANCE.md). The answer is
 * the scan's: the classifier is exact, its leaves checked against the
 * entries in order. */
#ifndef RAMPART_NAT_MATCH_H
#define RAMPART_NAT_MATCH_H

#include <stdint.h>

#include "cls.h"
#include "cls_hs.h"

/* Above this many entries, the classifier (a scan of a few entries costs
 * less than a walk). */
#define NAT_MATCH_SCAN_MAX 8u
_Static_assert(RFW_NAT_CLS_MIN == NAT_MATCH_SCAN_MAX + 1,
	       "rulec writes a kind's classifier where a worker would build one");

struct nat_match {
	const struct rfw_acl_entry *nat_acl;	/* the view's entries */
	const uint32_t *order;	/* nat_acl indices, first match first */
	uint32_t count;
	struct cls_sets sets;
	int compiled;
	struct cls_hs table;	/* compiled: over the kind's entries in order */
	/* built here (no classifier in the artifact): the entries copied
	 * out in order (rule numbers ascend within a kind, as the
	 * classifier wants them) and the trees */
	struct rfw_acl_entry *copy;
	struct cls_hs_built built;
	int own;
};

/* order[0..count) (and the view behind nat_acl, pre) stay the caller's
 * while m is in use; pre: the artifact's classifier for the kind, NULL
 * or without trees when it has none. 0, or -1 (ENOMEM). */
int nat_match_init(struct nat_match *m, const struct rfw_acl_entry *nat_acl,
		   const struct cls_sets *sets, const uint32_t *order, uint32_t count,
		   const struct rfw_cls_view *pre);
void nat_match_free(struct nat_match *m);

/* The NAT rule of the first entry that takes k, or 0. */
static inline uint32_t nat_match_first(const struct nat_match *m, const struct pkt_key *k)
{
	if (m->compiled)
		return cls_hs_lookup(&m->table, k);
	for (uint32_t e = 0; e < m->count; e++) {
		const struct rfw_acl_entry *x = &m->nat_acl[m->order[e]];

		if (cls_entry_matches(&m->sets, x, k))
			return x->rule;
	}
	return 0;
}

/* rules[i] for keys[i] (n at most a burst): a compiled table walks
 * the keys' trees together, as the ACL stage does. */
void nat_match_batch(const struct nat_match *m, const struct pkt_key *const *keys, uint32_t n,
		     uint32_t *rules);

#endif
