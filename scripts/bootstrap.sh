#!/usr/bin/env bash
# The newcomer's entry point on a fresh Debian 12 machine (run as root, or through sudo):
#   scripts/bootstrap.sh demo   install what the demo runs, build it, run the main job
#   scripts/bootstrap.sh test   install the test bench, build everything, run every test
# Each step is idempotent: a second run skips what is already installed or built.
# `scripts/bootstrap.sh package` builds the Debian packages (docs/packaging.md).
# Packages are installed without starting or enabling their services (install_packages).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

usage() {
  cat <<'USAGE'
Usage: scripts/bootstrap.sh COMMAND

Commands:
  demo            install what the demo runs (the build's compilers and libraries, ibverbs-utils,
                  socat, jq: README.md says how much), build the daemon, rdma-eventctl and the
                  simulator into ./build (not the tests), then run the main job: the daemon on
                  the simulated fabric (or on the real RDMA devices when this host has them);
                  `demo --once` stops after the scripted events instead of running on;
                  `demo --topology eight-rail` simulates an 8-rail GPU host (sim/topologies/)
  demo --kernel   the same, plus QEMU and Debian's kernel image; boots that kernel under QEMU
                  with a Soft-RoCE device and shows the daemon's records for real link and
                  address changes (~20 s)
  deps            install the whole test bench: the demo's packages, the kernel's, and what the
                  tests run (Slurm, Prometheus, Chromium, lintian, ...), the guest kernel's
                  headers and source, and fetch Linux 6.12 for kernel.monitor (unpacked, not
                  installed)
  build           deps, then configure and build everything into ./build (warnings as errors)
  test            build, then run every test with ctest; meanwhile the Debian packages are
                  built in the background at idle priority (`package`) for their test, which
                  runs last, and the container tests' root file system is fetched
  package         deps, then build the Debian packages into ./build-deb (without the tests,
                  as dpkg-buildpackage from a copy of this tree, with line tables -g1 rather
                  than full -g in the -dbgsym packages) and check them with lintian;
                  skipped when the packages there were built from this very tree
  test-sanitize   deps, then build into ./build-sanitize with ASan+UBSan and run every test
                  (LeakSanitizer included: a daemon that leaks fails the test that stopped it)
  test-tsan       deps, then build into ./build-tsan with ThreadSanitizer and run the tests
                  that run the daemon's threads (unit, integration, subscribers, faults)
  build-sanitize, build-tsan
                  only the build of test-sanitize or test-tsan (.ci/run builds them ahead)
  fuzz            build the libFuzzer targets with clang into ./build-fuzz and run each for
                  FUZZ_SECONDS (default 40): scripts/fuzz.sh, docs/fuzzing.md
  packages SET    print the Debian packages of SET, one a line: demo, kernel (what
                  `demo --kernel` adds), bench (what `test` adds to both) or test (all three)
  install PKG...  install Debian packages the way every command does: only those missing, and
                  none of their services started or enabled (the system.test_bench test runs it)
  help            this text

No command starts, enables or leaves running a service of a package it installs; a service
that was there before is left as it was.

Environment:
  JOBS            parallel build jobs (default: number of CPUs)
  TEST_JOBS       tests run at once (default: twice the number of CPUs; most tests wait on
                  a daemon, a journal or a guest for much of their time)
  FUZZ_SECONDS    seconds per fuzz target (default 40; more in scripts/fuzz.sh)
USAGE
}

need_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "bootstrap.sh: '$1' needs root (apt-get, private mount namespaces for journald): run it with sudo" >&2
    exit 1
  fi
}

