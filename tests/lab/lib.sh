# Shared helpers for the namespace lab tests (source it): unique names,
# namespaces and veth links, processes run inside them, bounded waits,
# ok/not ok reporting, and a cleanup that runs on any exit or Ctrl-C.
# Lab rules: 10.x and fd00::/8 only, no default route, everything removed.

LAB_PREFIX=""
LAB_TMP=""
LAB_NS=()
LAB_PIDS=()
LAB_PASSED=0
LAB_FAILED=0
LAB_PY=/usr/bin/python3	# the pyenv python3 on PATH lacks modules

# lab_init TAG: names start with TAG + this shell's pid, truncated so that
# "<prefix><suffix of up to 4 chars>" stays within IFNAMSIZ-1 = 15 chars.
lab_init() {
	[ "$(id -u)" -eq 0 ] || { echo "lab tests need root (namespaces, XDP)" >&2; exit 1; }
	LAB_PREFIX=$(printf '%s%s' "$1" "$$" | cut -c1-10)
	LAB_TMP=$(mktemp -d "/tmp/${LAB_PREFIX}.XXXXXX")
	trap lab_cleanup EXIT
	trap 'echo "interrupted" >&2; exit 130' INT TERM HUP
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
}

lab_cleanup() {
	local pid ns
	trap - EXIT INT TERM HUP
	for pid in "${LAB_PIDS[@]}"; do
		# a test may have left one stopped (SIGSTOP): it must wake to die
		kill -CONT "$pid" 2>/dev/null
		kill "$pid" 2>/dev/null
	done
	for pid in "${LAB_PIDS[@]}"; do
		lab_wait_gone "$pid" 5 || kill -KILL "$pid" 2>/dev/null
	done
	for ns in "${LAB_NS[@]}"; do
		# anything still running in our namespaces was started by us
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$pid" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null
	done
	[ -n "$LAB_TMP" ] && rm -rf "$LAB_TMP"
}

# lab_ns NAME: create namespace <prefix>-NAME with lo up; prints its name.
lab_ns() {
	local ns="${LAB_PREFIX}-$1"
	ip netns add "$ns" || return 1
	LAB_NS+=("$ns")
	ip -n "$ns" link set lo up
	# quiet IPv6: no router solicitations, no RA, no DAD delays
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_ra=0 \
		net.ipv6.conf.default.accept_ra=0 \
		net.ipv6.conf.all.router_solicitations=0 \
		net.ipv6.conf.default.router_solicitations=0 \
		net.ipv6.conf.default.accept_dad=0 >/dev/null
}

lab_nsname() { echo "${LAB_PREFIX}-$1"; }
lab_ifname() { echo "${LAB_PREFIX}$1"; }

# lab_veth NS1 IF1 NS2 IF2: a veth pair <prefix>IF1 in NS1 <-> <prefix>IF2
# in NS2, both up. NS and IF are the short names. LAB_VETH_QUEUES=N (if
# set) gives both ends N RX and N TX queues.
lab_veth() {
	local n1 n2 i1 i2 q=()
	n1=$(lab_nsname "$1"); i1=$(lab_ifname "$2")
	n2=$(lab_nsname "$3"); i2=$(lab_ifname "$4")
	[ -n "${LAB_VETH_QUEUES:-}" ] && q=(numtxqueues "$LAB_VETH_QUEUES" numrxqueues "$LAB_VETH_QUEUES")
	ip -n "$n1" link add "$i1" "${q[@]}" type veth peer name "$i2" "${q[@]}" netns "$n2" || return 1
	ip -n "$n1" link set "$i1" up && ip -n "$n2" link set "$i2" up
}

# lab_in NS CMD...: run CMD in namespace NS (short name).
lab_in() {
	local ns; ns=$(lab_nsname "$1"); shift
	ip netns exec "$ns" "$@"
}

