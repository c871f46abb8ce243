# shellcheck shell=bash
# The devlink scenario of the kernel tests, sourced by guest.sh after scenarios.sh (its helpers
# are there). Real devlink health events from netdevsim (built on the host for the guest's
# kernel: netdevsim_build.sh; NETDEVSIM_KO in /mnt/env), as the devlink family's "config"
# multicast group carries them: netlink-capture (the build's tests/harness/netlink_capture.cc)
# writes every message in hex, `devlink monitor health` runs beside it.
#
# Steps, each judged against `devlink health show -j`, and by the messages it made (one
# DEVLINK_CMD_HEALTH_REPORTER_RECOVER per report and one per recovery):
#   a device (netdevsim1, one port); an rxe device on its netdev, and what sysfs says of both;
#   a break, recovered at once; fail_recover set and a break (the recovery fails: EINVAL, the
#   reporter stays in error); a dump while in error; a break while in error (ECANCELED, the
#   error count goes on); the recovery asked for by hand; a second device (netdevsim2), broken
#   and recovered; its deletion (no health message); a third (netdevsim3), broken with a failing
#   recovery and deleted while in error (its reporter forgotten: a `removed` record).
# The daemon (started by guest.sh before netdevsim was loaded, with netdevsim's "dummy" reporter
# judged as fatal) is checked at each step: its devlink_health records and rxe1's port_health
# verdicts from the socket (MON), the same records in the journal by their RDMA_DEVLINK_* fields,
# its status, and a second daemon started while the reporter is in error (found_in_error).
# What is saved in /mnt/devlink: each step's messages as NAME.hex (a first comment line says
# what happened; tests/unit/data/devlink/ holds a copy), the whole capture, the monitor's text,
# every `devlink health show -j`, rdma and sysfs findings (sysfs.txt).

DL=$W/devlink
DLOUT=/mnt/devlink
NSIM_DEBUG=/sys/kernel/debug/netdevsim
RECOVER_CMD=36 # DEVLINK_CMD_HEALTH_REPORTER_RECOVER (54), as the genetlink header's hex

# cap_mark: the number of lines the capture has written once it has read everything the kernel
# queued for it so far (its --marks file).
cap_mark() {
  local n
  n=$(lines $DL/marks)
  kill -USR1 "$CAPTURE" || return 1
  wait_for 10 has_lines $DL/marks $((n + 1)) || return 1
  sed -n "$((n + 1))p" $DL/marks
}