# The packages, in three sets: each command installs only the sets it runs.
# DEMO_PACKAGES: the build's compilers and libraries, and what the simulated demo itself runs:
# rdma-core's ibv_devices, systemd-journald and journalctl (systemd), unshare and mount
# (util-linux), socat and jq.
DEMO_PACKAGES=(
  cmake g++ make pkg-config
  libibverbs-dev ibverbs-utils libevent-dev libspdlog-dev libsystemd-dev libudev-dev
  nlohmann-json3-dev
  systemd util-linux procps socat jq
)
# KERNEL_PACKAGES: `demo --kernel` and the kernel tests (tests/kernel, label kernel) boot
# Debian's own kernel under QEMU with Soft-RoCE, udevd and the rdma and ip tools in the guest;
# the kernel's postinst also builds an initrd, which they do not use. (The kernel tests also
# build netdevsim against the kernel's headers and source: kernel_packages, below, in `deps`.)
KERNEL_PACKAGES=(qemu-system-x86 linux-image-amd64 busybox-static kmod iproute2 udev)
# TEST_PACKAGES: the test bench. GoogleTest; git (a package is built from the tracked files);
# systemd-container, debootstrap and its keyring boot systemd as PID 1 in a container for the
# service's tests (tests/system); udev checks the udev rule. scdoc builds the manual pages and
# man-db checks them; debhelper, dpkg-dev, fakeroot and lintian build and check the Debian
# packages, which the tests install (debian/control's Build-Depends are the build's libraries
# above, and scdoc; dpkg-buildpackage also wants build-essential, which a bare root lacks). systemd-journal-remote: the central journal's test (journal-upload on
# each simulated host, one journal-remote receiving). prometheus (with promtool),
# prometheus-node-exporter and curl: the metrics' alert test (its own processes, on a network
# namespace's loopback) and the alert rules' checks. valgrind: the benchmark harness's
# instruction counts (bench/run.sh --instructions), which its smoke test runs.
TEST_PACKAGES=(
  git libgtest-dev libgmock-dev
  systemd-container debootstrap debian-archive-keyring
  scdoc man-db
  build-essential debhelper dpkg-dev fakeroot lintian
  systemd-journal-remote
  prometheus prometheus-node-exporter curl
  # jsonnet: the Grafana dashboard's source, generated and checked (config/grafana/generate.sh)
  jsonnet
  valgrind
  abigail-tools
  # chromium: history --html's page loaded headless (tests/integration/incidents_test.cc)
  chromium
  slurmctld slurmd slurm-client munge  # rdma-eventd-slurm against the real Slurm (system.slurm)
)

packages_of() { # SET: the packages of demo, kernel, bench or test (test: all three)
  case $1 in
    demo) printf '%s\n' "${DEMO_PACKAGES[@]}" ;;
    kernel) printf '%s\n' "${KERNEL_PACKAGES[@]}" ;;
    bench) printf '%s\n' "${TEST_PACKAGES[@]}" ;;
    test) printf '%s\n' "${DEMO_PACKAGES[@]}" "${KERNEL_PACKAGES[@]}" "${TEST_PACKAGES[@]}" ;;
    *) echo "bootstrap: no package set '$1' (demo, kernel, bench, test)" >&2; return 2 ;;
  esac
}

deps() {
  need_root deps
  install_packages "${DEMO_PACKAGES[@]}" "${KERNEL_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
  # linux-image-amd64 is there now: its kernel's headers and source (kernel_packages).
  local kernel
  read -ra kernel < <(kernel_packages)
  install_packages "${kernel[@]}"
  kernel_6_12
}

