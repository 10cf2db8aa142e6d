#!/bin/bash
# Lab test of --fail open|closed and host traffic: a router-mode firewall
# namespace (ip_forward=1) whose own address carries a long-lived TCP
# session (an SSH stand-in) while rampartd filters transit traffic; after
# kill -9 transit traffic goes through the kernel (open) or is dropped
# (closed), and the host session survives both.
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_failmode.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

setup() {
	lab_router_setup 40 || return 1
	# the kernel routes too: that is what --fail open falls back to
	lab_in fw sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 >/dev/null
	lab_router_neighbours 40
}

write_policy() {
	cat >"$1" <<YAML
version: 1
zones:
  inside: [$FW_IF_C]
  outside: [$FW_IF_S]
host:
  addresses: [10.40.1.1, "fd00:40:1::1"]
  pass: [arp, ndp, tcp/22]
rules:
  - {name: ping-out, proto: icmp, icmp_type: echo-request, from: {zone: inside}, to: {zone: outside}, action: accept}
  - {name: ping6-out, proto: icmpv6, icmp_type: echo-request, from: {zone: inside}, to: {zone: outside}, action: accept}
  - {name: web-out, proto: tcp, from: {zone: inside}, to: {zone: outside, port: 8080}, action: accept}
defaults: {action: drop, stateful: true}
routes:
  - {prefix: 10.40.1.0/24, interface: $FW_IF_C}
  - {prefix: 10.40.2.0/24, interface: $FW_IF_S}
  - {prefix: "fd00:40:1::/64", interface: $FW_IF_C}
  - {prefix: "fd00:40:2::/64", interface: $FW_IF_S}
YAML
}

# After kill -9 the program stays attached (by design); never leave it.
failmode_cleanup() {
	lab_xdp_off
	lab_cleanup
}

# the host session's count grows within 10 s (3 s once failed in CI's
# ASan pass right after kill -9 while the session ran on, 123 lines
# exchanged all along: a stall under load, not a lost session)
session_alive() { lab_session_alive 10; }

start_rampartd() {	# FAIL
	# the background job truncates its files only when it gets to run:
	# remove the last run's now, or its "routing" line would be seen
	rm -f "$LAB_TMP/rampartd.out" "$LAB_TMP/rampartd.err"
	ip netns exec "$(lab_nsname fw)" "$RAMPARTD" --policy "$LAB_TMP/fw.rfw" \
		--interface "$FW_IF_C" --interface "$FW_IF_S" --mode router --fail "$1" \
		--foreground -v --control "$LAB_TMP/rampartd.sock" \
		>"$LAB_TMP/rampartd.out" 2>"$LAB_TMP/rampartd.err" </dev/null &
	RAMPARTD_PID=$!
	LAB_PIDS+=("$RAMPARTD_PID")
	lab_wait_for 10 grep -q '^rampartd: routing' "$LAB_TMP/rampartd.err" &&
		kill -0 "$RAMPARTD_PID"
}

ping4() { lab_in cli ping -q -n -c 3 -i 0.2 -W 1 10.40.2.2 >/dev/null 2>&1; }
ping6() { lab_in cli ping -6 -q -n -c 3 -i 0.2 -W 1 fd00:40:2::2 >/dev/null 2>&1; }
http() {	# PORT: the server's page comes back within 3 s
	lab_in cli curl -s --max-time 3 "http://10.40.2.2:$1/index.txt" 2>/dev/null | grep -q hello
}

# both router ports have an XDP program
xdp_on_both() { test "$(ip -n "$(lab_nsname fw)" link show | grep -c ' xdp')" -eq 2; }

