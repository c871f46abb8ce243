# shellcheck shell=bash
# What the tests that boot systemd as PID 1 share (container_test.sh, package_test.sh): a
# Debian 12 root file system, downloaded once a day with debootstrap and cached; booting it
# with systemd-nspawn on a throwaway overlay; running commands in it; bounded waits; cleaning
# up. Sourced, after `set -euo pipefail`. The test defines diagnostics(), which fail() calls to
# show what the container saw.
#
# The root file systems are kept in /var/cache/rdma-eventd-tests (RDMA_EVENTD_TEST_CACHE names
# another place); a day's first run downloads one (a few minutes), and removes the older ones.

# step, fail, wait_for, stop_pid.
# shellcheck source-path=SCRIPTDIR source=test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

container_cache_dir=${RDMA_EVENTD_TEST_CACHE:-/var/cache/rdma-eventd-tests}
# What the container needs beyond a minimal system, for both tests, so that they share one
# root: systemd itself; procps (kill, for ExecReload=; every real host has it); the daemon's
# runtime libraries, the only dependencies of the packages that a minimal system lacks (apt in
# the container has no network; ibverbs-providers has libmlx5.so.1, for mlx5 vendor events);
# the sanitizers' libraries, for a sanitized build's staged install; man-db, to read the
# installed pages; socat for a raw subscriber.
container_packages=systemd,systemd-sysv,dbus,procps,libevent-core-2.1-7,libspdlog1.10,libfmt9
container_packages+=,libibverbs1,ibverbs-providers,libasan8,libubsan1,man-db,socat

container_scratch=
container_machine=rdma-eventd-test-$$
ns_pid=
C=

# What the service's tests show when they fail: the units' status and journal, and what the
# test's subscriber ($scratch/client.out) received.
service_diagnostics() {
  echo "--- systemctl status" >&2
  timeout 20 nsenter -t "$C" -m -u -i -n -p -C systemctl status --no-pager --lines=0 \
    rdma-eventd.service rdma-eventd.socket rdma-sim.service >&2 || true
  echo "--- journal" >&2
  timeout 20 nsenter -t "$C" -m -u -i -n -p -C journalctl --no-pager -o short-monotonic \
    -u rdma-eventd.service -u rdma-eventd.socket -u rdma-sim.service | tail -60 >&2 || true
  if [ -s "${scratch:-}/client.out" ]; then
    echo "--- the subscriber received" >&2
    tail -20 "$scratch/client.out" >&2
  fi
}

# A port going down reaches the test's subscriber ($scratch/client.out) and the journal, as one
# entry with the record's fields and its catalog text. Needs sim() and client_has() of the test.
event_reaches_subscriber_and_journal() {
  step "an event reaches the subscriber and the journal"
  sim port down mlx5_0/1
  wait_for 20 "port_err record for the subscriber" client_has '"event":"port_err"'
  local record entry
  record=$(grep '"event":"port_err"' "$scratch/client.out" | head -1)
  jq -e '.device == "mlx5_0" and .port == 1 and .state == "down" and .severity == "error"' \
    <<<"$record" >/dev/null || fail "unexpected record: $record"
  inside journalctl --sync
  entry=$(inside journalctl --no-pager -u rdma-eventd -o json RDMA_EVENT=port_err)
  [ "$(wc -l <<<"$entry")" = 1 ] || fail "journal entries for port_err: $entry"
  jq -e --argjson r "$record" '
    .RDMA_DEVICE == "mlx5_0" and .RDMA_PORT == "1" and .RDMA_PORT_STATE == "down" and
    .RDMA_SEQ == ($r.seq | tostring) and .RDMA_STREAM == $r.stream and .PRIORITY == "3" and
    .MESSAGE_ID == "11b9171c80eb4233a8a8a39e9b93196c" and
    ._SYSTEMD_UNIT == "rdma-eventd.service" and (.RDMA_RECORD | fromjson) == $r' \
    <<<"$entry" >/dev/null || fail "the journal entry does not match the record: $entry"
  # The catalog is installed where journalctl finds it: -x explains the entry.
  inside journalctl --no-pager -x -u rdma-eventd RDMA_EVENT=port_err |
    grep -c "Defined-By: rdma-eventd" >/dev/null || fail "journalctl -x shows no catalog text"
}