# install_packages PACKAGE...: apt-get installs those not installed yet, and none of their
# services (nor those of the packages they pull in) starts or stays enabled:
# - while apt runs, a policy-rc.d of ours answers 101 ("action forbidden") for every service:
#   invoke-rc.d and deb-systemd-invoke, which the packages' maintainer scripts start their
#   services with, ask it first (Debian policy, 9.3.3.1); one that was there is put back after;
# - then each unit that the install enabled is disabled again (deb-systemd-helper, which keeps
#   it disabled across the packages' upgrades too), and each init script's boot links likewise
#   (update-rc.d), so that a reboot does not start them either.
# Only the packages that this install added are touched: a service that was there before, running
# or not, enabled or not, is left as it was. system.test_bench checks it under systemd.
install_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "bootstrap: all packages present"
    return
  fi
  echo "bootstrap: installing ${missing[*]}"
  local start=$SECONDS before added
  before=$(installed_packages)
  apt-get update
  hold_services
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  release_services
  mapfile -t added < <(comm -13 <(echo "$before") <(installed_packages))
  disable_services_of "${added[@]}"
  echo "bootstrap: ${#added[@]} packages installed in $((SECONDS - start)) s"
}

installed_packages() { dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '/^ii/ {print $2}' | sort; }

policy=/usr/sbin/policy-rc.d
policy_saved=$policy.rdma-eventd-saved
policy_mark="# rdma-eventd's scripts/bootstrap.sh is installing packages: no service starts"
services_held=0
hold_services() {
  # One of ours left by a run that was killed is not the one to put back.
  if [ -e "$policy" ] && ! grep -qxF "$policy_mark" "$policy" && [ ! -e "$policy_saved" ]; then
    mv "$policy" "$policy_saved"
  fi
  printf '#!/bin/sh\n%s\nexit 101\n' "$policy_mark" >"$policy.new"
  chmod 755 "$policy.new"
  mv "$policy.new" "$policy"
  services_held=1
  trap release_services EXIT # apt failing ends the script: the host's policy comes back
}
release_services() {
  [ "$services_held" = 1 ] || return 0
  rm -f "$policy"
  if [ -e "$policy_saved" ]; then mv "$policy_saved" "$policy"; fi
  services_held=0
  trap - EXIT
}

# disable_services_of PACKAGE...: their enabled units and init scripts, disabled (see above).
# Only units that can be enabled: an alias is its unit's other name, and a unit with no
# WantedBy= or RequiredBy= (a static one, started on demand, D-Bus's or a socket's) is enabled
# by nothing. deb-systemd-helper acts for a package's maintainer scripts only
# (DPKG_MAINTSCRIPT_PACKAGE): it is called here on behalf of that package. The init system
# itself, its device manager and the system bus (systemd, udev, dbus: every Debian host has them;
# a bare root may get them from the demo's set) are the system's, not a service of the tests.
disable_services_of() {
  local p files unit file script
  for p in "$@"; do
    case $p in systemd | systemd-sysv | udev | dbus | dbus-*) continue ;; esac
    files=$(dpkg-query -L "$p" 2>/dev/null || true)
    for file in $({ grep -E '^/(usr/)?lib/systemd/system/[^/@]+\.(service|socket|timer|path)$' \
      <<<"$files" || true; } | sort -u); do
      [ -L "$file" ] && continue
      grep -qE '^(WantedBy|RequiredBy)=' "$file" || continue
      unit=${file##*/}
      if DPKG_MAINTSCRIPT_PACKAGE=$p deb-systemd-helper --quiet is-enabled "$unit"; then
        DPKG_MAINTSCRIPT_PACKAGE=$p deb-systemd-helper disable "$unit"
        echo "bootstrap: $unit ($p) disabled: installed for the tests, not as a service of this host"
      fi
    done
    for script in $(sed -nE 's#^/etc/init\.d/([^/]+)$#\1#p' <<<"$files" | sort -u); do
      if compgen -G "/etc/rc[2-5].d/S??$script" >/dev/null; then
        update-rc.d "$script" disable >/dev/null 2>&1 || true
        echo "bootstrap: the init script $script ($p) disabled: installed for the tests"
      fi
    done
  done
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
    # One test needs it: the rest of the suite runs, and that test fails saying what is missing.
    echo "bootstrap: no linux-image-6.12.*+deb12-amd64 in the package lists (is bookworm-security" \
      "among apt's sources?): the test kernel.monitor needs it and will fail; every other test runs" >&2
    return 0
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
  local dir=$1 start=$SECONDS lock; shift
  # One build of a directory at a time: .ci/run builds the later stages' directories ahead, in
  # the background, and a stage then waits here for that build to end (and finds it done).
  mkdir -p "$dir"
  exec {lock}>"$dir/.build-lock"
  flock "$lock"
  cmake -S . -B "$dir" -DRDMA_EVENTD_WERROR=ON "$@"
  cmake --build "$dir" -j "${JOBS:-$(nproc)}"
  exec {lock}>&-
  echo "bootstrap: $dir configured and built in $((SECONDS - start)) s"
}

