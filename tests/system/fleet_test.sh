#!/usr/bin/env bash
# The central journal (docs/fleet.md), with Debian's systemd-journal-remote: three simulated
# hosts, each in a network namespace of its own with its own host name (UTS namespace), machine
# id, journald (a private mount namespace with a tmpfs on /run, as the journal sandbox does),
# simulator, daemon and systemd-journal-upload, upload over HTTP to one systemd-journal-remote
# on a bridge in another namespace the test creates (no traffic leaves them). Asserts:
#  - every record of every host, read back from its daemon's socket (seq 1 to the daemon's
#    seq), is in the receiver's journal exactly once, with the host's _HOSTNAME and RDMA_*
#    fields that agree with the record;
#  - a host cut off (uploader stopped, link down) while it makes records catches up from its
#    cursor (--save-state) once it is back: nothing lost; systemd-journal-upload 252 sends the
#    entry at its cursor again, and at times what it caught up with, so only those may be at
#    the receiver twice;
#  - rdma-eventctl history --directory reads the receiver's journal: every record exactly
#    once (copies dropped), --host, --event, --json and --summary;
#  - history --incidents on it: all three hosts' ports down within a few seconds with an SM
#    failover is one fabric incident of the three, a port of one host flapping a port incident,
#    a device failing on another a host incident.
# Needs root and systemd-journal-remote (scripts/bootstrap.sh deps). Run by ctest.
set -euo pipefail
: "${BUILD_DIR:?run it through ctest}"
# shellcheck source-path=SCRIPTDIR source=test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

hosts=(1 2 3)
receiver_ip=10.77.0.1
port=19532
build_under_test

require_root_and_tools "fleet test" namespaces \
  /lib/systemd/systemd-journal-remote /lib/systemd/systemd-journal-upload

scratch=$(mktemp -d /tmp/rdma-fleet-XXXXXX)
tag=$$
bridge_ns=rdma-fleet-br-$tag
declare -A anchor_pid  # per host: its journald, whose namespaces the host's processes join
declare -A daemon_pid
declare -A upload_pid
remote_pid=

diagnostics() {
  for h in "${hosts[@]}"; do
    echo "--- host $h: daemon log"
    tail -n 20 "$scratch/h$h/daemon.log" 2>/dev/null || true
    echo "--- host $h: uploader log"
    tail -n 20 "$scratch/h$h/upload.log" 2>/dev/null || true
  done
  echo "--- receiver log"
  tail -n 20 "$scratch/remote.log" 2>/dev/null || true
}

