#!/usr/bin/env bash
# The newcomer's entry point on a fresh Debian 12 machine (run as root, or through sudo):
#   scripts/bootstrap.sh demo   install what is needed, build, run the main job
#   scripts/bootstrap.sh test   install what is needed, build, run every test
# Each step is idempotent: a second run skips what is already installed or built.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

usage() {
  cat <<'USAGE'
Usage: scripts/bootstrap.sh COMMAND

Commands:
  deps            install the Debian 12 packages the build and the tests need (apt-get)
  build           deps, then configure and build into ./build (warnings as errors)
  demo            build, then run the main job: the daemon on the simulated fabric
                  (or on the real RDMA devices when this host has them)
  test            build, then run every test with ctest
  test-sanitize   deps, then build into ./build-sanitize with ASan+UBSan and run every test
                  (LeakSanitizer included: a daemon that leaks fails the test that stopped it)
  test-tsan       deps, then build into ./build-tsan with ThreadSanitizer and run the tests
                  that run the daemon's threads (unit, integration, subscribers, faults)
  fuzz            build the libFuzzer targets with clang into ./build-fuzz and run each for
                  FUZZ_SECONDS (default 60): scripts/fuzz.sh, docs/fuzzing.md
  help            this text

Environment:
  JOBS            parallel build jobs (default: number of CPUs)
  FUZZ_SECONDS    seconds per fuzz target (default 60; more in scripts/fuzz.sh)
USAGE
}

need_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "bootstrap.sh: '$1' needs root (apt-get, private mount namespaces for journald): run it with sudo" >&2
    exit 1
  fi
}

# The packages, one list for every command: the build's libraries, rdma-core's own utilities that
# the tests run against the simulator, journald/systemd tools and the small helpers the tests use.
# systemd-container, debootstrap and its keyring boot systemd as PID 1 in a container for the
# service's tests (tests/system); udev checks the udev rule.
PACKAGES=(
  cmake g++ make pkg-config git
  libibverbs-dev ibverbs-utils libevent-dev libspdlog-dev libsystemd-dev libudev-dev
  nlohmann-json3-dev libgtest-dev libgmock-dev
  systemd udev util-linux iproute2 procps socat jq
  systemd-container debootstrap debian-archive-keyring
)

deps() {
  need_root deps
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "bootstrap: all packages present"
    return
  fi
  echo "bootstrap: installing ${missing[*]}"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

configure_and_build() {
  local dir=$1; shift
  cmake -S . -B "$dir" -DRDMA_EVENTD_WERROR=ON "$@"
  cmake --build "$dir" -j "${JOBS:-$(nproc)}"
}

build() {
  deps
  configure_and_build build
}

run_tests() {
  local dir=$1; shift
  # Tests start journald, the simulator and the daemon themselves; they need root for private
  # mount namespaces. --output-on-failure shows the failing test's whole log.
  ctest --test-dir "$dir" --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 900 "$@"
}

case "${1:-help}" in
  deps) deps ;;
  build) build ;;
  demo) build; exec scripts/demo.sh build ;;
  test) build; run_tests build ;;
  test-sanitize)
    deps
    configure_and_build build-sanitize -DRDMA_EVENTD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
    run_tests build-sanitize
    ;;
  test-tsan)
    deps
    configure_and_build build-tsan -DRDMA_EVENTD_TSAN=ON -DCMAKE_BUILD_TYPE=Debug
    # The daemon's second thread is the journal writer: every test that runs the daemon with a
    # journal exercises it, the faults tests (journald stopped and frozen) most. The million-event
    # storm and the system tests add nothing for threads and would take long under TSan.
    run_tests build-tsan -L 'unit|integration|subscribers|long' -E 'Storm'
    ;;
  fuzz) shift; exec scripts/fuzz.sh "$@" ;;
  help | -h | --help) usage ;;
  *) usage >&2; exit 2 ;;
esac
