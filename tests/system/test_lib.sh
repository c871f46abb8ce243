# shellcheck shell=bash
# What every system test shell script shares: steps, failing with the test's diagnostics,
# bounded waits, stopping a process it started, and checking for root and tools. Sourced, after
# `set -euo pipefail`; container_lib.sh sources it for the tests that boot a container.

# build_under_test: sets bin (the build's programs), eventctl and topology (the simulator's two
# adapters), from ctest's BUILD_DIR and SOURCE_DIR: what the tests that run the build start.
# shellcheck disable=SC2034  # the tests use them
build_under_test() {
  bin=$BUILD_DIR/bin
  eventctl=$bin/rdma-eventctl
  topology=$SOURCE_DIR/sim/topologies/two-adapters.json
}

# step TEXT: the test's next step, with the seconds since the test started, so that its log
# (ctest's LastTest.log keeps every test's) shows where the time goes (docs/testing.md).
step() { echo "== [${SECONDS} s] $*"; }

# fail MESSAGE: says what failed, shows the test's diagnostics() if it has one and
# can_diagnose() says they can be had (container_lib.sh: while the container runs), and exits 1.
fail() {
  echo "FAIL: $*" >&2
  if declare -F diagnostics >/dev/null && can_diagnose; then diagnostics >&2 || true; fi
  exit 1
}
can_diagnose() { true; }

# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds, or fail naming WHAT.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "no $what after ${seconds}s"
    sleep 0.1
  done
}

# stop_pid PID: SIGTERM to a process the test started, SIGKILL if it is still there after 20 s.
# An empty or finished PID is nothing to do.
stop_pid() {
  local pid=$1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  timeout 20 tail --pid="$pid" -f /dev/null || kill -KILL "$pid" 2>/dev/null || true
}

# require_root_and_tools TEST WHY TOOL...: exits 1, naming TEST, unless this runs as root and
# every TOOL is there (a path: executable; a name: on PATH). WHY says what root is for.
require_root_and_tools() {
  local test=$1 why=$2 tool
  shift 2
  [ "$(id -u)" = 0 ] || { echo "$test: needs root ($why)" >&2; exit 1; }
  for tool in "$@"; do
    if [[ $tool == */* ]]; then [ -x "$tool" ]; else command -v "$tool" >/dev/null; fi ||
      { echo "$test: $tool missing: scripts/bootstrap.sh deps" >&2; exit 1; }
  done
}
