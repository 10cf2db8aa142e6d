#!/bin/bash
# User-space instructions per forwarded frame of rampartd's AF_XDP worker:
# trafgen sends FRAMES UDP frames of SIZE bytes through the veth bump-in-
# the-wire lab (tests/lab/lib.sh) while rampartd runs under callgrind,
# collecting inside worker_run only (rx, pipeline, tx, completions, fill
# rings, idle polls; not the kernel). Prints Ir / forwarded frames. Under
# callgrind the worker is the bottleneck, so every burst is full.
# Needs root, valgrind, trafgen; a build without -march=native (valgrind
# has no AVX-512):
#   RAMPART_CMAKE_ARGS=-DRAMPART_NATIVE=OFF scripts/build.sh release build-vg
#   RAMPART_BUILD_DIR=build-vg bench/xsk-callgrind.sh 64 500000 [rampartd args...]
set -u
SIZE=${1:?usage: $0 SIZE FRAMES [rampartd args...]}; FRAMES=${2:?}; shift 2
RAMPART_BUILD_DIR=$(realpath "${RAMPART_BUILD_DIR:-build}")
cd "$(dirname "$0")/../tests/lab" || exit 1
. ./lib.sh

lab_init rcg
lab_rampart_bins || exit 1
# rampartd under callgrind: the wrapper keeps rampartd's own stderr (the
# lab waits for its "bridging" line) and writes valgrind's to a log.
CG_OUT=$LAB_TMP/callgrind.out
cat >"$LAB_TMP/vg-rampartd" <<SH
#!/bin/sh
exec valgrind --log-file="$CG_OUT.log" --tool=callgrind --callgrind-out-file="$CG_OUT" \
	--toggle-collect=worker_run "$RAMPARTD" "\$@"
SH
chmod +x "$LAB_TMP/vg-rampartd"
RAMPARTD=$LAB_TMP/vg-rampartd
lab_bridge_setup || exit 1
cat >"$LAB_TMP/load.yaml" <<'YAML'
version: 1
rules:
  - {name: load, proto: udp, to: {network: 10.10.0.2, port: 9}, action: accept}
defaults: {action: drop, stateful: false}
YAML
lab_compile "$LAB_TMP/load.yaml" "$LAB_TMP/load.rfw" >/dev/null || exit 1
lab_rampartd_start "$LAB_TMP/load.rfw" -v --cores 1 "$@" || { cat "$LAB_TMP/rampartd.err"; exit 1; }
mac() { ip -n "$(lab_nsname "$1")" -o link show "$2" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p'; }
cat >"$LAB_TMP/load.trafgen" <<CFG
{ eth(da=$(mac srv "$SRV_IF"), sa=$(mac cli "$CLI_IF")), ipv4(sa=10.10.0.1, da=10.10.0.2, ttl=64),
  udp(sp=dinc(10000, 59999), dp=9), fill(0x00, $((SIZE - 42))) }
CFG
lab_in cli tc qdisc replace dev "$CLI_IF" root pfifo limit 4096
timeout 120 ip netns exec "$(lab_nsname cli)" taskset -c 0 trafgen --dev "$CLI_IF" \
	--conf "$LAB_TMP/load.trafgen" -n "$FRAMES" --qdisc-path --cpus 1 >/dev/null 2>&1
sleep 0.5
lab_workers_block "$LAB_TMP/w" || exit 1
read -r tx copied < <(awk '$1 == "worker" && $2 ~ /^[0-9]+$/ { t += $6; c += $9 } END { print t + 0, c + 0 }' "$LAB_TMP/w")
kill -TERM "$RAMPARTD_PID"
lab_wait_gone "$RAMPARTD_PID" 120 || exit 1
ir=$(callgrind_annotate "$CG_OUT" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", ""); print $1 }')
[ "${tx:-0}" -gt 0 ] && [ -n "$ir" ] || { echo "nothing forwarded or no profile" >&2; exit 1; }
echo "size $SIZE args '$*': $tx forwarded ($copied copied), worker_run $ir Ir: $((ir / tx)) Ir per forwarded frame"
grep ' frames unaccounted$' "$LAB_TMP/rampartd.err"
[ -n "${KEEP_PROFILE:-}" ] && cp "$CG_OUT" "$KEEP_PROFILE"
