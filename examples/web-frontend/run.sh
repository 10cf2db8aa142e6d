#!/bin/bash
# Example: a web front end (router mode) with DNAT to a backend and
# per-source connection rate limits. Builds
#   cli (clients 10.62.1.2 and .3) -- [fw: <p>fc 10.62.1.1 | <p>fs 10.62.2.1] -- srv (backend 10.62.2.2:8080)
# with the VIP 10.62.9.80 routed to the firewall, runs rampartd with
# policy.yaml, lets one client open connections faster than its limit and
# the other slowly, shows the counters, stops and cleans up. README.md
# says what to look at.
#   sudo examples/web-frontend/run.sh [--keep]
# tests/lab/test_example_web_frontend.sh sources this file and checks the same.
WEB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$WEB_DIR/../lib.sh"

VIP=10.62.9.80
GREEDY=10.62.1.2	# opens WEB_BURST connections at once
POLITE=10.62.1.3	# opens a few, one after another
WEB_BURST=12
WEB_LIMIT_BURST=5	# the policy's limit: burst 5, then 6/m

# The routed lab of tests/lab/lib.sh on 10.62.x, plus the second client
# address and the clients' route to the VIP's subnet.
web_setup() {
	lab_router_setup 62 || return 1
	lab_in cli ip addr add "$POLITE/24" dev "$CLI_IF" &&
		lab_in cli ip route add 10.62.9.0/24 via 10.62.1.1 || return 1
	# rampartd does not resolve next hops: the firewall's kernel meets
	# both clients first (docs/operations.md, router mode)
	lab_router_neighbours 62 >/dev/null && lab_in fw ping -q -c 1 -W 2 "$POLITE" >/dev/null || return 1
	echo "hello from the backend" >"$LAB_TMP/index.txt"
	lab_bg srv "$LAB_TMP/backend.log" "$LAB_PY" -m http.server 8080 --bind 10.62.2.2 --directory "$LAB_TMP"
	lab_wait_for 10 lab_port_listening srv tcp 8080
}

web_start() {
	ex_policy "$WEB_DIR/policy.yaml" "$LAB_TMP/policy.yaml" eth0="$FW_IF_C" eth1="$FW_IF_S" &&
		ex_compile "$LAB_TMP/policy.yaml" "$LAB_TMP/policy.rfw" &&
		ex_rampartd router "$LAB_TMP/policy.rfw"
}

# web_get SRC: one HTTP GET of the VIP from client address SRC (2 s at most).
web_get() {
	lab_in cli curl -sf --max-time 2 --interface "$1" -o /dev/null "http://$VIP/index.txt"
}

# web_parallel SRC N: N GETs from SRC at once; prints how many succeeded.
web_parallel() {
	local i n=0 pids=()
	for i in $(seq "$2"); do
		web_get "$1" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" && n=$((n + 1))
	done
	echo "$n"
}

# web_serial SRC N: N GETs from SRC one after another; prints how many succeeded.
web_serial() {
	local i n=0
	for i in $(seq "$2"); do
		web_get "$1" && n=$((n + 1))
	done
	echo "$n"
}

web_show() {
	ex_say "HTTP to the VIP http://$VIP/ (DNAT to 10.62.2.2:8080)"
	echo "  $GREEDY opens $WEB_BURST connections at once: $(web_parallel "$GREEDY" "$WEB_BURST") succeeded" \
		"(its limit: $WEB_LIMIT_BURST at once, then one per 10 s)"
	echo "  $POLITE opens 3, one after another:       $(web_serial "$POLITE" 3) succeeded"
	ex_say "what the backend saw (real client addresses: DNAT, no SNAT)"
	awk '/"GET / { print "  " $1 }' "$LAB_TMP/backend.log" | sort | uniq -c
	ex_say "drops by reason (rampartctl stats --stages)"
	ex_ctl stats --stages | sed -n '/^DROP REASON/,/^$/p' | awk 'NR == 1 || $2 + 0 != 0'
}

[ "${BASH_SOURCE[0]}" = "$0" ] && ex_main rxw web "$@"
