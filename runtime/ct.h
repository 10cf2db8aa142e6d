/* Connection tracking, one table per worker: flows found in either
 * direction, pf-style TCP window tracking, UDP/ICMP pseudo-flows, ICMP
 * errors RELATED to their flow, IPv4 fragments following their first. */
#ifndef RAMPART_CT_H
#define RAMPART_CT_H

#include <stddef.h>
#include <stdint.h>
#include "rampart/artifact.h"
#include "pkt.h"

/* A flow handle is its index in the table; CT_NONE is "no flow". */
#define CT_NONE 0xffffffffu
/* Handles (and so max_flows) fit in 24 bits: the index slot keeps the
 * rest of its 32 bits for a hash tag (see ct.c). 16.7 M flows x 128 B is
 * 2 GiB per worker, beyond any sensible shard. */
#define CT_MAX_FLOWS ((1u << 24) - 1)

enum ct_dir {
	CT_DIR_ORIG = 0,	/* same direction as the packet that created the flow */
	CT_DIR_REPLY = 1,
};

struct ct_table;

struct ct_config {
	uint32_t max_flows;	/* defaults.conntrack.max_flows, 1..CT_MAX_FLOWS */
	uint32_t timeout[RFW_TIMEOUT_COUNT];	/* seconds; 0 is taken as 1 */
	uint64_t seed;		/* hash key; 0: drawn from getrandom() at create */
	uint32_t frag_slots;	/* fragment table entries; 0: CT_FRAG_SLOTS */
	uint32_t frag_timeout;	/* seconds; 0: CT_FRAG_TIMEOUT */
	/* Called just before a flow is freed (expiry, ct_remove, reuse),
	 * with the flow still readable by ct_flow_get: NAT returns the
	 * flow's port here. NULL: none. */
	void (*on_remove)(void *ctx, const struct ct_table *t, uint32_t flow);
	void *on_remove_ctx;
};
#define CT_FRAG_SLOTS 1024u
#define CT_FRAG_TIMEOUT 5u

/* The conntrack part of a compiled policy (max_flows, timeouts). */
void ct_config_from_policy(struct ct_config *c, const struct rfw_policy *p);

/* Allocates and touches everything up front. NULL + errno (EINVAL for a
 * bad config, ENOMEM). */
struct ct_table *ct_create(const struct ct_config *cfg);
void ct_destroy(struct ct_table *t);

/* Total bytes allocated by the table / max_flows: the per-flow memory
 * cost including the index, the wheel and the fragment table. */
double ct_bytes_per_flow(const struct ct_table *t);
/* The table's capacity in flows (ct_config.max_flows). */
uint32_t ct_max_flows(const struct ct_table *t);

/* One packet as the pipeline holds it: the parser's result and its frame
 * (conntrack reads TCP options, ICMP ids and ICMP error payloads from it,
 * always within len). */
struct ct_pkt {
	const struct pkt_meta *meta;
	const uint8_t *frame;
	uint32_t len;
};

/* The tuple conntrack hashes and compares (its layout is not an API).
 * IPv4 addresses in the first 4 bytes, the rest zero, as in pkt_key; for
 * ICMP echo both ports are the identifier, so request and reply keys
 * mirror each other. */
struct ct_key {
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport, dport;
	uint8_t family, proto;	/* pkt_key's order: key_of copies them in one go */
	uint16_t zero;
};

enum ct_kind {
	CT_FOUND = 0,		/* flow of a tracked flow: see flow, dir */
	CT_NEW,			/* no flow; the packet may start one (rules decide) */
	CT_RELATED,		/* ICMP error about a tracked flow: flow, dir */
	CT_FRAG,		/* non-first fragment of an accepted first: flow (may
				 * be CT_NONE when accepted without state), dir, rule */
	CT_FRAG_ORPHAN,		/* non-first fragment, first not (yet) seen: drop */
	CT_FRAG_OVERLAP,	/* non-first fragment inside its first's judged
				 * upper-layer header (RFC 1858): malformed, drop */
	CT_INVALID,		/* cannot start a flow and belongs to none */
};

