#!/usr/bin/env bash
# rdma-eventd-slurm with the real Slurm 22.05 of Debian 12 (docs/scheduler.md): in network and
# UTS namespaces of its own (loopback, and a veth pair so that Slurm's getaddrinfo finds an
# address), munged, slurmctld -D and slurmd -D on 127.0.0.1 with scratch directories, the
# daemon on the simulator (quiet period 3 s), and the follower as shipped. Every result is read
# back from Slurm (scontrol show node, sinfo -R), waiting for it with a deadline:
#  - three downs on mlx5_0/1 drain the node within 1 s with our reason; the quiet period's end
#    resumes it;
#  - an admin's drain is neither resumed nor rewritten, even with every port healthy; once the
#    admin resumes, a fault drains again;
#  - the daemon restarted while the node is drained: the drain stands, the reconciliation at
#    the new stream changes nothing;
#  - a stale drain of ours set by hand while every port is healthy is resumed by reconciliation;
#  - the drain limit (docs/scheduler.md): with one of the partition's nine other nodes (down,
#    no slurmd behind them) already drained by rdma-eventd, the default 10% holds this
#    node's drain back, the log and --once --dry-run say so, and the drain lands once that
#    node's reason is someone else's;
#  - an adapter unplugged: drained; an operator's resume stands (the follower says why) until
#    another port flaps, which drains the node for both; the flap over, the reason shrinks to
#    the adapter; the adapter back, resumed;
#  - slurmctld stopped during a flap: the drain lands once it is back; stopped again, a flap
#    that ends while it is away leaves the node undrained when it is back;
#  - --once --dry-run prints the scontrol command and changes nothing;
#  - --once as slurmd's HealthCheckProgram drains and resumes; --once with the daemon down
#    changes nothing, exits 69, within seconds;
#  - the prolog (slurm/prolog-rdma-wait) drains with its own reason when a port is not active;
#  - a fatal device while another port flaps: one reason naming both; the flap ends, the
#    reason shrinks;
#  - bad configuration (exit 78, the key named), an unknown node (68), scontrol missing (75):
#    the node unchanged;
#  - node-problem-detector's contract: the command line of the shipped custom-plugin config
#    (config/node-problem-detector/rdma-eventd.json), run as it is for a healthy, a flapping,
#    a fatal and a daemon-down host: exit 0, 1, 1, 2 and at most 80 bytes of output.
# Needs root, munge, slurmctld, slurmd, slurm-client, jq (scripts/bootstrap.sh deps).
set -euo pipefail
: "${BUILD_DIR:?run it through ctest}"
# shellcheck source-path=SCRIPTDIR source=test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
# shellcheck source-path=SCRIPTDIR source=slurm_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/slurm_lib.sh"

slurm_enter_namespaces "slurm test" sinfo sbatch scancel

scratch=$(mktemp -d /tmp/rdma-slurm-XXXXXX)
chmod 755 "$scratch"
follower_pid=

diagnostics() {
  slurm_diagnostics follower daemon slurmctld.log slurmd.log healthcheck.log prolog.log
}
trap slurm_cleanup EXIT

reason_in_sinfo() { sinfo -R -h -o '%E|%N' | grep -qxF "$1|$node"; }

step "namespaces: loopback, hostname $node; munged, slurmctld, slurmd"
# The HealthCheckProgram: the follower's one-shot mode, switched on by a file so that it runs
# only in its own step.
cat >"$scratch/healthcheck.sh" <<EOF
#!/bin/sh
[ -e "$scratch/healthcheck.on" ] || exit 0
export SLURM_CONF="$scratch/slurm.conf"
echo "run \$(date +%T.%N)" >>"$scratch/healthcheck.log"
exec "$follower_bin" --once --config "$scratch/follower.json" >>"$scratch/healthcheck.log" 2>&1
EOF
# The prolog as a site would install it, with its settings in a file of the test's.
cat >"$scratch/prolog.conf" <<EOF
PORTS="mlx5_0/1 mlx5_1/2"
TIMEOUT=2s
EVENTCTL=$eventctl
EOF
cat >"$scratch/prolog.sh" <<EOF
#!/bin/sh
[ -e "$scratch/prolog.on" ] || exit 0
export RDMA_PROLOG_CONFIG="$scratch/prolog.conf" RDMA_EVENTD_SOCKET="$scratch/events.sock"
export SLURM_CONF="$scratch/slurm.conf"
exec "$SOURCE_DIR/slurm/prolog-rdma-wait" 2>>"$scratch/prolog.log"
EOF
chmod +x "$scratch/healthcheck.sh" "$scratch/prolog.sh"

