/* Renders `rampartctl status` and `rampartctl stats`. Interface numbers
 * follow the counters block printed on SIGUSR1 (counters.c): sent means
 * handed to the NIC, and frames the backend had no room for count as
 * dropped on the port they came in on. RX_MISSED is what the kernel or
 * NIC dropped before any worker saw it (the backend's rx_loss). */
#include "ctl_stats.h"

#include "reload.h"

#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "counters.h"
#include "ctl_rxloss.h"
#include "ctl_table.h"
#include "flowstate.h"
#include "port_addrs.h"

static void sum_port(const struct ctl_report *r, uint32_t port, struct counters_port *s)
{
	memset(s, 0, sizeof(*s));
	for (uint32_t k = 0; k < r->src->nworkers; k++)
		counters_port_add(s, &r->jobs[k].stats.port[port], &r->jobs[k].port[port]);
}

/* One worker's totals over its ports. */
static void sum_worker(const struct ctl_report *r, uint32_t k, struct counters_port *s)
{
	memset(s, 0, sizeof(*s));
	for (uint32_t p = 0; p < r->src->nports; p++)
		counters_port_add(s, &r->jobs[k].stats.port[p], &r->jobs[k].port[p]);
}

static uint8_t rule_action(const struct rfw_view *view, uint32_t n)
{
	return n ? view->rules[n].action : view->policy->default_action;
}

static const char *rule_name(const struct ctl_report *r, uint32_t n)
{
	const char *name = n < r->names->count ? r->names->name[n] : NULL;

	return name && *name ? name : n ? "?" : "default";
}

/* "no-neighbour" -> "no_neighbour": JSON keys are snake_case. */
static void json_key(struct ctl_buf *out, const char *name)
{
	char k[64];
	size_t i = 0;

	for (; name[i] && i + 1 < sizeof(k); i++)
		k[i] = name[i] == '-' ? '_' : name[i];
	k[i] = '\0';
	ctl_json_str(out, k);
}

/* ---- status ---- */

static void conntrack_use(const struct ctl_report *r, uint64_t *in_use, uint64_t *max)
{
	*in_use = 0;
	*max = 0;
	for (uint32_t k = 0; k < r->src->nworkers; k++)
		if (r->jobs[k].has_ct) {
			*in_use += r->jobs[k].ct.in_use;
			*max += r->src->max_flows;
		}
}

/* Flows evicted to make room in a full table (early drop), all workers. */
uint64_t ctl_sum_evicted(const struct ctl_report *r)
{
	uint64_t n = 0;

	for (uint32_t k = 0; k < r->src->nworkers; k++)
		if (r->jobs[k].has_ct)
			n += r->jobs[k].ct.evicted;
	return n;
}

/* Pool i over the workers (each owns a share of its ports). */
static void pool_use(const struct ctl_report *r, uint32_t i, uint64_t *in_use, uint64_t *cap,
		     uint64_t *failures)
{
	*in_use = *cap = *failures = 0;
	for (uint32_t k = 0; k < r->src->nworkers; k++)
		if (i < r->jobs[k].npools) {
			*in_use += r->jobs[k].pool[i].in_use;
			*cap += r->jobs[k].pool_capacity[i];
			*failures += r->jobs[k].pool[i].failures;
		}
}

/* Pool i's ports whose reply maps to another worker than the flow's
 * (nat.h `remote`, with handoff): those flows' replies are lost. */
static uint64_t pool_unsteered(const struct ctl_report *r, uint32_t i)
{
	uint64_t n = 0;

	for (uint32_t k = 0; k < r->src->nworkers; k++)
		if (i < r->jobs[k].npools)
			n += r->jobs[k].pool[i].remote;
	return n;
}

/* The workers' second chances (enum pipe_second): sets of DNAT rules
 * kept (by every worker: they adopt one policy; the most, while one
 * adopts), redirects, packets handed. */
static void second_chance(const struct ctl_report *r, int *kept, uint64_t *redirects,
			  uint64_t *packets)
{
	*kept = 0;
	*redirects = *packets = 0;
	for (uint32_t k = 0; k < r->src->nworkers; k++) {
		if (r->jobs[k].dnat_kept > *kept)
			*kept = r->jobs[k].dnat_kept;
		*redirects += r->jobs[k].redirects;
		*packets += r->jobs[k].stats.second_chance;
	}
}

uint64_t ctl_pool_reclaimed(const struct ctl_report *r, uint32_t i)
{
	uint64_t n = 0;

	for (uint32_t k = 0; k < r->src->nworkers; k++)
		if (i < r->jobs[k].npools)
			n += r->jobs[k].pool[i].reclaimed;
	return n;
}

/* Frames handed between workers (handoff.h): the rings' size, 0 when
 * off (one worker, a stateless policy, or --handoff off). */
static uint32_t handoff_slots(const struct control_src *src)
{
	const struct handoff *h = src->nworkers ? src->workers[0]->ho : NULL;

	return h ? h->slots : 0;
}

static const char *policy_path(const struct control_src *src)
{
	return src->reload ? src->reload->path : src->policy_path;
}

