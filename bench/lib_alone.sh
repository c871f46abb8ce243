# shellcheck shell=bash
# bench/run.sh's sections that run alone (--only reporters, counters, devlink): what each
# measures, --runs times, and the summary of its figures on stderr; no report (their tables in
# docs/benchmarks.md are written by hand). Sourced by bench/run.sh once its fabrics,
# configurations and helpers (start_daemon, measure, on_fabric, log) are there.

# Idle reporters (--only reporters): the fan-out at 1,000 events/s and in a storm, with one
# subscriber and --reporters idle reporters of the client library connected: on the report
# socket; on the events socket, as every reporter was before the report socket (its path is
# removed once the daemon listens, so the library finds none, as with an older daemon); and
# with none. Each on a daemon of its own, in turn within a run. Each result says where the
# daemon counted its reporters ("counted_as"): a daemon from before the report socket counts
# them as subscribers in both runs with reporters.
reporters_runs() {  # RUN
  local where n
  for where in none report events; do
    n=$reporters
    [ $where != none ] || n=0
    start_daemon "$sixteen" all "reporters-$where" --no-journal
    [ $where != events ] || rm -f "$sock.report"
    measure latency --figure "reporters.$where" --run "$1" --sim "$sixteen" --socket "$sock" \
      --daemon-pid "$daemon_pid" --subscribers 1 --events "$latency_events" --rate 1000 \
      --target mlx5_0/1 --reporters "$n"
    measure storm --figure "reporters_storm.$where" --run "$1" --sim "$sixteen" \
      --socket "$sock" --daemon-pid "$daemon_pid" --count "$fanout_count" --targets all \
      --subscribers 1 --reporters "$n"
    stop_pid "$daemon_pid"
  done
}

# summary PREFIX EXPR: for each figure named PREFIX..., its runs (a jq array) made into one line
# by EXPR, which may use median and range (min-max, two decimals); on stderr. The summaries of
# the sections that run alone.
summary() {
  jq -rs '
    def median: sort | if length % 2 == 1 then .[length / 2 | floor]
                       else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    def range: "\(min * 100 | round / 100)-\(max * 100 | round / 100)";
    group_by(.figure)[] | select(.[0].figure | startswith($prefix)) | '"$2" --arg prefix "$1" \
    "$results" >&2
}

# The medians of what reporters_runs measured, one line per figure, on stderr.
reporters_summary() {
  summary reporters '
    "\(.[0].figure): \(length) runs, \(.[0].reporters.count) reporters counted as " +
    "\(.[0].reporters.counted_as); CPU per event \(map(.cpu_per_event_us) | median * 100 | round / 100) us " +
    "(\(map(.cpu_per_event_us) | range))" +
    (if .[0].kind == "latency" then ", p99 \(map(.p99_us) | median * 10 | round / 10) us"
     else ", lost to the subscriber \(map(.lost_records) | median)" end)
  '
}

# What link quality costs (--only counters): the daemon on the 16 devices x 2 ports fabric,
# left alone with every port up, reading its counters every second, then with link health off;
# each followed by the bench program reading the same files every second as a 1 s poller does.
counters_runs() {  # RUN
  local conf fig
  for conf in counters-1s idle-quiet; do
    fig=counters.1s
    [ $conf = counters-1s ] || fig=counters.off
    on_fabric "$sixteen" "$bench" counters --figure "$fig" --run "$1" --results "$results" \
      --seconds "$counter_seconds" --socket "$work/$fig.sock" --sysfs "$sixteen/sys" \
      -- "$bin/rdma-eventd" -f -c "$work/$conf.json" --socket "$work/$fig.sock" --no-journal \
      </dev/null >/dev/null
  done
}

