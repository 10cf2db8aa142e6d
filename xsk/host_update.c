/* xsk_update_ports_host: see host_update.h. */
#include "host_update.h"

#include <stdio.h>
#include <string.h>

int xsk_update_ports_host(uint32_t n, const char *const *names, const struct xsk_prog_cfg *new_cfg,
			  const struct xsk_prog_cfg *old_cfg, xsk_port_host_update update,
			  void *ctx, char *err, size_t errlen)
{
	char why[256];
	uint32_t failed;
	size_t at;
	int rc = -1;

	for (failed = 0; failed < n; failed++)
		if (update(ctx, failed, new_cfg, why, sizeof(why)))
			break;
	if (failed == n)
		return 0;
	snprintf(err, errlen, "%s: %s", names[failed], why);
	/* The one that refused too: an update stopped part way may have put
	 * some of the new addresses in already (they pass at once), and
	 * writing old_cfg is the same whatever it finds there. */
	for (uint32_t i = 0; i <= failed; i++) {
		if (!update(ctx, i, old_cfg, why, sizeof(why)))
			continue;
		at = strlen(err);
		if (at + 1 < errlen)
			snprintf(err + at, errlen - at, "; %s: cannot put the running policy's host "
				 "section back: %s", names[i], why);
		rc = -2;
	}
	return rc;
}
