#!/bin/bash
# Lab test of examples/home-router: the example's own set-up, policy and
# rampartd (sourced from its run.sh). The LAN reaches the "internet"
# through masquerade (the site sees the uplink address), the port forward
# reaches the nas (which sees the real client), unsolicited inbound is
# dropped, and flows and counters say so; then the uplink gets another
# address and masquerade follows it.
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_example_home_router.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../examples/home-router/run.sh"

ex_test_begin rxh home

check "LAN -> internet: HTTP to $SITE" ex_http cli "http://$SITE/site.txt"
check "the site saw the uplink address $PUBLIC (masquerade)" ex_http_seen "$LAB_TMP/site.log" "$PUBLIC"
check_not "the site never saw the LAN address 10.61.1.2" ex_http_seen "$LAB_TMP/site.log" 10.61.1.2
check "LAN -> internet: ping $SITE" quiet lab_in cli ping -q -c 3 -i 0.2 -W 1 "$SITE"
check "port forward: HTTP to $PUBLIC:8080 reaches the nas" ex_http srv "http://$PUBLIC:8080/nas.txt"
check "the nas saw the real client 10.61.2.2 (DNAT only)" ex_http_seen "$LAB_TMP/nas.log" 10.61.2.2
check_not "unsolicited: HTTP to the laptop 10.61.1.2:8000 fails" ex_http srv http://10.61.1.2:8000/nas.txt
check_not "unsolicited: ping 10.61.1.2 fails" quiet lab_in srv ping -q -c 2 -i 0.2 -W 1 10.61.1.2
check_not "unsolicited: HTTP to $PUBLIC:80 (no forward) fails" ex_http srv "http://$PUBLIC/nas.txt"

flows=$(ex_ctl flows)
check "flows: the LAN's TCP flow is masqueraded (reply to $PUBLIC)" \
	grep -Eq "^tcp +10\.61\.1\.2:[0-9]+ -> $SITE:80 +$SITE:80 -> $PUBLIC:[0-9]+ .* lan-out " <<<"$flows"
check "flows: the forwarded flow is translated to the nas (reply from 10.61.1.10:80)" \
	grep -Eq "^tcp +10\.61\.2\.2:[0-9]+ -> $PUBLIC:8080 +10\.61\.1\.10:80 -> 10\.61\.2\.2:[0-9]+ .* nas-web " <<<"$flows"
check_eq "flows: the pings are one ICMP flow under lan-out" \
	"$(ex_ctl flows --filter 'proto=icmp rule=lan-out' | grep -c '^icmp ')" 1
for r in lan-out nas-web; do
	n=$(ex_rule_stat $r packets)
	check "$r counted packets (${n:-none})" test "${n:-0}" -gt 0
done
n=$(ex_rule_stat default packets)
check "default counts the unsolicited packets (${n:-none}, at least 4)" test "${n:-0}" -ge 4

# defaults.rpf: strict. A SYN from the uplink with a LAN source (spoofed)
# to the nas's web port, which nas-web would accept from the uplink, is
# dropped before the rules; the traffic above passed with it on.
rpf_drops() {
	ex_ctl --json stats | "$LAB_PY" -c 'import json,sys; print(json.load(sys.stdin)["drops"]["rpf"])'
}
r0=$(rpf_drops)
lab_in srv /usr/bin/python3 - "$SRV_IF" "$(lab_in fw cat "/sys/class/net/$FW_IF_S/address")" <<'PY'
import sys
from scapy.all import Ether, IP, TCP, sendp
sendp([Ether(dst=sys.argv[2]) / IP(src="10.61.1.2", dst="10.61.1.10", ttl=64) /
       TCP(sport=40000 + k, dport=80, flags="S") for k in range(3)], iface=sys.argv[1], verbose=False)
PY
sleep 0.5
check "rpf strict: 3 SYNs from the uplink with a LAN source dropped ($(( $(rpf_drops) - r0 )))" \
	test "$(( $(rpf_drops) - r0 ))" -eq 3

# The ISP hands the uplink another address (a DHCP lease renewed): rampartd
# sees it within a second and builds the policy again, so new connections
# leave from the new address; a reload of a file that is no longer the one
# in force would not happen behind the operator's back.
# The lease lost first (rampartd builds the policy without the address),
# then the new one: two builds in a row, each following the kernel (the
# second was once refused as "not the policy in force": the first build
# had lost the policy file's name).
NEWPUB=10.61.2.9
lab_in fw ip addr del "$PUBLIC/24" dev "$FW_IF_S"
check "rampartd follows the uplink's lost address (policy built again)" \
	lab_wait_for 5 grep -q "addresses $PUBLIC .* -> fd00:61:2::1: " "$LAB_TMP/rampartd.err"
lab_wait_for 5 grep -q "policy built again for the ports' addresses" "$LAB_TMP/rampartd.err"
lab_in fw ip addr add "$NEWPUB/24" dev "$FW_IF_S"
check "rampartd follows the uplink's new address $NEWPUB (policy built again)" \
	lab_wait_for 5 grep -q "addresses .* -> $NEWPUB " "$LAB_TMP/rampartd.err"
two_builds() { [ "$(grep -c "policy built again for the ports' addresses" "$LAB_TMP/rampartd.err")" -ge 2 ]; }
check "  ... the second build done too" lab_wait_for 5 two_builds
check "LAN -> internet after the change: HTTP to $SITE" ex_http cli "http://$SITE/site.txt"
check "the site saw the new uplink address $NEWPUB (masquerade follows)" \
	ex_http_seen "$LAB_TMP/site.log" "$NEWPUB"
status_shows() {	# IF ADDR: rampartctl status (text and JSON) lists ADDR for IF
	ex_ctl status | grep -Eq "^addresses:.* $1 $2( |;|\$)" &&
		ex_ctl --json status | "$LAB_PY" -c 'import json, sys
d = json.load(sys.stdin)
sys.exit(sys.argv[2] not in [a for f in d["interfaces"] if f["name"] == sys.argv[1]
                             for a in f["addresses"]])' "$1" "$2"
}
check "rampartctl status (text, JSON): the uplink's address is now $NEWPUB" \
	status_shows "$FW_IF_S" "$NEWPUB"
# The policy file replaced on disk, not yet reloaded, then another
# address: rampartd does not load the new file by itself (it says so);
# the operator's reload applies both.
sed 's/^rules:$/rules:\n  - {name: no-telnet, proto: tcp, to: {port: 23}, action: drop}/' \
	"$LAB_TMP/policy.yaml" >"$LAB_TMP/policy2.yaml"
ex_compile "$LAB_TMP/policy2.yaml" "$LAB_TMP/policy.rfw"
lab_in fw ip addr del "$NEWPUB/24" dev "$FW_IF_S"
lab_in fw ip addr add 10.61.2.10/24 dev "$FW_IF_S"
check "a new address while the file on disk is another policy: said, not loaded" \
	lab_wait_for 5 grep -q "is not the policy in force any more" "$LAB_TMP/rampartd.err"
check_eq "  ...and the policy was not built again by itself (the two builds above only)" \
	"$(grep -c "policy built again for the ports' addresses" "$LAB_TMP/rampartd.err")" 2
check "rampartctl reload: the new file and the new address" quiet ex_ctl reload
check "  ...the reload took the address 10.61.2.10" \
	grep -q "addresses .* -> 10.61.2.10 " "$LAB_TMP/rampartd.err"
quiet ex_http cli "http://$SITE/site.txt"
check "  ...and the site sees 10.61.2.10" ex_http_seen "$LAB_TMP/site.log" 10.61.2.10

ex_test_end
