/* libFuzzer target: the policy compiler. Any YAML must be refused with
 * diagnostics or compile into an artifact that the loader accepts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "artifact.h"
#include "cls.h"
#include "rulec.h"

static char path[64];
static FILE *quiet;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	void *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!quiet) {
		quiet = fopen("/dev/null", "w");
		snprintf(path, sizeof(path), "/tmp/rampart-fuzz-rulec-%d.yaml", (int)getpid());
	}
	f = fopen(path, "w");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	if (rulec_compile(path, quiet, &buf, &len) == 0) {
		struct rfw_view v;
		char err[256];

		/* what rulec writes, the runtime must accept */
		if (rfw_view_init(&v, buf, len, err, sizeof(err)) != 0)
			abort();
		{
			struct cls_table t;
			struct pkt_key k = {.family = 4, .proto = 17, .has_ports = 1,
					    .sport = 53, .dport = 53};

			cls_table_init(&t, &v);
			cls_lookup(&t, &k);
		}
	}
	free(buf);
	return 0;
}
