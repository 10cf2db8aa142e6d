/* ctl_buf: answers of the control socket are built in memory and sent in
 * one go, so a slow client never holds a half-written document. */
#include "ctl_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ctl_buf_init(struct ctl_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void ctl_buf_free(struct ctl_buf *b)
{
	free(b->p);
	ctl_buf_init(b);
}

void ctl_buf_reset(struct ctl_buf *b)
{
	b->len = 0;
	b->oom = 0;
	if (b->p)
		b->p[0] = '\0';
}

static int reserve(struct ctl_buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 1024;
	char *p;

	if (b->oom)
		return -1;
	if (b->len + more + 1 <= b->cap)
		return 0;
	while (cap < b->len + more + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void ctl_printf(struct ctl_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void ctl_puts(struct ctl_buf *b, const char *s)
{
	size_t n = strlen(s);

	if (reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n + 1);
	b->len += n;
}

void ctl_put_bytes(struct ctl_buf *b, const void *data, size_t n)
{
	if (reserve(b, n))
		return;
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void ctl_json_str(struct ctl_buf *b, const char *s)
{
	ctl_puts(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			ctl_printf(b, "\\%c", c);
		else if (c < 0x20)
			ctl_printf(b, "\\u%04x", c);
		else
			ctl_printf(b, "%c", c);
	}
	ctl_puts(b, "\"");
}
