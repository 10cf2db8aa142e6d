#!/usr/bin/env bash
# TCP through rampartd (AF_XDP, router mode, masquerade) with several
# queues, flows homed by the keyed hash (--home hash) or by the NIC's RSS
# (--home rss): what frames handed between workers cost on this machine.
# veth has no RSS: the hosts play a NIC with symmetric RSS (the tc egress
# program of tests/lab/test_rss.sh, tests/lab/rss_nic.bpf.c). Three
# namespaces (client -- firewall -- server), iperf3 -P P client to
# server for S seconds, R rounds, the two homes interleaved. Prints one
# line per run: home, Gbit/s received, retransmits, frames the workers
# received, frames handed between them.
# Not a test: no timing assertion, not run by CI.
#   bench/e2e/rss.sh [--rounds R] [--seconds S] [--queues Q] [--streams P]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
. "$SRC/tests/lab/lib.sh"

ROUNDS=3 SECS=5 NQ=2 STREAMS=16
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) ROUNDS=$2; shift 2 ;;
	--seconds) SECS=$2; shift 2 ;;
	--queues) NQ=$2; shift 2 ;;
	--streams) STREAMS=$2; shift 2 ;;
	*) echo "usage: $0 [--rounds R] [--seconds S] [--queues Q] [--streams P]" >&2; exit 2 ;;
	esac
done
export RAMPART_BUILD_DIR=${RAMPART_BUILD_DIR:-$SRC/build}
N=25
lab_init brs
lab_rampart_bins || exit 1
LAB_VETH_QUEUES=$NQ lab_router_setup $N || exit 1
cat >"$LAB_TMP/p.yaml" <<YAML
version: 1
zones: {inside: [$FW_IF_C], outside: [$FW_IF_S]}
nat:
  - {name: masq, match: {from: {zone: inside}, to: {zone: outside}, family: ipv4}, snat: {to: masquerade}}
rules:
  - {name: iperf, proto: tcp, from: {zone: inside}, to: {zone: outside, port: 5201}, action: accept}
defaults: {action: drop, stateful: true}
routes:
  - {prefix: 10.$N.1.0/24, interface: $FW_IF_C}
  - {prefix: 10.$N.2.0/24, interface: $FW_IF_S}
YAML
lab_compile "$LAB_TMP/p.yaml" "$LAB_TMP/p.rfw" >/dev/null || exit 1
lab_router_neighbours $N >/dev/null || exit 1
clang -O2 -target bpf -DNQ="$NQ" -I"/usr/include/$(gcc -print-multiarch)" \
	-c "$SRC/tests/lab/rss_nic.bpf.c" -o "$LAB_TMP/rss_nic.o" || exit 1
for x in "cli $CLI_IF" "srv $SRV_IF"; do
	set -- $x
	lab_in "$1" tc qdisc add dev "$2" clsact &&
		lab_in "$1" tc filter add dev "$2" egress bpf da obj "$LAB_TMP/rss_nic.o" sec tc || exit 1
done
lab_bg srv "$LAB_TMP/iperf.log" iperf3 -s -B 10.$N.2.2
lab_wait_for 10 lab_port_listening srv tcp 5201 || exit 1
LAB_CONTROL=$LAB_TMP/c.sock
CORES=$(seq -s, 0 $((NQ - 1)) | awk -v n="$(nproc)" -F, '{for (i = 1; i <= NF; i++) $i = $i % n; print}' OFS=,)
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, $(uname -r), veth copy mode, $NQ queues and workers (--cores $CORES), iperf3 -P $STREAMS, $SECS s x $ROUNDS rounds"
echo "# home gbit_s retransmits fw_rx_frames handed_off"
for r in $(seq 1 "$ROUNDS"); do
	for home in hash rss; do
		extra=(--home "$home")
		[ "$home" = rss ] && extra+=(--rss-key symmetric)
		lab_rampartd_run routing --policy "$LAB_TMP/p.rfw" --interface "$FW_IF_C" \
			--interface "$FW_IF_S" --mode router --foreground --queues "$NQ" --cores "$CORES" \
			--control "$LAB_CONTROL" "${extra[@]}" || { cat "$LAB_TMP/rampartd.err" >&2; exit 1; }
		lab_in cli timeout $((SECS + 15)) iperf3 -c 10.$N.2.2 -P "$STREAMS" -t "$SECS" -J \
			>"$LAB_TMP/r.json" 2>&1
		"$RAMPARTCTL" --control "$LAB_CONTROL" --json stats --workers >"$LAB_TMP/s.json"
		kill -TERM "$RAMPARTD_PID"; lab_wait_gone "$RAMPARTD_PID" 10
		"$LAB_PY" - "$home" "$LAB_TMP/r.json" "$LAB_TMP/s.json" <<'PY'
import json, sys
home, r, s = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
e = r["end"]
w = s["workers"]
print(home, round(e["sum_received"]["bits_per_second"] / 1e9, 2), e["sum_sent"].get("retransmits", 0),
      sum(x["rx"] for x in w), sum(x["handed_off"] for x in w))
PY
	done
done
