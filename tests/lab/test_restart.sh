#!/bin/bash
# Lab test of --state-file: TCP connections through masquerade (router
# mode, --fail closed, two workers handing frames to their flow's) carry
# on across a restart of rampartd: stopped with SIGUSR2 it writes the
# flows and leaves the XDP programs attached (transit dropped, TCP
# retransmits), and the next rampartd reads them back into the same
# workers under the same handoff key, with the same public ports. With a
# damaged file (refused with a message, rampartd starts anyway) the same
# restart ends them; a file of two workers comes back into one; SIGTERM
# writes the file too but detaches the programs (CLI.md). With
# --state-interval the flows also outlive a SIGKILL: the last checkpoint
# brings them back, and again after a second crash before the next one.
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_restart.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

N=41
write_policy() {
	cat >"$1" <<YAML
version: 1
zones:
  inside: [$FW_IF_C]
  outside: [$FW_IF_S]
rules:
  - {name: session-out, proto: tcp, from: {zone: inside}, to: {zone: outside, port: 7000}, action: accept}
  - {name: bulk-out, proto: tcp, from: {zone: inside}, to: {zone: outside, port: 5201}, action: accept}
defaults: {action: drop, stateful: true}
nat:
  - name: masq
    match: {from: {network: 10.$N.1.0/24}, to: {zone: outside}}
    snat: {to: masquerade}
routes:
  - {prefix: 10.$N.1.0/24, interface: $FW_IF_C}
  - {prefix: 10.$N.2.0/24, interface: $FW_IF_S}
YAML
}

# The programs stay attached after a clean stop with --state-file: never
# leave them behind.
restart_cleanup() {
	lab_xdp_off
	lab_cleanup
}

# the session's line must come back within 15 s: TCP's retransmissions
# span a restart
# (the clients wait 30 s for an answer: a restart's gap plus TCP's
# backoff over it can pass 15 s in an ASan build under CI's load)
start_session() { lab_session_start cli "10.$N.2.2" 7000 30; }
# peers the server saw: one public address and port for the session
peers() { sort -u "$LAB_TMP/peers.log" 2>/dev/null | wc -l; }
start_rampartd() {	# [QUEUES [MORE ARGUMENTS]]
	echo "# ${SECONDS} s: rampartd --queues ${1:-2} ${*:2}"
	lab_rampartd_run routing --policy "$LAB_TMP/fw.rfw" --interface "$FW_IF_C" \
		--interface "$FW_IF_S" --mode router --fail closed --queues "${1:-2}" --cores 0,1 \
		--state-file "$LAB_TMP/flows.state" --foreground -v --control "$LAB_TMP/rampartd.sock" \
		"${@:2}"
}
# Three more sessions beside lab_session_start's: their flows spread over
# the two workers (each is a worker's with a chance of one half).
EXTRA=3
start_extra() {
	local i
	for i in $(seq 1 $EXTRA); do
		rm -f "$LAB_TMP/extra$i.count"
		lab_bg cli "$LAB_TMP/extra$i.log" "$LAB_PY" "$LAB_TMP/session.py" client "10.$N.2.2" \
			7000 "$LAB_TMP/extra$i.count" 30
		EXTRA_PID[i]=$LAB_LAST_PID
	done
}
extra_count() { cat "$LAB_TMP/extra$1.count" 2>/dev/null || echo 0; }
extra_grew() { [ "$(extra_count "$1")" -gt "$2" ]; }
# (a session that fails says which and how: a line for the log)
session_failed() {	# NAME PID COUNT LOG WAIT
	if kill -0 "$2" 2>/dev/null; then
		echo "# $1: its count stayed at $3 for $5 s"
	else
		echo "# $1: its client ended at count $3: $(tail -1 "$4" 2>/dev/null)"
	fi
	return 1
}
all_alive() {	# WAIT: every session's count grows within WAIT s
	local i before
	before=$(lab_session_count)
	lab_session_alive "$1" ||
		session_failed session "$SESSION_PID" "$before" "$LAB_TMP/session.log" "$1" || return 1
	for i in $(seq 1 $EXTRA); do
		before=$(extra_count "$i")
		kill -0 "${EXTRA_PID[i]}" 2>/dev/null && lab_wait_for "$1" extra_grew "$i" "$before" ||
			session_failed "extra session $i" "${EXTRA_PID[i]}" "$before" \
				"$LAB_TMP/extra$i.log" "$1" || return 1
	done
}
stop_rampartd() {	# [SIGNAL]: USR2, a stop for a restart, by default
	echo "# ${SECONDS} s: SIG${1:-USR2}"
	kill -"${1:-USR2}" "$RAMPARTD_PID"
	lab_wait_gone "$RAMPARTD_PID" 10
}
ctl() { ip netns exec "$(lab_nsname fw)" "$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" "$@"; }
status_checkpoints() {
	ctl status | grep -Eq \
		'^checkpoints: [1-9][0-9]* written, 0 failed, 0 voided by a reload; last [0-9]+ s ago, 4 flows'
}
status_checkpoints_json() {
	ctl --json status | "$LAB_PY" -c 'import json, sys
s = json.load(sys.stdin)["state_file"]
c = s["checkpoints"]
sys.exit(not (s["interval_s"] == 1 and c["written"] >= 1 and c["failed"] == 0 and
              c["last_flows"] == 4 and c["last_unix"] > 0))'
}
flow_listed() { ctl flows | grep -q ':7000'; }

