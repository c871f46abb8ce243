#!/bin/bash
# The kernel tests' guest: PID 1 of the guest that tests/kernel/run.sh boots. It starts
# journald and udevd, makes a Soft-RoCE device (rdma_rxe) over a veth pair, runs the build's
# rdma-eventd on it with its socket, rdma-eventctl monitor and ibv_asyncwatch beside it, and runs
# the scenarios in sequence. Each scenario is one check: a line "PASS NAME" or "FAIL NAME: why"
# in /mnt/results. Records are compared whole (normalized: seq, stream, time and host masked)
# with the records the scenario expects, as read back from the socket and from the journal.
# /mnt/status gets 0 when every check passed. Settings come from /mnt/env (run.sh writes it):
# BUILD_DIR, GUEST_DIR (tests/kernel), and SCENARIOS (default: all, in order) to run a subset, BURST (link toggles in the
# burst, default 2000), DEMO=1 for the demo (no checks: the records as they come).
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

# wait_for SECONDS CMD...: until CMD succeeds (polling every 50 ms); 1 after SECONDS.
wait_for() {
  local deadline=$((${EPOCHREALTIME/./} + $1 * 1000000))
  shift
  until "$@"; do
    [ "${EPOCHREALTIME/./}" -ge $deadline ] && return 1
    sleep 0.05
  done
}
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
  # for the rest of the run. No journal budget: the journal must hold every record.
  cat >$W/config.json <<'EOF'
{"journal": {"budget": {"enabled": false}},
 "health": {"flap_downs": 3, "flap_window_s": 600, "flap_quiet_s": 600}}
EOF
  STATE_DIRECTORY=$W/state $B/rdma-eventd -f -c $W/config.json --socket "$RDMA_EVENTD_SOCKET" >$W/daemon.log 2>&1 &
  DAEMON=$!
  wait_for 20 test -S "$RDMA_EVENTD_SOCKET" || { echo "the daemon did not start"; return 1; }
  # Every record from the first (--since 0 replays what the daemon holds), and the kernel's
  # events as rdma-core's own watcher sees them.
  $B/rdma-eventctl monitor --json --since 0 >$MON 2>$W/monitor.err &
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
ch() { echo "{\"$1\":{\"old\":\"$2\",\"new\":\"$3\"}}"; }
GUID=0000:00ff:fe00:0001

# --- scenarios -----------------------------------------------------------------------------------
# link: down and up from ip link (rxe sends PORT_ACTIVE twice: NETDEV_UP, then the carrier's
# NETDEV_CHANGE), and from the peer's carrier (one PORT_ERR, one PORT_ACTIVE).
scenario_link() {
  begin
  ip link set veth0 down
  wait_for 10 has_records 2
  ip link set veth0 up
  wait_for 10 has_records 5
  ip link set veth1 down
  wait_for 10 has_records 7
  ip link set veth1 up
  {
    port port_err 10 error down disabled 1024 "$(ch state active down | jq -c ". + $(ch phys_state link_up disabled)")"
    health down healthy link_down 1 1 warning
    port port_active 9 notice active link_up 1024 "$(ch state down active | jq -c ". + $(ch phys_state disabled link_up)")"
    health healthy down link_up 1 3 notice
    port port_active 9 notice active link_up 1024 '{}'
    port port_err 10 error down polling 1024 "$(ch state active down | jq -c ". + $(ch phys_state link_up polling)")"
    health down healthy link_down 2 6 warning
    port port_active 9 notice active link_up 1024 "$(ch state down active | jq -c ". + $(ch phys_state polling link_up)")"
    health healthy down link_up 2 8 notice
  } | expect link && cp $W/got.norm /mnt/judge-link.ndjson && pass link
}