# dl_step NAME [WHAT]: the capture's messages since the previous step are this step's
# (STEP_FILE); with WHAT, saved as DLOUT/NAME.hex under a comment line saying WHAT.
dl_step() {
  local m
  m=$(cap_mark) || {
    fail devlink "$1: the capture did not take a mark: $(cat $DL/capture.err)"
    return 1
  }
  STEP_FILE=$DL/step-$1.hex
  if [ "$m" -gt "$LAST_MARK" ]; then
    sed -n "$((LAST_MARK + 1)),${m}p" $DL/capture.hex >"$STEP_FILE"
  else
    : >"$STEP_FILE"
  fi
  LAST_MARK=$m
  [ $# = 1 ] || save_hex "$1" "$2" <"$STEP_FILE"
}
# save_hex NAME WHAT: stdin's hex lines as DLOUT/NAME.hex under the comment line.
save_hex() {
  {
    echo "# netdevsim on Linux $(uname -r): $2"
    cat
  } >$DLOUT/"$1".hex
}

# health_messages FILE: the health reporters' notifications among FILE's messages (the
# genetlink command is the 17th byte).
health_messages() { awk -v c=$RECOVER_CMD 'substr($0, 33, 2) == c' "$1"; }

# health_is STEP DEV ERRORS RECOVERS STATE: `devlink health show` says so of DEV's dummy
# reporter (saved as DLOUT/show-STEP.json).
health_is() {
  devlink health show -j >$DLOUT/show-"$1".json 2>&1 &&
    jq -e --arg d "netdevsim/$2" --argjson e "$3" --argjson r "$4" --arg s "$5" \
      '.health[$d][] | select(.reporter == "dummy") | .error == $e and .recover == $r and .state == $s' \
      $DLOUT/show-"$1".json >/dev/null
}

# expect_health STEP HEALTH_MESSAGES DEV ERRORS RECOVERS STATE: the step made that many health
# messages, each of DEV's dummy reporter, and `devlink health show` says that reporter is so.
expect_health() {
  local n
  n=$(health_messages "$STEP_FILE" | wc -l)
  # A health step makes those messages only; a device's creation makes others (the device, its
  # port, traps, parameters...), never a health message.
  if [ "$n" != "$2" ] || { [ "$2" != 0 ] && [ "$(wc -l <"$STEP_FILE")" != "$2" ]; }; then
    fail devlink "$1: $n health messages of $(wc -l <"$STEP_FILE"), $2 expected"
    return 1
  fi
  # The device's and the reporter's names are NUL-terminated strings in each message.
  local dev_hex
  dev_hex=$(printf '%s' "$3" | od -An -tx1 | tr -d ' \n')00
  if [ "$2" != 0 ] && grep -v -e "$dev_hex.*64756d6d7900" "$STEP_FILE" | grep -q .; then
    fail devlink "$1: a message that is not netdevsim/$3's dummy reporter's: $(cat "$STEP_FILE")"
    return 1
  fi
  if ! health_is "$1" "$3" "$4" "$5" "$6"; then
    fail devlink "$1: devlink health show: $(cat $DLOUT/show-"$1".json), expected $3's dummy $6 with $4 errors, $5 recoveries"
    return 1
  fi
}

# break_health DEV: writes a break message to DEV's dummy reporter; prints /bin/echo's error.
# (/bin/echo: the shell's own echo reports every failed write as "I/O error".) Its stderr is
# what comes out, its stdout goes to the file: the order of the redirections is meant.
# shellcheck disable=SC2069
break_health() { /bin/echo oops 2>&1 >$NSIM_DEBUG/"$1"/health/break_health; }

# monitor_states: "STATE ERRORS RECOVERS" of each notification `devlink monitor health` printed
# (iproute2 6.1's text: "state error error 1 recover 0 ...").
monitor_states() { sed -n 's/^ *state \([a-z]*\) error \([0-9]*\) recover \([0-9]*\) .*/\1 \2 \3/p' $DLOUT/monitor.txt; }

# monitor_joined PID: one of PID's netlink sockets has joined a multicast group.
monitor_joined() {
  local inodes
  inodes=$(ls -l /proc/"$1"/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p' | tr '\n' ' ')
  [ -n "$inodes" ] && awk -v want=" $inodes" '$2 == 16 && $4 != "00000000" && index(want, " " $10 " ")' \
    /proc/net/netlink | grep -q .
}

# The daemon's devlink_health records since the scenario's mark, one line each: "DEVICE/PORT
# HANDLE REPORTER CHANGE STATE ERRORS RECOVERIES"; and rxe1's port_health verdicts, "HEALTH
# REASON". Two lists: a report and its recovery read in one batch put their records before
# both verdicts, read apart each before its own.
daemon_devlink() {
  tail -n +$((DL_MON_MARK + 1)) $MON | jq -r 'select(.event == "devlink_health") |
    "\(.device)/\(.port) \(.devlink.handle) \(.devlink.reporter) \(.devlink.change) \(.devlink.state) \(.devlink.error_count) \(.devlink.recover_count)"' | paste -sd'|'
}
daemon_verdicts() {
  tail -n +$((DL_MON_MARK + 1)) $MON |
    jq -r 'select(.event == "port_health" and .device == "rxe1" and .port == 1) | "\(.health) \(.reason)"' | paste -sd'|'
}
# expect_daemon STEP RECORDS VERDICTS: the daemon's records since the last step are these (10 s
# at most), and no more; then the next step's are counted from here.
expect_daemon() {
  local t0 dl_want_records=$2 dl_want_verdicts=$3
  t0=$(date +%s%N)
  if ! wait_for 10 eval '[ "$(daemon_devlink)" = "$dl_want_records" ] && [ "$(daemon_verdicts)" = "$dl_want_verdicts" ]'; then
    fail devlink "$1: the daemon's devlink records [$(daemon_devlink)] and rxe1/1's verdicts [$(daemon_verdicts)], expected [$2] and [$3]; its log: $(tail -n 5 $W/daemon.log)"
    return 1
  fi
  log "devlink $1: the daemon's records in $((($(date +%s%N) - t0) / 1000000)) ms after the step's mark"
  DL_MON_MARK=$(lines $MON)
}

scenario_devlink() {
  mkdir -p $DL $DLOUT
  if ! devlink_setup; then
    fail devlink "set-up: $(cat $DL/setup.err 2>/dev/null)"
    return
  fi
  devlink_steps || { devlink_stop; return; }
  wait_for 10 eval '[ "$(monitor_states | wc -l)" -ge 8 ]'
  devlink_stop
  devlink_daemon_end || return
  # The capture has a message for every notification the monitor printed, which says the
  # reporter's state and counts in each, in order: the kernel's steps.
  local captured printed want
  captured=$(health_messages $DL/capture.hex | wc -l)
  printed=$(monitor_states | wc -l)
  want="error 1 0|healthy 1 1|error 2 1|error 3 1|healthy 3 2|error 1 0|healthy 1 1|error 1 0"
  if [ "$captured" != 8 ] || [ "$printed" != 8 ] || [ "$(monitor_states | paste -sd'|')" != "$want" ]; then
    fail devlink "the capture has $captured health messages, devlink monitor $printed ($want expected): $(cat $DLOUT/monitor.txt)"
    return
  fi
  pass devlink
}

devlink_setup() {
  {
    [ -r "${NETDEVSIM_KO:-}" ] || { echo "no netdevsim.ko (NETDEVSIM_KO=${NETDEVSIM_KO:-})"; return 1; }
    mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug || return 1
    modprobe psample && insmod "$NETDEVSIM_KO" || return 1
    "$B"/netlink-capture --output $DL/capture.hex --ready $DL/ready --marks $DL/marks 2>$DL/capture.err &
    CAPTURE=$!
    wait_for 20 test -e $DL/ready || { echo "netlink-capture did not start: $(cat $DL/capture.err)"; return 1; }
    stdbuf -oL devlink monitor health >$DLOUT/monitor.txt 2>&1 &
    DLMON=$!
    wait_for 20 monitor_joined $DLMON || { echo "devlink monitor did not join a group"; return 1; }
  } >$DL/setup.err 2>&1
  LAST_MARK=0
  DL_MON_MARK=$(lines $MON)
  # The first message: CTRL_CMD_GETFAMILY's reply.
  dl_step getfamily_reply "CTRL_CMD_GETFAMILY \"devlink\": the family's id and its multicast groups"
}

devlink_stop() {
  kill "$CAPTURE" "$DLMON" 2>/dev/null
  wait "$CAPTURE" "$DLMON" 2>/dev/null
  cp $DL/capture.hex $DL/marks $DLOUT/ 2>/dev/null
}

devlink_steps() {
  # A device with one port: devlink netdevsim/netdevsim1.
  echo "1 1" >/sys/bus/netdevsim/new_device || { fail devlink "new_device failed"; return 1; }
  dl_step new_device "echo \"1 1\" > /sys/bus/netdevsim/new_device (netdevsim1, one port)" || return 1
  expect_health new_device 0 netdevsim1 0 0 healthy || return 1
  devlink_rxe || return 1
  # The daemon opens rxe1 (udev): its port's first verdict, whatever it is, starts the count.
  wait_for 10 eval '[ -n "$(daemon_verdicts)" ]' || { fail devlink "the daemon never judged rxe1/1"; return 1; }
  sleep 0.5 # a second verdict of the port coming up, if any, is not the reporter's
  DL_MON_MARK=$(lines $MON)
  "$B"/netlink-capture --query --exit-after-answer --timeout 20 --output $DL/dump-healthy.hex 2>$DL/dump.err ||
    { fail devlink "the dump (healthy): $(cat $DL/dump.err)"; return 1; }
  tail -n +2 $DL/dump-healthy.hex | save_hex dump_healthy "DEVLINK_CMD_HEALTH_REPORTER_GET dump, both reporters healthy"

  # A break, recovered at once: a report (error), then the recovery (healthy).
  local err t_break
  t_break=$(date +%s%6N)
  err=$(break_health netdevsim1) || { fail devlink "break (recovering): $err"; return 1; }
  dl_step report_recover || return 1
  expect_health report_recover 2 netdevsim1 1 1 healthy || return 1
  expect_daemon report_recover \
    "rxe1/1 netdevsim/netdevsim1 dummy error error 1 0|rxe1/1 netdevsim/netdevsim1 dummy recovered healthy 1 1" \
    "fatal device_fatal|healthy devlink_recovered" || return 1
  # How long from the break to the record's time stamp (the daemon's clock: the same as ours).
  log "devlink: the report's record was made $(($(jq -r 'select(.event == "devlink_health") |
    (.time[0:19] + "Z" | fromdate) * 1000000 + (.time[20:26] | tonumber)' $MON | tail -n 2 | head -n 1) - t_break)) µs after the break"
  sed -n 1p "$STEP_FILE" | save_hex report_error "break_health: the report (state error, 1 error, 0 recoveries)"
  sed -n 2p "$STEP_FILE" | save_hex recover_ok "break_health: the automatic recovery (state healthy, 1 error, 1 recovery)"

  # The recovery fails: the write fails with EINVAL, the reporter stays in error.
  /bin/echo Y >$NSIM_DEBUG/netdevsim1/health/fail_recover
  err=$(break_health netdevsim1) && { fail devlink "break with fail_recover succeeded"; return 1; }
  case $err in *"Invalid argument"*) ;; *) fail devlink "break with fail_recover: $err (EINVAL expected)"; return 1 ;; esac
  dl_step stuck_report "fail_recover Y, break_health: the report; the recovery fails (EINVAL): state error, 2 errors, 1 recovery" || return 1
  expect_health stuck_report 1 netdevsim1 2 1 error || return 1
  expect_daemon stuck_report "rxe1/1 netdevsim/netdevsim1 dummy error error 2 1" "fatal device_fatal" || return 1
  devlink_late_daemon || return 1
  "$B"/netlink-capture --query --exit-after-answer --timeout 20 --output $DL/dump-error.hex 2>$DL/dump.err ||
    { fail devlink "the dump (error): $(cat $DL/dump.err)"; return 1; }
  tail -n +2 $DL/dump-error.hex | save_hex dump_error_state "DEVLINK_CMD_HEALTH_REPORTER_GET dump, dummy in error (2 errors, 1 recovery)"

  # A break while in error: reported (the count goes on), no recovery tried (ECANCELED).
  err=$(break_health netdevsim1) && { fail devlink "a break in error succeeded"; return 1; }
  case $err in *"Operation canceled"*) ;; *) fail devlink "a break in error: $err (ECANCELED expected)"; return 1 ;; esac
  dl_step stuck_report_canceled "break_health while in error: reported, no recovery tried (ECANCELED): state error, 3 errors, 1 recovery" || return 1
  expect_health stuck_report_canceled 1 netdevsim1 3 1 error || return 1
  # Another error, not recovered: said, and the verdict stays (no record).
  expect_daemon stuck_report_canceled "rxe1/1 netdevsim/netdevsim1 dummy error_again error 3 1" "" || return 1

  # Recovered by hand.
  /bin/echo N >$NSIM_DEBUG/netdevsim1/health/fail_recover
  devlink health recover netdevsim/netdevsim1 reporter dummy || { fail devlink "devlink health recover failed"; return 1; }
  dl_step recover_manual "fail_recover N, devlink health recover netdevsim/netdevsim1 reporter dummy (state healthy, 3 errors, 2 recoveries)" || return 1
  expect_health recover_manual 1 netdevsim1 3 2 healthy || return 1
  expect_daemon recover_manual "rxe1/1 netdevsim/netdevsim1 dummy recovered healthy 3 2" "healthy devlink_recovered" || return 1

  # A second device: its own reporters, its own counts.
  echo "2 1" >/sys/bus/netdevsim/new_device || { fail devlink "the second new_device failed"; return 1; }
  dl_step new_device_second "echo \"2 1\" > /sys/bus/netdevsim/new_device (netdevsim2, one port)" || return 1
  expect_health new_device_second 0 netdevsim2 0 0 healthy || return 1
  err=$(break_health netdevsim2) || { fail devlink "break of netdevsim2: $err"; return 1; }
  dl_step second_report_recover || return 1
  expect_health second_report_recover 2 netdevsim2 1 1 healthy || return 1
  health_is second_first netdevsim1 3 2 healthy || { fail devlink "netdevsim1 changed with netdevsim2"; return 1; }
  # A devlink instance with no RDMA device: published with its handle, judging no port.
  expect_daemon second_report_recover \
    "/0 netdevsim/netdevsim2 dummy error error 1 0|/0 netdevsim/netdevsim2 dummy recovered healthy 1 1" "" || return 1
  sed -n 1p "$STEP_FILE" | save_hex second_report_error "break_health on netdevsim2: the report (state error, 1 error)"
  sed -n 2p "$STEP_FILE" | save_hex second_recover_ok "break_health on netdevsim2: the automatic recovery (state healthy, 1 error, 1 recovery)"

  # Deleting a device sends no health message.
  echo 2 >/sys/bus/netdevsim/del_device || { fail devlink "del_device failed"; return 1; }
  dl_step del_device "echo 2 > /sys/bus/netdevsim/del_device (netdevsim2 deleted)" || return 1
  if [ "$(health_messages "$STEP_FILE" | wc -l)" != 0 ]; then
    fail devlink "deleting netdevsim2 sent health messages: $(health_messages "$STEP_FILE")"
    return 1
  fi

  # A device deleted while its reporter is stuck in error: its reporter goes with its instance
  # (DEVLINK_CMD_DEL, no health message), and the daemon forgets it with a `removed` record.
  echo "3 1" >/sys/bus/netdevsim/new_device || { fail devlink "the third new_device failed"; return 1; }
  dl_step new_device_third || return 1
  /bin/echo Y >$NSIM_DEBUG/netdevsim3/health/fail_recover
  break_health netdevsim3 >/dev/null
  dl_step third_stuck || return 1
  expect_health third_stuck 1 netdevsim3 1 0 error || return 1
  expect_daemon third_stuck "/0 netdevsim/netdevsim3 dummy error error 1 0" "" || return 1
  echo 3 >/sys/bus/netdevsim/del_device || { fail devlink "the third del_device failed"; return 1; }
  dl_step third_deleted || return 1
  expect_daemon third_deleted "/0 netdevsim/netdevsim3 dummy removed removed 1 0" "" || return 1
}

