#!/usr/bin/env bash
# Boots Debian's own kernel under QEMU (TCG) with a guest script, and brings its results back.
#
#   tests/kernel/run.sh --build-dir BUILD --out DIR --guest SCRIPT [--timeout S] [--results-only]
#                       [--overlay] [--keep DIR]... [--netdevsim DIR] [--kernel-tree DIR]
#                       [KEY=VALUE...]
#
# The guest sees the host's root read-only over 9p, so the build's binaries run from their own
# paths: the source, build and guest script's directories, and each --keep DIR, are seen at their
# own paths wherever they are, even under the guest's own tmpfs (/tmp, /root...). DIR/share is
# writable, as /mnt: the guest script is copied there and started as the guest's PID 1 (through
# a tiny initramfs built here, in DIR, from busybox-static and the kernel's virtio and 9p
# modules), KEY=VALUE settings go to /mnt/env. The guest writes its
# results and logs to /mnt and powers off; a host-side timeout ends a guest that hangs.
# Exit status: the guest's (its /mnt/status), 124 when it timed out, 1 when it ended without
# a status or something is missing here (one line naming the package). On failure, the serial
# console's log and the guest's logs (/mnt/*.log) are printed. --results-only: 0 once the guest has finished
# and written its status, whatever its checks said (they are judged one by one: result.sh);
# the results are printed. --overlay: the guest's root is writable, an overlay on tmpfs over the
# host's (for a guest that installs the build and boots systemd: guest_systemd.sh).
# --netdevsim DIR: netdevsim.ko is built in DIR for the guest's kernel before the boot
# (netdevsim_build.sh; kept there until the kernel's headers change), NETDEVSIM_KO names it.
# --kernel-tree DIR: boots another kernel than the host's, a Debian kernel package unpacked into
# DIR (dpkg-deb -x, then depmod -b DIR: scripts/bootstrap.sh's kernel_6_12) rather than
# installed: DIR/boot/vmlinuz-K, and DIR/lib/modules/K for the initramfs's modules and, in the
# guest, over /lib/modules (KERNEL_MODULES names it; the guest script mounts it).
set -euo pipefail

build_dir= out= guest= timeout_s=600 results_only=0 overlay=0 netdevsim_dir=
kernel_tree=
settings=() extra_keep=()
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --guest) guest=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --results-only) results_only=1; shift ;;
    --overlay) overlay=1; shift ;;
    --keep) extra_keep+=("$(cd "$2" && pwd)"); shift 2 ;;
    --netdevsim) netdevsim_dir=$2; shift 2 ;;
    --kernel-tree) kernel_tree=$2; shift 2 ;;
    *=*) settings+=("$1"); shift ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$build_dir" ] && [ -n "$out" ] && [ -n "$guest" ] || {
  echo "usage: run.sh --build-dir BUILD --out DIR --guest SCRIPT [--timeout S] [KEY=VALUE...]" >&2
  exit 2
}

missing() {
  echo "kernel test: $1 is missing: install the Debian package $2 (scripts/bootstrap.sh deps)" >&2
  exit 1
}
# What the host needs to boot the guest, and what the guest runs from the host's root.
command -v qemu-system-x86_64 >/dev/null || missing qemu-system-x86_64 qemu-system-x86
if [ -n "$kernel_tree" ]; then
  # An unpacked kernel package: its one /lib/modules/K, and depmod's index of it.
  kernel_tree=$(cd "$kernel_tree" && pwd)
  kver=$(ls "$kernel_tree/lib/modules" 2>/dev/null | tail -1 || true)
  { [ -n "$kver" ] && [ -r "$kernel_tree/boot/vmlinuz-$kver" ] &&
    [ -r "$kernel_tree/lib/modules/$kver/modules.dep" ]; } ||
    {
      echo "kernel test: the kernel unpacked in $kernel_tree is incomplete (no boot/vmlinuz-K or" \
        "lib/modules/K/modules.dep): unpack its Debian package again (scripts/bootstrap.sh deps)" >&2
      exit 1
    }
  vmlinuz=$kernel_tree/boot/vmlinuz-$kver
  modules_root=$kernel_tree
  settings+=("KERNEL_MODULES=$kernel_tree/lib/modules")
  extra_keep+=("$kernel_tree")
else
  kver=$(ls /lib/modules 2>/dev/null | grep -- '-amd64$' | sort -V | tail -1 || true)
  { [ -n "$kver" ] && [ -r "/boot/vmlinuz-$kver" ]; } || missing "Debian's kernel (/boot/vmlinuz-*-amd64)" linux-image-amd64
  vmlinuz=/boot/vmlinuz-$kver
  modules_root=/
