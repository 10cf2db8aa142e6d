/* Replaying captures through the pipeline with libpcap: each input keeps
 * its next frame read ahead; a burst takes the oldest one again and
 * again (ties go to the input named first), copied into a slot with room
 * for a reply. */
#include "backend_pcap.h"

#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

static inline struct backend_pcap *pcap_of(struct backend *b)
{
	return (struct backend_pcap *)b;
}

static void read_ahead(struct pcap_input *in)
{
	struct pcap_pkthdr *h;
	const u_char *d;

	in->have = pcap_next_ex(in->pc, &h, &d) == 1;
	if (in->have) {
		in->ts = h->ts;
		in->caplen = h->caplen;
		in->data = d;
	}
}

static int older(const struct timeval *a, const struct timeval *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_usec < b->tv_usec);
}

static uint32_t pcap_rx_burst(struct backend *be, uint32_t queue, struct pipe_pkt *pkts,
			      uint64_t *handle, uint32_t n, uint64_t *now_ns)
{
	struct backend_pcap *b = pcap_of(be);
	uint32_t got = 0;
	uint64_t ns;

	(void)queue;
	if (n > PIPE_BURST)
		n = PIPE_BURST;
	while (got < n) {
		struct pcap_input *in = NULL;
		uint32_t len;

		for (uint32_t i = 0; i < b->nin; i++)
			if (b->in[i].have && (!in || older(&b->in[i].ts, &in->ts)))
				in = &b->in[i];
		if (!in)
			break;
		len = in->caplen;
		if (len > PCAP_SLOT_SIZE) {
			len = PCAP_SLOT_SIZE;
			b->truncated++;
		}
		memcpy(b->slot[got], in->data, len);
		b->slot_ts[got] = in->ts;
		pkts[got].data = b->slot[got];
		pkts[got].len = len;
		pkts[got].room = PCAP_SLOT_SIZE;
		pkts[got].in_port = (uint8_t)in->port;
		pkts[got].homed = 0;
		pkts[got].rx_flags = 0;
		handle[got] = got;
		got++;
		read_ahead(in);
	}
	if (!got)
		return 0;
	/* The burst's clock is its newest frame's time, never going back
	 * (inputs need not agree with each other). */
	ns = (uint64_t)b->slot_ts[got - 1].tv_sec * 1000000000u +
	     (uint64_t)b->slot_ts[got - 1].tv_usec * 1000u;
	if (ns > b->last_ns)
		b->last_ns = ns;
	*now_ns = b->last_ns;
	return got;
}

static uint32_t pcap_tx_burst(struct backend *be, uint32_t queue, uint32_t port,
			      struct pipe_pkt **pkts, uint64_t *handle, uint32_t n,
			      uint32_t *copied)
{
	struct backend_pcap *b = pcap_of(be);

	(void)queue;
	*copied = 0;	/* written from the input's own slot */
	if (!b->out[port]) {
		b->discarded += n;
		return n;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct pcap_pkthdr h = {
			.ts = b->slot_ts[handle[i] & BACKEND_HANDLE_FOREIGN ? 0 : handle[i]],
			.caplen = pkts[i]->len,
			.len = pkts[i]->len,
		};

		/* a frame of the pipeline's own (pipe_extra, a parked
		 * fragment run again) has no slot: the clock's time, never
		 * before what it came from (another worker's: never here, a
		 * replay runs one worker) */
		if (handle[i] & BACKEND_HANDLE_FOREIGN) {
			h.ts.tv_sec = (time_t)(b->last_ns / 1000000000u);
			h.ts.tv_usec = (suseconds_t)(b->last_ns % 1000000000u / 1000u);
		}

		pcap_dump((u_char *)b->out[port], &h, pkts[i]->data);
	}
	return n;
}

static void pcap_free(struct backend *be, uint32_t queue, uint32_t port, const uint64_t *handle,
		      uint32_t n)
{
	(void)be, (void)queue, (void)port, (void)handle, (void)n;	/* slots are reused */
}

static uint32_t pcap_service(struct backend *be, uint32_t queue)
{
	(void)be, (void)queue;
	return 0;
}

static int pcap_idle(struct backend *be, uint32_t queue, int timeout_ms, int wake_fd)
{
	(void)be, (void)queue, (void)timeout_ms, (void)wake_fd;
	return -1;	/* rx_burst found nothing: every input is at its end */
}

static const struct backend_ops pcap_ops = {
	.rx_burst = pcap_rx_burst,
	.tx_burst = pcap_tx_burst,
	.free = pcap_free,
	.service = pcap_service,
	.idle = pcap_idle,
	.rx_loss = NULL,	/* a replay reads every frame: nothing lost below the workers */
};

int backend_pcap_init(struct backend_pcap *b, uint32_t nports)
{
	memset(b, 0, sizeof(*b));
	b->be.ops = &pcap_ops;
	b->be.nports = nports;
	b->be.nqueues = 1;
	return 0;
}

int backend_pcap_add_input(struct backend_pcap *b, uint32_t port, const char *path, char *err,
			   size_t errlen)
{
	char why[PCAP_ERRBUF_SIZE] = "";
	struct pcap_input *in;

	if (b->nin == sizeof(b->in) / sizeof(b->in[0])) {
		snprintf(err, errlen, "%s: too many input captures", path);
		return -1;
	}
	in = &b->in[b->nin];
	in->pc = pcap_open_offline(path, why);
	if (!in->pc) {
		/* libpcap names the file itself in some messages, not in others */
		if (!strncmp(why, path, strlen(path)))
			snprintf(err, errlen, "%s", why);
		else
			snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	b->nin++;
	if (pcap_datalink(in->pc) != DLT_EN10MB) {
		snprintf(err, errlen, "%s: link type %s, not Ethernet", path,
			 pcap_datalink_val_to_name(pcap_datalink(in->pc)));
		return -1;
	}
	in->port = port;
	read_ahead(in);
	return 0;
}

int backend_pcap_set_output(struct backend_pcap *b, uint32_t port, const char *path, char *err,
			    size_t errlen)
{
	b->dead[port] = pcap_open_dead(DLT_EN10MB, PCAP_SLOT_SIZE);
	if (!b->dead[port]) {
		snprintf(err, errlen, "%s: cannot create a capture handle", path);
		return -1;
	}
	b->out[port] = pcap_dump_open(b->dead[port], path);
	if (!b->out[port]) {
		const char *why = pcap_geterr(b->dead[port]);

		if (!strncmp(why, path, strlen(path)))
			snprintf(err, errlen, "%s", why);
		else
			snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	return 0;
}

void backend_pcap_close(struct backend_pcap *b)
{
	for (uint32_t i = 0; i < b->nin; i++)
		if (b->in[i].pc)
			pcap_close(b->in[i].pc);
	for (uint32_t p = 0; p < PIPE_MAX_PORTS; p++) {
		if (b->out[p])
			pcap_dump_close(b->out[p]);
		if (b->dead[p])
			pcap_close(b->dead[p]);
	}
	b->nin = 0;
	memset(b->out, 0, sizeof(b->out));
	memset(b->dead, 0, sizeof(b->dead));
}
