/* Summing and printing the workers' counters. Workers write plain
 * uint64_t fields (one writer each, and an atomic add per packet is what
 * we avoid); the main thread reads them. An aligned 64-bit load cannot
 * tear on the targets we build for, a print a few packets behind is fine,
 * and the final print happens after the workers are joined: exact. */
#include "counters.h"

#include "reload.h"

#include <string.h>

void counters_port_add(struct counters_port *s, const struct pipe_port_stats *ps,
		       const struct worker_port_stats *ws)
{
	/* a frame lost on its way to another worker: received and dropped
	 * here (the pipeline left it to its owner to count) */
	s->rx_packets += ps->rx_packets + ws->handoff_lost;
	s->rx_bytes += ps->rx_bytes + ws->handoff_lost_bytes;
	/* the pipeline counts a frame as sent when it decides to; the
	 * backend may still have had no room for it */
	s->tx_packets += ps->tx_packets - ws->tx_lost_packets;
	s->tx_bytes += ps->tx_bytes - ws->tx_lost_bytes;
	s->dropped += ps->dropped + ws->tx_full + ws->handoff_lost;
	s->non_ip += ws->non_ip;
	s->malformed += ws->malformed;
	s->tx_full += ws->tx_full;
	s->tx_by_address += ws->tx_by_address;
	s->tx_copied += ws->tx_copied;
}

static void sum_port(const struct counters_src *src, uint32_t port, struct counters_port *s)
{
	memset(s, 0, sizeof(*s));
	for (uint32_t k = 0; k < src->nworkers; k++) {
		const struct worker *w = src->workers[k];

		counters_port_add(s, &pipe_stats(w->pipe)->port[port], &w->port[port]);
	}
}

static void print_rule(FILE *out, const struct counters_src *src, uint32_t n)
{
	const struct rfw_view *view = src->view;
	uint8_t action = n ? view->rules[n].action : view->policy->default_action;
	const char *name = rfw_rule_name(view, n);
	struct pipe_rule_stats c = reload_carried(src->reload, n);
	uint64_t packets = c.packets, bytes = c.bytes;

	for (uint32_t k = 0; k < src->nworkers; k++) {
		const struct pipe_worker *pw = src->workers[k]->pipe;
		const struct pipe_rule_stats *r = pipe_rule_stats(pw);

		/* A reload that timed out (reload.c: stuck) leaves src->view
		 * the old policy while workers run the new one, whose
		 * counters may be fewer: never read past a worker's own
		 * (ctl_job.c's copy_stats does the same). */
		if (n > pipe_rule_count(pw))
			continue;
		packets += r[n].packets;
		bytes += r[n].bytes;
	}
	if (!n && !*name)
		name = "default";
	fprintf(out, "%u %s %s %llu %llu\n", n, name, rfw_action_name(action),
		(unsigned long long)packets, (unsigned long long)bytes);
}

void counters_print(FILE *out, const struct counters_src *src)
{
	uint32_t nrules = src->view->policy->rule_count;

	fprintf(out, "rampart counters\n");
	fprintf(out, "rule name action packets bytes\n");
	for (uint32_t n = 1; n <= nrules; n++)
		print_rule(out, src, n);
	print_rule(out, src, 0);
	fprintf(out, "interface name rx_packets rx_bytes tx_packets tx_bytes dropped non_ip malformed\n");
	for (uint32_t i = 0; i < src->nports; i++) {
		struct counters_port s;

		sum_port(src, i, &s);
		fprintf(out, "interface %s %llu %llu %llu %llu %llu %llu %llu\n", src->ifnames[i],
			(unsigned long long)s.rx_packets, (unsigned long long)s.rx_bytes,
			(unsigned long long)s.tx_packets, (unsigned long long)s.tx_bytes,
			(unsigned long long)s.dropped, (unsigned long long)s.non_ip,
			(unsigned long long)s.malformed);
	}
	fprintf(out, "end counters\n");
	fflush(out);
}