# lab_bg NS LOG CMD...: start CMD in NS in the background, output to LOG;
# sets LAB_LAST_PID (the command's own pid: ip netns exec execs it) and
# remembers it for cleanup.
lab_bg() {
	local ns log; ns=$(lab_nsname "$1"); log=$2; shift 2
	ip netns exec "$ns" "$@" >"$log" 2>&1 </dev/null &
	LAB_LAST_PID=$!
	LAB_PIDS+=("$LAB_LAST_PID")
}

# lab_wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds.
lab_wait_for() {
	local deadline=$((SECONDS + $1)); shift
	while ! "$@" 2>/dev/null; do
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

# lab_wait_gone PID SECONDS: wait for a process to exit.
lab_wait_gone() {
	local deadline=$((SECONDS + $2))
	while kill -0 "$1" 2>/dev/null; do
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

# lab_port_listening NS PROTO PORT: a socket is bound there (ss).
lab_port_listening() {
	lab_in "$1" ss -Hln"${2:0:1}" "sport = :$3" | grep -q .
}

# quiet CMD...: run CMD without its output (for check/check_not).
quiet() { "$@" >/dev/null 2>&1; }

ok() { echo "ok - $*"; LAB_PASSED=$((LAB_PASSED + 1)); }
not_ok() { echo "not ok - $*"; LAB_FAILED=$((LAB_FAILED + 1)); }

# check DESCRIPTION CMD...: ok if CMD succeeds.
check() {
	local what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}

# check_not DESCRIPTION CMD...: ok if CMD fails.
check_not() {
	local what=$1; shift
	if "$@"; then not_ok "$what"; else ok "$what"; fi
}

# check_eq DESCRIPTION GOT WANT
check_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1 (got '$2', want '$3')"; fi
}

# lab_summary: the last line of every lab test; returns nonzero on failure.
lab_summary() {
	echo "$LAB_PASSED passed, $LAB_FAILED failed"
	[ "$LAB_FAILED" -eq 0 ]
}

# ---- the bump-in-the-wire lab (test_bridge.sh, scripts/demo.sh) ----
#   cli: <p>c 10.10.0.1/24 fd00:10::1/64
#   fw:  <p>fc, <p>fs (no addresses; rampartd bridges them)
#   srv: <p>s 10.10.0.2/24 10.10.0.3/24 fd00:10::2/64

# lab_rampart_bins: RAMPARTD and RULEC from $RAMPART_BUILD_DIR (./build).
lab_rampart_bins() {
	local b=${RAMPART_BUILD_DIR:-./build}
	RAMPARTD=$b/daemon/rampartd
	RAMPARTCTL=$b/daemon/rampartctl
	RULEC=$b/rulec/rulec
	[ -x "$RAMPARTD" ] || { echo "no rampartd at $RAMPARTD (set RAMPART_BUILD_DIR)" >&2; return 1; }
}

# lab_compile POLICY.yaml OUT.rfw: with the built rulec; $RAMPART_TEST_RFW
# (a ready artifact) replaces the compile when set.
lab_compile() {
	if [ -n "${RAMPART_TEST_RFW:-}" ]; then
		cp "$RAMPART_TEST_RFW" "$2"
	elif [ -x "$RULEC" ]; then
		"$RULEC" compile "$1" -o "$2"
	else
		echo "no rulec at $RULEC" >&2
		return 1
	fi
}

lab_bridge_setup() {
	lab_ns cli && lab_ns fw && lab_ns srv || return 1
	lab_veth cli c fw fc && lab_veth fw fs srv s || return 1
	CLI_IF=$(lab_ifname c); SRV_IF=$(lab_ifname s)
	FW_IF_C=$(lab_ifname fc); FW_IF_S=$(lab_ifname fs)
	lab_in cli ip addr add 10.10.0.1/24 dev "$CLI_IF"
	lab_in cli ip addr add fd00:10::1/64 dev "$CLI_IF" nodad
	lab_in srv ip addr add 10.10.0.2/24 dev "$SRV_IF"
	lab_in srv ip addr add 10.10.0.3/24 dev "$SRV_IF"
	lab_in srv ip addr add fd00:10::2/64 dev "$SRV_IF" nodad
	# The endpoints' stacks would leave L4 checksums to the "hardware";
	# the AF_XDP bridge forwards them unfinished (ARCHITECTURE.md).
	lab_in cli ethtool -K "$CLI_IF" tx off >/dev/null
	lab_in srv ethtool -K "$SRV_IF" tx off >/dev/null
	# The firewall's own ports say nothing of their own.
	lab_in fw sysctl -qw "net.ipv6.conf.$FW_IF_C.disable_ipv6=1" \
		"net.ipv6.conf.$FW_IF_S.disable_ipv6=1" >/dev/null
}

# lab_router_setup N: the routed three-namespace lab on 10.N.x / fd00:N:x::
#   cli: <p>c 10.N.1.2/24 fd00:N:1::2/64, routes to the server subnet via fw
#   fw:  <p>fc 10.N.1.1/24 fd00:N:1::1/64 | <p>fs 10.N.2.1/24 fd00:N:2::1/64
#   srv: <p>s 10.N.2.2/24 fd00:N:2::2/64, routes to the client subnet via fw
# (no default route anywhere), then lab_router_neighbours N makes the
# firewall's kernel learn both hosts (rampartd only reads its table).
lab_router_setup() {
	local n=$1
	lab_ns cli && lab_ns fw && lab_ns srv || return 1
	lab_veth cli c fw fc && lab_veth fw fs srv s || return 1
	CLI_IF=$(lab_ifname c); SRV_IF=$(lab_ifname s)
	FW_IF_C=$(lab_ifname fc); FW_IF_S=$(lab_ifname fs)
	lab_in cli ip addr add "10.$n.1.2/24" dev "$CLI_IF"
	lab_in cli ip addr add "fd00:$n:1::2/64" dev "$CLI_IF" nodad
	lab_in cli ip route add "10.$n.2.0/24" via "10.$n.1.1"
	lab_in cli ip route add "fd00:$n:2::/64" via "fd00:$n:1::1"
	lab_in fw ip addr add "10.$n.1.1/24" dev "$FW_IF_C"
	lab_in fw ip addr add "fd00:$n:1::1/64" dev "$FW_IF_C" nodad
	lab_in fw ip addr add "10.$n.2.1/24" dev "$FW_IF_S"
	lab_in fw ip addr add "fd00:$n:2::1/64" dev "$FW_IF_S" nodad
	lab_in srv ip addr add "10.$n.2.2/24" dev "$SRV_IF"
	lab_in srv ip addr add "fd00:$n:2::2/64" dev "$SRV_IF" nodad
	lab_in srv ip route add "10.$n.1.0/24" via "10.$n.2.1"
	lab_in srv ip route add "fd00:$n:1::/64" via "fd00:$n:2::1"
	# unfinished L4 checksums would be forwarded as they are (ARCHITECTURE.md)
	lab_in cli ethtool -K "$CLI_IF" tx off >/dev/null
	lab_in srv ethtool -K "$SRV_IF" tx off >/dev/null
}

# lab_xps_queue0 NS IF: the host sends everything on TX queue 0 of IF
# (XPS: every CPU -> queue 0), which veth delivers on RX queue 0 of its
# peer, whatever the flow's hash.
lab_xps_queue0() {
	local q cpus
	cpus=$(printf '%x' $(((1 << $(nproc)) - 1)))
	for q in $(lab_in "$1" sh -c "ls /sys/class/net/$2/queues" | sed -n 's/^tx-//p' | sort -rn); do
		lab_in "$1" sh -c "echo $([ "$q" = 0 ] && echo "$cpus" || echo 0) \
			>/sys/class/net/$2/queues/tx-$q/xps_cpus" || return 1
	done
}

lab_router_neighbours() {
	local n=$1
	lab_in fw ping -q -c 1 -W 2 "10.$n.1.2" && lab_in fw ping -q -c 1 -W 2 "10.$n.2.2" &&
		lab_in fw ping -q -c 1 -W 2 "fd00:$n:1::2" && lab_in fw ping -q -c 1 -W 2 "fd00:$n:2::2"
}

# lab_rampartd_start RFW [ARGS...]: run rampartd in fw bridging the two
# ports; stdout in $LAB_TMP/rampartd.out, stderr in .err. Waits until it
# reports it is bridging; RAMPARTD_PID is its pid. Its control socket is
# $LAB_CONTROL (default $LAB_TMP/rampartd.sock): never the host's.
lab_rampartd_start() {
	local rfw=$1; shift
	LAB_CONTROL=${LAB_CONTROL:-$LAB_TMP/rampartd.sock}
	lab_rampartd_run bridging --policy "$rfw" \
		--interface "$FW_IF_C" --interface "$FW_IF_S" --mode bridge \
		--backend xsk --foreground --control "$LAB_CONTROL" "$@"
}

# lab_session_tool: $LAB_TMP/session.py, a long-lived TCP session for
# tests of what it must outlive (kill -9, a restart):
#   serve ADDR PORT [PEERLOG]  line echo server; each line's peer
#                              (ADDR:PORT) appended to PEERLOG
#   client ADDR PORT FILE [WAIT]  one connection, a line every 0.2 s that
#                              must come back within WAIT s (default 3),
#                              the count written to FILE; exits on the
#                              first failure (or after 200 s)
lab_session_tool() {
	cat >"$LAB_TMP/session.py" <<'PY'
import os, socket, sys, threading, time
mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
if mode == "serve":
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port)); s.listen(8)
    def echo(c, peer):
        f = c.makefile("rwb")
        for line in f:
            if len(sys.argv) > 4:
                with open(sys.argv[4], "a") as log:
                    log.write("%s:%d\n" % peer[:2])
            f.write(line); f.flush()
    while True:
        c, peer = s.accept()
        threading.Thread(target=echo, args=(c, peer), daemon=True).start()
