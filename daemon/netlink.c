/* RTM_GETNEIGH dumps with libmnl. Entries the kernel has resolved
 * (reachable, stale, delay, probe, permanent, noarp) on one of our ports
 * become next hops; incomplete and failed ones are skipped, and after a
 * complete dump the workers forget what it no longer had (mark and
 * sweep: `seen` is the mark). A stale MAC stays in use while the kernel
 * keeps the entry, as the kernel itself would use it until it learns
 * better. */
#include "netlink.h"

#include "ifaddr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#define NL_BUF_SIZE 32768

int nl_neigh_open(struct nl_neigh_sync *s, const int *ifindex, uint32_t nports,
		  struct worker *const *workers, uint32_t nworkers, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->ifindex, ifindex, nports * sizeof(*ifindex));
	s->nports = nports;
	s->workers = workers;
	s->nworkers = nworkers;
	s->told = calloc(1, sizeof(*s->told));
	s->seen = calloc(1, sizeof(*s->seen));
	s->failed = calloc(1, sizeof(*s->failed));
	s->present = calloc(1, sizeof(*s->present));
	s->pinned = calloc(1, sizeof(*s->pinned));
	s->buf = malloc(NL_BUF_SIZE);
	if (!s->told || !s->seen || !s->failed || !s->present || !s->pinned || !s->buf) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		nl_neigh_close(s);
		return -1;
	}
	neigh_init(s->told);
	neigh_init(s->pinned);
	nl_neigh_dump_begin(s);
	s->nl = mnl_socket_open(NETLINK_ROUTE);
	if (!s->nl || mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "rtnetlink socket: %s", strerror(errno));
		nl_neigh_close(s);
		return -1;
	}
	s->portid = mnl_socket_get_portid(s->nl);
	s->seq = (uint32_t)time(NULL);
	return 0;
}

