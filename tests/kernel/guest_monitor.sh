#!/bin/bash
# kernel.monitor's guest: PID 1 of Linux 6.12 (bookworm-security's, unpacked, booted by
# tests/kernel/run.sh --kernel-tree), the first kernel with the RDMA netlink monitor. A guest like
# a container: journald runs, udevd does not (no /run/udev/control). The build's rdma-eventd
# (debug log) follows the kernel's monitor, and netlink-capture --rdma beside it keeps the
# kernel's own datagrams (/mnt/rdma_netlink/: tests/unit/data/rdma_netlink/).
#   monitor: rdma link add rxe0: REGISTER and NETDEV_ATTACH are logged, device_added and the
#            port's records are published, status says "rdma_netlink"; rdma dev set rxe0 name
#            rxe7: device_renamed (6.12 has no RENAME message: the rescan finds it, its note
#            says so); rdma link delete rxe7 while the daemon holds it completes (rxe cannot
#            disassociate, and has no parent device in sysfs: the rescan, which runs on 6.12
#            for renames, sees the uverbs device gone and closes it), device_removed
#            is published, then UNREGISTER comes; the rescan goes on (6.12 announces no
#            rename).
#   monitor_overrun: a second daemon, stopped, its socket overflowed by rxe devices coming and
#            going: continued, it warns once, resyncs, publishes the one device left.
# Two checks, "PASS NAME" or "FAIL NAME: why" in /mnt/results; the steps' times in
# /mnt/times.txt.
set -u
. /mnt/env
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
exec >/mnt/guest.log 2>&1 </dev/null

B=$BUILD_DIR/bin
W=/run/kt
MON=$W/monitor.ndjson
CAP=$W/capture.hex
export RDMA_EVENTD_SOCKET=$W/events.sock
GUID=0000:00ff:fe00:0001
failures=0
DAEMON='' MONITOR='' CAPTURE='' STREAM=''
# shellcheck source=guest_lib.sh
. "$GUEST_DIR/guest_lib.sh"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
took() { echo "$1=$2" >>/mnt/times.txt; log "$1: $2 s"; }

setup() {
  # The unpacked kernel's modules, where modprobe looks for them.
  mount --bind "$KERNEL_MODULES" /lib/modules || return 1
  case $(uname -r) in 6.12.*) ;; *) echo "booted $(uname -r), not 6.12"; return 1 ;; esac
  mount -t cgroup2 cgroup2 /sys/fs/cgroup
  hostname kguest
  ln -sf /proc/self/fd /dev/fd
  ip link set lo up
  mkdir -p $W/state /mnt/rdma_netlink
  /lib/systemd/systemd-journald &
  wait_for 10 test -S /run/systemd/journal/socket || { echo "journald did not start"; return 1; }
  [ ! -e /run/udev/control ] || { echo "/run/udev/control exists"; return 1; }
  modprobe -a ib_uverbs rdma_rxe veth && make_netdevs || return 1
  # The kernel's datagrams: the system query's answer first, then the notify group's messages.
  "$B"/netlink-capture --rdma --query --output $CAP --ready $W/cap.ready --marks $W/cap.marks \
    2>$W/capture.err &
  CAPTURE=$!
  wait_for 10 test -e $W/cap.ready && wait_for 10 has_lines $CAP 1 ||
    { echo "netlink-capture did not start: $(cat $W/capture.err)"; return 1; }
  cap_step sys_answer_6_12 1 || return 1
  cat >$W/config.json <<'EOF'
{"journal": {"budget": {"enabled": false}},
 "health": {"flap_downs": 3, "flap_window_s": 600, "flap_quiet_s": 600}}
EOF
  STATE_DIRECTORY=$W/state "$B"/rdma-eventd -f -c $W/config.json --log-level debug \
    --socket "$RDMA_EVENTD_SOCKET" >$W/daemon.log 2>&1 &
  DAEMON=$!
  wait_for 20 test -S "$RDMA_EVENTD_SOCKET" || { echo "the daemon did not start"; return 1; }
  "$B"/rdma-eventctl monitor --json --since 0 >$MON 2>$W/monitor.err &
  MONITOR=$!
  # No device yet, so no record: the monitor is ready once the daemon counts it.
  wait_for 10 eval '[ "$("$B"/rdma-eventctl status --json | jq ".subscribers.list | length")" -ge 1 ]'
}

