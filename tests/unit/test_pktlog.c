/* The packet log: the ring drops (and counts) what does not fit instead
 * of waiting, the per-rule bucket lets `rate` records a second through,
 * and a record becomes one JSON line with its translation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "logger.h"
#include "pipeline.h"
#include "pktlog.h"

static void test_ring_full_is_counted(void **state)
{
	struct pktlog_ring r;
	struct pktlog_rec out[8];
	(void)state;

	assert_int_equal(pktlog_ring_init(&r, 4), 0);
	for (int i = 0; i < 6; i++) {
		struct pktlog_rec *rec = pktlog_claim(&r);

		if (i < 4) {
			assert_non_null(rec);
			rec->rule = (uint32_t)i;
			pktlog_commit(&r);
		} else {
			assert_null(rec);
		}
	}
	assert_int_equal(r.full, 2);
	assert_int_equal(pktlog_read(&r, out, 8), 4);
	assert_int_equal(out[3].rule, 3);
	assert_non_null(pktlog_claim(&r));	/* room again */
	pktlog_ring_free(&r);
	assert_int_equal(pktlog_ring_init(&r, 3), -1);	/* not a power of two */
}

static void test_bucket_rate(void **state)
{
	struct pktlog_bucket b = {0, 0};
	uint64_t t = 5000000000ull;
	int passed = 0;
	(void)state;

	for (int i = 0; i < 1000; i++)		/* a burst at one instant */
		passed += pktlog_allow(&b, 10, t);
	assert_int_equal(passed, 10);
	passed = 0;
	for (int i = 0; i < 1000; i++)		/* then 1000 over one second */
		passed += pktlog_allow(&b, 10, t + (uint64_t)(i + 1) * 1000000u);
	assert_int_equal(passed, 10);
	assert_int_equal(pktlog_allow(&b, 10, t + 100000000000ull), 1);	/* long idle: full */
}

static void test_format(void **state)
{
	struct logger l;
	const char *names[2] = {"lan0", "wan0"};
	struct pktlog_rec r;
	char line[1024];
	(void)state;

	memset(&l, 0, sizeof(l));
	l.ifnames = names;
	l.nports = 2;
	l.real_minus_mono = 1764547200ll * 1000000000ll;	/* 2025-12-01T00:00:00Z at 0 */
	memset(&r, 0, sizeof(r));
	r.mono_ns = 1500000000ull;
	r.rule = 3;
	strcpy(r.name, "lan-out");
	r.verdict = PIPE_FORWARD;
	r.in_port = 0;
	r.out_port = 1;
	r.nat = 1;
	r.key = (struct pkt_key){.src = {10, 1, 0, 5}, .dst = {10, 200, 0, 1}, .sport = 40000,
				 .dport = 443, .family = 4, .proto = 6, .has_ports = 1};
	r.wire = r.key;
	memcpy(r.wire.src, (uint8_t[]){10, 0, 1, 1}, 4);
	r.wire.sport = 20001;
	logger_format(&l, &r, line, sizeof(line));
	assert_string_equal(line,
		"{\"time\": \"2025-12-01T00:00:01.500000Z\", \"event\": \"rule\", \"rule\": \"lan-out\", "
		"\"rule_number\": 3, \"verdict\": \"accept\", \"in\": \"lan0\", \"out\": \"wan0\", "
		"\"family\": 4, \"proto\": 6, \"src\": \"10.1.0.5\", \"dst\": \"10.200.0.1\", "
		"\"sport\": 40000, \"dport\": 443, \"nat\": {\"src\": \"10.0.1.1\", \"sport\": 20001, "
		"\"dst\": \"10.200.0.1\", \"dport\": 443}}");
	r.verdict = PIPE_DROP;
	r.drop = PIPE_DROP_CT_INVALID;
	r.invalid = 1;
	r.nat = 0;
	r.rule = 0;
	strcpy(r.name, "default");
	logger_format(&l, &r, line, sizeof(line));
	assert_non_null(strstr(line, "\"event\": \"invalid\""));
	assert_non_null(strstr(line, "\"verdict\": \"drop\", \"reason\": \"ct-invalid\", \"in\": \"lan0\", \"family\""));
	assert_null(strstr(line, "\"nat\""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_full_is_counted),
		cmocka_unit_test(test_bucket_rate),
		cmocka_unit_test(test_format),
	};
	return cmocka_run_group_tests_name("pktlog", tests, NULL, NULL);
}
