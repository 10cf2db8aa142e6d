/* rte_acl adapter for clsbench: IPv4 5-tuple field layout as DPDK's own
 * examples use it (proto byte, then 32-bit words: src, dst, ports);
 * priority = reverse rule order so first match wins as in rampart. */
#include "rteacl.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_eal.h>
#include <rte_malloc.h>

struct tuple {			/* what rte_acl reads, network byte order */
	uint8_t proto;
	uint8_t pad[3];
	uint32_t src, dst;
	uint16_t sport, dport;
};

enum { F_PROTO, F_SRC, F_DST, F_SPORT, F_DPORT, F_NUM };

static const struct rte_acl_field_def defs[F_NUM] = {
	{RTE_ACL_FIELD_TYPE_BITMASK, 1, F_PROTO, 0, offsetof(struct tuple, proto)},
	{RTE_ACL_FIELD_TYPE_MASK, 4, F_SRC, 1, offsetof(struct tuple, src)},
	{RTE_ACL_FIELD_TYPE_MASK, 4, F_DST, 2, offsetof(struct tuple, dst)},
	{RTE_ACL_FIELD_TYPE_RANGE, 2, F_SPORT, 3, offsetof(struct tuple, sport)},
	{RTE_ACL_FIELD_TYPE_RANGE, 2, F_DPORT, 3, offsetof(struct tuple, dport)},
};

RTE_ACL_RULE_DEF(bench_rule, F_NUM);

struct rteacl {
	struct rte_acl_ctx *ctx;
	struct tuple *tuples;
	const uint8_t **data;
	uint32_t n;
};

int rteacl_init(const char *prog)
{
	char *argv[] = {(char *)prog, "-l", "0", "--no-huge", "--no-pci", "-m", "1024",
			"--log-level=error", "--no-telemetry", NULL};

	return rte_eal_init(9, argv) < 0 ? -1 : 0;
}

static size_t heap_bytes(void)
{
	struct rte_malloc_socket_stats st;

	if (rte_malloc_get_socket_stats(0, &st) < 0)
		return 0;
	return st.heap_allocsz_bytes;
}

static uint32_t be_addr(const uint8_t *a)
{
	return (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
}

struct rteacl *rteacl_build(const struct rfw_acl_entry *e, uint32_t n, size_t *bytes)
{
	struct rte_acl_param prm = {
		.name = "clsbench", .socket_id = 0,
		.rule_size = RTE_ACL_RULE_SZ(F_NUM), .max_rule_num = n,
	};
	struct rte_acl_config cfg = {.num_categories = 1, .num_fields = F_NUM};
	struct rteacl *a = calloc(1, sizeof(*a));
	size_t before = heap_bytes();

	memcpy(cfg.defs, defs, sizeof(defs));
	if (!a || !(a->ctx = rte_acl_create(&prm)))
		goto fail;
	for (uint32_t i = 0; i < n; i++) {
		struct bench_rule r = {0};

		r.data.category_mask = 1;
		r.data.priority = (int32_t)(n - i);	/* earlier rule wins */
		r.data.userdata = e[i].rule;
		if (e[i].flags & RFW_ACL_PROTO) {
			r.field[F_PROTO].value.u8 = e[i].proto;
			r.field[F_PROTO].mask_range.u8 = 0xff;
		}
		r.field[F_SRC].value.u32 = be_addr(e[i].src);
		r.field[F_SRC].mask_range.u32 = e[i].src_len;
		r.field[F_DST].value.u32 = be_addr(e[i].dst);
		r.field[F_DST].mask_range.u32 = e[i].dst_len;
		r.field[F_SPORT].value.u16 = e[i].sport_lo;
		r.field[F_SPORT].mask_range.u16 = e[i].sport_hi;
		r.field[F_DPORT].value.u16 = e[i].dport_lo;
		r.field[F_DPORT].mask_range.u16 = e[i].dport_hi;
		if (rte_acl_add_rules(a->ctx, (struct rte_acl_rule *)&r, 1) < 0)
			goto fail;
	}
	if (rte_acl_build(a->ctx, &cfg) < 0)
		goto fail;
	*bytes = heap_bytes() - before;
	return a;
fail:
	rteacl_free(a);
	return NULL;
}

int rteacl_prepare(struct rteacl *a, const struct pkt_key *keys, uint32_t n)
{
	a->tuples = calloc(n, sizeof(*a->tuples));
	a->data = calloc(n, sizeof(*a->data));
	if (!a->tuples || !a->data)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		a->tuples[i].proto = keys[i].proto;
		memcpy(&a->tuples[i].src, keys[i].src, 4);
		memcpy(&a->tuples[i].dst, keys[i].dst, 4);
		a->tuples[i].sport = htons(keys[i].sport);
		a->tuples[i].dport = htons(keys[i].dport);
		a->data[i] = (const uint8_t *)&a->tuples[i];
	}
	a->n = n;
	return 0;
}

void rteacl_classify(struct rteacl *a, uint32_t first, uint32_t n, uint32_t *rules)
{
	rte_acl_classify(a->ctx, a->data + first, rules, n, 1);
}

void rteacl_free(struct rteacl *a)
{
	if (!a)
		return;
	if (a->ctx)
		rte_acl_free(a->ctx);
	free(a->tuples);
	free(a->data);
	free(a);
}