# devlink_rxe: an rxe device on netdevsim1's netdev, and the sysfs links that lead from one to
# the other (the daemon maps devlink's netdevsim/netdevsim1 to an RDMA device through them).
devlink_rxe() {
  local netdev out=$DLOUT/sysfs.txt
  netdev=$(ls /sys/bus/netdevsim/devices/netdevsim1/net/ 2>/dev/null | head -n 1)
  {
    echo "netdevsim1's netdevs: $(ls /sys/bus/netdevsim/devices/netdevsim1/net/ 2>&1 | tr '\n' ' ')"
    [ -n "$netdev" ] || { fail devlink "netdevsim1 has no netdev"; return 1; }
    ip link set "$netdev" up
    echo "# rdma link add rxe1 type rxe netdev $netdev"
    rdma link add rxe1 type rxe netdev "$netdev" 2>&1
    echo "exit status $?"
    udevadm settle
    rdma link show 2>&1
    for p in /sys/class/net/"$netdev" /sys/class/net/"$netdev"/device /sys/class/infiniband/rxe1 \
      /sys/class/infiniband/rxe1/device /sys/bus/netdevsim/devices/netdevsim1 \
      /sys/class/net/"$netdev"/device/subsystem /sys/class/net/"$netdev"/device/driver \
      /sys/class/infiniband/rxe1/parent /sys/class/infiniband/rxe1/ports/1/gid_attrs/ndevs/0; do
      if [ -L "$p" ]; then
        echo "$p -> $(readlink "$p") = $(readlink -f "$p")"
      elif [ -f "$p" ]; then
        echo "$p: $(cat "$p" 2>&1)"
      elif [ -e "$p" ]; then
        echo "$p = $(readlink -f "$p")"
      else
        echo "$p: absent"
      fi
    done
    echo "# ls /sys/class/infiniband/rxe1/"
    ls /sys/class/infiniband/rxe1/ 2>&1 | tr '\n' ' '
    echo
    echo "# devlink dev show; devlink port show -j"
    devlink dev show 2>&1
    devlink port show -j 2>&1
    echo "# ls /sys/bus/netdevsim/devices/netdevsim1/"
    ls /sys/bus/netdevsim/devices/netdevsim1/ 2>&1 | tr '\n' ' '
    echo
  } >$out 2>&1
  cat $out
  # rxe takes the netdev; the way from rxe1 to the devlink device: its port's netdev (rxe1 has
  # no device link of its own, it is a virtual device), whose device link is netdevsim1.
  if [ "$(cat /sys/class/infiniband/rxe1/ports/1/gid_attrs/ndevs/0 2>&1)" != "$netdev" ]; then
    fail devlink "rxe1 is not on $netdev: $(cat $out)"
    return 1
  fi
  if [ "$(readlink -f /sys/class/net/"$netdev"/device)" != /sys/devices/netdevsim1 ] ||
    [ "$(readlink -f /sys/class/net/"$netdev"/device/subsystem)" != /sys/bus/netdevsim ]; then
    fail devlink "$netdev's device link does not lead to the netdevsim bus's netdevsim1: $(cat $out)"
    return 1
  fi
}

