/* Command-line parsing for rampartd. Values that name interfaces are cut
 * at '=' in place (argv is ours to write) so nothing here allocates. */
#define _GNU_SOURCE	/* CPU_SETSIZE */
#include "options.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "port.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rampartd --policy FILE.rfw --interface IF [--interface IF ...]\n"
		"                [--mode bridge|router] [--backend xsk|pcap|dpdk] [--foreground] [-v]\n"
		"                [--queues N] [--cores LIST] [--fail open|closed] [--xdp-object PATH]\n"
		"                [--reload-flows keep|recheck] [--no-sandbox] [--metrics ADDR:PORT]\n"
		"                [--log FILE|-] [--log-rate N] [--reply-rate N] [--state-file PATH]\n"
		"                [--state-interval SECONDS]\n"
		"                [--umem shared|per-interface]\n"
		"                [--handoff on|off] [--home hash|rss] [--rss-key KEY]\n"
		"                [--pcap-in IF=FILE ...] [--pcap-out IF=FILE ...]\n"
		"                [--port-addr IF=MAC[,IPv4][,IPv6][,mtu=N] ...] [--neighbor IF=IP=MAC ...]\n"
		"                [--dpdk-isolate] [--dpdk-static-neighbors]\n"
		"                [--dpdk-neighbor-reachable SECONDS] [-- EAL ARGUMENTS]\n"
		"\n"
		"  --policy FILE.rfw   compiled policy (rulec compile)\n"
		"  --interface IF      a port (at most %d); the policy's interfaces and zones\n"
		"                      name the same\n"
		"  --mode bridge       forward between ports 1<->2 (3<->4, ...) what the policy\n"
		"                      accepts (default with two interfaces)\n"
		"  --mode router       forward by the policy's routes (default otherwise)\n"
		"  --backend xsk       AF_XDP sockets on the interfaces (default)\n"
		"  --backend pcap      replay: read --pcap-in captures, write what each port\n"
		"                      sends to its --pcap-out capture, print counters, exit\n"
		"  --backend dpdk      DPDK ports: each --interface is an EAL device name (a PCI\n"
		"                      address, net_af_xdp0, ...); EAL arguments follow --;\n"
		"                      one worker per RX queue, each on an EAL worker lcore\n"
		"  --dpdk-isolate      DPDK: rte_flow_isolate every port (mlx5: the kernel keeps\n"
		"                      what rampartd's flow rules do not take; docs/dpdk.md)\n"
		"  --dpdk-static-neighbors\n"
		"                      DPDK router: next hops from --neighbor only; rampartd\n"
		"                      neither answers ARP/ND for the ports nor asks\n"
		"  --dpdk-neighbor-reachable SECONDS\n"
		"                      DPDK router: a learnt neighbour unconfirmed this long is\n"
		"                      probed (3 unicast requests, 1 s apart) and forgotten if\n"
		"                      none is answered (1..3600, default 30)\n"
		"  --pcap-in IF=FILE   frames received on IF, in the file's timestamp order\n"
		"                      (several files are merged by timestamp)\n"
		"  --pcap-out IF=FILE  frames sent out of IF (forwarded to it, or replies to\n"
		"                      frames received on it)\n"
		"  --port-addr IF=MAC[,IPv4][,IPv6][,mtu=N]\n"
		"                      router mode: the port's MAC and the addresses replies\n"
		"                      (time-exceeded) come from, and its MTU (longer packets\n"
		"                      answered or fragmented); with xsk they replace what the\n"
		"                      kernel says about IF, with dpdk the device's MTU, with\n"
		"                      pcap they give the port one. More addresses of a family\n"
		"                      (up to 9): the port's too (dpdk answers ARP and ND for\n"
		"                      them), replies from the first\n"
		"  --neighbor IF=IP=MAC  router mode: a next hop's MAC on IF (with xsk, in\n"
		"                      addition to the kernel's neighbour table)\n"
		"  --queues N          workers: one per RX queue 0..N-1, the same queues on every\n"
		"                      interface (default: all the interfaces' RX queues)\n"
		"  --cores LIST        CPUs the workers are pinned to, in worker order, reused\n"
		"                      round-robin (0,1 or 0-3 or 0-1,6; default: the CPUs\n"
		"                      rampartd may run on, round-robin)\n"
		"  --fail open         if rampartd dies, transit traffic goes to the kernel\n"
		"                      (default); host traffic always does\n"
		"  --fail closed       if rampartd dies, transit traffic is dropped\n"
		"  --reload-flows keep     on reload, established flows the new policy would\n"
		"                      refuse live on (default)\n"
		"  --reload-flows recheck  their next packet meets the new rules as a new\n"
		"                      connection; refused, the flow ends (rampartctl reload\n"
		"                      --flows chooses per reload)\n"
		"  --metrics ADDR:PORT serve Prometheus metrics over HTTP at ADDR:PORT, e.g.\n"
		"                      127.0.0.1:9630 (GET /metrics; keep it on localhost)\n"
		"  --log FILE|-        packet log: rules with `log: true` and packets dropped as\n"
		"                      invalid, one JSON object a line, appended to FILE (- is\n"
		"                      stdout); never slows a worker (full: dropped, counted)\n"
		"  --log-rate N        at most N records a second per rule, and N for invalid\n"
		"                      packets (default 100)\n"
		"  --reply-rate N      at most N replies (reject's RST and ICMP unreachable,\n"
		"                      time-exceeded) a second per worker, bursts of N/10;\n"
		"                      over it the packet is only dropped (default 1000;\n"
		"                      0: no limit)\n"
		"  --state-file PATH   keep the flows over a restart: written at a clean stop,\n"
		"                      read back at start (into each flow's worker; another\n"
		"                      worker count needs --handoff or one worker), then removed;\n"
		"                      stop with SIGUSR2 to leave the XDP programs attached\n"
		"                      meanwhile (--fail closed: TCP retransmits and carries\n"
		"                      on; docs/operations.md)\n"
		"  --state-interval S  also write the state file every S seconds while running,\n"
		"                      so a crash or SIGKILL loses only the flows of the last\n"
		"                      S seconds (1..86400; default 0: only at a clean stop)\n"
		"  --no-sandbox        keep every capability after set-up and run the workers\n"
		"                      without their system call filter (debugging; see\n"
		"                      docs/security.md)\n"
		"  --umem shared       a worker's sockets (its queue on every interface) share\n"
		"                      one UMEM: forwarding passes frames without copying\n"
		"                      (default; a socket the kernel will not bind to it\n"
		"                      gets its own, and frames to or from it are copied)\n"
		"  --umem per-interface  every socket its own UMEM: forwarding copies each\n"
		"                      frame once (for comparison, or a driver that misbehaves)\n"
		"  --handoff on        with several queues and a stateful policy, a frame\n"
		"                      that arrives on another worker's queue than its flow's\n"
		"                      is handed to that worker (default; docs/operations.md)\n"
		"  --handoff off       each worker keeps what its queue brings: only for NICs\n"
		"                      steered so that both directions of every flow, NAT\n"
		"                      replies too, arrive on one queue\n"
		"  --home hash         with handoff, a flow's worker is a keyed hash of its\n"
		"                      tuple (default): most frames of a multi-queue NIC are\n"
		"                      handed over once\n"
		"  --home rss          with handoff, TCP and UDP flows belong to the worker of\n"
		"                      the queue the NIC's RSS sends them to, so their frames\n"
		"                      arrive at their worker; needs a symmetric Toeplitz key\n"
		"                      (6d:5a repeated), read from the NIC with the\n"
		"                      indirection table (docs/operations.md)\n"
		"  --rss-key KEY       --home rss: the RSS key of ports that do not report\n"
		"                      theirs (veth, net_af_xdp): hex bytes (6d:5a:...) or\n"
		"                      'symmetric' (6d:5a, 40 bytes); their table is taken\n"
		"                      as Linux's default (128 entries, i mod queues)\n"
		"  --foreground        rampartd always runs in the foreground for now\n"
		"  --xdp-object PATH   BPF object to attach (default $RAMPART_XDP_OBJ,\n"
		"                      else the one built with rampartd)\n"
		"  --control PATH      control socket for rampartctl (default\n"
		"                      " CONTROL_DEFAULT_PATH ", mode 0600)\n"
		"  -v                  report set-up details and libxdp messages\n"
		"\n"
		"Signals: SIGHUP reloads the policy file; SIGUSR1 prints counters;\n"
		"SIGINT/SIGTERM stop and print them; SIGUSR2 stops for a restart\n"
		"(XDP programs left attached, --fail covering until the next rampartd;\n"
		"exit status 3).\n",
		PIPE_MAX_PORTS);
}

