#!/usr/bin/env bash
# Hot reload through the AF_XDP bridge (docs/operations.md "Reload"):
#  1. continuous traffic (UDP with sequence numbers, and a long-lived TCP
#     stream) while `rampartctl reload` runs RELOADS times, alternating two
#     policies that differ in a rule the traffic does not hit (and so in
#     every rule's number): no UDP sequence gap, no TCP interval without
#     data, the stream's rule counted every datagram, and the rules'
#     counters add up to every IP packet received;
#  2. a stateless policy pair that flips one verdict, reloaded FLIPS times
#     under a sequenced UDP stream: each datagram counted once under one of
#     the two rules, the delivered ones exactly the accepted ones, and the
#     delivered/refused runs change at most once per reload (no batch mixes
#     the two policies, nothing else is lost);
#  3. refused artifacts (bad checksum, other version, an interface rampartd
#     does not serve, stateful turned off) leave the running policy;
#  4. SIGHUP reloads the file rampartd was started with; keep vs recheck
#     for a flow the new policy no longer allows.
set -u
cd "$(dirname "$0")"
. ./lib.sh

BACKEND=${RELOAD_BACKEND:-xsk}	# test_reload_dpdk.sh runs it all on DPDK's net_af_xdp
# Fewer repeats on DPDK and under ASan (a reload there takes ~100 ms
# against ~40): the release build on AF_XDP is the one that hunts races.
if [ "$BACKEND" = xsk ] && ! lab_sanitized; then
	RELOADS=${RELOAD_COUNT:-200} FLIPS=${RELOAD_FLIPS:-40}
elif lab_sanitized; then
	RELOADS=${RELOAD_COUNT:-30} FLIPS=${RELOAD_FLIPS:-20}
else
	RELOADS=${RELOAD_COUNT:-50} FLIPS=${RELOAD_FLIPS:-40}
fi

lab_init "rld${BACKEND:0:1}"
lab_rampart_bins || exit 1
lab_bridge_setup || { not_ok "lab set-up"; lab_summary; exit 1; }
command -v iperf3 >/dev/null || { not_ok "iperf3 installed"; lab_summary; exit 1; }

policy() {	# policy NAME EXTRA-FIRST-RULE STATEFUL
	cat >"$LAB_TMP/$1.yaml" <<YAML
version: 1
rules:
$2
  - {name: stream, proto: udp, to: {network: 10.10.0.2, port: 9000}, action: accept}
  - {name: tcp-stream, proto: tcp, to: {network: 10.10.0.2, port: 5201}, action: accept}
  - {name: echo, proto: udp, to: {network: 10.10.0.2, port: 7000}, action: accept}
  - {name: ping, proto: icmp, action: accept}
defaults: {action: drop, stateful: $3}
YAML
	lab_compile "$LAB_TMP/$1.yaml" "$LAB_TMP/$1.rfw" >/dev/null
}
policy a "" true || { not_ok "compile a"; lab_summary; exit 1; }
policy b "  - {name: no-telnet, proto: tcp, to: {port: 23}, action: reject}" true ||
	{ not_ok "compile b"; lab_summary; exit 1; }

ctl() { "$RAMPARTCTL" --control "$LAB_CONTROL" "$@"; }

# The sequenced UDP peer: "recv PORT OUT" counts datagrams until one says
# "end", then writes "received gaps runs first last"; "send ADDR PORT PPS
# STOPFILE MAXSEC" sends 8-byte sequence numbers at PPS until STOPFILE
# exists, then "end", and prints how many it sent.
cat >"$LAB_TMP/seq.py" <<'PY'
import os, socket, struct, sys, time
mode = sys.argv[1]
if mode == "recv":
    port, out = int(sys.argv[2]), sys.argv[3]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind(("10.10.0.2", port))
    seen = []
    while True:
        d, _ = s.recvfrom(64)
        if d == b"end":
            break
        seen.append(struct.unpack("!Q", d[:8])[0])
    s.settimeout(2.0)  # drain the other markers: no port-unreachable back
    try:
        while True:
            s.recvfrom(64)
    except socket.timeout:
        pass
    seen.sort()
    gaps = sum(1 for a, b in zip(seen, seen[1:]) if b != a + 1)
    with open(out, "w") as f:
        f.write("%d %d %d %d\n" % (len(seen), gaps, seen[0] if seen else -1, seen[-1] if seen else -1))
        f.write(" ".join(map(str, seen)) + "\n")
    sys.exit(0)
