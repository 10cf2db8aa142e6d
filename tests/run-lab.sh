#!/usr/bin/env bash
# Run every lab test (tests/lab/test_*.sh) against one build and total their
# "N passed, N failed" lines. Needs root (namespaces, XDP).
#   tests/run-lab.sh BUILD_DIR
set -uo pipefail
cd "$(dirname "$0")/.."
export RAMPART_BUILD_DIR=$(realpath "${1:?usage: $0 BUILD_DIR}")

passed=0; failed=0
for t in tests/lab/test_*.sh; do
  echo "== $t ($RAMPART_BUILD_DIR)"
  t0=$SECONDS
  out=$(timeout 600 bash "$t" 2>&1)
  rc=$?
  echo "$out"
  echo "# $t: $((SECONDS - t0)) s"
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
  p=$(echo "$line" | awk '{print $1+0}')
  f=$(echo "$line" | awk '{print $3+0}')
  # No summary, or a nonzero exit with none failing: the test itself broke.
  if [ -z "$line" ] || { [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; }; then
    echo "not ok - $t exited $rc without a complete summary"
    f=$((f + 1))
  fi
  passed=$((passed + p)); failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
