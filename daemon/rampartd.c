/* rampartd: command line, set-up and tear-down, signals. The packet work
 * happens in the bridge worker (bridge.c); this thread only waits for
 * signals and prints counters. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact.h"
#include "bridge.h"
#include "counters.h"
#include "port.h"

#define EXIT_USAGE 1	/* usage or policy error (CLI.md) */
#define EXIT_SETUP 2	/* interface or NIC set-up failed */

struct rampartd_opts {
	const char *policy;
	const char *ifnames[2];
	int nifs;
	const char *xdp_object;
	int verbose;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rampartd --policy FILE.rfw --interface IF --interface IF\n"
		"                [--mode bridge] [--backend xsk] [--foreground] [-v]\n"
		"                [--xdp-object PATH]\n"
		"\n"
		"  --policy FILE.rfw   compiled policy (rulec compile)\n"
		"  --interface IF      exactly two: bridge mode forwards between them\n"
		"  --mode bridge       the only mode so far (router comes later)\n"
		"  --backend xsk       the only backend so far (AF_XDP)\n"
		"  --foreground        rampartd always runs in the foreground for now\n"
		"  --xdp-object PATH   BPF object to attach (default $RAMPART_XDP_OBJ,\n"
		"                      else the one built with rampartd)\n"
		"  -v                  report set-up details and libxdp messages\n"
		"\n"
		"Signals: SIGUSR1 prints counters; SIGINT/SIGTERM stop and print them.\n");
}

/* --opt val where CLI.md lists the values in `known` ("a|b|c") and this
 * version implements only `have`. 0 when val is have, else -1 after
 * saying whether val is planned or unknown. */
static int check_choice(const char *opt, const char *val, const char *have,
			const char *known)
{
	size_t n = strlen(val);
	const char *k = known;

	if (!strcmp(val, have))
		return 0;
	while (n && (k = strstr(k, val)) != NULL) {
		if ((k == known || k[-1] == '|') && (k[n] == '|' || k[n] == '\0')) {
			fprintf(stderr, "rampartd: --%s %s is not implemented yet; use --%s %s\n",
				opt, val, opt, have);
			return -1;
		}
		k += n;
	}
	fprintf(stderr, "rampartd: unknown --%s '%s' (%s)\n", opt, val, known);
	return -1;
}