# Nine other nodes of the partition, which no slurmd serves (each a port where nothing
# listens): what sinfo lists beside this node for the drain limit. Down from the start, so that
# slurmctld neither sends them health checks nor keeps pinging them (its agents would wait on
# them before this node's next health check).
peers=()
for i in {1..9}; do
  peers+=("NodeName=peer$i NodeAddr=127.0.0.1 Port=$((6900 + i)) CPUs=1 RealMemory=100 State=DOWN Reason=\"no slurmd here\"")
done
slurm_start_cluster "HealthCheckProgram=$scratch/healthcheck.sh" "HealthCheckInterval=2" \
  "Prolog=$scratch/prolog.sh" "${peers[@]}"

step "simulator, daemon (quiet period 3 s), follower"
sim start -t "$topology" >/dev/null
cat >"$scratch/daemon.json" <<'EOF'
{"health": {"flap_quiet_s": 3}}
EOF
start_daemon
host_health_is healthy || fail "the host is not healthy at start: $(ctl health)"
# No splay before a drain (the drains below are timed to the second; its own test is the unit
# test's); the drain limit as it ships.
cat >"$scratch/follower.json" <<EOF
{"node_name": "$node", "socket": "$scratch/events.sock", "reconcile_interval_s": 2,
 "scontrol_timeout_s": 5, "drain_splay_s": 0, "state_directory": "$scratch/follower-state"}
EOF
start_follower() {
  "$follower_bin" --config "$scratch/follower.json" >>"$scratch/follower" 2>&1 &
  follower_pid=$!
}
touch "$scratch/follower"
start_follower
wait_for 10 "the follower's first reconciliation" grep -qF "healthy, and no drain of ours to resume" \
  "$scratch/follower"
undrained || fail "node drained at start: $(node_line)"

# node-problem-detector's command line, from the shipped config, as it is: the program where
# the package installs it (here: the build's), its arguments as written.
npd_config=$SOURCE_DIR/config/node-problem-detector/rdma-eventd.json
npd_path=$(jq -r '.rules[] | select(.type == "permanent") | .path' "$npd_config")
mapfile -t npd_args < <(jq -r '.rules[] | select(.type == "permanent") | .args[]' "$npd_config")
npd_max=$(jq -r '.pluginConfig.max_output_length' "$npd_config")
[ "$npd_path" = /usr/bin/rdma-eventctl ] || fail "NPD config runs $npd_path, not the packaged rdma-eventctl"
# NPD kills a check at its timeout: it must outlast health's own 10 s to connect and 10 s for
# the reply, or a slow daemon reads as a failed check instead of "unknown".
for npd_timeout in $(jq -r '.pluginConfig.timeout, .rules[].timeout' "$npd_config"); do
  [ "${npd_timeout%s}" -gt 20 ] || fail "NPD timeout $npd_timeout: not above health's 20 s"
done
# npd_check EXIT LINE: the command exits EXIT and prints LINE, one line of at most
# max_output_length bytes.
npd_check() {
  local rc=0 out
  out=$(RDMA_EVENTD_SOCKET=$scratch/events.sock "$bin/$(basename "$npd_path")" "${npd_args[@]}") || rc=$?
  echo "npd: exit $rc: $out"
  [ "$rc" = "$1" ] || fail "NPD check exited $rc, not $1: $out"
  [ "$(printf '%s' "$out" | wc -l)" = 0 ] || fail "NPD check printed more than one line: $out"
  [ "${#out}" -le "$npd_max" ] || fail "NPD check printed ${#out} bytes, more than $npd_max: $out"
  [ "$out" = "$2" ] || fail "NPD check printed '$out', not '$2'"
}
step "node-problem-detector contract: a healthy host"
npd_check 0 "healthy: 3 ports healthy"

step "three downs on mlx5_0/1: drained within 1 s with our reason"
flap_reason="rdma-eventd: mlx5_0/1 flapping (3 downs/1h)"
bounce mlx5_0/1
bounce mlx5_0/1
start=$(now_ms)
sim port down mlx5_0/1 >/dev/null
until reason_is "$flap_reason"; do
  (($(now_ms) - start <= 1000)) || fail "not drained with '$flap_reason' within 1 s: $(node_line)"
  sleep 0.05