# The container's diagnostics ask the container: fail() shows them only while it runs.
can_diagnose() { [ -n "$C" ] && [ -d "/proc/$C" ]; }

# inside COMMAND...: runs it in the container (bounded).
inside() { timeout 60 nsenter -t "$C" -m -u -i -n -p -C "$@"; }
prop() { inside systemctl show -P "$2" "$1"; }
prop_is() { [ "$(prop "$1" "$2")" = "$3" ]; }

# container_setup: checks the tools, makes the scratch directory ($container_scratch) and the
# cleanup, and sets $rootfs to the cached root file system, downloading it when needed.
container_setup() {
  local tool
  for tool in systemd-nspawn debootstrap nsenter jq; do
    command -v "$tool" >/dev/null || fail "$tool is missing: scripts/bootstrap.sh deps installs it"
  done
  [ "$(id -u)" = 0 ] || fail "needs root (systemd-nspawn)"
  container_scratch=$(mktemp -d /tmp/rdma-container-XXXXXX)
  trap container_cleanup EXIT
  trap 'exit 1' INT TERM # so that the cleanup runs
  container_root
}

# container_root: sets $rootfs to today's cached root file system, downloading it when there
# is none (its log in $container_scratch), and holds a shared lock on the cache until the
# script ends. container_root.sh runs it alone, so that the root is ready before the tests.
container_root() {
  # A test holds a shared lock on the cache for as long as it runs; a download takes it
  # exclusively, so that the roots it removes (other days') are in use by no test.
  local today key packages_hash older
  today=$(date +%Y%m%d)
  packages_hash=$(echo "$container_packages" | sha256sum | cut -c1-12)
  key=bookworm-$today-$packages_hash
  rootfs=$container_cache_dir/$key
  mkdir -p "$container_cache_dir"
  exec {container_lock}>"$container_cache_dir/lock"
  flock -s -w 900 "$container_lock" ||
    fail "$container_cache_dir/lock is held by another run for 15 minutes"
  [ -d "$rootfs" ] && return
  flock -u "$container_lock"
  flock -x -w 900 "$container_lock" ||
    fail "$container_cache_dir/lock is held by another run for 15 minutes"
  if [ ! -d "$rootfs" ]; then
    step "downloading a Debian 12 root file system into $rootfs (once a day, a few minutes)"
    rm -rf "$rootfs.partial"
    if ! timeout 600 debootstrap --variant=minbase --include="$container_packages" bookworm \
      "$rootfs.partial" >"$container_scratch/debootstrap.log" 2>&1; then
      tail -30 "$container_scratch/debootstrap.log" >&2
      rm -rf "$rootfs.partial"
      # The archive out of reach (a run that crosses midnight, a mirror away): an earlier
      # day's root of the same packages serves, said as such; none, and the test fails.
      older=$(find "$container_cache_dir" -mindepth 1 -maxdepth 1 -type d \
        -name "bookworm-*-$packages_hash" | sort | tail -n 1)
      [ -n "$older" ] ||
        fail "debootstrap could not make the container's root file system (above: its log)"
      step "debootstrap failed (above); using the earlier root $older"
      rootfs=$older
      flock -s "$container_lock"
      return
    fi
    mv "$rootfs.partial" "$rootfs"
    # Older days' roots go; today's roots of other package lists (another branch's) stay.
    find "$container_cache_dir" -mindepth 1 -maxdepth 1 -name 'bookworm-*' \
      ! -name "bookworm-$today-*" -exec rm -rf {} +
  fi
  flock -s "$container_lock" # from exclusive to shared, for the rest of the test
}

