#!/usr/bin/env bash
# The main job: rdma-eventd watching RDMA devices, records flowing.
#
#   scripts/demo.sh [BUILD_DIR] [--once] [--topology NAME|FILE]
#
# On a host with RDMA devices (/sys/class/infiniband) it runs the daemon on them, read-only,
# printing every record. Everywhere else it starts a simulated fabric (--topology: a file, or
# the name of one in sim/topologies/: two-adapters by default, eight-rail for an 8-rail GPU
# host as Linux 6.8 lays out its ConnectX-7s and their RoCE bond), a private
# systemd-journald (in a mount namespace of its own: the host's journal is untouched), the
# daemon with its subscriber socket in a temporary directory, and rdma-eventctl monitor; it
# injects a few events so the records show up at once, shows them as socket subscribers and
# the journal see them, then keeps running until Ctrl-C so more events can be injected and
# more subscribers started from another terminal. --once stops after the scripted events.
# Needs root (the private journald).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$here/build
once=0
topology=two-adapters
while [ $# -gt 0 ]; do
  case $1 in
    --once) once=1 ;;
    --topology)
      [ $# -ge 2 ] || { echo "demo.sh: --topology needs a name or a file" >&2; exit 64; }
      topology=$2
      shift
      ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) build=$(cd "$1" && pwd) ;;
  esac
  shift
done
topology_file=$topology
[ -f "$topology_file" ] || topology_file=$here/sim/topologies/$topology.json
[ -f "$topology_file" ] || {
  echo "demo.sh: no topology $topology (a file, or one of: $(cd "$here/sim/topologies" && ls *.json | sed 's/\.json$//' | tr '\n' ' '))" >&2
  exit 64
}
bin=$build/bin

if [ -d /sys/class/infiniband ] && [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
  echo "== RDMA devices on this host: $(ls /sys/class/infiniband | tr '\n' ' ')"
  echo "== rdma-eventd watching them (records below, one JSON object per line; Ctrl-C stops)"
  exec "$bin/rdma-eventd" -f --print-records -c "$here/config/rdma-eventd.json"
fi

if [ "$(id -u)" != 0 ]; then
  echo "demo.sh: needs root for its private journald: run it with sudo" >&2
  exit 1
fi

# Everything below runs in a private mount namespace: a tmpfs on /run hides the host's
# journal socket, and journald gets a test configuration.
if [ -z "${RDMA_EVENTD_DEMO_NS:-}" ]; then
  export RDMA_EVENTD_DEMO_NS=1
  exec unshare --mount --propagation private "$0" "$build" $([ $once = 1 ] && echo --once) --topology "$topology_file"
fi

work=$(mktemp -d /tmp/rdma-eventd-demo.XXXXXX)
pids=()
sim_started=0
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ $sim_started = 1 ] && "$bin/rdma-sim" stop >/dev/null 2>&1
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

mount -t tmpfs -o mode=755 tmpfs /run
# The journal's files go to $work/log, where journalctl -D can read them from outside too.
mkdir -p "$work/log"
mount --bind "$work/log" /run/log 2>/dev/null || { mkdir -p /run/log && mount --bind "$work/log" /run/log; }
printf '[Journal]\nStorage=volatile\nReadKMsg=no\nRateLimitBurst=0\nForwardToSyslog=no\n' >"$work/journald.conf"
mount --bind "$work/journald.conf" /etc/systemd/journald.conf
/lib/systemd/systemd-journald &
pids+=($!)
until journalctl --sync 2>/dev/null; do sleep 0.05; done

export RDMA_SIM_DIR=$work/fabric
sim() { "$bin/rdma-sim" "$@"; }
sim start -t "$topology_file" >/dev/null
sim_started=1
sock=$work/events.sock

echo "== Simulated fabric (no RDMA hardware here: $(basename "$topology_file" .json)), as ibv_devices sees them"
sim run -- ibv_devices
echo
# Port health keeps its state in the demo's directory, not in the host's /var/lib.
STATE_DIRECTORY=$work "$bin/rdma-sim" run -- "$bin/rdma-eventd" -f --socket "$sock" \
  -c "$here/config/rdma-eventd.json" 2>"$work/daemon.log" &
