/* Formatting of `rampartctl flows`: endpoints of both families, the NAT
 * reply column only for translated flows, TCP state in lower case, rule
 * names, the aligned table, the --limit trailer, and JSON fields. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "ctl_flows.h"
#include "ctl_request.h"

static const char *const names[] = { "", "web-in", "dns" };
static const struct ctl_rule_names rules = { names, 3 };

static struct ctl_flow tcp_flow(void)
{
	struct ctl_flow f;

	memset(&f, 0, sizeof(f));
	f.info.orig.family = f.info.reply.family = 4;
	f.info.orig.proto = f.info.reply.proto = 6;
	inet_pton(AF_INET, "10.0.0.1", f.info.orig.src);
	inet_pton(AF_INET, "10.0.0.2", f.info.orig.dst);
	f.info.orig.sport = 40000;
	f.info.orig.dport = 80;
	memcpy(f.info.reply.src, f.info.orig.dst, 4);
	memcpy(f.info.reply.dst, f.info.orig.src, 4);
	f.info.reply.sport = 80;
	f.info.reply.dport = 40000;
	f.info.rule = 1;
	f.info.tcp_state = CT_TCP_ESTABLISHED;
	f.info.packets[0] = 6;
	f.info.bytes[0] = 500;
	f.info.packets[1] = 5;
	f.info.bytes[1] = 1200;
	f.expires_in = 3600;
	return f;
}

static void test_endpoint(void **state)
{
	uint8_t a6[16], a4[4];
	char out[64];

	(void)state;
	inet_pton(AF_INET6, "fd00::1", a6);
	inet_pton(AF_INET, "10.1.2.3", a4);
	ctl_endpoint(out, sizeof(out), 6, a6, 443, 1);
	assert_string_equal(out, "[fd00::1]:443");
	ctl_endpoint(out, sizeof(out), 4, a4, 53, 1);
	assert_string_equal(out, "10.1.2.3:53");
	ctl_endpoint(out, sizeof(out), 4, a4, 53, 0);
	assert_string_equal(out, "10.1.2.3");
}

static void test_text_plain(void **state)
{
	struct ctl_flow f = tcp_flow();
	struct ctl_buf b;

	(void)state;
	ctl_buf_init(&b);
	ctl_flows_text(&b, &f, 1, 1, &rules);
	assert_false(b.oom);
	assert_string_equal(b.p,
		"PROTO  FLOW                           NAT REPLY  STATE        RULE    PKTS>  BYTES>  PKTS<  BYTES<  EXPIRES\n"
		"tcp    10.0.0.1:40000 -> 10.0.0.2:80  -          established  web-in      6     500      5    1200    3600s\n"
		"1 flow\n");
	ctl_buf_free(&b);
}

static void test_text_nat_and_limit(void **state)
{
	struct ctl_flow f[2] = { tcp_flow(), tcp_flow() };
	struct ctl_buf b;

	(void)state;
	/* masqueraded: the reply comes back to 192.168.0.1:61000 */
	inet_pton(AF_INET, "10.9.9.9", f[1].info.reply.dst);
	f[1].info.reply.dport = 61000;
	f[1].info.tcp_state = CT_TCP_TIME_WAIT;
	f[1].info.rule = 0;
	assert_false(ctl_flow_natted(&f[0].info));
	assert_true(ctl_flow_natted(&f[1].info));
	ctl_buf_init(&b);
	ctl_flows_text(&b, f, 2, 7, &rules);
	assert_non_null(strstr(b.p, "10.0.0.2:80 -> 10.9.9.9:61000"));
	assert_non_null(strstr(b.p, "time_wait"));
	assert_non_null(strstr(b.p, "default"));
	assert_non_null(strstr(b.p, "\n2 of 7 flows shown (--limit)\n"));
	ctl_buf_free(&b);
}

