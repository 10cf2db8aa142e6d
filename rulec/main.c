/* The rulec command line (POLICY.md "Command-line contract"): check,
 * compile, dump and query. Usage errors exit 1, like policy errors. */
#include <stdio.h>
#include <string.h>

#include "rulec.h"

static const char usage_text[] =
	"usage:\n"
	"  rulec check   [--strict] POLICY.yaml               parse and analyse; exit 0 ok, 1 errors\n"
	"  rulec compile [--strict] POLICY.yaml -o POLICY.rfw write the artifact (nothing on error)\n"
	"  rulec dump    POLICY.rfw                           human summary of an artifact\n"
	"  rulec query   POLICY.rfw [OPTIONS] PROTO SRC[:SPORT] DST[:DPORT|:TYPE[/CODE]]\n"
	"  rulec query   POLICY.rfw [OPTIONS] --batch FILE    one query a line, as above\n"
	"\n"
	"--strict makes warnings (unused objects, empty sets, NAT rules that can\n"
	"never match) errors: nothing is written.\n"
	"\n"
	"query prints 'RULE_NUMBER RULE_NAME ACTION', e.g. '3 lan-out accept' or\n"
	"'0 default drop'. PROTO is a name (tcp udp icmp icmpv6 sctp gre esp) or a\n"
	"number; IPv6 with a port is written [addr]:port. For icmp and icmpv6 the\n"
	"destination may carry the ICMP type instead of a port, by name or number,\n"
	"with an optional code: 10.0.0.1:echo-request, [fd00::1]:1/4.\n"
	"query OPTIONS (also allowed on --batch lines):\n"
	"  --in IFACE        the packet came in on IFACE (rules with from: zone/interface)\n"
	"  --out IFACE       it leaves on IFACE (rules with to: zone/interface)\n"
	"                    without --in/--out, rules naming interfaces do not match\n"
	"  --state STATE     conntrack state: new (default), established, related, invalid\n"
	"  --tcp-flags LIST  TCP flags set, e.g. syn or syn,ack (default: none)\n";

static int usage(const char *why)
{
	if (why)
		fprintf(stderr, "rulec: %s\n", why);
	fputs(usage_text, stderr);
	return 1;
}

static int wants_help(int argc, char **argv)
{
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

static int cmd_compile(int argc, char **argv, int write)
{
	const char *in = NULL, *out = NULL;
	struct rulec_opts opts = {0};

	for (int i = 2; i < argc; i++) {
		if (write && strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--strict") == 0)
			opts.strict = 1;
		else if (argv[i][0] == '-' && argv[i][1])
			return usage("unknown option or missing argument");
		else if (!in)
			in = argv[i];
		else
			return usage("too many arguments");
	}
	if (!in || (write && !out))
		return usage(write ? "compile needs POLICY.yaml and -o OUT.rfw" : "check needs POLICY.yaml");
	return rulec_compile_file_opts(in, write ? out : NULL, stderr, &opts);
}

static int open_artifact(struct rfw_view *v, const char *path)
{
	char err[512];

	if (rfw_open(v, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "rulec: %s\n", err);
		return -1;
	}
	return 0;
}

static int cmd_dump(int argc, char **argv)
{
	struct rfw_view v;

	if (argc != 3 || argv[2][0] == '-')
		return usage("dump needs one POLICY.rfw");
	if (open_artifact(&v, argv[2]) < 0)
		return 1;
	rulec_dump(&v, stdout);
	rfw_close(&v);
	return 0;
}

static int run_batch(const struct rfw_view *v, const char *file, const char *opts)
{
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
	int rc;

	if (!f) {
		perror(file);
		return 1;
	}
	rc = rulec_query_batch_opts(v, f, file, opts, stdout, stderr);
	if (f != stdin)
		fclose(f);
	return rc;
}

static int is_query_option(const char *s)
{
	return strcmp(s, "--in") == 0 || strcmp(s, "--out") == 0 || strcmp(s, "--state") == 0 ||
	       strcmp(s, "--tcp-flags") == 0;
}

static int cmd_query(int argc, char **argv)
{
	const char *batch = NULL, *words[3];
	char line[1200], opts[512] = "", ans[256], err[256];
	int nwords = 0, rc;
	size_t used = 0;
	struct rfw_view v;

	if (argc < 3 || argv[2][0] == '-')
		return usage("query needs POLICY.rfw first");
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
			batch = argv[++i];
		} else if (is_query_option(argv[i]) && i + 1 < argc) {
			int w = snprintf(opts + used, sizeof(opts) - used, "%s %s ", argv[i], argv[i + 1]);

			if (w < 0 || (size_t)w >= sizeof(opts) - used)
				return usage("options too long");
			used += (size_t)w;
			i++;
		} else if (argv[i][0] == '-' && argv[i][1] && argv[i][1] != ':' && nwords == 0) {
			return usage("unknown option or missing argument");
		} else if (nwords < 3) {
			words[nwords++] = argv[i];
		} else {
			return usage("too many arguments");
		}
	}
	if (batch ? nwords != 0 : nwords != 3)
		return usage("query needs PROTO SRC DST, or --batch FILE");
	if (open_artifact(&v, argv[2]) < 0)
		return 1;
	if (batch) {
		rc = run_batch(&v, batch, opts);
	} else {
		snprintf(line, sizeof(line), "%s%s %s %s", opts, words[0], words[1], words[2]);
		rc = rulec_query_line(&v, line, ans, sizeof(ans), err, sizeof(err)) < 0;
		if (rc)
			fprintf(stderr, "rulec: %s\n", err);
		else
			printf("%s\n", ans);
		if (!rc && err[0])
			fprintf(stderr, "rulec: note: %s\n", err);
	}
	rfw_close(&v);
	return rc;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd)
		return usage(NULL);
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (wants_help(argc, argv)) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (strcmp(cmd, "check") == 0)
		return cmd_compile(argc, argv, 0);
	if (strcmp(cmd, "compile") == 0)
		return cmd_compile(argc, argv, 1);
	if (strcmp(cmd, "dump") == 0)
		return cmd_dump(argc, argv);
	if (strcmp(cmd, "query") == 0)
		return cmd_query(argc, argv);
	return usage("unknown command");
}
