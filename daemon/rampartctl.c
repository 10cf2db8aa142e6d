/* rampartctl: asks a running rampartd over its control socket (control.c
 * has the protocol) and prints the answer. The daemon renders both the
 * table and the JSON form, so this program only builds the request line
 * and maps the answer to an exit status: 0 ok, 1 the daemon refused the
 * request (its message on stderr), 2 the daemon could not be reached. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "ctl_request.h"
#include "ctl_top.h"

#define EXIT_CMD 1
#define EXIT_UNREACHABLE 2
#define ANSWER_TIMEOUT_S 30
/* a reload waits up to twice RELOAD_WAIT_S (30 s, reload.c) for the
 * workers; a capture its --timeout: the answer is awaited that long and
 * some, so a slow answer is not taken for an unreachable daemon */
#define ANSWER_MARGIN_S 10
static long answer_timeout_s = ANSWER_TIMEOUT_S;

static double top_interval = 1.0;	/* rampartctl top */
static const char *capture_file;	/* rampartctl capture -w */
static long top_count;			/* 0: until interrupted */

static const char *const usage_main =
	"usage: rampartctl [--control PATH] [--json] COMMAND [OPTIONS]\n"
	"\n"
	"  status                 version, uptime, policy, interfaces, workers,\n"
	"                         conntrack and NAT pool use\n"
	"  stats [--rules|--interfaces|--workers|--stages]\n"
	"                         counters (every section when none is named)\n"
	"  flows [--filter EXPR] [--limit N] [--delete]\n"
	"                         the conntrack table (at most N flows, default 100);\n"
	"                         --delete ends the flows the filter matches\n"
	"  capture [--rule NAME | --drops] -c N -w FILE [--timeout S]\n"
	"                         matching packets, with their verdicts, to a pcapng file\n"
	"  top [--interval S] [--count N]\n"
	"                         live rates: interfaces, workers, busiest rules, drops\n"
	"  reload [FILE.rfw] [--flows keep|recheck]\n"
	"                         put a new policy in force without losing traffic\n"
	"\n"
	"  --control PATH         rampartd's control socket (default " CONTROL_DEFAULT_PATH ")\n"
	"  --json                 one JSON object instead of aligned columns\n"
	"  COMMAND --help         help for one command\n"
	"\n"
	"Exit status: 0 done, 1 the request failed (the daemon says why),\n"
	"2 rampartd could not be reached.\n";

static const char *const usage_status =
	"usage: rampartctl [--control PATH] [--json] status\n"
	"\n"
	"rampartd's version, pid and uptime; mode and backend; the policy file, its\n"
	"rule count and artifact checksum; each interface's XDP attach mode, AF_XDP\n"
	"mode and queues; each worker's queue and CPUs; conntrack flows in use of\n"
	"the maximum; NAT pool ports in use.\n";

static const char *const usage_stats =
	"usage: rampartctl [--control PATH] [--json] stats [--rules] [--interfaces]\n"
	"                  [--workers] [--stages]\n"
	"\n"
	"  --rules        per rule: number, name, action, packets, bytes, packets\n"
	"                 over its rate limit\n"
	"  --interfaces   per interface: rx/tx packets and bytes, dropped, non-IP,\n"
	"                 malformed, lost for lack of TX room, and lost before a\n"
	"                 worker saw them (RX_MISSED: ring full, no buffer, ...)\n"
	"  --workers      per worker: queue, rx, tx, drops, flows\n"
	"  --stages       per pipeline stage: packets, cycles, cycles/packet; drops\n"
	"                 by reason\n"
	"Without an option every section is shown. Numbers are summed over the\n"
	"workers.\n";

static const char *const usage_flows =
	"usage: rampartctl [--control PATH] [--json] flows [--filter EXPR] [--limit N]\n"
	"                  [--delete]\n"
	"\n"
	"Lists conntrack flows: protocol, original tuple, the reply tuple when NAT\n"
	"translates it, TCP state, the rule that accepted the flow, packets and\n"
	"bytes each way (> original direction, < reply), seconds until it expires.\n"
	"\n"
	"  --limit N      at most N flows (default 100); the count of all matching\n"
	"                 flows is printed after them\n"
	"  --filter EXPR  space-separated key=value terms, all of which must match\n"
	"                 the flow's original direction:\n"
	"                   proto=tcp|udp|icmp|icmpv6|sctp|NUMBER\n"
	"                   src=ADDR[/LEN]   dst=ADDR[/LEN]   (IPv4 or IPv6)\n"
	"                   sport=N          dport=N          (TCP, UDP, SCTP)\n"
	"                   rule=NAME        (the rule that accepted the flow)\n"
	"                   state=syn_sent|syn_recv|established|fin_wait|closing|\n"
	"                         time_wait|closed   (TCP only)\n"
	"                 e.g. --filter 'proto=tcp dst=10.1.0.0/16 state=established'\n"
	"                 A bad filter is an error (exit 1).\n"
	"  --delete       end the flows the filter matches, as their timeouts would\n"
	"                 (NAT ports go back to their pools; their next packet meets\n"
	"                 the rules as a new one): listed as they were (--limit\n"
	"                 bounds the list, not what ends), then\n"
	"                 \"N flows deleted\". Needs --filter (ending every flow takes\n"
	"                 a filter per protocol: proto=tcp, proto=udp, ...).\n";

