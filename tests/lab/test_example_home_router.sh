#!/bin/bash
# Lab test of examples/home-router: the example's own set-up, policy and
# rampartd (sourced from its run.sh). The LAN reaches the "internet"
# through masquerade (the site sees the uplink address), the port forward
# reaches the nas (which sees the real client), unsolicited inbound is
# dropped, and flows and counters say so.
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

ex_test_end
