/* TCP tracking for conntrack: per-direction sequence windows after Guido
 * van Rooij, "Real Stateful TCP Packet Filtering in IP Filter" (2000), as
 * OpenBSD pf applies them, and the connection states built on them. */
#include "ct.h"

#include "wire.h"
enum {
	TH_FIN = 0x01, TH_SYN = 0x02, TH_RST = 0x04, TH_ACK = 0x10,
	TCPOPT_EOL = 0, TCPOPT_NOP = 1, TCPOPT_WSCALE = 3,
};
#define WSCALE_NONE 0xfu
#define WSCALE_MAX 14u		/* RFC 7323 2.3: larger shifts are taken as 14 */
/* How far an ACK may run ahead of what we saw the other side send, or
 * lag behind it: one maximal unscaled window plus a segment (the slack pf
 * allows; packets we never saw, e.g. on a parallel path, stay legal). */
#define ACK_SLACK (65535u + 1500u)

/* Sequence space comparisons, modulo 2^32 (RFC 793 3.3). */
static inline int seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline int seq_leq(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }
static inline int seq_geq(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0; }

struct tcp_seg {
	uint32_t seq, ack, end;	/* end = seq + payload + SYN + FIN */
	uint32_t win;		/* as written (unscaled) */
	uint8_t flags;
	uint8_t wscale;		/* option value, or WSCALE_NONE */
};

/* Read the TCP header and the window scale option; 0 if it does not fit. */
static int tcp_read(const struct ct_pkt *p, struct tcp_seg *s)
{
	const uint8_t *f = p->frame;
	uint32_t off = p->meta->l4_off, end = pkt_ip_end(p->frame, p->len, p->meta), hlen, i;

	if (!off || end < off + 20)
		return 0;
	hlen = (uint32_t)(f[off + 12] >> 4) * 4;
	if (hlen < 20 || end < off + hlen)
		return 0;
	s->seq = rd32(f + off + 4);
	s->ack = rd32(f + off + 8);
	s->flags = f[off + 13];
	s->win = rd16(f + off + 14);
	s->end = s->seq + (end - off - hlen) + !!(s->flags & TH_SYN) + !!(s->flags & TH_FIN);
	s->wscale = WSCALE_NONE;
	if (!(s->flags & TH_SYN))
		return 1;	/* window scale is only read from SYNs */
	/* Options: kind, length, data; every read below stays < off + hlen. */
	for (i = off + 20; i < off + hlen;) {
		uint8_t kind = f[i], olen;

		if (kind == TCPOPT_EOL)
			break;
		if (kind == TCPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= off + hlen)
			break;
		olen = f[i + 1];
		if (olen < 2 || i + olen > off + hlen)
			break;
		if (kind == TCPOPT_WSCALE && olen == 3)
			s->wscale = f[i + 2] > WSCALE_MAX ? WSCALE_MAX : f[i + 2];
		i += olen;
	}
	return 1;
}

static inline unsigned wscale_of(const struct ct_flow *f, unsigned dir)
{
	unsigned w = (f->wscale >> (4 * dir)) & 0xf;

	return w == WSCALE_NONE ? 0 : w;
}

static void set_wscale(struct ct_flow *f, unsigned dir, unsigned w)
{
	f->wscale = (uint8_t)((f->wscale & ~(0xf << (4 * dir))) | (w << (4 * dir)));
}

/* A SYN's window is in bytes (never scaled, RFC 7323 2.2), max_win in
 * the sender's scaled units: the SYN's window in those, rounded up, so
 * that shifted back it is the SYN's again, not 2^shift times it (pf
 * does the same). */
static inline uint16_t syn_window_units(uint32_t win, unsigned shift)
{
	win = (win + (1u << shift) - 1) >> shift;
	return win ? (uint16_t)win : 1;
}

