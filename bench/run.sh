#!/usr/bin/env bash
# The benchmarks of docs/benchmarks.md, in one command, as root, from anywhere in the tree:
#
#   bench/run.sh [--runs N] [--out FILE] [--smoke] [OPTIONS]
#
# Builds what it needs into ./build, then, in a private mount namespace (a tmpfs on /run and a
# systemd-journald of its own, so the host's journal is untouched), starts three simulated
# fabrics and measures rdma-eventd against them, side by side with ibv_asyncwatch and a raw
# read-and-ack loop: storm throughput, latency, fan-out CPU, idle wakeups, memory, start-up
# and storms with slow queries. Every measurement runs N times; the report gives the median
# and the spread of each figure next to its target. It stops every process it started, also
# on Ctrl-C.
#
# Options:
#   --runs N               runs of every measurement (default 5; --smoke: 1)
#   --out FILE             the report (default docs/benchmarks.md; with --only none, no
#                          report unless --out names one); what FILE holds from the line
#                          "<!-- Written by hand from here on: ..." to its end is kept,
#                          after the new report
#   --smoke                tiny counts and a 2 s idle window: checks that the harness works
#                          (what ctest's bench_smoke runs); the numbers mean nothing
#   --results FILE         also keep every measurement there, one JSON object per line,
#                          written as it is made
#   --only LIST            only these sections (comma-separated): storm, slow, latency
#                          (latency, fan-out and memory), startup, idle, health (the
#                          1-device storm with port health off and on, interleaved); none:
#                          only what --profile and --instructions ask for, and no report;
#                          incidents, alone: bench/incidents.sh (rdma-eventctl history
#                          --incidents over a central journal of 1,000 hosts and 1,000,000
#                          records, --runs times; the 10,000 hosts of docs/benchmarks.md:
#                          bench/incidents.sh --hosts 10000 --records 2000000; no daemon, no
#                          report: its rows are written by hand in docs/benchmarks.md); reporters, alone: the fan-out with
#                          --reporters idle reporters connected, on the report socket, on the
#                          events socket (as before it), and with none, --runs times (a summary
#                          on stderr, no report: its table is written by hand in
#                          docs/benchmarks.md, "Idle reporters"); counters, alone: what
#                          link quality costs: the daemon left alone reading its counters
#                          every second, then with link health off, each followed by a 1 s
#                          poller of the same files, --runs times (a summary on stderr, no
#                          report: docs/benchmarks.md, "Link quality", is written by hand);
#                          devlink, alone: devlink health reports (mlx5_0's fw reporter,
#                          through the simulator's devlink stand-in; the daemon watches 16
#                          devices) at 1,000/s to one subscriber, then as many port_err
#                          events on the same daemon (--latency-events of each), then a daemon
#                          following devlink left idle for --idle-seconds, --runs times (a
#                          summary on stderr, no report: docs/benchmarks.md, "devlink
#                          health", is written by hand)
#   --storm-count N        events per storm, 1 device (default 1000000)
#   --storm16-count N      events per storm, 16 devices x 2 ports (default 1000000)
#   --latency-events N     events per latency run, at 1,000 events/s (default 10000)
#   --fanout-count N       events per fan-out storm (default 10000)
#   --subscribers A,B,C    the three subscriber counts of latency and fan-out (default 1,100,1000)
#   --reporters N          idle reporters in --only reporters (default 100)
#   --counter-seconds S    the window of --only counters (default 30)
#   --link-health on|off   link quality in the daemons of the other sections (default on, as
#                          shipped); off measures what it adds (the idle rows set their own)
#   --idle-seconds S       the idle window (default 60)
#   --profile FILE         also run one more 1-device and one more 16-device storm under
#                          `perf record` and write the daemon's profiles (perf report) to
#                          FILE, then a 1-device one with the journal on (a tenth of the
#                          events), with journald's CPU per record, and the journal floor:
#                          as many entries sent to journald by a bare sender (needs perf)
#   --instructions FILE    also run the daemon under callgrind (a 1-device and a 16-device
#                          storm, events one at a time at 1,000/s, a 1-device storm with the
#                          journal on) and write the instructions it runs per event (user
#                          space; a count that the machine's load does not move) and where,
#                          to FILE, the callgrind data beside it (needs valgrind)
#   --instructions-count N events per callgrind storm (default 100000; --smoke: 2000); the
#                          storm with the journal on has a fifth of them, the run at 1,000
#                          events/s a fiftieth
#   --max-queued-bytes N   the daemon's socket.max_queued_bytes in the latency, fan-out and
#                          idle runs (default: its own, 1 MiB)
#   --storm-queued-bytes N socket.max_queued_bytes in the throughput storms (default 8388608:
#                          on 2 cores the subscriber's reader shares the CPUs with the daemon
#                          and the simulator, and may not be scheduled for a few ms)
#   --note TEXT            a line for the report's "This run" table
#   --build-dir DIR        the build to use (default ./build)
#   --no-build             use the build as it is
#   -h, --help             this text
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
original_args=("$@")
runs="" out="$here/docs/benchmarks.md" out_given=0 smoke=0 results_copy="" only="" profile="" note=""
instructions="" instructions_count=""
max_queued_bytes="" storm_queued_bytes=8388608
build="$here/build" do_build=1
storm_count="" storm16_count="" latency_events="" fanout_count="" subscribers="" idle_seconds=""
reporters=100
counter_seconds=30
link_health=on

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift ;;
    --out) out=$(abs "$2") out_given=1; shift ;;
    --smoke) smoke=1 ;;
    --results) results_copy=$(abs "$2"); shift ;;
    --only) only=$2; shift ;;
    --storm-count) storm_count=$2; shift ;;
    --storm16-count) storm16_count=$2; shift ;;
    --latency-events) latency_events=$2; shift ;;
    --fanout-count) fanout_count=$2; shift ;;
    --subscribers) subscribers=$2; shift ;;
    --reporters) reporters=$2; shift ;;
    --idle-seconds) idle_seconds=$2; shift ;;
    --counter-seconds) counter_seconds=$2; shift ;;
    --link-health) link_health=$2; shift ;;
    --profile) profile=$(abs "$2"); shift ;;
    --instructions) instructions=$(abs "$2"); shift ;;
    --instructions-count) instructions_count=$2; shift ;;
    --note) note=$2; shift ;;
    --max-queued-bytes) max_queued_bytes=$2; shift ;;
    --storm-queued-bytes) storm_queued_bytes=$2; shift ;;
    --build-dir) build=$(abs "$2"); shift ;;
    --no-build) do_build=0 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (--help lists them)" >&2; exit 64 ;;
  esac
  shift