struct ct_result {
	uint32_t flow;		/* CT_NONE unless FOUND/RELATED/FRAG */
	uint32_t rule;		/* rule that accepted the flow (FOUND/RELATED/FRAG) */
	uint8_t dir;		/* enum ct_dir of this packet */
	uint8_t state;		/* enum rfw_state bit for pkt_key.ct_state */
	uint8_t kind;		/* enum ct_kind */
	uint8_t flags;		/* enum ct_result_flags; only ABSENT from ct_lookup_batch */
};

enum ct_result_flags {	/* set by ct_track_batch (ABSENT by ct_lookup_batch too) */
	CT_RF_INVALID = 1u << 0,	/* ct_update refused the packet: flow untouched */
	CT_RF_NAT = 1u << 1,		/* ct_flow_nat(flow): the flow translates */
	CT_RF_ABSENT = 1u << 2,		/* CT_NEW, and no entry of any age holds the
					 * tuple: see ct_create_hint.absent */
};

/* Find the flow of each packet (hash buckets prefetched for the whole
 * batch first, then flow entries). Changes no flow; a flow past its
 * timeout is not found even when ct_expire has not reaped it yet. A TCP
 * SYN on a closed flow (TIME_WAIT, reset) is CT_NEW from either side (the
 * ports are being reused; from the old responder, the other way round),
 * but CT_INVALID from the reply side of a translated flow. Counts
 * invalid packets and orphan fragments. */
void ct_lookup_batch(struct ct_table *t, const struct ct_pkt *pkts, uint32_t n,
		     uint32_t now, struct ct_result *out);

/* ct_lookup_batch, then ct_update of every packet that found a flow
 * (FOUND, RELATED, FRAG with a flow), each right after its lookup while
 * its entry is in cache, and flags instead of separate ct_update and
 * ct_flow_nat calls. One difference from those calls in sequence: a
 * packet sees the updates of the packets before it in the batch, as it
 * would one packet at a time (an RST followed by a SYN of the same
 * tuple: the SYN is NEW, the port being reused). */
void ct_track_batch(struct ct_table *t, const struct ct_pkt *pkts, uint32_t n,
		    uint32_t now, struct ct_result *out);

/* The flow cache's hit path (flowcache.h): for each packet the flow, the
 * direction and the rule value (as the flow stores it, tagged) the cache
 * remembers. The caller promises TCP/UDP/SCTP packets that are neither
 * fragments nor TCP SYNs (a SYN may open a new connection over a closed
 * one: the lookup decides). OK when the flow is alive, still holds that
 * rule value and the packet's tuple in that direction, and is either
 * untranslated or an IPv4 flow (OK_NAT: h[i].wire is the tuple the packet
 * leaves with, read from the flow itself, so a flow that reuses the slot
 * with another translation cannot be given the old one); the packet is
 * then accounted as ct_track_batch accounts it. INVALID: it was the
 * flow's, but TCP tracking refused it (flow untouched, counted invalid).
 * MISS changes nothing: look the packet up as usual. */
enum ct_hint_result {
	CT_HINT_MISS = 0,
	CT_HINT_OK,
	CT_HINT_OK_NAT,
	CT_HINT_INVALID,
	CT_HINT_NEW,		/* ct_find4_batch only: a UDP frame whose tuple no
				 * entry of any age holds, which ct_track_batch
				 * answers CT_NEW with CT_RF_ABSENT (nothing
				 * changed or counted either way) */
	CT_HINT_NEW_EXPIRED,	/* ct_find4_batch only: a UDP frame whose tuple
				 * only an expired entry holds: CT_NEW without
				 * CT_RF_ABSENT (the create recycles the entry) */
	CT_HINT_NOFLOW,		/* ct_find4_batch only: a TCP frame (never a SYN
				 * there) of no live flow, which ct_track_batch
				 * answers CT_INVALID and counts invalid; not
				 * counted here: the caller that takes the
				 * answer counts it (ct_count_invalid) */
};

/* Count n packets invalid as ct_track_batch counts its CT_INVALID
 * answers: for the CT_HINT_NOFLOW frames a caller took. */
void ct_count_invalid(struct ct_table *t, uint32_t n);

struct ct_hint_wire {		/* IPv4; ports in host order */
	uint8_t src[4], dst[4];
	uint16_t sport, dport;
};

/* One packet for ct_hint_batch: what the cache remembers of its flow
 * (in) and the answer (out), side by side so that a burst's hints are
 * one array. */
