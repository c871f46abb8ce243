# The kernel tests' scenarios, sourced by guest.sh (their helpers, set-up and records are there).
# Each is one check: it waits for the records its steps cause, compares them whole with the ones
# it expects (expect), and says pass NAME or fail NAME. They run in sequence in one guest, each
# from the state the one before left.

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
    port port_err 10 error down disabled 1024 "$(link_changes active down link_up disabled)"
    health down healthy link_down 1 1 warning
    port port_active 9 notice active link_up 1024 "$(link_changes down active disabled link_up)"
    health healthy down link_up 1 3 notice
    port port_active 9 notice active link_up 1024 '{}'
    port port_err 10 error down polling 1024 "$(link_changes active down link_up polling)"
    health down healthy link_down 2 6 warning
    port port_active 9 notice active link_up 1024 "$(link_changes down active polling link_up)"
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
  status=$("$B"/rdma-eventctl status --json | jq -c '.devices[] | select(.device == "rxe0") | .ports[0].gids')
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
  "$B"/rdma-eventctl wait rxe0/1 active --timeout 20s >$W/wait.out 2>&1 &
  local waiter=$!
  # It waits once it is the daemon's subscriber (it has read the port's state by then), and
  # still does a moment later.
  if ! wait_for 10 is_subscriber $waiter || ! sleep 0.3 || ! kill -0 $waiter 2>/dev/null; then
    fail health_wait "rdma-eventctl wait did not wait while the link was down: $(cat $W/wait.out)"
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
    port port_err 10 error down disabled 4096 "$(link_changes active down link_up disabled)"
    health flapping healthy flaps_in_window 3 1 error
    port port_active 9 notice active link_up 4096 "$(link_changes down active disabled link_up)"
    port port_active 9 notice active link_up 4096 '{}'
  } | expect health_wait && pass health_wait
}

is_subscriber() {
  "$B"/rdma-eventctl status --json |
    jq -e --argjson pid "$1" 'any(.subscribers.list[]; .pid == $pid)' >/dev/null
}

# burst: BURST link downs, each followed by an up, from one ip -batch, as fast as the guest goes.
# Every event the kernel
# sent (ibv_asyncwatch's count) is a record, seq has no gap, the daemon read and acked each
# event, and the journal holds every record. The rate and the daemon's CPU time per event go to
# /mnt/bench.txt.
scenario_burst() {
  begin
  local i tick0 cpu0 t0 t1 n
  for ((i = 0; i < BURST; i++)); do
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
  if [ "$downs" != "$BURST" ]; then
    fail burst "the kernel sent $downs PORT_ERR for $BURST downs"
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
  st=$("$B"/rdma-eventctl status --json)
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
  cpu_s=$(awk -v a="$cpu0" -v b="$cpu2" -v t="$tick0" 'BEGIN { print (b - a) / t }')
  {
    echo "downs=$BURST"
    echo "toggles=$((2 * BURST))"
    echo "events=$n"
    echo "records=$(wc -l <$W/got)"
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "ip_batch_s=%.2f\n", b - a }'
    # The daemon's read times of the first and the last event.
    jq -r 'select(.event_type >= 0) | .time' $W/got | sed -n '1p;$p' | date -f - +%s.%N | tr '\n' ' ' |
      awk -v n="$n" '{printf "events_per_s=%.0f\n", (n - 1) / ($2 - $1)}'
    # How long after the last toggle the daemon read the last event.
    jq -r 'select(.event_type >= 0) | .time' $W/got | tail -n 1 | date -f - +%s.%N |
      awk -v t1="$t1" '{printf "last_event_read_after_last_toggle_s=%.3f\n", $1 - t1}'
    printf 'daemon_cpu_s=%.2f\n' "$cpu_s"
    awk -v c="$cpu_s" -v n="$n" 'BEGIN { printf "daemon_cpu_us_per_event=%.0f\n", c * 1000000 / n }'
  } >/mnt/bench.txt
  cat /mnt/bench.txt
  pass burst
}

