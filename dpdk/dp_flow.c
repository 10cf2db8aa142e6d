/* rte_flow rules for isolated ports (dp_flow.h). Compile-tested here:
 * no PMD on this project's lab machines supports isolation (mlx5 does). */
#include "dp_flow.h"

#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_flow.h>

#include "dp_port.h"

#define DP_FLOW_KEY_LEN 40

struct take_rule {
	uint16_t queues[DP_MAX_QUEUES];
	uint8_t key[DP_FLOW_KEY_LEN];
	struct rte_flow_action_rss rss;
	struct rte_flow_item_ipv4 v4, v4_mask;
	struct rte_flow_item_ipv6 v6, v6_mask;
};

static void prefix_mask(uint8_t *mask, uint32_t bytes, uint8_t len)
{
	memset(mask, 0, bytes);
	for (uint32_t b = 0; b < len && b < bytes * 8; b++)
		mask[b / 8] |= (uint8_t)(0x80u >> (b % 8));
}

/* family 4 or 6; prefix NULL: the whole family. */
static int take(uint16_t port, struct take_rule *t, uint8_t family, const uint8_t *prefix,
		uint8_t len, char *err, size_t errlen)
{
	const struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_item pattern[3];
	struct rte_flow_action actions[2];
	struct rte_flow_error ferr;

	memset(pattern, 0, sizeof(pattern));
	memset(&ferr, 0, sizeof(ferr));
	memset(&t->v4, 0, sizeof(t->v4));
	memset(&t->v6, 0, sizeof(t->v6));
	pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
	pattern[1].type = family == 4 ? RTE_FLOW_ITEM_TYPE_IPV4 : RTE_FLOW_ITEM_TYPE_IPV6;
	pattern[2].type = RTE_FLOW_ITEM_TYPE_END;
	if (prefix && family == 4) {
		memcpy(&t->v4.hdr.dst_addr, prefix, 4);
		prefix_mask((uint8_t *)&t->v4_mask.hdr.dst_addr, 4, len);
		pattern[1].spec = &t->v4;
		pattern[1].mask = &t->v4_mask;
	} else if (prefix) {
		memcpy(t->v6.hdr.dst_addr, prefix, 16);
		prefix_mask(t->v6_mask.hdr.dst_addr, 16, len);
		pattern[1].spec = &t->v6;
		pattern[1].mask = &t->v6_mask;
	}
	actions[0].type = RTE_FLOW_ACTION_TYPE_RSS;
	actions[0].conf = &t->rss;
	actions[1].type = RTE_FLOW_ACTION_TYPE_END;
	actions[1].conf = NULL;
	if (rte_flow_validate(port, &attr, pattern, actions, &ferr) ||
	    !rte_flow_create(port, &attr, pattern, actions, &ferr)) {
		snprintf(err, errlen, "rte_flow rule for IPv%u%s refused: %s", family,
			 prefix ? " routes" : "", ferr.message ? ferr.message : "no reason given");
		return -1;
	}
	return 0;
}

int dp_flow_take(uint16_t port, uint32_t nqueues, const struct rfw_route *routes,
		 uint32_t nroutes, char *err, size_t errlen)
{
	static struct take_rule t;	/* set-up only, one port at a time */

	memset(&t, 0, sizeof(t));
	for (uint32_t q = 0; q < nqueues; q++)
		t.queues[q] = (uint16_t)q;
	dp_rss_key(t.key, sizeof(t.key));
	t.rss.func = RTE_ETH_HASH_FUNCTION_TOEPLITZ;
	t.rss.types = RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP;
	t.rss.key_len = sizeof(t.key);
	t.rss.key = t.key;
	t.rss.queue_num = nqueues;
	t.rss.queue = t.queues;
	if (!nroutes)
		return take(port, &t, 4, NULL, 0, err, errlen) ||
		       take(port, &t, 6, NULL, 0, err, errlen) ? -1 : 0;
	for (uint32_t i = 0; i < nroutes; i++)
		if (take(port, &t, routes[i].family, routes[i].prefix, routes[i].len, err, errlen))
			return -1;
	return 0;
}
