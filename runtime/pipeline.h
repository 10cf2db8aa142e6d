/* The packet pipeline of one worker, backend-free: a backend hands it a
 * burst of frames with their ingress port, and gets back for each a
 * verdict and an egress port; frames are rewritten in place. Every
 * stage runs over the whole burst before the next (VPP's model), and
 * counts packets and cycles, so cycles/packet per stage can be shown.
 * A worker owns all of its state; nothing here locks or allocates after
 * pipe_create. */
#ifndef RAMPART_PIPELINE_H
#define RAMPART_PIPELINE_H

#include <stdint.h>
#include "addr_list.h"
#include "artifact.h"
#include "pkt.h"

struct rss_home;	/* rss_home.h */

#define PIPE_MAX_PORTS 8
#define PIPE_BURST 64
#define PIPE_NO_PORT 0xff

enum pipe_mode {
	PIPE_BRIDGE,	/* port 2k <-> 2k+1, "bump in the wire" */
	PIPE_ROUTER,	/* egress by the policy's routes */
};

enum pipe_verdict {
	PIPE_DROP = 0,
	PIPE_FORWARD,	/* send out of out_port */
	PIPE_BOUNCE,	/* the frame is now our reply: send out of in_port */
	PIPE_HANDOFF,	/* its flow is another worker's (pipe_config.handoff):
			 * give it to worker `worker`, which runs it again */
	PIPE_HELD,	/* the pipeline kept a copy, the frame goes back: in
			 * router mode its next hop is being resolved (sent
			 * later through pipe_extra, or dropped as
			 * no-neighbour); or a fragment parked until its first
			 * comes (pipe_frag_take) */
};

/* Why a frame was dropped (the worker counts each). */
enum pipe_drop {
	PIPE_DROP_NONE,
	PIPE_DROP_MALFORMED,	/* parser refused it (see the parse reasons) */
	PIPE_DROP_NON_IP,	/* router mode: ARP/ND belong to the kernel */
	PIPE_DROP_POLICY,	/* a drop/reject rule or the default */
	PIPE_DROP_NO_ROUTE,
	PIPE_DROP_NO_NEIGH,	/* next hop's MAC unknown */
	PIPE_DROP_TTL,		/* expired and no time-exceeded could be sent */
	PIPE_DROP_NO_PORT,	/* the route's interface is not one of ours */
	PIPE_DROP_CT_INVALID,	/* not valid for its flow and no rule took it */
	PIPE_DROP_FRAG_ORPHAN,	/* non-first fragment before its first */
	PIPE_DROP_CT_FULL,	/* new flow refused: conntrack table full */
	PIPE_DROP_NAT_FAILED,	/* no free address/port, or no masquerade address */
	PIPE_DROP_RATE_LIMIT,	/* over its rule's limit */
	PIPE_DROP_TOO_BIG,	/* longer than the egress port's MTU (router mode) */
	PIPE_DROP_MARTIAN,	/* router mode: an address never routed (martian.h) */
	PIPE_DROP_LOCAL,	/* router mode: to a port's own address (host.addresses not) */
	PIPE_DROP_RPF,		/* router mode: defaults.rpf, its source not routed back there */
	PIPE_DROP_COUNT,
};

/* In the order a new flow's first packet meets them. Packets of known
 * flows (when the policy is stateful) go parse -> flow -> nat -> route ->
 * forward: they skip DNAT lookup, the rules and the limits. */
enum pipe_stage {
	PIPE_ST_PARSE,
	PIPE_ST_CACHE,		/* flow cache: known flows finished in one pass */
	PIPE_ST_FLOW,		/* conntrack lookup + TCP tracking of known flows */
	PIPE_ST_DNAT,		/* DNAT rules: rules then see the real server */
	PIPE_ST_ROUTE,		/* LPM: egress port and next hop (router) */
	PIPE_ST_ACL,
	PIPE_ST_LIMIT,		/* token buckets of rules with `limit` */
	PIPE_ST_CT,		/* SNAT choice and flow creation */
	PIPE_ST_NAT,		/* frame rewrite with incremental checksums */
	PIPE_ST_FORWARD,	/* TTL, MAC rewrite, replies */
	PIPE_ST_COUNT,
};

