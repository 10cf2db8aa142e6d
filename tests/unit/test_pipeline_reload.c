/* Reload at the pipeline level: rules continue by name (rule_map), flows
 * and their counters carry over to the renumbered rule, the flows a new
 * policy refuses live on (keep) or end on their next packet (recheck),
 * rate-limit buckets and NAT bindings survive, and a policy that cannot
 * replace the running one is refused with the running one untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "frames.h"
#include "nat.h"
#include "pipeline.h"
#include "router_lab.h"
#include "rule_map.h"
#include "rulec.h"

#define SEC 1000000000ull

struct compiled {
	void *buf;
	size_t len;
	struct rfw_view view;
};

static void compile(struct compiled *c, const char *yaml)
{
	router_lab_compile(yaml, &c->buf, &c->len, &c->view);
}

static const struct pipe_config bridge_cfg = {
	.mode = PIPE_BRIDGE, .nports = 2, .port = {{.name = "a"}, {.name = "b"}},
	.max_flows = 1024, .seed = 1,
};

static struct flow_spec udp(uint16_t sport, uint16_t dport)
{
	struct flow_spec s = {.family = 4, .proto = 17, .sport = sport, .dport = dport,
			      .src = {10, 1, 0, 5}, .dst = {10, 2, 0, 9}, .payload = 10};
	return s;
}

static struct flow_spec reverse(const struct flow_spec *s)
{
	struct flow_spec r = *s;

	memcpy(r.src, s->dst, 16);
	memcpy(r.dst, s->src, 16);
	r.sport = s->dport;
	r.dport = s->sport;
	return r;
}

static struct pipe_pkt send1(struct pipe_worker *w, const struct flow_spec *s, uint8_t in_port,
			     uint64_t now, struct frame *out)
{
	struct frame f;
	struct pipe_pkt p;

	frame_build(&f, s);
	p = (struct pipe_pkt){.data = f.b, .len = f.len, .room = sizeof(f.b), .in_port = in_port};
	pipe_process(w, &p, 1, now);
	if (out) {
		*out = f;
		out->len = p.len;
	}
	return p;
}

/* Adopt p on w and sweep to the end, as the worker loop does; returns
 * the policy replaced (freed by the caller). */
static struct pipe_policy *swap_to(struct pipe_worker *w, const struct rfw_view *v,
				   enum pipe_flow_policy flows)
{
	char err[256] = "";
	struct pipe_policy *p = pipe_policy_build(w, v, NULL, flows, NULL, err, sizeof(err));

	if (!p)
		fail_msg("build refused: %s", err);
	p = pipe_adopt(w, p);
	while (pipe_sweep(w))
		;
	return p;
}

static uint32_t rule_no(const struct rfw_view *v, const char *name)
{
	for (uint32_t r = 0; r <= v->policy->rule_count; r++)
		if (!strcmp(rfw_rule_name(v, r), name))
			return r;
	fail_msg("no rule %s", name);
	return 0;
}

static const char pol_a[] =
	"version: 1\n"
	"rules:\n"
	"  - {name: out, proto: udp, from: {network: 10.1.0.0/16}, action: accept}\n"
	"  - {name: dns, proto: udp, to: {port: 53}, action: accept}\n"
	"defaults: {action: drop}\n";

/* B: a rule the traffic does not hit, put first, so every number moves */
static const char pol_b[] =
	"version: 1\n"
	"rules:\n"
	"  - {name: no-telnet, proto: tcp, to: {port: 23}, action: drop}\n"
	"  - {name: dns, proto: udp, to: {port: 53}, action: accept}\n"
	"  - {name: out, proto: udp, from: {network: 10.1.0.0/16}, action: accept}\n"
	"defaults: {action: drop}\n";

/* C: `out` is gone; the traffic's flows are no longer allowed */
static const char pol_c[] =
	"version: 1\n"
	"rules:\n"
	"  - {name: dns, proto: udp, to: {port: 53}, action: accept}\n"
	"defaults: {action: drop}\n";

static void test_rule_map(void **state)
{
	struct compiled a, b, c;
	uint32_t *m;
	(void)state;

	compile(&a, pol_a);
	compile(&b, pol_b);
	compile(&c, pol_c);
	m = rule_map_build(&a.view, NULL, &a.view, NULL);	/* same order: identity */
	assert_non_null(m);
	assert_int_equal(m[0], 0);
	assert_int_equal(m[1], 1);
	assert_int_equal(m[2], 2);
	free(m);
	m = rule_map_build(&a.view, NULL, &b.view, NULL);	/* reordered: by name */
	assert_int_equal(m[rule_no(&a.view, "out")], rule_no(&b.view, "out"));
	assert_int_equal(m[rule_no(&a.view, "dns")], rule_no(&b.view, "dns"));
	free(m);
	m = rule_map_build(&a.view, NULL, &c.view, NULL);	/* removed */
	assert_int_equal(m[rule_no(&a.view, "out")], RULE_MAP_GONE);
	assert_int_equal(m[rule_no(&a.view, "dns")], rule_no(&c.view, "dns"));
	free(m);
	free(a.buf);
	free(b.buf);
	free(c.buf);
}

