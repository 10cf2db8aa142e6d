/* Loading the policy with libyaml's document API and small readers over it.
 * libyaml keeps a start mark on every node, keys included, which is what
 * lets every later check point at the exact key or value. */
#include "yaml_tree.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ---- aliases: each use its own copy, positioned where it is written ----
 *
 * libyaml's document makes an alias another reference to the anchored
 * node, so every message about it (or about anything inside it) named the
 * anchor's position, once per use. Here every alias becomes a copy of the
 * anchored nodes, each positioned at the alias, remembering in end_mark
 * where the copied text is (ytree_copied_from); the copies are bounded
 * (a "billion laughs" file nests aliases of aliases). */
#define YTREE_MAX_ALIAS_NODES (1u << 18)	/* nodes all the copies may add */
/* and the text of their scalars: a long value copied that often would
 * otherwise be gigabytes (as much as the file itself may be) */
#define YTREE_MAX_ALIAS_BYTES (64u << 20)
#define COPY_MARK ((size_t)-1)			/* end_mark.index of a copy */

/* Where an alias stands: child number `slot` of collection `parent` (a
 * mapping's pair slot / 2, its key when slot is even), written at mark. */
struct alias_use {
	int parent;
	size_t slot;
	yaml_mark_t mark;
};

struct open_node {
	int id;
	size_t children;
};

static int *slot_ref(yaml_document_t *doc, const struct alias_use *u)
{
	yaml_node_t *p = yaml_document_get_node(doc, u->parent);

	if (!p)
		return NULL;
	if (p->type == YAML_SEQUENCE_NODE) {
		if (u->slot >= (size_t)(p->data.sequence.items.top - p->data.sequence.items.start))
			return NULL;
		return &p->data.sequence.items.start[u->slot];
	}
	if (p->type == YAML_MAPPING_NODE) {
		yaml_node_pair_t *pair = p->data.mapping.pairs.start + u->slot / 2;

		if (pair >= p->data.mapping.pairs.top)
			return NULL;
		return u->slot % 2 ? &pair->value : &pair->key;
	}
	return NULL;
}

/* The document's nodes in the order libyaml made them (their ids), read
 * again as events: where each alias stands. -1 when out of memory or the
 * events do not retrace the document. */
static int find_aliases(FILE *f, struct alias_use **out, size_t *n)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct open_node *stack = NULL;
	size_t depth = 0, cap = 0, ucap = 0;
	int next_id = 1, rc = -1, done = 0;

	*out = NULL;
	*n = 0;
	if (fseek(f, 0, SEEK_SET) != 0 || !yaml_parser_initialize(&p))
		return -1;
	yaml_parser_set_input_file(&p, f);
	while (!done) {
		int opened = 0;

		if (!yaml_parser_parse(&p, &ev))
			goto out;
		switch (ev.type) {
		case YAML_ALIAS_EVENT:
			if (depth) {
				if (*n == ucap) {
					size_t c = ucap ? ucap * 2 : 16;
					struct alias_use *v = realloc(*out, c * sizeof(*v));

					if (!v)
						goto fail_event;
					*out = v;
					ucap = c;
				}
				(*out)[(*n)++] = (struct alias_use){stack[depth - 1].id,
								    stack[depth - 1].children, ev.start_mark};
			}
			break;
		case YAML_SCALAR_EVENT:
			next_id++;
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth == cap) {
				size_t c = cap ? cap * 2 : 16;
				struct open_node *v = realloc(stack, c * sizeof(*v));

				if (!v)
					goto fail_event;
				stack = v;
				cap = c;
			}
			stack[depth++] = (struct open_node){next_id++, 0};
			opened = 1;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth)
				depth--;
			break;
		case YAML_DOCUMENT_END_EVENT:
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			break;
		}
		/* a node just read (not one just opened) is its parent's next child */
		if (!opened && depth &&
		    (ev.type == YAML_ALIAS_EVENT || ev.type == YAML_SCALAR_EVENT ||
		     ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT))
			stack[depth - 1].children++;
		yaml_event_delete(&ev);
	}
	rc = 0;
	goto out;
fail_event:
	yaml_event_delete(&ev);
out:
	free(stack);
	yaml_parser_delete(&p);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

enum { COPY_NOMEM = 0, COPY_TOO_MANY = -1, COPY_CYCLE = -2, COPY_TOO_LONG = -3 };

/* What the copies may still add. */
struct copy_budget {
	size_t nodes, bytes;
};

/* The nodes being copied, outermost first: an alias inside the node it
 * names makes the document a cycle. Deeper than the nesting check lets
 * a file be (64 brackets, 1024 columns) can only be one. */
struct copy_path {
	int id[1100];
	unsigned depth;
};

static int copy_children(yaml_document_t *doc, int id, const yaml_node_t *n, yaml_mark_t at,
			 struct copy_budget *budget, struct copy_path *path);

/* A copy of node id (and everything under it) positioned at `at`: its
 * id, or COPY_NOMEM, COPY_TOO_MANY / COPY_TOO_LONG past the budget's
 * nodes / bytes, COPY_CYCLE. */
static int copy_tree(yaml_document_t *doc, int id, yaml_mark_t at, struct copy_budget *budget,
		     struct copy_path *path)
{
	yaml_node_t *n = yaml_document_get_node(doc, id), *c;
	yaml_mark_t from;
	int copy;