struct ct_hint {
	struct ct_pkt pkt;
	uint32_t flow, rule;
	uint8_t dir;
	uint8_t result;			/* out: enum ct_hint_result */
	struct ct_hint_wire wire;	/* out, CT_HINT_OK_NAT */
};

/* The caller prefetches each hint's flow as it gathers them (the entry
 * of flow f is ct_flow_entries(t) + f, f < ct_max_flows(t)), so the
 * misses of a burst overlap. */
void ct_hint_batch(struct ct_table *t, struct ct_hint *h, uint32_t n, uint32_t now);
const struct ct_flow *ct_flow_entries(const struct ct_table *t);

/* ct_hint_batch for IPv4 TCP/UDP frames nobody has parsed (the
 * pipeline's express path): the tuple as the frame holds it, IPv4 header
 * at byte 14 without options, TCP/UDP header at 34 (pkt_fast_frame), not
 * a TCP SYN. Same answers and accounting as ct_hint_batch. */
struct ct_hint4 {
	const uint8_t *frame;
	uint32_t len;
	uint32_t flow, rule;		/* in: what the flow cache remembers */
	uint8_t dir;
	uint8_t result;			/* out: enum ct_hint_result; for OK_NAT
					 * the wire is ct_flow_wire4's */
};

void ct_hint4_batch(struct ct_table *t, struct ct_hint4 *h, uint32_t n, uint32_t now);

/* ct_hint4_batch without a hint, for the express frames the flow cache
 * does not hold (or while it rests): each frame's flow found in the
 * index as ct_track_batch finds it (in: frame, len; out: result, and for
 * OK, OK_NAT and INVALID the flow, dir and rule value). Same promise
 * (IPv4 TCP/UDP at pkt_fast_frame's offsets, not a TCP SYN, so a closed
 * connection is never reopened here), same answers and accounting. For
 * a frame of no live flow the answer is ct_track_batch's too, and
 * nothing is changed or counted: NEW (UDP, no entry holds the tuple) or
 * NEW_EXPIRED (only an expired entry, not yet reaped, does) for CT_NEW;
 * NOFLOW (a TCP segment) for CT_INVALID, which the caller counts with
 * ct_count_invalid when it takes the answer. MISS is never returned. */
void ct_find4_batch(struct ct_table *t, struct ct_hint4 *h, uint32_t n, uint32_t now);

enum ct_create_status {
	CT_CREATED = 0,		/* *flow is the new flow */
	CT_EXISTS,		/* an earlier packet (same batch) created it: *flow,
				 * the packet was applied with ct_update */
	CT_REFUSED_FULL,	/* table full and nothing to evict: counted, caller
				 * applies defaults */
	CT_REFUSED_INVALID,	/* cannot start a flow (TCP without a bare SYN,
				 * ICMP echo reply, non-first fragment, ...) */
};

/* Create the flow of an accepted NEW packet. reply_key: the tuple reply
 * packets will carry on the wire (NAT sets the translated addresses and
 * ports; for ICMP echo sport = dport = the reply's identifier), or NULL
 * for the plain reverse of the packet's own key. The packet is counted in
 * the ORIG direction. Full table: a flow that is not established and
 * that no packet touched this `now` second may be evicted to make room
 * (early drop, see ct.c), so a caller must not hold a flow index across a
 * create unless the flow was made or refreshed at this `now` (the
 * pipeline copies what it needs of an ICMP error's or a fragment's flow,
 * which do not refresh it, before its creates: flow_known). */
int ct_create_flow(struct ct_table *t, const struct ct_pkt *p,
		   const struct pkt_key *reply_key, uint32_t rule, uint32_t now,
		   uint32_t *flow);

/* Optional, for a batch of creates: prefetch the index buckets the flow's
 * two tuples will go into. The reply tuple's bucket is the miss nothing
 * else hides (a NAT tuple is known only once NAT has picked it). Call it
 * for every packet of the batch once its reply key is known, then
 * ct_create_flow_hinted for each with the same arguments and the hint
 * this filled (or NULL: only the prefetch), so the create does not hash
 * the two tuples again. Changes nothing in the table. */
