/* Compiler diagnostics: "FILE:LINE:COL: error: MESSAGE" lines, counted, so
 * one run reports every error and the caller knows whether to write. They
 * are held until diag_flush and printed in file order, however the checks
 * that found them were ordered. */
#ifndef RULEC_DIAG_H
#define RULEC_DIAG_H

#include <stddef.h>
#include <stdio.h>

struct diag_msg;

struct diag {
	const char *file;	/* as given by the user, printed verbatim */
	FILE *out;		/* stderr in the CLI, a memstream in tests */
	unsigned errors;
	struct diag_msg *msgs;	/* held until diag_flush */
	size_t nmsgs, cap;
};

/* line and col are 1-based; 0 for either leaves it out. */
void diag_error(struct diag *d, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Print the held messages sorted by position (unpositioned ones first,
 * ties in the order found) and release them. */
void diag_flush(struct diag *d);

/* Levenshtein distance, capped: used for "did you mean" suggestions. */
unsigned diag_distance(const char *a, const char *b);

/* Closest of n candidates to word when the distance is small enough to be a
 * typo (at most 2, and less than half the word), else NULL. */
const char *diag_suggest(const char *word, const char *const *cands, size_t n);

#endif