void ctl_reload_answer(struct ctl_buf *out, const struct reloader *rl,
		       const struct reload_timing *t, enum pipe_flow_policy flows, int json)
{
	const struct rfw_view *v = rl->view;

	if (json) {
		ctl_puts(out, "{\"version\": 1, \"reloaded\": {\"path\": ");
		ctl_json_str(out, rl->path);
		ctl_printf(out, ", \"rules\": %u, \"checksum\": \"%08x\", \"flows\": \"%s\", "
				"\"generation\": %llu, \"mapped_us\": %llu, \"built_us\": %llu, "
				"\"published_us\": %llu, \"released_us\": %llu, "
				"\"dnat_rule_sets_kept\": %u, \"dnat_rule_sets_dropped\": %u}}\n",
			   v->policy->rule_count, v->hdr->checksum, reload_flows_name(flows),
			   (unsigned long long)rl->seq, (unsigned long long)t->mapped,
			   (unsigned long long)t->built, (unsigned long long)t->published,
			   (unsigned long long)t->released, t->dnat_kept, t->dnat_dropped);
		return;
	}
	ctl_printf(out, "reloaded %s: %u rules, checksum %08x, generation %llu, established "
			"flows: %s\n", rl->path, v->policy->rule_count, v->hdr->checksum,
		   (unsigned long long)rl->seq, reload_flows_name(flows));
	ctl_printf(out, "mapped %llu us, built %llu us, published %llu us, old tables released "
			"%llu us after the request\n", (unsigned long long)t->mapped,
		   (unsigned long long)t->built, (unsigned long long)t->published,
		   (unsigned long long)t->released);
	if (t->dnat_kept)	/* with handoff, after changes of DNAT (operations.md) */
		ctl_printf(out, "the DNAT rules of %u polic%s before kept for the connections they "
				"forwarded\n", t->dnat_kept, t->dnat_kept == 1 ? "y" : "ies");
	if (t->dnat_dropped)
		ctl_printf(out, "warning: %u older set%s of DNAT rules no longer kept: connections "
				"they forwarded that still live lose their way\n", t->dnat_dropped,
			   t->dnat_dropped == 1 ? "" : "s");
}

/* --state-file and its checkpoints (flowstate.h). */
static void flow_state_text(struct ctl_buf *out, const struct control_src *src)
{
	const struct flowstate_stats *st = &flowstate_stats;
	uint64_t last = atomic_load_explicit(&st->last_wall_s, memory_order_relaxed);
	uint64_t now = (uint64_t)time(NULL);

	if (!src->state_file)
		return;
	if (!src->state_interval) {
		ctl_printf(out, "flows kept: %s, written at a clean stop\n", src->state_file);
		return;
	}
	ctl_printf(out, "flows kept: %s, written at a clean stop and every %u s\n",
		   src->state_file, src->state_interval);
	ctl_printf(out, "checkpoints: %llu written, %llu failed, %llu voided by a reload",
		   (unsigned long long)atomic_load_explicit(&st->written, memory_order_relaxed),
		   (unsigned long long)atomic_load_explicit(&st->failed, memory_order_relaxed),
		   (unsigned long long)atomic_load_explicit(&st->voided, memory_order_relaxed));
	if (last)
		ctl_printf(out, "; last %llu s ago, %llu flows in %llu ms",
			   (unsigned long long)(now > last ? now - last : 0),
			   (unsigned long long)atomic_load_explicit(&st->last_flows,
								    memory_order_relaxed),
			   (unsigned long long)(atomic_load_explicit(&st->last_ns,
								     memory_order_relaxed) /
						1000000u));
	ctl_puts(out, "\n");
}

static void flow_state_json(struct ctl_buf *out, const struct control_src *src)
{
	const struct flowstate_stats *st = &flowstate_stats;

	if (!src->state_file)
		return;
	ctl_puts(out, " \"state_file\": {\"path\": ");
	ctl_json_str(out, src->state_file);
	ctl_printf(out, ", \"interval_s\": %u, \"checkpoints\": {\"written\": %llu, "
			"\"failed\": %llu, \"voided\": %llu, \"last_unix\": %llu, "
			"\"last_flows\": %llu, \"last_ms\": %llu}},\n", src->state_interval,
		   (unsigned long long)atomic_load_explicit(&st->written, memory_order_relaxed),
		   (unsigned long long)atomic_load_explicit(&st->failed, memory_order_relaxed),
		   (unsigned long long)atomic_load_explicit(&st->voided, memory_order_relaxed),
		   (unsigned long long)atomic_load_explicit(&st->last_wall_s, memory_order_relaxed),
		   (unsigned long long)atomic_load_explicit(&st->last_flows, memory_order_relaxed),
		   (unsigned long long)(atomic_load_explicit(&st->last_ns, memory_order_relaxed) /
					1000000u));
}

