/* Flows over a restart (pipe_state.h): a TCP connection through
 * masquerade saved by one pipeline and restored into a new one carries
 * on mid-stream with its public port; rules follow by name; time spent
 * down counts; damaged, truncated or foreign files and a changed worker
 * count are refused whole; an IPv6 flow with translated addresses comes
 * back with them; a checkpoint copied in slices is the same file. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "crc32c.h"
#include "ct.h"
#include "frames.h"
#include "nat.h"
#include "pipe_state.h"
#include "pipeline.h"
#include "router_lab.h"
#include "rss_home.h"

#define SEC 1000000000ull
#define WALL (1700000000ull * SEC)	/* the wall clock when saved */

/* Masquerade through wan0, and the routes. */
#define POLICY_TAIL \
	"defaults: {action: drop}\n" \
	"nat:\n" \
	"  - name: masq\n" \
	"    match: {from: {network: 10.100.0.0/16}, to: {zone: outside}}\n" \
	"    snat: {to: masquerade, ports: 20000-20002}\n" \
	"routes:\n" \
	"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n" \
	"  - {prefix: 10.100.0.0/16, interface: lan0}\n"

static const char policy[] =
	"version: 1\n"
	"zones: {inside: [lan0], outside: [wan0]}\n"
	"rules:\n"
	"  - {name: lan-out, from: {zone: inside}, to: {zone: outside}, action: accept}\n"
	"  - {name: dns-in, proto: udp, from: {zone: outside}, to: {port: 53}, action: accept}\n"
	POLICY_TAIL;

/* The same with a rule before lan-out and dns-in gone. */
static const char policy_edited[] =
	"version: 1\n"
	"zones: {inside: [lan0], outside: [wan0]}\n"
	"rules:\n"
	"  - {name: ssh-in, proto: tcp, from: {zone: outside}, to: {port: 22}, action: accept}\n"
	"  - {name: lan-out, from: {zone: inside}, to: {zone: outside}, action: accept}\n"
	POLICY_TAIL;

struct lab {
	void *buf;
	size_t len;
	struct rfw_view view;
	struct pipe_worker *w[2];
	uint32_t n;
	uint32_t handed;	/* frames worker 0 handed to their flow's worker */
};

static const struct rss_home *lab_rss;	/* pipe_config.rss_home of the next lab_open */

/* n workers; home_seed given: frames go to their flow's worker (handoff). */
static void lab_open_home(struct lab *l, const char *text, uint32_t n, uint64_t seed,
			  const uint64_t *home_seed)
{
	struct pipe_config c = {.mode = PIPE_ROUTER, .max_flows = 64, .seed = seed,
				.worker_count = (uint16_t)n, .handoff = home_seed != NULL,
				.home_seed = home_seed ? *home_seed : 0, .rss_home = lab_rss};

	router_lab_compile(text, &l->buf, &l->len, &l->view);
	router_lab_ports(&c);
	l->n = n;
	for (uint32_t k = 0; k < n; k++) {
		c.worker_id = (uint16_t)k;
		l->w[k] = pipe_create(&c, &l->view);
		assert_non_null(l->w[k]);
		router_lab_neighbours(l->w[k]);
	}
}

static void lab_open_n(struct lab *l, const char *text, uint32_t n, uint64_t seed)
{
	lab_open_home(l, text, n, seed, NULL);
}

static void lab_open(struct lab *l, const char *text, uint64_t seed)
{
	lab_open_n(l, text, 1, seed);
}

static void lab_close(struct lab *l)
{
	for (uint32_t k = 0; k < l->n; k++)
		pipe_destroy(l->w[k]);
	free(l->buf);
}

/* On worker 0, and on the worker it is handed to, as rampartd would. */
static struct pipe_pkt run1(struct lab *l, struct frame *f, uint8_t in_port, uint64_t now)
{
	struct pipe_pkt p = {.data = f->b, .len = f->len, .room = sizeof(f->b), .in_port = in_port};

	uint32_t at = 0;

	pipe_process(l->w[0], &p, 1, now);
	while (p.verdict == PIPE_HANDOFF) {
		uint8_t owner = p.worker;

		/* to the flow's worker; from there, a packet that finds no
		 * flow to where a redirect says it lives, and back */
		assert_true(owner < l->n && owner != at && p.homed < 3);
		l->handed++;
		p = (struct pipe_pkt){.data = f->b, .len = p.len, .room = sizeof(f->b),
				      .in_port = in_port, .homed = (uint8_t)(p.homed + 1),
				      .second = p.second};
		pipe_process(l->w[owner], &p, 1, now);
		at = owner;
	}
	f->len = p.len;
	return p;
}

static struct pipe_pkt tcp(struct lab *l, const uint8_t *src, uint16_t sport, const uint8_t *dst,
			   uint16_t dport, uint8_t flags, uint32_t seq, uint32_t ack, uint32_t len,
			   uint64_t now, struct frame *f)
{
	struct flow_spec s = {.family = 4, .proto = 6, .sport = sport, .dport = dport,
			      .tcp_flags = flags, .seq = seq, .ack = ack, .payload = len};

	memcpy(s.src, src, 4);
	memcpy(s.dst, dst, 4);
	frame_build(f, &s);
	return run1(l, f, memcmp(src, client_ip, 4) ? 1 : 0, now);
}

/* A connection through masquerade, established, data sent: its public
 * port in *pub. */
static void establish(struct lab *l, uint16_t *pub)
{
	struct frame f;

	assert_int_equal(tcp(l, client_ip, 40000, remote_ip, 443, 0x02, 1000, 0, 0, 10 * SEC, &f)
				 .verdict, PIPE_FORWARD);
	*pub = frame_get16(f.b + 14 + 20);
	assert_int_equal(tcp(l, remote_ip, 443, wan_ip, *pub, 0x12, 5000, 1001, 0, 10 * SEC, &f)
				 .verdict, PIPE_FORWARD);
	assert_int_equal(tcp(l, client_ip, 40000, remote_ip, 443, 0x10, 1001, 5001, 0, 10 * SEC, &f)
				 .verdict, PIPE_FORWARD);
	assert_int_equal(tcp(l, client_ip, 40000, remote_ip, 443, 0x18, 1001, 5001, 100, 11 * SEC,
			     &f).verdict, PIPE_FORWARD);
}

/* fsync as the state writer calls it (this definition takes the place of
 * libc's in the test program): counts the directories synced, so that a
 * test sees the rename made durable, not only the file. */
static unsigned dir_syncs;

int fsync(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		dir_syncs++;
	return (int)syscall(SYS_fsync, fd);
}

static void save(struct lab *l, const char *path, uint64_t now, uint64_t wall, uint64_t flows)
{
	struct pipe_state_counts c;
	unsigned before = dir_syncs;
	char err[256];

	assert_int_equal(pipe_state_save(path, l->w, l->n, now, wall, &c, err, sizeof(err)), 0);
	assert_int_equal(c.flows, flows);
	assert_int_equal(dir_syncs, before + 1);	/* the rename is on disk too */
}

static int restore_flows(struct lab *l, const char *path, uint64_t now, uint64_t wall,
			 int recheck, struct pipe_state_counts *c, char *err, size_t errlen)
{
	struct pipe_state *s = pipe_state_open(path, err, errlen);
	int rc;

	if (!s)
		return -2;
	rc = pipe_state_restore(s, l->w, l->n, now, wall, recheck, c, err, errlen);
	pipe_state_close(s);
	return rc;
}

