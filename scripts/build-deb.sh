#!/usr/bin/env bash
# Build the Debian package: a portable Release build (no -march=native: the
# package runs on other machines) configured for /usr, then `cpack -G DEB`.
#   scripts/build-deb.sh [BUILD_DIR]          (default build-deb)
# Prints the path of rampart_<version>_<arch>.deb on its last line.
# RAMPART_CMAKE_ARGS adds configure options (e.g. -DRAMPART_DPDK=OFF for a
# package without the DPDK backend and its libraries).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-deb}

cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DRAMPART_NATIVE=OFF \
  -DCMAKE_INSTALL_PREFIX=/usr -DRAMPART_XDP_OBJ_INSTALLED=ON ${RAMPART_CMAKE_ARGS:-} >/dev/null
# only what the package installs (no tests, no benchmarks)
cmake --build "$dir" -j"$(nproc)" --target rampartd rampartctl rulec rampart_xdp_obj rampart_man
(cd "$dir" && cpack -G DEB -B "$PWD/pkg" >/dev/null)
deb=$(realpath "$dir"/pkg/rampart_*.deb)
echo "build-deb: $deb"