/* A port's addresses beyond the one of each family it sends from: only
 * told apart as the firewall's own (drop reason local), never a source. */
#define PIPE_PORT_MORE_ADDRS ADDR_LIST_MORE

struct pipe_port_cfg {
	char name[16];		/* matched against the policy's interfaces */
	uint8_t mac[6];
	uint8_t has_v4, has_v6;	/* addresses replies are sent from */
	uint8_t v4[4];
	uint8_t v6[16];
	uint8_t nmore4, nmore6;	/* secondary IPv4, further global IPv6 */
	uint8_t more4[PIPE_PORT_MORE_ADDRS][4];
	uint8_t more6[PIPE_PORT_MORE_ADDRS][16];
	/* The largest IP packet the port may send (its MTU). Router mode: a
	 * longer one is answered with fragmentation-needed / packet-too-big,
	 * or, IPv4 without DF, cut into fragments. Any mode: what
	 * defaults.tcp_mss: clamp clamps to. 0: no limit, not known. */
	uint32_t mtu;
};

/* A port's addresses, as pipe_port_cfg holds them. */
struct pipe_port_addrs {
	uint8_t has_v4, has_v6;
	uint8_t v4[4];
	uint8_t v6[16];
	uint8_t nmore4, nmore6;
	uint8_t more4[PIPE_PORT_MORE_ADDRS][4];
	uint8_t more6[PIPE_PORT_MORE_ADDRS][16];
};

/* Between a port's configuration and its addresses. */
void pipe_port_addrs_get(const struct pipe_port_cfg *c, struct pipe_port_addrs *a);
void pipe_port_addrs_put(struct pipe_port_cfg *c, const struct pipe_port_addrs *a);

struct pipe_config {
	enum pipe_mode mode;
	uint32_t nports;
	struct pipe_port_cfg port[PIPE_MAX_PORTS];
	uint16_t worker_id;	/* shares of NAT ports and rule limits */
	uint16_t worker_count;	/* 0 is taken as 1 */
	uint64_t seed;		/* conntrack/limit hash key; 0 = random */
	uint32_t max_flows;	/* 0 = the policy's conntrack.max_flows */
	uint8_t no_flow_cache;	/* 1: every packet through the full pipeline (no
				 * flow cache, no express path: a reference);
				 * 2: no flow cache, the express path's
				 * conntrack lookup kept (what a worker does
				 * while its cache rests: tests, fwbench) */
	/* Replies this worker writes (reject's TCP RST and ICMP unreachable,
	 * time-exceeded) a second at most, bursts up to a tenth of that (at
	 * least 10); over it the packet is only dropped (replies_limited).
	 * Fragmentation-needed / packet-too-big are not limited: path MTU
	 * discovery depends on them (Linux exempts them too). 0: no limit. */
	uint32_t reply_rate;
	/* Router mode: hold packets whose next hop has no MAC yet
	 * (pipe_held_poll) rather than drop them; for a caller that gets
	 * next hops resolved (rampartd on AF_XDP asks the kernel). */
	uint8_t hold_unresolved;
	/* Park non-first fragments that come before their first rather than
	 * drop them (pipe_frag_take); for a caller that runs them again. */
	uint8_t park_fragments;
	/* The backend may set PIPE_RX_IPV4_CSUM_GOOD in pipe_pkt.rx_flags
	 * (a DPDK port whose NIC checks IPv4 header checksums); without it
	 * the parser does not look at rx_flags. */
	uint8_t rx_csum_flags;
	/* 1 (with worker_count > 1 and a stateful policy): frames arrive on
	 * any worker's queue; each goes to the worker that owns its flow
	 * (home.h), PIPE_HANDOFF when that is another, and SNAT picks ports
	 * whose replies map back to it. Every worker needs the same
	 * home_seed (0 is a seed like any other). */
	uint8_t handoff;
	uint64_t home_seed;
	/* With handoff: TCP and UDP flows homed on the worker whose queue the
	 * NIC's symmetric RSS sends them to (rss_home.h, rampartd --home
	 * rss), so they arrive where they belong; NULL: every flow by the
	 * keyed hash. Read only, shared by every worker; the same on all. */
	const struct rss_home *rss_home;
};

