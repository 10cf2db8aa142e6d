/* `rampartctl flows` output: the flows the workers copied, as an aligned
 * table or a JSON document. Pure formatting (no worker, no socket), so the
 * unit tests drive it with made-up flows. */
#ifndef RAMPART_DAEMON_CTL_FLOWS_H
#define RAMPART_DAEMON_CTL_FLOWS_H

#include <stddef.h>
#include <stdint.h>
#include "ct.h"
#include "ctl_buf.h"
#include "ctl_job.h"

/* Rule names by number (0 = the default), for the RULE column. */
struct ctl_rule_names {
	const char *const *name;
	uint32_t count;
};

/* "10.0.0.1:80", "[fd00::1]:443", or the bare address when ports is 0. */
void ctl_endpoint(char *out, size_t len, uint8_t family, const uint8_t *addr, uint16_t port,
		  int ports);
/* 1 when the reply tuple is not the plain reverse of the original (NAT). */
int ctl_flow_natted(const struct ct_flow_info *f);
/* TCP/UDP/SCTP: the tuple's ports are ports (ICMP keeps its echo id there). */
int ctl_proto_has_ports(uint8_t proto);

/* The control thread's room for the workers' copies of a flow listing:
 * each worker copies up to the request's limit, so a listing needs
 * limit x workers entries. Grown for a request and given back after its
 * answer once past CTL_FLOWS_KEPT, so that one `flows --limit 1000000`
 * (160 MB a worker) is not held for the daemon's life. Only while
 * no worker holds a job: a late worker may still write into it. */
#define CTL_FLOWS_KEPT 4096u	/* entries kept between requests */

struct ctl_flow_room {
	struct ctl_flow *flows;
	size_t room;		/* entries */
};

/* Room for n entries. 0, or -1 when out of memory (the room unchanged). */
int ctl_flow_room_reserve(struct ctl_flow_room *r, size_t n);
/* After an answer: the room freed when it is larger than CTL_FLOWS_KEPT. */
void ctl_flow_room_trim(struct ctl_flow_room *r);
void ctl_flow_room_free(struct ctl_flow_room *r);

/* n flows of matched (more matched than the limit let through). JSON:
 * deleted >= 0 (flows --delete) adds how many were ended. */
void ctl_flows_text(struct ctl_buf *out, const struct ctl_flow *flows, uint32_t n,
		    uint64_t matched, const struct ctl_rule_names *names);
void ctl_flows_json(struct ctl_buf *out, const struct ctl_flow *flows, uint32_t n,
		    uint64_t matched, int64_t deleted, const struct ctl_rule_names *names);

#endif
