#!/usr/bin/env bash
# The daemon on Linux's own RDMA stack: boots Debian's kernel under QEMU (TCG, about 20 seconds
# on two cores) with a Soft-RoCE device rxe0 over a veth pair, runs the build's rdma-eventd on it
# with systemd-journald and systemd-udevd in the guest, changes the link and the addresses for
# real (ip link, ip addr, the peer's carrier), and prints the records as rdma-eventctl monitor
# showed them in the guest, then rdma-eventctl status and history. The guest is
# tests/kernel/guest.sh (the kernel tests' guest, in its demo mode); docs/kernel-tests.md says
# how it works.
#
#   scripts/demo_kernel.sh [BUILD_DIR]
#
# Needs qemu-system-x86, linux-image-amd64 and busybox-static (scripts/bootstrap.sh deps).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
out=$build/kernel-demo
echo "== booting Debian's kernel under QEMU with Soft-RoCE (rxe0 over veth0); about 20 seconds"
"$here/tests/kernel/run.sh" --build-dir "$build" --out "$out" --guest "$here/tests/kernel/guest.sh" \
  --timeout 300 DEMO=1
cat "$out/share/demo.txt"
echo "== the guest's whole log: $out/share/guest.log; the daemon's: $out/share/daemon.log"