static int restore(struct lab *l, const char *path, uint64_t now, uint64_t wall,
		   struct pipe_state_counts *c, char *err, size_t errlen)
{
	return restore_flows(l, path, now, wall, 0, c, err, errlen);
}

/* The connection's next segments both ways, after the restart. */
static void carries_on(struct lab *l, uint16_t pub, uint64_t now)
{
	struct frame f;
	struct pipe_pkt p;

	p = tcp(l, client_ip, 40000, remote_ip, 443, 0x18, 1101, 5001, 50, now, &f);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(frame_get16(f.b + 14 + 20), pub);	/* the same public port */
	assert_memory_equal(f.b + 14 + 12, wan_ip, 4);
	assert_true(frame_checksums_ok(f.b, f.len));
	p = tcp(l, remote_ip, 443, wan_ip, pub, 0x18, 5001, 1151, 200, now, &f);
	assert_int_equal(p.verdict, PIPE_FORWARD);
	assert_int_equal(p.out_port, 0);
	assert_memory_equal(f.b + 14 + 16, client_ip, 4);
	assert_int_equal(frame_get16(f.b + 14 + 22), 40000);
	assert_true(frame_checksums_ok(f.b, f.len));
}

/* NAT pairs taken in all of the worker's pools (masquerade has one per
 * port address). */
static uint64_t pairs_in_use(const struct lab *l)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < pipe_nat_pool_count(l->w[0]); i++)
		n += pipe_nat_pool(l->w[0], i)->stats.in_use;
	return n;
}

static void test_connection_survives(void **state)
{
	struct lab a, b;
	struct pipe_state_counts c;
	struct ct_stats st;
	struct frame f;
	struct pipe_pkt p;
	char err[256], *path = router_lab_temp_path();
	uint16_t pub;
	(void)state;

	lab_open(&a, policy, 7);
	establish(&a, &pub);
	save(&a, path, 20 * SEC, WALL, 1);
	lab_close(&a);

	/* A new process: another hash key, its clock elsewhere, 2 s later. */
	lab_open(&b, policy, 99);
	p = tcp(&b, client_ip, 40000, remote_ip, 443, 0x18, 1101, 5001, 50, 3 * SEC, &f);
	assert_int_equal(p.verdict, PIPE_DROP);	/* without the state: no flow, mid-stream */
	assert_int_equal(restore(&b, path, 3 * SEC, WALL + 2 * SEC, &c, err, sizeof(err)), 0);
	assert_int_equal(c.flows, 1);
	assert_int_equal(c.restored, 1);
	assert_int_equal(c.rule_gone + c.expired + c.duplicate + c.full + c.invalid, 0);
	assert_int_equal(c.nat_unclaimed, 0);
	ct_get_stats(pipe_conntrack(b.w[0]), &st);
	assert_int_equal(st.in_use, 1);
	/* the port is taken in the pool again: two more flows get the other two */
	assert_int_equal(pairs_in_use(&b), 1);
	carries_on(&b, pub, 4 * SEC);
	assert_int_equal(pipe_rule_stats(b.w[0])[1].packets, 2);	/* lan-out's flow */
	for (uint16_t sport = 40001; sport <= 40002; sport++) {
		p = tcp(&b, client_ip, sport, remote_ip, 443, 0x02, 1, 0, 0, 4 * SEC, &f);
		assert_int_equal(p.verdict, PIPE_FORWARD);
		assert_int_not_equal(frame_get16(f.b + 14 + 20), pub);
	}
	/* restoring again finds every tuple taken */
	assert_int_equal(restore(&b, path, 5 * SEC, WALL + 3 * SEC, &c, err, sizeof(err)), 0);
	assert_int_equal(c.duplicate, 1);
	assert_int_equal(c.restored, 0);
	lab_close(&b);
	unlink(path);
}

/* SNAT to a pool that has the client's own address: its connection
 * leaves from 10.100.0.5 still, on a pool port. Restored, the flow takes
 * its pair in the pool again and gives it back when it ends. Before, a
 * flow whose reply went back to its source's own address counted as
 * never translated: its pair was left free for another flow to take. */
static const char own_address_policy[] =
	"version: 1\n"
	"zones: {inside: [lan0], outside: [wan0]}\n"
	"rules:\n"
	"  - {name: lan-out, from: {zone: inside}, to: {zone: outside}, action: accept}\n"
	"defaults: {action: drop, timeouts: {tcp_established: 100}}\n"
	"nat:\n"
	"  - name: own\n"
	"    match: {from: {network: 10.100.0.0/16}, to: {zone: outside}}\n"
	"    snat: {to: [10.100.0.5], ports: 20000-20002}\n"
	"routes:\n"
	"  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"
	"  - {prefix: 10.100.0.0/16, interface: lan0}\n";

static void test_snat_own_address_restored(void **state)
{
	struct lab a, b;
	struct pipe_state_counts c;
	char err[256], *path = router_lab_temp_path();
	struct frame f;
	uint16_t pub;
	(void)state;

	lab_open(&a, own_address_policy, 7);
	assert_int_equal(tcp(&a, client_ip, 40000, remote_ip, 443, 0x02, 1000, 0, 0, 10 * SEC, &f)
				 .verdict, PIPE_FORWARD);
	assert_memory_equal(f.b + 14 + 12, client_ip, 4);
	pub = frame_get16(f.b + 14 + 20);
	assert_true(pub >= 20000 && pub <= 20002);
	assert_int_equal(tcp(&a, remote_ip, 443, client_ip, pub, 0x12, 5000, 1001, 0, 10 * SEC, &f)
				 .verdict, PIPE_FORWARD);
	assert_int_equal(tcp(&a, client_ip, 40000, remote_ip, 443, 0x10, 1001, 5001, 0, 10 * SEC, &f)
				 .verdict, PIPE_FORWARD);
	assert_int_equal(pairs_in_use(&a), 1);
	save(&a, path, 11 * SEC, WALL, 1);
	lab_close(&a);

	lab_open(&b, own_address_policy, 99);
	assert_int_equal(restore(&b, path, 3 * SEC, WALL + SEC, &c, err, sizeof(err)), 0);
	assert_int_equal(c.restored, 1);
	assert_int_equal(c.nat_unclaimed, 0);
	assert_int_equal(pairs_in_use(&b), 1);
	pipe_tick(b.w[0], 200 * SEC);		/* it times out */
	pipe_tick(b.w[0], 201 * SEC);
	assert_int_equal(pairs_in_use(&b), 0);
	assert_int_equal(pipe_nat_pool(b.w[0], 0)->stats.bad_frees, 0);
	lab_close(&b);
	unlink(path);
}

/* A lab of policy with two flows: the masqueraded connection (its
 * public port in *pub) and a DNS flow from outside accepted by dns-in
 * (its packet in *dns). */
static void open_with_two_flows(struct lab *a, uint16_t *pub, struct flow_spec *dns)
{
	struct frame f;

	*dns = (struct flow_spec){.family = 4, .proto = 17, .sport = 3333, .dport = 53};
	memcpy(dns->src, remote_ip, 4);
	memcpy(dns->dst, client_ip, 4);
	lab_open(a, policy, 7);
	establish(a, pub);
	frame_build(&f, dns);
	assert_int_equal(run1(a, &f, 1, 11 * SEC).verdict, PIPE_FORWARD);	/* dns-in */
}

