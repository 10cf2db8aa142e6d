#!/bin/bash
# Lab test of the worker's shared UMEM: rampartd bridges a client and a
# server; its sockets on both ports must share one UMEM (veth accepts
# XDP_SHARED_UMEM across devices), so every forwarded frame goes out by
# its address (tx_copied 0, tx_by_address = tx) under ping, HTTP, iperf3
# TCP and UDP; then --umem per-interface, where each socket has its own
# UMEM and every forwarded frame is copied once; then a shared bind the
# kernel refuses (simulated), where the refused socket gets its own UMEM.
# Each run stops with every frame of every UMEM accounted for.
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_umem.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

PINGS=10
UDP_COUNT=20

ctl() { "$RAMPARTCTL" --control "$LAB_CONTROL" "$@"; }
# json_get EXPR: evaluate EXPR with d = the JSON document on stdin.
json_get() { "$LAB_PY" -c "import json,sys; d = json.load(sys.stdin); print($1)"; }

# worker_sum FILE COL: column COL summed over the worker lines.
worker_sum() { awk -v c="$2" '$1 == "worker" && $2 ~ /^[0-9]+$/ { s += $c } END { print s + 0 }' "$1"; }
# if_tx FILE: tx_packets summed over the interface lines.
if_tx() { awk '$1 == "interface" && $2 != "name" { s += $5 } END { print s + 0 }' "$1"; }

# sent_counts OUT WHAT: counters and workers blocks into OUT; tx, by and
# cp get the workers' sent, sent-by-address and copied totals.
sent_counts() {
	lab_workers_block "$1" || not_ok "SIGUSR1 prints the workers block"
	tx=$(worker_sum "$1" 6); by=$(worker_sum "$1" 8); cp=$(worker_sum "$1" 9)
	echo "# $2: worker tx $tx, by address $by, copied $cp"
}

# traffic SECONDS: ping, HTTP over IPv4 and IPv6, UDP echo, then iperf3
# TCP and UDP for SECONDS each, client to server.
traffic() {
	check "ping 10.10.0.2 ($PINGS)" quiet lab_in cli ping -q -n -c "$PINGS" -i 0.1 -W 2 10.10.0.2
	check "HTTP over IPv4" bash -c "ip netns exec $(lab_nsname cli) curl -s --max-time 5 \
		http://10.10.0.2:8080/index.txt | grep -q hello"
	check "HTTP over IPv6" bash -c "ip netns exec $(lab_nsname cli) curl -s --max-time 5 \
		'http://[fd00:10::2]:8080/index.txt' | grep -q hello"
	got=$(lab_in cli "$LAB_PY" "$LAB_TMP/udp.py" send 10.10.0.2 7000 "$UDP_COUNT" 200)
	check_eq "UDP echo: $UDP_COUNT of $UDP_COUNT answered" "$got" "$UDP_COUNT"
	lab_in cli timeout 20 iperf3 -c 10.10.0.2 -t "$1" -J >"$LAB_TMP/tcp.json" 2>&1
	bps=$(json_get "int(d['end']['sum_received']['bits_per_second'])" <"$LAB_TMP/tcp.json" 2>/dev/null)
	check "iperf3 TCP for $1 s (${bps:-failed} bit/s)" test "${bps:-0}" -gt 0
	lab_in cli timeout 20 iperf3 -c 10.10.0.2 -u -b 50M -l 1200 -t "$1" -J >"$LAB_TMP/udp.json" 2>&1
	pk=$(json_get "d['end']['sum']['packets'] - d['end']['sum']['lost_packets']" \
		<"$LAB_TMP/udp.json" 2>/dev/null)
	check "iperf3 UDP for $1 s (${pk:-no} datagrams arrived)" test "${pk:-0}" -gt 0
	# the other direction still gets frames to receive into
	check "ping back from the server after the load" \
		quiet lab_in srv ping -q -n -c 3 -i 0.1 -W 2 10.10.0.1
}

