/* limit: {rate: N/s|N/m|N/h, burst: N, per: source|rule}: a token bucket
 * per rule or per source address (struct rfw_limit). burst defaults to
 * the rate (one interval's worth), per to rule. */
#include "policy.h"

#include <stdio.h>
#include <string.h>

static const char *const limit_keys[] = {"rate", "burst", "per"};

static int parse_rate(struct policy *pol, yaml_node_t *n, struct rfw_limit *out)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = {{"/s", 1000}, {"/m", 60000}, {"/h", 3600000}};
	const char *s = ytree_str(n), *slash = s ? strchr(s, '/') : NULL;
	char num[16];
	unsigned long v;

	if (slash && (size_t)(slash - s) < sizeof(num)) {
		memcpy(num, s, (size_t)(slash - s));
		num[slash - s] = '\0';
		for (size_t i = 0; i < N(units); i++) {
			if (strcmp(slash, units[i].unit) != 0 ||
			    val_parse_uint(num, 4000000000ul, &v) < 0 || v == 0)
				continue;
			out->rate = v;
			out->interval_ms = units[i].ms;
			return 0;
		}
	}
	ytree_error(pol->d, n, "rate must be a count per second, minute or hour, like 1000/s, 60/m or 10/h; not '%s'",
		    s ? s : ytree_kind(n));
	return -1;
}

int limits_parse(struct policy *pol, yaml_node_t *n, struct rfw_limit *out)
{
	yaml_node_t *v;
	const char *s;
	unsigned long b;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (policy_want_mapping(pol, n, "'limit'") < 0)
		return -1;
	if (ytree_check_keys(pol->yt, n, pol->d, "limit", limit_keys, N(limit_keys), NULL, 0))
		rc = -1;
	v = ytree_get(pol->yt, n, "rate", NULL);
	if (!v) {
		ytree_error(pol->d, n, "a limit needs a rate, like {rate: 1000/s}");
		return -1;
	}
	if (parse_rate(pol, v, out) < 0)
		rc = -1;
	out->burst = out->rate;
	v = ytree_get(pol->yt, n, "burst", NULL);
	if (v) {
		s = ytree_str(v);
		if (!s || val_parse_uint(s, 4000000000ul, &b) < 0 || b == 0) {
			ytree_error(pol->d, v, "burst must be a whole number from 1 up, not '%s'",
				    s ? s : ytree_kind(v));
			rc = -1;
		} else {
			out->burst = b;
		}
	}
	v = ytree_get(pol->yt, n, "per", NULL);
	if (v) {
		s = ytree_str(v);
		if (s && strcmp(s, "source") == 0)
			out->per = RFW_LIMIT_PER_SOURCE;
		else if (s && strcmp(s, "rule") == 0)
			out->per = RFW_LIMIT_PER_RULE;
		else {
			ytree_error(pol->d, v, "per must be source or rule, not '%s'", s ? s : ytree_kind(v));
			rc = -1;
		}
	}
	return rc;
}
