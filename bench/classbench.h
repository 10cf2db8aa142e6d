/* ClassBench rule files and synthetic traces for benchmarks: rules become
 * ACL entries exactly as the policy converter writes them (wildcard port
 * pairs omitted, protocol mask 0xFF becomes proto), and headers are drawn
 * half inside a random rule's box, half uniformly. */
#ifndef RAMPART_BENCH_CLASSBENCH_H
#define RAMPART_BENCH_CLASSBENCH_H

#include <stdint.h>
#include "rampart/artifact.h"
#include "pkt.h"

/* Load path into *entries (malloc'ed, rule i+1 = line i). -1 on error. */
int classbench_load(const char *path, struct rfw_acl_entry **entries, uint32_t *count);

/* Fill keys[0..n) from the rules, reproducibly from seed. */
void classbench_trace(const struct rfw_acl_entry *e, uint32_t count, struct pkt_key *keys,
		      uint32_t n, uint64_t seed);

#endif