static void status_text(struct ctl_buf *out, const struct ctl_report *r)
{
	const struct control_src *src = r->src;
	static const char *const ihead[] = { "INTERFACE", "XDP", "AF_XDP", "QUEUES", "FRAMES TO",
					     "UMEM" };
	static const char *const whead[] = { "WORKER", "QUEUE", "CPUS" };
	static const char *const phead[] = { "NAT POOL", "IN USE", "CAPACITY", "FAILURES",
					     "RECLAIMED", "UNSTEERED" };
	uint64_t in_use, max, up = r->uptime_s;
	uint32_t npools = src->nworkers ? r->jobs[0].npools : 0;
	struct ctl_table t;

	ctl_printf(out, "rampartd %s, pid %ld, up %llud %02llu:%02llu:%02llu\n", RAMPART_VERSION,
		   r->pid, (unsigned long long)(up / 86400), (unsigned long long)(up / 3600 % 24),
		   (unsigned long long)(up / 60 % 60), (unsigned long long)(up % 60));
	ctl_printf(out, "mode:      %s\n", src->mode);
	ctl_printf(out, "backend:   %s\n", src->backend);
	ctl_printf(out, "policy:    %s (%u rules, checksum %08x)\n", policy_path(src),
		   src->view->policy->rule_count, src->view->hdr->checksum);
	if (src->reload)
		ctl_printf(out, "reloads:   %llu done, %llu refused; established flows: %s\n",
			   (unsigned long long)src->reload->reloads,
			   (unsigned long long)src->reload->refused,
			   reload_flows_name(src->reload->flows));
	conntrack_use(r, &in_use, &max);
	if (max && ctl_sum_evicted(r))
		ctl_printf(out, "conntrack: %llu / %llu flows; %llu not established evicted to "
				"make room\n", (unsigned long long)in_use, (unsigned long long)max,
			   (unsigned long long)ctl_sum_evicted(r));
	else if (max)
		ctl_printf(out, "conntrack: %llu / %llu flows\n", (unsigned long long)in_use,
			   (unsigned long long)max);
	else
		ctl_printf(out, "conntrack: off (stateless policy)\n");
	flow_state_text(out, src);
	if (handoff_slots(src)) {
		int kept;
		uint64_t redirects, packets;

		ctl_printf(out, "handoff:   on, %u workers, rings of %u frames; flows homed by %s\n",
			   src->nworkers, handoff_slots(src),
			   src->home && !strcmp(src->home, "rss") ? "RSS" : "hash");
		second_chance(r, &kept, &redirects, &packets);
		if (kept > 1)
			ctl_printf(out, "           second chance: DNAT rules before the last %d "
					"changes kept", kept);
		else if (kept || redirects || packets)
			ctl_printf(out, "           second chance: %s",
				   kept ? "DNAT rules before the last change kept"
					: "no DNAT rules kept");
		if (kept || redirects || packets)
			ctl_printf(out, ", %llu restored flows' redirects; %llu packets sent to look\n",
				   (unsigned long long)redirects, (unsigned long long)packets);
	}
	else
		ctl_printf(out, "handoff:   off (%s)\n",
			   src->nworkers < 2		 ? "one worker" :
			   !src->view->policy->stateful ? "stateless policy" : "--handoff off");
	if (src->neighbours) {
		struct nc_summary n;

		src->neighbours(&n);
		ctl_printf(out, "neighbours: %u reachable, %u stale, %u being probed, %u static; "
				"%llu learnt, %llu moved, %llu probes, %llu forgotten, %llu refused "
				"(full)\n",
			   n.reachable, n.stale, n.probing, n.permanent, (unsigned long long)n.st.learnt,
			   (unsigned long long)n.st.moved, (unsigned long long)n.st.probes,
			   (unsigned long long)n.st.forgotten, (unsigned long long)n.st.full);
	}
	if (src->addrs) {
		char a[PORT_ADDRS_TEXT];

		ctl_puts(out, "addresses:");
		for (uint32_t i = 0; i < src->nports; i++)
			ctl_printf(out, "%s %s %s", i ? ";" : "", src->iface[i].name,
				   port_addrs_text(&src->addrs->applied[i], a, sizeof(a)));
		ctl_puts(out, "\n");
	}
	ctl_puts(out, "\n");
	ctl_table_init(&t, ihead, 6, 0x18u);
	for (uint32_t i = 0; i < src->nports; i++) {
		ctl_table_addf(&t, "%s", src->iface[i].name);
		ctl_table_addf(&t, "%s", src->iface[i].xdp_mode);
		ctl_table_addf(&t, "%s", src->iface[i].xsk_mode);
		ctl_table_addu(&t, src->iface[i].queues);
		if (src->iface[i].frame_max)
			ctl_table_addu(&t, src->iface[i].frame_max);
		else
			ctl_table_addf(&t, "-");
		ctl_table_addf(&t, "%s", src->iface[i].umem);
	}
	ctl_table_print(&t, out, 0);
	ctl_puts(out, "\n");
	ctl_table_init(&t, whead, 3, 0x3u);
	for (uint32_t k = 0; k < src->nworkers; k++) {
		ctl_table_addu(&t, k);
		ctl_table_addu(&t, src->workers[k]->queue);
		ctl_table_addf(&t, "%s", r->cpus[k]);
	}
	ctl_table_print(&t, out, 0);
	if (!npools)
		return;
	ctl_puts(out, "\n");
	ctl_table_init(&t, phead, 6, 0x3eu);
	for (uint32_t i = 0; i < npools; i++) {
		uint64_t use, cap, fail;

		pool_use(r, i, &use, &cap, &fail);
		ctl_table_addu(&t, i + 1);
		ctl_table_addu(&t, use);
		ctl_table_addu(&t, cap);
		ctl_table_addu(&t, fail);
		ctl_table_addu(&t, ctl_pool_reclaimed(r, i));
		ctl_table_addu(&t, pool_unsteered(r, i));
	}
	ctl_table_print(&t, out, 0);
}

