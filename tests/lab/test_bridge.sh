#!/bin/bash
# Lab test of rampartd in bridge mode: client and server namespaces joined
# through a firewall namespace where rampartd bridges two veths with
# examples/policies/demo.yaml. Checks verdicts and exact rule counters,
# the neighbour discovery warning and an MSS ceiling.
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_bridge.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"

UDP_SIZE=100		# payload bytes; frame = 14 + 20 + 8 + payload
UDP_COUNT=10
PINGS=5
PING_FRAME=98		# 14 + 20 + 8 + 56 (ping's default payload)

lab_init rpb
lab_rampart_bins || { not_ok "rampartd built"; lab_summary; exit 1; }
lab_write_udp_tool
if ! lab_compile "$SRC/examples/policies/demo.yaml" "$LAB_TMP/demo.rfw"; then
	not_ok "demo.yaml compiles"; lab_summary; exit 1
fi
lab_bridge_setup || { not_ok "lab set up"; lab_summary; exit 1; }
lab_start_servers || { not_ok "servers listen"; lab_summary; exit 1; }

# --- command line and set-up errors (CLI.md exit codes) ---
# exit_code WANT CMD...: CMD exits with status WANT.
exit_code() { local want=$1; shift; quiet "$@"; [ $? -eq "$want" ]; }
fw_rampartd() { lab_in fw "$RAMPARTD" "$@"; }
check "interface that does not exist: exit 2" exit_code 2 \
	fw_rampartd --policy "$LAB_TMP/demo.rfw" --interface "$FW_IF_C" --interface nosuch0
check "--mode router refused: exit 1" exit_code 1 \
	fw_rampartd --policy "$LAB_TMP/demo.rfw" --interface "$FW_IF_C" --interface "$FW_IF_S" --mode router
check "policy that is not an artifact: exit 1" exit_code 1 \
	fw_rampartd --policy "$SRC/examples/policies/demo.yaml" --interface "$FW_IF_C" --interface "$FW_IF_S"
check "unknown option: exit 1" exit_code 1 \
	fw_rampartd --policy "$LAB_TMP/demo.rfw" --interface "$FW_IF_C" --interface "$FW_IF_S" --bogus
check_not "failed starts leave no XDP program behind" \
	bash -c "ip -n $(lab_nsname fw) link show | grep -q xdp"

if ! lab_rampartd_start "$LAB_TMP/demo.rfw" -v; then
	not_ok "rampartd starts"; cat "$LAB_TMP/rampartd.err" >&2
	lab_summary; exit 1
fi
ok "rampartd starts ($(grep -m1 '^rampartd: .*XDP' "$LAB_TMP/rampartd.err" | sed 's/^rampartd: //'))"
check "XDP program attached to both ports" \
	bash -c "ip -n $(lab_nsname fw) link show $FW_IF_C | grep -q xdp &&
		 ip -n $(lab_nsname fw) link show $FW_IF_S | grep -q xdp"

# --- allowed and denied traffic ---
check "ping 10.10.0.2 ($PINGS) succeeds" \
	quiet lab_in cli ping -q -n -c "$PINGS" -i 0.2 -W 2 10.10.0.2
check_not "ping 10.10.0.3 fails (default drop)" \
	quiet lab_in cli ping -q -n -c 2 -i 0.2 -W 1 10.10.0.3

echo hello >"$LAB_TMP/index.txt"
check "HTTP over IPv4 to 10.10.0.2:8080 completes" \
	bash -c "ip netns exec $(lab_nsname cli) curl -s --max-time 5 http://10.10.0.2:8080/index.txt | grep -q hello"
check "HTTP over IPv6 to [fd00:10::2]:8080 completes" \
	bash -c "ip netns exec $(lab_nsname cli) curl -s --max-time 5 'http://[fd00:10::2]:8080/index.txt' | grep -q hello"
check_not "TCP to 10.10.0.2:9090 (listening, not allowed) gets no connection" \
	lab_in cli curl -s --max-time 3 -o /dev/null http://10.10.0.2:9090/

got=$(lab_in cli "$LAB_PY" "$LAB_TMP/udp.py" send 10.10.0.2 7000 "$UDP_COUNT" "$UDP_SIZE")
check_eq "UDP echo on 7000: $UDP_COUNT of $UDP_COUNT answered" "$got" "$UDP_COUNT"
got=$(lab_in cli "$LAB_PY" "$LAB_TMP/udp.py" send 10.10.0.2 9000 "$UDP_COUNT" "$UDP_SIZE")
check_eq "UDP to 9000 dropped: 0 of $UDP_COUNT answered" "$got" 0

