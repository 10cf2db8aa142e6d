#!/bin/bash
# Lab test of rampartd with several queues: veths with 4 RX/TX queues,
# --queues 4 --cores 0,1,0,1 (four workers on two cores here), many flows
# spread over the workers (the workers block shows it), request/reply
# flows through masquerade, TCP through masquerade (iperf3) and HTTP
# through DNAT (curl), IPv4 and IPv6, with the hosts spreading their
# flows over the queues: each frame handed to its flow's worker; then
# --handoff off, where that takes hosts sending on one queue.
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_multiqueue.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

NQ=4
#   cli: <p>c 10.50.1.2/24 fd00:50:1::2/64, routes to the server subnet and
#        the VIPs (10.50.9.80, fd00:50:9::80) via fw
#   fw:  <p>fc 10.50.1.1/24 fd00:50:1::1/64 | <p>fs 10.50.2.1/24 fd00:50:2::1/64
#   srv: <p>s 10.50.2.2/24 fd00:50:2::2/64; no route back: masquerade
mq_veth() {	# NS1 IF1 NS2 IF2, like lab_veth with NQ queues each way
	local n1 n2 i1 i2
	n1=$(lab_nsname "$1"); i1=$(lab_ifname "$2")
	n2=$(lab_nsname "$3"); i2=$(lab_ifname "$4")
	ip -n "$n1" link add "$i1" numtxqueues $NQ numrxqueues $NQ type veth peer name "$i2" \
		numtxqueues $NQ numrxqueues $NQ netns "$n2" || return 1
	ip -n "$n1" link set "$i1" up && ip -n "$n2" link set "$i2" up
}

setup() {
	lab_ns cli && lab_ns fw && lab_ns srv || return 1
	mq_veth cli c fw fc && mq_veth fw fs srv s || return 1
	CLI_IF=$(lab_ifname c); SRV_IF=$(lab_ifname s)
	FW_IF_C=$(lab_ifname fc); FW_IF_S=$(lab_ifname fs)
	lab_in cli ip addr add 10.50.1.2/24 dev "$CLI_IF"
	lab_in cli ip addr add fd00:50:1::2/64 dev "$CLI_IF" nodad
	lab_in cli ip route add 10.50.2.0/24 via 10.50.1.1
	lab_in cli ip route add 10.50.9.0/24 via 10.50.1.1
	lab_in cli ip route add fd00:50:2::/64 via fd00:50:1::1
	lab_in cli ip route add fd00:50:9::/64 via fd00:50:1::1
	lab_in fw ip addr add 10.50.1.1/24 dev "$FW_IF_C"
	lab_in fw ip addr add fd00:50:1::1/64 dev "$FW_IF_C" nodad
	lab_in fw ip addr add 10.50.2.1/24 dev "$FW_IF_S"
	lab_in fw ip addr add fd00:50:2::1/64 dev "$FW_IF_S" nodad
	lab_in srv ip addr add 10.50.2.2/24 dev "$SRV_IF"
	lab_in srv ip addr add fd00:50:2::2/64 dev "$SRV_IF" nodad
	lab_in cli ethtool -K "$CLI_IF" tx off >/dev/null
	lab_in srv ethtool -K "$SRV_IF" tx off >/dev/null
	lab_in fw ping -q -c 1 -W 2 10.50.1.2 && lab_in fw ping -q -c 1 -W 2 10.50.2.2 &&
		lab_in fw ping -q -c 1 -W 2 fd00:50:1::2 && lab_in fw ping -q -c 1 -W 2 fd00:50:2::2
}

# veth delivers a frame on the RX queue whose number is the sender's TX
# queue, and a Linux sender picks that by the flow's hash (a random one
# per TCP socket) unless XPS says otherwise. So the two directions of a
# flow reach rampart on unrelated queues: 3 flows of 4 have their replies
# land on a worker that does not own the flow (docs/operations.md). With
# lab_xps_queue0 the hosts send everything on TX queue 0, so every flow
# stays on worker 0.
one_queue() { lab_xps_queue0 "$@"; }

