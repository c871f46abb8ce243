#!/usr/bin/env bash
# The newcomer's entry point on a fresh Debian 12 machine (run as root, or through sudo):
#   scripts/bootstrap.sh demo   install what is needed, build, run the main job
#   scripts/bootstrap.sh test   install what is needed, build, run every test
# Each step is idempotent: a second run skips what is already installed or built.
# `scripts/bootstrap.sh package` builds the Debian packages (docs/packaging.md).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

usage() {
  cat <<'USAGE'
Usage: scripts/bootstrap.sh COMMAND

Commands:
  deps            install the Debian 12 packages the build and the tests need (apt-get), and
                  fetch Linux 6.12 for kernel.monitor, unpacked, not installed
  build           deps, then configure and build into ./build (warnings as errors)
  demo            build, then run the main job: the daemon on the simulated fabric
                  (or on the real RDMA devices when this host has them)
  demo --kernel   build, then boot Debian's own kernel under QEMU with a Soft-RoCE device and
                  show the daemon's records for real link and address changes (~20 s)
  test            build, then run every test with ctest; meanwhile the Debian packages are
                  built in the background at idle priority (`package`) for their test, which
                  runs last, and the container tests' root file system is fetched
  package         deps, then build the Debian packages into ./build-deb (without the tests,
                  as dpkg-buildpackage from a copy of this tree) and check them with lintian;
                  skipped when the packages there were built from this very tree
  test-sanitize   deps, then build into ./build-sanitize with ASan+UBSan and run every test
                  (LeakSanitizer included: a daemon that leaks fails the test that stopped it)
  test-tsan       deps, then build into ./build-tsan with ThreadSanitizer and run the tests
                  that run the daemon's threads (unit, integration, subscribers, faults)
  fuzz            build the libFuzzer targets with clang into ./build-fuzz and run each for
                  FUZZ_SECONDS (default 40): scripts/fuzz.sh, docs/fuzzing.md
  help            this text

Environment:
  JOBS            parallel build jobs (default: number of CPUs)
  FUZZ_SECONDS    seconds per fuzz target (default 40; more in scripts/fuzz.sh)
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
# service's tests (tests/system); udev checks the udev rule. scdoc builds the manual pages and
# man-db checks them; debhelper, dpkg-dev, fakeroot and lintian build and check the Debian
# packages, which the tests install (debian/control's Build-Depends are the build's libraries
# above, and scdoc). systemd-journal-remote: the central journal's test (journal-upload on
# each simulated host, one journal-remote receiving). prometheus (with promtool),
# prometheus-node-exporter and curl: the metrics' alert test (its own processes, on a network
# namespace's loopback) and the alert rules' checks. valgrind: the benchmark harness's
# instruction counts (bench/run.sh --instructions), which its smoke test runs.
# qemu-system-x86, linux-image-amd64, busybox-static and kmod: the kernel tests (tests/kernel,
# label kernel) and `demo --kernel` boot Debian's own kernel under QEMU with Soft-RoCE; the
# kernel's postinst also builds an initrd, which they do not use. The kernel's headers and
# source follow (kernel_packages, below).
PACKAGES=(
  cmake g++ make pkg-config git
  libibverbs-dev ibverbs-utils libevent-dev libspdlog-dev libsystemd-dev libudev-dev
  nlohmann-json3-dev libgtest-dev libgmock-dev
  systemd udev util-linux iproute2 procps socat jq
  systemd-container debootstrap debian-archive-keyring
  scdoc man-db
  debhelper dpkg-dev fakeroot lintian
  systemd-journal-remote
  prometheus prometheus-node-exporter curl
  # jsonnet: the Grafana dashboard's source, generated and checked (config/grafana/generate.sh)
  jsonnet
  valgrind
  abigail-tools
  # chromium: history --html's page loaded headless (tests/integration/incidents_test.cc)
  chromium
  qemu-system-x86 linux-image-amd64 busybox-static kmod
  slurmctld slurmd slurm-client munge  # rdma-eventd-slurm against the real Slurm (system.slurm)
)

deps() {
  need_root deps
  install_missing "${PACKAGES[@]}"
  # linux-image-amd64 is there now: its kernel's headers and source (kernel_packages).
  local kernel
  read -ra kernel < <(kernel_packages)
  install_missing "${kernel[@]}"
  kernel_6_12
}

# install_missing PACKAGE...: apt-get installs those not installed yet.
install_missing() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "bootstrap: all packages present"
    return
  fi
  echo "bootstrap: installing ${missing[*]}"
  local start=$SECONDS
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  echo "bootstrap: the packages installed in $((SECONDS - start)) s"
}

