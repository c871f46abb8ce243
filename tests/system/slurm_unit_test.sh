#!/usr/bin/env bash
# The shipped rdma-eventd-slurm.service, unchanged, started for real by systemd as PID 1 against
# the real munge and slurmctld of Debian 12 (docs/scheduler.md, "The unit's sandbox"). The test's
# own network and UTS namespaces (slurm_lib.sh) hold munged, slurmctld and slurmd; a Debian 12
# container (container_lib.sh) booted in that network namespace holds the staged install, the
# daemon on the simulator (its socket and service as shipped) and the follower's unit. The
# container has no Slurm of its own: scontrol, sinfo, their plugins and the libraries that the
# container lacks are bound read-only from the host, with a slurm.conf naming munged's socket at
# /run/munge. Then, read back from Slurm with scontrol:
#   the unit starts under its sandbox and reconciles (scontrol and munge work under it); a port
#   that goes down drains the node with the unit's reason, after the shipped splay and the
#   drain limit's count (sinfo works under it too); the port up resumes it; the unit
#   stops cleanly. systemd-analyze security gives its exposure score, printed for the record.
# Needs root, munge, slurmctld, slurmd, slurm-client, jq, systemd-nspawn, debootstrap.
set -euo pipefail
: "${BUILD_DIR:?run it through ctest}"

# shellcheck source-path=SCRIPTDIR source=container_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/container_lib.sh"
# shellcheck source-path=SCRIPTDIR source=slurm_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/slurm_lib.sh"

slurm_enter_namespaces "slurm unit test"

container_setup
scratch=$container_scratch
chmod 755 "$scratch"
container_cleanup_all() {
  set +e
  container_halt
  slurm_stop_all
  rm -rf "$scratch"
}
trap container_cleanup_all EXIT
unit=rdma-eventd-slurm.service
diagnostics() {
  slurm_diagnostics slurmctld.log
  echo "--- systemctl status" >&2
  inside systemctl status --no-pager --lines=0 "$unit" rdma-eventd.service >&2 || true
  echo "--- journal of $unit" >&2
  inside journalctl --no-pager -o short-monotonic -u "$unit" | tail -30 >&2 || true
}

step "namespaces, munged, slurmctld, slurmd"
# shellcheck disable=SC2119  # no slurm.conf line of its own
slurm_start_cluster
# Slurm in the container: the client's configuration, its munged at /run/munge.
sed 's|^AuthInfo=socket=.*|AuthInfo=socket=/run/munge/sock|' "$scratch/slurm.conf" \
  >"$scratch/slurm-container.conf"
slurm_binds=(--bind-ro=/usr/bin/scontrol --bind-ro=/usr/bin/sinfo
  --bind-ro=/usr/lib/x86_64-linux-gnu/slurm-wlm
  --bind-ro="$scratch/slurm-container.conf:/etc/slurm/slurm.conf" --bind="$scratch/munge:/run/munge")
for lib in libmunge.so.2 libreadline.so.8; do
  [ -e "$rootfs/usr/lib/x86_64-linux-gnu/$lib" ] ||
    slurm_binds+=(--bind-ro="/usr/lib/x86_64-linux-gnu/$lib")
done

container_boot_staged "${slurm_binds[@]}"
# As the unit runs it: without this test's SLURM_CONF, which nsenter would pass on.
cscontrol() { inside env -u SLURM_CONF timeout 10 scontrol "$@"; }
cscontrol show node -o "$node" | grep -q ' State=IDLE' ||
  fail "scontrol in the container cannot read the node: $(cscontrol show node -o "$node" 2>&1)"

step "the daemon on the simulator, its socket as shipped"
sanitizer_env=()
if [ "${SANITIZE:-0}" = 1 ]; then
  # LeakSanitizer stops the process with ptrace(), which the units' system call filters forbid;
  # leaks are checked by the other suites, which run the same build unsandboxed. The follower's
  # unit file stays as shipped: a drop-in adds only this.
  sanitizer_env=("Environment=ASAN_OPTIONS=detect_leaks=0")
  inside mkdir -p "/etc/systemd/system/$unit.d"
  printf '%s\n' "[Service]" "${sanitizer_env[@]}" |
    inside tee "/etc/systemd/system/$unit.d/sanitizer.conf" >/dev/null
fi
start_simulator_unit "$sim_build/bin/rdma-sim" "$sim_build/lib/rdma-sim" \
  /opt/rdma-sim-topologies/two-adapters.json "${sanitizer_env[@]}"
csim() { inside "$sim_build/bin/rdma-sim" --dir /run/rdma-sim "$@" >/dev/null; }
inside systemctl enable --now rdma-eventd.socket --quiet

step "the shipped $unit, started by systemd"
inside mkdir -p /etc/rdma-eventd
printf '{"node_name": "%s", "reconcile_interval_s": 2}\n' "$node" |
  inside tee /etc/rdma-eventd/slurm.json >/dev/null
inside systemctl start "$unit"
unit_logged() { inside journalctl --no-pager -u "$unit" -o cat | grep -c "$1" >/dev/null; }
wait_for 30 "the unit's first reconciliation" unit_logged "healthy, and no drain of ours to resume"
prop_is "$unit" ActiveState active || fail "$unit is $(prop "$unit" ActiveState)"
undrained || fail "drained at start: $(node_line)"

step "a port down drains the node after the splay (at most 30 s), up resumes it, through the unit"
csim port down mlx5_0/1
wait_for 45 "drained by the unit" reason_is "rdma-eventd: mlx5_0/1 down"
# The unit logs the drain once scontrol has returned, and journald takes the line from its
# stream after that: slurmctld may show the reason first.
wait_for 10 "log of the unit's drain" unit_logged "drained $node: rdma-eventd: mlx5_0/1 down"
unit_logged "a drain waits [0-9]* s first (drain_splay_s 30)" ||
  fail "the unit's drain did not wait out its splay"
csim port up mlx5_0/1
wait_for 15 "resumed by the unit" undrained

step "stopped cleanly; the exposure score, for the record"
inside systemctl stop "$unit"
echo "--- what the unit logged"
inside journalctl --no-pager -u "$unit" -o cat
[ "$(prop "$unit" Result)" = success ] || fail "$unit stopped with $(prop "$unit" Result)"
wait_for 10 "log of the unit's stop" unit_logged "stopping (reconciliations: "
score=$(inside systemd-analyze security --no-pager "$unit" | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
echo "systemd-analyze security $unit: $score"
[ -n "$score" ] || fail "no exposure score"
echo "PASS"