/* One frame of a burst. The pipeline sets out_port, verdict and drop. */
struct pipe_pkt {
	uint8_t *data;
	uint32_t len;
	uint32_t room;		/* bytes writable at data (replies may grow) */
	uint8_t in_port;
	uint8_t out_port;
	uint8_t verdict;	/* enum pipe_verdict */
	uint8_t drop;		/* enum pipe_drop */
	uint8_t worker;		/* PIPE_HANDOFF: the worker to give it to */
	/* in: how many times workers handed it over (backends set 0). A
	 * frame handed over once is not handed on, except a fragment: first
	 * to its datagram's worker, which knows from the first fragment
	 * which worker owns the flow, then to that one (and after its first
	 * where a second chance takes that), and a frame on a second chance
	 * (pipe_second). */
	uint8_t homed;
	/* in, read only when homed: enum pipe_second (backends need not
	 * clear it) */
	uint8_t second;
	/* in: PIPE_RX_* of what the NIC checked (0: nothing); read only
	 * with pipe_config.rx_csum_flags */
	uint8_t rx_flags;
};

/* The NIC found the frame's IPv4 header checksum right (DPDK's
 * RTE_MBUF_F_RX_IP_CKSUM_GOOD): the parser's fast path does not sum the
 * header again. Only for the IPv4 header at offset 14 of the frame as
 * received; a frame handed to another worker loses it. */
#define PIPE_RX_IPV4_CSUM_GOOD 1u

/* After a reload that changed the DNAT rules a flow they translated may
 * live on another worker than the one the rules now send its packets to
 * (the owner is found by the translated tuple). A packet that finds no
 * flow where it was sent is handed to the worker the rules before would
 * have sent it to (PROBE), and on to those of the rules kept from before
 * them (PROBE with their number in PIPE_SECOND_GEN bits); if its flow is
 * in none of them it comes back (BACK) and may start one. */
enum pipe_second {
	PIPE_SECOND_NONE = 0,
	PIPE_SECOND_PROBE = 1,
	PIPE_SECOND_BACK = 2,
	PIPE_SECOND_KIND = 0x0f,	/* the kind; above it, a PROBE's kept rules */
	PIPE_SECOND_GEN_SHIFT = 4,
};

struct pipe_stage_stats {
	uint64_t packets;	/* frames that entered the stage */
	uint64_t cycles;	/* TSC cycles spent in it */
};

struct pipe_port_stats {
	uint64_t rx_packets, rx_bytes;
	uint64_t tx_packets, tx_bytes;
	uint64_t dropped;	/* of frames received on this port */
};

struct pipe_rule_stats {
	uint64_t packets, bytes;
	uint64_t last_ns;	/* the burst clock of its last packet; 0: never */
};

/* Written by the worker only; readers on other threads see plain,
 * possibly slightly stale 64-bit values (aligned stores are atomic on the
 * 64-bit targets we build for). */
