#!/usr/bin/env bash
# Run every cmocka program registered with ctest in a build directory,
# directly (so cmocka's own summaries reach the log unprefixed), and total
# the test cases. Last line: "N passed, N failed".
#   tests/run-unit.sh BUILD_DIR
set -uo pipefail
dir=$(realpath "${1:?usage: $0 BUILD_DIR}")
log=$(mktemp)
trap 'rm -f "$log"' EXIT

mapfile -t commands < <(cd "$dir" && ctest --show-only=json-v1 | /usr/bin/python3 -c '
import json, shlex, sys
for t in json.load(sys.stdin)["tests"]:
    print(shlex.join(t["command"]))')

passed=0; failed=0
for cmd in "${commands[@]}"; do
  name=$(basename "${cmd%% *}")
  echo "== $name"
  ( cd "$dir" && CMOCKA_MESSAGE_OUTPUT=STDOUT timeout 600 bash -c "$cmd" ) > "$log" 2>&1
  rc=$?
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
