/* Frames lost before the workers, as the control thread reads them from
 * a backend: a backend without the op (pcap) or none at all gives zeros,
 * a port whose read fails gives zeros without touching the others, and
 * the JSON names every reason with their sum as rx_missed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ctl_rxloss.h"

/* Port p lost (p + 1) x 1000, 100, 10, 1 frames by reason;
 * port 2 cannot be read (half-filled before it fails). */
static int fake_rx_loss(struct backend *b, uint32_t port, struct backend_rx_loss *out)
{
	(void)b;
	out->ring_full = 1000 * (port + 1);
	out->no_buffer = 100 * (port + 1);
	if (port == 2)
		return -EIO;
	out->invalid = 10 * (port + 1);
	out->other = port + 1;
	return 0;
}

static const struct backend_ops fake_ops = { .rx_loss = fake_rx_loss };
static const struct backend_ops none_ops = { .rx_loss = NULL };	/* as pcap's */

static void nonzero(struct backend_rx_loss *l, uint32_t n)
{
	memset(l, 0xab, n * sizeof(*l));
}

static void no_backend_or_no_op_gives_zeros(void **state)
{
	struct backend none = { .ops = &none_ops, .nports = 2 };
	struct backend_rx_loss l[2];

	(void)state;
	nonzero(l, 2);
	ctl_rx_loss_read(NULL, 2, l);
	assert_int_equal(backend_rx_loss_total(&l[0]) + backend_rx_loss_total(&l[1]), 0);
	nonzero(l, 2);
	ctl_rx_loss_read(&none, 2, l);
	assert_int_equal(backend_rx_loss_total(&l[0]) + backend_rx_loss_total(&l[1]), 0);
}

static void each_port_read_a_failed_one_zero(void **state)
{
	struct backend fake = { .ops = &fake_ops, .nports = 4 };
	struct backend_rx_loss l[4];

	(void)state;
	nonzero(l, 4);
	ctl_rx_loss_read(&fake, 4, l);
	assert_int_equal(backend_rx_loss_total(&l[0]), 1111);
	assert_int_equal(l[1].ring_full, 2000);
	assert_int_equal(l[1].no_buffer, 200);
	assert_int_equal(l[1].invalid, 20);
	assert_int_equal(l[1].other, 2);
	assert_int_equal(backend_rx_loss_total(&l[2]), 0);
	assert_int_equal(backend_rx_loss_total(&l[3]), 4444);
}

static void json_names_every_reason_and_the_sum(void **state)
{
	const struct backend_rx_loss l = { .ring_full = 7, .no_buffer = 5, .invalid = 0, .other = 1 };
	struct ctl_buf out;

	(void)state;
	ctl_buf_init(&out);
	ctl_rx_missed_json(&out, &l);
	assert_string_equal(out.p, "\"rx_missed\": 13, \"rx_missed_by_reason\": {\"ring_full\": 7, "
				   "\"no_buffer\": 5, \"invalid\": 0, \"other\": 1}");
	ctl_buf_free(&out);
}

static void reasons_follow_the_values(void **state)
{
	const struct backend_rx_loss l = { 1, 2, 3, 4 };
	uint64_t v[CTL_RX_LOSS_REASONS];

	(void)state;
	ctl_rx_loss_values(&l, v);
	assert_string_equal(ctl_rx_loss_reason[0], "ring_full");
	assert_int_equal(v[0], 1);
	assert_string_equal(ctl_rx_loss_reason[1], "no_buffer");
	assert_int_equal(v[1], 2);
	assert_string_equal(ctl_rx_loss_reason[2], "invalid");
	assert_int_equal(v[2], 3);
	assert_string_equal(ctl_rx_loss_reason[3], "other");
	assert_int_equal(v[3], 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_backend_or_no_op_gives_zeros),
		cmocka_unit_test(each_port_read_a_failed_one_zero),
		cmocka_unit_test(json_names_every_reason_and_the_sum),
		cmocka_unit_test(reasons_follow_the_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