# mtu: rxe sends no event for an MTU change; the port's active MTU follows the netdev's (9000:
# 4096), and the next record says so. Then the MAC: the default GID (index 0) moves to the new
# MAC's link-local GID, and the old link-local address, which IPv6 keeps on the netdev, comes
# back as an address's GID: three GID_CHANGE. Deleting that address: a fourth.
scenario_mtu_mac() {
  begin
  ip link set veth0 mtu 9000
  sleep 0.5 # an MTU change makes no event: nothing may come
  if has_records 1; then
    fail mtu_mac "an MTU change made records: $(tail -n +$((MON_MARK + 1)) $MON)"
    return
  fi
  ip link set veth0 address 02:00:00:00:00:11
  wait_for 10 has_records 3
  ip addr del fe80::ff:fe00:1/64 dev veth0
  local mtu
  mtu=$(jq -nc '{"active_mtu":{"old":1024,"new":4096}}')
  {
    port gid_change 18 info active link_up 4096 "$mtu" "\"gids_added\":[],\"gids_removed\":[$(gid 0 fe80::ff:fe00:1)]"
    port gid_change 18 info active link_up 4096 '{}' "\"gids_added\":[$(gid 0 fe80::ff:fe00:11)],\"gids_removed\":[]"
    port gid_change 18 info active link_up 4096 '{}' "\"gids_added\":[$(gid 1 fe80::ff:fe00:1)],\"gids_removed\":[]"
    port gid_change 18 info active link_up 4096 '{}' "\"gids_added\":[],\"gids_removed\":[$(gid 1 fe80::ff:fe00:1)]"
  } | expect mtu_mac && cp $W/got.norm /mnt/judge-mtu_mac.ndjson && pass mtu_mac
}

# gids: IPv4 and IPv6 addresses added and removed: one GID_CHANGE each (RoCE v2 only); the
# records' entries equal the kernel's GID table (ibv_devinfo -v), and so does rdma-eventctl
# status.
scenario_gids() {
  begin
  ip addr add 192.0.2.1/24 dev veth0
  wait_for 10 has_records 1
  ip addr add 2001:db8::1/64 dev veth0 nodad
  wait_for 10 has_records 2
  ibv_devinfo -v -d rxe0 | sed -n 's/^[[:space:]]*GID\[ *\([0-9]*\)\]:[[:space:]]*\(.*\), RoCE v2$/\1 \2/p' >$W/gids.kernel
  local table='0 fe80::ff:fe00:11
1 ::ffff:192.0.2.1
2 2001:db8::1'
  if [ "$(cat $W/gids.kernel)" != "$table" ]; then
    fail gids "the kernel's GID table is not the one expected: $(cat $W/gids.kernel)"
    return
  fi
  local status
  status=$($B/rdma-eventctl status --json | jq -c '.devices[] | select(.device == "rxe0") | .ports[0].gids')
  if [ "$status" != 3 ]; then
    fail gids "rdma-eventctl status counts $status GIDs on rxe0/1, the kernel 3"
    return
  fi
  ip addr del 192.0.2.1/24 dev veth0
  wait_for 10 has_records 3
  ip addr del 2001:db8::1/64 dev veth0
  {
    port gid_change 18 info active link_up 4096 '{}' "\"gids_added\":[$(gid 1 ::ffff:192.0.2.1)],\"gids_removed\":[]"
    port gid_change 18 info active link_up 4096 '{}' "\"gids_added\":[$(gid 2 2001:db8::1)],\"gids_removed\":[]"
    port gid_change 18 info active link_up 4096 '{}' "\"gids_added\":[],\"gids_removed\":[$(gid 1 ::ffff:192.0.2.1)]"
    port gid_change 18 info active link_up 4096 '{}' "\"gids_added\":[],\"gids_removed\":[$(gid 2 2001:db8::1)]"
  } | expect gids || return
  # The entries the records added while both addresses were there are the kernel's table.
  jq -r 'select(.event == "gid_change") | .gids_added[] | "\(.index) \(.gid)"' $W/got | sort -n >$W/gids.added
  if ! diff <(sed -n '2,3p' $W/gids.kernel) $W/gids.added >$W/diff; then
    fail gids "the records' GIDs differ from ibv_devinfo's: $(cat $W/diff)"
    return
  fi
  cp $W/got.norm /mnt/judge-gids.ndjson
  pass gids
}