/* --opt val where CLI.md lists the values in `known` ("a|b|c") and this
 * version implements those in `have`. The index of val in `have`, else -1
 * after saying whether val is planned or unknown. */
static int check_choice(const char *opt, const char *val, const char *const *have,
			const char *known)
{
	size_t n = strlen(val);
	const char *k = known;

	for (int i = 0; have[i]; i++)
		if (!strcmp(val, have[i]))
			return i;
	while (n && (k = strstr(k, val)) != NULL) {
		if ((k == known || k[-1] == '|') && (k[n] == '|' || k[n] == '\0')) {
			fprintf(stderr, "rampartd: --%s %s is not implemented yet\n", opt, val);
			return -1;
		}
		k += n;
	}
	fprintf(stderr, "rampartd: unknown --%s '%s' (%s)\n", opt, val, known);
	return -1;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	int used = 0;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &used) != 6 || s[used])
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}

/* IPv4 or IPv6 into addr (16 bytes, IPv4 in the first 4); the family,
 * or 0 when s is neither. */
static uint8_t parse_ip(const char *s, uint8_t addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, addr) == 1)
		return 6;
	return 0;
}

/* A positive number up to max, all of s. */
static int parse_count(const char *s, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end || v == 0 || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* --cores: comma-separated CPUs and ranges a-b, kept in the order given
 * (worker k gets entry k mod count). */
static int parse_cores(struct rampartd_opts *o, const char *arg)
{
	const char *s = arg;

	o->ncores = 0;
	while (*s) {
		char *end;
		unsigned long lo, hi;

		if (*s < '0' || *s > '9')
			goto bad;
		lo = hi = strtoul(s, &end, 10);
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				goto bad;
			hi = strtoul(end + 1, &end, 10);
		}
		if (hi < lo || hi >= CPU_SETSIZE || (*end && *end != ','))
			goto bad;
		for (unsigned long c = lo; c <= hi; c++) {
			if (o->ncores == OPT_MAX_QUEUES) {
				fprintf(stderr, "rampartd: --cores lists more than %d CPUs\n",
					OPT_MAX_QUEUES);
				return -1;
			}
			o->cores[o->ncores++] = (uint16_t)c;
		}
		s = *end ? end + 1 : end;
		if (*end && !*s)
			goto bad;
	}
	if (o->ncores)
		return 0;
bad:
	fprintf(stderr, "rampartd: --cores '%s': want CPU numbers and ranges below %d, as 0,1 "
			"or 0-3\n", arg, CPU_SETSIZE);
	return -1;
}

