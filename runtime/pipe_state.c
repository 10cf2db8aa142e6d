/* The flows of every worker to a file and back (pipe_state.h). */
#define _GNU_SOURCE
#include "pipe_state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "ct.h"
#include "nat.h"
#include "pipeline_int.h"
#include "rule_map.h"

#define STATE_MAGIC "RAMPFLOW"
/* Version 2 added the re-check mark to a record's rule (STATE_RULE_RECHECK).
 * Version 1 files (the binary before) are still read, as having no marks:
 * the file exists to carry flows over an upgrade of the binary. */
#define STATE_VERSION 2u
#define STATE_VERSION_UNMARKED 1u
#define STATE_HANDOFF 1u	/* header flags: the workers handed frames over */
#define STATE_CHECKPOINT 2u	/* written while they ran: TCP windows may be behind */

/* The file: this header, the saving policy's rule names (rules 0 ..
 * rule_count, each NUL-terminated, padded to 8 bytes), then one record
 * per flow. Host byte order: a state file stays on the host that wrote
 * it. */
struct state_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	uint32_t record_size;
	uint32_t workers;
	uint32_t flags;
	uint32_t names_size;
	uint32_t rule_count;
	uint32_t zero;
	uint64_t flows;
	uint64_t home_seed;
	uint64_t wall_ns;	/* CLOCK_REALTIME when written */
	uint32_t body_crc;	/* CRC32C of everything after the header */
	uint32_t header_crc;	/* CRC32C of the header before this field */
};
_Static_assert(sizeof(struct state_header) == 72, "the state file's header");

struct state_record {
	uint32_t worker;
	uint32_t rule;		/* in the saving policy, | STATE_RULE_RECHECK */
	struct ct_saved_flow flow;
};

/* In a version 2 record's rule: the flow was due a re-check against the
 * rules on its next packet (a reload with --flows recheck that no packet
 * of it has met yet), and is again once restored, whatever the restart's
 * own --reload-flows. Without it, a restart between that reload and the
 * flow's next packet let the flow live on under rules that refuse it.
 * The rule number is the bits below (a policy has fewer than
 * PIPE_RULE_MASK rules: pipe_policy_build refuses more). */
#define STATE_RULE_RECHECK 0x80000000u
#define STATE_RULE_NUMBER (~STATE_RULE_RECHECK)
_Static_assert(PIPE_RULE_MASK < STATE_RULE_RECHECK, "a rule number leaves the mark's bit free");
_Static_assert(sizeof(struct state_record) == PIPE_STATE_RECORD_SIZE, "the state file's record");

struct pipe_state {
	const uint8_t *map;
	size_t size;
	const struct state_header *h;
	const char **names;	/* rule_count + 1 */
	const struct state_record *rec;
};

static int fail(char *err, size_t errlen, const char *what, const char *path)
{
	snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
	return -1;
}

static int put(FILE *f, const void *p, size_t n, uint32_t *crc)
{
	if (crc)
		*crc = crc32c(*crc, p, n);
	return fwrite(p, 1, n, f) == n ? 0 : -1;
}

/* Rule names of the policy the workers run, NUL-terminated, padded. */
static int put_names(FILE *f, const struct rfw_view *v, uint32_t *size, uint32_t *crc)
{
	static const char pad[8];
	uint32_t total = 0;

	for (uint32_t r = 0; r <= v->policy->rule_count; r++) {
		const char *name = rfw_rule_name(v, r);
		size_t len = strlen(name) + 1;

		if (put(f, name, len, crc))
			return -1;
		total += (uint32_t)len;
	}
	if (put(f, pad, (8 - total % 8) % 8, crc))
		return -1;
	*size = (total + 7) / 8 * 8;
	return 0;
}

/* One worker's live flows from slot *cursor on, their rules as the
 * current policy numbers them (a flow the sweep has not restamped yet is
 * mapped here), each marked when it is due a re-check; names: the policy
 * whose names the file holds (every worker's once a reload is done; a
 * worker still on another keeps its flows, under rule 0, marks and all:
 * a re-check asked for is never dropped). */