lab_init rrs
trap restart_cleanup EXIT
lab_rampart_bins || { not_ok "rampartd built"; lab_summary; exit 1; }
export LAB_VETH_QUEUES=2	# two queues each way: two workers
lab_router_setup $N || { not_ok "lab set up"; lab_summary; exit 1; }
lab_router_neighbours $N >/dev/null
write_policy "$LAB_TMP/fw.yaml"
lab_compile "$LAB_TMP/fw.yaml" "$LAB_TMP/fw.rfw" || { not_ok "policy compiles"; lab_summary; exit 1; }
lab_session_tool
lab_bg srv "$LAB_TMP/serve.log" "$LAB_PY" "$LAB_TMP/session.py" serve "10.$N.2.2" 7000 \
	"$LAB_TMP/peers.log"
lab_wait_for 10 lab_port_listening srv tcp 7000 || not_ok "server listens"

if ! start_rampartd; then
	not_ok "rampartd starts"; cat "$LAB_TMP/rampartd.err" >&2; lab_summary; exit 1
fi
ok "rampartd --state-file starts"
check "with no state file yet it says so" grep -q 'no state file' "$LAB_TMP/rampartd.err"
start_session
start_extra
check "4 sessions through masquerade run" all_alive 3
check "the server sees the firewall's address" grep -q "^10.$N.2.1:" "$LAB_TMP/peers.log"
check "rampartctl flows lists it" flow_listed

# ---- clean restart with the state file ----
stopped_at=$SECONDS
check "SIGUSR2: rampartd stops" stop_rampartd
wait "$RAMPARTD_PID"
check_eq "with exit status 3 (a stop for a restart)" "$?" 3
check "it wrote 4 flows" grep -q 'state file .*: 4 flows written' "$LAB_TMP/rampartd.err"
check "the state file is there" test -s "$LAB_TMP/flows.state"
check "the XDP programs stay attached meanwhile" lab_xdp_attached
check "it says so" grep -q 'SIGUSR2: XDP programs left attached' "$LAB_TMP/rampartd.err"
before=$(lab_session_count)
sleep 1
check_eq "nothing gets through while it is down (--fail closed)" "$(lab_session_count)" "$before"
if ! start_rampartd; then
	not_ok "rampartd starts again"; cat "$LAB_TMP/rampartd.err" >&2; lab_summary; exit 1
fi
check "it restored the flows" grep -q 'state file .*: 4 of 4 flows restored' "$LAB_TMP/rampartd.err"
check "and removed the file" test ! -e "$LAB_TMP/flows.state"
# TCP backs off over the gap (RTO doubling from 0.2 s), so a session may
# wait about as long again as the gap was before its next retransmission
# passes: the bound is the clients' own (a line unanswered for 30 s ends
# a session), and the gap is printed for when it is hit.
back_at=$SECONDS
check "the sessions carry on after the restart" all_alive 30
echo "# restart gap $((back_at - stopped_at)) s; sessions back $((SECONDS - back_at)) s after"
check "... and keep going" all_alive 3
check_eq "the server saw one public address and port per session all along" "$(peers)" 4