/* Cut "IF=REST" at the first '='; REST, or NULL when there is none. */
static char *cut_if(char *arg)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		return NULL;
	*eq = '\0';
	return eq + 1;
}

static int add_file(struct opt_file *f, uint32_t *n, uint32_t max, const char *opt, char *arg)
{
	char *path = cut_if(arg);

	if (!path) {
		fprintf(stderr, "rampartd: --%s wants IF=FILE, not '%s'\n", opt, arg);
		return -1;
	}
	if (*n == max) {
		fprintf(stderr, "rampartd: at most %u --%s options\n", max, opt);
		return -1;
	}
	f[*n].ifname = arg;
	f[(*n)++].path = path;
	return 0;
}

/* addr (len bytes) as a port's first of its family, else one more; -1
 * when it has as many as it can take. */
static int add_addr(uint8_t *has, uint8_t *first, uint8_t *n, uint8_t *more, size_t len,
		    const uint8_t *addr)
{
	if (!*has) {
		*has = 1;
		memcpy(first, addr, len);
	} else if (*n < PIPE_PORT_MORE_ADDRS) {
		memcpy(more + (size_t)(*n)++ * len, addr, len);
	} else {
		return -1;
	}
	return 0;
}

static int add_port_addr(struct rampartd_opts *o, char *arg)
{
	struct opt_port_addr *a = &o->port_addr[o->nport_addr];
	struct pipe_port_addrs *pa = &a->addrs;
	char *rest = cut_if(arg), *tok, *save = NULL;
	uint8_t addr[16];

	if (o->nport_addr == PIPE_MAX_PORTS) {
		fprintf(stderr, "rampartd: at most %d --port-addr options\n", PIPE_MAX_PORTS);
		return -1;
	}
	memset(a, 0, sizeof(*a));
	a->ifname = arg;
	tok = rest ? strtok_r(rest, ",", &save) : NULL;
	if (!tok || parse_mac(tok, a->mac)) {
		fprintf(stderr, "rampartd: --port-addr wants IF=MAC[,IPv4...][,IPv6...][,mtu=N] (MAC as "
				"02:00:00:00:00:01)\n");
		return -1;
	}
	while ((tok = strtok_r(NULL, ",", &save)) != NULL) {
		if (!strncmp(tok, "mtu=", 4)) {
			char *end;
			unsigned long mtu = strtoul(tok + 4, &end, 10);

			if (*end || mtu < 68 || mtu > 65535) {
				fprintf(stderr, "rampartd: --port-addr %s: '%s': want mtu=68..65535\n",
					arg, tok);
				return -1;
			}
			a->mtu = (uint32_t)mtu;
			continue;
		}
		switch (parse_ip(tok, addr)) {
		case 4:
			if (add_addr(&pa->has_v4, pa->v4, &pa->nmore4, (uint8_t *)pa->more4, 4, addr))
				goto too_many;
			break;
		case 6:
			if (add_addr(&pa->has_v6, pa->v6, &pa->nmore6, (uint8_t *)pa->more6, 16, addr))
				goto too_many;
			break;
		default:
			fprintf(stderr, "rampartd: --port-addr %s: '%s' is not an IP address\n",
				arg, tok);
			return -1;
		}
	}
	o->nport_addr++;
	return 0;
too_many:
	fprintf(stderr, "rampartd: --port-addr %s: at most %d addresses of a family\n", arg,
		1 + PIPE_PORT_MORE_ADDRS);
	return -1;
}

