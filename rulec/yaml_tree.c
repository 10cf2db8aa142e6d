/* Loading the policy with libyaml's document API and small readers over it.
 * libyaml keeps a start mark on every node, keys included, which is what
 * lets every later check point at the exact key or value. */
#include "yaml_tree.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* The line and column (in bytes) of byte `off` of f. */
static void offset_position(FILE *f, size_t off, unsigned *line, unsigned *col)
{
	int c;

	*line = 1;
	*col = 1;
	if (fseek(f, 0, SEEK_SET) != 0)
		return;
	for (size_t i = 0; i < off && (c = getc(f)) != EOF; i++) {
		if (c == '\n') {
			++*line;
			*col = 1;
		} else {
			++*col;
		}
	}
}

static void syntax_error(const yaml_parser_t *p, FILE *f, struct diag *d)
{
	const char *problem = p->problem ? p->problem : "cannot be parsed";
	unsigned line, col;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		diag_error(d, 0, 0, "out of memory while reading YAML");
		return;
	case YAML_READER_ERROR:
		/* The reader only knows a byte offset (bad encoding): its
		 * line, and its column counted in bytes. */
		offset_position(f, p->problem_offset, &line, &col);
		diag_error(d, line, col, "invalid YAML: %s (byte %zu of the file; a policy is "
			   "UTF-8)", problem, p->problem_offset);
		return;
	default:
		break;
	}
	if (p->context)
		diag_error(d, (unsigned)p->problem_mark.line + 1,
			   (unsigned)p->problem_mark.column + 1,
			   "invalid YAML: %s (%s at line %u column %u)", problem, p->context,
			   (unsigned)p->context_mark.line + 1,
			   (unsigned)p->context_mark.column + 1);
	else
		diag_error(d, (unsigned)p->problem_mark.line + 1,
			   (unsigned)p->problem_mark.column + 1, "invalid YAML: %s", problem);
}

/* Tags (!foo, !!int) would change a value's meaning behind our back, and an
 * unquoted "!name" (negation, later) is a tag to YAML: refuse them all. */
static void refuse_tags(struct ytree *t, struct diag *d)
{
	for (yaml_node_t *n = t->doc.nodes.start; n < t->doc.nodes.top; n++) {
		const char *tag = (const char *)n->tag;

		if (tag && strncmp(tag, "tag:yaml.org,2002:", 18) != 0)
			ytree_error(d, n, "YAML tag '%s' is not supported (quote a value that starts with '!')",
				    tag);
	}
}

/* Limits that keep a hostile file from costing unbounded time or memory
 * (docs/security.md). libyaml's scanner spends time quadratic in the flow
 * nesting ([[[[...) and its composer recurses with the block nesting, so
 * both are bounded before libyaml sees the file. */
#define YTREE_MAX_BYTES (64u << 20)	/* long address lists go in {file: PATH} */
#define YTREE_MAX_FLOW_DEPTH 64
#define YTREE_MAX_INDENT 1024

static int starts_scalar(int prev)
{
	return prev == '\n' || prev == ' ' || prev == '\t' || prev == '[' || prev == '{' ||
	       prev == ',' || prev == ':' || prev == '-' || prev == -1;
}

/* One pass over the bytes: flow brackets outside quotes and comments, and
 * indentation. Returns 0, or -1 after reporting where a limit was passed. */
static int check_nesting(FILE *f, struct diag *d)
{
	unsigned line = 1, col = 0, depth = 0, indent = 0;
	int c, prev = -1, quote = 0, comment = 0, at_start = 1;
	size_t bytes = 0;

	while ((c = getc(f)) != EOF) {
		col++;
		/* what fstat's size did not bound (/dev/zero, a FIFO) */
		if (++bytes > YTREE_MAX_BYTES) {
			diag_error(d, 0, 0, "more than %u MiB: a policy file may have at most %u MiB; "
				   "put long address lists in {file: PATH} lists (one prefix a line)",
				   YTREE_MAX_BYTES >> 20, YTREE_MAX_BYTES >> 20);
			return -1;
		}
		if (c == '\n') {
			line++;
			col = 0;
			indent = 0;
			at_start = 1;
			comment = 0;
			prev = c;
			continue;
		}
		if (at_start && c == ' ') {
			if (++indent > YTREE_MAX_INDENT) {
				diag_error(d, line, col, "indented more than %d columns: nested too "
					   "deeply for a policy", YTREE_MAX_INDENT);
				return -1;
			}
			prev = c;
			continue;
		}
		at_start = 0;
		if (comment) {
			prev = c;
			continue;
		}
		if (quote) {
			if (quote == '"' && c == '\\') {
				prev = c;
				c = getc(f);	/* the escaped character */
				col++;
				if (c == EOF)
					break;
			} else if (c == quote) {
				quote = 0;
			}
			prev = c;
			continue;
		}
		if (c == '#' && (prev == ' ' || prev == '\t' || prev == -1 || prev == '\n'))
			comment = 1;
		else if ((c == '\'' || c == '"') && starts_scalar(prev))
			quote = c;
		else if (c == '[' || c == '{') {
			if (++depth > YTREE_MAX_FLOW_DEPTH) {
				diag_error(d, line, col, "brackets nested more than %d deep: too deep "
					   "for a policy", YTREE_MAX_FLOW_DEPTH);
				return -1;
			}
		} else if ((c == ']' || c == '}') && depth) {
			depth--;
		}
		prev = c;
	}
	return 0;
}