struct ct_create_hint {
	/* the packet's key and its reply tuple's: the create does not make
	 * them again */
	struct ct_key orig, reply;
	uint64_t orig_hash, reply_hash;
	uint8_t valid;		/* 0: the packet cannot start a flow; hashes unset */
	/* Set by the caller, 0 from ct_create_prefetch: the packet's lookup
	 * said CT_RF_ABSENT and no flow has been created since with a tuple
	 * (either direction) of orig_hash. The create then skips its probe
	 * for an existing flow on the packet's tuple; only removals may have
	 * happened in between, and they cannot make one appear. */
	uint8_t absent;
};

void ct_create_prefetch(const struct ct_table *t, const struct ct_pkt *p,
			const struct pkt_key *reply_key, struct ct_create_hint *hint);

/* ct_create_flow with the hashes ct_create_prefetch computed for the
 * same packet and reply key (hint NULL or not valid: computed here). */
int ct_create_flow_hinted(struct ct_table *t, const struct ct_pkt *p,
			  const struct pkt_key *reply_key, uint32_t rule, uint32_t now,
			  uint32_t *flow, const struct ct_create_hint *hint);

/* Account a packet of a FOUND/RELATED/FRAG flow: TCP sequence tracking
 * and state, counters, timeout refresh. Returns 1 if valid for the flow;
 * 0 if not (out of window, bad flags): counted as invalid, the flow left
 * untouched, the caller sets ct_state INVALID. */
int ct_update(struct ct_table *t, uint32_t flow, unsigned dir,
	      const struct ct_pkt *p, uint32_t now);

/* Reap flows whose timeout has passed, doing at most `budget` units of
 * work (a flow examined or a wheel second advanced). Call once per batch.
 * Returns the number of flows removed. */
uint32_t ct_expire(struct ct_table *t, uint32_t now, uint32_t budget);

/* Remove one flow now (reload re-check, tests). */
void ct_remove(struct ct_table *t, uint32_t flow);

/* fn(ctx, t, flow) for each live flow among at most `budget` entries
 * from *cursor on; *cursor moves past them. 1 while entries remain,
 * 0 once the last one in use was looked at. */
int ct_each(const struct ct_table *t, uint32_t *cursor, uint32_t budget,
	    void (*fn)(void *ctx, const struct ct_table *t, uint32_t flow), void *ctx);

/* Early drop for another resource than the table (a NAT pool's ports):
 * evict the first flow that early drop could (not established, not
 * touched this second) and that want(ctx, t, flow) picks, among at most
 * `look` entries from *cursor on, wrapping; *cursor moves past those
 * looked at, so that calls in turn go round the table. 1 if one went
 * (counted `evicted`; on_remove ran), else 0. */
int ct_evict_scan(struct ct_table *t, uint32_t *cursor, uint32_t look, uint32_t now,
		  int (*want)(void *ctx, const struct ct_table *t, uint32_t flow), void *ctx);

/* ---- Reload: the rule a flow (or fragment entry) stores is opaque to
 * conntrack; the pipeline keeps a policy generation tag in it. ---- */

/* New timeouts (seconds, 0 taken as 1) for packets from now on; flows
 * keep the expiry they have until their next packet. now: the second of
 * the last packets accounted under the timeouts replaced (the caller's
 * latest `now`); in it, early drop still knows the flows they touched. */
void ct_set_timeouts(struct ct_table *t, const uint32_t timeout[RFW_TIMEOUT_COUNT],
		     uint32_t now);
/* Overwrite a live flow's rule. */
void ct_flow_set_rule(struct ct_table *t, uint32_t flow, uint32_t rule);
/* Rewrite the rule of live flows and fragment entries, rule = fn(ctx,
 * rule), over at most `budget` slots from *cursor (start at 0). Returns
 * 1 while slots remain, 0 once the whole table has been seen. */
int ct_rewrite_rules(struct ct_table *t, uint32_t *cursor, uint32_t budget,
		     uint32_t (*fn)(void *ctx, uint32_t rule), void *ctx);

/* Fragments: after the caller accepted a first fragment (meta->fragment
 * == 1), remember its verdict so the non-first fragments with the same
 * (src, dst, proto, IP id) follow it for frag_timeout seconds. flow may
 * be CT_NONE (accepted by a stateless rule). Fragments arriving before
 * their first are CT_FRAG_ORPHAN: dropped and counted, not buffered. */
void ct_frag_accept(struct ct_table *t, const struct ct_pkt *p, uint32_t flow,
		    unsigned dir, uint32_t rule, uint32_t now);
