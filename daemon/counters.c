/* Counter storage and printing. The worker writes plain uint64_t fields
 * (no atomics: one writer, and an atomic add per packet is what we avoid);
 * the main thread reads them to print. On x86-64 an aligned 64-bit load
 * cannot tear, and a print that is a few packets behind the worker is
 * fine; the final print happens after the worker has been joined, so it is
 * exact. */
#include "counters.h"

#include <stdlib.h>
#include <string.h>

int counters_init(struct counters *c, const struct rfw_view *view)
{
	memset(c, 0, sizeof(*c));
	c->nrules = view->policy->rule_count + 1;
	c->rules = calloc(c->nrules, sizeof(*c->rules));
	return c->rules ? 0 : -1;
}

void counters_free(struct counters *c)
{
	free(c->rules);
	c->rules = NULL;
}

static void counters_print_rule(FILE *out, const struct counters *c,
				const struct rfw_view *view, uint32_t n)
{
	uint8_t action = n ? view->rules[n].action : view->policy->default_action;
	const char *name = rfw_rule_name(view, n);

	if (!n && !*name)
		name = "default";
	fprintf(out, "%u %s %s %llu %llu\n", n, name,
		rfw_action_name(action),
		(unsigned long long)c->rules[n].packets,
		(unsigned long long)c->rules[n].bytes);
}

void counters_print(FILE *out, const struct counters *c, const struct rfw_view *view)
{
	fprintf(out, "rampart counters\n");
	fprintf(out, "rule name action packets bytes\n");
	for (uint32_t n = 1; n < c->nrules; n++)
		counters_print_rule(out, c, view, n);
	counters_print_rule(out, c, view, 0);
	fprintf(out, "interface name rx_packets rx_bytes tx_packets tx_bytes dropped non_ip malformed\n");
	for (uint32_t i = 0; i < c->nifs; i++) {
		const struct counters_if *s = &c->ifs[i];

		fprintf(out, "interface %s %llu %llu %llu %llu %llu %llu %llu\n",
			c->ifnames[i],
			(unsigned long long)s->rx_packets, (unsigned long long)s->rx_bytes,
			(unsigned long long)s->tx_packets, (unsigned long long)s->tx_bytes,
			(unsigned long long)s->dropped, (unsigned long long)s->non_ip,
			(unsigned long long)s->malformed);
	}
	fprintf(out, "end counters\n");
	fflush(out);
}

void counters_print_detail(FILE *out, const struct counters *c)
{
	for (uint32_t i = 0; i < c->nifs; i++) {
		const struct counters_if *s = &c->ifs[i];

		fprintf(out, "%s: tx_full %llu", c->ifnames[i],
			(unsigned long long)s->tx_full);
		for (unsigned r = 1; r < PKT_REASON_COUNT; r++)
			fprintf(out, " %s %llu", pkt_reason_name(r),
				(unsigned long long)s->reason[r]);
		fprintf(out, "\n");
	}
	fflush(out);
}
