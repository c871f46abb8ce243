# shellcheck shell=bash
# bench/run.sh's --profile and --instructions: the daemon in storms under `perf record` (its
# profiles, and journald's CPU with the journal on) and under callgrind (the instructions it
# runs per event). Sourced by bench/run.sh once its fabrics, configurations and helpers
# (start_daemon, stop_pid, wait_until, log) are there; profile_runs and instructions_runs run
# them.

# Stops `perf record` as Ctrl-C does. Again until it has gone: a SIGINT that comes while perf is
# still setting up (a short storm) is lost.
stop_perf() {  # PID
  while kill -INT "$1" 2>/dev/null; do
    sleep 0.1
    kill -0 "$1" 2>/dev/null || break
  done
  wait "$1" || true
  forget "$1"
}

# One storm under `perf record`, journal off; its profile goes to the profile file.
profile_storm() {  # FABRIC CONFIG COUNT TARGETS TITLE
  local fab=$1 conf=$2 count=$3 targets=$4 title=$5
  start_daemon "$fab" "$conf" profile --no-journal
  perf record ${PERF_G:-} -F 4999 -o "$work/perf.data" -p "$daemon_pid" </dev/null >/dev/null 2>"$work/perf.log" &
  perf_pid=$!
  pids+=($perf_pid)
  wait_until 20 "perf record" test -s "$work/perf.data"
  "$bench" storm --sim "$fab" --socket "$sock" --daemon-pid "$daemon_pid" \
    --count "$count" --targets "$targets" >"$work/profile-storm.json"
  stop_perf "$perf_pid"
  stop_pid "$daemon_pid"
  {
    echo "# perf profile of rdma-eventd in a $title storm of $count events, journal off"
    echo "# storm: $(cat "$work/profile-storm.json")"
    perf report -i "$work/perf.data" --stdio ${PERF_REP:---sort dso,symbol} --percent-limit 0.5 2>/dev/null |
      grep -v '^$' | sed 's/  */ /g'
    echo
  } >>"$profile"
}

# One storm with the daemon under callgrind, journal off: the instructions it runs per event in
# user space (its own code and its libraries'; not the kernel's), counted from the storm's
# start to its end. A count, not a time: it does not move with the machine's load.
# The count per event also goes into the results as FIGURE ("per_event"), for the report's
# targets.
count_instructions() {  # FABRIC CONFIG COUNT TARGETS TITLE RATE JOURNAL FIGURE (RATE: "" for a storm)
  local fab=$1 conf=$2 count=$3 targets=$4 title=$5 rate=$6 journal=$7 figure=$8
  local out=$work/callgrind.out
  local no_journal=--no-journal
  [ "$journal" = off ] || no_journal=
  # The last count's log goes first: its "ready:" would otherwise be read as this daemon's.
  rm -f "$out"* "$work/instructions.log"
  : >"$work/instructions.log"  # there before the wait below reads it, empty until the daemon writes
  sock=$work/instructions.sock
  env RDMA_SIM_DIR="$fab" LD_LIBRARY_PATH="$simlib" valgrind --tool=callgrind --instr-atstart=no \
    --callgrind-out-file="$out" "$bin/rdma-eventd" -f -c "$work/$conf.json" --socket "$sock" \
    $no_journal </dev/null >/dev/null 2>"$work/instructions.log" &
  daemon_pid=$!
  pids+=($daemon_pid)
  wait_until 120 "the daemon under callgrind" grep -q "ready:" "$work/instructions.log"
  callgrind_control -i on "$daemon_pid" >/dev/null 2>&1
  if [ -n "$rate" ]; then  # events one by one, at a rate, as the latency runs inject them
    "$bench" latency --sim "$fab" --socket "$sock" --daemon-pid "$daemon_pid" \
      --subscribers 1 --events "$count" --rate "$rate" --target "$targets" \
      >"$work/instructions-storm.json"
  else
    "$bench" storm --sim "$fab" --socket "$sock" --daemon-pid "$daemon_pid" \
      --count "$count" --targets "$targets" --max-queued-bytes "$storm_queued_bytes" \
      >"$work/instructions-storm.json"
  fi
  # The journal's entries are sent by its writer thread, after the records: all of them.
  [ "$journal" = off ] || journalctl --sync
  callgrind_control -i off "$daemon_pid" >/dev/null 2>&1
  stop_pid "$daemon_pid"
  local total
  total=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n++ { gsub(",", "", $1); print $1 }')
  {
    echo "# instructions of rdma-eventd in a $title of $count events, journal $journal: $total," \
      "$(awk -v t="$total" -v n="$count" 'BEGIN { printf "%.0f", t / n }') per event"
    echo "# storm: $(cat "$work/instructions-storm.json")"
    callgrind_annotate --inclusive=no "$out" 2>/dev/null | grep -v '^-*$' | sed -n '1,75p'
    echo
  } >>"$instructions"
  jq -cn --arg figure "$figure" --argjson total "$total" --argjson count "$count" \
    '{figure: $figure, run: 1, instructions: $total, count: $count, per_event: ($total / $count)}' \
    >>"$results"
  # For callgrind_annotate, line by line: FILE.1-device-storm-journal-off.callgrind and so on.
  cp "$out" "$instructions.$(printf "%s journal %s" "$title" "$journal" | tr -cs "A-Za-z0-9" "-").callgrind"
}

