#!/bin/bash
# Instructions per packet of the whole pipeline (pipe_process and what it
# calls) for each fwbench scenario, counted by callgrind: stable on a
# noisy machine where cycles are not. Needs valgrind and a build without
# -march=native (valgrind has no AVX-512):
#   RAMPART_CMAKE_ARGS=-DRAMPART_NATIVE=OFF scripts/build.sh release build-port
#   bench/fwbench-callgrind.sh build-port [fwbench args...]
# Defaults: --flows 100000 --packets 65536 (1,000,000 flows under
# callgrind takes many minutes). Prints one line per scenario and leaves
# the callgrind parts in $OUT (default a temporary directory) for
# callgrind_annotate.
set -eu
BUILD=${1:?usage: $0 BUILD_DIR [fwbench args...]}; shift
FLOWS=100000 PACKETS=65536 ACTIVE=0
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
	case ${args[i]} in
	--flows) FLOWS=${args[i + 1]} ;;
	--packets) PACKETS=${args[i + 1]} ;;
	--active) ACTIVE=${args[i + 1]} ;;
	--only | --repeat) echo "$0: runs every scenario once; ${args[i]} is not supported" >&2; exit 2 ;;
	esac
done
OUT=${OUT:-$(mktemp -d /tmp/fwcg.XXXXXX)}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
valgrind --tool=callgrind --compress-strings=no --compress-pos=no --callgrind-out-file="$OUT/cg.out" --toggle-collect=pipe_process \
	--dump-before=bench_mark "$BUILD/bench/fwbench" --flows "$FLOWS" --packets "$PACKETS" "$@" \
	>"$OUT/fwbench.txt" 2>"$OUT/valgrind.txt"
# parts: 2 load; then two marks per scenario, in fwbench's order (the
# worst case's own load between drop-flood and worst-cached; the
# stateless policy loads no flows)
ir() { sed -n 's/^summary: //p' "$OUT/cg.out.$1"; }
half=$((FLOWS / 2))
# --active A: the cached scenarios send ceil(PACKETS / A) rounds of A flows
cached() { if ((ACTIVE > 0 && ACTIVE < $1)); then echo $(((PACKETS + ACTIVE - 1) / ACTIVE * ACTIVE)); else echo "$1"; fi; }
printf '# fwbench under callgrind: --flows %s --packets %s %s; instructions per packet in pipe_process\n' \
	"$FLOWS" "$PACKETS" "$*"
# without --active, fwbench adds the two with 1,000 active flows (HOT_FLOWS)
hot() { if ((1000 < $1)); then echo $(((PACKETS + 999) / 1000 * 1000)); else echo "$1"; fi; }
hot_list= worst_hot=
((ACTIVE == 0)) && hot_list="cached-allow-hot:$(hot $half) cached-snat-hot:$(hot $((FLOWS - half)))"
((ACTIVE == 0)) && worst_hot="worst-cached-hot:$(hot $((FLOWS - half)))"
part=4
for s in cached-allow:$(cached $half) cached-snat:$(cached $((FLOWS - half))) $hot_list new-snat:$PACKETS \
	drop-flood:$PACKETS worst-cached:$(cached $((FLOWS - half))) $worst_hot worst-case:$PACKETS \
	worst-stateless:$PACKETS; do
	name=${s%%:*} n=${s##*:}
	# the worst case has a policy of its own: its flows are loaded again first
	[ "$name" = worst-cached ] && part=$((part + 2))
	printf '%-16s %8.1f\n' "$name" "$(echo "$(ir $part) / $n" | bc -l)"
	part=$((part + 2))
done
echo "# callgrind parts in $OUT"