static void status_json(struct ctl_buf *out, const struct ctl_report *r)
{
	const struct control_src *src = r->src;
	uint32_t npools = src->nworkers ? r->jobs[0].npools : 0;
	uint64_t in_use, max;

	ctl_printf(out, "{\"version\": 1, \"rampartd\": {\"version\": \"%s\", \"pid\": %ld, "
			"\"uptime_s\": %llu},\n", RAMPART_VERSION, r->pid,
		   (unsigned long long)r->uptime_s);
	ctl_printf(out, " \"mode\": \"%s\", \"backend\": \"%s\",\n", src->mode, src->backend);
	ctl_puts(out, " \"policy\": {\"path\": ");
	ctl_json_str(out, policy_path(src));
	ctl_printf(out, ", \"rules\": %u, \"checksum\": \"%08x\"},\n",
		   src->view->policy->rule_count, src->view->hdr->checksum);
	if (src->reload)
		ctl_printf(out, " \"reloads\": {\"done\": %llu, \"refused\": %llu, "
				"\"flows\": \"%s\"},\n", (unsigned long long)src->reload->reloads,
			   (unsigned long long)src->reload->refused,
			   reload_flows_name(src->reload->flows));
	flow_state_json(out, src);
	ctl_puts(out, " \"interfaces\": [");
	for (uint32_t i = 0; i < src->nports; i++) {
		ctl_puts(out, i ? ", {\"name\": " : "{\"name\": ");
		ctl_json_str(out, src->iface[i].name);
		ctl_printf(out, ", \"xdp_mode\": \"%s\", \"xsk_mode\": \"%s\", \"queues\": %u, "
				"\"frame_max\": %u, \"umem\": \"%s\", \"umem_reason\": ",
			   src->iface[i].xdp_mode, src->iface[i].xsk_mode, src->iface[i].queues,
			   src->iface[i].frame_max, src->iface[i].umem);
		ctl_json_str(out, src->iface[i].umem_reason);
		if (src->addrs) {
			const struct pipe_port_addrs *pa = &src->addrs->applied[i];
			char a[PORT_ADDRS_TEXT], *word, *save = NULL;

			ctl_puts(out, ", \"addresses\": [");
			if (pa->has_v4 || pa->has_v6) {
				/* "A B C": each word its own string */
				port_addrs_text(pa, a, sizeof(a));
				for (word = strtok_r(a, " ", &save); word;
				     word = strtok_r(NULL, " ", &save)) {
					ctl_puts(out, word == a ? "" : ", ");
					ctl_json_str(out, word);
				}
			}
			ctl_puts(out, "]");
		}
		ctl_puts(out, "}");
	}
	ctl_puts(out, "],\n \"workers\": [");
	for (uint32_t k = 0; k < src->nworkers; k++)
		ctl_printf(out, "%s{\"worker\": %u, \"queue\": %u, \"cpus\": \"%s\"}", k ? ", " : "",
			   k, src->workers[k]->queue, r->cpus[k]);
	conntrack_use(r, &in_use, &max);
	ctl_printf(out, "],\n \"conntrack\": {\"in_use\": %llu, \"max\": %llu, \"evicted\": %llu},\n",
		   (unsigned long long)in_use, (unsigned long long)max,
		   (unsigned long long)ctl_sum_evicted(r));
	{
		int kept;
		uint64_t redirects, packets;

		second_chance(r, &kept, &redirects, &packets);
		if (src->neighbours) {
			struct nc_summary n;

			src->neighbours(&n);
			ctl_printf(out, " \"neighbors\": {\"reachable\": %u, \"stale\": %u, "
					"\"probing\": %u, \"static\": %u, \"learnt\": %llu, "
					"\"moved\": %llu, \"probes\": %llu, \"forgotten\": %llu, "
					"\"refused_full\": %llu},\n",
				   n.reachable, n.stale, n.probing, n.permanent,
				   (unsigned long long)n.st.learnt, (unsigned long long)n.st.moved,
				   (unsigned long long)n.st.probes, (unsigned long long)n.st.forgotten,
				   (unsigned long long)n.st.full);
		} else {
			ctl_puts(out, " \"neighbors\": null,\n");
		}
		ctl_printf(out, " \"handoff\": {\"on\": %s, \"ring_slots\": %u, \"home\": \"%s\", "
				"\"second_chance\": {\"dnat_rules_kept\": %s, \"dnat_rule_sets_kept\": %d, "
				"\"redirects\": %llu, \"packets\": %llu}},\n \"nat_pools\": [",
			   handoff_slots(src) ? "true" : "false", handoff_slots(src),
			   src->home ? src->home : "hash", kept ? "true" : "false", kept, (unsigned long long)redirects,
			   (unsigned long long)packets);
	}
	for (uint32_t i = 0; i < npools; i++) {
		uint64_t use, cap, fail;

		pool_use(r, i, &use, &cap, &fail);
		ctl_printf(out, "%s{\"pool\": %u, \"in_use\": %llu, \"capacity\": %llu, "
				"\"failures\": %llu, \"reclaimed\": %llu, \"unsteered\": %llu}",
			   i ? ", " : "", i + 1, (unsigned long long)use, (unsigned long long)cap,
			   (unsigned long long)fail, (unsigned long long)ctl_pool_reclaimed(r, i),
			   (unsigned long long)pool_unsteered(r, i));
	}
	ctl_puts(out, "]}\n");
}

void ctl_status(struct ctl_buf *out, const struct ctl_report *r, int json)
{
	if (json)
		status_json(out, r);
	else
		status_text(out, r);
}

/* ---- stats ---- */