# The build the demo and the tests run: optimised as released (RelWithDebInfo's -O2), with line
# tables (-g1) rather than full debug information. Backtraces, sanitizers, perf and valgrind
# name the file, line and function from them; full -g only adds what a debugger shows of
# variables, and makes this build, the first thing CI does, a fifth slower. For a debugger,
# build by hand (README.md, "Building by hand").
release_flags=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")

# Every build here compiles the project's libraries and programs as unity sources
# (RDMA_EVENTD_UNITY_PRODUCT: CMake joins a target's sources into batches of eight), which
# parse the headers they share (nlohmann-json, spdlog, the standard library) once per batch
# rather than once per file (docs/testing.md has the figures). What a unity build cannot show,
# a source that misses an include, the packages' build shows: it compiles every source of the
# product on its own (debian/rules; `test` builds the packages and system.package fails with
# it), as a build by hand does.
unity_product=(-DRDMA_EVENTD_UNITY_PRODUCT=ON)

# The whole build, tests included. The test programs are compiled as unity sources too
# (RDMA_EVENTD_UNITY_TESTS, tests/CMakeLists.txt): GoogleTest's and nlohmann-json's templates
# are then compiled once per few files rather than in every one, which takes their compile time
# from 478 to 218 CPU seconds (docs/testing.md). The ThreadSanitizer build compiles them one by
# one (test-tsan, below). A ./build that the demo configured gets its tests here.
build() {
  deps
  configure_and_build build "${release_flags[@]}" "${unity_product[@]}" \
    -DRDMA_EVENTD_UNITY_TESTS=ON -DBUILD_TESTING=ON -DRDMA_EVENTD_BENCH=ON
}

# The demo's build: only the programs it runs, the daemon, rdma-eventctl and the simulator (with
# its stand-in libraries), so that the first records show a few minutes after the command on a
# fresh machine. A ./build configured before (by `test`) is kept as it is; a new one is
# configured without the tests and the benchmark harness, which need GoogleTest.
build_demo() {
  local start=$SECONDS
  if [ ! -e build/CMakeCache.txt ]; then
    cmake -S . -B build -DRDMA_EVENTD_WERROR=ON "${release_flags[@]}" "${unity_product[@]}" \
      -DBUILD_TESTING=OFF -DRDMA_EVENTD_BENCH=OFF
  fi
  cmake --build build -j "${JOBS:-$(nproc)}" --target rdma-eventd rdma-eventctl rdma-sim
  echo "bootstrap: the demo's programs built in $((SECONDS - start)) s"
}