static const char *const usage_reload =
	"usage: rampartctl [--control PATH] [--json] reload [FILE.rfw] [--flows keep|recheck]\n"
	"\n"
	"Load FILE.rfw (default: the file rampartd runs, read again) and put it in\n"
	"force between two bursts of every worker: conntrack, NAT bindings, rate-limit\n"
	"state and the counters of rules whose name survives carry over. Exits 0 only\n"
	"when the new policy is in force; otherwise prints why (bad checksum or\n"
	"version, an interface rampartd does not serve, ...) and exits 1, and the\n"
	"running policy stays.\n"
	"\n"
	"  --flows keep     established flows the new policy would refuse live on\n"
	"  --flows recheck  their next packet meets the new rules as a new connection;\n"
	"                   refused, the flow ends\n"
	"                   (default: rampartd's --reload-flows, itself keep by default)\n"
	"\n"
	"Prints how long mapping, building, publishing and releasing the old tables\n"
	"took, in microseconds from the request.\n";

static const char *const usage_top =
	"usage: rampartctl [--control PATH] top [--interval S] [--count N]\n"
	"\n"
	"A screen refreshed every S seconds (default 1): packets and Mbit/s per\n"
	"interface with its drops and the frames lost before a worker saw them\n"
	"(MISSED), packets per worker, the 10 busiest rules, drops by reason; the\n"
	"conntrack use. Plain text (cleared with ANSI codes on a terminal), so it\n"
	"works over SSH. --count N stops after N screens; otherwise Ctrl-C.\n";

static const char *const usage_capture =
	"usage: rampartctl [--control PATH] capture [--rule NAME | --drops] -c N -w FILE\n"
	"                  [--timeout S]\n"
	"\n"
	"Captures up to N packets that rule NAME matched (a flow's packets count under\n"
	"the rule that accepted it), or every dropped packet, as they leave the\n"
	"pipeline (after NAT; a dropped packet as it was dropped), for at most S\n"
	"seconds (default 10), and writes them to FILE (- for stdout) in pcapng, each\n"
	"with a comment naming its rule, verdict, drop reason and interfaces\n"
	"(tshark -r FILE -T fields -e frame.comment). Frames are cut to 2048 bytes.\n";

static const char *command_usage(const char *cmd)
{
	if (!strcmp(cmd, "capture"))
		return usage_capture;
	if (!strcmp(cmd, "top"))
		return usage_top;
	if (!strcmp(cmd, "status"))
		return usage_status;
	if (!strcmp(cmd, "stats"))
		return usage_stats;
	if (!strcmp(cmd, "flows"))
		return usage_flows;
	if (!strcmp(cmd, "reload"))
		return usage_reload;
	return NULL;
}

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "rampartctl: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nsee rampartctl %s%s--help\n", cmd ? cmd : "", cmd ? " " : "");
	return EXIT_CMD;
}

struct line {
	char text[CTL_MAX_REQUEST];
	size_t len;
	int overflow;
};

static void append(struct line *l, const char *s)
{
	size_t n = strlen(s);

	if (l->len + n + 2 >= sizeof(l->text)) {
		l->overflow = 1;
		return;
	}
	if (l->len)
		l->text[l->len++] = ' ';
	memcpy(l->text + l->len, s, n + 1);
	l->len += n;
}

/* One request line from argv; the command's options are checked here so
 * that mistakes are reported without a daemon, and again by the daemon. */