struct rule_sum {
	uint64_t packets, bytes, limited;
	uint64_t last_ns;	/* CLOCK_MONOTONIC of its last packet, 0: never */
};

static void sum_rule(const struct ctl_report *r, uint32_t n, struct rule_sum *s)
{
	struct pipe_rule_stats c = reload_carried(r->src->reload, n);

	memset(s, 0, sizeof(*s));
	/* what earlier generations counted under this rule's name */
	s->packets = c.packets;
	s->bytes = c.bytes;
	s->limited = reload_carried_limited(r->src->reload, n);
	s->last_ns = c.last_ns;
	for (uint32_t k = 0; k < r->src->nworkers; k++) {
		s->packets += r->jobs[k].rules[n].packets;
		s->bytes += r->jobs[k].rules[n].bytes;
		s->limited += r->jobs[k].limited[n];
		if (r->jobs[k].rules[n].last_ns > s->last_ns)
			s->last_ns = r->jobs[k].rules[n].last_ns;
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Seconds since the rule's last packet, or -1 when it never had one. */
static double since(const struct rule_sum *s, uint64_t now)
{
	return s->last_ns ? (double)(now > s->last_ns ? now - s->last_ns : 0) / 1e9 : -1.0;
}

/* Rules in policy order, the default last (as the counters block). */
static uint32_t rule_at(const struct ctl_report *r, uint32_t i)
{
	return i < r->src->view->policy->rule_count ? i + 1 : 0;
}

static void rules_text(struct ctl_buf *out, const struct ctl_report *r)
{
	static const char *const head[] = { "RULE", "NAME", "ACTION", "PACKETS", "BYTES", "LIMITED",
					    "LAST_HIT" };
	uint32_t nrules = r->src->view->policy->rule_count;
	uint64_t now = mono_ns();
	struct ctl_table t;

	ctl_table_init(&t, head, 7, 0x79u);
	for (uint32_t i = 0; i <= nrules; i++) {
		uint32_t n = rule_at(r, i);
		struct rule_sum s;

		sum_rule(r, n, &s);
		ctl_table_addu(&t, n);
		ctl_table_addf(&t, "%s", rule_name(r, n));
		ctl_table_addf(&t, "%s", rfw_action_name(rule_action(r->src->view, n)));
		ctl_table_addu(&t, s.packets);
		ctl_table_addu(&t, s.bytes);
		ctl_table_addu(&t, s.limited);
		if (s.last_ns)
			ctl_table_addf(&t, "%.1fs ago", since(&s, now));
		else
			ctl_table_addf(&t, "-");
	}
	ctl_table_print(&t, out, 0);
}

static void rules_json(struct ctl_buf *out, const struct ctl_report *r)
{
	uint32_t nrules = r->src->view->policy->rule_count;
	uint64_t now = mono_ns();

	ctl_puts(out, "\"rules\": [");
	for (uint32_t i = 0; i <= nrules; i++) {
		uint32_t n = rule_at(r, i);
		struct rule_sum s;

		sum_rule(r, n, &s);
		ctl_printf(out, "%s\n  {\"number\": %u, \"name\": ", i ? "," : "", n);
		ctl_json_str(out, rule_name(r, n));
		ctl_printf(out, ", \"action\": \"%s\", \"packets\": %llu, \"bytes\": %llu, "
				"\"limited\": %llu, \"last_hit_s_ago\": ",
			   rfw_action_name(rule_action(r->src->view, n)),
			   (unsigned long long)s.packets, (unsigned long long)s.bytes,
			   (unsigned long long)s.limited);
		if (s.last_ns)
			ctl_printf(out, "%.3f}", since(&s, now));
		else
			ctl_puts(out, "null}");
	}
	ctl_puts(out, "]");
}

static void interfaces_text(struct ctl_buf *out, const struct ctl_report *r)
{
	static const char *const head[] = {
		"INTERFACE", "RX_PACKETS", "RX_BYTES", "TX_PACKETS", "TX_BYTES", "DROPPED",
		"NON_IP", "MALFORMED", "TX_FULL", "RX_MISSED",
	};
	struct ctl_table t;

	ctl_table_init(&t, head, 10, 0x3feu);
	for (uint32_t i = 0; i < r->src->nports; i++) {
		struct counters_port s;

		sum_port(r, i, &s);
		ctl_table_addf(&t, "%s", r->src->iface[i].name);
		ctl_table_addu(&t, s.rx_packets);
		ctl_table_addu(&t, s.rx_bytes);
		ctl_table_addu(&t, s.tx_packets);
		ctl_table_addu(&t, s.tx_bytes);
		ctl_table_addu(&t, s.dropped);
		ctl_table_addu(&t, s.non_ip);
		ctl_table_addu(&t, s.malformed);
		ctl_table_addu(&t, s.tx_full);
		ctl_table_addu(&t, backend_rx_loss_total(&r->rx_loss[i]));
	}
	ctl_table_print(&t, out, 0);
}

static void interfaces_json(struct ctl_buf *out, const struct ctl_report *r)
{
	ctl_puts(out, "\"interfaces\": [");
	for (uint32_t i = 0; i < r->src->nports; i++) {
		struct counters_port s;

		sum_port(r, i, &s);
		ctl_puts(out, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
		ctl_json_str(out, r->src->iface[i].name);
		ctl_printf(out, ", \"rx_packets\": %llu, \"rx_bytes\": %llu, \"tx_packets\": %llu, "
				"\"tx_bytes\": %llu, \"dropped\": %llu, \"non_ip\": %llu, "
				"\"malformed\": %llu, \"tx_full\": %llu, ",
			   (unsigned long long)s.rx_packets, (unsigned long long)s.rx_bytes,
			   (unsigned long long)s.tx_packets, (unsigned long long)s.tx_bytes,
			   (unsigned long long)s.dropped, (unsigned long long)s.non_ip,
			   (unsigned long long)s.malformed, (unsigned long long)s.tx_full);
		/* lost before a worker saw them: not in rx_packets nor dropped */
		ctl_rx_missed_json(out, &r->rx_loss[i]);
		ctl_puts(out, "}");
	}
	ctl_puts(out, "]");
}

static void workers_text(struct ctl_buf *out, const struct ctl_report *r)
{
	static const char *const head[] = { "WORKER", "QUEUE", "RX", "TX", "DROPS", "FLOWS",
					    "BY-ADDRESS", "COPIED", "HANDED-OFF", "HANDED-IN" };
	struct ctl_table t;

	ctl_table_init(&t, head, 10, 0x3ffu);
	for (uint32_t k = 0; k < r->src->nworkers; k++) {
		struct counters_port s;

		sum_worker(r, k, &s);
		ctl_table_addu(&t, k);
		ctl_table_addu(&t, r->src->workers[k]->queue);
		ctl_table_addu(&t, s.rx_packets);
		ctl_table_addu(&t, s.tx_packets);
		ctl_table_addu(&t, s.dropped);
		ctl_table_addu(&t, r->jobs[k].ct.in_use);
		ctl_table_addu(&t, s.tx_by_address);
		ctl_table_addu(&t, s.tx_copied);
		ctl_table_addu(&t, r->jobs[k].stats.handed_off);
		ctl_table_addu(&t, r->jobs[k].stats.handed_in);
	}
	ctl_table_print(&t, out, 0);
}

static void workers_json(struct ctl_buf *out, const struct ctl_report *r)
{
	ctl_puts(out, "\"workers\": [");
	for (uint32_t k = 0; k < r->src->nworkers; k++) {
		struct counters_port s;

		sum_worker(r, k, &s);
		ctl_printf(out, "%s\n  {\"worker\": %u, \"queue\": %u, \"rx\": %llu, \"tx\": %llu, "
				"\"drops\": %llu, \"flows\": %llu, \"tx_by_address\": %llu, "
				"\"tx_copied\": %llu, \"handed_off\": %llu, \"handed_in\": %llu, "
				"\"second_chance\": %llu}",
			   k ? "," : "", k, r->src->workers[k]->queue,
			   (unsigned long long)s.rx_packets, (unsigned long long)s.tx_packets,
			   (unsigned long long)s.dropped, (unsigned long long)r->jobs[k].ct.in_use,
			   (unsigned long long)s.tx_by_address, (unsigned long long)s.tx_copied,
			   (unsigned long long)r->jobs[k].stats.handed_off,
			   (unsigned long long)r->jobs[k].stats.handed_in,
			   (unsigned long long)r->jobs[k].stats.second_chance);
	}
	ctl_puts(out, "]");
}

/* Stage and drop totals over the workers; tx-full is the backend's. */
static void sum_runtime(const struct ctl_report *r, struct pipe_stats *sum, uint64_t *tx_full)
{
	memset(sum, 0, sizeof(*sum));
	*tx_full = 0;
	for (uint32_t k = 0; k < r->src->nworkers; k++) {
		const struct pipe_stats *st = &r->jobs[k].stats;

		for (unsigned s = 0; s < PIPE_ST_COUNT; s++) {
			sum->stage[s].packets += st->stage[s].packets;
			sum->stage[s].cycles += st->stage[s].cycles;
		}
		for (unsigned d = 0; d < PIPE_DROP_COUNT; d++)
			sum->drop[d] += st->drop[d];
		for (unsigned m = 0; m < PKT_REASON_COUNT; m++)
			sum->parse_reason[m] += st->parse_reason[m];
		sum->recheck_ended += st->recheck_ended;
		sum->flows_hit += st->flows_hit;
		sum->flow_cache_hits += st->flow_cache_hits;
		sum->express_sent += st->express_sent;
		sum->replies += st->replies;
		sum->replies_limited += st->replies_limited;
		sum->nat_rewrites += st->nat_rewrites;
		sum->mss_clamped += st->mss_clamped;
		sum->fragmented += st->fragmented;
		sum->fragments += st->fragments;
		sum->held += st->held;
		sum->held_sent += st->held_sent;
		sum->frag_parked += st->frag_parked;
		sum->frag_resumed += st->frag_resumed;
		for (uint32_t p = 0; p < r->src->nports; p++)
			*tx_full += r->jobs[k].port[p].tx_full;
	}
}

/* The pipe_stats counters shown in groups of two or three after the stage
 * and drop tables: one text line each (label: value, label: value...) and
 * a JSON key each; a group's third label is NULL where it has two. */
static const struct {
	const char *text[3], *json[3];
	size_t off[3];
} stat_groups[] = {
	{{"known-flow packets", "finished by the flow cache", "sent by the express lookup"},
	 {"known_flow_packets", "flow_cache_hits", "express_sent"},
	 {offsetof(struct pipe_stats, flows_hit), offsetof(struct pipe_stats, flow_cache_hits),
	  offsetof(struct pipe_stats, express_sent)}},
	{{"replies sent", "held back by --reply-rate"}, {"replies", "replies_limited"},
	 {offsetof(struct pipe_stats, replies), offsetof(struct pipe_stats, replies_limited)}},
	{{"datagrams fragmented", "fragments"}, {"fragmented", "fragments"},
	 {offsetof(struct pipe_stats, fragmented), offsetof(struct pipe_stats, fragments)}},
	{{"held for their next hop", "sent once it was resolved"}, {"held", "held_sent"},
	 {offsetof(struct pipe_stats, held), offsetof(struct pipe_stats, held_sent)}},
	{{"fragments parked before their first", "run again after it"},
	 {"frag_parked", "frag_resumed"},
	 {offsetof(struct pipe_stats, frag_parked), offsetof(struct pipe_stats, frag_resumed)}},
	{{"frames translated", "SYNs whose MSS was clamped"}, {"nat_rewrites", "mss_clamped"},
	 {offsetof(struct pipe_stats, nat_rewrites), offsetof(struct pipe_stats, mss_clamped)}},
};

static uint64_t stat_of(const struct pipe_stats *s, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)s + off, sizeof(v));
	return v;
}

static double per_packet(const struct pipe_stage_stats *st)
{
	return st->packets ? (double)st->cycles / (double)st->packets : 0.0;
}

static void stages_text(struct ctl_buf *out, const struct ctl_report *r)
{
	static const char *const head[] = { "STAGE", "PACKETS", "CYCLES", "CYCLES/PACKET" };
	static const char *const dhead[] = { "DROP REASON", "PACKETS" };
	static const char *const mhead[] = { "MALFORMED", "PACKETS" };
	struct pipe_stats sum;
	struct ctl_table t;
	uint64_t tx_full;

	sum_runtime(r, &sum, &tx_full);
	ctl_table_init(&t, head, 4, 0xeu);
	for (unsigned s = 0; s < PIPE_ST_COUNT; s++) {
		ctl_table_addf(&t, "%s", pipe_stage_name(s));
		ctl_table_addu(&t, sum.stage[s].packets);
		ctl_table_addu(&t, sum.stage[s].cycles);
		ctl_table_addf(&t, "%.1f", per_packet(&sum.stage[s]));
	}
	ctl_table_print(&t, out, 0);
	ctl_puts(out, "\n");
	ctl_table_init(&t, dhead, 2, 0x2u);
	for (unsigned d = 1; d < PIPE_DROP_COUNT; d++) {
		ctl_table_addf(&t, "%s", pipe_drop_name(d));
		ctl_table_addu(&t, sum.drop[d]);
	}
	ctl_table_addf(&t, "tx-full");
	ctl_table_addu(&t, tx_full);
	ctl_table_print(&t, out, 0);
	ctl_puts(out, "\n");
	ctl_table_init(&t, mhead, 2, 0x2u);
	for (unsigned m = 1; m < PKT_REASON_COUNT; m++) {
		ctl_table_addf(&t, "%s", pkt_reason_name(m));
		ctl_table_addu(&t, sum.parse_reason[m]);
	}
	ctl_table_print(&t, out, 0);
	ctl_printf(out, "\nflows ended by a reload's re-check: %llu\n",
		   (unsigned long long)sum.recheck_ended);
	for (size_t k = 0; k < sizeof(stat_groups) / sizeof(stat_groups[0]); k++)
		for (unsigned i = 0; i < 3 && stat_groups[k].text[i]; i++)
			ctl_printf(out, "%s: %llu%s", stat_groups[k].text[i],
				   (unsigned long long)stat_of(&sum, stat_groups[k].off[i]),
				   i == 2 || !stat_groups[k].text[i + 1] ? "\n" : ", ");
}

static void stages_json(struct ctl_buf *out, const struct ctl_report *r)
{
	struct pipe_stats sum;
	uint64_t tx_full;

	sum_runtime(r, &sum, &tx_full);
	ctl_puts(out, "\"stages\": [");
	for (unsigned s = 0; s < PIPE_ST_COUNT; s++) {
		ctl_printf(out, "%s\n  {\"name\": ", s ? "," : "");
		json_key(out, pipe_stage_name(s));
		ctl_printf(out, ", \"packets\": %llu, \"cycles\": %llu, \"cycles_per_packet\": %.1f}",
			   (unsigned long long)sum.stage[s].packets,
			   (unsigned long long)sum.stage[s].cycles, per_packet(&sum.stage[s]));
	}
	ctl_puts(out, "],\n \"drops\": {");
	for (unsigned d = 1; d < PIPE_DROP_COUNT; d++) {
		json_key(out, pipe_drop_name(d));
		ctl_printf(out, ": %llu, ", (unsigned long long)sum.drop[d]);
	}
	ctl_printf(out, "\"tx_full\": %llu},\n \"malformed\": {", (unsigned long long)tx_full);
	for (unsigned m = 1; m < PKT_REASON_COUNT; m++) {
		json_key(out, pkt_reason_name(m));
		ctl_printf(out, ": %llu%s", (unsigned long long)sum.parse_reason[m],
			   m + 1 < PKT_REASON_COUNT ? ", " : "");
	}
	ctl_printf(out, "},\n \"recheck_ended\": %llu", (unsigned long long)sum.recheck_ended);
	for (size_t k = 0; k < sizeof(stat_groups) / sizeof(stat_groups[0]); k++)
		for (unsigned i = 0; i < 3 && stat_groups[k].json[i]; i++)
			ctl_printf(out, "%s \"%s\": %llu", i ? "," : ",\n", stat_groups[k].json[i],
				   (unsigned long long)stat_of(&sum, stat_groups[k].off[i]));
}

void ctl_stats(struct ctl_buf *out, const struct ctl_report *r, unsigned sections, int json)
{
	static const struct {
		unsigned bit;
		const char *title;
		void (*text)(struct ctl_buf *, const struct ctl_report *);
		void (*json)(struct ctl_buf *, const struct ctl_report *);
	} parts[] = {
		{ CTL_S_RULES, "rules", rules_text, rules_json },
		{ CTL_S_INTERFACES, "interfaces", interfaces_text, interfaces_json },
		{ CTL_S_WORKERS, "workers", workers_text, workers_json },
		{ CTL_S_STAGES, "stages", stages_text, stages_json },
	};
	int first = 1;

	if (json)
		ctl_puts(out, "{\"version\": 1");
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		if (!(sections & parts[i].bit))
			continue;
		if (json) {
			ctl_puts(out, ",\n ");
			parts[i].json(out, r);
		} else {
			/* a title only when several sections are shown */
			if (sections != parts[i].bit)
				ctl_printf(out, "%s%s:\n", first ? "" : "\n", parts[i].title);
			parts[i].text(out, r);
		}
		first = 0;
	}
	if (json)
		ctl_puts(out, "}\n");
}