/* A first fragment (meta->fragment == 1) came: the entry of an earlier
 * datagram with the same (src, dst, proto, IP id), if any, is forgotten,
 * so that this datagram's other fragments follow this first (once
 * ct_frag_accept takes it) or nothing, never the earlier one's flow. */
void ct_frag_forget(struct ct_table *t, const struct ct_pkt *p);

/* TCP state of a flow as a whole, from both peers' states. */
enum ct_tcp_state {
	CT_TCP_NONE = 0,	/* not TCP */
	CT_TCP_SYN_SENT,	/* SYN seen, no answer yet */
	CT_TCP_SYN_RECV,	/* SYN+ACK seen, handshake not complete */
	CT_TCP_ESTABLISHED,
	CT_TCP_FIN_WAIT,	/* one side has sent FIN */
	CT_TCP_CLOSING,		/* both sides sent FIN, not both acknowledged */
	CT_TCP_TIME_WAIT,	/* both FINs acknowledged */
	CT_TCP_CLOSED,		/* reset */
	CT_TCP_STATE_COUNT,
};
const char *ct_tcp_state_name(unsigned s);

/* A flow as listed by `rampartctl flows`. Keys as pkt_key fields
 * (addresses, ports, proto, family); for ICMP echo the ports hold the id. */
struct ct_flow_info {
	uint32_t flow;
	uint32_t rule;
	struct pkt_key orig, reply;
	uint8_t tcp_state;	/* enum ct_tcp_state */
	uint8_t reply_seen;
	uint32_t expire;	/* `now` value at which it expires */
	uint64_t packets[2], bytes[2];	/* per enum ct_dir; bytes are frame bytes */
};

/* The tuple a packet's flow is known by, whichever direction it goes:
 * its own (the ICMP echo identifier in both ports), an ICMP error's
 * quoted packet's, a non-first fragment's addresses; zeros for a packet
 * conntrack cannot key. For choosing the flow's worker (home.h). */
void ct_packet_tuple(const struct ct_pkt *p, struct ct_key *k);
/* A fragment's identification (IPv4 header id, IPv6 fragment header's)
 * and the protocol all fragments of its datagram name (IPv4's; IPv6: the
 * fragment header's next header, which for a first fragment need not be
 * its upper layer, meta->key.proto): 1, or 0 when the frame does not hold
 * them. */
int ct_packet_frag_id(const struct ct_pkt *p, uint32_t *id, uint8_t *proto);

/* Per packet of a known flow (cheaper than ct_flow_get): does the flow
 * translate (reply tuple other than the reverse of the original), and one
 * direction's tuple as a pkt_key (addresses, ports, proto, family). */
int ct_flow_nat(const struct ct_table *t, uint32_t flow);
void ct_flow_tuple(const struct ct_table *t, uint32_t flow, unsigned dir, struct pkt_key *k);

/* Fill *info for a live flow; -1 if flow is not a live flow. */
int ct_flow_get(const struct ct_table *t, uint32_t flow, struct ct_flow_info *info);

/* Call fn for every live flow (a scan of the flow array: for listing,
 * not for the packet path). Stops early when fn returns non-zero. */
void ct_foreach(const struct ct_table *t,
		int (*fn)(const struct ct_flow_info *info, void *arg), void *arg);

struct ct_stats {
	uint64_t in_use;	/* flows now */
	uint64_t created;
	uint64_t expired;	/* reaped by ct_expire */
	uint64_t removed;	/* by ct_remove or reused (SYN on a closed flow) */
	uint64_t refused_full;
	uint64_t evicted;	/* not established, dropped to make room (table full) */
	uint64_t invalid;	/* packets: out of window, bad flags, stray */
	uint64_t related;	/* ICMP errors matched to a flow */
	uint64_t frag_hit;
	uint64_t frag_orphan;	/* non-first fragments without their first */
	uint64_t frag_overlap;	/* non-first fragments inside their first's
				 * upper-layer header (CT_FRAG_OVERLAP) */
	uint64_t frag_evicted;	/* fragment entries overwritten while live */
};
void ct_get_stats(const struct ct_table *t, struct ct_stats *s);

/* ---- Flows over a restart: rampartd --state-file writes every flow at
 * a clean stop and reads them back at start (pipe_state.c), so the
 * connections through the firewall outlive a new binary. ---- */

