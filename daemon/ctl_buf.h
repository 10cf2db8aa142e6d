/* A growable text buffer for control-socket answers: printf-style
 * appends and JSON string quoting. Allocation failure is sticky (oom)
 * and checked once when the answer is sent, not after every append. */
#ifndef RAMPART_DAEMON_CTL_BUF_H
#define RAMPART_DAEMON_CTL_BUF_H

#include <stddef.h>

struct ctl_buf {
	char *p;	/* NUL-terminated when len > 0 */
	size_t len, cap;
	int oom;
};

void ctl_buf_init(struct ctl_buf *b);
void ctl_buf_free(struct ctl_buf *b);
void ctl_buf_reset(struct ctl_buf *b);
void ctl_printf(struct ctl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ctl_puts(struct ctl_buf *b, const char *s);
/* Binary data (a capture): n bytes, NULs and all. */
void ctl_put_bytes(struct ctl_buf *b, const void *data, size_t n);
/* s as a JSON string, quotes included. */
void ctl_json_str(struct ctl_buf *b, const char *s);

#endif
