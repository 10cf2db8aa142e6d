#!/bin/bash
# Example: rampart as a bump-in-the-wire filter (bridge mode). Builds
#   cli (10.10.0.1, fd00:10::1) -- [fw: rampartd bridges <p>fc <-> <p>fs] -- srv (10.10.0.2, .3, fd00:10::2)
# runs rampartd with policy.yaml, sends allowed and refused traffic, shows
# the counters, stops and cleans up. README.md says what to look at.
#   sudo examples/bump-in-the-wire/run.sh [--keep]
# tests/lab/test_example_bump.sh sources this file and checks the same.
BUMP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$BUMP_DIR/../lib.sh"

# The topology is the project's bridge lab (tests/lab/lib.sh): the servers
# listen on HTTP 8080 (v4 and v6) and 9090, UDP echo 7000 and 9000.
bump_setup() {
	lab_bridge_setup && lab_write_udp_tool && lab_start_servers || return 1
	echo "hello from the server" >"$LAB_TMP/index.txt"
}

bump_start() {
	ex_policy "$BUMP_DIR/policy.yaml" "$LAB_TMP/policy.yaml" eth0="$FW_IF_C" eth1="$FW_IF_S" &&
		ex_compile "$LAB_TMP/policy.yaml" "$LAB_TMP/policy.rfw" &&
		ex_rampartd bridge "$LAB_TMP/policy.rfw"
}

# bump_udp PORT COUNT: how many of COUNT datagrams to 10.10.0.2:PORT are echoed.
bump_udp() { lab_in cli "$LAB_PY" "$LAB_TMP/udp.py" send 10.10.0.2 "$1" "$2" 64; }
bump_udp_all() { [ "$(bump_udp "$1" "$2")" = "$2" ]; }
# bump_ping NS ADDR COUNT: every echo request from NS to ADDR answered.
bump_ping() { lab_in "$1" ping -q -n -c "$3" -i 0.2 -W 1 "$2" >/dev/null 2>&1; }
# bump_refused URL: curl gets "connection refused" (exit 7): the firewall's RST.
bump_refused() { lab_in cli curl -s --max-time 3 -o /dev/null "$1"; [ $? -eq 7 ]; }

bump_show() {
	ex_say "traffic from the client (the first four are allowed)"
	ex_try "HTTP http://10.10.0.2:8080/ (rule web)" ex_http cli http://10.10.0.2:8080/index.txt
	ex_try "HTTP http://[fd00:10::2]:8080/ (rule web, IPv6)" ex_http cli "http://[fd00:10::2]:8080/index.txt"
	ex_try "UDP echo 10.10.0.2:7000, 3 datagrams (rule echo)" bump_udp_all 7000 3
	ex_try "ping 10.10.0.2 (rule ping)" bump_ping cli 10.10.0.2 2
	ex_try "HTTP http://10.10.0.2:9090/ (admin-refused: a RST)" ex_http cli http://10.10.0.2:9090/
	ex_try "UDP 10.10.0.2:9000 (no rule: default drop)" bump_udp_all 9000 3
	ex_try "ping 10.10.0.3 (not a listed server: default drop)" bump_ping cli 10.10.0.3 2
	ex_try "the server pings the client (inside: default drop)" bump_ping srv 10.10.0.1 2
}

[ "${BASH_SOURCE[0]}" = "$0" ] && ex_main rxb bump "$@"
