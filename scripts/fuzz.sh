#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, docs/fuzzing.md) with clang into ./build-fuzz, then
# runs each for FUZZ_SECONDS from a scratch copy of its committed corpus. Exits non-zero when a
# target crashes, leaks, hangs, trips a sanitizer or breaks one of its invariants, and prints the
# input that did it.
#
#   scripts/fuzz.sh                  every target, FUZZ_SECONDS each
#   scripts/fuzz.sh fuzz_record      only the targets named
#   scripts/fuzz.sh --deps-only      install what the build needs, and stop
#   scripts/fuzz.sh --build-only     install and build, and stop (.ci/run builds ahead so)
#
# Environment:
#   FUZZ_SECONDS    seconds per target (default 40, so eight targets took about what six took
#                   at 50; ten take 80 s more of CPU); 0 runs each corpus once, as a
#                   regression test
#   FUZZ_SEED       libFuzzer's -seed (default 1): with the same build and corpus a target
#                   tries the same inputs in the same order, so a failure in CI is one that
#                   the same command finds here, and the CI of a change that breaks nothing
#                   does not turn red because a new random walk found an old bug. "random":
#                   a new walk each run, for campaigns (FUZZ_SECONDS=600 FUZZ_SEED=random)
#                   that look further; what they find becomes a corpus entry and a fix
#   FUZZ_PARALLEL   targets run at the same time (default: the number of CPUs, at most 4)
#   FUZZ_ARGS       more libFuzzer options, e.g. "-jobs=8 -workers=8" or "-max_len=65536"
#   FUZZ_BUILD      build directory (default build-fuzz); its fuzz-run/ holds each run's corpus,
#                   artifacts and log
#   JOBS            parallel build jobs (default: number of CPUs)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

TARGETS=(fuzz_request fuzz_config fuzz_record fuzz_topology fuzz_report fuzz_devx fuzz_netlink
  fuzz_slurm_reason fuzz_slurm_config fuzz_incidents)
seconds=${FUZZ_SECONDS:-40}
seed=${FUZZ_SEED:-1}
if [ "$seed" = random ]; then
  seed_arg=()
elif [[ $seed =~ ^[1-9][0-9]{0,8}$ ]]; then
  seed_arg=(-seed="$seed")
else
  echo "fuzz: FUZZ_SEED is a number from 1 or \"random\", not '$seed'" >&2
  exit 2
fi
build=$(realpath -m "${FUZZ_BUILD:-build-fuzz}")
cpus=$(nproc)
parallel=${FUZZ_PARALLEL:-$((cpus < 4 ? cpus : 4))}

