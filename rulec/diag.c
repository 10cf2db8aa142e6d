/* Positioned error reporting and typo suggestions for rulec. Messages go to
 * one stream so tests can capture exactly what the user would see. */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct diag_msg {
	size_t file;
	unsigned line, col;
	size_t seq;
	int warning;
	char *text;
};

size_t diag_add_file(struct diag *d, const char *name)
{
	char **v = realloc(d->files, (d->nfiles + 1) * sizeof(*v));
	char *copy = strdup(name);

	if (!v || !copy) {
		/* Same policy as vec_grow: a compiler that cannot allocate stops. */
		fputs("rulec: out of memory\n", stderr);
		exit(2);
	}
	d->files = v;
	d->files[d->nfiles] = copy;
	return d->nfiles++;
}

const char *diag_file_name(const struct diag *d, size_t file)
{
	return file < d->nfiles ? d->files[file] : d->file;
}

static void add_msg(struct diag *d, size_t file, unsigned line, unsigned col, int warning,
		    const char *fmt, va_list ap)
{
	struct diag_msg m = {file, line, col, d->nmsgs, warning, NULL};
	va_list ap2;
	int n;

	if (warning && !d->strict)
		d->warnings++;
	else
		d->errors++;
	d->strict_warnings += warning && d->strict;
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	m.text = malloc((size_t)(n > 0 ? n : 0) + 1);
	if (d->nmsgs == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct diag_msg *v = realloc(d->msgs, cap * sizeof(*v));

		if (!v) {
			free(m.text);
			m.text = NULL;
		} else {
			d->msgs = v;
			d->cap = cap;
		}
	}
	if (!m.text) {
		/* Out of memory: the error still counts, so nothing is written. */
		fprintf(d->out, "%s: error: out of memory reporting an error\n", d->file);
		va_end(ap2);
		return;
	}
	vsnprintf(m.text, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	d->msgs[d->nmsgs++] = m;
}

void diag_error(struct diag *d, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_msg(d, d->cur, line, col, 0, fmt, ap);
	va_end(ap);
}

void diag_error_in(struct diag *d, size_t file, unsigned line, unsigned col,
		   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_msg(d, file, line, col, 0, fmt, ap);
	va_end(ap);
}

void diag_warn_in(struct diag *d, size_t file, unsigned line, unsigned col,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_msg(d, file, line, col, 1, fmt, ap);
	va_end(ap);
}

static int by_position(const void *pa, const void *pb)
{
	const struct diag_msg *a = pa, *b = pb;

	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->col != b->col)
		return a->col < b->col ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void diag_flush(struct diag *d)
{
	if (d->nmsgs)
		qsort(d->msgs, d->nmsgs, sizeof(*d->msgs), by_position);
	for (size_t i = 0; i < d->nmsgs; i++) {
		const struct diag_msg *m = &d->msgs[i];
		const char *kind = m->warning && !d->strict ? "warning" : "error";
		const char *file = diag_file_name(d, m->file);

		if (m->line && m->col)
			fprintf(d->out, "%s:%u:%u: %s: %s\n", file, m->line, m->col, kind, m->text);
		else if (m->line)
			fprintf(d->out, "%s:%u: %s: %s\n", file, m->line, kind, m->text);
		else
			fprintf(d->out, "%s: %s: %s\n", file, kind, m->text);
		free(m->text);
	}
	free(d->msgs);
	d->msgs = NULL;
	d->nmsgs = d->cap = 0;
}

void diag_free(struct diag *d)
{
	diag_flush(d);
	for (size_t i = 0; i < d->nfiles; i++)
		free(d->files[i]);
	free(d->files);
	d->files = NULL;
	d->nfiles = 0;
}

unsigned diag_distance(const char *a, const char *b)
{
	/* Two-row dynamic programme; names longer than 63 bytes are never typos
	 * worth suggesting for, so they just compare as far apart. */
	unsigned row[2][64];
	size_t la = strlen(a), lb = strlen(b);

	if (la >= 64 || lb >= 64)
		return 64;
	for (size_t j = 0; j <= lb; j++)
		row[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned *prev = row[(i - 1) & 1], *cur = row[i & 1];

		cur[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			unsigned del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? sub : del;
			if (ins < cur[j])
				cur[j] = ins;
		}
	}
	return row[la & 1][lb];
}

const char *diag_suggest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	unsigned best_d = 3;
	size_t wl = strlen(word);

	for (size_t i = 0; i < n; i++) {
		unsigned dist = diag_distance(word, cands[i]);

		if (dist < best_d && dist * 2 < (unsigned)(wl > 1 ? wl : 2)) {
			best = cands[i];
			best_d = dist;
		}
	}
	return best;
}
