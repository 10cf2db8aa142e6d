/* Draining the workers' packet log rings into JSON lines. */
#include "logger.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipeline.h"

#define LOGGER_BATCH 256
#define LOGGER_IDLE_NS 20000000	/* 20 ms between looks when nothing came */

static int64_t ns_of(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int logger_open(struct logger *l, const char *path, uint32_t nworkers,
		const char *const *ifnames, uint32_t nports, char *err, size_t errlen)
{
	memset(l, 0, sizeof(*l));
	l->ifnames = ifnames;
	l->nports = nports;
	atomic_init(&l->stop, 0);
	if (!strcmp(path, "-")) {
		l->out = stdout;
	} else {
		l->out = fopen(path, "ae");
		if (!l->out) {
			snprintf(err, errlen, "--log %s: %s", path, strerror(errno));
			return -1;
		}
		l->own = 1;
	}
	l->rings = calloc(nworkers ? nworkers : 1, sizeof(*l->rings));
	if (!l->rings)
		goto nomem;
	for (uint32_t k = 0; k < nworkers; k++, l->nrings++)
		if (pktlog_ring_init(&l->rings[k], LOGGER_RING) < 0)
			goto nomem;
	l->real_minus_mono = ns_of(CLOCK_REALTIME) - ns_of(CLOCK_MONOTONIC);
	return 0;
nomem:
	snprintf(err, errlen, "--log: out of memory for the log rings");
	logger_close(l);
	return -1;
}

static const char *verdict_name(const struct pktlog_rec *r)
{
	return r->verdict == PIPE_FORWARD || r->verdict == PIPE_HELD ? "accept"
	       : r->verdict == PIPE_BOUNCE ? "reject" : "drop";
}

static void addr_str(const struct pkt_key *k, const uint8_t *a, char *out, size_t len)
{
	if (!inet_ntop(k->family == 6 ? AF_INET6 : AF_INET, a, out, (socklen_t)len))
		snprintf(out, len, "?");
}

static const char *port_name(const struct logger *l, uint8_t port)
{
	return port < l->nports ? l->ifnames[port] : "";
}

/* A rule name as a JSON string body: quotes and backslashes escaped
 * (names are [A-Za-z0-9_.-] per POLICY.md, so this is belt and braces). */
static void json_body(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s && o + 3 < len; s++) {
		if (*s == '"' || *s == '\\')
			out[o++] = '\\';
		out[o++] = (unsigned char)*s < 0x20 ? '?' : *s;
	}
	out[o] = '\0';
}

size_t logger_format(const struct logger *l, const struct pktlog_rec *r, char *buf, size_t len)
{
	const struct pkt_key *k = &r->key;
	int64_t real = (int64_t)r->mono_ns + l->real_minus_mono;
	time_t sec = (time_t)(real / 1000000000);
	struct tm tm;
	char when[32], src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], name[2 * PKTLOG_NAME];
	int n;

	gmtime_r(&sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	addr_str(k, k->src, src, sizeof(src));
	addr_str(k, k->dst, dst, sizeof(dst));
	json_body(r->name, name, sizeof(name));
	n = snprintf(buf, len, "{\"time\": \"%s.%06ldZ\", \"event\": \"%s\", \"rule\": \"%s\", "
			       "\"rule_number\": %u, \"verdict\": \"%s\"",
		     when, (long)(real % 1000000000 / 1000), r->invalid ? "invalid" : "rule", name,
		     r->rule, verdict_name(r));
	if (r->verdict == PIPE_DROP)
		n += snprintf(buf + n, len - (size_t)n, ", \"reason\": \"%s\"", pipe_drop_name(r->drop));
	n += snprintf(buf + n, len - (size_t)n, ", \"in\": \"%s\"", port_name(l, r->in_port));
	if (r->verdict == PIPE_FORWARD)
		n += snprintf(buf + n, len - (size_t)n, ", \"out\": \"%s\"", port_name(l, r->out_port));
	n += snprintf(buf + n, len - (size_t)n, ", \"family\": %u, \"proto\": %u, \"src\": \"%s\", "
						"\"dst\": \"%s\"", k->family, k->proto, src, dst);
	if (k->has_ports)
		n += snprintf(buf + n, len - (size_t)n, ", \"sport\": %u, \"dport\": %u", k->sport,
			      k->dport);
	else if (k->proto == 1 || k->proto == 58)
		n += snprintf(buf + n, len - (size_t)n, ", \"icmp_type\": %u, \"icmp_code\": %u",
			      k->icmp_type, k->icmp_code);
	if (r->nat) {
		addr_str(&r->wire, r->wire.src, src, sizeof(src));
		addr_str(&r->wire, r->wire.dst, dst, sizeof(dst));
		n += snprintf(buf + n, len - (size_t)n, ", \"nat\": {\"src\": \"%s\", \"sport\": %u, "
							"\"dst\": \"%s\", \"dport\": %u}",
			      src, r->wire.sport, dst, r->wire.dport);
	}
	n += snprintf(buf + n, len - (size_t)n, "}");
	return (size_t)n < len ? (size_t)n : len - 1;
}

/* One pass over the rings; records written. */
static uint32_t drain(struct logger *l)
{
	struct pktlog_rec batch[LOGGER_BATCH];
	char line[1024];
	uint32_t total = 0;

	for (uint32_t k = 0; k < l->nrings; k++) {
		uint32_t n;

		while ((n = pktlog_read(&l->rings[k], batch, LOGGER_BATCH)) > 0) {
			for (uint32_t i = 0; i < n; i++) {
				logger_format(l, &batch[i], line, sizeof(line));
				fputs(line, l->out);
				fputc('\n', l->out);
			}
			total += n;
		}
	}
	if (total)
		fflush(l->out);
	l->written += total;
	return total;
}

static void *logger_main(void *arg)
{
	struct logger *l = arg;
	const struct timespec idle = { 0, LOGGER_IDLE_NS };

	while (!atomic_load_explicit(&l->stop, memory_order_acquire))
		if (!drain(l))
			nanosleep(&idle, NULL);
	drain(l);
	return NULL;
}

int logger_start(struct logger *l)
{
	int e = pthread_create(&l->thread, NULL, logger_main, l);

	l->running = !e;
	return e;
}

void logger_close(struct logger *l)
{
	if (l->running) {
		atomic_store_explicit(&l->stop, 1, memory_order_release);
		pthread_join(l->thread, NULL);
		l->running = 0;
	}
	for (uint32_t k = 0; k < l->nrings; k++)
		pktlog_ring_free(&l->rings[k]);
	free(l->rings);
	l->rings = NULL;
	l->nrings = 0;
	if (l->own && l->out)
		fclose(l->out);
	l->out = NULL;
}

void logger_losses(const struct logger *l, uint64_t *full, uint64_t *limited)
{
	*full = *limited = 0;
	for (uint32_t k = 0; k < l->nrings; k++) {
		*full += l->rings[k].full;
		*limited += l->rings[k].limited;
	}
}
