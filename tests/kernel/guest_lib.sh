# shellcheck shell=bash
# The kernel tests' guest helpers, sourced by the guest scripts (guest.sh, guest_monitor.sh) from
# $GUEST_DIR: results (pass, fail), the log, the power-off, bounded waits (wait_lib.sh), and the
# records read back from rdma-eventctl monitor's output ($MON) and the journal, compared whole
# with the expected ones (expect). The caller sets W (its scratch), B (the build's bin), MON,
# STREAM (the daemon's record stream, for the journal), GUID (rxe0's node GUID) and failures=0.
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

# --- records -------------------------------------------------------------------------------------
# Records normalized for comparison (normalize.jq): seq, stream, time, host and since masked;
# cause_seq made relative to the scenario's first record (0 stays 0); the GID entries in one
# last line.
normalize() { jq -c -S -s --argjson base "$1" -f "$GUEST_DIR/normalize.jq"; }
# The last record's seq; 0 before the first.
last_seq() {
  local seq
  seq=$(tail -n 1 $MON 2>/dev/null | jq -r .seq)
  echo "${seq:-0}"
}

# begin: the scenario's records are those after this point.
begin() {
  BASE=$(last_seq)
  MON_MARK=$(lines $MON)
  AW_MARK=$(lines "${AW:-/dev/null}")
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

# A record's port block for rxe0 (DEV: another name) port 1 on this veth (10 Gb/s: 1X, speed
# code 8), as jq input.
port() { # EVENT TYPE SEVERITY STATE PHYS MTU CHANGES [EXTRA]
  echo "{\"schema\":1,\"event\":\"$1\",\"event_type\":$2,\"severity\":\"$3\",\"device\":\"${DEV:-rxe0}\",
  \"node_guid\":\"$GUID\",\"port\":1,\"link_layer\":\"ethernet\",\"state\":\"$4\",\"phys_state\":\"$5\",
  \"lid\":0,\"sm_lid\":0,\"sm_sl\":0,\"lmc\":0,\"active_mtu\":$6,\"width\":\"1x\",\"speed\":\"fdr10\",
  \"rate_gbps\":10,\"changes\":$7${8:+,$8}}" | jq -c .
}
health() { # HEALTH PREVIOUS(null: none) REASON DOWNS CAUSE SEVERITY
  jq -nc --arg h "$1" --arg p "$2" --arg r "$3" --argjson d "$4" --argjson c "$5" --arg s "$6" \
    --arg g "$GUID" --arg dev "${DEV:-rxe0}" '{schema: 1, event: "port_health", event_type: -1, severity: $s, device: $dev,
    node_guid: $g, port: 1, health: $h, previous_health: (if $p == "null" then null else $p end),
    reason: $r, downs_in_window: $d, errors_in_window: 0, window_s: 600, quiet_s: 600, cause_seq: $c}'
}
gid() { echo "{\"index\":$1,\"gid\":\"$2\",\"type\":\"roce_v2\",\"netdev\":\"veth0\"}"; }
# changes of a port record whose state and phys_state moved: STATE_OLD STATE_NEW PHYS_OLD PHYS_NEW
link_changes() {
  jq -nc --arg a "$1" --arg b "$2" --arg c "$3" --arg d "$4" \
    '{state: {old: $a, new: $b}, phys_state: {old: $c, new: $d}}'
}

# veth0 (rxe0's netdev, whose MAC makes rxe0's node GUID) and its peer veth1, both up.
make_netdevs() {
  ip link add veth0 address 02:00:00:00:00:01 type veth peer name veth1 address 02:00:00:00:00:02 &&
    ip link set veth1 up && ip link set veth0 up
}

# socket_inodes PID: the inodes of PID's sockets, space-separated.
socket_inodes() { ls -l /proc/$1/fd | sed -n 's/.*socket:\[\([0-9]*\)\].*/\1/p' | paste -sd' '; }
# netlink_drops PROTOCOL INODES: the notifications the kernel dropped on those of the sockets
# INODES that are netlink sockets of PROTOCOL (16 generic, 20 RDMA): /proc/net/netlink's Drops.
netlink_drops() {
  awk -v proto="$1" -v inodes=" $2 " \
    '$2 == proto && index(inodes, " " $10 " ") { d += $9 } END { print d + 0 }' /proc/net/netlink
}
# stall PID PROTOCOL: stops PID (SIGSTOP; kill -CONT continues it), so that what the kernel
# sends to its netlink sockets of PROTOCOL piles up until the kernel drops it; stalled_drops
# then prints how many notifications the kernel dropped on those sockets.
stall() {
  kill -STOP "$1"
  stalled_inodes=$(socket_inodes "$1")
  stalled_protocol=$2
}
stalled_drops() { netlink_drops "$stalled_protocol" "$stalled_inodes"; }