addr, port, pps, stop, maxsec = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], float(sys.argv[6])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.10.0.1", 45000))
n, t0 = 0, time.monotonic()
while not os.path.exists(stop) and time.monotonic() - t0 < maxsec:
    s.sendto(struct.pack("!Q", n) + b"x" * 24, (addr, port))
    n += 1
    lag = t0 + n / pps - time.monotonic()
    if lag > 0:
        time.sleep(lag)
time.sleep(0.5)  # let the last datagrams through before the marker
for _ in range(3):
    s.sendto(b"end", (addr, port))
    time.sleep(0.05)
print(n)
PY

# start_sequence RECV-OUT SENT-OUT MAXSEC: receiver on 9000 in srv, then the
# sender (pid in $sender) at 2000/s until $LAB_TMP/stop exists.
start_sequence() {
	lab_bg srv "$LAB_TMP/$1.log" "$LAB_PY" "$LAB_TMP/seq.py" recv 9000 "$LAB_TMP/$1"
	lab_wait_for 10 lab_port_listening srv udp 9000 || not_ok "sequence receiver listens"
	rm -f "$LAB_TMP/stop"
	ip netns exec "$(lab_nsname cli)" "$LAB_PY" "$LAB_TMP/seq.py" send 10.10.0.2 9000 2000 \
		"$LAB_TMP/stop" "$3" >"$LAB_TMP/$2" 2>&1 &
	sender=$!
}

stat_rule() {	# stat_rule NAME: packets of a rule (rampartctl stats --rules --json)
	ctl --json stats --rules | "$LAB_PY" -c '
import json, sys
for r in json.load(sys.stdin)["rules"]:
    if r["name"] == sys.argv[1]: print(r["packets"])' "$1"
}
checksum() { ctl --json status | "$LAB_PY" -c 'import json,sys; print(json.load(sys.stdin)["policy"]["checksum"])'; }

# start FILE / stop: rampartd on AF_XDP, or on DPDK's net_af_xdp with the
# same interfaces (named net_af_xdp0/1 there; the policies name none).
if [ "$BACKEND" = dpdk ]; then
	lab_has_dpdk || { echo "# skip: rampartd built without DPDK"; lab_summary; exit 0; }
	lab_dpdk_eal
fi
start() {
	if [ "$BACKEND" = dpdk ]; then
		LAB_CONTROL=$LAB_TMP/rampartd.sock
		lab_rampartd_run bridging --policy "$1" --interface net_af_xdp0 --interface net_af_xdp1 \
			--mode bridge --backend dpdk -v --control "$LAB_CONTROL" \
			-- -l 0,1 $EAL_MEM $EAL_COMMON \
			--vdev "net_af_xdp0,iface=$FW_IF_C,force_copy=1" \
			--vdev "net_af_xdp1,iface=$FW_IF_S,force_copy=1"
	else
		lab_rampartd_start "$1" -v
	fi
}
stop() {
	if [ "$BACKEND" = dpdk ]; then lab_rampartd_term 20; else lab_rampartd_stop; fi
}
cp "$LAB_TMP/a.rfw" "$LAB_TMP/running.rfw"
start "$LAB_TMP/running.rfw" || { not_ok "rampartd starts ($BACKEND)"; lab_summary; exit 1; }
ok "rampartd starts"
lab_write_udp_tool
lab_bg srv "$LAB_TMP/echo.log" "$LAB_PY" "$LAB_TMP/udp.py" echo 10.10.0.2 7000
lab_bg srv "$LAB_TMP/iperf.log" iperf3 -s -B 10.10.0.2
lab_wait_for 10 lab_port_listening srv tcp 5201 && lab_wait_for 10 lab_port_listening srv udp 7000 ||
	not_ok "servers listen"
check "traffic passes before any reload (ping)" lab_in cli ping -c 2 -i 0.2 -W 2 -q 10.10.0.2

# ---- 1. RELOADS reloads under continuous traffic ----
start_sequence recv.out sent 240
ip netns exec "$(lab_nsname cli)" timeout 300 iperf3 -c 10.10.0.2 -b 20M -t 600 -i 0.5 -J \
	>"$LAB_TMP/iperf.json" 2>&1 &
