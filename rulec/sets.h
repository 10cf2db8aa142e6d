/* Address sets and LPM tables as the artifact stores them: every table's
 * root and groups appended to one uint32 array (RFW_SEC_LPM_DATA). */
#ifndef RULEC_SETS_H
#define RULEC_SETS_H

#include "policy.h"

/* A network becomes an address set (one classifier entry, looked up by
 * LPM) when it is negated, comes from a file, or has more prefixes than
 * this; below it, one entry per prefix keeps the classifier's trees able
 * to split on the addresses. */
#define SET_MIN_PREFIXES 64

struct lpm_data {
	VEC(uint32_t) words;
	VEC(struct rfw_set) sets;
};

/* Append the table of (addr, len, value) prefixes of one family: its
 * reference in lpm_data, RFW_LPM_NONE offset when there are none. -1 on
 * out-of-memory. */
struct lpm_item {
	const uint8_t *addr;
	uint8_t len;
	uint32_t value;
};
int lpm_data_add(struct lpm_data *ld, unsigned family, const struct lpm_item *items, size_t n,
		 struct rfw_lpm_ref *ref);

/* A new set of the prefixes (both families); its index, or -1 on OOM. */
long sets_add(struct lpm_data *ld, uint32_t name_off, const pfx_list *pfx);

void lpm_data_free(struct lpm_data *ld);

#endif
