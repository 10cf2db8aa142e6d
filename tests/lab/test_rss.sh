#!/bin/bash
# Lab test of rampartd --home rss: flows homed on the worker of the queue
# the NIC's symmetric RSS sends them to, so they are not handed between
# workers. veth has no RSS of its own (a frame arrives on the RX queue of
# the sender's TX queue), so the hosts play the NIC: a tc egress program
# on each host's link to rampart (tests/lab/rss_nic.bpf.c) picks the
# queue as a NIC with the 6d:5a key and Linux's default indirection
# table would, computed bit by bit from Microsoft's definition, not with
# rampart's code. Router with four queues (four workers on two cores),
# masquerade both families: UDP request/reply flows and HTTP fetches,
# then fragmented datagrams.
# With --home rss no frame is handed over; with the keyed hash (the
# default) most are. Also: what --home rss refuses, and its -v and
# status lines.
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_rss.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

N=24
NQ=4
FLOWS=64
FETCHES=8
# Microsoft's verification key: a fine key, but not a symmetric one
MS_KEY=6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb:ae:7b:30:b4:77:cb:2d:a3:80:30:f2:0c:6a:42:b7:3b:be:ac:01:fa

ctl() { "$RAMPARTCTL" --control "$LAB_CONTROL" "$@"; }

write_policy() {
	cat >"$1" <<YAML
version: 1
zones:
  inside: [$FW_IF_C]
  outside: [$FW_IF_S]
nat:
  - {name: masq4, match: {from: {zone: inside}, to: {zone: outside}, family: ipv4}, snat: {to: masquerade}}
  - {name: masq6, match: {from: {zone: inside}, to: {zone: outside}, family: ipv6}, snat: {to: masquerade}}
rules:
  - {name: web-out, proto: tcp, from: {zone: inside}, to: {zone: outside, port: 8080}, action: accept}
  - {name: udp-out, proto: udp, from: {zone: inside}, to: {zone: outside, port: 9000}, action: accept}
defaults: {action: drop, stateful: true}
routes:
  - {prefix: 10.$N.1.0/24, interface: $FW_IF_C}
  - {prefix: 10.$N.2.0/24, interface: $FW_IF_S}
  - {prefix: "fd00:$N:1::/64", interface: $FW_IF_C}
  - {prefix: "fd00:$N:2::/64", interface: $FW_IF_S}
YAML
}

# the hosts' side of both links: frames leave on the queue RSS picks
play_nic() {
	clang -O2 -target bpf -DNQ=$NQ -I"/usr/include/$(gcc -print-multiarch)" \
		-c "$HERE/rss_nic.bpf.c" -o "$LAB_TMP/rss_nic.o" || return 1
	lab_in cli tc qdisc add dev "$CLI_IF" clsact &&
		lab_in cli tc filter add dev "$CLI_IF" egress bpf da obj "$LAB_TMP/rss_nic.o" sec tc &&
		lab_in srv tc qdisc add dev "$SRV_IF" clsact &&
		lab_in srv tc filter add dev "$SRV_IF" egress bpf da obj "$LAB_TMP/rss_nic.o" sec tc
}

start_router() {
	LAB_CONTROL=$LAB_TMP/rampartd.sock
	lab_rampartd_run routing --policy "$LAB_TMP/rss.rfw" --interface "$FW_IF_C" \
		--interface "$FW_IF_S" --mode router --queues $NQ --cores 0,1,0,1 --foreground -v \
		--control "$LAB_CONTROL" "$@"
}

# rampartd ARGS... refused at start: exit status 2 and MESSAGE in stderr
refused() {
	local msg=$1 rc; shift
	timeout 20 ip netns exec "$(lab_nsname fw)" "$RAMPARTD" --policy "$LAB_TMP/rss.rfw" \
		--interface "$FW_IF_C" --interface "$FW_IF_S" --mode router --queues $NQ \
		--foreground --control "$LAB_TMP/refused.sock" "$@" \
		>/dev/null 2>"$LAB_TMP/refused.err" </dev/null
	rc=$?
	check_eq "  exit status 2" "$rc" 2
	check "  says: $msg" grep -q -- "$msg" "$LAB_TMP/refused.err"
	check_not "  no XDP program left on the ports" lab_xdp_attached
}

# UDP request/reply flows and HTTP fetches through masquerade, both
# families; then the workers block in $LAB_TMP/w.$1.
traffic() {
	local addr n i ok
	for addr in 10.$N.2.2 fd00:$N:2::2; do
		n=$(lab_in cli "$LAB_PY" "$LAB_TMP/flows.py" "$addr" 9000 $FLOWS)
		check "$1: $FLOWS UDP flows through masquerade to $addr (${n:-0} echoed)" \
			test "${n:-0}" -eq $FLOWS
		ok=0
		for i in $(seq $FETCHES); do
			lab_in cli curl -s -g --max-time 3 "http://${addr/*:*/[$addr]}:8080/page.txt" |
				grep -q hello && ok=$((ok + 1))
		done
		check_eq "$1: $FETCHES HTTP fetches through masquerade from $addr" "$ok" $FETCHES
	done
	lab_workers_block "$LAB_TMP/w.$1" || not_ok "$1: the workers block"
	# then datagrams of 3,000 bytes: fragments, which a NIC hashes by
	# addresses (handed to their flow's worker, so after the block above)
	for addr in 10.$N.2.2 fd00:$N:2::2; do
		n=$(lab_in cli "$LAB_PY" "$LAB_TMP/flows.py" "$addr" 9000 16 3000)
		check "$1: 16 UDP flows of 3000-byte datagrams (fragments) to $addr (${n:-0} echoed)" \
			test "${n:-0}" -eq 16
	done
}

