/* The policy file as a libyaml document: load it (syntax errors reported
 * with libyaml's own problem and position) and read nodes with the 1-based
 * position every diagnostic needs. */
#ifndef RULEC_YAML_TREE_H
#define RULEC_YAML_TREE_H

#include <stddef.h>
#include <yaml.h>

#include "diag.h"

struct ytree {
	yaml_document_t doc;
	int loaded;
};

/* 0 with t loaded, or -1 after reporting why to d. */
int ytree_load(struct ytree *t, const char *path, struct diag *d);
void ytree_free(struct ytree *t);

yaml_node_t *ytree_root(struct ytree *t);
yaml_node_t *ytree_node(struct ytree *t, int id);

static inline unsigned ytree_line(const yaml_node_t *n) { return (unsigned)n->start_mark.line + 1; }
static inline unsigned ytree_col(const yaml_node_t *n) { return (unsigned)n->start_mark.column + 1; }

/* The scalar's text, or NULL when n is not a scalar. */
const char *ytree_str(const yaml_node_t *n);

/* A node copied for an alias (ytree_load gives every alias its own copy,
 * positioned at the alias): 1 with where the copied text is, else 0. */
int ytree_copied_from(const yaml_node_t *n, unsigned *line, unsigned *col);
/* " (through an alias of line L column C)" for such a node, else "". */
void ytree_note(const yaml_node_t *n, char *buf, size_t len);

/* Report an error positioned at node n (an alias: where the alias is,
 * naming the text it stands for). */
void ytree_error(struct diag *d, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Check the keys of mapping map (described as `where` in messages): each
 * must be a scalar, appear once, and be in known[]; keys in later[] are
 * refused as "not supported by this version of rulec yet"; any other key is
 * unknown, with a suggestion when it looks like a typo. Returns the number
 * of errors reported. */
unsigned ytree_check_keys(struct ytree *t, yaml_node_t *map, struct diag *d,
			  const char *where, const char *const *known, size_t nknown,
			  const char *const *later, size_t nlater);

/* The value of key in mapping map, or NULL; *key_node gets the key's node
 * when key_node is not NULL. The first occurrence wins (duplicates are
 * reported by ytree_check_keys). */
yaml_node_t *ytree_get(struct ytree *t, yaml_node_t *map, const char *key,
		       yaml_node_t **key_node);

/* Name of a node kind for messages: "a mapping", "a list", "a scalar". */
const char *ytree_kind(const yaml_node_t *n);

#endif
