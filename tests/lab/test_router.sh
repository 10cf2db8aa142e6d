#!/bin/bash
# Lab test of rampartd in router mode on AF_XDP: a client subnet and a
# server subnet joined through a firewall namespace whose two ports carry
# addresses; rampartd routes between them by the policy's routes, with
# next hops from the kernel's neighbour table. Checks ping, TCP, a denied
# port, TCP Fast Open, MSS clamping, no martians forwarded (mDNS,
# broadcasts) under a default route, time-exceeded for TTL 1,
# fragmentation needed / packet too big
# when a port's MTU shrinks, the counters, then next hops the kernel had
# not resolved (rampartd asks it to) and hosts that are not there (host
# unreachable).
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_router.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

PINGS=4
router_setup() {
	lab_router_setup 20 || return 1
}

# Before rampartd takes the ports, the firewall pings both hosts so their
# entries exist and the first packets are not dropped (ARP and ND go on
# reaching the kernel: the XDP program passes them in router mode); the
# end of the test starts without them.
router_neighbours() {
	lab_router_neighbours 20
}

write_policy() {	# FILE [with-routes]
	cat >"$1" <<YAML
version: 1
zones:
  inside: [$FW_IF_C]
  outside: [$FW_IF_S]
rules:
  - name: ping-out
    proto: icmp
    icmp_type: echo-request
    from: {zone: inside}
    to: {zone: outside}
    action: accept
  - name: ping6-out
    proto: icmpv6
    icmp_type: echo-request
    from: {zone: inside}
    to: {zone: outside}
    action: accept
  - name: web-out
    proto: tcp
    from: {zone: inside}
    to: {zone: outside, port: [8080, 8081]}
    action: accept
  - name: udp-echo-out
    proto: udp
    from: {zone: inside}
    to: {zone: outside, port: 9000}
    action: accept
  - name: udp-out-allowed	# mDNS and a broadcast port: the martian check, not a rule, stops those
    proto: udp
    from: {zone: inside}
    to: {zone: outside, port: [5353, 9999]}
    action: accept
  - name: no-9090
    proto: tcp
    to: {port: 9090}
    action: reject
defaults: {action: drop, stateful: true, tcp_mss: clamp}
YAML
	[ "${2:-}" = with-routes ] && cat >>"$1" <<YAML
routes:
  - {prefix: 10.20.1.0/24, interface: $FW_IF_C}
  - {prefix: 10.20.2.0/24, interface: $FW_IF_S}
  - {prefix: "fd00:20:1::/64", interface: $FW_IF_C}
  - {prefix: "fd00:20:2::/64", interface: $FW_IF_S}
  - {prefix: 0.0.0.0/0, via: 10.20.2.2, interface: $FW_IF_S}
  - {prefix: "::/0", via: "fd00:20:2::2", interface: $FW_IF_S}
YAML
	return 0
}

last_martian() {	# the drop martian count in the last block rampartd printed
	awk '$1 == "drop" && $2 == "martian" { n = $3 } END { print n + 0 }' "$LAB_TMP/rampartd.out"
}

lab_init rpr
lab_rampart_bins || { not_ok "rampartd built"; lab_summary; exit 1; }
router_setup || { not_ok "lab set up"; lab_summary; exit 1; }
write_policy "$LAB_TMP/router.yaml" with-routes
write_policy "$LAB_TMP/noroutes.yaml"
if ! lab_compile "$LAB_TMP/router.yaml" "$LAB_TMP/router.rfw" ||
   ! RAMPART_TEST_RFW='' lab_compile "$LAB_TMP/noroutes.yaml" "$LAB_TMP/noroutes.rfw"; then
	not_ok "router policies compile"; lab_summary; exit 1
fi
check "firewall resolves both hosts (ARP, ND)" quiet router_neighbours

check "router mode without routes in the policy: exit 1" \
	bash -c "ip netns exec $(lab_nsname fw) $RAMPARTD --policy $LAB_TMP/noroutes.rfw \
		--interface $FW_IF_C --interface $FW_IF_S --mode router >/dev/null 2>&1; [ \$? -eq 1 ]"

if ! lab_rampartd_run routing --policy "$LAB_TMP/router.rfw" --interface "$FW_IF_C" \
	--interface "$FW_IF_S" --mode router --foreground -v --control "$LAB_TMP/rampartd.sock"; then
	not_ok "rampartd starts in router mode"; cat "$LAB_TMP/rampartd.err" >&2
	lab_summary; exit 1
