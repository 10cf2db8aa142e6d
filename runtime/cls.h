/* ACL classifier: first matching rule for a packet key. The same lookup
 * serves the workers and `rulec query`, so query is the reference answer.
 * Today the table is the artifact's ordered entry list, scanned in rule
 * order (RFW_FEAT_ACL_LINEAR) unless the artifact carries the compiled
 * HyperSplit trees (RFW_FEAT_ACL_HSPLIT, runtime/cls_hs.h), which rulec
 * always writes; the answer is the same, the cost stays nearly flat. */
#ifndef RAMPART_CLS_H
#define RAMPART_CLS_H

#include <stdint.h>
#include "rampart/artifact.h"
#include "artifact.h"
#include "cls_hs.h"
#include "pkt.h"

/* Is addr (family 4 or 6) a member of set number idx? */
int cls_set_member(const struct cls_sets *s, uint32_t idx, uint8_t family,
		   const uint8_t *addr);

struct cls_table {
	const struct rfw_acl_entry *entries;
	uint32_t count;
	struct cls_sets sets;
	int compiled;			/* 0: scan entries in order */
	struct cls_hs hs;		/* valid when compiled */
};

/* A lookup table over a verified artifact's classifier sections (the
 * ACL's, or a NAT kind's). */
void cls_hs_of_view(struct cls_hs *t, const struct rfw_cls_view *c, const struct cls_sets *sets);

/* The table of a verified artifact: the compiled trees when present. */
void cls_table_init(struct cls_table *t, const struct rfw_view *v);

/* Rule number of the first match, or 0 (the default rule). */
uint32_t cls_lookup(const struct cls_table *t, const struct pkt_key *k);

/* The batch form the pipeline uses: rules[i] for keys[i]. */
void cls_lookup_batch(const struct cls_table *t, const struct pkt_key *const *keys,
		      uint32_t n, uint32_t *rules);

/* Does entry e match k? Exposed for tests and the analyser. */
int cls_entry_matches(const struct cls_sets *s, const struct rfw_acl_entry *e,
		      const struct pkt_key *k);

/* The conditions beyond the 5-tuple and the zones (ICMP, TCP flags,
 * state, sets); rare, so out of line. Callers check the zones first
 * (cls_entry_rest_matches). */
int cls_entry_extra_matches(const struct cls_sets *s, const struct rfw_acl_entry *e,
			    const struct pkt_key *k);

/* The first len bits of a and p (16-byte addresses) agree: whole 32-bit
 * words compared as they are, the last one's leading bits in network
 * order (len past 128 compares all 128). */
static inline int cls_prefix_match(const uint8_t *a, const uint8_t *p, unsigned len)
{
	for (unsigned w = 0; w < 4 && len; w++, len = len > 32 ? len - 32 : 0) {
		uint32_t x, y;

		__builtin_memcpy(&x, a + 4 * w, 4);
		__builtin_memcpy(&y, p + 4 * w, 4);
		x ^= y;
		if (len < 32) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			x = __builtin_bswap32(x);
#endif
			return (x >> (32 - len)) == 0;
		}
		if (x)
			return 0;
	}
	return 1;
}

/* The conditions outside an entry's 5-tuple box: zones inline (the
 * common ones: a rule or NAT match per pair of zones), the rest out of
 * line. */
static inline int cls_entry_rest_matches(const struct cls_sets *s,
					 const struct rfw_acl_entry *e,
					 const struct pkt_key *k)
{
	uint16_t f = e->flags;

	if ((f & RFW_ACL_IN_IF) && (k->in_if >= 32 || !(e->in_ifaces >> k->in_if & 1)))
		return 0;
	if ((f & RFW_ACL_OUT_IF) && (k->out_if >= 32 || !(e->out_ifaces >> k->out_if & 1)))
		return 0;
	return !(f & ~(RFW_ACL_PROTO | RFW_ACL_PORTS | RFW_ACL_IN_IF | RFW_ACL_OUT_IF)) ||
	       cls_entry_extra_matches(s, e, k);
}

/* The hot part of cls_entry_matches, inlined into the lookups. */
static inline int cls_entry_matches_inline(const struct cls_sets *s,
					   const struct rfw_acl_entry *e,
					   const struct pkt_key *k)
{
	if (e->family && e->family != k->family)
		return 0;
	if ((e->flags & RFW_ACL_PROTO) && e->proto != k->proto)
		return 0;
	if (e->flags & RFW_ACL_PORTS) {
		if (!k->has_ports ||
		    k->sport < e->sport_lo || k->sport > e->sport_hi ||
		    k->dport < e->dport_lo || k->dport > e->dport_hi)
			return 0;
	}
	if (!cls_prefix_match(k->src, e->src, e->src_len) ||
	    !cls_prefix_match(k->dst, e->dst, e->dst_len))
		return 0;
	return cls_entry_rest_matches(s, e, k);
}

#endif
