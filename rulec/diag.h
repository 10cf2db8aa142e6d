/* Compiler diagnostics: "FILE:LINE:COL: error: MESSAGE" (or "warning:")
 * lines, counted, so one run reports every problem and the caller knows
 * whether to write. They are held until diag_flush and printed in file
 * order (files in the order they were opened), whatever the order of the
 * checks that found them. */
#ifndef RULEC_DIAG_H
#define RULEC_DIAG_H

#include <stddef.h>
#include <stdio.h>

struct diag_msg;

struct diag {
	const char *file;	/* the policy as given by the user, printed verbatim */
	FILE *out;		/* stderr in the CLI, a memstream in tests */
	unsigned errors;
	unsigned warnings;
	int strict;		/* --strict: warnings are errors */
	unsigned strict_warnings;	/* of errors, the warnings --strict made errors */
	/* Every file read (the policy, its includes, file: lists), in the
	 * order opened; cur is the one messages are positioned in. */
	char **files;
	size_t nfiles, cur;
	struct diag_msg *msgs;	/* held until diag_flush */
	size_t nmsgs, cap;
};

/* Errors that are not warnings made errors by --strict: what stops the
 * later checks, which would otherwise meet half-compiled input. */
static inline unsigned diag_real_errors(const struct diag *d)
{
	return d->errors - d->strict_warnings;
}

/* Register a file name (copied); returns its number. With no file
 * registered, messages name d->file. */
size_t diag_add_file(struct diag *d, const char *name);
const char *diag_file_name(const struct diag *d, size_t file);

/* line and col are 1-based; 0 for either leaves it out. In d->cur. */
void diag_error(struct diag *d, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The same, in a given file. */
void diag_error_in(struct diag *d, size_t file, unsigned line, unsigned col,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* A warning: printed "warning:", or "error:" and counted as an error when
 * d->strict is set. */
void diag_warn_in(struct diag *d, size_t file, unsigned line, unsigned col,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Print the held messages sorted by file, then position (unpositioned ones
 * first, ties in the order found) and release them. */
void diag_flush(struct diag *d);

/* Release everything (after diag_flush). */
void diag_free(struct diag *d);

/* Levenshtein distance, capped: used for "did you mean" suggestions. */
unsigned diag_distance(const char *a, const char *b);

/* Closest of n candidates to word when the distance is small enough to be a
 * typo (at most 2, and less than half the word), else NULL. */
const char *diag_suggest(const char *word, const char *const *cands, size_t n);

#endif