# asyncwatch: every async event the daemon published so far equals what ibv_asyncwatch, run
# beside it from the start, printed: same types, same ports, same order.
scenario_asyncwatch() {
  BASE=0 MON_MARK=0 AW_MARK=1
  records_after 1
  asyncwatch_since_mark >$W/aw.events
  daemon_events >$W/daemon.events
  if [ ! -s $W/aw.events ] || ! diff $W/aw.events $W/daemon.events >$W/diff; then
    fail asyncwatch "the daemon's events differ from ibv_asyncwatch's: $(cat $W/diff)"
    return
  fi
  pass asyncwatch
}

# health_wait: the third down within the window makes the port flapping; rdma-eventctl wait for
# active, started while the link is down, is released by the real link up.
scenario_health_wait() {
  begin
  ip link set veth0 down
  wait_for 10 has_records 2
  $B/rdma-eventctl wait rxe0/1 active --timeout 20s >$W/wait.out 2>&1 &
  local waiter=$!
  sleep 0.5
  if ! kill -0 $waiter 2>/dev/null; then
    fail health_wait "rdma-eventctl wait returned while the link was down: $(cat $W/wait.out)"
    return
  fi
  ip link set veth0 up
  local rc=0
  wait_for 10 eval '! kill -0 '$waiter' 2>/dev/null' || rc=timeout
  wait $waiter || rc=$?
  if [ "$rc" != 0 ]; then
    fail health_wait "rdma-eventctl wait was not released by the link up (exit $rc): $(cat $W/wait.out)"
    return
  fi
  {
    port port_err 10 error down disabled 4096 "$(ch state active down | jq -c ". + $(ch phys_state link_up disabled)")"
    health flapping healthy flaps_in_window 3 1 error
    port port_active 9 notice active link_up 4096 "$(ch state down active | jq -c ". + $(ch phys_state disabled link_up)")"
    port port_active 9 notice active link_up 4096 '{}'
  } | expect health_wait && pass health_wait
}

