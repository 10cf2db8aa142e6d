/* The control socket and its thread.
 *
 * Protocol, version 1: the client connects, sends one line
 *     COMMAND [--json] [OPTIONS]\n          (at most CTL_MAX_REQUEST bytes)
 * e.g. "status --json", "stats --rules", "flows --limit 20 --filter proto=tcp"
 * (--filter takes the rest of the line), and reads until EOF an answer
 * whose first line is "rampart-control 1 ok" or "rampart-control 1
 * error", followed by the document (text or JSON; JSON documents carry
 * "version": 1 too) or by the error message. One request per connection. */
#define _GNU_SOURCE	/* SO_PEERCRED, struct ucred, pthread_getaffinity_np */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl_buf.h"
#include "ctl_capture.h"
#include "ctl_filter.h"
#include "ctl_flows.h"
#include "ctl_job.h"
#include "ctl_request.h"
#include "ctl_rxloss.h"
#include "ctl_socket.h"
#include "ctl_stats.h"
#include "reload.h"

#define CONTROL_WORKER_TIMEOUT_MS 2000	/* then "worker N did not answer" */
#define CONTROL_IO_TIMEOUT_S 2		/* a client that neither sends nor reads */
/* One thread serves every client, so each is bounded as a whole, not
 * per call: a request line in CONTROL_IO_TIMEOUT_S, an answer taken in
 * CONTROL_SEND_TOTAL_S (a client trickling a byte a second no longer
 * holds status, reload and the metrics up for hours). */
#define CONTROL_SEND_TOTAL_S 10

struct control {
	int fd;
	int metrics_fd;		/* --metrics listener, -1 when none */
	int stop_pipe[2];	/* written by control_stop to wake the thread */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_t thread;
	int running;
	const struct control_src *src;
	struct timespec started;
	struct ctl_job *jobs;	/* one per worker */
	struct ctl_flow_room flows;	/* limit x nworkers, gathered */
	const char **names;	/* rule names by number */
	const struct rfw_view *names_view;	/* the policy names[] and jobs are sized for */
	struct ctl_rule_names rule_names;
	char (*cpus)[64];
};

struct control *control_open(const char *path, char *err, size_t errlen)
{
	struct control *c = calloc(1, sizeof(*c));

	if (!c) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		return NULL;
	}
	c->stop_pipe[0] = c->stop_pipe[1] = -1;
	c->metrics_fd = -1;
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->fd = ctl_socket_listen(path, err, errlen);
	if (c->fd < 0) {
		free(c);
		return NULL;
	}
	if (pipe2(c->stop_pipe, O_CLOEXEC)) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		close(c->fd);
		unlink(c->path);
		free(c);
		return NULL;
	}
	return c;
}

/* Name table and the jobs' per-rule arrays for the current policy (a
 * reload changes the rule count). 0, or -1 with err. */
static int rules_sync(struct control *c, char *err, size_t errlen)
{
	const struct control_src *src = c->src;
	uint32_t nrules = src->view->policy->rule_count + 1;
	const char **names;

	if (c->names_view == src->view)
		return 0;
	for (uint32_t k = 0; k < src->nworkers; k++)
		if (ctl_job_busy(src->workers[k])) {
			snprintf(err, errlen, "worker %u did not answer (an earlier request is "
				 "still pending)", k);
			return -1;
		}
	names = realloc(c->names, nrules * sizeof(*names));
	if (!names)
		goto nomem;
	c->names = names;
	for (uint32_t n = 0; n < nrules; n++)
		c->names[n] = rfw_rule_name(src->view, n);
	c->rule_names.name = c->names;
	c->rule_names.count = nrules;
	for (uint32_t k = 0; k < src->nworkers; k++) {
		struct ctl_job *j = &c->jobs[k];
		struct pipe_rule_stats *rules = realloc(j->rules, nrules * sizeof(*j->rules));
		uint64_t *limited;

		if (rules)
			j->rules = rules;
		limited = rules ? realloc(j->limited, nrules * sizeof(*j->limited)) : NULL;
		if (!limited)
			goto nomem;
		j->limited = limited;
		j->nrules = nrules;
	}
	c->names_view = src->view;
	return 0;
nomem:
	c->names_view = NULL;
	snprintf(err, errlen, "out of memory for %u rules", nrules);
	return -1;
}

/* ---- asking the workers ---- */

static uint64_t ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - t0->tv_sec) * 1000u +
	       (uint64_t)((now.tv_nsec - t0->tv_nsec) / 1000000);
}

