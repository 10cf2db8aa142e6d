/* rulec as a library: compile a policy to an artifact, summarise one, and
 * answer classifier queries against one. The CLI (main.c) and the unit
 * tests call exactly these. */
#ifndef RULEC_H
#define RULEC_H

#include <stddef.h>
#include <stdio.h>

#include "artifact.h"

/* Parse, resolve and compile path. Every error goes to diag as
 * "FILE:LINE:COL: error: MESSAGE". Returns the error count; only when it is
 * 0 does *buf (malloc'ed, *len bytes) hold the artifact. */
unsigned rulec_compile(const char *path, FILE *diag, void **buf, size_t *len);

/* Compile options: strict turns warnings into errors (--strict); when
 * warnings is not NULL it receives the number of warnings printed. */
struct rulec_opts {
	int strict;
	unsigned *warnings;
};
unsigned rulec_compile_opts(const char *path, FILE *diag, const struct rulec_opts *opts,
			    void **buf, size_t *len);

/* `rulec check` (out == NULL) and `rulec compile`: compile, then write out
 * atomically only when there was no error; on errors print
 * "rulec: N error(s), nothing written". Returns the process exit code. */
int rulec_compile_file(const char *path, const char *out, FILE *diag);
int rulec_compile_file_opts(const char *path, const char *out, FILE *diag,
			    const struct rulec_opts *opts);

/* `rulec dump`: sections, sizes and every rule, human-readable. */
void rulec_dump(const struct rfw_view *v, FILE *out);

/* One query "[OPTIONS] PROTO SRC[:SPORT] DST[:DPORT]" answered with cls_lookup as
 * "NUM NAME ACTION" (no newline) in ans. OPTIONS: --in IFACE, --out IFACE,
 * --state new|established|related|invalid (default new), --tcp-flags
 * syn,ack,... (default none); for icmp/icmpv6 DST may end in :TYPE[/CODE]
 * (a name or number) instead of a port. Without the type (or the code)
 * the answer is the rule every type (code) meets; when they meet
 * different rules the query is refused, naming two. 0, or -1 with the
 * reason in err; on 0, err holds a note for the user, or "" (an ICMP
 * error type asked about as new in a stateful policy: the runtime never
 * asks that). */
int rulec_query_line(const struct rfw_view *v, const char *line,
		     char *ans, size_t anslen, char *err, size_t errlen);

/* `rulec query --batch`: one answer line per query line of in; blank lines
 * and '#' comments skipped; bad lines reported to errs as
 * "NAME:LINE: error: ...". Returns the exit code (1 if any line was bad). */
int rulec_query_batch(const struct rfw_view *v, FILE *in, const char *name,
		      FILE *out, FILE *errs);
/* The same, with opts ("--in eth0 --state new", may be "") put in front
 * of every line. */
int rulec_query_batch_opts(const struct rfw_view *v, FILE *in, const char *name,
			   const char *opts, FILE *out, FILE *errs);

#endif