/* One flow as a state file keeps it: independent of the table's layout
 * (ct_flow may change between versions; this is the file format, see
 * docs/operations.md). Addresses as pkt_key holds them (IPv4 in the
 * first 4 bytes), ports in host order (ICMP echo: the identifier). */
struct ct_saved_flow {
	uint8_t orig_src[16], orig_dst[16];
	uint8_t reply_src[16], reply_dst[16];
	uint16_t orig_sport, orig_dport, reply_sport, reply_dport;
	uint8_t proto, family;
	uint8_t reply_seen, rst;	/* 0 or 1 */
	uint8_t wscale;			/* low nibble orig, high reply; 0xf: none */
	uint8_t tstate[2];		/* enum ct_peer_state per direction */
	uint8_t zero;
	uint16_t max_win[2];
	uint32_t seqlo[2], seqhi[2];
	uint32_t ttl;			/* seconds it had left when saved */
	uint32_t rule;			/* the caller's value, stored as is */
	uint64_t pkts[2], bytes[2];
};
_Static_assert(sizeof(struct ct_saved_flow) == 144, "ct_saved_flow is a file format");

/* A live flow as saved at `now`. 0, or -1 when flow is not a live flow. */
int ct_flow_save(const struct ct_table *t, uint32_t flow, uint32_t now,
		 struct ct_saved_flow *s);

enum ct_restore_status {
	CT_RESTORED = 0,	/* *flow is the flow, as it was saved */
	CT_RESTORE_EXPIRED,	/* no time left (ttl 0) */
	CT_RESTORE_DUP,		/* a live flow already has one of its tuples */
	CT_RESTORE_FULL,	/* the table is full */
	CT_RESTORE_BAD,		/* not a flow (family, protocol, TCP state) */
};

/* Put a saved flow back with rule stored as its rule and `ttl` seconds
 * (at most the longest timeout) from now to live. */
int ct_flow_restore(struct ct_table *t, const struct ct_saved_flow *s, uint32_t rule,
		    uint32_t now, uint32_t *flow);

/* A restored TCP flow whose windows may be stale (saved by a checkpoint
 * while it ran on): the first segment from each side, not a SYN or RST,
 * is taken as it is and its sequence and acknowledgement become the
 * windows; the usual tests apply from the next one. */
void ct_flow_resync(struct ct_table *t, uint32_t flow);

/* ---- Layout, exposed for the TCP tracker (ct_tcp.c) and the size
 * assertion; not an API. ---- */

/* Per-direction TCP peer state, after pf (OpenBSD sys/net/pf.c,
 * TCPS_* per peer). */
enum ct_peer_state {
	CT_PEER_NONE = 0,	/* nothing sent yet */
	CT_PEER_SYN_SENT,
	CT_PEER_ESTABLISHED,	/* its SYN acknowledged */
	CT_PEER_CLOSING,	/* FIN sent */
	CT_PEER_FIN_WAIT_2,	/* FIN acknowledged */
	CT_PEER_TIME_WAIT,	/* both FINs acknowledged, or reset */
};

enum ct_flow_flags {
	CT_F_USED = 1u << 0,	/* a live flow (else free) */
	CT_F_AUX = 1u << 1,	/* an IPv6 NAT side entry holding reply addresses */
	CT_F_REPLY_SEEN = 1u << 2,
	CT_F_RST = 1u << 3,
	CT_F_NAT6 = 1u << 4,	/* IPv6 reply addresses live in entry `aux` */
	CT_F_NAT = 1u << 5,	/* reply tuple is not the reverse of the original */
	/* TCP restored from a checkpoint: the next segment from that side
	 * re-learns its windows (ct_flow_resync); REPLY is ORIG << 1 */
	CT_F_RESYNC_ORIG = 1u << 6,
	CT_F_RESYNC_REPLY = 1u << 7,
};

/* 112 bytes; with the index (12.8 B) the whole cost stays under 128 B a
 * flow. Ordered by what a packet of a known flow touches, because with
 * a million flows every line of an entry is a memory miss: an IPv4 UDP
 * packet reads and writes only the first 64 bytes (compare, timer, rule,
 * counters), TCP the first 84 (windows), so an entry 112 bytes from the
 * last costs a UDP packet 1-2 lines, not 2-3, and a TCP packet 2-3 (3
 * when the entry starts 48 bytes into a line: prefetchers must ask for
 * all of them, see lookup_batch). Create and expiry fields next, the
 * second half of IPv6 addresses last. Addresses: IPv4 orig src, orig
 * dst, reply src, reply dst in addr[0..16); IPv6 orig src in addr, orig
 * dst in addr6_dst, and the reply is their reverse unless CT_F_NAT6
 * (then src, dst in the addr, addr6_dst of entry aux). */