int pipe_state_collect(const struct pipe_worker *w, uint32_t k, const struct rfw_view *names,
		       uint32_t now, uint32_t *cursor, uint32_t max_slots, void *out,
		       uint32_t room, uint32_t *nout)
{
	const struct ct_table *t = w->ct;
	struct state_record *rec = out;
	uint32_t max = t ? ct_max_flows(t) : 0, n = 0;

	for (; *cursor < max && max_slots && n < room; (*cursor)++, max_slots--) {
		struct state_record *r = &rec[n];
		uint32_t rule;
		int due;

		if (ct_flow_save(t, *cursor, now, &r->flow))
			continue;
		r->worker = k;
		due = pipe_flow_restamp_rule(w->pol, r->flow.rule, &rule);
		r->rule = (w->pol->view == names ? rule : 0) | (due ? STATE_RULE_RECHECK : 0);
		r->flow.rule = 0;
		n++;
	}
	*nout = n;
	return *cursor >= max;
}

struct pipe_state_writer {
	FILE *f;
	int fd;
	int synced;		/* header in, on disk, closed: only the rename left */
	struct state_header h;
	char path[4096];
	char tmp[4096];
};

static int writer_fail(struct pipe_state_writer *wr, char *err, size_t errlen, const char *what,
		       const char *path)
{
	fail(err, errlen, what, path);
	pipe_state_writer_abort(wr);
	return -1;
}