static int build_request(int argc, char **argv, const char **control, struct line *req)
{
	const char *cmd = NULL, *filter = NULL, *file = NULL;
	static char abs[PATH_MAX];
	int json = 0, delete = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(cmd ? command_usage(cmd) : usage_main, stdout);
			exit(0);
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--control")) {
			if (++i == argc)
				return usage_error(cmd, "--control needs a PATH%s", "");
			*control = argv[i];
		} else if (!cmd) {
			if (!command_usage(a))
				return usage_error(NULL, "unknown command '%s' (status, stats, flows, "
						   "reload)", a);
			cmd = a;
			append(req, strcmp(cmd, "top") ? cmd : "top-sample");
			if (!strcmp(cmd, "reload"))
				answer_timeout_s = 2 * 30 + ANSWER_MARGIN_S;
		} else if (!strcmp(cmd, "stats") &&
			   (!strcmp(a, "--rules") || !strcmp(a, "--interfaces") ||
			    !strcmp(a, "--workers") || !strcmp(a, "--stages"))) {
			append(req, a);
		} else if (!strcmp(cmd, "flows") && !strcmp(a, "--limit")) {
			char *end;

			if (++i == argc || strtoul(argv[i], &end, 10) == 0 || *end || argv[i][0] == '-')
				return usage_error(cmd, "--limit takes a number of flows%s", "");
			append(req, a);
			append(req, argv[i]);
		} else if (!strcmp(cmd, "flows") && !strcmp(a, "--delete")) {
			delete = 1;
			append(req, a);
		} else if (!strcmp(cmd, "flows") && !strcmp(a, "--filter")) {
			if (++i == argc)
				return usage_error(cmd, "--filter needs an expression%s", "");
			filter = argv[i];
		} else if (!strcmp(cmd, "capture") && !strcmp(a, "--drops")) {
			append(req, a);
		} else if (!strcmp(cmd, "capture") &&
			   (!strcmp(a, "--rule") || !strcmp(a, "-c") || !strcmp(a, "--timeout"))) {
			if (++i == argc || strpbrk(argv[i], " \t\n"))
				return usage_error(cmd, "%s needs a value (no blanks)", a);
			if (!strcmp(a, "--timeout")) {
				long t = strtol(argv[i], NULL, 10);

				if (t > 0 && t <= 3600 && t + ANSWER_MARGIN_S > answer_timeout_s)
					answer_timeout_s = t + ANSWER_MARGIN_S;
			}
			append(req, a);
			append(req, argv[i]);
		} else if (!strcmp(cmd, "capture") && !strcmp(a, "-w")) {
			if (++i == argc)
				return usage_error(cmd, "-w needs a FILE%s", "");
			capture_file = argv[i];
		} else if (!strcmp(cmd, "top") && (!strcmp(a, "--interval") || !strcmp(a, "--count"))) {
			char *end;
			double v = ++i < argc ? strtod(argv[i], &end) : 0;

			if (i == argc || *end || !(v > 0) || v > 3600)
				return usage_error(cmd, "%s takes a positive number", a);
			if (!strcmp(a, "--interval"))
				top_interval = v;
			else
				top_count = (long)v;
		} else if (!strcmp(cmd, "reload") && !strcmp(a, "--flows")) {
			if (++i == argc || (strcmp(argv[i], "keep") && strcmp(argv[i], "recheck")))
				return usage_error(cmd, "--flows takes keep or recheck%s", "");
			append(req, a);
			append(req, argv[i]);
		} else if (!strcmp(cmd, "reload") && a[0] != '-' && !file) {
			/* the daemon opens it: from its own working directory */
			file = realpath(a, abs);
			if (!file)
				return usage_error(cmd, "cannot read '%s'", a);
			if (strpbrk(file, " \t\n"))
				return usage_error(cmd, "'%s': a path with blanks cannot be sent; "
						   "rename or link it", file);
			append(req, file);
		} else {
			return usage_error(cmd, "unexpected argument '%s'", a);
		}
	}
	if (!cmd) {
		fputs(usage_main, stderr);
		return EXIT_CMD;
	}
	if (json)
		append(req, "--json");
	if (delete && (!filter || !filter[strspn(filter, " \t")]))
		return usage_error(cmd, "--delete needs a --filter: the flows to end%s", "");
	if (filter) {
		if (strchr(filter, '\n'))
			return usage_error(cmd, "--filter: no newlines in an expression%s", "");
		/* last: the daemon takes the rest of the line as the filter */
		append(req, "--filter");
		append(req, filter);
	}
	if (req->overflow)
		return usage_error(cmd, "request too long%s", "");
	req->text[req->len++] = '\n';
	return 0;
}

static int unreachable(const char *path, const char *what)
{
	fprintf(stderr, "rampartctl: cannot reach rampartd at %s: %s: %s\n", path, what,
		strerror(errno));
	return EXIT_UNREACHABLE;
}