struct pipe_stats {
	struct pipe_stage_stats stage[PIPE_ST_COUNT];
	uint64_t drop[PIPE_DROP_COUNT];
	uint64_t parse_reason[PKT_REASON_COUNT];
	uint64_t non_ip;	/* non-IP frames seen (bridged or dropped) */
	uint64_t replies;	/* RST / ICMP errors sent */
	uint64_t replies_limited;	/* not sent: over pipe_config.reply_rate */
	uint64_t fragmented;	/* IPv4 datagrams sent as fragments (router) */
	uint64_t fragments;	/* the fragments they made */
	uint64_t held;		/* packets held for their next hop (router) */
	uint64_t held_sent;	/* ... and sent once it was resolved */
	uint64_t frag_parked;	/* fragments parked until their first came */
	uint64_t frag_resumed;	/* ... and run again once it had */
	uint64_t flows_hit;	/* packets of known flows (skipped the rules) */
	uint64_t related;	/* ICMP errors passed for their flow */
	uint64_t nat_rewrites;	/* frames translated */
	uint64_t mss_clamped;	/* SYNs whose MSS option defaults.tcp_mss lowered */
	uint64_t recheck_ended;	/* flows a reload's re-check refused (and ended) */
	uint64_t flow_cache_hits;	/* known-flow packets the flow cache finished */
	uint64_t express_sent;	/* ... and those the express path's conntrack
				 * lookup sent itself (express_known: the cache
				 * missed or rests), also of flows_hit */
	uint64_t handed_off;	/* frames of another worker's flows, PIPE_HANDOFF */
	uint64_t handed_in;	/* frames other workers handed to this one */
	uint64_t second_chance;	/* of handed_off: sent to look for their flow
				 * where the DNAT rules before put it */
	struct pipe_port_stats port[PIPE_MAX_PORTS];
};

struct pipe_worker;

/* NULL with errno (EINVAL: bad config, e.g. a bridge with an odd port
 * count or router mode without routes; ENOMEM). */
struct pipe_worker *pipe_create(const struct pipe_config *cfg, const struct rfw_view *view);
void pipe_destroy(struct pipe_worker *w);

/* Run one burst (any n; processed in chunks of PIPE_BURST). now_ns: the
 * caller's clock, read once per burst. */
void pipe_process(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t n, uint64_t now_ns);
/* Between bursts, when no frame came for a while: expire flows past
 * their time as a burst would (a bounded amount), so an idle worker's
 * table, pools and kept-rule counts follow the clock too. now_ns on
 * pipe_process's clock; earlier than the last burst's: nothing. */
void pipe_tick(struct pipe_worker *w, uint64_t now_ns);

const struct pipe_stats *pipe_stats(const struct pipe_worker *w);
/* Per rule of the current policy, index = rule number (0 = default),
 * rule_count + 1 entries; since its adopt (see pipe_adopt). */
const struct pipe_rule_stats *pipe_rule_stats(const struct pipe_worker *w);
/* The current policy's rule count (pipe_rule_stats has one more). */
uint32_t pipe_rule_count(const struct pipe_worker *w);
/* The policy's interface index of a port, or PIPE_NO_PORT. */
uint8_t pipe_port_policy_if(const struct pipe_worker *w, uint32_t port);

struct ct_table;
struct rl_table;
struct nat_pool;
/* The worker's conntrack table (NULL when the policy is stateless), for
 * listing flows and stats; read it only from the worker's thread or while
 * it is stopped. */
const struct ct_table *pipe_conntrack(const struct pipe_worker *w);
/* End a flow of the worker's table now, as its timeout would (rampartctl
 * flows --delete): its NAT pair goes back to its pool, its next packet
 * meets the rules as a new one. Only from the worker's thread between
 * bursts, or while it is stopped. */
void pipe_flow_end(struct pipe_worker *w, uint32_t flow);
/* Slots of the worker's flow cache (32 bytes each); 0 without one. */
uint32_t pipe_flow_cache_slots(const struct pipe_worker *w);
/* Rule limits' excess packets, per rule number (0 when none). */
uint64_t pipe_rule_limited(const struct pipe_worker *w, uint32_t rule);
/* Where packets that find no flow may look (enum pipe_second): how many
 * sets of DNAT rules of policies before are kept (one a change of them,
 * 0: none), and how many redirects a state file's restore made. w's
 * thread. */