cleanup() {
  set +e
  for h in "${hosts[@]}"; do
    stop_pid "${upload_pid[$h]:-}"
    stop_pid "${daemon_pid[$h]:-}"
    "$bin/rdma-sim" --dir "$scratch/h$h/sim" stop >/dev/null 2>&1
    stop_pid "${anchor_pid[$h]:-}"
    ip netns del "rdma-fleet-h$h-$tag" 2>/dev/null
  done
  stop_pid "$remote_pid"
  ip netns del "$bridge_ns" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT

# on_host H COMMAND...: runs COMMAND in host H's network, mount and UTS namespaces.
on_host() {
  local h=$1
  shift
  nsenter -t "${anchor_pid[$h]}" -m -u -n "$@"
}

sim() {
  local h=$1
  shift
  "$bin/rdma-sim" --dir "$scratch/h$h/sim" "$@"
}

ctl() {
  local h=$1
  shift
  "$eventctl" --socket "$scratch/h$h/events.sock" "$@"
}

step "network: a bridge namespace with the receiver, a namespace per host"
ip netns add "$bridge_ns"
ip -n "$bridge_ns" link set lo up
ip -n "$bridge_ns" link add br0 type bridge
ip -n "$bridge_ns" addr add "$receiver_ip/24" dev br0
ip -n "$bridge_ns" link set br0 up
for h in "${hosts[@]}"; do
  ns=rdma-fleet-h$h-$tag
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip -n "$bridge_ns" link add "vb$h" type veth peer name eth0 netns "$ns"
  ip -n "$bridge_ns" link set "vb$h" master br0 up
  ip -n "$ns" addr add "10.77.0.$((10 + h))/24" dev eth0
  ip -n "$ns" link set eth0 up
done

step "the receiver: systemd-journal-remote on http://$receiver_ip:$port"
mkdir -p "$scratch/remote"
ip netns exec "$bridge_ns" /lib/systemd/systemd-journal-remote \
  --listen-http="$receiver_ip:$port" --output="$scratch/remote/" --split-mode=host \
  >"$scratch/remote.log" 2>&1 &
remote_pid=$!
wait_for 20 "receiver listening" ip netns exec "$bridge_ns" \
  bash -c "exec 3<>/dev/tcp/$receiver_ip/$port"

cat >"$scratch/journald.conf" <<'EOF'
[Journal]
Storage=volatile
ReadKMsg=no
RateLimitBurst=0
RateLimitIntervalSec=0
ForwardToSyslog=no
ForwardToWall=no
EOF

cat >"$scratch/rdma-eventd.json" <<'EOF'
{ "health": { "enabled": true, "flap_downs": 3, "flap_window_s": 3600, "flap_quiet_s": 600 } }
EOF

start_uploader() {
  local h=$1
  # nsenter itself, not on_host: a function run with & is a subshell, and $! would be its PID,
  # not the uploader's, so stopping it would leave the uploader running.
  nsenter -t "${anchor_pid[$h]}" -m -u -n env SYSTEMD_LOG_LEVEL=debug /lib/systemd/systemd-journal-upload --url="http://$receiver_ip:$port" \
    --save-state="$scratch/h$h/upload.state" >>"$scratch/h$h/upload.log" 2>&1 &
  upload_pid[$h]=$!
}

for h in "${hosts[@]}"; do
  step "host fleet-h$h: journald, simulator, daemon, uploader"
  mkdir -p "$scratch/h$h"
  # A machine id of its own: journald names its files by it, as on separate machines.
  printf '%032x\n' "$((0xfee7000 + h))" >"$scratch/h$h/machine-id"
  # nsenter --net, not ip netns exec: that mounts a /sys of its own, without the cgroup file
  # system journald needs.
  nsenter --net="/run/netns/rdma-fleet-h$h-$tag" unshare --mount --uts --propagation private bash -c '
    set -e
    hostname "fleet-h$1"
    mount -t tmpfs -o mode=755 tmpfs /run
    mount --bind "$2/journald.conf" /etc/systemd/journald.conf
    mount --bind "$2/h$1/machine-id" /etc/machine-id
    exec /lib/systemd/systemd-journald' anchor "$h" "$scratch" >"$scratch/h$h/journald.log" 2>&1 &
  anchor_pid[$h]=$!
  wait_for 20 "journald of host $h" test -S "/proc/${anchor_pid[$h]}/root/run/systemd/journal/socket"
  [ "$(on_host "$h" hostname)" = "fleet-h$h" ] || fail "host $h has no host name of its own"

  sim "$h" start -t "$topology" >/dev/null
  mkdir -p "$scratch/h$h/state"
  nsenter -t "${anchor_pid[$h]}" -m -u -n env STATE_DIRECTORY="$scratch/h$h/state" "$bin/rdma-sim" --dir "$scratch/h$h/sim" run -- "$bin/rdma-eventd" -f \
    -c "$scratch/rdma-eventd.json" --socket "$scratch/h$h/events.sock" \
    >"$scratch/h$h/daemon.log" 2>&1 &
  daemon_pid[$h]=$!
  wait_for 30 "daemon of host $h answering" ctl "$h" status --json
  start_uploader "$h"
done

# port_judged H VERDICT: host H's daemon holds VERDICT for mlx5_0/1.
# (`health` exits 1 while a port is down: its output is what counts here.)
port_judged() {
  local reply
  reply=$(ctl "$1" health --json) || [ $? = 1 ] || return 1
  jq -e --arg v "$2" 'any(.health.ports[]; .device == "mlx5_0" and .port == 1 and .health == $v)' \
    <<<"$reply" >/dev/null
}

# make_events H: a flap of mlx5_0/1, then an LID change on it (port records, and
# port_health verdicts).
lid=40
make_events() {
  local h=$1
  lid=$((lid + 1))
  sim "$h" port down mlx5_0/1 >/dev/null
  # The daemon reads a port's state when it reads the port's events: brought up before it has
  # read the port_err, the port would be read active for both, and never judged down.
  wait_for 20 "host $h's daemon judging mlx5_0/1 down" port_judged "$h" down
  sim "$h" port up mlx5_0/1 >/dev/null
  sim "$h" lid mlx5_0/1 "$lid" >/dev/null
}

# socket_records H: the daemon's records seq 1 to its current seq, from its socket, compact
# and sorted; fails unless the daemon still holds them all.
socket_records() {
  local h=$1 seq
  seq=$(ctl "$h" status --json | jq -r .seq)
  [ "$seq" -gt 0 ] || fail "host $h: daemon at seq $seq"
  ctl "$h" monitor --json --since 0 --count "$seq" | jq -c 'select(.seq != null)' | sort
}

# remote_records H: the RDMA_RECORD of every entry the receiver holds from host H.
remote_records() {
  journalctl -D "$scratch/remote" --no-pager -o json "_HOSTNAME=fleet-h$1" \
    SYSLOG_IDENTIFIER=rdma-eventd 2>/dev/null | jq -r 'select(.RDMA_RECORD) | .RDMA_RECORD' |
    jq -c . | sort
}

# local_has_all H: host H's own journal holds every record its daemon made.
local_has_all() {
  local h=$1 seq
  seq=$(ctl "$h" status --json | jq -r .seq)
  on_host "$h" journalctl --sync
  [ "$(on_host "$h" journalctl -D /run/log/journal --no-pager -o json SYSLOG_IDENTIFIER=rdma-eventd |
    jq -r 'select(.RDMA_RECORD) | .RDMA_SEQ' | sort -u | wc -l)" -eq "$seq" ]
}

remote_distinct_count() { [ "$(remote_records "$1" | uniq | wc -l)" -eq "$2" ]; }

# expect_all_records H [FROM_SEQ]: every record of host H at the receiver with its fields,
# none missing, none foreign, none twice; but from FROM_SEQ on a record may be there more than
# once: systemd-journal-upload 252, started again from its saved cursor, sends the entry at the
# cursor again, and what it caught up with again once the journal changes (docs/fleet.md).
expect_all_records() {
  local h=$1 from_seq=${2:-} expected count
  expected=$(socket_records "$h")
  count=$(printf '%s\n' "$expected" | wc -l)
  local deadline=$((SECONDS + 60))
  until remote_distinct_count "$h" "$count"; do
    ((SECONDS < deadline)) ||
      fail "host $h: the receiver has $(remote_records "$h" | uniq | wc -l) of its $count records"
    sleep 0.2
  done
  diff <(printf '%s\n' "$expected") <(remote_records "$h" | uniq) ||
    fail "host $h: the receiver's records differ from the daemon's (above)"
  local repeated
  repeated=$(remote_records "$h" | uniq -d | jq -r .seq | sort -n | paste -sd' ')
  if [ -n "$repeated" ]; then
    [ -n "$from_seq" ] || fail "host $h: records at the receiver more than once: seq $repeated"
    for seq in $repeated; do
      ((seq >= from_seq)) || fail "host $h: seq $seq, before the uploader's cursor, sent again"
    done
  fi
  # The fields agree with the record, and the entry names its host.
  local bad
  bad=$(journalctl -D "$scratch/remote" --no-pager -o json "_HOSTNAME=fleet-h$h" \
    SYSLOG_IDENTIFIER=rdma-eventd | jq -c 'select(.RDMA_RECORD) |
      (.RDMA_RECORD | fromjson) as $r |
      select(.RDMA_EVENT != $r.event or .RDMA_SEQ != ($r.seq | tostring) or
             .RDMA_DEVICE != $r.device or .RDMA_SEVERITY != $r.severity or
             .RDMA_STREAM != $r.stream or $r.host != "fleet-h'"$h"'")')
  [ -z "$bad" ] || fail "host $h: entries whose fields disagree with their record: $bad"
  echo "host fleet-h$h: all $count records${repeated:+ (sent again after the restart: seq $repeated)}"
}

# last_entry H: host H's newest journal entry, as JSON.
last_entry() {
  on_host "$1" journalctl --sync
  on_host "$1" journalctl -D /run/log/journal --no-pager -o json -n 1
}

# uploader_saved H CURSOR: host H's uploader has saved CURSOR as the last it sent.
uploader_saved() { grep -qxF "LAST_CURSOR=$2" "$scratch/h$1/upload.state"; }

# recovered_verdict H: host H's daemon has judged mlx5_0/1 healthy again after the flap.
recovered_verdict() {
  socket_records "$1" | jq -e -s 'any(.[]; .event == "port_health" and .device == "mlx5_0" and
    .port == 1 and .health == "healthy" and .previous_health == "down")'
}

step "records on every host reach the receiver"
for h in "${hosts[@]}"; do make_events "$h"; done
for h in "${hosts[@]}"; do
  # The flap's records, and the verdict after it, before counting.
  wait_for 20 "host $h's port_health verdict after the flap" recovered_verdict "$h"
  expect_all_records "$h"
done

step "host fleet-h2 cut off: uploader stopped and link down while it makes records"
# Stopped once it has saved the cursor of its newest entry, as systemd stops it after a while.
cursor=$(last_entry 2 | jq -r .__CURSOR)
stop_seq=$(ctl 2 status --json | jq -r .seq)
wait_for 20 "cursor of host 2's newest entry saved by its uploader" uploader_saved 2 "$cursor"
stop_pid "${upload_pid[2]}"
! kill -0 "${upload_pid[2]}" 2>/dev/null || fail "host 2's uploader is still running"
ip -n "rdma-fleet-h2-$tag" link set eth0 down
before=$(remote_records 2 | wc -l)
make_events 2
sim 2 port down mlx5_1/1 >/dev/null
wait_for 20 "host 2's new records in its own journal" local_has_all 2
[ "$(remote_records 2 | wc -l)" -eq "$before" ] || fail "host 2 uploaded while cut off"

step "host fleet-h2 back: it catches up from its cursor"
ip -n "rdma-fleet-h2-$tag" link set eth0 up
start_uploader 2
expect_all_records 2 "$stop_seq"
for h in 1 3; do expect_all_records "$h"; done

step "rdma-eventctl history --directory: the receiver's journal"
all_expected=$(for h in "${hosts[@]}"; do socket_records "$h"; done | sort)
diff <(printf '%s\n' "$all_expected") <("$eventctl" history --directory "$scratch/remote" --json | sort) ||
  fail "history --json differs from the daemons' records"
# Host 2's records exactly once, however often the receiver holds them.
diff <(socket_records 2) <("$eventctl" history -D "$scratch/remote" --host fleet-h2 --json | sort) ||
  fail "history --host fleet-h2 differs from host 2's records"
port_errs=$("$eventctl" history -D "$scratch/remote" --event port_err --json | jq -r .host | sort | uniq -c |
  awk '{print $2 ":" $1}' | paste -sd' ')
[ "$port_errs" = "fleet-h1:1 fleet-h2:3 fleet-h3:1" ] || fail "history --event port_err per host: $port_errs"
summary=$("$eventctl" history -D "$scratch/remote" --summary --json |
  jq -c 'select(.device == "mlx5_0" and .port == 1) | [.host, .events.port_err, .health]' | paste -sd' ')
[ "$summary" = '["fleet-h1",1,"healthy"] ["fleet-h2",2,"healthy"] ["fleet-h3",1,"healthy"]' ] ||
  fail "history --summary for mlx5_0/1: $summary"
"$eventctl" history -D "$scratch/remote" --summary

step "rdma-eventctl history --incidents: a fabric event, a flapping port, a failed device"
# judged H DEV/PORT VERDICT...: host H's daemon holds one of the verdicts for the port.
judged() {
  local h=$1 device=${2%/*} port=${2#*/} reply
  shift 2
  reply=$(ctl "$h" health --json) || [ $? = 1 ] || return 1
  jq -e --arg d "$device" --argjson p "$port" --arg v "$*" \
    'any(.health.ports[]; .device == $d and .port == $p and (.health | IN($v | split(" ")[])))' \
    <<<"$reply" >/dev/null
}
# socket_has H JQ: one of host H's records satisfies JQ.
socket_has() { socket_records "$1" | jq -e -s "any(.[]; $2)" >/dev/null; }
since=$(date +%s.%N)
# The fabric: every host's link down at once, and the subnet manager fails over.
for h in "${hosts[@]}"; do sim "$h" port down mlx5_0/1 >/dev/null; done
# (host 2's third down in the flap window makes it flapping)
for h in "${hosts[@]}"; do
  wait_for 20 "host $h judging mlx5_0/1 down" judged "$h" mlx5_0/1 down flapping
done
for h in "${hosts[@]}"; do
  sim "$h" port up mlx5_0/1 >/dev/null
  sim "$h" sm mlx5_0/1 2 >/dev/null
done
for h in "${hosts[@]}"; do
  wait_for 20 "host $h's sm_change" socket_has "$h" '.event == "sm_change"'
done
# Incidents are apart in time: the query below takes a gap of 4 s and a fabric window of 4 s
# (what a loaded machine takes to drive one incident's steps through three hosts stays well
# within them: 1 s did not, under ASan beside three other tests), and 4.5 s pass between them.
sleep 4.5
# A port of host 1 flaps: three downs make it flapping (flap_downs 3 above).
for i in 1 2 3; do
  sim 1 port down mlx5_1/1 >/dev/null
  wait_for 20 "host 1 judging mlx5_1/1 down ($i)" judged 1 mlx5_1/1 down flapping
  sim 1 port up mlx5_1/1 >/dev/null
done
wait_for 20 "host 1's mlx5_1/1 flapping" socket_has 1 '.event == "port_health" and .device == "mlx5_1" and .port == 1 and .health == "flapping"'
sleep 4.5
# Host 3's second adapter fails.
sim 3 fatal mlx5_1 >/dev/null
wait_for 20 "host 3's device_fatal" socket_has 3 '.event == "device_fatal" and .device == "mlx5_1"'
wait_for 20 "host 3's mlx5_1 judged fatal" judged 3 mlx5_1/1 fatal
expect_all_records 1
expect_all_records 2 "$stop_seq"
expect_all_records 3
incidents=$("$eventctl" history -D "$scratch/remote" --incidents --json --since "@$since" \
  --incident-gap 4s --fabric-window 4s | jq -c '[.class, ([.hosts[].host] | join(",")), ([.hosts[].ports[]] | unique | join(","))]' |
  paste -sd' ')
expected='["fabric","fleet-h1,fleet-h2,fleet-h3","mlx5_0/1"] ["port","fleet-h1","mlx5_1/1"] ["host","fleet-h3","mlx5_1/1,mlx5_1/2"]'
[ "$incidents" = "$expected" ] || fail "history --incidents: $incidents, not $expected"
fabric=$("$eventctl" history -D "$scratch/remote" --incidents --json --since "@$since" --incident-gap 4s --fabric-window 4s |
  jq -r 'select(.class == "fabric") | .evidence')
[[ $fabric =~ ^"3 hosts, 3 ports down within "([0-3])\.[0-9]" s; 3 sm_change: subnet manager failover"$ ]] ||
  fail "the fabric incident's evidence: $fabric"
"$eventctl" history -D "$scratch/remote" --incidents --since "@$since" --incident-gap 4s --fabric-window 4s
echo "PASS"