fi
{ [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || missing "a static /bin/busybox" busybox-static
command -v modprobe >/dev/null || missing modprobe kmod
for tool in ibv_devinfo:ibverbs-utils ibv_asyncwatch:ibverbs-utils rdma:iproute2 ip:iproute2 \
  socat:socat jq:jq stdbuf:coreutils journalctl:systemd; do
  command -v "${tool%%:*}" >/dev/null || missing "${tool%%:*}" "${tool#*:}"
done
[ -e /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so ] || missing "rdma-core's rxe provider" ibverbs-providers
[ -x /lib/systemd/systemd-udevd ] || missing systemd-udevd udev
if [ -n "$netdevsim_dir" ]; then
  command -v devlink >/dev/null || missing devlink iproute2
  # The module for the guest's kernel, built here: the guest only loads it.
  netdevsim_ko=$(bash "$(dirname "${BASH_SOURCE[0]}")/netdevsim_build.sh" "$netdevsim_dir" "$kver" | tail -n 1)
  settings+=("NETDEVSIM_KO=$netdevsim_ko")
  extra_keep+=("$(dirname "$netdevsim_ko")")
fi

# The guest's /tmp, /run, /var/tmp, /var/log, /var/lib/systemd and /root are its own tmpfs, and
# its /mnt is the share: the initramfs keeps the directories the guest runs from (the build, its
# source tree, which `cmake --install` reads, and the guest script's) visible at their own paths
# over those, so a clone anywhere works (/keep in the initramfs, one path a line).
build_dir=$(cd "$build_dir" && pwd)
guest_dir=$(cd "$(dirname "$guest")" && pwd)
source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build_dir/CMakeCache.txt" 2>/dev/null || true)
mkdir -p "$out"
out=$(cd "$out" && pwd)
# A directory inside another kept one comes with it; the others are kept shortest first.
keep=()
while IFS= read -r p; do
  covered=0
  for k in "${keep[@]}"; do
    case $p/ in "$k"/*) covered=1 ;; esac
  done
  [ $covered = 1 ] || keep+=("$p")
done < <(for p in "$source_dir" "$build_dir" "$guest_dir" "${extra_keep[@]}"; do
  [ -n "$p" ] && printf '%d %s\n' "${#p}" "$p"; done | sort -n -s | cut -d' ' -f2-)

share=$out/share
rm -rf "$share" "$out/initramfs" "$out/initramfs.cpio" "$out/serial.log"
mkdir -p "$share" "$out/initramfs/modules"
cp "$guest" "$share/guest.sh"
chmod +x "$share/guest.sh"
{
  printf 'BUILD_DIR=%q\n' "$build_dir"
  printf 'GUEST_DIR=%q\n' "$guest_dir"
  printf 'SOURCE_DIR=%q\n' "$source_dir"
  for s in "${settings[@]}"; do printf '%s=%q\n' "${s%%=*}" "${s#*=}"; done
} >"$share/env"

# The initramfs: busybox, the modules that mount the 9p shares, and /init.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ird=$out/initramfs
mkdir -p "$ird/bin"
cp /bin/busybox "$ird/bin/busybox"
cp "$here/initramfs_init.sh" "$ird/init"
printf '%s\n' "${keep[@]}" >"$ird/keep"
chmod +x "$ird/init"
# busybox's insmod takes plain modules: compressed ones (Debian's 6.12 has .ko.xz) are
# decompressed here.
modprobe -d "$modules_root" -a -S "$kver" --show-depends virtio_pci 9pnet_virtio 9p overlay |
  awk '$1 == "insmod" {print $2}' | awk '!seen[$0]++' | while read -r ko; do
  name=$(basename "$ko")
  case $ko in
    *.ko.xz) name=${name%.xz}; xz -dc "$ko" >"$ird/modules/$name" ;;
    *.ko.zst) name=${name%.zst}; zstd -qdc "$ko" >"$ird/modules/$name" ;;
    *) cp "$ko" "$ird/modules/" ;;
  esac
  echo "$name" >>"$ird/modules.order"
done
(cd "$ird" && find . | /bin/busybox cpio -o -H newc >"$out/initramfs.cpio" 2>/dev/null)

start=$SECONDS
set +e
timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 -accel tcg -smp 1 -m 1024 -no-reboot \
  -display none -monitor none -serial "file:$out/serial.log" \
  -kernel "$vmlinuz" -initrd "$out/initramfs.cpio" \
  -append "console=ttyS0 panic=-1 loglevel=4 GUEST_INIT=/mnt/guest.sh ROOT_OVERLAY=$overlay" \
  -virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
  -virtfs "local,path=$share,mount_tag=share,security_model=none,multidevs=remap" \
  -nic none </dev/null >"$out/qemu.log" 2>&1
qemu_rc=$?
set -e
echo "kernel test: the guest ran $((SECONDS - start)) s (QEMU exit status $qemu_rc)"

if [ $qemu_rc = 124 ] || [ $qemu_rc = 137 ]; then
  rc=124
  echo "kernel test: the guest did not finish within $timeout_s s" >&2
elif [ -r "$share/status" ]; then
  rc=$(cat "$share/status")
else
  rc=1
  echo "kernel test: the guest ended without a status" >&2
fi
if [ $results_only = 1 ] && [ -r "$share/results" ]; then
  cat "$share/results"
fi
if [ $results_only = 1 ] && [ -r "$share/status" ] && [ $rc != 124 ]; then
  exit 0
fi
if [ "$rc" != 0 ]; then
  echo "----- QEMU -----"; cat "$out/qemu.log" || true
  echo "----- the guest's serial console -----"; cat "$out/serial.log" || true
  for f in "$share"/*.log; do
    [ -r "$f" ] && { echo "----- the guest's $(basename "$f") -----"; cat "$f"; }
  done
fi
exit "$rc"
