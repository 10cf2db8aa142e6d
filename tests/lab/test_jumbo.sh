#!/bin/bash
# Lab test of jumbo frames on AF_XDP: a router whose four veth ends all
# have an MTU of 9000. rampartd loads its XDP program frags-aware and
# binds its sockets with multi-buffer (XDP_USE_SG), so a frame longer
# than a 4096-byte UMEM frame arrives as a chain, is joined for the
# pipeline and leaves as a chain again. Checks pings of 8,928 bytes with
# DF (IPv4 and IPv6), UDP datagrams of 8,000 bytes echoed, an HTTP
# download with an MSS of ~8,950, over one queue and over two queues
# (frames handed between the workers); with the server's link at 1,500,
# jumbo datagrams fragmented and jumbo pings answered fragmentation
# needed, from joined frames; then rampartd as on a kernel
# without multi-buffer (RAMPART_XSK_NO_SG=1): it says the MTU it can
# carry, frames up to a UMEM frame still pass, jumbo frames do not;
# last, the same links as a bridge (bump in the wire) at MTU 9000.
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_jumbo.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

N=23
MTU=9000
PINGS=4
BIG=8900		# ping payload: 8,928-byte IPv4 packets, 8,948-byte IPv6
UDP_COUNT=20
UDP_SIZE=8000

ctl() { "$RAMPARTCTL" --control "$LAB_CONTROL" "$@"; }

write_policy() {
	cat >"$1" <<YAML
version: 1
zones:
  inside: [$FW_IF_C]
  outside: [$FW_IF_S]
rules:
  - {name: ping-out, proto: icmp, icmp_type: echo-request, from: {zone: inside}, to: {zone: outside}, action: accept}
  - {name: ping6-out, proto: icmpv6, icmp_type: echo-request, from: {zone: inside}, to: {zone: outside}, action: accept}
  - {name: web-out, proto: tcp, from: {zone: inside}, to: {zone: outside, port: 8080}, action: accept}
  - {name: udp-out, proto: udp, from: {zone: inside}, to: {zone: outside, port: 9000}, action: accept}
defaults: {action: drop, stateful: true}
routes:
  - {prefix: 10.$N.1.0/24, interface: $FW_IF_C}
  - {prefix: 10.$N.2.0/24, interface: $FW_IF_S}
  - {prefix: "fd00:$N:1::/64", interface: $FW_IF_C}
  - {prefix: "fd00:$N:2::/64", interface: $FW_IF_S}
YAML
}

# start_router [ARGS...]: rampartd routing between the ports, -v.
start_router() {
	LAB_CONTROL=$LAB_TMP/rampartd.sock
	lab_rampartd_run routing --policy "$LAB_TMP/jumbo.rfw" --interface "$FW_IF_C" \
		--interface "$FW_IF_S" --mode router --foreground -v --control "$LAB_CONTROL" "$@"
}

# udp_flows K: K UDP clients at once, each echoing UDP_COUNT datagrams of
# UDP_SIZE bytes (their own source ports: flows the hosts may spread over
# queues); prints the total answered.
udp_flows() {
	local i total=0 pids=()
	for i in $(seq 1 "$1"); do
		lab_in cli "$LAB_PY" "$LAB_TMP/udp.py" send 10.$N.2.2 9000 "$UDP_COUNT" "$UDP_SIZE" \
			>"$LAB_TMP/udp.$i" 2>/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do	# each ends within UDP_COUNT seconds
		wait "$i" 2>/dev/null
	done
	for i in $(seq 1 "$1"); do
		total=$((total + $(cat "$LAB_TMP/udp.$i" 2>/dev/null || echo 0)))
	done
	echo "$total"
}

# jumbo_traffic WHAT FLOWS: the checks every multi-buffer run makes.
jumbo_traffic() {
	local what=$1 flows=$2 got
	check "$what: ping -s $BIG with DF across ($PINGS)" \
		quiet lab_in cli ping -q -n -M do -s "$BIG" -c "$PINGS" -i 0.2 -W 2 10.$N.2.2
	check "$what: ping -6 -s $BIG across ($PINGS)" \
		quiet lab_in cli ping -6 -q -n -M do -s "$BIG" -c "$PINGS" -i 0.2 -W 2 fd00:$N:2::2
	got=$(udp_flows "$flows")
	check_eq "$what: UDP datagrams of $UDP_SIZE bytes echoed ($flows flows)" \
		"$got" "$((flows * UDP_COUNT))"
	check "$what: HTTP download of 4 MB with jumbo segments" bash -c \
		"ip netns exec $(lab_nsname cli) curl -s --max-time 20 -o '$LAB_TMP/got.bin' \
		 http://10.$N.2.2:8080/big.bin && cmp -s '$LAB_TMP/got.bin' '$LAB_TMP/big.bin'"
}