# burst: BURST link toggles from one ip -batch, as fast as the guest goes. Every event the kernel
# sent (ibv_asyncwatch's count) is a record, seq has no gap, the daemon read and acked each
# event, and the journal holds every record. The rate and the daemon's CPU time per event go to
# /mnt/bench.txt.
scenario_burst() {
  begin
  local i tick0 cpu0 t0 t1 n
  for ((i = 0; i < BURST / 2; i++)); do
    echo "link set veth0 down"
    echo "link set veth0 up"
  done >$W/burst.batch
  tick0=$(getconf CLK_TCK)
  cpu0=$(awk '{print $14 + $15}' /proc/$DAEMON/stat)
  t0=$(date +%s.%N)
  ip -batch $W/burst.batch
  t1=$(date +%s.%N)
  # Every event the kernel queued: asyncwatch sees them all; the daemon's records follow.
  local last_aw=-1
  while true; do
    sleep 1
    n=$(asyncwatch_since_mark | wc -l)
    [ "$n" = "$last_aw" ] && break
    last_aw=$n
  done
  wait_for 60 eval '[ "$(tail -n +$((MON_MARK + 1)) $MON | grep -c "\"event_type\":\(9\|10\),")" -ge '$n' ]'
  local cpu2
  cpu2=$(awk '{print $14 + $15}' /proc/$DAEMON/stat)
  records_after 1
  asyncwatch_since_mark >$W/aw.events
  daemon_events >$W/daemon.events
  local downs
  downs=$(grep -c '^10 ' $W/aw.events)
  if [ "$downs" != $((BURST / 2)) ]; then
    fail burst "the kernel sent $downs PORT_ERR for $((BURST / 2)) downs"
    return
  fi
  if ! diff $W/aw.events $W/daemon.events >$W/diff; then
    fail burst "the daemon's events differ from ibv_asyncwatch's ($n events): $(head -20 $W/diff)"
    return
  fi
  # seq: 1 to the last, no gap, no repeat, over the whole run so far.
  if ! jq -r .seq $MON | awk 'NR != $1 {bad = 1} END {exit bad}'; then
    fail burst "seq has a gap or a repeat"
    return
  fi
  local st read acked records last
  st=$($B/rdma-eventctl status --json)
  read=$(jq .counters.events_read <<<"$st")
  acked=$(jq .counters.events_acked <<<"$st")
  records=$(jq .counters.records <<<"$st")
  last=$(last_seq)
  local total_events
  total_events=$(grep -vc '"event_type":-1,' $MON)
  if [ "$read" != "$total_events" ] || [ "$acked" != "$total_events" ] || [ "$records" != "$last" ]; then
    fail burst "status: $read read, $acked acked, $records records; published $total_events events, last seq $last"
    return
  fi
  if [ "$(jq '.subscribers.records_lost' <<<"$st")" != 0 ]; then
    fail burst "subscribers lost records: $(jq -c .subscribers <<<"$st")"
    return
  fi
  if ! wait_for 30 journal_has 1 "$last" $MON; then
    fail burst "the journal does not hold every record ($(wc -l <$W/journal) of $last): $(diff $MON $W/journal | head -5)"
    return
  fi
  local cpu_s
  cpu_s=$(echo "($cpu2 - $cpu0) / $tick0" | bc -l)
  {
    echo "toggles=$BURST"
    echo "events=$n"
    echo "records=$(wc -l <$W/got)"
    printf 'ip_batch_s=%.2f\n' "$(echo "$t1 - $t0" | bc -l)"
    # The daemon's read times of the first and the last event.
    jq -r 'select(.event_type >= 0) | .time' $W/got | sed -n '1p;$p' | date -f - +%s.%N | tr '\n' ' ' |
      awk -v n="$n" '{printf "events_per_s=%.0f\n", (n - 1) / ($2 - $1)}'
    # How long after the last toggle the daemon read the last event.
    jq -r 'select(.event_type >= 0) | .time' $W/got | tail -n 1 | date -f - +%s.%N |
      awk -v t1="$t1" '{printf "last_event_read_after_last_toggle_s=%.3f\n", $1 - t1}'
    printf 'daemon_cpu_s=%.2f\n' "$cpu_s"
    printf 'daemon_cpu_us_per_event=%.0f\n' "$(echo "$cpu_s * 1000000 / $n" | bc -l)"
  } >/mnt/bench.txt
  cat /mnt/bench.txt
  pass burst
}

# delete: rdma link delete while the daemon holds rxe0. rxe has no disassociate, so the kernel
# sends nothing and the delete waits for every context to close; the daemon closes the device on
# udev's remove of uverbs0, so the delete completes within 2 s, and device_removed is published.
scenario_delete() {
  kill $ASYNCWATCH && wait $ASYNCWATCH # it holds the device too, and would block the delete
  begin
  local t0
  t0=$(date +%s.%N)
  rdma link delete rxe0 &
  local deleter=$!
  if ! wait_for 2 eval '! kill -0 '$deleter' 2>/dev/null'; then
    fail delete "rdma link delete rxe0 did not complete within 2 s (the daemon holds the device?)"
    return
  fi
  wait $deleter
  log "rdma link delete rxe0 took $(echo "$(date +%s.%N) - $t0" | bc) s"
  {
    echo '{"schema":1,"event":"device_removed","event_type":-1,"severity":"warning","device":"rxe0",
      "node_guid":"'$GUID'","port":0,"ports":[{"port":1,"link_layer":"ethernet","state":"active",
      "phys_state":"link_up","lid":0,"sm_lid":0,"sm_sl":0,"lmc":0,"active_mtu":4096,"width":"1x",
      "speed":"fdr10","rate_gbps":10}]}' | jq -c .
    health gone flapping device_removed 3 1 warning
  } | expect delete || return
  [ -e /sys/class/infiniband/rxe0 ] && { fail delete "rxe0 is still in /sys/class/infiniband"; return; }
  pass delete
}