iperf=$!
sleep 2
refused=0; start=$(date +%s%N)
: >"$LAB_TMP/reloads.json"	# one answer a line, read once after the loop
for i in $(seq 1 "$RELOADS"); do
	f=$([ $((i % 2)) -eq 1 ] && echo b || echo a)
	if ! ctl --json reload "$LAB_TMP/$f.rfw" >"$LAB_TMP/reload.json" 2>"$LAB_TMP/reload.err"; then
		refused=$((refused + 1)); sed 's/^/#   /' "$LAB_TMP/reload.err"
		continue
	fi
	tr -d '\n' <"$LAB_TMP/reload.json" >>"$LAB_TMP/reloads.json"; echo >>"$LAB_TMP/reloads.json"
done
ms=$(( ($(date +%s%N) - start) / 1000000 ))
pub_max=$("$LAB_PY" -c 'import json,sys
print(max([0] + [r["reloaded"]["published_us"] - r["reloaded"]["mapped_us"]
                 for r in map(json.loads, open(sys.argv[1]))]))' "$LAB_TMP/reloads.json")
echo "# $RELOADS reloads in $ms ms; slowest map-to-publish ${pub_max} us"
check_eq "all $RELOADS reloads accepted" "$refused" 0
sleep 1
kill -INT "$iperf" 2>/dev/null; wait "$iperf"
touch "$LAB_TMP/stop"; wait "$sender"
lab_wait_for 10 test -s "$LAB_TMP/recv.out" || not_ok "receiver finished"
sent=$(cat "$LAB_TMP/sent")
read -r got gaps first last < "$LAB_TMP/recv.out"
echo "# UDP: sent $sent, received $got, gaps $gaps (seq $first..$last)"
check "UDP datagrams went through (over 1000)" test "${sent:-0}" -gt 1000
check_eq "no UDP sequence gap across the reloads" "$gaps" 0
check_eq "every UDP datagram arrived" "$got" "$sent"
"$LAB_PY" - "$LAB_TMP/iperf.json" >"$LAB_TMP/iperf.sum" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
iv = [i["sum"] for i in d.get("intervals", [])]
full = [x for x in iv if x["end"] - x["start"] > 0.4]
print(len(full), sum(1 for x in full if x["bytes"] == 0), min((x["bytes"] for x in full), default=0),
      d.get("end", {}).get("sum_received", {}).get("bytes", 0))
PY
read -r nint stalls minb tcpbytes <"$LAB_TMP/iperf.sum"
echo "# TCP: $nint half-second intervals, $stalls without data (fewest bytes $minb), $tcpbytes bytes"
check "the TCP stream ran through the reloads" test "${nint:-0}" -ge 4
check_eq "the TCP stream never stalled (no empty half-second)" "$stalls" 0
stream=$(stat_rule stream)
# the sender's three "end" markers go to the same port and rule
check_eq "rule 'stream' counted every datagram over $RELOADS generations" "$stream" \
	"$((sent + 3))"
ctl --json stats >"$LAB_TMP/stats.json"
"$LAB_PY" - "$LAB_TMP/stats.json" >"$LAB_TMP/sum" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rules = sum(r["packets"] for r in d["rules"])
ip = sum(i["rx_packets"] - i["non_ip"] - i["malformed"] for i in d["interfaces"])
print(rules, ip)
PY
read -r rules_total ip_total <"$LAB_TMP/sum"
echo "# rules counted $rules_total packets; interfaces received $ip_total IP packets"
check_eq "the rules' counters add up to every IP packet received" "$rules_total" "$ip_total"

# ---- 3. refused artifacts leave the running policy ----
sum_before=$(checksum)
cp "$LAB_TMP/a.rfw" "$LAB_TMP/bad-crc.rfw"
printf '\x55' | dd of="$LAB_TMP/bad-crc.rfw" bs=1 seek=200 conv=notrunc status=none
cp "$LAB_TMP/a.rfw" "$LAB_TMP/bad-ver.rfw"
printf '\x09\x00' | dd of="$LAB_TMP/bad-ver.rfw" bs=1 seek=8 conv=notrunc status=none
cat >"$LAB_TMP/noif.yaml" <<'YAML'
version: 1
zones: {outside: [rldnosuch0]}
rules:
  - {name: stream, proto: udp, from: {zone: outside}, action: accept}
defaults: {action: drop}
YAML
lab_compile "$LAB_TMP/noif.yaml" "$LAB_TMP/noif.rfw" >/dev/null
policy stateless "" false
for bad in bad-crc:checksum bad-ver:version noif:rldnosuch0 stateless:stateful; do
	f=${bad%%:*}; why=${bad#*:}
	ctl reload "$LAB_TMP/$f.rfw" >/dev/null 2>"$LAB_TMP/$f.err"
	rc=$?
	check_eq "reload $f.rfw refused (exit 1)" "$rc" 1
	check "reload $f.rfw says why ($why)" grep -qi "$why" "$LAB_TMP/$f.err"
	sed 's/^/#   /' "$LAB_TMP/$f.err"
done
check_eq "the running policy stayed (checksum)" "$(checksum)" "$sum_before"
check "traffic still passes after the refusals" \
	test "$(lab_in cli "$LAB_PY" "$LAB_TMP/udp.py" send 10.10.0.2 7000 5 32)" -eq 5

# ---- 4. SIGHUP, and keep vs recheck ----
policy c "" true	# c: without `echo` (flows to 7000 no longer allowed)
sed -i '/name: echo/d' "$LAB_TMP/c.yaml"
lab_compile "$LAB_TMP/c.yaml" "$LAB_TMP/c.rfw" >/dev/null
cp "$LAB_TMP/b.rfw" "$LAB_TMP/running.rfw"
kill -HUP "$RAMPARTD_PID"
lab_wait_for 10 grep -q 'SIGHUP: reloaded' "$LAB_TMP/rampartd.err"
check "SIGHUP reloads the policy file" grep -q 'SIGHUP: reloaded' "$LAB_TMP/rampartd.err"
check_eq "after SIGHUP, policy b is in force" "$(ctl --json status | "$LAB_PY" -c 'import json,sys; print(json.load(sys.stdin)["policy"]["rules"])')" 5

# A long-lived UDP flow to 7000 (one socket): it keeps going under c with
# --flows keep, and is cut at its next packet with --flows recheck.
cat >"$LAB_TMP/flow.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.10.0.1", int(sys.argv[1])))
s.settimeout(1.0)
ctl = sys.argv[2]
def one():
    s.sendto(b"x" * 16, ("10.10.0.2", 7000))
    try:
        s.recvfrom(100); return 1
    except socket.timeout:
        return 0
