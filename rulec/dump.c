/* `rulec dump`: a human summary of a verified artifact, so an operator can
 * see what the runtime will load without reading YAML or hex. */
#include "rulec.h"

#include <inttypes.h>

static const char *section_name(uint32_t type)
{
	switch (type) {
	case RFW_SEC_STRINGS: return "strings";
	case RFW_SEC_POLICY: return "policy";
	case RFW_SEC_RULES: return "rules";
	case RFW_SEC_ACL: return "acl";
	case RFW_SEC_SOURCE: return "source";
	case RFW_SEC_CLS_TREES: return "cls-trees";
	case RFW_SEC_CLS_NODES: return "cls-nodes";
	case RFW_SEC_CLS_LEAVES: return "cls-leaves";
	}
	return "unknown";
}

void rulec_dump(const struct rfw_view *v, FILE *out)
{
	const struct rfw_section *tab =
		(const void *)((const char *)v->base + v->hdr->header_size);

	fprintf(out, "artifact: version %u.%u, %zu bytes, features 0x%" PRIx64 ", checksum 0x%08x\n",
		v->hdr->version_major, v->hdr->version_minor, v->size, v->hdr->features,
		v->hdr->checksum);
	fprintf(out, "source: %s\n", v->source[0] ? v->source : "(none)");
	fprintf(out, "sections: %u\n", v->hdr->section_count);
	for (uint32_t i = 0; i < v->hdr->section_count; i++)
		fprintf(out, "  %-10s offset %8" PRIu64 "  size %8" PRIu64 "  count %" PRIu64 "\n",
			section_name(tab[i].type), tab[i].offset, tab[i].size, tab[i].count);
	fprintf(out, "rules: %u (+ rule 0, default), acl entries: %u\n",
		v->policy->rule_count, v->acl_count);
	for (uint32_t r = 0; r <= v->policy->rule_count; r++)
		fprintf(out, "  %4u %-24s %-6s %u entr%s\n", r, rfw_rule_name(v, r),
			rfw_action_name(v->rules[r].action), v->rules[r].entry_count,
			v->rules[r].entry_count == 1 ? "y" : "ies");
}
