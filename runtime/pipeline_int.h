/* What pipeline.c (the stages) and pipe_policy.c (building, adopting and
 * sweeping a policy on reload) share: a worker's durable state, and one
 * generation of the policy as the worker sees it. Not an API. */
#ifndef RAMPART_PIPELINE_INT_H
#define RAMPART_PIPELINE_INT_H

#include "cls.h"
#include "ct.h"
#include "flowcache.h"
#include "home.h"
#include "lpm.h"
#include "nat.h"
#include "nat_match.h"
#include "neigh.h"
#include "pipeline.h"
#include "pktcap.h"
#include "pktlog.h"
#include "rss_home.h"
#include "ratelimit.h"

/* The rule a flow stores in conntrack: the rule number in the low bits, a
 * generation tag above, so a flow made before a reload is recognised on
 * its next packet (or by the sweep) and moved to the rule that continues
 * its own. */
#define PIPE_RULE_BITS 24u
#define PIPE_RULE_MASK ((1u << PIPE_RULE_BITS) - 1)
#define PIPE_TAG_GEN 0x7fu		/* generation, modulo 128 */
#define PIPE_TAG_RECHECK 0x80u		/* re-check against the rules on next packet */
#define PIPE_MAX_POOLS 4096u		/* NAT pools a worker keeps over its life */
#define PIPE_SWEEP_PER_CALL 4096u
#define PIPE_HOLD_HEAD 128u		/* bytes of a held packet kept as it came: an
					 * IPv4 header with options and 8 more */	/* conntrack slots re-tagged per pipe_sweep */

static inline uint32_t pipe_flow_rule(uint32_t tag, uint32_t rule)
{
	return tag << PIPE_RULE_BITS | rule;
}

enum path {
	PATH_NEW = 0,		/* through DNAT, rules, limits, CT */
	PATH_FLOW,		/* a known flow: its verdict and translation */
	PATH_RELATED,		/* an ICMP error about a known flow */
	PATH_FRAG,		/* a non-first fragment following its first */
};

/* Per-burst scratch, indexed by the frame's place in the burst. */
struct pipe_burst {
	struct pkt_meta meta[PIPE_BURST];
	struct ct_pkt cp[PIPE_BURST];
	struct ct_result res[PIPE_BURST];
	struct ct_flow_info flow[PIPE_BURST];	/* PATH_FLOW/RELATED with NAT */
	struct pkt_key akey[PIPE_BURST];	/* what the rules see (after DNAT) */
	struct pkt_key wire[PIPE_BURST];	/* how it leaves (after all NAT) */
	struct pkt_key reply[PIPE_BURST];	/* a new flow's reply on the wire */
	uint8_t nexthop[PIPE_BURST][16];
	uint32_t rule[PIPE_BURST];
	uint8_t path[PIPE_BURST];
	uint8_t nat[PIPE_BURST];		/* wire differs from the frame */
	uint8_t has_reply[PIPE_BURST];
	uint32_t l_cut[PIPE_BURST];	/* stage_forward: to fragment after NAT */
	uint32_t ncut, cut_extra;	/* ... and the extra frames they will take */
	uint32_t l_hold[PIPE_BURST];	/* stage_forward: to hold after NAT */
	uint32_t nhold;
	/* lists of burst indexes */
	uint32_t l_new[PIPE_BURST], l_known[PIPE_BURST], l_pass[PIPE_BURST];
	const struct pkt_key *keys[PIPE_BURST];	/* classifier input */
	uint32_t key_of[PIPE_BURST];
	uint32_t rules[PIPE_BURST];
	struct ct_pkt cpl[PIPE_BURST];		/* ct_lookup_batch input */
	struct ct_result resl[PIPE_BURST];
	/* stage_ct: a new flow's SNAT choice between its two passes */
	struct nat_pool *snat_pool[PIPE_BURST];
	uint32_t snat_slot[PIPE_BURST];	/* for nat_release if the create fails */
	struct ct_create_hint create_hint[PIPE_BURST];	/* stage_ct: hashes, pass 1 to 2 */
	uint8_t creating[PIPE_BURST];
	uint8_t logme[PIPE_BURST];		/* 1: its rule logs; 2: logged as invalid */
	/* the flow cache: probes hashed and prefetched by stage_parse,
	 * made by stage_cache */
	uint64_t fch[PIPE_BURST];		/* flow cache hash of the tuple */
	uint8_t fcp[PIPE_BURST];		/* 1: probed (so may be inserted) */
	uint8_t fc_taken[PIPE_BURST];		/* 1: finished (or invalid) there */
	uint32_t l_probe[PIPE_BURST], nprobe;
	uint32_t syn_at[PIPE_BURST], syn_slot[PIPE_BURST], nsyn;	/* TCP SYNs */
	int syn_slots_made;			/* syn_slot filled (syn_slots) */
	uint32_t l_hint[PIPE_BURST], l_inv[PIPE_BURST];
	/* non-first fragments looked up before their first fragment, earlier
	 * in the burst, was accepted: looked up again after stage_ct */
	uint32_t l_frag_wait[PIPE_BURST], nfrag_wait;
	struct ct_hint hint[PIPE_BURST];	/* the candidates, for conntrack */
	uint32_t ncand;				/* probes whose slot held a flow */
	/* the express path: IPv4 TCP/UDP frames stage_parse only hashed
	 * (no meta until they miss), the express steps' candidates */
	uint32_t l_x[PIPE_BURST], nx, xfound;
	uint32_t xleft;				/* of l_x, not yet finished */
	uint32_t l_hint4[PIPE_BURST];
	struct ct_hint4 hint4[PIPE_BURST];
	uint32_t l_merge[PIPE_BURST];
	/* express_conntrack: the frames whose flow it found, for l_known */
	uint32_t l_xknown[PIPE_BURST], nxknown;
	uint32_t l_xnew[PIPE_BURST], nxnew;	/* express_conntrack's CT_HINT_NEW: past stage_flow */
	/* stage_forward's l_hold: each one's IP header and start as it
	 * arrived (before NAT and the TTL), for the host unreachable if it is
	 * never sent. Last: rarely touched, and the fields above keep their
	 * short offsets. */
	uint8_t hold_head[PIPE_BURST][PIPE_HOLD_HEAD];
	uint16_t hold_head_len[PIPE_BURST];
};

