#!/usr/bin/env bash
# What a maintenance window looks like to rdma-eventd-slurm, with the real Slurm 22.05 of Debian
# 12 (docs/scheduler.md), in namespaces of its own (slurm_lib.sh): the daemon on the simulator
# (quiet period 3 s, gone devices forgotten after 2 s), the follower with reconcile_interval_s 2
# (so its backoff is 0.5, 1, 2, 2 ... s), scontrol_timeout_s 1 (scontrol itself keeps trying an
# absent slurmctld until it is killed) and scontrol through a wrapper that counts the calls.
# Every result is read back from Slurm, waiting for it with a deadline:
#  - slurmctld away for 10 s (four backoff steps and more) while a port goes down and another
#    bounces: the follower's CPU time (from /proc) stays under 0.2 s and its scontrol calls
#    within what the backoff allows; when slurmctld is back the node is drained for the port
#    still down, and resumed once it is up;
#  - an adapter removed: the node stays drained while the daemon's inventory keeps it gone (past
#    forget_gone_after_s), and is resumed once the adapter is back; the same with the daemon's
#    state lost meanwhile ("missing" in the reason); and an adapter removed, then retired by
#    the operator (rdma-eventctl inventory retire): still drained ("missing": the reason names
#    its ports) until the operator resumes the node, which then stays in service;
#  - a reboot with a dead port (the daemon's state dropped, the port never up, the follower
#    restarted): the node stays drained, and is resumed once the port comes up;
#  - a reboot after which the dead card is absent and the other one has its name, the daemon's
#    state lost: the follower's drain record keeps the node drained for the dead card's port by
#    node GUID, until the card is back;
#  - a reservation that is not a maintenance one does not keep the node from being drained; a
#    maintenance one does, until it is deleted;
#  - Comment= and Extra= set on the node: the reason is written once, not at every reconcile;
#  - a port slower than expected (degraded, which drains nothing) never holds our drain once the
#    port it names is back;
#  - two cards swapping names at a reboot, the daemon's state lost: the one that was down is
#    still down under its new name, and the node stays drained until its port is up;
#  - a node that Slurm resumed at its reboot (as `scontrol reboot nextstate=resume` does) with
#    a card missing and the daemon's state lost: drained again from the drain record;
#  - sixteen adapters with every port down, the reason ending in '+N more': after a reboot
#    with the daemon's state lost, the adapter behind '+N more' that does not probe keeps the
#    node drained, for its ports alone;
#  - SLURMD_NODENAME names the node when the host name differs (--once, as slurmd runs it);
#  - the default configuration file absent is every key at its default; there but unreadable
#    (a directory) is exit 78.
# Needs root, munge, slurmctld, slurmd, slurm-client, jq (scripts/bootstrap.sh deps).
set -euo pipefail
: "${BUILD_DIR:?run it through ctest}"
# shellcheck source-path=SCRIPTDIR source=test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
# shellcheck source-path=SCRIPTDIR source=slurm_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/slurm_lib.sh"

slurm_enter_namespaces "slurm window test"

scratch=$(mktemp -d /tmp/rdma-slurm-window-XXXXXX)
chmod 755 "$scratch"
follower_pid=

diagnostics() { slurm_diagnostics follower daemon scontrol.calls slurmctld.log once.out; }
trap slurm_cleanup EXIT

step "namespaces, munged, slurmctld, slurmd"
# shellcheck disable=SC2119  # no slurm.conf line of its own
slurm_start_cluster

step "simulator, daemon (quiet 3 s, forget gone after 2 s), follower (reconcile every 2 s)"
sim start -t "$SOURCE_DIR/sim/topologies/two-adapters.json" >/dev/null
# mlx5_1's ports are expected at 4x EDR: slower, they are degraded (rate_below_expected).
echo '{"health": {"flap_quiet_s": 3, "forget_gone_after_s": 2,
  "expected": [{"devices": "mlx5_1", "width": "4x", "speed": "edr"}]}}' >"$scratch/daemon.json"
start_daemon
# scontrol as the follower runs it, each call counted.
printf '#!/bin/sh\necho "$*" >>"%s/scontrol.calls"\nexec scontrol "$@"\n' "$scratch" \
  >"$scratch/scontrol"