static int add_neigh(struct rampartd_opts *o, char *arg)
{
	struct opt_neigh *n = &o->neigh[o->nneigh];
	char *ip = cut_if(arg), *mac = ip ? strrchr(ip, '=') : NULL;

	if (o->nneigh == OPT_MAX_NEIGH) {
		fprintf(stderr, "rampartd: at most %d --neighbor options\n", OPT_MAX_NEIGH);
		return -1;
	}
	if (!mac || mac == ip) {
		fprintf(stderr, "rampartd: --neighbor wants IF=IP=MAC\n");
		return -1;
	}
	*mac++ = '\0';
	n->ifname = arg;
	n->family = parse_ip(ip, n->addr);
	if (!n->family || parse_mac(mac, n->mac)) {
		fprintf(stderr, "rampartd: --neighbor %s: '%s=%s' is not IP=MAC\n", arg, ip, mac);
		return -1;
	}
	o->nneigh++;
	return 0;
}

int options_port(const struct rampartd_opts *o, const char *ifname)
{
	for (uint32_t i = 0; i < o->nifs; i++)
		if (!strcmp(o->ifnames[i], ifname))
			return (int)i;
	return -1;
}

/* --opt IF=... must name one of the --interface options. */
static int need_port(const struct rampartd_opts *o, const char *opt, const char *ifname)
{
	if (options_port(o, ifname) >= 0)
		return 0;
	fprintf(stderr, "rampartd: --%s %s: not an --interface\n", opt, ifname);
	return -1;
}