/* A policy of rules named by `names` (space-separated). */
static void compile_names(struct compiled *c, const char *names)
{
	char yaml[8192], *p = yaml, list[1024], *save = NULL;
	uint32_t port = 1000;

	snprintf(list, sizeof(list), "%s", names);
	p += sprintf(p, "version: 1\nrules:\n");
	for (char *n = strtok_r(list, " ", &save); n; n = strtok_r(NULL, " ", &save))
		p += sprintf(p, "  - {name: %s, proto: udp, to: {port: %u}, action: accept}\n", n,
			     port++);
	sprintf(p, "defaults: {action: drop}\n");
	compile(c, yaml);
}

/* Every rule of `from` maps to the rule of `to` with its name, or GONE. */
static void check_map(const char *from_names, const char *to_names)
{
	struct compiled a, b;
	uint32_t *m;

	compile_names(&a, from_names);
	compile_names(&b, to_names);
	m = rule_map_build(&a.view, NULL, &b.view, NULL);
	assert_non_null(m);
	for (uint32_t r = 1; r <= a.view.policy->rule_count; r++) {
		const char *name = rfw_rule_name(&a.view, r);
		uint32_t want = RULE_MAP_GONE;

		for (uint32_t q = 1; q <= b.view.policy->rule_count; q++)
			if (!strcmp(rfw_rule_name(&b.view, q), name))
				want = q;
		if (m[r] != want)
			fail_msg("%s -> %s: rule %s maps to %u, not %u", from_names, to_names, name,
				 m[r], want);
	}
	free(m);
	free(a.buf);
	free(b.buf);
}

/* The in-order pass and its re-alignment, and the index behind them. */
static void test_rule_map_edits(void **state)
{
	static const char base[] = "a b c d e f g h i j k l m n o p q r s t";
	(void)state;

	check_map(base, base);
	check_map(base, "a b c x y z d e f g h i j k l m n o p q r s t");	/* inserted */
	check_map(base, "a b c g h i j k l m n o p q r s t");		/* removed */
	check_map(base, "a b c D e f g h i j k l m n o p q r s t");	/* changed in place */
	check_map(base, "b c d e f g h i j k l m n o p q r s t a");	/* moved far */
	check_map(base, "t s r q p o n m l k j i h g f e d c b a");	/* reversed */
	check_map(base, "x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 a b c d e f g h i j k l m n o p q r s t");
	check_map(base, "a b c d e f g h i j");				/* cut short */
	check_map("a", "b");
}

/* A flow made under A goes on under B, counted under B's number of its
 * rule, and back under A after a second reload; its reply still needs
 * no rule. */
static void test_flows_follow_rule_names(void **state)
{
	struct compiled a, b;
	struct pipe_worker *w;
	struct flow_spec s = udp(5000, 7000), r = reverse(&s);
	(void)state;

	compile(&a, pol_a);
	compile(&b, pol_b);
	w = pipe_create(&bridge_cfg, &a.view);
	assert_non_null(w);
	assert_int_equal(send1(w, &s, 0, SEC, NULL).verdict, PIPE_FORWARD);
	assert_int_equal(pipe_rule_stats(w)[1].packets, 1);

	pipe_policy_free(swap_to(w, &b.view, PIPE_FLOWS_KEEP));
	assert_int_equal(send1(w, &s, 0, 2 * SEC, NULL).verdict, PIPE_FORWARD);
	assert_int_equal(send1(w, &r, 1, 2 * SEC, NULL).verdict, PIPE_FORWARD);
	assert_int_equal(pipe_rule_stats(w)[rule_no(&b.view, "out")].packets, 2);
	assert_int_equal(pipe_rule_stats(w)[0].packets, 0);
	assert_int_equal(pipe_stats(w)->flows_hit, 2);

	pipe_policy_free(swap_to(w, &a.view, PIPE_FLOWS_KEEP));
	assert_int_equal(send1(w, &s, 0, 3 * SEC, NULL).verdict, PIPE_FORWARD);
	assert_int_equal(pipe_rule_stats(w)[rule_no(&a.view, "out")].packets, 1);
	assert_int_equal(pipe_stats(w)->flows_hit, 3);
	pipe_destroy(w);
	free(a.buf);
	free(b.buf);
}

/* One fragment of s's datagram `id` (flags_offset: MF and the offset in
 * 8-byte units, as frame_set_fragment takes them). */
static struct pipe_pkt send_fragment(struct pipe_worker *w, const struct flow_spec *s,
				     uint16_t id, uint16_t flags_offset, uint64_t now)
{
	struct frame f;
	struct pipe_pkt p;

	frame_build(&f, s);
	frame_set_fragment(&f, id, flags_offset);
	p = (struct pipe_pkt){.data = f.b, .len = f.len, .room = sizeof(f.b), .in_port = 0};
	pipe_process(w, &p, 1, now);
	return p;
}