wait = float(sys.argv[5]) if len(sys.argv) > 5 else 3
c = socket.create_connection((addr, port), timeout=wait)
f = c.makefile("rwb")
n, end = 0, time.time() + 200
while time.time() < end:
    n += 1
    f.write(b"line %d\n" % n); f.flush()
    if f.readline() != b"line %d\n" % n:
        sys.exit("bad echo")
    # written beside and renamed over: a reader never sees the file
    # empty between a truncation and the write (it took that for a
    # count that never grew: a session's check failed under load)
    with open(sys.argv[4] + ".new", "w") as out:
        out.write("%d\n" % n)
    os.replace(sys.argv[4] + ".new", sys.argv[4])
    time.sleep(0.2)
PY
}

# lab_session_start NS ADDR PORT [WAIT]: the client in the background
# (SESSION_PID), its count in $LAB_TMP/session.count, its output in
# $LAB_TMP/session.log.
lab_session_start() {
	rm -f "$LAB_TMP/session.count"
	lab_bg "$1" "$LAB_TMP/session.log" "$LAB_PY" "$LAB_TMP/session.py" client "$2" "$3" \
		"$LAB_TMP/session.count" "${4:-3}"
	SESSION_PID=$LAB_LAST_PID
}

lab_session_count() { cat "$LAB_TMP/session.count" 2>/dev/null || echo 0; }
lab_session_grew() { [ "$(lab_session_count)" -gt "$1" ]; }