int ct_tcp_init(struct ct_flow *f, const struct ct_pkt *p)
{
	struct tcp_seg s;

	if (!tcp_read(p, &s) || (s.flags & (TH_SYN | TH_ACK | TH_RST | TH_FIN)) != TH_SYN)
		return 0;
	f->tstate[CT_DIR_ORIG] = CT_PEER_SYN_SENT;
	f->tstate[CT_DIR_REPLY] = CT_PEER_NONE;
	f->seqlo[CT_DIR_ORIG] = s.end;
	/* Until the reply side speaks, seqhi[ORIG] holds the initial sequence
	 * number so a retransmitted SYN is recognised. */
	f->seqhi[CT_DIR_ORIG] = s.seq;
	f->seqlo[CT_DIR_REPLY] = f->seqhi[CT_DIR_REPLY] = 0;
	/* in the units of the scale it offers; taken back to bytes by
	 * track_syn_ack when the other side does not scale */
	f->max_win[CT_DIR_ORIG] = syn_window_units(s.win, s.wscale == WSCALE_NONE ? 0 : s.wscale);
	f->max_win[CT_DIR_REPLY] = 0;
	f->wscale = (uint8_t)(WSCALE_NONE << 4 | s.wscale);
	return 1;
}

/* Only the SYN has been seen: its retransmission, a new SYN (the client
 * started over) or an RST for it. */
static int track_syn_sent(struct ct_flow *f, const struct ct_pkt *p, const struct tcp_seg *s)
{
	uint8_t fl = s->flags & (TH_SYN | TH_ACK | TH_RST | TH_FIN);

	if (fl == TH_SYN)
		return s->seq == f->seqhi[CT_DIR_ORIG] || ct_tcp_init(f, p);
	if ((fl & TH_RST) && (s->seq == f->seqhi[CT_DIR_ORIG] || s->seq == f->seqlo[CT_DIR_ORIG])) {
		f->tstate[0] = f->tstate[1] = CT_PEER_TIME_WAIT;
		f->flags |= CT_F_RST;
		return 1;
	}
	return 0;
}

/* First segment of the responder: a SYN+ACK (or RST+ACK, refused)
 * acknowledging the SYN: exactly, or, when the SYN carried data (TCP
 * Fast Open, RFC 7413), the SYN and none to all of its data: a server
 * that does not take the data (no cookie, a stale one) acknowledges the
 * SYN alone and the client sends the data again after the handshake.
 * Window scaling is on only when both SYNs carried the option (RFC 7323
 * 2.2). */
static int track_syn_ack(struct ct_flow *f, const struct tcp_seg *s)
{
	uint8_t fl = s->flags & (TH_SYN | TH_ACK | TH_RST | TH_FIN);
	const unsigned o = CT_DIR_ORIG, r = CT_DIR_REPLY;

	/* Simultaneous open (RFC 9293 3.5, figure 8): the other side's own
	 * bare SYN crossed this one. Without ACK its ack means nothing: taken
	 * as acknowledging none of the SYN (as pf takes it), so the
	 * originator stays SYN_SENT until a SYN+ACK of the other side's
	 * acknowledges it (ct_tcp_track, as any ack). */
	if (fl == TH_SYN) {
		if (!track_syn_ack(f, &(struct tcp_seg){s->seq, f->seqhi[o] + 1, s->end, s->win,
							 TH_SYN | TH_ACK, s->wscale}))
			return 0;
		f->tstate[o] = CT_PEER_SYN_SENT;	/* not acknowledged yet */
		return 1;
	}
	/* seqhi[o] still holds the SYN's sequence number, seqlo[o] its end */
	if (!seq_geq(s->ack, f->seqhi[o] + 1) || !seq_leq(s->ack, f->seqlo[o]))
		return 0;
	if (fl == (TH_RST | TH_ACK)) {
		f->tstate[o] = f->tstate[r] = CT_PEER_TIME_WAIT;
		f->flags |= CT_F_RST;
		return 1;
	}
	if (fl != (TH_SYN | TH_ACK))
		return 0;
	if ((f->wscale & 0xf) == WSCALE_NONE || s->wscale == WSCALE_NONE) {
		uint32_t orig = (uint32_t)f->max_win[o] << wscale_of(f, o);

		/* no scaling: the SYN's window back in bytes */
		f->max_win[o] = orig > 0xffff ? 0xffff : (uint16_t)orig;
		f->wscale = 0;
		f->max_win[r] = syn_window_units(s->win, 0);
	} else {
		set_wscale(f, r, s->wscale);
		f->max_win[r] = syn_window_units(s->win, s->wscale);
	}
	f->tstate[r] = CT_PEER_SYN_SENT;
	f->tstate[o] = CT_PEER_ESTABLISHED;	/* its SYN is acknowledged */
	f->seqlo[r] = s->end;
	/* Windows in SYN segments are never scaled (RFC 7323 2.2). */
	f->seqhi[o] = s->ack + (s->win ? s->win : 1);
	f->seqhi[r] = s->end + ((uint32_t)f->max_win[o] << wscale_of(f, o));
	return 1;
}