struct pipe_state_writer *pipe_state_writer_open(const char *path,
						 const struct pipe_worker *first, uint32_t workers,
						 const struct rfw_view *names, int checkpoint,
						 char *err, size_t errlen)
{
	struct pipe_state_writer *wr = calloc(1, sizeof(*wr));
	struct state_header *h;

	if (!wr) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (workers == 0 || (size_t)snprintf(wr->path, sizeof(wr->path), "%s", path) >=
				    sizeof(wr->path) ||
	    (size_t)snprintf(wr->tmp, sizeof(wr->tmp), "%s.tmp", path) >= sizeof(wr->tmp)) {
		snprintf(err, errlen, workers ? "state file name too long" : "no workers");
		free(wr);
		return NULL;
	}
	wr->fd = open(wr->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (wr->fd < 0) {
		fail(err, errlen, "cannot create", wr->tmp);
		free(wr);
		return NULL;
	}
	wr->f = fdopen(wr->fd, "wb");
	if (!wr->f) {
		writer_fail(wr, err, errlen, "cannot write", wr->tmp);
		return NULL;
	}
	h = &wr->h;
	memcpy(h->magic, STATE_MAGIC, 8);
	h->version = STATE_VERSION;
	h->header_size = sizeof(*h);
	h->record_size = sizeof(struct state_record);
	h->workers = workers;
	h->flags = (first->handoff ? STATE_HANDOFF : 0) | (checkpoint ? STATE_CHECKPOINT : 0);
	h->rule_count = names->policy->rule_count;
	h->home_seed = first->cfg.home_seed;
	if (put(wr->f, h, sizeof(*h), NULL) ||
	    put_names(wr->f, names, &h->names_size, &h->body_crc)) {
		writer_fail(wr, err, errlen, "cannot write", wr->tmp);
		return NULL;
	}
	return wr;
}

int pipe_state_writer_put(struct pipe_state_writer *wr, const void *records, uint32_t n,
			  char *err, size_t errlen)
{
	if (put(wr->f, records, (size_t)n * sizeof(struct state_record), &wr->h.body_crc))
		return writer_fail(wr, err, errlen, "cannot write", wr->tmp);
	wr->h.flows += n;
	return 0;
}

int pipe_state_writer_sync(struct pipe_state_writer *wr, uint64_t wall_ns, char *err,
			   size_t errlen)
{
	struct state_header *h = &wr->h;
	int rc;

	h->wall_ns = wall_ns;
	h->header_crc = crc32c(0, h, offsetof(struct state_header, header_crc));
	if (fseek(wr->f, 0, SEEK_SET) || put(wr->f, h, sizeof(*h), NULL) || fflush(wr->f) ||
	    fsync(wr->fd))
		return writer_fail(wr, err, errlen, "cannot write", wr->tmp);
	rc = fclose(wr->f);
	wr->f = NULL;
	wr->fd = -1;
	if (rc)
		return writer_fail(wr, err, errlen, "cannot write", wr->tmp);
	wr->synced = 1;
	return 0;
}

/* fsync the directory holding path, so that a rename into it is on disk
 * too (without, a power loss soon after could leave the old file). */
static int sync_dir_of(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	int fd, rc;

	if (n >= sizeof(dir))
		return -1;
	if (slash && n == 0)
		n = 1;	/* "/file": the root */
	memcpy(dir, slash ? path : ".", slash ? n : 1);
	dir[slash ? n : 1] = 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int pipe_state_writer_close(struct pipe_state_writer *wr, uint64_t wall_ns, uint64_t *flows,
			    char *err, size_t errlen)
{
	if (!wr->synced && pipe_state_writer_sync(wr, wall_ns, err, errlen))
		return -1;
	if (rename(wr->tmp, wr->path))
		return writer_fail(wr, err, errlen, "cannot rename to", wr->path);
	if (sync_dir_of(wr->path)) {	/* in place, but maybe not on disk */
		snprintf(err, errlen, "cannot sync the directory of %s: %s", wr->path,
			 strerror(errno));
		free(wr);
		return -1;
	}
	*flows = wr->h.flows;
	free(wr);
	return 0;
}

void pipe_state_writer_abort(struct pipe_state_writer *wr)
{
	if (!wr)
		return;
	if (wr->f)
		fclose(wr->f);
	else if (wr->fd >= 0)
		close(wr->fd);
	unlink(wr->tmp);
	free(wr);
}

int pipe_state_save(const char *path, struct pipe_worker *const *w, uint32_t n,
		    uint64_t now_ns, uint64_t wall_ns, struct pipe_state_counts *c, char *err,
		    size_t errlen)
{
	enum { ROOM = 256 };
	struct state_record buf[ROOM];
	uint32_t now = (uint32_t)(now_ns / 1000000000u);
	struct pipe_state_writer *wr;

	memset(c, 0, sizeof(*c));
	if (n == 0) {
		snprintf(err, errlen, "no workers");
		return -1;
	}
	wr = pipe_state_writer_open(path, w[0], n, w[0]->pol->view, 0, err, errlen);
	if (!wr)
		return -1;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t cursor = 0, got;
		int done;

		do {
			done = pipe_state_collect(w[k], k, w[0]->pol->view, now, &cursor,
						  UINT32_MAX, buf, ROOM, &got);
			if (pipe_state_writer_put(wr, buf, got, err, errlen))
				return -1;
		} while (!done);
	}
	return pipe_state_writer_close(wr, wall_ns, &c->flows, err, errlen);
}

static struct pipe_state *refuse(struct pipe_state *s, char *err, size_t errlen,
				 const char *path, const char *why)
{
	snprintf(err, errlen, "state file %s refused: %s", path, why);
	pipe_state_close(s);
	errno = EINVAL;
	return NULL;
}

/* The names section: rule_count + 1 NUL-terminated strings inside it. */
static int read_names(struct pipe_state *s)
{
	const char *p = (const char *)s->map + s->h->header_size;
	const char *end = p + s->h->names_size;

	s->names = calloc((size_t)s->h->rule_count + 1, sizeof(*s->names));
	if (!s->names)
		return -1;
	for (uint32_t r = 0; r <= s->h->rule_count; r++) {
		const char *nul = memchr(p, 0, (size_t)(end - p));

		if (!nul)
			return -1;
		s->names[r] = p;
		p = nul + 1;
	}
	return 0;
}

struct pipe_state *pipe_state_open(const char *path, char *err, size_t errlen)
{
	struct pipe_state *s;
	const struct state_header *h;
	struct stat st;
	uint64_t body;
	int fd;

	/* O_NONBLOCK: a FIFO put there must not hold the start up */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;

		if (e != ENOENT)
			fail(err, errlen, "cannot open", path);
		errno = e;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s || fstat(fd, &st)) {
		fail(err, errlen, "cannot read", path);
		free(s);
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return refuse(s, err, errlen, path, "not a regular file");
	}
	s->size = (size_t)st.st_size;
	if (s->size >= sizeof(*h)) {
		void *m = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, fd, 0);

		s->map = m == MAP_FAILED ? NULL : m;
	}
	close(fd);
	if (!s->map)
		return refuse(s, err, errlen, path, "shorter than its header, or unreadable");
	h = s->h = (const struct state_header *)s->map;
	if (memcmp(h->magic, STATE_MAGIC, 8))
		return refuse(s, err, errlen, path, "not a rampart state file");
	if ((h->version != STATE_VERSION && h->version != STATE_VERSION_UNMARKED) ||
	    h->header_size != sizeof(*h) ||
	    h->record_size != sizeof(struct state_record))
		return refuse(s, err, errlen, path, "written by another version of rampart");
	if (crc32c(0, h, offsetof(struct state_header, header_crc)) != h->header_crc)
		return refuse(s, err, errlen, path, "header checksum mismatch");
	body = s->size - sizeof(*h);
	/* every name takes at least its NUL: no more names than bytes */
	if (h->names_size % 8 || h->names_size > body || h->rule_count >= h->names_size ||
	    h->flows != (body - h->names_size) / sizeof(struct state_record) ||
	    (body - h->names_size) % sizeof(struct state_record))
		return refuse(s, err, errlen, path, "truncated or sizes inconsistent");
	if (crc32c(0, s->map + sizeof(*h), body) != h->body_crc)
		return refuse(s, err, errlen, path, "checksum mismatch (damaged or cut short)");
	if (read_names(s))
		return refuse(s, err, errlen, path, "rule names damaged");
	s->rec = (const struct state_record *)(s->map + sizeof(*h) + h->names_size);
	return s;
}