	if (!n)
		return COPY_NOMEM;
	if (budget->nodes == 0)
		return COPY_TOO_MANY;
	for (unsigned i = 0; i < path->depth; i++)
		if (path->id[i] == id)
			return COPY_CYCLE;
	if (path->depth == sizeof(path->id) / sizeof(path->id[0]))
		return COPY_CYCLE;
	budget->nodes--;
	from = n->start_mark;
	path->id[path->depth++] = id;
	copy = copy_children(doc, id, n, at, budget, path);
	path->depth--;
	if (copy <= 0)
		return copy;
	c = yaml_document_get_node(doc, copy);
	c->start_mark = at;
	c->end_mark = (yaml_mark_t){COPY_MARK, from.line, from.column};
	if (from.index == COPY_MARK)	/* a copy of a copy: the text is the first's */
		c->end_mark = yaml_document_get_node(doc, id)->end_mark;
	return copy;
}

/* copy_tree's node itself and its children. */
static int copy_children(yaml_document_t *doc, int id, const yaml_node_t *n, yaml_mark_t at,
			 struct copy_budget *budget, struct copy_path *path)
{
	int copy = 0;

	switch (n->type) {
	case YAML_SCALAR_NODE:
		if (n->data.scalar.length > budget->bytes)
			return COPY_TOO_LONG;
		budget->bytes -= n->data.scalar.length;
		copy = yaml_document_add_scalar(doc, n->tag, n->data.scalar.value,
						(int)n->data.scalar.length, n->data.scalar.style);
		break;
	case YAML_SEQUENCE_NODE: {
		size_t items = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);

		copy = yaml_document_add_sequence(doc, n->tag, n->data.sequence.style);
		for (size_t i = 0; copy && i < items; i++) {
			/* the array may move as nodes are added: look it up again */
			int item = yaml_document_get_node(doc, id)->data.sequence.items.start[i];
			int c2 = copy_tree(doc, item, at, budget, path);

			if (c2 <= 0)
				return c2;
			if (!yaml_document_append_sequence_item(doc, copy, c2))
				return 0;
		}
		break;
	}
	case YAML_MAPPING_NODE: {
		size_t pairs = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);

		copy = yaml_document_add_mapping(doc, n->tag, n->data.mapping.style);
		for (size_t i = 0; copy && i < pairs; i++) {
			yaml_node_pair_t pair = yaml_document_get_node(doc, id)->data.mapping.pairs.start[i];
			int k = copy_tree(doc, pair.key, at, budget, path), v;

			if (k <= 0)
				return k;
			v = copy_tree(doc, pair.value, at, budget, path);
			if (v <= 0)
				return v;
			if (!yaml_document_append_mapping_pair(doc, copy, k, v))
				return 0;
		}
		break;
	}
	default:
		return COPY_NOMEM;
	}
	return copy;
}

/* Every alias of the loaded document replaced by its own copy, in the
 * order written (an alias inside an anchored node is a copy by the time
 * that node is copied). 0, or -1 after reporting why. */
static int expand_aliases(struct ytree *t, FILE *f, struct diag *d)
{
	struct alias_use *uses;
	struct copy_budget budget = {YTREE_MAX_ALIAS_NODES, YTREE_MAX_ALIAS_BYTES};
	size_t n;
	struct copy_path *path = malloc(sizeof(*path));
	int rc = 0;

	if (!path || find_aliases(f, &uses, &n) < 0) {
		free(path);
		diag_error(d, 0, 0, "out of memory while reading YAML aliases");
		return -1;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		int *ref = slot_ref(&t->doc, &uses[i]), copy;

		if (!ref)
			continue;	/* cannot happen: the events retrace the document */
		path->depth = 0;
		copy = copy_tree(&t->doc, *ref, uses[i].mark, &budget, path);
		if (copy > 0) {
			*slot_ref(&t->doc, &uses[i]) = copy;	/* the array may have moved */
			continue;
		}
		rc = -1;
		if (copy == COPY_TOO_MANY)
			diag_error(d, (unsigned)uses[i].mark.line + 1, (unsigned)uses[i].mark.column + 1,
				   "YAML aliases here and before stand for more than %u values: "
				   "too many for a policy (aliases of aliases multiply)",
				   YTREE_MAX_ALIAS_NODES);
		else if (copy == COPY_TOO_LONG)
			diag_error(d, (unsigned)uses[i].mark.line + 1, (unsigned)uses[i].mark.column + 1,
				   "YAML aliases here and before stand for more than %u MiB of text: "
				   "too much for a policy (aliases of aliases multiply)",
				   YTREE_MAX_ALIAS_BYTES >> 20);
		else if (copy == COPY_CYCLE)
			diag_error(d, (unsigned)uses[i].mark.line + 1, (unsigned)uses[i].mark.column + 1,
				   "YAML alias inside the value it names: it would stand for itself "
				   "without end");
		else
			diag_error(d, 0, 0, "out of memory while copying YAML aliases");
	}
	free(uses);
	free(path);
	return rc;
}

int ytree_copied_from(const yaml_node_t *n, unsigned *line, unsigned *col)
{
	if (n->end_mark.index != COPY_MARK)
		return 0;
	*line = (unsigned)n->end_mark.line + 1;
	*col = (unsigned)n->end_mark.column + 1;
	return 1;
}

void ytree_note(const yaml_node_t *n, char *buf, size_t len)
{
	unsigned line, col;

	if (ytree_copied_from(n, &line, &col))
		snprintf(buf, len, " (through an alias of line %u column %u)", line, col);
	else if (len)
		buf[0] = '\0';
}

void ytree_error(struct diag *d, const yaml_node_t *n, const char *fmt, ...)
{
	char text[1024], note[80];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ytree_note(n, note, sizeof(note));
	diag_error(d, ytree_line(n), ytree_col(n), "%s%s", text, note);
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
	if (d->errors == before)
		expand_aliases(t, f, d);
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