write_policy() {	# FILE [ECHO-PORT]: the echo VIP's DNAT target port (7001)
	cat >"$1" <<YAML
version: 1
zones:
  inside: [$FW_IF_C]
  outside: [$FW_IF_S]
nat:
  - {name: web-vip4, match: {from: {zone: inside}, to: {network: 10.50.9.80, service: tcp/80}}, dnat: {to: 10.50.2.2, port: 8080}}
  - {name: web-vip6, match: {from: {zone: inside}, to: {network: "fd00:50:9::80", service: tcp/80}}, dnat: {to: "fd00:50:2::2", port: 8080}}
  - {name: echo-vip, match: {from: {zone: inside}, to: {network: 10.50.9.80, service: tcp/7000}}, dnat: {to: 10.50.2.2, port: ${2:-7001}}}
  - {name: masq4, match: {from: {zone: inside}, to: {zone: outside}, family: ipv4}, snat: {to: masquerade}}
  - {name: masq6, match: {from: {zone: inside}, to: {zone: outside}, family: ipv6}, snat: {to: masquerade}}
rules:
  - {name: iperf-out, proto: tcp, from: {zone: inside}, to: {zone: outside, port: 5201-5202}, action: accept}
  - {name: web-out, proto: tcp, from: {zone: inside}, to: {zone: outside, port: 8080}, action: accept}
  - {name: echo-out, proto: tcp, from: {zone: inside}, to: {zone: outside, port: 7001-7003}, action: accept}
  - {name: udp-out, proto: udp, from: {zone: inside}, to: {zone: outside, port: 9000-9002}, action: accept}
# short closing, UDP and ICMP timeouts: kept DNAT rules are released
# once the flows from before a change are gone, and idle workers empty
# their tables (checked below)
defaults: {action: drop, stateful: true, timeouts: {tcp_closing: 2, udp: 3, udp_stream: 3, icmp: 5}}
routes:
  - {prefix: 10.50.1.0/24, interface: $FW_IF_C}
  - {prefix: 10.50.2.0/24, interface: $FW_IF_S}
  - {prefix: "fd00:50:1::/64", interface: $FW_IF_C}
  - {prefix: "fd00:50:2::/64", interface: $FW_IF_S}
YAML
}

# TCP echo servers that say which port answered, and a client that
# holds N connections to the echo VIP open across a reload: it echoes on
# each, says "ready", waits for the file GO, echoes on each again, then
# opens N new ones; prints the ports that answered each round
# ("7001*N 7001*N 7002*N" when a DNAT change kept the old flows).
write_echo_tools() {
	cat >"$LAB_TMP/tcpecho.py" <<'PY'
import socket, sys, threading
addr, port = sys.argv[1], int(sys.argv[2])
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((addr, port))
srv.listen(128)
def serve(c):
    while True:
        d = c.recv(100)
        if not d:
            return
        c.sendall(b"%d:" % port + d)
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
	cat >"$LAB_TMP/hold.py" <<'PY'
import os, socket, sys, time
addr, port, n, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def echo(s):
    try:
        s.sendall(b"x")
        return s.recv(100).split(b":")[0].decode()
    except OSError:
        return "lost"
def conns():
    out = []
    for _ in range(n):
        s = socket.create_connection((addr, port), timeout=4)
        s.settimeout(4)
        out.append(s)
    return out
old = conns()
r1 = [echo(s) for s in old]
print("ready", flush=True)
end = time.time() + 30
while not os.path.exists(go) and time.time() < end:
    time.sleep(0.05)
r2 = [echo(s) for s in old]
try:
    r3 = [echo(s) for s in conns()]
except OSError:
    r3 = ["lost"]
def tally(r):
    return ",".join("%s*%d" % (k, r.count(k)) for k in sorted(set(r)))
print(tally(r1), tally(r2), tally(r3), flush=True)
PY
}

all_echoed() {	# WHAT: 64 UDP request/reply flows through masquerade, each family
	local addr n
	for addr in 10.50.2.2 fd00:50:2::2; do
		n=$(lab_in cli "$LAB_PY" "$LAB_TMP/flows.py" "$addr" 9000 64)
		check "$1: 64 UDP request/reply flows through masquerade to $addr ($n of 64 echoed)" \
			test "$n" -eq 64
	done
}

start_rampartd() {
	rm -f "$LAB_TMP/rampartd.out" "$LAB_TMP/rampartd.err"
	ip netns exec "$(lab_nsname fw)" "$RAMPARTD" --policy "$LAB_TMP/mq.rfw" \
		--interface "$FW_IF_C" --interface "$FW_IF_S" --mode router \
		--queues $NQ --cores 0,1,0,1 --foreground -v --control "$LAB_TMP/rampartd.sock" "$@" \
		>"$LAB_TMP/rampartd.out" 2>"$LAB_TMP/rampartd.err" </dev/null &
	RAMPARTD_PID=$!
	LAB_PIDS+=("$RAMPARTD_PID")
	lab_wait_for 10 grep -q '^rampartd: routing' "$LAB_TMP/rampartd.err" &&
		kill -0 "$RAMPARTD_PID"
}