# transit_one_way PORT: a datagram from cli reaches the server's PORT
# (one way: a program on the port back cannot stop it; a port a call
# of its own, as a listener waits 4 s)
transit_one_way() {
	local log="$LAB_TMP/udp$1.log"
	: >"$log"
	lab_bg srv "$log" "$LAB_PY" -c "import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('10.40.2.2', $1))
s.settimeout(4)
print(s.recvfrom(64)[0].decode(), flush=True)"
	sleep 0.5
	for _ in 1 2 3; do
		lab_in cli "$LAB_PY" -c "import socket
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'through', ('10.40.2.2', $1))"
		sleep 0.2
	done
	sleep 1
	grep -q through "$log"
}

# udp_stream_start PORT SECONDS: datagrams from cli to the server's PORT,
# one a millisecond for SECONDS, started in the background
# (STREAM_PID); the server's count is in $LAB_TMP/stream$PORT.count
# when STREAM_PID ends.
udp_stream_start() {
	lab_bg srv "$LAB_TMP/stream$1.count" "$LAB_PY" -c "import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('10.40.2.2', $1))
s.settimeout($2 + 2)
n = 0
try:
    while True:
        s.recvfrom(64); n += 1
except socket.timeout:
    pass
print(n, flush=True)"
	STREAM_RX_PID=$LAB_LAST_PID
	sleep 0.5
	lab_bg cli "$LAB_TMP/stream$1.tx" "$LAB_PY" -c "import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end, n = time.time() + $2, 0
while time.time() < end:
    s.sendto(b'x', ('10.40.2.2', $1)); n += 1
    time.sleep(0.001)
print(n, flush=True)"
	STREAM_TX_PID=$LAB_LAST_PID
}

lab_init rfm
trap failmode_cleanup EXIT
lab_rampart_bins || { not_ok "rampartd built"; lab_summary; exit 1; }
setup || { not_ok "lab set up"; lab_summary; exit 1; }
write_policy "$LAB_TMP/fw.yaml"
lab_compile "$LAB_TMP/fw.yaml" "$LAB_TMP/fw.rfw" || { not_ok "policy compiles"; lab_summary; exit 1; }
lab_session_tool
echo hello >"$LAB_TMP/index.txt"
lab_bg srv "$LAB_TMP/http8080.log" "$LAB_PY" -m http.server 8080 --bind 10.40.2.2 --directory "$LAB_TMP"
lab_bg srv "$LAB_TMP/http9090.log" "$LAB_PY" -m http.server 9090 --bind 10.40.2.2 --directory "$LAB_TMP"
lab_bg fw "$LAB_TMP/serve.log" "$LAB_PY" "$LAB_TMP/session.py" serve 10.40.1.1 2222
lab_bg fw "$LAB_TMP/serve22.log" "$LAB_PY" "$LAB_TMP/session.py" serve 10.40.2.1 22
lab_bg fw "$LAB_TMP/serve23.log" "$LAB_PY" "$LAB_TMP/session.py" serve 10.40.2.1 23
lab_wait_for 10 lab_port_listening srv tcp 8080 && lab_wait_for 10 lab_port_listening srv tcp 9090 &&
	lab_wait_for 10 lab_port_listening fw tcp 2222 && lab_wait_for 10 lab_port_listening fw tcp 23 ||
	not_ok "servers listen"

# ---- --fail open ----
if ! start_rampartd open; then
	not_ok "rampartd --fail open starts"; cat "$LAB_TMP/rampartd.err" >&2; lab_summary; exit 1
fi
ok "rampartd --fail open starts"
lab_session_start cli 10.40.1.1 2222
check "host session to 10.40.1.1:2222 runs while rampartd filters" session_alive
check "transit ping through rampartd" ping4
check "transit ping6 through rampartd" ping6
check "transit HTTP to an accepted port (8080)" http 8080
check_not "transit HTTP to a port the policy drops (9090)" http 9090
check "pass tcp/22: the kernel answers on another of its addresses (10.40.2.1:22)" \
	quiet lab_in cli "$LAB_PY" -c 'import socket; socket.create_connection(("10.40.2.1", 22), timeout=2)'
