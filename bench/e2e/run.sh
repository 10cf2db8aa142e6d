#!/usr/bin/env bash
# The end-to-end lab benchmark (issue 8): generator -- firewall -- sink,
# three network namespaces on veth pairs, 64 B UDP from trafgen, and the
# contenders measured in interleaved rounds (G A B C D G A B C D ...):
#   G  the generator alone: trafgen into the firewall's veth, whose kernel
#      drops every frame (nothing forwards): what trafgen can offer
#   A  xdpfwd: policy-free AF_XDP L2 forwarder on our xsk/ code (ceiling)
#   B  rampartd --backend xsk, router mode, the policy below
#   C  rampartd --backend dpdk on net_af_xdp (same policy), if built in
#   D  Linux forwarding in the firewall namespace, nftables holding the
#      same policy as a linear chain (bench/e2e/yaml2nft.py)
#   E  (--best) the same, nft's "best form": the accepts in one interval set
#   B2 (--workers "1 2") rampartd --backend xsk with 2 workers on 2 queues
#      (veths with 2 RX/TX queues; XPS spreads the generator's flows over
#      both, while for every other contender it keeps them on queue 0)
# Policy: ClassBench acl1_10k (bench/classbench2yaml.py, its catch-all
# last rule left out: it would accept everything), then a stateful accept
# of the generated traffic last (every packet of a new flow walks all the
# rules), masquerade on the sink side, default drop.
# Rates: delivered = the sink veth's RX packet counter (ip -s -j link),
# offered = what trafgen says it sent; both over trafgen's run time;
# for rampartd, the part of the loss the kernel or PMD dropped before a
# worker saw it (rampartctl stats --json: rx_missed).
# Writes results/STAMP.md and, if gnuplot is installed, results/STAMP.png
# (delivered pps per contender, median and min-max of the rounds).
# Not a test: no timing assertion, not run by CI. Numbers go to
# docs/PERFORMANCE.md with the caveats (veth, copy mode, 2 vCPUs).
#   bench/e2e/run.sh [--rounds N] [--seconds S] [--flows "1 10000"]
#                    [--contenders "G A B C D"] [--best] [--size 64]
#                    [--workers "1 2"]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
. "$SRC/tests/lab/lib.sh"

ROUNDS=5 SECONDS_PER=3 FLOWS="1 10000" CONTENDERS="G A B C D" SIZE=64 WORKERS=1
CLASSBENCH=${CLASSBENCH:-/work/shared/data/classbench/acl1_10k}
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) ROUNDS=$2; shift 2 ;;
	--seconds) SECONDS_PER=$2; shift 2 ;;
	--flows) FLOWS=$2; shift 2 ;;
	--contenders) CONTENDERS=$2; shift 2 ;;
	--best) BEST=1; shift ;;
	--size) SIZE=$2; shift 2 ;;
	--workers) WORKERS=$2; shift 2 ;;
	*) echo "usage: $0 [--rounds N] [--seconds S] [--flows LIST] [--contenders LIST] [--best] [--size BYTES] [--workers \"1 2\"]" >&2; exit 2 ;;
	esac
done
[ "${BEST:-0}" = 1 ] && CONTENDERS="$CONTENDERS E"
# QUEUES: RX/TX queues of every veth, the most workers asked for
QUEUES=1
for w in $WORKERS; do
	case "$w" in
	1) ;;
	2) QUEUES=2
	   if [[ " $CONTENDERS " == *" B "* ]]; then CONTENDERS=${CONTENDERS/B/B B2}; else CONTENDERS="$CONTENDERS B2"; fi ;;
	*) echo "--workers: 1 and 2 only (2 vCPUs here)" >&2; exit 2 ;;
	esac
done
export RAMPART_BUILD_DIR=${RAMPART_BUILD_DIR:-$SRC/build}
XDPFWD=$RAMPART_BUILD_DIR/bench/xdpfwd
N=87			# 10.87.1.0/24 generator side, 10.87.2.0/24 sink side
GEN_CPU=0 FW_CPU=1