/* Post a job to every worker, wait for all. delete: the flows the
 * filter matches are ended too. 0, or -1 with err. */
static int ask_workers(struct control *c, uint8_t kind, const struct ctl_filter *filter,
		       uint32_t limit, int delete, char *err, size_t errlen)
{
	const struct control_src *src = c->src;
	const struct timespec nap = { 0, 1000000 };
	struct timespec t0;

	for (uint32_t k = 0; k < src->nworkers; k++)
		if (ctl_job_busy(src->workers[k])) {
			snprintf(err, errlen, "worker %u did not answer (an earlier request is "
				 "still pending)", k);
			return -1;
		}
	/* every worker is idle: a listing that failed (a worker late) gives
	 * its room back now */
	ctl_flow_room_trim(&c->flows);
	if (kind == CTL_JOB_FLOWS &&
	    ctl_flow_room_reserve(&c->flows, (size_t)limit * src->nworkers)) {
		snprintf(err, errlen, "out of memory for %u flows", limit);
		return -1;
	}
	for (uint32_t k = 0; k < src->nworkers; k++) {
		struct ctl_job *j = &c->jobs[k];

		j->kind = kind;
		j->max_flows = src->max_flows;
		if (filter)
			j->filter = *filter;
		j->limit = kind == CTL_JOB_FLOWS ? limit : 0;
		j->delete = kind == CTL_JOB_FLOWS && delete;
		/* no arithmetic on a NULL c->flows: stats jobs never had one */
		j->flows = kind == CTL_JOB_FLOWS ? c->flows.flows + (size_t)k * limit : NULL;
		if (ctl_job_post(src->workers[k], j)) {
			snprintf(err, errlen, "worker %u did not answer", k);
			return -1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t k = 0; k < src->nworkers; k++)
		while (!ctl_job_done(&c->jobs[k])) {
			if (ms_since(&t0) >= CONTROL_WORKER_TIMEOUT_MS) {
				snprintf(err, errlen, "worker %u did not answer within %d ms", k,
					 CONTROL_WORKER_TIMEOUT_MS);
				return -1;
			}
			nanosleep(&nap, NULL);
		}
	return 0;
}

/* "0-3,6": the CPUs a worker thread may run on. */
static void cpu_list(pthread_t t, char *out, size_t len)
{
	cpu_set_t set;
	size_t used = 0;
	int first = -1;

	snprintf(out, len, "?");
	if (pthread_getaffinity_np(t, sizeof(set), &set))
		return;
	out[0] = '\0';
	for (int cpu = 0; cpu <= CPU_SETSIZE; cpu++) {
		int in = cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set);

		if (in && first < 0)
			first = cpu;
		if (in || first < 0 || used + 1 >= len)
			continue;
		if (first == cpu - 1)
			used += (size_t)snprintf(out + used, len - used, "%s%d", used ? "," : "", first);
		else
			used += (size_t)snprintf(out + used, len - used, "%s%d-%d", used ? "," : "",
						 first, cpu - 1);
		first = -1;
		if (used >= len)
			used = len - 1;
	}
}

static void report(struct control *c, struct ctl_report *r)
{
	memset(r, 0, sizeof(*r));
	r->src = c->src;
	r->jobs = c->jobs;
	r->names = &c->rule_names;
	r->cpus = (const char (*)[64])c->cpus;
	r->pid = (long)getpid();
	r->uptime_s = ms_since(&c->started) / 1000u;
	/* asked here, on the control thread: the kernel's or the NIC's
	 * counters take system calls the workers' filter refuses */
	ctl_rx_loss_read(c->src->be, c->src->nports, r->rx_loss);
	/* asked each time: a worker's affinity may be changed from outside */
	for (uint32_t k = 0; k < c->src->nworkers; k++)
		cpu_list(c->src->workers[k]->thread, c->cpus[k], sizeof(c->cpus[k]));
}

/* ---- requests ---- */

