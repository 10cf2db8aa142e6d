/* The Prometheus text exposition format (0.0.4) of what `rampartctl
 * stats` and `status` show, for `rampartd --metrics ADDR:PORT`. Names
 * follow Prometheus' conventions: rampart_ prefix, snake_case, base
 * units, counters end in _total, one # HELP and # TYPE per family, label
 * values escaped. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "counters.h"
#include "ctl_rxloss.h"
#include "ctl_stats.h"
#include "flowstate.h"
#include "reload.h"

static void family(struct ctl_buf *out, const char *name, const char *type, const char *help)
{
	ctl_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A counter without labels: its family and its one sample. */
static void counter(struct ctl_buf *out, const char *name, const char *help, uint64_t v)
{
	family(out, name, "counter", help);
	ctl_printf(out, "%s %llu\n", name, (unsigned long long)v);
}

/* A label value: backslash, quote and newline escaped. */
static void label(struct ctl_buf *out, const char *key, const char *value, int first)
{
	ctl_printf(out, "%s%s=\"", first ? "" : ",", key);
	for (const char *p = value; *p; p++) {
		if (*p == '\\' || *p == '"')
			ctl_printf(out, "\\%c", *p);
		else if (*p == '\n')
			ctl_puts(out, "\\n");
		else
			ctl_printf(out, "%c", *p);
	}
	ctl_puts(out, "\"");
}

/* "no-neighbour" as a label value stays; as part of nothing else. */
static void sample1(struct ctl_buf *out, const char *name, const char *key, const char *value,
		    unsigned long long v)
{
	ctl_printf(out, "%s{", name);
	label(out, key, value, 1);
	ctl_printf(out, "} %llu\n", v);
}

static void rules(struct ctl_buf *out, const struct ctl_report *r)
{
	static const char *const names[3] = {
		"rampart_rule_packets_total", "rampart_rule_bytes_total",
		"rampart_rule_limited_packets_total",
	};
	static const char *const help[3] = {
		"Packets a rule matched (a flow's packets count under the rule that accepted it).",
		"Bytes (whole frames) a rule matched.",
		"Packets over a rule's rate limit, dropped.",
	};
	uint32_t nrules = r->src->view->policy->rule_count;

	for (int m = 0; m < 3; m++) {
		family(out, names[m], "counter", help[m]);
		for (uint32_t n = 0; n <= nrules; n++) {
			uint64_t v[3];

			ctl_sum_rule(r, n, &v[0], &v[1], &v[2]);
			ctl_printf(out, "%s{", names[m]);
			label(out, "rule", ctl_rule_name(r, n), 1);
			label(out, "action", ctl_rule_action(r, n), 0);
			ctl_printf(out, "} %llu\n", (unsigned long long)v[m]);
		}
	}
}

/* Unix time of each rule's last packet (0: never), as Prometheus wants
 * timestamps. */
static void last_hits(struct ctl_buf *out, const struct ctl_report *r)
{
	struct timespec ts;
	double now;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	family(out, "rampart_rule_last_hit_timestamp_seconds", "gauge",
	       "When a rule last matched a packet (Unix time; 0: never).");
	for (uint32_t n = 0; n <= r->src->view->policy->rule_count; n++) {
		double ago = ctl_rule_last_hit_ago(r, n);

		ctl_puts(out, "rampart_rule_last_hit_timestamp_seconds{");
		label(out, "rule", ctl_rule_name(r, n), 1);
		ctl_printf(out, "} %.3f\n", ago < 0 ? 0.0 : now - ago);
	}
}