run_tests() {
  local dir=$1 start=$SECONDS rc=0; shift
  # Tests start journald, the simulator and the daemon themselves; they need root for private
  # mount namespaces. --output-on-failure shows the failing test's whole log. Twice as many
  # tests as CPUs: most of a test's time is spent waiting (on a daemon, a journal, a guest), and
  # one test per CPU left 43 % of both CPUs idle (docs/testing.md).
  local jobs=${TEST_JOBS:-$((2 * $(nproc)))}
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 900 "$@" |
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
  # Line tables (-g1) rather than Debian's full -g, as every build of this script: the -dbgsym
  # packages still give backtraces, perf and a debugger's file, line and function, and the
  # build takes 567 CPU s instead of 858 (its compiler runs 537 instead of 774: docs/testing.md).
  # dpkg-buildpackage alone, outside this script, builds with Debian's flags.
  (cd "$out/src/rdma-eventd" &&
    DEB_CFLAGS_APPEND=-g1 DEB_CXXFLAGS_APPEND=-g1 \
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

# The sanitizer builds exist to run the tests: the product at -O1, as ASan's and TSan's own
# documentation advise (at -O0 the instrumented daemon and clients run the suites with a quarter
# to a third more CPU: docs/testing.md), the test programs at -O0 as in every build, with the
# line tables a sanitizer's report needs (-g1: file, line and function; full -g only adds the
# variables a debugger shows, at a tenth more compile time). The ASan+UBSan build compiles the
# test programs as unity sources, as the plain build does (under ASan+UBSan a test source alone
# compiles slower than at -O2). The ThreadSanitizer build compiles each test source of its
# suites on its own, so that one build still proves that every one compiles with exactly the
# includes it names.
checking_build=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g1"
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1")
build_sanitize() {
  configure_and_build build-sanitize -DRDMA_EVENTD_SANITIZE=ON "${checking_build[@]}" \
    "${unity_product[@]}" -DRDMA_EVENTD_UNITY_TESTS=ON
}
# Only the suites test-tsan runs (below): without the simulator's fidelity suite, the system
# tests and the benchmark harness, whose tests are not among these.
build_tsan() {
  configure_and_build build-tsan -DRDMA_EVENTD_TSAN=ON -DRDMA_EVENTD_BENCH=OFF \
    -DRDMA_EVENTD_TEST_SUITES="harness;unit;integration;subscribers" "${checking_build[@]}" \
    "${unity_product[@]}" -DRDMA_EVENTD_UNITY_TESTS=OFF
}

case "${1:-help}" in
  deps) deps ;;
  build) build ;;
  demo)
    need_root demo
    if [ "${2:-}" = --kernel ]; then
      install_packages "${DEMO_PACKAGES[@]}" "${KERNEL_PACKAGES[@]}"
      build_demo
      exec scripts/demo_kernel.sh build
    fi
    install_packages "${DEMO_PACKAGES[@]}"
    build_demo
    exec scripts/demo.sh build "${@:2}"
    ;;
  packages) packages_of "${2:-}" ;;
  install) need_root install; shift; install_packages "$@" ;;
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
  build-sanitize) deps; build_sanitize ;;
  build-tsan) deps; build_tsan ;;
  test-sanitize)
    deps
    build_sanitize
    # Not the packages' test: they are built without sanitizers, and `test` tests them; nor the
    # test bench's install (system.test_bench), which runs no program of this build. Not the
    # kernel tests: the guest runs under software emulation, where a sanitized daemon is several
    # times slower, and what they check of the daemon's own code the simulator's tests check
    # here (docs/kernel-tests.md).
    run_tests build-sanitize -E '^system\.(package|test_bench)$' -LE '^kernel$'
    ;;
  test-tsan)
    deps
    build_tsan
    # The daemon's other threads are the journal writer and link quality's counter readers:
    # every test that runs the daemon with a journal exercises the one, the faults tests
    # (journald stopped and frozen) most, and the LinkHealth tests (a hung read, a sweep of 16
    # devices) the others. The million-event
    # storm and the system tests add nothing for threads and would take long under TSan.
    # One test per CPU: under ThreadSanitizer the daemon and its clients are several times
    # slower and keep the CPUs busy themselves.
    TEST_JOBS=${TEST_JOBS:-$(nproc)} run_tests build-tsan -L 'unit|integration|subscribers|long' \
      -E 'Storm'
    ;;
  fuzz) shift; exec scripts/fuzz.sh "$@" ;;
  help | -h | --help) usage ;;
  *) usage >&2; exit 2 ;;
esac