/* open_with_two_flows' flows into path. */
static void save_two_flows(const char *path, uint16_t *pub, struct flow_spec *dns)
{
	struct lab a;

	open_with_two_flows(&a, pub, dns);
	save(&a, path, 12 * SEC, WALL, 2);
	lab_close(&a);
}

/* save_two_flows, then both back into a worker of policy_edited (a rule
 * inserted before lan-out, dns-in gone), recheck or not; the masqueraded
 * connection carries on either way (lan-out still takes it). */
static void restore_into_edited(struct lab *b, int recheck, struct pipe_state_counts *c,
				struct flow_spec *dns)
{
	char err[256], *path = router_lab_temp_path();
	uint16_t pub;

	save_two_flows(path, &pub, dns);
	lab_open(b, policy_edited, 7);
	assert_int_equal(restore_flows(b, path, 12 * SEC, WALL, recheck, c, err, sizeof(err)), 0);
	assert_int_equal(c->restored, 2);
	carries_on(b, pub, 13 * SEC);
	unlink(path);
}

/* The new policy inserts a rule before the flow's and drops another:
 * the flow follows its rule's name; a flow whose rule is gone keeps
 * going under the default's row, as after a reload. */
static void test_rules_by_name(void **state)
{
	struct lab b;
	struct pipe_state_counts c;
	struct frame f;
	struct flow_spec dns;
	(void)state;

	restore_into_edited(&b, 0, &c, &dns);
	assert_int_equal(c.rule_gone, 1);
	assert_int_equal(pipe_rule_stats(b.w[0])[2].packets, 2);	/* lan-out, now rule 2 */
	assert_int_equal(pipe_rule_stats(b.w[0])[1].packets, 0);
	frame_build(&f, &dns);
	assert_int_equal(run1(&b, &f, 1, 13 * SEC).verdict, PIPE_FORWARD);	/* its flow */
	assert_int_equal(pipe_rule_stats(b.w[0])[0].packets, 1);
	lab_close(&b);
}

/* --reload-flows recheck: restored flows meet the new rules with their
 * next packet, as after a reload; the one no rule accepts now (dns-in is
 * gone, the default drops) ends, the other carries on. */
static void test_recheck(void **state)
{
	struct lab b;
	struct pipe_state_counts c;
	struct frame f;
	struct flow_spec dns;
	(void)state;

	restore_into_edited(&b, 1, &c, &dns);
	frame_build(&f, &dns);
	assert_int_equal(run1(&b, &f, 1, 13 * SEC).drop, PIPE_DROP_POLICY);
	assert_int_equal(pipe_stats(b.w[0])->recheck_ended, 1);
	lab_close(&b);
}

/* A flow whose time ran out while rampart was down is not restored. */
static void test_time_down_counts(void **state)
{
	struct lab a, b;
	struct pipe_state_counts c;
	struct flow_spec dns = {.family = 4, .proto = 17, .sport = 3333, .dport = 53};
	struct frame f;
	char err[256], *path = router_lab_temp_path();
	(void)state;

	lab_open(&a, policy, 7);
	memcpy(dns.src, remote_ip, 4);
	memcpy(dns.dst, client_ip, 4);
	frame_build(&f, &dns);
	assert_int_equal(run1(&a, &f, 1, 10 * SEC).verdict, PIPE_FORWARD);
	save(&a, path, 10 * SEC, WALL, 1);	/* UDP, one way: 30 s left */
	lab_close(&a);

	lab_open(&b, policy, 7);
	assert_int_equal(restore(&b, path, 1 * SEC, WALL + 31 * SEC, &c, err, sizeof(err)), 0);
	assert_int_equal(c.expired, 1);
	assert_int_equal(c.restored, 0);
	assert_int_equal(restore(&b, path, 1 * SEC, WALL + 20 * SEC, &c, err, sizeof(err)), 0);
	assert_int_equal(c.restored, 1);
	lab_close(&b);
	unlink(path);
}

static void backup(const char *path, const char *copy)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "cp %s %s", path, copy);
	assert_int_equal(system(cmd), 0);
}

static void flip_byte(const char *path, long at)
{
	FILE *f = fopen(path, "r+b");
	int ch;

	assert_non_null(f);
	assert_int_equal(fseek(f, at, at < 0 ? SEEK_END : SEEK_SET), 0);
	ch = fgetc(f);
	assert_int_equal(fseek(f, -1, SEEK_CUR), 0);
	fputc(ch ^ 0x40, f);
	fclose(f);
}

/* The header's words (pipe_state.c's struct state_header) a test sets. */
#define HEADER_VERSION 8
#define HEADER_RULE_COUNT 32
#define HEADER_SIZE 72
#define HEADER_CRC 68		/* CRC32C of the header's bytes before it */

/* Set a 32-bit word of path's header and its checksum to match, as a
 * crafted file (or another version of the writer) would have it. */
static void set_header_word(const char *path, size_t at, uint32_t value)
{
	FILE *g = fopen(path, "r+b");
	uint8_t h[HEADER_SIZE];
	uint32_t crc;

	assert_non_null(g);
	assert_int_equal(fread(h, 1, HEADER_SIZE, g), HEADER_SIZE);
	memcpy(h + at, &value, 4);
	crc = crc32c(0, h, HEADER_CRC);
	memcpy(h + HEADER_CRC, &crc, 4);
	rewind(g);
	assert_int_equal(fwrite(h, 1, HEADER_SIZE, g), HEADER_SIZE);
	fclose(g);
}

/* Refused whole, the tables left empty: a damaged record, a damaged
 * header, a file of a later format, a file cut short, something else,
 * another worker count; no file is ENOENT. */
static void test_refusals(void **state)
{
	struct lab a, b;
	struct pipe_state_counts c;
	struct ct_stats st;
	char err[256], *path = router_lab_temp_path(), copy[64];
	uint16_t pub;
	FILE *f;
	(void)state;

	lab_open(&a, policy, 7);
	establish(&a, &pub);
	save(&a, path, 20 * SEC, WALL, 1);
	lab_close(&a);
	snprintf(copy, sizeof(copy), "%s.good", path);
	backup(path, copy);
	lab_open(&b, policy, 7);

	flip_byte(path, -20);	/* inside the record */
	assert_int_equal(restore(&b, path, SEC, WALL, &c, err, sizeof(err)), -2);
	assert_non_null(strstr(err, "checksum"));
	rename(copy, path);
	backup(path, copy);
	flip_byte(path, 60);	/* the header's home seed */
	assert_int_equal(restore(&b, path, SEC, WALL, &c, err, sizeof(err)), -2);
	assert_non_null(strstr(err, "header checksum"));
	rename(copy, path);
	backup(path, copy);
	/* more rule names than the names section has bytes for: a crafted
	 * header (checksum right) must not make the reader allocate 32 GB */
	set_header_word(path, HEADER_RULE_COUNT, 0xffffffffu);
	assert_int_equal(restore(&b, path, SEC, WALL, &c, err, sizeof(err)), -2);
	assert_non_null(strstr(err, "sizes inconsistent"));
	rename(copy, path);
	backup(path, copy);
	/* a later format (a downgrade): refused, not read as this one */
	set_header_word(path, HEADER_VERSION, 3);
	assert_int_equal(restore(&b, path, SEC, WALL, &c, err, sizeof(err)), -2);
	assert_non_null(strstr(err, "another version"));
	rename(copy, path);
	assert_int_equal(truncate(path, 72 + 40), 0);
	assert_int_equal(restore(&b, path, SEC, WALL, &c, err, sizeof(err)), -2);
	f = fopen(path, "wb");
	assert_non_null(f);
	fputs("version: 1\nrules: []\n# not a state file, but long enough to be read as one\n", f);
	fclose(f);
	assert_int_equal(restore(&b, path, SEC, WALL, &c, err, sizeof(err)), -2);
	assert_non_null(strstr(err, "not a rampart state file"));
	unlink(path);
	assert_null(pipe_state_open(path, err, sizeof(err)));
	assert_int_equal(errno, ENOENT);
	ct_get_stats(pipe_conntrack(b.w[0]), &st);
	assert_int_equal(st.in_use, 0);
	lab_close(&b);

	/* written by one worker, two run now */
	lab_open(&a, policy, 7);
	establish(&a, &pub);
	save(&a, path, 20 * SEC, WALL, 1);
	lab_close(&a);
	lab_open_n(&b, policy, 2, 7);
	assert_int_equal(restore(&b, path, SEC, WALL, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "1 workers, 2 run now"));
	for (uint32_t k = 0; k < 2; k++) {
		ct_get_stats(pipe_conntrack(b.w[k]), &st);
		assert_int_equal(st.in_use, 0);
	}
	lab_close(&b);
	unlink(path);
}