/* The packet path restamps a flow before the sweep reaches it, a
 * datagram's first fragment too: the rest of the datagram counts under
 * the flow's new rule (its fragment entry was given the bare rule
 * number, which the next fragment took for the generation before's and
 * mapped again: `dns`'s number in B), and so after another reload. */
static void test_packet_before_sweep(void **state)
{
	struct compiled a, b;
	struct pipe_worker *w;
	struct pipe_policy *old;
	struct flow_spec s = udp(5001, 7000), t = udp(5006, 7000);
	char err[256];
	(void)state;

	compile(&a, pol_a);
	compile(&b, pol_b);
	w = pipe_create(&bridge_cfg, &a.view);
	assert_int_equal(send1(w, &s, 0, SEC, NULL).verdict, PIPE_FORWARD);
	assert_int_equal(send1(w, &t, 0, SEC, NULL).verdict, PIPE_FORWARD);
	old = pipe_adopt(w, pipe_policy_build(w, &b.view, NULL, PIPE_FLOWS_KEEP, NULL, err,
					      sizeof(err)));
	assert_int_equal(send1(w, &s, 0, SEC, NULL).verdict, PIPE_FORWARD);
	assert_int_equal(pipe_rule_stats(w)[rule_no(&b.view, "out")].packets, 1);
	assert_int_equal(send_fragment(w, &t, 0x300, 0x2000, SEC).verdict, PIPE_FORWARD);
	assert_int_equal(send_fragment(w, &t, 0x300, 0x2000 | 6, SEC).verdict, PIPE_FORWARD);
	assert_int_equal(pipe_rule_stats(w)[rule_no(&b.view, "out")].packets, 3);
	assert_int_equal(pipe_rule_stats(w)[rule_no(&b.view, "dns")].packets, 0);
	while (pipe_sweep(w))
		;
	pipe_policy_free(old);
	assert_int_equal(send1(w, &s, 0, SEC, NULL).verdict, PIPE_FORWARD);
	assert_int_equal(pipe_rule_stats(w)[rule_no(&b.view, "out")].packets, 4);
	pipe_policy_free(swap_to(w, &a.view, PIPE_FLOWS_KEEP));
	assert_int_equal(send_fragment(w, &t, 0x300, 12, 2 * SEC).verdict, PIPE_FORWARD);
	assert_int_equal(pipe_rule_stats(w)[rule_no(&a.view, "out")].packets, 1);
	assert_int_equal(pipe_rule_stats(w)[0].packets, 0);
	pipe_destroy(w);
	free(a.buf);
	free(b.buf);
}

/* keep: the flow C no longer allows lives on (its rule is gone: counted
 * under the default's row); recheck: its next packet meets C's rules as
 * a new connection, is dropped, and the flow ends (so its reply is
 * unsolicited now). A flow C still allows passes the re-check. */
static void test_keep_or_recheck(void **state)
{
	struct compiled a, c;
	struct flow_spec s = udp(5002, 7000), r = reverse(&s), d = udp(5003, 53);
	(void)state;

	d.src[1] = 3;		/* 10.3.0.5: not `out`'s, so `dns` in both */
	compile(&a, pol_a);
	compile(&c, pol_c);
	for (int recheck = 0; recheck <= 1; recheck++) {
		struct pipe_worker *w = pipe_create(&bridge_cfg, &a.view);
		struct pipe_pkt p;

		assert_int_equal(send1(w, &s, 0, SEC, NULL).verdict, PIPE_FORWARD);
		assert_int_equal(send1(w, &d, 0, SEC, NULL).verdict, PIPE_FORWARD);
		pipe_policy_free(swap_to(w, &c.view,
					 recheck ? PIPE_FLOWS_RECHECK : PIPE_FLOWS_KEEP));
		p = send1(w, &s, 0, 2 * SEC, NULL);
		if (!recheck) {
			assert_int_equal(p.verdict, PIPE_FORWARD);
			assert_int_equal(send1(w, &r, 1, 2 * SEC, NULL).verdict, PIPE_FORWARD);
			assert_int_equal(pipe_rule_stats(w)[0].packets, 2);
			assert_int_equal(pipe_stats(w)->recheck_ended, 0);
		} else {
			assert_int_equal(p.verdict, PIPE_DROP);
			assert_int_equal(p.drop, PIPE_DROP_POLICY);
			assert_int_equal(pipe_stats(w)->recheck_ended, 1);
			/* the flow is gone: the reply is a new, refused packet */
			assert_int_equal(send1(w, &r, 1, 2 * SEC, NULL).drop, PIPE_DROP_POLICY);
			assert_int_equal(pipe_rule_stats(w)[0].packets, 2);
		}
		/* the DNS flow passes either way, under C's `dns` */
		assert_int_equal(send1(w, &d, 0, 2 * SEC, NULL).verdict, PIPE_FORWARD);
		assert_int_equal(pipe_rule_stats(w)[rule_no(&c.view, "dns")].packets, 1);
		pipe_destroy(w);
	}
	free(a.buf);
	free(c.buf);
}

