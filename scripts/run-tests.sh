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
bg_pid=
trap '[ -n "$bg_pid" ] && kill "$bg_pid" 2>/dev/null; rm -rf "$log"' EXIT

# The lab tests mostly wait (on timeouts, iperf3 seconds, a daemon's tick),
# so the builds the later stages need run beside the release lab tests, at
# SCHED_IDLE: they take only CPU time nothing else wants, and a lab test's
# processes preempt them at once. Each writes a log and its exit status;
# the stage that needs one waits for it. This keeps CI under its 20 minutes
# (the builds were ~150 s of it in a row).
idle() { chrt -i 0 nice -n 19 "$@"; }
background_builds() {
  idle scripts/build.sh asan build-asan >"$log/build-asan" 2>&1
  echo $? >"$log/build-asan.rc"
  { idle env CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DRAMPART_SANITIZE=ON \
      -DRAMPART_FUZZ=ON &&
    idle cmake --build build-fuzz -j"$(nproc)" --target rulec fuzz_artifact fuzz_rulec \
      fuzz_pipeline fuzz_handoff fuzz_state fuzz_neigh; } >"$log/build-fuzz" 2>&1
  echo $? >"$log/build-fuzz.rc"
  # The .deb test builds its own portable /usr build (build-deb); it needs
  # neither namespaces nor the network, so it runs here whole.
  echo "== tests/pkg/test_deb.sh build-deb" >"$log/pkg-test_deb.sh"
  idle timeout 600 bash tests/pkg/test_deb.sh build-deb >>"$log/pkg-test_deb.sh" 2>&1
  echo done >"$log/pkg-test_deb.sh.rc"
}
await() {	# wait for a background step's status file; its log on failure
  while [ ! -e "$log/$1.rc" ] && kill -0 "$bg_pid" 2>/dev/null; do sleep 1; done
  [ "$(cat "$log/$1.rc" 2>/dev/null)" = 0 ] || [ "$(cat "$log/$1.rc" 2>/dev/null)" = done ]
}

stamp "release: build"
if ! scripts/build.sh release build; then
  echo "run-tests: release build failed"; total_f=$((total_f + 1))
  release_ok=0
else
  release_ok=1
fi
background_builds & bg_pid=$!

for flavour in release asan; do
  dir=build; [ "$flavour" = asan ] && dir=build-asan
  if [ "$flavour" = release ]; then
    [ "$release_ok" = 1 ] || continue
  else
    stamp "asan: build (in the background since the release build)"
    if ! await build-asan; then
      tail -40 "$log/build-asan"
      echo "run-tests: asan build failed"; total_f=$((total_f + 1)); continue
    fi
    tail -1 "$log/build-asan"
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
# build in build-deb, run in the background above) checked with dpkg-deb,
# apt and a dpkg --root install. Each prints "N passed, N failed" last; none
# needs the network.
stamp "packaging: man pages, completions, .deb"
for t in tests/pkg/test_*.sh; do
  [ "${t##*/}" = test_deb.sh ] && continue
  echo "== $t build"
  timeout 600 bash "$t" build 2>&1 | tee "$log/pkg-${t##*/}"
  count "$log/pkg-${t##*/}"
done
await pkg-test_deb.sh
cat "$log/pkg-test_deb.sh"
count "$log/pkg-test_deb.sh"

# Fuzzing (libFuzzer, clang, ASan+UBSan): a bounded run of every target
# on its seed corpus; RAMPART_FUZZ_SECONDS per target (default 15: the
# CI run stays under its 20 minutes).
stamp "fuzz: build (in the background since the release build)"
if await build-fuzz; then
  stamp "fuzz: run"
  tests/run-fuzz.sh build-fuzz "${RAMPART_FUZZ_SECONDS:-15}" 2>&1 | tee "$log/fuzz"
  count "$log/fuzz"
else
  tail -40 "$log/build-fuzz"
  echo "run-tests: fuzz build failed"; total_f=$((total_f + 1))
fi
wait "$bg_pid" 2>/dev/null; bg_pid=

stamp "done"
echo "total: $total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