# devlink_late_daemon: a second daemon started while netdevsim1's dummy is in error (its own
# state directory, no socket, no journal, records on stdout) knows it from its dump at start:
# found_in_error, and rxe1/1 fatal.
devlink_late_daemon() {
  local late=$DL/late.ndjson pid want
  mkdir -p $DL/late-state
  STATE_DIRECTORY=$DL/late-state "$B"/rdma-eventd -f -c $W/config.json --no-socket --no-journal \
    --print-records >$late 2>$DL/late.log &
  pid=$!
  want="rxe1/1 netdevsim/netdevsim1 dummy found_in_error error 2 1"
  late_found() {
    [ "$(jq -r 'select(.event == "devlink_health") | "\(.device)/\(.port) \(.devlink.handle) \(.devlink.reporter) \(.devlink.change) \(.devlink.state) \(.devlink.error_count) \(.devlink.recover_count)"' $late | paste -sd'|')" = "$want" ] &&
      jq -e -s '[.[] | select(.event == "port_health" and .device == "rxe1" and .port == 1)] | last | .health == "fatal" and .reason == "device_fatal"' $late >/dev/null
  }
  if ! wait_for 10 late_found; then
    kill $pid
    wait $pid
    fail devlink "a daemon started while the reporter is in error: $(cat $late) $(cat $DL/late.log)"
    return 1
  fi
  kill $pid
  wait $pid
  cp $late $DL/late.log $DLOUT/
}