/* A re-check asked for is not lost to a later reload that keeps flows:
 * A's flow is due its re-check under C; before any packet of it, C is
 * loaded again with keep (a SIGHUP, whose default is keep). Its next
 * packet is still judged, and C refuses it. A flow that C allows and
 * that met its re-check already is kept as it is. */
static void test_recheck_survives_a_keep_reload(void **state)
{
	struct compiled a, c;
	struct flow_spec s = udp(5004, 7000), d = udp(5005, 53);
	struct pipe_worker *w;
	struct pipe_pkt p;
	(void)state;

	d.src[1] = 3;
	compile(&a, pol_a);
	compile(&c, pol_c);
	w = pipe_create(&bridge_cfg, &a.view);
	assert_int_equal(send1(w, &s, 0, SEC, NULL).verdict, PIPE_FORWARD);
	assert_int_equal(send1(w, &d, 0, SEC, NULL).verdict, PIPE_FORWARD);
	pipe_policy_free(swap_to(w, &c.view, PIPE_FLOWS_RECHECK));
	assert_int_equal(send1(w, &d, 0, 2 * SEC, NULL).verdict, PIPE_FORWARD);	/* re-checked */
	pipe_policy_free(swap_to(w, &c.view, PIPE_FLOWS_KEEP));
	p = send1(w, &s, 0, 3 * SEC, NULL);
	assert_int_equal(p.verdict, PIPE_DROP);
	assert_int_equal(p.drop, PIPE_DROP_POLICY);
	assert_int_equal(pipe_stats(w)->recheck_ended, 1);
	assert_int_equal(send1(w, &d, 0, 3 * SEC, NULL).verdict, PIPE_FORWARD);
	pipe_destroy(w);
	free(a.buf);
	free(c.buf);
}

/* A datagram in pieces across a reload: its non-first fragments follow
 * the first's flow, so they meet that flow's fate. keep: they pass.
 * recheck: the first fragment after the reload re-checks the flow (no
 * packet of it came since), C refuses it, the flow ends and the rest of
 * the datagram is dropped, not passed until the fragment entry expires.
 * A flow C still allows passes its re-check, fragments and all. */
static void test_fragments_follow_recheck(void **state)
{
	struct compiled a, c;
	struct flow_spec s = udp(5004, 7000), d = udp(5005, 53);
	(void)state;

	d.src[1] = 3;		/* 10.3.0.5: `dns` in both */
	compile(&a, pol_a);
	compile(&c, pol_c);
	for (int recheck = 0; recheck <= 1; recheck++) {
		struct pipe_worker *w = pipe_create(&bridge_cfg, &a.view);
		struct pipe_pkt p;

		assert_int_equal(send_fragment(w, &s, 0x100, 0x2000, SEC).verdict, PIPE_FORWARD);
		assert_int_equal(send_fragment(w, &d, 0x200, 0x2000, SEC).verdict, PIPE_FORWARD);
		pipe_policy_free(swap_to(w, &c.view,
					 recheck ? PIPE_FLOWS_RECHECK : PIPE_FLOWS_KEEP));
		p = send_fragment(w, &s, 0x100, 0x2000 | 6, 2 * SEC);
		if (!recheck) {
			assert_int_equal(p.verdict, PIPE_FORWARD);
			assert_int_equal(send_fragment(w, &s, 0x100, 12, 2 * SEC).verdict,
					 PIPE_FORWARD);
		} else {
			assert_int_equal(p.verdict, PIPE_DROP);
			assert_int_equal(p.drop, PIPE_DROP_POLICY);
			assert_int_equal(pipe_stats(w)->recheck_ended, 1);
			/* its flow gone, the last piece follows nothing */
			assert_int_not_equal(send_fragment(w, &s, 0x100, 12, 2 * SEC).verdict,
					     PIPE_FORWARD);
		}
		/* the DNS datagram passes whole either way */
		assert_int_equal(send_fragment(w, &d, 0x200, 0x2000 | 6, 2 * SEC).verdict,
				 PIPE_FORWARD);
		assert_int_equal(send_fragment(w, &d, 0x200, 12, 2 * SEC).verdict, PIPE_FORWARD);
		assert_int_equal(pipe_stats(w)->recheck_ended, (uint64_t)recheck);
		pipe_destroy(w);
	}
	free(a.buf);
	free(c.buf);
}

/* An ICMP error about a flow due its re-check: a time-exceeded from a
 * router on the far side, quoting the flow's packet. keep: it passes, as
 * the flow does. recheck: C refuses the flow, so the error is dropped
 * (before, it passed under the flow's old rule), but it does not end the
 * flow (anyone on the path can send one): the flow's own next packet
 * does. An error about a flow the new policy allows passes its re-check,
 * which judges the flow on the interfaces of its first packet, not the
 * error's (its rule names them). */
