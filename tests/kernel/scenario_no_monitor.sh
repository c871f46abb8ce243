# shellcheck shell=bash
# The kernel tests' no_monitor scenario, sourced by guest.sh (its helpers and set-up are there):
# Debian 12's kernel (6.1) has no RDMA netlink monitor. A second daemon, started where udev looks
# absent (its own mount namespace, a tmpfs over /run/udev: no /run/udev/control), with its own
# socket, no journal and the debug log, asks the kernel's system query, is told no monitor mode,
# says so and rescans; its status says "rescan". The kernel's answer to that query is saved
# (/mnt/rdma_netlink/sys_answer_6_1.hex: tests/unit/data/rdma_netlink/).
scenario_no_monitor() {
  local dir=$W/no_monitor sock pid
  mkdir -p $dir/state /mnt/rdma_netlink
  sock=$dir/events.sock
  # The kernel's answer, as the daemon gets it: NETLINK_RDMA's system query.
  if ! "$B"/netlink-capture --rdma --query --exit-after-answer --timeout 10 \
    --output /mnt/rdma_netlink/sys_answer_6_1.hex 2>$dir/capture.err; then
    fail no_monitor "netlink-capture --rdma failed: $(cat $dir/capture.err)"
    return
  fi
  STATE_DIRECTORY=$dir/state unshare -m sh -c 'mount -t tmpfs tmpfs /run/udev && exec "$@"' _ \
    "$B"/rdma-eventd -f --no-journal --log-level debug --socket $sock >$dir/daemon.log 2>&1 &
  pid=$!
  local line='hot-plug: this kernel has no RDMA netlink monitor (Linux 6.12 and later have one)'
  local rescan='hot-plug: udev is not running here (no /run/udev/control); rescanning for RDMA devices every 5 s instead'
  local ok=1 source
  if ! wait_for 20 test -S $sock || ! wait_for 5 grep -qF "$line" $dir/daemon.log ||
    ! grep -qF "$rescan" $dir/daemon.log; then
    fail no_monitor "the second daemon did not say that the kernel has no monitor: $(cat $dir/daemon.log)"
    ok=0
  fi
  if [ $ok = 1 ]; then
    source=$(RDMA_EVENTD_SOCKET=$sock "$B"/rdma-eventctl status --json | jq -c .hotplug)
    if [ "$(jq -r .source <<<"$source")" != rescan ] || [ "$(jq -r .netlink_events <<<"$source")" != 0 ]; then
      fail no_monitor "its status says $source, source \"rescan\" and no netlink event expected"
      ok=0
    fi
  fi
  kill $pid && wait $pid
  cp $dir/daemon.log /mnt/no_monitor-daemon.log
  [ $ok = 1 ] && pass no_monitor
}