lab_init rpu
lab_rampart_bins || { not_ok "rampartd built"; lab_summary; exit 1; }
command -v iperf3 >/dev/null || { not_ok "iperf3 installed"; lab_summary; exit 1; }
lab_write_udp_tool
cat >"$LAB_TMP/umem.yaml" <<'YAML'
version: 1
rules:
  - {name: icmp, proto: icmp, action: accept}
  - {name: nd, proto: icmpv6, action: accept}
  - {name: tcp, proto: tcp, action: accept}
  - {name: udp, proto: udp, action: accept}
defaults: {action: drop, stateful: true}
YAML
lab_compile "$LAB_TMP/umem.yaml" "$LAB_TMP/umem.rfw" >/dev/null ||
	{ not_ok "policy compiles"; lab_summary; exit 1; }
lab_bridge_setup || { not_ok "lab set up"; lab_summary; exit 1; }
echo hello >"$LAB_TMP/index.txt"
lab_start_servers || { not_ok "servers listen"; lab_summary; exit 1; }
lab_bg srv "$LAB_TMP/iperf.log" iperf3 -s -B 10.10.0.2
lab_wait_for 10 lab_port_listening srv tcp 5201 || not_ok "iperf3 server listens"

# --- shared: one UMEM for the worker's two sockets ---
lab_rampartd_start "$LAB_TMP/umem.rfw" -v --queues 1 --metrics 127.0.0.1:19631 ||
	{ not_ok "rampartd starts"; cat "$LAB_TMP/rampartd.err" >&2; lab_summary; exit 1; }
ok "rampartd starts"
grep 'UMEM' "$LAB_TMP/rampartd.err" | sed 's/^/# /'
check "-v: worker 0's UMEM is shared by both ports" \
	grep -q "^rampartd: worker 0 UMEM ($FW_IF_C, $FW_IF_S queue 0): 8192 frames of 4096 B, shared by every port" \
	"$LAB_TMP/rampartd.err"
check_eq "-v: one UMEM in all" "$(lab_umems)" 1
ctl --json status >"$LAB_TMP/status.json"
check_eq "status: both interfaces' UMEM is shared" \
	"$(json_get "' '.join(i['umem'] for i in d['interfaces'])" <"$LAB_TMP/status.json")" "shared shared"
check "status (table) has the UMEM column" bash -c \
	"'$RAMPARTCTL' --control '$LAB_CONTROL' status | grep -Eq '^ *$FW_IF_C .* shared *$'"

traffic 2
w=$LAB_TMP/w1.txt
sent_counts "$w" "shared UMEM"
check_eq "shared: no frame copied" "$cp" 0
check_eq "shared: every sent frame went by address" "$by" "$tx"
check "shared: the load was sent (tx $tx > 1000)" test "${tx:-0}" -gt 1000
check_eq "workers' by-address + copied = interfaces' tx" "$((by + cp))" "$(if_tx "$w")"
ctl --json stats --workers >"$LAB_TMP/sw.json"
check_eq "rampartctl stats --workers --json: tx_copied 0, tx_by_address > 0" \
	"$(json_get "d['workers'][0]['tx_copied'], d['workers'][0]['tx_by_address'] > 0" <"$LAB_TMP/sw.json")" \
	"0 True"
lab_in fw curl -s --max-time 5 http://127.0.0.1:19631/metrics >"$LAB_TMP/metrics.txt"
check "/metrics: sent by address > 0, copied 0" bash -c \
	"grep -Eq '^rampart_worker_sent_by_address_packets_total\\{worker=\"0\"\\} [1-9][0-9]*$' '$LAB_TMP/metrics.txt' &&
	 grep -Eq '^rampart_worker_sent_copied_packets_total\\{worker=\"0\"\\} 0$' '$LAB_TMP/metrics.txt'"