/* With handoff the flows go back to the worker that had them, under the
 * file's hash key (which rampartd takes over); a file written with
 * handoff is refused by workers without it. */
/* policy with 10,000 NAT ports, not 3: handoff steers each flow's port
 * to its worker, which needs ports to choose from */
static void wide_policy(char wide[sizeof(policy)])
{
	char *range;

	memcpy(wide, policy, sizeof(policy));
	range = strstr(wide, "20000-20002");
	assert_non_null(range);
	memcpy(range, "20000-29999", 11);
}

/* A state file that is not a regular file (a FIFO someone put there)
 * is refused at once: opening one without O_NONBLOCK waited for a
 * writer forever, and rampartd with it. alarm() fails the test instead. */
static void test_refuses_fifo(void **state)
{
	char path[300], err[256] = "", *base = router_lab_temp_path();
	(void)state;

	snprintf(path, sizeof(path), "%s.fifo", base);
	unlink(base);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(10);
	assert_null(pipe_state_open(path, err, sizeof(err)));
	alarm(0);
	assert_non_null(strstr(err, "not a regular file"));
	unlink(path);
}

static void test_handoff_workers(void **state)
{
	struct lab a, b;
	struct pipe_state_counts c;
	struct pipe_state *st;
	const uint64_t key = 0x5eed;
	uint64_t saved_key;
	char err[256], *path = router_lab_temp_path();
	uint16_t pub[2];
	struct frame f;
	char wide[sizeof(policy)];
	(void)state;

	wide_policy(wide);
	lab_open_home(&a, wide, 2, 7, &key);
	establish(&a, &pub[0]);
	assert_int_equal(tcp(&a, client_ip, 40001, remote_ip, 443, 0x02, 1000, 0, 0, 12 * SEC, &f)
				 .verdict, PIPE_FORWARD);
	pub[1] = frame_get16(f.b + 14 + 20);
	assert_true(a.handed > 0);	/* some packets were the other worker's */
	save(&a, path, 20 * SEC, WALL, 2);
	lab_close(&a);

	st = pipe_state_open(path, err, sizeof(err));
	assert_non_null(st);
	assert_int_equal(pipe_state_workers(st), 2);
	assert_int_equal(pipe_state_handoff(st), 1);
	saved_key = pipe_state_home_seed(st);
	assert_true(saved_key == key);
	pipe_state_close(st);

	lab_open_n(&b, wide, 2, 8);	/* no handoff now */
	assert_int_equal(restore(&b, path, SEC, WALL, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "handoff on"));
	lab_close(&b);

	lab_open_home(&b, wide, 2, 8, &saved_key);
	assert_int_equal(restore(&b, path, SEC, WALL + SEC, &c, err, sizeof(err)), 0);
	assert_int_equal(c.restored, 2);
	assert_int_equal(c.nat_unclaimed, 0);
	carries_on(&b, pub[0], 2 * SEC);
	/* the second flow's SYN-ACK finds it on its worker */
	assert_int_equal(tcp(&b, remote_ip, 443, wan_ip, pub[1], 0x12, 9000, 1001, 0, 2 * SEC, &f)
				 .verdict, PIPE_FORWARD);
	assert_int_equal(frame_get16(f.b + 14 + 22), 40001);
	lab_close(&b);
	unlink(path);
}

/* A checkpoint as rampartd takes one while running: each worker's flows
 * copied a few table slots and records at a time (pipe_state_collect,
 * resumed from its cursor), written by the writer: the same file,
 * byte for byte, as pipe_state_save of the stopped workers, and every
 * flow comes back from it. */
static void test_collect_in_slices(void **state)
{
	enum { ROOM = 3, SLOTS = 5, SYNS = 20 };
	uint8_t rec[ROOM * PIPE_STATE_RECORD_SIZE];
	struct lab a, b;
	struct pipe_state_counts c;
	struct pipe_state_writer *wr;
	const uint64_t key = 0x5eed;
	char err[256], whole[64], *path = router_lab_temp_path();
	char wide[sizeof(policy)];
	uint64_t flows = 0, calls = 0;
	struct frame f;
	uint16_t pub;
	FILE *x, *y;
	int ch;
	(void)state;

	wide_policy(wide);
	lab_open_home(&a, wide, 2, 7, &key);
	establish(&a, &pub);
	for (uint16_t i = 0; i < SYNS; i++)
		assert_int_equal(tcp(&a, client_ip, (uint16_t)(41000 + i), remote_ip, 443, 0x02, 1,
				     0, 0, 12 * SEC, &f).verdict, PIPE_FORWARD);

	wr = pipe_state_writer_open(path, a.w[0], a.n, &a.view, 0, err, sizeof(err));
	assert_non_null(wr);
	for (uint32_t k = 0; k < a.n; k++) {
		uint32_t cursor = 0, before, got;
		int done;

		do {
			before = cursor;
			done = pipe_state_collect(a.w[k], k, &a.view, 20, &cursor, SLOTS, rec, ROOM,
						  &got);
			assert_true(got <= ROOM);
			assert_true(cursor - before <= SLOTS && cursor > before);
			assert_int_equal(pipe_state_writer_put(wr, rec, got, err, sizeof(err)), 0);
			calls++;
		} while (!done);
	}
	assert_true(calls > 2 * 64 / SLOTS);	/* it did go in slices */
	assert_int_equal(pipe_state_writer_close(wr, WALL, &flows, err, sizeof(err)), 0);
	assert_int_equal(flows, 1 + SYNS);

	snprintf(whole, sizeof(whole), "%s.whole", path);
	save(&a, whole, 20 * SEC, WALL, 1 + SYNS);
	x = fopen(path, "rb");
	y = fopen(whole, "rb");
	assert_non_null(x);
	assert_non_null(y);
	while ((ch = fgetc(x)) != EOF)
		assert_int_equal(ch, fgetc(y));
	assert_int_equal(fgetc(y), EOF);
	fclose(x);
	fclose(y);
	lab_close(&a);

	lab_open_home(&b, wide, 2, 8, &key);
	assert_int_equal(restore(&b, path, SEC, WALL + SEC, &c, err, sizeof(err)), 0);
	assert_int_equal(c.restored, 1 + SYNS);
	assert_int_equal(c.nat_unclaimed, 0);
	carries_on(&b, pub, 2 * SEC);
	lab_close(&b);
	unlink(path);
	unlink(whole);
}

