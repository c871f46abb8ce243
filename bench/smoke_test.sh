#!/usr/bin/env bash
# ctest bench_smoke: bench/run.sh --smoke on the build under test (1 run, tiny counts, a 2 s
# idle window), its report written to a temporary file. Checks that the harness works: every
# measurement ran to completion, the report has every section and every target with a figure,
# and the hand-written part of the report it replaces is kept. It never checks the numbers:
# performance is reported, not asserted.
#
#   bench/smoke_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d /tmp/bench-smoke.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
report=$tmp/benchmarks.md results=$tmp/results.jsonl

fail() {
  echo "bench_smoke: $*" >&2
  echo "--- report:" >&2
  cat "$report" >&2 2>/dev/null || true
  exit 1
}

# The instruction counts too (--instructions), unless the build is sanitized (valgrind cannot
# run a build with AddressSanitizer). They need valgrind (scripts/bootstrap.sh deps): without it
# the test fails rather than check less.
instructions=()
if ! grep -q '^RDMA_EVENTD_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
  command -v valgrind >/dev/null ||
    fail "valgrind is not installed: the instruction counts cannot be checked (scripts/bootstrap.sh deps)"
  instructions=(--instructions "$tmp/instructions.txt")
fi
# The report it replaces has a part written by hand, from the marker line on: kept byte for
# byte, after the new generated part; the old generated part goes.
marker='<!-- Written by hand from here on: bench/run.sh keeps this line and everything after it when it writes the report again. -->'
printf '# Benchmarks\n\nan old generated part\n\n%s\n\n## Analysis\n\nkept *as written*, `twice`:\n\n| a | b |\n|---|---|\n\n  trailing spaces  \n' \
  "$marker" >"$report"
sed -n "/^<!-- Written by hand from here on: /,\$p" "$report" >"$tmp/hand.md"
"$here/bench/run.sh" --smoke --no-build --build-dir "$build" --out "$report" --results "$results" \
  "${instructions[@]}"

# Every measurement, once, to completion.
expect_figures=(storm.one.daemon_off storm.one.daemon_on storm.one.devx_off storm.one.asyncwatch
  storm.one.raw storm.sixteen.daemon_off storm.sixteen.daemon_on storm.sixteen.devx_off
  storm.sixteen.asyncwatch storm.sixteen.raw
  storm.slow.daemon_off latency.1 latency.100 latency.1000 fanout.1 fanout.100 fanout.1000
  floor.1 floor.1.parts floor.100 floor.1000 startup idle.off idle.on idle.links idle.no_udev
  health.on
  syscall)