static void interfaces(struct ctl_buf *out, const struct ctl_report *r)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} f[] = {
		{ "rampart_interface_received_packets_total", "Frames received.",
		  offsetof(struct counters_port, rx_packets) },
		{ "rampart_interface_received_bytes_total", "Bytes received.",
		  offsetof(struct counters_port, rx_bytes) },
		{ "rampart_interface_sent_packets_total", "Frames handed to the NIC.",
		  offsetof(struct counters_port, tx_packets) },
		{ "rampart_interface_sent_bytes_total", "Bytes handed to the NIC.",
		  offsetof(struct counters_port, tx_bytes) },
		{ "rampart_interface_dropped_packets_total",
		  "Frames received here and dropped (any reason).",
		  offsetof(struct counters_port, dropped) },
		{ "rampart_interface_non_ip_packets_total", "Non-IP frames received.",
		  offsetof(struct counters_port, non_ip) },
		{ "rampart_interface_malformed_packets_total", "Frames the parser refused.",
		  offsetof(struct counters_port, malformed) },
		{ "rampart_interface_tx_full_packets_total",
		  "Frames received here and lost for lack of TX room.",
		  offsetof(struct counters_port, tx_full) },
	};

	for (size_t m = 0; m < sizeof(f) / sizeof(f[0]); m++) {
		family(out, f[m].name, "counter", f[m].help);
		for (uint32_t p = 0; p < r->src->nports; p++) {
			struct counters_port s;
			uint64_t v;

			ctl_sum_port(r, p, &s);
			memcpy(&v, (const char *)&s + f[m].off, sizeof(v));
			sample1(out, f[m].name, "interface", r->src->iface[p].name,
				(unsigned long long)v);
		}
	}
}

/* The backend's rx_loss: frames never seen by a worker, by reason. */
static void rx_missed(struct ctl_buf *out, const struct ctl_report *r)
{
	static const char name[] = "rampart_interface_rx_missed_packets_total";

	family(out, name, "counter",
	       "Frames the kernel or NIC dropped before a worker saw them, by reason "
	       "(ring_full: a worker did not keep up; no_buffer: no free buffer, too few or a "
	       "stalled worker in AF_XDP copy mode; invalid: a bug; docs/operations.md).");
	for (uint32_t p = 0; p < r->src->nports; p++) {
		uint64_t v[CTL_RX_LOSS_REASONS];

		ctl_rx_loss_values(&r->rx_loss[p], v);
		for (int k = 0; k < CTL_RX_LOSS_REASONS; k++) {
			ctl_printf(out, "%s{", name);
			label(out, "interface", r->src->iface[p].name, 1);
			label(out, "reason", ctl_rx_loss_reason[k], 0);
			ctl_printf(out, "} %llu\n", (unsigned long long)v[k]);
		}
	}
}

static void workers(struct ctl_buf *out, const struct ctl_report *r)
{
	static const char *const names[9] = {
		"rampart_worker_received_packets_total", "rampart_worker_sent_packets_total",
		"rampart_worker_dropped_packets_total", "rampart_worker_conntrack_flows",
		"rampart_worker_sent_by_address_packets_total",
		"rampart_worker_sent_copied_packets_total",
		"rampart_worker_handed_off_packets_total",
		"rampart_worker_handed_in_packets_total",
		"rampart_worker_second_chance_packets_total",
	};
	static const char *const help[9] = {
		"Frames a worker received.", "Frames a worker handed to the NIC.",
		"Frames a worker dropped.", "Flows in a worker's conntrack table.",
		"Frames a worker sent as the buffer they arrived in (no copy).",
		"Frames a worker copied into the egress port's buffers to send.",
		"Frames of another worker's flow a worker handed to it.",
		"Frames other workers handed to a worker.",
		("Of those handed off: frames that found no flow, handed to where it may live "
		 "(the DNAT rules before a reload, a restored flow's worker)."),
	};

	for (int m = 0; m < 9; m++) {
		family(out, names[m], m == 3 ? "gauge" : "counter", help[m]);
		for (uint32_t k = 0; k < r->src->nworkers; k++) {
			struct counters_port s;
			char id[16];
			uint64_t v[9];

			ctl_sum_worker(r, k, &s);
			v[0] = s.rx_packets;
			v[1] = s.tx_packets;
			v[2] = s.dropped;
			v[3] = r->jobs[k].ct.in_use;
			v[4] = s.tx_by_address;
			v[5] = s.tx_copied;
			v[6] = r->jobs[k].stats.handed_off;
			v[7] = r->jobs[k].stats.handed_in;
			v[8] = r->jobs[k].stats.second_chance;
			snprintf(id, sizeof(id), "%u", k);
			sample1(out, names[m], "worker", id, (unsigned long long)v[m]);
		}
	}
}