/* The first segment from src since a restore from a checkpoint: the
 * saved windows may be seconds behind (a transfer moved on meanwhile),
 * so its sequence and acknowledgement are taken as they are, as Linux
 * conntrack picks up a connection mid-stream; a side the other has not
 * re-learnt yet is placed at what this segment acknowledges. Not a SYN
 * or RST: a reset must still fall in the saved window. */
static int resync(struct ct_flow *f, unsigned src, const struct tcp_seg *s)
{
	const unsigned dst = !src;
	uint32_t dst_win = (uint32_t)f->max_win[dst] << wscale_of(f, dst);

	f->flags &= (uint8_t)~(CT_F_RESYNC_ORIG << src);
	if (s->win > f->max_win[src])
		f->max_win[src] = (uint16_t)s->win;
	f->seqlo[src] = s->end;
	f->seqhi[src] = s->end + (dst_win ? dst_win : 1);	/* until dst's ack says */
	if (s->flags & TH_ACK) {
		uint32_t win = s->win << wscale_of(f, src);

		f->seqhi[dst] = s->ack + (win ? win : 1);
		if (f->flags & (CT_F_RESYNC_ORIG << dst))
			f->seqlo[dst] = s->ack;
	}
	if ((s->flags & TH_FIN) && f->tstate[src] < CT_PEER_CLOSING)
		f->tstate[src] = CT_PEER_CLOSING;
	return 1;
}

int ct_tcp_track(struct ct_flow *f, unsigned dir, const struct ct_pkt *p)
{
	const unsigned src = dir, dst = !dir;
	struct tcp_seg s;
	uint32_t win, ack, dst_win;
	unsigned sws, dws;

	if (!tcp_read(p, &s))
		return 0;
	if (f->tstate[CT_DIR_REPLY] == CT_PEER_NONE)
		return dir == CT_DIR_ORIG ? track_syn_sent(f, p, &s) : track_syn_ack(f, &s);
	if (__builtin_expect(f->flags & (CT_F_RESYNC_ORIG << src), 0) &&
	    !(s.flags & (TH_SYN | TH_RST)))
		return resync(f, src, &s);

	/* A SYN's own window is unscaled; other windows scale by the
	 * sender's shift, the receiver's largest window by its own. */
	sws = (s.flags & TH_SYN) ? 0 : wscale_of(f, src);
	dws = wscale_of(f, dst);
	win = s.win << sws;
	dst_win = (uint32_t)f->max_win[dst] << dws;
	/* Without ACK, ack is meaningless: take it as acknowledging what the
	 * other side sent (as pf does), so only the sequence tests apply. */
	ack = (s.flags & TH_ACK) ? s.ack : f->seqlo[dst];

	/* van Rooij's four tests: the segment ends inside the window the
	 * receiver offered; starts no more than one receiver window back
	 * (retransmissions); its ack is neither ahead of what the receiver
	 * sent nor too far behind it. An RST must pass them too, so a blind
	 * reset needs to guess the window (RFC 5961's concern). */
	if (!seq_leq(s.end, f->seqhi[src]) ||
	    !seq_geq(s.seq, f->seqlo[src] - (dst_win ? dst_win : 1)) ||
	    !seq_leq(ack, f->seqlo[dst] + ACK_SLACK) ||
	    !seq_geq(ack, f->seqlo[dst] - (ACK_SLACK << sws)))
		return 0;

	{	/* a SYN's (a retransmitted SYN+ACK's) window is in bytes */
		uint16_t units = (s.flags & TH_SYN) ? syn_window_units(s.win, wscale_of(f, src))
						    : (uint16_t)s.win;

		if (units > f->max_win[src])
			f->max_win[src] = units;
	}
	if (seq_lt(f->seqlo[src], s.end))
		f->seqlo[src] = s.end;
	if (s.flags & TH_ACK) {
		uint32_t hi = ack + (win ? win : 1);

		if (seq_lt(f->seqhi[dst], hi))
			f->seqhi[dst] = hi;
		if (seq_geq(ack, f->seqlo[dst])) {
			if (f->tstate[dst] == CT_PEER_SYN_SENT)
				f->tstate[dst] = CT_PEER_ESTABLISHED;
			else if (f->tstate[dst] == CT_PEER_CLOSING)
				f->tstate[dst] = CT_PEER_FIN_WAIT_2;
		}
	}
	if ((s.flags & TH_FIN) && f->tstate[src] < CT_PEER_CLOSING)
		f->tstate[src] = CT_PEER_CLOSING;
	if (s.flags & TH_RST) {
		f->tstate[0] = f->tstate[1] = CT_PEER_TIME_WAIT;
		f->flags |= CT_F_RST;
	}
	if (f->tstate[0] >= CT_PEER_FIN_WAIT_2 && f->tstate[1] >= CT_PEER_FIN_WAIT_2)
		f->tstate[0] = f->tstate[1] = CT_PEER_TIME_WAIT;
	return 1;
}