struct pipe_nat_pool {
	struct nat_pool pool;
	struct nat_pool_config cfg;	/* to find it again on reload */
};

/* One policy generation, for one worker: everything that comes from the
 * artifact. Built off the packet path (pipe_policy_build), made current
 * between two bursts (pipe_adopt), freed once no flow refers to the one
 * before (the sweep). */
/* pipe_worker.redirect's entries: a tuple's keyed hash (0: free) and
 * the worker its flow lives on. */
struct pipe_redirect {
	uint64_t tag;
	uint32_t worker;
};

/* A policy's DNAT entries as packet_home reads them: nat_acl indices
 * into view, in rule order, and the ports they may take. */
struct pipe_dnat_set {
	const struct rfw_view *view;
	struct cls_sets sets;
	const uint32_t *entries;
	uint32_t count;
	const uint64_t *dports;	/* NULL: any port */
	uint32_t *own_entries;	/* pipe_policy_keep_dnat's copies */
	uint64_t *own_dports;
	struct nat_match match;	/* over entries */
	struct pipe_dnat_set *older;	/* those kept from before them; NULL: none */
};

struct pipe_policy {
	const struct rfw_view *view;
	uint32_t rule_count;
	uint32_t tag;			/* generation & PIPE_TAG_GEN */
	uint32_t prev_tag;		/* the generation it follows (remap's) */
	uint8_t recheck;		/* enum pipe_flow_policy */
	int rules_see_invalid;		/* some rule names `state: invalid` */
	struct cls_table acl;
	struct lpm route4, route6;
	int have_route4, have_route6;
	uint8_t port_if[PIPE_MAX_PORTS];		/* port -> policy interface */
	uint8_t if_port[RFW_MAX_INTERFACES];		/* policy interface -> port */
	struct pipe_counters *counters;
	struct pipe_rule_stats *rules;			/* per rule (in counters) */
	uint64_t *limited;				/* per rule (in counters) */
	/* NAT entries (nat_acl indices) by kind, each in rule order: the
	 * DNAT ones first, then SNAT and masquerade; a stage scans its own
	 * kind only, and DNAT none when the policy has no DNAT. */
	uint32_t *nat_entries;
	uint32_t nat_dnat_count, nat_entry_count;
	struct nat_match dnat_match, snat_match;	/* over each kind's */
	/* With handoff: bit p set when some DNAT entry takes destination
	 * port p (all of them for an entry without ports), so a frame's
	 * worker is found without scanning the DNAT rules for the ports none
	 * takes; NULL without handoff or DNAT. */
	uint64_t *dnat_dports;
	/* Those of them where a packet a DNAT rule homed may be the answer
	 * of a flow its own tuple homes (second_chance): ports an SNAT rule
	 * may also give out (a translated flow's reply), and the ports of
	 * DNAT entries that take more than one destination address (an
	 * inside host's routed flow's reply); NULL when none. */
	uint64_t *dnat_answer_dports;
	/* With handoff: some DNAT entry takes packets without ports (ICMP,
	 * GRE, ESP, ...; an entry without a protocol or port condition):
	 * such a packet it homed may be the answer of a flow its own tuple
	 * homes (a masqueraded ping's reply, an error to a routed host). */
	uint8_t dnat_portless;
	/* With handoff, after a reload that changed the DNAT rules: those
	 * of the policy before, then of those kept with it, newest first, at
	 * most PIPE_DNAT_KEPT_MAX (pipe_policy_keep_dnat); NULL otherwise */
	struct pipe_dnat_set *prev_dnat;
	int32_t *snat_pool;		/* per NAT rule: worker pool index or -1 */
	int32_t *masq_pool;		/* per NAT rule x port: pool index or -1 */
	struct pipe_nat_pool **add_pools;	/* made by the build, the worker's at adopt */
	uint32_t nadd;
	struct rl_table rl;
	int have_rl;
	const uint32_t *remap;		/* previous generation's rule -> ours, or GONE */
	uint32_t remap_count;
	uint32_t *own_remap;		/* remap, when the build made it */
	uint32_t *limit_fwd;		/* previous generation's limit -> ours */
	/* the ports' addresses it was built with (masquerade pools), the
	 * worker's pipe_config from adoption on */
	struct pipe_port_addrs addrs[PIPE_MAX_PORTS];
};

