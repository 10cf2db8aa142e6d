#!/bin/bash
# Golden data-path tests (tests/golden/): scapy-made captures replayed
# through rampartd --backend pcap, outputs compared with the committed
# expected captures and counters, every output read by tshark with
# checksum validation. Needs no root and no namespaces.
# Usage: RAMPART_BUILD_DIR=build tests/lab/test_golden.sh [CASE ...]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
exec /usr/bin/python3 "$SRC/tests/golden/golden.py" --build "${RAMPART_BUILD_DIR:-$SRC/build}" "$@"
