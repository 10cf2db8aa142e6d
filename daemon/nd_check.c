/* IPv6 neighbour discovery across a bridge against the policy (nd_check.h):
 * the packets a host sends to find its neighbour, built as pkt_parse would
 * key them, classified by the runtime's own cls_lookup. */
#include "nd_check.h"

#include <stdio.h>
#include <string.h>

#include "cls.h"
#include "pkt.h"

#define ND_SOLICIT 135
#define ND_ADVERT 136

/* Does some accepting rule name an IPv6 address? Without one the policy
 * carries no IPv6 on purpose, and saying nothing is right. */
static int accepts_ipv6(const struct rfw_view *v)
{
	for (uint32_t e = 0; e < v->acl_count; e++)
		if (v->acl[e].family == 6 && v->rules[v->acl[e].rule].action == RFW_ACTION_ACCEPT)
			return 1;
	return 0;
}

static uint8_t policy_if(const struct rfw_view *v, const char *name)
{
	for (uint32_t i = 0; i < v->interface_count && i < RFW_MAX_INTERFACES; i++)
		if (!strncmp(v->interfaces[i].name, name, sizeof(v->interfaces[i].name)))
			return (uint8_t)i;
	return 0xff;	/* PIPE_NO_PORT: in no zone */
}

/* A solicitation from a link-local address to the target's solicited-node
 * group, or the advertisement back to the asker. */
static void nd_key(struct pkt_key *k, uint8_t type, uint8_t in_if, uint8_t out_if)
{
	static const uint8_t asker[16] = {0xfe, 0x80, [15] = 1};
	static const uint8_t target[16] = {0xfe, 0x80, [15] = 2};
	static const uint8_t group[16] = {0xff, 0x02, [11] = 1, [12] = 0xff, [15] = 2};

	memset(k, 0, sizeof(*k));
	k->family = 6;
	k->proto = 58;
	k->icmp_type = type;
	memcpy(k->src, type == ND_SOLICIT ? asker : target, 16);
	memcpy(k->dst, type == ND_SOLICIT ? group : asker, 16);
	k->in_if = in_if;
	k->out_if = out_if;
	k->ct_state = RFW_STATE_NEW;	/* conntrack starts a flow of it */
}

int nd_check_bridge(const struct rfw_view *v, const char *const *ifnames, uint32_t nifs,
		    struct nd_block *out)
{
	struct cls_table t;

	if (!accepts_ipv6(v))
		return 0;
	cls_table_init(&t, v);
	for (uint32_t a = 0; a < nifs; a++) {
		uint32_t b = a ^ 1;	/* its bridged peer, either way */

		if (b >= nifs)
			continue;
		for (uint8_t type = ND_SOLICIT; type <= ND_ADVERT; type++) {
			struct pkt_key k;
			uint32_t r;

			nd_key(&k, type, policy_if(v, ifnames[a]), policy_if(v, ifnames[b]));
			r = cls_lookup(&t, &k);
			if (v->rules[r].action != RFW_ACTION_ACCEPT) {
				*out = (struct nd_block){.from = a, .to = b, .icmp_type = type, .rule = r};
				return 1;
			}
		}
	}
	return 0;
}

void nd_block_describe(const struct rfw_view *v, const char *const *ifnames,
		       const struct nd_block *b, char *buf, size_t len)
{
	char by[96];

	if (b->rule)
		snprintf(by, sizeof(by), "rule %u '%s'", b->rule, rfw_rule_name(v, b->rule));
	else
		snprintf(by, sizeof(by), "the default action");
	snprintf(buf, len,
		 "rampartd: warning: %s drops IPv6 neighbour %s from %s to %s while the policy "
		 "accepts IPv6 traffic: IPv6 hosts on either side of the bridge cannot find each "
		 "other; accept icmpv6/neighbor-solicitation and icmpv6/neighbor-advertisement "
		 "(examples/bump-in-the-wire/policy.yaml)\n",
		 by, b->icmp_type == ND_SOLICIT ? "solicitations" : "advertisements",
		 ifnames[b->from], ifnames[b->to]);
}