lab_init e2e
lab_rampart_bins || exit 1
[ -x "$XDPFWD" ] || { echo "no xdpfwd at $XDPFWD (scripts/build.sh release)" >&2; exit 1; }
command -v trafgen >/dev/null || { echo "trafgen (netsniff-ng) not installed" >&2; exit 1; }
command -v nft >/dev/null || { echo "nft (nftables) not installed" >&2; exit 1; }
if [[ " $CONTENDERS " == *" C "* ]] && ! lab_has_dpdk; then
	echo "# rampartd built without DPDK: contender C left out"
	CONTENDERS=${CONTENDERS/C/}
fi

[ "$QUEUES" -gt 1 ] && export LAB_VETH_QUEUES=$QUEUES
lab_router_setup $N || { echo "lab set-up failed" >&2; exit 1; }
GEN_NS=$(lab_nsname cli) FW_NS=$(lab_nsname fw) SINK_NS=$(lab_nsname srv)
mac_of() { lab_in "$1" cat "/sys/class/net/$2/address"; }
GEN_MAC=$(mac_of cli "$CLI_IF") SINK_MAC=$(mac_of srv "$SRV_IF")
FWC_MAC=$(mac_of fw "$FW_IF_C") FWS_MAC=$(mac_of fw "$FW_IF_S")
# Static neighbours everywhere: net_af_xdp's program takes ARP too, and no
# contender should spend the run resolving.
lab_in cli ip neigh replace 10.$N.1.1 lladdr "$FWC_MAC" dev "$CLI_IF" nud permanent
lab_in srv ip neigh replace 10.$N.2.1 lladdr "$FWS_MAC" dev "$SRV_IF" nud permanent
lab_in fw ip neigh replace 10.$N.1.2 lladdr "$GEN_MAC" dev "$FW_IF_C" nud permanent
lab_in fw ip neigh replace 10.$N.2.2 lladdr "$SINK_MAC" dev "$FW_IF_S" nud permanent
# The sink only counts: no ICMP port-unreachable going back upstream.
lab_in srv sysctl -qw net.ipv4.icmp_msgs_per_sec=0 net.ipv4.icmp_msgs_burst=0 2>/dev/null
# veth has no queue: a pfifo holds trafgen's bursts (test_soak.sh); with
# several TX queues, one pfifo each under mq.
if [ "$QUEUES" = 1 ]; then
	lab_in cli tc qdisc replace dev "$CLI_IF" root pfifo limit 4096
else
	lab_in cli tc qdisc replace dev "$CLI_IF" root handle 1: mq
	for q in $(seq 1 "$QUEUES"); do
		lab_in cli tc qdisc replace dev "$CLI_IF" parent "1:$(printf %x "$q")" pfifo limit 4096
	done
fi
# Which TX queue of the generator's veth a frame takes is the RX queue it
# reaches in the firewall (veth). XPS, every CPU to queues 0..W-1: with
# W = 1 all frames take queue 0 (the one queue xdpfwd and a 1-worker
# rampartd serve); with W = 2 the kernel picks between queues 0 and 1 by
# the flow's hash, so 10,000 flows spread over both workers (1 flow: one
# queue only).
gen_queues() {	# W
	local q cpus
	[ "$QUEUES" = 1 ] && return 0
	cpus=$(printf '%x' $(((1 << $(nproc)) - 1)))
	for q in $(seq 0 $((QUEUES - 1))); do
		lab_in cli sh -c "echo $([ "$q" -lt "$1" ] && echo "$cpus" || echo 0) \
			>/sys/class/net/$CLI_IF/queues/tx-$q/xps_cpus" || return 1
	done
}
lab_in fw sysctl -qw net.ipv4.ip_forward=0