lab_init rjm
lab_rampart_bins || { not_ok "rampartd built"; lab_summary; exit 1; }
# the two-queue run needs two queues on the firewall's veth ends
LAB_VETH_QUEUES=2 lab_router_setup $N || { not_ok "lab set up"; lab_summary; exit 1; }
for x in "cli $CLI_IF" "fw $FW_IF_C" "fw $FW_IF_S" "srv $SRV_IF"; do
	set -- $x
	lab_in "$1" ip link set "$2" mtu "$MTU" || { not_ok "MTU $MTU on $2"; lab_summary; exit 1; }
done
write_policy "$LAB_TMP/jumbo.yaml"
lab_compile "$LAB_TMP/jumbo.yaml" "$LAB_TMP/jumbo.rfw" >/dev/null ||
	{ not_ok "policy compiles"; lab_summary; exit 1; }
check "firewall resolves both hosts (ARP, ND)" quiet lab_router_neighbours $N
head -c 4194304 /dev/urandom >"$LAB_TMP/big.bin"
lab_bg srv "$LAB_TMP/http.log" "$LAB_PY" -m http.server 8080 --bind 10.$N.2.2 --directory "$LAB_TMP"
lab_write_udp_tool
lab_bg srv "$LAB_TMP/echo.log" "$LAB_PY" "$LAB_TMP/udp.py" echo 10.$N.2.2 9000
lab_wait_for 10 lab_port_listening srv tcp 8080 && lab_wait_for 10 lab_port_listening srv udp 9000 ||
	not_ok "servers listen"

# --- two queues: the hosts spread flows, frames handed between workers ---
start_router --queues 2 || { not_ok "rampartd starts with two queues"; lab_summary; exit 1; }
ok "rampartd starts with two queues"
jumbo_traffic "two queues" 6
lab_workers_block "$LAB_TMP/w2.txt" || not_ok "SIGUSR1 prints the workers block"
[ -n "${JUMBO_DEBUG:-}" ] && cat "$LAB_TMP/w2.txt"
handed=$(awk '$1 == "worker" && $2 ~ /^[0-9]+$/ { s += $10 } END { print s + 0 }' "$LAB_TMP/w2.txt")
check "two queues: frames handed between the workers ($handed)" test "${handed:-0}" -gt 0
lab_rampartd_stop

# --- one queue, multi-buffer: the hosts send on queue 0 only (XPS), the
# queue the worker has ---
lab_xps_queue0 cli "$CLI_IF" && lab_xps_queue0 srv "$SRV_IF" || not_ok "hosts send on queue 0"
start_router --queues 1 || { not_ok "rampartd starts"; cat "$LAB_TMP/rampartd.err" >&2; lab_summary; exit 1; }
ok "rampartd starts on ports of MTU $MTU"
check "-v: the UMEM takes frames as chains (multi-buffer)" \
	grep -q "^rampartd: worker 0 UMEM .*: multi-buffer" "$LAB_TMP/rampartd.err"
check_not "no MTU cut" grep -q "is more than its AF_XDP sockets carry" "$LAB_TMP/rampartd.err"
# veth takes a program in native mode on an MTU over a page only if it
# handles frags: the program's flag, not just the sockets'
check "-v: XDP native and frags-aware on MTU $MTU" \
	grep -q "^rampartd: $FW_IF_C: XDP native mode (.*), frags-aware," "$LAB_TMP/rampartd.err"
ctl --json status >"$LAB_TMP/status1.json"
check_eq "status: both ports carry frames of up to 9,728 bytes" "$("$LAB_PY" -c \
	"import json; print(' '.join(str(i['frame_max']) for i in json.load(open('$LAB_TMP/status1.json'))['interfaces']))")" \
	"9728 9728"
check "status (table): the FRAMES TO column" bash -c \
	"'$RAMPARTCTL' --control '$LAB_CONTROL' status | grep -Eq '^ *$FW_IF_C .* 9728 +shared *$'"
check "-v: each socket says multi-buffer" \
	grep -q "^rampartd: $FW_IF_S queue 0: AF_XDP copy mode, multi-buffer$" "$LAB_TMP/rampartd.err"
jumbo_traffic "one queue" 1
lab_counters "$LAB_TMP/c1.txt" || not_ok "SIGUSR1 prints the counters"
[ -n "${JUMBO_DEBUG:-}" ] && cat "$LAB_TMP/c1.txt"

