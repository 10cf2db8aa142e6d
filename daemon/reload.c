/* The reload sequence; the worker's half is reload_poll in worker.c. */
#include "reload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rule_map.h"
#include "worker.h"

#define RELOAD_WAIT_S 30	/* a worker not quiescent by then is stuck */

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

const char *reload_flows_name(enum pipe_flow_policy f)
{
	return f == PIPE_FLOWS_RECHECK ? "recheck" : "keep";
}

int reload_init(struct reloader *r, const struct rfw_view *view, const char *path,
		struct worker *const *workers, uint32_t nworkers, const char *const *ifnames,
		uint32_t nifs, enum pipe_flow_policy flows)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->workers = workers;
	r->nworkers = nworkers;
	r->ifnames = ifnames;
	r->nifs = nifs;
	r->flows = flows;
	r->view = view;
	snprintf(r->path, sizeof(r->path), "%s", path);
	snprintf(r->start_path, sizeof(r->start_path), "%s", path);
	atomic_init(&r->published, NULL);
	for (uint32_t k = 0; k < nworkers; k++)
		worker_follow(workers[k], &r->published);
	r->spare = calloc(nworkers ? nworkers : 1, sizeof(*r->spare));
	if (!r->spare)
		return -1;
	return rule_index_build(&r->names, view);
}

void reload_track_view(struct reloader *r, const struct rfw_view **slot)
{
	if (r->nslots < sizeof(r->view_slots) / sizeof(r->view_slots[0]))
		r->view_slots[r->nslots++] = slot;
	*slot = r->view;
}

void reload_lock(struct reloader *r)
{
	pthread_mutex_lock(&r->lock);
}

void reload_unlock(struct reloader *r)
{
	pthread_mutex_unlock(&r->lock);
}

static void free_gen(struct reload_gen *g)
{
	if (g)
		free(g->map);
	free(g);
}

static void close_owned(struct rfw_view *v)
{
	if (v) {
		rfw_close(v);
		free(v);
	}
}

void reload_free(struct reloader *r)
{
	/* after pipe_destroy: its policies were the workers', and borrowed
	 * its map */
	free_gen(r->gen);
	for (uint32_t k = 0; r->spare && k < r->nworkers; k++)
		pipe_counters_free(r->spare[k]);
	free(r->spare);
	free(r->carried);
	free(r->carried_limited);
	rule_index_free(&r->names);
	close_owned(r->owned);
	for (uint32_t i = 0; i < r->ndnat_kept; i++)
		close_owned(r->dnat_kept_owned[i]);
	pthread_mutex_destroy(&r->lock);
}

/* Every interface the policy names must be one rampartd serves: a zone
 * over an interface we do not have would silently never match. */
static int check_interfaces(const struct reloader *r, const struct rfw_view *v, char *err,
			    size_t errlen)
{
	for (uint32_t i = 0; i < v->interface_count; i++) {
		uint32_t k = 0;

		while (k < r->nifs &&
		       strncmp(v->interfaces[i].name, r->ifnames[k], sizeof(v->interfaces[i].name)))
			k++;
		if (k == r->nifs) {
			snprintf(err, errlen, "the policy names interface %.*s, which rampartd does "
				 "not serve (its interfaces are given with --interface)",
				 (int)sizeof(v->interfaces[i].name), v->interfaces[i].name);
			return -1;
		}
	}
	return 0;
}

/* Wait until every worker has adopted seq and swept; 0, or -1 when one
 * never does (it is stuck: the old tables are then never freed). */
static int wait_quiescent(struct reloader *r, uint64_t seq)
{
	const struct timespec pause = { 0, 20000 };	/* 20 us */
	uint64_t deadline = now_us() + RELOAD_WAIT_S * 1000000ull;

	for (uint32_t k = 0; k < r->nworkers; k++)
		while (atomic_load_explicit(&r->workers[k]->quiesced, memory_order_acquire) < seq) {
			if (now_us() > deadline)
				return -1;
			nanosleep(&pause, NULL);
		}
	return 0;
}

int reload_release_kept(struct reloader *r)
{
	const struct timespec pause = { 0, 20000 };	/* 20 us */
	uint64_t deadline = now_us() + RELOAD_WAIT_S * 1000000ull, seq;
	int done = 0;

	reload_lock(r);
	if (!r->ndnat_kept || r->stuck)
		goto out;
	for (uint32_t k = 0; k < r->nworkers; k++)
		if (pipe_dnat_kept_needed(r->workers[k]->pipe))
			goto out;
	seq = ++r->kept_drop_seq;
	for (uint32_t k = 0; k < r->nworkers; k++)
		atomic_store_explicit(&r->workers[k]->kept_drop_req, seq, memory_order_release);
	for (uint32_t k = 0; k < r->nworkers; k++)
		while (atomic_load_explicit(&r->workers[k]->kept_drop_done, memory_order_acquire) !=
		       seq) {
			if (now_us() > deadline)
				goto out;	/* asked again on the next tick */
			nanosleep(&pause, NULL);
		}
	/* no policy refers to the kept views any more */
	for (uint32_t i = 0; i < r->ndnat_kept; i++) {
		close_owned(r->dnat_kept_owned[i]);
		r->dnat_kept_owned[i] = NULL;
		r->dnat_kept[i] = NULL;
	}
	r->ndnat_kept = 0;
	r->kept_released++;
	done = 1;
out:
	reload_unlock(r);
	return done;
}