fi
ok "rampartd starts in router mode"

echo hello >"$LAB_TMP/index.txt"
lab_bg srv "$LAB_TMP/http4.log" "$LAB_PY" -m http.server 8080 --bind 10.20.2.2 --directory "$LAB_TMP"
lab_bg srv "$LAB_TMP/http6.log" "$LAB_PY" -m http.server 8080 --bind fd00:20:2::2 --directory "$LAB_TMP"
lab_bg srv "$LAB_TMP/http9090.log" "$LAB_PY" -m http.server 9090 --bind 10.20.2.2 --directory "$LAB_TMP"
lab_write_udp_tool
lab_bg srv "$LAB_TMP/echo.log" "$LAB_PY" "$LAB_TMP/udp.py" echo 10.20.2.2 9000
lab_wait_for 10 lab_port_listening srv tcp 8080 && lab_wait_for 10 lab_port_listening srv tcp 9090 &&
	lab_wait_for 10 lab_port_listening srv udp 9000 || not_ok "servers listen"

check "ping 10.20.2.2 across the router ($PINGS)" \
	quiet lab_in cli ping -q -n -c "$PINGS" -i 0.2 -W 2 10.20.2.2
check "ping fd00:20:2::2 across the router ($PINGS)" \
	quiet lab_in cli ping -6 -q -n -c "$PINGS" -i 0.2 -W 2 fd00:20:2::2
# TCP MSS clamping (defaults.tcp_mss: clamp): each end's connected socket
# says the MSS it sends with (TCP_MAXSEG: the peer's MSS option less the
# timestamp option's 12 bytes). With both ports at MTU 1500 the options
# pass as the hosts wrote them (1460); below, with the server port at
# 1280, rampart lowers them to 1240 both ways.
cat >"$LAB_TMP/mss.py" <<'PY'
import socket, sys
mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
if mode == "serve":		# one line per connection: its TCP_MAXSEG
    s = socket.socket(fam)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(4)
    while True:
        c, _ = s.accept()
        with open(sys.argv[4], "a") as log:
            log.write("%d\n" % c.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG))
        c.close()
else:
    c = socket.create_connection((addr, port), timeout=3)
    print(c.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG))
    c.recv(1)
PY
lab_bg srv "$LAB_TMP/mss-serve.out" "$LAB_PY" "$LAB_TMP/mss.py" serve 10.20.2.2 8081 "$LAB_TMP/mss.log"
mss_pair() {	# "client-mss server-mss" of one new connection
	local c before
	before=$(wc -l <"$LAB_TMP/mss.log" 2>/dev/null || echo 0)
	c=$(lab_in cli "$LAB_PY" "$LAB_TMP/mss.py" connect 10.20.2.2 8081 2>/dev/null)
	lab_wait_for 3 bash -c "[ \$(wc -l <'$LAB_TMP/mss.log') -gt $before ]"
	echo "${c:-none} $(tail -1 "$LAB_TMP/mss.log" 2>/dev/null)"
}
lab_wait_for 10 lab_port_listening srv tcp 8081 || not_ok "MSS probe server listens"
mss=$(mss_pair)
check "MTU 1500 both ways: MSS options pass unclamped (client, server: $mss)" \
	bash -c 'set -- $1; [ "$1" -gt 1240 ] && [ "$2" -gt 1240 ]' _ "$mss"

check "HTTP over IPv4 to 10.20.2.2:8080" \
	bash -c "ip netns exec $(lab_nsname cli) curl -s --max-time 5 http://10.20.2.2:8080/index.txt | grep -q hello"
check "HTTP over IPv6 to [fd00:20:2::2]:8080" \
	bash -c "ip netns exec $(lab_nsname cli) curl -s --max-time 5 'http://[fd00:20:2::2]:8080/index.txt' | grep -q hello"
lab_in cli curl -s --max-time 3 -o /dev/null http://10.20.2.2:9090/
check_eq "TCP to 9090 is refused by the firewall's RST (curl exit 7)" "$?" 7

