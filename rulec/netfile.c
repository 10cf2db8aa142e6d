/* {file: PATH} networks: a prefix list, one address or prefix a line, '#'
 * comments and blank lines allowed, as blocklists are published. Errors
 * name the list file and its line. Built for millions of lines: one pass,
 * no per-line allocation. */
#include "policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Past this many bad lines the list is probably not a prefix list at all. */
#define MAX_LIST_ERRORS 10

/* A line of a prefix list is an address or prefix and a comment: longer
 * than this it is not one (and a file with no newline at all, or NUL
 * bytes, is not a list: reading stops there, so /dev/zero ends). */
#define MAX_LIST_LINE 1024

int netfile_read(struct policy *pol, yaml_node_t *at, const char *rel, pfx_list *out)
{
	char *path = policy_path(pol, pol->cur, rel), line[MAX_LIST_LINE + 2], why[256];
	FILE *f = fopen(path, "r");
	size_t file, errors = 0, n;
	unsigned long lineno = 0;

	if (!f) {
		ytree_error(pol->d, at, "cannot open prefix list '%s': %s", rel, strerror(errno));
		free(path);
		return -1;
	}
	file = diag_add_file(pol->d, path);
	free(path);
	while (fgets(line, sizeof(line), f)) {
		char *s = line, *end;
		struct prefix p;

		lineno++;
		n = strlen(line);
		if ((!n || line[n - 1] != '\n') && !feof(f)) {
			diag_error_in(pol->d, file, (unsigned)lineno, 0,
				      "a line longer than %d bytes, or a NUL byte: not a prefix list; "
				      "stopped reading", MAX_LIST_LINE);
			errors++;
			break;
		}
		end = strchr(s, '#');
		if (!end)
			end = s + n;
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' ||
				   end[-1] == '\t'))
			end--;
		if (s == end)
			continue;
		*end = '\0';
		if (val_parse_prefix(s, &p, why, sizeof(why)) < 0) {
			if (++errors > MAX_LIST_ERRORS) {
				diag_error_in(pol->d, file, (unsigned)lineno, 0,
					      "more than %d bad lines; stopped reading (is this a prefix list?)",
					      MAX_LIST_ERRORS);
				break;
			}
			diag_error_in(pol->d, file, (unsigned)lineno, 0, "%s", why);
			continue;
		}
		if (out->n == RULEC_MAX_FILE_PREFIXES) {
			diag_error_in(pol->d, file, (unsigned)lineno, 0,
				      "more than %u prefixes in one list; split it, or aggregate "
				      "adjacent prefixes", RULEC_MAX_FILE_PREFIXES);
			errors++;
			break;
		}
		VEC_PUSH(*out, p);
	}
	if (ferror(f)) {
		diag_error_in(pol->d, file, (unsigned)lineno, 0, "cannot read: %s", strerror(errno));
		errors++;
	}
	fclose(f);
	return errors ? -1 : 0;
}
