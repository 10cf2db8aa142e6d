/* Frames the kernel or the NIC dropped before any worker saw them (the
 * backend's rx_loss op): read by the control thread for each request,
 * named and rendered the same way in stats' JSON and in /metrics. */
#ifndef RAMPART_DAEMON_CTL_RXLOSS_H
#define RAMPART_DAEMON_CTL_RXLOSS_H

#include <stdint.h>
#include "backend.h"
#include "ctl_buf.h"

#define CTL_RX_LOSS_REASONS 4

/* "ring_full", "no_buffer", "invalid", "other": JSON keys and the
 * metric's reason label, in the order of ctl_rx_loss_values. */
extern const char *const ctl_rx_loss_reason[CTL_RX_LOSS_REASONS];

void ctl_rx_loss_values(const struct backend_rx_loss *l, uint64_t v[CTL_RX_LOSS_REASONS]);

/* out[0..nports-1]: each port's losses. A backend without the op (be
 * NULL, or pcap's) or one that fails for a port gives zeros there: a
 * replay loses nothing below the workers, and a failed read must not
 * fail the whole answer. Control thread only (system calls). */
void ctl_rx_loss_read(struct backend *be, uint32_t nports, struct backend_rx_loss *out);

/* "rx_missed": N, "rx_missed_by_reason": {...} (no braces around). */
void ctl_rx_missed_json(struct ctl_buf *out, const struct backend_rx_loss *l);

#endif
