#!/usr/bin/env bash
# Host prerequisites for the labs: bpffs for libxdp's pinned dispatcher,
# hugepages for the DPDK backend. A fresh machine has neither.
set -euo pipefail

mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
if ! mountpoint -q /dev/hugepages; then
  mkdir -p /dev/hugepages
  mount -t hugetlbfs nodev /dev/hugepages
fi
if [ "$(cat /proc/sys/vm/nr_hugepages)" -lt 512 ]; then
  echo 512 > /proc/sys/vm/nr_hugepages || true
fi
echo "host-setup: bpffs mounted, $(cat /proc/sys/vm/nr_hugepages) hugepages reserved"