void pipe_second_chance_sources(const struct pipe_worker *w, int *dnat_kept,
				uint32_t *redirects);

/* The redirects a state file's restore made (enum pipe_second) are
 * needed while a flow they point at lives: does one of w's still live?
 * Any thread: a relaxed read. How many redirects w has, the same way. */
int pipe_redirects_needed(const struct pipe_worker *w);
uint32_t pipe_redirect_count(const struct pipe_worker *w);
/* w's thread, between bursts: forget its redirects (no worker's
 * pipe_redirects_needed said 1). */
void pipe_drop_redirects(struct pipe_worker *w);

/* NAT pools: count, and pool i's stats (see nat.h). */
uint32_t pipe_nat_pool_count(const struct pipe_worker *w);
const struct nat_pool *pipe_nat_pool(const struct pipe_worker *w, uint32_t i);

/* Packet log: records of packets whose rule has `log: true` and of
 * packets dropped as invalid go to ring (pktlog.h), at most `rate` a
 * second per rule (and as many for invalid packets). Before the worker's
 * thread runs; NULL turns it off. */
struct pktlog_ring;
void pipe_set_log(struct pipe_worker *w, struct pktlog_ring *ring, uint32_t rate);

/* Capture on demand (pktcap.h): the worker looks at ring->want once per
 * burst. Before the worker's thread runs; NULL: none. */
struct pktcap_ring;
void pipe_set_capture(struct pipe_worker *w, struct pktcap_ring *ring);

/* Next-hop MAC for router mode; off the packet path. 0 or -1. */
int pipe_neigh_set(struct pipe_worker *w, uint32_t port, uint8_t family, const uint8_t *addr,
		   const uint8_t mac[6]);
/* Forget a next hop's MAC (it stopped answering): its packets then wait
 * and ask again as for a hop never seen. 0, or -1 when it was not known. */
int pipe_neigh_forget(struct pipe_worker *w, uint32_t port, uint8_t family, const uint8_t *addr);

/* A port's addresses from the next pipe_policy_build on (masquerade's
 * pools are made for them; the worker's replies come from them, and
 * packets to them are its own, once it adopts that policy): for a port
 * whose address changed (a DHCP uplink). Call from the thread that
 * builds policies, never while it builds one. */
void pipe_set_port_addrs(struct pipe_worker *w, uint32_t port, const struct pipe_port_addrs *a);

/* A port's MTU from now on (pipe_port_cfg.mtu; 0 = none). */
void pipe_set_mtu(struct pipe_worker *w, uint32_t port, uint32_t mtu);

/* Frames the pipeline made besides the ones it was given: the 2nd, 3rd,
 * ... fragments of IPv4 datagrams it fragmented (router mode, longer
 * than the egress port's MTU, no DF), each PIPE_FORWARD out of its
 * out_port, in the pipeline's own memory (the backend copies them, as
 * frames handed over from another worker). They pile up over
 * pipe_process calls until pipe_extra_clear; with PIPE_MAX_EXTRA of them
 * waiting, a datagram that needs more is dropped (too-big). */
#define PIPE_MAX_EXTRA 64u
/* Bytes of each (and of held and parked frames): a DPDK jumbo frame
 * (an MTU of 9600 and its L2 headers; AF_XDP's are a page at most).
 * Allocated as zero pages, touched only as frames are written. */
#define PIPE_EXTRA_ROOM 9728u
uint32_t pipe_extra(struct pipe_worker *w, struct pipe_pkt **pkts);
void pipe_extra_clear(struct pipe_worker *w);

