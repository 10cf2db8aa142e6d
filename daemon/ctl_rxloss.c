/* Reading and naming the backend's rx_loss counters (ctl_rxloss.h). */
#include "ctl_rxloss.h"

#include <string.h>

const char *const ctl_rx_loss_reason[CTL_RX_LOSS_REASONS] = {
	"ring_full", "no_buffer", "invalid", "other",
};

void ctl_rx_loss_values(const struct backend_rx_loss *l, uint64_t v[CTL_RX_LOSS_REASONS])
{
	v[0] = l->ring_full;
	v[1] = l->no_buffer;
	v[2] = l->invalid;
	v[3] = l->other;
}

void ctl_rx_loss_read(struct backend *be, uint32_t nports, struct backend_rx_loss *out)
{
	memset(out, 0, nports * sizeof(*out));
	if (!be || !be->ops->rx_loss)
		return;
	for (uint32_t p = 0; p < nports; p++)
		if (be->ops->rx_loss(be, p, &out[p]))
			memset(&out[p], 0, sizeof(out[p]));
}

void ctl_rx_missed_json(struct ctl_buf *out, const struct backend_rx_loss *l)
{
	uint64_t v[CTL_RX_LOSS_REASONS];

	ctl_rx_loss_values(l, v);
	ctl_printf(out, "\"rx_missed\": %llu, \"rx_missed_by_reason\": {",
		   (unsigned long long)backend_rx_loss_total(l));
	for (int k = 0; k < CTL_RX_LOSS_REASONS; k++)
		ctl_printf(out, "%s\"%s\": %llu", k ? ", " : "", ctl_rx_loss_reason[k],
			   (unsigned long long)v[k]);
	ctl_puts(out, "}");
}