# The server's link at 1,500 while the client's stays at 9,000 (rampartd
# reads the MTUs every second): what the pipeline makes from a joined
# frame leaves through AF_XDP too. A jumbo datagram without DF is cut
# into fragments by rampart (the first in the joined slot, the others
# its own frames), which the server puts together and echoes (its own
# fragments coming back through rampart); a jumbo ping with DF is
# answered with fragmentation needed, mtu = 1500, from the client port.
lab_in fw ip link set "$FW_IF_S" mtu 1500 && lab_in srv ip link set "$SRV_IF" mtu 1500 ||
	not_ok "MTU 1500 on the server's link"
sleep 1.5
lab_write_nodf_tool
fr0=$(ctl --json stats | "$LAB_PY" -c 'import json,sys; print(json.load(sys.stdin)["fragmented"])')
n=$(lab_in cli "$LAB_PY" "$LAB_TMP/nodf.py" 10.$N.2.2 8000 5)
check "server link at 1500: 8,000-byte UDP without DF, fragmented by rampart, echoed whole (${n:-0} of 5)" \
	test "${n:-0}" -eq 5
fr1=$(ctl --json stats | "$LAB_PY" -c 'import json,sys; print(json.load(sys.stdin)["fragmented"])')
check "  ... counted as fragmented ($((fr1 - fr0)))" test "$((fr1 - fr0))" -ge 5
out=$(lab_in cli ping -n -c 2 -i 0.3 -W 1 -M do -s "$BIG" 10.$N.2.2 2>&1)
check "  ... a ping of $BIG bytes with DF: 'Frag needed' with mtu = 1500 from 10.$N.1.1" \
	bash -c "grep -Eq 'From 10\.$N\.1\.1 .*mtu ?= ?1500' <<<\"\$1\"" _ "$out"
out=$(lab_in cli ping -6 -n -c 2 -i 0.3 -W 1 -M do -s "$BIG" fd00:$N:2::2 2>&1)
check "  ... ping -6 of $BIG bytes: 'Packet too big' with mtu=1500 from fd00:$N:1::1" \
	bash -c "grep -Eq 'From fd00:$N:1::1 .*mtu ?= ?1500' <<<\"\$1\"" _ "$out"
lab_in fw ip link set "$FW_IF_S" mtu "$MTU" && lab_in srv ip link set "$SRV_IF" mtu "$MTU"
lab_in cli ip route flush cache
lab_in cli ip -6 route flush cache
lab_rampartd_stop

# --- a kernel without multi-buffer (as far as rampartd is told) ---
export RAMPART_XSK_NO_SG=1
start_router --queues 1 || { not_ok "rampartd starts without multi-buffer"; lab_summary; exit 1; }
unset RAMPART_XSK_NO_SG
ok "rampartd starts without multi-buffer"
ctl --json status >"$LAB_TMP/status3.json"
check_eq "status: without, frames of up to 4,096 bytes" "$("$LAB_PY" -c \
	"import json; print(' '.join(str(i['frame_max']) for i in json.load(open('$LAB_TMP/status3.json'))['interfaces']))")" \
	"4096 4096"
check "it says the MTU its sockets carry (4074)" grep -q \
	"^rampartd: $FW_IF_S: MTU $MTU is more than its AF_XDP sockets carry (without multi-buffer); frames up to an MTU of 4074" \
	"$LAB_TMP/rampartd.err"
check_not "-v: no multi-buffer UMEM or socket" grep -Eq ", multi-buffer$|: multi-buffer:" "$LAB_TMP/rampartd.err"
check "-v: the program not frags-aware: veth refuses it native on MTU $MTU, skb mode" \
	grep -q "^rampartd: $FW_IF_C: XDP skb mode (.*), 1 queue" "$LAB_TMP/rampartd.err"
check "without: pings of 3,000 bytes still cross" \
	quiet lab_in cli ping -q -n -M do -s 3000 -c "$PINGS" -i 0.2 -W 2 10.$N.2.2
check_not "without: a ping of $BIG bytes does not" \
	quiet lab_in cli ping -q -n -M do -s "$BIG" -c 2 -i 0.2 -W 1 10.$N.2.2
# TCP between hosts at MTU 9,000 through such a port: the segments are
# dropped by the kernel before rampart sees them (no ICMP comes back),
# so a download stalls: what rampartd's message at start warns of.
check_not "without: an HTTP download stalls (its jumbo segments never reach rampart)" bash -c \
	"ip netns exec $(lab_nsname cli) curl -s --max-time 3 -o /dev/null http://10.$N.2.2:8080/big.bin"
