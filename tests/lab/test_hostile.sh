#!/usr/bin/env bash
# Hostile traffic through the AF_XDP bridge (issue 10, docs/security.md),
# each with the behaviour expected of it:
#  - a SYN flood to a port no rule opens: dropped by policy, no conntrack
#    entry made, an established flow keeps working;
#  - a SYN flood to an open port fills the table with half-open flows: a
#    new connection still gets in by evicting one (early drop), the
#    established flow is never evicted;
#  - NAT ports held by a scan (flows without answers): new flows take
#    them back; held by flows that exchanged more: the next new flow is
#    refused (nat-failed), the flows holding ports keep working;
#  - crafted frames (scapy): tiny first fragments, fragments overlapping
#    the TCP header (RFC 1858), orphan fragments (parked a second for
#    their first, then dropped), IPv4 lengths that lie,
#    bad IHL, an IPv6 extension chain too long, IPv6 overlapping
#    fragments, a wrong IPv4 header checksum, IPv4 source routes (LSRR,
#    SSRR) and an IPv6 routing header type 0 to a port the rules open,
#    hop-by-hop options after another header: each dropped and counted
#    under its reason;
#  - a datagram whose fragments come last first: parked, then through
#    behind their first, echoed back whole;
#  - a TCP segment far outside the window of a live connection: dropped as
#    ct-invalid, the connection unaffected;
#  - conntrack full of established flows: new flows refused (ct-full),
#    established ones unaffected;
#  - the packet log (--log): the flood's rule logs at most its rate, NAT
#    translations and invalid packets are in the JSON lines.
# rampartd must neither crash nor stop forwarding through all of it.
set -u
cd "$(dirname "$0")"
. ./lib.sh

SYNS=${HOSTILE_SYNS:-200000}

lab_init hst
lab_rampart_bins || exit 1
lab_bridge_setup || { not_ok "lab set-up"; lab_summary; exit 1; }
"$LAB_PY" -c 'import scapy.all' 2>/dev/null || { not_ok "python3-scapy installed"; lab_summary; exit 1; }

cat >"$LAB_TMP/hostile.yaml" <<'YAML'
version: 1
rules:
  - {name: echo, proto: udp, to: {network: 10.10.0.2, port: 7000}, action: accept}
  - {name: echo6, proto: udp, to: {network: "fd00:10::2", port: 7000}, action: accept}
  - {name: web, proto: tcp, to: {network: 10.10.0.2, port: 8080}, action: accept}
  - {name: natted, proto: udp, to: {network: 10.10.0.2, port: 9000-9001}, action: accept, log: true}
  - {name: no-telnet, proto: tcp, to: {port: 23}, action: drop, log: true}
  - {name: ping, proto: icmp, action: accept}
  - {name: nd, proto: icmpv6, action: accept}
nat:
  - name: hide
    match: {to: {network: 10.10.0.2, service: udp/9000-9001}}
    snat: {to: [10.10.0.50], ports: 20000-20003}
defaults: {action: drop, conntrack: {max_flows: 40}}
YAML
lab_compile "$LAB_TMP/hostile.yaml" "$LAB_TMP/hostile.rfw" >/dev/null ||
	{ not_ok "compile"; lab_summary; exit 1; }
LOG_RATE=50
lab_rampartd_start "$LAB_TMP/hostile.rfw" -v --log "$LAB_TMP/packets.log" --log-rate $LOG_RATE ||
	{ not_ok "rampartd starts"; lab_summary; exit 1; }
started_at=$(date +%s)
ok "rampartd starts"
ctl() { "$RAMPARTCTL" --control "$LAB_CONTROL" "$@"; }
stat_json() {	# stat_json PYTHON-EXPR over d = stats --json
	ctl --json stats | "$LAB_PY" -c "import json,sys; d = json.load(sys.stdin); print($1)"
}
flows_in_use() {
	ctl --json status | "$LAB_PY" -c 'import json,sys; print(json.load(sys.stdin)["conntrack"]["in_use"])'
}