# readd: the device added again (its node GUID now comes from the MAC set in mtu_mac, so health
# sees a new port): device_added, its port's state, then its events flow (a link down and up).
scenario_readd() {
  local GUID=0000:00ff:fe00:0011
  begin
  rdma link add rxe0 type rxe netdev veth0 || { fail readd "rdma link add failed"; return; }
  wait_for 10 has_records 3
  ip link set veth0 down
  wait_for 10 has_records 5
  ip link set veth0 up
  {
    echo '{"schema":1,"event":"device_added","event_type":-1,"severity":"notice","device":"rxe0",
      "node_guid":"'$GUID'","port":0}' | jq -c .
    port port_state -1 info active link_up 4096 '{}'
    health healthy null first_seen 0 2 notice
    port port_err 10 error down disabled 4096 "$(ch state active down | jq -c ". + $(ch phys_state link_up disabled)")"
    health down healthy link_down 1 4 warning
    port port_active 9 notice active link_up 4096 "$(ch state down active | jq -c ". + $(ch phys_state disabled link_up)")"
    health healthy down link_up 1 6 notice
    port port_active 9 notice active link_up 4096 '{}'
  } | expect readd && pass readd
}

# netdev_delete: the netdev deleted under the device: rxe unregisters the device, the daemon lets
# go of it on udev's remove, the netdev's deletion completes, and device_removed is published.
# The kernel removes the netdev's GIDs (a GID_CHANGE) from a work queue of its own while the
# device's unregistration runs from another: when the unregistration wins, the daemon has closed
# the device before that event, so the gid_change record may or may not come first.
scenario_netdev_delete() {
  local GUID=0000:00ff:fe00:0011
  begin
  ip link del veth0 &
  local deleter=$!
  if ! wait_for 3 eval '! kill -0 '$deleter' 2>/dev/null'; then
    fail netdev_delete "ip link del veth0 did not complete within 3 s"
    return
  fi
  wait $deleter
  if ! wait_for 5 eval '[ ! -e /sys/class/infiniband/rxe0 ]'; then
    fail netdev_delete "rxe0 is still there after its netdev was deleted"
    return
  fi
  wait_for 10 has_records 2
  local gid_first=0
  [ "$(sed -n "$((MON_MARK + 1))p" $MON | jq -r .event)" = gid_change ] && gid_first=1
  {
    [ $gid_first = 1 ] &&
      port gid_change 18 info active link_up 4096 '{}' "\"gids_added\":[],\"gids_removed\":[$(gid 0 fe80::ff:fe00:11)]"
    echo '{"schema":1,"event":"device_removed","event_type":-1,"severity":"warning","device":"rxe0",
      "node_guid":"'$GUID'","port":0,"ports":[{"port":1,"link_layer":"ethernet","state":"active",
      "phys_state":"link_up","lid":0,"sm_lid":0,"sm_sl":0,"lmc":0,"active_mtu":4096,"width":"1x",
      "speed":"fdr10","rate_gbps":10}]}' | jq -c .
    health gone healthy device_removed 1 $((gid_first + 1)) warning
  } | expect netdev_delete && pass netdev_delete
}

run_scenarios() {
  local s
  for s in ${SCENARIOS:-link mtu_mac gids asyncwatch health_wait burst delete readd netdev_delete}; do
    log "scenario $s"
    "scenario_$s"
  done
}

# The demo (scripts/demo_kernel.sh): real link and address changes, each followed by the records
# rdma-eventctl monitor printed for it (/mnt/demo.txt).
demo() {
  local out=$W/demo.txt cmd n
  $B/rdma-eventctl monitor --since 0 --color never >$W/demo-monitor.txt 2>&1 &
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
    $B/rdma-eventctl status --color never
    echo "== rdma-eventctl history (the guest's journal), the last 5"
    $B/rdma-eventctl history 2>&1 | tail -n 5
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
