/* Rates from two top samples, and their screen. */
#include "ctl_top.h"

#include <stdlib.h>
#include <string.h>

static int push(struct top_row **rows, uint32_t *n, const struct top_row *r)
{
	struct top_row *v;

	if ((*n & (*n - 1)) == 0) {	/* 0, 1, 2, 4, ...: grow to the next power */
		v = realloc(*rows, (*n ? 2 * *n : 1) * sizeof(**rows));
		if (!v)
			return -1;
		*rows = v;
	}
	(*rows)[(*n)++] = *r;
	return 0;
}

int top_parse(const char *text, struct top_sample *s)
{
	const char *line = text;

	memset(s, 0, sizeof(*s));
	while (line && *line) {
		struct top_row r;
		unsigned long long a = 0, b = 0, c = 0, d = 0, e = 0, f = 0;
		int ok = 0;

		memset(&r, 0, sizeof(r));
		if (sscanf(line, "time_ns %llu", &a) == 1) {
			s->t_ns = a;
			ok = 1;
		} else if (sscanf(line, "flows %llu %llu", &a, &b) == 2) {
			s->flows = a;
			s->flows_max = b;
			ok = 1;
		} else if (sscanf(line, "iface %llu %llu %llu %llu %llu %llu %63s", &a, &b, &c, &d,
				  &e, &f, r.name) == 7 ||
			   /* a daemon from before the RX missed count */
			   (f = 0, sscanf(line, "iface %llu %llu %llu %llu %llu %63s", &a, &b, &c, &d,
					  &e, r.name) == 6)) {
			r.v[0] = a, r.v[1] = b, r.v[2] = c, r.v[3] = d, r.v[4] = e, r.v[5] = f;
			ok = !push(&s->iface, &s->niface, &r);
		} else if (sscanf(line, "worker %llu %llu %llu %63s", &a, &b, &c, r.name) == 4) {
			r.v[0] = a, r.v[1] = b, r.v[2] = c;
			ok = !push(&s->worker, &s->nworker, &r);
		} else if (sscanf(line, "rule %llu %llu %63s", &a, &b, r.name) == 3) {
			r.v[0] = a, r.v[1] = b;
			ok = !push(&s->rule, &s->nrule, &r);
		} else if (sscanf(line, "drop %llu %llu %63s", &a, &b, r.name) == 3) {
			r.v[0] = a;
			ok = !push(&s->drop, &s->ndrop, &r);
		}
		if (!ok) {
			top_free(s);
			return -1;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (!s->t_ns) {		/* no time: no rates; what was read goes */
		top_free(s);
		return -1;
	}
	return 0;
}

void top_free(struct top_sample *s)
{
	free(s->iface);
	free(s->worker);
	free(s->rule);
	free(s->drop);
	memset(s, 0, sizeof(*s));
}

/* The same row in prev: at the same place when the names agree (the
 * usual case), else none (a reload reordered the rules: it counts from 0). */
static const struct top_row *before(const struct top_row *rows, uint32_t n, uint32_t i,
				    const char *name)
{
	return i < n && !strcmp(rows[i].name, name) ? &rows[i] : NULL;
}

static double rate(const struct top_row *p, const struct top_row *c, int k, double secs)
{
	uint64_t was = p ? p->v[k] : 0;

	return c->v[k] >= was && secs > 0 ? (double)(c->v[k] - was) / secs : 0.0;
}

void top_render(FILE *out, const struct top_sample *prev, const struct top_sample *cur,
		uint32_t rules)
{
	double secs = (double)(cur->t_ns - prev->t_ns) / 1e9;
	uint32_t shown = 0;
	uint8_t *used = calloc(cur->nrule ? cur->nrule : 1, 1);

	fprintf(out, "rampart top: rates over %.1f s; conntrack %llu / %llu flows\n\n", secs,
		(unsigned long long)cur->flows, (unsigned long long)cur->flows_max);
	/* MISSED: frames lost before any worker saw them (RX ring full, no
	 * buffer: stats --interfaces' RX_MISSED), which DROP cannot show */
	fprintf(out, "%-16s %12s %12s %12s %12s %12s %12s\n", "INTERFACE", "RX pps", "RX Mbit/s",
		"TX pps", "TX Mbit/s", "DROP pps", "MISSED pps");
	for (uint32_t i = 0; i < cur->niface; i++) {
		const struct top_row *c = &cur->iface[i];
		const struct top_row *p = before(prev->iface, prev->niface, i, c->name);

		fprintf(out, "%-16s %12.0f %12.2f %12.0f %12.2f %12.0f %12.0f\n", c->name,
			rate(p, c, 0, secs), rate(p, c, 1, secs) * 8 / 1e6, rate(p, c, 2, secs),
			rate(p, c, 3, secs) * 8 / 1e6, rate(p, c, 4, secs), rate(p, c, 5, secs));
	}
	fprintf(out, "\n%-16s %12s %12s %12s\n", "WORKER", "RX pps", "TX pps", "DROP pps");
	for (uint32_t i = 0; i < cur->nworker; i++) {
		const struct top_row *c = &cur->worker[i];
		const struct top_row *p = before(prev->worker, prev->nworker, i, c->name);

		fprintf(out, "%-16s %12.0f %12.0f %12.0f\n", c->name, rate(p, c, 0, secs),
			rate(p, c, 1, secs), rate(p, c, 2, secs));
	}
	fprintf(out, "\n%-32s %12s %16s\n", "TOP RULES", "pps", "packets");
	/* the busiest first: a selection, `rules` passes over the list */
	for (; used && shown < rules && shown < cur->nrule; shown++) {
		uint32_t best = UINT32_MAX;
		double best_rate = -1;

		for (uint32_t i = 0; i < cur->nrule; i++) {
			const struct top_row *c = &cur->rule[i];
			double r;

			if (used[i])
				continue;
			r = rate(before(prev->rule, prev->nrule, i, c->name), c, 0, secs);
			if (r > best_rate || (r == best_rate && best != UINT32_MAX &&
					      c->v[0] > cur->rule[best].v[0])) {
				best = i;
				best_rate = r;
			}
		}
		if (best == UINT32_MAX)
			break;
		used[best] = 1;
		fprintf(out, "%-32s %12.0f %16llu\n", cur->rule[best].name, best_rate,
			(unsigned long long)cur->rule[best].v[0]);
	}
	free(used);
	fprintf(out, "\n%-32s %12s %16s\n", "DROPS", "pps", "packets");
	for (uint32_t i = 0; i < cur->ndrop; i++) {
		const struct top_row *c = &cur->drop[i];

		if (c->v[0])
			fprintf(out, "%-32s %12.0f %16llu\n", c->name,
				rate(before(prev->drop, prev->ndrop, i, c->name), c, 0, secs),
				(unsigned long long)c->v[0]);
	}
}
