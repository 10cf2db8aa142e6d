#!/bin/bash
# Demo of rampart as a bump in the wire: builds a client / firewall /
# server lab in network namespaces, runs rampartd with demo.yaml, sends
# allowed and denied traffic, shows the counters, and cleans up.
# Build first, then: sudo RAMPART_BUILD_DIR=build scripts/demo.sh
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/tests/lab/lib.sh"

say() { printf '\n== %s\n' "$*"; }
# try WHAT CMD...: run CMD, say whether the traffic got through.
try() {
	local what=$1; shift
	printf '%-58s ' "$what"
	if "$@" >/dev/null 2>&1; then echo "got through"; else echo "blocked"; fi
}

lab_init rpd
lab_rampart_bins || exit 1
lab_write_udp_tool
say "compiling examples/policies/demo.yaml"
lab_compile "$SRC/examples/policies/demo.yaml" "$LAB_TMP/demo.rfw" || exit 1
say "building the lab: client 10.10.0.1 <-> [rampartd bridge] <-> server 10.10.0.2/.3"
lab_bridge_setup || exit 1
lab_start_servers || { echo "servers did not start" >&2; exit 1; }
echo "hello from the server" >"$LAB_TMP/index.txt"

say "starting rampartd between $FW_IF_C and $FW_IF_S"
lab_rampartd_start "$LAB_TMP/demo.rfw" -v || { cat "$LAB_TMP/rampartd.err"; exit 1; }
grep '^rampartd:' "$LAB_TMP/rampartd.err"

say "traffic (the policy expects the first of each pair to pass)"
try "ping 10.10.0.2 (rule ping-web-server)" \
	lab_in cli ping -c 3 -i 0.2 -W 2 10.10.0.2
try "ping 10.10.0.3 (no rule: default drop)" \
	lab_in cli ping -c 2 -i 0.2 -W 1 10.10.0.3
try "HTTP GET http://10.10.0.2:8080/ (rule web-in)" \
	lab_in cli curl -sf --max-time 5 http://10.10.0.2:8080/index.txt
try "HTTP GET http://[fd00:10::2]:8080/ (rule web-in, IPv6)" \
	lab_in cli curl -sf --max-time 5 "http://[fd00:10::2]:8080/index.txt"
try "HTTP GET http://10.10.0.2:9090/ (listening, not allowed)" \
	lab_in cli curl -sf --max-time 3 http://10.10.0.2:9090/
try "UDP echo to 10.10.0.2:7000 (rule echo-in)" \
	bash -c "[ \"\$(ip netns exec $(lab_nsname cli) $LAB_PY $LAB_TMP/udp.py send 10.10.0.2 7000 3 64)\" = 3 ]"
try "UDP to 10.10.0.2:9000 (rule no-udp-9000)" \
	bash -c "[ \"\$(ip netns exec $(lab_nsname cli) $LAB_PY $LAB_TMP/udp.py send 10.10.0.2 9000 3 64)\" = 3 ]"

say "counters (kill -USR1 rampartd)"
lab_counters "$LAB_TMP/counters.txt" && cat "$LAB_TMP/counters.txt"
say "where the cycles went (the runtime block printed after the counters)"
awk '/^rampart runtime$/ { buf = "" } { buf = buf $0 "\n" }
     /^end runtime$/ { last = buf } END { printf "%s", last }' "$LAB_TMP/rampartd.out" |
	grep -v ' 0$'

say "stopping rampartd (SIGTERM) and removing the lab"
kill -TERM "$RAMPARTD_PID"
lab_wait_gone "$RAMPARTD_PID" 10
wait "$RAMPARTD_PID"
echo "rampartd exited with status $?"
