#!/bin/bash
# Lab test of examples/web-frontend: the example's own set-up, policy and
# rampartd (sourced from its run.sh). HTTP to the VIP reaches the backend
# by DNAT; a client opening connections faster than its per-source limit
# is limited (LIMITED in `rampartctl stats --rules`, drop reason
# rate-limit) while the other client is not.
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_example_web_frontend.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../examples/web-frontend/run.sh"

# web_stage_drop REASON: packets dropped for REASON (rampartctl stats --stages).
web_stage_drop() {
	ex_ctl stats --stages | awk -v r="$1" '/^DROP REASON/ { on = 1; next } on && $1 == r { print $2; exit }'
}

ex_test_begin rxw web

check "HTTP to the VIP from $POLITE reaches the backend" web_get "$POLITE"
check_eq "nothing limited yet" "$(ex_rule_stat web limited)" 0
got=$(web_parallel "$GREEDY" "$WEB_BURST")
check "$GREEDY: $WEB_BURST connections at once, at most $((WEB_LIMIT_BURST + 1)) succeed (got $got)" \
	test "$got" -ge 1 -a "$got" -le $((WEB_LIMIT_BURST + 1))
n=$(ex_rule_stat web limited)
check "web: LIMITED counts the SYNs over the limit (${n:-none}, at least $((WEB_BURST - WEB_LIMIT_BURST - 1)))" \
	test "${n:-0}" -ge $((WEB_BURST - WEB_LIMIT_BURST - 1))
check_eq "drop reason rate-limit counts the same" "$(web_stage_drop rate-limit)" "$n"
check_eq "$POLITE is not limited: 3 of 3 connections after the burst" "$(web_serial "$POLITE" 3)" 3
check_eq "and the limited count did not grow" "$(ex_rule_stat web limited)" "$n"
check_not "the VIP's port 8080 is not translated: dropped" \
	lab_in cli curl -sf --max-time 2 -o /dev/null "http://$VIP:8080/index.txt"
check "the backend saw $GREEDY (DNAT keeps the client address)" ex_http_seen "$LAB_TMP/backend.log" "$GREEDY"
check "the backend saw $POLITE" ex_http_seen "$LAB_TMP/backend.log" "$POLITE"

ex_test_end