static void test_icmp_error_meets_recheck(void **state)
{
	static const char pol_c_zones[] =
		"version: 1\n"
		"zones: {left: [a], right: [b]}\n"
		"rules:\n"
		"  - {name: dns, proto: udp, from: {zone: left}, to: {zone: right, port: 53},"
		" action: accept}\n"
		"defaults: {action: drop}\n";
	static const uint8_t mac_a[6] = {2, 0, 0, 0, 0, 1}, mac_b[6] = {2, 0, 0, 0, 0, 2};
	struct compiled a, c;
	struct flow_spec s = udp(5006, 7000), d = udp(5007, 53);
	(void)state;

	d.src[1] = 3;		/* 10.3.0.5: `dns` in both */
	compile(&a, pol_a);
	compile(&c, pol_c_zones);
	for (int recheck = 0; recheck <= 1; recheck++) {
		struct pipe_worker *w = pipe_create(&bridge_cfg, &a.view);
		struct frame fs, fd, e;
		struct pipe_pkt p;

		assert_int_equal(send1(w, &s, 0, SEC, &fs).verdict, PIPE_FORWARD);
		assert_int_equal(send1(w, &d, 0, SEC, &fd).verdict, PIPE_FORWARD);
		pipe_policy_free(swap_to(w, &c.view,
					 recheck ? PIPE_FLOWS_RECHECK : PIPE_FLOWS_KEEP));
		frame_build_time_exceeded(&e, mac_a, mac_b, (uint8_t[]){10, 2, 0, 1}, s.src, &fs);
		p = (struct pipe_pkt){.data = e.b, .len = e.len, .room = sizeof(e.b), .in_port = 1};
		pipe_process(w, &p, 1, 2 * SEC);
		if (!recheck) {
			assert_int_equal(p.verdict, PIPE_FORWARD);
			assert_int_equal(send1(w, &s, 0, 2 * SEC, NULL).verdict, PIPE_FORWARD);
		} else {
			assert_int_equal(p.verdict, PIPE_DROP);
			assert_int_equal(p.drop, PIPE_DROP_POLICY);
			assert_int_equal(pipe_stats(w)->recheck_ended, 0);
			p = send1(w, &s, 0, 2 * SEC, NULL);
			assert_int_equal(p.verdict, PIPE_DROP);
			assert_int_equal(pipe_stats(w)->recheck_ended, 1);
		}
		frame_build_time_exceeded(&e, mac_a, mac_b, (uint8_t[]){10, 2, 0, 1}, d.src, &fd);
		p = (struct pipe_pkt){.data = e.b, .len = e.len, .room = sizeof(e.b), .in_port = 1};
		pipe_process(w, &p, 1, 2 * SEC);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_equal(pipe_stats(w)->related, 2 - (uint64_t)recheck);
		pipe_destroy(w);
	}
	free(a.buf);
	free(c.buf);
}

/* A per-rule bucket emptied under the old policy stays empty under the
 * new one when the rule and its limit are the same; a changed limit
 * starts full. */
