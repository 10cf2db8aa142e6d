#!/bin/bash
# Lab test of examples/bump-in-the-wire: the example's own set-up, policy
# and rampartd (sourced from its run.sh); allowed services pass, the admin
# port is refused with a RST, the rest is dropped, and the rule counters
# of `rampartctl stats --rules` say so.
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_example_bump.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../examples/bump-in-the-wire/run.sh"

UDP=5
PINGS=3
ex_test_begin rxb bump

check "HTTP over IPv4 to 10.10.0.2:8080 (web)" ex_http cli http://10.10.0.2:8080/index.txt
check "HTTP over IPv6 to [fd00:10::2]:8080 (web)" ex_http cli "http://[fd00:10::2]:8080/index.txt"
check_eq "UDP echo on 7000: $UDP of $UDP answered (echo)" "$(bump_udp 7000 $UDP)" "$UDP"
check "ping 10.10.0.2: $PINGS of $PINGS answered (ping)" bump_ping cli 10.10.0.2 $PINGS
check "TCP to 9090 is refused by the firewall's RST (curl exit 7)" bump_refused http://10.10.0.2:9090/
check_eq "UDP to 9000: 0 of $UDP answered (default drop)" "$(bump_udp 9000 $UDP)" 0
check_not "ping 10.10.0.3 (not a listed server) fails" bump_ping cli 10.10.0.3 2
check_not "the server cannot ping the client (inside zone)" bump_ping srv 10.10.0.1 2

# stateful: a flow's packets, both ways, count under the rule that accepted it
check_eq "echo counts $((2 * UDP)) packets" "$(ex_rule_stat echo packets)" $((2 * UDP))
check_eq "ping counts $((2 * PINGS)) packets" "$(ex_rule_stat ping packets)" $((2 * PINGS))
n=$(ex_rule_stat web packets)
check "web counted packets (${n:-none})" test "${n:-0}" -gt 0
check_eq "admin-refused counts 1 packet (the SYN it answered)" "$(ex_rule_stat admin-refused packets)" 1
n=$(ex_rule_stat default packets)
check "default counts at least $((UDP + 4)) drops (${n:-none})" test "${n:-0}" -ge $((UDP + 4))

ex_test_end
