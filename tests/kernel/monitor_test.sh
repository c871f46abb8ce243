#!/usr/bin/env bash
# kernel.monitor: boots Linux 6.12 (bookworm-security's newest linux-image-6.12.*+deb12-amd64,
# downloaded and unpacked into KERNEL_CACHE by scripts/bootstrap.sh deps, not installed) with
# guest_monitor.sh, and prints the guest's results and the times of its steps.
#   tests/kernel/monitor_test.sh BUILD OUT [KERNEL_CACHE]
set -euo pipefail
build=$1 out=$2
cache=${3:-${RDMA_EVENTD_KERNEL_CACHE:-/var/cache/rdma-eventd/kernels}}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tree=$(ls -d "$cache"/linux-image-6.12.*+deb12-amd64 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$tree" ]; then
  echo "kernel test: Linux 6.12 is missing: the Debian package linux-image-6.12.*+deb12-amd64" \
    "(bookworm-security), unpacked into $cache by scripts/bootstrap.sh deps" >&2
  exit 1
fi
echo "kernel test: booting $(basename "$tree")"
rc=0
bash "$here/run.sh" --build-dir "$build" --out "$out" --guest "$here/guest_monitor.sh" \
  --kernel-tree "$tree" --timeout 240 || rc=$?
cat "$out/share/results" "$out/share/times.txt" 2>/dev/null || true
exit "$rc"