check_not "no pass entry for tcp/23: not the kernel's (10.40.2.1:23)" \
	quiet lab_in cli "$LAB_PY" -c 'import socket; socket.create_connection(("10.40.2.1", 23), timeout=2)'
ip netns exec "$(lab_nsname fw)" "$RAMPARTD" --policy "$LAB_TMP/fw.rfw" --interface "$FW_IF_C" \
	--interface "$FW_IF_S" --mode router --control "$LAB_TMP/second.sock" \
	>/dev/null 2>"$LAB_TMP/second.err" </dev/null
check_eq "a second rampartd (own control socket) finds the queues taken: exit 2" "$?" 2
check "it names the reason (EBUSY)" grep -q 'Device or resource busy' "$LAB_TMP/second.err"
check "the first rampartd still filters: transit ping" ping4
check_not "the first rampartd still filters: 9090 dropped" http 9090
kill -KILL "$RAMPARTD_PID"
lab_wait_gone "$RAMPARTD_PID" 5
check "after kill -9 the XDP program stays attached" lab_xdp_attached
check "fail open: transit ping via the kernel" ping4
check "fail open: transit ping6 via the kernel" ping6
check "fail open: transit HTTP 9090 too (the kernel routes unfiltered)" http 9090
check "host session survives kill -9 (--fail open)" session_alive

# ---- --fail closed (the new rampartd replaces the program left behind) ----
if ! start_rampartd closed; then
	not_ok "rampartd --fail closed starts"; cat "$LAB_TMP/rampartd.err" >&2; lab_summary; exit 1
fi
ok "rampartd --fail closed starts over the program left attached"
check "it says it replaced the old program" \
	grep -q 'replaced the XDP program a previous rampartd left' "$LAB_TMP/rampartd.err"
check "transit ping through rampartd again" ping4
check_not "transit HTTP 9090 dropped again" http 9090
check "host session survives the restart" session_alive
kill -KILL "$RAMPARTD_PID"
lab_wait_gone "$RAMPARTD_PID" 5
check_not "fail closed: transit ping dropped" ping4
check_not "fail closed: transit ping6 dropped" ping6
check_not "fail closed: transit HTTP 8080 dropped" http 8080
check "host session survives kill -9 (--fail closed)" session_alive
check "fail closed: the firewall itself still answers ping" \
	quiet lab_in cli ping -q -n -c 2 -i 0.2 -W 1 10.40.1.1

# ---- a restart over the program left behind: never a moment without one ----
# (the new rampartd puts its program in the dead one's place in one step:
# took off first, the kernel routed transit unfiltered until ours was on)
udp_stream_start 5997 4
sleep 1
if start_rampartd closed; then
	ok "rampartd --fail closed starts over it while transit datagrams stream"
else
	not_ok "rampartd --fail closed starts over it while transit datagrams stream"
	cat "$LAB_TMP/rampartd.err" >&2
fi
check "it says it replaced the old program" \
	grep -q 'replaced the XDP program a previous rampartd left' "$LAB_TMP/rampartd.err"
wait "$STREAM_TX_PID" "$STREAM_RX_PID"
check "the stream ran (over 500 datagrams sent: $(cat "$LAB_TMP/stream5997.tx"))" \
	test "$(cat "$LAB_TMP/stream5997.tx")" -gt 500
check_eq "not one of them reached the server (the policy drops them)" \
	"$(cat "$LAB_TMP/stream5997.count")" 0
kill -KILL "$RAMPARTD_PID"
lab_wait_gone "$RAMPARTD_PID" 5

# ---- nor one whose XDP object the kernel's verifier refuses ----
# (the object is loaded before the old program is touched: before, the
# old one came off first, and the port was left with none)
clang -O2 -g -target bpf -I"/usr/include/$(gcc -print-multiarch)" -I"$HERE/../../xsk" \
	-DRAMPART_XDP_UNVERIFIABLE -c "$HERE/../../xsk/rampart_xdp.bpf.c" \
	-o "$LAB_TMP/unverifiable.o" || not_ok "the unverifiable object compiles"