print(one(), flush=True)
sys.stdin.readline()           # the test reloads, then says go
print(sum(one() for _ in range(3)), flush=True)
PY
for mode in keep recheck; do
	ctl reload "$LAB_TMP/a.rfw" >/dev/null || not_ok "reload a before $mode"
	coproc FLOW { ip netns exec "$(lab_nsname cli)" "$LAB_PY" "$LAB_TMP/flow.py" \
		$([ $mode = keep ] && echo 46000 || echo 46001) x; }
	read -r -t 5 first <&"${FLOW[0]}"
	ctl reload --flows "$mode" "$LAB_TMP/c.rfw" >/dev/null || not_ok "reload c --flows $mode"
	echo go >&"${FLOW[1]}"
	read -r -t 10 after <&"${FLOW[0]}"
	wait "$FLOW_PID" 2>/dev/null
	echo "# --flows $mode: before the reload $first/1 echoed, after it ${after:-?}/3"
	if [ $mode = keep ]; then
		check_eq "--flows keep: the established flow lives on" "${after:-}" 3
	else
		check_eq "--flows recheck: the flow the new policy refuses is cut" "${after:-}" 0
	fi
done
check "a new flow to 7000 is refused under c" \
	test "$(lab_in cli "$LAB_PY" "$LAB_TMP/udp.py" send 10.10.0.2 7000 2 32)" -eq 0

# The policy's host section reaches the XDP program of both ports on
# reload, and leaves it on the next.
host_entries() {	# how many rampart_host4 maps hold 10.10.0.77
	bpftool -j map dump name rampart_host4 2>/dev/null | "$LAB_PY" -c '
import json, sys
try:
    maps = json.load(sys.stdin)
except ValueError:
    maps = []
print(sum(1 for m in maps for e in m.get("elements", [])
          if [int(x, 16) for x in e.get("key", [])] == [10, 10, 0, 77]))'
}
if [ "$BACKEND" = xsk ]; then	# DPDK's PMD brings its own XDP program
policy h "" true
printf 'host: {addresses: [10.10.0.77], pass: [tcp/22]}\n' >>"$LAB_TMP/h.yaml"
lab_compile "$LAB_TMP/h.yaml" "$LAB_TMP/h.rfw" >/dev/null
ctl reload "$LAB_TMP/h.rfw" >/dev/null || not_ok "reload h"
check_eq "a reload's host address is in both ports' XDP programs" "$(host_entries)" 2
ctl reload "$LAB_TMP/a.rfw" >/dev/null || not_ok "reload a after h"
check_eq "and gone after reloading a policy without it" "$(host_entries)" 0
# A host section past the XDP program's room (RAMPART_XDP_MAX_PASS, 16
# pass entries) compiles (rulec only warns: it does not know the backend) but the
# reload is refused before any port changes: a's section stays.
policy hbig "" true
printf 'host: {addresses: [10.10.0.77], pass: [%s]}\n' \
	"$(seq -s ', ' 1 17 | sed 's/\([0-9][0-9]*\)/tcp\/\1/g')" >>"$LAB_TMP/hbig.yaml"