void pipe_state_close(struct pipe_state *s)
{
	if (!s)
		return;
	if (s->map)
		munmap((void *)s->map, s->size);
	free(s->names);
	free(s);
}

uint32_t pipe_state_workers(const struct pipe_state *s)
{
	return s->h->workers;
}

int pipe_state_handoff(const struct pipe_state *s)
{
	return !!(s->h->flags & STATE_HANDOFF);
}

uint64_t pipe_state_home_seed(const struct pipe_state *s)
{
	return s->h->home_seed;
}

/* A translated flow keeps its (address, port): taken in whichever of
 * the worker's pools it belongs to (release_nat gives it back). */
static struct nat_pool *pool_of_pair(struct pipe_worker *w, const struct ct_saved_flow *f,
				     uint32_t *slot)
{
	for (uint32_t i = 0; i < w->npools; i++) {
		struct nat_pool *p = &w->pools[i]->pool;

		if (p->family != f->family)
			continue;
		*slot = nat_pair_slot(p, f->reply_dst, f->reply_dport);
		if (*slot != NAT_SLOT_NONE)
			return p;
	}
	return NULL;
}

static int claim_nat(struct pipe_worker *w, const struct ct_saved_flow *f)
{
	uint32_t slot;
	struct nat_pool *p = pool_of_pair(w, f, &slot);

	return p ? nat_claim(p, slot) : -1;
}

/* The saving policy's rule numbers -> the running one's, by name. */
static uint32_t *map_rules(const struct pipe_state *s, const struct rfw_view *v)
{
	struct rule_index ix;
	uint32_t *map = malloc(((size_t)s->h->rule_count + 1) * sizeof(*map));

	if (!map || rule_index_build(&ix, v)) {
		free(map);
		return NULL;
	}
	map[0] = 0;
	for (uint32_t r = 1; r <= s->h->rule_count; r++)
		map[r] = rule_index_lookup(&ix, s->names[r]);
	rule_index_free(&ix);
	return map;
}

/* The workers (handoff) a saved flow's packets map to now: the original
 * direction by its tuple as DNAT leaves it (towards the reply's source),
 * the reply by its own. They agree for every flow without SNAT (the hash
 * is symmetric); a masqueraded flow's port was steered for the count
 * that saved it. */
