#!/usr/bin/env bash
# Fresh machine to a running firewall: install packages, build, and run the
# bump-in-the-wire demo lab (client - rampartd - server) with live traffic
# and counters. Needs root. Cleans up after itself.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "run-demo: needs root (network namespaces, XDP); try: sudo $0" >&2
  exit 1
fi
scripts/install-deps.sh
scripts/host-setup.sh
scripts/build.sh release build
RAMPART_BUILD_DIR=$PWD/build exec scripts/demo.sh
