#!/usr/bin/env bash
# Fresh machine to every test: install packages, prepare the host (bpffs,
# hugepages), build release and ASan+UBSan flavours, run the unit tests and
# the lab tests on both. Needs root. The last line totals everything.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "run-tests: needs root (network namespaces, XDP); try: sudo $0" >&2
  exit 1
fi
scripts/install-deps.sh || exit 1
scripts/host-setup.sh || exit 1

total_p=0; total_f=0
start=$SECONDS
stamp() { echo "=== $1 ($((SECONDS - start)) s in)"; }
count() {	# add the "N passed, N failed" line of a log to the totals
  local line
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
  if [ -z "$line" ]; then total_f=$((total_f + 1)); return; fi
  total_p=$((total_p + $(echo "$line" | awk '{print $1}')))
  total_f=$((total_f + $(echo "$line" | awk '{print $3}')))
}

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
for flavour in release asan; do
  dir=build; [ "$flavour" = asan ] && dir=build-asan
  stamp "$flavour: build"
  if ! scripts/build.sh "$flavour" "$dir"; then
    echo "run-tests: $flavour build failed"; total_f=$((total_f + 1)); continue
  fi
  stamp "$flavour: unit tests"
  tests/run-unit.sh "$dir" 2>&1 | tee "$log/unit-$flavour"
  count "$log/unit-$flavour"
  stamp "$flavour: lab tests"
  tests/run-lab.sh "$dir" 2>&1 | tee "$log/lab-$flavour"
  count "$log/lab-$flavour"
done

# Packaging, once, against the release build: man pages and bash completions
# checked against the programs' --help, and the .deb (its own portable /usr
# build in build-deb) checked with dpkg-deb, apt and a dpkg --root install.
# Each prints "N passed, N failed" last; none needs the network.
stamp "packaging: man pages, completions, .deb"
for t in tests/pkg/test_*.sh; do
  arg=build; [ "${t##*/}" = test_deb.sh ] && arg=build-deb
  echo "== $t $arg"
  timeout 600 bash "$t" "$arg" 2>&1 | tee "$log/pkg-${t##*/}"
  count "$log/pkg-${t##*/}"
done

# Fuzzing (libFuzzer, clang, ASan+UBSan): a bounded run of every target
# on its seed corpus; RAMPART_FUZZ_SECONDS per target (default 15: the
# CI run stays under its 20 minutes).
stamp "fuzz: build"
if CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DRAMPART_SANITIZE=ON \
     -DRAMPART_FUZZ=ON >/dev/null &&
   cmake --build build-fuzz -j"$(nproc)" --target rulec fuzz_artifact fuzz_rulec fuzz_pipeline fuzz_handoff fuzz_state fuzz_neigh >/dev/null; then
  stamp "fuzz: run"
  tests/run-fuzz.sh build-fuzz "${RAMPART_FUZZ_SECONDS:-15}" 2>&1 | tee "$log/fuzz"
  count "$log/fuzz"
else
  echo "run-tests: fuzz build failed"; total_f=$((total_f + 1))
fi

stamp "done"
echo "total: $total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
