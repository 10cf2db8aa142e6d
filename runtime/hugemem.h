/* Zeroed tables for the packet path: a million flows are random reads
 * over 125 MB and a flow cache several MB, and with 4 KiB pages most of
 * those reads would add a TLB miss (a page walk) to their cache miss. */
#ifndef RAMPART_HUGEMEM_H
#define RAMPART_HUGEMEM_H

#include <stddef.h>

/* n bytes, zeroed, 64-byte aligned, every page touched now rather than
 * on a packet. 2 MiB or more: a fresh mapping of its own, 2 MiB aligned
 * and asked for transparent huge pages (a hint: without them it is
 * ordinary memory; memory from the heap would often be pages touched
 * before, which the kernel does not turn into huge ones). Adds the
 * bytes to *total when total is not NULL. */
void *hugemem_zalloc(size_t n, size_t *total);
/* Free what hugemem_zalloc(n) returned (the same n); NULL is ignored. */
void hugemem_free(void *p, size_t n);

#endif