static int do_flows(struct control *c, const struct ctl_request *rq, struct ctl_buf *out,
		    char *err, size_t errlen)
{
	const struct control_src *src = c->src;
	struct ctl_filter f;
	uint64_t matched = 0, deleted = 0;
	uint32_t n = 0;

	if (ctl_filter_parse(&f, rq->filter ? rq->filter : "", err, errlen) ||
	    ctl_filter_resolve(&f, src->view, err, errlen) ||
	    ask_workers(c, CTL_JOB_FLOWS, &f, rq->limit, rq->delete, err, errlen))
		return -1;
	/* gather the workers' copies, up to the limit in all */
	for (uint32_t k = 0; k < src->nworkers; k++) {
		const struct ctl_job *j = &c->jobs[k];

		/* j->flows starts at k * limit >= n: a move towards the front */
		for (uint32_t i = 0; i < j->nflows && n < rq->limit; i++, n++)
			memmove(&c->flows.flows[n], &j->flows[i], sizeof(c->flows.flows[n]));
		matched += j->matched;
		deleted += j->deleted;
	}
	if (rq->json) {
		ctl_flows_json(out, c->flows.flows, n, matched, rq->delete ? (int64_t)deleted : -1,
			       &c->rule_names);
	} else {
		ctl_flows_text(out, c->flows.flows, n, matched, &c->rule_names);
		if (rq->delete)
			ctl_printf(out, "%llu flow%s deleted\n", (unsigned long long)deleted,
				   deleted == 1 ? "" : "s");
	}
	/* the answer holds its copy; every worker has answered */
	ctl_flow_room_trim(&c->flows);
	return 0;
}

static int do_reload(struct control *c, const struct ctl_request *rq, struct ctl_buf *out,
		     char *err, size_t errlen)
{
	struct reloader *rl = c->src->reload;
	struct reload_timing t;
	enum pipe_flow_policy flows;

	if (!rl) {
		snprintf(err, errlen, "this rampartd cannot reload (capture replay)");
		return -1;
	}
	flows = !rq->flows ? rl->flows
		: !strcmp(rq->flows, "recheck") ? PIPE_FLOWS_RECHECK : PIPE_FLOWS_KEEP;
	if (reload_run(rl, rq->file, flows, &t, err, errlen))
		return -1;
	ctl_reload_answer(out, rl, &t, flows, rq->json);
	return 0;
}

/* capture: the pcapng document (binary, after the ok line). */
static int do_capture(struct control *c, const struct ctl_request *rq, struct ctl_buf *out,
		      char *err, size_t errlen)
{
	const struct control_src *src = c->src;
	struct pktcap_ring *rings[64];
	const char *names[PIPE_MAX_PORTS];
	struct ctl_capture_req q = {
		.rule = PKTCAP_DROPS, .count = rq->cap_count,
		.timeout_s = rq->cap_timeout ? rq->cap_timeout : CTL_CAPTURE_TIMEOUT,
		.view = src->view, .ifnames = names, .nports = src->nports, .rings = rings,
		.nworkers = src->nworkers < 64 ? src->nworkers : 64,
	};

	if (rq->cap_rule) {
		uint32_t n = 0;

		while (n <= src->view->policy->rule_count &&
		       strcmp(rfw_rule_name(src->view, n), rq->cap_rule))
			n++;
		if (n > src->view->policy->rule_count) {
			snprintf(err, errlen, "capture: the policy has no rule '%s'", rq->cap_rule);
			return -1;
		}
		q.rule = n;
	}
	for (uint32_t p = 0; p < src->nports; p++)
		names[p] = src->iface[p].name;
	for (uint32_t k = 0; k < q.nworkers; k++)
		rings[k] = src->workers[k]->cap;
	return ctl_capture(out, &q, err, errlen) < 0 ? -1 : 0;
}

/* 0 with the document in out, or -1 with the message in err. */
static int dispatch(struct control *c, const struct ctl_request *rq, struct ctl_buf *out,
		    char *err, size_t errlen)
{
	struct ctl_report r;

	if (ctl_request_check(rq, err, errlen))
		return -1;
	if (!strcmp(rq->cmd, "reload"))
		return do_reload(c, rq, out, err, errlen);
	if (!strcmp(rq->cmd, "capture"))
		return do_capture(c, rq, out, err, errlen);
	if (rules_sync(c, err, errlen))
		return -1;
	if (!strcmp(rq->cmd, "flows"))
		return do_flows(c, rq, out, err, errlen);
	if (strcmp(rq->cmd, "status") && strcmp(rq->cmd, "stats") &&
	    strcmp(rq->cmd, "top-sample")) {
		snprintf(err, errlen, "unknown command '%s' (status, stats, flows, reload)",
			 rq->cmd);
		return -1;
	}
	if (ask_workers(c, CTL_JOB_STATS, NULL, 0, 0, err, errlen))
		return -1;
	report(c, &r);
	if (!strcmp(rq->cmd, "status"))
		ctl_status(out, &r, rq->json);
	else if (!strcmp(rq->cmd, "top-sample"))
		ctl_top_sample(out, &r);
	else
		ctl_stats(out, &r, rq->sections ? rq->sections : CTL_S_ALL, rq->json);
	return 0;
}