# sum of a workers-block column: 5 rx_packets, 10 handed_off
column() { awk -v c="$2" '$1 == "worker" && $2 ~ /^[0-9]+$/ { s += $c } END { print s + 0 }' "$1"; }

lab_init rss
lab_rampart_bins || { not_ok "rampartd built"; lab_summary; exit 1; }
LAB_VETH_QUEUES=$NQ lab_router_setup $N || { not_ok "lab set up"; lab_summary; exit 1; }
quiet lab_router_neighbours $N || not_ok "neighbours reachable before rampartd"
write_policy "$LAB_TMP/rss.yaml"
lab_compile "$LAB_TMP/rss.yaml" "$LAB_TMP/rss.rfw" || { not_ok "policy compiles"; lab_summary; exit 1; }
check "the hosts play a NIC with symmetric RSS (tc egress, $NQ queues)" play_nic
echo hello >"$LAB_TMP/page.txt"
lab_write_udp_tool
lab_write_flows_tool
lab_bg srv "$LAB_TMP/echo4.log" "$LAB_PY" "$LAB_TMP/udp.py" echo 10.$N.2.2 9000
lab_bg srv "$LAB_TMP/echo6.log" "$LAB_PY" "$LAB_TMP/udp.py" echo fd00:$N:2::2 9000
lab_bg srv "$LAB_TMP/http4.log" "$LAB_PY" -m http.server 8080 --bind 10.$N.2.2 --directory "$LAB_TMP"
lab_bg srv "$LAB_TMP/http6.log" "$LAB_PY" -m http.server 8080 --bind fd00:$N:2::2 --directory "$LAB_TMP"
lab_wait_for 10 lab_port_listening srv udp 9000 && lab_wait_for 10 lab_port_listening srv tcp 8080 ||
	not_ok "servers listening"

echo "# --home rss refused where the NIC's hash cannot be followed"
echo "# a veth says nothing of its RSS, and no --rss-key:"
refused "does not report its RSS key" --home rss
echo "# a key that is not symmetric:"
refused "not symmetric" --home rss --rss-key "$MS_KEY"

# usage errors: exit status 1 before anything is touched
usage_error() {	# MESSAGE ARGS...
	local msg=$1 rc; shift
	ip netns exec "$(lab_nsname fw)" "$RAMPARTD" --policy "$LAB_TMP/rss.rfw" \
		--interface "$FW_IF_C" --interface "$FW_IF_S" "$@" >/dev/null 2>"$LAB_TMP/usage.err"
	rc=$?
	check_eq "$* : exit status 1" "$rc" 1
	check "  says: $msg" grep -q -- "$msg" "$LAB_TMP/usage.err"
}
usage_error "unknown --home 'nic'" --home nic
usage_error "want 'symmetric' or up to" --home rss --rss-key 6d:5
usage_error "--rss-key is for --home rss" --rss-key symmetric
usage_error "not with --handoff off" --home rss --handoff off

echo "# --home rss --rss-key symmetric"
if start_router --home rss --rss-key symmetric; then
	ok "rampartd routing with --home rss"
	check "-v says the flows are homed by the NIC's RSS" \
		grep -q "TCP and UDP flows homed by the NIC's RSS (Toeplitz, key 6d:5a:6d:5a:.*, a table of 128 entries over $NQ queues)" \
		"$LAB_TMP/rampartd.err"
	ctl status >"$LAB_TMP/status.txt" 2>&1
	check "rampartctl status: handoff on, flows homed by RSS" \
		grep -q "^handoff: *on, $NQ workers, rings of [0-9]* frames; flows homed by RSS$" \
		"$LAB_TMP/status.txt"
	check_eq "rampartctl status --json: home \"rss\"" \
		"$(ctl --json status | "$LAB_PY" -c 'import json,sys; print(json.load(sys.stdin)["handoff"]["home"])')" rss
	traffic rss
	rx=$(column "$LAB_TMP/w.rss" 5); handed=$(column "$LAB_TMP/w.rss" 10)
	echo "# --home rss: $rx frames received, $handed handed over"; sed 's/^/# /' "$LAB_TMP/w.rss"
	check "every worker received frames: the NIC spread the flows" \
		test "$(awk '$1 == "worker" && $2 ~ /^[0-9]+$/ && $5 > 0' "$LAB_TMP/w.rss" | wc -l)" -eq $NQ
	check "the traffic reached rampartd ($rx frames)" test "$rx" -gt $((4 * FLOWS))
	check_eq "no frame handed between workers: each arrived on its flow's queue" "$handed" 0
	lab_rampartd_stop
else
	not_ok "rampartd routing with --home rss"; sed 's/^/# /' "$LAB_TMP/rampartd.err"
fi

echo "# the keyed hash (--home hash, the default), the same NIC"
if start_router; then
	ctl status >"$LAB_TMP/status.txt" 2>&1
	check "rampartctl status: flows homed by hash" \
		grep -q "^handoff: *on, $NQ workers, rings of [0-9]* frames; flows homed by hash$" \
		"$LAB_TMP/status.txt"
	traffic hash
	rx=$(column "$LAB_TMP/w.hash" 5); handed=$(column "$LAB_TMP/w.hash" 10)
	echo "# --home hash: $rx frames received, $handed handed over"
	# 3 in 4 of a random assignment's frames; a quarter is a wide margin
	check "most frames handed over ($handed of $rx)" test "$((4 * handed))" -gt "$rx"
	lab_rampartd_stop
else
	not_ok "rampartd routing with --home hash"; sed 's/^/# /' "$LAB_TMP/rampartd.err"
fi

lab_summary
