/* Flows over a restart: every worker's conntrack table written to a
 * state file at a clean stop and read back by the next start (rampartd
 * --state-file), so connections through the firewall outlive an upgrade
 * of the binary. Off the packet path: the workers must not run.
 *
 * What comes back: each flow's tuples both ways (so its NAT port and
 * address), its TCP windows and state, counters, and the time it had
 * left less the time rampart was down; its rule by name in the new
 * policy (a rule that is gone: the default's, as a reload keeps such a
 * flow), and whether it was due a re-check against the rules on its
 * next packet (a reload's --flows recheck no packet of it has met yet):
 * such a flow is due it again, whatever the restart's own recheck. The
 * format is version 2 (the mark); version 1 files, from the binary
 * before, are still read, without marks, so an upgrade keeps its flows;
 * a binary that reads only version 1 refuses a version 2 file (a
 * downgrade starts without flows). Each flow goes back to the worker that had it, under the handoff
 * hash key of the file (pipe_state_home_seed). Another worker count: one
 * worker takes every flow; with handoff, each flow goes to the worker its
 * packets now map to, which for a flow without SNAT is one worker both
 * ways, and a source-translated flow to the worker whose share of its
 * pool holds its port; a direction whose packets map to another worker
 * (a masqueraded flow's port was steered for the other count) gets a
 * redirect there: a packet of it that finds no flow is handed on (enum
 * pipe_second). Redirects are made again at each restore, so such flows
 * keep working over later restarts too. Without handoff and with several workers the file is
 * refused when the count or the handoff setting changed (each worker
 * keeps what its queue brings: no telling where a flow's packets go).
 * The file format is in docs/operations.md. */
#ifndef RAMPART_PIPE_STATE_H
#define RAMPART_PIPE_STATE_H

#include <stddef.h>
#include <stdint.h>

struct pipe_worker;

struct pipe_state_counts {
	uint64_t flows;		/* in the file (restore) or written (save) */
	uint64_t restored;
	uint64_t expired;	/* their time ran out while rampart was down */
	uint64_t duplicate;	/* a tuple already taken (a corrupt file) */
	uint64_t full;		/* the table had no room */
	uint64_t invalid;	/* not a flow */
	uint64_t rule_gone;	/* restored under the default's row */
	uint64_t nat_unclaimed;	/* a translated flow whose pair no pool has now */
	uint64_t rehomed;	/* put into another worker than saved it (count changed) */
	uint64_t unplaced;	/* not restored: no memory for its redirect */
};

/* Write the flows of workers w[0..n) (stopped) to path: a temporary
 * file, flushed to disk, then renamed over path. now_ns: the workers'
 * clock (CLOCK_MONOTONIC); wall_ns: CLOCK_REALTIME. 0, or -1 with err. */
int pipe_state_save(const char *path, struct pipe_worker *const *w, uint32_t n,
		    uint64_t now_ns, uint64_t wall_ns, struct pipe_state_counts *c, char *err,
		    size_t errlen);

/* The same in steps, for a running daemon (daemon/flowstate.c): each
 * worker copies its flows a slice at a time into records, on its own
 * thread between bursts (pipe_state_collect), and another thread writes
 * them (the writer). A record is PIPE_STATE_RECORD_SIZE bytes. */
#define PIPE_STATE_RECORD_SIZE 152u
struct rfw_view;

/* Worker k's live flows from conntrack slot *cursor on, at most
 * max_slots slots looked at and room records written to out; *nout
 * records written, *cursor moved on, each marked when its flow is due a
 * re-check. names: the policy whose rule names the file holds (a worker
 * on another has its flows saved under rule 0). 1 once the whole table is done, else 0. */
int pipe_state_collect(const struct pipe_worker *w, uint32_t k, const struct rfw_view *names,
		       uint32_t now, uint32_t *cursor, uint32_t max_slots, void *out,
		       uint32_t room, uint32_t *nout);

/* A temporary file beside path, renamed over it by close; abort (or a
 * failed put or close, which abort themselves) removes it. first: any
 * of the workers (the handoff setting and hash key are theirs).
 * checkpoint: written while the workers run on, so a restore lets each
 * TCP flow re-learn its windows from its next segments (ct_flow_resync). */
struct pipe_state_writer;
struct pipe_state_writer *pipe_state_writer_open(const char *path,
						 const struct pipe_worker *first, uint32_t workers,
						 const struct rfw_view *names, int checkpoint,
						 char *err, size_t errlen);
int pipe_state_writer_put(struct pipe_state_writer *wr, const void *records, uint32_t n,
			  char *err, size_t errlen);
/* The header in, the file flushed to disk and closed: the slow part of
 * close, for a caller that decides after it whether the file may still
 * replace the last one (then close, which only renames, or abort). */
int pipe_state_writer_sync(struct pipe_state_writer *wr, uint64_t wall_ns, char *err,
			   size_t errlen);
/* sync unless done, then rename over path: *flows written. */
int pipe_state_writer_close(struct pipe_state_writer *wr, uint64_t wall_ns, uint64_t *flows,
			    char *err, size_t errlen);
void pipe_state_writer_abort(struct pipe_state_writer *wr);

/* A state file, mapped and checked (magic, version, sizes, CRC32C over
 * the whole): NULL with errno ENOENT when there is none, or NULL with err
 * saying why it is refused. */
struct pipe_state;
struct pipe_state *pipe_state_open(const char *path, char *err, size_t errlen);
void pipe_state_close(struct pipe_state *s);
uint32_t pipe_state_workers(const struct pipe_state *s);
int pipe_state_handoff(const struct pipe_state *s);
uint64_t pipe_state_home_seed(const struct pipe_state *s);

/* Put the file's flows back into workers w[0..n) (made with the file's
 * home seed when both use handoff, not yet running). recheck: every flow
 * is due a re-check against the rules on its next packet (--reload-flows
 * recheck); without it, those the file marks due one still are. 0, or -1 with err when the file does not fit these workers
 * (nothing restored). */
int pipe_state_restore(const struct pipe_state *s, struct pipe_worker *const *w, uint32_t n,
		       uint64_t now_ns, uint64_t wall_ns, int recheck, struct pipe_state_counts *c,
		       char *err, size_t errlen);

#endif