static void runtime(struct ctl_buf *out, const struct ctl_report *r)
{
	struct pipe_stats sum;
	uint64_t tx_full;

	ctl_sum_runtime(r, &sum, &tx_full);
	family(out, "rampart_stage_packets_total", "counter", "Packets that entered a pipeline stage.");
	for (unsigned s = 0; s < PIPE_ST_COUNT; s++)
		sample1(out, "rampart_stage_packets_total", "stage", pipe_stage_name(s),
			(unsigned long long)sum.stage[s].packets);
	family(out, "rampart_stage_cycles_total", "counter",
	       "TSC cycles spent in a pipeline stage (divide by packets for cycles/packet).");
	for (unsigned s = 0; s < PIPE_ST_COUNT; s++)
		sample1(out, "rampart_stage_cycles_total", "stage", pipe_stage_name(s),
			(unsigned long long)sum.stage[s].cycles);
	family(out, "rampart_dropped_packets_total", "counter", "Packets dropped, by reason.");
	for (unsigned d = 1; d < PIPE_DROP_COUNT; d++)
		sample1(out, "rampart_dropped_packets_total", "reason", pipe_drop_name(d),
			(unsigned long long)sum.drop[d]);
	sample1(out, "rampart_dropped_packets_total", "reason", "tx-full",
		(unsigned long long)tx_full);
	family(out, "rampart_malformed_packets_total", "counter",
	       "Frames the parser refused, by reason.");
	for (unsigned m = 1; m < PKT_REASON_COUNT; m++)
		sample1(out, "rampart_malformed_packets_total", "reason", pkt_reason_name(m),
			(unsigned long long)sum.parse_reason[m]);
	counter(out, "rampart_reload_recheck_ended_flows_total",
		"Established flows a reload's re-check refused and ended.", sum.recheck_ended);
	counter(out, "rampart_flow_cache_hits_total",
		"Packets of known flows the flow cache finished without the full pipeline.",
		sum.flow_cache_hits);
	counter(out, "rampart_express_sent_total",
		"Packets of known flows the express path sent from its conntrack lookup (flow cache missed or resting).",
		sum.express_sent);
	counter(out, "rampart_replies_total",
		"RSTs and ICMP errors rampart wrote itself (reject, time-exceeded, too-big).",
		sum.replies);
	counter(out, "rampart_replies_limited_total",
		"Replies not sent: over --reply-rate (the packet was only dropped).",
		sum.replies_limited);
	counter(out, "rampart_nat_rewrites_total", "Frames NAT translated.", sum.nat_rewrites);
	counter(out, "rampart_mss_clamped_total",
		"TCP SYNs and SYN-ACKs whose MSS option defaults.tcp_mss lowered.", sum.mss_clamped);
	counter(out, "rampart_fragmented_datagrams_total",
		"IPv4 datagrams without DF sent as fragments (router mode, longer than the MTU).",
		sum.fragmented);
	counter(out, "rampart_fragments_total", "The fragments they were sent as.", sum.fragments);
	counter(out, "rampart_held_packets_total",
		"Packets held while their next hop was resolved (router mode).", sum.held);
	counter(out, "rampart_held_sent_packets_total",
		"Held packets sent once their next hop was resolved.", sum.held_sent);
	counter(out, "rampart_fragments_parked_total",
		"Non-first fragments parked because they came before their first.",
		sum.frag_parked);
	counter(out, "rampart_fragments_resumed_total",
		"Parked fragments run through the pipeline again once their first came.",
		sum.frag_resumed);
}

