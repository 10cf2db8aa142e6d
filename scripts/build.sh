#!/usr/bin/env bash
# Configure and build one flavour of rampart.
#   scripts/build.sh [release|asan] [BUILD_DIR]
# release: -O3 -march=native (RAMPART_NATIVE=OFF for a portable build);
# asan:    Debug with AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."

flavour=${1:-release}
case "$flavour" in
  release) dir=${2:-build};      args=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan)    dir=${2:-build-asan}; args=(-DCMAKE_BUILD_TYPE=Debug -DRAMPART_SANITIZE=ON) ;;
  *) echo "usage: $0 [release|asan] [BUILD_DIR]" >&2; exit 1 ;;
esac

cmake -S . -B "$dir" "${args[@]}" ${RAMPART_CMAKE_ARGS:-} >/dev/null
cmake --build "$dir" -j"$(nproc)"
echo "build: $flavour build in $dir"