/* ---- connections ---- */

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void send_all(int fd, const char *p, size_t n)
{
	const int64_t deadline = mono_ms() + CONTROL_SEND_TOTAL_S * 1000;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0 && errno == EINTR && mono_ms() < deadline)
			continue;
		if (w <= 0 || mono_ms() >= deadline)
			return;	/* the client went away or reads too slowly */
		p += w;
		n -= (size_t)w;
	}
}

static void send_answer(int fd, int ok, const char *body, size_t len)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "%s %d %s\n", CONTROL_MAGIC, CONTROL_PROTO_VERSION,
			 ok ? "ok" : "error");

	send_all(fd, head, (size_t)n);
	send_all(fd, body, len);
}

static void send_error(int fd, const char *msg)
{
	char line[600];
	int n = snprintf(line, sizeof(line), "%s\n", msg);

	send_answer(fd, 0, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* Read one line; 0, or -1 with err. */
static int read_line(int fd, char *line, size_t room, char *err, size_t errlen)
{
	const int64_t deadline = mono_ms() + CONTROL_IO_TIMEOUT_S * 1000;
	size_t len = 0;

	while (len + 1 < room) {
		ssize_t r = recv(fd, line + len, room - 1 - len, 0);
		char *nl;

		if (r < 0 && errno == EINTR && mono_ms() < deadline)
			continue;
		if (r <= 0 || (mono_ms() >= deadline && !memchr(line + len, '\n', (size_t)r))) {
			snprintf(err, errlen, "no request line within %d s (connection closed or "
				 "too slow)", CONTROL_IO_TIMEOUT_S);
			return -1;
		}
		len += (size_t)r;
		line[len] = '\0';
		nl = memchr(line, '\n', len);
		if (nl) {
			*nl = '\0';
			if (nl > line && nl[-1] == '\r')
				nl[-1] = '\0';
			return 0;
		}
	}
	snprintf(err, errlen, "request longer than %d bytes", CTL_MAX_REQUEST);
	return -1;
}

static void serve(struct control *c, int fd)
{
	const struct timeval tv = { CONTROL_IO_TIMEOUT_S, 0 };
	char line[CTL_MAX_REQUEST], err[512];
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct ctl_request rq;
	struct ctl_buf out;
	int rc;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* The request is read first even from a peer about to be refused:
	 * closing with its line unread would reset the connection, and the
	 * peer would never see why. */
	if (read_line(fd, line, sizeof(line), err, sizeof(err))) {
		send_error(fd, err);
		return;
	}
	/* The socket file is 0600 already; this also holds when someone
	 * loosened its mode or directory. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    (cred.uid != geteuid() && cred.uid != 0)) {
		snprintf(err, sizeof(err), "permission denied: uid %ld may not use rampartd's "
			 "control socket (only uid %ld and root)",
			 (long)(len == sizeof(cred) ? cred.uid : (uid_t)-1), (long)geteuid());
		send_error(fd, err);
		return;
	}
	if (ctl_request_parse(line, &rq, err, sizeof(err))) {
		send_error(fd, err);
		return;
	}
	ctl_buf_init(&out);
	if (c->src->reload)
		reload_lock(c->src->reload);
	rc = dispatch(c, &rq, &out, err, sizeof(err));
	if (c->src->reload)
		reload_unlock(c->src->reload);
	if (rc)
		send_error(fd, err);
	else if (out.oom)
		send_error(fd, "out of memory while writing the answer");
	else
		send_answer(fd, 1, out.p ? out.p : "", out.len);
	ctl_buf_free(&out);
}

/* ---- metrics: one HTTP GET a connection, the Prometheus text format ---- */

int control_metrics_listen(struct control *c, const char *addr, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char host[64];
	const char *colon = strrchr(addr, ':');
	long port = colon ? strtol(colon + 1, NULL, 10) : 0;
	size_t hl = colon ? (size_t)(colon - addr) : 0;
	int one = 1, fd;

	if (!colon || port <= 0 || port > 65535 || hl == 0 || hl >= sizeof(host)) {
		snprintf(err, errlen, "--metrics %s: want ADDRESS:PORT, e.g. 127.0.0.1:9630", addr);
		return -1;
	}
	memcpy(host, addr, hl);
	host[hl] = '\0';
	memset(&ss, 0, sizeof(ss));
	if (host[0] == '[' && host[hl - 1] == ']') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		host[hl - 1] = '\0';
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
			goto bad;
		len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			goto bad;
		len = sizeof(*a);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 16)) {
		snprintf(err, errlen, "--metrics %s: %s", addr, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	c->metrics_fd = fd;
	return 0;
bad:
	snprintf(err, errlen, "--metrics %s: '%s' is not an IP address", addr, host);
	return -1;
}

static void http_answer(int fd, const char *status, const char *type, const char *body,
			size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head), "HTTP/1.0 %s\r\nContent-Type: %s\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n", status, type, len);

	send_all(fd, head, (size_t)n);
	send_all(fd, body, len);
}

static void serve_metrics(struct control *c, int fd)
{
	const struct timeval tv = { CONTROL_IO_TIMEOUT_S, 0 };
	char line[CTL_MAX_REQUEST], err[512];
	struct ctl_report r;
	struct ctl_buf out;
	int rc;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (read_line(fd, line, sizeof(line), err, sizeof(err)))
		return;
	if (strncmp(line, "GET /metrics ", 13) && strcmp(line, "GET /metrics")) {
		static const char msg[] = "rampartd serves /metrics only\n";

		http_answer(fd, "404 Not Found", "text/plain", msg, sizeof(msg) - 1);
		return;
	}
	ctl_buf_init(&out);
	if (c->src->reload)
		reload_lock(c->src->reload);
	rc = rules_sync(c, err, sizeof(err)) ||
	     ask_workers(c, CTL_JOB_STATS, NULL, 0, 0, err, sizeof(err));
	if (!rc) {
		report(c, &r);
		ctl_metrics(&out, &r);
	}
	if (c->src->reload)
		reload_unlock(c->src->reload);
	if (rc || out.oom) {
		snprintf(line, sizeof(line), "%s\n", rc ? err : "out of memory");
		http_answer(fd, "503 Service Unavailable", "text/plain", line, strlen(line));
	} else {
		http_answer(fd, "200 OK", "text/plain; version=0.0.4; charset=utf-8",
			    out.p ? out.p : "", out.len);
	}
	ctl_buf_free(&out);
}

static void *control_main(void *arg)
{
	struct control *c = arg;
	struct pollfd pfd[3] = {
		{ .fd = c->fd, .events = POLLIN },
		{ .fd = c->stop_pipe[0], .events = POLLIN },
		{ .fd = c->metrics_fd, .events = POLLIN },	/* -1: ignored */
	};

	for (;;) {
		int fd;

		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		if (pfd[2].revents) {
			fd = accept4(c->metrics_fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0) {
				serve_metrics(c, fd);
				close(fd);
			}
		}
		if (!pfd[0].revents)
			continue;
		fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve(c, fd);
		close(fd);
	}
	return NULL;
}

int control_start(struct control *c, const struct control_src *src)
{
	char err[128];
	int r;

	c->src = src;
	clock_gettime(CLOCK_MONOTONIC, &c->started);
	c->jobs = calloc(src->nworkers ? src->nworkers : 1, sizeof(*c->jobs));
	c->cpus = calloc(src->nworkers ? src->nworkers : 1, sizeof(*c->cpus));
	if (!c->jobs || !c->cpus)
		return ENOMEM;
	for (uint32_t k = 0; k < src->nworkers; k++) {
		c->jobs[k].worker = k;
		atomic_init(&c->jobs[k].done, 0);
	}
	if (rules_sync(c, err, sizeof(err)))
		return ENOMEM;
	r = pthread_create(&c->thread, NULL, control_main, c);
	c->running = !r;
	return r;
}

void control_stop(struct control *c)
{
	if (!c)
		return;
	if (c->running) {
		ssize_t w;

		do
			w = write(c->stop_pipe[1], "x", 1);
		while (w < 0 && errno == EINTR);
		pthread_join(c->thread, NULL);
		c->running = 0;
	}
	if (c->fd >= 0) {
		close(c->fd);
		unlink(c->path);
		c->fd = -1;
	}
	if (c->metrics_fd >= 0) {
		close(c->metrics_fd);
		c->metrics_fd = -1;
	}
}

void control_free(struct control *c)
{
	if (!c)
		return;
	control_stop(c);
	for (int i = 0; i < 2; i++)
		if (c->stop_pipe[i] >= 0)
			close(c->stop_pipe[i]);
	if (c->jobs && c->src)
		for (uint32_t k = 0; k < c->src->nworkers; k++) {
			free(c->jobs[k].rules);
			free(c->jobs[k].limited);
		}
	free(c->jobs);
	ctl_flow_room_free(&c->flows);
	free(c->names);
	free(c->cpus);
	free(c);
}