# TCP Fast Open: the client puts its request in the SYN (tcp_fastopen 5:
# on, and no cookie needed); the server does not do TFO, so its SYN-ACK
# acknowledges the SYN alone and the client sends the request again.
# Conntrack must take that SYN-ACK (RFC 7413) or the connection hangs.
cat >"$LAB_TMP/tfo.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.settimeout(3)
s.sendto(b"GET /index.txt HTTP/1.0\r\n\r\n", socket.MSG_FASTOPEN, (sys.argv[1], 8080))
data = b""
while True:
    got = s.recv(4096)
    if not got:
        break
    data += got
print("hello" in data.decode(errors="replace"))
PY
lab_in cli sysctl -q -w net.ipv4.tcp_fastopen=5
check_eq "TCP Fast Open: a request in the SYN, the SYN-ACK taking the SYN alone: answered" \
	"$(lab_in cli "$LAB_PY" "$LAB_TMP/tfo.py" 10.20.2.2 2>&1 | tail -1)" True

# Martians (runtime/martian.h): with default routes towards the server
# and a policy that lets the client out, the client's link-scoped
# multicast (mDNS to 224.0.0.251 and ff02::fb, hop limit 255) and its
# broadcasts must still not reach the server's link, where a capture
# watches (and sees the server's own, sent as a control). Counted as
# martian drops.
cat >"$LAB_TMP/mc.py" <<'PY'
import socket, sys, time
ifname = sys.argv[1]
idx = socket.if_nametoindex(ifname)
s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s4.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
s4.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, ifname.encode())
s4.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, idx)
for k in range(3):
    s4.sendto(b"mdns4", ("224.0.0.251", 5353))
    s6.sendto(b"mdns6", ("ff02::fb", 5353, 0, idx))
    s4.sendto(b"bcast", ("255.255.255.255", 9999))
    time.sleep(0.05)
PY
lab_bg srv "$LAB_TMP/mc-cap.log" dumpcap -q -i "$SRV_IF" -w "$LAB_TMP/mc.pcap" \
	-f "udp port 5353 or udp port 9999 or icmp"
mc_cap=$LAB_LAST_PID
lab_wait_for 5 test -s "$LAB_TMP/mc.pcap" || not_ok "a capture on the server's link starts"
sleep 0.5
lab_counters "$LAB_TMP/c-before-mc"
m0=$(last_martian)
lab_in srv "$LAB_PY" "$LAB_TMP/mc.py" "$SRV_IF"
lab_in cli "$LAB_PY" "$LAB_TMP/mc.py" "$CLI_IF"
# a directed broadcast to the server's subnet (RFC 2644: a router must not
# forward it; the kernel's neighbour entry for it is the broadcast MAC)
lab_in cli ping -n -c 2 -i 0.2 -W 1 10.20.2.255 >/dev/null 2>&1
sleep 0.5
lab_counters "$LAB_TMP/c-after-mc"
kill -INT "$mc_cap"
lab_wait_gone "$mc_cap" 5
mc_from() {	# frames the capture holds sent by the port of namespace $1, interface $2
	local mac; mac=$(lab_in "$1" cat "/sys/class/net/$2/address")
	tshark -r "$LAB_TMP/mc.pcap" -Y "eth.src == $mac" 2>/dev/null | wc -l
}
check_eq "the capture on the server's link sees the server's own mDNS and broadcasts" \
	"$(mc_from srv "$SRV_IF")" 9
check_eq "martians: none of the client's mDNS, broadcasts (also directed) leave rampart's server port" \
	"$(mc_from fw "$FW_IF_S")" 0
check "martians: counted as drops ($(($(last_martian) - m0)) of 11)" \
	test "$(($(last_martian) - m0))" -ge 11
# The firewall's own port addresses are not in host.addresses here: rampart
# drops what is sent to them (local), without holding it for a neighbour
# that is itself (which ended in "Destination Host Unreachable" from it).
# A secondary address added to the port while rampartd runs too (its
# address watch builds the policy again within a second).
lab_in fw ip addr add 10.20.2.7/24 dev "$FW_IF_S"
lab_wait_for 5 grep -q "addresses 10.20.2.1 .* -> 10.20.2.1 10.20.2.7 " "$LAB_TMP/rampartd.err" ||
	not_ok "rampartd saw the secondary address 10.20.2.7"
check "rampartctl --json status lists both, the first one first" \
	"$LAB_PY" -c 'import json, subprocess, sys
