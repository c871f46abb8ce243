#!/bin/bash
# The kernel tests' guest: PID 1 of the guest that tests/kernel/run.sh boots. It starts
# journald and udevd, makes a Soft-RoCE device (rdma_rxe) over a veth pair, runs the build's
# rdma-eventd on it with its socket, rdma-eventctl monitor and ibv_asyncwatch beside it, and runs
# the scenarios (scenarios.sh) in sequence. Each scenario is one check: a line "PASS NAME" or
# "FAIL NAME: why" in /mnt/results. Records are compared whole (normalize.jq: seq, stream, time
# and host masked) with the records the scenario expects, as read back from the socket and from
# the journal. /mnt/status gets 0 when every check passed. Settings come from /mnt/env (run.sh
# writes it): BUILD_DIR, GUEST_DIR (tests/kernel), and SCENARIOS (default: all, in order) to run
# a subset, BURST (link downs in the burst, each followed by an up; default 2000), DEMO=1 for
# the demo (no checks: the records as they come).
set -u
. /mnt/env
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
exec >/mnt/guest.log 2>&1 </dev/null

B=$BUILD_DIR/bin
W=/run/kt                      # the guest's scratch (tmpfs)
MON=$W/monitor.ndjson          # every record, from rdma-eventctl monitor --json
AW=$W/asyncwatch.txt           # ibv_asyncwatch -d rxe0
export RDMA_EVENTD_SOCKET=$W/events.sock
BURST=${BURST:-2000}
failures=0

# pass, fail, log, poweroff, wait_for, ends_within, lines, has_lines; the records: begin,
# records_after, has_records, expect, port, health, gid, link_changes; make_netdevs.
# shellcheck source=guest_lib.sh
. "$GUEST_DIR/guest_lib.sh"

# --- set-up --------------------------------------------------------------------------------------
setup() {
  mount -t cgroup2 cgroup2 /sys/fs/cgroup
  hostname kguest
  ln -sf /proc/self/fd /dev/fd
  ip link set lo up
  mkdir -p $W/state
  /lib/systemd/systemd-journald &
  wait_for 10 test -S /run/systemd/journal/socket || { echo "journald did not start"; return 1; }
  /lib/systemd/systemd-udevd --daemon || return 1
  modprobe -a ib_uverbs rdma_rxe veth || return 1
  make_netdevs && rdma link add rxe0 type rxe netdev veth0 || return 1
  udevadm settle
  ibv_devinfo -v -d rxe0 >$W/devinfo.txt || return 1
  # Health with a short memory: three downs within the run are flapping, and a port stays so
  # for the rest of the run. No journal budget: the journal must hold every record. The error
  # counters read every 2 s (the counters scenario waits for a read). netdevsim's "dummy"
  # devlink health reporter (the devlink scenario) judged as a fatal one.
  cat >$W/config.json <<'EOF'
{"journal": {"budget": {"enabled": false}},
 "health": {"flap_downs": 3, "flap_window_s": 600, "flap_quiet_s": 600,
            "devlink_reporters": {"dummy": "fatal"}},
 "link_health": {"interval_s": 2}}
EOF
  STATE_DIRECTORY=$W/state "$B"/rdma-eventd -f -c $W/config.json --socket "$RDMA_EVENTD_SOCKET" >$W/daemon.log 2>&1 &
  DAEMON=$!
  wait_for 20 test -S "$RDMA_EVENTD_SOCKET" || { echo "the daemon did not start"; return 1; }
  # Every record from the first (--since 0 replays what the daemon holds), and the kernel's
  # events as rdma-core's own watcher sees them.
  "$B"/rdma-eventctl monitor --json --since 0 >$MON 2>$W/monitor.err &
  MONITOR=$!
  stdbuf -oL ibv_asyncwatch -d rxe0 >$AW 2>&1 &
  ASYNCWATCH=$!
  # The daemon's first record (the port's first health verdict) and asyncwatch's header.
  wait_for 20 has_lines $MON 1 && wait_for 20 has_lines $AW 1 || return 1
  STREAM=$(head -n 1 $MON | jq -r .stream)
}


# asyncwatch_since_mark: the events asyncwatch printed since begin, as "TYPE PORT" lines.
asyncwatch_since_mark() {
  tail -n +$((AW_MARK + 1)) $AW | sed -n 's/.*(\([0-9]*\)), port \([0-9]*\).*/\1 \2/p'
}
# The daemon's records of async events among $W/got, as "TYPE PORT".
daemon_events() { jq -r 'select(.event_type >= 0) | "\(.event_type) \(.port)"' $W/got; }

GUID=0000:00ff:fe00:0001

run_scenarios() {
  . "$GUEST_DIR/scenarios.sh"
  . "$GUEST_DIR/scenario_devlink.sh"
  . "$GUEST_DIR/scenario_no_monitor.sh"
  local s
  for s in ${SCENARIOS:-link mtu_mac gids asyncwatch health_wait burst counters delete readd netdev_delete devlink devlink_overrun no_monitor}; do
    log "scenario $s"
    "scenario_$s"
  done
}

# The demo (scripts/demo_kernel.sh): real link and address changes, each followed by the records
# rdma-eventctl monitor printed for it (/mnt/demo.txt).
demo() {
  local out=$W/demo.txt cmd n
  "$B"/rdma-eventctl monitor --since 0 --color never >$W/demo-monitor.txt 2>&1 &
  wait_for 10 has_lines $W/demo-monitor.txt 1
  {
    echo "== rdma-eventctl monitor in the guest, as the daemon started (rxe0 over veth0):"
    cat $W/demo-monitor.txt
  } >$out
  for cmd in "ip link set veth0 down" "ip link set veth0 up" "ip link set veth1 down" \
    "ip link set veth1 up" "ip addr add 192.0.2.1/24 dev veth0" \
    "ip addr add 2001:db8::1/64 dev veth0 nodad" "ip addr del 192.0.2.1/24 dev veth0"; do
    n=$(lines $W/demo-monitor.txt)
    $cmd
    # The kernel's events come within ~100 ms; a little more lets the second PORT_ACTIVE of a
    # link up arrive too.
    wait_for 5 has_lines $W/demo-monitor.txt $((n + 1))
    sleep 0.5
    {
      echo "== # $cmd"
      tail -n +$((n + 1)) $W/demo-monitor.txt
    } >>$out
  done
  {
    echo "== rdma-eventctl status"
    "$B"/rdma-eventctl status --color never
    echo "== rdma-eventctl history (the guest's journal), the last 5"
    "$B"/rdma-eventctl history 2>&1 | tail -n 5
  } >>$out 2>&1
  cp $out /mnt/demo.txt
}

log "setting up"
if ! setup; then
  fail setup "the guest's set-up failed (see the log above)"
  cat $W/daemon.log
  echo 1 >/mnt/status
  poweroff
fi
pass setup
if [ "${DEMO:-0}" = 1 ]; then
  demo
else
  run_scenarios
fi
kill $MONITOR 2>/dev/null
kill $DAEMON && wait $DAEMON
log "the daemon exited with $?"
cp $W/daemon.log $W/asyncwatch.txt $W/monitor.ndjson /mnt/ 2>/dev/null
[ $failures = 0 ] && echo 0 >/mnt/status || echo 1 >/mnt/status
poweroff