/* Router mode with pipe_config.hold_unresolved: packets whose next hop
 * has no MAC yet are held (a copy, PIPE_HELD) while it is resolved, up to PIPE_MAX_HELD of them
 * for PIPE_HELD_NS each, instead of being dropped: the first packets to
 * a new neighbour (a TCP SYN, a DNS query) then go out as soon as its
 * address is known rather than being lost. pipe_held_poll sends the held
 * packets whose next hop now has a MAC into pipe_extra and, with now_ns
 * (0: not), drops those past their time (no-neighbour), answering each
 * with an ICMP host unreachable (ICMPv6 address unreachable) from the
 * port it came in on, into pipe_extra too (under the reply limit; not
 * with now_ns UINT64_MAX, a worker that stops); pipe_process does it
 * first, and a worker after it applied neighbour updates and, while
 * pipe_held_count says some are held, when idle (an idle router must
 * still time them out). Returns how many frames it put in pipe_extra. */
#define PIPE_MAX_HELD 16u
#define PIPE_HELD_NS 3000000000ull
uint32_t pipe_held_poll(struct pipe_worker *w, uint64_t now_ns);
uint32_t pipe_held_count(const struct pipe_worker *w);

/* With pipe_config.park_fragments: a non-first fragment that comes
 * before its datagram's first (reordered on the way, or sent last-first
 * as some stacks do) is parked, a copy (PIPE_HELD), rather than dropped
 * as frag-orphan: up to PIPE_MAX_PARKED of them, for PIPE_PARK_NS each
 * (then, or with no free slot, frag-orphan as before). pipe_frag_take
 * fills pkts with up to max of those whose datagram's first fragment
 * the pipeline has seen since, for the caller to run through
 * pipe_process as frames of their own (the pipeline's memory, as
 * pipe_extra's; they stay valid until the next pipe_frag_take). There
 * they follow their first's verdict and translation, or are parked
 * again, keeping their deadline. A parked fragment is counted as
 * received when it is run again or dropped, not when parked. It also
 * drops those past their time: now_ns is the clock to judge by, 0 for
 * the pipeline's own (the last burst's or pipe_tick's), UINT64_MAX to
 * drop them all (a worker that stops). pipe_parked_count: slots in use
 * (parked or lent); while it is not 0 the caller calls pipe_frag_take
 * between bursts, and when idle. */
#define PIPE_MAX_PARKED 64u
#define PIPE_PARK_NS 1000000000ull
uint32_t pipe_frag_take(struct pipe_worker *w, struct pipe_pkt *pkts, uint32_t max, uint64_t now_ns);
uint32_t pipe_parked_count(const struct pipe_worker *w);
/* The pipeline's clock: the last burst's, or pipe_tick's. */
uint64_t pipe_clock_ns(const struct pipe_worker *w);

/* Next hops the router found no MAC for (their packets dropped as
 * no-neighbour), for whoever can ask the kernel to resolve them (the
 * kernel only resolves an address it talks to itself). The worker keeps
 * up to PIPE_UNRESOLVED distinct ones until taken (more are dropped: a
 * later packet asks again); pipe_unresolved moves up to max of them,
 * oldest first, into out. Between bursts. */
#define PIPE_UNRESOLVED 8u
struct pipe_nexthop {
	uint8_t addr[16];	/* IPv4 in the first 4 bytes */
	uint8_t port;
	uint8_t family;		/* 4 or 6 */
};
uint32_t pipe_unresolved(struct pipe_worker *w, struct pipe_nexthop *out, uint32_t max);

/* ---- Reload (docs/operations.md). A new policy is built for each
 * worker off the packet path, made current by the worker itself between
 * two bursts (so a burst sees one policy, whole), and the old one is
 * freed after the worker has swept its flows over to the new. Conntrack,
 * NAT bindings, rate-limit state and the rule of each flow carry over;
 * rules continue by name (rule_map.h). ---- */

/* What an established flow meets when the new policy would refuse it. */
enum pipe_flow_policy {
	PIPE_FLOWS_KEEP = 0,	/* it lives on (as in most firewalls) */
	PIPE_FLOWS_RECHECK,	/* its next packet is run through the new rules
				 * as a new connection; refused, the flow ends */
};