int ytree_load(struct ytree *t, const char *path, struct diag *d)
{
	yaml_parser_t p;
	yaml_document_t extra;
	FILE *f = fopen(path, "rb");
	unsigned before = d->errors;

	memset(t, 0, sizeof(*t));
	if (!f) {
		diag_error(d, 0, 0, "cannot open: %s", strerror(errno));
		return -1;
	}
	{
		struct stat st;

		if (fstat(fileno(f), &st) == 0 && st.st_size > (off_t)YTREE_MAX_BYTES) {
			diag_error(d, 0, 0, "%lld bytes: a policy file may have at most %u MiB; put long "
				   "address lists in {file: PATH} lists (one prefix a line)",
				   (long long)st.st_size, YTREE_MAX_BYTES >> 20);
			fclose(f);
			return -1;
		}
	}
	if (check_nesting(f, d) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		if (d->errors == before)
			diag_error(d, 0, 0, "cannot read: %s", strerror(errno));
		return -1;
	}
	if (!yaml_parser_initialize(&p)) {
		fclose(f);
		diag_error(d, 0, 0, "out of memory while reading YAML");
		return -1;
	}
	yaml_parser_set_input_file(&p, f);
	if (!yaml_parser_load(&p, &t->doc)) {
		syntax_error(&p, f, d);
		goto out;
	}
	t->loaded = 1;
	if (!yaml_document_get_root_node(&t->doc)) {
		diag_error(d, 1, 1, "policy is empty; it needs at least 'version: 1'");
		goto out;
	}
	if (!yaml_parser_load(&p, &extra)) {
		syntax_error(&p, f, d);
		goto out;
	}
	if (yaml_document_get_root_node(&extra))
		diag_error(d, (unsigned)extra.start_mark.line + 1,
			   (unsigned)extra.start_mark.column + 1,
			   "a policy is one YAML document; found a second one");
	yaml_document_delete(&extra);
	refuse_tags(t, d);
out:
	yaml_parser_delete(&p);
	fclose(f);
	if (d->errors != before) {
		ytree_free(t);
		return -1;
	}
	return 0;
}

void ytree_free(struct ytree *t)
{
	if (t->loaded)
		yaml_document_delete(&t->doc);
	t->loaded = 0;
}

yaml_node_t *ytree_root(struct ytree *t)
{
	return yaml_document_get_root_node(&t->doc);
}

yaml_node_t *ytree_node(struct ytree *t, int id)
{
	return yaml_document_get_node(&t->doc, id);
}

const char *ytree_str(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

const char *ytree_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE: return "a mapping";
	case YAML_SEQUENCE_NODE: return "a list";
	case YAML_SCALAR_NODE: return "a scalar";
	default: return "empty";
	}
}

static int in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return 1;
	return 0;
}

static void unknown_key(struct diag *d, yaml_node_t *k, const char *name,
			const char *where, const char *const *known, size_t nknown,
			const char *const *later, size_t nlater)
{
	char expected[512] = "";
	const char *all[64];
	const char *hint;
	size_t nall = 0, used = 0;

	for (size_t i = 0; i < nknown; i++) {
		int w = snprintf(expected + used, sizeof(expected) - used, "%s%s",
				 i ? ", " : "", known[i]);

		if (w > 0 && (size_t)w < sizeof(expected) - used)
			used += (size_t)w;
	}
	/* Suggest among the keys we know, supported or not: a typo of 'zone'
	 * deserves "did you mean 'zone'" even if zones come later. */
	for (size_t i = 0; i < nknown && nall < 64; i++)
		all[nall++] = known[i];
	for (size_t i = 0; i < nlater && nall < 64; i++)
		all[nall++] = later[i];
	hint = diag_suggest(name, all, nall);
	if (hint)
		ytree_error(d, k, "unknown key '%s' in %s; expected one of: %s; did you mean '%s'?",
			    name, where, expected, hint);
	else
		ytree_error(d, k, "unknown key '%s' in %s; expected one of: %s", name, where,
			    expected);
}

unsigned ytree_check_keys(struct ytree *t, yaml_node_t *map, struct diag *d,
			  const char *where, const char *const *known, size_t nknown,
			  const char *const *later, size_t nlater)
{
	unsigned before = d->errors;

	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = ytree_node(t, p->key);
		const char *name = ytree_str(k);

		if (!name) {
			ytree_error(d, k, "a key in %s must be a plain name, not %s", where,
				    ytree_kind(k));
			continue;
		}
		for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
			const char *prev = ytree_str(ytree_node(t, q->key));

			if (prev && strcmp(prev, name) == 0) {
				yaml_node_t *pk = ytree_node(t, q->key);

				ytree_error(d, k, "duplicate key '%s' in %s (first at line %u column %u)",
					    name, where, ytree_line(pk), ytree_col(pk));
				break;
			}
		}
		if (in_list(name, known, nknown))
			continue;
		if (in_list(name, later, nlater))
			ytree_error(d, k, "'%s' is not supported by this version of rulec yet", name);
		else
			unknown_key(d, k, name, where, known, nknown, later, nlater);
	}
	return d->errors - before;
}

yaml_node_t *ytree_get(struct ytree *t, yaml_node_t *map, const char *key,
		       yaml_node_t **key_node)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = ytree_node(t, p->key);
		const char *name = ytree_str(k);

		if (name && strcmp(name, key) == 0) {
			if (key_node)
				*key_node = k;
			return ytree_node(t, p->value);
		}
	}
	return NULL;
}