int ct_tcp_seq_plausible(const struct ct_flow *f, unsigned sender, uint32_t seq)
{
	unsigned other = !sender;
	uint32_t back = (uint32_t)f->max_win[other] << wscale_of(f, other);

	if (f->tstate[sender] == CT_PEER_NONE)
		return 0;
	if (f->tstate[other] == CT_PEER_NONE)	/* only its SYN so far */
		return seq == f->seqhi[sender];
	return seq_geq(seq, f->seqlo[sender] - (back ? back : 1)) && seq_lt(seq, f->seqhi[sender]);
}

enum ct_tcp_state ct_tcp_flow_state(const struct ct_flow *f)
{
	unsigned o = f->tstate[CT_DIR_ORIG], r = f->tstate[CT_DIR_REPLY];

	if (f->flags & CT_F_RST)
		return CT_TCP_CLOSED;
	if (r == CT_PEER_NONE)
		return CT_TCP_SYN_SENT;
	if (o < CT_PEER_ESTABLISHED || r < CT_PEER_ESTABLISHED)
		return CT_TCP_SYN_RECV;
	if (o < CT_PEER_CLOSING && r < CT_PEER_CLOSING)
		return CT_TCP_ESTABLISHED;
	if (o == CT_PEER_TIME_WAIT && r == CT_PEER_TIME_WAIT)
		return CT_TCP_TIME_WAIT;
	if (o < CT_PEER_CLOSING || r < CT_PEER_CLOSING)
		return CT_TCP_FIN_WAIT;
	return CT_TCP_CLOSING;
}

const char *ct_tcp_state_name(unsigned s)
{
	static const char *const names[CT_TCP_STATE_COUNT] = {
		[CT_TCP_NONE] = "NONE",
		[CT_TCP_SYN_SENT] = "SYN_SENT",
		[CT_TCP_SYN_RECV] = "SYN_RECV",
		[CT_TCP_ESTABLISHED] = "ESTABLISHED",
		[CT_TCP_FIN_WAIT] = "FIN_WAIT",
		[CT_TCP_CLOSING] = "CLOSING",
		[CT_TCP_TIME_WAIT] = "TIME_WAIT",
		[CT_TCP_CLOSED] = "CLOSED",
	};
	return s < CT_TCP_STATE_COUNT ? names[s] : "?";
}