/* ---- the sums, for the other renderers (ctl_metrics.c) ---- */

void ctl_sum_port(const struct ctl_report *r, uint32_t port, struct counters_port *s)
{
	sum_port(r, port, s);
}

void ctl_sum_worker(const struct ctl_report *r, uint32_t k, struct counters_port *s)
{
	sum_worker(r, k, s);
}

void ctl_sum_rule(const struct ctl_report *r, uint32_t n, uint64_t *packets, uint64_t *bytes,
		  uint64_t *limited)
{
	struct rule_sum s;

	sum_rule(r, n, &s);
	*packets = s.packets;
	*bytes = s.bytes;
	*limited = s.limited;
}

double ctl_rule_last_hit_ago(const struct ctl_report *r, uint32_t n)
{
	struct rule_sum s;

	sum_rule(r, n, &s);
	return since(&s, mono_ns());
}

void ctl_sum_runtime(const struct ctl_report *r, struct pipe_stats *sum, uint64_t *tx_full)
{
	sum_runtime(r, sum, tx_full);
}

void ctl_sum_conntrack(const struct ctl_report *r, uint64_t *in_use, uint64_t *max)
{
	conntrack_use(r, in_use, max);
}

void ctl_sum_pool(const struct ctl_report *r, uint32_t i, uint64_t *in_use, uint64_t *cap,
		  uint64_t *failures)
{
	pool_use(r, i, in_use, cap, failures);
}

