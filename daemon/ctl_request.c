/* Parsing control-socket request lines (ctl_request.h). The words are
 * rampartctl's own options, so the daemon and the client agree on names. */
#include "ctl_request.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ctl_request_parse(char *line, struct ctl_request *rq, char *err, size_t errlen)
{
	char *save = NULL, *w;

	memset(rq, 0, sizeof(*rq));
	rq->limit = CTL_DEFAULT_LIMIT;
	rq->cmd = strtok_r(line, " ", &save);
	if (!rq->cmd) {
		snprintf(err, errlen, "empty request");
		return -1;
	}
	while ((w = strtok_r(NULL, " ", &save)) != NULL) {
		if (!strcmp(w, "--json"))
			rq->json = 1;
		else if (!strcmp(w, "--rules"))
			rq->sections |= CTL_S_RULES;
		else if (!strcmp(w, "--interfaces"))
			rq->sections |= CTL_S_INTERFACES;
		else if (!strcmp(w, "--workers"))
			rq->sections |= CTL_S_WORKERS;
		else if (!strcmp(w, "--stages"))
			rq->sections |= CTL_S_STAGES;
		else if (!strcmp(w, "--limit")) {
			char *v = strtok_r(NULL, " ", &save), *end;
			unsigned long n;

			errno = 0;
			n = v ? strtoul(v, &end, 10) : 0;
			if (!v || *end || errno || !n || n > CTL_MAX_LIMIT || *v == '-') {
				snprintf(err, errlen, "--limit takes a number of flows, 1..%u",
					 CTL_MAX_LIMIT);
				return -1;
			}
			rq->limit = (uint32_t)n;
			rq->limit_set = 1;
		} else if (!strcmp(w, "--flows")) {
			rq->flows = strtok_r(NULL, " ", &save);
			if (!rq->flows || (strcmp(rq->flows, "keep") && strcmp(rq->flows, "recheck"))) {
				snprintf(err, errlen, "--flows takes keep or recheck");
				return -1;
			}
		} else if (!strcmp(w, "--rule")) {
			rq->cap_rule = strtok_r(NULL, " ", &save);
			if (!rq->cap_rule) {
				snprintf(err, errlen, "--rule needs a rule name");
				return -1;
			}
		} else if (!strcmp(w, "--delete")) {
			rq->delete = 1;
		} else if (!strcmp(w, "--drops")) {
			rq->cap_drops = 1;
		} else if (!strcmp(w, "-c") || !strcmp(w, "--timeout")) {
			char *v = strtok_r(NULL, " ", &save), *end;
			unsigned long n;
			int count = w[1] == 'c';

			errno = 0;
			n = v ? strtoul(v, &end, 10) : 0;
			if (!v || *end || errno || !n || *v == '-' ||
			    n > (count ? CTL_CAPTURE_MAX : 3600)) {
				snprintf(err, errlen, "%s takes a number, 1..%u", w,
					 count ? CTL_CAPTURE_MAX : 3600);
				return -1;
			}
			if (count)
				rq->cap_count = (uint32_t)n;
			else
				rq->cap_timeout = (uint32_t)n;
		} else if (!strcmp(w, "--filter")) {
			rq->filter = save ? save : "";
			break;
		} else if (w[0] != '-' && !rq->file) {
			rq->file = w;
			/* refused whole, never cut: a cut path names another file */
			if (strlen(w) >= PATH_MAX) {
				snprintf(err, errlen, "%s: a path of %zu bytes is longer than any "
					 "file can have (%d)", rq->cmd, strlen(w), PATH_MAX - 1);
				return -1;
			}
		} else {
			snprintf(err, errlen, "%s: unknown option '%s'", rq->cmd, w);
			return -1;
		}
	}
	return 0;
}

/* Options that belong to another command are refused, not ignored. */
int ctl_request_check(const struct ctl_request *rq, char *err, size_t errlen)
{
	int stats = !strcmp(rq->cmd, "stats"), flows = !strcmp(rq->cmd, "flows");

	if (rq->sections && !stats)
		snprintf(err, errlen, "%s: --rules/--interfaces/--workers/--stages belong to stats",
			 rq->cmd);
	else if ((rq->filter || rq->limit_set || rq->delete) && !flows)
		snprintf(err, errlen, "%s: --filter, --limit and --delete belong to flows", rq->cmd);
	else if (rq->delete && (!rq->filter || !rq->filter[strspn(rq->filter, " ")]))
		snprintf(err, errlen, "flows --delete needs a --filter: the flows to end");
	else if ((rq->cap_rule || rq->cap_drops || rq->cap_count || rq->cap_timeout) &&
		 strcmp(rq->cmd, "capture"))
		snprintf(err, errlen, "%s: --rule, --drops, -c and --timeout belong to capture",
			 rq->cmd);
	else if (!strcmp(rq->cmd, "capture") && (!!rq->cap_rule == rq->cap_drops || !rq->cap_count))
		snprintf(err, errlen, "capture: give --rule NAME or --drops, and -c N");
	else if (rq->flows && strcmp(rq->cmd, "reload"))
		snprintf(err, errlen, "%s: --flows belongs to reload", rq->cmd);
	else if (rq->file && strcmp(rq->cmd, "reload"))
		snprintf(err, errlen, "%s: unexpected argument '%s'", rq->cmd, rq->file);
	else
		return 0;
	return -1;
}