# cap_step NAME WANT: the capture's lines since the previous step (a mark: everything the kernel
# queued so far is read) are NAME's, WANT of them; saved as /mnt/rdma_netlink/NAME.hex. When
# not, why is in $W/cap.why.
CAP_LAST=0
cap_step() {
  local n m
  n=$(lines $W/cap.marks)
  kill -USR1 $CAPTURE
  wait_for 10 has_lines $W/cap.marks $((n + 1)) ||
    { echo "netlink-capture took no mark: $(cat $W/capture.err)" | tee $W/cap.why; return 1; }
  m=$(sed -n "$((n + 1))p" $W/cap.marks)
  sed -n "$((CAP_LAST + 1)),${m}p" $CAP >/mnt/rdma_netlink/$1.hex
  CAP_LAST=$m
  [ "$(lines /mnt/rdma_netlink/$1.hex)" = "$2" ] || {
    echo "the capture of $1 has $(lines /mnt/rdma_netlink/$1.hex) messages, $2 expected:" \
      "$(cat /mnt/rdma_netlink/$1.hex)" | tee $W/cap.why
    return 1
  }
}

logged() { grep -qE "$1" $W/daemon.log; }
hotplug() { "$B"/rdma-eventctl status --json | jq -c .hotplug; }

removed() { # DEVICE: device_removed and the port's last verdict
  echo '{"schema":1,"event":"device_removed","event_type":-1,"severity":"warning","device":"'$1'",
    "node_guid":"'$GUID'","port":0,"ports":[{"port":1,"link_layer":"ethernet","state":"active",
    "phys_state":"link_up","lid":0,"sm_lid":0,"sm_sl":0,"lmc":0,"active_mtu":1024,"width":"1x",
    "speed":"fdr10","rate_gbps":10}]}' | jq -c .
  DEV=$1 health gone healthy device_removed 0 1 warning
}

