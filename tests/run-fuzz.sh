#!/usr/bin/env bash
# Run every libFuzzer target of a fuzz build for a bounded time on a copy
# of its seed corpus (tests/fuzz/corpus/, plus artifacts compiled from the
# rulec seeds for the artifact target). A target passes when it ends
# without a crash, leak or sanitizer report. Crash inputs are kept in
# tests/fuzz/crashes/ for a regression seed. Targets run one a core at a
# time. Last line: N passed, N failed.
#   tests/run-fuzz.sh BUILD_DIR [SECONDS_PER_TARGET]
set -uo pipefail
cd "$(dirname "$0")/.."
dir=$(realpath "${1:?usage: $0 BUILD_DIR [SECONDS]}")
secs=${2:-40}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p tests/fuzz/crashes

# Artifact seeds: every rulec seed that compiles, checksum fixed (0x01)
# and as is (0x00).
mkdir -p "$work/artifact"
for y in tests/fuzz/corpus/rulec/*.yaml; do
  b=$(basename "$y" .yaml)
  if "$dir/rulec/rulec" compile "$y" -o "$work/$b.rfw" >/dev/null 2>&1; then
    { printf '\001'; cat "$work/$b.rfw"; } > "$work/artifact/$b-fixed"
    { printf '\000'; cat "$work/$b.rfw"; } > "$work/artifact/$b-raw"
  fi
done

passed=0; failed=0; total_execs=0
targets="artifact rulec pipeline handoff state neigh"
# One target a core at a time (each libFuzzer process uses one): the
# same time a target, the wall time divided by the cores.
run_one() {
  local t=$1 corpus="$work/corpus-$1"
  mkdir -p "$corpus"
  [ "$t" = artifact ] && cp "$work"/artifact/* "$corpus"/
  cp tests/fuzz/corpus/$t/* "$corpus"/
  # the pipeline's records serve fuzz_handoff too
  [ "$t" = handoff ] && cp tests/fuzz/corpus/pipeline/* "$corpus"/
  "$dir/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix=tests/fuzz/crashes/$t- "$corpus" > "$work/$t.log" 2>&1
  echo $? > "$work/$t.rc"
}
. tests/one-a-core.sh
for t in $targets; do
  one_a_core run_one "$t"
done
wait
for t in $targets; do
  log="$work/$t.log"
  rc=$(cat "$work/$t.rc" 2>/dev/null || echo 1)
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  execs=${execs:-0}
  total_execs=$((total_execs + execs))
  if [ "$rc" -eq 0 ]; then
    echo "ok - fuzz_$t: $execs executions in ${secs}s, no crash"
    passed=$((passed + 1))
  else
    echo "not ok - fuzz_$t exited $rc after $execs executions:"
    grep -E 'ERROR|SUMMARY|==[0-9]+==|Test unit written' "$log" | head -20 | sed 's/^/#   /'
    failed=$((failed + 1))
  fi
done
echo "# fuzz: $total_execs executions in total"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