/* Read the whole answer (the daemon closes after it). NULL on error. */
static char *read_answer(int fd, size_t *len)
{
	size_t cap = 65536;
	char *buf = malloc(cap);

	*len = 0;
	while (buf) {
		ssize_t r;

		if (*len + 1 == cap) {
			char *b = realloc(buf, cap * 2);

			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
		r = recv(fd, buf + *len, cap - 1 - *len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0) {
			buf[*len] = '\0';
			return buf;
		}
		*len += (size_t)r;
	}
	free(buf);
	return NULL;
}

/* One request, the whole answer. 0 with *ans (free it) and *body in it;
 * EXIT_CMD with the daemon's message printed; EXIT_UNREACHABLE. */
static int ask(const char *path, const struct line *req, char **ans, char **body,
	       size_t *body_len)
{
	const struct timeval tv = { answer_timeout_s, 0 };
	struct sockaddr_un addr;
	char head[64];
	size_t len;
	int fd;

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(addr.sun_path)) {
		errno = ENAMETOOLONG;
		return unreachable(path, "socket path");
	}
	memcpy(addr.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return unreachable(path, "socket");
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		close(fd);
		return unreachable(path, "connect");
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(fd, req->text, req->len, MSG_NOSIGNAL) != (ssize_t)req->len) {
		close(fd);
		return unreachable(path, "send");
	}
	shutdown(fd, SHUT_WR);
	*ans = read_answer(fd, &len);
	close(fd);
	if (!*ans)
		return unreachable(path, "reading the answer");
	snprintf(head, sizeof(head), "%s %d ", CONTROL_MAGIC, CONTROL_PROTO_VERSION);
	*body = strchr(*ans, '\n');
	if (strncmp(*ans, head, strlen(head)) || !*body) {
		fprintf(stderr, "rampartctl: %s does not speak control protocol %d (answer starts "
			"'%.40s')\n", path, CONTROL_PROTO_VERSION, *ans);
		free(*ans);
		return EXIT_UNREACHABLE;
	}
	*(*body)++ = '\0';
	if (body_len)
		*body_len = len - (size_t)(*body - *ans);
	if (strcmp(*ans + strlen(head), "ok")) {
		fprintf(stderr, "rampartctl: %s", *body);
		free(*ans);
		return EXIT_CMD;
	}
	return 0;
}

/* The pcapng answer to FILE (- is stdout), and how many packets it has
 * (its enhanced packet blocks) on stderr. */
static int write_capture(const char *file, const char *doc, size_t len)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "wb") : stdout;
	size_t at = 0, packets = 0;

	if (!f) {
		fprintf(stderr, "rampartctl: %s: %s\n", file, strerror(errno));
		return EXIT_CMD;
	}
	if (fwrite(doc, 1, len, f) != len || (f != stdout && fclose(f))) {
		fprintf(stderr, "rampartctl: %s: %s\n", file, strerror(errno));
		return EXIT_CMD;
	}
	while (at + 8 <= len) {
		uint32_t type, blen;

		memcpy(&type, doc + at, 4);
		memcpy(&blen, doc + at + 4, 4);
		if (blen < 12 || at + blen > len)
			break;
		packets += type == 6;
		at += blen;
	}
	fprintf(stderr, "rampartctl: %zu packet%s captured to %s\n", packets,
		packets == 1 ? "" : "s", file);
	return 0;
}

/* top: a sample, then every interval a screen of the rates since the last. */
static int top(const char *path, const struct line *req)
{
	struct top_sample prev, cur;
	const struct timespec gap = { (time_t)top_interval,
				      (long)((top_interval - (double)(time_t)top_interval) * 1e9) };
	int tty = isatty(STDOUT_FILENO), rc;
	char *ans, *body;

	rc = ask(path, req, &ans, &body, NULL);
	if (rc)
		return rc;
	rc = top_parse(body, &prev);
	free(ans);
	for (long n = 0; !rc && (!top_count || n < top_count); n++) {
		nanosleep(&gap, NULL);
		rc = ask(path, req, &ans, &body, NULL);
		if (rc)
			break;
		rc = top_parse(body, &cur);
		free(ans);
		if (rc)
			break;
		fputs(tty ? "\033[H\033[2J" : "\n", stdout);
		top_render(stdout, &prev, &cur, 10);
		fflush(stdout);
		top_free(&prev);
		prev = cur;
	}
	top_free(&prev);
	if (rc < 0) {
		fprintf(stderr, "rampartctl: top: rampartd's sample could not be read\n");
		return EXIT_CMD;
	}
	return rc;
}

int main(int argc, char **argv)
{
	const char *path = CONTROL_DEFAULT_PATH;
	struct line req = { .len = 0 };
	char *ans, *body;
	size_t len;
	int rc;

	rc = build_request(argc, argv, &path, &req);
	if (rc)
		return rc;
	if (!strncmp(req.text, "top-sample", 10))
		return top(path, &req);
	if (!strncmp(req.text, "capture", 7) && !capture_file)
		return usage_error("capture", "-w FILE is needed%s", "");
	rc = ask(path, &req, &ans, &body, &len);
	if (rc)
		return rc;
	if (capture_file)
		rc = write_capture(capture_file, body, len);
	else
		fputs(body, stdout);
	free(ans);
	return rc;
}