# container_halt: the subscriber, if any, and the container stop.
container_halt() {
  [ -n "${client_pid:-}" ] && kill "$client_pid" 2>/dev/null || true
  client_pid=
  if [ -n "$ns_pid" ] && kill -0 "$ns_pid" 2>/dev/null; then
    kill -TERM "$ns_pid" # a clean halt of the container
    for _ in $(seq 300); do kill -0 "$ns_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$ns_pid" 2>/dev/null || true
    wait "$ns_pid" 2>/dev/null || true
  fi
  ns_pid=
  C=
  rm -rf "/run/systemd/nspawn/propagate/$container_machine"
}

container_cleanup() {
  container_halt
  rm -rf "$container_scratch"
}

# container_boot [NSPAWN OPTIONS...]: boots $rootfs with systemd as PID 1 and waits until the
# system runs; $C is then the container's PID 1 as the host sees it. --volatile=overlay: the
# cached root stays untouched, every change goes to a tmpfs.
container_boot() {
  systemd-nspawn -D "$rootfs" --machine="$container_machine" --register=no --keep-unit \
    --console=pipe --volatile=overlay "$@" -b </dev/null >"$container_scratch/nspawn.log" 2>&1 &
  ns_pid=$!
  container_pid() { C=$(pgrep -P "$ns_pid" -x systemd); }
  wait_for 60 "systemd in the container (nspawn: $(cat "$container_scratch/nspawn.log"))" \
    container_pid
  wait_for 60 "systemd's private socket in the container" \
    test -S "/proc/$C/root/run/systemd/private"
  local state
  state=$(inside systemctl is-system-running --wait || true)
  case $state in
    running) ;;
    degraded) inside systemctl --failed --no-legend --no-pager >&2 ;;
    *) fail "the container's system is '$state'" ;;
  esac
}

# --- the service on the simulator -----------------------------------------------------------

sim_build=/opt/rdma-eventd-build # the build tree, read-only, inside the container

# container_boot_staged [NSPAWN OPTIONS...]: stages the install (DESTDIR) in $scratch/stage,
# boots the container with it, the build tree (at $sim_build) and the simulator's topologies
# bound read-only (and the options given), and installs the staged tree in it as
# docs/operations.md says.
container_boot_staged() {
  step "staging the install and booting systemd in a container"
  DESTDIR=$scratch/stage "$CMAKE_COMMAND" --install "$BUILD_DIR" >"$scratch/install.log"
  container_boot --bind-ro="$scratch/stage:/opt/stage" --bind-ro="$BUILD_DIR:$sim_build" \
    --bind-ro="$SOURCE_DIR/sim/topologies:/opt/rdma-sim-topologies" "$@"
  step "installing the staged tree, as docs/operations.md says"
  inside bash -c 'tar -C /opt/stage -c . | tar -C / -x --keep-directory-symlink --no-same-owner' ||
    fail "cannot copy the staged install in"
  inside bash -c 'ldconfig && systemd-sysusers && systemctl daemon-reload && journalctl --update-catalog' ||
    fail "the install steps failed"
}

# start_simulator_unit RDMA_SIM LIB_DIR TOPOLOGY [LINE...]: RDMA_SIM (as the container names
# it) runs TOPOLOGY as the unit rdma-sim, and the drop-in of docs/operations.md ("Trying it
# without RDMA hardware") points the service at it, at its stand-in libraries in LIB_DIR, with
# any more LINEs.
start_simulator_unit() {
  local rdma_sim=$1 lib_dir=$2 topology=$3
  shift 3
  inside systemd-run --unit=rdma-sim --quiet "$rdma_sim" start --foreground --dir /run/rdma-sim \
    -t "$topology"
  wait_for 30 "simulator's socket" test -S "/proc/$C/root/run/rdma-sim/sim.sock"
  inside mkdir -p /etc/systemd/system/rdma-eventd.service.d
  printf '%s\n' "[Service]" "Environment=LD_LIBRARY_PATH=$lib_dir" \
    "Environment=RDMA_SIM_DIR=/run/rdma-sim" "$@" |
    inside tee /etc/systemd/system/rdma-eventd.service.d/simulator.conf >/dev/null
  inside systemctl daemon-reload
}