void nl_neigh_close(struct nl_neigh_sync *s)
{
	if (s->nl)
		mnl_socket_close(s->nl);
	free(s->told);
	free(s->seen);
	free(s->failed);
	free(s->present);
	free(s->pinned);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

struct nl_attrs {
	const struct nlattr *dst, *lladdr;
};

static int attr_cb(const struct nlattr *a, void *data)
{
	struct nl_attrs *at = data;

	if (mnl_attr_get_type(a) == NDA_DST)
		at->dst = a;
	else if (mnl_attr_get_type(a) == NDA_LLADDR)
		at->lladdr = a;
	return MNL_CB_OK;
}

static void post(struct nl_neigh_sync *s, uint32_t port, uint8_t family, const uint8_t *addr,
		 const uint8_t *mac)
{
	const uint8_t *known = neigh_lookup(s->told, (uint8_t)port, family, addr);
	int ok = 1;

	if (known && !memcmp(known, mac, 6))
		return;
	for (uint32_t k = 0; k < s->nworkers; k++)
		if (worker_neigh_post(s->workers[k], port, family, addr, mac))
			ok = 0;
	if (!ok) {
		s->ring_full++;	/* not remembered: posted again next time */
		return;
	}
	(void)neigh_set(s->told, (uint8_t)port, family, addr, mac);
	s->posted++;
}

int nl_neigh_pin(struct nl_neigh_sync *s, uint32_t port, uint8_t family, const uint8_t *addr,
		 const uint8_t mac[6])
{
	return neigh_set(s->pinned, (uint8_t)port, family, addr, mac);
}

void nl_neigh_dump_begin(struct nl_neigh_sync *s)
{
	neigh_init(s->seen);
	neigh_init(s->failed);
	neigh_init(s->present);
	s->seen_full = 0;
}

void nl_neigh_unresolved(struct nl_neigh_sync *s, uint32_t port, uint8_t family,
			 const uint8_t *addr, int failed)
{
	static const uint8_t none[6];

	if (neigh_set(s->present, (uint8_t)port, family, addr, none) ||
	    (failed && neigh_set(s->failed, (uint8_t)port, family, addr, none)))
		s->seen_full = 1;
}

void nl_neigh_seen(struct nl_neigh_sync *s, uint32_t port, uint8_t family, const uint8_t *addr,
		   const uint8_t mac[6])
{
	if (neigh_lookup(s->pinned, (uint8_t)port, family, addr))
		return;
	if (neigh_set(s->seen, (uint8_t)port, family, addr, mac))
		s->seen_full = 1;
	post(s, port, family, addr, mac);
}

/* What the workers were told and the dump did not have resolved: FAILED
 * is forgotten; gone from the kernel's table is asked for again (up to
 * NL_SWEEP_ASKS a dump), kept if the kernel takes the request (the next
 * dumps say how it went), forgotten if it refuses; unresolved for now
 * (INCOMPLETE, being asked) waits. A slot is looked at again after a
 * delete (the table's backward shift may move a later entry into it);
 * one the rings had no room for stays, for the next dump. */
void nl_neigh_sweep(struct nl_neigh_sync *s,
		    int (*ask)(struct nl_neigh_sync *s, const struct pipe_nexthop *hop))
{
	uint32_t asks = NL_SWEEP_ASKS;

	if (s->seen_full)
		return;		/* the mark is incomplete: forget nothing */
	for (uint32_t i = 0; i < NEIGH_SLOTS; i++) {
		const struct neigh_entry *e = &s->told->slot[i];
		int ok = 1;

		if (!e->family || neigh_lookup(s->seen, e->port, e->family, e->addr))
			continue;
		if (!neigh_lookup(s->failed, e->port, e->family, e->addr)) {
			struct pipe_nexthop hop = {.port = e->port, .family = e->family};

			if (neigh_lookup(s->present, e->port, e->family, e->addr) || !asks)
				continue;
			asks--;
			s->sweep_asks++;
			memcpy(hop.addr, e->addr, sizeof(hop.addr));
			if (!ask(s, &hop))
				continue;
			s->ask_errors++;
		}
		for (uint32_t k = 0; k < s->nworkers; k++)
			if (worker_neigh_cmd(s->workers[k], WORKER_NEIGH_FORGET, e->port, e->family,
					     e->addr, e->mac))
				ok = 0;
		if (!ok) {
			s->ring_full++;
			continue;
		}
		s->forgotten++;
		(void)neigh_del(s->told, e->port, e->family, e->addr);
		i--;	/* the slot again: a later entry may have moved into it */
	}
}

static int neigh_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_neigh_sync *s = data;
	const struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);
	struct nl_attrs at = { NULL, NULL };
	uint8_t family, addr[16] = { 0 };
	uint32_t port;

	int resolved;

	if (nlh->nlmsg_type != RTM_NEWNEIGH)
		return MNL_CB_OK;
	resolved = !!(nd->ndm_state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE |
				       NUD_PERMANENT | NUD_NOARP));
	for (port = 0; port < s->nports && s->ifindex[port] != nd->ndm_ifindex; port++)
		;
	if (port == s->nports)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*nd), attr_cb, &at);
	family = nd->ndm_family == AF_INET ? 4 : nd->ndm_family == AF_INET6 ? 6 : 0;
	if (!at.dst || !family || mnl_attr_get_payload_len(at.dst) != (family == 4 ? 4u : 16u))
		return MNL_CB_OK;
	memcpy(addr, mnl_attr_get_payload(at.dst), family == 4 ? 4 : 16);
	if (!resolved || !at.lladdr || mnl_attr_get_payload_len(at.lladdr) != 6) {
		nl_neigh_unresolved(s, port, family, addr, !!(nd->ndm_state & NUD_FAILED));
		return MNL_CB_OK;
	}
	nl_neigh_seen(s, port, family, addr, mnl_attr_get_payload(at.lladdr));
	return MNL_CB_OK;
}

/* RTM_NEWNEIGH with NTF_USE (and NLM_F_CREATE: the entry may not exist):
 * the kernel starts resolving the address (neigh_event_send), as if it
 * had a packet for it. 0, or -1 with errno from the kernel's answer. */
