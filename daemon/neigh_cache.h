/* What rampartd's own ARP/ND has learnt (DPDK router: no kernel keeps a
 * neighbour table for those ports), kept on the main thread, which tells
 * the workers' tables (pipe_neigh_set / pipe_neigh_forget) what changes.
 * An entry is reachable for `reachable_ms` after the last answer to a
 * question of ours that confirmed it (a solicited NA; an ARP reply to a
 * probe or a solicitation); then it is probed (`probes` unicast
 * requests to its MAC, `probe_ms` apart, sent by a worker) and forgotten
 * if none is answered, so a neighbour that went away or changed its MAC
 * silently costs a few seconds, not every packet to it from then on
 * (RFC 4861 7.3's REACHABLE, PROBE; RFC 1122 2.3.2.1 for ARP). What a
 * neighbour says unasked (a request for our address, a gratuitous ARP,
 * an unsolicited NA) confirms nothing: an entry it makes or moves is
 * STALE, its MAC used but probed `delay_ms` later (RFC 4861 7.2.3,
 * 7.2.5; no DELAY state: the workers do not say which entries they use,
 * so every STALE one is probed, as if used); with the same MAC it
 * changes nothing. Static entries (--neighbor) are permanent. No I/O and no clock of its own (but for
 * the hash key nc_init draws): unit-tested with made-up times. */
#ifndef RAMPART_DAEMON_NEIGH_CACHE_H
#define RAMPART_DAEMON_NEIGH_CACHE_H

#include <stdint.h>

#include "neigh.h"
#include "neigh_proto.h"

/* as many as a worker's table takes (neigh_set refuses past half) */
#define NC_MAX (NEIGH_SLOTS / 2)

struct nc_config {
	uint32_t reachable_ms;	/* 30,000: Linux's base_reachable_time */
	uint32_t probe_ms;	/* 1,000: RFC 4861's RETRANS_TIMER */
	uint32_t probes;	/* 3: MAX_UNICAST_SOLICIT */
	uint32_t delay_ms;	/* 0: 5,000, DELAY_FIRST_PROBE_TIME; at most
				 * reachable_ms */
};

/* NC_STALE: the MAC is used, not confirmed; probed at next_ms */
enum nc_state { NC_REACHABLE = 1, NC_PROBING, NC_PERMANENT, NC_STALE };

struct nc_entry {
	uint8_t addr[16];
	uint8_t mac[6];
	uint8_t port, family;
	uint8_t state;		/* enum nc_state */
	uint8_t probes;		/* sent since the last confirmation */
	uint8_t dirty;		/* the workers must be told its MAC */
	uint64_t confirmed_ms;
	uint64_t next_ms;	/* PROBING: the next probe; STALE: the first */
	uint64_t post_ms;	/* dirty: told from then on (a retry: the
				 * next tick, not again in this one) */
};

struct nc_stats {
	uint64_t learnt;	/* new entries */
	uint64_t unasked;	/* answers about addresses not asked for
				 * lately, known to none: nothing learnt */
	uint64_t moved;		/* an entry's MAC changed */
	uint64_t probes;	/* probes asked of a worker */
	uint64_t forgotten;	/* entries no probe brought back */
	uint64_t full;		/* new entries refused: NC_MAX reached */
};

/* power of two: the index is at most half full */
#define NC_INDEX_SLOTS (2 * NC_MAX)
/* power of two: the addresses asked for lately, by hash (a later ask
 * takes the slot) */
#define NC_ASKED_SLOTS 1024

/* An address a worker solicited (nc_asked), whose answer may make an
 * entry within probes x probe_ms (3 s: RFC 4861's MAX_MULTICAST_SOLICIT
 * retransmissions). */
struct nc_asked {
	uint64_t at_ms;
	uint8_t addr[16];
	uint8_t port, family;	/* family 0: free */
};

struct neigh_cache {
	struct nc_config cfg;
	struct nc_stats st;
	uint32_t n;
	struct nc_entry e[NC_MAX];	/* dense: small, scanned each tick */
	/* each entry's place in e[] plus one (0: a free slot), from the
	 * hash of its key on (linear probing): a frame's news costs the
	 * same however many entries there are, also in an ARP flood; keyed
	 * (seed, random), so that the flood cannot aim its made-up senders
	 * at one slot and make each look-up a walk over them all */
	uint32_t seed;
	uint16_t index[NC_INDEX_SLOTS];
	struct nc_asked asked[NC_ASKED_SLOTS];
};

/* What the caller must do (nc_tick). */
enum nc_op { NC_POST, NC_PROBE, NC_FORGET };

struct nc_action {
	uint8_t op;		/* enum nc_op */
	uint8_t port, family;
	uint8_t addr[16];
	uint8_t mac[6];		/* POST: the MAC; PROBE: where to ask */
};

/* What rampartctl status shows: the entries by state, and the totals. */
struct nc_summary {
	uint32_t reachable, stale, probing, permanent;
	struct nc_stats st;
};

/* cfg NULL: the defaults above. */
void nc_init(struct neigh_cache *c, const struct nc_config *cfg);
/* A static entry: never probed, never moved by what frames say. 0, or
 * -1 when full. */
int nc_permanent(struct neigh_cache *c, uint8_t port, uint8_t family, const uint8_t *addr,
		 const uint8_t mac[6]);
/* A worker solicited addr out of port (family 4: ARP, 6: NS) at now_ms:
 * an answer may make its entry for a while. */
void nc_asked(struct neigh_cache *c, uint8_t port, uint8_t family, const uint8_t *addr,
	      uint64_t now_ms);
/* What a frame received on port taught (np_receive): a new entry, a
 * moved one, a confirmation; a merge or a confirmation without a MAC
 * (l->how) only for one known; an answer only for one known or asked
 * for (nc_asked) lately, and one without override never moves one. Only
 * answers confirm (REACHABLE): a solicited NA, an ARP reply while the
 * entry is probed or its address asked for; other news makes a new or
 * moved entry STALE and leaves one at the same MAC as it is. */
void nc_learn(struct neigh_cache *c, uint8_t port, const struct np_learned *l, uint64_t now_ms);
/* At most max things to do now, in order: POSTs of entries learnt or
 * moved (to every worker), PROBEs (to one worker), FORGETs (to every
 * worker; the entry is gone). What does not fit waits for the next tick. */
uint32_t nc_tick(struct neigh_cache *c, uint64_t now_ms, struct nc_action *out, uint32_t max);
/* A POST or FORGET some worker's ring could not take, a PROBE no
 * worker's could: done again on the next tick, not in this one (nc_tick
 * again at now_ms goes on to the other entries, so that one worker's
 * full ring does not keep the others from hearing of them), the PROBE
 * not counted, the FORGET counted once. */
void nc_retry(struct neigh_cache *c, const struct nc_action *t, uint64_t now_ms);
void nc_summarize(const struct neigh_cache *c, struct nc_summary *out);

#endif