struct pipe_policy;

/* Build w's view of `view` (verified, to outlive the result). Runs on
 * any thread while w's thread runs: reads only what the worker never
 * changes, and no other build or adopt for w may run meanwhile. map: the
 * current policy's rule -> view's rule (rule_map_build; borrowed: it must
 * outlive the result), or NULL to work it out here. spare: zeroed
 * counters to use when big enough (taken: *spare set to NULL), or NULL. NULL with a reason in err when the policy cannot replace
 * the running one here (stateful on/off, router without routes, too
 * many rules or NAT pools) or on allocation failure. */
struct pipe_counters;
struct pipe_policy *pipe_policy_build(const struct pipe_worker *w, const struct rfw_view *view,
				      const uint32_t *map, enum pipe_flow_policy flows,
				      struct pipe_counters **spare, char *err, size_t errlen);
/* With handoff: which DNAT rules a reload should keep matching with
 * besides the new policy's (enum pipe_second). `running`: the policy the
 * workers run now, `kept[0..nkept)`: those kept with it, newest first,
 * `next`: the one about to replace it. Fills keep[] (room for
 * PIPE_DNAT_KEPT_MAX), newest first, with running's and then kept's,
 * leaving out those that place DNAT flows as next does or as one before
 * them in keep[] does; returns how many. *dropped: how many the bound
 * left out (the oldest; the flows they translated lose their way). */
#define PIPE_DNAT_KEPT_MAX 4
uint32_t pipe_dnat_to_keep(const struct rfw_view *running, const struct rfw_view *const *kept,
			   uint32_t nkept, const struct rfw_view *next, const struct rfw_view **keep,
			   uint32_t *dropped);
/* Match the DNAT rules of prev[0..n) (newest first; verified, to
 * outlive p) too, for packets that find no flow (enum pipe_second); n 0:
 * none. Before adopt. 1 when kept, 0 when not (none given, or w has no
 * handoff: it needs none), -1: no memory. */
int pipe_policy_keep_dnat(const struct pipe_worker *w, struct pipe_policy *p,
			  const struct rfw_view *const *prev, uint32_t n);
/* Does any flow of w that was there when the kept DNAT rules were last
 * changed, and that they may home, live on (or has w not looked at all
 * its flows yet)? 0 also when none are kept. Any thread: relaxed reads. */
int pipe_dnat_kept_needed(const struct pipe_worker *w);
/* w's thread, between bursts: stop matching the kept DNAT rules (every
 * worker's pipe_dnat_kept_needed said 0; then no policy refers to their
 * view any more). */
void pipe_drop_kept_dnat(struct pipe_worker *w);
/* w's thread, between bursts: make p current (w owns it from now).
 * Returns the policy it replaces: keep it (its counters are final) until
 * pipe_sweep returns 0, then pipe_policy_free it. */
struct pipe_policy *pipe_adopt(struct pipe_worker *w, struct pipe_policy *p);
/* w's thread, between bursts: move up to a slice of flows to the current
 * generation. 1 while flows remain, 0 when none refer to the previous
 * policy any more. */
int pipe_sweep(struct pipe_worker *w);
void pipe_policy_free(struct pipe_policy *p);
/* Take a retired policy's counters (once read), zeroed, for a later
 * build's spare; NULL when it has none. */
struct pipe_counters *pipe_counters_take(struct pipe_policy *p);
void pipe_counters_free(struct pipe_counters *c);
const struct rfw_view *pipe_policy_view(const struct pipe_policy *p);
const struct pipe_rule_stats *pipe_policy_rule_stats(const struct pipe_policy *p);
const uint64_t *pipe_policy_limited(const struct pipe_policy *p);

const char *pipe_drop_name(unsigned drop);
const char *pipe_stage_name(unsigned stage);

#endif