# ticks PID: the CPU time of process PID so far, from /proc (utime + stime, in clock ticks).
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# --profile: a 1-device and a 16-device storm, then the journal on and its floor, to $profile.
profile_runs() {
  local journal_count journald_before journald_after hz line_bytes
  : >"$profile"
  log "profile: one more 1-device storm under perf record"
  profile_storm "$one" mlx5_0 "$storm_count" mlx5_0/1 1-device
  log "profile: one more 16-device storm under perf record"
  profile_storm "$sixteen" storm-all "$storm16_count" all "16-device"

  # The same with the journal on (every thread of the daemon: the loop and the journal
  # writer), a tenth of the events: journald sets the pace. journald's own CPU time over the
  # storm, from /proc (utime + stime, in clock ticks), goes next to the daemon's.
  log "profile: one more 1-device storm with the journal on, under perf record"
  journal_count=$((storm_count / 10))
  start_daemon "$one" storm-mlx5_0 profile-journal
  perf record -F 4999 -o "$work/perf-journal.data" -p "$daemon_pid" </dev/null >/dev/null \
    2>"$work/perf-journal.log" &
  perf_pid=$!
  pids+=($perf_pid)
  wait_until 20 "perf record" test -s "$work/perf-journal.data"
  journald_before=$(ticks "$journald_pid")
  "$bench" storm --sim "$one" --socket "$sock" --daemon-pid "$daemon_pid" \
    --count "$journal_count" --targets mlx5_0/1 >"$work/profile-journal-storm.json"
  # The records are read back from the socket before journald has stored them all.
  journalctl --sync
  journald_after=$(ticks "$journald_pid")
  stop_perf "$perf_pid"
  stop_pid "$daemon_pid"
  hz=$(getconf CLK_TCK)
  {
    echo "# perf profile of rdma-eventd in a 1-device storm of $journal_count events, journal on"
    echo "# storm: $(cat "$work/profile-journal-storm.json")"
    awk -v t=$((journald_after - journald_before)) -v hz="$hz" -v n="$journal_count" \
      'BEGIN { printf "# journald: %.2f s of CPU over the storm, %.2f us per record\n", t / hz, t / hz / n * 1e6 }'
    perf report -i "$work/perf-journal.data" --stdio --sort comm,dso,symbol --percent-limit 0.5 \
      2>/dev/null | grep -v '^$' | sed 's/  */ /g'
  } >>"$profile"

  # The floor under the journal: the same number of entries of the daemon's shape, sent to the
  # same journald by a bare sender (bench/journal_floor.cc), journald's CPU time around it.
  log "profile: the journal floor, $journal_count entries"
  line_bytes=$(jq -r '(.bytes / ([.records, 1] | max)) | floor' "$work/profile-journal-storm.json")
  journald_before=$(ticks "$journald_pid")
  "$bench" journal-floor --count "$journal_count" --line-bytes "$line_bytes" \
    >"$work/journal-floor.json"
  journalctl --sync
  journald_after=$(ticks "$journald_pid")
  {
    echo
    echo "# journal floor: $(cat "$work/journal-floor.json")"
    awk -v t=$((journald_after - journald_before)) -v hz="$hz" -v n="$journal_count" \
      'BEGIN { printf "# journald: %.2f s of CPU over the floor, %.2f us per entry\n", t / hz, t / hz / n * 1e6 }'
  } >>"$profile"
}

# --instructions: the four counts, to $instructions.
instructions_runs() {
  : >"$instructions"
  log "instructions: a 1-device storm under callgrind ($instructions_count events)"
  count_instructions "$one" storm-mlx5_0 "$instructions_count" mlx5_0/1 "1-device storm" "" off \
    instructions.storm.one.journal_off
  log "instructions: a 16-device storm under callgrind ($instructions_count events)"
  count_instructions "$sixteen" storm-all "$instructions_count" all "16-device storm" "" off \
    instructions.storm.sixteen.journal_off
  log "instructions: $((instructions_count / 50)) events at 1,000 events/s, 1 subscriber, under callgrind"
  count_instructions "$sixteen" all "$((instructions_count / 50))" mlx5_0/1 \
    "run at 1,000 events/s, 16-device fabric, 1 subscriber," 1000 off instructions.rate1000
  log "instructions: a 1-device storm with the journal on, under callgrind ($((instructions_count / 5)) events)"
  count_instructions "$one" storm-mlx5_0 "$((instructions_count / 5))" mlx5_0/1 "1-device storm" "" on \
    instructions.storm.one.journal_on
}