static void state(struct ctl_buf *out, const struct ctl_report *r)
{
	uint32_t npools = r->src->nworkers ? r->jobs[0].npools : 0;
	uint64_t in_use, max;

	ctl_sum_conntrack(r, &in_use, &max);
	family(out, "rampart_conntrack_flows", "gauge", "Flows in the conntrack tables.");
	ctl_printf(out, "rampart_conntrack_flows %llu\n", (unsigned long long)in_use);
	family(out, "rampart_conntrack_flows_max", "gauge", "Room in the conntrack tables.");
	ctl_printf(out, "rampart_conntrack_flows_max %llu\n", (unsigned long long)max);
	counter(out, "rampart_conntrack_evicted_total",
		"Flows not established (half-open, unanswered) evicted to make room for a new "
		"one in a full table.", ctl_sum_evicted(r));
	family(out, "rampart_nat_pool_ports_in_use", "gauge", "NAT ports held by flows.");
	for (uint32_t i = 0; i < npools; i++) {
		uint64_t use, cap, fail;
		char id[16];

		ctl_sum_pool(r, i, &use, &cap, &fail);
		snprintf(id, sizeof(id), "%u", i + 1);
		sample1(out, "rampart_nat_pool_ports_in_use", "pool", id, (unsigned long long)use);
	}
	family(out, "rampart_nat_pool_ports", "gauge", "NAT ports a pool has.");
	for (uint32_t i = 0; i < npools; i++) {
		uint64_t use, cap, fail;
		char id[16];

		ctl_sum_pool(r, i, &use, &cap, &fail);
		snprintf(id, sizeof(id), "%u", i + 1);
		sample1(out, "rampart_nat_pool_ports", "pool", id, (unsigned long long)cap);
	}
	family(out, "rampart_nat_pool_allocation_failures_total", "counter",
	       "New flows refused for lack of a free NAT port.");
	for (uint32_t i = 0; i < npools; i++) {
		uint64_t use, cap, fail;
		char id[16];

		ctl_sum_pool(r, i, &use, &cap, &fail);
		snprintf(id, sizeof(id), "%u", i + 1);
		sample1(out, "rampart_nat_pool_allocation_failures_total", "pool", id,
			(unsigned long long)fail);
	}
	family(out, "rampart_nat_pool_reclaimed_total", "counter",
	       "NAT ports a full pool took back from flows not established.");
	for (uint32_t i = 0; i < npools; i++) {
		char id[16];

		snprintf(id, sizeof(id), "%u", i + 1);
		sample1(out, "rampart_nat_pool_reclaimed_total", "pool", id,
			(unsigned long long)ctl_pool_reclaimed(r, i));
	}
}

static void daemon_info(struct ctl_buf *out, const struct ctl_report *r)
{
	const struct rfw_view *v = r->src->view;
	char sum[16];

	snprintf(sum, sizeof(sum), "%08x", v->hdr->checksum);
	family(out, "rampart_info", "gauge", "rampartd's version and the policy in force (always 1).");
	ctl_puts(out, "rampart_info{");
	label(out, "version", RAMPART_VERSION, 1);
	label(out, "mode", r->src->mode, 0);
	label(out, "backend", r->src->backend, 0);
	label(out, "policy_checksum", sum, 0);
	ctl_puts(out, "} 1\n");
	family(out, "rampart_policy_rules", "gauge", "Rules of the policy in force.");
	ctl_printf(out, "rampart_policy_rules %u\n", v->policy->rule_count);
	family(out, "rampart_uptime_seconds", "gauge", "Seconds since rampartd started.");
	ctl_printf(out, "rampart_uptime_seconds %llu\n", (unsigned long long)r->uptime_s);
	if (r->src->reload) {
		family(out, "rampart_reloads_total", "counter", "Reloads put in force.");
		ctl_printf(out, "rampart_reloads_total %llu\n",
			   (unsigned long long)r->src->reload->reloads);
		family(out, "rampart_reloads_refused_total", "counter", "Reloads refused.");
		ctl_printf(out, "rampart_reloads_refused_total %llu\n",
			   (unsigned long long)r->src->reload->refused);
	}
}