const char *ctl_rule_name(const struct ctl_report *r, uint32_t n)
{
	return rule_name(r, n);
}

const char *ctl_rule_action(const struct ctl_report *r, uint32_t n)
{
	return rfw_action_name(rule_action(r->src->view, n));
}

/* `top-sample`: the raw numbers rampartctl top turns into rates, one
 * item a line, names last (POLICY.md names have no blanks). */
void ctl_top_sample(struct ctl_buf *out, const struct ctl_report *r)
{
	struct pipe_stats sum;
	struct timespec now;
	uint64_t tx_full, in_use, max;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ctl_printf(out, "time_ns %llu\n",
		   (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec);
	for (uint32_t p = 0; p < r->src->nports; p++) {
		struct counters_port s;

		sum_port(r, p, &s);
		ctl_printf(out, "iface %llu %llu %llu %llu %llu %llu %s\n",
			   (unsigned long long)s.rx_packets, (unsigned long long)s.rx_bytes,
			   (unsigned long long)s.tx_packets, (unsigned long long)s.tx_bytes,
			   (unsigned long long)s.dropped,
			   (unsigned long long)backend_rx_loss_total(&r->rx_loss[p]),
			   r->src->iface[p].name);
	}
	for (uint32_t k = 0; k < r->src->nworkers; k++) {
		struct counters_port s;

		sum_worker(r, k, &s);
		ctl_printf(out, "worker %llu %llu %llu %u\n", (unsigned long long)s.rx_packets,
			   (unsigned long long)s.tx_packets, (unsigned long long)s.dropped, k);
	}
	for (uint32_t n = 0; n <= r->src->view->policy->rule_count; n++) {
		struct rule_sum rs;

		sum_rule(r, n, &rs);
		ctl_printf(out, "rule %llu %llu %s\n", (unsigned long long)rs.packets,
			   (unsigned long long)rs.bytes, rule_name(r, n));
	}
	sum_runtime(r, &sum, &tx_full);
	for (unsigned d = 1; d < PIPE_DROP_COUNT; d++)
		ctl_printf(out, "drop %llu 0 %s\n", (unsigned long long)sum.drop[d], pipe_drop_name(d));
	ctl_printf(out, "drop %llu 0 tx-full\n", (unsigned long long)tx_full);
	conntrack_use(r, &in_use, &max);
	ctl_printf(out, "flows %llu %llu\n", (unsigned long long)in_use, (unsigned long long)max);
}