static void homes(const struct pipe_worker *w, const struct ct_saved_flow *f, uint32_t *ho,
		  uint32_t *hr)
{
	*ho = pipe_home_of(w, f->orig_src, f->reply_src, f->orig_sport, f->reply_sport, f->proto,
			   f->family);
	*hr = pipe_home_of(w, f->reply_src, f->reply_dst, f->reply_sport, f->reply_dport, f->proto,
			   f->family);
}

/* The flow's source pair was translated: its reply goes back to another
 * pair (DNAT alone leaves that side; a flow SNAT gave its own address
 * and port cannot be told from one never translated, and is not taken). */
static int snat_flow(const struct ct_saved_flow *f)
{
	return memcmp(f->reply_dst, f->orig_src, f->family == 4 ? 4 : 16) != 0 ||
	       f->reply_dport != f->orig_sport;
}

/* The worker a saved flow goes to with n workers of another count (or
 * handoff): where its packets map, but a source-translated flow to the
 * worker whose share of the pool holds its port (its pair is taken
 * there, so the pools stay exact); a direction that maps elsewhere (a
 * masqueraded flow's port was steered for the other count) then finds
 * it by a redirect (add_redirects). */
static uint32_t place_flow(struct pipe_worker *const *w, uint32_t n, const struct ct_saved_flow *f)
{
	uint32_t ho, hr, slot;

	if (n == 1)
		return 0;
	homes(w[0], f, &ho, &hr);
	if (snat_flow(f))
		for (uint32_t k = 0; k < n; k++)
			if (pool_of_pair(w[k], f, &slot))
				return k;
	return ho;	/* (a pair no pool holds: the policy's change) */
}

/* A flow restored on worker k (its entry `flow` there): each direction
 * homed elsewhere gets a redirect there (pipe_worker.redirect), by its
 * packets' tuple, and k counts it among the flows redirected to. The
 * original direction is homed by the DNAT rules in force now, which may
 * not be those the file was written under: a flow they would send
 * elsewhere (moved, added) is redirected from there too. */
static int add_redirects(struct pipe_worker *const *w, uint32_t k, const struct ct_saved_flow *f,
			 uint32_t flow)
{
	uint32_t ho, hr, hn[PIPE_MAX_PORTS];
	int n, elsewhere;

	homes(w[0], f, &ho, &hr);
	n = pipe_dnat_homes(w[0], f->orig_src, f->orig_dst, f->orig_sport, f->orig_dport, f->proto,
			    f->family, hn);
	elsewhere = ho != k || hr != k;
	for (int i = 0; i < n; i++)
		elsewhere |= hn[i] != k;
	if (!elsewhere)
		return 0;
	if (pipe_redirect_target(w[k], flow))
		return -1;
	if (ho != k && pipe_redirect_add(w[ho], f->orig_src, f->orig_dst, f->orig_sport,
					 f->orig_dport, f->proto, k))
		return -1;
	for (int i = 0; i < n; i++)
		if (hn[i] != k && hn[i] != ho &&
		    pipe_redirect_add(w[hn[i]], f->orig_src, f->orig_dst, f->orig_sport,
				      f->orig_dport, f->proto, k))
			return -1;
	if (hr != k && pipe_redirect_add(w[hr], f->reply_src, f->reply_dst, f->reply_sport,
					 f->reply_dport, f->proto, k))
		return -1;
	return 0;
}

/* r's flow into w; saved_rule: its rule number in the saving policy
 * (the record's without the mark); recheck: due a re-check on its next
 * packet. */
static int restore_one(struct pipe_worker *w, const struct state_record *r, uint32_t saved_rule,
		       const uint32_t *map, uint32_t down, uint32_t now, int recheck, int moved,
		       int resync, struct pipe_state_counts *c, uint32_t *restored)
{
	struct ct_saved_flow f = r->flow;
	uint32_t rule, flow = CT_NONE;
	int st;

	rule = map[saved_rule] == RULE_MAP_GONE ? 0 : map[saved_rule];
	f.ttl = f.ttl > down ? f.ttl - down : 0;
	st = ct_flow_restore(w->ct, &f,
			     pipe_flow_rule(w->pol->tag | (recheck ? PIPE_TAG_RECHECK : 0), rule),
			     now, &flow);
	switch (st) {
	case CT_RESTORED:
		if (snat_flow(&f)) {
			if (claim_nat(w, &f))
				c->nat_unclaimed++;
			else if (!memcmp(f.reply_dst, f.orig_src, f.family == 4 ? 4 : 16))
				pipe_snat_own_address(w, flow);	/* its own address, not port */
		}
		if (resync)
			ct_flow_resync(w->ct, flow);
		c->restored++;
		c->rehomed += moved;
		c->rule_gone += map[saved_rule] == RULE_MAP_GONE;
		break;
	case CT_RESTORE_EXPIRED:
		c->expired++;
		break;
	case CT_RESTORE_DUP:
		c->duplicate++;
		break;
	case CT_RESTORE_FULL:
		c->full++;
		break;
	default:
		c->invalid++;
		break;
	}
	*restored = flow;
	return st;
}