/* Cross-option rules, once everything is read. */
static int options_check(struct rampartd_opts *o, int mode_set)
{
	if (!o->policy) {
		fprintf(stderr, "rampartd: --policy FILE.rfw is required\n");
		return -1;
	}
	if (!o->nifs) {
		fprintf(stderr, "rampartd: at least one --interface is required\n");
		return -1;
	}
	for (uint32_t i = 0; i < o->nifs; i++) {
		if (strlen(o->ifnames[i]) >= IF_NAMESIZE) {
			fprintf(stderr, "rampartd: interface name '%s' is too long\n", o->ifnames[i]);
			return -1;
		}
		if (options_port(o, o->ifnames[i]) != (int)i) {
			fprintf(stderr, "rampartd: --interface %s given twice\n", o->ifnames[i]);
			return -1;
		}
	}
	if (!mode_set)
		o->mode = o->nifs == 2 ? PIPE_BRIDGE : PIPE_ROUTER;
	if (o->mode == PIPE_BRIDGE && o->nifs % 2) {
		fprintf(stderr, "rampartd: bridge mode takes interfaces in pairs (two, or 2k)\n");
		return -1;
	}
	for (uint32_t i = 0; i < o->npcap_in; i++)
		if (need_port(o, "pcap-in", o->pcap_in[i].ifname))
			return -1;
	for (uint32_t i = 0; i < o->npcap_out; i++) {
		if (need_port(o, "pcap-out", o->pcap_out[i].ifname))
			return -1;
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(o->pcap_out[i].ifname, o->pcap_out[j].ifname)) {
				fprintf(stderr, "rampartd: --pcap-out %s given twice\n", o->pcap_out[i].ifname);
				return -1;
			}
	}
	if (o->state_interval && !o->state_file) {
		fprintf(stderr, "rampartd: --state-interval needs --state-file\n");
		return -1;
	}
	if (o->backend == OPT_BACKEND_PCAP) {
		for (uint32_t i = 0; i < o->nifs; i++) {
			int used = 0;

			for (uint32_t j = 0; j < o->npcap_in; j++)
				used |= !strcmp(o->pcap_in[j].ifname, o->ifnames[i]);
			for (uint32_t j = 0; j < o->npcap_out; j++)
				used |= !strcmp(o->pcap_out[j].ifname, o->ifnames[i]);
			if (!used) {
				fprintf(stderr, "rampartd: --backend pcap: interface %s has neither "
						"--pcap-in nor --pcap-out\n", o->ifnames[i]);
				return -1;
			}
		}
		if (o->queues > 1 || o->ncores) {
			fprintf(stderr, "rampartd: --backend pcap replays with one worker: no "
					"--queues or --cores\n");
			return -1;
		}
		if (o->state_file) {
			fprintf(stderr, "rampartd: --backend pcap replays from empty tables: no "
					"--state-file\n");
			return -1;
		}
	} else if (o->npcap_in || o->npcap_out) {
		fprintf(stderr, "rampartd: --pcap-in/--pcap-out need --backend pcap\n");
		return -1;
	}
	if (o->backend == OPT_BACKEND_DPDK) {
#ifndef RAMPART_HAVE_DPDK
		fprintf(stderr, "rampartd: --backend dpdk is not built in (rampartd was built without "
				"DPDK: no pkg-config libdpdk, or RAMPART_DPDK=OFF; see docs/dpdk.md)\n");
		return -1;
#endif
		if (o->ncores) {
			fprintf(stderr, "rampartd: --backend dpdk: EAL's -l/--lcores place the "
					"workers, not --cores\n");
			return -1;
		}
	} else if (o->eal_argc || o->dpdk_isolate || o->dpdk_static_neigh || o->dpdk_reachable) {
		fprintf(stderr, "rampartd: EAL arguments, --dpdk-isolate, --dpdk-static-neighbors "
				"and --dpdk-neighbor-reachable need --backend dpdk\n");
		return -1;
	}
	if (o->rss_key_len && !o->home_rss) {
		fprintf(stderr, "rampartd: --rss-key is for --home rss\n");
		return -1;
	}
	if (o->home_rss && o->no_handoff) {	/* both say where flows live */
		fprintf(stderr, "rampartd: --home rss homes flows for the handoff: not with "
				"--handoff off\n");
		return -1;
	}
	for (uint32_t i = 0; i < o->nport_addr; i++)
		if (need_port(o, "port-addr", o->port_addr[i].ifname))
			return -1;
	for (uint32_t i = 0; i < o->nneigh; i++)
		if (need_port(o, "neighbor", o->neigh[i].ifname))
			return -1;
	return 0;
}