# --- counters (SIGUSR1) ---
ctr=$LAB_TMP/counters.txt
if lab_counters "$ctr"; then
	ok "SIGUSR1 prints counters"
else
	not_ok "SIGUSR1 prints counters"
fi
udp_bytes=$((UDP_COUNT * (14 + 20 + 8 + UDP_SIZE)))
for r in no-udp-9000 echo-in echo-replies; do
	check_eq "$r counts $UDP_COUNT packets" "$(lab_rule_counter "$ctr" $r packets)" "$UDP_COUNT"
	check_eq "$r counts $udp_bytes bytes" "$(lab_rule_counter "$ctr" $r bytes)" "$udp_bytes"
done
for r in ping-web-server ping-replies; do
	check_eq "$r counts $PINGS packets" "$(lab_rule_counter "$ctr" $r packets)" "$PINGS"
	check_eq "$r counts $((PINGS * PING_FRAME)) bytes" \
		"$(lab_rule_counter "$ctr" $r bytes)" "$((PINGS * PING_FRAME))"
done
for r in web-in web-replies default; do
	n=$(lab_rule_counter "$ctr" $r packets)
	check "$r counted packets (${n:-none})" test "${n:-0}" -gt 0
done

# --- clean stop ---
lab_rampartd_stop

# --- a policy that carries IPv6 but drops neighbour discovery ---
# demo.yaml without its ICMPv6 rule: rampartd says so at start, and it is
# right: once the hosts forget each other, IPv6 across the bridge fails.
"$LAB_PY" - "$SRC/examples/policies/demo.yaml" "$LAB_TMP/no-nd.yaml" <<'PY'
import sys
text = open(sys.argv[1]).read()
cut = text.index("  - name: ipv6-control")
rest = text[cut:].split("\n\n", 1)[1]
open(sys.argv[2], "w").write(text[:cut] + rest)
PY
if lab_compile "$LAB_TMP/no-nd.yaml" "$LAB_TMP/no-nd.rfw" && lab_rampartd_start "$LAB_TMP/no-nd.rfw"; then
	check "no neighbour discovery, IPv6 accepted: rampartd warns at start" \
		grep -q "rampartd: warning: the default action drops IPv6 neighbour solicitations" \
		"$LAB_TMP/rampartd.err"
	lab_in cli ip -6 neigh flush dev "$CLI_IF"
	lab_in srv ip -6 neigh flush dev "$SRV_IF"
	check_not "... and HTTP over IPv6 fails (the hosts cannot find each other)" \
		bash -c "ip netns exec $(lab_nsname cli) curl -s --max-time 3 'http://[fd00:10::2]:8080/index.txt' | grep -q hello"
	kill -TERM "$RAMPARTD_PID"
	check "rampartd stops" lab_wait_gone "$RAMPARTD_PID" 10
else
	not_ok "rampartd starts with demo.yaml less its ICMPv6 rule"
fi

# --- defaults.tcp_mss in a bridge: a ceiling, whatever the MTUs ---
# demo.yaml with tcp_mss: 1000; the client's connected socket says the MSS
# it sends with (the server's SYN-ACK option, 1460 as the server wrote it,
# less the timestamp option's 12 bytes: 1448 without the ceiling).
sed 's/^  action: drop$/  action: drop\n  tcp_mss: 1000/' "$SRC/examples/policies/demo.yaml" \
	>"$LAB_TMP/mss.yaml"
cat >"$LAB_TMP/mss.py" <<'PY'
import socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)
print(c.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG))
PY
if lab_compile "$LAB_TMP/mss.yaml" "$LAB_TMP/mss.rfw" && lab_rampartd_start "$LAB_TMP/mss.rfw"; then
	mss=$(lab_in cli "$LAB_PY" "$LAB_TMP/mss.py" 10.10.0.2 8080 2>&1)
	check "tcp_mss: 1000 in a bridge: the client sends at most 1000 bytes a segment (${mss:-none})" \
		bash -c '[ "$1" -le 1000 ] && [ "$1" -ge 900 ]' _ "${mss:-0}"
	kill -TERM "$RAMPARTD_PID"
	check "rampartd stops" lab_wait_gone "$RAMPARTD_PID" 10
else
	not_ok "rampartd starts with demo.yaml and tcp_mss: 1000"
fi

if [ "$LAB_FAILED" -ne 0 ]; then
	echo "--- rampartd stderr ---" >&2; cat "$LAB_TMP/rampartd.err" >&2
	echo "--- last counters ---" >&2; cat "$ctr" >&2
fi
lab_summary
