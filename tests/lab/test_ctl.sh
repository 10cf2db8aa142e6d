#!/bin/bash
# Lab test of rampartctl against rampartd's control socket: rampartd bridges
# a client and a server with a small stateful policy; after pings, a TCP
# connection held open, an HTTP fetch and UDP echoes, checks status, rule
# counters (table and JSON agree, exact for the pings), the flow listing and
# its filter, the socket's mode and owner checks, the exit statuses, and
# the frames the kernel dropped while rampartd was stopped (rx_missed).
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_ctl.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

PINGS=5
PING_FRAME=98		# 14 + 20 + 8 + 56 (ping's default payload)

write_policy() {
	cat >"$1" <<'YAML'
version: 1
networks:
  client: [10.10.0.1, "fd00:10::1"]
  server: [10.10.0.2, "fd00:10::2"]
rules:
  - name: ping-in
    proto: icmp
    icmp_type: echo-request
    from: {network: client}
    to: {network: server}
    action: accept
  - name: web-in
    proto: tcp
    from: {network: client}
    to: {network: server, port: 8080}
    action: accept
  - name: udp-echo
    proto: udp
    from: {network: client}
    to: {network: server, port: 7000}
    action: accept
  - name: nd
    proto: icmpv6
    action: accept
defaults: {action: drop, stateful: true}
YAML
}

ctl() { "$RAMPARTCTL" --control "$LAB_CONTROL" "$@"; }
# exit_code WANT CMD...: CMD exits with status WANT.
exit_code() { local want=$1; shift; quiet "$@"; [ $? -eq "$want" ]; }
json_ok() { "$LAB_PY" -c 'import json,sys; json.load(sys.stdin)'; }
# json_get EXPR: evaluate EXPR with d = the JSON document on stdin.
json_get() { "$LAB_PY" -c "import json,sys; d = json.load(sys.stdin); print($1)"; }
# table_col FILE NAME COL: column COL of the row whose second column is NAME.
table_col() { awk -v n="$2" -v c="$3" '$2 == n { print $c }' "$1"; }

lab_init rpc
lab_rampart_bins || { not_ok "rampartd built"; lab_summary; exit 1; }
[ -x "$RAMPARTCTL" ] || { not_ok "rampartctl built"; lab_summary; exit 1; }
lab_write_udp_tool
write_policy "$LAB_TMP/ctl.yaml"
RAMPART_TEST_RFW='' lab_compile "$LAB_TMP/ctl.yaml" "$LAB_TMP/ctl.rfw" ||
	{ not_ok "policy compiles"; lab_summary; exit 1; }
lab_bridge_setup || { not_ok "lab set up"; lab_summary; exit 1; }
lab_start_servers || { not_ok "servers listen"; lab_summary; exit 1; }

# A missing directory for the socket is created 0700 (before the
# interfaces are opened: this start fails at the unknown interface).
lab_in fw "$RAMPARTD" --policy "$LAB_TMP/ctl.rfw" --interface "$FW_IF_C" --interface nosuch0 \
	--control "$LAB_TMP/newdir/rampartd.sock" >/dev/null 2>&1
check_eq "the socket's missing directory is created 0700" "$(stat -c %a "$LAB_TMP/newdir")" 700
check_not "  ... and the socket removed when set-up fails" test -e "$LAB_TMP/newdir/rampartd.sock"

# A dead daemon's socket file where the new one goes is replaced.
LAB_CONTROL=$LAB_TMP/run/rampartd.sock
mkdir -m 0700 "$LAB_TMP/run"
"$LAB_PY" -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$LAB_CONTROL"
[ -S "$LAB_CONTROL" ] || not_ok "stale socket file made"

check "rampartctl against a missing socket: exit 2" \
	exit_code 2 "$RAMPARTCTL" --control "$LAB_TMP/nosuch.sock" status
msg=$("$RAMPARTCTL" --control "$LAB_TMP/nosuch.sock" status 2>&1)
check "  ... naming the socket and the reason" \
	bash -c "grep -q '$LAB_TMP/nosuch.sock' <<<'$msg' && grep -q 'No such file' <<<'$msg'"