# devlink_daemon_end: the daemon's status shows the reporters with the ports they concern (none
# of the deleted devices'), netdevsim1's devlink port with the netdev `devlink port show` gives
# it, and the journal has its records, by their RDMA_DEVLINK_* fields, in order.
devlink_daemon_end() {
  "$B"/rdma-eventctl status --json >$DLOUT/status.json 2>&1
  devlink port show -j >$DLOUT/ports-end.json 2>&1
  local port_netdev
  port_netdev=$(jq -r '.port["netdevsim/netdevsim1/0"].netdev' $DLOUT/ports-end.json)
  if ! jq -e --arg n "$port_netdev" '.devlink.available and ([.devlink.reporters[] | select(.handle == "netdevsim/netdevsim1" and .reporter == "dummy")] |
        length == 1 and .[0].state == "healthy" and .[0].error_count == 3 and .[0].recover_count == 2 and .[0].ports == ["rxe1/1"]) and
        ([.devlink.reporters[] | select(.handle != "netdevsim/netdevsim1")] | length == 0) and
        ([.devlink.devlink_ports[] | select(.handle == "netdevsim/netdevsim1")] == [{"handle": "netdevsim/netdevsim1", "index": 0, "netdev": $n}]) and
        $n != "null" and $n != ""' \
    $DLOUT/status.json >/dev/null; then
    fail devlink "status: $(jq -c .devlink $DLOUT/status.json); devlink port show: $(cat $DLOUT/ports-end.json)"
    return 1
  fi
  local changes want="error|recovered|error|error_again|recovered"
  journal_changes() {
    journalctl -o json RDMA_DEVLINK_HANDLE=netdevsim/netdevsim1 RDMA_DEVLINK_REPORTER=dummy \
      _PID=$DAEMON | jq -r .RDMA_DEVLINK_CHANGE | paste -sd'|'
  }
  if ! wait_for 10 eval '[ "$(journal_changes)" = "$want" ]'; then
    fail devlink "the journal's devlink_health entries of netdevsim1: [$(journal_changes)], expected [$want]"
    return 1
  fi
}