# counters: rxe has no counters/ group (no process_mad), only hw_counters/, whose link_downed
# steps on every netdev down, just after the kernel queues the PORT_ERR (rxe_port_down). The
# daemon reads it there (its log says bit errors are not judged on rxe0), ties each step to the
# port_err it read: not one link_quality record in the whole run, the burst of flaps before this
# included (a hidden_down would be one), and shows the kernel's value once its timer has read
# it again (link_health.interval_s is 2 in the guest).
scenario_counters() {
  begin
  local dir=/sys/class/infiniband/rxe0/ports/1 before after
  if [ -e $dir/counters ]; then
    fail counters "rxe0/1 has a counters/ group: $(ls $dir/counters | head -5 | tr '\n' ' ')"
    return
  fi
  if ! grep -q "rxe0: no counters/ group" $W/daemon.log; then
    fail counters "the daemon did not say that rxe0 has no counters/ group: $(grep -i counter $W/daemon.log | head -3)"
    return
  fi
  before=$(cat $dir/hw_counters/link_downed)
  ip link set veth0 down
  wait_for 10 has_records 1
  ip link set veth0 up
  wait_for 10 has_records 3
  after=$(cat $dir/hw_counters/link_downed)
  if [ $((after - before)) != 1 ]; then
    fail counters "hw_counters/link_downed went from $before to $after for one netdev down"
    return
  fi
  if ! wait_for 10 daemon_link_downed_is "$after"; then
    fail counters "rdma-eventctl status shows link_downed $(daemon_link_downed) for rxe0/1, the kernel $after"
    return
  fi
  # Three more of its reads (6 s): a step left unexplained would be a hidden_down by then.
  local samples
  samples=$(daemon_samples)
  if ! wait_for 20 eval '[ "$(daemon_samples)" -ge '$((samples + 3))' ]'; then
    fail counters "the daemon read rxe0's counters $(($(daemon_samples) - samples)) times in 20 s (every 2 s expected)"
    return
  fi
  local link_records
  link_records=$(grep -c '"event":"link_quality"' $MON)
  if [ "$link_records" != 0 ]; then
    fail counters "$link_records link_quality records: $(grep '"event":"link_quality"' $MON | head -3)"
    return
  fi
  # The port stays flapping (the burst): no port_health record.
  {
    port port_err 10 error down disabled 4096 "$(link_changes active down link_up disabled)"
    port port_active 9 notice active link_up 4096 "$(link_changes down active disabled link_up)"
    port port_active 9 notice active link_up 4096 '{}'
  } | expect counters && pass counters
}

daemon_link_downed() {
  "$B"/rdma-eventctl status --json |
    jq -r '.link_health.ports[] | select(.device == "rxe0" and .port == 1) | .counters["hw_counters/link_downed"]'
}
daemon_link_downed_is() { [ "$(daemon_link_downed)" = "$1" ]; }
daemon_samples() { "$B"/rdma-eventctl status --json | jq -r .link_health.samples; }

# delete: rdma link delete while the daemon holds rxe0. rxe has no disassociate, so the kernel
# sends nothing and the delete waits for every context to close; the daemon closes the device on
# udev's remove of uverbs0, so the delete completes within 2 s, and device_removed is published.
scenario_delete() {
  kill $ASYNCWATCH && wait $ASYNCWATCH # it holds the device too, and would block the delete
  begin
  local t0
  t0=$(date +%s.%N)
  rdma link delete rxe0 &
  if ! ends_within 2 $!; then
    fail delete "rdma link delete rxe0 did not complete within 2 s (the daemon holds the device?)"
    return
  fi
  log "rdma link delete rxe0 took $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }') s"
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
    port port_err 10 error down disabled 4096 "$(link_changes active down link_up disabled)"
    health down healthy link_down 1 4 warning
    port port_active 9 notice active link_up 4096 "$(link_changes down active disabled link_up)"
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
  if ! ends_within 3 $!; then
    fail netdev_delete "ip link del veth0 did not complete within 3 s"
    return
  fi
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