/* DNS flows from outside (no NAT), sports 3000.., dns-in: n of them. */
static void dns_flows(struct lab *l, uint32_t n, uint64_t now)
{
	for (uint32_t i = 0; i < n; i++) {
		struct flow_spec d = {.family = 4, .proto = 17, .sport = (uint16_t)(3000 + i),
				      .dport = 53};
		struct frame f;

		memcpy(d.src, remote_ip, 4);
		memcpy(d.dst, client_ip, 4);
		frame_build(&f, &d);
		assert_int_equal(run1(l, &f, 1, now).verdict, PIPE_FORWARD);
	}
}

/* ... and their answers, through whichever worker takes them. */
static uint32_t dns_answers(struct lab *l, uint32_t n, uint64_t now)
{
	uint32_t fwd = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct flow_spec d = {.family = 4, .proto = 17, .sport = 53,
				      .dport = (uint16_t)(3000 + i)};
		struct frame f;

		memcpy(d.src, client_ip, 4);
		memcpy(d.dst, remote_ip, 4);
		frame_build(&f, &d);
		fwd += run1(l, &f, 0, now).verdict == PIPE_FORWARD;
	}
	return fwd;
}

/* Masqueraded UDP flows from the client (DNS queries out): each one's
 * public port in pub[i]. */
static void masq_flows(struct lab *l, uint32_t n, uint64_t now, uint16_t *pub)
{
	for (uint32_t i = 0; i < n; i++) {
		struct flow_spec d = {.family = 4, .proto = 17, .sport = (uint16_t)(5000 + i),
				      .dport = (uint16_t)(n == 1 ? 54 : 53)};
		struct frame f;

		memcpy(d.src, client_ip, 4);
		memcpy(d.dst, remote_ip, 4);
		frame_build(&f, &d);
		assert_int_equal(run1(l, &f, 0, now).verdict, PIPE_FORWARD);
		pub[i] = frame_get16(f.b + 14 + 20);
	}
}

/* ... their answers back to the client, and a second query each out with
 * the same public port: how many of the n went both ways. */
static uint32_t masq_carry_on(struct lab *l, uint32_t n, uint64_t now, const uint16_t *pub)
{
	uint32_t ok = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct flow_spec d = {.family = 4, .proto = 17, .sport = 53, .dport = pub[i]};
		struct frame f;
		int back, out;

		memcpy(d.src, remote_ip, 4);
		memcpy(d.dst, wan_ip, 4);
		frame_build(&f, &d);
		back = run1(l, &f, 1, now).verdict == PIPE_FORWARD &&
		       frame_get16(f.b + 14 + 22) == 5000 + i;
		d = (struct flow_spec){.family = 4, .proto = 17, .sport = (uint16_t)(5000 + i),
				       .dport = 53};
		memcpy(d.src, client_ip, 4);
		memcpy(d.dst, remote_ip, 4);
		frame_build(&f, &d);
		out = run1(l, &f, 0, now).verdict == PIPE_FORWARD &&
		      frame_get16(f.b + 14 + 20) == pub[i];
		ok += back && out;
	}
	return ok;
}

/* End every flow of l's workers (as rampartctl flows --delete would). */
static void end_all_flows(struct lab *l)
{
	for (uint32_t k = 0; k < l->n; k++) {
		const struct ct_table *t = pipe_conntrack(l->w[k]);

		for (uint32_t f = 0; f < ct_max_flows(t); f++) {
			struct ct_flow_info fi;

			if (ct_flow_get(t, f, &fi) == 0)
				pipe_flow_end(l->w[k], f);
		}
	}
}

/* Another worker count. Two workers with handoff into one: every flow,
 * the masqueraded connection with its port. One worker into two with
 * handoff: each flow into the worker its packets now map to (their
 * answers find them there, a flow without a state would be dropped: no
 * rule lets them in); a masqueraded one whose directions now map to two
 * workers into the one whose share of the pool holds its port, and the
 * packets that find no flow where they map are handed there by a
 * redirect: every flow carries on both ways with its public port. */
static void test_other_worker_count(void **state)
{
	enum { DNS = 12, MASQ = 16 };
	uint16_t mpub[MASQ];
	struct lab a, b;
	struct pipe_state_counts c;
	const uint64_t key = 0x5eed;
	char err[256], *path = router_lab_temp_path();
	char wide[sizeof(policy)];
	uint16_t pub;
	(void)state;

	wide_policy(wide);
	lab_open_home(&a, wide, 2, 7, &key);
	establish(&a, &pub);
	dns_flows(&a, DNS, 11 * SEC);
	save(&a, path, 12 * SEC, WALL, 1 + DNS);
	lab_close(&a);
	lab_open_n(&b, wide, 1, 8);
	assert_int_equal(restore(&b, path, SEC, WALL + SEC, &c, err, sizeof(err)), 0);
	assert_int_equal(c.restored, 1 + DNS);
	assert_int_equal(c.unplaced + c.nat_unclaimed, 0);
	assert_true(c.rehomed > 0);	/* worker 1's flows */
	carries_on(&b, pub, 2 * SEC);
	assert_int_equal(dns_answers(&b, DNS, 2 * SEC), DNS);
	lab_close(&b);

	lab_open_n(&a, wide, 1, 7);
	establish(&a, &pub);
	dns_flows(&a, DNS, 11 * SEC);
	masq_flows(&a, MASQ, 11 * SEC, mpub);
	save(&a, path, 12 * SEC, WALL, 1 + DNS + MASQ);
	lab_close(&a);
	lab_open_home(&b, wide, 2, 8, &key);
	assert_int_equal(restore(&b, path, SEC, WALL + SEC, &c, err, sizeof(err)), 0);
	assert_int_equal(c.restored, 1 + DNS + MASQ);
	assert_int_equal(c.unplaced + c.nat_unclaimed, 0);
	assert_true(c.rehomed > 0);	/* some went to worker 1 */
	{
		uint32_t r0, r1;
		int kept;

		pipe_second_chance_sources(b.w[0], &kept, &r0);
		pipe_second_chance_sources(b.w[1], &kept, &r1);
		assert_true(r0 + r1 >= MASQ / 4);	/* redirects made */
		assert_false(kept);
	}
	assert_int_equal(dns_answers(&b, DNS, 2 * SEC), DNS);
	carries_on(&b, pub, 2 * SEC);
	assert_int_equal(masq_carry_on(&b, MASQ, 2 * SEC, mpub), MASQ);
	/* about half of them live where one direction does not map */
	assert_true(pipe_stats(b.w[0])->second_chance + pipe_stats(b.w[1])->second_chance >=
		    MASQ / 4);
	/* and the pools stay exact: a new flow (another port of the remote
	 * host) gets a port none of them has */
	masq_flows(&b, 1, 2 * SEC, &pub);
	for (uint32_t i = 0; i < MASQ; i++)
		assert_int_not_equal(pub, mpub[i]);
	/* the redirects are needed while a flow they lead to lives; once
	 * every flow has ended no worker needs them, and dropped they send
	 * no packet anywhere: a new flow's answer is not handed over */
	assert_true(pipe_redirects_needed(b.w[0]) || pipe_redirects_needed(b.w[1]));
	end_all_flows(&b);
	for (uint32_t k = 0; k < 2; k++) {
		uint32_t r;
		int kept;

		assert_false(pipe_redirects_needed(b.w[k]));
		pipe_drop_redirects(b.w[k]);
		pipe_second_chance_sources(b.w[k], &kept, &r);
		assert_int_equal(r, 0);
	}
	{
		uint64_t before = pipe_stats(b.w[0])->second_chance + pipe_stats(b.w[1])->second_chance;

		masq_flows(&b, MASQ, 3 * SEC, mpub);
		assert_int_equal(masq_carry_on(&b, MASQ, 3 * SEC, mpub), MASQ);
		assert_int_equal(pipe_stats(b.w[0])->second_chance +
				 pipe_stats(b.w[1])->second_chance, before);
	}
	lab_close(&b);

	/* the same flows checkpointed by those two workers and restored
	 * into two again: the redirects come back with them */
	lab_open_n(&a, wide, 1, 7);
	masq_flows(&a, MASQ, 11 * SEC, mpub);
	save(&a, path, 12 * SEC, WALL, MASQ);
	lab_close(&a);
	lab_open_home(&b, wide, 2, 8, &key);
	assert_int_equal(restore(&b, path, SEC, WALL + SEC, &c, err, sizeof(err)), 0);
	assert_int_equal(c.restored, MASQ);
	save(&b, path, 3 * SEC, WALL + 3 * SEC, MASQ);
	lab_close(&b);
	lab_open_home(&b, wide, 2, 9, &key);
	assert_int_equal(restore(&b, path, SEC, WALL + 4 * SEC, &c, err, sizeof(err)), 0);
	assert_int_equal(c.restored, MASQ);
	assert_int_equal(c.rehomed, 0);	/* each to the worker that saved it */
	assert_int_equal(masq_carry_on(&b, MASQ, 2 * SEC, mpub), MASQ);
	lab_close(&b);
	unlink(path);
}