/* --state-interval's checkpoints (flowstate.h). */
static void checkpoints(struct ctl_buf *out, const struct ctl_report *r)
{
	const struct flowstate_stats *st = &flowstate_stats;
	static const char *const result[] = { "written", "failed", "voided" };
	uint64_t n[3] = {
		atomic_load_explicit(&st->written, memory_order_relaxed),
		atomic_load_explicit(&st->failed, memory_order_relaxed),
		atomic_load_explicit(&st->voided, memory_order_relaxed),
	};

	if (!r->src->state_file || !r->src->state_interval)
		return;
	family(out, "rampart_checkpoints_total", "counter",
	       "Flow checkpoints (--state-interval) by result: written, failed (not written: "
	       "disk, a worker not answering), voided (a reload came meanwhile).");
	for (unsigned i = 0; i < 3; i++) {
		ctl_puts(out, "rampart_checkpoints_total{");
		label(out, "result", result[i], 1);
		ctl_printf(out, "} %llu\n", (unsigned long long)n[i]);
	}
	family(out, "rampart_checkpoint_last_success_timestamp_seconds", "gauge",
	       "Wall-clock time the last checkpoint was written (0: none yet).");
	ctl_printf(out, "rampart_checkpoint_last_success_timestamp_seconds %llu\n",
		   (unsigned long long)atomic_load_explicit(&st->last_wall_s, memory_order_relaxed));
	family(out, "rampart_checkpoint_flows", "gauge", "Flows the last checkpoint wrote.");
	ctl_printf(out, "rampart_checkpoint_flows %llu\n",
		   (unsigned long long)atomic_load_explicit(&st->last_flows, memory_order_relaxed));
	family(out, "rampart_checkpoint_duration_seconds", "gauge",
	       "How long the last checkpoint took, copying and writing.");
	ctl_printf(out, "rampart_checkpoint_duration_seconds %.6f\n",
		   (double)atomic_load_explicit(&st->last_ns, memory_order_relaxed) / 1e9);
}

/* A DPDK router's own neighbours (neigh_cache.h). */
static void neighbours(struct ctl_buf *out, const struct ctl_report *r)
{
	static const char *const state[4] = { "reachable", "stale", "probing", "static" };
	static const char *const event[5] = { "learnt", "moved", "probed", "forgotten",
					      "refused_full" };
	struct nc_summary n;
	uint32_t by_state[4];
	uint64_t by_event[5];

	if (!r->src->neighbours)
		return;
	r->src->neighbours(&n);
	by_state[0] = n.reachable, by_state[1] = n.stale, by_state[2] = n.probing;
	by_state[3] = n.permanent;
	by_event[0] = n.st.learnt, by_event[1] = n.st.moved, by_event[2] = n.st.probes;
	by_event[3] = n.st.forgotten, by_event[4] = n.st.full;
	family(out, "rampart_neighbors", "gauge",
	       "Next hops rampartd resolved itself (DPDK router), by state: reachable, "
	       "stale (told unasked, to be probed), probing (unconfirmed, being asked), "
	       "static (--neighbor).");
	for (unsigned i = 0; i < 4; i++)
		sample1(out, "rampart_neighbors", "state", state[i], by_state[i]);
	family(out, "rampart_neighbor_events_total", "counter",
	       "What happened to those next hops: learnt, moved (to another MAC), probed "
	       "(probes sent), forgotten (no answer), refused_full (no room).");
	for (unsigned i = 0; i < 5; i++)
		sample1(out, "rampart_neighbor_events_total", "event", event[i], by_event[i]);
}

void ctl_metrics(struct ctl_buf *out, const struct ctl_report *r)
{
	daemon_info(out, r);
	checkpoints(out, r);
	rules(out, r);
	last_hits(out, r);
	interfaces(out, r);
	rx_missed(out, r);
	workers(out, r);
	runtime(out, r);
	state(out, r);
	neighbours(out, r);
}
