/* `rampartctl flows --filter EXPR`: space-separated key=value terms, all
 * of which a flow must match (proto, src, dst, sport, dport, rule,
 * state). Parsed by the control thread, matched by the workers against
 * the original tuple (the direction the flow was opened in). */
#ifndef RAMPART_DAEMON_CTL_FILTER_H
#define RAMPART_DAEMON_CTL_FILTER_H

#include <stddef.h>
#include <stdint.h>
#include "artifact.h"
#include "ct.h"

enum ctl_filter_term {
	CTL_F_PROTO = 1u << 0,
	CTL_F_SRC = 1u << 1,
	CTL_F_DST = 1u << 2,
	CTL_F_SPORT = 1u << 3,
	CTL_F_DPORT = 1u << 4,
	CTL_F_RULE = 1u << 5,
	CTL_F_STATE = 1u << 6,
};

struct ctl_prefix {
	uint8_t family;		/* 4 or 6 */
	uint8_t len;		/* prefix length in bits */
	uint8_t addr[16];
};

struct ctl_filter {
	uint32_t terms;		/* enum ctl_filter_term bits */
	uint8_t proto;
	uint8_t state;		/* enum ct_tcp_state */
	uint16_t sport, dport;
	struct ctl_prefix src, dst;
	uint32_t rule;		/* rule number, once resolved */
	char rule_name[64];
};

/* Parse expr (may be empty: matches every flow). 0, or -1 with the
 * offending term named in err. */
int ctl_filter_parse(struct ctl_filter *f, const char *expr, char *err, size_t errlen);
/* Turn rule=NAME into a rule number of view ("default" is rule 0). 0, or
 * -1 with err when the policy has no such rule. */
int ctl_filter_resolve(struct ctl_filter *f, const struct rfw_view *view, char *err,
		       size_t errlen);
/* 1 if the flow matches every term. */
int ctl_filter_match(const struct ctl_filter *f, const struct ct_flow_info *flow);

/* Protocol name for a number ("tcp", "icmpv6"), or NULL when unnamed. */
const char *ctl_proto_name(uint8_t proto);

#endif