/* Flows saved by two workers homed by the keyed hash, restored into two
 * homed by the NIC's RSS (--home rss after a restart), and back: every
 * flow back on the worker that saved it, the directions the other
 * function homes elsewhere reaching it by redirects; all carry on both
 * ways, the masqueraded ones with their public ports. */
static void test_restore_under_other_home(void **state)
{
	enum { DNS = 12, MASQ = 16 };
	static struct rss_home rss;
	const uint64_t key = 0x5eed;
	struct pipe_state_counts c;
	uint16_t mpub[MASQ], pub;
	char err[256], *path = router_lab_temp_path();
	char wide[sizeof(policy)];
	uint8_t rss_key[40];
	struct lab a, b;
	(void)state;

	rss_key_symmetric(rss_key, sizeof(rss_key));
	assert_int_equal(rss_home_init(&rss, rss_key, sizeof(rss_key), NULL, 128, 2, err,
				       sizeof(err)), 0);
	wide_policy(wide);
	for (int to_rss = 1; to_rss >= 0; to_rss--) {
		lab_rss = to_rss ? NULL : &rss;
		lab_open_home(&a, wide, 2, 7, &key);
		establish(&a, &pub);
		dns_flows(&a, DNS, 11 * SEC);
		masq_flows(&a, MASQ, 11 * SEC, mpub);
		save(&a, path, 12 * SEC, WALL, 1 + DNS + MASQ);
		lab_close(&a);
		lab_rss = to_rss ? &rss : NULL;
		lab_open_home(&b, wide, 2, 8, &key);
		lab_rss = NULL;
		assert_int_equal(restore(&b, path, SEC, WALL + SEC, &c, err, sizeof(err)), 0);
		assert_int_equal(c.restored, 1 + DNS + MASQ);
		assert_int_equal(c.unplaced + c.nat_unclaimed, 0);
		{	/* each stays with the worker that saved it (the same
			 * count); the directions homed elsewhere now get there
			 * by redirects */
			uint32_t r0, r1;
			int kept;

			pipe_second_chance_sources(b.w[0], &kept, &r0);
			pipe_second_chance_sources(b.w[1], &kept, &r1);
			assert_int_equal(c.rehomed, 0);
			assert_true(r0 + r1 >= (1 + DNS + MASQ) / 4);
		}
		assert_int_equal(dns_answers(&b, DNS, 2 * SEC), DNS);
		carries_on(&b, pub, 2 * SEC);
		assert_int_equal(masq_carry_on(&b, MASQ, 2 * SEC, mpub), MASQ);
		lab_close(&b);
	}
	unlink(path);
}

/* The policy with a UDP port forward (wan0:8080 to 10.100.0.<server>:80). */
static void forward_policy(char *text, size_t room, int server)
{
	snprintf(text, room,
		 "version: 1\n"
		 "zones: {inside: [lan0], outside: [wan0]}\n"
		 "rules:\n"
		 "  - {name: lan-out, from: {zone: inside}, to: {zone: outside}, action: accept}\n"
		 "  - {name: fwd-in, proto: udp, from: {zone: outside}, to: {network: 10.100.0.0/24, "
		 "port: 80}, action: accept}\n"
		 "defaults: {action: drop}\n"
		 "nat:\n"
		 "  - name: fwd\n"
		 "    match: {from: {zone: outside}, to: {network: 10.0.1.1, service: udp/8080}}\n"
		 "    dnat: {to: 10.100.0.%d, port: 80}\n"
		 "routes:\n"
		 "  - {prefix: 10.200.0.0/16, via: 10.0.1.254, interface: wan0}\n"
		 "  - {prefix: 10.100.0.0/16, interface: lan0}\n", server);
}

/* A datagram of forwarded flow i (from the remote host to wan0:8080) and
 * the server's answer: both forwarded, to `srv` and back from wan0:8080. */
static void forwarded(struct lab *l, uint16_t i, const uint8_t *srv, uint64_t now)
{
	struct flow_spec d = {.family = 4, .proto = 17, .sport = (uint16_t)(6000 + i), .dport = 8080};
	struct frame f;

	memcpy(d.src, remote_ip, 4);
	memcpy(d.dst, wan_ip, 4);
	frame_build(&f, &d);
	assert_int_equal(run1(l, &f, 1, now).verdict, PIPE_FORWARD);
	assert_memory_equal(f.b + 14 + 16, srv, 4);
	d = (struct flow_spec){.family = 4, .proto = 17, .sport = 80, .dport = (uint16_t)(6000 + i)};
	memcpy(d.src, srv, 4);
	memcpy(d.dst, remote_ip, 4);
	frame_build(&f, &d);
	assert_int_equal(run1(l, &f, 0, now).verdict, PIPE_FORWARD);
	assert_memory_equal(f.b + 14 + 12, wan_ip, 4);
	assert_int_equal(frame_get16(f.b + 14 + 20), 8080);
}

/* A file written under one port forward, restored (same worker count,
 * handoff) under a policy that forwards the port to another server: the
 * flows forwarded before still reach their server both ways; the rules
 * now home their first direction on other workers (about half of them
 * with two), which the restore redirects to where each flow lives. */