done
echo "drained $(($(now_ms) - start)) ms after the third down"
drained || fail "reason without a drain: $(node_line)"
wait_for 5 "sinfo -R showing the reason" reason_in_sinfo "$flap_reason"
step "node-problem-detector contract: a flapping host"
npd_check 1 "flapping: 1 of 3 ports not healthy: mlx5_0/1 flapping"
sim port up mlx5_0/1 >/dev/null
step "the quiet period's end resumes the node"
wait_for 15 "node resumed after the quiet period" undrained
host_health_is healthy || fail "resumed, but the host is $(ctl health)"

# The daemon counts the newest flap_downs downs: a flapping port's reason says 3 from then on.
flapping=$flap_reason

step "an admin's drain: neither resumed nor rewritten; after the admin's resume a fault drains"
scontrol update nodename="$node" state=drain reason="admin: cable swap"
mark=$(log_mark)
bounce mlx5_0/1  # the window still holds three downs: flapping again at once
wait_for 10 "the follower leaving the admin's drain alone" logged_since "$mark" \
  "not drained: the node is held by someone else (state IDLE, reason 'admin: cable swap')"
reason_is "admin: cable swap" || fail "admin's reason changed: $(node_line)"
mark=$(log_mark)
wait_for 15 "the port healthy again" host_health_is healthy
# A reconciliation with every port healthy saw the admin's drain, and left it.
wait_for 10 "a reconciliation with every port healthy" logged_since "$mark" \
  "healthy, and no drain of ours to resume"
reason_is "admin: cable swap" && drained || fail "admin's drain not kept: $(node_line)"
scontrol update nodename="$node" state=resume
wait_for 10 "admin's resume" undrained
sim port down mlx5_0/1 >/dev/null
wait_for 5 "drained again by the follower" reason_is "$flapping"

step "the daemon restarted while drained: the drain stands, nothing to change"
mark=$(log_mark)
stop_pid "$daemon_pid"
start_daemon
wait_for 15 "the follower on the new stream" logged_since "$mark" "a new one: the daemon restarted"
wait_for 10 "the reconciliation after the restart" logged_since "$mark" "drained already, for the same ports"
reason_is "$flapping" || fail "drain changed by the restart: $(node_line)"
if tail -n +"$((mark + 1))" "$scratch/follower" | grep -E "^rdma-eventd-slurm: (drained|resumed|updated the reason of) $node"; then
  fail "the reconciliation after the restart changed the node"
fi
sim port up mlx5_0/1 >/dev/null
wait_for 15 "node resumed after the quiet period" undrained

step "a stale drain of ours, every port healthy: resumed by reconciliation"
scontrol update nodename="$node" state=drain reason="rdma-eventd: mlx5_1/1 down"
wait_for 10 "the stale drain resumed" undrained

step "the drain limit: one of the partition's ten nodes drained by us already holds ours back"
scontrol update nodename=peer1 state=drain reason="rdma-eventd: mlx5_0/1 down"
mark=$(log_mark)
sim port down mlx5_0/1 >/dev/null  # flapping until it is up again and quiet
held="held back by the drain limit: 1 of the 10 nodes of partition debug are drained by"
held+=" rdma-eventd already, and drain_limit 10% allows 1; the node is drained once fewer are:"
held+=" $flapping"
wait_for 10 "the follower holding the drain back" logged_since "$mark" "$held"
undrained || fail "drained past the limit: $(node_line)"
"$follower_bin" --once --dry-run --config "$scratch/follower.json" >"$scratch/dry-limit.out" 2>&1 ||
  fail "--once --dry-run exited $?: $(cat "$scratch/dry-limit.out")"
grep -qxF "# $held" "$scratch/dry-limit.out" ||
  fail "--once --dry-run did not say what the limit holds back: $(cat "$scratch/dry-limit.out")"
undrained || fail "drained past the limit: $(node_line)"
scontrol update nodename=peer1 state=drain reason="admin: PSU swap"
wait_for 10 "drained once the limit allows" reason_is "$flapping"
sim port up mlx5_0/1 >/dev/null
wait_for 15 "node resumed after the quiet period" undrained