done
if [ "$only" = incidents ]; then
  [ $do_build = 0 ] || cmake --build "$build" --target rdma-eventctl rdma-journal-gen -j"$(nproc)"
  exec "$here/bench/incidents.sh" --build-dir "$build" --runs "${runs:-3}"
fi
if [ $smoke = 1 ]; then
  : "${runs:=1}" "${storm_count:=10000}" "${storm16_count:=10000}" "${latency_events:=200}"
  : "${fanout_count:=1000}" "${subscribers:=1,10,20}" "${idle_seconds:=2}"
  : "${instructions_count:=2000}"
fi
: "${runs:=5}" "${storm_count:=1000000}" "${storm16_count:=1000000}" "${latency_events:=10000}"
: "${instructions_count:=100000}"
: "${fanout_count:=10000}" "${subscribers:=1,100,1000}" "${idle_seconds:=60}"
if ! [[ $runs =~ ^[1-9][0-9]*$ ]]; then
  echo "run.sh: --runs takes a count of 1 or more, not '$runs'" >&2
  exit 64
fi
IFS=, read -r -a sub_counts <<<"$subscribers"
if [ ${#sub_counts[@]} != 3 ]; then
  echo "run.sh: --subscribers takes three counts (e.g. 1,100,1000)" >&2
  exit 64
fi
sections=(storm slow latency startup idle health)  # what --only names, and none
for alone in reporters counters devlink; do
  if [[ ",$only," == *,$alone,* ]] && [ "$only" != $alone ]; then
    echo "run.sh: --only $alone runs alone" >&2
    exit 64
  fi
  [ "$only" != $alone ] || sections+=($alone)
done
for section in ${only//,/ }; do
  if [[ " ${sections[*]} none " != *" $section "* ]]; then
    echo "run.sh: --only: unknown section '$section' ($(printf '%s, ' "${sections[@]}")none)" >&2
    exit 64
  fi
done
wants() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
# With --only none, only --profile and --instructions run: the report would hold nothing, so it
# is written only where --out asks for it (the default is the project's own docs/benchmarks.md).
measures_none=1
for section in "${sections[@]}"; do
  if wants "$section"; then measures_none=0; fi
done
if [ $measures_none = 1 ] && [ -z "$profile$instructions" ]; then
  echo "run.sh: --only none measures nothing by itself: add --profile FILE or --instructions FILE" >&2
  exit 64
fi

if [ "$(id -u)" != 0 ]; then
  echo "run.sh: needs root (a private mount namespace and journald): run it with sudo" >&2
  exit 1
fi

# --- build (outside the namespace), then everything else inside it ---------------------------
if [ -z "${RDMA_EVENTD_BENCH_NS:-}" ]; then
  if [ $do_build = 1 ]; then
    [ -f "$build/CMakeCache.txt" ] || cmake -S "$here" -B "$build" -DRDMA_EVENTD_WERROR=ON
    cmake --build "$build" -j "${JOBS:-2}" --target rdma-eventd rdma-sim rdma-eventd-bench \
      rdma-eventd-bench-raw
  fi
  # The command line as the report shows it, quoted so that it can be pasted.
  cmdline=bench/run.sh
  for arg in "${original_args[@]}"; do
    if [[ $arg =~ ^[A-Za-z0-9_./=,:+-]+$ ]]; then cmdline+=" $arg"; else cmdline+=" '${arg//\'/\'\\\'\'}'"; fi
  done
  export RDMA_EVENTD_BENCH_NS=1 RDMA_EVENTD_BENCH_CMDLINE=$cmdline
  exec unshare --mount --propagation private -- "${BASH_SOURCE[0]}" "${original_args[@]}" --no-build
fi

bin=$build/bin
bench=$bin/rdma-eventd-bench
for f in "$bin/rdma-eventd" "$bin/rdma-sim" "$bench" "$bin/rdma-eventd-bench-raw"; do
  [ -x "$f" ] || { echo "run.sh: $f is missing (build it, or drop --no-build)" >&2; exit 1; }
done
command -v ibv_asyncwatch >/dev/null || { echo "run.sh: ibv_asyncwatch is missing (apt-get install ibverbs-utils)" >&2; exit 1; }
if [ -n "$instructions" ]; then
  command -v valgrind >/dev/null || { echo "run.sh: --instructions needs valgrind (apt-get install valgrind)" >&2; exit 1; }
fi
if [ -n "$profile" ]; then
  command -v perf >/dev/null || { echo "run.sh: --profile needs perf (apt-get install linux-perf)" >&2; exit 1; }
fi

work=$(mktemp -d /tmp/rdma-eventd-bench.XXXXXX)
results=${results_copy:-$work/results.jsonl}  # written as the measurements go
: >"$results"
pids=()       # every process started here that may still run
fabrics=()    # every simulator started here
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for f in "${fabrics[@]}"; do "$bin/rdma-sim" --dir "$f" stop >/dev/null 2>&1 || true; done
  [ $rc = 0 ] || log "failed (exit $rc); logs were in $work"
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
forget() { local keep=() p; for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done; pids=("${keep[@]}"); }
stop_pid() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; forget "$1"; }
# wait_until SECONDS WHAT COMMAND...: the condition, checked every 20 ms, or fail.
wait_until() {
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until "$@"; do
    [ $SECONDS -lt $deadline ] || { log "timed out waiting for $what"; return 1; }
    sleep 0.02
  done
}

# --- the private journald -------------------------------------------------------------------
mount -t tmpfs -o mode=755 tmpfs /run
printf '[Journal]\nStorage=volatile\nReadKMsg=no\nRateLimitBurst=0\nRateLimitIntervalSec=0\nForwardToSyslog=no\nForwardToWall=no\nRuntimeMaxUse=512M\n' >"$work/journald.conf"
mount --bind "$work/journald.conf" /etc/systemd/journald.conf
/lib/systemd/systemd-journald </dev/null >/dev/null 2>"$work/journald.log" &
journald_pid=$!
pids+=($journald_pid)
journald_up() { journalctl --sync 2>/dev/null; }
wait_until 20 "journald" journald_up

ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" -lt $((sub_counts[2] + 200)) ]; then
  echo "run.sh: RLIMIT_NOFILE's hard limit ($(ulimit -Hn)) is too low for ${sub_counts[2]} subscribers" >&2
  exit 1
fi

# How busy the machine is meanwhile, for the report.
head -1 /proc/stat >"$work/stat-start"
cp /proc/loadavg "$work/loadavg-start"

# --- fabrics and configurations -------------------------------------------------------------
simlib=$build/lib/rdma-sim
start_fabric() {  # NAME TOPOLOGY [ARGS...]
  local dir=/run/rdma-eventd-bench/$1 topo=$2; shift 2
  fabrics+=("$dir")
  "$bin/rdma-sim" start -t "$here/sim/topologies/$topo" --dir "$dir" "$@" >/dev/null
}
start_fabric one two-adapters.json
start_fabric sixteen sixteen-devices.json
start_fabric slow sixteen-devices.json --query-latency-us 20
one=/run/rdma-eventd-bench/one sixteen=/run/rdma-eventd-bench/sixteen slow=/run/rdma-eventd-bench/slow
mapfile -t sixteen_devices < <("$bin/rdma-sim" --dir "$sixteen" --json show | jq -r '.devices[].name')
[ ${#sixteen_devices[@]} = 16 ] || { echo "run.sh: the 16-device fabric has ${#sixteen_devices[@]} devices" >&2; exit 1; }

# The daemon's configuration: its defaults, but for enough subscribers (and, when asked, a
# bigger backlog per subscriber); the 1-device storms select mlx5_0 only. Port health is off
# but in the health section: its verdicts are records of their own (a storm of port_err makes
# every port flapping), and the other sections measure what they measure without them. Its
# state file goes to this run's own directory, never to the host's /var/lib/rdma-eventd.
export STATE_DIRECTORY=$work/state
mkdir -p "$STATE_DIRECTORY"
socket_conf="\"max_subscribers\": $((sub_counts[2] + 100))"
[ -z "$max_queued_bytes" ] || socket_conf+=", \"max_queued_bytes\": $max_queued_bytes"
no_health='"health": {"enabled": false}'
printf '{"socket": {%s}, %s}\n' "$socket_conf" "$no_health" >"$work/all.json"
printf '{"devices": {"include": ["mlx5_0"]}, "socket": {%s}, %s}\n' "$socket_conf" "$no_health" \
  >"$work/mlx5_0.json"
# The throughput storms: one subscriber that reads as fast as it is scheduled. The journal
# budget is off there, so that a storm with the journal on journals every record (with the
# budget, the journal would get a port's first 200 records and then summaries).
storm_conf="\"max_queued_bytes\": $storm_queued_bytes"
no_budget='"journal": {"budget": {"enabled": false}}, '"$no_health"
printf '{"socket": {%s}, %s}\n' "$storm_conf" "$no_budget" >"$work/storm-all.json"
printf '{"devices": {"include": ["mlx5_0"]}, "socket": {%s}, %s}\n' "$storm_conf" "$no_budget" \
  >"$work/storm-mlx5_0.json"
# The health section: the same 1-device storm configuration with port health on (its defaults,
# as shipped); only health.enabled differs from storm-mlx5_0.
printf '{"devices": {"include": ["mlx5_0"]}, "socket": {%s}, %s}\n' "$storm_conf" \
  '"journal": {"budget": {"enabled": false}}, "health": {"enabled": true}' \
  >"$work/storm-health-mlx5_0.json"
# Link quality (on by default) wakes the daemon once per link_health.interval_s while a port is
# up: the idle rows measure a daemon with it off (the idle floor), and one row with it on.
printf '{"socket": {%s}, %s, "link_health": {"enabled": false}}\n' "$socket_conf" "$no_health" \
  >"$work/idle-quiet.json"
# --only counters: the daemon reading its counters every second (to measure a sample), and
# with link health off (the same daemon's floor).
printf '{"socket": {%s}, %s, "link_health": {"interval_s": 1}}\n' "$socket_conf" "$no_health" \
  >"$work/counters-1s.json"
# --link-health off: every configuration of the other sections with link quality off, to
# measure what it adds to a section (the event path's instructions, a storm).
if [ "$link_health" = off ]; then
  for c in all mlx5_0 storm-all storm-mlx5_0 storm-health-mlx5_0; do
    jq -c '.link_health.enabled = false' "$work/$c.json" >"$work/$c.json.new"
    mv "$work/$c.json.new" "$work/$c.json"
  done
fi
for c in all mlx5_0 storm-all storm-mlx5_0 storm-health-mlx5_0 idle-quiet counters-1s; do
  "$bin/rdma-eventd" --check-config -c "$work/$c.json" >/dev/null
done

# on_fabric DIR COMMAND...: COMMAND with the simulator's stand-in libibverbs, through env(1)
# so that, started with &, $! is COMMAND's own PID.
on_fabric() { local dir=$1; shift; env RDMA_SIM_DIR="$dir" LD_LIBRARY_PATH="$simlib" "$@"; }

# start_daemon FABRIC CONFIG NAME [DAEMON ARGS...]: sets $daemon_pid and $sock once it is ready.
start_daemon() {
  local fab=$1 conf=$2 name=$3; shift 3
  sock=$work/$name.sock
  rm -f "$work/$name.log"
  env RDMA_SIM_DIR="$fab" LD_LIBRARY_PATH="$simlib" "$bin/rdma-eventd" -f -c "$work/$conf.json" \
    --socket "$sock" "$@" </dev/null >/dev/null 2>"$work/$name.log" &
  daemon_pid=$!
  pids+=($daemon_pid)
  daemon_ready() {
    kill -0 "$daemon_pid" 2>/dev/null || { cat "$work/$name.log" >&2; exit 1; }
    grep -q "ready:" "$work/$name.log" 2>/dev/null
  }
  wait_until 30 "the daemon ($name)" daemon_ready
}

measure() { "$bench" "$@" --results "$results"; }

# --- storms ---------------------------------------------------------------------------------
storm_topology() {  # RUN NAME FABRIC CONFIG COUNT TARGETS DEVICE...
  local run=$1 topo=$2 fab=$3 conf=$4 count=$5 targets=$6; shift 6
  local journal
  for journal in off on; do
    start_daemon "$fab" "storm-$conf" "storm-$topo-$journal" $([ $journal = off ] && echo --no-journal)
    measure storm --figure "storm.$topo.daemon_$journal" --run "$run" --sim "$fab" \
      --socket "$sock" --daemon-pid "$daemon_pid" --count "$count" --targets "$targets" \
      --max-queued-bytes "$storm_queued_bytes"
    stop_pid "$daemon_pid"
  done
  # The same number of vendor events through the devices' DEVX event channels (mlx5 only;
  # each becomes one record), read by the daemon alone: no other consumer reads DEVX events.
  start_daemon "$fab" "storm-$conf" "storm-$topo-devx" --no-journal
  measure storm --figure "storm.$topo.devx_off" --source devx --run "$run" --sim "$fab" \
    --socket "$sock" --daemon-pid "$daemon_pid" --count "$count" \
    --targets "$(IFS=,; echo "$*")" --max-queued-bytes "$storm_queued_bytes"
  stop_pid "$daemon_pid"
  local watchers=() dev
  for dev in "$@"; do
    env RDMA_SIM_DIR="$fab" LD_LIBRARY_PATH="$simlib" ibv_asyncwatch -d "$dev" </dev/null \
      >/dev/null 2>>"$work/asyncwatch.log" &
    watchers+=($!)
    pids+=($!)
  done
  measure consumers --figure "storm.$topo.asyncwatch" --consumer ibv_asyncwatch --run "$run" \
    --sim "$fab" --pids "$(IFS=,; echo "${watchers[*]}")" --contexts $# --count "$count" \
    --targets "$targets"
  for dev in "${watchers[@]}"; do stop_pid "$dev"; done
  env RDMA_SIM_DIR="$fab" LD_LIBRARY_PATH="$simlib" "$bin/rdma-eventd-bench-raw" "$count" "$@" \
    </dev/null >/dev/null &
  local raw=$!
  pids+=($raw)
  measure consumers --figure "storm.$topo.raw" --consumer raw --run "$run" --sim "$fab" \
    --pids "$raw" --contexts $# --count "$count" --targets "$targets"
  wait "$raw"
  forget "$raw"
}

slow_storm() {  # RUN
  start_daemon "$slow" storm-all "storm-slow" --no-journal
  measure storm --figure storm.slow.daemon_off --run "$1" --sim "$slow" --socket "$sock" \
    --daemon-pid "$daemon_pid" --count "$storm16_count" --targets all \
    --max-queued-bytes "$storm_queued_bytes"
  stop_pid "$daemon_pid"
}

# Latency at 1,000 events/s, then a fan-out storm with as many subscribers (CPU per event,
# memory after it), one daemon per subscriber count.
latency_runs() {  # RUN
  local role roles=(1 100 1000)  # figure names; the counts are --subscribers'
  for role in 0 1 2; do
    local n=${sub_counts[$role]}
    start_daemon "$sixteen" all "latency-$n" --no-journal
    measure latency --figure "latency.${roles[$role]}" --run "$1" --sim "$sixteen" \
      --socket "$sock" --daemon-pid "$daemon_pid" --subscribers "$n" \
      --events "$latency_events" --rate 1000 --target mlx5_0/1
    measure storm --figure "fanout.${roles[$role]}" --run "$1" --sim "$sixteen" --socket "$sock" \
      --daemon-pid "$daemon_pid" --count "$fanout_count" --targets all --subscribers "$n" \
      --settle-ms 3000
    stop_pid "$daemon_pid"
    # The same events, injected the same way, and the same readers, with a bare writer in the
    # daemon's place: the floor under fan-out on this machine. It reads the events from mlx5_0
    # with the simulator's libibverbs, as the daemon did; its lines are as long as the
    # daemon's records were.
    local record_bytes
    record_bytes=$(jq -r 'select(.figure == "fanout.'"${roles[$role]}"'" and .run == '"$1"')
      | (.bytes / ([.records, 1] | max)) | floor' "$results" | tail -1)
    on_fabric "$sixteen" "$bench" floor --figure "floor.${roles[$role]}" --run "$1" \
      --sim "$sixteen" --socket "$work/floor.sock" --target mlx5_0/1 --results "$results" \
      --subscribers "$n" --events "$latency_events" --rate 1000 \
      --record-bytes "${record_bytes:-560}"
    [ "$role" = 0 ] || continue
    # At 1 subscriber, the same writer with three of the daemon's parts added: libevent's
    # loop, the port query and the record's JSON (what one wakeup of any rdma-eventd runs).
    on_fabric "$sixteen" "$bench" floor --figure floor.1.parts --run "$1" --sim "$sixteen" \
      --socket "$work/floor.sock" --target mlx5_0/1 --results "$results" --subscribers "$n" \
      --events "$latency_events" --rate 1000 --steps libevent,query,record
  done
}

# shellcheck source=bench/lib_alone.sh
. "$here/bench/lib_alone.sh"

# The 1-device storm, journal off, with port health off and on: off, on, off, on, ..., off, so
# that each run with health on lies between two with it off (run r's and run r+1's) and load
# that comes and goes hits both alike; the off runs side by side are the noise. Each daemon with
# health on starts with no saved state, as on a fresh host.
health_storm() {  # RUN off|on
  local conf=storm-mlx5_0
  if [ "$2" = on ]; then
    conf=storm-health-mlx5_0
    rm -f "$STATE_DIRECTORY/port-health.json"
  fi
  start_daemon "$one" "$conf" "health-$2" --no-journal
  measure storm --figure "health.$2" --run "$1" --sim "$one" --socket "$sock" \
    --daemon-pid "$daemon_pid" --count "$storm_count" --targets mlx5_0/1 \
    --max-queued-bytes "$storm_queued_bytes"
  stop_pid "$daemon_pid"
}

case $only in
  counters) run_alone counters "link quality: counters read every second, then link health off (${counter_seconds} s each, and as long for the 1 s poller)" ;;
  devlink) run_alone devlink "devlink health: $latency_events reports, then $latency_events port_err, at 1,000/s" ;;
  reporters) run_alone reporters "idle reporters ($reporters): none, on the report socket, on the events socket" ;;
esac

for run in $(seq 1 "$runs"); do
  # What a system call costs here, for "This run": the ratios to the bare loops follow it.
  measure syscall --run "$run"
  if wants storm; then
    log "run $run/$runs: storms, 1 device ($storm_count events)"
    storm_topology "$run" one "$one" mlx5_0 "$storm_count" mlx5_0/1 mlx5_0
    log "run $run/$runs: storms, 16 devices x 2 ports ($storm16_count events)"
    storm_topology "$run" sixteen "$sixteen" all "$storm16_count" all "${sixteen_devices[@]}"
  fi
  if wants slow; then
    log "run $run/$runs: storm with 20 us queries"
    slow_storm "$run"
  fi
  if wants latency; then
    log "run $run/$runs: latency and fan-out with ${sub_counts[*]} subscribers"
    latency_runs "$run"
  fi
done

if wants health; then
  log "port health off and on, interleaved: $runs runs on, $((runs + 1)) off ($storm_count events each)"
  for run in $(seq 1 "$runs"); do
    health_storm "$run" off
    health_storm "$run" on
  done
  health_storm $((runs + 1)) off
fi

if wants startup; then
  log "start-up, $runs runs"
  for run in $(seq 1 "$runs"); do
    on_fabric "$sixteen" "$bench" startup --figure startup --run "$run" --results "$results" \
      -- "$bin/rdma-eventd" -f -c "$work/all.json" --socket "$work/startup.sock"
  done
fi

# idle_runs UDEV WATCHDOG...: the idle daemons, every run and watchdog setting side by side.
# On a host udev runs, and the daemon follows its events with no timer; the private /run of
# this namespace says whether udev "runs" (/run/udev/control, as udev itself marks it). No
# udev message comes meanwhile: nothing is plugged.
idle_runs() {
  local udev=$1 idlers=() run wd fig conf; shift
  if [ "$udev" = udev ]; then mkdir -p /run/udev && : >/run/udev/control; else rm -f /run/udev/control; fi
  for run in $(seq 1 "$runs"); do
    for wd in "$@"; do
      fig=idle.$wd conf=idle-quiet
      [ "$udev" = udev ] || fig=idle.no_udev
      # "links": the shipped defaults, link quality on (watchdog off).
      [ "$wd" != links ] || conf=all
      env RDMA_SIM_DIR="$sixteen" LD_LIBRARY_PATH="$simlib" \
        "$bench" idle --figure "$fig" --run "$run" --results "$results" \
        --seconds "$idle_seconds" --socket "$work/$fig-$run.sock" \
        $([ $wd = on ] && echo --watchdog-usec 2000000) \
        -- "$bin/rdma-eventd" -f -c "$work/$conf.json" --socket "$work/$fig-$run.sock" \
        </dev/null >/dev/null &
      idlers+=($!)
      pids+=($!)
    done
  done
  for p in "${idlers[@]}"; do wait "$p"; forget "$p"; done
  rm -f /run/udev/control
}

if wants idle; then
  log "idle, ${idle_seconds} s, udev running: $runs runs with the watchdog off, on, and link quality on, side by side"
  idle_runs udev off on links
  log "idle, ${idle_seconds} s, no udev (a container): $runs runs, watchdog off"
  idle_runs no_udev off
fi

# shellcheck source=bench/lib_profile.sh
. "$here/bench/lib_profile.sh"

if [ -n "$profile" ]; then
  profile_runs
fi
if [ -n "$instructions" ]; then
  instructions_runs
fi

if [ $measures_none = 1 ] && [ $out_given = 0 ]; then
  log "--only none: no report written (nothing in it was measured; --out FILE writes one)"
  exit 0
fi

build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
sanitize=$(sed -n 's/^RDMA_EVENTD_SANITIZE:[A-Z]*=//p' "$build/CMakeCache.txt")
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
# Local changes to tracked files, except the report this run rewrites.
report_in_tree=()
[[ $out != "$here"/* ]] || report_in_tree=(":(exclude)${out#"$here"/}")
[ -z "$(git -C "$here" status --porcelain --untracked-files=no -- . "${report_in_tree[@]}" 2>/dev/null)" ] ||
  commit+=" (with local changes)"
[ "$sanitize" = ON ] && build_type+=", ASan+UBSan"
"$bench" report --results "$results" --out "$out" --runs "$runs" \
  --command "$RDMA_EVENTD_BENCH_CMDLINE" --date "$(date -u '+%Y-%m-%d %H:%M UTC')" \
  --build "${build_type:-default}, commit $commit" --note "$note" \
  --stat-start "$work/stat-start" --loadavg-start "$work/loadavg-start"
log "report written to $out"