d = json.loads(subprocess.check_output(sys.argv[1:4] + ["--json", "status"]))
sys.exit([f["addresses"][:2] for f in d["interfaces"] if f["name"] == sys.argv[4]]
         != [["10.20.2.1", "10.20.2.7"]])' "$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" "$FW_IF_S"
lab_in cli ping -n -c 1 -W 4 10.20.2.7 >"$LAB_TMP/ping-own2" 2>&1 &
ping2=$!
out=$(lab_in cli ping -n -c 1 -W 4 10.20.2.1 2>&1); wait "$ping2"
check "ping 10.20.2.1 (the firewall's own, not a host address): no reply, no unreachable" \
	bash -c '! grep -qi "unreachable\| bytes from" <<<"$1"' _ "$out"
check "ping 10.20.2.7 (its secondary address): no reply, no unreachable" \
	bash -c '! grep -qi "unreachable\| bytes from" "$1"' _ "$LAB_TMP/ping-own2"
lab_counters "$LAB_TMP/c-local"
check "the counters: local $(awk '$1 == "drop" && $2 == "local" { n = $3 } END { print n + 0 }' \
	"$LAB_TMP/rampartd.out") (2 or more)" \
	bash -c "awk '\$1 == \"drop\" && \$2 == \"local\" { n = \$3 } END { exit !(n >= 2) }' '$LAB_TMP/rampartd.out'"
lab_in fw ip addr del 10.20.2.7/24 dev "$FW_IF_S"

# Unicast neighbour discovery (hop limit 255) reaches the kernel only when
# it is addressed to one of the kernel's own addresses, which rampartd
# follows: an address added while it runs is answered within a second or
# two. One to a host behind the router is a packet to route: the rules
# judge it (the default drops it), before it went to the kernel unjudged.
cat >"$LAB_TMP/ns.py" <<'PY'
import sys
from scapy.all import Ether, IPv6, ICMPv6ND_NS, ICMPv6ND_NA, ICMPv6NDOptSrcLLAddr, conf, sendp, srp1
conf.verb = 0
iface, router_mac, dst, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
mine = open("/sys/class/net/%s/address" % iface).read().strip()
ns = (Ether(src=mine, dst=router_mac) / IPv6(src="fd00:20:1::2", dst=dst, hlim=255) /
      ICMPv6ND_NS(tgt=dst) / ICMPv6NDOptSrcLLAddr(lladdr=mine))
if count == 0:	# one, and say whether an NA for it came back
    a = srp1(ns, iface=iface, timeout=2)
    sys.exit(0 if a is not None and ICMPv6ND_NA in a and a[ICMPv6ND_NA].tgt == dst else 1)
sendp(ns, iface=iface, count=count, inter=0.05)
PY
fw_c_mac=$(lab_in fw cat "/sys/class/net/$FW_IF_C/address")
own_told() { grep -c "IPv6 address(es) of its own" "$LAB_TMP/rampartd.err"; }
told0=$(own_told)
lab_in fw ip addr add fd00:20:1::9/64 dev "$FW_IF_C" nodad
own_told_over() { [ "$(own_told)" -gt "$1" ]; }
lab_wait_for 5 own_told_over "$told0" ||
	not_ok "rampartd saw the address fd00:20:1::9"
check "unicast NS to fd00:20:1::9, added while rampartd runs: the kernel answers" \
	lab_wait_for 5 lab_in cli "$LAB_PY" "$LAB_TMP/ns.py" "$CLI_IF" "$fw_c_mac" fd00:20:1::9 0
default_drops() {
	awk '$1 == "0" && $2 == "default" { n = $4 } END { print n + 0 }' "$LAB_TMP/rampartd.out"
}
lab_counters "$LAB_TMP/c-ns0"
d0=$(default_drops)
lab_in cli "$LAB_PY" "$LAB_TMP/ns.py" "$CLI_IF" "$fw_c_mac" fd00:20:2::2 5
sleep 0.3
lab_counters "$LAB_TMP/c-ns1"
check "unicast NS to fd00:20:2::2 (behind the router): judged by the rules, dropped ($(($(default_drops) - d0)) of 5)" \
	test "$(($(default_drops) - d0))" -ge 5