# lab_session_alive [SECONDS]: the client runs and its count grows within
# SECONDS (default 3).
lab_session_alive() {
	local before; before=$(lab_session_count)
	kill -0 "$SESSION_PID" 2>/dev/null && lab_wait_for "${1:-3}" lab_session_grew "$before"
}

# lab_xdp_off: take the programs off fw's router ports (FW_IF_C, FW_IF_S),
# for tests that leave them attached on purpose (kill -9, --state-file).
lab_xdp_off() {
	local i
	for i in "${FW_IF_C:-}" "${FW_IF_S:-}"; do
		[ -n "$i" ] && ip -n "$(lab_nsname fw)" link set dev "$i" xdp off 2>/dev/null
	done
	return 0
}

# lab_xdp_attached: some interface in fw has an XDP program.
lab_xdp_attached() { ip -n "$(lab_nsname fw)" link show | grep -q ' xdp'; }

# lab_rampartd_run WORD ARGS...: rampartd ARGS in fw, stdout and stderr in
# $LAB_TMP/rampartd.out and .err; waits (20 s at most) until it says
# "rampartd: WORD" (bridging, routing) and runs. RAMPARTD_PID is its pid.
lab_rampartd_run() {
	local word=$1; shift
	# a previous run's output must not answer the wait below
	: >"$LAB_TMP/rampartd.out"; : >"$LAB_TMP/rampartd.err"
	# ip netns exec directly (not lab_in, a function): $! must be rampartd
	ip netns exec "$(lab_nsname fw)" "$RAMPARTD" "$@" \
		>"$LAB_TMP/rampartd.out" 2>"$LAB_TMP/rampartd.err" </dev/null &
	RAMPARTD_PID=$!
	LAB_PIDS+=("$RAMPARTD_PID")
	lab_wait_for 20 grep -q "^rampartd: $word" "$LAB_TMP/rampartd.err" &&
		kill -0 "$RAMPARTD_PID"
}

