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

poweroff() {
  sync
  echo o >/proc/sysrq-trigger
  sleep 60
}
log() { echo "== $(date +%T.%N | cut -c1-12) $*"; }
pass() { echo "PASS $1" >>/mnt/results; log "PASS $1"; }
fail() {
  echo "FAIL $1: $2" >>/mnt/results
  log "FAIL $1: $2"
  failures=$((failures + 1))
}

# wait_for, ends_within.
# shellcheck source=wait_lib.sh
. "$GUEST_DIR/wait_lib.sh"
lines() { if [ -e "$1" ]; then wc -l <"$1"; else echo 0; fi; }
has_lines() { [ "$(lines "$1")" -ge "$2" ]; }

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

make_netdevs() {
  ip link add veth0 address 02:00:00:00:00:01 type veth peer name veth1 address 02:00:00:00:00:02 &&
    ip link set veth1 up && ip link set veth0 up
}

# --- records -------------------------------------------------------------------------------------
# Records normalized for comparison (normalize.jq): seq, stream, time, host and since masked;
# cause_seq made relative to the scenario's first record (0 stays 0); the GID entries in one
# last line.
normalize() { jq -c -S -s --argjson base "$1" -f "$GUEST_DIR/normalize.jq"; }
last_seq() { tail -n 1 $MON | jq -r .seq; }

# begin: the scenario's records are those after this point.
begin() {
  BASE=$(last_seq)
  MON_MARK=$(lines $MON)
  AW_MARK=$(lines $AW)
}
# records_after N: waits for N records after the mark (10 s), and writes them to $W/got (whole,
# as sent) and normalized to $W/got.norm; 1 when they did not come.
records_after() {
  local want=$1 ok=0
  wait_for 10 has_records "$want" || ok=1
  # Whole lines only: a record being written is not counted yet.
  tail -n +$((MON_MARK + 1)) $MON | head -n $(($(lines $MON) - MON_MARK)) >$W/got
  normalize "$BASE" <$W/got >$W/got.norm
  return $ok
}
# The monitor prints one record per line, every record (seq checked gap-free by the burst):
# counting lines is counting records.
has_records() { [ $(($(lines $MON) - MON_MARK)) -ge "$1" ]; }

# expect NAME: compares the scenario's records with the expected ones on stdin (one JSON object
# per line, without seq, stream, time, host and since), both from the socket and from the
# journal; fails NAME with the difference. Extra records after the expected ones fail too.
expect() {
  local name=$1 want
  tee $W/want | normalize 0 >$W/want.norm
  want=$(lines $W/want)
  records_after "$want"
  sleep 0.3 # nothing more may come: the kernel's events arrive within ~100 ms
  records_after "$want"
  if ! diff -u $W/want.norm $W/got.norm >$W/diff; then
    fail "$name" "records from the socket differ from the expected ones: $(cat $W/diff)"
    return 1
  fi
  # The journal: the same records, whole, under the same seqs.
  local first last
  first=$(head -n 1 $W/got | jq .seq)
  last=$(tail -n 1 $W/got | jq .seq)
  if ! wait_for 10 journal_has "$first" "$last" $W/got; then
    fail "$name" "the journal's records differ from the socket's: $(diff $W/got $W/journal)"
    return 1
  fi
  return 0
}
# journal_has FIRST LAST FILE: the journal's records FIRST..LAST of this run are FILE's lines.
# A short range is looked up by its RDMA_SEQ fields (the journal's index), a long one read whole.
journal_has() {
  local matches=() i
  if [ $(($2 - $1)) -lt 64 ]; then
    for ((i = $1; i <= $2; i++)); do matches+=("RDMA_SEQ=$i"); done
  fi
  journalctl -o json --output-fields=RDMA_RECORD,RDMA_STREAM --no-pager SYSLOG_IDENTIFIER=rdma-eventd \
    RDMA_STREAM="$STREAM" "${matches[@]}" |
    jq -r --argjson f "$1" --argjson l "$2" \
      'select(.RDMA_RECORD != null) | .RDMA_RECORD | fromjson | select(.seq >= $f and .seq <= $l) | tojson' \
      >$W/journal
  jq -c . "$3" | cmp -s - $W/journal
}

# asyncwatch_since_mark: the events asyncwatch printed since begin, as "TYPE PORT" lines.
asyncwatch_since_mark() {
  tail -n +$((AW_MARK + 1)) $AW | sed -n 's/.*(\([0-9]*\)), port \([0-9]*\).*/\1 \2/p'
}
# The daemon's records of async events among $W/got, as "TYPE PORT".
daemon_events() { jq -r 'select(.event_type >= 0) | "\(.event_type) \(.port)"' $W/got; }

# A record's port block for rxe0 port 1 on this veth (10 Gb/s: 1X, speed code 8), as jq input.
port() { # EVENT TYPE SEVERITY STATE PHYS MTU CHANGES [EXTRA]
  echo "{\"schema\":1,\"event\":\"$1\",\"event_type\":$2,\"severity\":\"$3\",\"device\":\"rxe0\",
  \"node_guid\":\"$GUID\",\"port\":1,\"link_layer\":\"ethernet\",\"state\":\"$4\",\"phys_state\":\"$5\",
  \"lid\":0,\"sm_lid\":0,\"sm_sl\":0,\"lmc\":0,\"active_mtu\":$6,\"width\":\"1x\",\"speed\":\"fdr10\",
  \"rate_gbps\":10,\"changes\":$7${8:+,$8}}" | jq -c .
}
health() { # HEALTH PREVIOUS(null: none) REASON DOWNS CAUSE SEVERITY
  jq -nc --arg h "$1" --arg p "$2" --arg r "$3" --argjson d "$4" --argjson c "$5" --arg s "$6" \
    --arg g "$GUID" '{schema: 1, event: "port_health", event_type: -1, severity: $s, device: "rxe0",
    node_guid: $g, port: 1, health: $h, previous_health: (if $p == "null" then null else $p end),
    reason: $r, downs_in_window: $d, errors_in_window: 0, window_s: 600, quiet_s: 600, cause_seq: $c}'
}
gid() { echo "{\"index\":$1,\"gid\":\"$2\",\"type\":\"roce_v2\",\"netdev\":\"veth0\"}"; }
# changes of a port record whose state and phys_state moved: STATE_OLD STATE_NEW PHYS_OLD PHYS_NEW
link_changes() {
  jq -nc --arg a "$1" --arg b "$2" --arg c "$3" --arg d "$4" \
    '{state: {old: $a, new: $b}, phys_state: {old: $c, new: $d}}'
}
GUID=0000:00ff:fe00:0001

run_scenarios() {
  . "$GUEST_DIR/scenarios.sh"
  . "$GUEST_DIR/scenario_devlink.sh"
  local s
  for s in ${SCENARIOS:-link mtu_mac gids asyncwatch health_wait burst counters delete readd netdev_delete devlink}; do
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