step "an operator's resume with an adapter gone stands until another port goes bad"
sim unplug mlx5_1 >/dev/null
gone_reason="rdma-eventd: mlx5_1/1 gone, mlx5_1/2 gone"
wait_for 10 "drained for the gone adapter" reason_is "$gone_reason"
mark=$(log_mark)
scontrol update nodename="$node" state=resume
wait_for 10 "the follower seeing the operator's resume" logged_since "$mark" \
  "left in service: an operator resumed it while it was drained for mlx5_1/1, mlx5_1/2; it is drained again if another port goes bad"
undrained || fail "the operator's resume was undone: $(node_line)"
sim port down mlx5_0/1 >/dev/null  # flapping until it is up again and quiet
wait_for 10 "drained again, for both" reason_is "rdma-eventd: mlx5_1/1 gone, mlx5_1/2 gone, mlx5_0/1 flapping (3 downs/1h)"
sim port up mlx5_0/1 >/dev/null
wait_for 15 "the reason shrinking to the gone adapter" reason_is "$gone_reason"
sim replug mlx5_1 >/dev/null
wait_for 15 "resumed once the adapter is back and healthy" undrained

step "slurmctld away during a flap: the drain lands once it is back"
stop_pid "$ctld_pid"
mark=$(log_mark)
sim port down mlx5_0/1 >/dev/null  # flapping until it is up again and quiet
wait_for 10 "the follower failing to reach Slurm" logged_since "$mark" "; retrying"
start_slurmctld
wait_for 20 "drained once slurmctld is back" reason_is "$flapping"
# Logged once the whole reconciliation worked, the drain's update included: it may follow the
# drain that slurmctld shows.
wait_for 10 "'Slurm answers again' logged" logged_since "$mark" "Slurm answers again"
sim port up mlx5_0/1 >/dev/null
wait_for 15 "node resumed after the quiet period" undrained

step "slurmctld away during a flap that ends before it is back: nothing stale applied"
stop_pid "$ctld_pid"
mark=$(log_mark)
bounce mlx5_0/1
wait_for 10 "the follower failing to reach Slurm" logged_since "$mark" "; retrying"
wait_for 15 "the port healthy again" host_health_is healthy
mark=$(log_mark)
start_slurmctld
wait_for 20 "the follower reaching Slurm again" logged_since "$mark" "Slurm answers again"
# A slurmctld that has just started may time out a query (under ASan, on a loaded machine):
# the node is read until Slurm answers, then it must not be drained.
wait_for 20 "the node readable in Slurm" bash -c "scontrol show node -o $node | grep -q ' State='"
undrained || fail "a stale drain was applied after the port recovered: $(node_line)"
wait_for 20 "node idle in Slurm" bash -c "scontrol show node -o $node | grep -q ' State=IDLE '"

step "--once --dry-run prints the drain, and changes nothing"
stop_pid "$follower_pid"
follower_pid=
sim port down mlx5_0/1 >/dev/null  # flapping until it is up again and quiet
wait_for 10 "the port flapping" host_health_is flapping
"$follower_bin" --once --dry-run --config "$scratch/follower.json" >"$scratch/dry-run.out" 2>&1 ||
  fail "--once --dry-run exited $?: $(cat "$scratch/dry-run.out")"
dry_drain=$(head -n 1 "$scratch/dry-run.out")
[ "$dry_drain" = "scontrol update nodename=$node state=drain reason='$flapping'" ] ||
  fail "--once --dry-run printed: $(cat "$scratch/dry-run.out")"
undrained || fail "--dry-run changed the node: $(node_line)"

step "--once as slurmd's HealthCheckProgram drains and resumes"
touch "$scratch/healthcheck.on"
wait_for 30 "drained by the health check" reason_is "$flapping"
grep -q '^run ' "$scratch/healthcheck.log" || fail "slurmd did not run the health check"
sim port up mlx5_0/1 >/dev/null
wait_for 20 "resumed by the health check" undrained
grep -qF "$node: resumed $node: every port in service is healthy" "$scratch/healthcheck.log" ||
  fail "the health check did not log its resume"
rm "$scratch/healthcheck.on"

