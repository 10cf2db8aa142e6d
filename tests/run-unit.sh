#!/usr/bin/env bash
# Run every cmocka program registered with ctest in a build directory,
# directly (so cmocka's own summaries reach the log unprefixed), and total
# the test cases. The programs run one a core at a time (they share no
# state: ctest -j runs them the same way); their logs are printed whole,
# in ctest's order. Last line: "N passed, N failed".
#   tests/run-unit.sh BUILD_DIR
set -uo pipefail
dir=$(realpath "${1:?usage: $0 BUILD_DIR}")
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

mapfile -t commands < <(cd "$dir" && ctest --show-only=json-v1 | /usr/bin/python3 -c '
import json, shlex, sys
for t in json.load(sys.stdin)["tests"]:
    print(shlex.join(t["command"]))')

run_one() {	# index command: its output and exit status in $logs
  ( cd "$dir" && CMOCKA_MESSAGE_OUTPUT=STDOUT timeout 600 bash -c "$2" ) > "$logs/$1.log" 2>&1
  echo $? > "$logs/$1.rc"
}
. "$(dirname "$(realpath "$0")")/one-a-core.sh"
for i in "${!commands[@]}"; do
  one_a_core run_one "$i" "${commands[i]}"
done
wait

passed=0; failed=0
for i in "${!commands[@]}"; do
  cmd=${commands[i]} log=$logs/$i.log
  name=$(basename "${cmd%% *}")
  rc=$(cat "$logs/$i.rc" 2>/dev/null || echo 1)
  echo "== $name"
  cat "$log"
  p=$(grep -E '^\[  PASSED  \] [0-9]+ test' "$log" | awk '{s+=$4} END {print s+0}')
  f=$(grep -E '^\[  FAILED  \] [0-9]+ test' "$log" | awk '{s+=$4} END {print s+0}')
  # A crash, a sanitizer report or a missing summary is a failure too.
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "not ok - $name exited $rc"
    f=1
  fi
  passed=$((passed + p)); failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
