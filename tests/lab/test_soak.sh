#!/usr/bin/env bash
# Sustained load through the AF_XDP bridge: 10,000,000 UDP frames from
# trafgen (64 B, 50,000 source ports) through rampartd, then every UMEM
# frame must be accounted for (free stack + fill ring + RX ring + TX in
# flight), the counters must add up (received = forwarded + dropped), and
# rampartd must still forward afterwards and stop cleanly.
set -u
cd "$(dirname "$0")"
. ./lib.sh

FRAMES=${SOAK_FRAMES:-10000000}

lab_init rps
# the ASan build forwards a few times slower: the same accounting over
# fewer frames (the release run keeps the 10,000,000)
lab_sanitized && [ -z "${SOAK_FRAMES:-}" ] && FRAMES=3000000
lab_rampart_bins || exit 1
lab_bridge_setup || { not_ok "lab set-up"; lab_summary; exit 1; }

cat > "$LAB_TMP/soak.yaml" <<'YAML'
version: 1
rules:
  - {name: soak, proto: udp, to: {network: 10.10.0.2, port: 9}, action: accept}
  - {name: ping, proto: icmp, action: accept}
defaults: {action: drop, stateful: false}
YAML
lab_compile "$LAB_TMP/soak.yaml" "$LAB_TMP/soak.rfw" >/dev/null || { not_ok "compile"; lab_summary; exit 1; }
lab_rampartd_start "$LAB_TMP/soak.rfw" -v || { not_ok "rampartd starts"; lab_summary; exit 1; }
ok "rampartd starts"

srv_mac=$(ip -n "$(lab_nsname srv)" -o link show "$SRV_IF" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
cli_mac=$(ip -n "$(lab_nsname cli)" -o link show "$CLI_IF" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
lab_trafgen_udp "$LAB_TMP/soak.trafgen" "$srv_mac" "$cli_mac" 10.10.0.1 10.10.0.2 9
rx_before=$(ip -n "$(lab_nsname srv)" -s -j link show "$SRV_IF" | "$LAB_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["packets"])')
# veth has no queue of its own: a full peer makes trafgen's sendto fail
# with EAGAIN. A pfifo holds the burst and drops (counted) past its limit.
lab_in cli tc qdisc replace dev "$CLI_IF" root pfifo limit 4096
start=$(date +%s)
# bounded: trafgen stops after FRAMES, timeout stops trafgen
lab_trafgen cli "$CLI_IF" "$LAB_TMP/soak.trafgen" "$FRAMES" "$LAB_TMP/trafgen.out"
rc=$?
secs=$(( $(date +%s) - start ))
check_eq "trafgen sent $FRAMES frames (exit status)" "$rc" 0
[ "$rc" -eq 0 ] || grep -v "system socket memory" "$LAB_TMP/trafgen.out" | sed "s/^/#   /"
sleep 1
rx_after=$(ip -n "$(lab_nsname srv)" -s -j link show "$SRV_IF" | "$LAB_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["packets"])')
delivered=$((rx_after - rx_before))
echo "# $FRAMES frames offered in ${secs}s, $delivered delivered to the server"

lab_counters "$LAB_TMP/c1" || not_ok "counters after the load"
read -r rx_c drop_c < <(awk '$1 == "interface" && $2 == "'"$FW_IF_C"'" { print $3, $7 }' "$LAB_TMP/c1")
read -r tx_s < <(awk '$1 == "interface" && $2 == "'"$FW_IF_S"'" { print $5 }' "$LAB_TMP/c1")
soak=$(lab_rule_counter "$LAB_TMP/c1" soak packets)
echo "# rampartd: received $rx_c on $FW_IF_C, forwarded $tx_s to $FW_IF_S, dropped $drop_c, rule soak $soak"
check "rampartd received at least a tenth of the load" test "${rx_c:-0}" -ge $((FRAMES / 10))
check_eq "received = forwarded + dropped" "$rx_c" "$(( ${tx_s:-0} + ${drop_c:-0} ))"
# everything but a few ARP/ND frames is the load
check "the soak rule counted the load (all but a few non-UDP frames)" \
	test "${soak:-0}" -ge $(( ${rx_c:-0} - 20 ))
check "the server got what was forwarded (within 1%)" \
	test "$delivered" -ge $(( ${tx_s:-0} - ${tx_s:-0} / 100 ))
check "still forwarding after the load (ping)" \
	lab_in cli ping -c 3 -i 0.2 -W 2 -q 10.10.0.2
lab_rampartd_stop
lab_summary
