#!/bin/bash
# Every example's policy compiles as committed with `rulec compile
# --strict` (warnings are errors), as the unit tests do for policies/ and
# examples/policies/, and every example has its README, run.sh and a lab
# test. No namespaces: runs without root.
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_example_policies.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"

lab_rampart_bins || { not_ok "rampart built"; lab_summary; exit 1; }
tmp=$(mktemp -d /tmp/rxp.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

n=0
for dir in "$SRC"/examples/*/; do
	[ -f "$dir/policy.yaml" ] || continue
	name=$(basename "$dir")
	n=$((n + 1))
	check "examples/$name/policy.yaml compiles with --strict" \
		quiet "$RULEC" compile --strict "$dir/policy.yaml" -o "$tmp/$name.rfw"
	check "examples/$name has README.md and an executable run.sh" \
		test -s "$dir/README.md" -a -x "$dir/run.sh"
	check "examples/$name is run by a lab test" \
		bash -c "grep -lq 'examples/$name/run.sh' '$HERE'/test_example_*.sh"
	check "examples/README.md lists $name" grep -q "($name/)" "$SRC/examples/README.md"
done
check "four examples or more ($n)" test "$n" -ge 4
lab_summary