# The instruction counts, each a result too (the targets table reads the 1-device storm's).
[ ${#instructions[@]} -eq 0 ] ||
  expect_figures+=(instructions.storm.one.journal_off instructions.storm.sixteen.journal_off
    instructions.rate1000 instructions.storm.one.journal_on)
for f in "${expect_figures[@]}"; do
  n=$(jq -s --arg f "$f" '[.[] | select(.figure == $f)] | length' "$results")
  [ "$n" = 1 ] || fail "figure $f: $n results, expected 1"
done
# Port health: off, on, off (the runs with it off are 1 and 2, around the one with it on).
n=$(jq -s '[.[] | select(.figure == "health.off")] | length' "$results")
[ "$n" = 2 ] || fail "figure health.off: $n results, expected 2"
n=$(jq -s 'length' "$results")
[ "$n" = $((${#expect_figures[@]} + 2)) ] || fail "$n results, expected $((${#expect_figures[@]} + 2))"
# The storm drove the health model: the run with it on made verdicts, those with it off none.
[ "$(jq -s '[.[] | select(.figure == "health.on") | .verdict_records][0] > 0' "$results")" = true ] ||
  fail "health.on: no port_health record"
[ "$(jq -s '[.[] | select(.figure == "health.off") | .verdict_records] | add' "$results")" = 0 ] ||
  fail "health.off: port_health records with health off"
incomplete=$(jq -r 'select(has("complete") and .complete != true) | .figure' "$results")
[ -z "$incomplete" ] || fail "incomplete measurements: $incomplete"
# The subscribers of the fan-out and latency runs are the smoke counts (1, 10, 20).
[ "$(jq -s -r '[.[] | select(.figure == "latency.1000") | .subscribers][0]' "$results")" = 20 ] ||
  fail "latency.1000 did not run with 20 subscribers"
# The DEVX storms went through the DEVX channels.
[ "$(jq -s -r '[.[] | select(.figure | endswith(".devx_off")) | .source] | unique | join(",")' "$results")" = devx ] ||
  fail "the DEVX storms did not run with --source devx"
# The bare writer with the daemon's parts wrote records as long as the daemon's.
[ "$(jq -s -r '[.[] | select(.figure == "floor.1.parts") | .steps][0]' "$results")" = libevent,query,record ] ||
  fail "floor.1.parts did not run with the daemon's parts"
[ "$(jq -s -r '[.[] | select(.figure == "floor.1.parts") | .record_bytes_sent][0]' "$results")" = \
  "$(jq -s -r '[.[] | select(.figure == "latency.1") | .bytes / .records | floor][0]' "$results")" ] ||
  fail "floor.1.parts: its records are not as long as the daemon's"
[ "$(jq -s -r '[.[] | select(.figure == "startup") | .devices][0]' "$results")" = 16 ] ||
  fail "start-up was not measured with 16 devices"

# Every section, and every target with a figure.
for section in "## Reproduce" "## This run" "## Targets" "## Storm throughput" \
  "### 1 device, 1 port" "### 16 devices × 2 ports" "## Latency" \
  "## Fan-out: the daemon's CPU time per event" "## The floor under fan-out" "## Idle cost" \
  "## Memory" "## Start-up" "## Slow queries" "## Port health"; do
  grep -qxF "$section" "$report" || fail "no section '$section'"
done
[ "$(grep -c '^| rdma-eventd → 1 subscriber, journal off, \*\*DEVX storm\*\* |' "$report")" = 2 ] ||
  fail "the storm tables lack the DEVX storm's row"
grep -qF "**The daemon's parts on the bare writer.**" "$report" ||
  fail "the floor section lacks the daemon's parts"
# The hand-written part, after the new report's last section.
! grep -qF "an old generated part" "$report" || fail "the old generated part was kept"
[ "$(grep -cxF "$marker" "$report")" = 1 ] || fail "the hand-written part's marker is not there once"
sed -n "/^<!-- Written by hand from here on: /,\$p" "$report" | cmp -s - "$tmp/hand.md" ||
  fail "the hand-written part was not kept as it was"
[ "$(grep -nxF "## Port health" "$report" | cut -d: -f1)" -lt "$(grep -nxF "$marker" "$report" | cut -d: -f1)" ] ||
  fail "the hand-written part is not after the generated sections"
for machine in "| CPU |" "| memory |" "| kernel |" "| Debian |" "| date |" "| command |" \
  "| system call |"; do
  grep -qF "$machine" "$report" || fail "no '$machine' in This run"
done
targets=$(sed -n '/^## Targets$/,/^## /p' "$report" | grep -c '^| [^-f|]' || true)
[ "$targets" = 21 ] || fail "$targets target rows, expected 21"
# None of the retired targets, and the machine-independent one with its count.
! sed -n '/^## Targets$/,/^## /p' "$report" | grep -qE '≥ 1\.0×|≤ 50 µs|≤ 3×' ||
  fail "the targets table prints a retired target"
if [ ${#instructions[@]} -gt 0 ]; then
  grep -qE '^\| instructions per event, 1-device storm, journal off .*\| [1-9][0-9,]* \| ' "$report" ||
    fail "the targets table has no instructions per event"
fi
! grep -qi "not measured" "$report" || fail "a figure was not measured"
# The memory target is read a while after the fan-out storm, once the daemon is quiet.
[ "$(jq -s -r '[.[] | select(.figure == "fanout.1000") | .rss_settled_kib][0] > 0' "$results")" = true ] ||
  fail "fanout.1000 has no settled RSS"
# Four counts, each of more than nothing, each with its callgrind data beside it.
if [ ${#instructions[@]} -gt 0 ]; then
  counts=$(grep -c '^# instructions of rdma-eventd in .* [1-9][0-9]* per event$' "$tmp/instructions.txt" || true)
  [ "$counts" = 4 ] || { cat "$tmp/instructions.txt" >&2; fail "--instructions: $counts counts, expected 4"; }
  files=$(ls "$tmp"/instructions.txt.*.callgrind | wc -l)
  [ "$files" = 4 ] || fail "--instructions: $files callgrind files, expected 4"
fi
# --only none runs what --profile and --instructions ask for and writes no report unless --out
# names one: the project's own docs/benchmarks.md, the default, is left as it is. Alone it
# measures nothing, and says so.
status=0
err=$("$here/bench/run.sh" --only none --no-build --build-dir "$build" 2>&1 >/dev/null) || status=$?
[ "$status" = 64 ] && [[ $err == *"--only none measures nothing by itself"* ]] ||
  fail "--only none alone: exit $status, '$err'; expected exit 64 and why"
status=0
err=$("$here/bench/run.sh" --runs 0 --no-build --build-dir "$build" 2>&1 >/dev/null) || status=$?
[ "$status" = 64 ] && [[ $err == *"--runs takes a count of 1 or more"* ]] ||
  fail "--runs 0: exit $status, '$err'; expected exit 64 and why"
if [ ${#instructions[@]} -gt 0 ]; then
  docs=$here/docs/benchmarks.md
  before=$(sha256sum "$docs")
  "$here/bench/run.sh" --only none --no-build --build-dir "$build" \
    --instructions "$tmp/none.txt" --instructions-count 500 >"$tmp/none.log" 2>&1 ||
    { cat "$tmp/none.log" >&2; fail "--only none --instructions failed"; }
  [ "$(sha256sum "$docs")" = "$before" ] || fail "--only none rewrote $docs"
  grep -q 'no report written' "$tmp/none.log" || fail "--only none did not say that it wrote no report"
  counts=$(grep -c '^# instructions of rdma-eventd in .* [1-9][0-9]* per event$' "$tmp/none.txt" || true)
  [ "$counts" = 4 ] || fail "--only none --instructions: $counts counts, expected 4"
fi
# --only reporters runs alone, writes no report, and measures each figure with its reporters
# where it says: none, on the report socket, on the events socket.
status=0
err=$("$here/bench/run.sh" --only reporters,idle --no-build --build-dir "$build" 2>&1 >/dev/null) ||
  status=$?
[ "$status" = 64 ] && [[ $err == *"--only reporters runs alone"* ]] ||
  fail "--only reporters,idle: exit $status, '$err'; expected exit 64 and why"
before=$(sha256sum "$here/docs/benchmarks.md")
# run_alone SECTION [OPTIONS...]: bench/run.sh --smoke --only SECTION, its results in
# $tmp/SECTION.jsonl and its output in $tmp/SECTION.log; it must succeed and write no report.
run_alone() {
  local section=$1
  shift
  "$here/bench/run.sh" --smoke --only "$section" "$@" --no-build --build-dir "$build" \
    --results "$tmp/$section.jsonl" >"$tmp/$section.log" 2>&1 ||
    { cat "$tmp/$section.log" >&2; fail "--only $section failed"; }
  [ "$(sha256sum "$here/docs/benchmarks.md")" = "$before" ] || fail "--only $section wrote a report"
}
# measured SECTION EXPR EXPECTED: what --only SECTION measured, each result made into one line
# by EXPR (jq), sorted and joined with commas, is EXPECTED.
measured() {
  local got
  got=$(jq -s -r "map($2) | sort | join(\",\")" "$tmp/$1.jsonl")
  [ "$got" = "$3" ] || fail "--only $1 measured: $got"
}
# summarized SECTION PATTERN: --only SECTION printed its summary, a line that PATTERN (grep)
# matches.
summarized() { grep -q "$2" "$tmp/$1.log" || fail "--only $1 printed no summary"; }
run_alone reporters --reporters 5
measured reporters '"\(.figure) \(.reporters.count) \(.reporters.counted_as) \(.complete)"' \
  "reporters.events 5 events true,reporters.none 0 none true,reporters.report 5 report true,reporters_storm.events 5 events true,reporters_storm.none 0 none true,reporters_storm.report 5 report true"
summarized reporters '^reporters.report: 1 runs, 5 reporters counted as report; CPU per event '
# --only counters: the daemon reading its counters every second, then with link health off,
# each followed by the 1 s poller; a summary on stderr, no report.
run_alone counters --counter-seconds 2
measured counters '"\(.figure) \(.ports) \(.samples > 0) \(.poller_reads > 0)"' \
  "counters.1s 32 true true,counters.off 0 false false"
summarized counters '^counters.1s: 1 runs of 2 s, 32 ports; samples '
# --only devlink: the reports reached the subscriber as devlink_health records, one each, and
# so did the port_err events beside them; no report.
run_alone devlink
measured devlink 'select(.kind == "latency") | "\(.figure) \(.inject) \(.records) \(.samples) \(.complete)"' \
  "devlink.port_err port_err 200 200 true,devlink.report devlink 200 200 true"
# ... and an idle daemon following devlink, measured (its switches are reported, not checked).
got=$(jq -s -r 'map(select(.kind == "idle") | "\(.figure) \(.devlink_available)") | join(",")' \
  "$tmp/devlink.jsonl")
[ "$got" = "devlink.idle true" ] || fail "--only devlink's idle daemon: $got"
summarized devlink '^devlink.report: 1 runs of 200 devlink at 1000/s; p50 '
echo "bench_smoke: the harness ran every measurement; the report has every section"
