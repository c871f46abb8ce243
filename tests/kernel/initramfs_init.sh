#!/bin/busybox sh
# /init of the kernel tests' initramfs (tests/kernel/run.sh builds it): loads the virtio and 9p
# modules listed in /modules.order, mounts the host's root read-only and the writable share,
# puts tmpfs where the guest writes, and switches to the guest script named by GUEST_INIT=.
/bin/busybox mkdir -p /proc /sys /dev /newroot
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
fail() {
  echo "initramfs: $*"
  echo o >/proc/sysrq-trigger
  /bin/busybox sleep 60
}
while read -r m; do
  /bin/busybox insmod "/modules/$m" || fail "insmod $m failed"
done </modules.order
/bin/busybox mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro,cache=loose root /newroot ||
  fail "mounting the host's root failed"
for d in tmp run var/tmp var/log var/lib/systemd root; do
  /bin/busybox mount -t tmpfs -o mode=0755 tmpfs "/newroot/$d" || fail "tmpfs on /$d failed"
done
/bin/busybox chmod 1777 /newroot/tmp /newroot/var/tmp
/bin/busybox mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share /newroot/mnt ||
  fail "mounting the share failed"
/bin/busybox mount --move /dev /newroot/dev
/bin/busybox mount --move /proc /newroot/proc
/bin/busybox mount --move /sys /newroot/sys
exec /bin/busybox switch_root /newroot "${GUEST_INIT:-/bin/sh}"