/* A policy's per-rule counters, one allocation; reused zeroed by a
 * later build (pipe_counters_take) so that a reload need not clear them
 * before it publishes. */
struct pipe_counters {
	uint32_t cap;			/* rules + 1 they have room for */
	struct pipe_rule_stats *rules;
	uint64_t *limited;
	struct pktlog_bucket *logb;	/* per rule: its log records' rate */
};

/* snat_reclaim: conntrack entries looked at for a port, at most, per
 * new flow that finds its pool full (about 7 KB of entries) */
#define PIPE_NAT_RECLAIM_LOOK 64u

/* Handoff of fragments: where a fragmented datagram's first fragment
 * went from this worker, for its other fragments, which carry no ports
 * and follow it (pipeline.c fragment_home): on the datagram's worker,
 * the worker that owns its flow as the first fragment's ports say; on
 * a worker that handed the first fragment on (a second chance), that
 * worker. Direct-mapped by the datagram's hash, which doubles as the
 * tag. */
#define PIPE_DGRAM_SLOTS 4096u
#define PIPE_DGRAM_TIMEOUT 30u	/* seconds: Linux's ipfrag_time */
/* Handoffs a non-first fragment makes at most: to its datagram's
 * worker, to the home of its first's flow, then the first's second
 * chance (each kept DNAT rule set's worker, its own tuple's, back), so
 * that a stale entry cannot send it round for ever. */
#define PIPE_FRAG_HOPS_MAX (PIPE_DNAT_KEPT_MAX + 4u)
struct pipe_dgram {
	uint64_t tag;
	uint32_t expire;	/* the burst clock's second */
	uint32_t worker;
};