int pipe_state_restore(const struct pipe_state *s, struct pipe_worker *const *w, uint32_t n,
		       uint64_t now_ns, uint64_t wall_ns, int recheck, struct pipe_state_counts *c,
		       char *err, size_t errlen)
{
	int handoff = n && w[0]->handoff;
	const struct state_header *h = s->h;
	uint32_t now = (uint32_t)(now_ns / 1000000000u), down = 0, *map;

	int place;	/* another count: each flow to the worker its packets map to */

	memset(c, 0, sizeof(*c));
	c->flows = h->flows;
	place = h->workers != n || pipe_state_handoff(s) != !!handoff;
	if (place && n > 1 && !handoff) {
		if (h->workers != n)
			snprintf(err, errlen, "written by %u workers, %u run now without handoff: "
				 "each keeps what its queue brings, so no telling whose its flows are",
				 h->workers, n);
		else
			snprintf(err, errlen, "written with handoff %s, it is %s now",
				 pipe_state_handoff(s) ? "on" : "off", handoff ? "on" : "off");
		return -1;
	}
	for (uint32_t k = 0; k < n; k++)
		if (!w[k]->ct && h->flows) {
			snprintf(err, errlen, "the policy is stateless now");
			return -1;
		}
	if (wall_ns > h->wall_ns)
		down = (uint32_t)((wall_ns - h->wall_ns + 999999999u) / 1000000000u);
	map = map_rules(s, w[0]->pol->view);
	if (!map) {
		snprintf(err, errlen, "out of memory mapping rule names");
		return -1;
	}
	for (uint64_t i = 0; i < h->flows; i++) {
		struct state_record rec = s->rec[i];
		const struct state_record *r = &rec;
		uint32_t k = r->worker, flow, rule = r->rule;
		int due = 0;

		/* a version 1 record has no mark: all its bits are the number
		 * (one with the top bit set is no rule of its policy) */
		if (h->version != STATE_VERSION_UNMARKED) {
			due = !!(r->rule & STATE_RULE_RECHECK);
			rule = r->rule & STATE_RULE_NUMBER;
		}
		if (r->worker >= h->workers || rule > h->rule_count) {
			c->invalid++;
			continue;
		}
		/* an IPv4 address is its first 4 bytes (ct_flow_restore keeps
		 * only those): the homes below hash all 16, so a record with
		 * bytes after them must not place the flow where none of its
		 * packets map */
		if (rec.flow.family == 4) {
			memset(rec.flow.orig_src + 4, 0, 12);
			memset(rec.flow.orig_dst + 4, 0, 12);
			memset(rec.flow.reply_src + 4, 0, 12);
			memset(rec.flow.reply_dst + 4, 0, 12);
		}
		if (place)
			k = place_flow(w, n, &r->flow);
		/* (a pair no pool of the worker holds is the policy's change:
		 * restored, counted nat_unclaimed) */
		if (restore_one(w[k], r, rule, map, down, now, recheck || due,
				place && k != r->worker, !!(h->flags & STATE_CHECKPOINT), c,
				&flow) == CT_RESTORED &&
		    handoff && n > 1 && add_redirects(w, k, &r->flow, flow)) {
			ct_remove(w[k]->ct, flow);	/* no memory for its redirect */
			c->restored--;
			c->rehomed -= place && k != r->worker;
			c->unplaced++;
		}
	}
	free(map);
	return 0;
}
