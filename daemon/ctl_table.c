/* ctl_table: two passes (widths, then text) over cells kept as strings,
 * because the widest value of a column is only known at the end. */
#define _GNU_SOURCE	/* vasprintf */
#include "ctl_table.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ctl_table_init(struct ctl_table *t, const char *const *head, uint32_t ncols, uint32_t right)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols < CTL_TABLE_MAX_COLS ? ncols : CTL_TABLE_MAX_COLS;
	t->right = right;
	for (uint32_t i = 0; i < t->ncols; i++)
		t->head[i] = head[i];
}

static void add(struct ctl_table *t, char *s)
{
	if (!s) {
		t->oom = 1;
		return;
	}
	if (t->ncells == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		char **c = realloc(t->cells, cap * sizeof(*c));

		if (!c) {
			t->oom = 1;
			free(s);
			return;
		}
		t->cells = c;
		t->cap = cap;
	}
	t->cells[t->ncells++] = s;
}

void ctl_table_addf(struct ctl_table *t, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	add(t, s);
}

void ctl_table_addu(struct ctl_table *t, uint64_t v)
{
	ctl_table_addf(t, "%llu", (unsigned long long)v);
}

static void print_row(struct ctl_table *t, struct ctl_buf *out, int indent,
		      const char *const *cells, const size_t *width)
{
	ctl_printf(out, "%*s", indent, "");
	for (uint32_t c = 0; c < t->ncols; c++) {
		int w = (int)width[c];
		int last = c + 1 == t->ncols;

		if (t->right & (1u << c))
			ctl_printf(out, "%*s", w, cells[c]);
		else
			ctl_printf(out, "%-*s", last ? 0 : w, cells[c]);
		ctl_puts(out, last ? "\n" : "  ");
	}
}

void ctl_table_print(struct ctl_table *t, struct ctl_buf *out, int indent)
{
	size_t width[CTL_TABLE_MAX_COLS] = { 0 };
	uint32_t rows = t->ncols ? t->ncells / t->ncols : 0;

	if (t->oom)
		out->oom = 1;
	for (uint32_t c = 0; c < t->ncols; c++)
		width[c] = strlen(t->head[c]);
	for (uint32_t i = 0; i < rows * t->ncols; i++) {
		size_t n = strlen(t->cells[i]);

		if (n > width[i % t->ncols])
			width[i % t->ncols] = n;
	}
	print_row(t, out, indent, t->head, width);
	for (uint32_t r = 0; r < rows; r++)
		print_row(t, out, indent, (const char *const *)t->cells + r * t->ncols, width);
	for (uint32_t i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->ncells = t->cap = 0;
}