lab_compile "$LAB_TMP/hbig.yaml" "$LAB_TMP/hbig.rfw" >/dev/null || not_ok "compile hbig"
sum_before=$(checksum)
ctl reload "$LAB_TMP/hbig.rfw" >/dev/null 2>"$LAB_TMP/hbig.err"
check_eq "a host section of 17 pass entries: reload refused (exit 1)" "$?" 1
check "and says the host section is too large for the XDP program" \
	grep -q 'host section too large for the XDP program' "$LAB_TMP/hbig.err"
sed 's/^/#   /' "$LAB_TMP/hbig.err"
check_eq "no port got its host address" "$(host_entries)" 0
check_eq "the running policy stayed (checksum)" "$(checksum)" "$sum_before"
fi

# ---- 2. verdict flips, stateless ----
# Both policies hold both rules, in the other order: first match wins, and
# both rules' counters carry over every reload.
for v in accept drop; do
	o=$([ $v = accept ] && echo drop || echo accept)
	cat >"$LAB_TMP/flip-$v.yaml" <<YAML
version: 1
rules:
  - {name: flip-$v, proto: udp, to: {network: 10.10.0.2, port: 9000}, action: $v}
  - {name: flip-$o, proto: udp, to: {network: 10.10.0.2, port: 9000}, action: $o}
  - {name: ping, proto: icmp, action: accept}
defaults: {action: drop, stateful: false}
YAML
	lab_compile "$LAB_TMP/flip-$v.yaml" "$LAB_TMP/flip-$v.rfw" >/dev/null
done
lab_counters "$LAB_TMP/c1" || not_ok "counters (SIGUSR1)"
stop
cp "$LAB_TMP/flip-accept.rfw" "$LAB_TMP/running.rfw"
start "$LAB_TMP/running.rfw" || not_ok "rampartd restarts (stateless)"
# forwarding before the count starts (a PMD's port may come up after the
# announcement)
lab_wait_for 10 lab_in cli ping -c 1 -W 1 -q 10.10.0.2 >/dev/null || not_ok "forwarding after restart"
start_sequence recv2.out sent2 120
sleep 0.5
for i in $(seq 1 "$FLIPS"); do
	f=$([ $((i % 2)) -eq 1 ] && echo drop || echo accept)
	ctl reload "$LAB_TMP/flip-$f.rfw" >/dev/null 2>&1 || not_ok "flip reload $i"
	sleep 0.05
done
ctl reload "$LAB_TMP/flip-accept.rfw" >/dev/null 2>&1	# the end marker must pass
sleep 0.5
touch "$LAB_TMP/stop"; wait "$sender"
lab_wait_for 10 test -s "$LAB_TMP/recv2.out" || not_ok "receiver finished (2)"
sent2=$(cat "$LAB_TMP/sent2")
acc=$(stat_rule flip-accept); drp=$(stat_rule flip-drop)
read -r got2 _ _ _ < "$LAB_TMP/recv2.out"
runs=$("$LAB_PY" - "$LAB_TMP/recv2.out" "$sent2" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
got = set(map(int, lines[1].split())) if len(lines) > 1 and lines[1].strip() else set()
n = int(sys.argv[2])
flags = [i in got for i in range(n)]
print(sum(1 for a, b in zip(flags, flags[1:]) if a != b))
PY
)
echo "# flips: sent $sent2, accepted $acc, dropped $drp, delivered $got2, verdict changes $runs over $((FLIPS + 1)) reloads"
# + the three "end" markers, accepted; the receiver stops at the first
check_eq "each datagram counted once, under flip-accept or flip-drop" "$((acc + drp))" \
	"$((sent2 + 3))"
check_eq "delivered exactly the accepted datagrams" "$got2" "$((acc - 3))"
check "some datagrams met each policy" test "$acc" -gt 0 -a "$drp" -gt 0
check "the verdict changed at most once per reload (no mix, nothing else lost)" \
	test "$runs" -le $((FLIPS + 1))

lab_counters "$LAB_TMP/c2" || not_ok "counters (SIGUSR1)"
stop
lab_summary