# lab_umems: how many UMEMs rampartd -v said it laid out at start (one
# per worker when its sockets share it, else one per socket).
lab_umems() {
	grep -c '^rampartd: .*UMEM.*: [0-9]* frames of [0-9]* B, ' "$LAB_TMP/rampartd.err"
}

# lab_rampartd_stop: SIGTERM rampartd ($RAMPARTD_PID, started with -v) and
# check a clean stop: exit 0 within 10 s, final counters printed, every
# frame of every UMEM it announced accounted for, no XDP program left in fw.
lab_rampartd_stop() {
	local umems
	lab_rampartd_term 10
	umems=$(lab_umems)
	[ "$umems" -gt 0 ] || umems="at least 1 (none announced)"
	check_eq "every UMEM frame accounted for at stop ($umems UMEMs)" \
		"$(grep -c ' 0 frames unaccounted$' "$LAB_TMP/rampartd.err")" "$umems"
	check_not "XDP program detached from both ports" \
		bash -c "ip -n $(lab_nsname fw) link show | grep -q xdp"
}

# lab_rampartd_term SECONDS: SIGTERM rampartd ($RAMPARTD_PID); checks it
# exits 0 within SECONDS and printed its final counters.
lab_rampartd_term() {
	local rc
	kill -TERM "$RAMPARTD_PID"
	if lab_wait_gone "$RAMPARTD_PID" "$1"; then
		wait "$RAMPARTD_PID"; rc=$?
		check_eq "rampartd exits 0 on SIGTERM" "$rc" 0
	else
		not_ok "rampartd exits within $1 s of SIGTERM"
	fi
	check "final counters printed at exit" lab_counter_blocks_over 1
}

# lab_counter_blocks: how many counter blocks rampartd has printed.
lab_counter_blocks() {
	grep -c '^end counters$' "$LAB_TMP/rampartd.out"
}

lab_counter_blocks_over() {
	[ "$(lab_counter_blocks)" -gt "$1" ]
}

# lab_counters OUT: SIGUSR1 rampartd and copy the block it prints to OUT.
lab_counters() {
	local before
	before=$(lab_counter_blocks)
	kill -USR1 "$RAMPARTD_PID" || return 1
	lab_wait_for 5 lab_counter_blocks_over "$before" || return 1
	awk '/^rampart counters$/ { n++; buf = "" } { buf = buf $0 "\n" }
	     /^end counters$/ { last = buf } END { printf "%s", last }' \
		"$LAB_TMP/rampartd.out" >"$1"
}

