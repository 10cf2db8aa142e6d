/* Expansion of rules and NAT matches into classifier entries (expand.c),
 * with the strings and address sets they create on the way. */
#ifndef RULEC_EXPAND_H
#define RULEC_EXPAND_H

#include "policy.h"
#include "sets.h"

typedef VEC(struct rfw_acl_entry) acl_list;

struct expand_ctx {
	int nat;		/* expanding NAT matches: "can never match" warns */
	VEC(char) strings;
	struct lpm_data ld;
	/* per address set (index = set number): its prefixes, owned by the
	 * policy, for the analysis (lint.c) */
	VEC(const pfx_list *) set_pfx;
};

/* Append r's entries (rule number num) to acl. 0, or -1 after reporting
 * why r can never match or is inconsistent. */
int expand_rule(struct policy *pol, struct rule *r, uint32_t num, struct expand_ctx *x,
		acl_list *acl);
uint32_t expand_string(struct expand_ctx *x, const char *s);
/* 1 when every protocol r can match has ports (tcp, udp, sctp). */
int expand_ports_only(const struct rule *r);

#endif