check "rampartctl stats --workers shows BY-ADDRESS and COPIED" bash -c \
	"'$RAMPARTCTL' --control '$LAB_CONTROL' stats --workers | grep -q 'BY-ADDRESS *COPIED'"
lab_rampartd_stop

# --- per-interface: a UMEM per socket, forwarding copies once ---
lab_rampartd_start "$LAB_TMP/umem.rfw" -v --queues 1 --umem per-interface ||
	{ not_ok "rampartd --umem per-interface starts"; lab_summary; exit 1; }
ok "rampartd --umem per-interface starts"
check_eq "-v: two UMEMs, one per socket" "$(lab_umems)" 2
check "-v: says each is the socket's own and forwarding copies" \
	grep -q "^rampartd: $FW_IF_S queue 0 UMEM: 4096 frames of 4096 B, its own (--umem per-interface): forwarding to or from it copies once" \
	"$LAB_TMP/rampartd.err"
ctl --json status >"$LAB_TMP/status2.json"
check_eq "status: UMEM own, with the reason" \
	"$(json_get "' '.join(i['umem'] + '/' + i['umem_reason'] for i in d['interfaces'])" <"$LAB_TMP/status2.json")" \
	"own/--umem per-interface own/--umem per-interface"
traffic 1
w=$LAB_TMP/w2.txt
sent_counts "$w" "per-interface UMEMs"
check "per-interface: forwarded frames were copied ($cp)" test "${cp:-0}" -gt 1000
check_eq "per-interface: by address + copied = tx" "$((by + cp))" "$tx"
check_eq "workers' by-address + copied = interfaces' tx" "$((by + cp))" "$(if_tx "$w")"
lab_rampartd_stop

# --- the fallback: a socket the kernel will not bind to the shared UMEM ---
# veth never refuses; RAMPART_XSK_REFUSE_SHARE makes rampartd act as if
# the kernel had refused the second socket (xsk/queue.c).
export RAMPART_XSK_REFUSE_SHARE=1
lab_rampartd_start "$LAB_TMP/umem.rfw" -v --queues 1 ||
	{ not_ok "rampartd starts with the shared bind refused"; lab_summary; exit 1; }
unset RAMPART_XSK_REFUSE_SHARE
ok "rampartd starts with the shared bind refused"
grep 'UMEM' "$LAB_TMP/rampartd.err" | sed 's/^/# /'
check_eq "-v: two UMEMs, the worker's and the refused socket's" "$(lab_umems)" 2
check "-v: says the kernel refused it, and why, and that forwarding copies" \
	grep -q "^rampartd: $FW_IF_S queue 0 UMEM: 4096 frames of 4096 B, its own: the kernel refused the shared UMEM (Operation not supported); forwarding to or from it copies once" \
	"$LAB_TMP/rampartd.err"
ctl --json status >"$LAB_TMP/status3.json"
check_eq "status: $FW_IF_S's UMEM is its own, the kernel's reason given" \
	"$(json_get "[i['umem'] + '/' + i['umem_reason'] for i in d['interfaces']][1]" <"$LAB_TMP/status3.json")" \
	"own/kernel refused: Operation not supported"
check "ping through the fallback" quiet lab_in cli ping -q -n -c "$PINGS" -i 0.1 -W 2 10.10.0.2
check "HTTP through the fallback" bash -c "ip netns exec $(lab_nsname cli) curl -s --max-time 5 \
	http://10.10.0.2:8080/index.txt | grep -q hello"
sent_counts "$LAB_TMP/w3.txt" "refused shared bind"
check "fallback: forwarded frames were copied ($cp)" test "${cp:-0}" -ge $((2 * PINGS))
check_eq "fallback: by address + copied = tx" "$((by + cp))" "$tx"
lab_rampartd_stop

if [ "$LAB_FAILED" -ne 0 ]; then
	echo "--- rampartd stderr ---" >&2; cat "$LAB_TMP/rampartd.err" >&2
fi
lab_summary