lab_write_udp_tool
lab_bg srv "$LAB_TMP/echo.log" "$LAB_PY" "$LAB_TMP/udp.py" echo 10.10.0.2 7000
lab_bg srv "$LAB_TMP/echo6.log" "$LAB_PY" "$LAB_TMP/udp.py" echo fd00:10::2 7000
lab_bg srv "$LAB_TMP/echo9.log" "$LAB_PY" "$LAB_TMP/udp.py" echo 10.10.0.2 9000
lab_bg srv "$LAB_TMP/http.log" "$LAB_PY" -m http.server 8080 --bind 10.10.0.2 --directory "$LAB_TMP"
lab_wait_for 10 lab_port_listening srv udp 7000 && lab_wait_for 10 lab_port_listening srv udp 9000 &&
	lab_wait_for 10 lab_port_listening srv tcp 8080 || not_ok "servers listen"
# The server answers the NAT address through the client's MAC (the bridge
# carries no ARP answer for 10.10.0.50).
cli_mac=$(ip -n "$(lab_nsname cli)" -o link show "$CLI_IF" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
srv_mac=$(ip -n "$(lab_nsname srv)" -o link show "$SRV_IF" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
lab_in srv ip neigh replace 10.10.0.50 lladdr "$cli_mac" dev "$SRV_IF"
lab_in cli ip neigh replace 10.10.0.2 lladdr "$srv_mac" dev "$CLI_IF"

# Long-lived UDP flows, one socket each: "open N PORT BASE" opens them and
# exchanges once, then on each line from stdin exchanges again on every
# socket and prints how many answered.
cat >"$LAB_TMP/keep.py" <<'PY'
import socket, sys
n, port, base = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
socks = []
for i in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.10.0.1", base + i))
    s.settimeout(0.5)
    socks.append(s)
def round_():
    got = 0
    for s in socks:
        s.sendto(b"k" * 16, ("10.10.0.2", port))
        try:
            s.recvfrom(64); got += 1
        except socket.timeout:
            pass
    return got
print(round_(), flush=True)
for _ in sys.stdin:
    print(round_(), flush=True)
PY
# flows_open NAME N PORT BASE: keep.py in cli behind two FIFOs (opened in
# this shell: call it outside $(...)); the first round's answer count is
# in $FL_GOT. flows_round NAME prints another round's.
declare -A FL_IN FL_OUT
flows_open() {
	local fi=$LAB_TMP/$1.in fo=$LAB_TMP/$1.out w r
	mkfifo "$fi" "$fo"
	ip netns exec "$(lab_nsname cli)" "$LAB_PY" "$LAB_TMP/keep.py" "$2" "$3" "$4" \
		<"$fi" >"$fo" 2>>"$LAB_TMP/keep.err" &
	LAB_PIDS+=("$!")
	exec {w}>"$fi" {r}<"$fo"
	FL_IN[$1]=$w; FL_OUT[$1]=$r
	FL_GOT=0
	read -r -t 60 FL_GOT <&"$r"
}
flows_round() {
	echo >&"${FL_IN[$1]}"; read -r -t 60 k <&"${FL_OUT[$1]}"; echo "${k:-0}"
}
flows_open keep 1 7000 41000
check_eq "an established UDP flow answers" "$FL_GOT" 1
keeper() { flows_round keep; }

# ---- SYN flood to a port no rule opens ----
before=$(flows_in_use)
drops_before=$(stat_json 'd["drops"]["policy"]')
cat >"$LAB_TMP/syn.trafgen" <<CFG
{
  eth(da=$srv_mac, sa=$cli_mac),
  ipv4(sa=10.10.0.1, da=10.10.0.2, ttl=64),
  tcp(sp=dinc(1024, 65000), dp=23, syn, seq=drnd()),
  fill(0x00, 6)
}
CFG
lab_in cli tc qdisc replace dev "$CLI_IF" root pfifo limit 4096
rx0=$(stat_json 'sum(i["rx_packets"] for i in d["interfaces"])')
timeout 120 ip netns exec "$(lab_nsname cli)" trafgen --dev "$CLI_IF" --conf "$LAB_TMP/syn.trafgen" \
	-n "$SYNS" --qdisc-path --cpus 1 >"$LAB_TMP/trafgen.out" 2>&1
sleep 1
rx1=$(stat_json 'sum(i["rx_packets"] for i in d["interfaces"])')
drops=$(( $(stat_json 'd["drops"]["policy"]') - drops_before ))
echo "# SYN flood: $SYNS offered, rampartd received $((rx1 - rx0)), dropped by policy $drops"
check "the flood reached rampartd (over half of it)" test $((rx1 - rx0)) -ge $((SYNS / 2))
check "every SYN of the flood dropped by policy" test "$drops" -ge $((rx1 - rx0 - 20))
# Count the flood's own flows: the namespaces' IPv6 stacks send ND and MLD
# at times of their own, which the policy accepts statefully, so the
# table's total may move during the flood without it.
check_eq "no conntrack entry made by the flood" \
	"$(ctl flows --filter 'proto=tcp dport=23' | grep -c '^tcp ')" 0
check "  ... and the table did not grow with it" test "$(flows_in_use)" -le $((before + 2))
check_eq "the established flow still answers after the flood" "$(keeper)" 1

# ---- NAT ports exhausted (4 ports, one worker) ----
# A scan holds them first: four datagrams to a port nothing listens on,
# unanswered. A second later new flows take their ports back.
pool_json() {	# the NAT pool's field
	ctl --json status | "$LAB_PY" -c "import json,sys; print(json.load(sys.stdin)['nat_pools'][0]['$1'])"
}
lab_in cli "$LAB_PY" -c 'import socket
for p in range(43000, 43004):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.10.0.1", p))
    s.sendto(b"scan", ("10.10.0.2", 9001))'
lab_wait_for 5 test "$(pool_json in_use)" -eq 4 || not_ok "the scan's four datagrams took the pool's ports"
sleep 1.2	# flows touched this second are not taken back
failed_before=$(stat_json 'd["drops"]["nat_failed"]')
flows_open nat4 4 9000 42000
check_eq "four flows through SNAT get the pool's four ports back from the scan" "$FL_GOT" 4
check_eq "  ... counted as reclaimed (status --json nat_pools)" "$(pool_json reclaimed)" 4
check "  ... and in rampartctl status's RECLAIMED column" grep -q 'RECLAIMED' <(ctl status)
check_eq "  ... none refused" "$(stat_json 'd["drops"]["nat_failed"]')" "$failed_before"
# Flows that exchanged more than one datagram each way are never taken.
check_eq "the four flows answer a second round" "$(flows_round nat4)" 4
sleep 1.2
fifth=$(lab_in cli "$LAB_PY" "$LAB_TMP/udp.py" send 10.10.0.2 9000 1 16)
check_eq "a fifth flow finds no port: refused" "$fifth" 0
check "  ... counted as nat-failed" test "$(stat_json 'd["drops"]["nat_failed"]')" -gt "$failed_before"
check_eq "the four flows holding ports still work" "$(flows_round nat4)" 4

# ---- crafted frames ----
cat >"$LAB_TMP/craft.py" <<'PY'
import sys
from scapy.all import (Ether, IP, IPOption_LSRR, IPOption_SSRR, IPv6, IPv6ExtHdrDestOpt,
                       IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting, TCP, UDP, Raw,
                       sendp)
iface, smac, dmac = sys.argv[1], sys.argv[2], sys.argv[3]
e = Ether(src=smac, dst=dmac)
v4 = dict(src="10.10.0.1", dst="10.10.0.2")
v6 = dict(src="fd00:10::1", dst="fd00:10::2")
tcp = bytes(TCP(sport=43000, dport=8080, flags="S"))
frames = {
    # first fragment holding 8 bytes of TCP: no flags to judge
    "tiny": e / IP(proto=6, flags="MF", frag=0, **v4) / Raw(tcp[:8]),
    # offset 8 over the TCP flags of an earlier first fragment
    "overlap": e / IP(proto=6, frag=1, id=7, **v4) / Raw(tcp[8:] + b"x" * 8),
    # a non-first fragment whose first never came
    "orphan": e / IP(proto=17, frag=100, id=9, **v4) / Raw(b"y" * 64),
    # total length larger than the frame
    "longer": e / IP(len=1400, **v4) / UDP(sport=1, dport=7000) / Raw(b"z" * 20),
    # header length 12 bytes
    "ihl": e / IP(ihl=3, **v4) / UDP(sport=1, dport=7000),
    # nine hop-by-hop headers: over the chain limit
    "chain": e / IPv6(**v6) / (IPv6ExtHdrHopByHop() / IPv6ExtHdrHopByHop() /
              IPv6ExtHdrHopByHop() / IPv6ExtHdrHopByHop() / IPv6ExtHdrHopByHop() /
              IPv6ExtHdrHopByHop() / IPv6ExtHdrHopByHop() / IPv6ExtHdrHopByHop() /
              IPv6ExtHdrHopByHop()) / UDP(sport=1, dport=7000),
    # IPv6 first fragment holding 8 bytes of TCP
    "tiny6": e / IPv6(**v6) / IPv6ExtHdrFragment(nh=6, offset=0, m=1, id=6) / Raw(tcp[:8]),
    # an IPv4 header checksum that is wrong (RFC 1812 5.2.2)
    "badsum": e / IP(chksum=0xdead, **v4) / UDP(sport=1, dport=7000),
    # source routes through the server, to a port the rules allow
    "lsrr": e / IP(options=[IPOption_LSRR(routers=["10.10.0.9"])], **v4) / UDP(sport=1, dport=7000),
    "ssrr": e / IP(options=[IPOption_SSRR(routers=["10.10.0.9"])], **v4) / UDP(sport=1, dport=7000),
    "rh0": e / IPv6(**v6) / IPv6ExtHdrRouting(type=0, addresses=["fd00:10::9"])
           / UDP(sport=1, dport=7000),
    # hop-by-hop options after destination options (RFC 8200 4.1)
    "hbh-late": e / IPv6(**v6) / IPv6ExtHdrDestOpt() / IPv6ExtHdrHopByHop() / UDP(sport=1, dport=7000),
    # IPv6 fragment at offset 8 of a TCP header
    "overlap6": e / IPv6(**v6) / IPv6ExtHdrFragment(nh=6, offset=1, id=5) / Raw(tcp[8:]),
    # fragments ending past byte 65535 of their datagram
    "oversize": e / IP(proto=17, frag=8190, id=11, **v4) / Raw(b"o" * 64),
    "oversize6": e / IPv6(**v6) / IPv6ExtHdrFragment(nh=17, offset=8190, id=12) / Raw(b"o" * 64),
}
for name in sys.argv[4:]:
    sendp(frames[name], iface=iface, count=10, verbose=False)
PY
craft() { lab_in cli "$LAB_PY" "$LAB_TMP/craft.py" "$CLI_IF" "$cli_mac" "$srv_mac" "$@"; }
mal() { stat_json "d[\"malformed\"][\"${1//-/_}\"]"; }	# JSON keys are snake_case
drop() { stat_json "d[\"drops\"][\"${1//-/_}\"]"; }
for case in tiny:short-l4 overlap:fragment-overlap longer:short-l3 ihl:bad-l3 \
	    chain:bad-ipv6-ext tiny6:short-l4 overlap6:fragment-overlap lsrr:source-route \
	    ssrr:source-route rh0:source-route hbh-late:bad-ipv6-ext badsum:bad-ipv4-checksum \
	    oversize:fragment-oversize oversize6:fragment-oversize; do
	name=${case%%:*}; reason=${case#*:}
	b=$(mal "$reason")
	craft "$name"
	check_eq "crafted '$name' x10: dropped as $reason" "$(( $(mal "$reason") - b ))" 10
done
# Orphans are parked a second for their first (docs/security.md), then
# dropped; there are slots for 64, not for ten copies each of a flood.
b=$(drop frag-orphan) bp=$(stat_json 'd["frag_parked"]')
craft orphan
check_eq "crafted 'orphan' x10: parked for their first" "$(( $(stat_json 'd["frag_parked"]') - bp ))" 10
lab_wait_for 5 test "$(( $(drop frag-orphan) - b ))" -eq 10
check_eq "  ... and dropped as frag-orphan when it did not come" "$(( $(drop frag-orphan) - b ))" 10
# A datagram whose fragments come last first: the last two wait for the
# first, then follow it; the echo server gets all 3,000 bytes and its
# answer (fragmented by the server's kernel, in order) comes back whole.
cat >"$LAB_TMP/reorder.py" <<'PY'
import socket, sys
from scapy.all import (Ether, IP, IPv6, IPv6ExtHdrFragment, UDP, Raw, fragment, fragment6,
                       sendp)
iface, smac, dmac, family = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
payload = bytes(range(256)) * 11 + b"r" * 184          # 3,000 bytes
if family == "6":
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.bind(("fd00:10::1", 45006))
    dgram = IPv6(src="fd00:10::1", dst="fd00:10::2") / IPv6ExtHdrFragment(id=0x7a7b) / \
        UDP(sport=45006, dport=7000) / Raw(payload)
    frags = fragment6(dgram, 1280)
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.10.0.1", 45000))
    dgram = IP(bytes(IP(src="10.10.0.1", dst="10.10.0.2", id=0x7a7a) /
                     UDP(sport=45000, dport=7000) / Raw(payload)))
    frags = fragment(dgram, fragsize=1200)
s.settimeout(3)
sendp([Ether(src=smac, dst=dmac) / f for f in reversed(frags)], iface=iface, verbose=False)
try:
    data, _ = s.recvfrom(4000)
    print(len(frags), "same" if data == payload else "differs %d" % len(data))
except socket.timeout:
    print(len(frags), "none")
PY
for fam in 4 6; do
	bp=$(stat_json 'd["frag_parked"]') br=$(stat_json 'd["frag_resumed"]') b=$(drop frag-orphan)
	check_eq "an IPv$fam datagram in 3 fragments sent last first: echoed back whole" \
		"$(lab_in cli "$LAB_PY" "$LAB_TMP/reorder.py" "$CLI_IF" "$cli_mac" "$srv_mac" $fam)" \
		"3 same"
	check_eq "  ... its last two parked" "$(( $(stat_json 'd["frag_parked"]') - bp ))" 2
	check "  ... and run again after the first" \
		test "$(( $(stat_json 'd["frag_resumed"]') - br ))" -ge 2
	check_eq "  ... none dropped as frag-orphan" "$(( $(drop frag-orphan) - b ))" 0
done
check_eq "the established flow still answers after the crafted frames" "$(keeper)" 1

# ---- TCP out of the window of a live connection ----
cat >"$LAB_TMP/tcpwin.py" <<'PY'
import socket, sys, time
s = socket.create_connection(("10.10.0.2", 8080), timeout=5, source_address=("10.10.0.1", 44000))
print("up", flush=True)
sys.stdin.readline()               # the test injects its segment
s.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
data = s.recv(100)
print("ok" if data.startswith(b"HTTP/1.0 200") else "bad", flush=True)
PY
mkfifo "$LAB_TMP/tcpw.in" "$LAB_TMP/tcpw.out"
ip netns exec "$(lab_nsname cli)" "$LAB_PY" "$LAB_TMP/tcpwin.py" <"$LAB_TMP/tcpw.in" \
	>"$LAB_TMP/tcpw.out" 2>>"$LAB_TMP/keep.err" &
LAB_PIDS+=("$!")
exec {tw}>"$LAB_TMP/tcpw.in" {tr}<"$LAB_TMP/tcpw.out"
read -r -t 10 up <&"$tr"
check_eq "a TCP connection is up" "${up:-}" up
b=$(drop ct-invalid)
lab_in cli "$LAB_PY" -c "
from scapy.all import Ether, IP, TCP, sendp
sendp(Ether(src='$cli_mac', dst='$srv_mac') / IP(src='10.10.0.1', dst='10.10.0.2') /
      TCP(sport=44000, dport=8080, flags='A', seq=0x7fff0000, ack=0x10000000) / (b'w' * 10),
      iface='$CLI_IF', count=5, verbose=False)"
check_eq "5 segments far outside the window: dropped as ct-invalid" "$(( $(drop ct-invalid) - b ))" 5
echo go >&"$tw"
read -r -t 10 res <&"$tr"
check_eq "  ... and the connection still works" "${res:-}" ok

# ---- SYN flood to the open port: the table fills, new connections get in ----
# (40 flows in all: the flood's half-open ones take the room; once they
# are a second old a new flow evicts one, early drop, instead of being
# refused until they time out). After the tests that count ct-invalid:
# the server may retransmit SYN-ACKs of half-open connections whose flows
# are gone, which are invalid.
sed 's/dp=23/dp=8080/' "$LAB_TMP/syn.trafgen" >"$LAB_TMP/syn8080.trafgen"
timeout 60 ip netns exec "$(lab_nsname cli)" trafgen --dev "$CLI_IF" \
	--conf "$LAB_TMP/syn8080.trafgen" -n 3000 --qdisc-path --cpus 1 >"$LAB_TMP/trafgen8080.out" 2>&1
sleep 1.2
evicted() { ctl --json status | "$LAB_PY" -c 'import json,sys; print(json.load(sys.stdin)["conntrack"]["evicted"])'; }
echo "# SYN flood to 8080: $(flows_in_use) flows in use, $(evicted) evicted, ct-full $(stat_json 'd["drops"]["ct_full"]')"
check_eq "a SYN flood to the open port fills the table" "$(flows_in_use)" 40
check "a new connection to the port still gets in (early drop)" lab_in cli "$LAB_PY" -c '
import socket
s = socket.create_connection(("10.10.0.2", 8080), timeout=4)
s.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
assert s.recv(100).startswith(b"HTTP/1.0 200")'
check "  ... counted as evicted (rampartctl status)" test "$(evicted)" -gt 0
check_eq "the established flow was not evicted" "$(keeper)" 1
# the flood's flows out of the way of the tests below
ctl flows --delete --filter 'proto=tcp dport=8080' >/dev/null

# ---- conntrack full (40 flows in all) of established flows ----
# The room left is filled with UDP flows that exchange twice (established:
# never evicted); further new flows are then refused, but for the few the
# table's own not-established flows (ND) make room for.
used=$(flows_in_use)
room=$((40 - used))
flows_open many "$room" 7000 45000
got=${FL_GOT:-0}
# (an ND or MLD flow of the namespaces may take a place meanwhile)
check "UDP flows fill the table's room ($got of $room)" test "$got" -ge $((room - 2))
check "  ... and exchange again (established)" test "$(flows_round many)" -ge "$got"
full_before=$(drop ct-full)
flows_open more 10 7000 46000
more=$FL_GOT
echo "# conntrack: $used flows in use, $room more made, 10 more tried: ${more:-?} answered, $(flows_in_use) in use"
check "new flows past the table's 40 are refused" test "${more:-10}" -le "$used"
check_eq "  ... the table holds its maximum" "$(flows_in_use)" 40
check "  ... counted as ct-full" test "$(drop ct-full)" -gt "$full_before"
check "the established flows still answer with the table full" \
	test "$(flows_round many)" -ge "$got"
check_eq "  ... and the first one" "$(keeper)" 1
check "rampartd is still running" kill -0 "$RAMPARTD_PID"

lab_counters "$LAB_TMP/c1" || not_ok "counters (SIGUSR1)"
lab_rampartd_stop

# ---- the packet log, complete once rampartd has stopped ----
secs=$(( $(date +%s) - started_at + 1 ))
"$LAB_PY" - "$LAB_TMP/packets.log" >"$LAB_TMP/log.sum" <<'PY'
import json, sys
rules, nat, invalid, bad = {}, 0, 0, 0
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        bad += 1
        continue
    rules[r["rule"]] = rules.get(r["rule"], 0) + 1
    if r.get("nat", {}).get("src") == "10.10.0.50" and r["verdict"] == "accept":
        nat += 1
    # (the out-of-window segments' own: the flood to 8080 leaves the server
    # answering half-open connections whose flows are gone, invalid too)
    if r["event"] == "invalid" and r.get("reason") == "ct-invalid" and r.get("sport") == 44000:
        invalid += 1
print(bad, rules.get("no-telnet", 0), rules.get("natted", 0), nat, invalid)
PY
read -r bad telnet natted nat invalid <"$LAB_TMP/log.sum"
echo "# packet log: $telnet no-telnet records over ${secs}s at $LOG_RATE/s, $natted natted ($nat translated), $invalid invalid"
check_eq "every log line is a JSON object" "$bad" 0
check "the flood's rule logged, within its rate ($LOG_RATE/s and one burst)" \
	test "$telnet" -ge 1 -a "$telnet" -le $(( LOG_RATE * (secs + 1) ))
check "  ... while the flood was $SYNS packets" test "$telnet" -lt "$SYNS"
check "the NAT rule's records carry the translation" test "$nat" -ge 4
check_eq "the out-of-window segments are logged as invalid" "$invalid" 5
check "rampartd -v reports records over the rate" grep -q 'packet log: .* [1-9][0-9]* over the rate' "$LAB_TMP/rampartd.err"
lab_summary
