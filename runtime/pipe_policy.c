/* A worker's policy generations: building one off the packet path,
 * adopting it between bursts, sweeping conntrack over to it. The first
 * policy (pipe_create) goes through the same build and adopt. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_int.h"
#include "portmap.h"
#include "rule_map.h"

static int lpm_from_ref(struct lpm *t, const struct rfw_view *v, const struct rfw_lpm_ref *r,
			uint8_t bytes)
{
	if (!v->lpm_data || r->offset == RFW_LPM_NONE)
		return 0;
	t->root = v->lpm_data + r->offset;
	t->groups = t->root + LPM_ROOT_SIZE;
	t->group_count = r->group_count;
	t->addr_bytes = bytes;
	return 1;
}

/* A port's address of the family the policy is built with, or NULL. */
static const uint8_t *port_addr(const struct pipe_policy *p, uint32_t port, uint8_t family)
{
	const struct pipe_port_addrs *a = &p->addrs[port];

	if (family == 4)
		return a->has_v4 ? a->v4 : NULL;
	return a->has_v6 ? a->v6 : NULL;
}

static void fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- NAT pools: one per (SNAT rule), one per (masquerade rule, port
 * with an address of the rule's family). A reload finds the running pool
 * of the same addresses and ports and keeps it, bindings and all; a pool
 * no rule uses any more stays for its flows (their ports go back to it
 * on expiry) and is freed with the worker. ---- */

static int same_pool(const struct nat_pool_config *a, const struct nat_pool_config *b)
{
	return a->family == b->family && a->strategy == b->strategy &&
	       a->worker_id == b->worker_id && a->worker_count == b->worker_count &&
	       a->port_lo == b->port_lo && a->port_hi == b->port_hi &&
	       !memcmp(a->addr_lo, b->addr_lo, 16) && !memcmp(a->addr_hi, b->addr_hi, 16);
}

/* NAT_STEER's queue function when frames go to their flow's worker: the
 * worker the reply's tuple maps to (home.h), as packet_home will find
 * it when the reply arrives. */
static uint32_t reply_home(const struct pkt_key *reply, void *ctx)
{
	return pipe_home_of(ctx, reply->src, reply->dst, reply->sport, reply->dport, reply->proto,
			    reply->family);
}

/* Index the pool will have in w->pools once p is adopted, or -1. */
static int32_t pool_for(const struct pipe_worker *w, struct pipe_policy *p,
			const struct rfw_nat_rule *rule, const uint8_t *masq)
{
	uint16_t count = w->cfg.worker_count ? w->cfg.worker_count : 1;
	struct nat_pool_config c;
	struct pipe_nat_pool *np;

	if (nat_pool_config_from_rule(&c, rule, masq, w->cfg.worker_id, count) < 0)
		return -1;
	c.start_seed = w->nat_start;
	if (w->handoff) {	/* replies must map back to this worker */
		c.strategy = NAT_STEER;
		c.queue_of = reply_home;
		c.queue_ctx = (void *)w;
		c.queue = w->cfg.worker_id;
		/* a port qualifies 1 time in n: 16n tries miss with probability
		 * (1 - 1/n)^16n < e^-16, whatever n */
		c.steer_tries = 16u * count > NAT_STEER_TRIES ? 16u * count : NAT_STEER_TRIES;
	}
	for (uint32_t i = 0; i < w->npools; i++)
		if (same_pool(&w->pools[i]->cfg, &c))
			return (int32_t)i;
	for (uint32_t i = 0; i < p->nadd; i++)
		if (same_pool(&p->add_pools[i]->cfg, &c))
			return (int32_t)(w->npools + i);
	if (w->npools + p->nadd >= PIPE_MAX_POOLS)
		return -1;
	np = calloc(1, sizeof(*np));
	if (!np)
		return -1;
	if (nat_pool_init(&np->pool, &c) < 0) {
		free(np);
		return -1;
	}
	np->cfg = c;
	p->add_pools[p->nadd] = np;
	return (int32_t)(w->npools + p->nadd++);
}

static int make_pools(const struct pipe_worker *w, struct pipe_policy *p)
{
	const struct rfw_view *v = p->view;
	uint32_t n = v->policy->nat_count, np = w->nports;

	p->snat_pool = malloc((n + 1) * sizeof(*p->snat_pool));
	p->masq_pool = malloc((n + 1) * np * sizeof(*p->masq_pool));
	p->add_pools = calloc((n + 1) * (np + 1), sizeof(*p->add_pools));
	if (!p->snat_pool || !p->masq_pool || !p->add_pools)
		return -1;
	for (uint32_t r = 0; r <= n; r++) {
		const struct rfw_nat_rule *nr;

		p->snat_pool[r] = -1;
		for (uint32_t q = 0; q < np; q++)
			p->masq_pool[r * np + q] = -1;
		if (r == 0)
			continue;	/* record 0 is unused (and absent without NAT) */
		nr = &v->nat_rules[r];
		if (nr->kind == RFW_NAT_SNAT) {
			p->snat_pool[r] = pool_for(w, p, nr, NULL);
			if (p->snat_pool[r] < 0)
				return -1;
		} else if (nr->kind == RFW_NAT_MASQUERADE) {
			for (uint32_t q = 0; q < np; q++) {
				const uint8_t *a = port_addr(p, q, nr->family);

				/* A port without an address of the family
				 * cannot masquerade: such flows are refused
				 * (counted as nat-failed). */
				if (a && (p->masq_pool[r * np + q] = pool_for(w, p, nr, a)) < 0)
					return -1;
			}
		}
	}
	return 0;
}

/* nat_acl's entries split by kind, rule order kept within each. */
static int split_nat_entries(struct pipe_policy *p)
{
	const struct rfw_view *v = p->view;
	uint32_t n = 0;

	p->nat_entries = malloc(((size_t)v->nat_acl_count + 1) * sizeof(*p->nat_entries));
	if (!p->nat_entries)
		return -1;
	for (int dnat = 1; dnat >= 0; dnat--) {
		for (uint32_t e = 0; e < v->nat_acl_count; e++)
			if ((v->nat_rules[v->nat_acl[e].rule].kind == RFW_NAT_DNAT) == dnat)
				p->nat_entries[n++] = e;
		if (dnat)
			p->nat_dnat_count = n;
	}
	p->nat_entry_count = n;
	return 0;
}

/* pipe_policy.dnat_dports, for a worker that hands frames over. */
static int make_dnat_ports(const struct pipe_worker *w, struct pipe_policy *p)
{
	const struct rfw_view *v = p->view;

	if (!w->handoff || !p->nat_dnat_count)
		return 0;
	p->dnat_dports = calloc(65536 / 64, sizeof(uint64_t));
	if (!p->dnat_dports)
		return -1;
	for (uint32_t k = 0; k < p->nat_dnat_count; k++) {
		const struct rfw_acl_entry *e = &v->nat_acl[p->nat_entries[k]];

		portmap_mark(p->dnat_dports, e->dport_lo, e->dport_hi);
		if (!(e->flags & RFW_ACL_PORTS) &&
		    (!(e->flags & RFW_ACL_PROTO) || (e->proto != 6 && e->proto != 17 && e->proto != 132)))
			p->dnat_portless = 1;
		/* a forward to any address of a network (or to any address)
		 * also takes the replies its ports meet on inside hosts */
		if (e->family && !(e->flags & RFW_ACL_DST_SET) &&
		    e->dst_len == (e->family == 4 ? 32 : 128))
			continue;
		if (!p->dnat_answer_dports &&
		    !(p->dnat_answer_dports = calloc(65536 / 64, sizeof(uint64_t))))
			return -1;
		portmap_mark(p->dnat_answer_dports, e->dport_lo, e->dport_hi);
	}
	for (uint32_t r = 1; r <= v->policy->nat_count; r++) {
		const struct rfw_nat_rule *n = &v->nat_rules[r];
		uint32_t lo = n->port_lo, hi = n->port_hi;

		if (n->kind == RFW_NAT_DNAT)
			continue;
		if (!lo && !hi) {	/* nat.c's default range */
			lo = NAT_DEFAULT_PORT_LO;
			hi = NAT_DEFAULT_PORT_HI;
		}
		for (uint32_t w = lo / 64; lo <= hi && w <= hi / 64; w++) {
			uint64_t both = p->dnat_dports[w] & portmap_word(w, lo, hi);

			if (!both)
				continue;
			if (!p->dnat_answer_dports &&
			    !(p->dnat_answer_dports = calloc(65536 / 64, sizeof(uint64_t))))
				return -1;
			p->dnat_answer_dports[w] |= both;
		}
	}
	return 0;
}

/* ---- DNAT rules kept over a reload (enum pipe_second) ---- */

static int is_dnat(const struct rfw_view *v, const struct rfw_acl_entry *e)
{
	return v->nat_rules[e->rule].kind == RFW_NAT_DNAT;
}

/* The next DNAT entry of v at or after *e (nat_acl order is rule order),
 * or NULL. */
static const struct rfw_acl_entry *next_dnat(const struct rfw_view *v, uint32_t *e)
{
	for (; *e < v->nat_acl_count; (*e)++)
		if (is_dnat(v, &v->nat_acl[*e]))
			return &v->nat_acl[(*e)++];
	return NULL;
}

/* Do a's and b's DNAT rules send every packet to the same worker? Yes
 * when their entries match the same packets in the same order and
 * translate them to the same address and port (rule numbers and names
 * may differ). Entries that name address sets are taken as different:
 * their members are not compared. */
static int dnat_same(const struct rfw_view *a, const struct rfw_view *b)
{
	uint32_t ea = 0, eb = 0;

	for (;;) {
		const struct rfw_acl_entry *x = next_dnat(a, &ea), *y = next_dnat(b, &eb);
		const struct rfw_nat_rule *rx, *ry;
		struct rfw_acl_entry cx, cy;

		if (!x || !y)
			return !x && !y;
		if ((x->flags | y->flags) & (RFW_ACL_SRC_SET | RFW_ACL_DST_SET))
			return 0;
		rx = &a->nat_rules[x->rule];
		ry = &b->nat_rules[y->rule];
		cx = *x;
		cy = *y;
		cx.rule = cy.rule = 0;
		if (memcmp(&cx, &cy, sizeof(cx)) || rx->family != ry->family ||
		    memcmp(rx->addr_lo, ry->addr_lo, 16) || rx->port_lo != ry->port_lo)
			return 0;
	}
}

/* Is v's DNAT the same as one of list[0..n)? */
static int dnat_in(const struct rfw_view *v, const struct rfw_view *const *list, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (list[i] == v || dnat_same(list[i], v))
			return 1;
	return 0;
}

uint32_t pipe_dnat_to_keep(const struct rfw_view *running, const struct rfw_view *const *kept,
			   uint32_t nkept, const struct rfw_view *next, const struct rfw_view **keep,
			   uint32_t *dropped)
{
	uint32_t n = 0;

	*dropped = 0;
	if (!running)
		return 0;
	/* newest first: the running rules, then those kept before, each
	 * unless next (or a newer one kept) places its flows the same */
	if (!dnat_same(running, next))
		keep[n++] = running;
	for (uint32_t i = 0; i < nkept; i++) {
		if (dnat_same(kept[i], next) || dnat_in(kept[i], keep, n))
			continue;
		if (n == PIPE_DNAT_KEPT_MAX) {
			(*dropped)++;	/* the oldest: their flows lose their way */
			continue;
		}
		keep[n++] = kept[i];
	}
	return n;
}

static void dnat_set_free(struct pipe_dnat_set *d)
{
	while (d) {
		struct pipe_dnat_set *older = d->older;

		nat_match_free(&d->match);
		free(d->own_entries);
		free(d->own_dports);
		free(d);
		d = older;
	}
}

/* One kept set: prev's DNAT entries and the ports they take. */
static struct pipe_dnat_set *dnat_set_make(const struct rfw_view *prev)
{
	struct pipe_dnat_set *d = calloc(1, sizeof(*d));
	uint32_t e = 0;
	const struct rfw_acl_entry *x;

	if (!d)
		return NULL;
	d->view = prev;
	d->sets = (struct cls_sets){prev->sets, prev->set_count, prev->lpm_data};
	d->own_entries = malloc(((size_t)prev->nat_acl_count + 1) * sizeof(*d->own_entries));
	d->own_dports = calloc(65536 / 64, sizeof(uint64_t));
	if (!d->own_entries || !d->own_dports) {
		dnat_set_free(d);
		return NULL;
	}
	while ((x = next_dnat(prev, &e)) != NULL) {
		d->own_entries[d->count++] = (uint32_t)(x - prev->nat_acl);
		portmap_mark(d->own_dports, x->dport_lo, x->dport_hi);
	}
	d->entries = d->own_entries;
	d->dports = d->own_dports;
	if (nat_match_init(&d->match, prev->nat_acl, &d->sets, d->entries, d->count,
			   &prev->nat_cls[0]) < 0) {
		dnat_set_free(d);
		return NULL;
	}
	return d;
}

int pipe_policy_keep_dnat(const struct pipe_worker *w, struct pipe_policy *p,
			  const struct rfw_view *const *prev, uint32_t n)
{
	struct pipe_dnat_set **tail = &p->prev_dnat;

	dnat_set_free(p->prev_dnat);
	p->prev_dnat = NULL;
	if (!n || !w->handoff || !w->stateful)
		return 0;
	for (uint32_t i = 0; i < n && i < PIPE_DNAT_KEPT_MAX; i++) {
		*tail = dnat_set_make(prev[i]);
		if (!*tail) {
			dnat_set_free(p->prev_dnat);
			p->prev_dnat = NULL;
			return -1;
		}
		tail = &(*tail)->older;
	}
	return 1;
}

/* The previous generation's rule and limit numbers, mapped to ours. */
static int make_remap(const struct pipe_worker *w, struct pipe_policy *p, const uint32_t *map)
{
	const struct rfw_view *from = w->pol->view;

	p->prev_tag = w->pol->tag;
	p->remap_count = from->policy->rule_count + 1;
	if (!map)
		map = p->own_remap = rule_map_build(from, NULL, p->view, NULL);
	if (!map)
		return -1;
	p->remap = map;
	if (w->pol->have_rl && p->have_rl) {	/* both have limits: carry buckets */
		p->limit_fwd = rule_map_limits(from, p->view, map);
		if (!p->limit_fwd)
			return -1;
	}
	return 0;
}

void pipe_counters_free(struct pipe_counters *c)
{
	free(c);
}

static struct pipe_counters *counters_new(uint32_t n, struct pipe_counters **spare)
{
	struct pipe_counters *c;

	if (spare && *spare && (*spare)->cap >= n) {
		c = *spare;
		*spare = NULL;
		return c;
	}
	c = calloc(1, sizeof(*c) + (size_t)n * (sizeof(*c->rules) + sizeof(*c->limited) +
						 sizeof(*c->logb)));
	if (!c)
		return NULL;
	c->cap = n;
	c->rules = (struct pipe_rule_stats *)(c + 1);
	c->limited = (uint64_t *)(c->rules + n);
	c->logb = (struct pktlog_bucket *)(c->limited + n);
	return c;
}

struct pipe_counters *pipe_counters_take(struct pipe_policy *p)
{
	struct pipe_counters *c = p->counters;

	if (!c)
		return NULL;
	p->counters = NULL;
	p->rules = NULL;
	p->limited = NULL;
	memset(c->rules, 0, (size_t)c->cap * sizeof(*c->rules));
	memset(c->limited, 0, (size_t)c->cap * sizeof(*c->limited));
	memset(c->logb, 0, (size_t)c->cap * sizeof(*c->logb));
	return c;
}

static void map_ports(const struct pipe_worker *w, struct pipe_policy *p)
{
	const struct rfw_view *v = p->view;

	memset(p->if_port, PIPE_NO_PORT, sizeof(p->if_port));
	for (uint32_t q = 0; q < w->nports; q++) {
		p->port_if[q] = PIPE_NO_PORT;
		for (uint32_t i = 0; i < v->interface_count && i < RFW_MAX_INTERFACES; i++)
			if (!strncmp(v->interfaces[i].name, w->cfg.port[q].name,
				     sizeof(v->interfaces[i].name))) {
				p->port_if[q] = (uint8_t)i;
				p->if_port[i] = (uint8_t)q;
			}
	}
}

struct pipe_policy *pipe_policy_build(const struct pipe_worker *w, const struct rfw_view *view,
				      const uint32_t *map, enum pipe_flow_policy flows,
				      struct pipe_counters **spare, char *err, size_t errlen)
{
	struct pipe_policy *p;

	if (!!view->policy->stateful != !!w->stateful) {
		fail(err, errlen, "defaults.stateful is %s in the new policy and %s in the running "
				  "one: conntrack is made at start, so restart rampartd to change it",
		     view->policy->stateful ? "true" : "false", w->stateful ? "true" : "false");
		errno = EINVAL;
		return NULL;
	}
	if (w->mode == PIPE_ROUTER && (!view->route_table || !view->policy->route_count)) {
		fail(err, errlen, "the policy has no routes: router mode forwards by them");
		errno = EINVAL;
		return NULL;
	}
	if (view->policy->rule_count > PIPE_RULE_MASK - 1) {
		fail(err, errlen, "%u rules: a worker takes at most %u", view->policy->rule_count,
		     PIPE_RULE_MASK - 1);
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		goto nomem;
	p->view = view;
	memcpy(p->addrs, w->next_addrs, sizeof(p->addrs));
	p->rule_count = view->policy->rule_count;
	p->recheck = flows == PIPE_FLOWS_RECHECK;
	p->tag = w->pol ? (w->pol->tag + 1) & PIPE_TAG_GEN : 0;
	p->prev_tag = p->tag;
	p->counters = counters_new(p->rule_count + 1, spare);
	if (!p->counters)
		goto nomem;
	p->rules = p->counters->rules;
	p->limited = p->counters->limited;
	cls_table_init(&p->acl, view);
	p->rules_see_invalid = view->rules_see_invalid;
	if (view->route_table) {
		p->have_route4 = lpm_from_ref(&p->route4, view, &view->route_table->v4, 4);
		p->have_route6 = lpm_from_ref(&p->route6, view, &view->route_table->v6, 16);
	}
	map_ports(w, p);
	if (view->limit_count) {
		/* a stateful policy's limits count new flows, which spread over
		 * the workers by their tuples: per-source limits split too */
		struct rl_config rc = {.worker_count = w->cfg.worker_count, .seed = w->cfg.seed,
				       .split_sources = view->policy->stateful};

		if (rl_table_init(&p->rl, view->limits, view->limit_count, &rc) < 0)
			goto nomem;
		p->have_rl = 1;
	}
	if (split_nat_entries(p) < 0 || make_dnat_ports(w, p) < 0 ||
	    nat_match_init(&p->dnat_match, view->nat_acl, &p->acl.sets, p->nat_entries,
			   p->nat_dnat_count, &view->nat_cls[0]) < 0 ||
	    nat_match_init(&p->snat_match, view->nat_acl, &p->acl.sets,
			   p->nat_entries + p->nat_dnat_count,
			   p->nat_entry_count - p->nat_dnat_count, &view->nat_cls[1]) < 0)
		goto nomem;
	if (w->stateful && make_pools(w, p) < 0) {
		fail(err, errlen, "cannot make the NAT pools (out of memory, or over %u pools "
				  "made since start: restart rampartd)", PIPE_MAX_POOLS);
		pipe_policy_free(p);
		errno = ENOMEM;
		return NULL;
	}
	if (w->pol && make_remap(w, p, map) < 0)
		goto nomem;
	return p;
nomem:
	fail(err, errlen, "out of memory building the worker's tables");
	pipe_policy_free(p);
	errno = ENOMEM;
	return NULL;
}

void pipe_policy_free(struct pipe_policy *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->nadd; i++) {	/* built, never adopted */
		nat_pool_free(&p->add_pools[i]->pool);
		free(p->add_pools[i]);
	}
	if (p->have_rl)
		rl_table_free(&p->rl);
	free(p->add_pools);
	nat_match_free(&p->dnat_match);
	nat_match_free(&p->snat_match);
	free(p->nat_entries);
	free(p->dnat_dports);
	free(p->dnat_answer_dports);
	dnat_set_free(p->prev_dnat);
	free(p->snat_pool);
	free(p->masq_pool);
	pipe_counters_free(p->counters);
	free(p->own_remap);
	free(p->limit_fwd);
	free(p);
}

/* A stored rule (tag and number) as the current generation sees it.
 * Returns the rule number; *recheck is set when the flow is due a
 * re-check against the current rules. */
static uint32_t current_rule(const struct pipe_policy *p, uint32_t stored, int *recheck)
{
	uint32_t tag = stored >> PIPE_RULE_BITS, rule = stored & PIPE_RULE_MASK;

	if ((tag & PIPE_TAG_GEN) == p->tag) {
		*recheck = !!(tag & PIPE_TAG_RECHECK);
		return rule;
	}
	/* A flow still due the re-check of an earlier reload stays due it
	 * under a reload that keeps flows: no packet has been judged by the
	 * rules since the reload that asked for it, and the policy in force
	 * at its next packet judges it. */
	*recheck = p->recheck || (tag & PIPE_TAG_RECHECK);
	/* Only the generation before can be left (the sweep sees to it),
	 * but a fragment entry may be older: its rule is unknown, 0. */
	if ((tag & PIPE_TAG_GEN) == p->prev_tag && p->remap && rule < p->remap_count &&
	    p->remap[rule] != RULE_MAP_GONE)
		return p->remap[rule];
	return 0;	/* its rule is gone: the default's row */
}

int pipe_flow_restamp_rule(const struct pipe_policy *p, uint32_t stored, uint32_t *rule)
{
	int recheck;

	*rule = current_rule(p, stored, &recheck);
	return recheck;
}

static uint32_t sweep_one(void *ctx, uint32_t stored)
{
	const struct pipe_policy *p = ctx;
	int recheck;
	uint32_t rule;

	if ((stored >> PIPE_RULE_BITS & PIPE_TAG_GEN) == p->tag)
		return stored;		/* restamped by a packet already */
	rule = current_rule(p, stored, &recheck);
	return pipe_flow_rule(p->tag | (recheck ? PIPE_TAG_RECHECK : 0), rule);
}

/* ---- Kept DNAT rules, released once no flow needs them ----
 * A flow there at a change may need the rules kept when a DNAT rule
 * of the policy or of a kept one could have homed its packets: it was
 * translated by one (its reply does not come from where it was sent),
 * its original destination port is one such a rule takes, or its
 * protocol has no ports (homed by a rule's addresses). Others are homed
 * by their own tuple under all of them. Flows made after the change are
 * not counted, but those the look reaches while it goes are (it cannot
 * tell them apart): only later, never wrongly released. */
static int port_in(const uint64_t *ports, uint16_t port)
{
	return !ports || (ports[port >> 6] >> (port & 63) & 1);
}

static void kept_mark_one(void *ctx, const struct ct_table *t, uint32_t flow)
{
	struct pipe_worker *w = ctx;
	const struct pipe_dnat_set *d = w->pol->prev_dnat;
	struct ct_flow_info fi;
	int ports, taken;

	if (!d || ct_flow_get(t, flow, &fi) < 0)
		return;
	ports = fi.orig.proto == 6 || fi.orig.proto == 17 || fi.orig.proto == 132;	/* TCP, UDP, SCTP */
	taken = w->pol->nat_dnat_count && port_in(w->pol->dnat_dports, fi.orig.dport);
	for (; d && !taken; d = d->older)
		taken = d->count && port_in(d->dports, fi.orig.dport);
	if (ports && !memcmp(fi.orig.dst, fi.reply.src, 16) && fi.orig.dport == fi.reply.sport &&
	    !taken)
		return;
	if (!(w->kept_mark[flow >> 6] >> (flow & 63) & 1)) {
		w->kept_mark[flow >> 6] |= 1ull << (flow & 63);
		__atomic_store_n(&w->kept_flows, w->kept_flows + 1, __ATOMIC_RELAXED);
	}
}

/* Do two policies keep the same DNAT rules (the same views, in order)? */
static int same_kept(const struct pipe_dnat_set *a, const struct pipe_dnat_set *b)
{
	for (; a && b; a = a->older, b = b->older)
		if (a->view != b->view)
			return 0;
	return !a && !b;
}

/* At adopt: other DNAT rules kept (or none) start the count over (the
 * look marks again every flow any of them may home, those of the rules
 * kept before too); the same rules carried over a reload keep it. */
static void kept_restart(struct pipe_worker *w, const struct pipe_policy *old,
			 const struct pipe_policy *p)
{
	if (!w->kept_mark || same_kept(old ? old->prev_dnat : NULL, p->prev_dnat))
		return;
	memset(w->kept_mark, 0, (ct_max_flows(w->ct) + 63) / 64 * sizeof(uint64_t));
	__atomic_store_n(&w->kept_flows, 0, __ATOMIC_RELAXED);
	w->kept_cursor = 0;
	__atomic_store_n(&w->kept_marking, p->prev_dnat != NULL, __ATOMIC_RELAXED);
}

int pipe_dnat_kept_needed(const struct pipe_worker *w)
{
	return w->pol && w->pol->prev_dnat &&
	       (__atomic_load_n(&w->kept_marking, __ATOMIC_RELAXED) ||
		__atomic_load_n(&w->kept_flows, __ATOMIC_RELAXED));
}

void pipe_drop_kept_dnat(struct pipe_worker *w)
{
	if (!w->pol || !w->pol->prev_dnat)
		return;
	dnat_set_free(w->pol->prev_dnat);
	w->pol->prev_dnat = NULL;
	if (w->kept_mark)
		memset(w->kept_mark, 0, (ct_max_flows(w->ct) + 63) / 64 * sizeof(uint64_t));
	__atomic_store_n(&w->kept_flows, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&w->kept_marking, 0, __ATOMIC_RELAXED);
}

int pipe_sweep(struct pipe_worker *w)
{
	if (w->sweeping) {
		if (ct_rewrite_rules(w->ct, &w->sweep_cursor, PIPE_SWEEP_PER_CALL, sweep_one,
				     w->pol))
			return 1;
		w->sweeping = 0;
	}
	if (w->kept_marking) {
		if (ct_each(w->ct, &w->kept_cursor, PIPE_SWEEP_PER_CALL, kept_mark_one, w))
			return 1;
		__atomic_store_n(&w->kept_marking, 0, __ATOMIC_RELAXED);
	}
	return 0;
}

/* nat_elsewhere_fn over a worker's pools: another of them holds the
 * pair. */
static int pair_held_elsewhere(const struct nat_pool *p, const uint8_t *addr, uint16_t port,
			       void *ctx)
{
	const struct pipe_worker *w = ctx;

	for (uint32_t i = 0; i < w->npools; i++) {
		const struct nat_pool *q = &w->pools[i]->pool;

		if (q != p && q->family == p->family &&
		    nat_slot_in_use(q, nat_pair_slot(q, addr, port)))
			return 1;
	}
	return 0;
}

/* A pool that may hand out pairs another pool of the worker has (two
 * rules to one address, a reload that changed a rule's range while the
 * old pool's flows live on): both check each other from now on. */
static void share_pairs(struct pipe_worker *w, struct pipe_nat_pool *np)
{
	for (uint32_t i = 0; i < w->npools; i++) {
		struct pipe_nat_pool *q = w->pools[i];

		if (q != np && nat_pools_overlap(&q->cfg, &np->cfg)) {
			nat_pool_share(&q->pool, pair_held_elsewhere, w);
			nat_pool_share(&np->pool, pair_held_elsewhere, w);
		}
	}
}

struct pipe_policy *pipe_adopt(struct pipe_worker *w, struct pipe_policy *p)
{
	struct pipe_policy *old = w->pol;

	/* The invariant the tags rely on: no flow older than the previous
	 * generation. A caller that adopts again mid-sweep finishes it. */
	while (pipe_sweep(w))
		;
	for (uint32_t i = 0; i < p->nadd; i++) {
		w->pools[w->npools++] = p->add_pools[i];
		share_pairs(w, p->add_pools[i]);
	}
	p->nadd = 0;
	if (old && old->have_rl && p->have_rl)
		rl_table_carry(&p->rl, &old->rl, p->limit_fwd);
	if (w->ct)
		ct_set_timeouts(w->ct, p->view->policy->timeout,
				(uint32_t)(w->now_ns / 1000000000u));	/* the last burst's */
	for (uint32_t k = 0; k < w->nports; k++)	/* replies, local, from now on */
		pipe_port_addrs_put(&w->cfg.port[k], &p->addrs[k]);
	w->pol = p;
	w->fc_epoch++;		/* routes, interfaces, rules: the flow cache starts over */
	if (old && w->ct) {
		w->sweep_cursor = 0;
		w->sweeping = 1;
		kept_restart(w, old, p);
	}
	return old;
}

const struct rfw_view *pipe_policy_view(const struct pipe_policy *p)
{
	return p->view;
}

const struct pipe_rule_stats *pipe_policy_rule_stats(const struct pipe_policy *p)
{
	return p->rules;
}

const uint64_t *pipe_policy_limited(const struct pipe_policy *p)
{
	return p->limited;
}