# ---- the policy, for AF_XDP (veth names) and DPDK (EAL port names) ----
policy() {	# IF_INSIDE IF_OUTSIDE
	"$LAB_PY" "$SRC/bench/classbench2yaml.py" "$CLASSBENCH" | "$LAB_PY" -c '
import sys
lines = sys.stdin.read().split("\n")
# drop the defaults line and a last catch-all rule (name + action only)
lines = [l for l in lines if not l.startswith("defaults:")]
while lines and lines[-1] == "": lines.pop()
if lines[-1].strip() == "action: accept" and lines[-2].strip().startswith("- name:"):
    lines = lines[:-2]
print("\n".join(lines))'
	cat <<YAML
  - {name: e2e-udp, proto: udp, from: {zone: inside, network: 10.$N.1.0/24}, to: {zone: outside, network: 10.$N.2.2, port: 9}, action: accept}
zones:
  inside: [$1]
  outside: [$2]
nat:
  - {name: masq4, match: {from: {zone: inside}, to: {zone: outside}, family: ipv4}, snat: {to: masquerade}}
routes:
  - {prefix: 10.$N.1.0/24, interface: $1}
  - {prefix: 10.$N.2.0/24, interface: $2}
defaults: {action: drop, stateful: true}
YAML
}
P0=net_af_xdp0 P1=net_af_xdp1
policy "$FW_IF_C" "$FW_IF_S" >"$LAB_TMP/xsk.yaml"
policy $P0 $P1 >"$LAB_TMP/dpdk.yaml"
RULES=$(grep -c -e '^  - name:' -e '^  - {name: e2e-udp' "$LAB_TMP/xsk.yaml")
RAMPART_TEST_RFW='' lab_compile "$LAB_TMP/xsk.yaml" "$LAB_TMP/xsk.rfw" >/dev/null 2>"$LAB_TMP/rulec.err" || { cat "$LAB_TMP/rulec.err"; exit 1; }
RAMPART_TEST_RFW='' lab_compile "$LAB_TMP/dpdk.yaml" "$LAB_TMP/dpdk.rfw" >/dev/null 2>"$LAB_TMP/rulec.err" || { cat "$LAB_TMP/rulec.err"; exit 1; }
"$LAB_PY" "$HERE/yaml2nft.py" "$LAB_TMP/xsk.yaml" --form linear >"$LAB_TMP/linear.nft" || exit 1
if [[ " $CONTENDERS " == *" E "* ]]; then
	"$LAB_PY" "$HERE/yaml2nft.py" "$LAB_TMP/xsk.yaml" --form set >"$LAB_TMP/set.nft" || exit 1
fi
echo "# policy: $RULES rules ($(basename "$CLASSBENCH") without its catch-all, + e2e-udp), stateful, masquerade"
[[ " $CONTENDERS " == *" C "* ]] && lab_dpdk_eal

trafgen_conf() {	# DST_MAC FLOWS
	local sp=10000
	[ "$2" -gt 1 ] && sp="dinc(10000, $((10000 + $2 - 1)))"
	cat <<CFG
{
  eth(da=$1, sa=$GEN_MAC),
  ipv4(sa=10.$N.1.2, da=10.$N.2.2, ttl=64),
  udp(sp=$sp, dp=9),
  fill(0x00, $((SIZE - 14 - 20 - 8 - 4)))
}
CFG
}
# (the pfifos only: mq's own line is their sum)
qdisc_drops() { tc -n "$GEN_NS" -s -j qdisc show dev "$CLI_IF" |
	"$LAB_PY" -c 'import json,sys; print(sum(q.get("drops", 0) for q in json.load(sys.stdin) if q["kind"] == "pfifo"))'; }
# delivered: the sink's veth; for G, the firewall's (its kernel drops them)
rx_packets() {	# CONTENDER
	local ns=$SINK_NS dev=$SRV_IF
	[ "$1" = G ] && ns=$FW_NS dev=$FW_IF_C
	ip -n "$ns" -s -j link show "$dev" |
		"$LAB_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["packets"])'
}