told0=$(own_told)
lab_in fw ip addr del fd00:20:1::9/64 dev "$FW_IF_C"
lab_wait_for 5 own_told_over "$told0" || not_ok "rampartd saw fd00:20:1::9 go"

out=$(lab_in cli ping -n -c 1 -t 1 -W 2 10.20.2.2 2>&1)
check "ping -t 1: 'Time to live exceeded' from 10.20.1.1" \
	bash -c "grep -q 'From 10.20.1.1.*Time to live exceeded' <<<\"\$1\"" _ "$out"
out=$(lab_in cli ping -6 -n -c 1 -t 1 -W 2 fd00:20:2::2 2>&1)
check "ping -6 -t 1: 'Time exceeded' from fd00:20:1::1" \
	bash -c "grep -qi 'From fd00:20:1::1.*Time exceeded' <<<\"\$1\"" _ "$out"

# Replies are rate limited (--reply-rate, 1000 a second by default, bursts
# of 100): 3000 echo requests with TTL 1 sent as fast as Python can get
# most of their time-exceeded held back, and a second later ping -t 1 is
# answered again.
cat >"$LAB_TMP/ttl1.py" <<'PY'
import socket, struct, sys
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, 1)
for seq in range(int(sys.argv[2])):
    h = struct.pack("!BBHHH", 8, 0, 0, 0x7777, seq & 0xffff) + b"x" * 16
    s.sendto(h[:2] + struct.pack("!H", csum(h)) + h[4:], (sys.argv[1], 0))
PY
last_of() {	# NAME: its value in the last block rampartd printed
	awk -v k="$1" '$1 == k { n = $2 } END { print n + 0 }' "$LAB_TMP/rampartd.out"
}
lab_counters "$LAB_TMP/c-before-flood"
rep0=$(last_of replies); lim0=$(last_of replies-limited)
lab_in cli "$LAB_PY" "$LAB_TMP/ttl1.py" 10.20.2.2 3000
sleep 0.5
lab_counters "$LAB_TMP/c-after-flood"
rep1=$(last_of replies); lim1=$(last_of replies-limited)
echo "# 3000 TTL-1 echo requests: $((rep1 - rep0)) time-exceeded sent, $((lim1 - lim0)) held back"
check "reply rate: most of 3000 TTL-1 packets got no time-exceeded ($((lim1 - lim0)) held back)" \
	test "$((lim1 - lim0))" -ge 1500
check "reply rate: at most a burst and the rate's share were sent ($((rep1 - rep0)) of 3000)" \
	test "$((rep1 - rep0))" -le 1500
jl=$("$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" --json stats |
	"$LAB_PY" -c 'import json,sys; d = json.load(sys.stdin); print(d["replies_limited"])' 2>&1)
check_eq "rampartctl --json stats: replies_limited as counted" "$jl" "$lim1"
sleep 1
out=$(lab_in cli ping -n -c 1 -t 1 -W 2 10.20.2.2 2>&1)
check "reply rate: a second later ping -t 1 is answered again" \
	bash -c "grep -q 'From 10.20.1.1.*Time to live exceeded' <<<\"\$1\"" _ "$out"

# The server port's MTU lowered while rampartd runs (it reads the MTUs
# every second): a 1400-byte packet with DF is answered with
# fragmentation needed / packet too big carrying the new MTU, from the
# client port's address; one that fits still goes.
lab_in fw ip link set "$FW_IF_S" mtu 1280
sleep 1.5
out=$(lab_in cli ping -n -c 2 -i 0.3 -W 1 -M do -s 1372 10.20.2.2 2>&1)
check "MTU 1280: 1400-byte ping with DF: 'Frag needed' with mtu = 1280 from 10.20.1.1" \
	bash -c "grep -Eq 'From 10\.20\.1\.1 .*mtu ?= ?1280' <<<\"\$1\"" _ "$out"
out=$(lab_in cli ping -6 -n -c 2 -i 0.3 -W 1 -M do -s 1352 fd00:20:2::2 2>&1)
check "MTU 1280: 1400-byte ping -6: 'Packet too big' with mtu=1280 from fd00:20:1::1" \
	bash -c "grep -Eq 'From fd00:20:1::1 .*mtu ?= ?1280' <<<\"\$1\"" _ "$out"
check "MTU 1280: a 1280-byte ping goes through" \
	quiet lab_in cli ping -q -n -c 2 -i 0.3 -W 2 -M do -s 1252 10.20.2.2