chmod +x "$scratch/scontrol"
touch "$scratch/scontrol.calls" "$scratch/follower"
# sinfo (the drain limit's count) is Slurm's own, not beside the wrapper; no splay before a
# drain, whose times the steps below bound.
printf '{"node_name": "%s", "socket": "%s", "reconcile_interval_s": 2,
 "scontrol_timeout_s": 1, "scontrol": "%s", "sinfo": "sinfo", "drain_splay_s": 0,
 "state_directory": "%s"}\n' "$node" "$scratch/events.sock" "$scratch/scontrol" \
  "$scratch/follower-state" >"$scratch/follower.json"
start_follower() {
  "$follower_bin" --config "$scratch/follower.json" >>"$scratch/follower" 2>&1 &
  follower_pid=$!
}
start_follower
wait_for 10 "the follower's first reconciliation" grep -qF "healthy, and no drain of ours to resume" \
  "$scratch/follower"
calls() { wc -l <"$scratch/scontrol.calls"; }
shows() { grep -c '^show' "$scratch/scontrol.calls"; }
shows_since() { [ $(($(shows) - $1)) -ge "$2" ]; }
# Lines the follower logged after MARK that match the regular expression.
count_since() { tail -n +"$(($1 + 1))" "$scratch/follower" | grep -c "$2" || true; }
# The follower's own CPU time, user and system, in clock ticks (proc(5): fields 14 and 15).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$follower_pid/stat"; }
# A reboot as the daemon and the follower see one: both stopped, the daemon's state lost (the
# follower's own, its drain record, is kept).
shut_down_losing_the_state() {
  stop_pid "$follower_pid"
  stop_pid "$daemon_pid"
  rm -rf "$scratch/daemon-state"
  mkdir "$scratch/daemon-state"
}

step "slurmctld away for 10 s while mlx5_0/1 goes down and mlx5_1/1 bounces"
ticks_before=$(cpu_ticks)
stop_pid "$ctld_pid"
calls_before=$(calls)
mark=$(log_mark)
outage_start=$(now_ms)
sim port down mlx5_0/1 >/dev/null
bounce mlx5_1/1
wait_for 10 "the follower failing to reach Slurm" logged_since "$mark" "; retrying"
# Four backoff steps (0.5 + 1 + 2 + 2 s) and more: the outage outlasts the reconcile interval
# several times. This waits for time itself: the outage's length is the point.
while (($(now_ms) - outage_start < 10000)); do
  kill -0 "$follower_pid" || fail "the follower ended during the outage"
  sleep 0.5
done
outage_calls=$(($(calls) - calls_before))
outage_ticks=$(($(cpu_ticks) - ticks_before))
hz=$(getconf CLK_TCK)
echo "outage: $outage_calls scontrol calls, $outage_ticks ticks of CPU ($hz a second) in 10 s"
# Each call killed after 1 s, then 0.5, 1, 2, 2 s of backoff: calls start at about 0, 1.5, 3.5,
# 6.5 and 9.5 s. The follower spinning between them would show in its CPU time.
((outage_calls >= 3 && outage_calls <= 7)) || fail "$outage_calls scontrol calls in a 10 s outage"
((outage_ticks * 100 <= 20 * hz)) || fail "the follower used $outage_ticks ticks of CPU in 10 s"
[ "$(count_since "$mark" '; retrying$')" = 1 ] || fail "the failure was not logged exactly once"
start_slurmctld
wait_for 20 "drained for the port still down once slurmctld is back" \
  reason_is "rdma-eventd: mlx5_0/1 down"
# Logged once the whole reconciliation worked, the drain's update included: it may follow the
# drain that slurmctld shows.
wait_for 10 "'Slurm answers again' logged" logged_since "$mark" "Slurm answers again"
sim port up mlx5_0/1 >/dev/null
wait_for 10 "resumed once the port is up" undrained

