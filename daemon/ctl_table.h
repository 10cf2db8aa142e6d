/* Aligned columns for rampartctl's human-readable answers: cells are
 * added row by row, widths are known only once every row is in, then the
 * table is printed (numbers right-aligned, text left-aligned). */
#ifndef RAMPART_DAEMON_CTL_TABLE_H
#define RAMPART_DAEMON_CTL_TABLE_H

#include <stdint.h>
#include "ctl_buf.h"

#define CTL_TABLE_MAX_COLS 12

struct ctl_table {
	uint32_t ncols;
	uint32_t right;		/* bit per column: right-aligned */
	const char *head[CTL_TABLE_MAX_COLS];
	char **cells;		/* row-major, ncols per row */
	uint32_t ncells, cap;
	int oom;
};

/* head: ncols column titles; right: bit i set = column i right-aligned. */
void ctl_table_init(struct ctl_table *t, const char *const *head, uint32_t ncols, uint32_t right);
void ctl_table_addf(struct ctl_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ctl_table_addu(struct ctl_table *t, uint64_t v);
/* Every row, indented by indent spaces; then frees the cells. */
void ctl_table_print(struct ctl_table *t, struct ctl_buf *out, int indent);

#endif
