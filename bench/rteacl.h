/* DPDK rte_acl over the same entries, for side-by-side numbers. Only
 * built where DPDK is found (RAMPART_HAVE_DPDK). */
#ifndef RAMPART_BENCH_RTEACL_H
#define RAMPART_BENCH_RTEACL_H

#include <stddef.h>
#include <stdint.h>
#include "rampart/artifact.h"
#include "pkt.h"

struct rteacl;

int rteacl_init(const char *prog);
/* NULL on failure. *bytes: DPDK heap bytes the context took. */
struct rteacl *rteacl_build(const struct rfw_acl_entry *e, uint32_t n, size_t *bytes);
/* Prepare keys once (network-order 5-tuple buffers, as rte_acl reads
 * packet headers), then classify them in bursts of up to 64. */
int rteacl_prepare(struct rteacl *a, const struct pkt_key *keys, uint32_t n);
void rteacl_classify(struct rteacl *a, uint32_t first, uint32_t n, uint32_t *rules);
void rteacl_free(struct rteacl *a);

#endif
