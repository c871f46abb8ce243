#!/usr/bin/env bash
# The kernel judges the simulator (ctest kernel.simulator): the steps of the guest's link,
# mtu_mac and gids scenarios (guest.sh), done on rdma-sim with a topology modelling the guest's
# rxe0 (rxe.json), through the same daemon; the records, normalized as the guest normalizes
# them (normalize.jq: seq, stream, time, host, since masked; cause_seq relative), must equal the
# kernel's
# (DIR/share/judge-SCENARIO.ndjson, written by kernel.guest). Where the simulator's command
# differs from what the kernel does, the step says so, and docs/simulator.md ("Checked against
# the kernel") lists it.
#   tests/kernel/simulator_test.sh BUILD_DIR GUEST_OUT_DIR
set -euo pipefail
build=$1 guest_out=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for s in link mtu_mac gids; do
  [ -r "$guest_out/share/judge-$s.ndjson" ] || {
    echo "kernel.simulator: no kernel records for $s (kernel.$s did not pass)" >&2
    exit 1
  }
done
dir=$(mktemp -d /dev/shm/kernel-sim.XXXXXX 2>/dev/null || mktemp -d)
daemon= monitor=
cleanup() {
  [ -n "$monitor" ] && kill "$monitor" 2>/dev/null
  [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  "$build/bin/rdma-sim" --dir "$dir/fabric" stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
sim() { "$build/bin/rdma-sim" --dir "$dir/fabric" "$@" >/dev/null; }
"$build/bin/rdma-sim" --dir "$dir/fabric" start -t "$here/rxe.json" >/dev/null
mkdir -p "$dir/state"
cat >"$dir/config.json" <<'JSON'
{"journal": {"enabled": false},
 "health": {"flap_downs": 3, "flap_window_s": 600, "flap_quiet_s": 600}}
JSON
export RDMA_EVENTD_SOCKET=$dir/events.sock
STATE_DIRECTORY=$dir/state "$build/bin/rdma-sim" --dir "$dir/fabric" run -- \
  "$build/bin/rdma-eventd" -f -c "$dir/config.json" --socket "$RDMA_EVENTD_SOCKET" \
  >"$dir/daemon.log" 2>&1 &
daemon=$!
mon=$dir/monitor.ndjson
# wait_for.
# shellcheck source=wait_lib.sh
. "$here/wait_lib.sh"
wait_for 10 test -S "$RDMA_EVENTD_SOCKET"
"$build/bin/rdma-eventctl" monitor --json --since 0 >"$mon" &
monitor=$!
count() { if [ -e "$mon" ]; then wc -l <"$mon"; else echo 0; fi; }
# step N CMD...: a simulator command, then wait until the run has N records.
step() {
  local n=$1
  shift
  sim "$@"
  wait_for 10 eval '[ "$(count)" -ge '"$n"' ]' || {
    echo "kernel.simulator: after rdma-sim $*: $(count) records, $n expected" >&2
    cat "$mon" "$dir/daemon.log" >&2
    exit 1
  }
}
wait_for 10 eval '[ "$(count)" -ge 1 ]'

failed=0
# judge SCENARIO BASE: the scenario's records (after seq BASE) against the kernel's.
judge() {
  jq -c --argjson base "$2" 'select(.seq > $base)' "$mon" |
    jq -c -S -s --argjson base "$2" -f "$here/normalize.jq" >"$dir/sim-$1.ndjson"
  if diff -u "$guest_out/share/judge-$1.ndjson" "$dir/sim-$1.ndjson"; then
    echo "kernel.simulator: $1: the simulator's records equal the kernel's ($(wc -l <"$dir/sim-$1.ndjson") records)"
  else
    echo "kernel.simulator: $1: the simulator's records (+) differ from the kernel's (-)" >&2
    failed=1
  fi
}

# link. ip link set veth0 down: rxe's port goes DOWN with phys_state Disabled.
base=$(count)
step $((base + 2)) port down rxe0/1 --phys disabled
# ip link set veth0 up: rxe sends PORT_ACTIVE for NETDEV_UP and again for the carrier's
# NETDEV_CHANGE; the simulator's port up sends one, the second is a raw event (no state change).
step $((base + 4)) port up rxe0/1
step $((base + 5)) event rxe0/1 port_active
# the peer's carrier: down with phys_state Polling, up with one PORT_ACTIVE.
step $((base + 7)) port down rxe0/1 --phys polling
step $((base + 9)) port up rxe0/1
judge link "$base"

# mtu_mac. MTU 9000: no event; the active MTU follows the netdev's.
base=$(count)
sim port mtu rxe0/1 4096
# The MAC: the default GID (index 0) moves to the new MAC's link-local GID; the old link-local
# address stays on the netdev and comes back as an address's GID.
step $((base + 1)) gid del rxe0/1 0
step $((base + 2)) gid add rxe0/1 fe80::ff:fe00:11 --index 0
step $((base + 3)) gid add-ip rxe0/1 fe80::ff:fe00:1 --netdev veth0
step $((base + 4)) gid del-ip rxe0/1 fe80::ff:fe00:1
judge mtu_mac "$base"

# gids: IPv4 and IPv6 addresses, added and removed.
base=$(count)
step $((base + 1)) gid add-ip rxe0/1 192.0.2.1 --netdev veth0
step $((base + 2)) gid add-ip rxe0/1 2001:db8::1 --netdev veth0
step $((base + 3)) gid del-ip rxe0/1 192.0.2.1
step $((base + 4)) gid del-ip rxe0/1 2001:db8::1
judge gids "$base"
exit $failed