struct ct_flow {
	/* every packet */
	uint8_t addr[16];
	uint16_t port[4];	/* orig sport, dport; reply sport, dport */
	uint8_t proto;
	uint8_t family;
	uint8_t flags;		/* enum ct_flow_flags */
	uint8_t wscale;		/* low nibble orig, high reply; 0xf = no option */
	uint8_t tstate[2];	/* enum ct_peer_state per direction */
	uint8_t pkts_hi[2];	/* bits 32..39 of the packet counters */
	uint32_t expire;	/* `now` at which the flow expires */
	uint32_t rule;
	uint32_t pkts[2];
	uint64_t bytes[2];
	/* every TCP packet: van Rooij's windows */
	uint32_t seqlo[2];	/* highest sequence end sent by each side */
	uint32_t seqhi[2];	/* highest ack + window the other side allowed */
	uint16_t max_win[2];	/* largest unscaled window advertised */
	/* create, expiry, FIN/RST */
	uint32_t next, prev;	/* timer wheel list; next = free list when free */
	uint32_t aux;		/* CT_F_NAT6: entry with the reply addresses */
	/* IPv6 only */
	uint8_t addr6_dst[16];
};
_Static_assert(sizeof(struct ct_flow) == 112, "ct_flow must stay 112 bytes");
_Static_assert(offsetof(struct ct_flow, seqlo) == 64 && offsetof(struct ct_flow, next) == 84,
	       "UDP fields in the first 64 bytes, TCP's in the first 84");

/* Prefetch every line a packet of the flow touches (proto, family: the
 * packet's): UDP's 64 bytes are 1-2 lines, TCP's 84 are 2-3 (an entry
 * starting 48 bytes into a line has its middle line only under
 * f + 63), IPv6 reads the entry's end too. For the lookup and the flow
 * cache's hit path alike. */
static inline void ct_flow_prefetch(const struct ct_flow *f, uint8_t proto, uint8_t family)
{
	const char *fp = (const char *)f;

	__builtin_prefetch(fp);
	__builtin_prefetch(fp + offsetof(struct ct_flow, seqlo) - 1);
	if (proto == 6)
		__builtin_prefetch(fp + offsetof(struct ct_flow, next) - 1);
	if (family == 6)
		__builtin_prefetch(fp + sizeof(struct ct_flow) - 1);
}

/* The tuple an IPv4 packet of a translated flow leaves with, read from
 * the flow (entries + flow) itself: the reverse of the other direction.
 * For ct_hint4_batch's OK_NAT answers, before the next conntrack call. */
static inline void ct_flow_wire4(const struct ct_flow *entries, uint32_t flow, unsigned dir,
				 const uint8_t **src, const uint8_t **dst, uint16_t *sport,
				 uint16_t *dport)
{
	const struct ct_flow *f = entries + flow;
	unsigned o = (dir & 1) ^ 1;

	*src = f->addr + 8 * o + 4;
	*dst = f->addr + 8 * o;
	*sport = f->port[2 * o + 1];
	*dport = f->port[2 * o];
}

/* ct_tcp.c: TCP tracking of one segment of an existing flow (dir = its
 * direction). 1 valid (state updated), 0 invalid (nothing changed).
 * Reads the TCP header and options from the frame. */
int ct_tcp_track(struct ct_flow *f, unsigned dir, const struct ct_pkt *p);
/* Initialise the tracking of a new flow from its SYN; 0 if the segment
 * cannot open a connection (not a bare SYN). */
int ct_tcp_init(struct ct_flow *f, const struct ct_pkt *p);
enum ct_tcp_state ct_tcp_flow_state(const struct ct_flow *f);
/* Could `sender` have sent a segment starting at seq (an ICMP error's
 * quote)? Within one window of what it sent, not past what it may send. */
int ct_tcp_seq_plausible(const struct ct_flow *f, unsigned sender, uint32_t seq);

#endif