# ---- starting and stopping each contender (in the firewall namespace) ----
FWPID=""
start_A() {
	ip netns exec "$FW_NS" "$XDPFWD" "$FW_IF_C" "$FW_IF_S" --cpu $FW_CPU --seconds 120 \
		>"$LAB_TMP/fw.out" 2>"$LAB_TMP/fw.err" </dev/null &
	FWPID=$!; LAB_PIDS+=("$FWPID")
	lab_wait_for 20 grep -q '^xdpfwd: forwarding' "$LAB_TMP/fw.err"
}
start_G() { FWPID=""; }
start_B() {
	lab_rampartd_run routing --policy "$LAB_TMP/xsk.rfw" --interface "$FW_IF_C" \
		--interface "$FW_IF_S" --mode router --backend xsk --queues 1 --cores $FW_CPU \
		--foreground --control "$LAB_TMP/rampartd.sock" || return 1
	FWPID=$RAMPARTD_PID
}
# worker 0 (queue 0) on the firewall's CPU as in B, worker 1 on the
# generator's: with 2 vCPUs there is no third. E2E_B2_ARGS: more rampartd
# options for B2 (e.g. --handoff off, to compare)
start_B2() {
	lab_rampartd_run routing --policy "$LAB_TMP/xsk.rfw" --interface "$FW_IF_C" \
		--interface "$FW_IF_S" --mode router --backend xsk --queues 2 --cores $FW_CPU,$GEN_CPU \
		--foreground --control "$LAB_TMP/rampartd.sock" ${E2E_B2_ARGS:-} || return 1
	FWPID=$RAMPARTD_PID
}
start_C() {
	lab_rampartd_run routing --policy "$LAB_TMP/dpdk.rfw" \
		--interface $P0 --interface $P1 --mode router --backend dpdk \
		--control "$LAB_TMP/rampartd.sock" \
		--port-addr "$P0=$FWC_MAC,10.$N.1.1" --port-addr "$P1=$FWS_MAC,10.$N.2.1" \
		--neighbor "$P0=10.$N.1.2=$GEN_MAC" --neighbor "$P1=10.$N.2.2=$SINK_MAC" \
		-- -l $GEN_CPU,$FW_CPU $EAL_MEM $EAL_COMMON \
		--vdev "$P0,iface=$FW_IF_C,force_copy=1" --vdev "$P1,iface=$FW_IF_S,force_copy=1" ||
		return 1
	FWPID=$RAMPARTD_PID
}
start_nft() {	# FILE: nft -f inputs separated by "# --- batch ---" lines
	local i
	rm -f "$LAB_TMP"/nft.part.*
	awk -v p="$LAB_TMP/nft.part." '/^# --- batch ---$/ { n++; next } { print > (p sprintf("%04d", n)) }' "$1"
	for i in "$LAB_TMP"/nft.part.*; do
		lab_in fw nft -f "$i" || return 1
	done
	lab_in fw sysctl -qw net.ipv4.ip_forward=1
	FWPID=""
}
start_D() { start_nft "$LAB_TMP/linear.nft"; }
start_E() { start_nft "$LAB_TMP/set.nft"; }
stop_fw() {
	if [ -n "$FWPID" ]; then
		kill -TERM "$FWPID" 2>/dev/null
		lab_wait_gone "$FWPID" 15 || kill -KILL "$FWPID" 2>/dev/null
		wait "$FWPID" 2>/dev/null
		FWPID=""
	fi
	lab_in fw sysctl -qw net.ipv4.ip_forward=0
	lab_in fw nft delete table inet rampart_e2e 2>/dev/null
	# no conntrack state carried from one nft measurement to the next
	lab_in fw sysctl -qw net.netfilter.nf_conntrack_max=262144 2>/dev/null
	return 0
}
dst_mac() { [ "$1" = A ] && echo "$SINK_MAC" || echo "$FWC_MAC"; }
# what each worker received, from rampartd's final counters ("worker ID
# QUEUE CPU RX TX ..."): "rx0/rx1/..." or "-"
worker_rx() {
	case "$1" in B*) ;; *) echo -; return ;; esac
	awk '$1 == "worker" && $2 ~ /^[0-9]+$/ { s = s (s == "" ? "" : "/") $5 } END { print (s == "" ? "-" : s) }' \
		"$LAB_TMP/rampartd.out" 2>/dev/null
}

