#!/bin/bash
# The kernel tests' second guest (kernel.systemd): systemd as PID 1, with the build installed as
# a package would install it. tests/kernel/run.sh boots it with --overlay (a writable overlay
# root over the host's), and this script, as PID 1, installs the build (cmake --install: the
# daemon, the shipped rdma-eventd.socket and .service, the udev rule, the sysusers file), creates
# the group (systemd-sysusers), enables the socket, and executes systemd with a target that
# runs itself again as a oneshot service ("check"). The check: the socket listens and the
# service is not running; `rdma link add` makes udev start the service (the rule's
# SYSTEMD_WANTS); the daemon, the service's main process, serves the socket passed by systemd
# and watches rxe0; a real link down is one port_err record, the same on the socket and in the
# journal under the service's unit. Result: "PASS systemd" or "FAIL systemd: why" in
# /mnt/results, /mnt/status 0 or 1, then power off.
set -u
. /mnt/env
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

poweroff() {
  sync
  echo o >/proc/sysrq-trigger
  sleep 60
}
# wait_for.
# shellcheck source=wait_lib.sh
. "$GUEST_DIR/wait_lib.sh"
finish() { # 0|1 RESULT-LINE
  echo "$2" >>/mnt/results
  echo "$2"
  echo "$1" >/mnt/status
  poweroff
}
fail() { finish 1 "FAIL systemd: $*"; }

check() {
  exec >/mnt/check.log 2>&1 # run.sh prints /mnt/*.log when the test fails
  set -x
  local sock=/run/rdma-eventd/events.sock
  systemctl is-active rdma-eventd.socket && [ -S $sock ] || fail "rdma-eventd.socket does not listen"
  [ "$(systemctl is-active rdma-eventd.service)" = inactive ] ||
    fail "rdma-eventd.service runs before any RDMA device"
  modprobe -a ib_uverbs rdma_rxe veth
  ip link add veth0 address 02:00:00:00:00:01 type veth peer name veth1 address 02:00:00:00:00:02
  ip link set veth1 up && ip link set veth0 up
  rdma link add rxe0 type rxe netdev veth0 || fail "rdma link add failed"
  wait_for 30 eval '[ "$(systemctl is-active rdma-eventd.service)" = active ]' ||
    fail "udev did not start rdma-eventd.service for rxe0: $(systemctl status rdma-eventd.service --no-pager)"
  local main st
  main=$(systemctl show -P MainPID rdma-eventd.service)
  st=$(rdma-eventctl --socket $sock status --json) || fail "rdma-eventctl status failed"
  [ "$(jq .daemon.pid <<<"$st")" = "$main" ] ||
    fail "the socket's daemon is pid $(jq .daemon.pid <<<"$st"), the service's main process $main"
  [ "$(jq -c '[.devices[].device]' <<<"$st")" = '["rxe0"]' ] ||
    fail "the daemon watches $(jq -c '[.devices[].device]' <<<"$st"), not rxe0"
  # The sandbox (no capabilities, AF_UNIX and AF_NETLINK only) lets it follow devlink health:
  # resolving the family, joining its group and dumping the reporters need no privilege.
  jq -e '.devlink.available' <<<"$st" >/dev/null ||
    fail "devlink health is not followed under the shipped unit: $(jq -c .devlink <<<"$st")"
  rdma-eventctl --socket $sock monitor --json --event port_err --count 1 >/run/port_err.json &
  local mon=$!
  wait_for 10 eval 'rdma-eventctl --socket '$sock' status --json | jq -e ".subscribers.count >= 1" >/dev/null'
  ip link set veth0 down
  wait_for 10 eval '! kill -0 '$mon' 2>/dev/null' || fail "no port_err record on the socket"
  local record
  record=$(cat /run/port_err.json)
  jq -e '.event == "port_err" and .device == "rxe0" and .state == "down"' <<<"$record" >/dev/null ||
    fail "the record is not rxe0's port_err: $record"
  wait_for 10 eval '[ "$(journalctl -o json --no-pager _SYSTEMD_UNIT=rdma-eventd.service RDMA_EVENT=port_err |
    jq -r .RDMA_RECORD)" = "$record" ]' ||
    fail "the journal's port_err record under rdma-eventd.service differs from the socket's: $(
      journalctl -o json --no-pager _SYSTEMD_UNIT=rdma-eventd.service RDMA_EVENT=port_err)"
  finish 0 "PASS systemd"
}

if [ "${1:-}" = check ]; then
  check
fi

exec >/mnt/guest.log 2>&1
set -x
cmake --install "$BUILD_DIR" >/mnt/install.log 2>&1 || finish 1 "FAIL systemd: cmake --install failed (install.log)"
systemd-sysusers || finish 1 "FAIL systemd: systemd-sysusers failed"
systemctl enable rdma-eventd.socket || finish 1 "FAIL systemd: systemctl enable rdma-eventd.socket failed"
mkdir -p /run/systemd/system
cat >/run/systemd/system/kernel-test.target <<'EOF'
[Unit]
Description=The kernel test of the service
Requires=kernel-test.service
Wants=sockets.target systemd-udevd.service systemd-journald.service
EOF
cat >/run/systemd/system/kernel-test.service <<'EOF'
[Unit]
Description=The kernel test of the service
After=sockets.target systemd-udevd.service systemd-journald.service
[Service]
Type=oneshot
ExecStart=/mnt/guest.sh check
EOF
exec /lib/systemd/systemd --unit=kernel-test.target
