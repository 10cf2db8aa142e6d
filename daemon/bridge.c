/* The bridge worker loop. Per RX batch: parse every frame, classify the IP
 * ones in one cls_lookup_batch call, count, copy accepted and non-IP frames
 * into TX frames of the other port. No allocation, no locks, and syscalls
 * only per batch (TX kick) or when idle (poll). */
#include "bridge.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#define BRIDGE_IDLE_MS 100	/* how long the stop flag may go unseen */

enum bridge_verdict { BRIDGE_DROP = 0, BRIDGE_FORWARD = 1 };

/* Scratch for one batch, on the worker's stack. */
struct bridge_batch {
	struct pkt_meta meta[XSK_BATCH];
	const struct pkt_key *keys[XSK_BATCH];
	uint32_t key_of[XSK_BATCH];	/* batch index of keys[i] */
	uint32_t rules[XSK_BATCH];
	uint8_t verdict[XSK_BATCH];
};

/* Classify and count one batch; fills verdict[]. Returns frames to send. */
static uint32_t bridge_decide(struct bridge *b, struct bridge_batch *bt,
			      const struct xsk_queue *in, uint32_t idx, uint32_t n,
			      struct counters_if *rx, int side)
{
	const struct rfw_rule *rules = b->view->rules;
	uint8_t def = b->view->policy->default_action;
	uint32_t nkeys = 0, nfwd = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&in->rx, idx + i);
		struct pkt_meta *m = &bt->meta[i];

		rx->rx_packets++;
		rx->rx_bytes += d->len;
		pkt_parse(xsk_pool_data(&in->pool, d->addr), d->len, m);
		switch (m->kind) {
		case PKT_IP:
			/* Bridge mode knows the egress before classifying. */
			m->key.in_if = b->if_index[side];
			m->key.out_if = b->if_index[!side];
			bt->keys[nkeys] = &m->key;
			bt->key_of[nkeys++] = i;
			break;
		case PKT_NON_IP:
			/* ARP, LLDP: bridged unchanged (CLI.md). */
			rx->non_ip++;
			bt->verdict[i] = BRIDGE_FORWARD;
			nfwd++;
			continue;
		default:
			rx->malformed++;
			rx->reason[m->reason < PKT_REASON_COUNT ? m->reason : 0]++;
			rx->dropped++;
			bt->verdict[i] = BRIDGE_DROP;
			continue;
		}
	}

	cls_lookup_batch(&b->acl, bt->keys, nkeys, bt->rules);

	for (uint32_t k = 0; k < nkeys; k++) {
		uint32_t i = bt->key_of[k], r = bt->rules[k];
		uint8_t action = r ? rules[r].action : def;
		struct counters_rule *rc = &b->ctr->rules[r];

		rc->packets++;
		rc->bytes += xsk_ring_cons__rx_desc(&in->rx, idx + i)->len;
		/* Reject is a drop for now: sending TCP RST / ICMP
		 * unreachable comes with its own issue. */
		if (action == RFW_ACTION_ACCEPT) {
			bt->verdict[i] = BRIDGE_FORWARD;
			nfwd++;
		} else {
			bt->verdict[i] = BRIDGE_DROP;
			rx->dropped++;
		}
	}
	return nfwd;
}

/* Move one RX batch from port side to the other. Returns frames received. */
static uint32_t bridge_pump(struct bridge *b, struct bridge_batch *bt, int side)
{
	struct xsk_queue *in = &b->ports[side]->queues[0];
	struct xsk_queue *out = &b->ports[!side]->queues[0];
	struct counters_if *rx = &b->ctr->ifs[side], *tx = &b->ctr->ifs[!side];
	uint32_t n, idx = 0, tidx = 0, nfwd, room, sent = 0;

	n = xsk_ring_cons__peek(&in->rx, XSK_BATCH, &idx);
	if (!n)
		return 0;
	nfwd = bridge_decide(b, bt, in, idx, n, rx, side);

	room = xsk_queue_tx_room(out, nfwd);
	if (room < nfwd) {
		xsk_queue_service(out);	/* completions free TX frames */
		room = xsk_queue_tx_room(out, nfwd);
	}
	if (room)
		xsk_ring_prod__reserve(&out->tx, room, &tidx);

	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&in->rx, idx + i);

		if (bt->verdict[i] == BRIDGE_FORWARD) {
			if (sent < room) {
				struct xdp_desc *t = xsk_ring_prod__tx_desc(&out->tx, tidx + sent);

				/* One copy: each port has its own UMEM. */
				t->addr = xsk_pool_get(&out->pool);
				t->len = d->len;
				t->options = 0;
				memcpy(xsk_pool_data(&out->pool, t->addr),
				       xsk_pool_data(&in->pool, d->addr), d->len);
				tx->tx_packets++;
				tx->tx_bytes += d->len;
				sent++;
			} else {
				rx->tx_full++;
				rx->dropped++;
			}
		}
		xsk_pool_put(&in->pool, d->addr);
	}
	xsk_ring_cons__release(&in->rx, n);
	if (sent) {
		xsk_ring_prod__submit(&out->tx, sent);
		out->tx_inflight += sent;
		xsk_queue_kick_tx(out);
	}
	xsk_pool_refill(&in->pool);
	return n;
}

static void *bridge_main(void *arg)
{
	struct bridge *b = arg;
	struct xsk_queue *q0 = &b->ports[0]->queues[0], *q1 = &b->ports[1]->queues[0];
	struct pollfd pfd[2] = {
		{ .fd = q0->fd, .events = POLLIN },
		{ .fd = q1->fd, .events = POLLIN },
	};
	struct bridge_batch bt;

	while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		uint32_t work = 0;

		work += bridge_pump(b, &bt, 0);
		work += bridge_pump(b, &bt, 1);
		work += xsk_queue_service(q0);
		work += xsk_queue_service(q1);
		if (work)
			continue;
		/* Idle: sleep in the kernel until a frame arrives. While TX
		 * frames are still out, wake soon to kick and reap them. */
		poll(pfd, 2, q0->tx_inflight || q1->tx_inflight ? 1 : BRIDGE_IDLE_MS);
	}
	return NULL;
}

static uint8_t bridge_if_index(const struct rfw_view *view, const char *ifname)
{
	for (uint32_t i = 0; i < view->interface_count && i < RFW_MAX_INTERFACES; i++)
		if (!strncmp(view->interfaces[i].name, ifname,
			     sizeof(view->interfaces[i].name)))
			return (uint8_t)i;
	return BRIDGE_NO_IF;
}

int bridge_start(struct bridge *b, struct xsk_port *a, struct xsk_port *bp,
		 const struct rfw_view *view, struct counters *ctr)
{
	memset(b, 0, sizeof(*b));
	b->ports[0] = a;
	b->ports[1] = bp;
	b->view = view;
	/* The compiled trees when the artifact has them, else the list. */
	cls_table_init(&b->acl, view);
	b->ctr = ctr;
	b->if_index[0] = bridge_if_index(view, a->ifname);
	b->if_index[1] = bridge_if_index(view, bp->ifname);
	atomic_init(&b->stop, 0);
	return pthread_create(&b->thread, NULL, bridge_main, b);
}

void bridge_stop(struct bridge *b)
{
	atomic_store(&b->stop, 1);
	pthread_join(b->thread, NULL);
}