scenario_monitor() {
  # 6.12 announces no rename: the rescan runs throughout.
  local release
  release=$(uname -r | sed 's/[.+]/\\&/g')  # a release is digits, letters and . + - ~ _
  logged "^.*hot-plug: udev is not running here \(no /run/udev/control\); following the kernel's RDMA netlink monitor, and rescanning for RDMA devices every 5 s: this kernel \($release\) announces no rename \(Linux 6.13 and later do\)$" ||
    { fail monitor "the daemon does not follow the monitor: $(grep hot-plug $W/daemon.log)"; return; }

  # Add: REGISTER, then NETDEV_ATTACH; the device and its port published at once.
  begin
  local t0
  t0=$(now)
  rdma link add rxe0 type rxe netdev veth0 || { fail monitor "rdma link add failed"; return; }
  took add_command_s "$(since "$t0")"
  # The journal's records are looked up by the daemon's stream, which its first record names.
  wait_for 10 has_records 1 && STREAM=$(sed -n "$((MON_MARK + 1))p" $MON | jq -r .stream)
  wait_for 10 has_records 3 && took add_records_s "$(since "$t0")"
  {
    echo '{"schema":1,"event":"device_added","event_type":-1,"severity":"notice","device":"rxe0",
      "node_guid":"'$GUID'","port":0}' | jq -c .
    port port_state -1 info active link_up 1024 '{}'
    health healthy null first_seen 0 2 notice
  } | expect monitor || return
  cap_step register_attach 2 || { fail monitor "$(cat $W/cap.why)"; return; }
  logged '^.*rdma netlink: register rxe0 \(index [0-9]+\)$' &&
    logged '^.*rdma netlink: netdev_attach rxe0 port 1 veth0 \(ifindex [0-9]+\)$' ||
    { fail monitor "no register and netdev_attach lines: $(grep 'rdma netlink' $W/daemon.log)"; return; }
  # rxe has no parent device in sysfs: the kernel may announce its removal late (on 6.13 and
  # later the rescan would run for it alone).
  wait_for 5 logged '^.*hot-plug: rescanning every 5 s while rxe0 is open: the kernel may announce its removal only once its users have closed it \(it has no parent device: a software device such as rxe or siw\)$' ||
    { fail monitor "no rescan for rxe0: $(grep hot-plug $W/daemon.log)"; return; }
  local h
  h=$(hotplug)
  if [ "$(jq -r .source <<<"$h")" != rdma_netlink ] || [ "$(jq .netlink_events <<<"$h")" -lt 2 ] ||
    [ "$(jq -c .rescan_for <<<"$h")" != '["rxe0"]' ]; then
    fail monitor "status says $h: source rdma_netlink, 2 netlink events and a rescan for rxe0 expected"
    return
  fi

  # Rename: 6.12 sends no RENAME; the rescan (every 5 s) finds it.
  begin
  t0=$(now)
  rdma dev set rxe0 name rxe7 || { fail monitor "rdma dev set rxe0 name rxe7 failed"; return; }
  wait_for 10 has_records 1 && took rename_record_s "$(since "$t0")"
  echo '{"schema":1,"event":"device_renamed","event_type":-1,"severity":"notice","device":"rxe7",
    "node_guid":"'$GUID'","port":0,"old_name":"rxe0"}' | jq -c . | expect monitor || return
  cap_step rename 0 || { fail monitor "$(cat $W/cap.why)"; return; }
  logged '^.*rxe0: renamed to rxe7 \(periodic rescan\)$' ||
    { fail monitor "the rename's note: $(grep 'renamed to' $W/daemon.log)"; return; }

  # Delete while the daemon holds rxe7: it completes once the rescan has closed it.
  begin
  t0=$(now)
  rdma link delete rxe7 &
  local deleting=$!
  # When UNREGISTER is logged, measured beside the checks below.
  (wait_for 20 logged '^.*rdma netlink: unregister rxe7 \(index [0-9]+\)$' && since "$t0" >$W/unregister.s) &
  local unregister=$!
  if ! ends_within 15 $deleting; then
    fail monitor "rdma link delete rxe7 did not complete within 15 s"
    return
  fi
  took delete_command_s "$(since "$t0")"
  removed rxe7 | expect monitor || return
  logged '^.*rxe7: removed \(periodic rescan\); closing it$' ||
    { fail monitor "the removal's note: $(grep 'removed' $W/daemon.log)"; return; }
  wait $unregister ||
    { fail monitor "no unregister line: $(grep 'rdma netlink' $W/daemon.log)"; return; }
  took unregister_logged_s "$(cat $W/unregister.s)"
  cap_step unregister 1 || { fail monitor "$(cat $W/cap.why)"; return; }
  # UNREGISTER came after the rescan's removal: nothing more is published.
  sleep 0.3
  records_after 2
  [ "$(lines $W/got)" = 2 ] || { fail monitor "records after the removal: $(cat $W/got)"; return; }
  h=$(hotplug)
  if [ "$(jq .netlink_events <<<"$h")" != 3 ] || [ "$(jq .netlink_overruns <<<"$h")" != 0 ] ||
    [ "$(jq .rescanning <<<"$h")" != true ] || [ "$(jq -c .rescan_for <<<"$h")" != '[]' ]; then
    fail monitor "status says $h: 3 netlink events (register, netdev_attach, unregister), and the rescan for renames alone expected"
    return
  fi
  pass monitor
}