step "an adapter removed: drained while the inventory keeps it gone; back and healthy: resumed"
sim unplug mlx5_1 >/dev/null
wait_for 10 "drained for the gone adapter" reason_is "rdma-eventd: mlx5_1/1 gone, mlx5_1/2 gone"
before=$(shows)
wait_for 10 "two more reconciliations, past forget_gone_after_s" shows_since "$before" 2
reason_is "rdma-eventd: mlx5_1/1 gone, mlx5_1/2 gone" ||
  fail "the gone adapter of the inventory was forgotten: $(node_line); $(ctl health --json)"
sim replug mlx5_1 >/dev/null
wait_for 15 "resumed once the adapter is back and healthy" undrained

step "an adapter removed, and the daemon's state lost: still drained ('missing'), then resumed"
sim unplug mlx5_1 >/dev/null
wait_for 10 "drained for the gone adapter" reason_is "rdma-eventd: mlx5_1/1 gone, mlx5_1/2 gone"
stop_pid "$daemon_pid"
rm -rf "$scratch/daemon-state"
mkdir "$scratch/daemon-state"
start_daemon
wait_for 10 "the reason saying it is missing" \
  reason_is "rdma-eventd: mlx5_1/1 missing, mlx5_1/2 missing"
before=$(shows)
wait_for 10 "two more reconciliations" shows_since "$before" 2
drained || fail "resumed with the adapter missing: $(node_line)"
sim replug mlx5_1 >/dev/null
wait_for 15 "resumed once the adapter is back and healthy" undrained

step "an adapter removed, then retired: drained ('missing') until the operator resumes the node"
sim unplug mlx5_1 >/dev/null
wait_for 10 "drained for the gone adapter" reason_is "rdma-eventd: mlx5_1/1 gone, mlx5_1/2 gone"
ctl inventory retire mlx5_1 >"$scratch/retire.out" || fail "retire: $(cat "$scratch/retire.out")"
[ "$(ctl health)" = "healthy: 1 port healthy" ] || fail "health after the retire: $(ctl health)"
wait_for 10 "the reason naming the retired ports missing" \
  reason_is "rdma-eventd: mlx5_1/1 missing, mlx5_1/2 missing"
scontrol update nodename="$node" state=resume
wait_for 10 "the operator's resume" undrained
before=$(shows)
wait_for 10 "two more reconciliations" shows_since "$before" 2
undrained || fail "drained again after the operator's resume: $(node_line)"
sim replug mlx5_1 >/dev/null
in_inventory() {
  ctl inventory --json | jq -e --arg name "$1" \
    '[.inventory.adapters[] | select(.name == $name and .state == "present")] | length == 1'
}
wait_for 10 "the replugged adapter joining the inventory again" in_inventory mlx5_1

step "a reboot with a dead port: the state dropped, the port never up; still drained"
sim port down mlx5_0/1 >/dev/null
wait_for 10 "drained for the port down" reason_is "rdma-eventd: mlx5_0/1 down"
shut_down_losing_the_state
start_daemon
[ "$(ctl health --json | jq -r '.health.ports[] | select(.device == "mlx5_0") | .reason')" = \
  never_up ] || fail "mlx5_0/1 is not never_up after the reboot: $(ctl health --json)"
mark=$(log_mark)
start_follower
wait_for 10 "the follower's first reconciliation after the reboot" logged_since "$mark" \
  "drained already, for the same ports"
{ reason_is "rdma-eventd: mlx5_0/1 down" && drained; } || fail "not kept drained: $(node_line)"
sim port up mlx5_0/1 >/dev/null
wait_for 10 "resumed once the port came up" undrained

step "a reboot after which the other card has the dead card's name: drained by node GUID"
# mlx5_0 (node GUID 0c42:a103:00f6:5e44) fails; at the reboot it does not probe, the card that
# was mlx5_1 comes up as mlx5_0, and the daemon's state (its inventory too) is lost: by name,
# mlx5_0/1 is healthy. The follower's drain record knows the port by its adapter's GUID.
sim fatal mlx5_0 >/dev/null
wait_for 10 "drained for the fatal card" reason_is "rdma-eventd: mlx5_0/1 fatal"
# The follower writes its drain record once the drain that slurmctld already shows returned.
drain_record_is_the_fatal_card() {
  jq -e '.ports == [{"name": "mlx5_0/1", "node_guid": "0c42:a103:00f6:5e44", "port": 1}]' \
    "$scratch/follower-state/drain.json" >/dev/null
}
wait_for 10 "the drain record of the fatal card's port, by its GUID" drain_record_is_the_fatal_card
shut_down_losing_the_state
sim unplug mlx5_0 >/dev/null
sim rename mlx5_1 mlx5_0 >/dev/null
start_daemon
[ "$(ctl health)" = "healthy: 2 ports healthy" ] || fail "after the reboot: $(ctl health)"
start_follower
wait_for 10 "the reason naming the dead card's port by its node GUID" \
  reason_is "rdma-eventd: 0c42:a103:00f6:5e44/1 missing"