static int ask_one(struct nl_neigh_sync *s, const struct pipe_nexthop *h)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(s->buf);
	struct ndmsg *nd;
	uint32_t seq = ++s->seq;
	ssize_t n;

	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = h->family == 4 ? AF_INET : AF_INET6;
	nd->ndm_ifindex = s->ifindex[h->port];
	nd->ndm_state = NUD_NONE;
	nd->ndm_flags = NTF_USE;
	mnl_attr_put(nlh, NDA_DST, h->family == 4 ? 4 : 16, h->addr);
	if (mnl_socket_sendto(s->nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	n = mnl_socket_recvfrom(s->nl, s->buf, NL_BUF_SIZE);
	if (n <= 0)
		return -1;
	return mnl_cb_run(s->buf, (size_t)n, seq, s->portid, NULL, NULL) < 0 ? -1 : 0;
}

int nl_neigh_refresh(struct nl_neigh_sync *s, char *err, size_t errlen)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(s->buf);
	struct ndmsg *nd;
	uint64_t before = s->posted;
	uint32_t seq = ++s->seq;
	ssize_t n;
	int r = MNL_CB_OK;

	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = AF_UNSPEC;
	if (mnl_socket_sendto(s->nl, nlh, nlh->nlmsg_len) < 0) {
		snprintf(err, errlen, "RTM_GETNEIGH: %s", strerror(errno));
		return -1;
	}
	nl_neigh_dump_begin(s);
	while (r > MNL_CB_STOP) {
		n = mnl_socket_recvfrom(s->nl, s->buf, NL_BUF_SIZE);
		if (n <= 0) {
			snprintf(err, errlen, "RTM_GETNEIGH reply: %s", n ? strerror(errno) : "closed");
			return -1;
		}
		r = mnl_cb_run(s->buf, (size_t)n, seq, s->portid, neigh_cb, s);
	}
	if (r < 0) {
		snprintf(err, errlen, "RTM_GETNEIGH: %s", strerror(errno));
		return -1;
	}
	nl_neigh_sweep(s, ask_one);	/* only after a complete dump */
	return (int)(s->posted - before);
}

static int asked_lately(struct nl_neigh_sync *s, const struct pipe_nexthop *h, uint64_t now_ms)
{
	for (uint32_t k = 0; k < NL_ASKED; k++) {
		const struct nl_asked *a = &s->asked[k];

		if (a->at_ms && now_ms - a->at_ms < NL_ASK_AGAIN_MS && a->hop.port == h->port &&
		    a->hop.family == h->family && !memcmp(a->hop.addr, h->addr, 16))
			return 1;
	}
	return 0;
}

uint32_t nl_neigh_ask(struct nl_neigh_sync *s, uint64_t now_ms)
{
	struct pipe_nexthop hop[WORKER_RESOLVE_RING];
	uint32_t asked = 0;

	for (uint32_t k = 0; k < s->nworkers; k++) {
		uint32_t n = worker_take_unresolved(s->workers[k], hop, WORKER_RESOLVE_RING);

		for (uint32_t i = 0; i < n; i++) {
			struct nl_asked *a;

			if (hop[i].port >= s->nports || asked_lately(s, &hop[i], now_ms))
				continue;
			a = &s->asked[s->asked_next];
			s->asked_next = (s->asked_next + 1) % NL_ASKED;
			a->hop = hop[i];
			a->at_ms = now_ms ? now_ms : 1;
			if (ask_one(s, &hop[i]) < 0)
				s->ask_errors++;
			s->asks++;
			asked++;
		}
	}
	if (asked)
		s->last_ask_ms = now_ms;
	return asked;
}

void nl_mtu_refresh(struct nl_neigh_sync *s)
{
	char name[IF_NAMESIZE];

	for (uint32_t port = 0; port < s->nports; port++) {
		int mtu;

		if (s->mtu_fixed[port] || !if_indextoname((unsigned)s->ifindex[port], name))
			continue;
		mtu = ifaddr_mtu(name);
		if (s->mtu_max[port] && mtu > (int)s->mtu_max[port])
			mtu = (int)s->mtu_max[port];
		if (mtu <= 0 || (uint32_t)mtu == s->mtu[port])
			continue;
		s->mtu[port] = (uint32_t)mtu;
		for (uint32_t k = 0; k < s->nworkers; k++)
			worker_post_mtu(s->workers[k], port, (uint32_t)mtu);
	}
}