lab_in cli ip route flush cache	# the pings taught it the path MTU: its own SYN as before
mss=$(mss_pair)
check "MTU 1280 on the server port: MSS clamped to 1240 both ways (client, server: $mss)" \
	bash -c 'set -- $1; [ "$1" -le 1240 ] && [ "$2" -le 1240 ] && [ "$1" -ge 1200 ] && [ "$2" -ge 1200 ]' _ "$mss"
lab_counters "$LAB_TMP/c-mss"
check "the counters: mss-clamped $(last_of mss-clamped) (a SYN and a SYN-ACK)" \
	test "$(last_of mss-clamped)" -ge 2
# Without DF the router cuts the datagram into fragments instead, which
# the server puts together and echoes. The server's end of the link gets
# the same MTU (it answers in fragments of its own); the client forgets
# the path MTU the pings taught it, so the datagram leaves it whole.
lab_in srv ip link set "$SRV_IF" mtu 1280
lab_in cli ip route flush cache
lab_write_nodf_tool
lab_counters "$LAB_TMP/c-before-frag"
n=$(lab_in cli "$LAB_PY" "$LAB_TMP/nodf.py" 10.20.2.2 1400 5)
check "MTU 1280: 1400-byte UDP without DF, fragmented by rampart, echoed whole (${n:-0} of 5)" \
	test "${n:-0}" -eq 5
lab_counters "$LAB_TMP/c-after-frag"
fr0=$(awk '$1 == "fragmented" { n = $2 } END { print n + 0 }' "$LAB_TMP/rampartd.out")
check "MTU 1280: counted as fragmented (${fr0})" test "$fr0" -ge 5
jf=$("$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" --json stats |
	"$LAB_PY" -c 'import json,sys; d = json.load(sys.stdin); print(d["fragmented"], d["fragments"], d["drops"]["too_big"])' 2>&1)
check "rampartctl --json stats: fragmented, fragments, drops.too_big ($jf)" \
	bash -c '[ "$1" -ge 5 ] && [ "$2" -ge 10 ] && [ "$3" -ge 2 ]' _ $jf
lab_in srv ip link set "$SRV_IF" mtu 1500
lab_in fw ip link set "$FW_IF_S" mtu 1500

ctr=$LAB_TMP/counters.txt
check "SIGUSR1 prints counters" lab_counters "$ctr"
# stateful: only packets that start a flow meet the rules
n=$(lab_rule_counter "$ctr" ping-out packets)
check "ping-out counted echo requests (${n:-none})" test "${n:-0}" -gt 0
n=$(lab_rule_counter "$ctr" web-out packets)
check "web-out counted packets (${n:-none})" test "${n:-0}" -gt 0
n=$(lab_rule_counter "$ctr" no-9090 packets)
check "no-9090 counted packets (${n:-none})" test "${n:-0}" -gt 0
tx=$(awk -v i="$FW_IF_S" '$1 == "interface" && $2 == i { print $5 }' "$ctr")
check "frames sent out of the server port (${tx:-none})" test "${tx:-0}" -gt 0
check "runtime block shows the route stage and TTL expiries" \
	bash -c "grep -q '^stage route [1-9]' '$LAB_TMP/rampartd.out' &&
		 grep -q '^replies [3-9]' '$LAB_TMP/rampartd.out'"

lab_rampartd_stop

# Next hops the kernel has not resolved. rampartd starts again after the
# firewall's kernel forgot both hosts (the workers' tables only learn from
# it); the hosts stay silent, and the kernel resolves only addresses it
# sends to itself, so rampartd asks it to (RTM_NEWNEIGH with NTF_USE):
# the first packets to each host are dropped as no-neighbour, the ARP/ND
# answers reach the kernel (the XDP program passes them), and the rest
# goes through.
for fam in -4 -6; do
	lab_in fw ip "$fam" neigh flush dev "$FW_IF_C"
	lab_in fw ip "$fam" neigh flush dev "$FW_IF_S"
done
check_not "the firewall's kernel knows neither host" \
	bash -c "ip -n $(lab_nsname fw) neigh show | grep -E '10\.20\.[12]\.2 |fd00:20:[12]::2 ' | grep -q lladdr"