# scenario_monitor_overrun: the kernel drops notifications a daemon cannot take in time. The
# first daemon goes (it would hold each rxe device, and a delete waits for it). A second one
# (--log-level debug, records on stdout, a socket of its own) starts with net.core.rmem_max
# lowered to 4096, so that its socket takes a few notifications rather than hundreds, and is
# stopped (SIGSTOP); rxe devices are added and deleted until the kernel counts drops on its
# NETLINK_RDMA socket (/proc/net/netlink's Drops, protocol 20), then rxe9 is added and left.
# Continued, the daemon reads ENOBUFS: one warning, a resync "RDMA netlink events lost", rxe9
# published once and no other device, status counting the overrun and still following the
# monitor.
scenario_monitor_overrun() {
  local dir=$W/overrun out pid cycles=0 rmem
  mkdir -p $dir/state
  out=$dir/records.ndjson
  kill $MONITOR $CAPTURE 2>/dev/null
  MONITOR='' CAPTURE=''
  kill $DAEMON && wait $DAEMON
  DAEMON=''
  rmem=$(cat /proc/sys/net/core/rmem_max)
  echo 4096 >/proc/sys/net/core/rmem_max
  STATE_DIRECTORY=$dir/state "$B"/rdma-eventd -f -c $W/config.json --log-level debug \
    --socket $dir/events.sock --no-journal --print-records >$out 2>$dir/daemon.log &
  pid=$!
  # Its netlink socket has its size once it says that it follows the monitor.
  wait_for 20 grep -q "following the kernel's RDMA netlink monitor" $dir/daemon.log
  echo "$rmem" >/proc/sys/net/core/rmem_max
  grep -q "following the kernel's RDMA netlink monitor" $dir/daemon.log &&
    wait_for 20 test -S $dir/events.sock ||
    { fail monitor_overrun "the daemon does not follow the monitor: $(cat $dir/daemon.log)"; kill $pid; return; }
  stall $pid 20
  local t0
  t0=$(now)
  while [ "$(stalled_drops)" = 0 ] && [ $cycles -lt 40 ]; do
    rdma link add rxe$((cycles % 8)) type rxe netdev veth0 && rdma link delete rxe$((cycles % 8)) ||
      { fail monitor_overrun "rdma link add/delete failed"; kill -CONT $pid; kill $pid; return; }
    cycles=$((cycles + 1))
  done
  took overrun_cycles_s "$(since "$t0")"
  log "monitor_overrun: $cycles add/delete cycles, the kernel dropped $(stalled_drops) notifications"
  rdma link add rxe9 type rxe netdev veth0 || { fail monitor_overrun "rdma link add rxe9 failed"; kill -CONT $pid; kill $pid; return; }
  kill -CONT $pid
  added() { jq -r 'select(.event == "device_added") | .device' $out; }
  local ok=1 h
  if [ "$(stalled_drops)" = 0 ]; then
    fail monitor_overrun "$cycles cycles and no notification dropped"
    ok=0
  elif ! wait_for 15 eval '[ "$(added)" = rxe9 ]'; then
    fail monitor_overrun "devices added after the overrun: '$(added | paste -sd' ')', rxe9 alone expected; log: $(tail -n 5 $dir/daemon.log)"
    ok=0
  elif ! grep -q "hot-plug: the RDMA netlink monitor's socket overflowed and lost events (1 time so far); resynchronizing from the device list" $dir/daemon.log ||
    ! grep -q "devices: resynchronizing (RDMA netlink events lost)" $dir/daemon.log; then
    fail monitor_overrun "the overrun was not logged, or led to no resync: $(grep -E 'hot-plug|resynchronizing' $dir/daemon.log)"
    ok=0
  else
    h=$("$B"/rdma-eventctl --socket $dir/events.sock status --json | jq -c .hotplug)
    if [ "$(jq -r .source <<<"$h")" != rdma_netlink ] || [ "$(jq .netlink_overruns <<<"$h")" -lt 1 ]; then
      fail monitor_overrun "status says $h: source rdma_netlink and an overrun expected"
      ok=0
    fi
  fi
  kill $pid && wait $pid
  rdma link delete rxe9
  cp $dir/daemon.log /mnt/overrun-daemon.log
  cp $out /mnt/overrun-records.ndjson
  [ $ok = 1 ] && pass monitor_overrun
}

log "setting up on Linux $(uname -r)"
if ! setup; then
  fail setup "the guest's set-up failed (see the log above)"
else
  pass setup
  log "scenario monitor"
  scenario_monitor
  log "scenario monitor_overrun"
  scenario_monitor_overrun
fi
[ -n "$MONITOR$CAPTURE" ] && kill $MONITOR $CAPTURE 2>/dev/null
if [ -n "$DAEMON" ]; then
  kill $DAEMON && wait $DAEMON
  log "the daemon exited with $?"
fi
cp $W/daemon.log $W/monitor.ndjson $CAP $W/cap.marks /mnt/ 2>/dev/null
[ $failures = 0 ] && echo 0 >/mnt/status || echo 1 >/mnt/status
poweroff