# The kernel tests' devlink scenario builds netdevsim for the kernel that the guest boots
# (tests/kernel/netdevsim_build.sh): that kernel's headers and the source of its series, e.g.
# linux-headers-6.1.0-56-amd64 and linux-source-6.1. The kernel is the one tests/kernel/run.sh
# boots, the newest /lib/modules/*-amd64 (linux-image-amd64's). linux-source-6.1 may be a Debian
# revision ahead of the image (6.1.192-3 beside 6.1.192-2): netdevsim's source is the same in
# both, and the module is built against the headers, which match the image.
kernel_packages() {
  local kver
  kver=$(ls /lib/modules 2>/dev/null | grep -- '-amd64$' | sort -V | tail -1 || true)
  [ -n "$kver" ] && echo "linux-headers-$kver linux-source-$(echo "$kver" | cut -d. -f1-2)"
}

# kernel.monitor boots Linux 6.12, the first kernel with the RDMA netlink monitor: the newest
# linux-image-6.12.*+deb12-amd64 of bookworm-security, downloaded (apt-get download, ~107 MB)
# and unpacked (dpkg-deb -x, depmod -b) into KERNEL_CACHE/PACKAGE, never installed: the host
# keeps its kernel. A second run finds it there; a newer one replaces it.
KERNEL_CACHE=${RDMA_EVENTD_KERNEL_CACHE:-/var/cache/rdma-eventd/kernels}
newest_6_12() {
  apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' | cut -d' ' -f1 |
    sort -V | tail -n 1
}
kernel_6_12() {
  local pkg start=$SECONDS
  pkg=$(newest_6_12)
  [ -n "$pkg" ] || { apt-get update && pkg=$(newest_6_12); }
  if [ -z "$pkg" ]; then
    echo "bootstrap: no linux-image-6.12.*+deb12-amd64 in the package lists (bookworm-security)" >&2
    return 1
  fi
  local dir=$KERNEL_CACHE/$pkg kver=${pkg#linux-image-}
  if [ -r "$dir/lib/modules/$kver/modules.dep" ]; then
    echo "bootstrap: $pkg is unpacked in $dir"
    return
  fi
  rm -rf "$KERNEL_CACHE"/linux-image-6.12.* "$KERNEL_CACHE"/*.deb
  mkdir -p "$dir.partial"
  # As root, apt's download sandbox user could not write here: it is not used.
  (cd "$KERNEL_CACHE" && apt-get download -o APT::Sandbox::User=root "$pkg")
  dpkg-deb -x "$KERNEL_CACHE/${pkg}_"*.deb "$dir.partial"
  depmod -b "$dir.partial" "$kver"
  rm -f "$KERNEL_CACHE/${pkg}_"*.deb
  mv "$dir.partial" "$dir"
  echo "bootstrap: $pkg downloaded and unpacked into $dir in $((SECONDS - start)) s"
}

configure_and_build() {
  local dir=$1 start=$SECONDS; shift
  cmake -S . -B "$dir" -DRDMA_EVENTD_WERROR=ON "$@"
  cmake --build "$dir" -j "${JOBS:-$(nproc)}"
  echo "bootstrap: $dir configured and built in $((SECONDS - start)) s"
}

# The build the demo and the tests run: optimised as released (RelWithDebInfo's -O2), with line
# tables (-g1) rather than full debug information. Backtraces, sanitizers, perf and valgrind
# name the file, line and function from them; full -g only adds what a debugger shows of
# variables, and makes this build, the first thing CI does, a fifth slower. For a debugger,
# build by hand (README.md, "Building by hand"). The test programs are compiled as unity
# sources (RDMA_EVENTD_UNITY_TESTS, tests/CMakeLists.txt): GoogleTest's and nlohmann-json's
# templates are then compiled once per few files rather than in every one, which takes their
# compile time from 478 to 218 CPU seconds (docs/testing.md). The ThreadSanitizer build
# compiles them one by one (test-tsan, below).
build() {
  deps
  configure_and_build build -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DRDMA_EVENTD_UNITY_TESTS=ON
}

run_tests() {
  local dir=$1 start=$SECONDS rc=0; shift
  # Tests start journald, the simulator and the daemon themselves; they need root for private
  # mount namespaces. --output-on-failure shows the failing test's whole log.
  ctest --test-dir "$dir" --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 900 "$@" |
    tee "$dir/ctest.log" || rc=$?
  # The time, and the slowest tests, so that a slowdown shows in every log (docs/testing.md).
  echo "bootstrap: $dir tested in $((SECONDS - start)) s; its slowest tests (seconds):"
  slowest_tests "$dir/ctest.log" 15
  return "$rc"
}

# slowest_tests LOG N: the N longest tests of a ctest output, "seconds name", longest first.
# (awk reads all of sort's output: head would leave sort to die of SIGPIPE, failing the stage.)
slowest_tests() {
  sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) .* ([0-9]+\.[0-9]+) sec$/\2 \1/p' "$1" |
    sort -rn | awk -v n="$2" 'NR <= n { printf "  %8.1f  %s\n", $1, $2 }'
}

# The files of this tree that a package is built from: tracked, or new and not ignored (the
# build directories are ignored). Outside a git checkout, every file but the build directories.
source_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard
  else
    find . \( -path './build*' -o -path ./.git \) -prune -o -type f -printf '%P\0'
  fi
}

# One digest of those files' names and contents: the packages in build-deb/ are up to date when
# they were built from a tree with the same digest.
source_digest() {
  source_files | sort -z | xargs -0 sha256sum -- | sha256sum | cut -d' ' -f1
}

# Builds the packages from a copy of the tree (so that the build's own files stay out of it)
# with dpkg-buildpackage, without the tests (nocheck; debian/rules leaves them out of the
# build), checks them with lintian (no error and no warning passes; overrides are in debian/
# with their reasons), and leaves the .debs, .buildinfo and .changes in build-deb/.
package() {
  local out=$here/build-deb digest
  mkdir -p "$out"
  exec {lock}>"$out/.lock"
  flock -w 1800 "$lock" || { echo "bootstrap: $out/.lock is held by another build" >&2; exit 1; }
  digest=$(source_digest)
  if [ "$(cat "$out/source.sha256" 2>/dev/null)" = "$digest" ] &&
    ls "$out"/*.changes >/dev/null 2>&1; then
    echo "bootstrap: the packages in $out are up to date"
    return
  fi
  dpkg-checkbuilddeps || { echo "bootstrap: scripts/bootstrap.sh deps installs them" >&2; exit 1; }
  rm -rf "$out/src" "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes "$out"/*.dsc "$out"/*.tar.* \
    "$out/source.sha256"
  mkdir -p "$out/src/rdma-eventd"
  source_files | tar -c --null -T - -f - | tar -x -C "$out/src/rdma-eventd" -f -
  echo "bootstrap: building the packages in $out/src (dpkg-buildpackage, a few minutes)"
  # A compiler cache, when there is one, makes a rebuild of an unchanged file cheap. It is named
  # explicitly: debhelper gives the build a HOME of its own, where ccache would start empty.
  if command -v ccache >/dev/null; then
    export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER:-ccache}
    export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
    CCACHE_DIR=${CCACHE_DIR:-$(ccache --get-config cache_dir)}
    export CCACHE_DIR
  fi
  (cd "$out/src/rdma-eventd" &&
    DEB_BUILD_OPTIONS="nocheck terse parallel=${JOBS:-$(nproc)}" dpkg-buildpackage -us -uc)
  mv "$out"/src/*.deb "$out"/src/*.buildinfo "$out"/src/*.changes "$out"/src/*.dsc \
    "$out"/src/*.tar.* "$out/"
  rm -rf "$out/src"
  echo "bootstrap: lintian"
  lintian --fail-on error,warning "$out"/*.changes
  echo "$digest" >"$out/source.sha256"
  echo "bootstrap: the packages are in $out:"
  (cd "$out" && ls -1 ./*.deb)
}

# What the tests need that takes minutes on a fresh machine, started in the background before
# the build so that it is ready, or nearly, when the tests want it:
# - the Debian packages, at the lowest CPU and I/O priority: they take minutes of both cores,
#   and most of that then fits in what the tests leave idle (tests that wait on a daemon, a
#   journal, a guest), while a test that needs the CPU gets it first. system.package, which
#   runs last and alone (COST -1, RUN_SERIAL), waits for this build (the lock in package()),
#   finds the packages up to date and tests them; a background build that failed leaves them
#   out of date, and that test builds them again in the foreground, where its errors show.
# - the container tests' root file system (tests/system/container_root.sh: debootstrap, cached
#   for the day), at normal priority: mostly a download and unpacking, and the first container
#   test would otherwise hold a test slot while it waits for it.
# Their output: build-deb/background.log and build/container-root.log. Whatever ends this
# script ends them too (each has its own process group).
background_pids=()
start_background() { # LOG NICENESS COMMAND...
  local log=$1 niceness=$2
  shift 2
  mkdir -p "$(dirname "$log")"
  # A new session is a scheduling group of its own where the kernel groups tasks by session
  # (sched_autogroup): a process's niceness then only ranks it within its group, and the group
  # would get as much CPU as the build's. So the new session sets its group's niceness too.
  setsid bash -c 'echo "$1" >/proc/self/autogroup 2>/dev/null; shift; exec "$@"' _ "$niceness" \
    nice -n "$niceness" ionice -c "$([ "$niceness" = 19 ] && echo 3 || echo 2)" "$@" \
    >"$log" 2>&1 </dev/null &
  background_pids+=("$!")
}
stop_background() {
  local pid
  for pid in "${background_pids[@]}"; do
    kill -0 "$pid" 2>/dev/null && kill -TERM -- "-$pid" 2>/dev/null || true
  done
}
prepare_in_background() {
  echo "bootstrap: building the Debian packages at idle priority (build-deb/background.log) and" \
    "preparing the container's root file system (build/container-root.log) in the background"
  trap stop_background EXIT
  start_background "$here/build-deb/background.log" 19 "$here/scripts/bootstrap.sh" package
  start_background "$here/build/container-root.log" 0 "$here/tests/system/container_root.sh"
}

# The sanitizer builds exist to run the tests: unoptimised, with the line tables a sanitizer's
# report needs (-g1: file, line and function; full -g only adds the variables a debugger shows,
# at a tenth more compile time). The ASan+UBSan build compiles the test programs as unity
# sources, as the plain build does (under ASan+UBSan a test source alone compiles slower than
# at -O2). The ThreadSanitizer build compiles each test source of its suites on its own, so that
# one build still proves that every one compiles with exactly the includes it names.
checking_build=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1)

case "${1:-help}" in
  deps) deps ;;
  build) build ;;
  demo)
    build
    [ "${2:-}" = --kernel ] && exec scripts/demo_kernel.sh build
    exec scripts/demo.sh build
    ;;
  test)
    need_root test
    start=$SECONDS
    deps
    prepare_in_background
    build
    rc=0
    run_tests build || rc=$?
    echo "bootstrap: test took $((SECONDS - start)) s in all (packages, build, tests)"
    exit "$rc"
    ;;
  package) need_root package; deps; package ;;
  test-sanitize)
    deps
    configure_and_build build-sanitize -DRDMA_EVENTD_SANITIZE=ON "${checking_build[@]}" \
      -DRDMA_EVENTD_UNITY_TESTS=ON
    # Not the packages' test: they are built without sanitizers, and `test` tests them. Not the
    # kernel tests: the guest runs under software emulation, where a sanitized daemon is several
    # times slower, and what they check of the daemon's own code the simulator's tests check
    # here (docs/kernel-tests.md).
    run_tests build-sanitize -E '^system\.package$' -LE '^kernel$'
    ;;
  test-tsan)
    deps
    # Only the suites it runs (below): without the simulator's fidelity suite, the system tests
    # and the benchmark harness, whose tests are not among these.
    configure_and_build build-tsan -DRDMA_EVENTD_TSAN=ON -DRDMA_EVENTD_BENCH=OFF \
      -DRDMA_EVENTD_TEST_SUITES="harness;unit;integration;subscribers" "${checking_build[@]}" \
      -DRDMA_EVENTD_UNITY_TESTS=OFF
    # The daemon's second thread is the journal writer: every test that runs the daemon with a
    # journal exercises it, the faults tests (journald stopped and frozen) most. The million-event
    # storm and the system tests add nothing for threads and would take long under TSan.
    run_tests build-tsan -L 'unit|integration|subscribers|long' -E 'Storm'
    ;;
  fuzz) shift; exec scripts/fuzz.sh "$@" ;;
  help | -h | --help) usage ;;
  *) usage >&2; exit 2 ;;
esac