/* Returns 0, or EXIT_USAGE after printing why. */
static int parse_args(int argc, char **argv, struct rampartd_opts *o)
{
	enum { OPT_XDP_OBJECT = 256 };
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "interface", required_argument, NULL, 'i' },
		{ "mode", required_argument, NULL, 'm' },
		{ "backend", required_argument, NULL, 'b' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "xdp-object", required_argument, NULL, OPT_XDP_OBJECT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "v", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->policy = optarg;
			break;
		case 'i':
			if (o->nifs == 2) {
				fprintf(stderr, "rampartd: bridge mode takes exactly two --interface options\n");
				return EXIT_USAGE;
			}
			o->ifnames[o->nifs++] = optarg;
			break;
		case 'm':
			if (check_choice("mode", optarg, "bridge", "bridge|router"))
				return EXIT_USAGE;
			break;
		case 'b':
			if (check_choice("backend", optarg, "xsk", "xsk|dpdk|pcap"))
				return EXIT_USAGE;
			break;
		case 'f':
			break;
		case OPT_XDP_OBJECT:
			o->xdp_object = optarg;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rampartd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!o->policy) {
		fprintf(stderr, "rampartd: --policy FILE.rfw is required\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (o->nifs != 2) {
		fprintf(stderr, "rampartd: bridge mode takes exactly two --interface options\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(o->ifnames[0], o->ifnames[1])) {
		fprintf(stderr, "rampartd: the two interfaces must differ\n");
		return EXIT_USAGE;
	}
	if (!o->xdp_object)
		o->xdp_object = xsk_prog_default_path();
	return 0;
}

static int open_port(struct xsk_port *p, const char *ifname, const char *obj,
		     int verbose)
{
	char err[512];

	if (xsk_port_open(p, ifname, obj, 1, err, sizeof(err))) {
		fprintf(stderr, "rampartd: %s: %s\n", ifname, err);
		return -1;
	}
	if (verbose)
		fprintf(stderr, "rampartd: %s: XDP %s mode%s, AF_XDP %s mode, %u queue(s)\n",
			ifname, xsk_prog_mode_name(&p->prog),
			p->prog.multiprog ? " (libxdp dispatcher)" : " (legacy attach)",
			p->queues[0].zerocopy ? "zero-copy" : "copy", p->nqueues);
	return 0;
}

/* A leak check for the tests: every UMEM frame is somewhere known. */
static void report_frames(const struct xsk_port *ports)
{
	for (int i = 0; i < 2; i++)
		for (uint32_t q = 0; q < ports[i].nqueues; q++)
			fprintf(stderr, "rampartd: %s queue %u: %lld frames unaccounted\n",
				ports[i].ifname, q,
				(long long)xsk_queue_frames_unaccounted(&ports[i].queues[q]));
}

/* Signals are blocked in every thread and taken here with sigwaitinfo:
 * nothing runs in signal context, so printing is safe. */
static void wait_signals(const sigset_t *set, const struct counters *ctr,
			 const struct rfw_view *view)
{
	for (;;) {
		int sig = sigwaitinfo(set, NULL);

		if (sig < 0)
			continue;	/* EINTR */
		if (sig == SIGUSR1)
			counters_print(stdout, ctr, view);
		else if (sig == SIGHUP)
			fprintf(stderr, "rampartd: SIGHUP: reload is not implemented yet; policy unchanged\n");
		else
			return;
	}
}

int main(int argc, char **argv)
{
	static struct xsk_port ports[2];	/* large: keep off the stack */
	struct rampartd_opts o;
	struct rfw_view view;
	struct counters ctr;
	struct bridge br;
	sigset_t set;
	char err[256];
	int rc;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	if (rfw_open(&view, o.policy, err, sizeof(err))) {
		fprintf(stderr, "rampartd: policy %s: %s\n", o.policy, err);
		return EXIT_USAGE;
	}
	if (counters_init(&ctr, &view)) {
		fprintf(stderr, "rampartd: %s\n", strerror(ENOMEM));
		rfw_close(&view);
		return EXIT_SETUP;
	}
	ctr.nifs = 2;
	ctr.ifnames[0] = o.ifnames[0];
	ctr.ifnames[1] = o.ifnames[1];

	/* Block before the worker exists so it inherits the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	xsk_prog_set_verbose(o.verbose);
	rc = EXIT_SETUP;
	if (open_port(&ports[0], o.ifnames[0], o.xdp_object, o.verbose))
		goto out;
	if (open_port(&ports[1], o.ifnames[1], o.xdp_object, o.verbose))
		goto out_port0;
	errno = bridge_start(&br, &ports[0], &ports[1], &view, &ctr);
	if (errno) {
		fprintf(stderr, "rampartd: cannot start worker: %s\n", strerror(errno));
		goto out_ports;
	}
	fprintf(stderr, "rampartd: bridging %s <-> %s with %s (%u rules)\n",
		o.ifnames[0], o.ifnames[1], o.policy, view.policy->rule_count);

	wait_signals(&set, &ctr, &view);

	bridge_stop(&br);
	rc = 0;
	if (o.verbose)
		report_frames(ports);
out_ports:
	xsk_port_close(&ports[1]);
out_port0:
	xsk_port_close(&ports[0]);
out:
	if (!rc) {
		counters_print(stdout, &ctr, &view);
		if (o.verbose)
			counters_print_detail(stderr, &ctr);
	}
	counters_free(&ctr);
	rfw_close(&view);
	return rc;
}