# (checkpoints every second: their metrics below)
if ! lab_rampartd_start "$LAB_TMP/ctl.rfw" -v --metrics 127.0.0.1:19630 \
	--state-file "$LAB_TMP/ctl.state" --state-interval 1; then
	not_ok "rampartd starts over a stale socket"; cat "$LAB_TMP/rampartd.err" >&2
	lab_summary; exit 1
fi
ok "rampartd starts over a stale socket"
check_eq "control socket is mode 0600" "$(stat -c %a "$LAB_CONTROL")" 600
check_eq "control socket is owned by rampartd's user" "$(stat -c %U "$LAB_CONTROL")" "$(id -un)"

lab_in fw "$RAMPARTD" --policy "$LAB_TMP/ctl.rfw" --interface "$FW_IF_C" \
	--interface "$FW_IF_S" --control "$LAB_CONTROL" >"$LAB_TMP/second.out" 2>&1
rc=$?
check_eq "a second rampartd on a live socket exits 2" "$rc" 2
check "  ... saying another rampartd owns it" grep -q 'another rampartd' "$LAB_TMP/second.out"
check "  ... and the first one still answers" quiet ctl status

# --- traffic ---
check "ping 10.10.0.2 ($PINGS) succeeds" \
	quiet lab_in cli ping -q -n -c "$PINGS" -i 0.2 -W 2 10.10.0.2
echo hello >"$LAB_TMP/index.txt"
check "HTTP to 10.10.0.2:8080 completes" \
	bash -c "ip netns exec $(lab_nsname cli) curl -s --max-time 5 http://10.10.0.2:8080/index.txt | grep -q hello"
# a connection held open (the server waits for a request that never comes)
lab_bg cli "$LAB_TMP/hold.log" "$LAB_PY" -c \
	'import socket,time; s=socket.create_connection(("10.10.0.2", 8080), 5); s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 0); print("up", flush=True); time.sleep(120)'
lab_wait_for 5 grep -q up "$LAB_TMP/hold.log" || not_ok "held TCP connection is up"
got=$(lab_in cli "$LAB_PY" "$LAB_TMP/udp.py" send 10.10.0.2 7000 3 100)
check_eq "UDP echo on 7000: 3 of 3 answered" "$got" 3

# --- status ---
ctl status >"$LAB_TMP/status.txt" 2>&1
check "status exits 0" [ $? -eq 0 ]
check "status names the policy file and its rule count" \
	grep -q "policy: .*$LAB_TMP/ctl.rfw (4 rules, checksum [0-9a-f]\{8\})" "$LAB_TMP/status.txt"
check "status lists both interfaces with their XDP and AF_XDP modes, frames and UMEM" \
	bash -c "grep -Eq '^$FW_IF_C +[a-z]+ +(copy|zero-copy) +[0-9]+ +(4096|9728) +(shared|own|mixed)$' '$LAB_TMP/status.txt' &&
		 grep -Eq '^$FW_IF_S +[a-z]+ +(copy|zero-copy) +[0-9]+ +(4096|9728) +(shared|own|mixed)$' '$LAB_TMP/status.txt'"
check "status shows conntrack use" grep -Eq '^conntrack: [0-9]+ / [0-9]+ flows' "$LAB_TMP/status.txt"
check "status: no handoff with one worker" grep -q '^handoff: *off (one worker)$' "$LAB_TMP/status.txt"
check "status --json parses" bash -c "ctl() { '$RAMPARTCTL' --control '$LAB_CONTROL' \"\$@\"; }
	ctl --json status | '$LAB_PY' -c 'import json,sys; json.load(sys.stdin)'"
check_eq "status --json: mode, rules and interfaces" \
	"$(ctl --json status | json_get 'd["mode"], d["policy"]["rules"], [i["name"] for i in d["interfaces"]], d["rampartd"]["pid"]')" \
	"bridge 4 ['$FW_IF_C', '$FW_IF_S'] $RAMPARTD_PID"

# --- Prometheus metrics (--metrics 127.0.0.1:19630, inside the fw namespace) ---
metrics() { lab_in fw curl -s -D "$LAB_TMP/metrics.head" --max-time 5 "http://127.0.0.1:19630$1"; }
metrics /metrics >"$LAB_TMP/metrics.txt"
check "GET /metrics answers 200 in the text format 0.0.4" \
	grep -q 'Content-Type: text/plain; version=0.0.4' "$LAB_TMP/metrics.head"