curl_ok() {	# URL COUNT: how many of COUNT fresh connections fetch the page
	local i n=0
	for i in $(seq "$2"); do
		lab_in cli curl -s --max-time 3 "$1" 2>/dev/null | grep -q hello && n=$((n + 1))
	done
	echo "$n"
}

lab_init rmq
lab_rampart_bins || { not_ok "rampartd built"; lab_summary; exit 1; }
command -v iperf3 >/dev/null || { not_ok "iperf3 installed"; lab_summary; exit 1; }
setup || { not_ok "lab set up"; lab_summary; exit 1; }
write_policy "$LAB_TMP/mq.yaml"
lab_compile "$LAB_TMP/mq.yaml" "$LAB_TMP/mq.rfw" || { not_ok "policy compiles"; lab_summary; exit 1; }
lab_write_flows_tool
write_echo_tools
lab_write_udp_tool
echo hello >"$LAB_TMP/index.txt"
lab_bg srv "$LAB_TMP/http4.log" "$LAB_PY" -m http.server 8080 --bind 10.50.2.2 --directory "$LAB_TMP"
lab_bg srv "$LAB_TMP/http6.log" "$LAB_PY" -m http.server 8080 --bind fd00:50:2::2 --directory "$LAB_TMP"
lab_bg srv "$LAB_TMP/echo4.log" "$LAB_PY" "$LAB_TMP/udp.py" echo 10.50.2.2 9000
lab_bg srv "$LAB_TMP/echo6.log" "$LAB_PY" "$LAB_TMP/udp.py" echo fd00:50:2::2 9000
lab_bg srv "$LAB_TMP/iperf.log" iperf3 -s
# a second server for the IPv6 run: one iperf3 server takes one test at a
# time and may still be closing the first when the second comes
lab_bg srv "$LAB_TMP/iperf6s.log" iperf3 -s -p 5202
lab_bg srv "$LAB_TMP/sink.log" "$LAB_PY" "$LAB_TMP/udp.py" echo 10.50.2.2 9001
lab_bg srv "$LAB_TMP/echo7001.log" "$LAB_PY" "$LAB_TMP/tcpecho.py" 10.50.2.2 7001
lab_bg srv "$LAB_TMP/echo7002.log" "$LAB_PY" "$LAB_TMP/tcpecho.py" 10.50.2.2 7002
lab_bg srv "$LAB_TMP/echo7003.log" "$LAB_PY" "$LAB_TMP/tcpecho.py" 10.50.2.2 7003
lab_wait_for 10 lab_port_listening srv tcp 8080 && lab_wait_for 10 lab_port_listening srv udp 9000 &&
	lab_wait_for 10 lab_port_listening srv tcp 7001 && lab_wait_for 10 lab_port_listening srv tcp 7002 &&
	lab_wait_for 10 lab_port_listening srv tcp 5201 && lab_wait_for 10 lab_port_listening srv tcp 5202 ||
	not_ok "servers listen"

# option errors: 1 for usage, 2 for what the interfaces refuse
rd_rc() {	# ARGS...: rampartd's exit status with the lab's ports
	ip netns exec "$(lab_nsname fw)" "$RAMPARTD" --policy "$LAB_TMP/mq.rfw" \
		--interface "$FW_IF_C" --interface "$FW_IF_S" --mode router \
		--control "$LAB_TMP/rampartd.sock" "$@" >/dev/null 2>&1
	echo $?
}
check_eq "--queues 0 is a usage error" "$(rd_rc --queues 0)" 1
check_eq "--cores 1- is a usage error" "$(rd_rc --cores 1-)" 1
check_eq "--cores 3-1 is a usage error" "$(rd_rc --cores 3-1)" 1
check_eq "--fail maybe is a usage error" "$(rd_rc --fail maybe)" 1
check_eq "--queues 5 on 4-queue ports cannot be set up" "$(rd_rc --queues 5)" 2
check_eq "--cores 1023 (no such CPU) cannot be set up" "$(rd_rc --queues 1 --cores 1023)" 2
check_not "nothing left attached by the refused starts" \
	bash -c "ip -n $(lab_nsname fw) link show | grep -q xdp"

# (checkpoints every second throughout: they must not cost a frame, see
# the load below)
if ! start_rampartd --metrics 127.0.0.1:19641 --state-file "$LAB_TMP/mq.state" \
	--state-interval 1; then
	not_ok "rampartd --queues $NQ starts"; cat "$LAB_TMP/rampartd.err" >&2; lab_summary; exit 1