before=$(shows)
wait_for 10 "two more reconciliations" shows_since "$before" 2
drained || fail "resumed one card short: $(node_line)"
# The card is back (the other one under its own name again): resumed, the record removed.
sim rename mlx5_0 mlx5_1 >/dev/null
sim replug mlx5_0 >/dev/null
wait_for 15 "resumed once the card is back and healthy" undrained
wait_for 5 "the drain record removed" test ! -e "$scratch/follower-state/drain.json"

step "a reservation that is not for maintenance: drained; a maintenance one: held"
node_flag() { node_state | grep -q "$1"; }
scontrol create reservation reservationname=jobs starttime=now duration=10 nodes="$node" \
  users=root >/dev/null
wait_for 10 "the node reserved" node_flag RESERVED
sim port down mlx5_0/1 >/dev/null
wait_for 10 "drained in a reservation" reason_is "rdma-eventd: mlx5_0/1 down"
sim port up mlx5_0/1 >/dev/null
wait_for 10 "resumed" undrained
scontrol delete reservationname=jobs
scontrol create reservation reservationname=maint starttime=now duration=10 nodes="$node" \
  users=root flags=maint >/dev/null
wait_for 10 "the node in maintenance" node_flag MAINT
mark=$(log_mark)
sim port down mlx5_0/1 >/dev/null
wait_for 10 "the follower leaving the maintenance alone" logged_since "$mark" \
  "not drained: the node is held by someone else"
undrained || fail "drained during maintenance: $(node_line)"
scontrol delete reservationname=maint
wait_for 10 "drained once the maintenance is over" reason_is "rdma-eventd: mlx5_0/1 down"
sim port up mlx5_0/1 >/dev/null
wait_for 10 "resumed" undrained

# mlx5_0/1 has gone down three times within the daemon's flap window by now: from here it is
# flapping (and healthy again after its 3 s quiet period), not down.
reason_starts() { [[ "$(node_reason)" == "$1"* ]]; }

step "Comment= and Extra= on the node: the reason is written once"
scontrol update nodename="$node" comment="moved to rack 7" extra="rack=7"
node_line | grep -q ' Comment=moved to rack 7' || fail "no Comment= shown: $(node_line)"
mark=$(log_mark)
sim port down mlx5_0/1 >/dev/null
wait_for 10 "drained with a comment" reason_starts "rdma-eventd: mlx5_0/1 "
before=$(shows)
wait_for 15 "three more reconciliations" shows_since "$before" 3
[ "$(count_since "$mark" "^rdma-eventd-slurm: \(drained\|updated the reason of\) $node")" = 1 ] ||
  fail "the reason was written more than once: $(tail -n +"$((mark + 1))" "$scratch/follower")"
sim port up mlx5_0/1 >/dev/null
wait_for 10 "resumed" undrained

step "SLURMD_NODENAME names the node when the host name is another (--once)"
stop_pid "$follower_pid"
follower_pid=
printf '{"socket": "%s", "state_directory": "%s"}\n' "$scratch/events.sock" \
  "$scratch/follower-state" >"$scratch/once.json"