# This rampartd also gets the server port's MTU from --port-addr (1280,
# where the kernel says 1500): it must keep it over the kernel's, read
# every second.
srv_mac=$(lab_in fw cat "/sys/class/net/$FW_IF_S/address")
if lab_rampartd_run routing --policy "$LAB_TMP/router.rfw" --interface "$FW_IF_C" \
	--interface "$FW_IF_S" --mode router --foreground -v --control "$LAB_TMP/rampartd.sock" \
	--port-addr "$FW_IF_S=$srv_mac,10.20.2.1,fd00:20:2::1,mtu=1280"; then
	# the first echo request and its reply wait in rampart (held) while
	# the kernel resolves each host, and go on then: all answered
	out=$(lab_in cli ping -n -c 8 -i 0.5 -W 2 10.20.2.2 2>&1)
	got=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' <<<"$out")
	check "ping 10.20.2.2 with no next hop known: the first held, all answered (${got:-0} of 8)" \
		bash -c '[ "$1" -eq 8 ] && grep -q "icmp_seq=1 " <<<"$2"' _ "${got:-0}" "$out"
	out=$(lab_in cli ping -6 -n -c 8 -i 0.5 -W 2 fd00:20:2::2 2>&1)
	got=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' <<<"$out")
	check "ping fd00:20:2::2 with no next hop known: the first held, all answered (${got:-0} of 8)" \
		bash -c '[ "$1" -eq 8 ] && grep -q "icmp_seq=1 " <<<"$2"' _ "${got:-0}" "$out"
	# a host that is not there: held 3 s while the kernel tries, then the
	# sender hears host (address) unreachable from the firewall's port
	out=$(lab_in cli ping -n -c 1 -W 8 10.20.2.99 2>&1)
	check "ping 10.20.2.99 (no such host): host unreachable from 10.20.1.1" \
		bash -c 'grep -q "^From 10.20.1.1 icmp_seq=1 Destination Host Unreachable" <<<"$1"' _ "$out"
	out=$(lab_in cli ping -6 -n -c 1 -W 8 fd00:20:2::99 2>&1)
	check "ping fd00:20:2::99 (no such host): address unreachable from fd00:20:1::1" \
		bash -c 'grep -q "^From fd00:20:1::1 icmp_seq=1 Destination unreachable: Address unreachable" <<<"$1"' _ "$out"
	out=$(lab_in cli ping -n -c 2 -i 0.3 -W 1 -M do -s 1372 10.20.2.2 2>&1)
	check "--port-addr mtu=1280 (the kernel says 1500, seconds later): 'Frag needed' with mtu = 1280" \
		bash -c "grep -Eq 'From 10\.20\.1\.1 .*mtu ?= ?1280' <<<\"\$1\"" _ "$out"
	check "the firewall's kernel resolved both hosts, both families" \
		bash -c "[ \$(ip -n $(lab_nsname fw) neigh show | grep -E '^(10\.20\.[12]\.2|fd00:20:[12]::2) ' | grep -c lladdr) -eq 4 ]"
	check "SIGUSR1 prints counters" lab_counters "$ctr"
	lab_rampartd_stop
	n=$(awk '$1 == "drop" && $2 == "no-neighbour" { n = $3 } END { print n + 0 }' \
		"$LAB_TMP/rampartd.out")
	asked=$(sed -n 's/.*, \([0-9]*\) resolutions asked.*/\1/p' "$LAB_TMP/rampartd.err")
	held=$(awk '$1 == "held" { h = $2; s = $3 } END { print h + 0, s + 0 }' "$LAB_TMP/rampartd.out")
	check "rampartd asked the kernel to resolve them (${asked:-none} asked; held, sent: $held; $n no-neighbour drops: the absent hosts')" \
		bash -c '[ "$1" -ge 6 ] && [ "$2" -ge 6 ] && [ $(($2 - $3)) -eq 2 ] && [ "$4" -eq 2 ]' _ "${asked:-0}" $held "$n"
else
	not_ok "rampartd starts again in router mode"; cat "$LAB_TMP/rampartd.err" >&2
fi

if [ "$LAB_FAILED" -ne 0 ]; then
	echo "--- rampartd stderr ---" >&2; cat "$LAB_TMP/rampartd.err" >&2
	echo "--- rampartd stdout ---" >&2; cat "$LAB_TMP/rampartd.out" >&2
fi
lab_summary