check "every metric follows Prometheus' conventions (HELP, TYPE, names, _total counters)" \
	"$LAB_PY" - "$LAB_TMP/metrics.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read().splitlines()
helps, types, bad = set(), {}, []
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? [0-9]+(\.[0-9]+)?$')
for line in text:
    if line.startswith("# HELP "):
        helps.add(line.split()[2])
    elif line.startswith("# TYPE "):
        _, _, name, kind = line.split()
        types[name] = kind
        if not name.startswith("rampart_") or name != name.lower():
            bad.append("name " + name)
        if (kind == "counter") != name.endswith("_total"):
            bad.append("counter suffix " + name)
    elif line:
        m = sample.match(line)
        if not m or m.group(1) not in types or m.group(1) not in helps:
            bad.append("sample " + line)
if bad or len(types) < 20:
    print("\n".join(bad[:10]), len(types))
    sys.exit(1)
PY
checkpoint_metrics() {
	metrics /metrics | grep -Eq '^rampart_checkpoints_total\{result="written"\} [1-9]' &&
		metrics /metrics | grep -q '^rampart_checkpoints_total{result="failed"} 0$' &&
		metrics /metrics | grep -Eq '^rampart_checkpoint_last_success_timestamp_seconds [1-9]'
}
check "/metrics: checkpoints written (--state-interval 1), none failed" \
	lab_wait_for 5 checkpoint_metrics
mrule=$(awk '/^rampart_rule_packets_total\{rule="udp-echo"/ { print $2 }' "$LAB_TMP/metrics.txt")
check_eq "rule counters in /metrics match stats --json" "$mrule" \
	"$(ctl --json stats --rules | json_get '[r["packets"] for r in d["rules"] if r["name"] == "udp-echo"][0]')"
metrics /nosuch >/dev/null
check "another path: 404" grep -q '^HTTP/1.0 404' "$LAB_TMP/metrics.head"
check "--metrics with a bad address: exit 1 with the reason" \
	bash -c "'$RAMPARTD' --policy '$LAB_TMP/ctl.rfw' --interface x --interface y --metrics nowhere:1 2>&1 |
		grep -q 'not an IP address'; [ \${PIPESTATUS[0]} -ne 0 ]"