# frames the kernel or the PMD dropped before a worker saw them, summed
# over both ports (rampartctl stats: rx_missed; rampartd is started for
# each measurement, so these are the measurement's): a number, or "-"
pre_worker_missed() {
	case "$1" in B* | C) ;; *) echo -; return ;; esac
	"$RAMPARTCTL" --control "$LAB_TMP/rampartd.sock" stats --json 2>/dev/null |
		"$LAB_PY" -c 'import json, sys; print(sum(i["rx_missed"] for i in json.load(sys.stdin)["interfaces"]))' \
		2>/dev/null || echo -
}

# ---- one measurement: CONTENDER FLOWS -> a line in $LAB_TMP/raw ----
measure() {
	local c=$1 flows=$2 round=$3 rx0 rx1 t0 t1 sent qd0 qd1 w=1 load wrx missed
	[ "$c" = B2 ] && w=2
	gen_queues $w || return 1
	load=$(cut -d' ' -f1 /proc/loadavg)
	if ! "start_$c"; then
		echo "# $c did not start:" >&2; tail -5 "$LAB_TMP/rampartd.err" "$LAB_TMP/fw.err" 2>/dev/null >&2
		stop_fw; return 1
	fi
	trafgen_conf "$(dst_mac "$c")" "$flows" >"$LAB_TMP/t.cfg"
	sleep 0.5
	qd0=$(qdisc_drops); rx0=$(rx_packets "$c"); t0=$(date +%s.%N)
	# bounded: timeout ends trafgen (SIGINT: it prints its totals)
	timeout -s INT "$SECONDS_PER" ip netns exec "$GEN_NS" taskset -c $GEN_CPU \
		trafgen --dev "$CLI_IF" --conf "$LAB_TMP/t.cfg" --qdisc-path --cpus 1 \
		>"$LAB_TMP/trafgen.out" 2>&1
	t1=$(date +%s.%N)
	sleep 0.5
	rx1=$(rx_packets "$c"); qd1=$(qdisc_drops)
	missed=$(pre_worker_missed "$c")
	stop_fw
	wrx=$(worker_rx "$c")
	sent=$(grep -ao '[0-9]* packets outgoing' "$LAB_TMP/trafgen.out" | tail -1 | cut -d' ' -f1)
	[ -n "$sent" ] || { echo "# no trafgen total:" >&2; tail -3 "$LAB_TMP/trafgen.out" >&2; return 1; }
	echo "$c $flows $sent $((rx1 - rx0)) $t0 $t1 $round $((qd1 - qd0)) $wrx $load $missed" >>"$LAB_TMP/raw"
	"$LAB_PY" -c "import sys; s,r,d=$sent,$((rx1 - rx0)),$t1-$t0; print('# %-2s %5s flows: offered %9.0f pps, delivered %9.0f pps, loss %5.1f%% (%.1f%% in the generator qdisc), lost before a worker $missed, workers rx $wrx, load $load' % ('$c', $flows, s/d, r/d, 100*(1-r/max(s,1)), 100*$((qd1 - qd0))/max(s,1)))"
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
echo "# $ROUNDS rounds of $CONTENDERS, $SECONDS_PER s each, flows: $FLOWS, $SIZE B frames; load average $LOAD0"
: >"$LAB_TMP/raw"
for r in $(seq 1 "$ROUNDS"); do
	for flows in $FLOWS; do
		for c in $CONTENDERS; do
			measure "$c" "$flows" "$r"
		done
	done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- the table, and the chart's data ----
mkdir -p "$HERE/results"
STAMP=$(date -u +%Y-%m-%d-%H%M)
OUT="$HERE/results/$STAMP.md" PNG="$HERE/results/$STAMP.png"
"$LAB_PY" - "$LAB_TMP/raw" "$SIZE" "$ROUNDS" "$SECONDS_PER" "$LOAD0" "$LOAD1" "$START" "$RULES" \
	"$LAB_TMP/chart" "$PNG" "$WORKERS" "${E2E_B2_ARGS:-}" >"$OUT" <<'PY'
import statistics, sys
raw, size, rounds, secs, load0, load1, start, rules, chart, png, workers, b2args = sys.argv[1:13]
order = ["G", "A", "B", "B2", "C", "D", "E"]
names = {"G": "G generator alone (firewall kernel drops; offered capacity, no forwarding)",
         "A": "A xdpfwd (AF_XDP L2 forwarder, no policy: ceiling)",
         "B": "B rampartd, AF_XDP (router, policy), 1 worker",
         "B2": "B2 rampartd, AF_XDP (router, policy), 2 workers (CPUs 1 and 0, CPU 0 shared with the generator)",
         "C": "C rampartd, DPDK net_af_xdp (router, policy)",
         "D": "D Linux forwarding + nftables, linear chain",
         "E": "E Linux forwarding + nftables, interval set"}
short = {"G": "G generator alone (offered)", "A": "A xdpfwd (ceiling)", "B": "B rampartd xsk 1w",
         "B2": "B2 rampartd xsk 2w", "C": "C rampartd DPDK", "D": "D nft linear", "E": "E nft sets"}
data, by_round, wrx, loads = {}, {}, {}, []
missed = {}
for line in open(raw):
    c, flows, sent, rx, t0, t1, rnd, qd, w, load, miss = line.split()
    d = float(t1) - float(t0)
    data.setdefault((int(flows), c), []).append((int(sent) / d, int(rx) / d, int(sent), int(rx), int(qd)))
    if miss != "-":
        missed.setdefault((int(flows), c), []).append(100.0 * int(miss) / max(int(sent), 1))
    by_round[(int(flows), c, rnd)] = int(rx) / d
    loads.append(float(load))
    if w != "-":
        wrx.setdefault((int(flows), c), []).append([int(x) for x in w.split("/")])
flowset = sorted({k[0] for k in data})
print("Run %s, %s B UDP, %s rounds x %s s per contender, interleaved; policy %s rules "
      "(ClassBench acl1_10k + stateful accept, masquerade); veths with %s queue(s); "
      "load average %s at start, %s at end; 1-minute load average before each measurement "
      "%.2f - %.2f (median %.2f)."
      % (start, size, rounds, secs, rules, "2" if "2" in workers.split() else "1",
         load0, load1, min(loads), max(loads), statistics.median(loads)))
if b2args:
    print()
    print("B2 ran with these rampartd options too (E2E_B2_ARGS): `%s`." % b2args)
print()
print("Delivered: the sink veth's RX packet counter over trafgen's run time (G: the firewall "
      "veth's). Offered: trafgen's own count of frames sent. Loss: 1 - delivered/offered, median "
      "over rounds; the part of it dropped by the generator's pfifo is given apart. Ratio to "
      "ceiling: of the medians; paired: the median of each round's own ratio (contender / A in "
      "the same round). Before a worker: frames the kernel (AF_XDP) or the PMD (DPDK) dropped "
      "before rampartd's workers saw them, rampartctl stats' rx_missed over both ports, as a "
      "share of what was offered (median; '-' for contenders without such counters).")
print()
print("| flows | contender | delivered pps (median) | min - max | Gbit/s (L2, median) | ratio to ceiling (of medians) | paired ratio (median, min - max) | offered pps (median) | loss % (median) | of it in generator qdisc % | of it before a worker % |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
def paired(flows, c, ref):
    return [by_round[(flows, c, r)] / by_round[(flows, ref, r)] for (f, cc, r) in by_round
            if f == flows and cc == c and by_round.get((flows, ref, r))]
for flows in flowset:
    ceil = statistics.median(x[1] for x in data.get((flows, "A"), [(0, 0, 0, 0)]))
    for c in order:
        v = data.get((flows, c))
        if not v:
            continue
        rx = [x[1] for x in v]
        off = statistics.median(x[0] for x in v)
        loss = statistics.median(100 * (1 - x[3] / max(x[2], 1)) for x in v)
        med = statistics.median(rx)
        qd = statistics.median(100 * x[4] / max(x[2], 1) for x in v)
        pr = paired(flows, c, "A") if c != "G" else []
        mi = missed.get((flows, c))
        print("| %d | %s | %.0f | %.0f - %.0f | %.3f | %s | %s | %.0f | %.1f | %.1f | %s |" % (
            flows, names[c], med, min(rx), max(rx), med * int(size) * 8 / 1e9,
            "%.2f" % (med / ceil) if ceil and c != "G" else "-",
            "%.2f (%.2f - %.2f)" % (statistics.median(pr), min(pr), max(pr)) if pr else "-",
            off, loss, qd, "%.1f" % statistics.median(mi) if mi else "-"))
if any(c == "B2" for (f, c) in data):
    print()
    print("Scaling, rampartd AF_XDP 1 -> 2 workers (B -> B2). On 2 vCPUs the second worker runs "
          "on the generator's CPU, which also runs the XDP program and the copy into the UMEM "
          "for every frame (veth receives on the sender's CPU). Worker share: each worker's "
          "share of the frames rampartd received (its final counters), median over rounds.")
    print()
    print("| flows | B delivered pps (median) | B2 delivered pps (median) | B2/B (of medians) | B2/B paired (median, min - max) | B2 worker 0 / worker 1 share of received |")
    print("| --- | --- | --- | --- | --- | --- |")
    for flows in flowset:
        b, b2 = data.get((flows, "B")), data.get((flows, "B2"))
        if not b or not b2:
            continue
        mb, mb2 = statistics.median(x[1] for x in b), statistics.median(x[1] for x in b2)
        pr = paired(flows, "B2", "B")
        sh = [w[0] / max(sum(w), 1) for w in wrx.get((flows, "B2"), []) if len(w) == 2]
        print("| %d | %.0f | %.0f | %.2f | %s | %s |" % (
            flows, mb, mb2, mb2 / mb if mb else 0,
            "%.2f (%.2f - %.2f)" % (statistics.median(pr), min(pr), max(pr)) if pr else "-",
            "%.0f%% / %.0f%%" % (100 * statistics.median(sh), 100 - 100 * statistics.median(sh)) if sh else "-"))
# the chart: one group per contender, one bar per flow count, whiskers min-max
with open(chart + ".dat", "w") as f:
    for c in order:
        if not any((fl, c) in data for fl in flowset):
            continue
        row = ['"%s"' % short[c]]
        for fl in flowset:
            rx = [x[1] / 1e3 for x in data.get((fl, c), [])] or [0]
            row += ["%.1f" % statistics.median(rx), "%.1f" % min(rx), "%.1f" % max(rx)]
        f.write(" ".join(row) + "\n")
with open(chart + ".gp", "w") as f:
    f.write('set terminal pngcairo size 1100,560 font ",10"\n')
    f.write('set termoption noenhanced\n')
    f.write('set output "%s"\n' % png)
    f.write('set title "bench/e2e %s: %s B UDP, veth + copy-mode AF_XDP, 2 shared vCPUs\\n'
            'delivered packets/s, median of %s rounds x %s s (whiskers: min - max); '
            'load average %s at start"\n' % (start, size, rounds, secs, load0.split()[0]))
    f.write('set ylabel "thousand packets/s delivered"\nset yrange [0:*]\nset grid ytics\n')
    f.write('set style data histogram\nset style histogram errorbars gap 2 lw 1\n')
    f.write('set style fill solid 0.6 border -1\nset boxwidth 0.9\nset key top right\n')
    f.write('set xtics rotate by -20 scale 0\n')
    plots = []
    for i, fl in enumerate(flowset):
        col = 2 + 3 * i
        plots.append("'%s.dat' using %d:%d:%d%s title '%d flow%s'" % (
            chart, col, col + 1, col + 2, ":xtic(1)" if i == 0 else "", fl, "" if fl == 1 else "s"))
    f.write("plot " + ", \\\n     ".join(plots) + "\n")
PY
echo
cat "$OUT"
echo
echo "# written to $OUT"
if command -v gnuplot >/dev/null; then
	gnuplot "$LAB_TMP/chart.gp" && echo "# chart: $PNG"
else
	echo "# no gnuplot: chart left out (apt-get install gnuplot-nox, or scripts/install-deps.sh)"
fi