/* The released generation's counters, now final, go to the rules of the
 * same name in the new one. */
static int fold_counters(struct reloader *r, const struct rfw_view *nv, const uint32_t *map)
{
	uint32_t nold = r->view->policy->rule_count, nnew = nv->policy->rule_count;
	struct pipe_rule_stats *c = calloc((size_t)nnew + 1, sizeof(*c));
	uint64_t *cl = calloc((size_t)nnew + 1, sizeof(*cl));

	if (!c || !cl) {
		free(c);
		free(cl);
		return -1;
	}
	for (uint32_t n = 0; n <= nold; n++) {
		struct pipe_rule_stats s = reload_carried(r, n);
		uint64_t lim = reload_carried_limited(r, n);

		if (map[n] == RULE_MAP_GONE)
			continue;
		for (uint32_t k = 0; k < r->nworkers; k++) {
			const struct pipe_policy *old = r->workers[k]->retired;

			s.packets += pipe_policy_rule_stats(old)[n].packets;
			if (pipe_policy_rule_stats(old)[n].last_ns > s.last_ns)
				s.last_ns = pipe_policy_rule_stats(old)[n].last_ns;
			s.bytes += pipe_policy_rule_stats(old)[n].bytes;
			lim += pipe_policy_limited(old)[n];
		}
		c[map[n]].packets += s.packets;
		c[map[n]].bytes += s.bytes;
		if (s.last_ns > c[map[n]].last_ns)
			c[map[n]].last_ns = s.last_ns;
		cl[map[n]] += lim;
	}
	free(r->carried);
	free(r->carried_limited);
	r->carried = c;
	r->carried_limited = cl;
	return 0;
}

static void free_built(struct reload_gen *g)
{
	for (uint32_t k = 0; k < g->n; k++)
		pipe_policy_free(g->pol[k]);
	free_gen(g);
}

/* "PATH: WHY" into err with WHY whole: a path too long for both to fit
 * is shortened in its middle, so a refusal of a long path still says
 * why. WHY may start with the path (rfw_open's do): said once. */
static void refusal(char *err, size_t errlen, const char *path, const char *why)
{
	size_t plen = strlen(path), wlen, room, head;

	if (!strncmp(why, path, plen) && !strncmp(why + plen, ": ", 2))
		why += plen + 2;
	wlen = strlen(why);
	if (plen + 2 + wlen < errlen || errlen < wlen + 2 + 3 + 16 + 1) {
		snprintf(err, errlen, "%s: %s", path, why);
		return;
	}
	room = errlen - 1 - wlen - 2 - 3;	/* of the path, around "..." */
	head = room / 2;
	snprintf(err, errlen, "%.*s...%s: %s", (int)head, path, path + plen - (room - head), why);
}

int reload_run(struct reloader *r, const char *path, enum pipe_flow_policy flows,
	       struct reload_timing *t, char *err, size_t errlen)
{
	uint64_t t0 = now_us();
	struct rfw_view *nv;
	struct reload_gen *g = NULL;
	uint32_t *map = NULL;
	struct rule_index ix = {0};
	const struct rfw_view *keep[PIPE_DNAT_KEPT_MAX];
	uint32_t nkeep, dropped;
	int kept = 0;
	char why[PATH_MAX + 512];	/* rfw_open's name the path, then the reason */