struct pipe_worker {
	/* the builder's (pipe_set_port_addrs), copied into each policy it
	 * builds; never read by the worker's own thread */
	struct pipe_port_addrs next_addrs[PIPE_MAX_PORTS];
	/* hot: read every burst */
	enum pipe_mode mode;
	uint32_t nports;
	int stateful;			/* fixed for the worker's life */
	int handoff;			/* pipe_config.handoff, in force */
	struct pipe_dgram *dgrams;	/* handoff: fragmented datagrams' owners */
	struct pipe_policy *pol;	/* current generation */
	struct ct_table *ct;
	struct pipe_stats stats;
	struct pipe_nat_pool **pools;	/* every pool made, PIPE_MAX_POOLS room */
	uint32_t npools;
	struct pipe_burst burst;
	uint64_t now_ns;		/* the burst's clock */
	struct flowcache fc;
	int have_fc;
	int express_ct;			/* express_conntrack (stateful, no_flow_cache 0 or 2) */
	uint32_t fc_epoch;		/* moves on adopt and neighbour changes */
	uint32_t fc_evict;		/* cache_insert's take-over count */
	struct flowcache_rest fc_rest;	/* whether to probe it (flowcache_judge) */
	/* router mode: each port's MTU (UINT32_MAX: none), and the longest
	 * frame the flow-cache paths may take (14 + the smallest MTU), as
	 * they do not check it: longer ones take the full path */
	uint32_t mtu[256];	/* by pipe_pkt.out_port, so no bounds check */
	uint32_t cache_max_len;
	/* any mode: the MSS each port's MTU allows an IPv4 and an IPv6
	 * segment, for defaults.tcp_mss: clamp (0: MTU unknown) */
	uint16_t mss4[256], mss6[256];
	/* pipe_config.reply_rate's bucket, in nanoseconds of credit: a
	 * reply costs reply_cost, the credit grows with the burst clock up
	 * to reply_cap */
	uint64_t reply_cost, reply_cap, reply_credit, reply_last_ns;
	/* pipe_extra: fragments beyond the first, and their frames */
	struct pipe_pkt extra[PIPE_MAX_EXTRA];
	uint32_t nextra;
	uint8_t (*extra_room)[PIPE_EXTRA_ROOM];
	/* pipe_held_poll: packets waiting for their next hop's MAC */
	struct pipe_held {
		uint64_t until_ns;	/* 0: free */
		uint32_t len, l3_off;
		uint8_t hop[16];
		uint8_t in_port, out_port, family;
		uint16_t head_len;	/* of held_head[slot] */
	} held[PIPE_MAX_HELD];
	uint32_t nheld;
	uint8_t (*held_room)[PIPE_EXTRA_ROOM];
	/* pipe_frag_take: non-first fragments waiting for their first */
	struct pipe_parked {
		uint64_t until_ns;
		uint8_t tag;		/* of the datagram, for parked_seen */
		uint8_t state;		/* enum park_state (pipeline.c) */
		uint8_t in_port, homed, second;
		uint32_t len;
	} parked[PIPE_MAX_PARKED];
	uint32_t nparked, nlent;
	/* a bit per tag of the datagrams whose first fragment came since
	 * the last pipe_frag_take (only while some are parked) */
	uint64_t parked_seen;
	uint64_t park_next_ns;	/* no waiting slot's time is up before */
	uint8_t (*park_room)[PIPE_EXTRA_ROOM];
	/* snat_reclaim: where its next look at the flows starts */
	uint32_t reclaim_cursor;
	/* With handoff, after a state file was restored: flows one of whose
	 * directions is homed on this worker but that live on another (a
	 * masqueraded flow restored into another worker count lives where
	 * its port's share is), by the tuple of that direction's packets;
	 * a packet that finds no flow here goes there (enum pipe_second).
	 * Made before the worker runs, read-only after until every worker's
	 * restored_flows is 0 (pipe_drop_redirects); NULL: none. */
	struct pipe_redirect *redirect;
	uint32_t redirect_mask, redirect_count;
	/* The flows restored here that other workers' redirects point at, a
	 * bit each by entry (NULL: none), and how many are left (they end:
	 * release_nat). Read by the main thread (__atomic, relaxed). */
	uint64_t *restored_mark;
	uint32_t restored_flows;
	/* reload: flows still tagged with the generation before */
	uint32_t sweep_cursor;
	int sweeping;
	/* With handoff, while DNAT rules of the policy before are kept
	 * (enum pipe_second): the flows that were there at the change and
	 * that those rules may home (pipe_policy.c kept_mark_one), a bit
	 * each by entry, and how many are left (they end: release_nat).
	 * None left and none to look at: the rules are needed no more
	 * (pipe_dnat_kept_needed). kept_flows and kept_marking are read by
	 * the main thread (__atomic, relaxed). */
	uint64_t *kept_mark;	/* NULL without handoff */
	uint32_t kept_flows;
	uint32_t kept_cursor;
	uint8_t kept_marking;
	/* The flows whose SNAT pair has their own source address (with
	 * another port, or their own: no translation to see), a bit each by
	 * entry: their tuples do not tell that they hold a pool's pair, so
	 * release_nat gives it back by this (pipe_snat_own_address). NULL
	 * without conntrack. */
	uint64_t *own_address_mark;
	struct pktcap_ring *cap;	/* pipe_set_capture; NULL: none */
	/* packet log (pipe_set_log); NULL: off */
	struct pktlog_ring *log;
	uint32_t log_rate;
	struct pktlog_bucket log_invalid;
	/* cold */
	struct pipe_config cfg;
	/* NAT pools' start (nat_pool_config.start_seed): random when the
	 * config's seed is (0), else 0 so a fixed seed replays the same. */
	uint64_t nat_start;
	struct neigh_table neigh;
	struct pipe_nexthop unresolved[PIPE_UNRESOLVED];	/* pipe_unresolved */
	uint32_t nunresolved;
	/* each held packet's head as it arrived (pipe_burst.hold_head's) */
	uint8_t held_head[PIPE_MAX_HELD][PIPE_HOLD_HEAD];
};