# lab_workers_block OUT: SIGUSR1 rampartd and copy the counters and workers
# blocks it prints (the same signal's) to OUT.
lab_workers_block() {
	local before
	before=$(grep -c '^end workers$' "$LAB_TMP/rampartd.out")
	kill -USR1 "$RAMPARTD_PID" || return 1
	lab_wait_for 5 bash -c "[ \$(grep -c '^end workers\$' '$LAB_TMP/rampartd.out') -gt $before ]" ||
		return 1
	awk '/^rampart counters$/ { c = "" } { c = c $0 "\n" } /^end counters$/ { lc = c }
	     /^rampart workers$/ { w = "" } { w = w $0 "\n" } /^end workers$/ { lw = w }
	     END { printf "%s%s", lc, lw }' "$LAB_TMP/rampartd.out" >"$1"
}

# lab_rule_counter FILE NAME packets|bytes
lab_rule_counter() {
	awk -v n="$2" -v f="$3" '$2 == n && NF == 5 && $1 ~ /^[0-9]+$/ {
		print (f == "packets" ? $4 : $5) }' "$1"
}

# lab_start_servers: HTTP on 8080 (v4 and v6) and 9090, UDP echo on 7000
# and a UDP sink on 9000, all in srv; waits until they listen.
lab_start_servers() {
	lab_bg srv "$LAB_TMP/http4.log" "$LAB_PY" -m http.server 8080 --bind 10.10.0.2 --directory "$LAB_TMP"
	lab_bg srv "$LAB_TMP/http6.log" "$LAB_PY" -m http.server 8080 --bind fd00:10::2 --directory "$LAB_TMP"
	lab_bg srv "$LAB_TMP/http9090.log" "$LAB_PY" -m http.server 9090 --bind 10.10.0.2 --directory "$LAB_TMP"
	lab_bg srv "$LAB_TMP/echo.log" "$LAB_PY" "$LAB_TMP/udp.py" echo 10.10.0.2 7000
	lab_bg srv "$LAB_TMP/sink.log" "$LAB_PY" "$LAB_TMP/udp.py" echo 10.10.0.2 9000
	lab_wait_for 10 lab_port_listening srv tcp 8080 &&
		lab_wait_for 10 lab_port_listening srv tcp 9090 &&
		lab_wait_for 10 lab_port_listening srv udp 7000 &&
		lab_wait_for 10 lab_port_listening srv udp 9000
}

# The UDP peer used by the lab: "echo ADDR PORT" serves, "send ADDR PORT
# COUNT SIZE" sends COUNT datagrams of SIZE bytes one by one, each waiting
# up to 1 s for its echo, and prints how many came back.
lab_write_udp_tool() {
	cat >"$LAB_TMP/udp.py" <<'PY'
import socket, sys
mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
if mode == "echo":
    s.bind((addr, port))
    while True:
        data, peer = s.recvfrom(65535)
        s.sendto(data, peer)
count, size = int(sys.argv[4]), int(sys.argv[5])
s.settimeout(1.0)
got = 0
for i in range(count):
    s.sendto(bytes([i % 256]) * size, (addr, port))
    try:
        s.recvfrom(65535)
        got += 1
    except socket.timeout:
        pass
print(got)
PY
}

# lab_write_flows_tool: $LAB_TMP/flows.py ADDR PORT N [SIZE], N UDP flows
# at once, each from its own port, datagrams of SIZE bytes (default 64;
# over the MTU both hosts send fragments): prints how many got their echo
# (a flow whose reply lands on another worker gets none).
lab_write_flows_tool() {
	cat >"$LAB_TMP/flows.py" <<'PY'
import select, socket, sys, time
addr, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
size = int(sys.argv[4]) if len(sys.argv) > 4 else 64
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
socks = [socket.socket(fam, socket.SOCK_DGRAM) for _ in range(n)]
got = set()
for rnd in range(3):
    for i, s in enumerate(socks):
        if i not in got:
            s.sendto(b"x" * size, (addr, port))
    end = time.time() + 1
    while time.time() < end and len(got) < n:
        r, _, _ = select.select([s for i, s in enumerate(socks) if i not in got], [], [], 0.1)
        for s in r:
            s.recvfrom(65536)
            got.add(socks.index(s))
print(len(got))
PY
}