sim port down mlx5_0/1 >/dev/null
not_healthy() { ! host_health_is healthy; }
wait_for 10 "the port not healthy" not_healthy
# --once on a host named otherhost (a UTS namespace of its own), with the environment given.
once_as_other_host() {
  unshare --uts bash -c 'hostname otherhost && exec "$@"' once env -u SLURMD_NODENAME "$@" \
    "$follower_bin" --once --config "$scratch/once.json" >"$scratch/once.out" 2>&1
}
rc=0
once_as_other_host || rc=$?
[ "$rc" = 68 ] || fail "--once as otherhost exited $rc, not 68: $(cat "$scratch/once.out")"
grep -qF "Slurm does not know node 'otherhost'" "$scratch/once.out" ||
  fail "--once as otherhost: $(cat "$scratch/once.out")"
rc=0
once_as_other_host SLURMD_NODENAME="$node" || rc=$?
[ "$rc" = 0 ] || fail "--once with SLURMD_NODENAME exited $rc: $(cat "$scratch/once.out")"
reason_starts "rdma-eventd: mlx5_0/1 " || fail "--once with SLURMD_NODENAME: $(node_line)"
sim port up mlx5_0/1 >/dev/null
wait_for 10 "the port healthy" host_health_is healthy
once_as_other_host SLURMD_NODENAME="$node" || fail "--once: $(cat "$scratch/once.out")"
undrained || fail "--once with SLURMD_NODENAME did not resume: $(node_line)"

# A port's verdict, from the daemon: port_is DEV PORT HEALTH. (`health` exits 1 while a port in
# service is not healthy: its reply is read all the same.)
port_is() {
  { ctl health --json || true; } | jq -e --arg d "$1" --argjson p "$2" --arg h "$3" \
    '[.health.ports[] | select(.device == $d and .port == $p and .health == $h)] | length == 1' \
    >/dev/null
}

step "a slower port kept in service never holds our drain once the port it names is back"
# The link retrains at FDR (down, then up at the lower speed: rdma-sim's retrain) before the
# follower starts: a port that is merely slower drains nothing. (A down the follower sees is a
# drain that holds until the port it names is healthy: policy.cc, and the EDR retrain below.)
sim port down mlx5_1/2 >/dev/null
sim port up mlx5_1/2 --speed fdr >/dev/null
wait_for 10 "mlx5_1/2 degraded (rate_below_expected)" port_is mlx5_1 2 degraded
mark=$(log_mark)
start_follower
wait_for 10 "the follower's first reconciliation" logged_since "$mark" \
  "no port has a verdict that drains: the node is left as it is"
undrained || fail "drained for a slower port: $(node_line)"
sim port down mlx5_1/1 >/dev/null
wait_for 10 "drained for mlx5_1/1" reason_starts "rdma-eventd: mlx5_1/1 "
[[ "$(node_reason)" != *mlx5_1/2* ]] || fail "the reason names the slower port: $(node_line)"
sim port up mlx5_1/1 >/dev/null
wait_for 15 "resumed, mlx5_1/2 still degraded" undrained
port_is mlx5_1 2 degraded || fail "mlx5_1/2 is no longer degraded: $(ctl health --json)"
sim port down mlx5_1/2 >/dev/null
sim port up mlx5_1/2 --speed edr >/dev/null
wait_for 10 "mlx5_1/2 healthy again" port_is mlx5_1 2 healthy
wait_for 15 "no drain once mlx5_1/2 is back at EDR" undrained

step "two cards swap names at a reboot, the daemon's state lost: each is judged as itself"
sim port down mlx5_0/1 >/dev/null
wait_for 10 "drained for mlx5_0/1" reason_starts "rdma-eventd: mlx5_0/1 "
shut_down_losing_the_state
sim rename mlx5_0 mlx5_9 >/dev/null
sim rename mlx5_1 mlx5_0 >/dev/null
sim rename mlx5_9 mlx5_1 >/dev/null
start_daemon
start_follower
# The card that was down is mlx5_1 now, and has not come up since the boot (down, not never
# up: health.expected declares mlx5_1's ports); mlx5_0, the other card, is healthy and lifts
# nothing.
wait_for 10 "the reason naming the down card by its new name" \
  reason_is "rdma-eventd: mlx5_1/1 down"
before=$(shows)
wait_for 10 "two more reconciliations" shows_since "$before" 2
drained || fail "resumed with the down card's port down: $(node_line)"
sim port up mlx5_1/1 >/dev/null
wait_for 15 "resumed once its port is up" undrained