# ---- a crash: the last checkpoint brings the flows back ----
stop_rampartd
check "written again at the second stop" grep -q ': 4 flows written' "$LAB_TMP/rampartd.err"
if ! start_rampartd 2 --state-interval 1; then
	not_ok "rampartd --state-interval 1 starts"; cat "$LAB_TMP/rampartd.err" >&2
	lab_summary; exit 1
fi
check "--state-interval 1: a checkpoint of the 4 flows within 5 s" lab_wait_for 5 \
	grep -q 'checkpoint: 4 flows written' "$LAB_TMP/rampartd.err"
check "rampartctl status shows the checkpoints" status_checkpoints
check "... and so does its JSON" status_checkpoints_json
# (they also crossed the stop and start above: TCP's retransmission may
# still be backing off over that gap, longer under ASan; 3 s once failed
# there in CI while every later check of the same sessions passed)
check "the sessions ran on meanwhile" all_alive 15
kill -KILL "$RAMPARTD_PID"
wait "$RAMPARTD_PID" 2>/dev/null
check_eq "SIGKILL: rampartd is gone (status 128 + 9)" "$?" 137
check "the checkpoint is there" test -s "$LAB_TMP/flows.state"
# a crash loop: the next rampartd dies too before its first checkpoint
if ! start_rampartd 2 --state-interval 600; then
	not_ok "rampartd starts after the crash"; cat "$LAB_TMP/rampartd.err" >&2
	lab_summary; exit 1
fi
check "it restored the checkpoint's flows" \
	grep -q 'state file .*: 4 of 4 flows restored' "$LAB_TMP/rampartd.err"
check "with checkpoints on, the file stays for the first one to replace" \
	test -s "$LAB_TMP/flows.state"
kill -KILL "$RAMPARTD_PID"
wait "$RAMPARTD_PID" 2>/dev/null
if ! start_rampartd; then
	not_ok "rampartd starts after the second crash"; cat "$LAB_TMP/rampartd.err" >&2
	lab_summary; exit 1
fi
check "a second crash before any checkpoint: the flows come back again" \
	grep -q 'state file .*: 4 of 4 flows restored' "$LAB_TMP/rampartd.err"
check "the sessions carry on after the crashes" all_alive 15
check_eq "with the same public ports" "$(peers)" 4

# ---- a bulk transfer across a crash: the checkpoint's windows re-learnt ----
# (the checkpoint is up to a second behind iperf3's stream: its windows
# long passed, the connection would stall without the re-learning)
stop_rampartd
if ! start_rampartd 2 --state-interval 1; then
	not_ok "rampartd starts for the bulk transfer"; cat "$LAB_TMP/rampartd.err" >&2
	lab_summary; exit 1
fi
lab_bg srv "$LAB_TMP/iperf-s.log" iperf3 -s -1 -B "10.$N.2.2"
lab_wait_for 10 lab_port_listening srv tcp 5201 || not_ok "iperf3 listens"
lab_bg cli "$LAB_TMP/iperf.json" iperf3 -c "10.$N.2.2" -t 7 -i 1 -J
IPERF_PID=$LAB_LAST_PID
sleep 2.5
check "a checkpoint holds the transfer's flows" lab_wait_for 3 \
	grep -Eq 'checkpoint: ([6-9]|[1-9][0-9]) flows written' "$LAB_TMP/rampartd.err"
kill -KILL "$RAMPARTD_PID"
wait "$RAMPARTD_PID" 2>/dev/null
if ! start_rampartd; then
	not_ok "rampartd starts after the crash mid-transfer"; cat "$LAB_TMP/rampartd.err" >&2
	lab_summary; exit 1
