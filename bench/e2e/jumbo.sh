#!/usr/bin/env bash
# TCP through rampartd (AF_XDP, router mode, one worker) at two MTUs:
# what multi-buffer jumbo frames give and cost on this machine. Three
# namespaces on veth pairs (client -- firewall -- server), every link at
# the MTU under test, iperf3 client to server for S seconds, R rounds per
# MTU, the MTUs interleaved. Prints one line per run: MTU, Gbit/s
# received, retransmits, segments the firewall's worker received and
# sent (rampartctl stats), and its frames joined from chains.
# Not a test: no timing assertion, not run by CI.
#   bench/e2e/jumbo.sh [--rounds R] [--seconds S] [--mtus "1500 9000"]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
. "$SRC/tests/lab/lib.sh"

ROUNDS=3 SECS=5 MTUS="1500 9000"
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) ROUNDS=$2; shift 2 ;;
	--seconds) SECS=$2; shift 2 ;;
	--mtus) MTUS=$2; shift 2 ;;
	*) echo "usage: $0 [--rounds R] [--seconds S] [--mtus \"1500 9000\"]" >&2; exit 2 ;;
	esac
done
export RAMPART_BUILD_DIR=${RAMPART_BUILD_DIR:-$SRC/build}
N=24
lab_init bjm
lab_rampart_bins || exit 1
lab_router_setup $N || exit 1
cat >"$LAB_TMP/p.yaml" <<YAML
version: 1
zones: {inside: [$FW_IF_C], outside: [$FW_IF_S]}
rules:
  - {name: iperf, proto: tcp, from: {zone: inside}, to: {zone: outside, port: 5201}, action: accept}
defaults: {action: drop, stateful: true}
routes:
  - {prefix: 10.$N.1.0/24, interface: $FW_IF_C}
  - {prefix: 10.$N.2.0/24, interface: $FW_IF_S}
YAML
lab_compile "$LAB_TMP/p.yaml" "$LAB_TMP/p.rfw" >/dev/null || exit 1
lab_router_neighbours $N >/dev/null || exit 1
lab_bg srv "$LAB_TMP/iperf.log" iperf3 -s -B 10.$N.2.2
lab_wait_for 10 lab_port_listening srv tcp 5201 || exit 1
LAB_CONTROL=$LAB_TMP/c.sock
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, $(uname -r), veth copy mode, 1 worker, $SECS s x $ROUNDS rounds"
echo "# mtu gbit_s retransmits fw_rx_packets fw_tx_packets"
for r in $(seq 1 "$ROUNDS"); do
	for mtu in $MTUS; do
		for x in "cli $CLI_IF" "fw $FW_IF_C" "fw $FW_IF_S" "srv $SRV_IF"; do
			set -- $x
			lab_in "$1" ip link set "$2" mtu "$mtu"
		done
		lab_rampartd_run routing --policy "$LAB_TMP/p.rfw" --interface "$FW_IF_C" \
			--interface "$FW_IF_S" --mode router --foreground --queues 1 \
			--control "$LAB_CONTROL" || { cat "$LAB_TMP/rampartd.err" >&2; exit 1; }
		lab_in cli timeout $((SECS + 15)) iperf3 -c 10.$N.2.2 -t "$SECS" -J >"$LAB_TMP/r.json" 2>&1
		"$RAMPARTCTL" --control "$LAB_CONTROL" --json stats >"$LAB_TMP/s.json"
		kill -TERM "$RAMPARTD_PID"; lab_wait_gone "$RAMPARTD_PID" 10
		"$LAB_PY" - "$mtu" "$LAB_TMP/r.json" "$LAB_TMP/s.json" <<'PY'
import json, sys
mtu, r, s = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
e = r["end"]
rx = sum(i["rx_packets"] for i in s["interfaces"])
tx = sum(i["tx_packets"] for i in s["interfaces"])
print(mtu, round(e["sum_received"]["bits_per_second"] / 1e9, 2), e["sum_sent"].get("retransmits", 0), rx, tx)
PY
	done
done
