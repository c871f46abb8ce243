#!/bin/bash
# kernel.paths' guest (paths_test.sh): PID 1 of a guest booted with its directories in the places
# where the guest has a tmpfs of its own or its share. It checks that each is seen at its own
# path with the host's contents (the marker files hold TOKEN), that the build's programs run
# from there, that netdevsim built under a path with a space loads (NETDEVSIM_KO), and that the guest's own tmpfs are still writable beside them; one line a check
# in /mnt/results, and /mnt/status 0 when all passed.
set -u
. /mnt/env
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
exec >/mnt/guest.log 2>&1 </dev/null
failures=0
check() {
  local what=$1; shift
  if "$@"; then
    echo "PASS $what" >>/mnt/results
  else
    echo "FAIL $what" >>/mnt/results
    failures=$((failures + 1))
  fi
}
marker_is() { [ "$(cat "$1/marker" 2>/dev/null)" = "$TOKEN" ]; }
check "the directory under /root is seen: $SEE_ROOT" marker_is "$SEE_ROOT"
check "the directory under /var/tmp is seen: $SEE_VARTMP" marker_is "$SEE_VARTMP"
check "the guest script's directory under /tmp, with a space in its name: $GUEST_DIR" \
  test -r "$GUEST_DIR/wait_lib.sh"
check "the source tree is seen: $SOURCE_DIR" test -r "$SOURCE_DIR/CMakeLists.txt"
check "the build's rdma-eventctl runs from $BUILD_DIR" "$BUILD_DIR/bin/rdma-eventctl" --version
check "netdevsim, built under a directory with a space in its name, loads: $NETDEVSIM_KO" \
  sh -c 'modprobe psample && insmod "$1"' _ "$NETDEVSIM_KO"
check "the guest's /tmp is its own and writable" touch /tmp/written
check "the guest's /root is its own and writable" touch /root/written
echo $((failures == 0 ? 0 : 1)) >/mnt/status
sync
echo o >/proc/sysrq-trigger
sleep 60
