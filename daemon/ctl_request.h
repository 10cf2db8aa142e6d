/* A control-socket request line, "COMMAND [--json] [OPTIONS]", split into
 * its command and options (control.c has the protocol). Parsing is apart
 * from serving so that it is unit-tested without a daemon. */
#ifndef RAMPART_DAEMON_CTL_REQUEST_H
#define RAMPART_DAEMON_CTL_REQUEST_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* A request line's room, newline included: a reload's path may be as
 * long as the kernel opens (PATH_MAX with its NUL), its options beside
 * it (rampartctl builds its lines in this much too). */
#define CTL_MAX_REQUEST (PATH_MAX + 256)

#define CTL_DEFAULT_LIMIT 100u	/* flows listed without --limit */
#define CTL_MAX_LIMIT 1000000u	/* flows one answer may carry */
#define CTL_CAPTURE_MAX 100000u	/* packets one capture may carry */
#define CTL_CAPTURE_TIMEOUT 10u	/* seconds a capture waits for its packets */

/* stats sections (--rules, ...); none named: all */
enum ctl_stats_section {
	CTL_S_RULES = 1u << 0,
	CTL_S_INTERFACES = 1u << 1,
	CTL_S_WORKERS = 1u << 2,
	CTL_S_STAGES = 1u << 3,
	CTL_S_ALL = 0xfu,
};

struct ctl_request {
	const char *cmd;
	int json;
	unsigned sections;	/* stats */
	uint32_t limit;		/* flows */
	int limit_set;		/* --limit given */
	const char *filter;	/* flows: the rest of the line */
	int delete;		/* flows --delete: end the matching flows */
	const char *file;	/* reload */
	const char *flows;	/* reload --flows keep|recheck */
	const char *cap_rule;	/* capture --rule NAME */
	int cap_drops;		/* capture --drops */
	uint32_t cap_count;	/* capture -c N */
	uint32_t cap_timeout;	/* capture --timeout S (0: CTL_CAPTURE_TIMEOUT) */
};

/* Split line (modified in place; rq points into it). 0, or -1 with err. */
int ctl_request_parse(char *line, struct ctl_request *rq, char *err, size_t errlen);
/* Options of another command (stats --limit) are errors. 0, or -1. */
int ctl_request_check(const struct ctl_request *rq, char *err, size_t errlen);

#endif