/* 0 when no DNAT entry can take destination port `port` (handoff). */
static inline int pipe_dnat_port_may(const struct pipe_policy *p, uint16_t port)
{
	return !p->dnat_dports || (p->dnat_dports[port >> 6] >> (port & 63)) & 1;
}

/* The worker (of w's count) that owns the flow of a tuple (home.h). */
static inline uint32_t pipe_home_of(const struct pipe_worker *w, const uint8_t src[16],
				    const uint8_t dst[16], uint16_t sport, uint16_t dport,
				    uint8_t proto, uint8_t family)
{
	uint32_t worker;

	if (w->cfg.rss_home &&
	    rss_home_worker(w->cfg.rss_home, src, dst, sport, dport, proto, family, &worker))
		return worker;
	return home_worker(home_hash(src, dst, sport, dport, proto, w->cfg.home_seed),
			   w->cfg.worker_count);
}

/* pipe_home_of for an IPv4 frame without options (f: the frame; the
 * addresses at 26, the ports at 34), as the express path takes it. */
static inline uint32_t pipe_home_frame4(const struct pipe_worker *w, const uint8_t *f,
					uint16_t sport, uint16_t dport)
{
	uint32_t worker;

	if (w->cfg.rss_home && rss_home_worker4(w->cfg.rss_home, f + 26, f[23], &worker))
		return worker;
	return home_worker(home_hash4(f + 26, f + 30, sport, dport, f[23], w->cfg.home_seed),
			   w->cfg.worker_count);
}

/* pipe_policy.c */
int pipe_flow_restamp_rule(const struct pipe_policy *p, uint32_t stored, uint32_t *rule);

/* Before w runs (pipe_state_restore): packets with this conntrack tuple
 * that find no flow on w go to `worker` (pipe_worker.redirect). -1: no
 * memory. */
int pipe_redirect_add(struct pipe_worker *w, const uint8_t *src, const uint8_t *dst,
		      uint16_t sport, uint16_t dport, uint8_t proto, uint32_t worker);
/* The workers a packet of this tuple (addresses 16 bytes, IPv4 in the
 * first 4) is homed on by the current policy's DNAT rules, arriving on
 * any of w's ports (a rule may name a zone), into homes[] (room for
 * PIPE_MAX_PORTS), each once; 0 when no DNAT rule takes it (or it has
 * no ports). */
int pipe_dnat_homes(const struct pipe_worker *w, const uint8_t *src, const uint8_t *dst,
		    uint16_t sport, uint16_t dport, uint8_t proto, uint8_t family, uint32_t *homes);
/* Before w runs (pipe_state_restore): flow, restored on w, is one that
 * another worker's redirects point at; the redirects are needed until
 * it and the others like it end. -1: no memory. */
int pipe_redirect_target(struct pipe_worker *w, uint32_t flow);
/* flow (live on w) holds a pool's pair that is its own source address:
 * release_nat gives it back when the flow ends. */
void pipe_snat_own_address(struct pipe_worker *w, uint32_t flow);

#endif
