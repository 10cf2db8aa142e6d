/* Positioned error reporting and typo suggestions for rulec. Messages go to
 * one stream so tests can capture exactly what the user would see. */
#include "diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct diag_msg {
	unsigned line, col;
	size_t seq;
	char *text;
};

void diag_error(struct diag *d, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;
	struct diag_msg m = {line, col, d->nmsgs, NULL};
	int n;

	d->errors++;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
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
		return;
	}
	va_start(ap, fmt);
	vsnprintf(m.text, (size_t)n + 1, fmt, ap);
	va_end(ap);
	d->msgs[d->nmsgs++] = m;
}

static int by_position(const void *pa, const void *pb)
{
	const struct diag_msg *a = pa, *b = pb;

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

		if (m->line && m->col)
			fprintf(d->out, "%s:%u:%u: error: %s\n", d->file, m->line, m->col, m->text);
		else
			fprintf(d->out, "%s: error: %s\n", d->file, m->text);
		free(m->text);
	}
	free(d->msgs);
	d->msgs = NULL;
	d->nmsgs = d->cap = 0;
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