static void test_restore_under_other_dnat(void **state)
{
	enum { FWD = 32 };
	static const uint8_t moved_ip[4] = {10, 100, 0, 11};
	const uint64_t key = 0x5eed;
	char text[sizeof(policy) + 512], moved[sizeof(policy) + 512], err[256];
	char *path = router_lab_temp_path();
	struct pipe_state_counts c;
	struct lab a, b;
	(void)state;

	forward_policy(text, sizeof(text), 10);
	forward_policy(moved, sizeof(moved), 11);
	lab_open_home(&a, text, 2, 7, &key);
	for (uint16_t i = 0; i < FWD; i++)
		forwarded(&a, i, server_ip, 10 * SEC);
	save(&a, path, 11 * SEC, WALL, FWD);
	lab_close(&a);
	lab_open_home(&b, moved, 2, 8, &key);
	assert_int_equal(restore(&b, path, SEC, WALL + SEC, &c, err, sizeof(err)), 0);
	assert_int_equal(c.restored, FWD);
	for (uint16_t i = 0; i < FWD; i++)
		forwarded(&b, i, server_ip, 2 * SEC);
	assert_true(pipe_stats(b.w[0])->second_chance + pipe_stats(b.w[1])->second_chance >=
		    FWD / 8);	/* redirected */
	for (uint32_t k = 0; k < 2; k++)
		assert_int_equal(pipe_neigh_set(b.w[k], 0, 4, moved_ip, server_mac), 0);
	forwarded(&b, FWD, moved_ip, 2 * SEC);	/* a new one: the new server */
	lab_close(&b);
	unlink(path);
}

/* Save lab a's flows as a checkpoint would (checkpoint set) or as a
 * clean stop does, into path; names: the policy its workers run. */
static void save_as(struct lab *a, const struct rfw_view *names, const char *path,
		    int checkpoint, uint64_t flows)
{
	uint8_t rec[8 * PIPE_STATE_RECORD_SIZE];
	struct pipe_state_writer *wr;
	char err[256];
	uint64_t n = 0;

	wr = pipe_state_writer_open(path, a->w[0], a->n, names, checkpoint, err, sizeof(err));
	assert_non_null(wr);
	for (uint32_t k = 0; k < a->n; k++) {
		uint32_t cursor = 0, got;
		int done;

		do {
			done = pipe_state_collect(a->w[k], k, names, 20, &cursor, UINT32_MAX, rec,
						  8, &got);
			assert_int_equal(pipe_state_writer_put(wr, rec, got, err, sizeof(err)), 0);
		} while (!done);
	}
	assert_int_equal(pipe_state_writer_close(wr, WALL, &n, err, sizeof(err)), 0);
	assert_int_equal(n, flows);
}

/* A checkpoint's TCP windows may be seconds old: restored from one, a
 * connection whose transfer went on (its next segment 5 MB further)
 * carries on, both ways, and the windows hold again from there; from a
 * clean stop's file (exact windows) the same segment is out of window. */
static void test_checkpoint_resync(void **state)
{
	const uint32_t ahead = 5000000;
	struct pipe_state_counts c;
	char err[256], *path = router_lab_temp_path();
	struct frame f;
	struct lab a, b;
	uint16_t pub;
	(void)state;

	for (int checkpoint = 1; checkpoint >= 0; checkpoint--) {
		lab_open(&a, policy, 7);
		establish(&a, &pub);	/* client at 1101, server at 5001 */
		save_as(&a, &a.view, path, checkpoint, 1);
		lab_close(&a);
		lab_open(&b, policy, 8);
		assert_int_equal(restore(&b, path, 3 * SEC, WALL + 2 * SEC, &c, err, sizeof(err)), 0);
		assert_int_equal(c.restored, 1);
		if (!checkpoint) {
			assert_int_equal(tcp(&b, client_ip, 40000, remote_ip, 443, 0x18, 1101 + ahead,
					     5001, 100, 4 * SEC, &f).verdict, PIPE_DROP);
			lab_close(&b);
			break;
		}
		assert_int_equal(tcp(&b, client_ip, 40000, remote_ip, 443, 0x18, 1101 + ahead, 5001 + ahead,
				     100, 4 * SEC, &f).verdict, PIPE_FORWARD);
		assert_int_equal(frame_get16(f.b + 14 + 20), pub);
		assert_int_equal(tcp(&b, remote_ip, 443, wan_ip, pub, 0x18, 5001 + ahead,
				     1201 + ahead, 50, 4 * SEC, &f).verdict, PIPE_FORWARD);
		assert_int_equal(frame_get16(f.b + 14 + 22), 40000);
		/* learnt: in-window goes on, 5 MB further again does not */
		assert_int_equal(tcp(&b, client_ip, 40000, remote_ip, 443, 0x18, 1201 + ahead,
				     5051 + ahead, 100, 5 * SEC, &f).verdict, PIPE_FORWARD);
		assert_int_equal(tcp(&b, client_ip, 40000, remote_ip, 443, 0x18, 1301 + 2 * ahead,
				     5051 + ahead, 100, 5 * SEC, &f).verdict, PIPE_DROP);
		lab_close(&b);
	}
	unlink(path);
}

/* A policy the workers of a lab were reloaded to (its artifact must
 * outlive them). */
struct reloaded {
	void *buf;
	size_t len;
	struct rfw_view view;
};

/* Reload every worker of l to text, flows keep or recheck, as rampartd
 * does (build, adopt, sweep until no flow is left on the old policy). */
static void reload(struct lab *l, struct reloaded *to, const char *text,
		   enum pipe_flow_policy flows)
{
	char err[256] = "";

	router_lab_compile(text, &to->buf, &to->len, &to->view);
	for (uint32_t k = 0; k < l->n; k++) {
		struct pipe_policy *p =
			pipe_policy_build(l->w[k], &to->view, NULL, flows, NULL, err, sizeof(err));

		if (!p)
			fail_msg("build refused: %s", err);
		p = pipe_adopt(l->w[k], p);
		while (pipe_sweep(l->w[k]))
			;
		pipe_policy_free(p);
	}
}

/* How reload_then_save writes the file. */
enum save_way { SAVE_AT_STOP, SAVE_CHECKPOINT };

/* open_with_two_flows' flows made under policy, then a reload to
 * policy_edited with --flows recheck (dns-in gone: the default drops the
 * DNS flow), and, keep_after set, another reload that keeps flows; saved
 * into path before either flow's next packet. */
static void reload_then_save(const char *path, int keep_after, enum save_way way, uint16_t *pub,
			     struct flow_spec *dns)
{
	struct reloaded edited, again;
	struct lab a;

	open_with_two_flows(&a, pub, dns);
	reload(&a, &edited, policy_edited, PIPE_FLOWS_RECHECK);
	if (keep_after)
		reload(&a, &again, policy_edited, PIPE_FLOWS_KEEP);
	if (way == SAVE_CHECKPOINT)
		save_as(&a, keep_after ? &again.view : &edited.view, path, 1, 2);
	else
		save(&a, path, 12 * SEC, WALL, 2);
	lab_close(&a);
	free(edited.buf);
	if (keep_after)
		free(again.buf);
}