fi
ok "rampartd --queues $NQ --cores 0,1,0,1 starts"
check_eq "one worker per queue" "$(grep -c '^rampartd: worker [0-9]*: queue' "$LAB_TMP/rampartd.err")" $NQ
check_eq "every queue of both ports has a socket" \
	"$(grep -c 'queue [0-9]*: AF_XDP' "$LAB_TMP/rampartd.err")" $((2 * NQ))

# One-way flows work on any worker: 64 UDP senders, each its own port.
senders=()
for i in $(seq 64); do
	lab_in cli "$LAB_PY" -c "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(20): s.sendto(b'x' * 64, ('10.50.2.2', 9001))" &
	senders+=($!)
done
wait "${senders[@]}"
w=$LAB_TMP/workers.txt
lab_workers_block "$w"
echo "# per worker after 64 one-way UDP flows (20 datagrams each):"; sed 's/^/# /' "$w"
busy=$(awk '$1 == "worker" && $2 ~ /^[0-9]+$/ && $5 > 0' "$w" | wc -l)
check "flows spread over more than one worker ($busy of $NQ busy)" test "$busy" -gt 1
lab_counters "$LAB_TMP/counters.txt"
sum=$(awk -v i="$FW_IF_S" '$1 == "interface" && $2 == i { print $5 }' "$LAB_TMP/counters.txt")
check "all 1280 datagrams forwarded, whichever worker took them (${sum:-0} sent)" \
	test "${sum:-0}" -ge 1280

# Two-way flows with the hosts' default queue choice: the two directions
# of a flow arrive on unrelated queues, and the handoff takes each frame
# to the worker that owns its flow.
all_echoed "hosts spreading over $NQ queues"
# Datagrams of 3000 bytes go as fragments both ways: the ones without
# ports follow their first fragment to its flow's worker.
for addr in 10.50.2.2 fd00:50:2::2; do
	n=$(lab_in cli "$LAB_PY" "$LAB_TMP/flows.py" "$addr" 9000 32 3000)
	check "32 UDP request/reply flows of 3000-byte datagrams (fragments) to $addr ($n of 32 echoed)" \
		test "$n" -eq 32
done

# The same, each datagram's fragments sent last first: the ones before
# their first wait for it, parked on their datagram's worker, then follow
# it to its flow's worker (docs/operations.md). scapy runs on one CPU
# so that its frames leave in the order sent. How many of a datagram's
# two later fragments wait depends on the order they reach its worker,
# which the test does not fix (a CI run of the ASan build parked 30 of
# the 32, all 16 datagrams echoed): at least one a datagram is counted;
# the 16 echoes are the check that matters (without parking, fragments
# that come first are dropped).
cat >"$LAB_TMP/reorder.py" <<'PY'
import select, socket, sys, time
from scapy.all import Ether, IP, UDP, Raw, fragment, sendp
iface, smac, dmac, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
payload = b"q" * 3000
socks, frames = [], []
for i in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.50.1.2", 0))
    socks.append(s)
    d = IP(bytes(IP(src="10.50.1.2", dst="10.50.2.2", id=0x3000 + i) /
                 UDP(sport=s.getsockname()[1], dport=9000) / Raw(payload)))
    frames += [Ether(src=smac, dst=dmac) / f for f in reversed(fragment(d, fragsize=1200))]
sendp(frames, iface=iface, verbose=False)
got, end = set(), time.time() + 3
while time.time() < end and len(got) < n:
    r, _, _ = select.select([s for i, s in enumerate(socks) if i not in got], [], [], 0.1)
    for s in r:
        if s.recv(4000) == payload:
            got.add(socks.index(s))
