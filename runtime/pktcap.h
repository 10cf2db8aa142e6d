/* Packet capture on demand (rampartctl capture): when the control thread
 * arms a worker's ring with a rule number (or "drops"), the worker copies
 * the frames of each burst that match, as they leave the pipeline (after
 * NAT; a dropped frame as it was dropped), with their verdict, into its
 * single-producer ring. Disarmed, it costs one relaxed load a burst. */
#ifndef RAMPART_PKTCAP_H
#define RAMPART_PKTCAP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PKTCAP_OFF 0xffffffffu		/* not armed */
#define PKTCAP_DROPS 0xfffffffeu	/* every dropped packet */
#define PKTCAP_SNAP 2048u		/* bytes kept of a frame */

struct pktcap_rec {
	uint64_t mono_ns;
	uint32_t rule;
	uint32_t len;		/* the frame's length */
	uint32_t caplen;	/* bytes in data */
	uint8_t verdict, drop, in_port, out_port;
	uint8_t data[PKTCAP_SNAP];
};

struct pktcap_ring {
	_Alignas(64) _Atomic uint32_t want;	/* PKTCAP_OFF, PKTCAP_DROPS or a rule */
	_Alignas(64) _Atomic uint32_t head;	/* the worker's */
	_Alignas(64) _Atomic uint32_t tail;	/* the reader's */
	_Alignas(64) uint32_t mask;
	struct pktcap_rec *rec;
	uint64_t full;		/* matches not copied: ring full */
};

int pktcap_ring_init(struct pktcap_ring *r, uint32_t size);	/* power of two; 0 or -1 */
void pktcap_ring_free(struct pktcap_ring *r);
/* Reader: one record into *out; 1, or 0 when empty. */
int pktcap_read(struct pktcap_ring *r, struct pktcap_rec *out);

#endif