only_step=
case ${1:-} in
  --deps-only | --build-only) only_step=${1#--}; shift ;;
esac
if [ $# -gt 0 ]; then
  for t in "$@"; do
    [[ " ${TARGETS[*]} " == *" $t "* ]] || { echo "fuzz: unknown target '$t' (${TARGETS[*]})" >&2; exit 2; }
  done
  TARGETS=("$@")
fi

# Only what the fuzz build needs: clang 14 with its libFuzzer and sanitizer runtimes
# (libclang-rt-14-dev, only recommended by clang-14), llvm-symbolizer for readable reports
# (llvm-14), and the headers of the code under test.
PACKAGES=(cmake make pkg-config clang-14 libclang-rt-14-dev llvm-14 libibverbs-dev
  nlohmann-json3-dev)

deps() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  if [ "$(id -u)" != 0 ]; then
    echo "fuzz: missing packages: ${missing[*]} (apt-get install them, or run this as root)" >&2
    exit 1
  fi
  # As every command of bootstrap.sh installs: no service of theirs started or enabled.
  "$here/scripts/bootstrap.sh" install "${missing[@]}"
}

build_targets() {
  local start=$SECONDS
  # One build of the directory at a time: .ci/run builds it ahead in the background, and a run
  # then waits here for that build to end.
  mkdir -p "$build"
  local lock
  exec {lock}>"$build/.build-lock"
  flock "$lock"
  # The compiler is chosen when the directory is first configured: naming it again, even as
  # another name of the same clang, would make CMake start over without the options.
  local compilers=()
  [ -f "$build/CMakeCache.txt" ] ||
    compilers=(-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14)
  # The pure libraries as unity sources, as every build of bootstrap.sh (CMakeLists.txt).
  cmake -S . -B "$build" "${compilers[@]}" -DRDMA_EVENTD_FUZZ=ON -DRDMA_EVENTD_WERROR=ON \
    -DRDMA_EVENTD_UNITY_PRODUCT=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
  # The fuzz build's "all" is the targets; naming them would build them one after another.
  local only=()
  [ ${#TARGETS[@]} -lt 5 ] && only=(--target "${TARGETS[@]}")
  cmake --build "$build" -j "${JOBS:-$cpus}" "${only[@]}"
  exec {lock}>&-
  echo "fuzz: $build configured and built in $((SECONDS - start)) s"
}

# Runs one target in $build/fuzz-run/TARGET: a copy of the corpus (libFuzzer adds what it finds
# there, never to the committed corpus), the artifacts (crash-*, leak-*, timeout-*, oom-*) and
# the log.
run_target() {
  local t=$1 rc
  local dir=$build/fuzz-run/$t
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp -R "tests/fuzz/corpus/$t/." "$dir/corpus/"
  local start=$SECONDS
  local limit=(-max_total_time="$seconds")
  [ "$seconds" = 0 ] && limit=(-runs=0)
  # A UBSan report is fatal (-fno-sanitize-recover=all at compile time); the options make sure
  # of it and give the stack. -timeout: an input that takes 25 s is a hang.
  # It runs in its own directory, where -jobs puts its workers' fuzz-N.log files.
  # shellcheck disable=SC2086  # FUZZ_ARGS is a list of options
  (cd "$dir" && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    "$build/bin/$t" "${limit[@]}" "${seed_arg[@]}" -detect_leaks=1 -timeout=25 -rss_limit_mb=2048 \
    -dict="$here/tests/fuzz/$t.dict" -artifact_prefix=artifacts/ -print_final_stats=1 \
    ${FUZZ_ARGS:-} corpus >log 2>&1) || rc=$?
  echo $((SECONDS - start)) >"$dir/seconds"
  return "${rc:-0}"
}

# One line per target from its log; returns non-zero when the target failed.
report() {
  local t=$1 rc=$2
  local dir=$build/fuzz-run/$t log=$build/fuzz-run/$t/log
  local runs cov ft elapsed
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  elapsed=$(cat "$dir/seconds" 2>/dev/null || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  local result=passed
  # libFuzzer exits non-zero on a crash, leak, timeout or OOM; the log check also catches a
  # sanitizer report that did not end the run.
  if [ "$rc" != 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error:|invariant failed' "$log"; then
    result=FAILED
  fi
  local corpus
  corpus=$(find "$dir/corpus" -type f | wc -l)
  echo "$t: $result, ${runs:-?} runs in $elapsed s, cov ${cov:-?}, ft ${ft:-?}, corpus $corpus (exit $rc)"
  [ "$result" = passed ] && return 0
  sed -n "s|.*Test unit written to \(.*\)|  reproducer: $dir/\1|p" "$log"
  echo "  replay: $build/bin/$t REPRODUCER   (log: $log)"
  grep -E 'invariant failed|ERROR: |runtime error:|SUMMARY:' "$log" | head -n 5 | sed 's/^/  /'
  # The input itself, so that a failure seen only in a CI log can be replayed anywhere
  # (od -An -tx1 | xxd -r -p turns it back into the file).
  local unit
  for unit in $(sed -n 's|.*Test unit written to \(.*\)|\1|p' "$log"); do
    [ -f "$dir/$unit" ] || continue
    echo "  the input, $(stat -c %s "$dir/$unit") bytes (the first 2048 in hex):"
    head -c 2048 "$dir/$unit" | od -An -tx1 -v | sed 's/^/   /'
  done
  return 1
}

deps
[ "$only_step" = deps-only ] && exit 0
build_targets
[ "$only_step" = build-only ] && exit 0

echo "fuzz: ${TARGETS[*]}: $seconds s each, $parallel at a time, seed $seed"
declare -A pid_of rc_of
running=0
for t in "${TARGETS[@]}"; do
  if [ "$running" -ge "$parallel" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_target "$t" &
  pid_of[$t]=$!
  running=$((running + 1))
done
for t in "${TARGETS[@]}"; do
  rc=0
  wait "${pid_of[$t]}" || rc=$?
  rc_of[$t]=$rc
done

passed=0 failed=0
for t in "${TARGETS[@]}"; do
  if report "$t" "${rc_of[$t]}"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