# lab_write_nodf_tool: $LAB_TMP/nodf.py ADDR SIZE COUNT, COUNT IPv4 UDP
# datagrams of SIZE bytes to ADDR port 9000 without DF (and without the
# path MTU: IP_PMTUDISC_DONT), each waited for as an echo (1 s); prints
# how many came back whole. For routers that must fragment them.
lab_write_nodf_tool() {
	cat >"$LAB_TMP/nodf.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, 10, 0)	# IP_MTU_DISCOVER = IP_PMTUDISC_DONT: no DF
s.settimeout(1.0)
got = 0
for i in range(int(sys.argv[3])):
    data = bytes([i % 256]) * int(sys.argv[2])
    s.sendto(data, (sys.argv[1], 9000))
    try:
        got += s.recvfrom(65535)[0] == data
    except socket.timeout:
        pass
print(got)
PY
}

# lab_sanitized: the build under test is the ASan+UBSan one (its programs
# run 2-5 times slower; loops that repeat one thing for confidence repeat
# it fewer times there).
lab_sanitized() {
	grep -q 'RAMPART_SANITIZE:BOOL=ON' "$RAMPART_BUILD_DIR/CMakeCache.txt" 2>/dev/null
}

# lab_dpdk_eal: EAL_MEM and EAL_COMMON for a DPDK rampartd: hugepages when
# free ones exist, else --no-huge; under ASan always --no-huge, with LSan
# told of net_af_xdp's own leak at close. Files in memory: runs may be
# side by side.
lab_dpdk_eal() {
	EAL_COMMON="--no-pci --no-telemetry --log-level=lib.eal:warning"
	if lab_sanitized; then
		EAL_MEM="--no-huge -m 512 --no-shconf"
		export LSAN_OPTIONS="suppressions=$(dirname "${BASH_SOURCE[0]}")/dpdk-lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
		echo "# ASan build: EAL with --no-huge, LSan told of net_af_xdp's leak (docs/dpdk.md)"
	elif [ "$(awk '/^HugePages_Free/ {print $2}' /proc/meminfo)" -ge 128 ]; then
		EAL_MEM="--in-memory -m 256"
		echo "# hugepages: $(awk '/^HugePages_Free/ {print $2}' /proc/meminfo) free, EAL uses them"
	else
		EAL_MEM="--no-huge -m 512 --no-shconf"
		echo "# no free hugepages (scripts/host-setup.sh reserves them): EAL with --no-huge"
	fi
}

# lab_trafgen_udp OUT DA SA SRC DST DPORT: a trafgen config of 64-byte
# UDP frames from 50,000 source ports (10000-59999) in turn.
lab_trafgen_udp() {
	cat >"$1" <<CFG
{
  eth(da=$2, sa=$3),
  ipv4(sa=$4, da=$5, ttl=64),
  udp(sp=dinc(10000, 59999), dp=$6),
  fill(0x00, 18)
}
CFG
}

# lab_trafgen NS IF CONF N OUT: N frames of trafgen config CONF out of IF
# in NS (bounded: 300 s), through the qdisc; trafgen's output in OUT,
# its exit status returned. trafgen gives up at the first EAGAIN of its
# socket (its send buffer full of frames the qdisc holds while rampartd's
# side is still starting): the generator's hiccup, not the firewall's,
# so it gets one more go.
lab_trafgen() {
	local attempt rc
	for attempt in 1 2; do
		timeout 300 ip netns exec "$(lab_nsname "$1")" trafgen --dev "$2" --conf "$3" \
			-n "$4" --qdisc-path --cpus 1 >"$5" 2>&1
		rc=$?
		[ "$rc" -ne 0 ] && [ "$attempt" = 1 ] &&
			grep -q "Resource temporarily unavailable" "$5" || break
		echo "# trafgen stopped at an EAGAIN of its own socket; once more"
		sleep 1
	done
	return "$rc"
}

# lab_has_dpdk: 0 when rampartd was built with the DPDK backend.
lab_has_dpdk() {
	! "$RAMPARTD" --policy none --interface a --interface b --backend dpdk 2>&1 |
		grep -q 'not built in'
}