/* VPP `show runtime` style: where the cycles go, per stage. */
void counters_print_runtime(FILE *out, const struct counters_src *src)
{
	struct pipe_stats sum;
	uint64_t tx_full = 0;

	memset(&sum, 0, sizeof(sum));
	for (uint32_t k = 0; k < src->nworkers; k++) {
		const struct pipe_stats *st = pipe_stats(src->workers[k]->pipe);

		for (unsigned s = 0; s < PIPE_ST_COUNT; s++) {
			sum.stage[s].packets += st->stage[s].packets;
			sum.stage[s].cycles += st->stage[s].cycles;
		}
		for (unsigned d = 0; d < PIPE_DROP_COUNT; d++)
			sum.drop[d] += st->drop[d];
		for (unsigned r = 0; r < PKT_REASON_COUNT; r++)
			sum.parse_reason[r] += st->parse_reason[r];
		sum.replies += st->replies;
		sum.replies_limited += st->replies_limited;
		sum.fragmented += st->fragmented;
		sum.fragments += st->fragments;
		sum.held += st->held;
		sum.held_sent += st->held_sent;
		sum.frag_parked += st->frag_parked;
		sum.frag_resumed += st->frag_resumed;
		sum.flows_hit += st->flows_hit;
		sum.related += st->related;
		sum.nat_rewrites += st->nat_rewrites;
		sum.mss_clamped += st->mss_clamped;
		for (uint32_t p = 0; p < src->nports; p++)
			tx_full += src->workers[k]->port[p].tx_full;
	}
	fprintf(out, "rampart runtime\n");
	fprintf(out, "stage name packets cycles cycles/packet\n");
	for (unsigned s = 0; s < PIPE_ST_COUNT; s++) {
		const struct pipe_stage_stats *st = &sum.stage[s];

		fprintf(out, "stage %s %llu %llu %.1f\n", pipe_stage_name(s),
			(unsigned long long)st->packets, (unsigned long long)st->cycles,
			st->packets ? (double)st->cycles / (double)st->packets : 0.0);
	}
	for (unsigned d = 1; d < PIPE_DROP_COUNT; d++)
		fprintf(out, "drop %s %llu\n", pipe_drop_name(d), (unsigned long long)sum.drop[d]);
	fprintf(out, "drop tx-full %llu\n", (unsigned long long)tx_full);
	for (unsigned r = 1; r < PKT_REASON_COUNT; r++)
		fprintf(out, "malformed %s %llu\n", pkt_reason_name(r),
			(unsigned long long)sum.parse_reason[r]);
	fprintf(out, "replies %llu\n", (unsigned long long)sum.replies);
	fprintf(out, "replies-limited %llu\n", (unsigned long long)sum.replies_limited);
	fprintf(out, "fragmented %llu %llu\n", (unsigned long long)sum.fragmented,
		(unsigned long long)sum.fragments);	/* datagrams, the fragments they made */
	fprintf(out, "held %llu %llu\n", (unsigned long long)sum.held,
		(unsigned long long)sum.held_sent);	/* for a next hop; sent once resolved */
	fprintf(out, "flows-hit %llu\n", (unsigned long long)sum.flows_hit);
	fprintf(out, "related %llu\n", (unsigned long long)sum.related);
	fprintf(out, "nat-rewrites %llu\n", (unsigned long long)sum.nat_rewrites);
	fprintf(out, "mss-clamped %llu\n", (unsigned long long)sum.mss_clamped);
	fprintf(out, "frag-parked %llu %llu\n", (unsigned long long)sum.frag_parked,
		(unsigned long long)sum.frag_resumed);	/* before their first; run again */
	fprintf(out, "end runtime\n");
	fflush(out);
}

void counters_print_workers(FILE *out, const struct counters_src *src)
{
	fprintf(out, "rampart workers\n");
	fprintf(out, "worker id queue cpu rx_packets tx_packets dropped tx_by_address tx_copied "
		     "handed_off handed_in\n");
	for (uint32_t k = 0; k < src->nworkers; k++) {
		const struct worker *w = src->workers[k];
		const struct pipe_stats *st = pipe_stats(w->pipe);
		uint64_t rx = 0, tx = 0, dropped = 0, by_addr = 0, copied = 0;

		/* the same sums as sum_port, over this worker's ports only */
		for (uint32_t p = 0; p < src->nports; p++) {
			rx += st->port[p].rx_packets + w->port[p].handoff_lost;
			tx += st->port[p].tx_packets - w->port[p].tx_lost_packets;
			dropped += st->port[p].dropped + w->port[p].tx_full +
				   w->port[p].handoff_lost;
			by_addr += w->port[p].tx_by_address;
			copied += w->port[p].tx_copied;
		}
		fprintf(out, "worker %u %u %d %llu %llu %llu %llu %llu %llu %llu\n", k, w->queue,
			src->cpus ? src->cpus[k] : -1, (unsigned long long)rx,
			(unsigned long long)tx, (unsigned long long)dropped,
			(unsigned long long)by_addr, (unsigned long long)copied,
			(unsigned long long)st->handed_off, (unsigned long long)st->handed_in);
	}
	fprintf(out, "end workers\n");
	fflush(out);
}