timeout 30 ip netns exec "$(lab_nsname fw)" "$RAMPARTD" --policy "$LAB_TMP/fw.rfw" \
	--interface "$FW_IF_C" --interface "$FW_IF_S" --mode router --fail closed --foreground \
	--xdp-object "$LAB_TMP/unverifiable.o" --control "$LAB_TMP/unv.sock" \
	>/dev/null 2>"$LAB_TMP/unv.err" </dev/null
check_eq "rampartd with an XDP object the verifier refuses exits (2)" "$?" 2
check "it says so, and that the old program stays" \
	grep -q 'cannot load XDP program .*the program a previous rampartd left stays attached' \
	"$LAB_TMP/unv.err"
check "the programs the dead rampartd left stay on both ports" xdp_on_both
check_not "fail closed still: a transit datagram does not reach the server" transit_one_way 5996

# ---- a rampartd that cannot start leaves the program a dead one left ----
# (17 pass entries: one more than the XDP program takes; refused when
# the program is opened, which is before the old one comes off)
sed 's|pass: \[arp, ndp, tcp/22\]|pass: [arp, ndp, tcp/22, tcp/1, tcp/2, tcp/3, tcp/4, tcp/5, tcp/6, tcp/7, tcp/8, tcp/9, tcp/10, tcp/11, tcp/12, tcp/13, tcp/14]|' \
	"$LAB_TMP/fw.yaml" >"$LAB_TMP/big.yaml"
lab_compile "$LAB_TMP/big.yaml" "$LAB_TMP/big.rfw" || not_ok "the 17-entry policy compiles"
timeout 30 ip netns exec "$(lab_nsname fw)" "$RAMPARTD" --policy "$LAB_TMP/big.rfw" \
	--interface "$FW_IF_C" --interface "$FW_IF_S" --mode router --fail closed --foreground \
	--control "$LAB_TMP/big.sock" >/dev/null 2>"$LAB_TMP/big.err" </dev/null
check_eq "rampartd with a host section the program cannot take exits (2)" "$?" 2
check "it says why" grep -q 'host.pass has 17 entries' "$LAB_TMP/big.err"
check "the programs the dead rampartd left stay on both ports" \
	xdp_on_both
check_not "fail closed still: a transit datagram does not reach the server" transit_one_way 5999

# ---- nor one whose start fails after a port replaced its program ----
# (the first port is up, with the old program replaced, when the second,
# an interface that does not exist, fails)
timeout 30 ip netns exec "$(lab_nsname fw)" "$RAMPARTD" --policy "$LAB_TMP/fw.rfw" \
	--interface "$FW_IF_C" --interface "$(lab_ifname nosuch)" --mode router --fail closed \
	--foreground --control "$LAB_TMP/nosuch.sock" >/dev/null 2>"$LAB_TMP/nosuch.err" </dev/null
check_eq "rampartd with an interface that does not exist exits (2)" "$?" 2
check "it names it" grep -q "$(lab_ifname nosuch)" "$LAB_TMP/nosuch.err"
check "a program stays on both ports (the first: its own, for the one it replaced)" \
	xdp_on_both
check_not "fail closed still after it: a transit datagram does not reach the server" \
	transit_one_way 5998
n=$(lab_session_count)
check "host session exchanged lines all along ($n)" test "$n" -gt 20

for i in "$FW_IF_C" "$FW_IF_S"; do ip -n "$(lab_nsname fw)" link set dev "$i" xdp off; done
check_not "programs removed by ip link set xdp off" lab_xdp_attached
check "with no program, transit goes by the kernel again" ping4

if [ "$LAB_FAILED" -ne 0 ]; then
	echo "--- rampartd stderr ---" >&2; cat "$LAB_TMP/rampartd.err" >&2
	echo "--- session ---" >&2; cat "$LAB_TMP/session.log" >&2
fi
lab_summary
