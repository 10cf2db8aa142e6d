/* rampartd --state-file: the flows read back at start and written at a
 * clean stop (runtime/pipe_state.h does the work; this says what
 * happened on stderr, which the journal keeps). */
#ifndef RAMPART_FLOWSTATE_H
#define RAMPART_FLOWSTATE_H

#include <stdint.h>
#include "options.h"

struct pipe_state;
struct pipe_worker;

/* The state file, when --state-file names one that exists and is sound;
 * NULL otherwise (a refused one is said and left in place: the next
 * clean stop writes over it). */
struct pipe_state *flowstate_open(const struct rampartd_opts *o);
/* The handoff hash key to use for n workers: the file's when its flows
 * can come back to these workers, else *seed unchanged. */
void flowstate_seed(const struct pipe_state *st, uint32_t n, int handoff, uint64_t *seed);
/* Put the flows back into the workers (made, not yet running), say how
 * many, remove the file once they are in; closes st. */
void flowstate_restore(const struct rampartd_opts *o, struct pipe_state *st,
		       struct pipe_worker *const *w, uint32_t n);
/* After the workers stopped (any clean stop): write their flows, and say
 * how many or why not. */
void flowstate_save(const struct rampartd_opts *o, struct pipe_worker *const *w, uint32_t n);

#endif