print(len(got))
PY
cli_mac=$(ip -n "$(lab_nsname cli)" -o link show "$CLI_IF" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
fwc_mac=$(ip -n "$(lab_nsname fw)" -o link show "$FW_IF_C" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
parked() {
	"$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" --json stats |
		"$LAB_PY" -c 'import json,sys; print(json.load(sys.stdin)["frag_parked"])'
}
parked0=$(parked)
n=$(lab_in cli taskset -c 0 "$LAB_PY" "$LAB_TMP/reorder.py" "$CLI_IF" "$cli_mac" "$fwc_mac" 16)
check "16 UDP flows of 3000-byte datagrams sent last fragment first: all echoed ($n of 16)" \
	test "${n:-0}" -eq 16
parked=$(parked)
check "  ... fragments before their first parked, at least one a datagram (${parked0:-?} -> ${parked:-?})" \
	test "$(( ${parked:-0} - ${parked0:-0} ))" -ge 16

# The same datagrams unfragmented on an MTU of 3200 (frames of 3042 and
# 3062 bytes, longer than a handoff slot): a frame of another worker's
# flow goes over in two slots (daemon/handoff.h), not lost.
set_mtu() {	# MTU: on all four ends of the two links
	lab_in cli ip link set "$CLI_IF" mtu "$1" && lab_in fw ip link set "$FW_IF_C" mtu "$1" &&
		lab_in fw ip link set "$FW_IF_S" mtu "$1" && lab_in srv ip link set "$SRV_IF" mtu "$1"
}
if set_mtu 3200; then
	sleep 1.5	# rampartd reads the ports' MTUs every second
	lab_workers_block "$w"
	lost0=$(awk '$1 == "worker" && $2 ~ /^[0-9]+$/ { s += $10 - $11 } END { print s + 0 }' "$w")
	for addr in 10.50.2.2 fd00:50:2::2; do
		n=$(lab_in cli "$LAB_PY" "$LAB_TMP/flows.py" "$addr" 9000 32 3000)
		check "MTU 3200: 32 UDP request/reply flows of 3000-byte datagrams, unfragmented, to $addr ($n of 32 echoed)" \
			test "$n" -eq 32
	done
	lab_workers_block "$w"
	lost=$(awk '$1 == "worker" && $2 ~ /^[0-9]+$/ { s += $10 - $11 } END { print s + 0 }' "$w")
	check_eq "MTU 3200: no frame lost between workers" "$((lost - lost0))" 0
else
	not_ok "MTU 3200 on the lab's links"
fi
set_mtu 1500 || not_ok "MTU 1500 again"

# (3 s each; 1 s in the ASan build, which repeats the check, not the load)
IPERF_S=3; lab_sanitized && IPERF_S=1
lab_in cli iperf3 -c 10.50.2.2 -P 16 -t "$IPERF_S" -J >"$LAB_TMP/iperf4.json" 2>&1
bps=$("$LAB_PY" -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' \
	"$LAB_TMP/iperf4.json" 2>/dev/null)
echo "# iperf3 -P 16 through masquerade (IPv4): ${bps:-failed} bit/s"
check "iperf3 -P 16 through masquerade, IPv4 (${bps:-0} bit/s)" test "${bps:-0}" -gt 0
lab_in cli iperf3 -6 -c fd00:50:2::2 -p 5202 -P 16 -t "$IPERF_S" -J >"$LAB_TMP/iperf6.json" 2>&1
bps=$("$LAB_PY" -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' \
	"$LAB_TMP/iperf6.json" 2>/dev/null)
check "iperf3 -P 16 through masquerade, IPv6 (${bps:-0} bit/s)" test "${bps:-0}" -gt 0
[ "${bps:-0}" -gt 0 ] || grep -m1 '"error"' "$LAB_TMP/iperf6.json" | sed 's/^/#   /'

n=$(curl_ok http://10.50.9.80/index.txt 20)
check "HTTP through DNAT 10.50.9.80:80 -> 10.50.2.2:8080 ($n of 20)" test "$n" -eq 20
n=$(curl_ok 'http://[fd00:50:9::80]/index.txt' 20)
check "HTTP through DNAT [fd00:50:9::80]:80 -> [fd00:50:2::2]:8080 ($n of 20)" test "$n" -eq 20

# A reload while TCP flows run through masquerade on every worker: the
# flows, their NAT ports (kept pools, steering and all) and the handoff
# carry over; new flows after it are answered too.
lab_in cli iperf3 -c 10.50.2.2 -P 8 -t 4 -J >"$LAB_TMP/iperf-reload.json" 2>&1 &
ipid=$!
sleep 1.5
check "rampartctl reload under traffic" quiet "$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" \
	reload "$LAB_TMP/mq.rfw"
wait "$ipid"
bps=$("$LAB_PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(int(d["end"]["sum_received"]["bits_per_second"]) if "error" not in d else 0)' \
	"$LAB_TMP/iperf-reload.json" 2>/dev/null)
check "iperf3 -P 8 through masquerade across the reload completes (${bps:-0} bit/s)" \
	test "${bps:-0}" -gt 0
all_echoed "after the reload"

# A reload that moves a DNAT rule (the echo VIP from port 7001 to 7002):
# each established connection it translated lives on the worker its old
# translation homed it on, and the new one homes its packets elsewhere
# (3 in 4 here); they find their flow there (a second chance) and keep
# talking to 7001, while new connections go to 7002. Without it those 3
# in 4 would be dropped as ct-invalid. Then a second move (to 7003)
# while both sets of connections are open: each keeps its server (the
# rules of both policies before are kept).
write_policy "$LAB_TMP/mq-moved.yaml" 7002
write_policy "$LAB_TMP/mq-moved2.yaml" 7003
if lab_compile "$LAB_TMP/mq-moved.yaml" "$LAB_TMP/mq-moved.rfw" &&
   lab_compile "$LAB_TMP/mq-moved2.yaml" "$LAB_TMP/mq-moved2.rfw"; then
	# hold NAME: 16 connections to the echo VIP held open (hold.py) until
	# the file NAME.go appears; its pid in hold_pid
	hold() {
		rm -f "$LAB_TMP/$1.go"
		lab_in cli "$LAB_PY" "$LAB_TMP/hold.py" 10.50.9.80 7000 16 "$LAB_TMP/$1.go" \
			>"$LAB_TMP/$1.out" 2>&1 &
		hold_pid=$!
		lab_wait_for 15 grep -q '^ready' "$LAB_TMP/$1.out" ||
			not_ok "16 connections to the echo VIP ($1)"
	}
	hold hold
	hpid=$hold_pid
	check "rampartctl reload moving the echo VIP's DNAT to port 7002" quiet \
		"$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" reload "$LAB_TMP/mq-moved.rfw"
	hold hold2
	"$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" reload "$LAB_TMP/mq-moved2.rfw" \
		>"$LAB_TMP/reload2.out" 2>&1
	check_eq "rampartctl reload moving it again, to port 7003" "$?" 0
	check "  ... it says the DNAT rules of both policies before are kept" \
		grep -q 'the DNAT rules of 2 policies before kept' "$LAB_TMP/reload2.out"
	touch "$LAB_TMP/hold.go" "$LAB_TMP/hold2.go"
	wait "$hpid" "$hold_pid"
	read -r r1 r2 r3 < <(grep -v '^ready' "$LAB_TMP/hold.out")
	read -r s1 s2 s3 < <(grep -v '^ready' "$LAB_TMP/hold2.out")
	check_eq "16 connections through the echo VIP answered by 7001 before the reloads" "${r1:-}" "7001*16"
	check_eq "  ... all 16 still answered by 7001 after both" "${r2:-}" "7001*16"
	check_eq "16 made between the two answered by 7002" "${s1:-}" "7002*16"
	check_eq "  ... all 16 still answered by 7002 after the second" "${s2:-}" "7002*16"
	check_eq "  ... and new ones by 7003" "${r3:-} ${s3:-}" "7003*16 7003*16"
	"$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" stats --workers --json >"$LAB_TMP/sc.json" 2>&1
	sc=$("$LAB_PY" -c 'import json,sys; print(sum(w["second_chance"] for w in json.load(open(sys.argv[1]))["workers"]))' \
		"$LAB_TMP/sc.json" 2>/dev/null)
	check "  ... the old ones' packets found their workers by a second chance (${sc:-none})" \
		test "${sc:-0}" -gt 0
	check "  ... rampartctl status says the DNAT rules before both changes are kept" grep -q \
		'second chance: DNAT rules before the last 2 changes kept' \
		<("$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" status)
	check_eq "  ... and so does its JSON" "$("$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" --json status |
		"$LAB_PY" -c 'import json,sys; s=json.load(sys.stdin)["handoff"]["second_chance"]; print(s["dnat_rules_kept"], s["dnat_rule_sets_kept"])')" "True 2"
	check "rampartctl reload back to the echo VIP on 7001" quiet \
		"$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" reload "$LAB_TMP/mq.rfw"
	# The hold.py connections are closed; once every flow from before
	# that change is gone (expired by each worker as traffic comes), no
	# flow needs the rules kept, and rampartd stops matching them.
	released() {
		lab_in cli "$LAB_PY" "$LAB_TMP/flows.py" 10.50.2.2 9000 16 >/dev/null
		grep -q 'DNAT rules kept since the last change of them released' "$LAB_TMP/rampartd.err"
	}
	check "  ... the kept DNAT rules released once no flow from before needs them" \
		lab_wait_for 30 released
	check_eq "  ... and status --json says none are kept" "$("$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" --json status |
		"$LAB_PY" -c 'import json,sys; print(json.load(sys.stdin)["handoff"]["second_chance"]["dnat_rules_kept"])')" False
	# No traffic now: idle workers still expire their flows (pipe_tick)
	in_use() {
		"$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" --json status |
			"$LAB_PY" -c 'import json,sys; sys.exit(json.load(sys.stdin)["conntrack"]["in_use"] != 0)'
	}
	if ! lab_wait_for 15 in_use; then
		not_ok "with no traffic the idle workers' flows expire (conntrack empty within 15 s)"
		"$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" flows | head -20 | sed 's/^/#   /'
	else
		ok "with no traffic the idle workers' flows expire (conntrack empty within 15 s)"
	fi
else
	not_ok "the moved policy compiles"
fi

# Load: 1,000,000 UDP frames from 50,000 source ports (new flows through
# masquerade, spread over the queues) to a closed port, whose ICMP errors
# come back through their flows, as fast as trafgen sends them on 2
# shared cores. Every frame must still be counted once: received = sent
# + dropped over both ports, for the load and for the whole run so far
# (iperf3 above fills the rings between workers at times: a frame lost on
# its way to another worker counts as received and dropped).
SOAK=1000000
lab_counters "$LAB_TMP/c0" || not_ok "counters before the load"
cmac=$(lab_in cli cat "/sys/class/net/$CLI_IF/address")
fmac=$(lab_in fw cat "/sys/class/net/$FW_IF_C/address")
lab_trafgen_udp "$LAB_TMP/load.trafgen" "$fmac" "$cmac" 10.50.1.2 10.50.2.2 9002
lab_in cli tc qdisc replace dev "$CLI_IF" root pfifo limit 4096
lab_trafgen cli "$CLI_IF" "$LAB_TMP/load.trafgen" "$SOAK" "$LAB_TMP/trafgen.out"
rc=$?
check_eq "trafgen sent $SOAK frames (exit status)" "$rc" 0
lab_in cli tc qdisc del dev "$CLI_IF" root 2>/dev/null
sleep 1
lab_counters "$LAB_TMP/c1" || not_ok "counters after the load"
sums() {	# FILE: rx tx dropped over every interface
	awk '$1 == "interface" && $2 != "name" { rx += $3; tx += $5; d += $7 }
	     END { print rx + 0, tx + 0, d + 0 }' "$1"
}
read -r rx0 tx0 d0 < <(sums "$LAB_TMP/c0")
read -r rx1 tx1 d1 < <(sums "$LAB_TMP/c1")
lab_workers_block "$w"
handed=$(awk '$1 == "worker" && $2 ~ /^[0-9]+$/ { s += $10 } END { print s + 0 }' "$w")
took=$(awk '$1 == "worker" && $2 ~ /^[0-9]+$/ { s += $11 } END { print s + 0 }' "$w")
echo "# load: received $((rx1 - rx0)), sent $((tx1 - tx0)), dropped $((d1 - d0)); handed off $handed, taken $took in all"
check "the load reached rampartd ($((rx1 - rx0)) frames)" test $((rx1 - rx0)) -ge $((SOAK / 10))
check_eq "under load, received = sent + dropped" "$((rx1 - rx0))" "$(((tx1 - tx0) + (d1 - d0)))"
check_eq "since the start ($((handed - took)) frames lost between workers), received = sent + dropped" \
	"$rx1" "$((tx1 + d1))"
check "the frames lost between workers are among the drops ($((handed - took)) <= $d1)" \
	test "$((handed - took))" -le "$d1"
all_echoed "after the load"
most=$(sed -n 's/^rampartd: checkpoint: \([0-9]*\) flows written.*/\1/p' "$LAB_TMP/rampartd.err" |
	sort -n | tail -1)
check "checkpoints every second held the load's flows (at most ${most:-none}), all four workers'" \
	test "${most:-0}" -ge 1000
check_not "  ... and none failed" grep -q 'checkpoint not written\|checkpoint skipped' \
	"$LAB_TMP/rampartd.err"

lab_workers_block "$w"
echo "# per worker at the end:"; sed 's/^/# /' "$w"
handed=$(awk '$1 == "worker" && $2 ~ /^[0-9]+$/ { s += $10 } END { print s + 0 }' "$w")
took=$(awk '$1 == "worker" && $2 ~ /^[0-9]+$/ { s += $11 } END { print s + 0 }' "$w")
check "frames were handed between workers ($handed handed off, $took taken)" \
	test "$handed" -gt 0 -a "$took" -gt 0 -a "$took" -le "$handed"
"$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" stats --workers >"$LAB_TMP/sw.txt" 2>&1
check "rampartctl stats --workers shows HANDED-OFF and HANDED-IN" grep -q 'HANDED-OFF *HANDED-IN' \
	"$LAB_TMP/sw.txt"
"$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" stats --workers --json >"$LAB_TMP/sw.json" 2>&1
jh=$("$LAB_PY" -c 'import json,sys; print(sum(x["handed_off"] for x in json.load(open(sys.argv[1]))["workers"]))' \
	"$LAB_TMP/sw.json" 2>/dev/null)
check "rampartctl stats --workers --json: handed_off summed over the workers (${jh:-none})" \
	test "${jh:-0}" -gt 0
"$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" status >"$LAB_TMP/status.txt" 2>&1
check "rampartctl status: handoff on, $NQ workers" grep -q "^handoff: *on, $NQ workers" \
	"$LAB_TMP/status.txt"
check "rampartctl status: the masquerade pools' UNSTEERED column" grep -q 'UNSTEERED' \
	"$LAB_TMP/status.txt"
"$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" status --json >"$LAB_TMP/status.json" 2>&1
check_eq "rampartctl status --json: handoff.on" \
	"$("$LAB_PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["handoff"]["on"])' \
		"$LAB_TMP/status.json" 2>&1)" True
lab_in fw curl -s --max-time 5 http://127.0.0.1:19641/metrics >"$LAB_TMP/metrics.txt"
mh=$(awk '/^rampart_worker_handed_in_packets_total\{/ { s += $2 } END { print s + 0 }' "$LAB_TMP/metrics.txt")
check "--metrics: rampart_worker_handed_in_packets_total summed over the workers ($mh)" \
	test "$mh" -gt 0
sum=$(awk '$1 == "worker" && $2 ~ /^[0-9]+$/ { s += $5 } END { print s + 0 }' "$w")
lab_counters "$LAB_TMP/counters.txt"
rx=$(awk '$1 == "interface" && $2 != "name" { s += $3 } END { print s + 0 }' "$LAB_TMP/counters.txt")
check "workers' rx sums to the interfaces' rx ($sum, $rx)" test "$sum" -le "$rx" -a "$sum" -gt 0
# lab_rampartd_stop's checks, for NQ workers' UMEMs
kill -TERM "$RAMPARTD_PID"
if lab_wait_gone "$RAMPARTD_PID" 10; then
	wait "$RAMPARTD_PID"
	check_eq "rampartd exits 0 on SIGTERM" "$?" 0
else
	not_ok "rampartd exits within 10 s of SIGTERM"
fi
check "final workers block printed at exit" grep -q '^end workers$' "$LAB_TMP/rampartd.out"
check_eq "one UMEM per worker, shared by its sockets on both ports" "$(lab_umems)" "$NQ"
check_eq "every frame of every UMEM accounted for" \
	"$(grep -c ' 0 frames unaccounted$' "$LAB_TMP/rampartd.err")" "$(lab_umems)"
check_not "XDP program detached from both ports" \
	bash -c "ip -n $(lab_nsname fw) link show | grep -q xdp"

# DPDK's net_af_xdp takes one queue of a veth only (it asks for ethtool's
# combined channels, which veth does not report), so the DPDK backend's
# share of the handoff (copying handed frames into mbufs) is checked by
# tests/unit/test_dp_handoff.c on a net_ring port instead.

# --handoff off: each worker keeps what its queue brings. With the hosts
# spreading, a reply lands on its flow's worker 1 time in NQ; with the
# hosts sending on one queue (XPS), all of them do.
if start_rampartd --handoff off; then
	n4=$(lab_in cli "$LAB_PY" "$LAB_TMP/flows.py" 10.50.2.2 9000 64)
	echo "# --handoff off, hosts spreading: $n4 of 64 IPv4 request/reply flows answered"
	check "--handoff off: replies on another worker's queue are lost ($n4 of 64 answered)" \
		test "$n4" -lt 64
	check "hosts send on TX queue 0 only (XPS)" one_queue cli "$CLI_IF"
	check "server sends on TX queue 0 only (XPS)" one_queue srv "$SRV_IF"
	all_echoed "--handoff off, hosts on one queue"
	lab_workers_block "$w"
	handed=$(awk '$1 == "worker" && $2 ~ /^[0-9]+$/ { s += $10 } END { print s + 0 }' "$w")
	check_eq "--handoff off hands nothing over" "$handed" 0
	check "rampartctl status: handoff off" bash -c "'$RAMPARTCTL' --control '$LAB_TMP/rampartd.sock' \
		status | grep -q '^handoff: *off (--handoff off)$'"
	kill -TERM "$RAMPARTD_PID"
	lab_wait_gone "$RAMPARTD_PID" 10
	wait "$RAMPARTD_PID"
	check_eq "rampartd --handoff off exits 0 on SIGTERM" "$?" 0
else
	not_ok "rampartd --handoff off starts"
fi

if [ "$LAB_FAILED" -ne 0 ]; then
	echo "--- rampartd stderr ---" >&2; grep -v '^lib' "$LAB_TMP/rampartd.err" >&2
	echo "--- rampartd stdout ---" >&2; tail -40 "$LAB_TMP/rampartd.out" >&2
fi
lab_summary
