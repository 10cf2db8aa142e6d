#!/usr/bin/env bash
# Run every cmocka program of a build directory through ctest and total the
# test cases from cmocka's own summaries. Last line: "N passed, N failed".
#   tests/run-unit.sh BUILD_DIR
set -uo pipefail
dir=${1:?usage: $0 BUILD_DIR}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

( cd "$dir" && ctest --output-on-failure --timeout 300 ) 2>&1 | tee "$log"
ctest_rc=${PIPESTATUS[0]}

passed=$(grep -E '^\[  PASSED  \] [0-9]+ test' "$log" | awk '{s+=$4} END {print s+0}')
failed=$(grep -E '^\[  FAILED  \] [0-9]+ test' "$log" | awk '{s+=$4} END {print s+0}')
# A program that crashed or never printed its summary is a failure too.
if [ "$ctest_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
