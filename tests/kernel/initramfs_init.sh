#!/bin/busybox sh
# /init of the kernel tests' initramfs (tests/kernel/run.sh builds it): loads the virtio, 9p and
# overlay modules listed in /modules.order, mounts the host's root read-only (ROOT_OVERLAY=1:
# as the lower layer of a writable overlay on tmpfs) and the writable share, puts tmpfs where
# the guest writes, keeps the host's directories listed in /keep (the source, build and guest
# directories) visible at their own paths even where a tmpfs or the share covers their parent,
# and switches to the guest script named by GUEST_INIT=.
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
if [ "${ROOT_OVERLAY:-0}" = 1 ]; then
  # A writable root: the host's root as the lower layer of an overlay on tmpfs.
  /bin/busybox mkdir -p /lower /upper
  /bin/busybox mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro,cache=loose root /lower ||
    fail "mounting the host's root failed"
  /bin/busybox mount -t tmpfs -o mode=0755 tmpfs /upper && /bin/busybox mkdir /upper/up /upper/work &&
    /bin/busybox mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/up,workdir=/upper/work /newroot ||
    fail "the overlay root failed"
  tmpfs_dirs="tmp run"
else
  /bin/busybox mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro,cache=loose root /newroot ||
    fail "mounting the host's root failed"
  tmpfs_dirs="tmp run var/tmp var/log var/lib/systemd root"
fi
# The directories the guest runs from, held aside before the tmpfs mounts cover them (a clone
# under /root or /tmp): bound to /keep.N now, put back at their own paths below.
n=0
while IFS= read -r p; do
  [ -n "$p" ] || continue
  /bin/busybox mkdir -p "/keep.$n"
  /bin/busybox mount -o bind "/newroot$p" "/keep.$n" || fail "keeping $p visible failed"
  n=$((n + 1))
done </keep
for d in $tmpfs_dirs; do
  /bin/busybox mount -t tmpfs -o mode=0755 tmpfs "/newroot/$d" || fail "tmpfs on /$d failed"
done
/bin/busybox chmod 1777 /newroot/tmp /newroot/var/tmp
/bin/busybox mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share /newroot/mnt ||
  fail "mounting the share failed"
n=0
while IFS= read -r p; do
  [ -n "$p" ] || continue
  /bin/busybox mkdir -p "/newroot$p" && /bin/busybox mount -o move "/keep.$n" "/newroot$p" ||
    fail "putting $p back failed"
  n=$((n + 1))
done </keep
/bin/busybox mount --move /dev /newroot/dev
/bin/busybox mount --move /proc /newroot/proc
/bin/busybox mount --move /sys /newroot/sys
exec /bin/busybox switch_root /newroot "${GUEST_INIT:-/bin/sh}"