# scenario_devlink_overrun: the kernel drops notifications a daemon cannot take in time. A third
# daemon (its own state, no socket, no journal, records on stdout) is stopped (SIGSTOP) while
# netdevsim1's dummy reporter is broken and recovers, again and again, until the kernel counts
# drops on the daemon's generic netlink sockets (/proc/net/netlink's Drops, protocol 16, by the
# inodes of its descriptors); continued, the daemon reads ENOBUFS,
# publishes devlink_events_lost, dumps every reporter again, and its last record of the
# reporter has the counts `devlink health show` has.
scenario_devlink_overrun() {
  local dir=$DL/overrun out pid breaks=0 err
  mkdir -p $dir/state
  out=$dir/records.ndjson
  STATE_DIRECTORY=$dir/state "$B"/rdma-eventd -f -c $W/config.json --no-socket --no-journal \
    --print-records >$out 2>$dir/daemon.log &
  pid=$!
  if ! wait_for 20 grep -q "devlink health: following family" $dir/daemon.log; then
    fail devlink_overrun "the daemon did not follow devlink: $(cat $dir/daemon.log)"
    kill $pid
    wait $pid
    return
  fi
  stall $pid 16
  local drops_before
  drops_before=$(stalled_drops)
  while [ "$(stalled_drops)" -le "$drops_before" ] && [ $breaks -lt 6000 ]; do
    for _ in $(seq 100); do
      err=$(break_health netdevsim1) || { fail devlink_overrun "break $breaks: $err"; break 2; }
      breaks=$((breaks + 1))
    done
  done
  kill -CONT $pid
  log "devlink_overrun: $breaks breaks, the kernel dropped $(($(stalled_drops) - drops_before)) notifications"
  last_counts() {
    jq -r 'select(.event == "devlink_health" and .devlink.handle == "netdevsim/netdevsim1")
      | "\(.devlink.state) \(.devlink.error_count) \(.devlink.recover_count)"' $out | tail -n 1
  }
  shown_counts() {
    devlink health show netdevsim/netdevsim1 reporter dummy -j |
      jq -r '.health["netdevsim/netdevsim1"][0] | "\(.state) \(.error) \(.recover)"'
  }
  settled() {
    grep -q '"event":"devlink_events_lost"' $out && [ "$(last_counts)" = "$(shown_counts)" ]
  }
  local ok=1
  if [ "$(stalled_drops)" -le "$drops_before" ]; then
    fail devlink_overrun "$breaks breaks and no notification dropped"
    ok=0
  elif ! wait_for 30 settled; then
    fail devlink_overrun "after the overrun: last record '$(last_counts)', devlink health show '$(shown_counts)', $(grep -c devlink_events_lost $out) loss records; log: $(tail -n 5 $dir/daemon.log)"
    ok=0
  elif ! grep -q "devlink health: notifications lost (socket overrun); reading every reporter again" $dir/daemon.log; then
    fail devlink_overrun "the overrun was not logged: $(cat $dir/daemon.log)"
    ok=0
  fi
  kill $pid
  wait $pid
  cp $out $DLOUT/overrun-records.ndjson
  cp $dir/daemon.log $DLOUT/overrun-daemon.log
  [ $ok = 1 ] && pass devlink_overrun
}