static void test_limit_state_carried(void **state)
{
	static const char lim_a[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: capped, proto: udp, to: {port: 9}, action: accept,\n"
		"     limit: {rate: 1/m, burst: 2, per: rule}}\n"
		"defaults: {action: drop, stateful: false}\n";
	static const char lim_b[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: other, proto: tcp, to: {port: 23}, action: drop}\n"
		"  - {name: capped, proto: udp, to: {port: 9}, action: accept,\n"
		"     limit: {rate: 1/m, burst: 2, per: rule}}\n"
		"defaults: {action: drop, stateful: false}\n";
	static const char lim_c[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: capped, proto: udp, to: {port: 9}, action: accept,\n"
		"     limit: {rate: 1/m, burst: 3, per: rule}}\n"
		"defaults: {action: drop, stateful: false}\n";
	struct compiled a, b, c;
	struct pipe_worker *w;
	struct flow_spec s = udp(6000, 9);
	(void)state;

	compile(&a, lim_a);
	compile(&b, lim_b);
	compile(&c, lim_c);
	w = pipe_create(&bridge_cfg, &a.view);
	assert_int_equal(send1(w, &s, 0, SEC, NULL).verdict, PIPE_FORWARD);
	assert_int_equal(send1(w, &s, 0, SEC, NULL).verdict, PIPE_FORWARD);
	assert_int_equal(send1(w, &s, 0, SEC, NULL).drop, PIPE_DROP_RATE_LIMIT);
	pipe_policy_free(swap_to(w, &b.view, PIPE_FLOWS_KEEP));
	assert_int_equal(send1(w, &s, 0, SEC, NULL).drop, PIPE_DROP_RATE_LIMIT);
	pipe_policy_free(swap_to(w, &c.view, PIPE_FLOWS_KEEP));
	assert_int_equal(send1(w, &s, 0, SEC, NULL).verdict, PIPE_FORWARD);
	pipe_destroy(w);
	free(a.buf);
	free(b.buf);
	free(c.buf);
}

/* An SNAT binding made under the old policy still translates the reply
 * after a reload that keeps the pool, and the pool is the same one. */
static void test_nat_binding_survives(void **state)
{
	static const char nat_a[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: out, proto: udp, from: {network: 10.1.0.0/16}, action: accept}\n"
		"nat:\n"
		"  - name: hide\n"
		"    match: {from: {network: 10.1.0.0/16}}\n"
		"    snat: {to: [10.9.0.1], ports: 30000-30010}\n"
		"defaults: {action: drop}\n";
	static const char nat_b[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: first, proto: tcp, to: {port: 23}, action: drop}\n"
		"  - {name: out, proto: udp, from: {network: 10.1.0.0/16}, action: accept}\n"
		"nat:\n"
		"  - name: hide-renamed\n"
		"    match: {from: {network: 10.1.0.0/16}}\n"
		"    snat: {to: [10.9.0.1], ports: 30000-30010}\n"
		"defaults: {action: drop}\n";
	struct compiled a, b;
	struct pipe_worker *w;
	struct flow_spec s = udp(5004, 7000), r;
	struct frame f;
	uint16_t nat_port;
	(void)state;

	compile(&a, nat_a);
	compile(&b, nat_b);
	w = pipe_create(&bridge_cfg, &a.view);
	assert_int_equal(send1(w, &s, 0, SEC, &f).verdict, PIPE_FORWARD);
	nat_port = frame_get16(f.b + 14 + 20);
	assert_int_equal(f.b[14 + 12], 10);
	assert_int_equal(f.b[14 + 15], 1);		/* source now 10.9.0.1 */
	assert_int_equal(pipe_nat_pool_count(w), 1);
	pipe_policy_free(swap_to(w, &b.view, PIPE_FLOWS_KEEP));
	assert_int_equal(pipe_nat_pool_count(w), 1);	/* the same pool, found again */
	r = reverse(&s);
	memcpy(r.dst, (uint8_t[]){10, 9, 0, 1}, 4);
	r.dport = nat_port;
	assert_int_equal(send1(w, &r, 1, 2 * SEC, &f).verdict, PIPE_FORWARD);
	assert_int_equal(f.b[14 + 19], 5);		/* back to 10.1.0.5 */
	assert_int_equal(frame_get16(f.b + 14 + 22), 5004);
	assert_true(frame_checksums_ok(f.b, f.len));
	pipe_destroy(w);
	free(a.buf);
	free(b.buf);
}

/* A reload that changes the timeouts between two bursts of one second,
 * with the flow table full: the flow the first burst made is still one
 * made this second, which early drop leaves alone; the second burst's
 * new flow is refused, not made over it (it was, before: its expiry
 * minus the new timeout looked like an older flow's). */
static void test_timeouts_changed_table_full(void **state)
{
	static const char short_udp[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: out, proto: udp, from: {network: 10.1.0.0/16}, action: accept}\n"
		"defaults: {action: drop, timeouts: {udp: 30}}\n";
	static const char long_udp[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: out, proto: udp, from: {network: 10.1.0.0/16}, action: accept}\n"
		"defaults: {action: drop, timeouts: {udp: 60}}\n";
	struct pipe_config cfg = bridge_cfg;
	struct compiled a, b;
	struct pipe_worker *w;
	struct flow_spec first = udp(5000, 53), next = udp(5001, 53), answer = reverse(&first);
	(void)state;

	cfg.max_flows = 1;
	cfg.no_flow_cache = 1;
	compile(&a, short_udp);
	compile(&b, long_udp);
	w = pipe_create(&cfg, &a.view);
	assert_non_null(w);
	assert_int_equal(send1(w, &first, 0, 100 * SEC, NULL).verdict, PIPE_FORWARD);
	pipe_policy_free(swap_to(w, &b.view, PIPE_FLOWS_KEEP));
	assert_int_equal(send1(w, &next, 0, 100 * SEC + 1000, NULL).drop, PIPE_DROP_CT_FULL);
	assert_int_equal(send1(w, &answer, 1, 100 * SEC + 2000, NULL).verdict, PIPE_FORWARD);
	/* a second later the first flow (answered once) may go */
	assert_int_equal(send1(w, &next, 0, 101 * SEC, NULL).verdict, PIPE_FORWARD);
	pipe_destroy(w);
	free(a.buf);
	free(b.buf);
}

/* A reload that widens an SNAT rule's ports makes a second pool over
 * the same pairs while the first one's flows live on: the new pool
 * hands out none of the pairs they hold, and each pair goes back to the
 * pool that holds it when its flow ends. */
static void test_nat_range_widened(void **state)
{
	static const char narrow[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: out, proto: udp, from: {network: 10.1.0.0/16}, action: accept}\n"
		"nat:\n"
		"  - name: hide\n"
		"    match: {from: {network: 10.1.0.0/16}}\n"
		"    snat: {to: [10.9.0.1], ports: 30000-30003}\n"
		"defaults: {action: drop, timeouts: {udp: 30, udp_stream: 30}}\n";
	static const char wide[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: out, proto: udp, from: {network: 10.1.0.0/16}, action: accept}\n"
		"nat:\n"
		"  - name: hide\n"
		"    match: {from: {network: 10.1.0.0/16}}\n"
		"    snat: {to: [10.9.0.1], ports: 30000-30009}\n"
		"defaults: {action: drop, timeouts: {udp: 30, udp_stream: 30}}\n";
	struct compiled a, b;
	struct pipe_worker *w;
	struct frame f;
	uint32_t held = 0, got = 0;
	(void)state;

	compile(&a, narrow);
	compile(&b, wide);
	w = pipe_create(&bridge_cfg, &a.view);
	for (uint16_t k = 0; k < 4; k++) {
		struct flow_spec s = udp((uint16_t)(5000 + k), 7000);

		assert_int_equal(send1(w, &s, 0, SEC, &f).verdict, PIPE_FORWARD);
		held |= 1u << (frame_get16(f.b + 14 + 20) - 30000);
	}
	assert_int_equal(held, 0xf);
	pipe_policy_free(swap_to(w, &b.view, PIPE_FLOWS_KEEP));
	assert_int_equal(pipe_nat_pool_count(w), 2);
	for (uint16_t k = 0; k < 8; k++) {		/* 6 pairs left of 10 */
		struct flow_spec s = udp((uint16_t)(6000 + k), 7000);
		uint16_t port;

		if (send1(w, &s, 0, 2 * SEC, &f).verdict != PIPE_FORWARD)
			continue;
		port = frame_get16(f.b + 14 + 20);
		assert_true(port >= 30004 && port <= 30009);
		assert_false(held >> (port - 30000) & 1);
		held |= 1u << (port - 30000);
		got++;
	}
	assert_int_equal(got, 6);
	pipe_tick(w, 100 * SEC);			/* every flow times out */
	pipe_tick(w, 101 * SEC);
	for (uint32_t i = 0; i < 2; i++) {
		assert_int_equal(pipe_nat_pool(w, i)->stats.in_use, 0);
		assert_int_equal(pipe_nat_pool(w, i)->stats.bad_frees, 0);
	}
	for (uint16_t k = 0; k < 10; k++) {		/* all ten again */
		struct flow_spec s = udp((uint16_t)(7000 + k), 7000);

		assert_int_equal(send1(w, &s, 0, 102 * SEC, &f).verdict, PIPE_FORWARD);
	}
	pipe_destroy(w);
	free(a.buf);
	free(b.buf);
}

/* The uplink's address changes (a DHCP lease): pipe_set_port_addrs, then
 * the same policy built again. New masqueraded flows leave from the new
 * address; a flow from before keeps its binding (its replies, to the old
 * address, are still translated back); packets to the new address are
 * the firewall's own (local), to the old one no longer. */
static void test_masquerade_follows_address(void **state)
{
	static const char masq[] =
		"version: 1\n"
		"zones: {inside: [lan0], outside: [wan0]}\n"
		"rules:\n"
		"  - {name: out, from: {zone: inside}, to: {zone: outside}, action: accept}\n"
		"  - {name: uplink, from: {zone: outside}, to: {zone: outside}, action: accept}\n"
		"nat:\n"
		"  - {name: masq, match: {from: {zone: inside}, to: {zone: outside}},"
		" snat: {to: masquerade}}\n"
		"defaults: {action: drop}\n"
		"routes:\n"
		"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"
		"  - {prefix: 10.0.1.0/24, interface: wan0}\n"
		"  - {prefix: 10.100.0.0/16, interface: lan0}\n";
	const uint8_t old_ip[4] = {10, 0, 1, 1}, new_ip[4] = {10, 0, 1, 7};
	struct pipe_config cfg = {.mode = PIPE_ROUTER, .max_flows = 1024, .seed = 1};
	struct pipe_port_addrs a = {.has_v4 = 1, .v4 = {10, 0, 1, 7},
				    .nmore4 = 1, .more4 = {{10, 0, 1, 8}}};	/* and a secondary */
	struct compiled c;
	struct pipe_worker *w;
	struct flow_spec s = udp(5004, 53), s2 = udp(5005, 53), r;
	struct frame f;
	struct pipe_pkt p;
	uint16_t port1;
	(void)state;

	router_lab_ports(&cfg);
	compile(&c, masq);
	w = pipe_create(&cfg, &c.view);
	assert_non_null(w);
	router_lab_neighbours(w);
	memcpy(s.src, client_ip, 4);
	memcpy(s.dst, remote_ip, 4);
	memcpy(s2.src, client_ip, 4);
	memcpy(s2.dst, remote_ip, 4);
	assert_int_equal(send1(w, &s, 0, SEC, &f).verdict, PIPE_FORWARD);
	assert_memory_equal(f.b + 14 + 12, old_ip, 4);
	port1 = frame_get16(f.b + 34);

	pipe_set_port_addrs(w, 1, &a);
	/* built, not yet adopted: the worker still uses the old address */
	assert_int_equal(send1(w, &s2, 0, SEC, &f).verdict, PIPE_FORWARD);
	assert_memory_equal(f.b + 14 + 12, old_ip, 4);
	pipe_policy_free(swap_to(w, &c.view, PIPE_FLOWS_KEEP));
	s2.sport = 5006;
	assert_int_equal(send1(w, &s2, 0, 2 * SEC, &f).verdict, PIPE_FORWARD);
	assert_memory_equal(f.b + 14 + 12, new_ip, 4);
	assert_true(frame_checksums_ok(f.b, f.len));

	r = reverse(&s);				/* the flow from before */
	memcpy(r.dst, old_ip, 4);
	r.dport = port1;
	assert_int_equal(send1(w, &r, 1, 2 * SEC, &f).verdict, PIPE_FORWARD);
	assert_memory_equal(f.b + 14 + 16, client_ip, 4);
	assert_int_equal(frame_get16(f.b + 36), 5004);

	s = udp(6000, 7000);		/* to the firewall (rule uplink): the new address */
	memcpy(s.src, remote_ip, 4);
	memcpy(s.dst, new_ip, 4);
	p = send1(w, &s, 1, 2 * SEC, NULL);
	assert_int_equal(p.verdict, PIPE_DROP);
	assert_int_equal(p.drop, PIPE_DROP_LOCAL);
	memcpy(s.dst, (uint8_t[]){10, 0, 1, 8}, 4);	/* the secondary too */
	p = send1(w, &s, 1, 2 * SEC, NULL);
	assert_int_equal(p.drop, PIPE_DROP_LOCAL);
	memcpy(s.dst, old_ip, 4);			/* the old one is not ours any more */
	p = send1(w, &s, 1, 2 * SEC, NULL);
	assert_int_equal(p.verdict, PIPE_DROP);
	assert_int_not_equal(p.drop, PIPE_DROP_LOCAL);
	pipe_destroy(w);
	free(c.buf);
}

/* A stateless policy cannot replace a stateful one (conntrack is made at
 * start): refused with the reason, the running policy stays. */
static void test_refused(void **state)
{
	static const char stateless[] =
		"version: 1\n"
		"rules:\n"
		"  - {name: out, proto: udp, action: accept}\n"
		"defaults: {action: drop, stateful: false}\n";
	struct compiled a, b;
	struct pipe_worker *w;
	struct flow_spec s = udp(5005, 7000);
	char err[256] = "";
	(void)state;

	compile(&a, pol_a);
	compile(&b, stateless);
	w = pipe_create(&bridge_cfg, &a.view);
	assert_null(pipe_policy_build(w, &b.view, NULL, PIPE_FLOWS_KEEP, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "stateful"));
	assert_int_equal(send1(w, &s, 0, SEC, NULL).verdict, PIPE_FORWARD);
	assert_int_equal(pipe_rule_stats(w)[1].packets, 1);
	pipe_destroy(w);
	free(a.buf);
	free(b.buf);
}

/* 300 reloads (past the 128 generations a tag can tell apart) with a
 * flow alive throughout: it stays on its rule. */
static void test_many_generations(void **state)
{
	struct compiled a, b;
	struct pipe_worker *w;
	struct flow_spec s = udp(5006, 7000);
	(void)state;

	compile(&a, pol_a);
	compile(&b, pol_b);
	w = pipe_create(&bridge_cfg, &a.view);
	assert_int_equal(send1(w, &s, 0, SEC, NULL).verdict, PIPE_FORWARD);
	for (int i = 0; i < 300; i++) {
		const struct rfw_view *v = i % 2 ? &a.view : &b.view;

		pipe_policy_free(swap_to(w, v, PIPE_FLOWS_RECHECK));
		assert_int_equal(send1(w, &s, 0, SEC, NULL).verdict, PIPE_FORWARD);
		assert_int_equal(pipe_rule_stats(w)[rule_no(v, "out")].packets, 1);
	}
	assert_int_equal(pipe_stats(w)->flows_hit, 300);
	pipe_destroy(w);
	free(a.buf);
	free(b.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_map),
		cmocka_unit_test(test_rule_map_edits),
		cmocka_unit_test(test_flows_follow_rule_names),
		cmocka_unit_test(test_packet_before_sweep),
		cmocka_unit_test(test_keep_or_recheck),
		cmocka_unit_test(test_recheck_survives_a_keep_reload),
		cmocka_unit_test(test_fragments_follow_recheck),
		cmocka_unit_test(test_icmp_error_meets_recheck),
		cmocka_unit_test(test_limit_state_carried),
		cmocka_unit_test(test_nat_binding_survives),
		cmocka_unit_test(test_nat_range_widened),
		cmocka_unit_test(test_timeouts_changed_table_full),
		cmocka_unit_test(test_masquerade_follows_address),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_many_generations),
	};
	return cmocka_run_group_tests_name("pipeline_reload", tests, NULL, NULL);
}
