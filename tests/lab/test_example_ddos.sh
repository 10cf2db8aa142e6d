#!/bin/bash
# Lab test of examples/ddos-blocklist: the example's own set-up, generated
# list of 1,000,000 prefixes, policy and rampartd (sourced from its
# run.sh). The listed attacker's packets are dropped (IPv4 and IPv6), the
# client's pass, counters and rulec query agree. Prints the compile time
# and the artifact's size (not checked: they depend on the machine).
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_example_ddos.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../examples/ddos-blocklist/run.sh"

ex_test_begin rxd ddos
echo "# rulec compile --strict of 1,000,000 prefixes: $EX_COMPILE_SECONDS s, artifact $EX_RFW_BYTES bytes"

check_eq "the generated list holds 1000000 prefixes" "$(grep -vc '^#' "$LAB_TMP/blocklist.txt")" 1000000
check "rulec dump: one set of 1000000 prefixes" \
	bash -c "'$RULEC' dump '$LAB_TMP/policy.rfw' | grep -Eq '^ +0 blocked +1000000 prefixes'"
check_eq "rulec query: attacker, client, a listed /32, a listed /64" \
	"$("$RULEC" query "$LAB_TMP/policy.rfw" --batch <(printf '%s\n' "tcp $ATTACKER:1 10.10.0.2:8080" \
		"tcp $CLIENT:1 10.10.0.2:8080" "udp 10.137.1.1:53 10.10.0.2:53" "udp [fd00:dead:3:7::1]:1 [fd00:10::2]:1") |
		tr '\n' ',')" "1 drop-blocked drop,0 default accept,1 drop-blocked drop,1 drop-blocked drop,"

check "client $CLIENT: HTTP to 10.10.0.2:8080" ddos_http "$CLIENT" http://10.10.0.2:8080/index.txt
check "client $CLIENT: ping 10.10.0.2" ddos_ping "$CLIENT" 10.10.0.2
check "client fd00:10::1: HTTP to [fd00:10::2]:8080" ddos_http fd00:10::1 "http://[fd00:10::2]:8080/index.txt"
check_not "attacker $ATTACKER: HTTP fails" ddos_http "$ATTACKER" http://10.10.0.2:8080/index.txt
check_not "attacker $ATTACKER6: HTTP fails" ddos_http "$ATTACKER6" "http://[fd00:10::2]:8080/index.txt"
before=$(ex_rule_stat drop-blocked packets)
check_not "attacker $ATTACKER: ping fails" ddos_ping "$ATTACKER" 10.10.0.2
check_eq "drop-blocked counted exactly the attacker's 2 echo requests" \
	"$(ex_rule_stat drop-blocked packets)" $((before + 2))
check "drop-blocked counted the attacker's SYNs before that (${before:-none})" test "${before:-0}" -ge 2
n=$(ex_rule_stat default packets)
check "default (accept) counted the client's packets (${n:-none})" test "${n:-0}" -gt 0

ex_test_end