	memset(t, 0, sizeof(*t));
	if (!path)
		path = r->start_path;
	if (r->stuck) {
		snprintf(err, errlen, "a worker never took the previous reload; restart rampartd");
		return -1;
	}
	if (strlen(path) >= sizeof(r->path)) {
		snprintf(why, sizeof(why), "a path of %zu bytes is longer than any file can have "
			 "(%zu)", strlen(path), sizeof(r->path) - 1);
		refusal(err, errlen, path, why);
		goto refused;
	}
	nv = calloc(1, sizeof(*nv));
	if (!nv) {
		snprintf(err, errlen, "out of memory");
		goto refused;
	}
	if (rfw_open(nv, path, why, sizeof(why))) {
		refusal(err, errlen, path, why);
		free(nv);
		goto refused;
	}
	/* The name index belongs to loading: it depends on this artifact
	 * alone (rule_map.h). */
	if (rule_index_build(&ix, nv) < 0) {
		snprintf(why, sizeof(why), "out of memory");
		goto bad;
	}
	t->mapped = now_us() - t0;
	if (check_interfaces(r, nv, why, sizeof(why)))
		goto bad;
	map = rule_map_build(r->view, &r->names, nv, &ix);
	g = calloc(1, sizeof(*g) + r->nworkers * sizeof(g->pol[0]));
	if (!map || !g) {
		snprintf(why, sizeof(why), "out of memory");
		goto bad;
	}
	g->seq = r->seq + 1;
	g->n = r->nworkers;
	g->map = map;		/* the generation owns it from here */
	map = NULL;
	nkeep = pipe_dnat_to_keep(r->view, r->dnat_kept, r->ndnat_kept, nv, keep, &dropped);
	if (r->prepare)
		r->prepare(r->prepare_ctx);
	for (uint32_t k = 0; k < r->nworkers; k++) {
		g->pol[k] = pipe_policy_build(r->workers[k]->pipe, nv, g->map, flows, &r->spare[k],
					      why, sizeof(why));
		if (!g->pol[k])
			goto bad;
		kept = pipe_policy_keep_dnat(r->workers[k]->pipe, g->pol[k], keep, nkeep);
		if (kept < 0) {
			snprintf(why, sizeof(why), "out of memory");
			goto bad;
		}
	}
	if (!kept)
		nkeep = dropped = 0;	/* no handoff: nothing to keep */
	if (r->hook && r->hook(r->hook_ctx, r->view, nv, why, sizeof(why)))
		goto bad;
	t->built = now_us() - t0;

	atomic_store_explicit(&r->published, g, memory_order_release);
	t->published = now_us() - t0;
	r->seq = g->seq;
	if (wait_quiescent(r, g->seq)) {
		/* Published but not taken by every worker: the old tables may
		 * still be in use, so they are left allocated. */
		r->stuck = 1;
		rule_index_free(&ix);
		snprintf(err, errlen, "published, but a worker did not pass a quiescent point "
			 "within %d s; old tables kept, restart rampartd", RELOAD_WAIT_S);
		return -1;
	}
	if (fold_counters(r, nv, g->map) < 0) {
		/* keep going: the new policy is in force; only history is lost */
		free(r->carried);
		free(r->carried_limited);
		r->carried = NULL;
		r->carried_limited = NULL;
	}
	/* The old generation's counters, read, become the next build's
	 * spares (cleared here, after the publish, not before the next). */
	for (uint32_t k = 0; k < r->nworkers; k++) {
		struct pipe_counters *c = pipe_counters_take(r->workers[k]->retired);

		pipe_counters_free(r->spare[k]);
		r->spare[k] = c;
		pipe_policy_free(r->workers[k]->retired);
		r->workers[k]->retired = NULL;
	}
	free_gen(r->gen);	/* its policies were the retired ones just freed */
	r->gen = g;
	/* The kept views: the one replaced now (kept, not closed) and those
	 * kept before that still are; the others no policy refers to any
	 * more. */
	{
		struct rfw_view *owned[PIPE_DNAT_KEPT_MAX] = {0};

		for (uint32_t i = 0; i < nkeep; i++) {
			if (keep[i] == r->view) {
				owned[i] = r->owned;
				r->owned = NULL;
				continue;
			}
			for (uint32_t j = 0; j < r->ndnat_kept; j++)
				if (r->dnat_kept[j] == keep[i]) {
					owned[i] = r->dnat_kept_owned[j];
					r->dnat_kept_owned[j] = NULL;
				}
		}
		for (uint32_t j = 0; j < r->ndnat_kept; j++)
			close_owned(r->dnat_kept_owned[j]);
		for (uint32_t i = 0; i < PIPE_DNAT_KEPT_MAX; i++) {
			r->dnat_kept[i] = i < nkeep ? keep[i] : NULL;
			r->dnat_kept_owned[i] = owned[i];
		}
		r->ndnat_kept = nkeep;
		t->dnat_kept = nkeep;
		t->dnat_dropped = dropped;
		if (dropped)
			fprintf(stderr, "rampartd: reload: the DNAT rules of the %d policies before "
					"are kept; %u older ones are not: connections they forwarded "
					"that still live lose their way\n", PIPE_DNAT_KEPT_MAX, dropped);
	}
	close_owned(r->owned);
	r->view = r->owned = nv;
	for (uint32_t s = 0; s < r->nslots; s++)
		*r->view_slots[s] = nv;
	/* a build for the ports' addresses passes r->path itself: copying a
	 * string onto itself with snprintf is undefined (glibc left it empty,
	 * and the next address change was refused as "not the policy in
	 * force") */
	if (path != r->path)
		snprintf(r->path, sizeof(r->path), "%s", path);
	rule_index_free(&r->names);
	r->names = ix;
	r->reloads++;
	t->released = now_us() - t0;
	r->last = *t;
	return 0;
bad:
	refusal(err, errlen, path, why);
	if (g)
		free_built(g);
	free(map);
	rule_index_free(&ix);
	rfw_close(nv);
	free(nv);
refused:
	r->refused++;
	return -1;
}