counters_summary() {
  summary counters '
    "\(.[0].figure): \(length) runs of \(.[0].seconds | round) s, \(.[0].ports) ports; " +
    "samples \(map(.samples) | median), reads \(map(.counter_reads) | median), " +
    "daemon CPU \(map(.daemon_cpu_s * 1000) | median * 100 | round / 100) ms " +
    "(\(map(.daemon_cpu_s * 1000) | range)), per sample " +
    "\(map(.daemon_cpu_per_sample_us) | median * 100 | round / 100) us " +
    "(\(map(.daemon_cpu_per_sample_us) | range)), wakeups \(map(.voluntary) | median); " +
    "poller: \(map(.poller_reads) | median) reads, " +
    "\(map(.poller_cpu_per_read_us) | median * 100 | round / 100) us per read " +
    "(\(map(.poller_cpu_per_read_us) | range))"
  '
}

# devlink health (--only devlink): mlx5_0's fw reporter (mlx5's never recovers: each report
# is one notification, one devlink_health record) reported at 1,000/s through the
# simulator's devlink stand-in, with the daemon watching the 16 devices x 2 ports (a report is
# mapped to its RDMA device among them), read by one subscriber; then as many raw port_err on
# mlx5_0/1 on the same daemon, the verbs path to compare with.
devlink_runs() {  # RUN
  export RDMA_EVENTD_DEVLINK_SOCKET=$sixteen/devlink.sock
  start_daemon "$sixteen" all devlink --no-journal
  unset RDMA_EVENTD_DEVLINK_SOCKET
  measure latency --figure devlink.report --run "$1" --sim "$sixteen" --socket "$sock" \
    --daemon-pid "$daemon_pid" --subscribers 1 --events "$latency_events" --rate 1000 \
    --inject devlink --target mlx5_0 --devlink-reporter fw
  measure latency --figure devlink.port_err --run "$1" --sim "$sixteen" --socket "$sock" \
    --daemon-pid "$daemon_pid" --subscribers 1 --events "$latency_events" --rate 1000 \
    --target mlx5_0/1
  stop_pid "$daemon_pid"
  # Idle with devlink followed (its two sockets in the loop, no timer): as the idle section's
  # rows with the watchdog off (udev "running", link quality off), for --idle-seconds.
  mkdir -p /run/udev && : >/run/udev/control
  env RDMA_SIM_DIR="$sixteen" LD_LIBRARY_PATH="$simlib" \
    RDMA_EVENTD_DEVLINK_SOCKET="$sixteen/devlink.sock" \
    "$bench" idle --figure devlink.idle --run "$1" --results "$results" \
    --seconds "$idle_seconds" --socket "$work/devlink-idle.sock" \
    -- "$bin/rdma-eventd" -f -c "$work/idle-quiet.json" --socket "$work/devlink-idle.sock" \
    </dev/null >/dev/null
  rm -f /run/udev/control
}

devlink_summary() {
  summary devlink '
    if .[0].figure == "devlink.idle" then
      "devlink.idle: \(length) runs of \(.[0].seconds) s, devlink followed " +
      "\(all(.devlink_available)); context switches \(map(.switches | tostring) | join(", "))"
    else
      "\(.[0].figure): \(length) runs of \(.[0].events) \(.[0].inject) at \(.[0].rate)/s; " +
      "p50 \(map(.p50_us) | median * 10 | round / 10) us (\(map(.p50_us) | range)), " +
      "p99 \(map(.p99_us) | median * 10 | round / 10) us (\(map(.p99_us) | range)), " +
      "max \(map(.max_us) | max * 10 | round / 10) us; " +
      "daemon CPU per event \(map(.cpu_per_event_us) | median * 100 | round / 100) us " +
      "(\(map(.cpu_per_event_us) | range)); samples \(map(.samples) | min) of " +
      "\(.[0].samples_expected), lost \(map(.lost_records + .missing) | add), " +
      "complete \(all(.complete))"
    end
  '
}

# run_alone SECTION WHAT: --only SECTION: SECTION_runs, --runs times (each run logged as
# "run R/N: WHAT"), then SECTION_summary; bench/run.sh ends there.
run_alone() {
  local section=$1 what=$2 run
  for run in $(seq 1 "$runs"); do
    log "run $run/$runs: $what"
    "${section}_runs" "$run"
  done
  "${section}_summary"
  exit 0
}
