#!/usr/bin/env bash
# Install the Debian 12 packages rampart needs to build, test and run its
# labs and benchmarks (gnuplot-nox: the bench/e2e chart). Idempotent: runs
# apt-get only when something is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  clang llvm libclang-rt-14-dev libbpf-dev libxdp-dev bpftool xdp-tools
  libyaml-dev libcmocka-dev libpcap-dev libmnl-dev dpdk-dev
  iproute2 ethtool iputils-ping curl iperf3 python3 procps kmod
  python3-scapy python3-jsonschema python3-yaml tshark netsniff-ng gnuplot-nox
  man-db groff-base bash-completion dpkg-dev file
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing ${missing[*]}; run as root (sudo) to install them" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