pids+=($!)
until grep -q "ready:" "$work/daemon.log"; do
  kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/daemon.log" >&2; exit 1; }
  sleep 0.05
done
echo "== rdma-eventd runs on it. rdma-eventctl monitor follows its socket ($sock):"
"$bin/rdma-eventctl" --socket "$sock" monitor --snapshot --color never &
pids+=($!)
# The events come after the monitor's snapshot once the daemon has answered its one request
# (a connected monitor that has not asked yet would get the first event before its snapshot).
monitor=$!
until "$bin/rdma-eventctl" --socket "$sock" status --json 2>/dev/null |
  jq -e --argjson pid "$monitor" '.subscribers.list[] | select(.pid == $pid and .requests >= 1)' >/dev/null; do
  sleep 0.05
done

step() {
  echo "-- rdma-sim $*"
  sim "$@" >/dev/null
  sleep 0.3
}
if [ "$topology_file" != "$here/sim/topologies/two-adapters.json" ]; then
  # Another host: its first device's link goes down and up, then its firmware fails and mlx5
  # recovers it (the RDMA device unregistered and registered again before the recovery is told).
  first=$(sim --json show | jq -r '.devices[0].name')
  step port down "$first/1"
  step port up "$first/1"
  step devlink report "$first" fw_fatal
else
step port down mlx5_0/1
step port up mlx5_0/1
step lid mlx5_0/1 23
step gid add-ip mlx5_1/1 192.168.10.7 --netdev ens1f0
step pkey mlx5_0/1 2 0x8002
# A transceiver pulled and pushed back: mlx5 vendor events, read from the DEVX event channel.
step module unplug mlx5_1/1
step module plug mlx5_1/1
# The adapter's own health, from the kernel's devlink health reporters: a fatal firmware error
# that the driver recovers from at once, then a firmware error (mlx5's fw reporter never
# recovers: it stays in error).
step devlink report mlx5_0 fw_fatal
step devlink report mlx5_1 fw
fi

echo
echo "== The same records as every subscriber reads them, one JSON object per line. Here socat"
echo "   asks for a replay of everything since seq 0: echo '{\"op\":\"since\",\"seq\":0}' | socat - UNIX-CONNECT:$sock"
echo '{"op":"since","seq":0}' | socat -t 5 - "UNIX-CONNECT:$sock"

journalctl --sync
echo
echo "== The same records in the journal (journalctl RDMA_DEVICE=mlx5_0 -o short):"
journalctl -D "$work/log/journal" --no-pager -o short RDMA_DEVICE=mlx5_0
echo
echo "== One entry with its structured fields (journalctl RDMA_EVENT=port_err -o verbose):"
journalctl -D "$work/log/journal" --no-pager -o verbose RDMA_EVENT=port_err | grep -E "^\s+(MESSAGE|PRIORITY|MESSAGE_ID|RDMA_[A-Z_]+)=" | grep -v RDMA_RECORD || true

if [ $once = 1 ]; then
  exit 0
fi
echo
echo "== Running; the monitor above goes on. From another terminal (as root):"
echo "   inject events:     RDMA_SIM_DIR=$RDMA_SIM_DIR $bin/rdma-sim port down mlx5_0/1"
echo "                      RDMA_SIM_DIR=$RDMA_SIM_DIR $bin/rdma-sim devlink report mlx5_0 fw_fatal"
echo "                      ($bin/rdma-sim help lists every command)"
echo "   subscribe:         socat -u UNIX-CONNECT:$sock - | jq ."
echo "                      $bin/rdma-eventctl --socket $sock monitor"
echo "                      $bin/rdma-eventctl --socket $sock status"
echo "   the journal:       journalctl -D $work/log/journal -f RDMA_DEVICE=mlx5_0"
echo "   Ctrl-C stops."
wait "${pids[1]}"