static void test_json(void **state)
{
	struct ctl_flow f[2] = { tcp_flow(), tcp_flow() };
	struct ctl_buf b;

	(void)state;
	/* an ICMP echo flow: id in the port fields, no state */
	f[1].info.orig.proto = f[1].info.reply.proto = 1;
	f[1].info.orig.sport = f[1].info.orig.dport = 77;
	f[1].info.reply.sport = f[1].info.reply.dport = 77;
	f[1].info.rule = 2;
	f[1].info.tcp_state = CT_TCP_NONE;
	ctl_buf_init(&b);
	ctl_flows_json(&b, f, 2, 2, -1, &rules);
	assert_non_null(strstr(b.p, "{\"version\": 1, \"flows\": ["));
	assert_non_null(strstr(b.p, "\"proto\": \"tcp\", \"family\": 4, \"src\": \"10.0.0.1\", "
				    "\"dst\": \"10.0.0.2\", \"sport\": 40000, \"dport\": 80, "
				    "\"nat_reply\": null, \"state\": \"established\", \"rule\": "
				    "\"web-in\", \"rule_number\": 1, \"orig_packets\": 6, "
				    "\"orig_bytes\": 500, \"reply_packets\": 5, \"reply_bytes\": 1200, "
				    "\"expires_in\": 3600"));
	assert_non_null(strstr(b.p, "\"proto\": \"icmp\", \"family\": 4, \"src\": \"10.0.0.1\", "
				    "\"dst\": \"10.0.0.2\", \"icmp_id\": 77, \"nat_reply\": null, "
				    "\"state\": null, \"rule\": \"dns\""));
	assert_non_null(strstr(b.p, "], \"shown\": 2, \"matched\": 2}\n"));
	ctl_buf_reset(&b);
	ctl_flows_json(&b, NULL, 0, 0, -1, &rules);
	assert_string_equal(b.p, "{\"version\": 1, \"flows\": [], \"shown\": 0, \"matched\": 0}\n");
	/* flows --delete: how many were ended */
	ctl_buf_reset(&b);
	ctl_flows_json(&b, f, 1, 3, 3, &rules);
	assert_non_null(strstr(b.p, "], \"shown\": 1, \"matched\": 3, \"deleted\": 3}\n"));
	ctl_buf_free(&b);
}

static void test_json_string(void **state)
{
	struct ctl_buf b;

	(void)state;
	ctl_buf_init(&b);
	ctl_json_str(&b, "a\"b\\c\n");
	assert_string_equal(b.p, "\"a\\\"b\\\\c\\u000a\"");
	ctl_buf_free(&b);
}

/* The room for a listing's copies: a `--limit 1000000` listing's is
 * given back after its answer, a small one's kept for the next. */
static void test_flow_room_given_back(void **state)
{
	struct ctl_flow_room r = {0};
	struct ctl_flow *kept;
	(void)state;

	assert_int_equal(ctl_flow_room_reserve(&r, (size_t)1000000 * 2), 0);
	assert_non_null(r.flows);
	assert_true(r.room >= 2000000);
	r.flows[r.room - 1].worker = 1;		/* all of it is there */
	ctl_flow_room_trim(&r);
	assert_null(r.flows);
	assert_int_equal(r.room, 0);

	assert_int_equal(ctl_flow_room_reserve(&r, CTL_DEFAULT_LIMIT * 4), 0);
	kept = r.flows;
	ctl_flow_room_trim(&r);
	assert_ptr_equal(r.flows, kept);
	assert_int_equal(ctl_flow_room_reserve(&r, CTL_DEFAULT_LIMIT), 0);
	assert_ptr_equal(r.flows, kept);
	assert_int_equal(r.room, CTL_DEFAULT_LIMIT * 4);
	/* a size that cannot be allocated: refused, the room unchanged */
	assert_int_equal(ctl_flow_room_reserve(&r, SIZE_MAX / 2), -1);
	assert_ptr_equal(r.flows, kept);
	ctl_flow_room_free(&r);
	assert_null(r.flows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endpoint),
		cmocka_unit_test(test_text_plain),
		cmocka_unit_test(test_text_nat_and_limit),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_string),
		cmocka_unit_test(test_flow_room_given_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