int options_parse(int argc, char **argv, struct rampartd_opts *o)
{
	enum {
		OPT_XDP_OBJECT = 256, OPT_PCAP_IN, OPT_PCAP_OUT, OPT_PORT_ADDR, OPT_NEIGH,
		OPT_CONTROL,
		OPT_QUEUES, OPT_CORES, OPT_FAIL, OPT_RELOAD_FLOWS, OPT_NO_SANDBOX, OPT_METRICS, OPT_LOG, OPT_LOG_RATE, OPT_STATE_FILE, OPT_STATE_INTERVAL, OPT_REPLY_RATE, OPT_DPDK_ISOLATE, OPT_DPDK_STATIC_NEIGH, OPT_DPDK_REACHABLE,
		OPT_UMEM,
		OPT_HANDOFF,
		OPT_HOME,
		OPT_RSS_KEY,
	};
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "interface", required_argument, NULL, 'i' },
		{ "mode", required_argument, NULL, 'm' },
		{ "backend", required_argument, NULL, 'b' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "xdp-object", required_argument, NULL, OPT_XDP_OBJECT },
		{ "pcap-in", required_argument, NULL, OPT_PCAP_IN },
		{ "pcap-out", required_argument, NULL, OPT_PCAP_OUT },
		{ "port-addr", required_argument, NULL, OPT_PORT_ADDR },
		{ "neighbor", required_argument, NULL, OPT_NEIGH },
		{ "control", required_argument, NULL, OPT_CONTROL },
		{ "queues", required_argument, NULL, OPT_QUEUES },
		{ "cores", required_argument, NULL, OPT_CORES },
		{ "fail", required_argument, NULL, OPT_FAIL },
		{ "reload-flows", required_argument, NULL, OPT_RELOAD_FLOWS },
		{ "no-sandbox", no_argument, NULL, OPT_NO_SANDBOX },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "log-rate", required_argument, NULL, OPT_LOG_RATE },
		{ "state-file", required_argument, NULL, OPT_STATE_FILE },
		{ "state-interval", required_argument, NULL, OPT_STATE_INTERVAL },
		{ "reply-rate", required_argument, NULL, OPT_REPLY_RATE },
		{ "dpdk-isolate", no_argument, NULL, OPT_DPDK_ISOLATE },
		{ "dpdk-static-neighbors", no_argument, NULL, OPT_DPDK_STATIC_NEIGH },
		{ "dpdk-neighbor-reachable", required_argument, NULL, OPT_DPDK_REACHABLE },
		{ "umem", required_argument, NULL, OPT_UMEM },
		{ "handoff", required_argument, NULL, OPT_HANDOFF },
		{ "home", required_argument, NULL, OPT_HOME },
		{ "rss-key", required_argument, NULL, OPT_RSS_KEY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const modes[] = { "bridge", "router", NULL };
	static const char *const backends[] = { "xsk", "pcap", "dpdk", NULL };
	static const enum opt_backend backend_of[] = { OPT_BACKEND_XSK, OPT_BACKEND_PCAP,
						       OPT_BACKEND_DPDK };
	static const char *const fails[] = { "open", "closed", NULL };
	static const char *const flows[] = { "keep", "recheck", NULL };
	static const char *const umems[] = { "shared", "per-interface", NULL };
	static const char *const on_off[] = { "on", "off", NULL };
	static const char *const homes[] = { "hash", "rss", NULL };
	int c, mode_set = 0, r = 0;

	memset(o, 0, sizeof(*o));
	o->log_rate = 100;
	o->reply_rate = 1000;
	while ((c = getopt_long(argc, argv, "v", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->policy = optarg;
			break;
		case 'i':
			if (o->nifs == PIPE_MAX_PORTS) {
				fprintf(stderr, "rampartd: at most %d --interface options\n", PIPE_MAX_PORTS);
				return EXIT_USAGE;
			}
			o->ifnames[o->nifs++] = optarg;
			break;
		case 'm':
			r = check_choice("mode", optarg, modes, "bridge|router");
			o->mode = r == 1 ? PIPE_ROUTER : PIPE_BRIDGE;
			mode_set = 1;
			break;
		case 'b':
			r = check_choice("backend", optarg, backends, "xsk|dpdk|pcap");
			o->backend = backend_of[r < 0 ? 0 : r];
			break;
		case 'f':
			break;
		case OPT_XDP_OBJECT:
			o->xdp_object = optarg;
			break;
		case OPT_PCAP_IN:
			r = add_file(o->pcap_in, &o->npcap_in, OPT_MAX_PCAP_IN, "pcap-in", optarg);
			break;
		case OPT_PCAP_OUT:
			r = add_file(o->pcap_out, &o->npcap_out, PIPE_MAX_PORTS, "pcap-out", optarg);
			break;
		case OPT_PORT_ADDR:
			r = add_port_addr(o, optarg);
			break;
		case OPT_NEIGH:
			r = add_neigh(o, optarg);
			break;
		case OPT_CONTROL:
			o->control = optarg;
			break;
		case OPT_QUEUES:
			r = parse_count(optarg, OPT_MAX_QUEUES, &o->queues);
			if (r < 0)
				fprintf(stderr, "rampartd: --queues '%s': want 1..%d\n", optarg,
					OPT_MAX_QUEUES);
			break;
		case OPT_CORES:
			r = parse_cores(o, optarg);
			break;
		case OPT_FAIL:
			r = check_choice("fail", optarg, fails, "open|closed");
			o->fail_closed = r == 1;
			break;
		case OPT_NO_SANDBOX:
			o->no_sandbox = 1;
			break;
		case OPT_METRICS:
			o->metrics = optarg;
			break;
		case OPT_STATE_FILE:
			o->state_file = optarg;
			break;
		case OPT_STATE_INTERVAL:
			if (!strcmp(optarg, "0"))
				o->state_interval = 0;
			else if ((r = parse_count(optarg, 86400, &o->state_interval)) < 0)
				fprintf(stderr, "rampartd: --state-interval '%s': want 0..86400 "
						"seconds\n", optarg);
			break;
		case OPT_LOG:
			o->log = optarg;
			break;
		case OPT_LOG_RATE:
			r = parse_count(optarg, 1000000, &o->log_rate);
			if (r < 0)
				fprintf(stderr, "rampartd: --log-rate '%s': want 1..1000000 a second\n",
					optarg);
			break;
		case OPT_REPLY_RATE:
			if (!strcmp(optarg, "0"))
				o->reply_rate = 0;
			else if ((r = parse_count(optarg, 10000000, &o->reply_rate)) < 0)
				fprintf(stderr, "rampartd: --reply-rate '%s': want 0..10000000 a "
						"second\n", optarg);
			break;
		case OPT_RELOAD_FLOWS:
			r = check_choice("reload-flows", optarg, flows, "keep|recheck");
			o->reload_flows = r == 1 ? PIPE_FLOWS_RECHECK : PIPE_FLOWS_KEEP;
			break;
		case OPT_DPDK_ISOLATE:
			o->dpdk_isolate = 1;
			break;
		case OPT_DPDK_STATIC_NEIGH:
			o->dpdk_static_neigh = 1;
			break;
		case OPT_DPDK_REACHABLE:
			if ((r = parse_count(optarg, 3600, &o->dpdk_reachable)) < 0)
				fprintf(stderr, "rampartd: --dpdk-neighbor-reachable '%s': want "
						"1..3600 seconds\n", optarg);
			break;
		case OPT_UMEM:
			r = check_choice("umem", optarg, umems, "shared|per-interface");
			o->umem_per_interface = r == 1;
			break;
		case OPT_HANDOFF:
			r = check_choice("handoff", optarg, on_off, "on|off");
			o->no_handoff = r == 1;
			break;
		case OPT_HOME:
			r = check_choice("home", optarg, homes, "hash|rss");
			o->home_rss = r == 1;
			break;
		case OPT_RSS_KEY:
			if ((r = rss_key_parse(optarg, o->rss_key, sizeof(o->rss_key),
					       &o->rss_key_len)) < 0)
				fprintf(stderr, "rampartd: --rss-key '%s': want 'symmetric' or up to "
						"%d hex bytes (6d:5a:...)\n", optarg, RSS_KEY_MAX);
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
		if (r < 0)
			return EXIT_USAGE;
	}
	/* Whatever follows "--" is EAL's; "--" itself becomes its argv[0]. */
	if (optind < argc && !strcmp(argv[optind - 1], "--")) {
		o->eal_argc = argc - optind + 1;
		o->eal_argv = argv + optind - 1;
		o->eal_argv[0] = argv[0];
	} else if (optind < argc) {
		fprintf(stderr, "rampartd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (options_check(o, mode_set)) {
		fprintf(stderr, "rampartd: see rampartd --help\n");
		return EXIT_USAGE;
	}
	if (!o->xdp_object)
		o->xdp_object = xsk_prog_default_path();
	if (!o->control)
		o->control = CONTROL_DEFAULT_PATH;
	return 0;
}