# --- least privilege (docs/security.md) ---
# Every thread keeps only CAP_NET_ADMIN (bit 12) and nothing in its bounding
# set; the workers (named rampart-wN) run under the seccomp filter.
caps_ok=1; workers_filtered=0; workers=0
for t in /proc/"$RAMPARTD_PID"/task/*; do
	st=$(cat "$t/status")
	grep -q $'^CapEff:\t0000000000001000$' <<<"$st" || caps_ok=0
	grep -q $'^CapBnd:\t0000000000001000$' <<<"$st" || caps_ok=0
	case $(cat "$t/comm") in rampart-w*)
		workers=$((workers + 1))
		grep -q $'^Seccomp:\t2$' <<<"$st" && workers_filtered=$((workers_filtered + 1)) ;;
	esac
done
check_eq "after set-up every thread has only CAP_NET_ADMIN (effective and bounding)" "$caps_ok" 1
check "there are worker threads" test "$workers" -ge 1
check_eq "every worker runs under the seccomp filter" "$workers_filtered" "$workers"

# --- stats ---
ctl stats --rules >"$LAB_TMP/rules.txt"
ctl --json stats --rules >"$LAB_TMP/rules.json"
check "stats --rules --json parses" json_ok <"$LAB_TMP/rules.json"
check "a rule's last hit: seconds ago in JSON, a LAST_HIT column in the table" \
	bash -c "'$LAB_PY' -c 'import json,sys; r = [x for x in json.load(sys.stdin)[\"rules\"] if x[\"name\"] == \"udp-echo\"][0]; assert 0 <= r[\"last_hit_s_ago\"] < 300' <'$LAB_TMP/rules.json' &&
		 grep -Eq '^ *[0-9]+ +udp-echo .* [0-9.]+s ago$' '$LAB_TMP/rules.txt' && head -1 '$LAB_TMP/rules.txt' | grep -q LAST_HIT"
# stateful: the echo replies are the flow's, counted under the rule too
check_eq "ping-in: $((2 * PINGS)) packets (table)" "$(table_col "$LAB_TMP/rules.txt" ping-in 4)" $((2 * PINGS))
check_eq "ping-in: $((2 * PINGS * PING_FRAME)) bytes (table)" \
	"$(table_col "$LAB_TMP/rules.txt" ping-in 5)" $((2 * PINGS * PING_FRAME))
for r in ping-in web-in udp-echo; do
	want=$(awk -v n=$r '$2 == n { print $4, $5, $6 }' "$LAB_TMP/rules.txt")
	got=$(json_get "' '.join(str(x[k]) for x in d['rules'] if x['name'] == '$r' for k in ('packets', 'bytes', 'limited'))" <"$LAB_TMP/rules.json")
	check_eq "$r: JSON numbers equal the table's ($want)" "$got" "$want"
done
check "web-in and udp-echo counted packets" \
	bash -c "[ $(table_col "$LAB_TMP/rules.txt" web-in 4) -gt 0 ] && [ $(table_col "$LAB_TMP/rules.txt" udp-echo 4) -eq 6 ]"

ctl stats >"$LAB_TMP/stats.txt"
check "stats shows every section" \
	bash -c "grep -q '^rules:' '$LAB_TMP/stats.txt' && grep -q '^interfaces:' '$LAB_TMP/stats.txt' &&
		 grep -q '^workers:' '$LAB_TMP/stats.txt' && grep -q '^stages:' '$LAB_TMP/stats.txt'"
check "stats --stages shows cycles/packet per stage" \
	bash -c "ctl() { '$RAMPARTCTL' --control '$LAB_CONTROL' \"\$@\"; }
		 ctl stats --stages | grep -Eq '^parse +[0-9]+ +[0-9]+ +[0-9.]+$'"
check "stats --stages: the flow cache finished packets of the known flows" \
	bash -c "ctl() { '$RAMPARTCTL' --control '$LAB_CONTROL' \"\$@\"; }
		 ctl stats --stages | grep -Eq '^known-flow packets: [1-9][0-9]*, finished by the flow cache: [1-9][0-9]*, sent by the express lookup: [0-9]+$'"
ctl --json stats >"$LAB_TMP/stats.json"
check "stats --json parses with every section" \
	bash -c "'$LAB_PY' -c 'import json,sys; d = json.load(sys.stdin); assert d[\"version\"] == 1; [d[k] for k in (\"rules\", \"interfaces\", \"workers\", \"stages\", \"drops\")]' <'$LAB_TMP/stats.json'"
# the known-flow counters: JSON and text the same (no IPv4 TCP/UDP
# traffic in between)
ctl stats --stages >"$LAB_TMP/stages.txt"
want=$(sed -n 's/^known-flow packets: \([0-9]*\), finished by the flow cache: \([0-9]*\), sent by the express lookup: \([0-9]*\)$/\1 \2 \3/p' "$LAB_TMP/stages.txt")
got=$(json_get "' '.join(str(d[k]) for k in ('known_flow_packets', 'flow_cache_hits', 'express_sent'))" <"$LAB_TMP/stats.json")
check_eq "known-flow, flow cache and express counters: JSON equals the text" "$got" "${want:-no such line}"
ctl stats --interfaces >"$LAB_TMP/if.txt"
ctl --json stats --interfaces >"$LAB_TMP/if.json"
want=$(awk -v n="$FW_IF_C" '$1 == n { print $2, $3 }' "$LAB_TMP/if.txt")
got=$(json_get "' '.join(str(x[k]) for x in d['interfaces'] if x['name'] == '$FW_IF_C' for k in ('rx_packets', 'rx_bytes'))" <"$LAB_TMP/if.json")
# only ND could arrive in between; both reads are after the traffic
check_eq "interface rx numbers: JSON equals the table" "$got" "$want"

# --- flows ---
ctl flows >"$LAB_TMP/flows.txt"
check "flows lists the held TCP connection as established" \
	grep -Eq '^tcp +10\.10\.0\.1:[0-9]+ -> 10\.10\.0\.2:8080 +- +established +web-in ' "$LAB_TMP/flows.txt"
check "flows lists the ping flow under ping-in" \
	grep -Eq '^icmp +10\.10\.0\.1 -> 10\.10\.0\.2 .* ping-in ' "$LAB_TMP/flows.txt"
ctl flows --filter proto=udp >"$LAB_TMP/udp.txt"
check "--filter proto=udp lists only UDP" \
	bash -c "[ \$(grep -c '^udp ' '$LAB_TMP/udp.txt') -eq 1 ] && ! grep -Eq '^(tcp|icmp) ' '$LAB_TMP/udp.txt'"
check "--filter 'proto=tcp state=established dport=8080' finds the held connection" \
	bash -c "ctl() { '$RAMPARTCTL' --control '$LAB_CONTROL' \"\$@\"; }
		 [ \$(ctl flows --filter 'proto=tcp state=established dport=8080' | grep -c '^tcp ') -eq 1 ]"
check "--filter rule=ping-in src=10.10.0.0/24 lists the ping flow only" \
	bash -c "ctl() { '$RAMPARTCTL' --control '$LAB_CONTROL' \"\$@\"; }
		 out=\$(ctl flows --filter 'rule=ping-in src=10.10.0.0/24'); grep -q '^icmp ' <<<\"\$out\" &&
		 ! grep -Eq '^(tcp|udp) ' <<<\"\$out\""
check "--limit 1 shows one flow and says how many match" \
	bash -c "ctl() { '$RAMPARTCTL' --control '$LAB_CONTROL' \"\$@\"; }
		 ctl flows --limit 1 | grep -Eq '^1 of [0-9]+ flows shown'"
check "flows --json parses" bash -c "ctl() { '$RAMPARTCTL' --control '$LAB_CONTROL' \"\$@\"; }
	ctl --json flows | '$LAB_PY' -c 'import json,sys; d = json.load(sys.stdin); assert any(f[\"state\"] == \"established\" and f[\"dport\"] == 8080 for f in d[\"flows\"])'"
check "a bad filter key: exit 1" exit_code 1 ctl flows --filter 'colour=blue'
check "a bad filter value: exit 1" exit_code 1 ctl flows --filter 'src=10.0.0.300'
check "a filter naming no rule of the policy: exit 1" exit_code 1 ctl flows --filter 'rule=nosuch'
msg=$(ctl flows --filter 'state=sleepy' 2>&1)
check "  ... with the daemon's message" grep -q "bad value in filter term 'state=sleepy'" <<<"$msg"
# --- flows --delete (conntrack -D) ---
check "flows --delete without a filter is refused (exit 1)" exit_code 1 ctl flows --delete
ctl flows --delete --filter 'proto=udp' >"$LAB_TMP/deleted.txt"
check "--delete --filter proto=udp lists the UDP flow and says it ended it" \
	bash -c "grep -q '^udp ' '$LAB_TMP/deleted.txt' && grep -qx '1 flow deleted' '$LAB_TMP/deleted.txt'"
check "the UDP flow is gone" bash -c "ctl() { '$RAMPARTCTL' --control '$LAB_CONTROL' \"\$@\"; }
	! ctl flows --filter proto=udp | grep -q '^udp '"
check "the TCP connection is not" bash -c "ctl() { '$RAMPARTCTL' --control '$LAB_CONTROL' \"\$@\"; }
	ctl flows --filter 'proto=tcp dport=8080' | grep -q '^tcp '"
check "--json: deleted 0 when nothing matches" bash -c "ctl() { '$RAMPARTCTL' --control '$LAB_CONTROL' \"\$@\"; }
	ctl --json flows --delete --filter proto=udp | '$LAB_PY' -c 'import json,sys; d = json.load(sys.stdin); sys.exit(1 if d[\"deleted\"] != 0 or d[\"flows\"] else 0)'"

# --- top: two screens while pings flow ---
lab_bg cli "$LAB_TMP/top-ping.log" ping -q -i 0.05 -c 40 10.10.0.2	# (after the exact counts)
ctl top --interval 0.5 --count 2 >"$LAB_TMP/top.txt" 2>&1
lab_wait_for 10 grep -q 'packets transmitted' "$LAB_TMP/top-ping.log"	# quiet again
check_eq "top prints two screens" "$(grep -c '^rampart top: rates over' "$LAB_TMP/top.txt")" 2
check "top shows both interfaces with their rates" \
	bash -c "grep -Eq '^$FW_IF_C +[0-9]+ ' '$LAB_TMP/top.txt' && grep -Eq '^$FW_IF_S +[0-9]+ ' '$LAB_TMP/top.txt'"
check "top sees the pings (a nonzero RX rate on the client side)" \
	bash -c "grep -E '^$FW_IF_C +' '$LAB_TMP/top.txt' | awk '\$2 > 0' | grep -q ."
check "top has the interfaces' RX missed rate (MISSED pps, a number per interface)" \
	bash -c "grep -q 'DROP pps  *MISSED pps\$' '$LAB_TMP/top.txt' &&
		 grep -E '^$FW_IF_C +' '$LAB_TMP/top.txt' | awk 'NF == 7 && \$7 ~ /^[0-9]+\$/' | grep -q ."
check "top lists the busiest rules and the drops" \
	bash -c "grep -q '^TOP RULES' '$LAB_TMP/top.txt' && grep -q '^DROPS' '$LAB_TMP/top.txt' && grep -q '^ping-in ' '$LAB_TMP/top.txt'"

# --- capture: dropped packets, and a rule's, read back with tshark ---
ctl capture --drops -c 3 -w "$LAB_TMP/drops.pcapng" --timeout 10 2>"$LAB_TMP/cap1.err" &
cap=$!
sleep 0.5
lab_in cli "$LAB_PY" "$LAB_TMP/udp.py" send 10.10.0.2 9999 4 20 >/dev/null	# no rule: dropped
wait "$cap"; rc=$?
check_eq "capture --drops -c 3 exits 0" "$rc" 0
check "  ... says it captured 3 packets" grep -q '3 packets captured' "$LAB_TMP/cap1.err"
tshark -r "$LAB_TMP/drops.pcapng" -T fields -e frame.comment -e udp.dstport \
	>"$LAB_TMP/drops.txt" 2>"$LAB_TMP/tshark.err"
check_eq "tshark reads 3 packets to port 9999 with their verdict" \
	"$(grep -c 'rampart: rule=default verdict=drop reason=policy in=.*9999$' "$LAB_TMP/drops.txt")" 3
ctl capture --rule udp-echo -c 2 -w "$LAB_TMP/echo.pcapng" 2>/dev/null &
cap=$!
sleep 0.5
lab_in cli "$LAB_PY" "$LAB_TMP/udp.py" send 10.10.0.2 7000 2 20 >/dev/null
wait "$cap"
tshark -r "$LAB_TMP/echo.pcapng" -T fields -e frame.comment >"$LAB_TMP/echo.txt" 2>/dev/null
# the flow's packets both ways count under its rule: a request and its echo
check_eq "capture --rule udp-echo: 2 accepted packets, interfaces named" \
	"$(grep -Ec "rampart: rule=udp-echo verdict=accept in=($FW_IF_C out=$FW_IF_S|$FW_IF_S out=$FW_IF_C)$" "$LAB_TMP/echo.txt")" 2
check "capture of a rule the policy lacks: exit 1" exit_code 1 ctl capture --rule nosuch -c 1 -w "$LAB_TMP/x.pcapng"

# --- reload, help, permissions ---
msg=$(ctl reload 2>&1); rc=$?
check_eq "reload (the --policy file again) exits 0" "$rc" 0
check "  ... and says what is in force" grep -q '^reloaded .*generation 1' <<<"$msg"
msg=$(ctl reload "$LAB_TMP/nosuch.rfw" 2>&1); rc=$?
check_eq "reload of a missing file exits 1" "$rc" 1
check "  ... naming the file" grep -q 'nosuch.rfw' <<<"$msg"
check "reload --json parses" bash -c "'$RAMPARTCTL' --control '$LAB_CONTROL' --json reload |
	'$LAB_PY' -c 'import json,sys; d = json.load(sys.stdin)[\"reloaded\"]; assert d[\"generation\"] == 2 and d[\"published_us\"] >= d[\"mapped_us\"]'"
check "rampartctl --help and flows --help document the filter" \
	bash -c "'$RAMPARTCTL' --help | grep -q 'flows \[--filter EXPR\]' && '$RAMPARTCTL' flows --help | grep -q 'state=syn_sent'"
check "an unknown command: exit 1" exit_code 1 ctl frobnicate
check "a user other than the daemon's cannot connect (0600, exit 2)" \
	exit_code 2 setpriv --reuid=nobody --regid=nogroup --clear-groups "$RAMPARTCTL" --control "$LAB_CONTROL" status
# with the file modes opened up, rampartd itself refuses the peer's uid
chmod 0711 "$LAB_TMP"
chmod 0777 "$(dirname "$LAB_CONTROL")" "$LAB_CONTROL"
msg=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$RAMPARTCTL" --control "$LAB_CONTROL" status 2>&1); rc=$?
check_eq "another uid on an opened-up socket: refused by rampartd (exit 1)" "$rc" 1
[ "$rc" -eq 1 ] || echo "# $msg"
check "  ... with a clear message" grep -q 'permission denied: uid [0-9]* may not use' <<<"$msg"
chmod 0700 "$LAB_TMP" "$(dirname "$LAB_CONTROL")"; chmod 0600 "$LAB_CONTROL"

# --- frames lost before the workers (docs/operations.md) ---
# rampartd stopped (SIGSTOP) cannot empty its RX ring nor refill its fill
# ring (2048 each, xsk/umem.h); of $FLOOD frames sent meanwhile from cli
# to a port no rule accepts, the kernel can hold at most 2048 and drops
# the rest. In copy mode (veth) it takes a fill-ring buffer before it
# looks for RX ring room, so the loss is no_buffer; zero-copy: ring_full.
# lab_cleanup sends SIGCONT before it kills, should the test die between.
FLOOD=$((4 * 2048))
# if_field FILE FIELD: FIELD (a Python expression on i) of $FW_IF_C's entry.
if_field() { json_get "[$2 for i in d['interfaces'] if i['name'] == '$FW_IF_C'][0]" <"$1"; }
ctl --json stats --interfaces >"$LAB_TMP/miss0.json"
check "stats --json: every interface has rx_missed, the sum of rx_missed_by_reason" \
	quiet json_get 'all(set(i["rx_missed_by_reason"]) == {"ring_full", "no_buffer", "invalid", "other"} and i["rx_missed"] == sum(i["rx_missed_by_reason"].values()) for i in d["interfaces"]) or exit(1)' <"$LAB_TMP/miss0.json"
check_eq "no frame lost before the workers yet on $FW_IF_C" "$(if_field "$LAB_TMP/miss0.json" "i['rx_missed']")" 0
why=no_buffer
[ "$(ctl --json status | json_get "[i['xsk_mode'] for i in d['interfaces'] if i['name'] == '$FW_IF_C'][0]")" = copy ] ||
	why=ring_full
kill -STOP "$RAMPARTD_PID"
lab_in cli "$LAB_PY" - "$CLI_IF" "$FLOOD" "$(lab_in srv cat "/sys/class/net/$SRV_IF/address")" \
	<<'PY' >"$LAB_TMP/flood.out" 2>&1
# Raw UDP frames 10.10.0.1 -> 10.10.0.2:9999 straight onto the link: no
# ARP or socket buffer in the way, one frame per send.
import socket, struct, sys
ifname, count, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifname, 0))
src = s.getsockname()[4]
udp = struct.pack("!HHHH", 40000, 9999, 8 + 18, 0) + b"x" * 18
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                 socket.inet_aton("10.10.0.1"), socket.inet_aton("10.10.0.2"))
csum = sum(struct.unpack("!10H", ip))
csum = (csum & 0xffff) + (csum >> 16)
ip = ip[:10] + struct.pack("!H", ~((csum & 0xffff) + (csum >> 16)) & 0xffff) + ip[12:]
frame = bytes.fromhex(dst.replace(":", "")) + src + b"\x08\x00" + ip + udp
sent = 0
for _ in range(count):
    sent += s.send(frame) == len(frame)
print(sent)
PY
kill -CONT "$RAMPARTD_PID"
check_eq "$FLOOD frames sent while rampartd was stopped" "$(cat "$LAB_TMP/flood.out")" "$FLOOD"
# the worker drains what its RX ring held (bounded wait)
lab_wait_for 5 bash -c "[ \$('$RAMPARTCTL' --control '$LAB_CONTROL' --json stats --interfaces |
	'$LAB_PY' -c 'import json,sys; print([i[\"rx_packets\"] for i in json.load(sys.stdin)[\"interfaces\"] if i[\"name\"] == \"$FW_IF_C\"][0])') -ge \
	$(( $(if_field "$LAB_TMP/miss0.json" "i['rx_packets']") + 2048 )) ]"
ctl --json stats --interfaces >"$LAB_TMP/miss1.json"
ctl stats --interfaces >"$LAB_TMP/miss1.txt"
metrics /metrics >"$LAB_TMP/metrics1.txt"
missed=$(( $(if_field "$LAB_TMP/miss1.json" "i['rx_missed']") - $(if_field "$LAB_TMP/miss0.json" "i['rx_missed']") ))
got=$(( $(if_field "$LAB_TMP/miss1.json" "i['rx_packets']") - $(if_field "$LAB_TMP/miss0.json" "i['rx_packets']") ))
echo "# the stall: $got frames reached the worker, $missed missed: $(if_field "$LAB_TMP/miss1.json" "i['rx_missed_by_reason']")"
check "most of the flood was lost before the worker ($missed of $FLOOD)" \
	test "$missed" -ge $((FLOOD / 2))
# each frame once: received, or missed under one reason (a few ND/MLD
# frames of cli's may come too)
check "received + missed = the flood, none counted twice ($got + $missed)" \
	test $((got + missed)) -ge "$FLOOD" -a $((got + missed)) -le $((FLOOD + 16))
check_eq "the loss is counted as $why ($(ctl --json status | json_get "[i['xsk_mode'] for i in d['interfaces']][0]") mode)" \
	$(( $(if_field "$LAB_TMP/miss1.json" "i['rx_missed_by_reason']['$why']") - $(if_field "$LAB_TMP/miss0.json" "i['rx_missed_by_reason']['$why']") )) "$missed"
check_eq "stats --interfaces: the RX_MISSED column equals rx_missed" \
	"$(awk -v n="$FW_IF_C" 'NR == 1 { for (c = 1; c <= NF; c++) if ($c == "RX_MISSED") k = c } $1 == n { print $k }' "$LAB_TMP/miss1.txt")" \
	"$(if_field "$LAB_TMP/miss1.json" "i['rx_missed']")"
check_eq "/metrics: rx_missed_packets_total by reason adds up to rx_missed" \
	"$(awk -v n="$FW_IF_C" 'index($0, "rampart_interface_rx_missed_packets_total{interface=\"" n "\",reason=") == 1 { s += $2; k++ } END { print k, s }' "$LAB_TMP/metrics1.txt")" \
	"4 $(if_field "$LAB_TMP/miss1.json" "i['rx_missed']")"
check "/metrics: the family has its HELP and counter TYPE" \
	bash -c "grep -q '^# HELP rampart_interface_rx_missed_packets_total ' '$LAB_TMP/metrics1.txt' &&
		 grep -q '^# TYPE rampart_interface_rx_missed_packets_total counter$' '$LAB_TMP/metrics1.txt'"

# the SIGUSR1 counters block and rampartctl read the same workers
if lab_counters "$LAB_TMP/counters.txt"; then
	ctl stats --rules >"$LAB_TMP/rules2.txt"
	check_eq "SIGUSR1 counters and rampartctl agree on ping-in" \
		"$(lab_rule_counter "$LAB_TMP/counters.txt" ping-in packets)" "$(table_col "$LAB_TMP/rules2.txt" ping-in 4)"
else
	not_ok "SIGUSR1 prints counters"
fi

# One thread serves every client: one that trickles its request a byte a
# second must not hold the others up (each request has 2 s in all).
"$LAB_PY" - "$LAB_CONTROL" <<'PY' >"$LAB_TMP/trickle.log" 2>&1 &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
try:
    for _ in range(8):
        s.send(b"s")
        time.sleep(1)
except OSError:
    print("cut off")
PY
trickler=$!
sleep 0.5
t0=$(date +%s%N)
ctl status >/dev/null
waited=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "# status answered in $waited ms beside a trickling client"
check "status answers within 4 s while a client trickles its request" test "$waited" -lt 4000
kill "$trickler" 2>/dev/null
wait "$trickler" 2>/dev/null

lab_rampartd_stop
check_not "control socket removed at stop" test -e "$LAB_CONTROL"
lab_summary