lab_counters "$LAB_TMP/c3.txt" || not_ok "SIGUSR1 prints the counters"
lab_rampartd_stop

# --- frames longer than a joined frame (9,728 bytes): an MTU of 9,800 ---
lab_in cli ip link set "$CLI_IF" mtu 9800 && lab_in fw ip link set "$FW_IF_C" mtu 9800 ||
	not_ok "MTU 9800 on the client's link"
start_router --queues 1 || { not_ok "rampartd starts on an MTU of 9800"; lab_summary; exit 1; }
ok "rampartd starts on an MTU of 9800"
check "it says the MTU it carries (9706)" grep -q \
	"^rampartd: $FW_IF_C: MTU 9800 is more than its AF_XDP sockets carry (a joined frame is at most 9,728 bytes); frames up to an MTU of 9706" \
	"$LAB_TMP/rampartd.err"
check "pings of $BIG bytes still cross" \
	quiet lab_in cli ping -q -n -M do -s "$BIG" -c 2 -i 0.2 -W 2 10.$N.2.2
check_not "a ping of 9,742-byte frames does not" \
	quiet lab_in cli ping -q -n -M do -s 9700 -c 2 -i 0.2 -W 1 10.$N.2.2
ctl --json stats >"$LAB_TMP/s4.json"
check "they are counted lost before the workers (rx_missed other >= 2 on $FW_IF_C)" \
	"$LAB_PY" -c "import json,sys; d = json.load(open('$LAB_TMP/s4.json'))['interfaces']; \
		i = [x for x in d if x['name'] == '$FW_IF_C'][0]; sys.exit(i['rx_missed_by_reason']['other'] < 2)"
lab_counters "$LAB_TMP/c4.txt" || not_ok "SIGUSR1 prints the counters"
lab_rampartd_stop

# --- bridge mode (bump in the wire) at MTU 9000: the hosts on one subnet
# (10.N.3.0/24) across the same links, rampartd forwarding port to port ---
lab_in cli ip link set "$CLI_IF" mtu "$MTU" && lab_in fw ip link set "$FW_IF_C" mtu "$MTU" ||
	not_ok "MTU $MTU on the client's link again"
lab_in cli ip addr add 10.$N.3.2/24 dev "$CLI_IF" && lab_in srv ip addr add 10.$N.3.3/24 dev "$SRV_IF" ||
	not_ok "the hosts on one subnet"
lab_bg srv "$LAB_TMP/echo3.log" "$LAB_PY" "$LAB_TMP/udp.py" echo 10.$N.3.3 9000
cat >"$LAB_TMP/bridge.yaml" <<YAML
version: 1
zones:
  inside: [$FW_IF_C]
  outside: [$FW_IF_S]
rules:
  - {name: ping-out, proto: icmp, icmp_type: echo-request, from: {zone: inside}, to: {zone: outside}, action: accept}
  - {name: udp-out, proto: udp, from: {zone: inside}, to: {zone: outside, port: 9000}, action: accept}
defaults: {action: drop, stateful: true}
YAML
lab_compile "$LAB_TMP/bridge.yaml" "$LAB_TMP/bridge.rfw" >/dev/null || not_ok "bridge policy compiles"
LAB_CONTROL=$LAB_TMP/rampartd.sock
if lab_rampartd_start "$LAB_TMP/bridge.rfw" --queues 1 -v; then
	ok "rampartd bridging ports of MTU $MTU"
	check "-v: the bridge's UMEM takes frames as chains (multi-buffer)" \
		grep -q "^rampartd: worker 0 UMEM .*: multi-buffer" "$LAB_TMP/rampartd.err"
	check "bridge: ping -s $BIG with DF across ($PINGS)" \
		quiet lab_in cli ping -q -n -M do -s "$BIG" -c "$PINGS" -i 0.2 -W 2 10.$N.3.3
	check_eq "bridge: UDP datagrams of $UDP_SIZE bytes echoed" \
		"$(lab_in cli "$LAB_PY" "$LAB_TMP/udp.py" send 10.$N.3.3 9000 "$UDP_COUNT" "$UDP_SIZE")" \
		"$UDP_COUNT"
	lab_counters "$LAB_TMP/c5.txt" || not_ok "SIGUSR1 prints the counters"
	lab_rampartd_stop
else
	not_ok "rampartd bridging ports of MTU $MTU"
fi

if [ "$LAB_FAILED" -ne 0 ]; then
	echo "--- rampartd stderr ---" >&2; cat "$LAB_TMP/rampartd.err" >&2
fi
lab_summary