step "resumed at the reboot (scontrol reboot nextstate=resume) with a card missing: drained again"
sim fatal mlx5_0 >/dev/null
wait_for 10 "drained for the fatal card" reason_is "rdma-eventd: mlx5_0/1 fatal, mlx5_0/2 fatal"
shut_down_losing_the_state
sim unplug mlx5_0 >/dev/null
# What nextstate=resume does when the node comes back: Slurm resumes it before the follower
# runs. (A real `scontrol reboot` needs a RebootProgram and a new boot time of the node.)
scontrol update nodename="$node" state=resume
wait_for 10 "Slurm's resume" undrained
start_daemon
start_follower
wait_for 10 "drained again for the missing card's ports" \
  reason_is "rdma-eventd: mlx5_0/1 missing, mlx5_0/2 missing"
sim replug mlx5_0 >/dev/null
wait_for 15 "resumed once the card is back and healthy" undrained

step "a port behind '+N more', its adapter absent after a reboot: drained for it alone"
# Sixteen dual-port adapters, every port down: the reason names the first few, the rest are
# "+N more"; mlx5_15's are among those.
shut_down_losing_the_state
sim stop >/dev/null
sim start -t "$SOURCE_DIR/sim/topologies/sixteen-devices.json" >/dev/null
start_daemon
start_follower
all_ports() { for d in $(seq 0 15); do echo "mlx5_$d/1" "mlx5_$d/2"; done; }
for p in $(all_ports); do sim port down "$p" >/dev/null; done
# Every one of the 32 ports in the reason: 11 named (the reason's 200 bytes), 21 more.
all_in_reason() { [[ "$(node_reason)" == "rdma-eventd: mlx5_0/1 down, "*" +21 more" ]]; }
wait_for 15 "drained for the 32 ports, with '+21 more'" all_in_reason
[[ "$(node_reason)" != *mlx5_15/* ]] || fail "mlx5_15 is not behind '+N more': $(node_line)"
drain_record_has_mlx5_15() {
  jq -e '[.ports[] | select(.name | startswith("mlx5_15/"))] | length == 2' \
    "$scratch/follower-state/drain.json" >/dev/null
}
wait_for 10 "mlx5_15's ports in the follower's drain record" drain_record_has_mlx5_15
# The reboot: the daemon's state lost, mlx5_15 does not probe, every other port is up.
shut_down_losing_the_state
sim unplug mlx5_15 >/dev/null
for p in $(all_ports | tr ' ' '\n' | grep -v '^mlx5_15/'); do sim port up "$p" >/dev/null; done
start_daemon
start_follower
wait_for 10 "drained for mlx5_15's ports alone" \
  reason_is "rdma-eventd: mlx5_15/1 missing, mlx5_15/2 missing"
sim replug mlx5_15 >/dev/null
sim port up mlx5_15/1 >/dev/null
sim port up mlx5_15/2 >/dev/null
wait_for 15 "resumed once mlx5_15 is back and up" undrained

step "the default configuration: absent is every default; there but unreadable is exit 78"
# In a mount namespace of its own, a tmpfs over /etc: the host's /etc is left alone.
once_with_etc() {
  # shellcheck disable=SC2016  # expanded by the inner bash
  unshare --mount bash -c 'mount -t tmpfs tmpfs /etc && eval "$1" && shift && exec "$@"' once \
    "$1" "$follower_bin" --once --dry-run >"$scratch/once.out" 2>&1
}
rc=0
once_with_etc 'mkdir -p /etc/rdma-eventd/slurm.json' || rc=$?
[ "$rc" = 78 ] || fail "--once with a directory for its configuration exited $rc, not 78"
grep -qF "cannot read /etc/rdma-eventd/slurm.json: Is a directory" "$scratch/once.out" ||
  fail "--once with an unreadable configuration: $(cat "$scratch/once.out")"
rc=0
once_with_etc true || rc=$?
{ [ "$rc" != 78 ] && ! grep -qF "cannot read" "$scratch/once.out"; } ||
  fail "--once without a configuration exited $rc: $(cat "$scratch/once.out")"
echo "PASS"