/* A reload with --flows recheck to a policy that refuses an idle flow,
 * then a restart (the state file) before its next packet, the restart
 * itself not asked to re-check: the flow is still due its re-check, so
 * its next packet meets the rules in force and is refused, the flow
 * ended. Before, the file kept only the rule number and the flow lived
 * on under rules that refuse it. The masqueraded connection, which
 * lan-out still accepts, passes its re-check and carries on. The same
 * through a later reload that keeps flows (the mark stays due), and
 * through a checkpoint (the running daemon's writer). */
static void test_recheck_mark_survives_restart(void **state)
{
	char err[256], *path = router_lab_temp_path();
	(void)state;

	for (int keep_after = 0; keep_after <= 1; keep_after++)
		for (int way = SAVE_AT_STOP; way <= SAVE_CHECKPOINT; way++) {
			struct pipe_state_counts c;
			struct flow_spec dns;
			struct ct_stats st;
			struct frame f;
			struct lab b;
			uint16_t pub;

			reload_then_save(path, keep_after, (enum save_way)way, &pub, &dns);
			lab_open(&b, policy_edited, 7);
			assert_int_equal(restore_flows(&b, path, 12 * SEC, WALL, 0, &c, err,
						       sizeof(err)), 0);
			assert_int_equal(c.restored, 2);
			assert_int_equal(c.invalid, 0);
			carries_on(&b, pub, 13 * SEC);
			frame_build(&f, &dns);
			assert_int_equal(run1(&b, &f, 1, 13 * SEC).drop, PIPE_DROP_POLICY);
			assert_int_equal(pipe_stats(b.w[0])->recheck_ended, 1);
			ct_get_stats(pipe_conntrack(b.w[0]), &st);
			assert_int_equal(st.in_use, 1);	/* the DNS flow ended */
			lab_close(&b);
		}
	unlink(path);
}

/* A version 1 file (written by the binary before the re-check mark: the
 * one an upgrade starts from) is still restored, its flows unmarked:
 * the DNS flow whose rule is gone lives on under the default's row, as
 * test_rules_by_name; the restart's own recheck still marks them all. A
 * version 1 record's rule is the number whole: one with the mark's bit
 * set is no rule of its policy (invalid), not a marked flow. */
static void test_reads_version_1(void **state)
{
	char err[256], *path = router_lab_temp_path();
	struct pipe_state_counts c;
	struct flow_spec dns;
	struct frame f;
	struct lab b;
	uint16_t pub;
	(void)state;

	for (int recheck = 0; recheck <= 1; recheck++) {
		save_two_flows(path, &pub, &dns);
		set_header_word(path, HEADER_VERSION, 1);
		lab_open(&b, policy_edited, 7);
		assert_int_equal(restore_flows(&b, path, 12 * SEC, WALL, recheck, &c, err,
					       sizeof(err)), 0);
		assert_int_equal(c.restored, 2);
		assert_int_equal(c.rule_gone, 1);
		carries_on(&b, pub, 13 * SEC);
		frame_build(&f, &dns);
		if (recheck) {
			assert_int_equal(run1(&b, &f, 1, 13 * SEC).drop, PIPE_DROP_POLICY);
			assert_int_equal(pipe_stats(b.w[0])->recheck_ended, 1);
		} else {
			assert_int_equal(run1(&b, &f, 1, 13 * SEC).verdict, PIPE_FORWARD);
			assert_int_equal(pipe_stats(b.w[0])->recheck_ended, 0);
		}
		lab_close(&b);
	}

	reload_then_save(path, 0, SAVE_AT_STOP, &pub, &dns);	/* both flows marked */
	set_header_word(path, HEADER_VERSION, 1);
	lab_open(&b, policy_edited, 7);
	assert_int_equal(restore_flows(&b, path, 12 * SEC, WALL, 0, &c, err, sizeof(err)), 0);
	assert_int_equal(c.invalid, 2);
	assert_int_equal(c.restored, 0);
	lab_close(&b);
	unlink(path);
}

/* conntrack alone: an IPv6 flow whose reply addresses are translated
 * (a side entry) and its TCP windows come back as they were. */
static void test_ct_ipv6_translated(void **state)
{
	struct ct_config cc = {.max_flows = 16, .seed = 1};
	struct ct_table *t1, *t2;
	struct flow_spec s = {.family = 6, .proto = 6, .sport = 1234, .dport = 80,
			      .tcp_flags = 0x02, .seq = 77};
	struct pkt_key reply = {0};
	struct ct_saved_flow sv;
	struct ct_flow_info i1, i2;
	struct frame f;
	struct pkt_meta m;
	struct ct_pkt p;
	uint32_t flow, flow2;
	(void)state;

	for (unsigned i = 0; i < RFW_TIMEOUT_COUNT; i++)
		cc.timeout[i] = 100;
	t1 = ct_create(&cc);
	cc.seed = 2;
	t2 = ct_create(&cc);
	assert_non_null(t1);
	assert_non_null(t2);
	s.src[0] = 0xfd;
	s.src[15] = 1;
	s.dst[0] = 0xfd;
	s.dst[15] = 2;
	frame_build(&f, &s);
	assert_int_equal(pkt_parse(f.b, f.len, &m), PKT_IP);
	p = (struct ct_pkt){.meta = &m, .frame = f.b, .len = f.len};
	reply.family = 6;
	reply.proto = 6;
	memcpy(reply.src, s.dst, 16);
	reply.dst[0] = 0xfd;
	reply.dst[15] = 9;	/* translated source */
	reply.sport = 80;
	reply.dport = 4321;
	assert_int_equal(ct_create_flow(t1, &p, &reply, 5, 10, &flow), CT_CREATED);
	assert_int_equal(ct_flow_save(t1, flow, 12, &sv), 0);
	assert_int_equal(sv.ttl, 98);
	assert_int_equal(sv.seqlo[0], 78);
	assert_int_equal(ct_flow_restore(t2, &sv, 5, 50, &flow2), CT_RESTORED);
	assert_int_equal(ct_flow_get(t1, flow, &i1), 0);
	assert_int_equal(ct_flow_get(t2, flow2, &i2), 0);
	assert_memory_equal(&i1.orig, &i2.orig, sizeof(i1.orig));
	assert_memory_equal(&i1.reply, &i2.reply, sizeof(i1.reply));
	assert_int_equal(i2.tcp_state, i1.tcp_state);
	assert_int_equal(i2.packets[0], 1);
	assert_int_equal(i2.expire, 50 + 98);
	assert_int_equal(ct_flow_restore(t2, &sv, 5, 50, &flow2), CT_RESTORE_DUP);
	sv.tstate[0] = 9;
	assert_int_equal(ct_flow_restore(t2, &sv, 5, 50, &flow2), CT_RESTORE_BAD);
	ct_destroy(t1);
	ct_destroy(t2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connection_survives),
		cmocka_unit_test(test_snat_own_address_restored),
		cmocka_unit_test(test_rules_by_name),
		cmocka_unit_test(test_recheck),
		cmocka_unit_test(test_time_down_counts),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_refuses_fifo),
		cmocka_unit_test(test_handoff_workers),
		cmocka_unit_test(test_collect_in_slices),
		cmocka_unit_test(test_other_worker_count),
		cmocka_unit_test(test_restore_under_other_home),
		cmocka_unit_test(test_restore_under_other_dnat),
		cmocka_unit_test(test_checkpoint_resync),
		cmocka_unit_test(test_recheck_mark_survives_restart),
		cmocka_unit_test(test_reads_version_1),
		cmocka_unit_test(test_ct_ipv6_translated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