fi
wait "$IPERF_PID"
check_eq "iperf3 finishes its 7 s" "$?" 0
# bytes in the last two of its seven one-second intervals: after the crash
check "the transfer goes on after the crash (windows re-learnt)" "$LAB_PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
b = [i["sum"]["bytes"] for i in d["intervals"]]
print("# iperf3 bytes per second:", b)
sys.exit(0 if "error" not in d and len(b) >= 7 and min(b[-2:]) > 0 else 1)' "$LAB_TMP/iperf.json"

# ---- the same restart without the state file ends it ----
stop_rampartd
head -c 200 /dev/urandom >"$LAB_TMP/flows.state"	# damaged
if ! start_rampartd; then
	not_ok "rampartd starts over a damaged state file"; cat "$LAB_TMP/rampartd.err" >&2
	lab_summary; exit 1
fi
ok "rampartd starts over a damaged state file"
check "it says the file is refused" grep -q 'state file .* refused' "$LAB_TMP/rampartd.err"
check_not "without the flows the sessions do not carry on" lab_session_alive 6
kill "$SESSION_PID" "${EXTRA_PID[@]}" 2>/dev/null	# (they would give up after 30 s)
start_session
check "a new session runs" lab_session_alive 5

# ---- another worker count; SIGTERM ----
check "SIGTERM: rampartd stops" stop_rampartd TERM
wait "$RAMPARTD_PID"
check_eq "with exit status 0" "$?" 0
check "it wrote the file all the same" grep -q ': 1 flows written' "$LAB_TMP/rampartd.err"
check_not "and detached the programs (CLI.md)" lab_xdp_attached
if ! start_rampartd 1; then
	not_ok "rampartd --queues 1 starts"; cat "$LAB_TMP/rampartd.err" >&2; lab_summary; exit 1
fi
check "a file of 2 workers comes back into 1" \
	grep -q 'state file .*: 1 of 1 flows restored' "$LAB_TMP/rampartd.err"
# One worker's file into two: a masqueraded session's port was chosen
# with no steering, so each of its directions now maps to either worker;
# the flow goes where its port's share is and the other direction's
# packets are handed there (a redirect): every session carries on. The
# hosts send on queue 0 from here (the one worker's; --queues 1 leaves
# queue 1 without a socket, and a stalled segment would wait for TCP's
# retransmission to pick another queue).
check "the client sends on TX queue 0 only (XPS)" lab_xps_queue0 cli "$CLI_IF"
check "the server too" lab_xps_queue0 srv "$SRV_IF"
start_extra
check "four sessions through one worker" all_alive 25
check "USR2: the one worker stops for a restart" stop_rampartd
if start_rampartd 2; then
	check "a file of 1 worker comes back into 2, every flow" \
		grep -Eq 'state file .*: ([0-9]+) of \1 flows restored' "$LAB_TMP/rampartd.err"
	# (TCP's retransmission backs off over the gap, longer under ASan)
	check "  ... and every session carries on (TCP: each with its one public port)" all_alive 25
	# the redirects are needed only while a flow they lead to lives:
	# with every flow ended, rampartd drops them (looked at each second)
	check "  ... status counts the restore's redirects" grep -Eq '[1-9][0-9]* restored flows. redirects' \
		<(ctl status)
	ctl flows --delete --filter proto=tcp >/dev/null
	check "  ... flows deleted: the redirects dropped, none of their flows left" lab_wait_for 10 \
		grep -q 'redirects of the flows restored from the state file dropped' "$LAB_TMP/rampartd.err"
	check "  ... and status says none are left" grep -q ' 0 restored flows. redirects' <(ctl status)
	stop_rampartd
else
	not_ok "rampartd --queues 2 starts again"; cat "$LAB_TMP/rampartd.err" >&2
fi
lab_xdp_off
if [ "$LAB_FAILED" -ne 0 ]; then
	echo "--- rampartd stderr ---" >&2; cat "$LAB_TMP/rampartd.err" >&2
	echo "--- session ---" >&2; cat "$LAB_TMP/session.log" >&2
	for i in $(seq 1 $EXTRA); do
		echo "--- extra session $i (count $(extra_count "$i")) ---" >&2
		cat "$LAB_TMP/extra$i.log" >&2
	done
fi
lab_summary