step "--once with the daemon down: nothing changed, exit 69, within seconds"
stop_pid "$daemon_pid"
step "node-problem-detector contract: the daemon down"
npd_check 2 "unknown: rdma-eventd cannot be reached"
start=$(now_ms)
rc=0
"$follower_bin" --once --config "$scratch/follower.json" >"$scratch/once.out" 2>&1 || rc=$?
elapsed=$(($(now_ms) - start))
[ "$rc" = 69 ] || fail "--once without the daemon exited $rc, not 69: $(cat "$scratch/once.out")"
((elapsed < 10000)) || fail "--once without the daemon took $elapsed ms"
grep -qF "cannot reach rdma-eventd at $scratch/events.sock" "$scratch/once.out" ||
  fail "--once without the daemon: $(cat "$scratch/once.out")"
undrained || fail "--once without the daemon changed the node: $(node_line)"
start_daemon

step "the prolog drains with its own reason when a port is not active"
sim port down mlx5_1/2 >/dev/null
touch "$scratch/prolog.on"
job=$(sbatch --parsable -w "$node" -o /dev/null --wrap true)
prolog_reason="rdma-eventd-prolog: mlx5_1/2 not active after 2s before job $job"
wait_for 30 "drained by the prolog" reason_is "$prolog_reason"
grep -qF "rdma-eventd-prolog: mlx5_1/2 not active after 2s before job $job (mlx5_1/2 is DOWN, not ACTIVE: gave up waiting)" "$scratch/prolog.log" ||
  fail "the prolog did not say why: $(cat "$scratch/prolog.log")"
scancel "$job" || true
rm "$scratch/prolog.on"
sim port up mlx5_1/2 >/dev/null
scontrol update nodename="$node" state=resume
wait_for 10 "node resumed" undrained

step "a fatal device while a port flaps: one reason naming both; the flap ends, it shrinks"
start_follower
sim port down mlx5_0/1 >/dev/null  # flapping until it is up again and quiet
wait_for 10 "drained for the flap" reason_is "$flapping"
step "node-problem-detector contract: a fatal host"
sim fatal mlx5_1 >/dev/null
both="rdma-eventd: mlx5_1/1 fatal, mlx5_1/2 fatal, mlx5_0/1 flapping (3 downs/1h)"
wait_for 5 "a reason naming both" reason_is "$both"
npd_check 1 "fatal: 3 of 3 ports not healthy: mlx5_1/1 fatal, mlx5_1/2 fatal +1 more"
sim port up mlx5_0/1 >/dev/null
wait_for 15 "the reason shrinking to the fatal device" reason_is "rdma-eventd: mlx5_1/1 fatal, mlx5_1/2 fatal"
drained || fail "not drained while fatal: $(node_line)"

step "bad input: exit 78 naming the key, 68 for an unknown node, 75 without scontrol"
before=$(node_line | grep -o ' State=.*')
# bad_input EXIT MESSAGE CONFIG: --once with CONFIG exits EXIT and says MESSAGE.
bad_input() {
  local rc=0
  printf '%s\n' "$3" >"$scratch/bad.json"
  "$follower_bin" --once --config "$scratch/bad.json" >"$scratch/bad.out" 2>&1 || rc=$?
  [ "$rc" = "$1" ] || fail "'$3' exited $rc, not $1: $(cat "$scratch/bad.out")"
  grep -qF "$2" "$scratch/bad.out" || fail "'$3' did not say '$2': $(cat "$scratch/bad.out")"
}
bad_input 78 "bad.json: unknown key 'reason_prefx' (did you mean 'reason_prefix'?)" \
  '{"reason_prefx": "x:"}'
bad_input 78 "bad.json: reason_prefix: empty" '{"reason_prefix": ""}'
bad_input 78 "bad.json: reason_prefix: 70 bytes, more than 64" \
  "{\"reason_prefix\": \"$(printf 'x%.0s' {1..70})\"}"
bad_input 68 "Slurm does not know node 'nosuchnode'" \
  "{\"node_name\": \"nosuchnode\", \"socket\": \"$scratch/events.sock\", \"state_directory\": \"$scratch/follower-state\"}"
bad_input 75 "'/nonexistent/scontrol show node -o $node' could not be run" \
  "{\"node_name\": \"$node\", \"socket\": \"$scratch/events.sock\", \"scontrol\": \"/nonexistent/scontrol\", \"state_directory\": \"$scratch/follower-state\"}"
bad_input 78 "bad.json: state_directory: 'state' is not an absolute path" \
  '{"state_directory": "state"}'
[ "$(node_line | grep -o ' State=.*')" = "$before" ] || fail "bad input changed the node: $(node_line)"
echo "PASS"
